//! The read side of a generation's tables, for retrieval: everything a loaded generation
//! holds, decoded into plain rows ([`GenerationTables`]), and the two searches that stay in
//! LanceDB ([`ChunkTable`]: full text and nearest vectors over chunks) answering with chunk
//! ids. Retrieval never sees a LanceDB handle or an Arrow batch; this module never ranks.

use crate::error::StoreResult;
use std::collections::HashMap;

use arrow_array::{Array, Float32Array, RecordBatch, StringArray, UInt32Array};
use futures::TryStreamExt;
use lancedb::DistanceType;
use lancedb::index::scalar::FullTextSearchQuery;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::tables::{self, CHUNKS, col};
use crate::graph::Edge;
use crate::parse::{Entity, EntityKind};

/// A chunk as retrieval shows it.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub id: String,
    pub entity_id: String,
    pub path: String,
    pub kind: EntityKind,
    pub start_line: u32,
    pub end_line: u32,
    pub part: u32,
    pub text: String,
}

/// Vectors by id, unit length, in one flat array, searched by brute force: a scan of a few
/// thousand short vectors in memory costs well under a millisecond, a LanceDB scan of the
/// entities table some 6 ms per query (measured on the 5,604-entity bench corpus). Holds every
/// definition's signature view.
#[derive(Default)]
pub struct FlatVectors {
    ids: Vec<String>,
    flat: Vec<f32>,
    dimension: usize,
}

