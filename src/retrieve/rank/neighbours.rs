//! Evidence that travels along the code's structure rather than the question's words: a strong
//! hit's call-graph neighbours gain a small share, the function where two named functions meet
//! (their common caller) is credited, and a declaration's companion (a header and its source, a
//! trait method and its implementation) shares its evidence. One hop, scored, never a flood.

use std::collections::{HashMap, HashSet};

use super::credit;
use crate::graph::EdgeKind;
use crate::load::generation::LoadedGeneration;
use crate::parse::Entity;
use crate::retrieve::hit::Hit;
use crate::retrieve::question::Question;
use crate::walk::is_test_path;

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

/// Hits whose namesakes in companion files gain a share, and the share.
const COMPANION_SOURCES: usize = 5;
const COMPANION_SHARE: f64 = 0.5;

/// The 1-hop call neighbours of the three strongest hits, if already candidates, gain a share.
pub(super) fn add_graph_neighbours(
    generation: &LoadedGeneration,
    fused: &mut HashMap<String, Hit>,
) {
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
pub(super) fn add_meeting_callers(
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
pub(super) fn add_companions(generation: &LoadedGeneration, fused: &mut HashMap<String, Hit>) {
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
pub(super) fn parameters(signature: &str) -> Option<String> {
    let open = signature.find('(')?;
    let close = signature.rfind(')')?;
    (open < close).then(|| {
        signature[open..=close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    })
}
