//! Reading a question before ranking it. An agent's question is often a bug report or a change
//! request: paragraphs of prose, the user's own script, a traceback, an error message, a file
//! path. This module pulls out what the question *names* — identifiers (and where they were
//! written), names the question's own code defines, file paths, traceback frames, error
//! messages and quoted output — and the prose the model should read. It is pure text work:
//! it knows nothing of the index; ranking decides what the names are worth in this repository.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::text::{search_words, split_identifier};

/// Words above which a question is read as a report rather than a one-line question.
const LONG_WORDS: usize = 40;
/// Source file extensions recognised in paths and frames.
const EXTENSIONS: &str = "py|pyi|rs|js|jsx|mjs|cjs|ts|tsx|go|java|c|h|cc|cpp|hpp|cs|rb|php|md";

/// Where a name was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// In a traceback frame (the function a frame is in).
    Frame,
    /// In prose, in backticks or as a compound identifier.
    Prose,
    /// Inside the question's code (a fenced block, a doctest or a traceback's source line).
    Code,
}

/// An identifier the question writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub origin: Origin,
}

/// One frame of a traceback or a `path:line` location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// As written (absolute, site-packages, relative …); matched to indexed files by suffix.
    pub path: String,
    pub line: u32,
    pub function: Option<String>,
}

/// What a question names, read once and handed to ranking.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    pub shape: QueryShape,
    /// Words as written (whitespace-separated).
    pub word_count: usize,
    /// A report (many words or code in it) rather than a one-line question.
    pub long: bool,
    /// The question's search words (`text::search_words`): what file BM25 and the source
    /// excerpt match.
    pub words: Vec<String>,
    /// The question is about tests, examples or benchmarks themselves (then they are not
    /// demoted).
    pub about_tests: bool,
    /// Identifiers, each once, strongest origin kept, in order of first appearance.
    pub names: Vec<Name>,
    /// Names the question's own code defines (`def`, `class`, assignments, …).
    pub defined_here: BTreeSet<String>,
    /// File paths written in the question, and modules written as dotted paths (as
    /// `a/b` without extension).
    pub paths: Vec<String>,
    /// Traceback frames and `path:line` locations, in the order written (innermost last).
    pub frames: Vec<Frame>,
    /// Error messages and quoted output worth finding verbatim in the code.
    pub messages: Vec<String>,
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(```|~~~)").unwrap());
static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<][\w<>.]*))?"#).unwrap()
});
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\bat (?:([\w$.<>]+) \()?([^\s()]+\.(?:{EXTENSIONS})):(\d+)(?::\d+)?\)?"
    ))
    .unwrap()
});
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"([\w.\\/-]*[\w-]\.(?:{EXTENSIONS})):(\d+)\b")).unwrap());
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:^|[\s`'(\[])((?:[\w.-]+/)*[\w-]+\.(?:{EXTENSIONS}))\b"
    ))
    .unwrap()
});
static IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*").unwrap()
});
static BACKTICK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
static DEFINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*(?:(?:async\s+)?def|class|(?:pub\s+)?fn|function|func|struct|(?:const|let|var))\s+([A-Za-z_]\w*)|^\s*([A-Za-z_]\w*)\s*=[^=]",
    )
    .unwrap()
});
static CALLED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\.|\b)([A-Za-z_]\w*)\s*\(|\.([A-Za-z_]\w*)\b").unwrap());
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Warning|Exit)\b:\s*(.+)$").unwrap()
});
static QUOTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([^"\n]{12,200})"|'([^'\n]{12,200})'"#).unwrap());

impl Question {
    pub fn read(text: &str) -> Question {
        let (prose, code) = split_code(text);
        let shape = query_shape(text);
        let word_count = text.split_whitespace().count();
        let mut question = Question {
            text: text.to_string(),
            word_count,
            long: word_count > LONG_WORDS || !code.trim().is_empty(),
            words: search_words(text),
            about_tests: asks_about_tests(text),
            shape,
            names: Vec::new(),
            defined_here: BTreeSet::new(),
            paths: Vec::new(),
            frames: frames(text),
            messages: messages(text, &prose),
        };
        question.defined_here = defined_names(&code);
        question.names = names(&question, &prose, &code);
        question.paths = paths(text);
        question
    }

