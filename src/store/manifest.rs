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
    /// Tables and full text only: written first, or when the model is unavailable.
    Lexical,
    /// With chunk and signature-view vectors.
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
    /// Files indexed.
    pub files: usize,
    /// Files the walk left out (binary, too large, minified, unreadable …).
    pub skipped: usize,
    pub entities: usize,
    pub edges: usize,
    /// Edges with a target definition.
    pub edges_resolved: usize,
    /// Edges left without one (external, ambiguous or unknown names).
    pub edges_unresolved: usize,
    pub chunks: usize,
    /// Chunks with a vector.
    pub vectors: usize,
    /// Chunk vectors computed by this build.
    pub embedded: usize,
    /// Chunk vectors taken from the previous generation (same content hash).
    pub reused: usize,
    /// Chunks the model could not embed (kept without a vector).
    pub embed_failures: usize,
    /// Source lines indexed.
    pub lines: usize,
    /// Signature views embedded by this build and reused from the previous one (absent in
    /// manifests written before signature views existed).
    #[serde(default)]
    pub views_embedded: usize,
    /// Signature views whose vector came from the previous generation.
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
    /// Root-relative path.
    pub path: String,
    pub kind: IssueKind,
    /// 1-based line of the problem (0 when it is the whole file).
    pub line: u32,
    pub message: String,
    /// The file was read as text because of this issue (its grammar failed on it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_as_text: bool,
}

/// What a generation records about itself (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The manifest format's version.
    pub schema_version: u32,
    /// The knowcode version that built the generation (freshness flags a different one).
    pub builder_version: String,
    pub generation_id: String,
    pub kind: GenerationKind,
    /// When the generation was published (unix ms).
    pub created_at_ms: u64,
    /// The indexed root (absolute).
    pub root: String,
    pub counts: Counts,
    /// The model the vectors were made with (None for a lexical generation).
    pub embedding: Option<EmbeddingInfo>,
    /// Every indexed file by root-relative path: what freshness compares.
    pub files: BTreeMap<String, FileRecord>,
    /// Files the walk left out, and why.
    pub skipped: Vec<SkippedFile>,
    /// Files of languages knowcode does not parse, counted by extension.
    pub unsupported: BTreeMap<String, usize>,
    /// Problems met while reading files (syntax errors, lossy decoding …).
    pub issues: Vec<FileIssue>,
    /// What identifies the indexed repository (absent in manifests written before it, and
    /// outside git): a reader elsewhere overlays only a checkout of it.
    #[serde(default, skip_serializing_if = "is_unknown")]
    pub repository: Identity,
}

/// What identifies the indexed repository (`index::checkout` records and compares it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The first commit of the history the index was built from (following first parents
    /// from `HEAD`); absent outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_commit: Option<String>,
}

fn is_unknown(identity: &Identity) -> bool {
    *identity == Identity::default()
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
