//! Retrieval: the read side every surface shares (CLI, MCP, REST). `query` ranks, packs
//! task-aware context into a token budget and scores its sufficiency; `search`, `context`,
//! `trace` and `semantic_search` are the focused follow-ups. Every payload carries the
//! freshness of the generation it came from. Retrieval never builds and never writes.
//!
//! This module is the public surface: the request types, their limits and [`Retriever`] with
//! its constructors. Each action reads top to bottom in a file of its own (`query`, `context`,
//! `search`, `trace`, `semantic`), over the ranking (`ranked` → `rank` → `rescore`, writing
//! `hit`), packing (`bundle`, `answer`) and payload shapes (`payload`, `profile`). What it
//! answers from — the current generation, its overlay and freshness — is loaded by
//! [`crate::load`], which knows nothing of ranking.

mod answer;
pub(crate) mod bundle;
mod chores;
mod context;
pub(crate) mod hit;
pub mod payload;
pub(crate) mod plan;
pub mod profile;
pub(crate) mod qualified;
mod query;
pub(crate) mod question;
pub(crate) mod rank;
mod ranked;
mod rescore;
pub(crate) mod resolve;
pub mod scope;
mod search;
mod semantic;
pub(crate) mod sufficiency;
mod target;
pub mod tokens;
mod trace;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

pub use self::hit::{Evidence, RetrievalMode};
use self::payload::QueryPayload;
pub use self::profile::{Direction, Scope};
use self::profile::{TaskType, Verbosity};
pub use self::query::ALSO_POINTERS;
pub use self::search::SearchFound;
pub use self::target::{Target, find_target};
use crate::config::Config;
use crate::error::KnowcodeError;
use crate::load::overlay;
use crate::load::{GenerationCache, LoadedGeneration};

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
