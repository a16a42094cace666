//! The current generation of a store, kept open: [`GenerationCache`] reopens when `current`
//! changes (a build in this process, the CLI in another, a watcher, a teammate's publish to a
//! shared store), so no request ever uses a stale LanceDB handle; a request in flight keeps the
//! `Arc` it started with and finishes on that generation. Through a working tree's overlay it
//! reopens when the tree moves on. It decides when to open; what an open generation holds is
//! `generation.rs`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::freshness::{self, Freshness};
use super::generation::LoadedGeneration;
use super::overlay::{OverlaySettings, Parts};
use crate::error::{ErrorCode, KnowcodeError};
use crate::index::overlay::Skip;
use crate::store::legacy::Readiness;
use crate::store::read::{ChunkSearch, DecodedTables};
use crate::store::shared::{SharedError, SharedStore};
use crate::store::{Manifest, Store, tables};

/// A generation as stored, before any overlay.
struct BaseParts {
    dir: PathBuf,
    manifest: Manifest,
    decoded: DecodedTables,
    search: ChunkSearch,
}

impl BaseParts {
    /// A generation folder on disk.
    async fn local(dir: PathBuf) -> anyhow::Result<BaseParts> {
        let manifest = Manifest::read(&dir)?;
        let tables = crate::store::read::open(&tables::location(&dir)).await?;
        Ok(BaseParts {
            dir,
            manifest,
            decoded: tables.decoded,
            search: ChunkSearch::single(tables.chunk_table),
        })
    }

    /// A shared generation, from its local copy: generations never change, so the first
    /// reader of an id downloads it whole into the cache (about the bytes decoding its rows
    /// from the bucket would read anyway) and every search after that runs locally.
    async fn shared(shared: &SharedStore, id: &str, cache: PathBuf) -> anyhow::Result<BaseParts> {
        shared.fetch_copy(id, &cache).await?;
        BaseParts::local(cache).await
    }
}

/// A generation from its base parts, through the working tree's overlay when one is set
/// (`bounded`: not when it would take more than `index.overlay_max_files` files).
async fn assemble_parts(
    id: &str,
    base: BaseParts,
    working_tree: Option<&std::path::Path>,
    overlay: Option<&OverlaySettings>,
    bounded: bool,
) -> anyhow::Result<LoadedGeneration> {
    let BaseParts {
        dir,
        manifest,
        decoded,
        search,
    } = base;
    let root = working_tree.map_or_else(|| PathBuf::from(&manifest.root), |w| w.to_path_buf());
    let base = Parts::base(manifest, decoded, search);
    let parts = match (working_tree, overlay) {
        (Some(tree), Some(settings)) => {
            super::overlay::apply(id, &dir, base, tree, settings, bounded).await?
        }
        _ => base,
    };
    Ok(LoadedGeneration::from_parts(id, dir, root, parts))
}

/// How long a reader trusts the shared `current` it read before asking again.
const SHARED_POLL: std::time::Duration = std::time::Duration::from_secs(10);

/// A shared store as a reader sees it: the pointer, re-read at most every [`SHARED_POLL`] —
/// at once when this process published meanwhile, and at every request while nothing is
/// published.
struct SharedSource {
    store: SharedStore,
    pointer: Mutex<Option<ReadPointer>>,
}

/// When `current` was read, how many publications this process had made by then, and what
/// it named.
type ReadPointer = (std::time::Instant, u64, String);

impl SharedSource {
    async fn current_id(&self) -> Result<Option<String>, SharedError> {
        let published = crate::store::shared::publications();
        if let Some((at, seen, id)) = self.pointer.lock().expect("pointer lock").clone()
            && at.elapsed() < SHARED_POLL
            && seen == published
        {
            return Ok(Some(id));
        }
        let id = self.store.current().await?.map(|p| p.id);
        *self.pointer.lock().expect("pointer lock") = id
            .clone()
            .map(|id| (std::time::Instant::now(), published, id));
        Ok(id)
    }
}

/// The current generation of a store, reopened whenever `current` names another one.
pub struct GenerationCache {
    store: Store,
    store_dir: PathBuf,
    loaded: Mutex<Option<Arc<LoadedGeneration>>>,
    /// The working tree answers are about, when it is not the tree the index was built from
    /// (an index shared by a team, read from another checkout): freshness compares with it.
    working_tree: Option<PathBuf>,
    /// The legacy flat store, materialised once (its temporary folder lives here).
    legacy: tokio::sync::OnceCell<(tempfile::TempDir, Arc<LoadedGeneration>)>,
    /// Set for a shared store: generations come from object storage, `store_dir` is its
    /// local folder.
    shared: Option<SharedSource>,
    /// Set when answers describe a working tree of their own: its overlay is merged in.
    overlay: Option<OverlaySettings>,
    /// The working tree's freshness when the loaded generation's overlay was built: a
    /// different (stale) answer later means the tree moved on and the overlay is rebuilt.
    overlay_seen: Mutex<Option<Freshness>>,
    /// Held while a generation is opened: concurrent requests (and the server's warm-up) open
    /// it once, and never build the same overlay or download the same generation twice.
    loading: tokio::sync::Mutex<()>,
    /// A server's rule for an overlay past `index.overlay_max_files`: answer from the base
    /// at once and build the overlay in the background (a one-shot CLI only answers).
    background_overlays: bool,
    /// The overlay being built in the background: the generation it is for, and the task.
    pending: Mutex<Option<PendingOverlay>>,
}

