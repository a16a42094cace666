//! The LanceDB tables of a generation and their Arrow layouts: `entities`, `edges`, `chunks`
//! (the last with a code-aware full-text index). In a `full` generation `chunks` has a vector
//! per chunk and `entities` one per definition's signature view.
//! Writes happen once per generation, in one batch per table (no version pile-up); reads
//! decode whole tables back into the pipeline's types.

use crate::error::{StoreError, StoreResult};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    Array, BooleanArray, FixedSizeListArray, Float32Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;
use lancedb::index::Index;
use lancedb::index::scalar::FtsIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use crate::chunk::{Chunk, hashed_signature_view};
use crate::graph::{Edge, EdgeKind, Resolution};
use crate::parse::{Entity, EntityKind, Span};
use crate::text::code_search_text;

/// Table of definitions (one row per entity, with its signature-view vector).
pub const ENTITIES: &str = "entities";
/// Table of graph edges.
pub const EDGES: &str = "edges";
/// Table of chunks (text, search text, vector).
pub const CHUNKS: &str = "chunks";
const LANCE_DIR: &str = "lance";

fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

fn u32f(name: &str) -> Field {
    Field::new(name, DataType::UInt32, false)
}

/// Opens the LanceDB database of a generation folder (a shared store's generations are read
/// from a local copy too: LanceDB is built without object storage).
pub async fn connect(location: &str) -> lancedb::Result<lancedb::Connection> {
    let uri = format!("{}/{LANCE_DIR}", location.trim_end_matches('/'));
    lancedb::connect(&uri).execute().await
}

/// A generation folder as a [`connect`] location.
pub fn location(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

fn entities_batch(entities: &[Entity], views: Option<&Vectors>) -> StoreResult<RecordBatch> {
    let mut fields = vec![
        utf8("id", false),
        utf8("parent", true),
        utf8("kind", false),
        utf8("subkind", true),
        utf8("name", false),
        utf8("qualified_name", false),
        utf8("language", false),
        utf8("path", false),
        u32f("start_line"),
        u32f("start_col"),
        u32f("end_line"),
        u32f("end_col"),
        Field::new("start_byte", DataType::UInt64, false),
        Field::new("end_byte", DataType::UInt64, false),
        utf8("signature", false),
        utf8("doc", true),
        utf8("content_hash", false),
        utf8("search_text", false),
        utf8("view_hash", true),
    ];
    let s = |f: fn(&Entity) -> &str| {
        Arc::new(StringArray::from_iter_values(entities.iter().map(f))) as Arc<dyn Array>
    };
    let opt = |f: fn(&Entity) -> Option<&str>| {
        Arc::new(entities.iter().map(f).collect::<StringArray>()) as Arc<dyn Array>
    };
    let n = |f: fn(&Span) -> u32| {
        Arc::new(UInt32Array::from_iter_values(
            entities.iter().map(|e| f(&e.span)),
        )) as Arc<dyn Array>
    };
    let b = |f: fn(&Span) -> usize| {
        Arc::new(UInt64Array::from_iter_values(
            entities.iter().map(|e| f(&e.span) as u64),
        )) as Arc<dyn Array>
    };
    let search: StringArray = entities
        .iter()
        .map(|e| {
            Some(code_search_text(&format!(
                "{} {} {}",
                e.qualified_name,
                e.signature,
                e.doc.as_deref().unwrap_or("")
            )))
        })
        .collect();
    let view_hashes: StringArray = entities
        .iter()
        .map(|e| hashed_signature_view(e).map(|(hash, _)| hash))
        .collect();
    let mut columns = vec![
        s(|e| &e.id),
        opt(|e| e.parent.as_deref()),
        s(|e| e.kind.as_str()),
        opt(|e| e.subkind.as_deref()),
        s(|e| &e.name),
        s(|e| &e.qualified_name),
        s(|e| &e.language),
        s(|e| &e.path),
        n(|s| s.start_line),
        n(|s| s.start_col),
        n(|s| s.end_line),
        n(|s| s.end_col),
        b(|s| s.start_byte),
        b(|s| s.end_byte),
        s(|e| &e.signature),
        opt(|e| e.doc.as_deref()),
        s(|e| &e.content_hash),
        Arc::new(search),
        Arc::new(view_hashes),
    ];
    if let Some(views) = views {
        if views.rows.len() != entities.len() {
            return Err(StoreError::Layout("entity/vector count mismatch".into()));
        }
        push_vector_columns(&mut fields, &mut columns, views)?;
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

fn edges_batch(edges: &[Edge]) -> StoreResult<RecordBatch> {
    let schema = Schema::new(vec![
        utf8("source", false),
        utf8("target", true),
        utf8("target_name", false),
        utf8("kind", false),
        utf8("path", false),
        u32f("line"),
        utf8("resolution", false),
        u32f("candidates"),
    ]);
    let s = |f: fn(&Edge) -> &str| {
        Arc::new(StringArray::from_iter_values(edges.iter().map(f))) as Arc<dyn Array>
    };
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            s(|e| &e.source),
            Arc::new(
                edges
                    .iter()
                    .map(|e| e.target.as_deref())
                    .collect::<StringArray>(),
            ),
            s(|e| &e.target_name),
            s(|e| e.kind.as_str()),
            s(|e| &e.path),
            Arc::new(UInt32Array::from_iter_values(edges.iter().map(|e| e.line))),
            s(|e| e.resolution.as_str()),
            Arc::new(UInt32Array::from_iter_values(
                edges.iter().map(|e| e.candidates),
            )),
        ],
    )?)
}

