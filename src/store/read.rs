//! The read side of a generation's tables, for retrieval: everything a loaded generation
//! holds, decoded into plain rows ([`GenerationTables`]), and the two searches that stay in
//! LanceDB ([`ChunkTable`]: full text and nearest vectors over chunks) answering with chunk
//! ids. Retrieval never sees a LanceDB handle or an Arrow batch; this module never ranks.

use crate::error::StoreResult;
use std::collections::HashMap;
use std::path::Path;

use arrow_array::{Array, RecordBatch, StringArray, UInt32Array};
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

/// The chunks table, open for searches.
pub struct ChunkTable {
    table: lancedb::Table,
}

impl ChunkTable {
    /// Chunk ids matching `words` in the full-text index, best first (at most `limit`).
    /// `words` must be plain words: quotes, parentheses and operators are query syntax.
    pub async fn full_text(&self, words: &str, limit: usize) -> StoreResult<Vec<String>> {
        let query = self
            .table
            .query()
            .full_text_search(FullTextSearchQuery::new(words.to_string()));
        best_ids(query, limit).await
    }

    /// Ids of the chunks with a vector nearest to `vector` (cosine), best first.
    pub async fn nearest(&self, vector: &[f32], limit: usize) -> StoreResult<Vec<String>> {
        let query = self
            .table
            .query()
            .nearest_to(vector)?
            .distance_type(DistanceType::Cosine)
            .only_if("has_vector = true");
        best_ids(query, limit).await
    }
}

/// The `id` column of a search's first `limit` rows, in the search's order.
async fn best_ids(
    query: impl QueryBase + ExecutableQuery,
    limit: usize,
) -> StoreResult<Vec<String>> {
    let batches: Vec<RecordBatch> = query
        .select(Select::columns(&["id"]))
        .limit(limit)
        .execute()
        .await?
        .try_collect()
        .await?;
    ids_of(&batches)
}

fn ids_of(batches: &[RecordBatch]) -> StoreResult<Vec<String>> {
    let mut ids = Vec::new();
    for batch in batches {
        let column: &StringArray = col(batch, "id")?;
        ids.extend((0..column.len()).map(|i| column.value(i).to_string()));
    }
    Ok(ids)
}

/// Everything retrieval holds of one generation.
pub struct GenerationTables {
    pub entities: Vec<Entity>,
    pub edges: Vec<Edge>,
    pub chunks: Vec<ChunkRow>,
    pub chunk_table: ChunkTable,
    /// `entity id → signature-view vector` (empty in lexical and older generations).
    pub signature_views: HashMap<String, Vec<f32>>,
}

/// Opens and decodes the tables of the generation in `dir`.
pub async fn open(dir: &Path) -> StoreResult<GenerationTables> {
    let db = tables::connect(dir).await?;
    let table = db.open_table(CHUNKS).execute().await?;
    Ok(GenerationTables {
        entities: tables::read_entities(&db).await?,
        edges: tables::read_edges(&db).await?,
        chunks: read_chunk_rows(&table).await?,
        signature_views: tables::read_signature_views(&db).await?,
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
