//! The overlay: a small local generation for the files of a working tree that differ from the
//! generation it reads (a team's shared index read from another branch or checkout). Files are
//! compared by their bytes' hash with the base manifest: edited and added files are parsed,
//! chunked and embedded here; deleted ones are only listed. The overlay is written as ordinary
//! tables into a folder keyed by the base generation, the working tree and the differences, so
//! an unchanged tree reopens it without any work. Only a checkout of the indexed repository
//! gets one (`index::checkout` judges), and a caller may bound the files built before an
//! answer. Merging it over the base is the reader's job (`load::generation`); this module
//! only builds.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::chunk::{self, Chunk};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{BuildError, Stage};
use crate::graph::{self, Graph};
use crate::parse::{self, Entity};
use crate::store::manifest::{Counts, FileRecord};
use crate::store::{Manifest, tables};
use crate::walk::{self, SourceFile, WalkOptions};

/// The record an overlay folder keeps of what it covers.
const RECORD: &str = "overlay.json";
/// Overlays kept in the overlays folder (the most recently built); older ones are deleted.
const KEEP_OVERLAYS: usize = 16;

/// How a working tree differs from a generation: by path, each file's bytes' hash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Differences {
    /// Edited or added files and the hash of their bytes now.
    pub present: BTreeMap<String, String>,
    /// Files the generation indexed that the tree no longer has.
    pub deleted: Vec<String>,
}

impl Differences {
    /// No file differs.
    pub fn is_empty(&self) -> bool {
        self.present.is_empty() && self.deleted.is_empty()
    }

    /// Every path the overlay answers for (the base's rows of these are hidden).
    pub fn covered(&self) -> Vec<String> {
        self.present
            .keys()
            .chain(self.deleted.iter())
            .cloned()
            .collect()
    }
}

/// What an overlay folder was built from; equal records mean the folder can be reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    base_id: String,
    root: String,
    differences: Differences,
    /// Whether chunks and signature views carry vectors.
    embedded: bool,
    files: BTreeMap<String, FileRecord>,
}

/// A built (or reopened) overlay.
#[derive(Debug, Clone)]
pub struct Overlay {
    /// The folder holding its tables.
    pub dir: PathBuf,
    pub differences: Differences,
    /// The manifest records of the edited and added files.
    pub files: BTreeMap<String, FileRecord>,
    pub embedded: bool,
}

/// The parsed, chunked differing files, ready to embed and write.
pub struct Plan {
    differences: Differences,
    graph: Graph,
    chunks: Vec<Chunk>,
    entities: Vec<Entity>,
    dir: PathBuf,
    record: Record,
}

impl Plan {
    /// Chunks of the differing files (what embedding costs).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The folder the overlay is written to (holding the tree's previous overlay, if any).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Walks `root` and compares it with `base`: the differences, and the differing files read.
pub fn differences(
    base: &Manifest,
    root: &Path,
    config: &Config,
) -> Result<(Differences, Vec<SourceFile>), BuildError> {
    let options = WalkOptions {
        max_file_bytes: config.index.max_file_bytes,
        ignore_globs: Vec::new(),
        exclude_dirs: vec![root.join(".knowcode")],
    };
    let walked = walk::walk(root, &options, &parse::languages::is_supported)
        .map_err(BuildError::at(Stage::Walk))?;
    let skipped: HashSet<&str> = base.skipped.iter().map(|s| s.path.as_str()).collect();
    let mut differences = Differences::default();
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for file in walked.files {
        seen.insert(file.rel_path.clone());
        let hash = file.state.content_hash.clone().unwrap_or_default();
        let same = match base.files.get(&file.rel_path) {
            Some(record) => record.content_hash.as_deref() == Some(hash.as_str()),
            None => skipped.contains(file.rel_path.as_str()),
        };
        if !same {
            differences.present.insert(file.rel_path.clone(), hash);
            files.push(file);
        }
    }
    let walk_skipped: HashSet<&str> = walked.skipped.iter().map(|s| s.path.as_str()).collect();
    differences.deleted = base
        .files
        .keys()
        .filter(|p| !seen.contains(*p) && !walk_skipped.contains(p.as_str()))
        .cloned()
        .collect();
    Ok((differences, files))
}

/// Why a working tree's overlay was not built for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The tree is not a checkout of the indexed repository (`index::checkout`).
    NotCheckout(super::checkout::NotCheckout),
    /// More files to overlay than `index.overlay_max_files` allows before an answer.
    TooManyFiles { files: usize, bound: usize },
}

/// What [`open_or_plan`] found.
pub enum Opened {
    /// No file of the tree differs from the generation.
    Unchanged,
    /// An overlay built earlier for the same differences.
    Reopened(Overlay),
    /// The differing files parsed and chunked: embed and [`write`] them.
    Planned(Box<Plan>),
    /// No overlay for this tree (or not now); answers come from the generation alone.
    Skipped(Skip),
}

