//! The build pipeline: walk → parse → graph → chunk → (publish lexical) → embed → publish
//! full. It owns ordering, the store lock, fault points and the summary; every stage's work
//! lives in that stage's module. Phase one (graph + full text) is published as a `lexical`
//! generation unless a `full` one is current (a full generation is never traded for a
//! lexical one); phase two adds vectors, reusing those of unchanged chunks.

pub mod checkout;
pub mod deps;
pub(crate) mod history;
pub mod overlay;
pub mod quality;
pub mod shared;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::chunk::{self, Chunk};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{BuildError, Stage};
use crate::graph::{self, Graph};
use crate::parse::{self, Entity, ParsedFile};
use crate::store::manifest::{Counts, EmbeddingInfo, FileIssue, FileRecord};
use crate::store::tables::{self, Vectors};
use crate::store::{GenerationKind, Manifest, Staging, Store};
use crate::walk::{self, WalkOptions, WalkOutput};

/// Test hook: the named stage fails (e.g. `KNOWCODE_FAIL_STAGE=embed`), to prove that a
/// failure anywhere leaves the previous generation current; `<stage>:panic` panics there
/// instead (a fault no input provokes, for the job table's panic handling), and
/// `<stage>:hang` stops there for good, so a test can kill the build at that point.
pub const FAIL_STAGE_ENV: &str = "KNOWCODE_FAIL_STAGE";

/// What to index and where.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    pub root: PathBuf,
    pub store_dir: PathBuf,
    pub ignore_globs: Vec<String>,
    /// False for `--no-embed`: stop after phase one.
    pub embed: bool,
    /// `--temporal`: also record git history (`history.json`) in the generation.
    pub temporal: bool,
    pub config: Config,
}

/// Progress reporting; the CLI draws bars, jobs record phases, tests ignore it.
pub trait Progress: Send + Sync {
    /// A stage starts with `total` items to do (0: unknown).
    fn stage(&self, _stage: Stage, _total: u64) {}
    /// `n` more items of the current stage are done.
    fn advance(&self, _n: u64) {}
    /// The build is over (successfully or not).
    fn finish(&self) {}
}

/// Reports nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Seconds spent per stage.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub walk: f64,
    pub parse: f64,
    pub graph: f64,
    pub chunk: f64,
    pub store_lexical: f64,
    pub embed: f64,
    pub store_full: f64,
}

/// The outcome of a build, printed as one line or one JSON object.
#[derive(Debug, Clone, Serialize)]
pub struct IndexSummary {
    pub generation_id: String,
    pub kind: GenerationKind,
    pub files: usize,
    pub skipped: usize,
    pub entities: usize,
    pub edges_resolved: usize,
    pub edges_unresolved: usize,
    pub chunks: usize,
    pub embedded: usize,
    pub reused: usize,
    pub seconds: f64,
    pub phase_one_seconds: f64,
    pub lines: usize,
    pub embed_failures: usize,
    /// Signature views (one short vector per definition) embedded and reused.
    pub views_embedded: usize,
    pub views_reused: usize,
    /// Whether this run made a new generation current (false when it kept the previous full
    /// generation: nothing new is served).
    pub published: bool,
    /// Why the build stopped before a full generation, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<StopReason>,
    /// The same in words, with the generation kept or published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub timings: Timings,
}

/// Why a build ended with the lexical phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Embedding was switched off (`--no-embed`, `no_embed: true`).
    NoEmbed,
    /// The embedding model or ONNX Runtime could not be loaded.
    ModelUnavailable,
}

/// How a build ended: what is current now and whether this run put it there.
struct Outcome {
    generation_id: String,
    kind: GenerationKind,
    published: bool,
    reason: Option<StopReason>,
    note: Option<String>,
}

impl IndexSummary {
    /// The one-line summary the CLI prints after a build.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} files ({} skipped), {} entities, {} edges ({} resolved / {} unresolved), {} chunks ({} embedded / {} reused) in {:.1}s → generation {} ({})",
            self.files,
            self.skipped,
            self.entities,
            self.edges_resolved + self.edges_unresolved,
            self.edges_resolved,
            self.edges_unresolved,
            self.chunks,
            self.embedded,
            self.reused,
            self.seconds,
            self.generation_id,
            self.kind.as_str(),
        );
        if let Some(note) = &self.note {
            line.push_str(&format!("; {note}"));
        }
        line
    }
}

