//! Stage 2, parse: tree-sitter turns each loaded file into entities (module, class,
//! function, method, document, section) and the raw references the graph resolves (calls,
//! imports, base types). Files are parsed in parallel with rayon. A syntax error yields the
//! partial result plus a recorded [`ParseIssue`]; nothing here panics on input, recurses on
//! the syntax tree, resolves names across files, or touches the disk.

mod docs;
mod extract;
pub mod languages;

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tree_sitter::{ParseOptions, ParseState, Parser};

pub use languages::{Language, LanguageSpec};

use crate::walk::{FileState, SourceFile};

/// A file taking longer than this to parse is abandoned with a `timeout` issue.
const PARSE_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Module and document: one per file.
    pub fn is_file_level(self) -> bool {
        matches!(self, EntityKind::Module | EntityKind::Document)
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
}

/// Parses every file in parallel; files of unknown languages are dropped (the walk filters
/// them already). Output order follows input order.
pub fn parse_all(files: Vec<SourceFile>, on_file: &(dyn Fn() + Sync)) -> Vec<ParsedFile> {
    files
        .into_par_iter()
        .filter_map(|file| {
            let language = languages::for_path(&file.rel_path)?;
            let parsed = parse_file(file, language);
            on_file();
            Some(parsed)
        })
        .collect()
}

thread_local! {
    static PARSERS: RefCell<HashMap<&'static str, Parser>> = RefCell::new(HashMap::new());
}

/// Parses one file with its language.
pub fn parse_file(file: SourceFile, language: &'static Language) -> ParsedFile {
    let mut issues = Vec::new();
    if file.lossy {
        issues.push(ParseIssue {
            kind: IssueKind::InvalidUtf8,
            line: 0,
            message: "invalid UTF-8 replaced with U+FFFD".into(),
        });
    }
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language.spec.name).or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&language.grammar)
                .expect("grammar ABI is supported");
            parser
        });
        parse_with_deadline(parser, file.text.as_bytes())
    });
    let mut parsed = ParsedFile {
        path: file.rel_path,
        language: language.spec,
        text: file.text,
        state: file.state,
        entities: Vec::new(),
        calls: Vec::new(),
        imports: Vec::new(),
        heritage: Vec::new(),
        containers: Vec::new(),
        issues,
    };
    match tree {
        Some(tree) => {
            if tree.root_node().has_error() {
                parsed.issues.push(docs::first_syntax_error(&tree));
            }
            extract::extract(&mut parsed, language, &tree);
        }
        None => {
            parsed.issues.push(ParseIssue {
                kind: IssueKind::Timeout,
                line: 0,
                message: format!("parsing took longer than {}s", PARSE_TIMEOUT.as_secs()),
            });
            extract::module_only(&mut parsed);
        }
    }
    parsed
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
