//! Traceback frames and written locations, in each language's syntax: Python, Node, Java and
//! Kotlin (a JVM trace read cause by cause), Go panics and goroutine dumps, Rust panics and
//! backtraces, C/C++ debugger and sanitizer frames, Ruby and PHP, plus `path:line`, a repository
//! host's permalink to a line and a location written in prose. It reads the question's text
//! into [`Frame`]s, innermost last; it never resolves a frame against the index.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::{Frame, naming_source_files, title_of};
use crate::text::is_name_char;

static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<][\w<>.]*))?"#).unwrap()
});
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    naming_source_files(r"\bat (?:([\w$.<>]+) \()?([^\s()]+\.{EXT}):(\d+)(?::\d+)?\)?")
});
/// Java and Kotlin: `at com.foo.Bar.baz(Bar.java:123)`; the package gives the path.
static JAVA_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bat ((?:[\w$]+\.)*[\w$<>]+) ?\(([\w$-]+\.(?:java|kt|scala)):(\d+)\)").unwrap()
});
/// The header of a chained exception's cause in a JVM trace (`Caused by: java.lang.X: …`): the
/// trace after it is the cause's, and the last cause is where the failure began.
static CAUSED_BY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t>]*Caused by:").unwrap());

/// A function line followed by its location on the next line: Go's panics and goroutine dumps
/// (`pkg.(*T).Method(0x1, …)` then `\t/path/file.go:123 +0x1d`; a goroutine's `created by
/// pkg.f` is its outermost frame) and Rust backtraces
/// (`  3: crate::module::function` then `at ./src/x.rs:10:5`).
static TWO_LINE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    naming_source_files(
        r"(?m)^[ \t]*(?:\d+:\s+|created by[ \t]+)?((?:[\w$.*/<>{}:-]|\(\*\w+\))+)(?:\([^\n]*\))?[ \t]*\r?\n\s+(?:at\s+)?([^\s:()]+\.{EXT}):(\d+)",
    )
});
/// A Go frame of a method called on a nil pointer: `pkg.(*T).Method(0x0, …)`, the receiver
/// written first. The method only surfaces the fault; the nil came from the frame that called
/// it, so that frame is read as the innermost (see [`frames`]).
static NIL_RECEIVER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*[\w./-]*\(\*\w+\)\.\w+\(0x0[,)]").unwrap());

/// C and C++ debugger and sanitizer frames: `#0 0x4005d4 in func /path/file.c:123` and
/// `#1  0x… in ns::func (a=1) at file.cc:12`.
static NATIVE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    naming_source_files(
        r"#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?([\w:~<>]+)\s*(?:\([^\n]*?\))?\s+(?:at\s+)?([^\s:()]+\.{EXT}):(\d+)",
    )
});
/// Ruby: `from lib/x.rb:10:in 'method'` (backtick or quote, with or without a receiver).
static RUBY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([^\s:'`]+\.rb):(\d+):in [`']?(?:[\w:]+[#.])?([\w?!]+)").unwrap()
});
/// PHP: `#0 /path/File.php(123): Class->method()`.
static PHP_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([^\s(]+\.php)\((\d+)\): (?:[\w\\]+(?:->|::))?(\w+)\(").unwrap());

static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| naming_source_files(r"([\w.\\/-]*[\w-]\.{EXT}):(\d+)\b"));

/// A link to a line of a file in a repository host's file view (`…/blob/<ref>/src/x.ts#L61`,
/// GitLab's `/-/blob/`, a range `#L61-L70` or `#L61:L70`).
static PERMALINK: LazyLock<Regex> = LazyLock::new(|| {
    naming_source_files(r"/(?:blob|tree)/[\w.-]+/((?:[\w.-]+/)*[\w.-]+\.{EXT})#L(\d+)\b")
});
/// A location in prose: `` `jsonrep.py` at line 227 ``, `x.php on line 12` (PHP's own error
/// texts), `src/a.c, line 40`.
static PROSE_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    naming_source_files(r"([\w.\\/-]*[\w-]\.{EXT})`?,?\s+(?:(?:at|on|in)\s+)?line\s+(\d+)\b")
});

/// One frame syntax: its pattern and the groups holding the path, the line and the function.
/// A function may be written with its receiver or path (`Cart.total`, `pkg.(*T).Get`,
/// `crate::m::f`): the last part is its name.
struct FrameSyntax {
    pattern: &'static Regex,
    path: usize,
    line: usize,
    function: usize,
    /// The frame names only the file and its function's package gives the folders (Java:
    /// `com.foo.Bar.baz` in `Bar.java` is `com/foo/Bar.java`).
    package_path: bool,
    /// The trace is written innermost frame first (every syntax but Python's).
    innermost_first: bool,
}

fn frame_syntaxes() -> [FrameSyntax; 7] {
    let syntax = |pattern: &'static LazyLock<Regex>, path, line, function| FrameSyntax {
        pattern: LazyLock::force(pattern),
        path,
        line,
        function,
        package_path: false,
        innermost_first: true,
    };
    [
        FrameSyntax {
            innermost_first: false,
            ..syntax(&PY_FRAME, 1, 2, 3)
        },
        FrameSyntax {
            package_path: true,
            ..syntax(&JAVA_FRAME, 2, 3, 1)
        },
        syntax(&NATIVE_FRAME, 2, 3, 1),
        syntax(&TWO_LINE_FRAME, 2, 3, 1),
        syntax(&RUBY_FRAME, 1, 2, 3),
        syntax(&PHP_FRAME, 1, 2, 3),
        syntax(&JS_FRAME, 2, 3, 1),
    ]
}

