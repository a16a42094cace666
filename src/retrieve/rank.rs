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

use std::collections::{HashMap, HashSet};

use aho_corasick::AhoCorasick;

use super::hit::{Evidence, Hit, RankedFile, Ranking, RetrievalMode, places_in_file};
use super::plan::QueryPlan;
use super::question::{Name, Origin, QueryShape, Question, message_fragments};
use super::resolve::{MISSPELT_MIN_CHARS, may_be_named, misspelt_member, owned_by, owned_or_bound};
use crate::error::StoreResult;
use crate::graph::EdgeKind;
use crate::load::generation::{ChunkRow, LoadedGeneration};
use crate::parse::{Entity, EntityKind, TEST_SUBKIND};
use crate::text::code_search_text;
use crate::walk::{is_generated_path, is_history_path, is_test_path, tooling_folder};

/// Candidates fetched per leg.
const CANDIDATES: usize = 80;
/// Reciprocal-rank-fusion constant. Small, so a leg's first places count (measured on the
/// benchmark: 10 beat 30 and 60).
const RRF_K: f64 = 10.0;
/// Score multiplier for definitions in tests, examples and benchmarks (`walk::is_test_path`)
/// unless the query asks about those: they show how code is used and rarely are the code asked
/// about, and a test spells the calls, fixtures and words of the behaviour it checks (its name
/// often restates a change description's title) better than the code. One multiplier for every
/// question: reports had 0.3 and shorter questions 0.6 until 2026-12-04, when 0.3 for both
/// lifted the docstring benchmark's R@5 0.776 → 0.781 (14 questions up, none down) and lexical
/// code search 0.866 → 0.868 (3 up, none down), with the issue sets' function figures unchanged.
const TEST_PRIOR: f64 = 0.3;
/// Score multiplier for generated, bundled and vendored code (`walk::is_generated_path`): an
/// amalgamated single header holds every name of the library and otherwise outranks the
/// files a fix changes.
const GENERATED_PRIOR: f64 = 0.3;
/// Score multiplier for the repository's own tooling (`walk::tooling_folder`: top-level
/// `scripts/`, `build_tools/`, `ci/`, …) unless the question names the folder: a release
/// script shares a change description's housekeeping words ("Add changelog entry" and
/// astroid's `script/bump_changelog.py`) and is rarely the code asked about (lexical plane,
/// 2026-12-05: change descriptions' function Acc@5 63 → 64 of 120, two multi-language files
/// closer, nothing lower; demoting `tools/` too lifted go-zero's `core/` files but `tools/` is
/// go-zero's own `goctl`, so it is not tooling here).
const TOOLING_PRIOR: f64 = 0.3;
/// Score multiplier for code in a language the project barely uses
/// (`FileIndex::is_minority_language`).
const MINORITY_LANGUAGE_PRIOR: f64 = 0.5;
/// Score multiplier for file headers and documentation sections, and for the whole-file
/// evidence of a file that is only prose (a changelog names everything a commit does).
const PROSE_PRIOR: f64 = 0.5;
/// The prose multiplier for a report (a long question): its prose names the feature, the
/// flag and the symptom, which the documentation names too, but the fix goes into code.
const REPORT_PROSE_PRIOR: f64 = 0.2;
/// The share of the prose multiplier a text file keeps (see `kind_prior`; 1.0 / 0.5 / 0.3
/// → change descriptions `semantic` Acc@5 78.4 / 83.0 / 83.0 with the history prior and
/// text files as prose in the file leg, 2026-12-02).
const TEXT_SHARE: f64 = 0.5;
/// Score multiplier for prose in a changelog, release notes or contributors' list
/// (`walk::is_history_path`): such a file restates every change in the words a change
/// description uses, and no change description is answered by it (1.0 → 0.2: change
/// descriptions `semantic` Acc@5 78.4 → 83.0 with the model; 0.1 gained nothing more).
const HISTORY_PRIOR: f64 = 0.2;
/// Weight of a definition whose own name is in the query.
const NAME_WEIGHT: f64 = 1.2;
/// Share of a strong hit's score given to its 1-hop call neighbours already in the
/// candidates: a tie-breaker (0.01 → 0.05 moved one change description to the first place and
/// one more into the first five on the issue benchmark, docstring R@5 unchanged; larger
/// shares reordered ranks and lowered recall on the docstring benchmark).
const GRAPH_SHARE: f64 = 0.05;
/// Share of the mean score of the named definitions a unit calls that the unit gains when it
/// is where two or more of them meet ([`add_meeting_callers`]; lexical plane, 2026-12-05:
/// change descriptions' function Acc@5 64 → 65 of 120 at 0.5, 1.0 and 2.0 alike, every other
/// issue figure, the docstrings and code search unchanged).
const MEETING_SHARE: f64 = 1.0;
/// Distinct named definitions a unit must call to be where they meet.
const MEETING_NAMES: usize = 2;
/// The share of the leading file's evidence its folder-mates' entities gain, and the part of the
/// leading entity's score they may reach.
const SIBLING_SHARE: f64 = 0.3;
const SIBLING_CEILING: f64 = 0.99;
/// Hits whose namesakes in companion files gain a share, and the share.
const COMPANION_SOURCES: usize = 5;
const COMPANION_SHARE: f64 = 0.5;
/// A name written only in the question's code (the user's script) counts this much of one
/// written in prose or a traceback frame.
const CODE_NAME_SHARE: f64 = 0.5;
/// A name the question's own code defines (`class PV`, its `__init__`) counts this much more
/// little: it says where the user's code is, not where the answer is.
const DEFINED_HERE_SHARE: f64 = 0.2;
/// A definition's name written as a plain word (`fuentes`) counts this much of one written as
/// code, and only when at most this share of the project's files use the word (lexical plane,
/// 2026-12-03: change descriptions function Acc@1 23.3 → 25.0 and first entity 43.3 → 45.0 %,
/// the other sets and code search unchanged; a 3 % share reached too few words in a project of
/// 183 files, 10 % cost a function from the first five, a full share cost file Acc@5).
const PLAIN_NAME_SHARE: f64 = 0.5;
/// Share of a snake_case name no definition has, for the definitions named `<case>_<name>`
/// (a family implementing it per case).
const FAMILY_NAME_SHARE: f64 = 0.5;
const RARE_WORD_SHARE: f64 = 0.05;
/// A name shared by n definitions gives each `1 / n^NAME_SPREAD` of its weight.
const NAME_SPREAD: f64 = 0.5;
/// Weight of the entity a traceback frame lies in (innermost frame; each frame further out
/// counts half).
const FRAME_WEIGHT: f64 = 1.5;
/// File evidence of a file a frame, a written path or a name equal to its file name
/// (`L031` → `rules/L031.py`) names.
const PATH_FILE_WEIGHT: f64 = 1.0;
/// Weight of an entity that writes an error message or quoted output of the question.
const MESSAGE_WEIGHT: f64 = 1.0;
/// A function spelling at least this many of the question's quoted values is where they are
/// told apart (see [`add_quoted_values`]).
const QUOTED_VALUES_MIN: usize = 2;
/// At most this many of the question's quoted values are looked for.
const QUOTED_VALUES_MAX: usize = 32;
/// At most this many functions are credited for them.
const QUOTED_VALUE_PLACES: usize = 5;
/// A pasted excerpt found in more chunks than this is idiom (see [`add_excerpts`]).
const EXCERPT_MAX_PLACES: usize = 3;
/// At full strength: the whole-file BM25 leg's weight in the file evidence, the share of its
/// file's evidence an entity gains, and the share of a file's strongest entities pooled into
/// it (0.5 → 0.35 lifted change descriptions' Acc@5 from 81.8 to 83.0 with bug reports and
/// the docstring benchmark unchanged; 0.2 cost bug reports 4.5 points).
const FILE_LEG_WEIGHT: f64 = 1.0;
const FILE_SHARE: f64 = 1.0;
const FILE_POOL: f64 = 0.35;
/// The n-th best entity of a file (from 0) gains `FILE_DECAY^n` of the file's share: the
/// file's next units stay near its first, since a fix often edits several of them (0.3 before
/// the unit leg; 0.6 lifted function Acc@5 on the change descriptions and multi-language
/// reports with the files' order unchanged, 2026-12-03; 0.75 lifted each by one more task
/// with files at Acc@1 / @5, code search and the docstring benchmark unchanged, while 0.45 and
/// 0.9 lost tasks, lexical plane, 2026-12-04).
const FILE_DECAY: f64 = 0.75;
/// The n-th entity of the leading file's folder-mates gains `SIBLING_DECAY^n` of its share.
const SIBLING_DECAY: f64 = 0.3;