/// A generation being assembled through a large overlay in the background.
type PendingOverlay = (
    String,
    tokio::task::JoinHandle<anyhow::Result<LoadedGeneration>>,
);

impl GenerationCache {
    /// A cache over the store in `store_dir`; nothing is opened until asked.
    pub fn new(store_dir: PathBuf) -> Self {
        GenerationCache {
            store: Store::at(&store_dir),
            store_dir,
            loaded: Mutex::new(None),
            working_tree: None,
            legacy: tokio::sync::OnceCell::new(),
            shared: None,
            overlay: None,
            overlay_seen: Mutex::new(None),
            loading: tokio::sync::Mutex::new(()),
            background_overlays: false,
            pending: Mutex::new(None),
        }
    }

    /// Overlays past `index.overlay_max_files` are built in the background (a server) rather
    /// than skipped.
    pub fn build_overlays_in_background(&mut self) {
        self.background_overlays = true;
    }

    /// A cache over a shared store, whose local folder is [`SharedStore::local_dir`].
    pub fn shared(store: SharedStore) -> Self {
        let mut cache = GenerationCache::new(store.local_dir());
        cache.shared = Some(SharedSource {
            store,
            pointer: Mutex::new(None),
        });
        cache
    }

    /// Generations opened from now on describe `root` instead of the tree they were built
    /// from; with `overlay`, the files of `root` that differ from the generation are indexed
    /// locally and answer in place of the generation's.
    pub fn set_working_tree(&mut self, root: PathBuf, overlay: Option<OverlaySettings>) {
        self.working_tree = Some(root);
        self.overlay = overlay;
        *self.loaded.lock().expect("cache lock") = None;
    }

    /// Whether answers describe a working tree of their own (`--root`).
    pub fn has_working_tree(&self) -> bool {
        self.working_tree.is_some()
    }

    /// The store the cache reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The folder holding the store.
    pub fn store_dir(&self) -> &std::path::Path {
        &self.store_dir
    }

    /// The current generation; `missing_knowledge_store` when none was ever published.
    ///
    /// A build may publish (and clean an old generation) between reading `current` and
    /// opening the tables; when a load fails and `current` has moved on meanwhile, the new
    /// generation is loaded instead, so readers never see a half-removed one.
    pub async fn current(&self) -> Result<Arc<LoadedGeneration>, KnowcodeError> {
        if let Some(shared) = &self.shared {
            return self.current_shared(shared).await;
        }
        const ATTEMPTS: usize = 3;
        let mut attempt = 0;
        loop {
            let id = match crate::store::legacy::readiness(&self.store_dir) {
                Readiness::Generation(id) => id,
                Readiness::LegacyFlat => return self.legacy().await,
                Readiness::Missing => return Err(KnowcodeError::missing_store(&self.store_dir)),
            };
            self.adopt_background_overlay(&id).await;
            if let Some(loaded) = self.cached(&id) {
                return Ok(loaded);
            }
            let _loading = self.loading.lock().await;
            if let Some(loaded) = self.cached(&id) {
                return Ok(loaded); // another request opened it meanwhile
            }
            let loaded = match BaseParts::local(self.store.generation_dir(&id)).await {
                Ok(base) => self.assemble(&id, base).await,
                Err(e) => Err(e),
            };
            match loaded {
                Ok(generation) => return Ok(self.keep(generation)),
                Err(e) => {
                    attempt += 1;
                    let moved_on = self.store.current_id().is_some_and(|now| now != id);
                    if !moved_on || attempt >= ATTEMPTS {
                        return Err(KnowcodeError::new(
                            ErrorCode::StoreCorrupt,
                            format!("cannot open generation {id}: {e:#}"),
                        ));
                    }
                }
            }
        }
    }

    async fn assemble(&self, id: &str, base: BaseParts) -> anyhow::Result<LoadedGeneration> {
        let dir = base.dir.clone();
        let tree = self.working_tree.as_deref();
        let mut generation = assemble_parts(id, base, tree, self.overlay.as_ref(), true).await?;
        if let Some(Skip::TooManyFiles { .. }) = &generation.overlay_skipped
            && self.background_overlays
        {
            self.build_overlay_in_background(id, dir);
            generation.overlay_building = true;
        }
        Ok(generation)
    }

