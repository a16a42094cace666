//! A published generation opened for reading: entities, edges and chunk texts in memory with
//! the lookups retrieval needs, plus the chunks table's full-text and vector searches
//! (`store::read`, the only place that reads LanceDB). [`GenerationCache`] reopens when `current` changes (a build in this process, the
//! CLI in another, a watcher), so no request ever uses a stale LanceDB handle; a request in
//! flight keeps the `Arc` it started with and finishes on that generation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::files::FileIndex;
use crate::error::{ErrorCode, KnowcodeError};
use crate::graph::{Edge, EdgeKind};
use crate::parse::Entity;
use crate::store::legacy::Readiness;
use crate::store::read::ChunkTable;
use crate::store::{GenerationKind, Manifest, Store};

pub use crate::store::read::ChunkRow;

/// Every definition's signature-view vector, unit length, in one flat array: a brute-force
/// scan of a few thousand short vectors in memory costs well under a millisecond, a LanceDB
/// scan of the entities table some 6 ms per query (measured on the 5,604-entity bench corpus).
#[derive(Default)]
pub struct SignatureViews {
    ids: Vec<String>,
    flat: Vec<f32>,
    dimension: usize,
}

impl SignatureViews {
    fn new(views: HashMap<String, Vec<f32>>) -> Self {
        let mut views: Vec<(String, Vec<f32>)> = views.into_iter().collect();
        views.sort_by(|a, b| a.0.cmp(&b.0));
        let dimension = views.first().map_or(0, |(_, v)| v.len());
        let mut out = SignatureViews {
            dimension,
            ..Self::default()
        };
        for (id, vector) in views.into_iter().filter(|(_, v)| v.len() == dimension) {
            out.flat.extend(unit(&vector));
            out.ids.push(id);
        }
        out
    }

    /// No signature view has a vector (lexical or older generations).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Entity ids by cosine similarity to `query`, best first (ties by id), at most `limit`.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<String> {
        if query.len() != self.dimension || self.dimension == 0 {
            return Vec::new();
        }
        let query = unit(query);
        let mut scored: Vec<(f32, usize)> = self
            .flat
            .chunks_exact(self.dimension)
            .map(|v| v.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>())
            .zip(0..)
            .collect();
        let order = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        scored
            .into_iter()
            .map(|(_, i)| self.ids[i].clone())
            .collect()
    }
}

fn unit(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return vector.to_vec();
    }
    vector.iter().map(|x| x / norm).collect()
}

/// One generation, read-only.
pub struct LoadedGeneration {
    pub id: String,
    /// The generation's folder (its tables, manifest and reports).
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub root: PathBuf,
    /// The chunks table's full-text and vector searches.
    pub chunk_table: ChunkTable,
    /// Signature-view vectors, held in memory (empty in lexical and older generations).
    pub signature_views: SignatureViews,
    /// Whole-file term statistics for the file-evidence leg.
    pub files: FileIndex,
    pub entities: Vec<Entity>,
    pub edges: Vec<Edge>,
    pub chunks: Vec<ChunkRow>,
    by_id: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
    chunk_by_id: HashMap<String, usize>,
    chunks_of: HashMap<String, Vec<usize>>,
    outgoing: HashMap<String, Vec<usize>>,
    incoming: HashMap<String, Vec<usize>>,
}

impl LoadedGeneration {
    /// A full generation: chunk and signature-view vectors can be searched.
    pub fn has_vectors(&self) -> bool {
        self.manifest.kind == GenerationKind::Full
    }

