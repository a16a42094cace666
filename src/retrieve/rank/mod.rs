//! Hybrid ranking: full-text (LanceDB FTS over the code-aware column), vectors (cosine over
//! chunk embeddings and over each definition's signature view) and structural signals read off
//! the question (definitions it names, traceback frames and paths, error messages found
//! verbatim, call-graph neighbours), fused with weighted reciprocal-rank fusion. Evidence is
//! then pooled per file (a whole-file BM25 leg, frames and paths, and the file's strongest
//! entities) into a file prior, and hits are scaled by priors on the kind (prose) and the place
//! (tests, generated or vendored code, a language the project barely uses). A fix spans a unit:
//! a strong hit's namesakes in its header/source companions and the leading file's folder-mates
//! gain a share of its evidence. A report's words rank the units of its two leading files among
//! themselves, so each file's share reaches the function that holds them even when no leg
//! found it. Identifier-shaped queries lean lexical, descriptions rely on
//! vectors relatively more; a query in double quotes is an exact substring search. Results are
//! deterministic (ties broken by id). This module ranks; it never packs or shapes a payload.
//!
//! This file runs the legs, fuses them and calls the passes in order; the passes live in
//! submodules by what they read: `names` (the definitions a question names), `written` (what
//! it writes verbatim: frames, paths, messages, quoted values, pasted code), `neighbours` (the
//! call graph and declarations), `priors` (a hit's kind and place), `files` (file evidence and
//! the shares it hands out) and `yields` (the last reordering passes).

mod files;
mod names;
mod neighbours;
mod priors;
mod written;
mod yields;

use std::collections::HashMap;

use super::hit::{Evidence, Hit, Ranking, RetrievalMode};
use super::plan::QueryPlan;
use super::question::{QueryShape, Question};
use crate::error::StoreResult;
use crate::load::generation::{ChunkRow, LoadedGeneration};
use crate::text::code_search_text;
use crate::walk::is_test_path;
use files::pool_files;
use names::{add_constructors, add_name_matches, add_trait_impls, kind_priority};
use neighbours::{add_companions, add_graph_neighbours, add_meeting_callers};
use priors::{history_prior, kind_prior, place_prior, test_block_prior};
use written::{add_excerpts, add_frames, add_messages, add_quoted_values};
use yields::{Yield, yield_to_live_definitions, yield_to_members};

/// Candidates fetched per leg.
const CANDIDATES: usize = 80;
/// Reciprocal-rank-fusion constant. Small, so a leg's first places count (measured on the
/// benchmark: 10 beat 30 and 60).
const RRF_K: f64 = 10.0;

/// The file-prior strength from which a question reads as a report (25 words): a code-search
/// sentence of 11 to 17 words that asks how a part works lost places when its answer was
/// turned into units (2026-12-03).
const REPORT_STRENGTH: f64 = 0.5;

/// Weight of the unit leg (BM25 over each function's and method's own text) at full file-prior
/// strength: reports only, like the file leg.
const UNIT_LEG_WEIGHT: f64 = 1.0;

