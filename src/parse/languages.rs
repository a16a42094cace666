//! The language table: one row per language — grammar, `.scm` query files and the few
//! mappings the generic extractor needs. Adding a language takes its grammar crate in
//! `Cargo.toml`, one row here (extensions included) and its query file(s) in `queries/`
//! (JavaScript and TypeScript share `ecma.scm`); the extractor and the chunker need no change
//! unless the language has a doc style they do not know. This module compiles queries and
//! knows nothing about entities.

use std::sync::OnceLock;

use tree_sitter::Query;

/// Where a definition's documentation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocStyle {
    /// The first statement of the body is a string literal (Python).
    Docstring,
    /// Comments directly above the definition (most languages).
    PrecedingComments,
    /// A module attribute written above the definition (`@doc "…"`), and one inside a
    /// module's body for the module (`@moduledoc "…"`): Elixir.
    Attribute {
        doc: &'static str,
        module_doc: &'static str,
    },
    /// No documentation convention (Markdown sections are their own text).
    None,
}

/// How a file holds the code the grammar reads, when it is not the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeView {
    /// Single-file components (Vue, Svelte): only `<script>` elements hold code; the rest
    /// (template, style) is blanked to spaces before parsing, so lines and columns stay
    /// those of the file.
    ScriptBlocks,
    /// C and C++: the macros a declaration wears (`FMT_API`, `UV_EXTERN`, `FMT_EXPORT
    /// template`, `simdjson_inline`, `FMT_BEGIN_NAMESPACE`) are blanked, so the grammar sees
    /// the declaration the preprocessor would.
    DeclarationMacros,
}

/// A language, as data.
pub struct LanguageSpec {
    pub name: &'static str,
    /// Languages that can call each other share a family (C/C++, JS/TS).
    pub family: &'static str,
    pub extensions: &'static [&'static str],
    pub grammar: fn() -> tree_sitter::Language,
    /// Query sources, concatenated (a shared file plus the language's own).
    pub queries: &'static [&'static str],
    pub doc_style: DocStyle,
    /// Nodes a definition can sit inside whose leading comments document it
    /// (`export_statement`, Go's `type_declaration`, …).
    pub wrappers: &'static [&'static str],
    /// Siblings that may stand between a doc comment and its definition (attributes).
    pub doc_skip: &'static [&'static str],
    /// Siblings written right above a definition that belong to it and start its span
    /// (Haskell's type signature above the equations).
    pub leading: &'static [&'static str],
    /// Call receivers that mean "this object" (`self.f()`, `this.f()`).
    pub self_receivers: &'static [&'static str],
    /// How the language separates the parts of an import path (`.`, `::`, `/`, `\`).
    pub path_separator: &'static str,
    /// Set when the grammar reads a view of the file rather than its bytes (a component's
    /// script blocks, C/C++ with declaration macros blanked); offsets are those of the file.
    pub code_view: Option<CodeView>,
}

const ECMA: &str = include_str!("queries/ecma.scm");
const ECMA_WRAPPERS: &[&str] = &[
    "export_statement",
    "lexical_declaration",
    "variable_declaration",
    "expression_statement",
    // A named function handed to a call is documented above the call's statement.
    "arguments",
    "call_expression",
];

