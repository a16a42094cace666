//! Query matches → entities, call sites, imports and base types for one file. Nesting is
//! decided by byte ranges with an explicit stack (never recursion), qualified names follow
//! the nesting (plus an explicit qualifier such as Rust's `impl Type`), and every reference
//! is attached to the innermost entity that contains it.

use std::cmp::Reverse;
use std::collections::HashMap;

use tree_sitter::{Node, QueryCursor, StreamingIterator, Tree};

use super::docs;
use super::languages::{Language, Role};
use super::{
    CallSite, Entity, EntityKind, HeritageKind, HeritageRef, ImportStmt, IssueKind, ParseIssue,
    ParsedFile, Span, TEST_SUBKIND,
};
use crate::text::content_hash;

/// Definitions nested deeper than this are dropped with a `too_deep` issue.
const MAX_DEPTH: usize = 128;

struct DefHit {
    span: Span,
    kind: &'static str,
    subkind: Option<&'static str>,
    name: String,
    qualifier: Option<String>,
    is_scope: bool,
    signature: String,
    doc: Option<String>,
    split_lines: Vec<u32>,
}

struct CallHit {
    pos: usize,
    line: u32,
    name: String,
    receiver: Option<String>,
}

struct ImportHit {
    span: Span,
    text: String,
    /// The module path, with the byte range it was read from: parts captured by separate
    /// matches (Scala's `a`, `b`, `C` of `import a.b.C`) are joined in source order.
    module: Option<(std::ops::Range<usize>, String)>,
    names: Vec<String>,
}

struct HeritageHit {
    pos: usize,
    line: u32,
    name: String,
    kind: HeritageKind,
    implementor: Option<String>,
}

#[derive(Default)]
struct Hits {
    defs: Vec<DefHit>,
    /// Where definitions' names start: a call there is a definition's head (Elixir's
    /// `def total(cart)`), not a call.
    def_name_starts: std::collections::HashSet<usize>,
    calls: Vec<CallHit>,
    imports: Vec<ImportHit>,
    loose_import_names: Vec<(usize, String)>,
    heritage: Vec<HeritageHit>,
    containers: Vec<Span>,
}

fn span_of(node: Node) -> Span {
    let (s, e) = (node.start_position(), node.end_position());
    Span {
        start_line: s.row as u32 + 1,
        start_col: s.column as u32,
        end_line: e.row as u32 + 1,
        end_col: e.column as u32,
        start_byte: node.start_byte(),
        end_byte: node.end_byte(),
    }
}

fn node_text(node: Node, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.start_byte()..node.end_byte()]).into_owned()
}

/// Fills `parsed` from the syntax tree.
pub(super) fn extract(parsed: &mut ParsedFile, lang: &Language, tree: &Tree) {
    let src = parsed.text.as_bytes();
    let root = tree.root_node();
    let hits = collect_hits(lang, root, src);
    let module_doc = docs::module_doc(root, src, lang.spec);
    push_module(parsed, module_doc);
    let qualifiers = build_entities(parsed, hits.defs);
    attach_qualified_parents(parsed, &qualifiers);
    attach_calls(parsed, hits.calls);
    attach_imports(parsed, hits.imports, hits.loose_import_names);
    attach_heritage(parsed, hits.heritage);
    parsed.containers = hits.containers;
}