/// Ranks entities for a question. `vector` is the embedded question (None on a lexical
/// generation).
pub async fn rank(
    generation: &LoadedGeneration,
    plan: &QueryPlan,
    vector: Option<&[f32]>,
    limit: usize,
) -> Ranking {
    if let Some(needle) = &plan.exact {
        return exact(generation, needle, limit);
    }
    let question = &plan.question;
    // The three legs are independent scans: run them concurrently.
    let query_vector = vector.filter(|_| generation.has_vectors());
    let signature_vector = query_vector.filter(|_| !generation.signature_views.is_empty());
    let (lexical, vectors, signatures) = futures::join!(
        fts_leg(generation, &question.text),
        async {
            match query_vector {
                Some(v) => vector_leg(generation, v).await,
                None => Ok(Vec::new()),
            }
        },
        async {
            Ok(signature_vector
                .map(|v| generation.signature_views.nearest(v, CANDIDATES))
                .unwrap_or_default())
        },
    );
    let mut errors = Vec::new();
    let mut candidates = |leg: &str, result: StoreResult<Vec<String>>| {
        result.unwrap_or_else(|e| {
            errors.push(format!("{leg} search failed: {e}"));
            Vec::new()
        })
    };
    let lexical = candidates("full-text", lexical);
    let vectors = candidates("vector", vectors);
    let signatures = candidates("signature", signatures);
    let mode = if query_vector.is_some() {
        RetrievalMode::Hybrid
    } else {
        RetrievalMode::Lexical
    };
    let weights = plan.leg_weights(mode == RetrievalMode::Hybrid);
    let mut fused: HashMap<String, Hit> = HashMap::new();
    let by_chunk = |ids: &[String]| -> Vec<usize> {
        ids.iter()
            .filter_map(|id| generation.chunk_index(id))
            .collect()
    };
    let by_entity = |ids: &[String]| -> Vec<usize> {
        ids.iter()
            .filter_map(|id| generation.first_chunk_index(id))
            .collect()
    };
    add_leg(
        generation,
        &mut fused,
        &by_chunk(&lexical),
        weights.lexical,
        |e, r| e.lexical_rank = Some(r),
    );
    add_leg(
        generation,
        &mut fused,
        &by_chunk(&vectors),
        weights.vector,
        |e, r| e.vector_rank = Some(r),
    );
    add_leg(
        generation,
        &mut fused,
        &by_entity(&signatures),
        weights.signature,
        |e, r| e.signature_rank = Some(r),
    );
    add_leg(
        generation,
        &mut fused,
        &by_entity(&unit_leg(generation, question)),
        UNIT_LEG_WEIGHT * question.file_prior_strength(),
        |e, r| e.unit_rank = Some(r),
    );
    let about_tests = question.about_tests;
    add_name_matches(generation, &mut fused, question, about_tests);
    add_trait_impls(generation, &mut fused, question);
    add_constructors(generation, &mut fused, question, about_tests);
    let frame_files = add_frames(generation, &mut fused, question);
    add_messages(generation, &mut fused, question);
    add_quoted_values(generation, &mut fused, question);
    add_excerpts(generation, &mut fused, question);
    add_meeting_callers(generation, &mut fused, question);
    add_graph_neighbours(generation, &mut fused);
    add_companions(generation, &mut fused);
    let mut hits = in_stable_order(fused);
    for hit in &mut hits {
        let chunk = &generation.chunks[hit.chunk];
        hit.score *= kind_prior(chunk.kind, question)
            * history_prior(chunk.kind.reads_as_prose(), &chunk.path)
            * place_prior(generation, &chunk.path, question)
            * test_block_prior(generation, &chunk.entity_id, question);
    }
    let files = pool_files(generation, question, &mut hits, frame_files);
    if plan.rescores() {
        super::rescore::rescore(
            generation,
            question,
            mode == RetrievalMode::Hybrid,
            &mut hits,
        );
    }
    if reads_as_report(question) {
        yield_to_members(generation, &mut hits, Yield::ToAnyMember);
    } else if question.has_body() {
        let rule = Yield::NamedToBestWordMatch {
            about_constructors: question.about_constructors,
        };
        yield_to_members(generation, &mut hits, rule);
    }
    yield_to_live_definitions(generation, &mut hits);
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.entity_id.cmp(&b.entity_id))
    });
    hits.truncate(limit);
    Ranking {
        hits,
        files,
        mode,
        lexical_weight: weights.lexical,
        shape: question.shape,
        errors,
    }
}

/// The fused hits in one order whatever the map's: by entity id. The passes after fusion walk
/// the hits in order and settle ties by who comes first (which container yields first, which
/// hit leads its file), so the map's per-process order would let one query on one store
/// report a different entity from run to run.
fn in_stable_order(fused: HashMap<String, Hit>) -> Vec<Hit> {
    let mut hits: Vec<Hit> = fused.into_values().collect();
    hits.sort_by(|a, b| a.entity_id.cmp(&b.entity_id));
    hits
}

/// A leg's chunk indices from best to worst, deduplicated by entity, fused into `fused` with
/// weighted reciprocal-rank fusion.
fn add_leg(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    chunks: &[usize],
    weight: f64,
    mark: impl Fn(&mut Evidence, u32),
) {
    if weight <= 0.0 {
        return;
    }
    let mut rank = 0u32;
    let mut seen = std::collections::HashSet::new();
    for &index in chunks {
        let entity_id = &generation.chunks[index].entity_id;
        if !seen.insert(entity_id.clone()) {
            continue;
        }
        rank += 1;
        let hit = credit(fused, entity_id, index, weight / (RRF_K + rank as f64));
        mark(&mut hit.evidence, rank);
    }
}