    /// The text the model embeds: the question as written (the model reads its first
    /// `max_length` tokens). Embedding only the prose of a report — without the user's script
    /// and traceback — was measured and not kept: the same Acc@1/5/10 on the issue benchmark
    /// and a lower MRR on the bug reports (0.733 against 0.741).
    pub fn embedding_text(&self) -> &str {
        &self.text
    }
}

/// The shape of a query, deciding how much to trust each leg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryShape {
    Identifier,
    Mixed,
    Description,
}

fn looks_like_identifier(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    word.contains('_')
        || word.contains("::")
        || word.contains('.')
        || split_identifier(word).len() > 1
}

/// The shape of a one-line reading of the query: identifiers lean lexical.
pub fn query_shape(query: &str) -> QueryShape {
    let words: Vec<&str> = query
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| !w.is_empty())
        .collect();
    let identifier_like = |w: &str| looks_like_identifier(w) || w.contains('(');
    match words.len() {
        0 => QueryShape::Mixed,
        1 | 2 if words.iter().any(|w| identifier_like(w)) || words.len() == 1 => {
            QueryShape::Identifier
        }
        n if n >= 4 && !words.iter().any(|w| identifier_like(w)) => QueryShape::Description,
        _ => QueryShape::Mixed,
    }
}

/// Whether the query is about tests, examples or benchmarks themselves (then they are not
/// demoted). A report or change description is read by its first line, its title: a body
/// that mentions the tests it added or a `conftest.py` in passing is about the code.
fn asks_about_tests(query: &str) -> bool {
    let title = query.trim_start().lines().next().unwrap_or("");
    const WORDS: &[&str] = &[
        "test",
        "tests",
        "testing",
        "tested",
        "spec",
        "specs",
        "example",
        "examples",
        "bench",
        "benchmark",
        "benchmarks",
        "fixture",
        "fixtures",
        "mock",
    ];
    title
        .split(|c: char| !c.is_alphanumeric())
        .flat_map(split_identifier)
        .any(|w| WORDS.contains(&w.as_str()))
}

/// Splits a question into prose and code: fenced blocks, doctest lines (`>>>`, `...`) and
/// tracebacks (from `Traceback (most recent call last):` through its indented lines) are code.
fn split_code(text: &str) -> (String, String) {
    let mut prose = String::new();
    let mut code = String::new();
    let mut fenced = false;
    let mut traceback = false;
    for line in text.lines() {
        if FENCE.is_match(line) {
            fenced = !fenced;
            continue;
        }
        if line
            .trim_start()
            .starts_with("Traceback (most recent call last)")
        {
            traceback = true;
        } else if traceback && !line.starts_with([' ', '\t']) {
            traceback = false;
        }
        let trimmed = line.trim_start();
        let is_code = fenced
            || traceback
            || trimmed.starts_with(">>>")
            || trimmed.starts_with("... ")
            || line.starts_with("    ") && looks_like_code(trimmed);
        let out = if is_code { &mut code } else { &mut prose };
        out.push_str(line);
        out.push('\n');
    }
    (prose, code)
}

/// An indented line is code when it has code punctuation (prose paragraphs may be indented).
fn looks_like_code(line: &str) -> bool {
    line.contains(['(', '=', '{', ';', '[']) || line.ends_with(':')
}

/// Frame syntaxes: (pattern, path group, line group, function group). A JavaScript function
/// may be written with its receiver (`Cart.total`): the last part is its name.
fn frame_syntaxes() -> [(&'static Regex, usize, usize, usize); 2] {
    [(&*PY_FRAME, 1, 2, 3), (&*JS_FRAME, 2, 3, 1)]
}

fn frames(text: &str) -> Vec<Frame> {
    let mut found: Vec<(usize, Frame)> = Vec::new();
    let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
    for (pattern, path, line, function) in frame_syntaxes() {
        for m in pattern.captures_iter(text) {
            let all = m.get(0).unwrap();
            taken.push(all.range());
            found.push((
                all.start(),
                Frame {
                    path: m[path].to_string(),
                    line: m[line].parse().unwrap_or(0),
                    function: m
                        .get(function)
                        .and_then(|f| f.as_str().rsplit('.').next())
                        .filter(|f| !f.is_empty())
                        .map(str::to_string),
                },
            ));
        }
    }
    for m in LOCATION.captures_iter(text) {
        let all = m.get(0).unwrap();
        if taken.iter().any(|r| r.contains(&all.start())) {
            continue;
        }
        found.push((
            all.start(),
            Frame {
                path: m[1].to_string(),
                line: m[2].parse().unwrap_or(0),
                function: None,
            },
        ));
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, f)| f).collect()
}

