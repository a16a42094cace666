//! What a ranking hands on: each ranked entity with its best chunk, its score and the
//! evidence behind it, the files its evidence pooled into, and how the question was answered.
//! Ranking (`rank`, `rescore`) writes these; packing, sufficiency and payloads read them. This
//! module holds the shapes and the one reading of them both sides need (a hit's place among
//! its file's hits); it never ranks.

use std::collections::HashMap;

use serde::Serialize;

use super::question::QueryShape;
use crate::load::generation::LoadedGeneration;

/// How a query was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetrievalMode {
    Hybrid,
    Lexical,
    Exact,
}

/// Why an entity ranked where it did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_rank: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub name_match: bool,
    /// A traceback frame or `path:line` of the question lies in this entity.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub frame: bool,
    /// An error message, quoted output, a flag or quoted values of the question are written in
    /// this entity.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub message: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub graph_neighbour: bool,
    /// The same name in a companion file of a strong hit (a header and its source).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub companion: bool,
    /// Rank of the unit (function or method) by BM25 over units' own text (reports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_rank: Option<u32>,
    /// Rank of the unit among its file's units by BM25 over their own text (reports, the
    /// leading files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_in_file_rank: Option<u32>,
    /// Rank of the entity's file in the pooled file evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_rank: Option<u32>,
}

/// One ranked entity with its best chunk.
#[derive(Debug, Clone)]
pub struct Hit {
    pub entity_id: String,
    /// Index into `LoadedGeneration::chunks`.
    pub chunk: usize,
    pub score: f64,
    pub evidence: Evidence,
}

impl Hit {
    /// A hit on `entity_id` through `chunk` with no score and no evidence yet: the caller
    /// credits it.
    pub fn unscored(entity_id: &str, chunk: usize) -> Hit {
        Hit {
            entity_id: entity_id.to_string(),
            chunk,
            score: 0.0,
            evidence: Evidence::default(),
        }
    }
}

/// A file with its pooled evidence.
#[derive(Debug, Clone, Serialize)]
pub struct RankedFile {
    pub path: String,
    pub score: f64,
}

/// The ranked answer plus how it was produced.
#[derive(Debug, Clone)]
pub struct Ranking {
    pub hits: Vec<Hit>,
    /// Files by pooled evidence, best first (empty for exact searches).
    pub files: Vec<RankedFile>,
    pub mode: RetrievalMode,
    /// Weight the lexical leg got for this query.
    pub lexical_weight: f64,
    pub shape: QueryShape,
    /// Problems with one leg that did not stop the others.
    pub errors: Vec<String>,
}

/// Each hit's index with its place among its file's hits (0 = the file's best), best hit
/// first. With `units_first`, a file's functions and methods take its first places and its
/// types and module code the places after them: a report's fix edits a unit, so the file's
/// evidence goes to the unit that holds it rather than to the class around it.
pub fn places_in_file(
    generation: &LoadedGeneration,
    hits: &[Hit],
    units_first: bool,
) -> Vec<(usize, i32)> {
    let container = |i: usize| units_first && !generation.chunks[hits[i].chunk].kind.is_unit();
    places_by(hits, container, |i| {
        generation.chunks[hits[i].chunk].path.as_str()
    })
}

/// Each hit's index with its place among the hits of its `group` (0 = the group's best),
/// best hit first; hits for which `last` holds come after the others in their group.
pub fn places_by<K: std::hash::Hash + Eq>(
    hits: &[Hit],
    last: impl Fn(usize) -> bool,
    group: impl Fn(usize) -> K,
) -> Vec<(usize, i32)> {
    let mut order: Vec<usize> = (0..hits.len()).collect();
    order.sort_by(|&a, &b| {
        last(a)
            .cmp(&last(b))
            .then_with(|| hits[b].score.total_cmp(&hits[a].score))
            .then_with(|| hits[a].entity_id.cmp(&hits[b].entity_id))
    });
    let mut seen: HashMap<K, i32> = HashMap::new();
    order
        .into_iter()
        .map(|i| {
            let nth = seen.entry(group(i)).or_insert(0);
            *nth += 1;
            (i, *nth - 1)
        })
        .collect()
}
