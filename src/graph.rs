//! Stage 3, graph: the edges between entities — `contains`, `calls`, `imports`, `inherits`,
//! `implements` — resolved in passes: the caller's own class, the same file, what the file
//! imports (or the type a call is qualified with), then a name that is unique in the language
//! family. Whatever is not resolved stays as an explicit unresolved endpoint (with the number
//! of candidates), counted per file: "no callers" must be distinguishable from "could not
//! resolve". Several equally good candidates are never settled by picking the first.
//! This stage only reads parsed files; it does no I/O.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::parse::{CallSite, EntityKind, HeritageKind, ParsedFile};

/// What an edge says about its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Contains,
    Calls,
    Imports,
    Inherits,
    Implements,
}

impl EdgeKind {
    /// The edge kind's name in tables and payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Calls => "calls",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Implements => "implements",
        }
    }

    /// The edge kind named `s`, if any.
    pub fn parse(s: &str) -> Option<EdgeKind> {
        [
            Self::Contains,
            Self::Calls,
            Self::Imports,
            Self::Inherits,
            Self::Implements,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// How an edge's target was found (or why it was not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Nesting in the source (`contains`).
    Structural,
    /// A member of the caller's own class.
    SameScope,
    SameFile,
    /// Bound by an import, or qualified with a module or type name.
    ImportBound,
    /// The only entity of that name in the language family.
    UniqueName,
    /// No candidate in the repository (external or dynamic).
    Unresolved,
    /// Several equally good candidates.
    Ambiguous,
}

impl Resolution {
    /// The resolution's name in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Structural => "structural",
            Resolution::SameScope => "same_scope",
            Resolution::SameFile => "same_file",
            Resolution::ImportBound => "import_bound",
            Resolution::UniqueName => "unique_name",
            Resolution::Unresolved => "unresolved",
            Resolution::Ambiguous => "ambiguous",
        }
    }

    /// The resolution named `s`, if any.
    pub fn parse(s: &str) -> Option<Resolution> {
        use Resolution::*;
        [
            Structural,
            SameScope,
            SameFile,
            ImportBound,
            UniqueName,
            Unresolved,
            Ambiguous,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// Whether the edge has a target.
    pub fn is_resolved(self) -> bool {
        !matches!(self, Resolution::Unresolved | Resolution::Ambiguous)
    }
}

/// A directed relation. `target` is `None` when unresolved; `target_name` always says what
/// the source referred to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub source: String,
    pub target: Option<String>,
    pub target_name: String,
    pub kind: EdgeKind,
    /// Path of the file the reference is written in.
    pub path: String,
    pub line: u32,
    pub resolution: Resolution,
    /// Candidates considered at the deciding pass (0 for unknown names).
    pub candidates: u32,
}

/// All edges of a build plus the per-file count of unresolved references.
#[derive(Debug, Default)]
pub struct Graph {
    pub edges: Vec<Edge>,
    pub unresolved_by_file: BTreeMap<String, u32>,
}

impl Graph {
    /// Edges with a resolved target.
    pub fn resolved_count(&self) -> usize {
        self.edges
            .iter()
            .filter(|e| e.resolution.is_resolved())
            .count()
    }

    /// Edges left without a target (external, ambiguous or unknown).
    pub fn unresolved_count(&self) -> usize {
        self.edges.len() - self.resolved_count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ref {
    file: usize,
    entity: usize,
}

/// Lookup tables over every parsed file.
struct SymbolTable<'a> {
    files: &'a [ParsedFile],
    by_name: HashMap<&'a str, Vec<Ref>>,
    members: HashMap<&'a str, Vec<Ref>>,
    /// Every suffix of every file's extension-less path → files.
    by_path_suffix: HashMap<String, Vec<usize>>,
    /// Every suffix of every file's folder → files.
    by_dir_suffix: HashMap<String, Vec<usize>>,
}

/// A path as module lookups compare it: lower case without `_` and `-`, so a module named
/// in one case convention finds the file written in another (Elixir's `Shop.CartItem` in
/// `shop/cart_item.ex`, Haskell's `Data.Map` in `Data/Map.hs`).
fn path_key(path: &str) -> String {
    path.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn path_suffixes(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path).chain(path.match_indices('/').map(move |(i, _)| &path[i + 1..]))
}

pub(crate) fn strip_extension(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem,
        _ => path,
    }
}