fn collect_hits(lang: &Language, root: Node, src: &[u8]) -> Hits {
    let mut hits = Hits::default();
    let mut def_index: HashMap<usize, usize> = HashMap::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&lang.query, root, src);
    while let Some(m) = matches.next() {
        let mut def: Option<(Node, Role)> = None;
        let (mut name, mut qualifier, mut call, mut call_name, mut receiver) =
            (None, None, None, None, None);
        let (mut import, mut module, mut implementor) = (None, None, None);
        let mut names = Vec::new();
        let mut bases = Vec::new();
        for capture in m.captures {
            let node = capture.node;
            match lang.roles[capture.index as usize] {
                role @ (Role::Def { .. } | Role::Scope { .. }) => def = Some((node, role)),
                Role::Name => name = Some(node),
                Role::Qualifier => qualifier = Some(node),
                Role::Call => call = Some(node),
                Role::CallName => call_name = Some(node),
                Role::CallReceiver => receiver = Some(node),
                Role::Import => import = Some(node),
                Role::ImportModule => module = Some(node),
                Role::ImportName => names.push(node),
                Role::Inherits => bases.push((node, HeritageKind::Inherits)),
                Role::Implements => bases.push((node, HeritageKind::Implements)),
                Role::Implementor => implementor = Some(node),
                Role::Container => hits.containers.push(span_of(node)),
                Role::Ignored => {}
            }
        }
        if let (Some((node, role)), Some(name)) = (def, name) {
            record_def(
                &mut hits,
                &mut def_index,
                lang,
                node,
                role,
                name,
                qualifier,
                src,
            );
        }
        if let (Some(call), Some(name)) = (call, call_name) {
            hits.calls.push(CallHit {
                pos: call.start_byte(),
                line: call.start_position().row as u32 + 1,
                name: last_segment(&node_text(name, src)),
                receiver: receiver.map(|r| node_text(r, src)),
            });
        }
        let name_texts = names.iter().map(|n| last_segment(&node_text(*n, src)));
        match import {
            Some(node) => hits.imports.push(ImportHit {
                span: span_of(node),
                text: node_text(node, src),
                module: module.map(|m| (m.byte_range(), strip_quotes(&node_text(m, src)))),
                names: name_texts.collect(),
            }),
            None => hits
                .loose_import_names
                .extend(names.iter().map(|n| n.start_byte()).zip(name_texts)),
        }
        let implementor = implementor.map(|n| normalize_type(&node_text(n, src)));
        for (node, kind) in bases {
            hits.heritage.push(HeritageHit {
                pos: node.start_byte(),
                line: node.start_position().row as u32 + 1,
                name: last_segment(&normalize_type(&node_text(node, src))),
                kind,
                implementor: implementor.clone(),
            });
        }
    }
    if lang.spec.name == "markdown" {
        setext_subsections(root, src, &mut hits.defs);
    }
    let heads = std::mem::take(&mut hits.def_name_starts);
    hits.calls.retain(|call| !heads.contains(&call.pos));
    hits
}

/// The Markdown grammar opens a `section` only for a section's first heading; later setext
/// headings (`Title` over `---`) sit flat inside it. Each becomes a section running to the next
/// heading of the same or a higher level (or the end of the enclosing section). Sections are
/// visited inner first with an explicit stack (no recursion: nesting depth is the input's).
fn setext_subsections(root: Node, src: &[u8], defs: &mut Vec<DefHit>) {
    let mut stack = vec![(root, false)];
    while let Some((node, children_done)) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        if children_done {
            section_setext_headings(node, &children, src, defs);
            continue;
        }
        stack.push((node, true));
        let sections = children.iter().filter(|c| c.kind() == "section");
        // Reversed, so the first child section is finished first, as written.
        stack.extend(sections.rev().map(|child| (*child, false)));
    }
}

/// The setext headings directly inside one `section` node, each as a section definition.
fn section_setext_headings(node: Node, children: &[Node], src: &[u8], defs: &mut Vec<DefHit>) {
    if node.kind() != "section" {
        return;
    }
    for (i, heading) in children.iter().enumerate().skip(1) {
        if heading.kind() != "setext_heading" {
            continue;
        }
        let Some(level) = heading_level(*heading) else {
            continue;
        };
        let next = children[i + 1..]
            .iter()
            .position(|c| heading_level(*c).is_some_and(|l| l <= level))
            .map_or(children.len(), |offset| i + 1 + offset);
        let last = children[next - 1];
        let Some(content) = heading.child_by_field_name("heading_content") else {
            continue;
        };
        let name = crate::text::collapse_whitespace(&node_text(content, src));
        if name.is_empty() {
            continue;
        }
        let (start, end) = (span_of(*heading), span_of(last));
        defs.push(DefHit {
            span: Span {
                end_line: end.end_line,
                end_col: end.end_col,
                end_byte: end.end_byte,
                ..start
            },
            kind: "section",
            subkind: None,
            signature: name.clone(),
            name,
            qualifier: None,
            is_scope: false,
            doc: None,
            split_lines: Vec::new(),
        });
    }
}

