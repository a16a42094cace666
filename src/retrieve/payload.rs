//! The answers retrieval returns, as types. Each payload is a struct whose optional fields the
//! response profile fills (`profile.rs` decides which) and serde leaves out when empty, so a
//! minimal answer's key set is visible in the type instead of in string-keyed JSON built by
//! hand. Surfaces serialise these; tests, `ask` and `eval` read their fields. This module
//! holds shapes only: it decides nothing about ranking, packing or verbosity.

use std::collections::BTreeSet;

use serde::Serialize;

use super::bundle::Section;
use super::hit::{Evidence, RetrievalMode};
use super::profile::Direction;
use crate::load::freshness::Freshness;

/// Leaves a `false` flag out of a payload.
fn is_false(flag: &bool) -> bool {
    !flag
}

/// The answer of `query` and `context`: packed context text plus how far to trust it.
#[derive(Debug, Clone, Serialize)]
pub struct QueryPayload {
    pub context_text: String,
    pub sufficiency_score: f64,
    pub total_tokens: usize,
    pub freshness: Freshness,
    /// Present (true) when any packed entity carries raw source.
    #[serde(skip_serializing_if = "is_false")]
    pub source_included: bool,
    /// What was left out, when no source is included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduction_summary: Option<String>,
    /// `path:line qualified_name` of the next candidates (query only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// Why the answer is weaker than it could be (a lexical fallback, a failed leg); reported
    /// at every verbosity.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Standard verbosity and up.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub standard: Option<StandardFields>,
    /// Verbose and up (ranked answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<EvidenceRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileRow>>,
    /// Diagnostic verbosity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Diagnostics>,
}

impl QueryPayload {
    /// An answer with nothing in it, and why.
    pub fn nothing(freshness: Freshness, why: String) -> QueryPayload {
        QueryPayload {
            context_text: String::new(),
            sufficiency_score: 0.0,
            total_tokens: 0,
            freshness,
            source_included: false,
            reduction_summary: Some("no matching entity".into()),
            also: Vec::new(),
            errors: vec![why],
            standard: None,
            evidence: None,
            files: None,
            diagnostics: None,
        }
    }
}

/// The fields standard verbosity adds to a `query`/`context` answer.
#[derive(Debug, Clone, Serialize)]
pub struct StandardFields {
    pub task_type: &'static str,
    pub task_confidence: f64,
    pub retrieval_mode: RetrievalMode,
    /// Ids of the packed entities, the answer first.
    pub entities: Vec<String>,
    pub truncated: bool,
}

/// One ranked entity and the signals behind its place.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceRow {
    pub rank: usize,
    pub entity_id: String,
    pub chunk_id: String,
    pub score: f64,
    pub signals: Evidence,
}

/// One ranked file and its pooled score.
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    pub path: String,
    pub score: f64,
}

/// What the retrieval system did, for testing it.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnostics {
    pub query: String,
    pub max_tokens: usize,
    pub limit_entities: usize,
    /// `null` for an answer that was not ranked (`context`).
    pub lexical_weight: Option<f64>,
    pub confidence: f64,
    pub coverage: f64,
    pub sections: Vec<BundleRow>,
}

/// How one entity's bundle was planned and filled.
#[derive(Debug, Clone, Serialize)]
pub struct BundleRow {
    pub entity: String,
    pub planned: Vec<Section>,
    pub included: Vec<Section>,
    pub tokens: usize,
}

/// An entity as listed by `search` and a disambiguation: id, kind and line range.
#[derive(Debug, Clone, Serialize)]
pub struct EntityRow {
    pub id: String,
    pub kind: &'static str,
    /// `start-end`.
    pub lines: String,
    /// Standard verbosity and up (`search` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The doc's first line, standard verbosity and up (`search` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// The answer of `search`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchPayload {
    pub results: Vec<EntityRow>,
    /// Matches before the limit.
    pub total: usize,
    pub freshness: Freshness,
    /// `name` or `ranked` (standard verbosity and up).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<&'static str>,
}