impl<'a> SymbolTable<'a> {
    fn new(files: &'a [ParsedFile]) -> Self {
        let mut table = SymbolTable {
            files,
            by_name: HashMap::new(),
            members: HashMap::new(),
            by_path_suffix: HashMap::new(),
            by_dir_suffix: HashMap::new(),
        };
        for (f, file) in files.iter().enumerate() {
            for (e, entity) in file.entities.iter().enumerate().skip(1) {
                let r = Ref { file: f, entity: e };
                table
                    .by_name
                    .entry(entity.name.as_str())
                    .or_default()
                    .push(r);
                if let Some(parent) = &entity.parent {
                    table.members.entry(parent.as_str()).or_default().push(r);
                }
            }
            let stem = strip_extension(&file.path);
            let stem = stem
                .strip_suffix("/__init__")
                .or(stem.strip_suffix("/index"))
                .unwrap_or(stem);
            for suffix in path_suffixes(stem) {
                table
                    .by_path_suffix
                    .entry(path_key(suffix))
                    .or_default()
                    .push(f);
            }
            if let Some((dir, _)) = file.path.rsplit_once('/') {
                for suffix in path_suffixes(dir) {
                    table
                        .by_dir_suffix
                        .entry(path_key(suffix))
                        .or_default()
                        .push(f);
                }
            }
        }
        table
    }