/// Adds `amount` to an entity's fused score, creating its hit (with `chunk`) on first sight.
fn credit<'a>(
    fused: &'a mut HashMap<String, Hit>,
    entity_id: &str,
    chunk: usize,
    amount: f64,
) -> &'a mut Hit {
    let hit = fused
        .entry(entity_id.to_string())
        .or_insert_with(|| Hit::unscored(entity_id, chunk));
    hit.score += amount;
    hit
}

/// Whether a chunk is code (not prose or plain text) outside tests, or in tests too when
/// `about_tests`.
fn is_code_in_scope(chunk: &ChunkRow, about_tests: bool) -> bool {
    (about_tests || !is_test_path(&chunk.path)) && !chunk.kind.reads_as_prose()
}

/// A question long enough to be a report (a bug report, a change description) rather than a
/// description of one definition or of how a part works: its answer is the unit a fix edits.
fn reads_as_report(question: &Question) -> bool {
    question.file_prior_strength() >= REPORT_STRENGTH
}

/// The unit leg: the units (functions and methods) of the whole index whose own text best
/// matches a report's words, best first (BM25 over the unit index); nothing for a question too
/// short to read as a report.
fn unit_leg(generation: &LoadedGeneration, question: &Question) -> Vec<String> {
    if !reads_as_report(question) {
        return Vec::new();
    }
    generation
        .units
        .rank(&question.words, CANDIDATES)
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect()
}

async fn fts_leg(generation: &LoadedGeneration, query: &str) -> StoreResult<Vec<String>> {
    // Words only: quotes, parentheses and operators would be read as query syntax.
    let text: String = code_search_text(query)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() || generation.chunks.is_empty() {
        return Ok(Vec::new());
    }
    generation.chunk_table.full_text(&text, CANDIDATES).await
}

/// Chunk ids nearest to the query vector (cosine).
async fn vector_leg(generation: &LoadedGeneration, vector: &[f32]) -> StoreResult<Vec<String>> {
    generation.chunk_table.nearest(vector, CANDIDATES).await
}

