//! File evidence: a whole-file BM25 leg over the question's words, the files frames and paths
//! name, and each file's strongest entities are pooled into a file ranking; each entity then
//! gains a decaying share of its file's evidence (a report's file share goes to its units
//! first), a report's words rank the units of its leading files among themselves, and a long
//! question's leading file lends its folder-mates a share. It never decides a hit's kind or
//! place prior.

use std::collections::{HashMap, HashSet};

use super::priors::{history_prior, place_prior, prose_prior};
use super::{CANDIDATES, RRF_K, reads_as_report};
use crate::load::generation::LoadedGeneration;
use crate::retrieve::hit::{Hit, RankedFile, places_in_file};
use crate::retrieve::question::Question;

/// The share of the leading file's evidence its folder-mates' entities gain, and the part of the
/// leading entity's score they may reach.
const SIBLING_SHARE: f64 = 0.3;
const SIBLING_CEILING: f64 = 0.99;

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

/// Pools evidence per file: a whole-file BM25 leg over the question's words, the files that
/// frames and paths name, and the file's strongest entities (several chunks of one file
/// matching make the file likelier). Each entity then gains a share of its file's evidence.
/// Returns the files, best first.
pub(super) fn pool_files(
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

/// The folder a root-relative path is in (`""` at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
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
