//! Reading what a definition says about itself: its signature line, its doc comment or
//! docstring, the statement lines a long body may be split at, and where a syntax error is.
//! Pure functions over one syntax node; iterative, so deep trees cannot overflow the stack.

use std::sync::LazyLock;

use tree_sitter::{Node, Tree};

use super::languages::{DocStyle, LanguageSpec};
use super::{IssueKind, ParseIssue};
use crate::text::{collapse_whitespace, truncate_chars};

const MAX_SIGNATURE_CHARS: usize = 300;
const MAX_DOC_CHARS: usize = 2_000;
/// Bodies spanning at least this many lines record their statement lines for splitting.
const SPLIT_MIN_LINES: usize = 30;

fn text_of<'a>(node: Node, src: &'a [u8]) -> std::borrow::Cow<'a, str> {
    String::from_utf8_lossy(&src[node.start_byte()..node.end_byte()])
}

/// The definition's header: everything before its body, on one line.
pub fn signature(node: Node, src: &[u8]) -> String {
    let header = match node.child_by_field_name("body") {
        Some(body) if body.start_byte() > node.start_byte() => {
            String::from_utf8_lossy(&src[node.start_byte()..body.start_byte()]).into_owned()
        }
        _ => text_of(node, src).lines().next().unwrap_or("").to_string(),
    };
    let one_line = collapse_whitespace(&header);
    truncate_chars(
        one_line.trim_end_matches('{').trim_end(),
        MAX_SIGNATURE_CHARS,
    )
}

/// The doc of a definition, by the language's convention.
pub fn doc(node: Node, src: &[u8], spec: &LanguageSpec) -> Option<String> {
    let raw = match spec.doc_style {
        DocStyle::Docstring => docstring_of_block(node.child_by_field_name("body")?, src),
        DocStyle::PrecedingComments => preceding_comments(node, src, spec),
        DocStyle::Attribute { doc, module_doc } => {
            preceding_attribute(node, src, doc).or_else(|| attribute_in_body(node, src, module_doc))
        }
        DocStyle::None => None,
    }?;
    let cleaned = truncate_chars(&raw, MAX_DOC_CHARS);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The doc of a whole file: a leading docstring, or the comments at the very top.
pub fn module_doc(root: Node, src: &[u8], spec: &LanguageSpec) -> Option<String> {
    let raw = match spec.doc_style {
        DocStyle::Docstring => docstring_of_block(root, src),
        DocStyle::PrecedingComments => leading_file_comments(root, src),
        DocStyle::Attribute { module_doc, .. } => {
            let mut cursor = root.walk();
            let first = root.named_children(&mut cursor).next()?;
            attribute_in_body(first, src, module_doc)
        }
        DocStyle::None => None,
    }?;
    let cleaned = truncate_chars(&raw, MAX_DOC_CHARS);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The comment block at the top of a file, unless it documents the definition right below
/// it: it is the file's doc when it is an inner doc (`//!`), when a blank line follows it,
/// or when a package/import/namespace line follows it.
fn leading_file_comments(root: Node, src: &[u8]) -> Option<String> {
    let mut cursor = root.walk();
    let children: Vec<Node> = root.children(&mut cursor).collect();
    let count = children.iter().take_while(|n| is_comment(n.kind())).count();
    if count == 0 {
        return None;
    }
    let comments: Vec<String> = children[..count]
        .iter()
        .map(|n| text_of(*n, src).into_owned())
        .collect();
    let inner_doc = comments
        .iter()
        .any(|c| c.starts_with("//!") || c.starts_with("/*!"));
    let belongs_to_file = match children.get(count) {
        None => true,
        Some(next) => {
            let last = children[count - 1].end_position();
            let last_row = if last.column == 0 && last.row > 0 {
                last.row - 1
            } else {
                last.row
            };
            let kind = next.kind();
            next.start_position().row > last_row + 1
                || FILE_PREAMBLE_KINDS.iter().any(|k| kind.contains(k))
        }
    };
    (inner_doc || belongs_to_file).then(|| clean_comment(&comments.join("\n")))
}

/// Node kinds (by part of their name) that open a file after its doc comment: package and
/// module declarations, imports, a Haskell module header, a Dart `library` line.
const FILE_PREAMBLE_KINDS: &[&str] = &[
    "package",
    "import",
    "use",
    "namespace",
    "preproc",
    "module",
    "header",
    "library",
];

/// Whether a node kind is a comment (Haskell's `-- |` doc comments are `haddock` nodes).
fn is_comment(kind: &str) -> bool {
    kind.contains("comment") || kind == "haddock"
}

/// `@doc "…"` written above a definition, past other attributes (`@spec`, `@impl`) with no
/// blank line between. `@doc false` documents nothing.
fn preceding_attribute(node: Node, src: &[u8], name: &str) -> Option<String> {
    let mut current = node.prev_named_sibling();
    while let Some(sibling) = current {
        let attribute = attribute_name(sibling, src)?;
        if attribute == name {
            return attribute_text(sibling, src);
        }
        current = sibling.prev_named_sibling();
    }
    None
}

/// `@moduledoc "…"` among the statements of a module's `do` block.
fn attribute_in_body(node: Node, src: &[u8], name: &str) -> Option<String> {
    let mut cursor = node.walk();
    let body = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "do_block")?;
    let mut cursor = body.walk();
    let found = body
        .named_children(&mut cursor)
        .find(|c| attribute_name(*c, src).as_deref() == Some(name))?;
    attribute_text(found, src)
}

/// The name of a module attribute node (`@doc …` → `doc`), None for anything else.
fn attribute_name(node: Node, src: &[u8]) -> Option<String> {
    if node.kind() != "unary_operator" || !text_of(node, src).starts_with('@') {
        return None;
    }
    let operand = node.child_by_field_name("operand")?;
    let target = match operand.kind() {
        "call" => operand.child_by_field_name("target")?,
        _ => operand,
    };
    Some(text_of(target, src).into_owned())
}

/// The string an attribute holds, unquoted (`~S"""…"""` sigils too); None for `@doc false`.
fn attribute_text(node: Node, src: &[u8]) -> Option<String> {
    let operand = node.child_by_field_name("operand")?;
    let mut cursor = operand.walk();
    let arguments = operand
        .named_children(&mut cursor)
        .find(|c| c.kind() == "arguments")?;
    let value = arguments.named_child(0)?;
    if !matches!(value.kind(), "string" | "sigil") {
        return None;
    }
    let raw = text_of(value, src);
    let unsigiled = raw.trim_start_matches('~').trim_start_matches(['S', 's']);
    Some(clean_docstring(unsigiled))
}

fn docstring_of_block(block: Node, src: &[u8]) -> Option<String> {
    let first = block.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0)?;
    (string.kind() == "string").then(|| clean_docstring(&text_of(string, src)))
}

