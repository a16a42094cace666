//! Retrieval: the read side every surface shares (CLI, MCP, REST). `query` ranks, packs
//! task-aware context into a token budget and scores its sufficiency; `search`, `context`,
//! `trace` and `semantic_search` are the focused follow-ups. Every payload carries the
//! freshness of the generation it came from. Retrieval never builds and never writes.

pub(crate) mod context;
pub(crate) mod files;
pub mod freshness;
pub mod generation;
pub mod overlay;
pub mod payload;
pub(crate) mod plan;
pub mod profile;
pub(crate) mod qualified;
pub(crate) mod question;
pub(crate) mod rank;
mod rescore;
pub(crate) mod resolve;
pub mod scope;
pub(crate) mod sufficiency;
pub mod tokens;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use self::context::Bundle;
use self::freshness::Freshness;
use self::generation::{GenerationCache, LoadedGeneration};
use self::payload::{
    BundleRow, Diagnostics, Disambiguation, EntityRow, EvidenceRow, FileRow, GraphNode,
    ImpactPayload, QueryPayload, SearchPayload, SemanticPayload, StandardFields, Targeted,
    TracePayload,
};
use self::plan::QueryPlan;
use self::profile::{Action, ResponseProfile, TaskType, Verbosity};
pub use self::profile::{Direction, Scope};
pub use self::rank::{Evidence, RetrievalMode};
use self::rank::{Hit, Ranking};
use self::resolve::Resolved;
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{ErrorCode, KnowcodeError};
use crate::graph::EdgeKind;

/// Defaults of `query` (the contract's first tool call).
pub const DEFAULT_MAX_TOKENS: usize = 1500;
/// Entities a `query` answer packs unless asked for more.
pub const DEFAULT_LIMIT_ENTITIES: usize = 1;
/// The predecessor's full-context budget: the legacy `retrieve_context_for_query` tool, the
/// REST query endpoint and `ask` use it (the MCP `query` action does not).
pub const FULL_MAX_TOKENS: usize = 4000;
/// Entities packed with the full-context budget.
pub const FULL_LIMIT_ENTITIES: usize = 3;
/// The largest token budget a request may ask for.
pub const MAX_TOKENS_CEILING: usize = 100_000;
/// The most entities one answer may pack.
pub const MAX_LIMIT_ENTITIES: usize = 20;
/// Per-entity budget ceiling.
pub const MAX_ENTITY_TOKENS: usize = 2000;
/// Characters of chunk text a semantic-search hit carries.
pub const SEMANTIC_TEXT_CHARS: usize = 800;
/// The deepest `trace` walk.
pub const MAX_TRACE_DEPTH: usize = 5;

/// A `query` request; `task_type: None` means `auto`.
#[derive(Debug, Clone)]
pub struct QueryRequest {
    pub query: String,
    pub task_type: Option<TaskType>,
    pub max_tokens: usize,
    pub limit_entities: usize,
    pub expand_deps: bool,
    pub verbosity: Verbosity,
}

impl QueryRequest {
    /// A request with the contract's `query` defaults.
    pub fn new(query: impl Into<String>) -> Self {
        QueryRequest {
            query: query.into(),
            task_type: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            limit_entities: DEFAULT_LIMIT_ENTITIES,
            expand_deps: false,
            verbosity: Verbosity::Minimal,
        }
    }
}

/// The per-entity budget: `max(1, min(2000, max_tokens / limit_entities))`.
pub fn entity_budget(max_tokens: usize, limit_entities: usize) -> usize {
    (max_tokens / limit_entities.max(1))
        .clamp(1, MAX_ENTITY_TOKENS.max(1))
        .min(MAX_ENTITY_TOKENS)
}