/// The level of a heading, or of the heading that opens a `section` (None for other nodes).
fn heading_level(node: Node) -> Option<u8> {
    let heading = if node.kind() == "section" {
        node.child(0)?
    } else {
        node
    };
    let mut cursor = heading.walk();
    let marker = heading
        .children(&mut cursor)
        .find(|c| c.kind().starts_with("atx_h") || c.kind().starts_with("setext_h"))?;
    match marker.kind() {
        "setext_h1_underline" => Some(1),
        "setext_h2_underline" => Some(2),
        kind => kind
            .strip_prefix("atx_h")?
            .strip_suffix("_marker")?
            .parse()
            .ok(),
    }
}

#[allow(clippy::too_many_arguments)]
fn record_def(
    hits: &mut Hits,
    def_index: &mut HashMap<usize, usize>,
    lang: &Language,
    node: Node,
    role: Role,
    name: Node,
    qualifier: Option<Node>,
    src: &[u8],
) {
    let (kind, subkind, is_scope) = match role {
        Role::Def { kind, subkind } => (kind, subkind, false),
        Role::Scope { test: true } => ("scope", Some(TEST_SUBKIND), true),
        _ => ("scope", None, true),
    };
    let qualifier = qualifier.map(|q| normalize_type(&node_text(q, src)));
    if let Some(&existing) = def_index.get(&node.id()) {
        // The same node matched by a general and a specific pattern: keep the most specific.
        let hit = &mut hits.defs[existing];
        if kind == "method" {
            hit.kind = "method";
        }
        hit.qualifier = hit.qualifier.take().or(qualifier);
        hit.subkind = hit.subkind.or(subkind);
        return;
    }
    hits.def_name_starts.insert(name.start_byte());
    let name = crate::text::collapse_whitespace(&node_text(name, src));
    if name.is_empty() {
        return;
    }
    def_index.insert(node.id(), hits.defs.len());
    let leading = leading_siblings(node, lang.spec.leading);
    let mut span = span_of(with_wrappers(node));
    if let Some(first) = leading {
        let start = span_of(first);
        (span.start_line, span.start_col, span.start_byte) =
            (start.start_line, start.start_col, start.start_byte);
    }
    hits.defs.push(DefHit {
        span,
        kind,
        subkind,
        name,
        qualifier,
        is_scope,
        signature: if is_scope {
            String::new()
        } else {
            docs::signature(leading.unwrap_or(node), src)
        },
        doc: if is_scope {
            None
        } else {
            docs::doc(node, src, lang.spec)
        },
        split_lines: if is_scope {
            Vec::new()
        } else {
            docs::split_lines(node)
        },
    });
}

/// Wrappers that belong to the definition they hold: a Python decorator list (`@contextmanager`
/// says what a function is for) and a JS/TS `export`. Type and field of the held definition.
const WRAPPERS: &[(&str, &str)] = &[
    ("decorated_definition", "definition"),
    ("export_statement", "declaration"),
];

/// The definition node extended to the wrappers that hold it.
fn with_wrappers(node: Node) -> Node {
    let mut outer = node;
    while let Some(parent) = outer.parent() {
        let holds = WRAPPERS.iter().any(|(kind, field)| {
            parent.kind() == *kind && parent.child_by_field_name(field) == Some(outer)
        });
        if !holds {
            break;
        }
        outer = parent;
    }
    outer
}

/// The first of the siblings of the listed kinds written right above `node` (a Haskell type
/// signature above its equations), if any.
fn leading_siblings<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut first = None;
    let mut current = node.prev_named_sibling();
    while let Some(sibling) = current.filter(|s| kinds.contains(&s.kind())) {
        first = Some(sibling);
        current = sibling.prev_named_sibling();
    }
    first
}

