//! The manifest of a generation: what was built, by whom, with which model, from which file
//! states. Freshness compares the working tree against `files`; doctor checks the rest.

use crate::error::StoreResult;
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::embed::EmbeddingInfo;

use crate::parse::IssueKind;
use crate::walk::SkippedFile;

/// Bumped whenever a table layout or manifest field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// `lexical`: graph + full text only. `full`: vectors too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenerationKind {
    Lexical,
    Full,
}

impl GenerationKind {
    /// The kind's name in the manifest and payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            GenerationKind::Lexical => "lexical",
            GenerationKind::Full => "full",
        }
    }
}

/// What a generation holds, counted at build time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub files: usize,
    pub skipped: usize,
    pub entities: usize,
    pub edges: usize,
    pub edges_resolved: usize,
    pub edges_unresolved: usize,
    pub chunks: usize,
    pub vectors: usize,
    pub embedded: usize,
    pub reused: usize,
    pub embed_failures: usize,
    pub lines: usize,
    /// Signature views embedded by this build and reused from the previous one (absent in
    /// manifests written before signature views existed).
    #[serde(default)]
    pub views_embedded: usize,
    #[serde(default)]
    pub views_reused: usize,
}

/// Per-file state recorded at build time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
    pub mtime_ns: i64,
    pub language: String,
    pub entities: usize,
    /// References written in this file that could not be resolved.
    pub unresolved: u32,
    /// Hash of the file's bytes when indexed (absent in manifests written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
}

impl FileRecord {
    /// The record of a parsed file, with its count of unresolved references.
    pub fn of(file: &crate::parse::ParsedFile, unresolved: u32) -> FileRecord {
        FileRecord {
            size: file.state.size,
            mtime_ns: file.state.mtime_ns,
            language: file.language.name.to_string(),
            entities: file.entities.len(),
            unresolved,
            content_hash: file.state.content_hash.clone(),
        }
    }
}

/// A file the build skipped or read with problems, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIssue {
    pub path: String,
    pub kind: IssueKind,
    pub line: u32,
    pub message: String,
}

/// What a generation records about itself (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub builder_version: String,
    pub generation_id: String,
    pub kind: GenerationKind,
    pub created_at_ms: u64,
    /// The indexed root (absolute).
    pub root: String,
    pub counts: Counts,
    pub embedding: Option<EmbeddingInfo>,
    pub files: BTreeMap<String, FileRecord>,
    pub skipped: Vec<SkippedFile>,
    pub unsupported: BTreeMap<String, usize>,
    pub issues: Vec<FileIssue>,
}

/// The manifest's file name inside a generation.
pub const MANIFEST_FILE: &str = "manifest.json";

impl Manifest {
    /// Reads the manifest of the generation in `dir`.
    pub fn read(dir: &Path) -> StoreResult<Manifest> {
        let text = std::fs::read_to_string(dir.join(MANIFEST_FILE))?;
        Ok(serde_json::from_str(&text)?)
    }

    /// Writes and fsyncs the manifest into a (staging) generation folder.
    pub fn write(&self, dir: &Path) -> StoreResult<()> {
        let path = dir.join(MANIFEST_FILE);
        let json = serde_json::to_vec_pretty(self)?;
        super::write_synced(&path, &json)
    }
}
