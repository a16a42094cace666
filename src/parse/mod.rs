//! Stage 2, parse: tree-sitter turns each loaded file into entities (module, class,
//! function, method, document, section) and the raw references the graph resolves (calls,
//! imports, base types). Files are parsed in parallel with rayon. A syntax error yields the
//! partial result plus a recorded [`ParseIssue`]; nothing here panics on input, recurses on
//! the syntax tree, resolves names across files, or touches the disk.

mod docs;
mod embedded;
mod extract;
pub mod languages;
mod macros;
pub mod text;
mod view;

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tree_sitter::{ParseOptions, ParseState, Parser};

pub use docs::STRING_PREFIXES;
pub use languages::{Language, LanguageSpec};

use crate::walk::{FileState, SourceFile};

/// A file taking longer than this to parse is abandoned with a `timeout` issue.
const PARSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The subkind of a test written beside the code it exercises (a Zig `test` block, a Rust
/// `#[test]` function); every definition inside a test or a test scope is one too.
pub const TEST_SUBKIND: &str = "test";

/// What an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    Module,
    Class,
    Function,
    Method,
    Document,
    Section,
    /// A file read as text only (a format without a grammar, or a failed parse).
    Text,
}

impl EntityKind {
    /// The kind's name in tables and payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Module => "module",
            EntityKind::Class => "class",
            EntityKind::Function => "function",
            EntityKind::Method => "method",
            EntityKind::Document => "document",
            EntityKind::Section => "section",
            EntityKind::Text => "text",
        }
    }

    /// The kind named `s`, if any.
    pub fn parse(s: &str) -> Option<EntityKind> {
        [
            Self::Module,
            Self::Class,
            Self::Function,
            Self::Method,
            Self::Document,
            Self::Section,
            Self::Text,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Functions and methods: what a call can land on (classes too, as constructors).
    pub fn is_callable(self) -> bool {
        matches!(self, EntityKind::Function | EntityKind::Method)
    }

    /// Markdown sections and documents.
    pub fn is_prose(self) -> bool {
        matches!(self, EntityKind::Section | EntityKind::Document)
    }

    /// Prose or plain text (a format without a grammar): words for people, no code.
    pub fn reads_as_prose(self) -> bool {
        self.is_prose() || self == EntityKind::Text
    }

    /// Function and method: the units code is edited in.
    pub fn is_unit(self) -> bool {
        matches!(self, EntityKind::Function | EntityKind::Method)
    }

    /// Module, document and text: one per file.
    pub fn is_file_level(self) -> bool {
        matches!(
            self,
            EntityKind::Module | EntityKind::Document | EntityKind::Text
        )
    }
}

/// A line/column range (1-based lines, 0-based columns) with its byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
    pub start_byte: usize,
    pub end_byte: usize,
}

impl Span {
    /// Whether `other` lies within this span.
    pub fn contains(&self, other: &Span) -> bool {
        self.start_byte <= other.start_byte && other.end_byte <= self.end_byte
    }
}

/// A named piece of code or documentation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// `<path>` for a file's module/document, else `<path>::<qualified.name>`.
    pub id: String,
    pub parent: Option<String>,
    pub kind: EntityKind,
    /// The class flavour (`struct`, `trait`, `interface`, …) when the grammar tells it.
    pub subkind: Option<String>,
    pub name: String,
    pub qualified_name: String,
    pub language: String,
    pub path: String,
    pub span: Span,
    pub signature: String,
    pub doc: Option<String>,
    pub content_hash: String,
    /// Lines where a statement of the body starts (only for long bodies): where chunks may split.
    pub split_lines: Vec<u32>,
}

/// A call site inside an entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallSite {
    /// Index of the calling entity in [`ParsedFile::entities`].
    pub caller: usize,
    pub name: String,
    pub receiver: Option<String>,
    pub line: u32,
}

