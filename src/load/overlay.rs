//! Reading a generation through a working tree's overlay: the overlay (`index::overlay`, built
//! or reopened here when a generation is opened for a `--root` that differs from it) replaces
//! the base's entities, edges, chunks and signature views of every file it covers, deleted
//! files vanish, and the chunk searches run over both tables. This module merges; it never
//! decides what differs (that is `index::overlay`) and never ranks.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::KnowcodeError;
use crate::graph::Resolution;
use crate::index::overlay::{self as build, Opened, Overlay, Skip};
use crate::store::manifest::Counts;
use crate::store::read::{ChunkSearch, DecodedTables};
use crate::store::{GenerationKind, Manifest, tables};

/// The retriever's model slot, shared so an overlay embeds with the model queries use.
pub type EmbedSlot = Arc<std::sync::Mutex<Option<Result<Embedder, KnowcodeError>>>>;

/// What an overlay is built with.
#[derive(Clone)]
pub struct OverlaySettings {
    pub config: Config,
    pub embedder: EmbedSlot,
    /// The folder overlays are kept in (one subfolder per base generation and tree).
    pub dir: PathBuf,
}

/// A generation's parts before (and after) an overlay is applied.
pub struct Parts {
    pub manifest: Manifest,
    pub decoded: DecodedTables,
    pub search: ChunkSearch,
    /// Files the overlay answers for (0: no overlay).
    pub overlay_files: usize,
    /// Why the working tree's overlay was not applied, when it was not.
    pub skipped: Option<Skip>,
}

impl Parts {
    /// The base's parts as they are.
    pub fn base(manifest: Manifest, decoded: DecodedTables, search: ChunkSearch) -> Parts {
        Parts {
            manifest,
            decoded,
            search,
            overlay_files: 0,
            skipped: None,
        }
    }
}

/// Why answers do not go through the working tree's overlay (`reason`: `not_a_checkout` or
/// `too_many_files`), with a hint naming what to do.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OverlayNote {
    /// Always false: the note exists only when the overlay is not applied.
    pub applied: bool,
    pub reason: &'static str,
    pub detail: String,
    /// A server is building the overlay; answers use it once it is ready.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub building: bool,
    pub hint: String,
}

/// What payloads say when answers do not go through the working tree's overlay (no machine
/// path: the log says which folder).
pub fn note_of(skip: &Skip, building: bool) -> OverlayNote {
    match skip {
        Skip::NotCheckout(why) => OverlayNote {
            applied: false,
            reason: "not_a_checkout",
            detail: format!(
                "the working tree is not a checkout of the indexed repository: {}; answers come from the index alone",
                why.describe()
            ),
            building: false,
            hint: "start knowcode in your checkout of the indexed repository, or pass --root <checkout>".into(),
        },
        Skip::TooManyFiles { files, bound } => OverlayNote {
            applied: false,
            reason: "too_many_files",
            detail: format!(
                "{files} files of the working tree differ from the index (index.overlay_max_files = {bound}); answers come from the index alone{}",
                if building { " while the overlay is built in the background" } else { "" }
            ),
            building,
            hint: "a server (knowcode mcp) builds the overlay in the background; raise index.overlay_max_files to wait for it, or pass --root <checkout> nearer the indexed commit".into(),
        },
    }
}

