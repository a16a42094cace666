//! Credit for the definitions a question names: identifiers written in its prose or code
//! (with their owners, `Dict.getitem`), a plain word that is exactly one definition's name, a
//! family of definitions named after an underscore name nothing defines, the methods of a trait
//! implementation written the Rust way, and a named type's constructors when the prose speaks of
//! constructors. It reads the question's names and the generation's name indexes and adds
//! credit to the fused hits; it never pools files or reorders hits.

use std::collections::{HashMap, HashSet};

use super::{RRF_K, credit};
use crate::graph::EdgeKind;
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};
use crate::retrieve::hit::Hit;
use crate::retrieve::question::{Name, Origin, Question};
use crate::retrieve::resolve::{
    may_be_named, misspelt_member, owned_by, owned_or_bound, owner_written,
};
use crate::walk::is_test_path;

/// Weight of a definition whose own name is in the query.
const NAME_WEIGHT: f64 = 1.2;

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

/// Definitions whose own name the question writes. A name is worth less when the question's
/// own code defines it (the user's `__init__`, their class `PV`), when it was only written in
/// the question's code, and when many definitions share it; only definitions outside tests
/// count unless the question is about tests. A snake_case name that nothing defines (nor,
/// written under its owner, a member one letter away) stands at half weight for the family
/// of definitions named after it with a prefix (`for_assigned_stmts` for `assigned_stmts`).
pub(super) fn add_name_matches(
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
        // Of a common name's definitions, those under a type the question writes first.
        definitions.sort_by_cached_key(|e| {
            let owner_unwritten = name.owners.is_empty() && !owner_written(question, e);
            (owner_unwritten, kind_priority(e.kind), e.id.as_str())
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
pub(super) fn drop_constructors_of_named_type(definitions: &mut Vec<&Entity>, name: &str) {
    if definitions.iter().any(|e| e.kind == EntityKind::Class) {
        definitions.retain(|e| !(e.kind == EntityKind::Method && owned_by(e, name)));
    }
}

/// A Rust question names an `impl` block as `Drop for Drain`: the methods of that block (the
/// type's methods in the edge's file from its `impl` line up to the file's next trait `impl`)
/// count as the two names it wrote (the trait's and the type's both point at them), in the
/// order written, spread over the blocks of that pair as a name is over its definitions; the
/// type's other methods gain nothing.
pub(super) fn add_trait_impls(
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
pub(super) const CONSTRUCTOR_NAMES: &[&str] = &[
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
pub(super) fn add_constructors(
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

pub(super) fn kind_priority(kind: EntityKind) -> u8 {
    match kind {
        EntityKind::Function | EntityKind::Method => 0,
        EntityKind::Class => 1,
        EntityKind::Section => 2,
        EntityKind::Module | EntityKind::Document | EntityKind::Text => 3,
    }
}
