//! A question analysed once. [`QueryPlan`] holds everything retrieval decides from the text
//! alone — what the question names (`question.rs`: identifiers, frames, paths, messages, its
//! shape and whether it is about tests), the task type and its confidence, an exact-match
//! request (a query in double quotes), the lines it points at inside a definition (`Focus`),
//! the response profile and the legs' weights — so ranking, packing and projection receive
//! one plan instead of re-reading the question. It knows nothing of the index.

use super::QueryRequest;
use super::bundle::{self, Focus};
use super::profile::{Action, ResponseProfile, TaskType, Verbosity};
use super::question::{QueryShape, Question};

/// Weight of the signature-view leg relative to the chunk-vector leg: chunk bodies weigh the
/// vectors' share of the fusion and signature views SIGNATURE_SHARE of it on top (0.7 measured
/// best of 0.5, 0.7 and 1.0 on the benchmark; dividing the share between the two instead cost
/// the change descriptions two tasks at function Acc@5 with the model, 2026-12-07).
const SIGNATURE_SHARE: f64 = 0.7;

/// The weights of the three ranked legs in the fusion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegWeights {
    /// Full text over chunks.
    pub lexical: f64,
    /// Chunk vectors.
    pub vector: f64,
    /// Signature-view vectors.
    pub signature: f64,
}

/// What retrieval decided about one question before touching the index.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    pub question: Question,
    pub task: TaskType,
    /// 1.0 when the caller named the task type.
    pub task_confidence: f64,
    /// The text between double quotes of a quoted query: an exact substring search.
    pub exact: Option<String>,
    /// The words and frame lines a source excerpt is cut around.
    pub focus: Focus,
    pub profile: ResponseProfile,
    /// The configured `hybrid_alpha`.
    alpha: f64,
    /// What the ranking answers: `semantic_search` ranks chunks by similarity alone, without
    /// the code-search re-scoring (`rescore`) that `query` and `search` get.
    action: Action,
}

impl QueryPlan {
    /// The plan of a `query` request.
    pub fn for_query(request: &QueryRequest, alpha: f64) -> QueryPlan {
        let question = Question::read(&request.query);
        let (task, task_confidence) = match request.task_type {
            Some(task) => (task, 1.0),
            None => bundle::classify(&question),
        };
        let profile = ResponseProfile::new(Action::Query, task, request.verbosity);
        Self::new(
            question,
            task,
            task_confidence,
            profile,
            alpha,
            Action::Query,
        )
    }

    /// The plan of a lookup that returns ranked hits without packing them (`search`'s
    /// ranked fallback, `semantic_search`).
    pub fn for_lookup(text: &str, action: Action, alpha: f64) -> QueryPlan {
        let profile = ResponseProfile::new(action, TaskType::Locate, Verbosity::Minimal);
        Self::new(
            Question::read(text),
            TaskType::Locate,
            1.0,
            profile,
            alpha,
            action,
        )
    }

    /// Whether the ranking re-scores candidates for a code-search question (`query` and
    /// `search`). `semantic_search` does not: on the docstring benchmark (one sentence → one
    /// function, chunk hits) the re-scoring cost 13.6 points of mean R@5 (2026-12-02).
    pub fn rescores(&self) -> bool {
        self.action != Action::SemanticSearch
    }

    fn new(
        question: Question,
        task: TaskType,
        task_confidence: f64,
        profile: ResponseProfile,
        alpha: f64,
        action: Action,
    ) -> QueryPlan {
        let trimmed = question.written.trim();
        let exact = (trimmed.len() > 2 && trimmed.starts_with('"') && trimmed.ends_with('"'))
            .then(|| trimmed[1..trimmed.len() - 1].to_string());
        QueryPlan {
            focus: Focus::of(&question),
            exact,
            question,
            task,
            task_confidence,
            profile,
            alpha,
            action,
        }
    }

    /// The legs' weights: with a question vector (`hybrid`) the lexical leg gets
    /// [`lexical_weight`], the chunk vectors the rest and the signature views
    /// [`SIGNATURE_SHARE`] of that again; without one, the lexical leg is all there is.
    pub fn leg_weights(&self, hybrid: bool) -> LegWeights {
        let lexical = if hybrid {
            lexical_weight(self.question.shape, self.alpha)
        } else {
            1.0
        };
        let vector = 1.0 - lexical;
        LegWeights {
            lexical,
            vector,
            signature: SIGNATURE_SHARE * vector,
        }
    }
}

/// Lexical weight for a query given the configured `hybrid_alpha`: identifiers lean
/// lexical, queries mixing words and identifiers a little, descriptions get `alpha` itself
/// (leaning descriptions further toward vectors cost 2–3 points of R@5 on the benchmark once
/// prose was demoted).
pub fn lexical_weight(shape: QueryShape, alpha: f64) -> f64 {
    match shape {
        QueryShape::Identifier => alpha.max(0.8),
        QueryShape::Mixed => (alpha + 0.1).min(1.0),
        QueryShape::Description => alpha,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_more_identifier_shaped_the_query_the_more_lexical_the_weight() {
        let (identifier, mixed, description) = (
            lexical_weight(QueryShape::Identifier, 0.5),
            lexical_weight(QueryShape::Mixed, 0.5),
            lexical_weight(QueryShape::Description, 0.5),
        );
        assert!(
            identifier > mixed && mixed > description,
            "{identifier} {mixed} {description}"
        );
        assert!(lexical_weight(QueryShape::Mixed, 0.95) <= 1.0);
    }

    #[test]
    fn a_plan_reads_the_question_once_for_every_stage() {
        let mut request = QueryRequest::new("\"raise ValueError\"");
        request.verbosity = Verbosity::Standard;
        let plan = QueryPlan::for_query(&request, 0.5);
        assert_eq!(plan.exact.as_deref(), Some("raise ValueError"));
        assert!(plan.profile.include_source);
        let lexical = plan.leg_weights(false);
        assert_eq!(
            (lexical.lexical, lexical.vector, lexical.signature),
            (1.0, 0.0, 0.0)
        );
        let hybrid = QueryPlan::for_query(&QueryRequest::new("round a money value to cents"), 0.5)
            .leg_weights(true);
        assert_eq!(hybrid.lexical, 0.5);
        assert!((hybrid.signature - SIGNATURE_SHARE * 0.5).abs() < 1e-12);
        let named = QueryRequest {
            task_type: Some(TaskType::Debug),
            ..QueryRequest::new("apply_discount")
        };
        let plan = QueryPlan::for_query(&named, 0.5);
        assert_eq!((plan.task, plan.task_confidence), (TaskType::Debug, 1.0));
    }
}