/// The type a receiver or an `impl` names, without generics, pointer and reference sigils,
/// lifetimes or `mut`/`dyn`/`const` (`&'a mut Vec<T>` is `Vec`), path separators as dots.
fn normalize_type(text: &str) -> String {
    let base = text.split('<').next().unwrap_or(text);
    let words: Vec<&str> = base
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == '*' || c == '&'))
        .filter(|w| !w.is_empty() && !w.starts_with('\'') && !matches!(*w, "mut" | "dyn" | "const"))
        .collect();
    words.join(" ").replace("::", ".").replace('\\', ".")
}

fn last_segment(text: &str) -> String {
    let t = text.trim();
    t.rsplit(['.', ':', '\\', '/'])
        .next()
        .unwrap_or(t)
        .trim()
        .to_string()
}

fn strip_quotes(text: &str) -> String {
    text.trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '<' | '>' | '`'))
        .to_string()
}

fn module_name(path: &str) -> String {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}

fn push_module(parsed: &mut ParsedFile, doc: Option<String>) {
    let kind = if parsed.language.name == "markdown" {
        EntityKind::Document
    } else {
        EntityKind::Module
    };
    let file_name = parsed.path.rsplit('/').next().unwrap_or(&parsed.path);
    let name = file_name
        .rsplit_once('.')
        .map_or(file_name, |(s, _)| s)
        .to_string();
    let module = Entity {
        doc,
        ..parsed.whole_file_entity(
            kind,
            name,
            module_name(&parsed.path),
            parsed.language.name.to_string(),
        )
    };
    parsed.entities.push(module);
}

struct Frame {
    end: usize,
    entity: Option<usize>,
    qualified: String,
    /// Inside a test or a test scope.
    test: bool,
}

/// Creates the entities in source order; returns (entity index, qualifier) for qualified defs.
fn build_entities(parsed: &mut ParsedFile, mut defs: Vec<DefHit>) -> Vec<(usize, String)> {
    defs.sort_by_key(|d| (d.span.start_byte, Reverse(d.span.end_byte)));
    let mut stack: Vec<Frame> = Vec::new();
    let mut seen_ids: HashMap<String, u32> = HashMap::new();
    let mut qualified_defs = Vec::new();
    let mut too_deep = false;
    for def in defs {
        while stack
            .last()
            .is_some_and(|top| top.end <= def.span.start_byte || top.end < def.span.end_byte)
        {
            stack.pop();
        }
        if stack.len() >= MAX_DEPTH {
            too_deep = true;
            continue;
        }
        let prefix = stack.last().map(|f| f.qualified.as_str()).unwrap_or("");
        let own = match &def.qualifier {
            Some(q) => format!("{q}.{}", def.name),
            None => def.name.clone(),
        };
        let qualified = if prefix.is_empty() {
            own
        } else {
            format!("{prefix}.{own}")
        };
        let test = def.subkind == Some(TEST_SUBKIND) || stack.last().is_some_and(|f| f.test);
        if def.is_scope {
            stack.push(Frame {
                end: def.span.end_byte,
                entity: None,
                qualified,
                test,
            });
            continue;
        }
        let enclosing = stack.iter().rev().find_map(|f| f.entity);
        let inside_class = enclosing.is_some_and(|i| parsed.entities[i].kind == EntityKind::Class);
        let kind = match def.kind {
            "class" => EntityKind::Class,
            "section" => EntityKind::Section,
            _ if def.qualifier.is_some() || inside_class => EntityKind::Method,
            _ => EntityKind::Function,
        };
        let base_id = format!("{}::{qualified}", parsed.path);
        let count = seen_ids.entry(base_id.clone()).or_insert(0);
        *count += 1;
        let id = if *count == 1 {
            base_id
        } else {
            format!("{base_id}#{count}")
        };
        let parent = parsed.entities[enclosing.unwrap_or(0)].id.clone();
        let index = parsed.entities.len();
        if let Some(q) = &def.qualifier {
            qualified_defs.push((index, q.clone()));
        }
        let body = &parsed.text[def.span.start_byte..def.span.end_byte];
        parsed.entities.push(Entity {
            id,
            parent: Some(parent),
            kind,
            subkind: if test {
                Some(TEST_SUBKIND)
            } else {
                def.subkind
            }
            .map(str::to_string),
            name: def.name,
            qualified_name: qualified.clone(),
            language: parsed.language.name.to_string(),
            path: parsed.path.clone(),
            span: def.span,
            signature: def.signature,
            doc: def.doc,
            content_hash: content_hash(&[body]),
            split_lines: def.split_lines,
        });
        stack.push(Frame {
            end: def.span.end_byte,
            entity: Some(index),
            qualified,
            test,
        });
    }
    if too_deep {
        parsed.issues.push(ParseIssue::new(
            IssueKind::TooDeep,
            0,
            format!("definitions nested deeper than {MAX_DEPTH} levels were skipped"),
        ));
    }
    qualified_defs
}

