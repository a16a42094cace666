//! Reading a question before ranking it. An agent's question is often a bug report or a change
//! request: paragraphs of prose, the user's own script, a traceback, an error message, a file
//! path. This module pulls out what the question *names* — identifiers (and where they were
//! written), names the question's own code defines, file paths, traceback frames, error
//! messages and quoted output — and the prose the model should read. It is pure text work:
//! it knows nothing of the index; ranking decides what the names are worth in this repository.
//! Traceback frames and written locations, one syntax per language, are read in `frames`.

mod frames;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::chores::without_chores;

use crate::text::{search_words, split_identifier};
use frames::{frames, title_frame_last};

/// Words above which a question is read as a report rather than a one-line question.
const LONG_WORDS: usize = 40;
/// Code lines of the question tried as a pasted excerpt of the project, in pairs.
const EXCERPT_PAIRS: usize = 8;
/// Shorter lines (`}`, `x = 1;`) stand together in too many places to say where.
const EXCERPT_MIN_CHARS: usize = 12;
/// The file prior starts above this many words and reaches full strength this many words
/// later (docstring benchmark: any file prior on one-sentence questions cost R@5).
const FILE_PRIOR_FROM_WORDS: f64 = 10.0;
const FILE_PRIOR_RAMP_WORDS: f64 = 30.0;
/// Source file extensions recognised in paths and frames.
const EXTENSIONS: &str = "py|pyi|rs|js|jsx|mjs|cjs|ts|tsx|go|java|kt|kts|scala|c|h|cc|cpp|cxx|hpp|hh|hxx|cs|rb|php|swift|lua|sh|bash|exs|ex|hs|zig|dart|vue|svelte|md";

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
    /// The names written just before it with a dot or `::` (`Dict.getitem` → `Dict`): the
    /// definitions they own are the ones meant.
    pub owners: Vec<String>,
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
    /// What the question is matched by: as written, less a change message's chore lines.
    pub text: String,
    /// The question as written, chore lines and all: what the model embeds (it reads the
    /// whole message) and what an exact search looks for.
    pub written: String,
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
    /// Words of the prose written as plain words, not as code (no underscore, case change or
    /// dot), at least [`PLAIN_WORD_MIN_CHARS`] long, each once, in order: a report may still
    /// mean a definition by one (`fuentes`, `reindl`); the ranking decides whether the
    /// project names one so.
    pub plain_words: Vec<String>,
    /// Names the question's own code defines (`def`, `class`, assignments, …).
    pub defined_here: BTreeSet<String>,
    /// File paths written in the question, and modules written as dotted paths (as
    /// `a/b` without extension).
    pub paths: Vec<String>,
    /// Traceback frames and written locations (`path:line`, a permalink's `#L61`, `x.py at
    /// line 227`), in the order written (innermost last).
    pub frames: Vec<Frame>,
    /// Error messages and quoted output worth finding verbatim in the code.
    pub messages: Vec<String>,
    /// Pairs of consecutive lines of the question's code that read as a project's code
    /// ([`excerpt_pairs`]): where both stand together in the project, the reporter pasted it.
    pub excerpts: Vec<(String, String)>,
    /// Command-line flags the question writes (`--hidden` as `hidden`): the code that
    /// declares a flag spells it in a string literal.
    pub flags: Vec<String>,
    /// Short values the question quotes (`"OL"`, `'nearest'`), each once, in order: a function
    /// that spells several of them as string literals is where those values are told apart.
    pub values: Vec<String>,
    /// Trait implementations named the way Rust writes them, `Drop for Drain<'data, T>`:
    /// the methods of that one `impl` block are meant, not every method of the type.
    pub trait_impls: Vec<TraitImpl>,
    /// The prose speaks of constructors (`constructor`, `ctor`, `initializer`): the types it
    /// names are meant by the methods that build them.
    pub about_constructors: bool,
}

/// `Trait for Type` in a question's prose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraitImpl {
    pub trait_name: String,
    pub type_name: String,
}

/// A pattern whose `{EXT}` stands for a source file's extension ([`EXTENSIONS`]): the paths
/// of frames, locations and written files.
fn naming_source_files(pattern: &str) -> Regex {
    Regex::new(&pattern.replace("{EXT}", &format!("(?:{EXTENSIONS})"))).expect("a valid pattern")
}