fn python() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}
fn rust() -> tree_sitter::Language {
    tree_sitter_rust::LANGUAGE.into()
}
fn javascript() -> tree_sitter::Language {
    tree_sitter_javascript::LANGUAGE.into()
}
fn typescript() -> tree_sitter::Language {
    tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
}
fn tsx() -> tree_sitter::Language {
    tree_sitter_typescript::LANGUAGE_TSX.into()
}
fn go() -> tree_sitter::Language {
    tree_sitter_go::LANGUAGE.into()
}
fn java() -> tree_sitter::Language {
    tree_sitter_java::LANGUAGE.into()
}
fn c() -> tree_sitter::Language {
    tree_sitter_c::LANGUAGE.into()
}
fn cpp() -> tree_sitter::Language {
    tree_sitter_cpp::LANGUAGE.into()
}
fn csharp() -> tree_sitter::Language {
    tree_sitter_c_sharp::LANGUAGE.into()
}
fn ruby() -> tree_sitter::Language {
    tree_sitter_ruby::LANGUAGE.into()
}
fn php() -> tree_sitter::Language {
    tree_sitter_php::LANGUAGE_PHP.into()
}
fn markdown() -> tree_sitter::Language {
    tree_sitter_md::LANGUAGE.into()
}
fn kotlin() -> tree_sitter::Language {
    tree_sitter_kotlin_ng::LANGUAGE.into()
}
fn swift() -> tree_sitter::Language {
    tree_sitter_swift::LANGUAGE.into()
}
fn scala() -> tree_sitter::Language {
    tree_sitter_scala::LANGUAGE.into()
}
fn lua() -> tree_sitter::Language {
    tree_sitter_lua::LANGUAGE.into()
}
fn bash() -> tree_sitter::Language {
    tree_sitter_bash::LANGUAGE.into()
}
fn elixir() -> tree_sitter::Language {
    tree_sitter_elixir::LANGUAGE.into()
}
fn haskell() -> tree_sitter::Language {
    tree_sitter_haskell::LANGUAGE.into()
}
fn zig() -> tree_sitter::Language {
    tree_sitter_zig::LANGUAGE.into()
}
fn dart() -> tree_sitter::Language {
    tree_sitter_dart::LANGUAGE.into()
}

