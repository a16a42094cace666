//! Export: the current generation written out for people and other tools. Deterministic
//! Markdown (an index page, an architecture overview derived from the graph, one page per
//! module) plus `manifest.json` listing every file written with its SHA-256; with `json`,
//! also the flat `knowcode_knowledge.json` (entities + relationships), the legacy layout
//! readers accept. The same generation always produces byte-identical files: no timestamps,
//! everything sorted. This module reads a loaded generation and writes only under `output`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::{ErrorCode, KnowcodeError};
use crate::graph::EdgeKind;
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};

pub use crate::store::legacy::KNOWLEDGE_JSON;
/// Rows shown in the architecture overview's ranked lists.
const TOP: usize = 25;

/// Writes the export into `output` and returns what was written.
pub fn export(
    generation: &LoadedGeneration,
    output: &Path,
    with_json: bool,
) -> Result<Value, KnowcodeError> {
    let mut pages: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let modules = modules(generation);
    let calls = file_links(generation, EdgeKind::Calls);
    pages.insert(
        "index.md".into(),
        index_page(generation, &modules).into_bytes(),
    );
    pages.insert(
        "architecture.md".into(),
        architecture_page(generation, &calls).into_bytes(),
    );
    for module in &modules {
        pages.insert(
            module_page_path(&module.path),
            module_page(generation, module, &calls).into_bytes(),
        );
    }
    if with_json {
        pages.insert(KNOWLEDGE_JSON.into(), knowledge_json(generation)?);
    }
    let files: Vec<Value> = pages
        .iter()
        .map(|(path, bytes)| {
            json!({"path": path, "bytes": bytes.len(), "sha256": hex::encode(Sha256::digest(bytes))})
        })
        .collect();
    let manifest = json!({
        "generation_id": generation.id,
        "entities": generation.entities.len(),
        "relationships": generation.edges.len(),
        "files": files,
    });
    pages.insert(
        "manifest.json".into(),
        serde_json::to_vec_pretty(&manifest).map_err(internal)?,
    );
    for (path, bytes) in &pages {
        let target = output.join(path);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(internal)?;
        }
        crate::store::write_synced(&target, bytes).map_err(internal)?;
    }
    Ok(json!({
        "output": output.to_string_lossy(),
        "generation_id": generation.id,
        "files": pages.len(),
        "modules": modules.len(),
        "json": with_json,
    }))
}

fn internal(e: impl std::fmt::Display) -> KnowcodeError {
    KnowcodeError::new(ErrorCode::Internal, format!("export: {e}"))
}

/// `knowcode_knowledge.json`: the generation's entities and relationships.
pub fn knowledge_json(generation: &LoadedGeneration) -> Result<Vec<u8>, KnowcodeError> {
    serde_json::to_vec(&json!({
        "generation_id": generation.id,
        "entities": generation.entities,
        "relationships": generation.edges,
    }))
    .map_err(internal)
}

/// A module (file) with its definitions, in source order.
struct Module<'a> {
    path: String,
    file: &'a Entity,
    members: Vec<&'a Entity>,
}

fn modules(generation: &LoadedGeneration) -> Vec<Module<'_>> {
    let mut by_path: BTreeMap<&str, Module> = BTreeMap::new();
    for entity in generation
        .entities
        .iter()
        .filter(|e| e.kind.is_file_level())
    {
        by_path.entry(&entity.path).or_insert(Module {
            path: entity.path.clone(),
            file: entity,
            members: Vec::new(),
        });
    }
    for entity in generation
        .entities
        .iter()
        .filter(|e| !e.kind.is_file_level())
    {
        if let Some(module) = by_path.get_mut(entity.path.as_str()) {
            module.members.push(entity);
        }
    }
    let mut modules: Vec<Module> = by_path.into_values().collect();
    for module in &mut modules {
        module
            .members
            .sort_by(|a, b| (a.span.start_line, &a.id).cmp(&(b.span.start_line, &b.id)));
    }
    modules
}

fn module_page_path(path: &str) -> String {
    format!("modules/{path}.md")
}

fn first_line(doc: &Option<String>) -> String {
    doc.as_deref()
        .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .replace('|', "\\|")
}

fn index_page(generation: &LoadedGeneration, modules: &[Module]) -> String {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &generation.entities {
        *kinds.entry(e.kind.as_str()).or_default() += 1;
    }
    let mut out = String::new();
    let _ = writeln!(out, "# Code map\n");
    let _ = writeln!(
        out,
        "Generated by knowcode from generation `{}` ({} entities, {} relationships). See [architecture](architecture.md) for how the modules connect.\n",
        generation.id,
        generation.entities.len(),
        generation.edges.len()
    );
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(out, "Entities: {}.\n", kinds.join(", "));
    let _ = writeln!(out, "## Modules\n");
    let _ = writeln!(out, "| Module | Language | Definitions | Summary |");
    let _ = writeln!(out, "|---|---|---|---|");
    for module in modules {
        let _ = writeln!(
            out,
            "| [{}]({}) | {} | {} | {} |",
            module.path,
            module_page_path(&module.path),
            module.file.language,
            module.members.len(),
            first_line(&module.file.doc)
        );
    }
    out
}

/// Counts of resolved edges of one kind between two different files.
fn file_links(generation: &LoadedGeneration, kind: EdgeKind) -> FileLinks {
    let mut links = BTreeMap::new();
    for edge in generation.edges.iter().filter(|e| e.kind == kind) {
        let Some(target) = edge.target.as_deref().and_then(|t| generation.entity(t)) else {
            continue;
        };
        if target.path != edge.path {
            *links
                .entry((edge.path.clone(), target.path.clone()))
                .or_insert(0) += 1;
        }
    }
    links
}