/// The path a frame names, matched to indexed files by suffix (see
/// [`FrameSyntax::package_path`]).
fn frame_path(syntax: &FrameSyntax, m: &regex::Captures) -> String {
    let file = &m[syntax.path];
    let qualified = m.get(syntax.function).map_or("", |f| f.as_str());
    let package: Vec<&str> = qualified
        .split('.')
        .take_while(|p| p.starts_with(|c: char| c.is_lowercase()))
        .collect();
    if !syntax.package_path || package.is_empty() {
        return file.to_string();
    }
    format!("{}/{file}", package.join("/"))
}

/// The name of the function a frame writes: the last part of its path, without Rust's hash
/// suffix (`::h1a2b…`), closures and generics; a C++ destructor (`~Capturer`) is its class's.
fn frame_function(written: &str) -> Option<String> {
    let written = written.trim_end_matches([')', '*']);
    let parts: Vec<&str> = written
        .split(['.', ':', '/', '(', ')', '*', '<', '>', '{', '}'])
        .filter(|p| !p.is_empty())
        .filter(|p| {
            !(p.len() == 17 && p.starts_with('h') && p[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        })
        .filter(|p| !matches!(*p, "closure" | "impl") && !is_go_closure(p))
        .collect();
    let name = parts.last()?.trim_start_matches('~'); // a destructor: its class's name
    (name.chars().next()?.is_alphabetic() || name.starts_with('_')).then(|| name.to_string())
}

/// The frames and locations of a text, innermost last: a trace written innermost first (Java,
/// Node, Go, Rust, native debuggers, Ruby, PHP) is read backwards, so that for every language
/// the last frame is where the failure surfaced. A JVM trace's causes (`Caused by:`) are read
/// one by one in the order written, so the innermost frame of the last cause, where the chain
/// began, comes last.
pub(super) fn frames(text: &str) -> Vec<Frame> {
    let mut found: Vec<(usize, Frame, bool)> = Vec::new();
    let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
    let mut nil_receivers: Vec<Frame> = Vec::new();
    for syntax in frame_syntaxes() {
        for m in syntax.pattern.captures_iter(text) {
            let all = m.get(0).unwrap();
            if taken.iter().any(|r| r.contains(&all.start())) {
                continue;
            }
            taken.push(all.range());
            let frame = Frame {
                path: frame_path(&syntax, &m),
                line: m[syntax.line].parse().unwrap_or(0),
                function: m
                    .get(syntax.function)
                    .and_then(|f| frame_function(f.as_str())),
            };
            if NIL_RECEIVER.is_match(all.as_str()) {
                nil_receivers.push(frame.clone());
            }
            found.push((all.start(), frame, syntax.innermost_first));
        }
    }
    for pattern in [&LOCATION, &PERMALINK, &PROSE_LOCATION] {
        for m in pattern.captures_iter(text) {
            let all = m.get(0).unwrap();
            if taken.iter().any(|r| r.contains(&all.start())) {
                continue;
            }
            taken.push(all.range());
            found.push((
                all.start(),
                Frame {
                    path: m[1].to_string(),
                    line: m[2].parse().unwrap_or(0),
                    function: None,
                },
                false,
            ));
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    let causes: Vec<usize> = CAUSED_BY.find_iter(text).map(|m| m.start()).collect();
    let mut frames = innermost_last(found, &causes);
    // A method called on a nil receiver yields the innermost place to its caller.
    if frames.len() >= 2 && frames.last().is_some_and(|f| nil_receivers.contains(f)) {
        let last = frames.len() - 1;
        frames.swap(last - 1, last);
    }
    frames
}

/// Function names shorter than this are too common to be what a title points at (`main`,
/// `get`).
const TITLE_FRAME_MIN_CHARS: usize = 5;

/// The frame whose function the question's first line names is the one the reporter points
/// at ("Dataset.to_json_dict can still generate exceptions" over a trace that ends in a
/// validator raising as it should): it is read as the innermost frame, the others keep their
/// order. Among several such frames, the innermost of them.
pub(super) fn title_frame_last(mut frames: Vec<Frame>, text: &str) -> Vec<Frame> {
    let title_words: HashSet<&str> = title_of(text).split(|c: char| !is_name_char(c)).collect();
    let named = |frame: &Frame| {
        frame.function.as_deref().is_some_and(|function| {
            function.len() >= TITLE_FRAME_MIN_CHARS && title_words.contains(function)
        })
    };
    if let Some(at) = frames.iter().rposition(named) {
        let frame = frames.remove(at);
        frames.push(frame);
    }
    frames
}

/// Frames in the order written, each run of innermost-first frames reversed; a run ends at a
/// frame written in another syntax and at a cause's header (`causes`: where each begins).
fn innermost_last(found: Vec<(usize, Frame, bool)>, causes: &[usize]) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut run: Vec<Frame> = Vec::new();
    let mut previous = 0;
    for (at, frame, innermost_first) in found {
        let cause_between = causes.iter().any(|&c| previous <= c && c < at);
        previous = at;
        if innermost_first {
            if cause_between {
                out.extend(run.drain(..).rev());
            }
            run.push(frame);
            continue;
        }
        out.extend(run.drain(..).rev());
        out.push(frame);
    }
    out.extend(run.into_iter().rev());
    out
}

/// Go names its closures `func1`, `func2`, … after the function they are in.
fn is_go_closure(part: &str) -> bool {
    part.strip_prefix("func")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