/// Vectors for a `full` generation: one per chunk (zeros with `has_vector = false` where the
/// model failed on that chunk).
pub struct Vectors<'a> {
    pub dimension: usize,
    pub rows: &'a [Option<Vec<f32>>],
}

/// Appends `has_vector` and `vector` (zeros where `has_vector` is false).
fn push_vector_columns(
    fields: &mut Vec<Field>,
    columns: &mut Vec<Arc<dyn Array>>,
    vectors: &Vectors,
) -> StoreResult<()> {
    let dim = vectors.dimension;
    let mut flat = Vec::with_capacity(vectors.rows.len() * dim);
    for row in vectors.rows {
        match row {
            Some(v) if v.len() == dim => flat.extend_from_slice(v),
            Some(v) => {
                return Err(StoreError::Layout(format!(
                    "vector of dimension {} where {dim} was expected",
                    v.len()
                )));
            }
            None => flat.extend(std::iter::repeat_n(0.0, dim)),
        }
    }
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let list = FixedSizeListArray::try_new(
        item.clone(),
        dim as i32,
        Arc::new(Float32Array::from(flat)),
        None,
    )?;
    fields.push(Field::new("has_vector", DataType::Boolean, false));
    fields.push(Field::new(
        "vector",
        DataType::FixedSizeList(item, dim as i32),
        false,
    ));
    columns.push(Arc::new(BooleanArray::from(
        vectors.rows.iter().map(|r| r.is_some()).collect::<Vec<_>>(),
    )));
    columns.push(Arc::new(list));
    Ok(())
}