    /// Starts assembling generation `id` (its folder `dir`) through the whole overlay, unless
    /// such a build is running already.
    fn build_overlay_in_background(&self, id: &str, dir: PathBuf) {
        let mut pending = self.pending.lock().expect("pending lock");
        if pending
            .as_ref()
            .is_some_and(|(_, task)| !task.is_finished())
        {
            return;
        }
        let (owned_id, tree, settings) = (
            id.to_string(),
            self.working_tree.clone(),
            self.overlay.clone(),
        );
        let task = tokio::spawn(async move {
            let base = BaseParts::local(dir).await?;
            let (tree, settings) = (tree.as_deref(), settings.as_ref());
            assemble_parts(&owned_id, base, tree, settings, false).await
        });
        *pending = Some((id.to_string(), task));
    }

    /// Keeps the generation a background overlay build finished, when it is of `id`.
    async fn adopt_background_overlay(&self, id: &str) {
        let finished = {
            let mut pending = self.pending.lock().expect("pending lock");
            match pending.as_ref() {
                Some((_, task)) if task.is_finished() => pending.take(),
                _ => None,
            }
        };
        let Some((built_for, task)) = finished else {
            return;
        };
        match task.await {
            Ok(Ok(generation)) if built_for == id => {
                tracing::info!("the working tree's overlay is ready; answers use it");
                self.keep(generation);
            }
            Ok(Ok(_)) => {} // the store moved on meanwhile
            Ok(Err(e)) => tracing::warn!("the overlay built in the background failed: {e:#}"),
            Err(e) => tracing::warn!("the overlay's background task failed: {e}"),
        }
    }

    /// The shared store's current generation, from the local cache when it holds it.
    async fn current_shared(
        &self,
        shared: &SharedSource,
    ) -> Result<Arc<LoadedGeneration>, KnowcodeError> {
        let id = shared.current_id().await?.ok_or_else(|| {
            KnowcodeError::new(
                ErrorCode::MissingKnowledgeStore,
                format!("nothing published in {} yet", shared.store.uri()),
            )
        })?;
        self.adopt_background_overlay(&id).await;
        if let Some(loaded) = self.cached(&id) {
            return Ok(loaded);
        }
        let _loading = self.loading.lock().await;
        if let Some(loaded) = self.cached(&id) {
            return Ok(loaded); // another request opened it meanwhile
        }
        let base = BaseParts::shared(&shared.store, &id, self.store.cached_copy(&id))
            .await
            .map_err(|e| shared_failure(&shared.store, &id, e))?;
        let generation = self
            .assemble(&id, base)
            .await
            .map_err(|e| shared_failure(&shared.store, &id, e))?;
        self.store.prune_caches(&id);
        Ok(self.keep(generation))
    }

    /// No generation published: the legacy `knowcode_knowledge.json`, materialised once.
    async fn legacy(&self) -> Result<Arc<LoadedGeneration>, KnowcodeError> {
        let (_, generation) = self
            .legacy
            .get_or_try_init(|| async {
                let dir = tempfile::tempdir()?;
                let id = crate::store::legacy::materialise(
                    &self.store_dir,
                    dir.path(),
                    crate::config::IndexConfig::default().max_chunk_tokens,
                )
                .await?;
                let base = BaseParts::local(Store::at(dir.path()).generation_dir(&id)).await?;
                let generation = self.assemble(&id, base).await?;
                anyhow::Ok((dir, Arc::new(generation)))
            })
            .await
            .map_err(|e| {
                KnowcodeError::new(
                    ErrorCode::StoreCorrupt,
                    format!(
                        "cannot read the legacy {}: {e:#}",
                        crate::store::legacy::KNOWLEDGE_JSON
                    ),
                )
            })?;
        Ok(generation.clone())
    }

    /// The loaded generation if it is `id` — and, through an overlay, if the working tree did
    /// not move on since the overlay was built.
    fn cached(&self, id: &str) -> Option<Arc<LoadedGeneration>> {
        let loaded = self
            .loaded
            .lock()
            .expect("cache lock")
            .as_ref()
            .filter(|g| g.id == id)
            .cloned()?;
        if self.overlay.is_none() {
            return Some(loaded);
        }
        let now = freshness::check(&loaded);
        let seen = self.overlay_seen.lock().expect("overlay lock").clone();
        if now.is_stale && seen.as_ref() != Some(&now) {
            return None;
        }
        Some(loaded)
    }

    /// Keeps a freshly opened generation (and, through an overlay, the tree's state it saw).
    fn keep(&self, generation: LoadedGeneration) -> Arc<LoadedGeneration> {
        let generation = Arc::new(generation);
        if self.overlay.is_some() {
            freshness::invalidate();
            *self.overlay_seen.lock().expect("overlay lock") = Some(freshness::check(&generation));
        }
        *self.loaded.lock().expect("cache lock") = Some(generation.clone());
        generation
    }
}

/// A failure opening a shared generation: the store's own typed error when it was the
/// object storage that failed, else `store_corrupt`.
fn shared_failure(store: &SharedStore, id: &str, error: anyhow::Error) -> KnowcodeError {
    match error.downcast_ref::<SharedError>() {
        Some(shared) => shared.to_knowcode(),
        None => KnowcodeError::new(
            ErrorCode::StoreCorrupt,
            crate::store::shared::mask_secrets(&format!(
                "cannot open generation {id} of {}: {error:#}",
                store.uri()
            )),
        ),
    }
}