/// Names the question's own code defines.
fn defined_names(code: &str) -> BTreeSet<String> {
    DEFINES
        .captures_iter(code)
        .filter_map(|c| c.get(1).or(c.get(2)))
        .map(|m| m.as_str().to_string())
        .collect()
}

/// Identifiers the question writes: compound identifiers and backticked words in prose,
/// functions of traceback frames, and in code the names called or reached through a dot.
fn names(question: &Question, prose: &str, code: &str) -> Vec<Name> {
    let mut out: Vec<Name> = Vec::new();
    let mut add = |text: &str, origin: Origin| {
        for part in text.split("::").flat_map(|p| p.split('.')) {
            if part.len() < 3 || part.chars().all(|c| c.is_ascii_digit() || c == '_') {
                continue;
            }
            match out.iter_mut().find(|n| n.text == part) {
                Some(name) => name.origin = name.origin.min(origin),
                None => out.push(Name {
                    text: part.to_string(),
                    origin,
                }),
            }
        }
    };
    for frame in &question.frames {
        if let Some(function) = &frame.function {
            add(function, Origin::Frame);
        }
    }
    let identifier_shaped = question.shape == QueryShape::Identifier;
    for m in BACKTICK.captures_iter(prose) {
        for ident in IDENT.find_iter(&m[1]) {
            add(ident.as_str(), Origin::Prose);
        }
    }
    for ident in IDENT.find_iter(prose) {
        let word = ident.as_str();
        if identifier_shaped || is_compound(word) {
            add(word, Origin::Prose);
        }
    }
    for c in CALLED.captures_iter(code) {
        if let Some(m) = c.get(1).or(c.get(2)) {
            add(m.as_str(), Origin::Code);
        }
    }
    for ident in IDENT.find_iter(code) {
        if is_compound(ident.as_str()) {
            add(ident.as_str(), Origin::Code);
        }
    }
    out
}

/// snake_case, camelCase, dotted or `::` paths: written as code even in prose (a name only
/// wrapped in underscores, such as `__init__`, is not compound).
fn is_compound(word: &str) -> bool {
    looks_like_identifier(word.trim_matches('_'))
}

/// File paths written in the question, plus dotted module paths as `a/b`.
fn paths(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for c in PATH.captures_iter(text) {
        push(c[1].trim_start_matches("./").to_string());
    }
    for ident in IDENT.find_iter(text) {
        let dotted = ident.as_str();
        let parts: Vec<&str> = dotted.split('.').collect();
        if parts.len() >= 2
            && parts.iter().all(|p| {
                p.chars()
                    .all(|c| c.is_lowercase() || c == '_' || c.is_ascii_digit())
            })
        {
            push(parts.join("/"));
        }
    }
    out
}

/// Error messages (`SomeError: message`) and quoted output of at least a few words.
fn messages(text: &str, prose: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in ERROR_LINE.captures_iter(text) {
        out.push(c[1].trim().to_string());
    }
    for c in QUOTED.captures_iter(prose) {
        let quoted = c.get(1).or(c.get(2)).unwrap().as_str().trim();
        if quoted.split_whitespace().count() >= 3 {
            out.push(quoted.to_string());
        }
    }
    out.dedup();
    out
}