/// Why an overlay could not be built or opened.
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    #[error(transparent)]
    Build(#[from] crate::error::BuildError),
    #[error(transparent)]
    Store(#[from] crate::error::StoreError),
    #[error("the overlay's build thread failed: {0}")]
    Thread(#[from] tokio::task::JoinError),
}

/// The base's parts with the overlay of `tree` merged in (unchanged when nothing differs, and
/// when `tree` is not a checkout of the indexed repository or — `bounded` — holds more new
/// differing files than `index.overlay_max_files`: `skipped` says which).
pub async fn apply(
    base_id: &str,
    base_dir: &Path,
    base: Parts,
    tree: &Path,
    settings: &OverlaySettings,
    bounded: bool,
) -> Result<Parts, OverlayError> {
    let Parts {
        manifest,
        decoded,
        search,
        ..
    } = base;
    let embed = manifest.kind == GenerationKind::Full
        && manifest
            .embedding
            .as_ref()
            .is_some_and(|info| crate::embed::check_compatible(info, &settings.config).is_ok());
    let max_files = bounded.then_some(settings.config.index.overlay_max_files);
    let opened = {
        let (id, base, tree) = (base_id.to_string(), manifest.clone(), tree.to_path_buf());
        let (config, dir) = (settings.config.clone(), settings.dir.clone());
        tokio::task::spawn_blocking(move || {
            build::open_or_plan(&id, &base, &tree, &config, &dir, embed, max_files)
        })
        .await??
    };
    let overlay = match opened {
        Opened::Unchanged => return Ok(Parts::base(manifest, decoded, search)),
        Opened::Skipped(skip) => {
            let detail = note_of(&skip, false).detail;
            tracing::info!("overlay not applied to {}: {detail}", tree.display());
            return Ok(Parts {
                skipped: Some(skip),
                ..Parts::base(manifest, decoded, search)
            });
        }
        Opened::Reopened(overlay) => overlay,
        Opened::Planned(plan) => build_overlay(*plan, embed.then_some(base_dir), settings).await?,
    };
    let opened = crate::store::read::open(&tables::location(&overlay.dir)).await?;
    let covered = overlay.differences.covered();
    Ok(Parts {
        manifest: merged_manifest(manifest, &overlay),
        decoded: merge(decoded, opened.decoded, &covered),
        search: search.with_overlay(opened.chunk_table, &covered),
        overlay_files: covered.len(),
        skipped: None,
    })
}

/// Embeds (when the base at `embed_over` has vectors and the model loads; vectors of texts
/// the base embedded are reused) and writes a planned overlay.
async fn build_overlay(
    plan: build::Plan,
    embed_over: Option<&Path>,
    settings: &OverlaySettings,
) -> Result<Overlay, OverlayError> {
    let started = std::time::Instant::now();
    let chunks = plan.chunk_count();
    let (plan, vectors) = match embed_over {
        Some(base_dir) => {
            let mut reusable = tables::read_vectors(base_dir).await.unwrap_or_else(|e| {
                tracing::warn!("overlay: the base's vectors are unreadable ({e}); embedding all");
                Default::default()
            });
            // The tree's previous overlay: an edit re-embeds what it changed, not the overlay.
            if plan.dir().exists()
                && let Ok(previous) = tables::read_vectors(plan.dir()).await
            {
                reusable.extend(previous);
            }
            let slot = Arc::clone(&settings.embedder);
            let config = settings.config.clone();
            tokio::task::spawn_blocking(move || {
                let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
                let embedder = slot.get_or_insert_with(|| Embedder::load(&config));
                let vectors = match embedder.as_mut() {
                    Ok(embedder) => {
                        let dimension = embedder.info().dimension;
                        Some((build::embed(&plan, embedder, &reusable), dimension))
                    }
                    Err(why) => {
                        tracing::warn!("overlay without vectors: {}", why.message);
                        None
                    }
                };
                (plan, vectors)
            })
            .await?
        }
        None => (plan, None),
    };
    let (vectors, dimension, embedded) = match vectors {
        Some(((chunks, views, embedded), dimension)) => {
            (Some((chunks, views)), dimension, embedded)
        }
        None => (None, 0, 0),
    };
    let overlay = build::write(Box::new(plan), vectors, dimension).await?;
    tracing::info!(
        "overlay: {} file(s) differ from the index ({chunks} chunks, {embedded} texts embedded) — built in {:.2}s",
        overlay.differences.covered().len(),
        started.elapsed().as_secs_f64()
    );
    Ok(overlay)
}

/// The base manifest with the overlay's file records in place of the covered files' (so
/// freshness compares the tree with what answers describe).
fn merged_manifest(mut manifest: Manifest, overlay: &Overlay) -> Manifest {
    for path in overlay.differences.covered() {
        manifest.files.remove(&path);
    }
    manifest.files.extend(overlay.files.clone());
    manifest.counts = Counts {
        files: manifest.files.len(),
        ..manifest.counts
    };
    manifest
}

/// The base's rows minus those of `covered` files, plus the overlay's rows. An overlay
/// reference its own files could not resolve is resolved against the merged entities when
/// exactly one has that name.
pub fn merge(base: DecodedTables, overlay: DecodedTables, covered: &[String]) -> DecodedTables {
    let covered: HashSet<&str> = covered.iter().map(String::as_str).collect();
    let entities = replaced(base.entities, overlay.entities, &covered, |e| &e.path);
    let kept: HashSet<&str> = entities.iter().map(|e| e.id.as_str()).collect();
    let mut signature_views = base.signature_views;
    signature_views.retain(|id, _| kept.contains(id.as_str()));
    signature_views.extend(overlay.signature_views);
    let chunks = replaced(base.chunks, overlay.chunks, &covered, |c| &c.path);
    let mut by_name: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for entity in &entities {
        by_name
            .entry(entity.name.as_str())
            .or_default()
            .push(entity.id.as_str());
    }
    let overlay_edges = overlay.edges.into_iter().map(|mut edge| {
        if edge.target.is_none() {
            let name = edge
                .target_name
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(&edge.target_name);
            if let Some([only]) = by_name.get(name).map(Vec::as_slice) {
                edge.target = Some(only.to_string());
                edge.resolution = Resolution::UniqueName;
                edge.candidates = 1;
            }
        }
        edge
    });
    let edges = replaced(base.edges, overlay_edges.collect(), &covered, |e| &e.path);
    DecodedTables {
        entities,
        edges,
        chunks,
        signature_views,
    }
}

/// `base`'s rows whose file is not `covered`, then `overlay`'s.
fn replaced<T>(
    base: Vec<T>,
    overlay: Vec<T>,
    covered: &HashSet<&str>,
    path: impl Fn(&T) -> &String,
) -> Vec<T> {
    let mut rows: Vec<T> = base
        .into_iter()
        .filter(|row| !covered.contains(path(row).as_str()))
        .collect();
    rows.extend(overlay);
    rows
}