/// The file-prior strength from which a question reads as a report (25 words): a code-search
/// sentence of 11 to 17 words that asks how a part works lost places when its answer was
/// turned into units (2026-12-03).
const REPORT_STRENGTH: f64 = 0.5;
/// What a type or module keeps of its score when a member takes its place (reports).
const CONTAINER_SHARE: f64 = 0.5;
/// Weight of the unit leg (BM25 over each function's and method's own text) at full file-prior
/// strength: reports only, like the file leg.
const UNIT_LEG_WEIGHT: f64 = 1.0;

/// The files, best first by pooled evidence, whose units a report's words rank among
/// themselves, and that ranking's weight at full file-prior strength. Two files: the fix's
/// file is the first or the second far more often than the third, and opening three or five
/// gave function Acc@5 no more while costing file Acc@1 (lexical plane, 2026-12-03: two files
/// at weight 1.0 lifted multi-language function Acc@5 26.9 → 35.9; at three files, 0.5 gained
/// less and 2.0 cost the change descriptions' file Acc@1, 51.7 → 49.4).
const FILES_OPENED: usize = 2;
const IN_FILE_WEIGHT: f64 = 1.0;
/// Length normalisation (BM25's `b`) of that in-file ranking; the unit leg, which ranks the
/// units of every file, keeps the usual 0.75. Within one file a fix edits long functions at
/// least as often as short ones, and a long body holds more of a report's words by right:
/// at 0.75 a short helper sharing one rare word outranked the function that uses it (lexical
/// plane, 2026-12-04: 0.25 lifted multi-language function Acc@1 17.9 → 19.2 and first entity
/// 41.0 → 42.3 %, change descriptions' function Acc@5 46.7 → 47.5, files unchanged; the unit's
/// name words counted twice, or 0.25 for the unit leg too, cost multi-language Acc@5 or file
/// Acc@1).
const IN_FILE_LENGTH_NORM: f64 = 0.25;

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

/// Definitions whose own name the question writes. A name is worth less when the question's
/// own code defines it (the user's `__init__`, their class `PV`), when it was only written in
/// the question's code, and when many definitions share it; only definitions outside tests
/// count unless the question is about tests. A snake_case name that nothing defines (nor,
/// written under its owner, a member one letter away) stands at half weight for the family
/// of definitions named after it with a prefix (`for_assigned_stmts` for `assigned_stmts`).
fn add_name_matches(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
    about_tests: bool,
) {
    let mut weighted: Vec<(f64, usize, Vec<&Entity>)> = Vec::new();
    let plain = plain_word_names(generation, question);
    let written = question.names.iter().map(|n| (n, 1.0));
    let candidates = written.chain(plain.iter().map(|n| (n, PLAIN_NAME_SHARE)));
    let counted = |e: &&Entity| may_be_named(e, about_tests);
    for (order, (name, mut share)) in candidates.enumerate() {
        let mut definitions: Vec<&Entity> = generation
            .entities_named(&name.text)
            .filter(counted)
            .collect();
        if definitions.is_empty() {
            definitions.extend(misspelt_member(generation, &name.owners, &name.text));
        }
        // `Name._infer`, defined under no `Name`, runs what `Name._infer = …` binds.
        definitions = owned_or_bound(
            generation,
            &name.owners,
            &name.text,
            definitions,
            about_tests,
        );
        // `assigned_stmts`, defined by no one, names the family `for_assigned_stmts`,
        // `sequence_assigned_stmts`, … that implements it per case.
        if definitions.is_empty() && name.text.contains('_') {
            definitions.extend(generation.entities_suffixed(&name.text).filter(counted));
            share *= FAMILY_NAME_SHARE;
        }
        if definitions.is_empty() {
            continue;
        }
        // `Dict.getitem` means Dict's getitem, not every class's.
        let owned: Vec<&Entity> = definitions
            .iter()
            .filter(|e| name.owners.iter().any(|owner| owned_by(e, owner)))
            .copied()
            .collect();
        if !owned.is_empty() {
            definitions = owned;
        }
        if question.long && !question.about_constructors {
            drop_constructors_of_named_type(&mut definitions, &name.text);
        }
        definitions.sort_by(|a, b| {
            kind_priority(a.kind)
                .cmp(&kind_priority(b.kind))
                .then(a.id.cmp(&b.id))
        });
        let mut weight = share
            * match name.origin {
                Origin::Frame | Origin::Prose => 1.0,
                Origin::Code => CODE_NAME_SHARE,
            };
        if question.defined_here.contains(&name.text) {
            weight *= DEFINED_HERE_SHARE;
        }
        weight /= (definitions.len() as f64).powf(NAME_SPREAD);
        weighted.push((weight, order, definitions));
    }
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut rank = 0u32;
    for (weight, _, definitions) in weighted {
        for entity in definitions.into_iter().take(5) {
            credit_name_match(generation, fused, entity, &mut rank, NAME_WEIGHT * weight);
        }
    }
}

/// Credits `entity` as the next name match after `rank` (counting only entities with a chunk):
/// `weight` in reciprocal-rank fusion, marked as a name match.
fn credit_name_match(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    entity: &Entity,
    rank: &mut u32,
    weight: f64,
) {
    let Some(index) = generation.first_chunk_index(&entity.id) else {
        return;
    };
    *rank += 1;
    let hit = credit(fused, &entity.id, index, weight / (RRF_K + *rank as f64));
    hit.evidence.name_match = true;
}