/// Marks entering a stage: logged on stderr (target `knowcode::stage`, which
/// `scripts/crash-test` reads to report where a kill landed), and the injected failure
/// point of [`FAIL_STAGE_ENV`].
fn fail_point(stage: Stage) -> Result<(), BuildError> {
    tracing::info!(target: "knowcode::stage", stage = stage.as_str(), "entering stage");
    match std::env::var(FAIL_STAGE_ENV) {
        Ok(value) if value == stage.as_str() => Err(BuildError::at(stage)(anyhow::anyhow!(
            "injected failure ({FAIL_STAGE_ENV}={value})"
        ))),
        Ok(value) if value.strip_suffix(":panic") == Some(stage.as_str()) => {
            panic!("injected panic ({FAIL_STAGE_ENV}={value})")
        }
        Ok(value) if value.strip_suffix(":hang") == Some(stage.as_str()) => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        _ => Ok(()),
    }
}

/// Everything phase one produced.
pub struct Analysis {
    pub walked: WalkOutput,
    pub parsed: Vec<ParsedFile>,
    pub graph: Graph,
    pub chunks: Vec<Chunk>,
}

impl Analysis {
    /// Every parsed entity, file by file.
    pub fn entities(&self) -> Vec<Entity> {
        self.parsed
            .iter()
            .flat_map(|f| f.entities.iter().cloned())
            .collect()
    }
}

