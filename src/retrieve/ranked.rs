//! A question ranked on the planes this retriever may use: the question's vector (embedded
//! once, remembered for the follow-up that asks the same text, the model loaded on a blocking
//! thread) and, when the vector plane is unusable, the lexical plane with the reason in the
//! ranking's errors. Every action that ranks goes through here; it never packs.

use std::sync::Arc;

use super::Retriever;
use super::hit::Ranking;
use super::plan::QueryPlan;
use super::rank;
use crate::embed::Embedder;
use crate::error::{ErrorCode, KnowcodeError};
use crate::load::LoadedGeneration;

impl Retriever {
    /// The vector of `text` when it was the last question embedded.
    fn remembered_vector(&self, text: &str) -> Option<Vec<f32>> {
        let last = self.last_vector.lock().unwrap_or_else(|p| p.into_inner());
        last.as_ref()
            .filter(|(question, _)| question == text)
            .map(|(_, vector)| vector.clone())
    }

    /// The query vector: None on a lexical generation; an error when a full generation's
    /// vectors cannot be searched — `missing_semantic_index` (the model cannot be loaded) or
    /// `model_mismatch` ([`crate::embed::check_compatible`], the rule `doctor` applies too).
    /// The model loads and runs on a blocking thread; the lock is never held across an
    /// `.await`, and a panic in inference neither poisons later queries nor kills the server.
    pub(super) async fn query_vector(
        &self,
        generation: &LoadedGeneration,
        text: &str,
    ) -> Result<Option<Vec<f32>>, KnowcodeError> {
        if self.lexical_only || !generation.has_vectors() {
            return Ok(None);
        }
        if let Some(index) = generation.manifest.embedding.as_ref() {
            crate::embed::check_compatible(index, &self.config)?;
        }
        if let Some(vector) = self.remembered_vector(text) {
            return Ok(Some(vector));
        }
        let slot = Arc::clone(&self.embedder);
        let config = self.config.clone();
        let text = text.to_string();
        let question = text.clone();
        let embedded = tokio::task::spawn_blocking(move || {
            let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let embedder = slot.get_or_insert_with(|| Embedder::load(&config));
            match embedder.as_mut() {
                Ok(embedder) => embedder.embed_query(&text),
                Err(why) => Err(KnowcodeError::new(
                    ErrorCode::MissingSemanticIndex,
                    format!("the embedding model is unavailable: {}", why.message),
                )),
            }
        })
        .await;
        match embedded {
            Ok(Ok(vector)) => {
                *self.last_vector.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((question, vector.clone()));
                Ok(Some(vector))
            }
            Ok(Err(e)) => Err(e),
            Err(join) => Err(KnowcodeError::new(
                ErrorCode::Internal,
                format!("embedding the question failed: {join}"),
            )),
        }
    }

    /// Ranks a question; when the vector plane is unusable the ranking is lexical and its
    /// `errors` say why (a `query` answer reports them at every verbosity).
    pub(super) async fn ranked(
        &self,
        generation: &LoadedGeneration,
        plan: &QueryPlan,
        limit: usize,
    ) -> Ranking {
        match self
            .query_vector(generation, plan.question.embedding_text())
            .await
        {
            Ok(vector) => rank::rank(generation, plan, vector.as_deref(), limit).await,
            Err(e) => {
                let mut ranking = rank::rank(generation, plan, None, limit).await;
                ranking.errors.push(format!(
                    "{}: {}; answered from the lexical plane",
                    e.code.as_str(),
                    e.message
                ));
                ranking
            }
        }
    }
}