/// A `query` answer and the parts of it evaluation scores.
#[derive(Debug, Clone)]
pub struct AnswerParts {
    /// The payload exactly as the tool returns it.
    pub payload: QueryPayload,
    /// The entities whose context was packed, the answer first.
    pub entities: Vec<crate::parse::Entity>,
    /// The entity ids behind the `also` pointers, in order.
    pub also: Vec<String>,
    /// Every ranked entity id, best first (the ranking `query` packs from).
    pub ranked: Vec<String>,
    /// Whether the ranking used the vector plane.
    pub mode: RetrievalMode,
}

/// One ranked chunk as `semantic_search` returns it.
#[derive(Debug, Clone, Serialize)]
pub struct SemanticHit {
    pub rank: usize,
    pub file: String,
    pub entity_id: String,
    pub qualified_name: String,
    pub kind: String,
    pub line_start: u32,
    pub line_end: u32,
    pub score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A question and its vector.
type QuestionVector = (String, Vec<f32>);

/// The read side over one store.
pub struct Retriever {
    cache: GenerationCache,
    config: Config,
    embedder: overlay::EmbedSlot,
    /// Rank on the lexical plane even when the generation has vectors (`eval --no-embed`).
    lexical_only: bool,
    /// The last question embedded and its vector: `query` then `semantic_search` on the same
    /// text (an agent's follow-up, or `eval` asking both) embeds it once — shared with the
    /// retrievers of the project's dependencies, so a scoped question is embedded once too.
    last_vector: Arc<Mutex<Option<QuestionVector>>>,
    /// The project's dependency indexes (`scope`), found on first use.
    dependencies: scope::DependencySlot,
}

impl Retriever {
    /// A retriever over the store in `store_dir`; the model loads on the first question that needs it.
    pub fn new(store_dir: PathBuf, config: Config) -> Self {
        Retriever::over(GenerationCache::new(store_dir), config)
    }

    /// A retriever over a shared store (`s3://…`); its local folder holds caches only.
    pub fn shared(store: crate::store::shared::SharedStore, config: Config) -> Self {
        Retriever::over(GenerationCache::shared(store), config)
    }

    fn over(cache: GenerationCache, config: Config) -> Self {
        Retriever {
            cache,
            config,
            embedder: Arc::new(Mutex::new(None)),
            lexical_only: false,
            last_vector: Arc::new(Mutex::new(None)),
            dependencies: Default::default(),
        }
    }

    /// A retriever over another store (a dependency's) that shares this one's model, question
    /// vector and plane.
    pub(crate) fn sibling(&self, store_dir: PathBuf) -> Retriever {
        Retriever {
            cache: GenerationCache::new(store_dir),
            config: self.config.clone(),
            embedder: Arc::clone(&self.embedder),
            lexical_only: self.lexical_only,
            last_vector: Arc::clone(&self.last_vector),
            dependencies: Default::default(),
        }
    }

    /// Whether this retriever never uses the vector plane.
    pub fn is_lexical_only(&self) -> bool {
        self.lexical_only
    }

    /// Answers describe the working tree at `root` (freshness compares with it) rather than
    /// the tree the index was built from: an index built elsewhere, read from this checkout.
    /// `None` keeps the tree the index was built from.
    /// The files of `root` that differ from the generation are indexed locally (an overlay,
    /// embedded with this retriever's model) and answer in place of the generation's.
    pub fn with_working_tree(mut self, root: Option<PathBuf>) -> Self {
        if let Some(root) = root {
            let overlay = overlay::OverlaySettings {
                config: self.config.clone(),
                embedder: Arc::clone(&self.embedder),
                dir: crate::config::cache_dir().join("overlays"),
            };
            self.cache.set_working_tree(root, Some(overlay));
        }
        self
    }

    /// More sibling repositories (`--workspace-root`) beside `workspace.roots`.
    pub fn with_workspace_roots(mut self, roots: &[PathBuf]) -> Self {
        self.config.workspace.roots.extend(roots.iter().cloned());
        self
    }

