//! The sufficiency score: how safe it is to answer from the returned context alone, in
//! [0, 1]. It is *confidence* that the top entity is what was asked for — read off how many
//! ranking legs (full text, chunk vectors, signature views) put it first or in their top
//! three, and whether an identifier query names it uncontested; the lead over the runner-up is
//! not used — scaled by *coverage* of what the task template planned for this verbosity:
//! `confidence × (0.7 + 0.3 × coverage)`, so sections dropped for budget lower it and nothing
//! raises it. See `docs/sufficiency.md` for the calibration against the evaluation data. This
//! module scores; it never ranks or packs.

use serde::Serialize;

use super::bundle::Bundle;
use super::hit::{Ranking, RetrievalMode};
use super::question::QueryShape;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Sufficiency {
    pub score: f64,
    pub confidence: f64,
    pub coverage: f64,
}

/// Confidence that the first hit answers the query: an estimate of the probability that it is
/// the entity asked for, read off the benchmark (see docs/sufficiency.md) from how many ranking
/// legs (full text, chunk vectors, signature views) put it first and how many in their top 3.
/// The lead over the runner-up is deliberately not used: on the benchmark large leads were
/// *less* often right.
pub fn ranking_confidence(ranking: &Ranking) -> f64 {
    let hits = &ranking.hits;
    let Some(top) = hits.first() else { return 0.0 };
    if ranking.mode == RetrievalMode::Exact {
        return if hits.len() == 1 { 0.9 } else { 0.5 };
    }
    let e = &top.evidence;
    let legs = [e.lexical_rank, e.vector_rank, e.signature_rank];
    let within = |n: u32| legs.iter().filter(|r| r.is_some_and(|r| r <= n)).count();
    let contested_name = hits.iter().skip(1).any(|h| h.evidence.name_match);
    match (within(1), within(3)) {
        _ if e.name_match && !contested_name && ranking.shape == QueryShape::Identifier => 0.9,
        (3, _) => 0.8,
        (2, 3) => 0.6,
        (2, _) | (1, 3) => 0.5,
        (1, _) => 0.3,
        _ if e.name_match => 0.3,
        (0, 2..) => 0.25,
        _ => 0.15,
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
    use crate::retrieve::bundle::Section;

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

    fn ranked(lexical: Option<u32>, vector: Option<u32>, signature: Option<u32>) -> Ranking {
        use crate::retrieve::hit::{Evidence, Hit};
        Ranking {
            hits: vec![Hit {
                entity_id: "e".into(),
                chunk: 0,
                score: 1.0,
                evidence: Evidence {
                    lexical_rank: lexical,
                    vector_rank: vector,
                    signature_rank: signature,
                    ..Evidence::default()
                },
            }],
            files: Vec::new(),
            mode: RetrievalMode::Hybrid,
            lexical_weight: 0.5,
            shape: QueryShape::Description,
            errors: Vec::new(),
        }
    }

    #[test]
    fn more_legs_agreeing_never_lowers_confidence_and_only_all_three_reach_the_threshold() {
        let ladder = [
            ranked(None, None, None),
            ranked(Some(2), Some(3), None),
            ranked(Some(1), None, None),
            ranked(Some(1), Some(2), Some(3)),
            ranked(Some(1), Some(1), Some(3)),
            ranked(Some(1), Some(1), Some(1)),
        ];
        let confidences: Vec<f64> = ladder.iter().map(ranking_confidence).collect();
        assert!(
            confidences.windows(2).all(|w| w[0] < w[1]),
            "{confidences:?}"
        );
        assert!(confidences[..5].iter().all(|&c| c < 0.8));
        assert!(confidences[5] >= 0.8);
    }
}
