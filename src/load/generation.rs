//! A published generation opened for reading: entities, edges and chunk texts in memory with
//! the lookups ranking needs, plus the chunks table's full-text and vector searches
//! (`store::read`, the only place that reads LanceDB). It is assembled from the stored parts
//! and, when answers describe another working tree, that tree's overlay. When to reopen it is
//! `cache.rs`'s concern.

use std::collections::HashMap;
use std::path::PathBuf;

use super::files::{Bm25, FileIndex, unit_index};
use super::overlay::{OverlayNote, Parts};
use crate::graph::{Edge, EdgeKind};
use crate::index::overlay::Skip;
use crate::parse::Entity;
use crate::store::read::ChunkSearch;
use crate::store::{GenerationKind, Manifest};

pub use crate::store::read::ChunkRow;
/// Every definition's signature-view vector, held in memory (see [`FlatVectors`]).
pub use crate::store::read::FlatVectors as SignatureViews;

/// One generation, read-only.
pub struct LoadedGeneration {
    pub id: String,
    /// The generation's folder (its tables, manifest and reports).
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub root: PathBuf,
    /// The chunks table's full-text and vector searches (the base's and an overlay's).
    pub chunk_table: ChunkSearch,
    /// Files of the working tree a local overlay answers for (0: none).
    pub overlay_files: usize,
    /// Why the working tree's overlay was not applied (None: applied, or no overlay asked).
    pub overlay_skipped: Option<Skip>,
    /// A server is building the skipped overlay in the background.
    pub overlay_building: bool,
    /// Signature-view vectors, held in memory (empty in lexical and older generations).
    pub signature_views: SignatureViews,
    /// Whole-file term statistics for the file-evidence leg.
    pub files: FileIndex,
    /// Per-unit (function and method) term statistics for the unit leg of reports.
    pub units: Bm25,
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

    /// What payloads say when the working tree's overlay is not applied.
    pub fn overlay_note(&self) -> Option<OverlayNote> {
        let skip = self.overlay_skipped.as_ref()?;
        Some(super::overlay::note_of(skip, self.overlay_building))
    }

    /// Whether the working tree is not a checkout of the indexed repository (answers come
    /// from the index alone and the tree is not compared with it).
    pub fn tree_unrelated(&self) -> bool {
        matches!(self.overlay_skipped, Some(Skip::NotCheckout(_)))
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

    /// Entities whose own name ends with `_` and then `suffix` (`for_assigned_stmts` for
    /// `assigned_stmts`), in entity order.
    pub fn entities_suffixed<'a>(&'a self, suffix: &'a str) -> impl Iterator<Item = &'a Entity> {
        let mut found: Vec<usize> = self
            .by_name
            .iter()
            .filter(|(name, _)| {
                name.strip_suffix(suffix)
                    .is_some_and(|head| head.len() > 1 && head.ends_with('_'))
            })
            .flat_map(|(_, entities)| entities.iter().copied())
            .collect();
        found.sort_unstable();
        found.into_iter().map(|i| &self.entities[i])
    }

    /// Position of a chunk in [`Self::chunks`].
    pub fn chunk_index(&self, id: &str) -> Option<usize> {
        self.chunk_by_id.get(id).copied()
    }

    /// Position of an entity's first chunk in [`Self::chunks`].
    pub fn first_chunk_index(&self, entity_id: &str) -> Option<usize> {
        self.chunks_of.get(entity_id)?.first().copied()
    }

    /// Positions in [`Self::chunks`] of the entity's chunks, in order.
    pub fn chunk_indices_of(&self, entity_id: &str) -> impl Iterator<Item = usize> + '_ {
        self.chunks_of.get(entity_id).into_iter().flatten().copied()
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

    /// A generation from its parts (as stored, or with a working tree's overlay merged in),
    /// answering about the tree at `root`.
    pub(super) fn from_parts(
        id: &str,
        dir: PathBuf,
        root: PathBuf,
        parts: Parts,
    ) -> LoadedGeneration {
        let decoded = parts.decoded;
        let mut generation = LoadedGeneration {
            id: id.to_string(),
            dir,
            root,
            manifest: parts.manifest,
            chunk_table: parts.search,
            overlay_files: parts.overlay_files,
            overlay_skipped: parts.skipped,
            overlay_building: false,
            signature_views: SignatureViews::new(decoded.signature_views),
            files: FileIndex::build(&decoded.chunks),
            units: unit_index(&decoded.chunks),
            entities: decoded.entities,
            edges: decoded.edges,
            chunks: decoded.chunks,
            by_id: HashMap::new(),
            by_name: HashMap::new(),
            chunk_by_id: HashMap::new(),
            chunks_of: HashMap::new(),
            outgoing: HashMap::new(),
            incoming: HashMap::new(),
        };
        generation.index();
        generation
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