/// The plain words of a question past one sentence that the project hardly uses (in at most
/// [`RARE_WORD_SHARE`] of its files), as names written in prose: `fuentes` in "Fix fuentes
/// error for tz-aware inputs" is the function `fuentes`. Whether a definition has the name is
/// left to the caller. A one-sentence question keeps to the names it writes as code.
fn plain_word_names(generation: &LoadedGeneration, question: &Question) -> Vec<Name> {
    if question.file_prior_strength() == 0.0 {
        return Vec::new();
    }
    question
        .plain_words
        .iter()
        .filter(|w| generation.files.share_holding(&w.to_lowercase()) <= RARE_WORD_SHARE)
        .map(|w| Name {
            text: w.clone(),
            origin: Origin::Prose,
            owners: Vec::new(),
        })
        .collect()
}

/// In a report a type's name names the type: its constructors, which share the name in Java,
/// C#, C++ and others, are not each a definition the report wrote (`JsonFactory` in
/// `JsonFactory.setStreamReadConstraints` is not the four `JsonFactory(…)` overloads). They stay
/// when no type of that name is among the definitions (`Capturer::Capturer`), and for a short
/// question, where the one constructor of `SqlMapper` told the file it is declared in from the
/// partial class's other files (code search, dapper, 2026-12-03).
fn drop_constructors_of_named_type(definitions: &mut Vec<&Entity>, name: &str) {
    if definitions.iter().any(|e| e.kind == EntityKind::Class) {
        definitions.retain(|e| !(e.kind == EntityKind::Method && owned_by(e, name)));
    }
}

/// A Rust question names an `impl` block as `Drop for Drain`: the methods of that block (the
/// type's methods in the edge's file from its `impl` line up to the file's next trait `impl`)
/// count as the two names it wrote (the trait's and the type's both point at them), in the
/// order written, spread over the blocks of that pair as a name is over its definitions; the
/// type's other methods gain nothing.
fn add_trait_impls(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) {
    let mut rank = 0u32;
    for pair in &question.trait_impls {
        let blocks = impl_blocks(generation, &pair.trait_name, &pair.type_name);
        let weight = 2.0 * NAME_WEIGHT / (blocks.len() as f64).powf(NAME_SPREAD);
        for method in blocks.into_iter().flatten() {
            credit_name_match(generation, fused, method, &mut rank, weight);
        }
    }
}

/// The methods of each Rust `impl trait_name for type_name` block outside tests, a block's
/// methods in line order.
fn impl_blocks<'g>(
    generation: &'g LoadedGeneration,
    trait_name: &str,
    type_name: &str,
) -> Vec<Vec<&'g Entity>> {
    let names_trait = |target: &str| target.rsplit(['.', ':']).next() == Some(trait_name);
    let types = generation.entities_named(type_name).filter(|e| {
        e.kind == EntityKind::Class && e.path.ends_with(".rs") && !is_test_path(&e.path)
    });
    let mut blocks = Vec::new();
    for ty in types {
        for edge in generation.outgoing(&ty.id, EdgeKind::Implements) {
            if !names_trait(&edge.target_name) {
                continue;
            }
            let next_impl = generation
                .edges
                .iter()
                .filter(|e| e.kind == EdgeKind::Implements && e.path == edge.path)
                .map(|e| e.line)
                .filter(|&line| line > edge.line)
                .min()
                .unwrap_or(u32::MAX);
            let mut methods: Vec<&Entity> = generation
                .entities
                .iter()
                .filter(|m| {
                    m.kind == EntityKind::Method
                        && m.path == edge.path
                        && owned_by(m, type_name)
                        && (edge.line..next_impl).contains(&m.span.start_line)
                })
                .collect();
            methods.sort_by_key(|m| m.span.start_line);
            if !methods.is_empty() {
                blocks.push(methods);
            }
        }
    }
    blocks
}

/// What constructors are called across languages, besides the type's own name (Java, C#, C++,
/// Dart …): Python, JavaScript and TypeScript, Swift, Ruby, PHP, and Rust's convention.
const CONSTRUCTOR_NAMES: &[&str] = &[
    "__init__",
    "__new__",
    "constructor",
    "init",
    "initialize",
    "__construct",
    "new",
];

/// A question that speaks of constructors ("Person Name Constructors", "the `Foo` constructor
/// throws") means the constructors of the types it names: each type's constructors gain what a
/// written name gains, spread over the types as a name is over its definitions.
fn add_constructors(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
    about_tests: bool,
) {
    if !question.about_constructors {
        return;
    }
    let types: Vec<&Entity> = question
        .names
        .iter()
        .filter(|n| n.origin != Origin::Code && !question.defined_here.contains(&n.text))
        .flat_map(|n| generation.entities_named(&n.text))
        .filter(|e| e.kind == EntityKind::Class && (about_tests || !is_test_path(&e.path)))
        .collect();
    if types.is_empty() {
        return;
    }
    let weight = NAME_WEIGHT / (types.len() as f64).powf(NAME_SPREAD);
    let mut rank = 0u32;
    let mut seen = HashSet::new();
    for ty in types {
        let constructors = CONSTRUCTOR_NAMES
            .iter()
            .copied()
            .chain([ty.name.as_str()])
            .flat_map(|name| generation.entities_named(name))
            .filter(|m| m.kind == EntityKind::Method && owned_by(m, &ty.name));
        for constructor in constructors.filter(|m| seen.insert(m.id.as_str())) {
            credit_name_match(generation, fused, constructor, &mut rank, weight);
        }
    }
}

/// The one indexed file whose name is one typo from the name a frame writes (`reponse.js:915`
/// for `response.js`), with the same extension: a line number says the file is the project's,
/// and reporters type paths from memory.
fn resolve_misspelt<'g>(generation: &'g LoadedGeneration, written: &str) -> Option<&'g str> {
    one_typo_away(generation.files.paths(), written)
}

fn one_typo_away<'p>(paths: &'p [String], written: &str) -> Option<&'p str> {
    let name = written.rsplit(['/', '\\']).next()?;
    let extension = name.rsplit_once('.')?.1;
    if name.chars().count() < MISSPELT_MIN_CHARS {
        return None;
    }
    let mut found = paths.iter().filter(|path| {
        let file = path.rsplit('/').next().unwrap_or(path);
        file.rsplit_once('.').is_some_and(|(_, e)| e == extension)
            && strsim::levenshtein(file, name) == 1
    });
    let first = found.next()?;
    found.next().is_none().then_some(first.as_str())
}

/// The indexed file a written path names: the longest match on whole trailing path
/// components (a bare file name only when one file has it).
fn resolve_path<'g>(generation: &'g LoadedGeneration, written: &str) -> Option<&'g str> {
    let written = written.replace('\\', "/");
    let components: Vec<&str> = written
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let matches_tail = |path: &str, take: usize| {
        let tail = components[components.len() - take..].join("/");
        path == tail || path.ends_with(&format!("/{tail}"))
    };
    let files = generation.files.paths();
    for take in (1..=components.len()).rev() {
        let found: Vec<&String> = files.iter().filter(|p| matches_tail(p, take)).collect();
        match found.len() {
            0 => continue,
            1 => return Some(found[0].as_str()),
            _ if take > 1 => return Some(found.iter().min_by_key(|p| p.len())?.as_str()),
            _ => return None,
        }
    }
    None
}

