//! Freshness: does the current generation lag the working tree? Compares sizes and mtimes
//! with the manifest's file states (never re-hashes), lists added and deleted files, and
//! says when the vector plane is missing. Results are cached for two seconds per store.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::generation::LoadedGeneration;
use crate::parse::languages::is_supported;
use crate::store::GenerationKind;
use crate::walk::{self, WalkOptions};

const CACHE_FOR: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
/// Whether the generation an answer came from still matches the working tree.
pub struct Freshness {
    pub generation_id: String,
    pub kind: &'static str,
    /// When the generation was published (unix ms).
    pub indexed_at_ms: u64,
    /// The newest modification time among the indexed root's files (unix ms).
    pub newest_change_ms: u64,
    pub is_stale: bool,
    pub reasons: Vec<&'static str>,
    #[serde(skip_serializing_if = "is_zero")]
    pub changed: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub added: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub deleted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

type CacheEntry = (Instant, String, Freshness);
static CACHE: LazyLock<Mutex<HashMap<PathBuf, CacheEntry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The freshness of `generation`, at most two seconds old.
pub fn check(generation: &LoadedGeneration) -> Freshness {
    let key = generation.root.clone();
    if let Some((at, id, cached)) = CACHE.lock().expect("freshness cache").get(&key)
        && *id == generation.id
        && at.elapsed() < CACHE_FOR
    {
        return cached.clone();
    }
    let fresh = compute(generation);
    CACHE
        .lock()
        .expect("freshness cache")
        .insert(key, (Instant::now(), generation.id.clone(), fresh.clone()));
    fresh
}

/// Drops cached answers (after a publish in this process).
pub fn invalidate() {
    CACHE.lock().expect("freshness cache").clear();
}

fn compute(generation: &LoadedGeneration) -> Freshness {
    let manifest = &generation.manifest;
    let options = WalkOptions {
        max_file_bytes: u64::MAX,
        ignore_globs: Vec::new(),
        exclude_dirs: Vec::new(),
    };
    let tree = walk::stat_files(&generation.root, &options, &is_supported).unwrap_or_default();
    let skipped: std::collections::HashSet<&str> =
        manifest.skipped.iter().map(|s| s.path.as_str()).collect();
    let mut changed = 0;
    let mut added = 0;
    let mut newest_ns = 0i64;
    for (path, state) in &tree {
        newest_ns = newest_ns.max(state.mtime_ns);
        match manifest.files.get(path) {
            Some(record) if record.size == state.size && record.mtime_ns == state.mtime_ns => {}
            Some(_) => changed += 1,
            None if skipped.contains(path.as_str()) => {}
            None => added += 1,
        }
    }
    let deleted = manifest
        .files
        .keys()
        .filter(|p| !tree.contains_key(*p))
        .count();
    let mut reasons = Vec::new();
    if changed > 0 {
        reasons.push("source_changed");
    }
    if added > 0 {
        reasons.push("files_added");
    }
    if deleted > 0 {
        reasons.push("files_deleted");
    }
    if manifest.kind == GenerationKind::Lexical {
        reasons.push("semantic_index_missing");
    }
    if manifest.builder_version != crate::BUILDER_VERSION {
        reasons.push("builder_changed");
    }
    Freshness {
        generation_id: generation.id.clone(),
        kind: manifest.kind.as_str(),
        indexed_at_ms: manifest.created_at_ms,
        newest_change_ms: (newest_ns / 1_000_000).max(0) as u64,
        is_stale: changed + added + deleted > 0,
        reasons,
        changed,
        added,
        deleted,
    }
}