/// `impl Circle { fn new() }` belongs to `Circle` when `Circle` is defined in the same file.
fn attach_qualified_parents(parsed: &mut ParsedFile, qualified: &[(usize, String)]) {
    for (index, qualifier) in qualified {
        let owner = last_segment(qualifier);
        let mut classes = parsed
            .entities
            .iter()
            .filter(|e| e.kind == EntityKind::Class && e.name == owner);
        if let (Some(class), None) = (classes.next(), classes.next()) {
            let id = class.id.clone();
            parsed.entities[*index].parent = Some(id);
        }
    }
}

/// For each point, the innermost entity (excluding the module) whose span contains it.
fn innermost_entities(entities: &[Entity], points: &[usize]) -> Vec<Option<usize>> {
    let spans: Vec<(usize, usize, usize)> = entities
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, e)| (e.span.start_byte, e.span.end_byte, i))
        .collect();
    innermost(&spans, points)
}

/// Sweep over properly nested spans (sorted by start, then longest first): for each point,
/// the index of the innermost span containing it. O((n + m) log m).
fn innermost(spans: &[(usize, usize, usize)], points: &[usize]) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| points[i]);
    let mut result = vec![None; points.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut next = 0;
    for i in order {
        let p = points[i];
        while next < spans.len() && spans[next].0 <= p {
            let (start, end, idx) = spans[next];
            while stack.last().is_some_and(|&(top_end, _)| top_end <= start) {
                stack.pop();
            }
            stack.push((end, idx));
            next += 1;
        }
        while stack.last().is_some_and(|&(top_end, _)| top_end <= p) {
            stack.pop();
        }
        result[i] = stack.last().map(|&(_, idx)| idx);
    }
    result
}

fn attach_calls(parsed: &mut ParsedFile, calls: Vec<CallHit>) {
    let points: Vec<usize> = calls.iter().map(|c| c.pos).collect();
    let owners = innermost_entities(&parsed.entities, &points);
    parsed.calls = calls
        .into_iter()
        .zip(owners)
        .filter(|(call, _)| !call.name.is_empty())
        .map(|(call, owner)| CallSite {
            caller: owner.unwrap_or(0),
            name: call.name,
            receiver: call.receiver,
            line: call.line,
        })
        .collect();
}

fn attach_imports(
    parsed: &mut ParsedFile,
    mut imports: Vec<ImportHit>,
    loose: Vec<(usize, String)>,
) {
    let separator = parsed.language.path_separator;
    imports.sort_by_key(|i| (i.span.start_byte, Reverse(i.span.end_byte)));
    imports.dedup_by(|b, a| {
        let same = a.span.start_byte == b.span.start_byte && a.span.end_byte == b.span.end_byte;
        if same {
            a.names.append(&mut b.names);
            a.module = join_module_parts(a.module.take(), b.module.take(), separator);
        }
        same
    });
    let spans: Vec<(usize, usize, usize)> = imports
        .iter()
        .enumerate()
        .map(|(i, imp)| (imp.span.start_byte, imp.span.end_byte, i))
        .collect();
    let points: Vec<usize> = loose.iter().map(|(pos, _)| *pos).collect();
    for ((_, name), owner) in loose.into_iter().zip(innermost(&spans, &points)) {
        if let Some(i) = owner {
            imports[i].names.push(name);
        }
    }
    parsed.imports = imports
        .into_iter()
        .filter_map(|imp| {
            let (_, raw_module) = imp.module?;
            let (module, mut names) = split_module_and_names(&raw_module, separator);
            names.extend(imp.names);
            names.retain(|n| !n.is_empty() && n != "*" && n != "self");
            names.sort();
            names.dedup();
            Some(ImportStmt {
                line: imp.span.start_line,
                end_line: imp.span.end_line,
                text: imp.text,
                module,
                names,
            })
        })
        .collect();
}