/// Traceback frames and written paths that lie in the index: the entity a frame is in gets
/// credit (innermost frames first), and every file named this way gets file evidence.
fn add_frames(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) -> HashMap<String, f64> {
    let mut files: HashMap<String, f64> = HashMap::new();
    let mut rank = 0i32;
    for frame in question.frames.iter().rev() {
        let resolved = resolve_path(generation, &frame.path)
            .or_else(|| resolve_misspelt(generation, &frame.path));
        let Some(path) = resolved else {
            continue;
        };
        rank += 1;
        // The innermost frame is where the failure surfaced; each frame further out counts half.
        let decay = 0.5f64.powi(rank - 1);
        *files.entry(path.to_string()).or_default() += decay * PATH_FILE_WEIGHT / (RRF_K + 1.0);
        let candidates: Vec<&Entity> = generation
            .entities
            .iter()
            .filter(|e| e.path == path && !e.kind.is_file_level())
            .collect();
        let entity = frame_entity(&candidates, frame.function.as_deref(), frame.line);
        if let Some(entity) = entity
            && let Some(index) = generation.first_chunk_index(&entity.id)
        {
            let hit = credit(
                fused,
                &entity.id,
                index,
                decay * FRAME_WEIGHT / (RRF_K + 1.0),
            );
            hit.evidence.frame = true;
        }
    }
    for (i, written) in question.paths.iter().enumerate() {
        let resolved =
            resolve_path(generation, written).or_else(|| generation.files.module_named(written));
        if let Some(path) = resolved {
            *files.entry(path.to_string()).or_default() +=
                PATH_FILE_WEIGHT / (RRF_K + (i + 1) as f64);
        }
    }
    for (i, name) in question.names.iter().enumerate() {
        if let Some(path) = file_named(generation, &name.text, question.about_tests) {
            *files.entry(path.to_string()).or_default() +=
                PATH_FILE_WEIGHT / (RRF_K + (i + 1) as f64);
        }
    }
    files
}

/// The definition a frame lies in, among its file's: the one named as the frame names its
/// function nearest to the frame's line (a file often defines a name in several classes, and
/// the reporter's copy may have drifted by a few lines), else the innermost one holding the
/// line.
fn frame_entity<'g>(
    candidates: &[&'g Entity],
    function: Option<&str>,
    line: u32,
) -> Option<&'g Entity> {
    let distance = |e: &Entity| {
        if line < e.span.start_line {
            e.span.start_line - line
        } else {
            line.saturating_sub(e.span.end_line)
        }
    };
    let named = candidates
        .iter()
        .filter(|e| function == Some(e.name.as_str()))
        .min_by_key(|e| (distance(e), e.span.start_line));
    named
        .or_else(|| {
            candidates
                .iter()
                .filter(|e| distance(e) == 0)
                .min_by_key(|e| e.span.end_line - e.span.start_line)
        })
        .copied()
}

/// The one file (outside tests unless asked) whose name without extension is `name`, as
/// written: `L031` names `rules/L031.py`.
fn file_named<'g>(
    generation: &'g LoadedGeneration,
    name: &str,
    about_tests: bool,
) -> Option<&'g str> {
    let mut found = generation
        .files
        .named(name)
        .filter(|path| about_tests || !is_test_path(path));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Error messages, quoted output and flags found verbatim in a chunk: the entity that writes
/// the message or declares the flag is where it comes from.
fn add_messages(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) {
    let mut rank = 0u32;
    let fragments = question
        .messages
        .iter()
        .flat_map(|message| message_fragments(message).into_iter().take(4))
        .map(|fragment| vec![fragment.to_string()]);
    // A flag is declared where its name is a string literal (`long("hidden")`,
    // `Bool("hidden", …)`, `.option('--hidden')`).
    let flags = question.flags.iter().map(|flag| {
        vec![
            format!("\"{flag}\""),
            format!("'{flag}'"),
            format!("\"--{flag}"),
            format!("'--{flag}"),
        ]
    });
    for needles in fragments.chain(flags) {
        let found: Vec<usize> = (0..generation.chunks.len())
            .filter(|&i| {
                let chunk = &generation.chunks[i];
                (question.about_tests || !is_test_path(&chunk.path))
                    && needles.iter().any(|n| chunk.text.contains(n.as_str()))
            })
            .take(5)
            .collect();
        for index in found {
            rank += 1;
            let entity_id = generation.chunks[index].entity_id.clone();
            let hit = credit(
                fused,
                &entity_id,
                index,
                MESSAGE_WEIGHT / (RRF_K + rank as f64),
            );
            hit.evidence.message = true;
        }
    }
}

/// Functions that spell several of the question's short quoted values as string literals
/// (`'OB'`, `'OF'` of "works with "OB", "OF", not "OL""): a report quoting values names the
/// code that tells them apart, the list or the branch the fix extends. One value alone is any
/// use of it. The functions spelling the most of them are credited, once each, as a message
/// is (outside tests unless asked), a whole tier of equal counts at a time at the same credit,
/// while the tiers fit in [`QUOTED_VALUE_PLACES`]: values that more functions spell alike are
/// idiom (`'utf-8'`, `'strict'`), and which of them to credit would be an accident of order.
/// Only the entities the legs reached are read, as for pasted excerpts: the values' own words
/// reach the code that spells them, and reading every chunk cost a 359-word report with quoted
/// values some 3 ms of 29 (criterion, 6,532 chunks).
fn add_quoted_values(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) {
    let values = &question.values[..question.values.len().min(QUOTED_VALUES_MAX)];
    if values.len() < QUOTED_VALUES_MIN {
        return;
    }
    let needles = values
        .iter()
        .flat_map(|v| [format!("\"{v}\""), format!("'{v}'")]);
    let Ok(finder) = AhoCorasick::new(needles) else {
        return;
    };
    let spelling = values_spelt(generation, fused, question, &finder);
    let mut credited = 0;
    for group in spelling.chunk_by(|a, b| a.0 == b.0) {
        if credited + group.len() > QUOTED_VALUE_PLACES {
            break;
        }
        let amount = MESSAGE_WEIGHT / (RRF_K + (credited + 1) as f64);
        for &(_, index) in group {
            let entity_id = &generation.chunks[index].entity_id;
            credit(fused, entity_id, index, amount).evidence.message = true;
        }
        credited += group.len();
    }
}

/// The reached functions (outside tests unless asked) spelling at least
/// [`QUOTED_VALUES_MIN`] of the values `finder` looks for, as (values spelt, best chunk), one
/// per entity, most values first.
fn values_spelt(
    generation: &LoadedGeneration,
    fused: &HashMap<String, Hit>,
    question: &Question,
    finder: &AhoCorasick,
) -> Vec<(usize, usize)> {
    let mut best: HashMap<&str, (usize, usize)> = HashMap::new();
    for index in reached_chunks(generation, fused) {
        let chunk = &generation.chunks[index];
        if !chunk.kind.is_callable() || !is_code_in_scope(chunk, question.about_tests) {
            continue;
        }
        let spelt: HashSet<usize> = finder
            .find_iter(&chunk.text)
            .map(|m| m.pattern().as_usize() / 2)
            .collect();
        // Chunks come in order, so an entity's best is its first chunk spelling the most.
        let entry = best.entry(chunk.entity_id.as_str()).or_insert((0, index));
        if spelt.len() > entry.0 {
            *entry = (spelt.len(), index);
        }
    }
    let mut spelling: Vec<(usize, usize)> = best
        .into_values()
        .filter(|&(count, _)| count >= QUOTED_VALUES_MIN)
        .collect();
    spelling.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    spelling
}