    fn entity(&self, r: Ref) -> &'a crate::parse::Entity {
        &self.files[r.file].entities[r.entity]
    }

    /// Entities (not the module) of one file named `name` and passing `keep`.
    fn in_file(
        &self,
        file: usize,
        name: &str,
        keep: impl Fn(&crate::parse::Entity) -> bool,
    ) -> Vec<Ref> {
        let entities = &self.files[file].entities;
        (1..entities.len())
            .filter(|&e| entities[e].name == name && keep(&entities[e]))
            .map(|e| Ref { file, entity: e })
            .collect()
    }

    /// Members of the entity `parent_id` named `name`.
    fn members_named(&self, parent_id: &str, name: &str) -> Vec<Ref> {
        self.members
            .get(parent_id)
            .map(|m| {
                m.iter()
                    .copied()
                    .filter(|r| self.entity(*r).name == name)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn family(&self, file: usize) -> &'static str {
        self.files[file].language.family
    }

    /// Entities named `name` in the family of `file` passing `keep`.
    fn named(
        &self,
        name: &str,
        file: usize,
        keep: impl Fn(&crate::parse::Entity) -> bool,
    ) -> Vec<Ref> {
        let family = self.family(file);
        self.by_name
            .get(name)
            .map(|refs| {
                refs.iter()
                    .copied()
                    .filter(|r| self.family(r.file) == family && keep(self.entity(*r)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The files an import's module refers to: relative paths against the importer's folder,
    /// otherwise the longest suffix of the module path that names a file or a folder.
    fn resolve_module(&self, module: &str, importer: usize) -> Vec<usize> {
        let file = &self.files[importer];
        let key = module_key(module, file.language.path_separator, &file.path);
        let Some(key) = key else { return Vec::new() };
        let segments: Vec<&str> = key.split('/').filter(|s| !s.is_empty()).collect();
        for start in 0..segments.len() {
            let suffix = path_key(&segments[start..].join("/"));
            let family = file.language.family;
            let same_family = |hits: &Vec<usize>| -> Vec<usize> {
                hits.iter()
                    .copied()
                    .filter(|&f| self.family(f) == family && f != importer)
                    .collect()
            };
            if let Some(hits) = self
                .by_path_suffix
                .get(&suffix)
                .map(same_family)
                .filter(|h| !h.is_empty())
            {
                return hits;
            }
            if let Some(hits) = self
                .by_dir_suffix
                .get(&suffix)
                .map(same_family)
                .filter(|h| !h.is_empty())
            {
                let dir = |f: usize| self.files[f].path.rsplit_once('/').map(|(d, _)| d);
                let first_dir = dir(hits[0]);
                if hits.iter().all(|&f| dir(f) == first_dir) {
                    return hits;
                }
            }
            if key.starts_with('/') {
                break; // a relative import names one exact place
            }
        }
        Vec::new()
    }
}

/// A path-like key for a module: `./math` from `lib/calc.js` → `/lib/math` (anchored),
/// `crate::shapes` → `shapes`, `shop.pricing` → `shop/pricing`, `"example.com/kv/store"` as is.
fn module_key(module: &str, separator: &str, importer_path: &str) -> Option<String> {
    let module = module.trim();
    if module.is_empty() || module.starts_with('<') {
        return None;
    }
    let importer_dir = importer_path.rsplit_once('/').map_or("", |(d, _)| d);
    if module.starts_with("./") || module.starts_with("../") {
        return Some(format!(
            "/{}",
            join_relative(importer_dir, strip_extension(module))
        ));
    }
    if separator == "." && module.starts_with('.') {
        let dots = module.chars().take_while(|&c| c == '.').count();
        let mut dir: Vec<&str> = importer_dir.split('/').filter(|s| !s.is_empty()).collect();
        for _ in 1..dots {
            dir.pop();
        }
        let rest = module[dots..].replace('.', "/");
        return Some(format!("/{}/{rest}", dir.join("/")).replace("//", "/"));
    }
    let mut key = if separator == "/" {
        strip_extension(module).to_string()
    } else {
        module.replace(separator, "/")
    };
    for prefix in ["crate/", "self/", "super/"] {
        if let Some(rest) = key.strip_prefix(prefix) {
            key = rest.to_string();
        }
    }
    Some(key)
}

fn join_relative(dir: &str, relative: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for segment in relative.split('/') {
        match segment {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// What one file's imports bind: local name → files.
struct Bindings {
    names: HashMap<String, Vec<usize>>,
}

/// The outcome of one resolution.
struct Resolved {
    target: Option<Ref>,
    resolution: Resolution,
    candidates: u32,
}

impl Resolved {
    fn decide(candidates: Vec<Ref>, pass: Resolution) -> Option<Resolved> {
        match candidates.len() {
            0 => None,
            1 => Some(Resolved {
                target: Some(candidates[0]),
                resolution: pass,
                candidates: 1,
            }),
            n => Some(Resolved {
                target: None,
                resolution: Resolution::Ambiguous,
                candidates: n as u32,
            }),
        }
    }

    fn unresolved() -> Resolved {
        Resolved {
            target: None,
            resolution: Resolution::Unresolved,
            candidates: 0,
        }
    }
}

fn is_call_target(kind: EntityKind) -> bool {
    kind.is_callable() || kind == EntityKind::Class
}

/// Builds every edge of the parsed files.
pub fn build(files: &[ParsedFile]) -> Graph {
    let table = SymbolTable::new(files);
    let mut graph = Graph::default();
    for (f, file) in files.iter().enumerate() {
        let bindings = file_bindings(&table, f, &mut graph);
        for entity in &file.entities {
            if let Some(parent) = &entity.parent {
                graph.edges.push(Edge {
                    source: parent.clone(),
                    target: Some(entity.id.clone()),
                    target_name: entity.qualified_name.clone(),
                    kind: EdgeKind::Contains,
                    path: file.path.clone(),
                    line: entity.span.start_line,
                    resolution: Resolution::Structural,
                    candidates: 1,
                });
            }
        }
        for call in &file.calls {
            let resolved = resolve_call(&table, &bindings, f, call);
            let caller = Ref {
                file: f,
                entity: call.caller,
            };
            push_reference_from(
                &mut graph,
                &table,
                f,
                caller,
                &call.name,
                EdgeKind::Calls,
                call.line,
                resolved,
            );
        }
        for heritage in &file.heritage {
            let (source, resolved) = resolve_heritage(&table, &bindings, f, heritage);
            let kind = match heritage.kind {
                HeritageKind::Inherits => EdgeKind::Inherits,
                HeritageKind::Implements => EdgeKind::Implements,
            };
            push_reference_from(
                &mut graph,
                &table,
                f,
                source,
                &heritage.name,
                kind,
                heritage.line,
                resolved,
            );
        }
    }
    for edge in graph.edges.iter().filter(|e| !e.resolution.is_resolved()) {
        *graph
            .unresolved_by_file
            .entry(edge.path.clone())
            .or_default() += 1;
    }
    graph
}

/// Resolves a file's imports into `imports` edges and its name bindings.
fn file_bindings(table: &SymbolTable, f: usize, graph: &mut Graph) -> Bindings {
    let file = &table.files[f];
    let mut bindings = Bindings {
        names: HashMap::new(),
    };
    for import in &file.imports {
        let targets = table.resolve_module(&import.module, f);
        for name in &import.names {
            bindings
                .names
                .entry(name.clone())
                .or_default()
                .extend(targets.iter().copied());
        }
        let module_ids: Vec<String> = targets
            .iter()
            .map(|&t| table.files[t].entities[0].id.clone())
            .collect();
        let base = Edge {
            source: file.entities[0].id.clone(),
            target: None,
            target_name: import.module.clone(),
            kind: EdgeKind::Imports,
            path: file.path.clone(),
            line: import.line,
            resolution: Resolution::Unresolved,
            candidates: 0,
        };
        if module_ids.is_empty() {
            graph.edges.push(base.clone());
        }
        for id in module_ids {
            graph.edges.push(Edge {
                target: Some(id),
                resolution: Resolution::ImportBound,
                candidates: 1,
                ..base.clone()
            });
        }
    }
    bindings
}

fn resolve_call(table: &SymbolTable, bindings: &Bindings, f: usize, call: &CallSite) -> Resolved {
    let file = &table.files[f];
    let name = call.name.as_str();
    let receiver = call.receiver.as_deref();
    let on_self = receiver.is_none_or(|r| file.language.self_receivers.contains(&r));
    if on_self {
        if let Some(class_id) = enclosing_class(file, call.caller) {
            let members = table.members_named(class_id, name);
            if let Some(resolved) = Resolved::decide(members, Resolution::SameScope) {
                return resolved;
            }
        }
        let same_file = table.in_file(f, name, |e| is_call_target(e.kind));
        if let Some(resolved) = Resolved::decide(same_file, Resolution::SameFile) {
            return resolved;
        }
    }
    if let Some(resolved) = resolve_through_imports(table, bindings, f, name, receiver) {
        return resolved;
    }
    if receiver.is_some_and(|r| bindings.names.contains_key(r)) {
        // Qualified with an imported module that is not in the repository (`json.dumps`).
        return Resolved::unresolved();
    }
    let unique = table.named(name, f, |e| is_call_target(e.kind));
    Resolved::decide(unique, Resolution::UniqueName).unwrap_or_else(Resolved::unresolved)
}

/// Calls bound by an import (`from m import f; f()`, `pkg.F()`) or qualified with a type
/// (`Circle::new`, `Util.square`).
fn resolve_through_imports(
    table: &SymbolTable,
    bindings: &Bindings,
    f: usize,
    name: &str,
    receiver: Option<&str>,
) -> Option<Resolved> {
    let binding_key = receiver.unwrap_or(name);
    if let Some(files) = bindings
        .names
        .get(binding_key)
        .filter(|files| !files.is_empty())
    {
        let hits: Vec<Ref> = files
            .iter()
            .flat_map(|&file| table.in_file(file, name, |e| is_call_target(e.kind)))
            .collect();
        if let Some(resolved) = Resolved::decide(hits, Resolution::ImportBound) {
            return Some(resolved);
        }
    }
    let type_name = receiver?.rsplit(['.', ':']).next()?;
    let classes = table.named(type_name, f, |e| e.kind == EntityKind::Class);
    let [class] = classes.as_slice() else {
        return None;
    };
    let class_id = table.entity(*class).id.as_str();
    let members = table.members_named(class_id, name);
    Resolved::decide(members, Resolution::ImportBound)
}

/// The id of the class a caller belongs to (itself when it is a class).
fn enclosing_class(file: &ParsedFile, caller: usize) -> Option<&str> {
    let entity = &file.entities[caller];
    if entity.kind == EntityKind::Class {
        return Some(&entity.id);
    }
    let parent = entity.parent.as_deref()?;
    file.entities
        .iter()
        .find(|e| e.id == parent && e.kind == EntityKind::Class)
        .map(|e| e.id.as_str())
}

fn resolve_heritage(
    table: &SymbolTable,
    bindings: &Bindings,
    f: usize,
    heritage: &crate::parse::HeritageRef,
) -> (Ref, Resolved) {
    let is_class = |e: &crate::parse::Entity| e.kind == EntityKind::Class;
    let mut source = Ref {
        file: f,
        entity: heritage.from,
    };
    if let Some(implementor) = &heritage.implementor {
        let owner = implementor.rsplit('.').next().unwrap_or(implementor);
        let local = table.in_file(f, owner, is_class);
        let candidates = if local.is_empty() {
            table.named(owner, f, is_class)
        } else {
            local
        };
        if let [only] = candidates.as_slice() {
            source = *only;
        }
    }
    let name = heritage.name.as_str();
    let same_file = table.in_file(f, name, is_class);
    let resolved = Resolved::decide(same_file, Resolution::SameFile)
        .or_else(|| resolve_through_imports(table, bindings, f, name, None))
        .or_else(|| Resolved::decide(table.named(name, f, is_class), Resolution::UniqueName))
        .unwrap_or_else(Resolved::unresolved);
    (source, resolved)
}

#[allow(clippy::too_many_arguments)]
fn push_reference_from(
    graph: &mut Graph,
    table: &SymbolTable,
    f: usize,
    source: Ref,
    name: &str,
    kind: EdgeKind,
    line: u32,
    resolved: Resolved,
) {
    let target = resolved.target.map(|r| table.entity(r));
    graph.edges.push(Edge {
        source: table.entity(source).id.clone(),
        target: target.map(|t| t.id.clone()),
        target_name: target.map_or_else(|| name.to_string(), |t| t.qualified_name.clone()),
        kind,
        path: table.files[f].path.clone(),
        line,
        resolution: resolved.resolution,
        candidates: resolved.candidates,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_keys_follow_each_syntax() {
        assert_eq!(
            module_key("./math", "/", "lib/calc.js").unwrap(),
            "/lib/math"
        );
        assert_eq!(
            module_key("../util/x", "/", "src/a/b.ts").unwrap(),
            "/src/util/x"
        );
        assert_eq!(
            module_key("crate::shapes", "::", "src/lib.rs").unwrap(),
            "shapes"
        );
        assert_eq!(
            module_key("shop.pricing", ".", "shop/cart.py").unwrap(),
            "shop/pricing"
        );
        assert_eq!(
            module_key(".pricing", ".", "shop/cart.py").unwrap(),
            "/shop/pricing"
        );
        assert_eq!(module_key("list.h", "/", "c/list.c").unwrap(), "list");
        assert!(module_key("<stdlib.h>", "/", "x.c").is_none());
    }
}