/// Several equally good entities for a loose name: call again with one id.
#[derive(Debug, Clone, Serialize)]
pub struct Disambiguation {
    /// Always true: how an agent tells this payload from an answer.
    pub ambiguous: bool,
    pub target: String,
    pub candidates: Vec<EntityRow>,
    pub hint: &'static str,
    pub freshness: Freshness,
}

/// An answer about one named entity, or the candidates when the name was ambiguous.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Targeted<T> {
    Found(T),
    Ambiguous(Disambiguation),
}

/// One node reached by `trace` or `impact`.
#[derive(Debug, Clone, Serialize)]
pub struct GraphNode {
    pub id: String,
    pub depth: usize,
    /// `path:line` of the call (`trace`) or the edge kind (`impact`).
    pub via: String,
}

/// The answer of `trace`.
#[derive(Debug, Clone, Serialize)]
pub struct TracePayload {
    pub entity: String,
    pub direction: Direction,
    pub depth: usize,
    pub nodes: Vec<GraphNode>,
    pub freshness: Freshness,
    /// Callees whose target could not be resolved, by name.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub unresolved: BTreeSet<String>,
    /// Unresolved calls anywhere to a name equal to this entity's (callers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unresolved_calls_with_this_name: Option<usize>,
}

/// The answer of `impact` (REST): what depends on an entity.
#[derive(Debug, Clone, Serialize)]
pub struct ImpactPayload {
    pub entity: String,
    pub depth: usize,
    pub impacted: usize,
    pub by_depth: Vec<usize>,
    pub files: BTreeSet<String>,
    pub nodes: Vec<GraphNode>,
    pub truncated: bool,
    pub freshness: Freshness,
}

/// The answer of `semantic_search`.
#[derive(Debug, Clone, Serialize)]
pub struct SemanticPayload {
    pub results: Vec<super::SemanticHit>,
    pub retrieval_mode: RetrievalMode,
    pub freshness: Freshness,
}

/// A payload as the JSON every surface sends.
pub fn to_json<T: Serialize>(payload: &T) -> serde_json::Value {
    serde_json::to_value(payload).unwrap_or_default()
}

/// A retrieval result as the JSON every surface sends.
pub fn json_result<T: Serialize>(
    result: Result<T, crate::error::KnowcodeError>,
) -> Result<serde_json::Value, crate::error::KnowcodeError> {
    result.map(|payload| to_json(&payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> QueryPayload {
        QueryPayload {
            context_text: "def f(): ...".into(),
            sufficiency_score: 0.5,
            total_tokens: 4,
            freshness: Freshness::default(),
            source_included: false,
            reduction_summary: Some("summary of 1 entity".into()),
            also: Vec::new(),
            errors: Vec::new(),
            standard: None,
            evidence: None,
            files: None,
            diagnostics: None,
        }
    }

    fn keys(payload: &QueryPayload) -> Vec<String> {
        let json = to_json(payload);
        json.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn empty_optional_fields_are_left_out_and_standard_fields_sit_at_the_top_level() {
        let mut payload = minimal();
        assert_eq!(
            keys(&payload),
            [
                "context_text",
                "sufficiency_score",
                "total_tokens",
                "freshness",
                "reduction_summary"
            ]
        );
        payload.standard = Some(StandardFields {
            task_type: "explain",
            task_confidence: 0.9,
            retrieval_mode: RetrievalMode::Hybrid,
            entities: vec!["a.py::f".into()],
            truncated: false,
        });
        payload.errors.push("vector search failed".into());
        let json = to_json(&payload);
        assert_eq!(json["task_type"], "explain");
        assert_eq!(json["retrieval_mode"], "hybrid");
        assert_eq!(json["truncated"], false);
        assert_eq!(json["errors"][0], "vector search failed");
        assert!(json.get("standard").is_none());
    }
}