/// Code the question pastes from the project: two of its consecutive code lines standing
/// together in at most [`EXCERPT_MAX_PLACES`] chunks of code (outside tests unless asked) of
/// the entities the legs reached (pasted code shares its identifiers with the question, so
/// the full-text leg reaches it; reading only those keeps a report with code as fast as one
/// without). The entity holding them is the code the reporter was reading; each entity is
/// credited once, as a message is. Lines found in more places are idiom, not a pointer.
fn add_excerpts(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) {
    let mut rank = 0u32;
    let mut credited: HashSet<String> = HashSet::new();
    let pointers = excerpt_places(generation, question, fused)
        .into_iter()
        .filter(|places| places.len() <= EXCERPT_MAX_PLACES);
    for index in pointers.flatten() {
        let entity_id = &generation.chunks[index].entity_id;
        if !credited.insert(entity_id.clone()) {
            continue;
        }
        rank += 1;
        let hit = credit(
            fused,
            entity_id,
            index,
            MESSAGE_WEIGHT / (RRF_K + rank as f64),
        );
        hit.evidence.message = true;
    }
}

/// For each of the question's pasted pairs, the chunks of the reached entities' code (outside
/// tests unless asked) where it stands together, in chunk order and at most one past
/// [`EXCERPT_MAX_PLACES`]: one pass over those chunks finds every pair's first line at once.
fn excerpt_places(
    generation: &LoadedGeneration,
    question: &Question,
    reached: &HashMap<String, Hit>,
) -> Vec<Vec<usize>> {
    let pairs = &question.excerpts;
    let mut places: Vec<Vec<usize>> = vec![Vec::new(); pairs.len()];
    if pairs.is_empty() {
        return places;
    }
    let Ok(first_lines) = AhoCorasick::new(pairs.iter().map(|(first, _)| first)) else {
        return places;
    };
    for index in reached_chunks(generation, reached) {
        let chunk = &generation.chunks[index];
        for found in first_lines.find_overlapping_iter(chunk.text.as_str()) {
            let pair = found.pattern().as_usize();
            let here = &mut places[pair];
            if here.len() > EXCERPT_MAX_PLACES || here.last() == Some(&index) {
                continue;
            }
            if followed_by(&chunk.text[found.end()..], &pairs[pair].1)
                && is_code_in_scope(chunk, question.about_tests)
            {
                here.push(index);
            }
        }
    }
    places
}

/// The chunks of the entities the legs reached, in index order.
fn reached_chunks(generation: &LoadedGeneration, reached: &HashMap<String, Hit>) -> Vec<usize> {
    let mut chunks: Vec<usize> = reached
        .keys()
        .flat_map(|id| generation.chunk_indices_of(id))
        .collect();
    chunks.sort_unstable();
    chunks.dedup();
    chunks
}

/// Whether `rest`, the text after a line's first part, ends that line and its next non-blank
/// line is `second` (trimmed: a pasted excerpt keeps its lines, not its indentation).
fn followed_by(rest: &str, second: &str) -> bool {
    let mut lines = rest.lines();
    lines.next().is_some_and(|tail| tail.trim().is_empty())
        && lines.map(str::trim).find(|line| !line.is_empty()) == Some(second)
}

/// Pools evidence per file: a whole-file BM25 leg over the question's words, the files that
/// frames and paths name, and the file's strongest entities (several chunks of one file
/// matching make the file likelier). Each entity then gains a share of its file's evidence.
/// Returns the files, best first.
fn pool_files(
    generation: &LoadedGeneration,
    question: &Question,
    hits: &mut Vec<Hit>,
    mut files: HashMap<String, f64>,
) -> Vec<RankedFile> {
    let strength = question.file_prior_strength();
    if strength == 0.0 {
        return Vec::new();
    }
    let (leg, share, pooled) = (
        strength * FILE_LEG_WEIGHT,
        strength * FILE_SHARE,
        strength * FILE_POOL,
    );
    for (rank, (path, _)) in generation
        .files
        .rank(&question.words, CANDIDATES)
        .into_iter()
        .enumerate()
    {
        let prior = if generation.files.is_prose(path) {
            prose_prior(question) * history_prior(true, path)
        } else {
            place_prior(generation, path, question)
        };
        *files.entry(path.to_string()).or_default() += prior * leg / (RRF_K + (rank + 1) as f64);
    }
    let mut best: HashMap<&str, Vec<f64>> = HashMap::new();
    for hit in hits.iter() {
        best.entry(generation.chunks[hit.chunk].path.as_str())
            .or_default()
            .push(hit.score);
    }
    for (path, mut scores) in best {
        scores.sort_by(|a, b| b.total_cmp(a));
        let strongest: f64 = scores
            .iter()
            .take(3)
            .zip([1.0, 0.5, 0.25])
            .map(|(s, w)| s * w)
            .sum();
        *files.entry(path.to_string()).or_default() += pooled * strongest;
    }
    let mut ranked: Vec<RankedFile> = files
        .into_iter()
        .map(|(path, score)| RankedFile { path, score })
        .collect();
    sort_files(&mut ranked);
    credit_units_in_files(generation, question, hits, &ranked);
    let position: HashMap<&str, (u32, f64)> = ranked
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), (i as u32 + 1, f.score)))
        .collect();
    // A file's best entity takes its file's evidence in full, each next one a decaying share,
    // so a strong file leads the ranking without filling it.
    for (i, nth) in places_in_file(generation, hits, reads_as_report(question)) {
        let path = generation.chunks[hits[i].chunk].path.as_str();
        if let Some(&(rank, score)) = position.get(path) {
            hits[i].score += share * score * FILE_DECAY.powi(nth);
            hits[i].evidence.file_rank = Some(rank);
        }
    }
    if question.long {
        lift_siblings(generation, hits, &position, share);
    }
    // Reported in the order the entities now rank: a file's best entity, else its own share.
    let mut best_entity: HashMap<&str, f64> = HashMap::new();
    for hit in hits.iter() {
        let best = best_entity
            .entry(generation.chunks[hit.chunk].path.as_str())
            .or_insert(0.0);
        *best = best.max(hit.score);
    }
    let mut files: Vec<RankedFile> = ranked
        .iter()
        .map(|f| RankedFile {
            score: best_entity
                .get(f.path.as_str())
                .copied()
                .unwrap_or(share * f.score),
            path: f.path.clone(),
        })
        .collect();
    files.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    files
}