impl std::fmt::Debug for LanguageSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// A single-file component format (Vue, Svelte): its `<script>` elements read as TypeScript
/// (a superset of the JavaScript they are usually written in).
const fn script_component(name: &'static str, extensions: &'static [&'static str]) -> LanguageSpec {
    LanguageSpec {
        name,
        family: "ecmascript",
        extensions,
        grammar: typescript,
        queries: &[ECMA, include_str!("queries/typescript.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: ECMA_WRAPPERS,
        doc_skip: &["decorator"],
        leading: &[],
        self_receivers: &["this"],
        path_separator: "/",
        code_view: Some(CodeView::ScriptBlocks),
    }
}

/// Every supported language.
pub static LANGUAGES: &[LanguageSpec] = &[
    LanguageSpec {
        name: "python",
        family: "python",
        extensions: &["py", "pyi"],
        grammar: python,
        queries: &[include_str!("queries/python.scm")],
        doc_style: DocStyle::Docstring,
        wrappers: &["decorated_definition"],
        doc_skip: &[],
        self_receivers: &["self", "cls"],
        path_separator: ".",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "rust",
        family: "rust",
        extensions: &["rs"],
        grammar: rust,
        queries: &[include_str!("queries/rust.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["attribute_item"],
        self_receivers: &["self", "Self"],
        path_separator: "::",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "javascript",
        family: "ecmascript",
        extensions: &["js", "jsx", "mjs", "cjs"],
        grammar: javascript,
        queries: &[ECMA, include_str!("queries/javascript.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: ECMA_WRAPPERS,
        doc_skip: &["decorator"],
        self_receivers: &["this"],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "typescript",
        family: "ecmascript",
        extensions: &["ts", "mts", "cts"],
        grammar: typescript,
        queries: &[ECMA, include_str!("queries/typescript.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: ECMA_WRAPPERS,
        doc_skip: &["decorator"],
        self_receivers: &["this"],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "tsx",
        family: "ecmascript",
        extensions: &["tsx"],
        grammar: tsx,
        queries: &[ECMA, include_str!("queries/typescript.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: ECMA_WRAPPERS,
        doc_skip: &["decorator"],
        self_receivers: &["this"],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "go",
        family: "go",
        extensions: &["go"],
        grammar: go,
        queries: &[include_str!("queries/go.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &["type_declaration"],
        doc_skip: &[],
        self_receivers: &[],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "java",
        family: "jvm",
        extensions: &["java"],
        grammar: java,
        queries: &[include_str!("queries/java.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &[],
        self_receivers: &["this"],
        path_separator: ".",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "c",
        family: "c",
        extensions: &["c", "h"],
        grammar: c,
        queries: &[include_str!("queries/c.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &["type_definition", "declaration"],
        doc_skip: &[],
        self_receivers: &[],
        path_separator: "/",
        leading: &[],
        code_view: Some(CodeView::DeclarationMacros),
    },
    LanguageSpec {
        name: "cpp",
        family: "c",
        extensions: &["cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        grammar: cpp,
        queries: &[include_str!("queries/cpp.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &["template_declaration", "type_definition", "declaration"],
        doc_skip: &[],
        self_receivers: &["this"],
        path_separator: "/",
        leading: &[],
        code_view: Some(CodeView::DeclarationMacros),
    },
    LanguageSpec {
        name: "csharp",
        family: "dotnet",
        extensions: &["cs"],
        grammar: csharp,
        queries: &[include_str!("queries/csharp.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["attribute_list"],
        self_receivers: &["this", "base"],
        path_separator: ".",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "ruby",
        family: "ruby",
        extensions: &["rb"],
        grammar: ruby,
        queries: &[include_str!("queries/ruby.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &[],
        self_receivers: &["self"],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "php",
        family: "php",
        extensions: &["php"],
        grammar: php,
        queries: &[include_str!("queries/php.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["attribute_list"],
        self_receivers: &["$this", "self", "static"],
        path_separator: "\\",
        leading: &[],
        code_view: None,
    },
    LanguageSpec {
        name: "kotlin",
        family: "jvm",
        extensions: &["kt", "kts"],
        grammar: kotlin,
        queries: &[include_str!("queries/kotlin.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &[],
        leading: &[],
        self_receivers: &["this"],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "swift",
        family: "swift",
        extensions: &["swift"],
        grammar: swift,
        queries: &[include_str!("queries/swift.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["attribute"],
        leading: &[],
        self_receivers: &["self", "Self"],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "scala",
        family: "jvm",
        extensions: &["scala", "sc"],
        grammar: scala,
        queries: &[include_str!("queries/scala.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["annotation"],
        leading: &[],
        self_receivers: &["this"],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "lua",
        family: "lua",
        extensions: &["lua"],
        grammar: lua,
        queries: &[include_str!("queries/lua.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &["variable_declaration", "assignment_statement"],
        doc_skip: &[],
        leading: &[],
        self_receivers: &["self"],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "bash",
        family: "shell",
        extensions: &["sh", "bash", "bats", "zsh", "ksh"],
        grammar: bash,
        queries: &[include_str!("queries/bash.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &[],
        leading: &[],
        self_receivers: &[],
        path_separator: "/",
        code_view: None,
    },
    LanguageSpec {
        name: "elixir",
        family: "elixir",
        extensions: &["ex", "exs"],
        grammar: elixir,
        queries: &[include_str!("queries/elixir.scm")],
        doc_style: DocStyle::Attribute {
            doc: "doc",
            module_doc: "moduledoc",
        },
        wrappers: &[],
        doc_skip: &[],
        leading: &[],
        self_receivers: &["__MODULE__"],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "haskell",
        family: "haskell",
        extensions: &["hs", "lhs"],
        grammar: haskell,
        queries: &[include_str!("queries/haskell.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &["signature", "pragma"],
        leading: &["signature"],
        self_receivers: &[],
        path_separator: ".",
        code_view: None,
    },
    LanguageSpec {
        name: "zig",
        family: "zig",
        extensions: &["zig"],
        grammar: zig,
        queries: &[include_str!("queries/zig.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &[],
        doc_skip: &[],
        leading: &[],
        self_receivers: &["self"],
        path_separator: "/",
        code_view: None,
    },
    LanguageSpec {
        name: "dart",
        family: "dart",
        extensions: &["dart"],
        grammar: dart,
        queries: &[include_str!("queries/dart.scm")],
        doc_style: DocStyle::PrecedingComments,
        wrappers: &["member_declaration"],
        doc_skip: &["annotation"],
        leading: &[],
        self_receivers: &["this"],
        path_separator: "/",
        code_view: None,
    },
    script_component("vue", &["vue"]),
    script_component("svelte", &["svelte"]),
    LanguageSpec {
        name: "markdown",
        family: "markdown",
        extensions: &["md", "markdown"],
        grammar: markdown,
        queries: &[include_str!("queries/markdown.scm")],
        doc_style: DocStyle::None,
        wrappers: &[],
        doc_skip: &[],
        self_receivers: &[],
        path_separator: "/",
        leading: &[],
        code_view: None,
    },
];

/// The row of files read as text only (`parse::text`): no query, no doc style. Its grammar
/// is never loaded — [`for_path`] does not return it and [`all`] does not compile it.
pub static TEXT: LanguageSpec = LanguageSpec {
    name: "text",
    family: "text",
    extensions: &[],
    grammar: markdown,
    queries: &[],
    doc_style: DocStyle::None,
    wrappers: &[],
    doc_skip: &[],
    leading: &[],
    self_receivers: &[],
    path_separator: "/",
    code_view: None,
};

/// What a query capture means to the extractor, decoded once from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `@def.<kind>[.<subkind>]` on a definition node.
    Def {
        kind: &'static str,
        subkind: Option<&'static str>,
    },
    /// `@scope`: a named container that is not an entity (Rust `mod`, namespaces);
    /// `@scope.test` one whose definitions are all tests (Rust's `#[cfg(test)] mod tests`).
    Scope {
        test: bool,
    },
    Name,
    Qualifier,
    Call,
    CallName,
    CallReceiver,
    Import,
    ImportModule,
    ImportName,
    Inherits,
    Implements,
    Implementor,
    /// `@container`: a block that groups a type's members away from its definition (a Rust
    /// `impl`); the chunker gives the type an outline chunk of it.
    Container,
    /// `@_…` captures exist only for predicates.
    Ignored,
}

const DEF_KINDS: &[&str] = &["class", "function", "method", "section"];
const SUBKINDS: &[&str] = &[
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "interface",
    "record",
    "module",
    "object",
    "protocol",
    "extension",
    "mixin",
    "typeclass",
    "instance",
    "test",
];

/// Why a bundled query file does not compile (a build defect a unit test catches).
#[derive(Debug, thiserror::Error)]
pub enum QueryFileError {
    #[error("{language}: {source}")]
    Syntax {
        language: &'static str,
        source: tree_sitter::QueryError,
    },
    #[error("{language}: unknown {what} `{name}`")]
    UnknownCapture {
        language: &'static str,
        what: &'static str,
        name: String,
    },
}

/// A capture name the role table does not know: what kind of name it is, and the name.
type UnknownName = (&'static str, String);

fn decode_role(capture: &str) -> Result<Role, UnknownName> {
    if capture.starts_with('_') {
        return Ok(Role::Ignored);
    }
    if let Some(rest) = capture.strip_prefix("def.") {
        let (kind, sub) = rest
            .split_once('.')
            .map_or((rest, None), |(k, s)| (k, Some(s)));
        let kind = DEF_KINDS
            .iter()
            .find(|k| **k == kind)
            .ok_or(("def kind", kind.to_string()))?;
        let subkind = match sub {
            None => None,
            Some(s) => Some(
                *SUBKINDS
                    .iter()
                    .find(|k| **k == s)
                    .ok_or(("subkind", s.to_string()))?,
            ),
        };
        return Ok(Role::Def { kind, subkind });
    }
    Ok(match capture {
        "scope" => Role::Scope { test: false },
        "scope.test" => Role::Scope { test: true },
        "name" => Role::Name,
        "qualifier" => Role::Qualifier,
        "call" => Role::Call,
        "call.name" => Role::CallName,
        "call.receiver" => Role::CallReceiver,
        "import" => Role::Import,
        "import.module" => Role::ImportModule,
        "import.name" => Role::ImportName,
        "inherits" => Role::Inherits,
        "implements" => Role::Implements,
        "implementor" => Role::Implementor,
        "container" => Role::Container,
        other => return Err(("capture", format!("@{other}"))),
    })
}

/// A language with its grammar loaded and its queries compiled.
pub struct Language {
    pub spec: &'static LanguageSpec,
    pub grammar: tree_sitter::Language,
    pub query: Query,
    /// The role of each capture index of `query`.
    pub roles: Vec<Role>,
}

impl Language {
    fn compile(spec: &'static LanguageSpec) -> Result<Language, QueryFileError> {
        let grammar = (spec.grammar)();
        let source = spec.queries.concat();
        let query = Query::new(&grammar, &source).map_err(|source| QueryFileError::Syntax {
            language: spec.name,
            source,
        })?;
        let roles = query
            .capture_names()
            .iter()
            .map(|name| {
                decode_role(name).map_err(|(what, name)| QueryFileError::UnknownCapture {
                    language: spec.name,
                    what,
                    name,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Language {
            spec,
            grammar,
            query,
            roles,
        })
    }
}

/// One slot per row of [`LANGUAGES`], filled when a file of that language is first met:
/// compiling every query up front cost each process a third of a second (2026-12-02).
static COMPILED: OnceLock<Vec<OnceLock<Language>>> = OnceLock::new();

/// The compiled language of row `index`, compiled on first use. The queries ship with the
/// binary and a unit test compiles every one, so a failure here is a build defect, reported
/// loudly.
fn compiled(index: usize) -> &'static Language {
    let slots = COMPILED.get_or_init(|| LANGUAGES.iter().map(|_| OnceLock::new()).collect());
    slots[index].get_or_init(|| {
        Language::compile(&LANGUAGES[index])
            .unwrap_or_else(|e| panic!("bundled query does not compile: {e}"))
    })
}

/// The compiled language named `name`.
fn named(name: &str) -> Option<&'static Language> {
    let index = LANGUAGES.iter().position(|spec| spec.name == name)?;
    Some(compiled(index))
}

/// The language of a path, by extension.
pub fn for_path(path: &str) -> Option<&'static Language> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let index = LANGUAGES
        .iter()
        .position(|spec| spec.extensions.contains(&ext.as_str()))?;
    Some(compiled(index))
}

/// The language of a file, by extension and, where the extension is shared, by what the text
/// says: a `.h` header written in C++ (classes, templates, namespaces) is C++.
pub fn for_source(path: &str, text: &str) -> Option<&'static Language> {
    let language = for_path(path)?;
    if language.spec.name == "c"
        && path.to_ascii_lowercase().ends_with(".h")
        && looks_like_cpp(text)
    {
        return named("cpp");
    }
    Some(language)
}

/// C++ constructs that C does not have, at the start of a line.
fn looks_like_cpp(text: &str) -> bool {
    const MARKERS: &[&str] = &[
        "template <",
        "template<",
        "namespace ",
        "class ",
        "public:",
        "private:",
        "protected:",
        "using namespace",
        "#include <string>",
        "#include <vector>",
        "#include <memory>",
    ];
    text.lines()
        .map(str::trim_start)
        .any(|line| MARKERS.iter().any(|m| line.starts_with(m)))
}

/// The language spec of a path, by extension (cheap: no query compilation).
fn spec_for_path(path: &str) -> Option<&'static LanguageSpec> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|spec| spec.extensions.contains(&ext.as_str()))
}

/// Whether knowcode indexes a path: a language it parses, or a format it reads as text
/// (cheap: by name only, no query compilation).
pub fn is_supported(path: &str) -> bool {
    spec_for_path(path).is_some() || super::text::format_of(path).is_some()
}

/// The language family of a code path (`c` for C and C++, `ecmascript` for JavaScript and
/// TypeScript, …); None for Markdown and unsupported files.
pub fn family_of(path: &str) -> Option<&'static str> {
    spec_for_path(path)
        .map(|spec| spec.family)
        .filter(|family| *family != "markdown")
}

/// Whether a path holds code knowcode parses (a supported language other than Markdown).
pub fn is_code(path: &str) -> bool {
    spec_for_path(path).is_some_and(|spec| spec.family != "markdown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_query_compiles_with_known_captures() {
        for spec in LANGUAGES {
            Language::compile(spec).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn extensions_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for spec in LANGUAGES {
            for ext in spec.extensions {
                assert!(seen.insert(*ext), "extension {ext} claimed twice");
            }
        }
    }

    #[test]
    fn a_cpp_header_is_cpp_and_a_c_header_is_c() {
        let cpp = "#pragma once\ntemplate <typename T> class box { T value; };\n";
        assert_eq!(for_source("include/box.h", cpp).unwrap().spec.name, "cpp");
        let c = "#ifndef LIST_H\nstruct list { int n; };\nint list_len(struct list *l);\n";
        assert_eq!(for_source("include/list.h", c).unwrap().spec.name, "c");
        assert_eq!(for_source("src/box.c", cpp).unwrap().spec.name, "c");
    }

    #[test]
    fn languages_are_found_by_extension() {
        assert_eq!(for_path("a/b.PY").unwrap().spec.name, "python");
        assert_eq!(for_path("x.tsx").unwrap().spec.name, "tsx");
        assert!(for_path("README").is_none());
        assert!(!is_supported("image.png"));
    }
}