/// Two captures of one import's module: the same node once, or parts of its path in source
/// order, joined by the language's separator.
fn join_module_parts(
    first: Option<(std::ops::Range<usize>, String)>,
    second: Option<(std::ops::Range<usize>, String)>,
    separator: &str,
) -> Option<(std::ops::Range<usize>, String)> {
    match (first, second) {
        (Some((a, text_a)), Some((b, text_b))) if b.start >= a.end => {
            Some((a.start..b.end, format!("{text_a}{separator}{text_b}")))
        }
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

/// `crate::shapes::{Area, Circle}` → (`crate::shapes`, [Area, Circle]);
/// `a.b.C` → (`a.b.C`, [C]).
fn split_module_and_names(raw: &str, separator: &str) -> (String, Vec<String>) {
    if let Some((module, rest)) = raw.split_once('{') {
        let module = module
            .trim_end_matches(separator)
            .trim_end_matches("::")
            .trim()
            .to_string();
        let names = rest.trim_end_matches('}').split(',').map(|part| {
            let part = part.split(" as ").next().unwrap_or(part);
            last_segment(part)
        });
        return (module, names.collect());
    }
    let path = raw.split(" as ").next().unwrap_or(raw).trim();
    let last = path.rsplit(separator).next().unwrap_or(path);
    let stem = last
        .rsplit_once('.')
        .filter(|_| separator != ".")
        .map_or(last, |(s, _)| s);
    (path.to_string(), vec![stem.to_string()])
}

fn attach_heritage(parsed: &mut ParsedFile, heritage: Vec<HeritageHit>) {
    let points: Vec<usize> = heritage.iter().map(|h| h.pos).collect();
    let owners = innermost_entities(&parsed.entities, &points);
    parsed.heritage = heritage
        .into_iter()
        .zip(owners)
        .map(|(hit, owner)| {
            let from = match &hit.implementor {
                Some(_) => 0,
                None => owner
                    .filter(|&i| parsed.entities[i].kind == EntityKind::Class)
                    .unwrap_or(0),
            };
            HeritageRef {
                from,
                implementor: hit.implementor,
                name: hit.name,
                kind: hit.kind,
                line: hit.line,
            }
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_picks_the_deepest_containing_span() {
        // 0..100 contains 10..50 which contains 20..30; 60..70 is a sibling.
        let spans = [(0, 100, 0), (10, 50, 1), (20, 30, 2), (60, 70, 3)];
        assert_eq!(
            innermost(&spans, &[25, 15, 65, 5, 55, 150]),
            [Some(2), Some(1), Some(3), Some(0), Some(0), None]
        );
    }

    #[test]
    fn module_and_names_are_split_per_syntax() {
        assert_eq!(
            split_module_and_names("crate::shapes::{Area, Circle}", "::"),
            (
                "crate::shapes".to_string(),
                vec!["Area".to_string(), "Circle".to_string()]
            )
        );
        assert_eq!(
            split_module_and_names("java.util.List", "."),
            ("java.util.List".into(), vec!["List".into()])
        );
        assert_eq!(
            split_module_and_names("./math", "/"),
            ("./math".into(), vec!["math".into()])
        );
        assert_eq!(
            split_module_and_names("list.h", "/"),
            ("list.h".into(), vec!["list".into()])
        );
    }

    #[test]
    fn types_are_normalized() {
        assert_eq!(normalize_type("Foo<T>"), "Foo");
        assert_eq!(normalize_type("ns::Foo"), "ns.Foo");
        assert_eq!(normalize_type("*Store"), "Store");
        assert_eq!(normalize_type("&'data mut Vec<T>"), "Vec");
        assert_eq!(normalize_type("&'a mut Deserializer<R>"), "Deserializer");
        assert_eq!(normalize_type("*const Node"), "Node");
        assert_eq!(normalize_type("Box<dyn Error>"), "Box");
    }
}
