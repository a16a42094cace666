//! `query`, the first call an agent makes: rank the question, pack the best hits' task-aware
//! context into the token budget (no file filling the slots while others have evidence), point
//! at the next candidates (`also`), optionally add the first entity's callees, and project it
//! all through the response profile with a sufficiency score.

use std::collections::HashMap;

use super::answer::{Answer, lines_tokens};
use super::bundle::{self, Bundle};
use super::hit::{Hit, Ranking};
use super::payload::QueryPayload;
use super::plan::QueryPlan;
use super::profile::{Action, ResponseProfile, TaskType, Verbosity};
use super::{AnswerParts, QueryRequest, Retriever, entity_budget, sufficiency, validate_budget};
use crate::error::KnowcodeError;
use crate::graph::EdgeKind;
use crate::load::LoadedGeneration;

impl Retriever {
    /// `query`: ranked, task-aware, budgeted context with a sufficiency score.
    pub async fn query(&self, request: &QueryRequest) -> Result<QueryPayload, KnowcodeError> {
        Ok(self.answer(request).await?.payload)
    }

    /// `query` with what evaluation compares against gold answers, whatever the verbosity:
    /// the packed entities (first is the answer), the `also` entities and the whole ranking.
    pub async fn answer(&self, request: &QueryRequest) -> Result<AnswerParts, KnowcodeError> {
        validate_budget(request.max_tokens, request.limit_entities)?;
        let generation = self.generation().await?;
        let plan = QueryPlan::for_query(request, self.config.config.hybrid_alpha);
        let ranking = self.ranked(&generation, &plan, RANKED_CANDIDATES).await;
        let packed = packed_hits(&generation, &ranking.hits, request.limit_entities);
        let also = also_pointers(
            &generation,
            &ranking,
            &packed,
            request.max_tokens,
            plan.question.about_tests,
        );
        let also_tokens = lines_tokens(&also.lines);
        let mut bundles = Vec::new();
        let mut remaining = request.max_tokens - also_tokens;
        let per_entity = entity_budget(remaining, request.limit_entities);
        for hit in &packed {
            let Some(entity) = generation.entity(&hit.entity_id) else {
                continue;
            };
            let bundle = bundle::build_bundle(
                &generation,
                entity,
                plan.task,
                &plan.profile,
                per_entity.min(remaining.saturating_sub(2)),
                Some(&plan.focus),
            );
            remaining = remaining.saturating_sub(bundle.tokens + 2);
            bundles.push(bundle);
        }
        if request.expand_deps {
            self.expand_dependencies(
                &generation,
                plan.task,
                request.verbosity,
                &mut bundles,
                &mut remaining,
            );
        }
        let confidence = sufficiency::ranking_confidence(&ranking);
        let payload = Answer {
            generation: &generation,
            profile: plan.profile,
            bundles: &bundles,
            confidence,
            ranking: Some(&ranking),
            also: &also.lines,
        }
        .payload(
            request.max_tokens,
            plan.task,
            plan.task_confidence,
            &request.query,
            request.limit_entities,
        );
        let entities = bundles
            .iter()
            .filter_map(|b| generation.entity(&b.entity_id).cloned())
            .collect();
        Ok(AnswerParts {
            payload,
            entities,
            also: also.entities,
            ranked: ranking.hits.iter().map(|h| h.entity_id.clone()).collect(),
            mode: ranking.mode,
        })
    }

    /// Summary bundles for the resolved callees of the first entity, in what budget is left.
    fn expand_dependencies(
        &self,
        generation: &LoadedGeneration,
        task: TaskType,
        verbosity: Verbosity,
        bundles: &mut Vec<Bundle>,
        remaining: &mut usize,
    ) {
        let Some(first) = bundles.first().map(|b| b.entity_id.clone()) else {
            return;
        };
        let summary_profile = ResponseProfile::new(Action::Search, task, verbosity);
        let mut targets: Vec<String> = generation
            .outgoing(&first, EdgeKind::Calls)
            .filter_map(|e| e.target.clone())
            .collect();
        targets.sort();
        targets.dedup();
        for target in targets.into_iter().take(3) {
            if bundles.iter().any(|b| b.entity_id == target) || *remaining < 30 {
                continue;
            }
            let Some(entity) = generation.entity(&target) else {
                continue;
            };
            let bundle = bundle::build_bundle(
                generation,
                entity,
                TaskType::Locate,
                &summary_profile,
                (*remaining - 2).min(200),
                None,
            );
            if bundle.tokens > 0 {
                *remaining = remaining.saturating_sub(bundle.tokens + 2);
                bundles.push(bundle);
            }
        }
    }
}