/// One import statement in the language's own syntax.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportStmt {
    pub line: u32,
    pub end_line: u32,
    pub text: String,
    pub module: String,
    /// Names the statement binds (explicit, or the module's last segment).
    pub names: Vec<String>,
}

/// Whether a base type is extended or implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeritageKind {
    Inherits,
    Implements,
}

/// A base type named by a class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeritageRef {
    /// Index of the deriving entity (the module when the deriving type is not in this file).
    pub from: usize,
    /// The deriving type's name when it is given apart from the definition (`impl T for X`).
    pub implementor: Option<String>,
    pub name: String,
    pub kind: HeritageKind,
    pub line: u32,
}

/// Something wrong with a file that did not stop it from being indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseIssue {
    pub kind: IssueKind,
    pub line: u32,
    pub message: String,
    /// The file fell back to being read as text because of this issue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_as_text: bool,
}

impl ParseIssue {
    pub fn new(kind: IssueKind, line: u32, message: impl Into<String>) -> Self {
        Self {
            kind,
            line,
            message: message.into(),
            read_as_text: false,
        }
    }

    /// Marks this issue as the reason the file was read as text (and says so).
    fn made_file_text(&mut self) {
        self.read_as_text = true;
        self.message.push_str(READ_AS_TEXT);
    }
}

/// What went wrong reading one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    SyntaxError,
    InvalidUtf8,
    Timeout,
    TooDeep,
}

impl IssueKind {
    /// The kind's name in reports (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            IssueKind::SyntaxError => "syntax_error",
            IssueKind::InvalidUtf8 => "invalid_utf8",
            IssueKind::Timeout => "timeout",
            IssueKind::TooDeep => "too_deep",
        }
    }
}

/// Everything parsing one file produced.
#[derive(Debug, Clone)]
pub struct ParsedFile {
    pub path: String,
    pub language: &'static LanguageSpec,
    pub text: String,
    pub state: FileState,
    /// `entities[0]` is always the file's module (or document).
    pub entities: Vec<Entity>,
    pub calls: Vec<CallSite>,
    pub imports: Vec<ImportStmt>,
    pub heritage: Vec<HeritageRef>,
    /// Blocks holding members of a type defined elsewhere in the file (Rust `impl`), in
    /// source order.
    pub containers: Vec<Span>,
    pub issues: Vec<ParseIssue>,
}

impl ParsedFile {
    /// Lines in the file.
    pub fn line_count(&self) -> usize {
        self.text.lines().count()
    }

    /// The entity standing for the whole file (a module, a document, a text file): its path
    /// as id, no parent, the file's span and content hash.
    fn whole_file_entity(
        &self,
        kind: EntityKind,
        name: String,
        qualified_name: String,
        language: String,
    ) -> Entity {
        Entity {
            id: self.path.clone(),
            parent: None,
            kind,
            subkind: None,
            name,
            qualified_name,
            language,
            path: self.path.clone(),
            span: Span {
                start_line: 1,
                start_col: 0,
                end_line: self.line_count().max(1) as u32,
                end_col: 0,
                start_byte: 0,
                end_byte: self.text.len(),
            },
            signature: String::new(),
            doc: None,
            content_hash: crate::text::content_hash(&[&self.text]),
            split_lines: Vec::new(),
        }
    }
}

/// Parses every file in parallel — with its grammar, or as text for the formats
/// `text::format_of` knows; other files are dropped (the walk filters them already).
/// Output order follows input order.
pub fn parse_all(files: Vec<SourceFile>, on_file: &(dyn Fn() + Sync)) -> Vec<ParsedFile> {
    files
        .into_par_iter()
        .filter_map(|file| {
            let parsed = match languages::for_source(&file.rel_path, &file.text) {
                Some(language) => parse_file(file, language),
                None => {
                    let format = text::format_of(&file.rel_path)?;
                    parse_text(file, format)
                }
            };
            on_file();
            Some(parsed)
        })
        .collect()
}