/// The overlay of `root` over generation `base_id`: nothing when `root` is not a checkout of
/// the indexed repository; reopened when `overlays_dir` already holds one for the same
/// differences; else planned — unless `max_files` is given and more differing files than
/// that are new since the last overlay of this tree (those the overlay must parse and embed).
pub fn open_or_plan(
    base_id: &str,
    base: &Manifest,
    root: &Path,
    config: &Config,
    overlays_dir: &Path,
    embed: bool,
    max_files: Option<usize>,
) -> Result<Opened, BuildError> {
    if let Err(why) = super::checkout::judge(base, root) {
        return Ok(Opened::Skipped(Skip::NotCheckout(why)));
    }
    let (differences, files) = differences(base, root, config)?;
    if differences.is_empty() {
        return Ok(Opened::Unchanged);
    }
    let root_text = root.to_string_lossy().into_owned();
    let key = crate::text::bytes_hash(format!("{base_id}\n{root_text}").as_bytes());
    let dir = overlays_dir.join(&key[..16]);
    let previous = read_record(&dir).filter(|r| r.base_id == base_id);
    if let Some(record) = &previous
        && record.differences == differences
        && record.embedded == embed
    {
        return Ok(Opened::Reopened(Overlay {
            dir,
            differences,
            files: record.files.clone(),
            embedded: record.embedded,
        }));
    }
    let new_files = differences
        .present
        .iter()
        .filter(|(path, hash)| {
            previous
                .as_ref()
                .and_then(|r| r.differences.present.get(*path))
                != Some(*hash)
        })
        .count();
    if let Some(bound) = max_files
        && new_files > bound
    {
        return Ok(Opened::Skipped(Skip::TooManyFiles {
            files: new_files,
            bound,
        }));
    }
    let parsed = parse::parse_all(files, &|| {});
    let graph = graph::build(&parsed);
    let chunks = chunk::chunk_all(&parsed, config.index.max_chunk_tokens);
    let entities: Vec<Entity> = parsed.iter().flat_map(|f| f.entities.clone()).collect();
    let unresolved = &graph.unresolved_by_file;
    let records = parsed
        .iter()
        .map(|f| {
            let n = unresolved.get(&f.path).copied().unwrap_or(0);
            (f.path.clone(), FileRecord::of(f, n))
        })
        .collect();
    let record = Record {
        base_id: base_id.to_string(),
        root: root_text,
        differences: differences.clone(),
        embedded: embed,
        files: records,
    };
    Ok(Opened::Planned(Box::new(Plan {
        differences,
        graph,
        chunks,
        entities,
        dir,
        record,
    })))
}

/// Chunk and signature-view vectors of a plan: those whose text the base generation embedded
/// already (`reusable`: by the hash of the embedded text, as a build reuses them) are taken
/// from it, so an edit costs the entities it changed, not the whole file. Returns the vectors
/// and how many were embedded now.
pub fn embed(
    plan: &Plan,
    embedder: &mut Embedder,
    reusable: &std::collections::HashMap<String, Vec<f32>>,
) -> (super::VectorRows, super::VectorRows, usize) {
    let mut counts = Counts::default();
    let (chunks, views) = super::embed_chunks_and_views(
        embedder,
        &plan.chunks,
        &plan.entities,
        reusable,
        &mut counts,
        &super::NoProgress,
    );
    (chunks, views, counts.embedded + counts.views_embedded)
}

/// Writes a planned overlay's tables (with `vectors` when embedded) and its record, replacing
/// any older overlay of the same tree and base.
pub async fn write(
    plan: Box<Plan>,
    vectors: Option<(super::VectorRows, super::VectorRows)>,
    dimension: usize,
) -> Result<Overlay, BuildError> {
    let staging = plan
        .dir
        .with_extension(format!("part{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(BuildError::at(Stage::Store))?;
    let vectors = vectors.as_ref().map(|(chunks, views)| {
        (
            tables::Vectors {
                dimension,
                rows: chunks,
            },
            tables::Vectors {
                dimension,
                rows: views,
            },
        )
    });
    tables::write_tables(
        &staging,
        &plan.entities,
        &plan.graph.edges,
        &plan.chunks,
        vectors.as_ref().map(|(chunks, _)| chunks),
        vectors.as_ref().map(|(_, views)| views),
    )
    .await
    .map_err(BuildError::at(Stage::Store))?;
    let mut record = plan.record.clone();
    record.embedded = vectors.is_some();
    let json = serde_json::to_vec_pretty(&record).map_err(BuildError::at(Stage::Store))?;
    std::fs::write(staging.join(RECORD), json).map_err(BuildError::at(Stage::Store))?;
    let _ = std::fs::remove_dir_all(&plan.dir);
    std::fs::rename(&staging, &plan.dir).map_err(BuildError::at(Stage::Store))?;
    if let Some(parent) = plan.dir.parent() {
        prune(parent, KEEP_OVERLAYS);
    }
    Ok(Overlay {
        dir: plan.dir,
        differences: plan.differences,
        files: record.files,
        embedded: record.embedded,
    })
}

/// Deletes all but the `keep` most recently built overlays under `dir` (trees that moved on,
/// temporary checkouts, bases long replaced).
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut built: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let modified = e.path().join(RECORD).metadata().ok()?.modified().ok()?;
            Some((modified, e.path()))
        })
        .collect();
    built.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, old) in built.into_iter().skip(keep) {
        let _ = std::fs::remove_dir_all(old);
    }
}

fn read_record(dir: &Path) -> Option<Record> {
    serde_json::from_slice(&std::fs::read(dir.join(RECORD)).ok()?).ok()
}
