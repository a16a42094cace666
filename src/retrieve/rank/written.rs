//! Credit for what a question writes verbatim from the project: traceback frames and written
//! locations (the entity holding the line, and the file as path evidence), written paths and
//! file names, error messages and flags found in a chunk, the function spelling several quoted
//! values, and code pasted from the project. Messages, values and excerpts are looked for only in
//! the entities the legs reached, so a long report costs no full scan. It adds credit and file
//! evidence; it never ranks files or reorders hits.

use std::collections::{HashMap, HashSet};

use aho_corasick::AhoCorasick;

use super::{RRF_K, credit, is_code_in_scope};
use crate::load::generation::LoadedGeneration;
use crate::parse::Entity;
use crate::retrieve::hit::Hit;
use crate::retrieve::question::{Question, message_fragments};
use crate::retrieve::resolve::MISSPELT_MIN_CHARS;
use crate::walk::is_test_path;

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

/// The one indexed file whose name is one typo from the name a frame writes (`reponse.js:915`
/// for `response.js`), with the same extension: a line number says the file is the project's,
/// and reporters type paths from memory.
fn resolve_misspelt<'g>(generation: &'g LoadedGeneration, written: &str) -> Option<&'g str> {
    one_typo_away(generation.files.paths(), written)
}

pub(super) fn one_typo_away<'p>(paths: &'p [String], written: &str) -> Option<&'p str> {
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
pub(super) fn add_frames(
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
pub(super) fn frame_entity<'g>(
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
pub(super) fn add_messages(
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
pub(super) fn add_quoted_values(
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
pub(super) fn add_excerpts(
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
