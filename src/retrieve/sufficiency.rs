//! The sufficiency score: how safe it is to answer from the returned context alone, in
//! [0, 1]. It multiplies two things an agent can act on: *confidence* that the top entity is
//! what was asked for (the definition is named in the query; the lexical and vector legs agree;
//! its lead over the runner-up), and *coverage* of what the task template planned for this
//! verbosity (sections dropped for budget lower it; never raise it). See
//! `docs/sufficiency.md` for the calibration against the evaluation data.

use serde::Serialize;

use super::context::Bundle;
use super::rank::{QueryShape, Ranking, RetrievalMode};

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Sufficiency {
    pub score: f64,
    pub confidence: f64,
    pub coverage: f64,
}

/// Confidence that the first hit answers the query: an estimate of the probability that it is
/// the entity asked for, calibrated on the benchmark (see docs/sufficiency.md). The lead over
/// the runner-up is deliberately not used: on the benchmark large leads were *less* often right.
pub fn ranking_confidence(ranking: &Ranking) -> f64 {
    let hits = &ranking.hits;
    let Some(top) = hits.first() else { return 0.0 };
    if ranking.mode == RetrievalMode::Exact {
        return if hits.len() == 1 { 0.9 } else { 0.5 };
    }
    let e = &top.evidence;
    let agree =
        |n: u32| matches!((e.lexical_rank, e.vector_rank), (Some(l), Some(v)) if l <= n && v <= n);
    let contested_name = hits.iter().skip(1).any(|h| h.evidence.name_match);
    match () {
        _ if e.name_match && !contested_name && ranking.shape == QueryShape::Identifier => 0.9,
        _ if agree(1) => 0.6,
        _ if agree(3) => 0.4,
        _ if e.name_match || e.lexical_rank == Some(1) || e.vector_rank == Some(1) => 0.3,
        _ => 0.2,
    }
}

/// Share of the planned section weight that made it into the bundles (first bundle counts
/// double: it is the answer; the rest are support).
pub fn coverage(bundles: &[Bundle]) -> f64 {
    let mut planned = 0.0;
    let mut included = 0.0;
    for (i, bundle) in bundles.iter().enumerate() {
        let weight = if i == 0 { 2.0 } else { 1.0 };
        planned += weight * bundle.planned.iter().map(|s| s.weight()).sum::<f64>();
        included += weight * bundle.included.iter().map(|s| s.weight()).sum::<f64>();
    }
    if planned == 0.0 {
        0.0
    } else {
        included / planned
    }
}

/// The score: confidence scaled by coverage (monotone in both).
pub fn score(confidence: f64, bundles: &[Bundle]) -> Sufficiency {
    let coverage = coverage(bundles);
    let raw = confidence * (0.7 + 0.3 * coverage);
    Sufficiency {
        score: (raw * 1000.0).round() / 1000.0,
        confidence,
        coverage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::context::Section;

    fn bundle(planned: &[Section], included: &[Section]) -> Bundle {
        Bundle {
            entity_id: "x".into(),
            text: String::new(),
            tokens: 0,
            planned: planned.to_vec(),
            included: included.to_vec(),
            truncated: false,
            source_included: false,
            source_tokens_omitted: 0,
        }
    }

    #[test]
    fn dropping_a_section_never_raises_the_score() {
        use Section::*;
        let all = [Header, Signature, Doc, Callers, Callees, Source];
        let full = score(0.9, &[bundle(&all, &all)]).score;
        for skip in all {
            let kept: Vec<Section> = all.iter().copied().filter(|s| *s != skip).collect();
            let reduced = score(0.9, &[bundle(&all, &kept)]).score;
            assert!(reduced < full, "dropping {skip:?} did not lower the score");
        }
    }

    #[test]
    fn full_coverage_keeps_the_confidence() {
        use Section::*;
        let s = score(0.85, &[bundle(&[Header, Doc], &[Header, Doc])]);
        assert!((s.score - 0.85).abs() < 1e-9);
    }
}