/// Comments directly above the definition (or above the wrapper it sits in), no blank line
/// between, attributes allowed in between.
fn preceding_comments(node: Node, src: &[u8], spec: &LanguageSpec) -> Option<String> {
    let mut anchor = node;
    while let Some(parent) = anchor.parent() {
        if spec.wrappers.contains(&parent.kind()) {
            anchor = parent;
        } else {
            break;
        }
    }
    let mut parts = Vec::new();
    let mut expected_row = anchor.start_position().row;
    let mut visited = anchor;
    loop {
        let Some(sibling) = visited.prev_sibling() else {
            // A definition that opens its container (Haskell's first declaration) is
            // documented above the container.
            match visited.parent() {
                Some(parent)
                    if parent.parent().is_some()
                        && parent.start_position().row == visited.start_position().row =>
                {
                    visited = parent;
                    continue;
                }
                _ => break,
            }
        };
        // A comment the grammar put at the end of the node above (Haskell's import list
        // swallows the doc of the first declaration) is read as the node above.
        let sibling = closing_comment(sibling).unwrap_or(sibling);
        if spec.doc_skip.contains(&sibling.kind()) {
            expected_row = sibling.start_position().row;
        } else if is_comment(sibling.kind()) {
            let end = sibling.end_position();
            let end_row = if end.column == 0 && end.row > 0 {
                end.row - 1
            } else {
                end.row
            };
            if end_row + 1 < expected_row
                && !(parts.is_empty() && is_spaced_doc_block(sibling, src, end_row, expected_row))
            {
                break;
            }
            parts.push(text_of(sibling, src).into_owned());
            expected_row = sibling.start_position().row;
        } else {
            break;
        }
        visited = sibling;
    }
    if parts.is_empty() {
        return None;
    }
    parts.reverse();
    Some(clean_comment(&parts.join("\n")))
}

/// A `/** … */` block one blank line above a definition still documents it (Express writes
/// every JSDoc that way), unless it opens the file: a file's leading block followed by a blank
/// line is the file's doc.
fn is_spaced_doc_block(comment: Node, src: &[u8], end_row: usize, def_row: usize) -> bool {
    end_row + 2 == def_row
        && comment.prev_sibling().is_some()
        && text_of(comment, src).starts_with("/**")
}

/// The comment a non-comment node ends with, if any.
fn closing_comment(node: Node) -> Option<Node> {
    if is_comment(node.kind()) {
        return None;
    }
    let last = node.child(node.child_count().checked_sub(1)?)?;
    is_comment(last.kind()).then_some(last)
}

static XML_TAG: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"</?[A-Za-z][^>]*>").unwrap());