fn sort_files(files: &mut [RankedFile]) {
    files.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// The entities of the files in the leading entity's folder gain a share of the leading
/// file's evidence, never reaching the leading entity: a folder is a unit (a Go package, a
/// Java package, a module's files), and a fix that spans files mostly stays in one. Reports
/// only: a one-sentence description asks for one definition (lifting its folder-mates cost
/// the docstring benchmark 0.3 points of R@5).
fn lift_siblings(
    generation: &LoadedGeneration,
    hits: &mut [Hit],
    position: &HashMap<&str, (u32, f64)>,
    share: f64,
) {
    let Some(leader) = hits.iter().max_by(|a, b| {
        a.score
            .total_cmp(&b.score)
            .then_with(|| b.entity_id.cmp(&a.entity_id))
    }) else {
        return;
    };
    let (top, leader_path) = (leader.score, generation.chunks[leader.chunk].path.as_str());
    let Some(&(_, evidence)) = position.get(leader_path) else {
        return;
    };
    let leader_folder = folder_of(leader_path);
    for (i, nth) in places_in_file(generation, hits, false) {
        let path = generation.chunks[hits[i].chunk].path.as_str();
        if path != leader_path && folder_of(path) == leader_folder {
            let lifted = hits[i].score + share * SIBLING_SHARE * evidence * SIBLING_DECAY.powi(nth);
            hits[i].score = lifted.min(top * SIBLING_CEILING).max(hits[i].score);
        }
    }
}

/// When a type or module ranked above a member of its own hands that member its place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Yield {
    /// A report's fix edits a unit: the container yields to its best member with evidence.
    ToAnyMember,
    /// A shorter question past one line names a type and describes what one of its methods
    /// does ("Nested DateTime Format" and "Resolve the schema opts using root instead of
    /// parent"): the type, ranked by its name, yields only to a member that is the question's
    /// best word match in the code outside tests. A member that only shares a few words keeps
    /// its place below the type: "Added `__contains__` and `__iter__` to PersonName" and
    /// "BaseSchema is unnecessary" are about the type as a whole. A one-line description may
    /// describe the type itself ("how ConstraintMaker accumulates descriptions"): there the
    /// type keeps its place. A question about constructors ("Person Name Constructors") has
    /// the type yield to its constructor as well.
    NamedToBestWordMatch { about_constructors: bool },
}

/// A type or module that outranks the best function or method of its own that the evidence
/// reached hands that member its place and ranks just below it, at a share of its score,
/// when `rule` lets it. A type none of whose members has evidence keeps its place (the
/// question is about the type as a whole).
fn yield_to_members(generation: &LoadedGeneration, hits: &mut [Hit], rule: Yield) {
    let span = |hit: &Hit| {
        let chunk = &generation.chunks[hit.chunk];
        let (start, end) = generation
            .entity(&hit.entity_id)
            .map_or((chunk.start_line, chunk.end_line), |e| {
                (e.span.start_line, e.span.end_line)
            });
        (chunk.path.as_str(), start, end, chunk.kind)
    };
    let spans: Vec<_> = hits.iter().map(span).collect();
    // Only the narrower rule reads the full-text ranks: a report skips the pass.
    let best_word_match = match rule {
        Yield::ToAnyMember => None,
        Yield::NamedToBestWordMatch { .. } => best_code_lexical_rank(generation, hits),
    };
    let takes_place = |container: &Hit, member: &Hit| match rule {
        Yield::ToAnyMember => true,
        Yield::NamedToBestWordMatch { about_constructors } => {
            let best_word_match = member.evidence.lexical_rank.is_some()
                && member.evidence.lexical_rank == best_word_match;
            let its_constructor = about_constructors
                && constructs(generation, &member.entity_id, &container.entity_id);
            container.evidence.name_match && (best_word_match || its_constructor)
        }
    };
    let mut order: Vec<usize> = (0..hits.len()).collect();
    order.sort_by(|&a, &b| hits[b].score.total_cmp(&hits[a].score));
    for container in order {
        let (path, start, end, kind) = spans[container];
        if !matches!(kind, EntityKind::Class | EntityKind::Module) {
            continue;
        }
        let inside = |&i: &usize| {
            let (p, s, e, k) = spans[i];
            k.is_unit() && p == path && (kind == EntityKind::Module || (start <= s && e <= end))
        };
        let best = (0..hits.len()).filter(inside).max_by(|&a, &b| {
            hits[a]
                .score
                .total_cmp(&hits[b].score)
                .then_with(|| hits[b].entity_id.cmp(&hits[a].entity_id))
        });
        if let Some(member) = best
            && hits[member].score < hits[container].score
            && takes_place(&hits[container], &hits[member])
        {
            hand_place(hits, container, member);
        }
    }
}

/// `yielding` hands its score to `taking` and ranks just below it, at [`CONTAINER_SHARE`] of
/// that score.
fn hand_place(hits: &mut [Hit], yielding: usize, taking: usize) {
    let place = hits[yielding].score;
    hits[taking].score = place;
    hits[yielding].score = place * CONTAINER_SHARE;
}

/// Languages in which a later definition of a name in the same scope rebinds the name, so
/// the earlier definition never runs through it: Python's `def` and `class` are assignments.
const REBINDING_LANGUAGES: &[&str] = &["python"];

/// A definition that a later one of the same name in the same scope replaces (`…::f`, then
/// `…::f#2`) is dead code under that name: what a question describes runs in the later one.
/// When the replaced definition outranks the one that replaces it, it hands it its place and
/// ranks just below at a share of its score, as a type yields to its member. pydicom's
/// `generate_concept_dicts.py` defines `write_snomed_mapping` twice; a change to "the SNOMED
/// mapping" edits the second. Decorated definitions are left alone (a property's getter and
/// setter, `@overload` stubs and registered variants all stay live), and so are module-level
/// definitions written inside a block (`if …: def f` / `else: def f`), where either may run.
fn yield_to_live_definitions(generation: &LoadedGeneration, hits: &mut [Hit]) {
    let replaced: Vec<(usize, &str)> = hits
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((i, replacing_definition(generation, &h.entity_id)?)))
        .collect();
    if replaced.is_empty() {
        return;
    }
    let position: HashMap<&str, usize> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.entity_id.as_str(), i))
        .collect();
    let pairs: Vec<(usize, usize)> = replaced
        .into_iter()
        .filter_map(|(i, live)| Some((i, *position.get(live)?)))
        .collect();
    for (replaced, live) in pairs {
        if hits[live].score < hits[replaced].score {
            hand_place(hits, replaced, live);
        }
    }
}

/// The id of the last definition that rebinds `id`'s name after it in the same scope (its
/// namesake in the same file under the same qualified name), when both are plain
/// (undecorated, unconditional) definitions of a [`REBINDING_LANGUAGES`] file.
fn replacing_definition<'g>(generation: &'g LoadedGeneration, id: &str) -> Option<&'g str> {
    let entity = generation.entity(id)?;
    if !REBINDING_LANGUAGES.contains(&entity.language.as_str()) {
        return None;
    }
    let mut later = generation
        .entities_named(&entity.name)
        .filter(|e| {
            e.path == entity.path
                && e.qualified_name == entity.qualified_name
                && e.span.start_line > entity.span.start_line
        })
        .peekable();
    later.peek()?;
    let indent = plain_definition_indent(generation, entity)?;
    later
        .filter(|e| plain_definition_indent(generation, e) == Some(indent))
        .max_by_key(|e| e.span.start_line)
        .map(|e| e.id.as_str())
}