/// A line that imports or includes: `import x`, `from x import y`, `#include <x>`, `use x;`,
/// `package x;`, `using x;`, `require('x')`.
static IMPORT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:import\b|from\s+\S+\s+import\b|#\s*include\b|use\s|package\s|using\s|(?:const|let|var)\s+\w+\s*=\s*require\()").unwrap()
});
static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(```|~~~)").unwrap());

static PATH: LazyLock<Regex> =
    LazyLock::new(|| naming_source_files(r"(?:^|[\s`'(\[])((?:[\w.-]+/)*[\w-]+\.{EXT})\b"));

static IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*").unwrap()
});
/// Member references in other languages' syntax: `Class#method` (Ruby, Javadoc, JS docs),
/// `obj->method` (C, C++, PHP), and annotations or decorators (`@JsonRawValue`).
static MEMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Za-z_]\w*)(?:#|->)([A-Za-z_]\w*)").unwrap());

static ANNOTATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[\s`(])@([A-Z]\w+)").unwrap());

/// A module specifier in quotes with a slash: `'dayjs/plugin/customParseFormat'`,
/// `"github.com/x/y/pkg"`, `#include "lib/zstd.h"`.
static SPECIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"["'<]((?:[@\w.-]+/)+[\w.-]+)[>"']"#).unwrap());

static BACKTICK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
static DEFINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*(?:(?:public|private|protected|internal|static|final|abstract|sealed|export|default|async|unsafe|pub(?:\([\w ]+\))?)\s+)*(?:def|class|interface|enum|record|trait|fn|function|func|struct|type|(?:const|let|var))\s+([A-Za-z_]\w*)|^\s*([A-Za-z_]\w*)\s*=[^=]",
    )
    .unwrap()
});
static CALLED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\.|\b)([A-Za-z_]\w*)\s*\(|\.([A-Za-z_]\w*)\b").unwrap());

/// An error line: `SomeError: message` (Python, Java, JavaScript), and the lower-case prefixes
/// of compilers and command-line tools (`error: …`, `error[E0277]: …`, `fatal: …`, Go's
/// `panic: …`).
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*(?:(?:[\w.]+\.)?\w*(?:Error|Exception|Warning|Exit)\b|(?:error|fatal|panic|warning)(?:\[\w+\])?):\s*(.+)$",
    )
    .unwrap()
});
/// A line a tool tags as an error in the middle: `[fd error]: 'x' is not a directory`,
/// Maven's `[ERROR] …`, a compiler's `src/x.c:12:5: error: …`, a logger's `ERROR:root:…`. The
/// tag is a bracket holding the word or the word after a colon, so prose ("the error: …") is
/// not read as output.
static TAGGED_ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?mi)^[^\n]*?(?:\[[^\]\n]*\b(?:error|fatal|warning)\]:?|(?:^|:)[ \t]*(?:error|fatal|warning)(?:\[\w+\])?:)[ \t]*(\S[^\n]*)$",
    )
    .unwrap()
});
/// A Rust panic's message: `panicked at 'message', src/x.rs:1:2` (before 1.73) or
/// `panicked at src/x.rs:1:2:` followed by the message on the next line.
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"panicked at (?:'([^'\n]+)|[^\s:]+:\d+:\d+:\r?\n([^\n]+))").unwrap()
});
/// A command-line flag: `--hidden`, `--no-ignore-vcs`.
static FLAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[\s`'(\[])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b").unwrap());

/// A word for constructors: `constructor`, `ctor`, `initializer` (and plurals).
static CONSTRUCTOR_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:constructors?|ctors?|initiali[sz]ers?)\b").unwrap());

/// `Trait for Type` (each a capitalised name, the trait's generic arguments allowed).
static TRAIT_FOR_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z][A-Za-z0-9_]*)(?:<[^<>\n]*>)?`? +for +`?([A-Z][A-Za-z0-9_]*)\b").unwrap()
});
/// A short value in quotes, one token (`"OL"`, `'nearest'`), with what precedes it: a quote
/// after a letter is an apostrophe, not an opening quote.
static QUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|[^\w\\'"])(?:"([^\s"'\\]{2,40})"|'([^\s"'\\]{2,40})')"#).unwrap()
});
static QUOTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([^"\n]{12,200})"|'([^'\n]{12,200})'"#).unwrap());

impl Question {
    /// How much file evidence counts for this question, in [0, 1]: nothing for a one-sentence
    /// question (it describes one definition), fully for a report (it names many things, and
    /// the file where they meet is the answer), linearly in the word count between.
    pub fn file_prior_strength(&self) -> f64 {
        if self.long {
            return 1.0;
        }
        ((self.word_count as f64 - FILE_PRIOR_FROM_WORDS) / FILE_PRIOR_RAMP_WORDS).clamp(0.0, 1.0)
    }

    /// Whether the question runs past its first line (a title and a body, a message and its
    /// bullets): it describes a change or a problem rather than one definition.
    pub fn has_body(&self) -> bool {
        self.written
            .lines()
            .filter(|line| !line.trim().is_empty())
            .nth(1)
            .is_some()
    }

    /// Reads a question. Its length, shape and whether it carries code read the whole text;
    /// what it names and the words it is matched by leave a change message's chore lines out
    /// ([`without_chores`]).
    pub fn read(written: &str) -> Question {
        let matched = without_chores(written);
        let text = matched.as_str();
        let (prose, code) = split_code(text);
        let shape = query_shape(written);
        let word_count = written.split_whitespace().count();
        let defined_here = defined_names(&code);
        let mut question = Question {
            text: text.to_string(),
            written: written.to_string(),
            word_count,
            long: word_count > LONG_WORDS || !split_code(written).1.trim().is_empty(),
            words: search_words(text),
            about_tests: asks_about_tests(text, &defined_here),
            shape,
            names: Vec::new(),
            plain_words: Vec::new(),
            defined_here,
            paths: paths(text),
            frames: title_frame_last(frames(text), text),
            messages: messages(text, &prose),
            excerpts: excerpt_pairs(&code),
            flags: flags(text),
            values: quoted_values(text),
            trait_impls: trait_impls(&prose),
            about_constructors: CONSTRUCTOR_WORD.is_match(&prose),
        };
        question.names = names(&question, &prose, &code);
        question.plain_words = plain_words(&prose, &question.names);
        question
    }

    /// The text the model embeds: the question as written (the model reads its first
    /// `max_length` tokens). Embedding only the prose of a report — without the user's script
    /// and traceback — was measured and not kept: the same Acc@1/5/10 on the issue benchmark
    /// and a lower MRR on the bug reports (0.733 against 0.741).
    pub fn embedding_text(&self) -> &str {
        &self.written
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

/// A question's first non-blank line: a report's or a change message's title.
fn title_of(text: &str) -> &str {
    text.trim_start().lines().next().unwrap_or("")
}

/// Whether the query is about tests, examples or benchmarks themselves (then they are not
/// demoted). A report or change description is read by its first line, its title: a body
/// that mentions the tests it added or a `conftest.py` in passing is about the code. A name
/// the question's own code defines is the user's code, not the project's tests: a snippet's
/// `class TestPojo` written in the title does not make a report about tests.
fn asks_about_tests(query: &str, defined_here: &BTreeSet<String>) -> bool {
    let title = title_of(query);
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
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !defined_here.contains(*word))
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

/// The first [`EXCERPT_PAIRS`] pairs of consecutive non-blank code lines, trimmed, that could
/// be pasted from the project: each has code punctuation, at least [`EXCERPT_MIN_CHARS`]
/// characters and is not an import (which says what a file uses, not where a fault is).
fn excerpt_pairs(code: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for pair in lines.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        let repeated = out.iter().any(|(a, b)| a == first && b == second);
        if reads_as_excerpt(first) && reads_as_excerpt(second) && !repeated {
            out.push((first.to_string(), second.to_string()));
        }
        if out.len() == EXCERPT_PAIRS {
            break;
        }
    }
    out
}

fn reads_as_excerpt(line: &str) -> bool {
    line.len() >= EXCERPT_MIN_CHARS
        && line.contains(['(', '=', '{', ';'])
        && !IMPORT_LINE.is_match(line)
}

/// An indented line is code when it has code punctuation (prose paragraphs may be indented).
fn looks_like_code(line: &str) -> bool {
    line.contains(['(', '=', '{', ';', '[']) || line.ends_with(':')
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
        let parts: Vec<&str> = text.split("::").flat_map(|p| p.split('.')).collect();
        // Shorter than three characters or all digits: not a name (and as an owner, a
        // module alias like Lua's `M` that every file defines).
        let is_name =
            |part: &str| part.len() >= 3 && !part.chars().all(|c| c.is_ascii_digit() || c == '_');
        for (i, part) in parts.iter().enumerate() {
            if !is_name(part) {
                continue;
            }
            let owner = i.checked_sub(1).map(|j| parts[j]).filter(|o| is_name(o));
            let name = match out.iter_mut().position(|n| n.text == *part) {
                Some(found) => &mut out[found],
                None => {
                    out.push(Name {
                        text: part.to_string(),
                        origin,
                        owners: Vec::new(),
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            name.origin = name.origin.min(origin);
            if let Some(owner) = owner
                && !name.owners.iter().any(|o| o == owner)
            {
                name.owners.push(owner.to_string());
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
    for (pattern, origin) in [(&*MEMBER, Origin::Prose), (&*ANNOTATION, Origin::Prose)] {
        for c in pattern.captures_iter(prose) {
            for part in c.iter().skip(1).flatten() {
                add(part.as_str(), origin);
            }
        }
    }
    for c in MEMBER.captures_iter(code) {
        add(&c[2], Origin::Code);
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

/// The shortest plain word that may mean a definition.
const PLAIN_WORD_MIN_CHARS: usize = 4;

/// The prose's plain words that are not already among its names (see
/// [`Question::plain_words`]).
fn plain_words(prose: &str, names: &[Name]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ident in IDENT.find_iter(prose) {
        let word = ident.as_str();
        let plain = word.len() >= PLAIN_WORD_MIN_CHARS
            && word.chars().all(|c| c.is_ascii_alphabetic())
            && !is_compound(word);
        if plain && !names.iter().any(|n| n.text == word) && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
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
    for c in SPECIFIER.captures_iter(text) {
        let specifier = c[1].trim_start_matches("./");
        if !specifier.contains("://") && !specifier.contains(' ') {
            push(specifier.to_string());
        }
    }
    for ident in IDENT.find_iter(text) {
        if let Some(path) = module_path(ident.as_str()) {
            push(path);
        }
    }
    out
}

/// A module written as a dotted or `::` path, as `a/b`: lower-case dotted parts
/// (`astroid.brain`), optionally ending in a type (`com.fasterxml.xml.ToXmlGenerator`: a Java
/// class is its file); of a Rust path, the modules before its item (`tracing_core::dispatcher`
/// of `tracing_core::dispatcher::get_default`, `serde::de` of `serde::de::Deserialize`), a
/// leading `crate`, `self` or `super` dropped. At least two parts.
fn module_path(written: &str) -> Option<String> {
    let rust = written.contains("::");
    let parts: Vec<&str> = written
        .split(if rust { "::" } else { "." })
        .filter(|p| !(rust && matches!(*p, "crate" | "self" | "super")))
        .collect();
    let lower = |p: &&str| {
        p.chars()
            .all(|c| c.is_lowercase() || c == '_' || c.is_ascii_digit())
    };
    let mut modules = parts.iter().take_while(|p| lower(p)).count();
    if rust && modules == parts.len() {
        modules -= 1; // the last part names an item
    }
    let typed = !rust
        && modules >= 2
        && modules + 1 == parts.len()
        && parts[modules].starts_with(|c: char| c.is_uppercase());
    let keep = match () {
        _ if typed => parts.len(),
        _ if rust || modules == parts.len() => modules,
        _ => 0,
    };
    (keep >= 2).then(|| parts[..keep].join("/"))
}

/// `Trait for Type` pairs of the prose, each once, in order.
fn trait_impls(prose: &str) -> Vec<TraitImpl> {
    let mut out: Vec<TraitImpl> = Vec::new();
    for c in TRAIT_FOR_TYPE.captures_iter(prose) {
        let pair = TraitImpl {
            trait_name: c[1].to_string(),
            type_name: c[2].to_string(),
        };
        if !out.contains(&pair) {
            out.push(pair);
        }
    }
    out
}

/// Command-line flags, each once, without their dashes.
fn flags(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in FLAG.captures_iter(text) {
        if c[1].len() >= 3 && !out.iter().any(|f| f == &c[1]) {
            out.push(c[1].to_string());
        }
    }
    out
}

/// Short quoted values ([`QUOTED_VALUE`]) not followed by a letter, each once.
fn quoted_values(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in QUOTED_VALUE.captures_iter(text) {
        let value = c.get(1).or(c.get(2)).expect("one of the two quotes");
        let next = text[value.end() + 1..].chars().next();
        if next.is_some_and(|n| n.is_alphanumeric() || n == '_') {
            continue;
        }
        if !out.iter().any(|v| v == value.as_str()) {
            out.push(value.as_str().to_string());
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
    for c in TAGGED_ERROR_LINE.captures_iter(text) {
        let message = c[1].trim();
        if !out.iter().any(|m| m == message) {
            out.push(message.to_string());
        }
    }
    for c in PANIC.captures_iter(text) {
        if let Some(message) = c.get(1).or(c.get(2)) {
            out.push(message.as_str().trim().to_string());
        }
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

    /// The functions of a question's frames, innermost last.
    fn frame_functions(question: &str) -> Vec<String> {
        Question::read(question)
            .frames
            .iter()
            .filter_map(|f| f.function.clone())
            .collect()
    }

    #[test]
    fn a_go_method_called_on_a_nil_receiver_yields_the_innermost_place_to_its_caller() {
        let dump = "panic when closing\r\n```\r\npanic: runtime error: invalid memory address or nil pointer dereference\r\n\r\ngoroutine 5 [running]:\r\nmyapp/vendor/google.golang.org/grpc.(*ccBalancerWrapper).handleResolvedAddrs(0x0, 0xc4, 0x1)\r\n        /go/src/myapp/vendor/google.golang.org/grpc/balancer_conn_wrappers.go:182 +0x26\r\nmyapp/vendor/google.golang.org/grpc.(*ClientConn).handleServiceConfig(0xc43dc7ac00, 0xc4)\r\n        /go/src/myapp/vendor/google.golang.org/grpc/clientconn.go:1046 +0x299\r\nmyapp/vendor/google.golang.org/grpc.(*ccResolverWrapper).watcher(0xc43af18930)\r\n        /go/src/myapp/vendor/google.golang.org/grpc/resolver_conn_wrapper.go:125 +0x2d6\r\ncreated by myapp/vendor/google.golang.org/grpc.(*ccResolverWrapper).start\r\n        /go/src/myapp/vendor/google.golang.org/grpc/resolver_conn_wrapper.go:95 +0x3f\r\n```\r\n";
        let functions = frame_functions(dump);
        // The goroutine's creator is its outermost frame, not a location read after the run.
        assert_eq!(
            functions,
            [
                "start",
                "watcher",
                "handleResolvedAddrs",
                "handleServiceConfig"
            ]
        );
        let live = dump.replace("(0x0, 0xc4, 0x1)", "(0xc42, 0xc4, 0x1)");
        let functions = frame_functions(&live);
        assert_eq!(
            functions,
            [
                "start",
                "watcher",
                "handleServiceConfig",
                "handleResolvedAddrs"
            ]
        );
    }

    #[test]
    fn a_frame_the_title_names_is_read_as_the_innermost() {
        let trace = "```\nTraceback (most recent call last):\n  File \"app.py\", line 3, in main\n    d.to_json_dict()\n  File \"/x/pkg/dataset.py\", line 40, in to_json_dict\n    element = self[key]\n  File \"/x/pkg/values.py\", line 9, in convert\n    raise TypeError(\"no\")\nTypeError: no\n```\n";
        let titled =
            format!("Dataset.to_json_dict still raises when asked to skip bad tags\n{trace}");
        assert_eq!(
            frame_functions(&titled),
            ["main", "convert", "to_json_dict"]
        );
        let untitled = format!("Export raises on a bad tag\n{trace}");
        assert_eq!(
            frame_functions(&untitled),
            ["main", "to_json_dict", "convert"]
        );
        // A name shorter than five characters is too common to be pointed at.
        let short = format!("main fails on a bad tag\n{trace}");
        assert_eq!(
            frame_functions(&short).last().map(String::as_str),
            Some("convert")
        );
    }

    #[test]
    fn a_line_a_tool_tags_as_an_error_gives_its_message() {
        let q = Question::read(
            "fd stops at a missing path\n```bash\n> fd . real fake\n[fd error]: 'fake' is not a directory\n$ cc x.c\nx.c:12:5: error: 'count' undeclared here\n```\nThe error: it should go on.",
        );
        assert!(
            q.messages
                .contains(&"'fake' is not a directory".to_string())
        );
        assert!(q.messages.contains(&"'count' undeclared here".to_string()));
        assert_eq!(
            message_fragments("'fake' is not a directory"),
            ["is not a directory"]
        );
        // Prose that names an error is not output.
        assert!(!q.messages.iter().any(|m| m.contains("it should go on")));
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
    fn permalinks_and_locations_in_prose_are_frames() {
        // darkreader__darkreader-6747, pydicom__pydicom-1256, a PHP error text
        let q = Question::read(
            "The regex at https://github.com/darkreader/darkreader/blob/d69522753bff/src/generators/dynamic-theme.ts#L61 seems wrong.\nThe problem is in `jsonrep.py` at line 227.\nPHP Warning: Undefined index in /var/www/src/Router.php on line 12\nSee also https://github.com/a/b/blob/main/docs/x.md and line 4 alone.",
        );
        let at = |path_end| {
            (
                frame_at(&q, path_end).line,
                frame_at(&q, path_end).path.clone(),
            )
        };
        assert_eq!(
            at("dynamic-theme.ts"),
            (61, "src/generators/dynamic-theme.ts".into())
        );
        assert_eq!(at("jsonrep.py"), (227, "jsonrep.py".into()));
        assert_eq!(at("Router.php").0, 12);
        assert_eq!(q.frames.len(), 3, "{:?}", q.frames);
    }

    fn frame_at<'q>(q: &'q Question, path_end: &str) -> &'q Frame {
        q.frames
            .iter()
            .find(|f| f.path.ends_with(path_end))
            .unwrap_or_else(|| panic!("no frame in {path_end}: {:?}", q.frames))
    }

    #[test]
    fn a_java_stack_gives_package_paths_and_methods() {
        // googlecontainertools__jib-2542 (the last frame with a space before its parenthesis)
        let q = Question::read(
            "NPE if the server doesn't provide any HTTP content for an error\n```\nCaused by: java.lang.NullPointerException\n\tat com.fasterxml.jackson.core.JsonFactory.createParser(JsonFactory.java:889)\n\tat com.google.cloud.tools.jib.registry.RegistryEndpointCaller.newRegistryErrorException (RegistryEndpointCaller.java:194)\n```\n",
        );
        let frame = frame_at(&q, "RegistryEndpointCaller.java");
        assert_eq!(
            frame.path,
            "com/google/cloud/tools/jib/registry/RegistryEndpointCaller.java"
        );
        assert_eq!(frame.line, 194);
        assert_eq!(frame.function.as_deref(), Some("newRegistryErrorException"));
        assert_eq!(
            frame_at(&q, "JsonFactory.java").function.as_deref(),
            Some("createParser")
        );
        assert_eq!(q.frames.len(), 2, "{:?}", q.frames);
    }

    #[test]
    fn every_trace_reads_innermost_last() {
        // Java (like Node, Go, Rust, Ruby, PHP and debuggers) writes the innermost frame
        // first, Python last: both are read with it last.
        let java = Question::read(
            "NPE\n\tat com.acme.billing.InvoiceService.applyTax(InvoiceService.java:23)\n\tat com.acme.billing.InvoiceService.total(InvoiceService.java:17)\n\tat com.acme.app.Main.main(Main.java:8)\n",
        );
        let names: Vec<&str> = java
            .frames
            .iter()
            .filter_map(|f| f.function.as_deref())
            .collect();
        assert_eq!(names, ["main", "total", "applyTax"]);
        let python = Question::read(
            "Traceback (most recent call last):\n  File \"app.py\", line 3, in main\n    total()\n  File \"shop/cart.py\", line 9, in total\n    raise ValueError\nValueError: bad\n",
        );
        let last = python.frames.last().unwrap();
        assert_eq!(last.function.as_deref(), Some("total"));
    }

    #[test]
    fn a_jvm_traces_last_cause_gives_its_innermost_frame() {
        // googlecontainertools__jib-2536: the wrapper's frame comes first, the root cause last.
        let q = Question::read(
            "org.apache.maven.lifecycle.LifecycleExecutionException: failed\n    at org.apache.maven.cli.MavenCli.main (MavenCli.java:192)\nCaused by: org.apache.maven.plugin.MojoExecutionException: (null exception message)\n    at com.acme.jib.maven.BuildTarMojo.execute (BuildTarMojo.java:140)\n    at org.apache.maven.plugin.DefaultBuildPluginManager.executeMojo (DefaultBuildPluginManager.java:137)\nCaused by: java.lang.NullPointerException\n    at com.acme.jib.credentials.DockerConfigCredentialRetriever.retrieve (DockerConfigCredentialRetriever.java:146)\n    at com.acme.jib.credentials.DockerConfigCredentialRetriever.retrieve (DockerConfigCredentialRetriever.java:104)\n    at com.acme.jib.steps.PullBaseImageStep.call (PullBaseImageStep.java:134)\n",
        );
        let lines: Vec<u32> = q.frames.iter().map(|f| f.line).collect();
        assert_eq!(lines, [192, 137, 140, 134, 104, 146]);
    }

    #[test]
    fn a_go_goroutine_dump_gives_each_function_with_its_location() {
        // grpc__grpc-go-2371
        let q = Question::read(
            "panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 5513264 [running]:\nmyapp/vendor/google.golang.org/grpc.(*ccBalancerWrapper).handleResolvedAddrs(0x0, 0xc448770280, 0x1)\n        /opt/gopath/src/myapp/vendor/google.golang.org/grpc/balancer_conn_wrappers.go:182 +0x26\nmyapp/vendor/google.golang.org/grpc.(*ClientConn).handleServiceConfig(0xc43dc7ac00)\n        /opt/gopath/src/myapp/vendor/google.golang.org/grpc/clientconn.go:1046 +0x299\n",
        );
        let frame = frame_at(&q, "balancer_conn_wrappers.go");
        assert_eq!(frame.line, 182);
        assert_eq!(frame.function.as_deref(), Some("handleResolvedAddrs"));
        assert_eq!(
            frame_at(&q, "clientconn.go").function.as_deref(),
            Some("handleServiceConfig")
        );
        assert!(
            q.messages
                .iter()
                .any(|m| m.starts_with("runtime error: invalid memory address")),
            "{:?}",
            q.messages
        );
    }

    #[test]
    fn a_rust_panic_and_backtrace_give_the_message_locations_and_functions() {
        // sharkdp__fd-1162 (the message runs past its line) and a backtrace's two-line frames
        let q = Question::read(
            "Panic when using `-j` flag\n```\nthread 'main' panicked at 'Mismatch between definition and access of `threads`. Could not downcast\n', /home/u/.cargo/registry/src/clap-4.0.18/src/parser/error.rs:30:9\nstack backtrace:\n   3: fd::walk::spawn_senders::{{closure}}::h1a2b3c4d5e6f7a8b\n             at ./src/walk.rs:410:17\n```\n",
        );
        assert!(
            q.messages[0].starts_with("Mismatch between definition and access"),
            "{:?}",
            q.messages
        );
        let frame = frame_at(&q, "src/walk.rs");
        assert_eq!(frame.line, 410);
        assert_eq!(frame.function.as_deref(), Some("spawn_senders"));
        assert_eq!(frame_at(&q, "parser/error.rs").line, 30);
        // tokio-rs__bytes-732: the panic message on the line after its location
        let q = Question::read(
            "```\nthread 'main' panicked at src/main.rs:9:5:\nassertion `left == right` failed\n```",
        );
        assert_eq!(q.messages, ["assertion `left == right` failed"]);
        assert_eq!(frame_at(&q, "src/main.rs").line, 9);
    }

    #[test]
    fn native_ruby_php_and_node_frames_are_read() {
        let q = Question::read(
            "crash\n```\n#0 0x4005d4 in ZSTD_compressBlock_internal lib/compress/zstd_compress.c:2271\n#1  0x00007ffff in Catch::Capturer::~Capturer (this=0x7ff) at include/internal/catch_message.cpp:63\nfrom lib/active_support/cache.rb:10:in `fetch'\n#0 /var/www/src/Router.php(123): Router->dispatch()\n    at Function.handle (lib/router/index.js:45:12)\n```\n",
        );
        let native = frame_at(&q, "zstd_compress.c");
        assert_eq!(
            (native.line, native.function.as_deref()),
            (2271, Some("ZSTD_compressBlock_internal"))
        );
        assert_eq!(
            frame_at(&q, "catch_message.cpp").function.as_deref(),
            Some("Capturer")
        );
        assert_eq!(frame_at(&q, "cache.rb").function.as_deref(), Some("fetch"));
        let php = frame_at(&q, "Router.php");
        assert_eq!((php.line, php.function.as_deref()), (123, Some("dispatch")));
        assert_eq!(
            frame_at(&q, "router/index.js").function.as_deref(),
            Some("handle")
        );
    }

    #[test]
    fn plain_words_are_the_prose_words_not_written_as_code() {
        let q = Question::read(
            "Fix fuentes error for tz-aware inputs in `read_tmy3` and PVSystem\n\n```\nreindl(x)\n```",
        );
        assert_eq!(q.plain_words, ["fuentes", "error", "aware", "inputs"]);
    }

    #[test]
    fn names_in_each_languages_syntax_and_module_paths() {
        // fasterxml__jackson-dataformat-xml-544: annotations; iamkun__dayjs-918: an import
        let q = Question::read(
            "`@JacksonXmlText` does not work when paired with `@JsonRawValue`\n\nWhen a field has both the @JsonRawValue and Foo#bar or obj->release annotations, see com.fasterxml.jackson.dataformat.xml.ser.ToXmlGenerator and tracing_core::dispatcher::get_default.\n```\nimport customParseFormat from 'dayjs/plugin/customParseFormat'\n```\n",
        );
        let names: Vec<&str> = q.names.iter().map(|n| n.text.as_str()).collect();
        for name in [
            "JacksonXmlText",
            "JsonRawValue",
            "bar",
            "release",
            "get_default",
        ] {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
        for path in [
            "dayjs/plugin/customParseFormat",
            "com/fasterxml/jackson/dataformat/xml/ser/ToXmlGenerator",
            "tracing_core/dispatcher",
        ] {
            assert!(q.paths.contains(&path.to_string()), "{path}: {:?}", q.paths);
        }
        // an item of a crate is not a module: `tracing::instrument` names no file
        assert_eq!(module_path("tracing::instrument"), None);
        assert_eq!(
            module_path("serde::de::Deserialize").as_deref(),
            Some("serde/de")
        );
    }

    #[test]
    fn flags_and_tool_errors_are_evidence() {
        let q = Question::read(
            "`fd --hidden --no-ignore-vcs` ignores `-j`\n```\nerror: Found argument '--threads' which wasn't expected\n```",
        );
        assert_eq!(q.flags, ["hidden", "no-ignore-vcs", "threads"]);
        assert_eq!(
            q.messages[0],
            "Found argument '--threads' which wasn't expected"
        );
    }

    #[test]
    fn short_quoted_values_are_read_and_apostrophes_are_not_quotes() {
        let q = Question::read(
            "It fails with \"OL\" but works with \"OB\", \"OF\" etc. It's the 'OL' VR; don't 'fix' it's\n```python\nds.add_new(0x00660040, 'OL', data)\n```",
        );
        assert_eq!(q.values, ["OL", "OB", "OF", "fix"]);
    }

    #[test]
    fn a_trait_for_a_type_names_one_impl_block() {
        let q = Question::read(
            "Bug in Drop for Drain<'data, T>\n\nSee `Deserialize<'de> for Value` and Drop for Drain again.\n```rust\nimpl Clone for Mine {}\n```",
        );
        let pairs: Vec<(&str, &str)> = q
            .trait_impls
            .iter()
            .map(|p| (p.trait_name.as_str(), p.type_name.as_str()))
            .collect();
        assert_eq!(pairs, [("Drop", "Drain"), ("Deserialize", "Value")]);
    }

    #[test]
    fn constructors_are_asked_about_in_prose_only() {
        assert!(Question::read("Person Name Constructors (#1331)").about_constructors);
        assert!(Question::read("the Foo ctor throws").about_constructors);
        assert!(!Question::read("constructs a new client").about_constructors);
        assert!(
            !Question::read("Fails:\n```js\nclass A { constructor() {} }\n```").about_constructors
        );
    }

    #[test]
    fn a_snippet_declaring_a_test_named_class_is_not_about_tests() {
        // fasterxml__jackson-dataformat-xml-544 with its snippet's class named in the title
        let q = Question::read(
            "TestPojo loses @JacksonXmlText with @JsonRawValue\n```java\npublic class TestPojo {\n  @JacksonXmlText\n  @JsonRawValue\n  String value;\n}\n```\n",
        );
        assert!(q.defined_here.contains("TestPojo"));
        assert!(!q.about_tests);
        assert!(Question::read("TestPojo serialization test fails").about_tests);
    }

    #[test]
    fn queries_about_tests_are_recognised() {
        let none = BTreeSet::new();
        assert!(asks_about_tests("which test covers apply_discount", &none));
        assert!(asks_about_tests("TestCartTotal fixtures", &none));
        assert!(!asks_about_tests("round a money value to cents", &none));
        assert!(!asks_about_tests("attestation of the contest", &none));
        assert!(!asks_about_tests(
            "Change default handling of unknown tags\n\n- added conftest.py for common fixtures",
            &none
        ));
    }

    #[test]
    fn a_qualified_name_keeps_its_owner() {
        let q = Question::read("calling `Dict.getitem()` on an unpacked dict raises");
        let getitem = q
            .names
            .iter()
            .find(|n| n.text == "getitem")
            .expect("getitem");
        assert_eq!(getitem.owners, ["Dict"]);
    }

    #[test]
    fn a_one_line_identifier_question_keeps_its_name() {
        let q = Question::read("apply_discount");
        assert_eq!(
            q.names,
            [Name {
                text: "apply_discount".into(),
                origin: Origin::Prose,
                owners: Vec::new(),
            }]
        );
        assert_eq!(q.embedding_text(), "apply_discount");
    }

    #[test]
    fn a_question_has_a_body_past_its_first_non_blank_line() {
        assert!(Question::read("Nested DateTime Format\n\n* Use the root's opts").has_body());
        assert!(!Question::read("\n  how DateTime formats a value  \n\n").has_body());
    }

    #[test]
    fn pasted_code_gives_pairs_of_its_lines_without_imports_short_lines_or_repeats() {
        let q = Question::read(
            "Stale values\n\n```python\nimport time\nfrom cache import Entry\nvalue = self.loader(key)\nself.entries[key] = Entry(value, started + self.ttl)\n}\nvalue = self.loader(key)\nself.entries[key] = Entry(value, started + self.ttl)\n```\n",
        );
        assert_eq!(
            q.excerpts,
            [(
                "value = self.loader(key)".to_string(),
                "self.entries[key] = Entry(value, started + self.ttl)".to_string()
            )]
        );
        assert!(
            Question::read("Stale values of `Cache.get`")
                .excerpts
                .is_empty()
        );
    }
}