    /// Calls to `name` that no definition was resolved for (who might be a caller).
    pub fn unresolved_calls_named(&self, name: &str) -> usize {
        self.edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Calls && e.target.is_none() && e.target_name == name)
            .count()
    }

    /// The entity with id `id`.
    pub fn entity(&self, id: &str) -> Option<&Entity> {
        self.by_id.get(id).map(|&i| &self.entities[i])
    }

    /// Entities whose own name is `name`.
    pub fn entities_named(&self, name: &str) -> impl Iterator<Item = &Entity> {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&i| &self.entities[i])
    }

    /// The chunk with id `id`.
    pub fn chunk(&self, id: &str) -> Option<&ChunkRow> {
        self.chunk_index(id).map(|i| &self.chunks[i])
    }

    /// Position of a chunk in [`Self::chunks`].
    pub fn chunk_index(&self, id: &str) -> Option<usize> {
        self.chunk_by_id.get(id).copied()
    }

    /// Position of an entity's first chunk in [`Self::chunks`].
    pub fn first_chunk_index(&self, entity_id: &str) -> Option<usize> {
        self.chunks_of.get(entity_id)?.first().copied()
    }

    /// The entity's chunks in order.
    pub fn chunks_of(&self, entity_id: &str) -> impl Iterator<Item = &ChunkRow> {
        self.chunks_of
            .get(entity_id)
            .into_iter()
            .flatten()
            .map(|&i| &self.chunks[i])
    }

    /// Positions in [`Self::chunks`] of the chunks whose text contains `needle` verbatim, in
    /// chunk order.
    pub fn chunks_containing<'a>(&'a self, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
        (0..self.chunks.len()).filter(move |&i| self.chunks[i].text.contains(needle))
    }

    /// Edges leaving an entity, of one kind.
    pub fn outgoing(&self, id: &str, kind: EdgeKind) -> impl Iterator<Item = &Edge> {
        self.outgoing
            .get(id)
            .into_iter()
            .flatten()
            .map(|&i| &self.edges[i])
            .filter(move |e| e.kind == kind)
    }

    /// Resolved edges arriving at an entity, of one kind.
    pub fn incoming(&self, id: &str, kind: EdgeKind) -> impl Iterator<Item = &Edge> {
        self.incoming
            .get(id)
            .into_iter()
            .flatten()
            .map(|&i| &self.edges[i])
            .filter(move |e| e.kind == kind)
    }

    /// The entity's source as indexed (its chunks inside its own span, overlaps removed;
    /// outline chunks of blocks elsewhere, such as Rust `impl`s, are not its source).
    pub fn source_of(&self, entity_id: &str) -> String {
        let mut out: Vec<&str> = Vec::new();
        let mut last_line = 0;
        let span = self
            .entity(entity_id)
            .map(|e| (e.span.start_line, e.span.end_line));
        let inside = |c: &&ChunkRow| span.is_none_or(|(s, e)| s <= c.start_line && c.end_line <= e);
        for chunk in self.chunks_of(entity_id).filter(inside) {
            let skip = if chunk.part > 0 && chunk.start_line <= last_line {
                (last_line - chunk.start_line + 1) as usize
            } else {
                0
            };
            out.extend(chunk.text.lines().skip(skip));
            last_line = chunk.end_line;
        }
        out.join("\n")
    }

    async fn load(
        store: &Store,
        id: &str,
        working_tree: Option<&std::path::Path>,
    ) -> anyhow::Result<LoadedGeneration> {
        let dir = store.generation_dir(id);
        let manifest = Manifest::read(&dir)?;
        let tables = crate::store::read::open(&dir).await?;
        let root = working_tree.map_or_else(|| PathBuf::from(&manifest.root), |w| w.to_path_buf());
        let mut generation = LoadedGeneration {
            id: id.to_string(),
            dir: dir.clone(),
            root,
            manifest,
            chunk_table: tables.chunk_table,
            signature_views: SignatureViews::new(tables.signature_views),
            files: FileIndex::build(&tables.chunks),
            entities: tables.entities,
            edges: tables.edges,
            chunks: tables.chunks,
            by_id: HashMap::new(),
            by_name: HashMap::new(),
            chunk_by_id: HashMap::new(),
            chunks_of: HashMap::new(),
            outgoing: HashMap::new(),
            incoming: HashMap::new(),
        };
        generation.index();
        Ok(generation)
    }

    fn index(&mut self) {
        for (i, e) in self.entities.iter().enumerate() {
            self.by_id.insert(e.id.clone(), i);
            self.by_name.entry(e.name.clone()).or_default().push(i);
        }
        for (i, c) in self.chunks.iter().enumerate() {
            self.chunk_by_id.insert(c.id.clone(), i);
            self.chunks_of
                .entry(c.entity_id.clone())
                .or_default()
                .push(i);
        }
        for list in self.chunks_of.values_mut() {
            list.sort_by_key(|&i| (self.chunks[i].part, self.chunks[i].start_line));
        }
        for (i, e) in self.edges.iter().enumerate() {
            self.outgoing.entry(e.source.clone()).or_default().push(i);
            if let Some(target) = &e.target {
                self.incoming.entry(target.clone()).or_default().push(i);
            }
        }
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
}

impl GenerationCache {
    /// A cache over the store in `store_dir`; nothing is opened until asked.
    pub fn new(store_dir: PathBuf) -> Self {
        GenerationCache {
            store: Store::at(&store_dir),
            store_dir,
            loaded: Mutex::new(None),
            working_tree: None,
            legacy: tokio::sync::OnceCell::new(),
        }
    }

    /// Generations opened from now on describe `root` instead of the tree they were built from.
    pub fn set_working_tree(&mut self, root: PathBuf) {
        self.working_tree = Some(root);
        *self.loaded.lock().expect("cache lock") = None;
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
        const ATTEMPTS: usize = 3;
        let mut attempt = 0;
        loop {
            let id = match crate::store::legacy::readiness(&self.store_dir) {
                Readiness::Generation(id) => id,
                Readiness::LegacyFlat => return self.legacy().await,
                Readiness::Missing => return Err(KnowcodeError::missing_store(&self.store_dir)),
            };
            if let Some(loaded) = self.cached(&id) {
                return Ok(loaded);
            }
            match LoadedGeneration::load(&self.store, &id, self.working_tree.as_deref()).await {
                Ok(generation) => {
                    let generation = Arc::new(generation);
                    *self.loaded.lock().expect("cache lock") = Some(generation.clone());
                    return Ok(generation);
                }
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
                let generation = LoadedGeneration::load(
                    &Store::at(dir.path()),
                    &id,
                    self.working_tree.as_deref(),
                )
                .await?;
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

    fn cached(&self, id: &str) -> Option<Arc<LoadedGeneration>> {
        self.loaded
            .lock()
            .expect("cache lock")
            .as_ref()
            .filter(|g| g.id == id)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_views_rank_by_cosine_with_ties_by_id_and_a_limit() {
        let views = SignatureViews::new(HashMap::from([
            ("c".to_string(), vec![2.0, 0.0]),
            ("a".to_string(), vec![0.0, 1.0]),
            ("b".to_string(), vec![1.0, 0.0]),
            ("d".to_string(), vec![1.0, 1.0]),
        ]));
        assert_eq!(views.nearest(&[3.0, 0.0], 10), ["b", "c", "d", "a"]);
        assert_eq!(views.nearest(&[3.0, 0.0], 2), ["b", "c"]);
        assert!(
            views.nearest(&[1.0, 0.0, 0.0], 5).is_empty(),
            "wrong dimension"
        );
        assert!(SignatureViews::default().is_empty());
    }
}