/// Runs the whole pipeline under the store lock.
pub async fn run(
    options: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexSummary, BuildError> {
    let started = Instant::now();
    let store = Store::at(&options.store_dir);
    let _lock = store.lock()?;
    store
        .clean(options.config.index.keep_generations)
        .map_err(BuildError::at(Stage::Store))?;
    let previous = store.current_manifest().ok();
    let mut timings = Timings::default();
    let analysis = analyse(options, progress, &mut timings)?;
    let entities = analysis.entities();
    let mut counts = base_counts(&analysis, entities.len());
    let previous_full = previous.filter(|(_, m)| m.kind == GenerationKind::Full);
    let reports = Reports {
        quality: quality::report(&analysis),
        history: history(options, &analysis)?,
    };

    let mut published: Option<(String, GenerationKind)> = None;
    if previous_full.is_none() {
        let t = Instant::now();
        let manifest = manifest(options, &analysis, &counts, GenerationKind::Lexical, None);
        let keep = options.config.index.keep_generations;
        let id =
            write_generation(&store, &analysis, &entities, None, manifest, &reports, keep).await?;
        published = Some((id, GenerationKind::Lexical));
        timings.store_lexical = t.elapsed().as_secs_f64();
    }
    let phase_one_seconds = started.elapsed().as_secs_f64();

    let embedder = if options.embed {
        fail_point(Stage::Embed)?;
        Embedder::load(&options.config).map_err(|e| {
            let why = format!("{} (`knowcode setup` installs it)", e.message);
            (StopReason::ModelUnavailable, why)
        })
    } else {
        Err((
            StopReason::NoEmbed,
            "embedding disabled (--no-embed)".to_string(),
        ))
    };
    let mut embedder = match embedder {
        Ok(embedder) => embedder,
        Err((reason, why)) => {
            progress.finish();
            let outcome = match (published, previous_full) {
                (Some((id, kind)), _) => Outcome {
                    generation_id: id,
                    kind,
                    published: true,
                    reason: Some(reason),
                    note: Some(format!("stopped after phase one: {why}")),
                },
                (None, Some((id, _))) => Outcome {
                    note: Some(format!(
                        "{why}; kept full generation {id} current, nothing new published"
                    )),
                    generation_id: id,
                    kind: GenerationKind::Full,
                    published: false,
                    reason: Some(reason),
                },
                (None, None) => unreachable!("phase one publishes when no full generation exists"),
            };
            return Ok(summary(
                outcome,
                &counts,
                started,
                phase_one_seconds,
                timings,
            ));
        }
    };

    let t = Instant::now();
    let reusable = reusable_vectors(&store, previous_full.as_ref(), embedder.info()).await;
    let (rows, view_rows) = embed_chunks_and_views(
        &mut embedder,
        &analysis.chunks,
        &entities,
        &reusable,
        &mut counts,
        progress,
    );
    timings.embed = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let vectors = Vectors {
        dimension: embedder.info().dimension,
        rows: &rows,
    };
    let views = Vectors {
        dimension: embedder.info().dimension,
        rows: &view_rows,
    };
    let manifest = manifest(
        options,
        &analysis,
        &counts,
        GenerationKind::Full,
        Some(embedder.info().clone()),
    );
    let id = write_generation(
        &store,
        &analysis,
        &entities,
        Some((&vectors, &views)),
        manifest,
        &reports,
        options.config.index.keep_generations,
    )
    .await?;
    timings.store_full = t.elapsed().as_secs_f64();
    progress.finish();
    let outcome = Outcome {
        generation_id: id,
        kind: GenerationKind::Full,
        published: true,
        reason: None,
        note: None,
    };
    Ok(summary(
        outcome,
        &counts,
        started,
        phase_one_seconds,
        timings,
    ))
}

/// Walk, parse, graph and chunk: everything but the store and the model.
pub fn analyse(
    options: &IndexOptions,
    progress: &dyn Progress,
    timings: &mut Timings,
) -> Result<Analysis, BuildError> {
    let t = Instant::now();
    fail_point(Stage::Walk)?;
    progress.stage(Stage::Walk, 0);
    let store_abs = options
        .store_dir
        .canonicalize()
        .unwrap_or_else(|_| options.store_dir.clone());
    let walk_options = WalkOptions {
        max_file_bytes: options.config.index.max_file_bytes,
        ignore_globs: options.ignore_globs.clone(),
        exclude_dirs: vec![store_abs.join(".knowcode")],
    };
    let mut walked = walk::walk(
        &options.root,
        &walk_options,
        &parse::languages::is_supported,
    )
    .map_err(BuildError::at(Stage::Walk))?;
    timings.walk = t.elapsed().as_secs_f64();

    let t = Instant::now();
    fail_point(Stage::Parse)?;
    progress.stage(Stage::Parse, walked.files.len() as u64);
    let parsed = parse::parse_all(std::mem::take(&mut walked.files), &|| progress.advance(1));
    timings.parse = t.elapsed().as_secs_f64();

    let t = Instant::now();
    fail_point(Stage::Graph)?;
    progress.stage(Stage::Graph, 0);
    let graph = graph::build(&parsed);
    timings.graph = t.elapsed().as_secs_f64();

    let t = Instant::now();
    fail_point(Stage::Chunk)?;
    progress.stage(Stage::Chunk, 0);
    let chunks = chunk::chunk_all(&parsed, options.config.index.max_chunk_tokens);
    timings.chunk = t.elapsed().as_secs_f64();
    Ok(Analysis {
        walked,
        parsed,
        graph,
        chunks,
    })
}

fn base_counts(analysis: &Analysis, entities: usize) -> Counts {
    Counts {
        files: analysis.parsed.len(),
        skipped: analysis.walked.skipped.len(),
        entities,
        edges: analysis.graph.edges.len(),
        edges_resolved: analysis.graph.resolved_count(),
        edges_unresolved: analysis.graph.unresolved_count(),
        chunks: analysis.chunks.len(),
        lines: analysis.parsed.iter().map(|f| f.line_count()).sum(),
        ..Counts::default()
    }
}

/// Vectors of the previous full generation, if it used the same model (never mixed).
async fn reusable_vectors(
    store: &Store,
    previous_full: Option<&(String, Manifest)>,
    info: &EmbeddingInfo,
) -> HashMap<String, Vec<f32>> {
    let Some((id, manifest)) = previous_full else {
        return HashMap::new();
    };
    if manifest.embedding.as_ref() != Some(info) {
        tracing::info!("previous generation used another model; embedding everything");
        return HashMap::new();
    }
    match tables::read_vectors(&store.generation_dir(id)).await {
        Ok(vectors) => vectors,
        Err(err) => {
            tracing::warn!(
                "cannot read vectors of generation {id} ({err:#}); embedding everything"
            );
            HashMap::new()
        }
    }
}

/// One optional vector per row of a table.
type VectorRows = Vec<Option<Vec<f32>>>;

/// One vector per chunk and one per entity's signature view (None for entities without a
/// view): reused by the hash of the embedded text, else embedded in cross-file batches. Both
/// are counted in `counts` (chunks as `embedded`/`reused`, views as `views_*`).
fn embed_chunks_and_views(
    embedder: &mut Embedder,
    chunks: &[Chunk],
    entities: &[Entity],
    reusable: &HashMap<String, Vec<f32>>,
    counts: &mut Counts,
    progress: &dyn Progress,
) -> (VectorRows, VectorRows) {
    let views: Vec<Option<(String, String)>> =
        entities.iter().map(chunk::hashed_signature_view).collect();
    // (hash, text) per row: chunks first, then views; borrowed, nothing copied.
    let chunk_texts = chunks
        .iter()
        .map(|c| Some((c.content_hash.as_str(), c.embed_text.as_str())));
    let view_texts = views.iter().map(|v| {
        v.as_ref()
            .map(|(hash, text)| (hash.as_str(), text.as_str()))
    });
    let texts: Vec<Option<(&str, &str)>> = chunk_texts.chain(view_texts).collect();
    let mut rows: VectorRows = texts
        .iter()
        .map(|t| t.and_then(|(hash, _)| reusable.get(hash).cloned()))
        .collect();
    let pending: Vec<usize> = (0..texts.len())
        .filter(|&i| texts[i].is_some() && rows[i].is_none())
        .collect();
    let reused = |range: std::ops::Range<usize>| range.filter(|&i| rows[i].is_some()).count();
    counts.reused = reused(0..chunks.len());
    counts.views_reused = reused(chunks.len()..texts.len());
    progress.stage(Stage::Embed, pending.len() as u64);
    let pending_texts: Vec<&str> = pending
        .iter()
        .filter_map(|&i| texts[i].map(|(_, text)| text))
        .collect();
    let vectors = embedder.embed_all(&pending_texts, &mut |n| progress.advance(n as u64));
    for (&i, vector) in pending.iter().zip(vectors) {
        match (i < chunks.len(), vector.is_some()) {
            (true, true) => counts.embedded += 1,
            (true, false) => counts.embed_failures += 1,
            (false, true) => counts.views_embedded += 1,
            (false, false) => {}
        }
        rows[i] = vector;
    }
    counts.vectors = counts.embedded + counts.reused;
    let views = rows.split_off(chunks.len());
    (rows, views)
}

fn manifest(
    options: &IndexOptions,
    analysis: &Analysis,
    counts: &Counts,
    kind: GenerationKind,
    embedding: Option<EmbeddingInfo>,
) -> Manifest {
    let unresolved = &analysis.graph.unresolved_by_file;
    let files: BTreeMap<String, FileRecord> = analysis
        .parsed
        .iter()
        .map(|f| {
            let unresolved = unresolved.get(&f.path).copied().unwrap_or(0);
            (f.path.clone(), FileRecord::of(f, unresolved))
        })
        .collect();
    let issues = analysis
        .parsed
        .iter()
        .flat_map(|f| {
            f.issues.iter().map(|i| FileIssue {
                path: f.path.clone(),
                kind: i.kind,
                line: i.line,
                message: i.message.clone(),
                read_as_text: i.read_as_text,
            })
        })
        .collect();
    let root = options
        .root
        .canonicalize()
        .unwrap_or_else(|_| options.root.clone());
    Manifest {
        schema_version: crate::store::manifest::SCHEMA_VERSION,
        builder_version: crate::BUILDER_VERSION.to_string(),
        generation_id: String::new(),
        kind,
        created_at_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        root: root.to_string_lossy().into_owned(),
        counts: Counts {
            vectors: if kind == GenerationKind::Full {
                counts.vectors
            } else {
                0
            },
            ..counts.clone()
        },
        embedding,
        files,
        skipped: analysis.walked.skipped.clone(),
        unsupported: analysis.walked.unsupported.clone(),
        issues,
        repository: checkout::identify(&root),
    }
}

/// What a generation stores besides its tables: the quality report and, for temporal
/// builds, git history.
struct Reports {
    quality: serde_json::Value,
    history: Option<history::History>,
}

/// Git history of the indexed files, when the build is temporal.
fn history(
    options: &IndexOptions,
    analysis: &Analysis,
) -> Result<Option<history::History>, BuildError> {
    fail_point(Stage::History)?;
    if !options.temporal {
        return Ok(None);
    }
    let files = analysis.parsed.iter().map(|f| f.path.clone()).collect();
    history::collect(&options.root, &files)
        .map(Some)
        .map_err(BuildError::Refused)
}

/// Writes tables and manifest into staging, validates row counts, then publishes.
async fn write_generation(
    store: &Store,
    analysis: &Analysis,
    entities: &[Entity],
    vectors: Option<(&Vectors<'_>, &Vectors<'_>)>,
    mut manifest: Manifest,
    reports: &Reports,
    keep: usize,
) -> Result<String, BuildError> {
    fail_point(Stage::Store)?;
    let staging: Staging = store.begin().map_err(BuildError::at(Stage::Store))?;
    manifest.generation_id = staging.id.clone();
    tables::write_tables(
        &staging.dir,
        entities,
        &analysis.graph.edges,
        &analysis.chunks,
        vectors.map(|(chunks, _)| chunks),
        vectors.map(|(_, views)| views),
    )
    .await
    .map_err(BuildError::at(Stage::Store))?;
    manifest
        .write(&staging.dir)
        .map_err(BuildError::at(Stage::Store))?;
    quality::write(&staging.dir, &reports.quality).map_err(BuildError::at(Stage::Store))?;
    if let Some(history) = &reports.history {
        history::write(&staging.dir, history).map_err(BuildError::at(Stage::Store))?;
    }
    let counts = tables::row_counts(&tables::location(&staging.dir))
        .await
        .map_err(BuildError::at(Stage::Store))?;
    let present = |v: &Vectors| v.rows.iter().filter(|r| r.is_some()).count();
    let (expected_vectors, expected_views) =
        vectors.map_or((0, 0), |(chunks, views)| (present(chunks), present(views)));
    let expected = tables::RowCounts {
        entities: entities.len(),
        edges: analysis.graph.edges.len(),
        chunks: analysis.chunks.len(),
        vectors: expected_vectors,
        views: expected_views,
    };
    if counts != expected {
        return Err(BuildError::at(Stage::Store)(anyhow::anyhow!(
            "validation failed: wrote {counts:?}, expected {expected:?}"
        )));
    }
    fail_point(Stage::Publish)?;
    let id = store
        .publish(staging)
        .map_err(BuildError::at(Stage::Publish))?;
    store.clean(keep).map_err(BuildError::at(Stage::Publish))?;
    Ok(id)
}

fn summary(
    outcome: Outcome,
    counts: &Counts,
    started: Instant,
    phase_one_seconds: f64,
    timings: Timings,
) -> IndexSummary {
    IndexSummary {
        generation_id: outcome.generation_id,
        kind: outcome.kind,
        published: outcome.published,
        reason: outcome.reason,
        files: counts.files,
        skipped: counts.skipped,
        entities: counts.entities,
        edges_resolved: counts.edges_resolved,
        edges_unresolved: counts.edges_unresolved,
        chunks: counts.chunks,
        embedded: counts.embedded,
        reused: counts.reused,
        seconds: started.elapsed().as_secs_f64(),
        phase_one_seconds,
        lines: counts.lines,
        embed_failures: counts.embed_failures,
        views_embedded: counts.views_embedded,
        views_reused: counts.views_reused,
        note: outcome.note,
        timings,
    }
}
