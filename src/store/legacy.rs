//! The legacy flat layout: `<store>/knowcode_knowledge.json` (entities + relationships), as
//! `export --json` writes it and the predecessor used as its store. When no generation is
//! published, readers accept it: it is materialised once into a `lexical` generation in a
//! temporary folder — never inside the store — with chunks cut from the source files on disk
//! by the same chunker a build uses. This module only reads the store.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::manifest::{Counts, FileRecord, GenerationKind, Manifest, SCHEMA_VERSION};
use super::tables;
use crate::graph::Edge;
use crate::parse::{Entity, ParsedFile, languages};
use crate::walk::FileState;

/// The legacy flat store's file name (also what `export --json` writes).
pub const KNOWLEDGE_JSON: &str = "knowcode_knowledge.json";

#[derive(Deserialize)]
struct Knowledge {
    #[serde(default)]
    generation_id: Option<String>,
    entities: Vec<Entity>,
    #[serde(default)]
    relationships: Vec<Edge>,
}

/// What a reader serves from a store folder: the one rule for "an index is ready", used by
/// retrieval, `inspect quality`, REST health and `doctor`. A published generation wins; without
/// one, the legacy flat file counts as ready (answered lexically).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Generation(String),
    LegacyFlat,
    Missing,
}

pub fn readiness(store_dir: &Path) -> Readiness {
    match super::Store::at(store_dir).current_id() {
        Some(id) => Readiness::Generation(id),
        None if present(store_dir) => Readiness::LegacyFlat,
        None => Readiness::Missing,
    }
}

/// True when `store_dir` holds the legacy flat file.
pub fn present(store_dir: &Path) -> bool {
    store_dir.join(KNOWLEDGE_JSON).is_file()
}

fn file_state(path: &Path) -> Option<FileState> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| crate::walk::file_state(&meta))
}

/// The entities of one file with its current text, ready for the chunker.
fn parsed_file(store_dir: &Path, path: &str, entities: Vec<Entity>) -> Option<ParsedFile> {
    let language = languages::for_path(path)?;
    let absolute = store_dir.join(path);
    let bytes = std::fs::read(&absolute).ok()?;
    Some(ParsedFile {
        path: path.to_string(),
        language: language.spec,
        text: String::from_utf8_lossy(&bytes).into_owned(),
        state: FileState {
            content_hash: Some(crate::text::bytes_hash(&bytes)),
            ..file_state(&absolute)?
        },
        entities,
        calls: Vec::new(),
        imports: Vec::new(),
        heritage: Vec::new(),
        containers: Vec::new(),
        issues: Vec::new(),
    })
}

/// Writes the legacy store as generation `id` of a store rooted at `into` (a temporary
/// folder the caller owns). Source files that are gone keep their entities, without chunks.
pub async fn materialise(
    store_dir: &Path,
    into: &Path,
    max_chunk_tokens: usize,
) -> crate::error::StoreResult<String> {
    let knowledge: Knowledge =
        serde_json::from_slice(&std::fs::read(store_dir.join(KNOWLEDGE_JSON))?)?;
    let id = knowledge
        .generation_id
        .clone()
        .unwrap_or_else(|| "legacy".to_string());
    let mut by_file: BTreeMap<String, Vec<Entity>> = BTreeMap::new();
    for entity in &knowledge.entities {
        by_file
            .entry(entity.path.clone())
            .or_default()
            .push(entity.clone());
    }
    let parsed: Vec<ParsedFile> = by_file
        .into_iter()
        .filter_map(|(path, entities)| parsed_file(store_dir, &path, entities))
        .collect();
    let chunks = crate::chunk::chunk_all(&parsed, max_chunk_tokens);
    let dir = super::Store::at(into).generation_dir(&id);
    std::fs::create_dir_all(&dir)?;
    tables::write_tables(
        &dir,
        &knowledge.entities,
        &knowledge.relationships,
        &chunks,
        None,
        None,
    )
    .await?;
    let resolved = knowledge
        .relationships
        .iter()
        .filter(|e| e.target.is_some())
        .count();
    let manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        builder_version: "legacy".into(),
        generation_id: id.clone(),
        kind: GenerationKind::Lexical,
        created_at_ms: file_state(&store_dir.join(KNOWLEDGE_JSON))
            .map_or(0, |s| (s.mtime_ns / 1_000_000) as u64),
        root: store_dir
            .canonicalize()
            .unwrap_or_else(|_| store_dir.to_path_buf())
            .to_string_lossy()
            .into_owned(),
        counts: Counts {
            files: parsed.len(),
            entities: knowledge.entities.len(),
            edges: knowledge.relationships.len(),
            edges_resolved: resolved,
            edges_unresolved: knowledge.relationships.len() - resolved,
            chunks: chunks.len(),
            ..Counts::default()
        },
        embedding: None,
        files: parsed
            .iter()
            .map(|f| (f.path.clone(), FileRecord::of(f, 0)))
            .collect(),
        skipped: Vec::new(),
        unsupported: BTreeMap::new(),
        issues: Vec::new(),
        repository: Default::default(),
    };
    manifest.write(&dir)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_prefers_a_generation_and_accepts_the_flat_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(readiness(dir.path()), Readiness::Missing);
        std::fs::write(dir.path().join(KNOWLEDGE_JSON), "{}").unwrap();
        assert_eq!(readiness(dir.path()), Readiness::LegacyFlat);
        let base = dir.path().join(".knowcode");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("current"), "g1\n").unwrap();
        assert_eq!(readiness(dir.path()), Readiness::Generation("g1".into()));
    }
}