fn chunks_batch(chunks: &[Chunk], vectors: Option<&Vectors>) -> StoreResult<RecordBatch> {
    let mut fields = vec![
        utf8("id", false),
        utf8("entity_id", false),
        utf8("path", false),
        utf8("qualified_name", false),
        utf8("kind", false),
        utf8("language", false),
        u32f("start_line"),
        u32f("end_line"),
        u32f("part"),
        utf8("text", false),
        utf8("search_text", false),
        utf8("content_hash", false),
    ];
    let s = |f: fn(&Chunk) -> &str| {
        Arc::new(StringArray::from_iter_values(chunks.iter().map(f))) as Arc<dyn Array>
    };
    let n = |f: fn(&Chunk) -> u32| {
        Arc::new(UInt32Array::from_iter_values(chunks.iter().map(f))) as Arc<dyn Array>
    };
    let mut columns = vec![
        s(|c| &c.id),
        s(|c| &c.entity_id),
        s(|c| &c.path),
        s(|c| &c.qualified_name),
        s(|c| c.kind.as_str()),
        s(|c| &c.language),
        n(|c| c.start_line),
        n(|c| c.end_line),
        n(|c| c.part),
        s(|c| &c.text),
        s(|c| &c.search_text),
        s(|c| &c.content_hash),
    ];
    if let Some(vectors) = vectors {
        if vectors.rows.len() != chunks.len() {
            return Err(StoreError::Layout("chunk/vector count mismatch".into()));
        }
        push_vector_columns(&mut fields, &mut columns, vectors)?;
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// Writes the three tables (and their full-text indexes) into a generation folder.
pub async fn write_tables(
    dir: &Path,
    entities: &[Entity],
    edges: &[Edge],
    chunks: &[Chunk],
    vectors: Option<&Vectors<'_>>,
    views: Option<&Vectors<'_>>,
) -> StoreResult<()> {
    let db = connect(&location(dir)).await?;
    let entities_table = db
        .create_table(ENTITIES, entities_batch(entities, views)?)
        .execute()
        .await?;
    db.create_table(EDGES, edges_batch(edges)?)
        .execute()
        .await?;
    let chunks_table = db
        .create_table(CHUNKS, chunks_batch(chunks, vectors)?)
        .execute()
        .await?;
    if !entities.is_empty() {
        entities_table
            .create_index(&["search_text"], Index::FTS(FtsIndexBuilder::default()))
            .execute()
            .await?;
    }
    if !chunks.is_empty() {
        chunks_table
            .create_index(&["search_text"], Index::FTS(FtsIndexBuilder::default()))
            .execute()
            .await?;
    }
    Ok(())
}

/// Row counts of a written generation, for validation before publishing.
#[derive(Debug, PartialEq, Eq)]
pub struct RowCounts {
    pub entities: usize,
    pub edges: usize,
    pub chunks: usize,
    /// Chunks with a usable vector (0 in a lexical generation).
    pub vectors: usize,
    /// Entities with a signature-view vector (0 in a lexical generation).
    pub views: usize,
}

/// Row counts of a generation's tables (validation before publication).
pub async fn row_counts(location: &str) -> StoreResult<RowCounts> {
    let db = connect(location).await?;
    let count = |name: &'static str| {
        let db = db.clone();
        async move { db.open_table(name).execute().await?.count_rows(None).await }
    };
    Ok(RowCounts {
        entities: count(ENTITIES).await?,
        edges: count(EDGES).await?,
        chunks: count(CHUNKS).await?,
        vectors: count_vectors(&db.open_table(CHUNKS).execute().await?).await?,
        views: count_vectors(&db.open_table(ENTITIES).execute().await?).await?,
    })
}

/// Whether a table carries a vector column (a `full` generation).
async fn has_vector_column(table: &lancedb::Table) -> StoreResult<bool> {
    Ok(table.schema().await?.field_with_name("vector").is_ok())
}

async fn count_vectors(table: &lancedb::Table) -> StoreResult<usize> {
    if !has_vector_column(table).await? {
        return Ok(0);
    }
    Ok(table.count_rows(Some("has_vector = true".into())).await?)
}

async fn read_all(
    db: &lancedb::Connection,
    table: &str,
    columns: Option<&[&str]>,
) -> StoreResult<Vec<RecordBatch>> {
    let table = db.open_table(table).execute().await?;
    let mut query = table.query();
    if let Some(columns) = columns {
        query = query.select(Select::columns(columns));
    }
    Ok(query.execute().await?.try_collect().await?)
}

pub(super) fn col<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> StoreResult<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| StoreError::Layout(format!("column `{name}` missing or of the wrong type")))
}

fn opt_str(array: &StringArray, i: usize) -> Option<String> {
    (!array.is_null(i)).then(|| array.value(i).to_string())
}

/// `hash of the embedded text → vector` of every chunk and signature view that has one, for
/// reuse by the next build. Generations written before signature views existed yield chunk
/// vectors only.
pub async fn read_vectors(dir: &Path) -> StoreResult<HashMap<String, Vec<f32>>> {
    let db = connect(&location(dir)).await?;
    let mut out = HashMap::new();
    for (table, hash_column) in [(CHUNKS, "content_hash"), (ENTITIES, "view_hash")] {
        vectors_by(&db, table, hash_column, &mut out).await?;
    }
    Ok(out)
}

/// `entity id → signature-view vector` of every entity that has one (empty for generations
/// written before signature views existed).
pub async fn read_signature_views(
    db: &lancedb::Connection,
) -> StoreResult<HashMap<String, Vec<f32>>> {
    let mut out = HashMap::new();
    vectors_by(db, ENTITIES, "id", &mut out).await?;
    Ok(out)
}

/// Adds `key → vector` for every row of `table` that has a vector; nothing when the table
/// lacks the vector or the key column (lexical generations, or written before that column).
async fn vectors_by(
    db: &lancedb::Connection,
    table: &str,
    key: &str,
    out: &mut HashMap<String, Vec<f32>>,
) -> StoreResult<()> {
    let handle = db.open_table(table).execute().await?;
    let schema = handle.schema().await?;
    if schema.field_with_name(key).is_err() || schema.field_with_name("vector").is_err() {
        return Ok(());
    }
    let batches: Vec<RecordBatch> = handle
        .query()
        .select(Select::columns(&[key, "has_vector", "vector"]))
        .execute()
        .await?
        .try_collect()
        .await?;
    for batch in &batches {
        collect_vectors(batch, key, out)?;
    }
    Ok(())
}

