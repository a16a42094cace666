//! Freshness: does the current generation lag the working tree? Compares sizes and mtimes
//! with the manifest's file states; a file whose mtime moved but whose size did not is read
//! and its bytes' hash compared with the manifest's (once per change), so a fresh checkout or
//! a `touch` is not staleness. Lists added and deleted files, and says when the vector plane
//! is missing. Results are cached for two seconds per store. Through an overlay, the covered
//! files are compared with what the overlay indexed, and `overlay_files` says how many; when
//! the overlay is not applied, `overlay` says why (and a tree that is not a checkout of the
//! indexed repository is not walked at all).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::generation::LoadedGeneration;
use super::overlay::OverlayNote;
use crate::parse::languages::is_supported;
use crate::store::GenerationKind;
use crate::store::manifest::FileRecord;
use crate::walk::{self, FileState, WalkOptions};

const CACHE_FOR: Duration = Duration::from_secs(2);

/// Whether the generation an answer came from still matches the working tree.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
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
    /// Files of the working tree a local overlay indexes in place of the generation's
    /// (edited, added and deleted since the index was built elsewhere).
    #[serde(skip_serializing_if = "is_zero")]
    pub overlay_files: usize,
    /// Set when the working tree's differences are not overlaid, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<Box<OverlayNote>>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

type CacheEntry = (Instant, String, Freshness);
/// `file → (size, mtime, bytes' hash)` of files whose mtime moved since they were indexed, so
/// each is read once per change rather than once per check.
type HashMemo = HashMap<PathBuf, (u64, i64, String)>;
static HASHES: LazyLock<Mutex<HashMemo>> = LazyLock::new(|| Mutex::new(HashMap::new()));
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

/// A working-tree file is the one indexed when size and mtime match, or — when only the mtime
/// moved (a fresh checkout, a `touch`, an index built on another machine) — when its bytes
/// hash to what the manifest recorded.
fn unchanged(root: &Path, rel: &str, record: &FileRecord, state: &FileState) -> bool {
    if record.size != state.size {
        return false;
    }
    if record.mtime_ns == state.mtime_ns {
        return true;
    }
    let Some(indexed) = &record.content_hash else {
        return false;
    };
    current_hash(&root.join(rel), state).is_some_and(|hash| hash == *indexed)
}

/// The hash of a file's bytes now, read once per (size, mtime); the memo is not locked while
/// the file is read.
fn current_hash(path: &Path, state: &FileState) -> Option<String> {
    let memo = || HASHES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((size, mtime, hash)) = memo().get(path)
        && (*size, *mtime) == (state.size, state.mtime_ns)
    {
        return Some(hash.clone());
    }
    let hash = crate::text::bytes_hash(&std::fs::read(path).ok()?);
    memo().insert(
        path.to_path_buf(),
        (state.size, state.mtime_ns, hash.clone()),
    );
    Some(hash)
}

fn compute(generation: &LoadedGeneration) -> Freshness {
    let manifest = &generation.manifest;
    if generation.tree_unrelated() {
        // Not a checkout of the indexed repository: comparing it says nothing (and walking a
        // home folder on every answer would cost more than the answer).
        return Freshness {
            generation_id: generation.id.clone(),
            kind: manifest.kind.as_str(),
            indexed_at_ms: manifest.created_at_ms,
            overlay: generation.overlay_note().map(Box::new),
            ..Freshness::default()
        };
    }
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
            Some(record) if unchanged(&generation.root, path, record, state) => {}
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
        overlay_files: generation.overlay_files,
        overlay: generation.overlay_note().map(Box::new),
    }
}