/// The indentation of a definition's first line when it is a plain definition: not decorated,
/// and at the top level of its file when its scope is the module.
fn plain_definition_indent(generation: &LoadedGeneration, entity: &Entity) -> Option<usize> {
    let chunk = &generation.chunks[generation.first_chunk_index(&entity.id)?];
    let first = chunk.text.lines().find(|l| !l.trim().is_empty())?;
    let code = first.trim_start();
    let indent = first.len() - code.len();
    let in_module = entity.parent.as_deref() == Some(entity.path.as_str());
    (!code.starts_with('@') && (indent == 0 || !in_module)).then_some(indent)
}

/// Whether `member` is a constructor of the type `ty` (`__init__`, `new`, … or the type's own
/// name).
fn constructs(generation: &LoadedGeneration, member: &str, ty: &str) -> bool {
    let (Some(member), Some(ty)) = (generation.entity(member), generation.entity(ty)) else {
        return false;
    };
    owned_by(member, &ty.name)
        && (CONSTRUCTOR_NAMES.contains(&member.name.as_str()) || member.name == ty.name)
}

/// The best full-text rank among code outside tests (prose and test code left out): the
/// definition the question's words describe best.
fn best_code_lexical_rank(generation: &LoadedGeneration, hits: &[Hit]) -> Option<u32> {
    hits.iter()
        .filter(|hit| is_code_in_scope(&generation.chunks[hit.chunk], false))
        .filter_map(|hit| hit.evidence.lexical_rank)
        .min()
}

/// Whether a chunk is code (not prose or plain text) outside tests, or in tests too when
/// `about_tests`.
fn is_code_in_scope(chunk: &ChunkRow, about_tests: bool) -> bool {
    (about_tests || !is_test_path(&chunk.path)) && !chunk.kind.reads_as_prose()
}

/// The folder a root-relative path is in (`""` at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// A question long enough to be a report (a bug report, a change description) rather than a
/// description of one definition or of how a part works: its answer is the unit a fix edits.
fn reads_as_report(question: &Question) -> bool {
    question.file_prior_strength() >= REPORT_STRENGTH
}

/// How likely code at this place is the answer, before looking at the query: tests (unless
/// the question is about them), generated or vendored code, the repository's own tooling, and
/// code in a language the project barely uses, less than the project's own.
fn place_prior(generation: &LoadedGeneration, path: &str, question: &Question) -> f64 {
    let place = if is_generated_path(path) {
        GENERATED_PRIOR
    } else if !question.about_tests && is_test_path(path) {
        TEST_PRIOR
    } else if is_unasked_tooling(path, question) {
        TOOLING_PRIOR
    } else {
        1.0
    };
    let language = if generation.files.is_minority_language(path) {
        MINORITY_LANGUAGE_PRIOR
    } else {
        1.0
    };
    place * language
}

/// Whether a path lies in the repository's tooling and the question does not name that
/// folder (`scripts`, `ci`).
fn is_unasked_tooling(path: &str, question: &Question) -> bool {
    tooling_folder(path).is_some_and(|folder| {
        let name = folder.trim_start_matches('.');
        !question.words.iter().any(|word| word == name)
    })
}

/// A test written beside the code it exercises (Zig's `test "…"` blocks, subkind `test`)
/// weighs what a test file's definitions weigh.
fn test_block_prior(generation: &LoadedGeneration, entity_id: &str, question: &Question) -> f64 {
    let is_test_block = generation
        .entity(entity_id)
        .is_some_and(|e| e.subkind.as_deref() == Some(TEST_SUBKIND));
    if is_test_block && !question.about_tests {
        TEST_PRIOR
    } else {
        1.0
    }
}

/// How likely an entity of this kind is the answer, before looking at the query: file
/// headers and prose (Markdown sections) answer fewer code questions than definitions and
/// otherwise crowd them out of the top ranks (measured on the benchmark).
fn kind_prior(kind: EntityKind, question: &Question) -> f64 {
    match kind {
        EntityKind::Function | EntityKind::Method | EntityKind::Class => 1.0,
        EntityKind::Module => PROSE_PRIOR,
        // A text file (configuration, a format without a grammar) is weighed like prose, and
        // half of that again for a sentence: at 1.0 for one-line questions, the YAML and JSON
        // fixtures of the Python issue trees took 10 points of Acc@5 from the change
        // descriptions; at the prose weight, embedded `.rst` pages (changelogs, what's-new
        // notes, contributing guides) still outranked the code with the model (2026-12-02).
        // A question that is one identifier keeps the prose weight: a text file spelling it
        // (a `.proto` service, a Terraform resource) holds the only definition there is.
        EntityKind::Text if question.shape == QueryShape::Identifier => prose_prior(question),
        EntityKind::Text => prose_prior(question) * TEXT_SHARE,
        EntityKind::Section | EntityKind::Document => prose_prior(question),
    }
}

/// The history prior of prose or text in a file that records changes rather than
/// explains the code ([`is_history_path`]); code keeps 1.0 whatever its file is called
/// (`changes.py` is code).
fn history_prior(reads_as_prose: bool, path: &str) -> f64 {
    if reads_as_prose && is_history_path(path) {
        HISTORY_PRIOR
    } else {
        1.0
    }
}

/// How likely documentation answers this question: less for a report than for a one-line
/// question.
fn prose_prior(question: &Question) -> f64 {
    if question.long {
        REPORT_PROSE_PRIOR
    } else {
        PROSE_PRIOR
    }
}

fn kind_priority(kind: EntityKind) -> u8 {
    match kind {
        EntityKind::Function | EntityKind::Method => 0,
        EntityKind::Class => 1,
        EntityKind::Section => 2,
        EntityKind::Module | EntityKind::Document | EntityKind::Text => 3,
    }
}

/// The 1-hop call neighbours of the three strongest hits, if already candidates, gain a share.
fn add_graph_neighbours(generation: &LoadedGeneration, fused: &mut HashMap<String, Hit>) {
    let mut top: Vec<(String, f64)> = fused
        .values()
        .map(|h| (h.entity_id.clone(), h.score))
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (id, score) in top.into_iter().take(3) {
        let callees = generation
            .outgoing(&id, EdgeKind::Calls)
            .filter_map(|e| e.target.clone());
        let callers = generation
            .incoming(&id, EdgeKind::Calls)
            .map(|e| e.source.clone());
        let neighbours: std::collections::BTreeSet<String> =
            callees.chain(callers).filter(|n| *n != id).collect();
        for neighbour in neighbours {
            if let Some(hit) = fused.get_mut(&neighbour) {
                hit.score += GRAPH_SHARE * score;
                hit.evidence.graph_neighbour = true;
            }
        }
    }
}