/// Reads a file of a format without a grammar as text.
pub fn parse_text(file: SourceFile, format: &str) -> ParsedFile {
    let mut parsed = unparsed(file, &languages::TEXT);
    text::read_as_text(&mut parsed, format);
    parsed
}

/// A file's record before extraction: its text and an invalid-UTF-8 issue when decoding
/// replaced bytes.
fn unparsed(file: SourceFile, language: &'static LanguageSpec) -> ParsedFile {
    let issues = if file.lossy {
        vec![ParseIssue::new(
            IssueKind::InvalidUtf8,
            0,
            "invalid UTF-8 replaced with U+FFFD",
        )]
    } else {
        Vec::new()
    };
    ParsedFile {
        path: file.rel_path,
        language,
        text: file.text,
        state: file.state,
        entities: Vec::new(),
        calls: Vec::new(),
        imports: Vec::new(),
        heritage: Vec::new(),
        containers: Vec::new(),
        issues,
    }
}

/// The end of an issue's message when the file fell back to being read as text.
const READ_AS_TEXT: &str = "; read as text";

/// A file with syntax errors that yields no definition and at least this many lines is read
/// as text: its grammar did not recognise it (a template, another dialect, a broken file).
const UNRECOGNISED_MIN_LINES: usize = 5;

thread_local! {
    static PARSERS: RefCell<HashMap<&'static str, Parser>> = RefCell::new(HashMap::new());
}

/// Parses one file with its language; a parse that times out, or that recognises nothing in
/// a file full of syntax errors, falls back to reading the file as text (the issue says why).
pub fn parse_file(file: SourceFile, language: &'static Language) -> ParsedFile {
    let code = language
        .spec
        .code_view
        .map(|view| view::code_view(&file.text, view));
    let mut parsed = unparsed(file, language.spec);
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language.spec.name).or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&language.grammar)
                .expect("grammar ABI is supported");
            parser
        });
        let bytes = code.as_deref().unwrap_or(parsed.text.as_bytes());
        let tree = parse_with_deadline(parser, bytes);
        match (language.spec.name, tree) {
            ("rust", Some(tree)) => Some(through_item_macros(parser, &parsed.text, tree)),
            (_, tree) => tree,
        }
    });
    match tree {
        Some(tree) => {
            let has_error = tree.root_node().has_error();
            if has_error {
                parsed.issues.push(docs::first_syntax_error(&tree));
            }
            extract::extract(&mut parsed, language, &tree);
            if has_error
                && parsed.entities.len() == 1
                && parsed.line_count() >= UNRECOGNISED_MIN_LINES
            {
                text::read_as_text(&mut parsed, language.spec.name);
                for issue in &mut parsed.issues {
                    if issue.kind == IssueKind::SyntaxError {
                        issue.made_file_text();
                    }
                }
            }
        }
        None => {
            let mut issue = ParseIssue::new(
                IssueKind::Timeout,
                0,
                format!("parsing took longer than {}s", PARSE_TIMEOUT.as_secs()),
            );
            issue.made_file_text();
            parsed.issues.push(issue);
            text::read_as_text(&mut parsed, language.spec.name);
        }
    }
    parsed
}

/// Macro invocations that wrap items are walked up to this depth (`cfg_rt! { cfg_net! { … } }`).
const ITEM_MACRO_DEPTH: usize = 3;
const ITEM_KEYWORDS: [&str; 8] = [
    "fn ", "struct ", "enum ", "trait ", "impl ", "impl<", "mod ", "type ",
];