fn ranked<K: Ord + Clone>(counts: &BTreeMap<K, usize>) -> Vec<(K, usize)> {
    let mut rows: Vec<(K, usize)> = counts.iter().map(|(k, n)| (k.clone(), *n)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(TOP);
    rows
}

/// Resolved edges between two different files, counted per (from, to).
type FileLinks = BTreeMap<(String, String), usize>;

fn architecture_page(generation: &LoadedGeneration, calls: &FileLinks) -> String {
    let mut out = String::from(
        "# Architecture overview\n\nDerived from the code graph: folders, the strongest links between files, the most-called definitions and the type hierarchy.\n\n",
    );
    let mut folders: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for e in &generation.entities {
        let folder = e
            .path
            .rsplit_once('/')
            .map_or(".", |(dir, _)| dir)
            .to_string();
        let row = folders.entry(folder).or_default();
        if e.kind.is_file_level() {
            row.0 += 1;
        } else {
            row.1 += 1;
        }
    }
    let _ = writeln!(
        out,
        "## Folders\n\n| Folder | Files | Definitions |\n|---|---|---|"
    );
    for (folder, (files, defs)) in &folders {
        let _ = writeln!(out, "| `{folder}` | {files} | {defs} |");
    }
    let imports = file_links(generation, EdgeKind::Imports);
    for (title, links) in [
        ("Calls between files", calls),
        ("Imports between files", &imports),
    ] {
        let rows = ranked(links);
        let _ = writeln!(out, "\n## {title}\n\n| From | To | Edges |\n|---|---|---|");
        for ((from, to), n) in rows {
            let _ = writeln!(out, "| `{from}` | `{to}` | {n} |");
        }
    }
    let mut called: BTreeMap<String, usize> = BTreeMap::new();
    for edge in generation
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls)
    {
        if let Some(target) = &edge.target {
            *called.entry(target.clone()).or_default() += 1;
        }
    }
    let _ = writeln!(
        out,
        "\n## Most-called definitions\n\n| Definition | Kind | Callers |\n|---|---|---|"
    );
    for (id, n) in ranked(&called) {
        let kind = generation.entity(&id).map_or("", |e| e.kind.as_str());
        let _ = writeln!(out, "| `{id}` | {kind} | {n} |");
    }
    let hierarchy: BTreeSet<(String, &str, String)> = generation
        .edges
        .iter()
        .filter(|e| matches!(e.kind, EdgeKind::Inherits | EdgeKind::Implements))
        .map(|e| {
            (
                e.source.clone(),
                e.kind.as_str(),
                e.target.clone().unwrap_or_else(|| e.target_name.clone()),
            )
        })
        .collect();
    if !hierarchy.is_empty() {
        let _ = writeln!(
            out,
            "\n## Type hierarchy\n\n| Type | Relation | Of |\n|---|---|---|"
        );
        for (from, kind, to) in hierarchy.iter().take(TOP * 4) {
            let _ = writeln!(out, "| `{from}` | {kind} | `{to}` |");
        }
    }
    out
}

fn module_page(generation: &LoadedGeneration, module: &Module, calls: &FileLinks) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# `{}`\n", module.path);
    let _ = writeln!(out, "Language: {}.", module.file.language);
    let summary = first_line(&module.file.doc);
    if !summary.is_empty() {
        let _ = writeln!(out, "\n{summary}");
    }
    if !module.members.is_empty() {
        let _ = writeln!(
            out,
            "\n## Definitions\n\n| Name | Kind | Lines | Summary |\n|---|---|---|---|"
        );
        for e in &module.members {
            let indent = if e.kind == EntityKind::Method {
                "  "
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "| {indent}`{}` | {} | {}–{} | {} |",
                e.qualified_name,
                e.kind.as_str(),
                e.span.start_line,
                e.span.end_line,
                first_line(&e.doc)
            );
        }
    }
    let imports: BTreeSet<&str> = generation
        .outgoing(&module.file.id, EdgeKind::Imports)
        .map(|e| e.target_name.as_str())
        .collect();
    if !imports.is_empty() {
        let _ = writeln!(out, "\n## Imports\n");
        for name in imports {
            let _ = writeln!(out, "- `{name}`");
        }
    }
    let uses: BTreeSet<&str> = calls
        .keys()
        .filter(|(from, _)| *from == module.path)
        .map(|(_, to)| to.as_str())
        .collect();
    let used_by: BTreeSet<&str> = calls
        .keys()
        .filter(|(_, to)| *to == module.path)
        .map(|(from, _)| from.as_str())
        .collect();
    for (title, files) in [("Calls into", uses), ("Called from", used_by)] {
        if !files.is_empty() {
            let _ = writeln!(out, "\n## {title}\n");
            for file in files {
                let _ = writeln!(out, "- [`{file}`]({})", relative_link(&module.path, file));
            }
        }
    }
    out
}

/// A link from one module page to another (both under `modules/`).
fn relative_link(from: &str, to: &str) -> String {
    let depth = from.matches('/').count();
    format!("{}{to}.md", "../".repeat(depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_between_module_pages_climb_out_of_the_source_folder() {
        assert_eq!(relative_link("a.py", "b/c.py"), "b/c.py.md");
        assert_eq!(relative_link("src/x/a.rs", "lib.rs"), "../../lib.rs.md");
    }
}