/// The pieces of a message that code could hold verbatim: runs between quotes and format
/// placeholders, of at least three words and twelve characters.
pub fn message_fragments(message: &str) -> Vec<&str> {
    message
        .split(['\'', '"', '{', '}', '%', '(', ')', '`'])
        .map(|f| f.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ':'))
        .filter(|f| f.len() >= 12 && f.split_whitespace().count() >= 3)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_traceback_gives_frames_innermost_last_and_its_error_message() {
        let q = Question::read(
            "golden-section search fails\n```\nTraceback (most recent call last):\n  File \"/home/u/x.py\", line 88, in <module>\n    p1.process(data)\n  File \"/usr/lib/site-packages/pvlib/tools.py\", line 364, in _golden_sect_DataFrame\n    raise Exception(\"Iterations exceeded maximum. Check that func\",\nException: ('Iterations exceeded maximum. Check that func', ' is not NaN in (lower, upper)')\n```\n",
        );
        assert_eq!(q.frames.len(), 2);
        let last = q.frames.last().unwrap();
        assert_eq!(last.path, "/usr/lib/site-packages/pvlib/tools.py");
        assert_eq!(last.line, 364);
        assert_eq!(last.function.as_deref(), Some("_golden_sect_DataFrame"));
        assert!(
            q.names
                .iter()
                .any(|n| n.text == "_golden_sect_DataFrame" && n.origin == Origin::Frame)
        );
        assert!(q.messages[0].starts_with("('Iterations exceeded maximum"));
        assert_eq!(
            message_fragments(&q.messages[0]),
            [
                "Iterations exceeded maximum. Check that func",
                "is not NaN in"
            ]
        );
        assert!(q.long);
        assert_eq!(split_code(&q.text).0.trim(), "golden-section search fails");
    }

    #[test]
    fn user_code_names_its_own_classes_and_they_are_set_apart() {
        let q = Question::read(
            "Summing fails for one row\n\n```python\nclass PV:\n    def __init__(self, model):\n        self.chain = modelchain.ModelChain(system)\n        modules = pvsystem.retrieve_sam('cecmod')\n```\n",
        );
        for defined in ["PV", "__init__", "modules"] {
            assert!(
                q.defined_here.contains(defined),
                "{defined}: {:?}",
                q.defined_here
            );
        }
        let code_names: Vec<&str> = q
            .names
            .iter()
            .filter(|n| n.origin == Origin::Code)
            .map(|n| n.text.as_str())
            .collect();
        assert!(
            code_names.contains(&"retrieve_sam") && code_names.contains(&"ModelChain"),
            "{code_names:?}"
        );
        assert_eq!(split_code(&q.text).0.trim(), "Summing fails for one row");
    }

    #[test]
    fn paths_and_dotted_modules_are_read_and_plain_words_are_not_names() {
        let q = Question::read(
            "Fix the alias check in src/sqlfluff/rules/L031.py; see also astroid.brain.brain_numpy and `infer_call`",
        );
        assert!(
            q.paths.contains(&"src/sqlfluff/rules/L031.py".to_string()),
            "{:?}",
            q.paths
        );
        assert!(
            q.paths.contains(&"astroid/brain/brain_numpy".to_string()),
            "{:?}",
            q.paths
        );
        let names: Vec<&str> = q.names.iter().map(|n| n.text.as_str()).collect();
        assert!(
            names.contains(&"infer_call") && names.contains(&"brain_numpy"),
            "{names:?}"
        );
        assert!(
            !names.contains(&"alias") && !names.contains(&"check"),
            "{names:?}"
        );
    }

    #[test]
    fn an_error_message_in_prose_and_a_location_are_evidence() {
        let q = Question::read(
            "L031 fails with: \"Avoid using aliases in join condition\" at pvlib/tools.py:340: RuntimeWarning",
        );
        assert_eq!(q.messages, ["Avoid using aliases in join condition"]);
        assert_eq!(
            q.frames,
            [Frame {
                path: "pvlib/tools.py".into(),
                line: 340,
                function: None
            }]
        );
        assert!(!q.long);
    }

    #[test]
    fn queries_about_tests_are_recognised() {
        assert!(asks_about_tests("which test covers apply_discount"));
        assert!(asks_about_tests("TestCartTotal fixtures"));
        assert!(!asks_about_tests("round a money value to cents"));
        assert!(!asks_about_tests("attestation of the contest"));
        assert!(!asks_about_tests(
            "Change default handling of unknown tags\n\n- added conftest.py for common fixtures"
        ));
    }

    #[test]
    fn a_one_line_identifier_question_keeps_its_name() {
        let q = Question::read("apply_discount");
        assert_eq!(
            q.names,
            [Name {
                text: "apply_discount".into(),
                origin: Origin::Prose
            }]
        );
        assert_eq!(q.embedding_text(), "apply_discount");
    }
}