/// Hits ranked per query: enough for the packed entities and `also` pointers in other files.
const RANKED_CANDIDATES: usize = 40;
/// Next candidates listed in a `query` answer's `also` field (besides the runner-up).
pub const ALSO_POINTERS: usize = 4;
/// How close behind the answer a function of its own file must rank to be pointed at first.
const RUNNER_UP_WITHIN: usize = 2;

/// The next candidates after the packed entities, as `path:line qualified_name`. First the
/// runner-up in the answer's own file, when a function of that file ranks right behind it:
/// a fix's file is found more often than its function, and the function is then most often
/// the file's next one. Then one per file not shown yet (an agent whose first hit is in the
/// wrong file gets other places to look), then further entities of files already shown.
/// Tests, examples and benchmarks are left out unless the question is about them (the slots
/// are too few to spend on code that only shows how the answer is used). They take at most a
/// quarter of the budget.
fn also_pointers(
    generation: &LoadedGeneration,
    ranking: &Ranking,
    packed: &[&Hit],
    max_tokens: usize,
    about_tests: bool,
) -> Also {
    let is_packed = |id: &str| packed.iter().any(|h| h.entity_id == id);
    let shown: Vec<&crate::parse::Entity> = packed
        .iter()
        .filter_map(|h| generation.entity(&h.entity_id))
        .collect();
    let rest: Vec<&crate::parse::Entity> = ranking
        .hits
        .iter()
        .filter(|h| !is_packed(&h.entity_id))
        .filter_map(|h| generation.entity(&h.entity_id))
        .filter(|e| about_tests || !crate::walk::is_test_path(&e.path))
        .collect();
    let mut files: Vec<&str> = shown.iter().map(|e| e.path.as_str()).collect();
    let runner_up = shown.first().and_then(|answer| {
        rest.iter()
            .take(RUNNER_UP_WITHIN)
            .find(|e| e.path == answer.path && e.kind.is_unit())
    });
    let mut chosen: Vec<&crate::parse::Entity> = runner_up.into_iter().copied().collect();
    let slots = ALSO_POINTERS + chosen.len();
    let is_chosen = |chosen: &[&crate::parse::Entity], id: &str| chosen.iter().any(|c| c.id == id);
    for entity in &rest {
        if chosen.len() < slots && !files.contains(&entity.path.as_str()) {
            files.push(&entity.path);
            chosen.push(entity);
        }
    }
    for entity in &rest {
        if chosen.len() < slots && !is_chosen(&chosen, &entity.id) {
            chosen.push(entity);
        }
    }
    let mut pointers = Also::default();
    for entity in chosen {
        pointers.lines.push(format!(
            "{}:{} {}",
            entity.path, entity.span.start_line, entity.qualified_name
        ));
        if lines_tokens(&pointers.lines) > max_tokens / 4 {
            pointers.lines.pop();
            break;
        }
        pointers.entities.push(entity.id.clone());
    }
    pointers
}

/// The hits whose context a `query` packs: rank order, but no file takes more than a quarter
/// of the slots (at least two) while hits of other files remain, so a many-entity answer
/// spans the files the evidence points at instead of filling up with one file's methods.
/// One entity (the default) is always the best hit.
fn packed_hits<'r>(generation: &LoadedGeneration, hits: &'r [Hit], limit: usize) -> Vec<&'r Hit> {
    let per_file = (limit / 4).max(2);
    let mut taken: HashMap<&str, usize> = HashMap::new();
    let (mut chosen, mut held_back) = (Vec::new(), Vec::new());
    for (rank, hit) in hits.iter().enumerate() {
        if chosen.len() == limit {
            break;
        }
        let file = generation
            .entity(&hit.entity_id)
            .map_or("", |e| e.path.as_str());
        let count = taken.entry(file).or_default();
        if *count < per_file {
            *count += 1;
            chosen.push((rank, hit));
        } else {
            held_back.push((rank, hit));
        }
    }
    let missing = limit.saturating_sub(chosen.len());
    chosen.extend(held_back.into_iter().take(missing));
    chosen.sort_by_key(|(rank, _)| *rank);
    chosen.into_iter().map(|(_, hit)| hit).collect()
}

/// The `also` pointers: the payload's lines and the entities they point at.
#[derive(Debug, Default)]
struct Also {
    lines: Vec<String>,
    entities: Vec<String>,
}
