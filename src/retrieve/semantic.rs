//! `semantic_search`: the raw ranked chunks of a description, each capped, with no packing or
//! sufficiency projection. It never answers lexically in silence: a generation without usable
//! vectors is an error.

use super::answer::round4;
use super::hit::RetrievalMode;
use super::payload::SemanticPayload;
use super::plan::QueryPlan;
use super::profile::Action;
use super::{Retriever, SEMANTIC_TEXT_CHARS, SemanticHit, rank, require_text};
use crate::error::{ErrorCode, KnowcodeError};
use crate::load::LoadedGeneration;
use crate::load::freshness;

impl Retriever {
    /// `semantic_search` hits (for the CLI batch form and the payload).
    pub async fn semantic_hits(
        &self,
        query: &str,
        limit: usize,
        with_text: bool,
    ) -> Result<(Vec<SemanticHit>, RetrievalMode), KnowcodeError> {
        let generation = self.generation().await?;
        self.semantic_hits_in(&generation, query, limit, with_text)
            .await
    }

    /// `semantic_search` hits from one given generation.
    pub(super) async fn semantic_hits_in(
        &self,
        generation: &LoadedGeneration,
        query: &str,
        limit: usize,
        with_text: bool,
    ) -> Result<(Vec<SemanticHit>, RetrievalMode), KnowcodeError> {
        if !generation.has_vectors() {
            return Err(KnowcodeError::new(
                ErrorCode::MissingSemanticIndex,
                format!("generation {} is lexical: it has no vectors", generation.id),
            ));
        }
        // Semantic search never answers lexically in silence: no usable vectors, an error.
        let plan = QueryPlan::for_lookup(
            query,
            Action::SemanticSearch,
            self.config.config.hybrid_alpha,
        );
        let vector = self
            .query_vector(generation, plan.question.embedding_text())
            .await?;
        let ranking = rank::rank(generation, &plan, vector.as_deref(), limit).await;
        let hits = ranking
            .hits
            .iter()
            .enumerate()
            .filter_map(|(i, hit)| {
                let chunk = &generation.chunks[hit.chunk];
                let entity = generation.entity(&hit.entity_id)?;
                Some(SemanticHit {
                    rank: i + 1,
                    file: chunk.path.clone(),
                    entity_id: entity.id.clone(),
                    qualified_name: entity.qualified_name.clone(),
                    kind: entity.kind.as_str().to_string(),
                    line_start: chunk.start_line,
                    line_end: chunk.end_line,
                    score: round4(hit.score),
                    text: with_text
                        .then(|| crate::text::truncate_chars(&chunk.text, SEMANTIC_TEXT_CHARS)),
                })
            })
            .collect();
        Ok((hits, ranking.mode))
    }

    /// `semantic_search`: raw ranked chunks, each capped, no sufficiency projection.
    pub async fn semantic_search(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<SemanticPayload, KnowcodeError> {
        require_text(query)?;
        // Hits and freshness come from the same generation, even if one is published meanwhile.
        let generation = self.generation().await?;
        let (hits, mode) = self
            .semantic_hits_in(&generation, query, limit, true)
            .await?;
        Ok(SemanticPayload {
            results: hits,
            retrieval_mode: mode,
            freshness: freshness::check(&generation),
        })
    }
}