/// Chunks containing the text verbatim, in path/line order, one hit per entity.
fn exact(generation: &LoadedGeneration, needle: &str, limit: usize) -> Ranking {
    let mut order: Vec<usize> = generation.chunks_containing(needle).collect();
    order.sort_by(|&a, &b| {
        let (ca, cb) = (&generation.chunks[a], &generation.chunks[b]);
        kind_priority(ca.kind)
            .cmp(&kind_priority(cb.kind))
            .then(ca.path.cmp(&cb.path))
            .then(ca.start_line.cmp(&cb.start_line))
    });
    let mut seen = std::collections::HashSet::new();
    let hits: Vec<Hit> = order
        .into_iter()
        .filter(|&i| seen.insert(generation.chunks[i].entity_id.clone()))
        .take(limit)
        .map(|i| Hit {
            score: 1.0,
            ..Hit::unscored(&generation.chunks[i].entity_id, i)
        })
        .collect();
    Ranking {
        hits,
        files: Vec::new(),
        mode: RetrievalMode::Exact,
        lexical_weight: 1.0,
        shape: QueryShape::Mixed,
        errors: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::names::drop_constructors_of_named_type;
    use super::neighbours::parameters;
    use super::written::{frame_entity, one_typo_away};
    use super::*;
    use crate::parse::{Entity, EntityKind};
    use crate::retrieve::question::query_shape;
    use crate::retrieve::resolve::owned_by;

    fn method(name: &str, start_line: u32, end_line: u32) -> Entity {
        Entity {
            id: format!("f.py::{name}@{start_line}"),
            parent: None,
            kind: EntityKind::Method,
            subkind: None,
            name: name.to_string(),
            qualified_name: name.to_string(),
            language: "python".to_string(),
            path: "f.py".to_string(),
            span: crate::parse::Span {
                start_line,
                start_col: 0,
                end_line,
                end_col: 0,
                start_byte: 0,
                end_byte: 0,
            },
            signature: String::new(),
            doc: None,
            content_hash: String::new(),
            split_lines: Vec::new(),
        }
    }

    #[test]
    fn fused_hits_leave_fusion_in_entity_order_whatever_the_maps_order() {
        let ids = ["b.py::g", "a.py", "a.py::f", "c.py::C.m"];
        for rotation in 0..ids.len() {
            let mut fused = HashMap::new();
            for id in ids.iter().cycle().skip(rotation).take(ids.len()) {
                fused.insert(id.to_string(), Hit::unscored(id, 0));
            }
            let order: Vec<String> = in_stable_order(fused)
                .into_iter()
                .map(|h| h.entity_id)
                .collect();
            assert_eq!(order, ["a.py", "a.py::f", "b.py::g", "c.py::C.m"]);
        }
    }

    #[test]
    fn an_owner_names_the_definitions_right_under_it() {
        let qualified = |q: &str| Entity {
            qualified_name: q.to_string(),
            ..method("getitem", 1, 2)
        };
        assert!(owned_by(&qualified("Dict.getitem"), "Dict"));
        assert!(owned_by(&qualified("nodes.Dict.getitem"), "Dict"));
        assert!(!owned_by(&qualified("OrderedDict.getitem"), "Dict"));
        assert!(!owned_by(&qualified("Dict.inner.getitem"), "Dict"));
        assert!(!owned_by(&qualified("getitem"), "Dict"));
    }

    #[test]
    fn a_types_name_in_a_report_is_the_type_not_its_constructors() {
        let entity = |kind, name: &str, qualified: &str| Entity {
            kind,
            qualified_name: qualified.to_string(),
            ..method(name, 1, 2)
        };
        let class = entity(EntityKind::Class, "JsonFactory", "JsonFactory");
        let constructor = entity(EntityKind::Method, "JsonFactory", "JsonFactory.JsonFactory");
        let setter = entity(EntityKind::Method, "JsonFactory", "Other.JsonFactory");
        let mut definitions = vec![&constructor, &class, &setter];
        drop_constructors_of_named_type(&mut definitions, "JsonFactory");
        let kept: Vec<&str> = definitions
            .iter()
            .map(|e| e.qualified_name.as_str())
            .collect();
        assert_eq!(kept, ["JsonFactory", "Other.JsonFactory"]);
        // No type of that name among them (`Capturer::Capturer`): the constructor is the one.
        let mut only = vec![&constructor];
        drop_constructors_of_named_type(&mut only, "JsonFactory");
        assert_eq!(only.len(), 1);
    }

    #[test]
    fn a_frame_with_a_typo_in_its_file_name_finds_the_one_file_a_letter_away() {
        let paths: Vec<String> = [
            "lib/response.js",
            "lib/request.js",
            "lib/responses.ts",
            "lib/index.js",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(one_typo_away(&paths, "reponse.js"), Some("lib/response.js"));
        assert_eq!(
            one_typo_away(&paths, "/srv/app/lib/respnse.js"),
            Some("lib/response.js")
        );
        // Another extension, two typos, a short name, or two files a letter away: none.
        assert_eq!(one_typo_away(&paths, "reponse.py"), None);
        assert_eq!(one_typo_away(&paths, "repose.js"), None);
        assert_eq!(one_typo_away(&paths, "indx.js"), None);
        let twins: Vec<String> = ["a/handlers.go", "b/handlerz.go"]
            .map(String::from)
            .to_vec();
        assert_eq!(one_typo_away(&twins, "handlerx.go"), None);
    }

    #[test]
    fn a_frame_names_the_namesake_that_holds_its_line() {
        let (base, date) = (method("bind", 335, 343), method("bind", 1113, 1119));
        let helper = method("helper", 1100, 1130);
        let all = [&base, &helper, &date];
        let found = |function, line| frame_entity(&all, function, line).map(|e| e.span.start_line);
        assert_eq!(found(Some("bind"), 1117), Some(1113));
        // A reporter's copy drifted a few lines: the nearest namesake still wins.
        assert_eq!(found(Some("bind"), 345), Some(335));
        // No function written: the innermost definition holding the line.
        assert_eq!(found(None, 1117), Some(1113));
    }

    #[test]
    fn query_shapes() {
        assert_eq!(query_shape("apply_discount"), QueryShape::Identifier);
        assert_eq!(query_shape("Cart.total"), QueryShape::Identifier);
        assert_eq!(query_shape("getUserName"), QueryShape::Identifier);
        assert_eq!(
            query_shape("round a money value to cents"),
            QueryShape::Description
        );
        assert_eq!(
            query_shape("where is apply_discount used"),
            QueryShape::Mixed
        );
    }

    #[test]
    fn a_declaration_and_its_definition_have_the_same_parameters() {
        let definition = parameters("std::string StringMaker<double>::convert(double value) {");
        assert_eq!(definition.as_deref(), Some("(doublevalue)"));
        assert_eq!(
            parameters("static std::string convert( double  value );"),
            definition
        );
        assert_ne!(
            parameters("static std::string convert(float value);"),
            definition
        );
        assert_eq!(parameters("struct Cart"), None);
    }
}