impl FlatVectors {
    /// The index of `vectors` (those of another length than the first are left out).
    pub fn new(views: HashMap<String, Vec<f32>>) -> Self {
        let mut views: Vec<(String, Vec<f32>)> = views.into_iter().collect();
        views.sort_by(|a, b| a.0.cmp(&b.0));
        let dimension = views.first().map_or(0, |(_, v)| v.len());
        let mut out = FlatVectors {
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

    /// Ids by cosine similarity to `query`, best first (ties by id), at most `limit`.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<String> {
        self.nearest_scored(query, limit)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    /// Ids with their cosine similarity to `query`, best first (ties by id), at most `limit`.
    pub fn nearest_scored(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
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
            .map(|(score, i)| (self.ids[i].clone(), score))
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

/// The chunks table, open for searches.
pub struct ChunkTable {
    table: lancedb::Table,
}

/// A search hit: a chunk id and how good a match it is (higher is better; full-text hits
/// score by BM25, vector hits by negated cosine distance).
struct Hit {
    id: String,
    score: f32,
}

impl ChunkTable {
    async fn full_text(&self, words: &str, limit: usize, hidden: &str) -> StoreResult<Vec<Hit>> {
        let mut query = self
            .table
            .query()
            .full_text_search(FullTextSearchQuery::new(words.to_string()));
        if !hidden.is_empty() {
            query = query.only_if(hidden);
        }
        hits(query, limit, "_score", 1.0).await
    }

    async fn nearest(&self, vector: &[f32], limit: usize, hidden: &str) -> StoreResult<Vec<Hit>> {
        let filter = if hidden.is_empty() {
            "has_vector = true".to_string()
        } else {
            format!("has_vector = true AND {hidden}")
        };
        let query = self
            .table
            .query()
            .nearest_to(vector)?
            .distance_type(DistanceType::Cosine)
            .only_if(filter);
        hits(query, limit, "_distance", -1.0).await
    }
}

/// The chunk searches of a generation: one table, or a shared base whose rows for some files
/// are hidden plus a local overlay's table answering for those files. Hits of the two are
/// merged by score (vector distances compare exactly; BM25 scores of two tables only
/// approximately, their term statistics differ).
pub struct ChunkSearch {
    base: ChunkTable,
    overlay: Option<ChunkTable>,
    /// A SQL filter hiding the base's rows of the files the overlay covers ("" for none).
    hidden: String,
}

impl ChunkSearch {
    /// The searches of one generation's table.
    pub fn single(table: ChunkTable) -> Self {
        ChunkSearch {
            base: table,
            overlay: None,
            hidden: String::new(),
        }
    }

    /// The base's rows of `covered` paths hidden, and the overlay's table searched beside it.
    pub fn with_overlay(mut self, overlay: ChunkTable, covered: &[String]) -> Self {
        let hidden = if covered.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = covered
                .iter()
                .map(|p| format!("'{}'", p.replace('\'', "''")))
                .collect();
            format!("path NOT IN ({})", quoted.join(", "))
        };
        self.overlay = Some(overlay);
        self.hidden = hidden;
        self
    }

    /// Chunk ids matching `words` in the full-text index, best first (at most `limit`).
    /// `words` must be plain words: quotes, parentheses and operators are query syntax.
    pub async fn full_text(&self, words: &str, limit: usize) -> StoreResult<Vec<String>> {
        let mut hits = self.base.full_text(words, limit, &self.hidden).await?;
        if let Some(overlay) = &self.overlay {
            hits.extend(overlay.full_text(words, limit, "").await?);
            return Ok(best(hits, limit));
        }
        Ok(hits.into_iter().map(|h| h.id).collect())
    }

    /// The cosine similarities of the `limit` chunks nearest to `vector`, best first (the
    /// base's table only): how close a whole index is to a question.
    pub async fn nearest_similarities(
        &self,
        vector: &[f32],
        limit: usize,
    ) -> StoreResult<Vec<f64>> {
        let hits = self.base.nearest(vector, limit, &self.hidden).await?;
        // Scores are negated cosine distances (1 − cosine).
        Ok(hits.into_iter().map(|h| 1.0 + f64::from(h.score)).collect())
    }

    /// Ids of the chunks with a vector nearest to `vector` (cosine), best first.
    pub async fn nearest(&self, vector: &[f32], limit: usize) -> StoreResult<Vec<String>> {
        let mut hits = self.base.nearest(vector, limit, &self.hidden).await?;
        if let Some(overlay) = &self.overlay {
            hits.extend(overlay.nearest(vector, limit, "").await?);
            return Ok(best(hits, limit));
        }
        Ok(hits.into_iter().map(|h| h.id).collect())
    }
}

/// The ids of the best `limit` hits of two tables (equal scores by id).
fn best(mut hits: Vec<Hit>, limit: usize) -> Vec<String> {
    sort_hits(&mut hits);
    hits.into_iter().take(limit).map(|h| h.id).collect()
}

/// Best first, equal scores by id.
fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
}

/// The `id` and score column of a search's best `limit` rows, best first, equal scores by id;
/// the score is the column times `sign` (so that higher is better). LanceDB orders equal
/// scores as its threads finish, so twice the limit is fetched and the cut made here: rows
/// tied at the cut (duplicated files score alike) no longer change from one run to the next.
async fn hits(
    query: impl QueryBase + ExecutableQuery,
    limit: usize,
    score_column: &str,
    sign: f32,
) -> StoreResult<Vec<Hit>> {
    let batches: Vec<RecordBatch> = query
        .select(Select::columns(&["id"]))
        .limit(limit.saturating_mul(2))
        .execute()
        .await?
        .try_collect()
        .await?;
    let mut hits = Vec::new();
    for batch in &batches {
        let ids: &StringArray = col(batch, "id")?;
        let scores = batch
            .column_by_name(score_column)
            .and_then(|c| c.as_any().downcast_ref::<Float32Array>());
        hits.extend((0..ids.len()).map(|i| Hit {
            id: ids.value(i).to_string(),
            score: scores.map_or(0.0, |s| sign * s.value(i)),
        }));
    }
    sort_hits(&mut hits);
    hits.truncate(limit);
    Ok(hits)
}

/// Everything retrieval holds of one generation in memory, decoded from its tables.
#[derive(Default)]
pub struct DecodedTables {
    pub entities: Vec<Entity>,
    pub edges: Vec<Edge>,
    pub chunks: Vec<ChunkRow>,
    /// `entity id → signature-view vector` (empty in lexical and older generations).
    pub signature_views: HashMap<String, Vec<f32>>,
}

/// Everything retrieval holds of one generation.
pub struct GenerationTables {
    pub decoded: DecodedTables,
    pub chunk_table: ChunkTable,
}

/// Opens and decodes the tables of the generation at `location` (a folder, or a shared
/// store's `s3://…/generations/<id>`).
pub async fn open(location: &str) -> StoreResult<GenerationTables> {
    let db = tables::connect(location).await?;
    let table = db.open_table(CHUNKS).execute().await?;
    Ok(GenerationTables {
        decoded: DecodedTables {
            entities: tables::read_entities(&db).await?,
            edges: tables::read_edges(&db).await?,
            chunks: read_chunk_rows(&table).await?,
            signature_views: tables::read_signature_views(&db).await?,
        },
        chunk_table: ChunkTable { table },
    })
}

/// The chunk columns retrieval shows (not the search text, hash or vector).
const CHUNK_COLUMNS: &[&str] = &[
    "id",
    "entity_id",
    "path",
    "kind",
    "start_line",
    "end_line",
    "part",
    "text",
];

async fn read_chunk_rows(table: &lancedb::Table) -> StoreResult<Vec<ChunkRow>> {
    let batches: Vec<RecordBatch> = table
        .query()
        .select(Select::columns(CHUNK_COLUMNS))
        .execute()
        .await?
        .try_collect()
        .await?;
    let mut rows = Vec::new();
    for batch in &batches {
        let s = |name| col::<StringArray>(batch, name);
        let n = |name| col::<UInt32Array>(batch, name);
        let (id, entity, path, kind, text) = (
            s("id")?,
            s("entity_id")?,
            s("path")?,
            s("kind")?,
            s("text")?,
        );
        let (start, end, part) = (n("start_line")?, n("end_line")?, n("part")?);
        rows.extend((0..batch.num_rows()).map(|i| ChunkRow {
            id: id.value(i).to_string(),
            entity_id: entity.value(i).to_string(),
            path: path.value(i).to_string(),
            kind: EntityKind::parse(kind.value(i)).unwrap_or(EntityKind::Module),
            start_line: start.value(i),
            end_line: end.value(i),
            part: part.value(i),
            text: text.value(i).to_string(),
        }));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_views_rank_by_cosine_with_ties_by_id_and_a_limit() {
        let views = FlatVectors::new(HashMap::from([
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
        assert!(FlatVectors::default().is_empty());
    }
}