/// Adds `key column → vector` for each row of `batch` that has a vector.
fn collect_vectors(
    batch: &RecordBatch,
    hash_column: &str,
    out: &mut HashMap<String, Vec<f32>>,
) -> StoreResult<()> {
    let hashes: &StringArray = col(batch, hash_column)?;
    let has: &BooleanArray = col(batch, "has_vector")?;
    let vectors: &FixedSizeListArray = col(batch, "vector")?;
    for i in 0..batch.num_rows() {
        if has.value(i) && !hashes.is_null(i) {
            let values = vectors.value(i);
            let floats = values
                .as_any()
                .downcast_ref::<Float32Array>()
                .ok_or_else(|| StoreError::Layout("vector is not f32".into()))?;
            out.insert(hashes.value(i).to_string(), floats.values().to_vec());
        }
    }
    Ok(())
}

/// The entity columns `read_entities` decodes (not the search text, view hash or vector).
const ENTITY_COLUMNS: &[&str] = &[
    "id",
    "parent",
    "kind",
    "subkind",
    "name",
    "qualified_name",
    "language",
    "path",
    "start_line",
    "start_col",
    "end_line",
    "end_col",
    "start_byte",
    "end_byte",
    "signature",
    "doc",
    "content_hash",
];

/// Every entity of a generation.
pub async fn read_entities(db: &lancedb::Connection) -> StoreResult<Vec<Entity>> {
    let mut out = Vec::new();
    for batch in read_all(db, ENTITIES, Some(ENTITY_COLUMNS)).await? {
        let s = |name| col::<StringArray>(&batch, name);
        let n = |name| col::<UInt32Array>(&batch, name);
        let b = |name| col::<UInt64Array>(&batch, name);
        let (id, parent, kind, subkind, name, qualified) = (
            s("id")?,
            s("parent")?,
            s("kind")?,
            s("subkind")?,
            s("name")?,
            s("qualified_name")?,
        );
        let (language, path, signature, doc, hash) = (
            s("language")?,
            s("path")?,
            s("signature")?,
            s("doc")?,
            s("content_hash")?,
        );
        let (sl, sc, el, ec, sb, eb) = (
            n("start_line")?,
            n("start_col")?,
            n("end_line")?,
            n("end_col")?,
            b("start_byte")?,
            b("end_byte")?,
        );
        for i in 0..batch.num_rows() {
            out.push(Entity {
                id: id.value(i).to_string(),
                parent: opt_str(parent, i),
                kind: EntityKind::parse(kind.value(i))
                    .ok_or_else(|| StoreError::Layout("unknown entity kind".into()))?,
                subkind: opt_str(subkind, i),
                name: name.value(i).to_string(),
                qualified_name: qualified.value(i).to_string(),
                language: language.value(i).to_string(),
                path: path.value(i).to_string(),
                span: Span {
                    start_line: sl.value(i),
                    start_col: sc.value(i),
                    end_line: el.value(i),
                    end_col: ec.value(i),
                    start_byte: sb.value(i) as usize,
                    end_byte: eb.value(i) as usize,
                },
                signature: signature.value(i).to_string(),
                doc: opt_str(doc, i),
                content_hash: hash.value(i).to_string(),
                split_lines: Vec::new(),
            });
        }
    }
    Ok(out)
}

/// Every edge of a generation.
pub async fn read_edges(db: &lancedb::Connection) -> StoreResult<Vec<Edge>> {
    let mut out = Vec::new();
    for batch in read_all(db, EDGES, None).await? {
        let s = |name| col::<StringArray>(&batch, name);
        let (source, target, target_name, kind, path, resolution) = (
            s("source")?,
            s("target")?,
            s("target_name")?,
            s("kind")?,
            s("path")?,
            s("resolution")?,
        );
        let line: &UInt32Array = col(&batch, "line")?;
        let candidates: &UInt32Array = col(&batch, "candidates")?;
        for i in 0..batch.num_rows() {
            out.push(Edge {
                source: source.value(i).to_string(),
                target: opt_str(target, i),
                target_name: target_name.value(i).to_string(),
                kind: EdgeKind::parse(kind.value(i))
                    .ok_or_else(|| StoreError::Layout("unknown edge kind".into()))?,
                path: path.value(i).to_string(),
                line: line.value(i),
                resolution: Resolution::parse(resolution.value(i))
                    .ok_or_else(|| StoreError::Layout("unknown resolution".into()))?,
                candidates: candidates.value(i),
            });
        }
    }
    Ok(out)
}
