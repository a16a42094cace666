//! `context`: the packed context of one entity an agent names (resolved loosely, or a
//! disambiguation list when several match), for the task type it asks (`explain` by default).

use super::answer::Answer;
use super::bundle;
use super::payload::{QueryPayload, Targeted};
use super::profile::{Action, ResponseProfile, TaskType, Verbosity};
use super::target::{Target, find_target};
use super::{Retriever, entity_budget, validate_budget};
use crate::error::KnowcodeError;

impl Retriever {
    /// `context`: the packed context of one named entity.
    pub async fn context(
        &self,
        target: &str,
        task_type: Option<TaskType>,
        max_tokens: usize,
        verbosity: Verbosity,
    ) -> Result<Targeted<QueryPayload>, KnowcodeError> {
        validate_budget(max_tokens, 1)?;
        let generation = self.generation().await?;
        let entity = match find_target(&generation, target)? {
            Target::Entity(entity) => entity,
            Target::Ambiguous(candidates) => return Ok(Targeted::Ambiguous(candidates)),
        };
        let task = task_type.unwrap_or(TaskType::Explain);
        let profile = ResponseProfile::new(Action::Context, task, verbosity);
        let bundle = bundle::build_bundle(
            &generation,
            entity,
            task,
            &profile,
            entity_budget(max_tokens, 1).min(max_tokens),
            None,
        );
        let bundles = [bundle];
        let answer = Answer {
            generation: &generation,
            profile,
            bundles: &bundles,
            confidence: 1.0,
            ranking: None,
            also: &[],
        };
        Ok(Targeted::Found(
            answer.payload(max_tokens, task, 1.0, target, 1),
        ))
    }
}