/// Strips comment markers (`///`, `//`, `/** */`, `#`, leading `*`, `--`, Haddock's `-- |`
/// and `-- ^`, LuaDoc's `---`) and XML doc tags; a `#!` interpreter line is no doc. A line
/// holding only its marker separates paragraphs, as a blank line does in a docstring, so the
/// first paragraph can be told from the rest; a line emptied by its XML tags alone is dropped.
pub fn clean_comment(raw: &str) -> String {
    const MARKERS: &[&str] = &[
        "/**", "/*!", "/*", "///", "//!", "//", "#", "*", "---", "-- |", "-- ^", "--", "{-|", "{-",
    ];
    let mut lines: Vec<String> = Vec::new();
    for line in raw.lines() {
        let mut line = line.trim();
        if line.starts_with("#!") {
            continue;
        }
        line = line.strip_suffix("-}").unwrap_or(line).trim_end();
        line = line.strip_suffix("*/").unwrap_or(line).trim_end();
        if let Some(marker) = MARKERS.iter().find(|m| line.starts_with(**m)) {
            line = line[marker.len()..].trim();
        }
        if line.is_empty() {
            // A paragraph break, once, and never before the first line.
            if lines.last().is_some_and(|last| !last.is_empty()) {
                lines.push(String::new());
            }
            continue;
        }
        let line = XML_TAG.replace_all(line, "");
        let line = line.trim();
        if !line.is_empty() {
            lines.push(line.to_string());
        }
    }
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.join("\n")
}

/// The letters that may prefix a Python string literal (`r"""…"""`, `b'…'`, `f"…"`).
pub const STRING_PREFIXES: [char; 8] = ['r', 'u', 'b', 'f', 'R', 'U', 'B', 'F'];

/// Strips string prefixes and quotes from a docstring literal and dedents it.
pub fn clean_docstring(raw: &str) -> String {
    let body = raw.trim_start_matches(STRING_PREFIXES);
    let body = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|q| body.strip_prefix(q).and_then(|b| b.strip_suffix(q)))
        .unwrap_or(body);
    body.lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// 1-based lines where top-level statements of a long body start.
pub fn split_lines(node: Node) -> Vec<u32> {
    let lines = node
        .end_position()
        .row
        .saturating_sub(node.start_position().row);
    if lines < SPLIT_MIN_LINES {
        return Vec::new();
    }
    let mut body = node.child_by_field_name("body").unwrap_or(node);
    if body.named_child_count() == 1
        && let Some(only) = body.named_child(0)
        && only.named_child_count() > 1
    {
        body = only;
    }
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .map(|child| child.start_position().row as u32 + 1)
        .collect()
}

/// The first ERROR or MISSING node, found iteratively (only into subtrees that have errors).
pub fn first_syntax_error(tree: &Tree) -> ParseIssue {
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            let line = node.start_position().row as u32 + 1;
            let what = if node.is_missing() {
                format!("missing `{}`", node.kind())
            } else {
                "unexpected syntax".into()
            };
            return ParseIssue::new(
                IssueKind::SyntaxError,
                line,
                format!("{what} at line {line}"),
            );
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return ParseIssue::new(IssueKind::SyntaxError, 1, "syntax error");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_markers_and_xml_tags_are_stripped() {
        assert_eq!(
            clean_comment("/// Adds one.\n/// Returns it."),
            "Adds one.\nReturns it."
        );
        assert_eq!(clean_comment("/**\n * Add two.\n */"), "Add two.");
        assert_eq!(
            clean_comment("/// <summary>Current balance.</summary>"),
            "Current balance."
        );
        assert_eq!(clean_comment("# Greets people."), "Greets people.");
        assert_eq!(
            clean_comment("#!/usr/bin/env bash\n# A cart script."),
            "A cart script."
        );
        assert_eq!(clean_comment("--- Adds a line."), "Adds a line.");
        assert_eq!(
            clean_comment("-- | The price of a thing."),
            "The price of a thing."
        );
        assert_eq!(clean_comment("{-| Block doc. -}"), "Block doc.");
    }

    #[test]
    fn a_comment_lines_bare_marker_separates_paragraphs() {
        assert_eq!(
            clean_comment("/// Adds one.\n///\n///\n/// Panics on overflow.\n///"),
            "Adds one.\n\nPanics on overflow."
        );
        assert_eq!(
            clean_comment("/**\n * Add two.\n *\n * @param a the first\n */"),
            "Add two.\n\n@param a the first"
        );
        assert_eq!(
            clean_comment("// Parse reads a file.\n//\n// It never panics."),
            "Parse reads a file.\n\nIt never panics."
        );
        assert_eq!(
            clean_comment("/// <summary>\n/// Current balance.\n/// </summary>"),
            "Current balance."
        );
    }

    #[test]
    fn docstring_quotes_are_stripped() {
        assert_eq!(
            clean_docstring("\"\"\"Return x.\n\n    More.\n    \"\"\""),
            "Return x.\n\nMore."
        );
        assert_eq!(clean_docstring("r'raw doc'"), "raw doc");
    }
}