    /// A server's retriever: an overlay past `index.overlay_max_files` is built in the
    /// background while answers come from the index alone.
    pub fn building_overlays_in_background(mut self) -> Self {
        self.cache.build_overlays_in_background();
        self
    }

    /// The generation cache (a watcher asks it to reload when the working tree changes).
    pub fn cache(&self) -> &GenerationCache {
        &self.cache
    }

    /// This retriever ranks on the lexical plane only and never loads the model.
    pub fn lexical_only(mut self) -> Self {
        self.lexical_only = true;
        self
    }

    /// The configuration it ranks with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The current generation (reopened when `current` changes).
    pub async fn generation(&self) -> Result<Arc<LoadedGeneration>, KnowcodeError> {
        self.cache.current().await
    }

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
    async fn query_vector(
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
    async fn ranked(
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
            let bundle = context::build_bundle(
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
            let bundle = context::build_bundle(
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
        let bundle = context::build_bundle(
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

    /// `search`: entities by name or pattern, never with source.
    pub async fn search(
        &self,
        pattern: &str,
        limit: usize,
        verbosity: Verbosity,
    ) -> Result<SearchPayload, KnowcodeError> {
        let found = self.search_ranked(pattern, limit, verbosity).await?;
        Ok(SearchPayload {
            results: found.rows.into_iter().map(|(_, row)| row).collect(),
            total: found.total,
            freshness: found.freshness,
            match_kind: found.match_kind,
        })
    }

    /// `search`'s rows with how well each matched (0: exact id or name … 4: ranked), so rows
    /// of several indexes can be merged (`scope`).
    pub async fn search_ranked(
        &self,
        pattern: &str,
        limit: usize,
        verbosity: Verbosity,
    ) -> Result<SearchFound, KnowcodeError> {
        require_text(pattern)?;
        let generation = self.generation().await?;
        let mut matches: Vec<(u8, &crate::parse::Entity)> = Vec::new();
        let lower = pattern.to_lowercase();
        for entity in &generation.entities {
            let name = entity.name.to_lowercase();
            let rank = if entity.id == pattern || entity.name == pattern {
                0
            } else if entity.qualified_name.ends_with(pattern) || name == lower {
                1
            } else if name.starts_with(&lower) {
                2
            } else if name.contains(&lower) || entity.qualified_name.to_lowercase().contains(&lower)
            {
                3
            } else {
                continue;
            };
            matches.push((rank, entity));
        }
        let mode = if matches.is_empty() { "ranked" } else { "name" };
        if matches.is_empty() {
            let plan =
                QueryPlan::for_lookup(pattern, Action::Search, self.config.config.hybrid_alpha);
            let ranking = self.ranked(&generation, &plan, limit).await;
            for hit in &ranking.hits {
                if let Some(entity) = generation.entity(&hit.entity_id) {
                    matches.push((4, entity));
                }
            }
        }
        // Name matches: definitions before files, a type before its extensions and
        // instances, then by id. A ranked fallback keeps the ranking's order (a stable sort).
        matches.sort_by(|a, b| {
            let order = |(rank, e): &(u8, &crate::parse::Entity)| {
                (
                    *rank,
                    *rank < 4 && e.kind.is_file_level(),
                    *rank < 4 && is_extension(e),
                )
            };
            order(a).cmp(&order(b)).then_with(|| {
                if a.0 < 4 {
                    a.1.id.cmp(&b.1.id)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
        });
        let total = matches.len();
        let profile = ResponseProfile::new(Action::Search, TaskType::Locate, verbosity);
        let rows = matches
            .into_iter()
            .take(limit)
            .map(|(rank, e)| (rank, search_row(e, profile.standard_fields())))
            .collect();
        Ok(SearchFound {
            rows,
            total,
            freshness: freshness::check(&generation),
            match_kind: profile.standard_fields().then_some(mode),
        })
    }

    /// `trace`: callers or callees to `depth` (≤ 5), with what could not be resolved.
    pub async fn trace(
        &self,
        target: &str,
        direction: Direction,
        depth: usize,
    ) -> Result<Targeted<TracePayload>, KnowcodeError> {
        validate_depth(depth)?;
        let generation = self.generation().await?;
        let entity = match find_target(&generation, target)? {
            Target::Entity(entity) => entity,
            Target::Ambiguous(candidates) => return Ok(Targeted::Ambiguous(candidates)),
        };
        let (reached, unresolved) = reach(
            &generation,
            &entity.id,
            &[EdgeKind::Calls],
            direction,
            depth,
        );
        let nodes = reached
            .iter()
            .map(|r| r.node(format!("{}:{}", r.edge.path, r.edge.line)))
            .collect();
        let mut payload = TracePayload {
            entity: entity.id.clone(),
            direction,
            depth,
            nodes,
            freshness: freshness::check(&generation),
            unresolved: Default::default(),
            unresolved_calls_with_this_name: None,
        };
        match direction {
            Direction::Callees => payload.unresolved = unresolved,
            Direction::Callers => {
                let maybe = generation.unresolved_calls_named(&entity.name);
                payload.unresolved_calls_with_this_name = (maybe > 0).then_some(maybe);
            }
        }
        Ok(Targeted::Found(payload))
    }

    /// What a change to an entity may break: everything that reaches it through calls,
    /// inheritance, implementation or imports, up to `depth` levels, with the files involved.
    pub async fn impact(
        &self,
        target: &str,
        depth: usize,
    ) -> Result<Targeted<ImpactPayload>, KnowcodeError> {
        validate_depth(depth)?;
        let generation = self.generation().await?;
        let entity = match find_target(&generation, target)? {
            Target::Entity(entity) => entity,
            Target::Ambiguous(candidates) => return Ok(Targeted::Ambiguous(candidates)),
        };
        let kinds = [
            EdgeKind::Calls,
            EdgeKind::Inherits,
            EdgeKind::Implements,
            EdgeKind::Imports,
        ];
        let (reached, _) = reach(&generation, &entity.id, &kinds, Direction::Callers, depth);
        let files = reached.iter().map(|r| r.edge.path.clone()).collect();
        let mut by_depth = vec![0usize; depth];
        for r in &reached {
            by_depth[r.depth - 1] += 1;
        }
        let nodes = reached
            .iter()
            .take(IMPACT_NODES)
            .map(|r| r.node(r.edge.kind.as_str().to_string()))
            .collect();
        Ok(Targeted::Found(ImpactPayload {
            entity: entity.id.clone(),
            depth,
            impacted: reached.len(),
            by_depth,
            files,
            nodes,
            truncated: reached.len() > IMPACT_NODES,
            freshness: freshness::check(&generation),
        }))
    }

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
    async fn semantic_hits_in(
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

/// A `query` argument that says something, else `invalid_argument`.
fn require_text(query: &str) -> Result<(), KnowcodeError> {
    match query.trim().is_empty() {
        true => Err(KnowcodeError::invalid_argument(
            "query",
            "must not be empty",
        )),
        false => Ok(()),
    }
}

fn validate_budget(max_tokens: usize, limit_entities: usize) -> Result<(), KnowcodeError> {
    if max_tokens == 0 || max_tokens > MAX_TOKENS_CEILING {
        return Err(KnowcodeError::invalid_argument(
            "max_tokens",
            format!("must be an integer between 1 and {MAX_TOKENS_CEILING}"),
        ));
    }
    if limit_entities == 0 || limit_entities > MAX_LIMIT_ENTITIES {
        return Err(KnowcodeError::invalid_argument(
            "limit_entities",
            format!("must be an integer between 1 and {MAX_LIMIT_ENTITIES}"),
        ));
    }
    Ok(())
}

/// What an entity argument named.
pub enum Target<'g> {
    Entity(&'g crate::parse::Entity),
    /// Several equally good matches: the disambiguation payload to return instead.
    Ambiguous(Disambiguation),
}

/// Resolves an entity argument (id, name, qualified-name suffix, fuzzy), or
/// `entity_not_found`.
pub fn find_target<'g>(
    generation: &'g LoadedGeneration,
    target: &str,
) -> Result<Target<'g>, KnowcodeError> {
    match resolve::resolve(generation, target) {
        Resolved::Found(entity) => Ok(Target::Entity(entity)),
        Resolved::Ambiguous(candidates) => Ok(Target::Ambiguous(disambiguation(
            generation,
            target,
            &candidates,
        ))),
        Resolved::NotFound => Err(not_found(target)),
    }
}

fn validate_depth(depth: usize) -> Result<(), KnowcodeError> {
    if depth == 0 || depth > MAX_TRACE_DEPTH {
        return Err(KnowcodeError::invalid_argument(
            "depth",
            format!("must be between 1 and {MAX_TRACE_DEPTH}"),
        ));
    }
    Ok(())
}

fn not_found(target: &str) -> KnowcodeError {
    KnowcodeError::new(
        ErrorCode::EntityNotFound,
        format!("no entity matches `{target}`"),
    )
}

fn disambiguation(
    generation: &LoadedGeneration,
    target: &str,
    candidates: &[&crate::parse::Entity],
) -> Disambiguation {
    Disambiguation {
        ambiguous: true,
        target: target.to_string(),
        candidates: candidates.iter().map(|e| entity_row(e)).collect(),
        hint: "call again with one candidate's id",
        freshness: freshness::check(generation),
    }
}

/// An entity that adds to a type defined elsewhere (a Swift or Dart extension, a Haskell
/// instance): a search for the name lists the type first.
fn is_extension(entity: &crate::parse::Entity) -> bool {
    matches!(entity.subkind.as_deref(), Some("extension" | "instance"))
}

/// An entity's id, kind and line range (the summary row of `search` and disambiguation).
/// A `search` row: id, kind and lines, with signature and doc line when `standard`.
pub(crate) fn search_row(entity: &crate::parse::Entity, standard: bool) -> EntityRow {
    let mut row = entity_row(entity);
    if standard {
        row.signature = Some(entity.signature.clone());
        row.doc = entity
            .doc
            .as_ref()
            .map(|doc| doc.lines().next().unwrap_or("").to_string());
    }
    row
}

/// `search`'s rows with their match rank, before they become a payload.
pub struct SearchFound {
    pub rows: Vec<(u8, EntityRow)>,
    pub total: usize,
    pub freshness: Freshness,
    pub match_kind: Option<&'static str>,
}

fn entity_row(entity: &crate::parse::Entity) -> EntityRow {
    EntityRow {
        id: entity.id.clone(),
        kind: entity.kind.as_str(),
        lines: format!("{}-{}", entity.span.start_line, entity.span.end_line),
        signature: None,
        doc: None,
    }
}

/// The bundles of one answer and what the profile makes of them.
struct Answer<'a> {
    generation: &'a LoadedGeneration,
    profile: ResponseProfile,
    bundles: &'a [Bundle],
    confidence: f64,
    ranking: Option<&'a Ranking>,
    /// `path:line qualified_name` of the next candidates (query only).
    also: &'a [String],
}

impl Answer<'_> {
    fn payload(
        &self,
        max_tokens: usize,
        task: TaskType,
        task_confidence: f64,
        query: &str,
        limit: usize,
    ) -> QueryPayload {
        let mut context_text = self
            .bundles
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let also_tokens = lines_tokens(self.also);
        let context_budget = max_tokens.saturating_sub(also_tokens);
        if tokens::count(&context_text) > context_budget {
            context_text = tokens::fit_chars(&context_text, context_budget);
        }
        let total_tokens = tokens::count(&context_text) + also_tokens;
        let sufficiency = sufficiency::score(
            if self.bundles.is_empty() {
                0.0
            } else {
                self.confidence
            },
            self.bundles,
        );
        let source_included = self.bundles.iter().any(|b| b.source_included);
        QueryPayload {
            context_text,
            sufficiency_score: sufficiency.score,
            total_tokens,
            freshness: freshness::check(self.generation),
            source_included,
            reduction_summary: (!source_included).then(|| self.reduction_summary()),
            also: self.also.to_vec(),
            errors: self.errors(),
            standard: self
                .profile
                .standard_fields()
                .then(|| self.standard_fields(task, task_confidence)),
            evidence: self
                .profile
                .evidence()
                .then(|| self.evidence_rows(limit))
                .flatten(),
            files: self.profile.evidence().then(|| self.file_rows()).flatten(),
            diagnostics: self.profile.diagnostics().then(|| Diagnostics {
                query: query.to_string(),
                max_tokens,
                limit_entities: limit,
                lexical_weight: self.ranking.map(|r| r.lexical_weight),
                confidence: sufficiency.confidence,
                coverage: sufficiency.coverage,
                sections: self
                    .bundles
                    .iter()
                    .map(|b| BundleRow {
                        entity: b.entity_id.clone(),
                        planned: b.planned.clone(),
                        included: b.included.clone(),
                        tokens: b.tokens,
                    })
                    .collect(),
            }),
        }
    }

    /// What a summary left out, when no bundle carries source.
    fn reduction_summary(&self) -> String {
        if self.bundles.is_empty() {
            return "no matching entity".to_string();
        }
        let omitted: usize = self.bundles.iter().map(|b| b.source_tokens_omitted).sum();
        format!(
            "summary of {} entit{}; {omitted} source tokens omitted (verbosity=standard adds source)",
            self.bundles.len(),
            if self.bundles.len() == 1 { "y" } else { "ies" }
        )
    }

    /// The ranking's problems, a lexical generation and an overlay not applied said as such.
    fn errors(&self) -> Vec<String> {
        let mut errors: Vec<String> = self.ranking.map(|r| r.errors.clone()).unwrap_or_default();
        if self.generation.manifest.kind == crate::store::GenerationKind::Lexical {
            errors.push("lexical generation: ranked without vectors".into());
        }
        if let Some(note) = self.generation.overlay_note() {
            errors.push(format!(
                "overlay not applied ({}): {}; {}",
                note.reason, note.detail, note.hint
            ));
        }
        errors
    }

    fn standard_fields(&self, task: TaskType, task_confidence: f64) -> StandardFields {
        StandardFields {
            task_type: task.as_str(),
            task_confidence: (task_confidence * 100.0).round() / 100.0,
            retrieval_mode: self.ranking.map_or(RetrievalMode::Exact, |r| r.mode),
            entities: self.bundles.iter().map(|b| b.entity_id.clone()).collect(),
            truncated: self.bundles.iter().any(|b| b.truncated),
        }
    }

    /// The ranked entities behind the answer (at least three), when it was ranked.
    fn evidence_rows(&self, limit: usize) -> Option<Vec<EvidenceRow>> {
        let ranking = self.ranking?;
        let rows = ranking
            .hits
            .iter()
            .take(limit.max(3))
            .enumerate()
            .map(|(i, h)| EvidenceRow {
                rank: i + 1,
                entity_id: h.entity_id.clone(),
                chunk_id: self.generation.chunks[h.chunk].id.clone(),
                score: round4(h.score),
                signals: h.evidence.clone(),
            })
            .collect();
        Some(rows)
    }

    /// The best-ranked files, when the ranking pooled any.
    fn file_rows(&self) -> Option<Vec<FileRow>> {
        let files: Vec<FileRow> = self
            .ranking?
            .files
            .iter()
            .take(EVIDENCE_FILES)
            .map(|f| FileRow {
                path: f.path.clone(),
                score: round4(f.score),
            })
            .collect();
        (!files.is_empty()).then_some(files)
    }
}

/// A score rounded to four decimals for a payload.
fn round4(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

/// Hits ranked per query: enough for the packed entities and `also` pointers in other files.
const RANKED_CANDIDATES: usize = 40;
/// Next candidates listed in a `query` answer's `also` field.
pub const ALSO_POINTERS: usize = 4;
/// Ranked files listed with the evidence (verbose and up).
const EVIDENCE_FILES: usize = 5;

/// The next candidates after the packed entities, as `path:line qualified_name`: first one per
/// file not shown yet (an agent whose first hit is in the wrong file gets other places to
/// look), then further entities of files already shown. Tests, examples and benchmarks are
/// left out unless the question is about them (four slots are too few to spend on code that
/// only shows how the answer is used). They take at most a quarter of the budget.
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
    let mut chosen: Vec<&crate::parse::Entity> = Vec::new();
    for entity in &rest {
        if chosen.len() < ALSO_POINTERS && !files.contains(&entity.path.as_str()) {
            files.push(&entity.path);
            chosen.push(entity);
        }
    }
    for entity in &rest {
        if chosen.len() < ALSO_POINTERS && !chosen.iter().any(|c| c.id == entity.id) {
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

/// Tokens of lines as they are joined into a payload (0 for none).
fn lines_tokens(lines: &[String]) -> usize {
    if lines.is_empty() {
        0
    } else {
        tokens::count(&lines.join("\n"))
    }
}

/// Nodes listed in an `impact` payload (the count covers all of them).
const IMPACT_NODES: usize = 50;

/// An entity reached by a graph walk, at which depth and over which edge.
struct Reached<'g> {
    id: String,
    depth: usize,
    edge: &'g crate::graph::Edge,
}

impl Reached<'_> {
    /// The payload node, with how it was reached.
    fn node(&self, via: String) -> GraphNode {
        GraphNode {
            id: self.id.clone(),
            depth: self.depth,
            via,
        }
    }
}

/// Breadth-first walk from `start` along resolved edges of `kinds`: incoming ones for
/// callers (who depends on it), outgoing for callees. Also returns the names of unresolved
/// outgoing edges at the first level.
fn reach<'g>(
    generation: &'g LoadedGeneration,
    start: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
) -> (Vec<Reached<'g>>, std::collections::BTreeSet<String>) {
    let mut seen = std::collections::HashSet::from([start.to_string()]);
    let mut frontier = vec![start.to_string()];
    let mut reached = Vec::new();
    let mut unresolved = std::collections::BTreeSet::new();
    for level in 1..=depth {
        let mut next = Vec::new();
        for id in &frontier {
            for &kind in kinds {
                let edges: Vec<&crate::graph::Edge> = match direction {
                    Direction::Callees => generation.outgoing(id, kind).collect(),
                    Direction::Callers => generation.incoming(id, kind).collect(),
                };
                for edge in edges {
                    let other = match direction {
                        Direction::Callees => edge.target.clone(),
                        Direction::Callers => Some(edge.source.clone()),
                    };
                    let Some(other) = other else {
                        if level == 1 {
                            unresolved.insert(edge.target_name.clone());
                        }
                        continue;
                    };
                    if seen.insert(other.clone()) {
                        next.push(other.clone());
                        reached.push(Reached {
                            id: other,
                            depth: level,
                            edge,
                        });
                    }
                }
            }
        }
        frontier = next;
    }
    (reached, unresolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_entity_budget_follows_the_contract() {
        assert_eq!(entity_budget(300, 3), 100);
        assert_eq!(entity_budget(1500, 1), 1500);
        assert_eq!(entity_budget(9000, 2), 2000);
        assert_eq!(entity_budget(2, 5), 1);
    }
}