/// A question that names two or more functions of one file ("move `_assign_times` to
/// `_assign_weather`") describes a change to where they meet: the unit of that file calling
/// [`MEETING_NAMES`] or more of the named definitions gains [`MEETING_SHARE`] of their mean
/// score (pvlib's `prepare_inputs`, which calls both). One hop, callers only, in the named
/// definitions' own file, so a popular name (`next`) does not flood the ranking. Not for a
/// trace: its frames are a call chain already, and a caller of two frames is not the frame
/// that failed.
fn add_meeting_callers(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
    question: &Question,
) {
    if !question.frames.is_empty() {
        return;
    }
    for (caller, mean) in callers_of_named(generation, fused) {
        let Some(index) = generation.first_chunk_index(&caller) else {
            continue;
        };
        let hit = credit(fused, &caller, index, MEETING_SHARE * mean);
        hit.evidence.graph_neighbour = true;
    }
}

/// The units outside tests that call [`MEETING_NAMES`] or more distinctly named definitions
/// the question names, in those definitions' file, with the mean score of the named
/// definitions they call. A caller shares its callee's file, so a named definition in a test
/// file has no caller that counts.
fn callers_of_named(
    generation: &LoadedGeneration,
    fused: &HashMap<String, Hit>,
) -> Vec<(String, f64)> {
    let mut calls: HashMap<&str, Vec<(&str, f64)>> = HashMap::new();
    for named in fused.values().filter(|h| h.evidence.name_match) {
        let Some(callee) = generation.entity(&named.entity_id) else {
            continue;
        };
        if is_test_path(&callee.path) {
            continue;
        }
        let callers: HashSet<&str> = generation
            .incoming(&callee.id, EdgeKind::Calls)
            .map(|edge| edge.source.as_str())
            .filter(|source| *source != callee.id)
            .filter(|source| {
                generation
                    .entity(source)
                    .is_some_and(|e| e.path == callee.path)
            })
            .collect();
        for caller in callers {
            calls
                .entry(caller)
                .or_default()
                .push((&callee.name, named.score));
        }
    }
    let mut meeting: Vec<(String, f64)> = calls
        .into_iter()
        .filter(|(_, called)| {
            let names: HashSet<&str> = called.iter().map(|(name, _)| *name).collect();
            names.len() >= MEETING_NAMES
        })
        .map(|(caller, called)| {
            let mut scores: Vec<f64> = called.iter().map(|(_, score)| *score).collect();
            scores.sort_by(f64::total_cmp);
            let mean = scores.iter().sum::<f64>() / scores.len() as f64;
            (caller.to_string(), mean)
        })
        .collect();
    meeting.sort_by(|a, b| a.0.cmp(&b.0));
    meeting
}

/// The strongest hits' namesakes in their files' companions (a declaration in a header and
/// its definition in the source or inline file, `FileIndex::companions`) gain a share of
/// their score: a fix that changes one usually changes the other.
fn add_companions(generation: &LoadedGeneration, fused: &mut HashMap<String, Hit>) {
    let mut top: Vec<(String, usize, f64)> = fused
        .values()
        .map(|h| (h.entity_id.clone(), h.chunk, h.score))
        .collect();
    top.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    for (id, chunk, score) in top.into_iter().take(COMPANION_SOURCES) {
        let path = generation.chunks[chunk].path.as_str();
        let Some(entity) = generation.entity(&id) else {
            continue;
        };
        let companions: Vec<&str> = generation.files.companions(path).collect();
        if companions.is_empty() {
            continue;
        }
        let namesakes: Vec<&Entity> = generation
            .entities_named(&entity.name)
            .filter(|e| companions.contains(&e.path.as_str()))
            .collect();
        for namesake in declaring(entity, namesakes, fused) {
            if let Some(index) = generation.first_chunk_index(&namesake.id) {
                let hit = credit(fused, &namesake.id, index, COMPANION_SHARE * score);
                hit.evidence.companion = true;
            }
        }
    }
}

/// The companion namesakes that stand for `entity`'s declaration: those written with its
/// parameters when any is (the one overload of an overloaded name), else the one with the most
/// evidence already (the first when none has any). Every namesake of an overloaded name is not
/// a declaration of this one: a header defining twenty `convert`s gains one share, not twenty.
fn declaring<'g>(
    entity: &Entity,
    namesakes: Vec<&'g Entity>,
    fused: &HashMap<String, Hit>,
) -> Vec<&'g Entity> {
    let written = parameters(&entity.signature);
    let same: Vec<&Entity> = namesakes
        .iter()
        .copied()
        .filter(|e| written.is_some() && parameters(&e.signature) == written)
        .collect();
    if !same.is_empty() {
        return same;
    }
    let evidence = |e: &Entity| fused.get(&e.id).map_or(0.0, |h| h.score);
    let best = namesakes.into_iter().reduce(|best, next| {
        if evidence(next) > evidence(best) {
            next
        } else {
            best
        }
    });
    best.into_iter().collect()
}

/// A signature's parameter list without whitespace (`(double value)` → `(doublevalue)`).
fn parameters(signature: &str) -> Option<String> {
    let open = signature.find('(')?;
    let close = signature.rfind(')')?;
    (open < close).then(|| {
        signature[open..=close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    })
}

/// A report's fix edits units of the files its evidence points at, and the legs may have
/// reached none of them: the units of the leading files are credited by their rank among
/// their file's units (BM25 over their own text), so each file's share goes to the unit that
/// holds the report's words.
fn credit_units_in_files(
    generation: &LoadedGeneration,
    question: &Question,
    hits: &mut Vec<Hit>,
    files: &[RankedFile],
) {
    if !reads_as_report(question) {
        return;
    }
    let leading: HashSet<&str> = files
        .iter()
        .take(FILES_OPENED)
        .map(|f| f.path.as_str())
        .collect();
    // An entity id is `<path>::<qualified name>`: only the leading files' units are scored.
    let in_leading_file = |id: &str| {
        leading.iter().any(|path| {
            id.strip_prefix(path)
                .is_some_and(|name| name.starts_with("::"))
        })
    };
    let units: Vec<&str> = generation
        .units
        .rank_where(
            &question.words,
            usize::MAX,
            IN_FILE_LENGTH_NORM,
            in_leading_file,
        )
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let weight = IN_FILE_WEIGHT * question.file_prior_strength();
    let mut position: HashMap<String, usize> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.entity_id.clone(), i))
        .collect();
    let mut nth_in_file: HashMap<&str, u32> = HashMap::new();
    for id in units {
        let Some(chunk) = generation.first_chunk_index(id) else {
            continue;
        };
        let path = generation.chunks[chunk].path.as_str();
        let nth = nth_in_file.entry(path).or_insert(0);
        *nth += 1;
        let rank = *nth;
        let amount = weight * place_prior(generation, path, question) / (RRF_K + rank as f64);
        let index = *position.entry(id.to_string()).or_insert_with(|| {
            hits.push(Hit::unscored(id, chunk));
            hits.len() - 1
        });
        hits[index].score += amount;
        hits[index].evidence.unit_in_file_rank = Some(rank);
    }
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
    use super::*;
    use crate::retrieve::question::query_shape;

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
