//! The last reordering passes over the scored hits: a type or module that outranks its own
//! member with evidence hands that member its place (always in a report, and in a shorter
//! question only to the member that is its best word match), and a Python definition that a
//! later one of the same name replaces hands its place to the live one. They move scores
//! between hits already ranked; they add no evidence.

use std::collections::HashMap;

use super::is_code_in_scope;
use super::names::CONSTRUCTOR_NAMES;
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};
use crate::retrieve::hit::Hit;
use crate::retrieve::resolve::owned_by;

/// What a type or module keeps of its score when a member takes its place (reports).
const CONTAINER_SHARE: f64 = 0.5;

/// When a type or module ranked above a member of its own hands that member its place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Yield {
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
pub(super) fn yield_to_members(generation: &LoadedGeneration, hits: &mut [Hit], rule: Yield) {
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
pub(super) fn yield_to_live_definitions(generation: &LoadedGeneration, hits: &mut [Hit]) {
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