/// Rust items written inside a module-level macro invocation (`cfg_rt! { pub fn spawn… }`,
/// `cfg_if!`-style wrappers, common in libraries) are invisible to the grammar, which keeps a
/// macro's body as tokens. The wrapper (`name! {` and its closing brace) is blanked to spaces
/// of the same length, so every byte and line keeps its place, and the text is parsed again;
/// the new tree is kept unless it has syntax errors the original did not.
fn through_item_macros(
    parser: &mut Parser,
    text: &str,
    tree: tree_sitter::Tree,
) -> tree_sitter::Tree {
    let mut current = tree;
    let mut blanked = text.as_bytes().to_vec();
    for _ in 0..ITEM_MACRO_DEPTH {
        let wrappers = item_macro_wrappers(&current, &blanked);
        if wrappers.is_empty() {
            break;
        }
        for (open, close) in wrappers {
            view::blank(&mut blanked[open.clone()]);
            blanked[close] = b' ';
        }
        let Some(reparsed) = parse_with_deadline(parser, &blanked) else {
            break;
        };
        if reparsed.root_node().has_error() && !current.root_node().has_error() {
            break;
        }
        current = reparsed;
    }
    current
}

/// `(bytes of "name! {", byte of the closing "}")` of every macro invocation among the file's
/// (or an inline module's) items whose braced body holds item keywords.
fn item_macro_wrappers(
    tree: &tree_sitter::Tree,
    text: &[u8],
) -> Vec<(std::ops::Range<usize>, usize)> {
    let mut out = Vec::new();
    let mut pending = vec![tree.root_node()];
    while let Some(node) = pending.pop() {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let child = match child.kind() {
                "expression_statement" => child.child(0).unwrap_or(child),
                _ => child,
            };
            match child.kind() {
                "mod_item" => pending.extend(child.child_by_field_name("body")),
                "macro_invocation" => {
                    let Some(body) = child
                        .children(&mut child.walk())
                        .find(|c| c.kind() == "token_tree")
                    else {
                        continue;
                    };
                    let inner = &text[body.start_byte()..body.end_byte()];
                    let braced = inner.first() == Some(&b'{') && inner.last() == Some(&b'}');
                    let inner = String::from_utf8_lossy(inner);
                    if braced && ITEM_KEYWORDS.iter().any(|k| inner.contains(k)) {
                        out.push((
                            child.start_byte()..body.start_byte() + 1,
                            body.end_byte() - 1,
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn parse_with_deadline(parser: &mut Parser, bytes: &[u8]) -> Option<tree_sitter::Tree> {
    let started = Instant::now();
    let mut past_deadline = |_: &ParseState| started.elapsed() > PARSE_TIMEOUT;
    let options = ParseOptions::new().progress_callback(&mut past_deadline);
    let len = bytes.len();
    parser.reset();
    parser.parse_with_options(
        &mut |offset, _| if offset < len { &bytes[offset..] } else { &[] },
        None,
        Some(options),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(text: &str) -> ParsedFile {
        let language = languages::for_path("src/lib.rs").unwrap();
        let state = crate::walk::FileState {
            size: text.len() as u64,
            mtime_ns: 0,
            content_hash: None,
        };
        parse_file(
            SourceFile {
                rel_path: "src/lib.rs".into(),
                text: text.into(),
                lossy: false,
                state,
            },
            language,
        )
    }

    #[test]
    fn items_inside_wrapping_macros_are_entities_at_their_own_lines() {
        let text = "cfg_rt! {\n    /// Spawns a task.\n    pub fn spawn() {}\n\n    cfg_net! {\n        pub struct Socket;\n    }\n}\n\nmacro_rules! cfg_rt { ($($item:item)*) => { $($item)* } }\n\nlazy_static! { static ref X: u32 = 1; }\n";
        let parsed = rust(text);
        let spawn = parsed
            .entities
            .iter()
            .find(|e| e.name == "spawn")
            .expect("spawn");
        assert_eq!(spawn.span.start_line, 3);
        assert!(
            spawn.signature.starts_with("pub fn spawn"),
            "{}",
            spawn.signature
        );
        let socket = parsed
            .entities
            .iter()
            .find(|e| e.name == "Socket")
            .expect("Socket");
        assert_eq!(socket.span.start_line, 6);
        assert_eq!(parsed.text, text, "the file's text is kept as written");
    }
}
