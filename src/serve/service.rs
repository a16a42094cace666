//! One dispatcher for `knowcode_retrieve`, `knowcode_lifecycle` and `knowcode_inspect`:
//! validates arguments, confines paths to the served root, routes to retrieval, jobs and
//! inspection, and records telemetry. Retrieval never builds.

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::contract::{self, Call, LIFECYCLE, RETRIEVE};
use super::jobs::{JobStatus, Jobs};
use super::telemetry::Telemetry;
use crate::config::Config;
use crate::error::{ErrorCode, KnowcodeError};
use crate::index::{self, IndexOptions};
use crate::retrieve::payload::json_result;
use crate::retrieve::{QueryRequest, Retriever, Scope};
use crate::store::Store;
use crate::store::legacy::Readiness;
use crate::store::shared::SharedStore;

/// The served root: `--store` (must exist) > `CLAUDE_PROJECT_DIR` (if a folder) > the
/// current directory.
pub fn resolve_root(store: Option<&Path>) -> Result<PathBuf, KnowcodeError> {
    let chosen = match store {
        Some(path) if path.is_dir() => path.to_path_buf(),
        Some(path) => {
            return Err(KnowcodeError::invalid_argument(
                "--store",
                format!("{} is not a directory", path.display()),
            ));
        }
        None => match std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from) {
            Some(dir) if dir.is_dir() => dir,
            _ => std::env::current_dir()
                .map_err(|e| KnowcodeError::new(ErrorCode::Internal, e.to_string()))?,
        },
    };
    chosen
        .canonicalize()
        .map_err(|e| KnowcodeError::new(ErrorCode::Internal, format!("{}: {e}", chosen.display())))
}

/// Resolves a path argument against the root and refuses anything that escapes it: `..`,
/// absolute paths elsewhere, symlinks pointing out, `/repo-backup` next to `/repo`.
///
/// Percent-encoded arguments (`%2e%2e%2f`) are judged by what they decode to as well, and
/// NUL bytes are refused outright.
pub fn confine(root: &Path, argument: &str) -> Result<PathBuf, KnowcodeError> {
    let refuse = || KnowcodeError::path_outside_root(argument, root);
    if argument.contains('\0') {
        return Err(refuse());
    }
    let decoded = percent_decode(argument);
    if decoded != argument {
        confine_literal(root, &decoded).map_err(|_| refuse())?;
    }
    confine_literal(root, argument)
}

/// `%XX` sequences decoded (invalid ones kept as they are).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn confine_literal(root: &Path, argument: &str) -> Result<PathBuf, KnowcodeError> {
    let refuse = || KnowcodeError::path_outside_root(argument, root);
    let joined = if Path::new(argument).is_absolute() {
        PathBuf::from(argument)
    } else {
        root.join(argument)
    };
    let mut normalized = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !normalized.pop() {
                    return Err(refuse());
                }
            }
            Component::CurDir => {}
            other => normalized.push(other),
        }
    }
    // Resolve symlinks through the longest part that exists.
    let mut existing = normalized.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
            return Err(refuse());
        };
        rest.push(name);
        if !existing.pop() {
            return Err(refuse());
        }
    }
    let mut resolved = existing.canonicalize().map_err(|_| refuse())?;
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    if resolved.starts_with(root) {
        Ok(resolved)
    } else {
        Err(refuse())
    }
}

/// Commits listed by `inspect action=history`.
const HISTORY_LIMIT: usize = 20;

/// The server state behind every surface.
pub struct Service {
    root: PathBuf,
    /// The folder holding the store's `.knowcode/` on this machine: the root, or a shared
    /// store's local folder (caches, staging, telemetry).
    store_dir: PathBuf,
    /// Set when the index lives on object storage.
    shared: Option<SharedStore>,
    config: Config,
    retriever: Retriever,
    jobs: Jobs,
    telemetry: Telemetry,
}

impl Service {
    /// The service for the repository at `root`, with its `aimodels.yaml`.
    pub fn new(root: PathBuf) -> Result<Service, KnowcodeError> {
        let config = Config::load(&root)?;
        let store = Store::at(&root);
        Ok(Service {
            retriever: Retriever::new(root.clone(), config.clone()),
            telemetry: Telemetry::at(store.base()),
            jobs: Jobs::default(),
            config,
            store_dir: root.clone(),
            shared: None,
            root,
        })
    }

    /// The service for the working tree `tree` reading the shared store `shared`: the tree's
    /// differences are merged in as an overlay, builds publish to the shared store.
    pub fn shared(shared: SharedStore, tree: PathBuf) -> Result<Service, KnowcodeError> {
        let config = Config::load(&tree)?;
        let store_dir = shared.local_dir();
        Ok(Service {
            retriever: Retriever::shared(shared.clone(), config.clone())
                .with_working_tree(Some(tree.clone()))
                .building_overlays_in_background(),
            telemetry: Telemetry::at(Store::at(&store_dir).base()),
            jobs: Jobs::default(),
            config,
            store_dir,
            shared: Some(shared),
            root: tree,
        })
    }

    /// Answers describe the working tree at `root` instead of the one the index was built
    /// from (see [`Retriever::with_working_tree`]).
    pub fn with_working_tree(mut self, root: Option<PathBuf>) -> Self {
        self.retriever = self
            .retriever
            .with_working_tree(root)
            .building_overlays_in_background();
        self
    }

    /// More sibling repositories answered over with `scope=all` (`--workspace-root`).
    pub fn with_workspace_roots(mut self, roots: &[PathBuf]) -> Self {
        self.retriever = self.retriever.with_workspace_roots(roots);
        self
    }

    /// Opens the current generation in the background when the server starts, so a shared
    /// store's download and a working tree's overlay are ready before the first request
    /// (failures are left for that request to report).
    pub async fn warm_up(self: std::sync::Arc<Self>) {
        let warms = self.shared.is_some() || self.retriever.cache().has_working_tree();
        if warms && let Err(e) = self.retriever.generation().await {
            tracing::info!("not warmed up: {}", e.message);
        }
    }

    /// The served root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configuration loaded at start.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What depends on an entity (REST `impact`; not an MCP action).
    pub async fn impact(&self, target: &str, depth: usize) -> Result<Value, KnowcodeError> {
        json_result(self.retriever.impact(target, depth).await)
    }

    /// Runs one tool call and records it (allowlisted fields only; see `telemetry`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, KnowcodeError> {
        let started = Instant::now();
        let result = self.dispatch(tool, &arguments).await;
        let bytes = match &result {
            Ok(v) => serde_json::to_string(v).map(|s| s.len()).unwrap_or(0),
            Err(e) => e.to_json().to_string().len(),
        };
        let action = arguments
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("");
        let outcome = match &result {
            Ok(_) => "ok",
            Err(e) => e.code.as_str(),
        };
        let event = self.telemetry.event(
            tool,
            action,
            &arguments,
            bytes,
            started.elapsed().as_millis() as u64,
            outcome,
        );
        self.telemetry.record(&event);
        result
    }

    async fn dispatch(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Value, KnowcodeError> {
        if !contract::TOOLS.contains(&tool) {
            return Err(KnowcodeError::invalid_argument(
                "name",
                format!(
                    "unknown tool `{tool}`; tools: {}",
                    contract::TOOLS.join(", ")
                ),
            ));
        }
        let call = contract::parse(tool, arguments)?;
        match tool {
            RETRIEVE => self.retrieve(&call).await,
            LIFECYCLE => self.lifecycle(&call),
            _ => self.inspect(&call).await,
        }
    }

    async fn retrieve(&self, call: &Call<'_>) -> Result<Value, KnowcodeError> {
        match call.action() {
            "query" => {
                let request = QueryRequest {
                    query: call.required_text("query")?,
                    task_type: call.task_type()?,
                    max_tokens: call.integer("max_tokens")?,
                    limit_entities: call.integer("limit_entities")?,
                    expand_deps: call.flag("expand_deps")?,
                    verbosity: call.verbosity()?,
                };
                match call.scope()? {
                    Scope::Project => json_result(self.retriever.query(&request).await),
                    scope => json_result(
                        self.retriever
                            .query_scoped(&request, scope == Scope::All)
                            .await,
                    ),
                }
            }
            "search" => {
                let pattern = match call.text("query")? {
                    Some(q) if !q.trim().is_empty() => q,
                    _ => call.required_text("target")?,
                };
                let (limit, verbosity) = (call.integer("limit")?, call.verbosity()?);
                match call.scope()? {
                    Scope::Project => {
                        json_result(self.retriever.search(&pattern, limit, verbosity).await)
                    }
                    scope => json_result(
                        self.retriever
                            .search_scoped(&pattern, limit, verbosity, scope == Scope::All)
                            .await,
                    ),
                }
            }
            "context" => {
                let answer = self
                    .retriever
                    .context(
                        &call.required_text("target")?,
                        call.task_type()?,
                        call.integer("max_tokens")?,
                        call.verbosity()?,
                    )
                    .await;
                json_result(answer)
            }
            "trace" => {
                let answer = self
                    .retriever
                    .trace(
                        &call.required_text("target")?,
                        call.direction()?,
                        call.integer("depth")?,
                    )
                    .await;
                json_result(answer)
            }
            _ => {
                let (query, limit) = (call.required_text("query")?, call.integer("limit")?);
                match call.scope()? {
                    Scope::Project => {
                        json_result(self.retriever.semantic_search(&query, limit).await)
                    }
                    scope => json_result(
                        self.retriever
                            .semantic_search_scoped(&query, limit, scope == Scope::All)
                            .await,
                    ),
                }
            }
        }
    }

    fn lifecycle(&self, call: &Call<'_>) -> Result<Value, KnowcodeError> {
        json_result(self.submit_job(call))
    }

    /// Starts the lifecycle job a call asks for.
    fn submit_job(&self, call: &Call<'_>) -> Result<JobStatus, KnowcodeError> {
        match call.action() {
            "export" => {
                let output = confine(&self.root, &call.required_text("output")?)?;
                let store_dir = self.root.clone();
                self.jobs
                    .submit("export", move |_progress| export_job(&store_dir, &output))
            }
            action => {
                let options = IndexOptions {
                    root: self.root.clone(),
                    store_dir: self.store_dir.clone(),
                    ignore_globs: Vec::new(),
                    embed: !call.flag("no_embed")?,
                    temporal: call.flag("temporal")?,
                    config: self.config.clone(),
                };
                let shared = self.shared.clone();
                self.jobs.submit(action, move |progress| {
                    let runtime = job_runtime()?;
                    let build = async {
                        match &shared {
                            Some(shared) => index::shared::run(&options, shared, progress).await,
                            None => index::run(&options, progress).await,
                        }
                    };
                    let summary = runtime.block_on(build).map_err(|e| e.to_knowcode())?;
                    crate::load::freshness::invalidate();
                    let mut result = serde_json::to_value(&summary).unwrap_or_default();
                    if let Value::Object(map) = &mut result {
                        map.remove("timings");
                    }
                    // The project answers from here on; its dependencies follow.
                    let dependencies = runtime.block_on(crate::index::deps::index_for_project(
                        &options.root,
                        &options.config,
                    ));
                    if let (Value::Object(map), Some(report)) = (&mut result, dependencies) {
                        map.insert("dependencies".into(), Value::String(report.line()));
                    }
                    Ok(result)
                })
            }
        }
    }

    async fn inspect(&self, call: &Call<'_>) -> Result<Value, KnowcodeError> {
        match call.action() {
            "job_status" => json_result(self.jobs.status(call.text("job_id")?.as_deref())),
            "freshness" => {
                let generation = self.retriever.generation().await?;
                let mut payload = serde_json::to_value(crate::load::freshness::check(&generation))
                    .unwrap_or_default();
                let workspace = self.retriever.workspace_freshness().await?;
                if !workspace.is_empty() {
                    payload["workspace"] = serde_json::to_value(workspace).unwrap_or_default();
                }
                Ok(payload)
            }
            "stats" => self.stats().await,
            "telemetry" => Ok(self.telemetry.summary()),
            "doctor" => {
                let report = match &self.shared {
                    Some(shared) => {
                        crate::ops::doctor::run_shared(shared, &self.root, &self.config).await
                    }
                    None => crate::ops::doctor::run(&self.root, &self.config).await,
                };
                Ok(report.to_json())
            }
            "quality" if self.shared.is_some() => {
                let generation = self.retriever.generation().await?;
                crate::index::quality::read(&generation.dir).map_err(|_| {
                    KnowcodeError::new(
                        ErrorCode::MissingPreflightReport,
                        format!("generation {} has no quality report", generation.id),
                    )
                })
            }
            "quality" => match crate::store::legacy::readiness(&self.root) {
                Readiness::Generation(id) => {
                    let store = Store::at(&self.root);
                    crate::index::quality::read(&store.generation_dir(&id)).map_err(|_| {
                        KnowcodeError::new(
                            ErrorCode::MissingPreflightReport,
                            format!("generation {id} has no quality report"),
                        )
                    })
                }
                // The flat file carries no report: the working tree's, computed now.
                Readiness::LegacyFlat => self.preflight().await,
                Readiness::Missing => Err(KnowcodeError::missing_store(&self.root)),
            },
            "preflight" => self.preflight().await,
            _ => {
                let generation = self.retriever.generation().await?;
                let target = call.text("target")?;
                crate::ops::history::query(&generation, target.as_deref(), HISTORY_LIMIT)
            }
        }
    }

    /// A quality report of the working tree, computed now (nothing is stored).
    async fn preflight(&self) -> Result<Value, KnowcodeError> {
        let options = IndexOptions {
            root: self.root.clone(),
            store_dir: self.root.clone(),
            ignore_globs: Vec::new(),
            embed: false,
            temporal: false,
            config: self.config.clone(),
        };
        let analysis = tokio::task::spawn_blocking(move || {
            index::analyse(&options, &index::NoProgress, &mut index::Timings::default())
        })
        .await
        .map_err(|e| KnowcodeError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|e| e.to_knowcode())?;
        Ok(crate::index::quality::report(&analysis))
    }

    /// Counts small enough for an agent (≤ 600 bytes).
    async fn stats(&self) -> Result<Value, KnowcodeError> {
        let generation = self.retriever.generation().await?;
        let mut entities: std::collections::BTreeMap<&str, usize> = Default::default();
        for e in &generation.entities {
            *entities.entry(e.kind.as_str()).or_default() += 1;
        }
        let mut edges: std::collections::BTreeMap<&str, usize> = Default::default();
        for e in &generation.edges {
            *edges.entry(e.kind.as_str()).or_default() += 1;
        }
        let (languages, text_only) = files_by_language(&generation.entities);
        let counts = &generation.manifest.counts;
        let discovery =
            crate::index::deps::discover(&generation.root, self.config.index.dependencies);
        let dependencies = (discovery != Default::default()).then(|| {
            let indexed = crate::index::deps::cache::status(&discovery.found);
            crate::index::deps::Report::new(&discovery, indexed)
        });
        let mut stats = json!({
            "generation_id": generation.id,
            "kind": generation.manifest.kind.as_str(),
            "files": counts.files,
            "languages": languages,
            "text_only": text_only,
            "problems": problems(&generation.manifest),
            "entities": entities,
            "edges": edges,
            "resolved": counts.edges_resolved,
            "unresolved": counts.edges_unresolved,
            "chunks": counts.chunks,
            "vectors": counts.vectors,
            "overlay_files": generation.overlay_files,
            "signature_views": counts.views_embedded + counts.views_reused,
            "disk_bytes": Store::at(&self.store_dir).disk_bytes(),
            "sufficiency_threshold": self.config.config.sufficiency_threshold,
        });
        if let Some(report) = dependencies {
            stats["dependencies"] = serde_json::to_value(report).unwrap_or_default();
        }
        Ok(stats)
    }
}

/// Indexed files per language (a text file counts under its format, a failed parse under
/// its language), and how many of them were read as text only.
fn files_by_language(
    entities: &[crate::parse::Entity],
) -> (std::collections::BTreeMap<&str, usize>, usize) {
    let mut languages: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut text_only = 0;
    for file in entities.iter().filter(|e| e.kind.is_file_level()) {
        *languages.entry(file.language.as_str()).or_default() += 1;
        text_only += usize::from(file.kind == crate::parse::EntityKind::Text);
    }
    (languages, text_only)
}

/// Files with problems, counted by kind (syntax errors, invalid UTF-8, timeouts; skipped
/// files by their reason), with the first few named so an agent can look.
fn problems(manifest: &crate::store::manifest::Manifest) -> Value {
    const NAMED: usize = 3;
    let mut by_kind: std::collections::BTreeMap<String, usize> = Default::default();
    for issue in &manifest.issues {
        *by_kind.entry(issue.kind.as_str().to_string()).or_default() += 1;
    }
    for skipped in &manifest.skipped {
        *by_kind
            .entry(skipped.reason.as_str().to_string())
            .or_default() += 1;
    }
    let named: Vec<String> = manifest
        .issues
        .iter()
        .map(|i| format!("{}: {}", i.path, i.message))
        .chain(
            manifest
                .skipped
                .iter()
                .map(|s| format!("{}: {}", s.path, s.reason.as_str())),
        )
        .take(NAMED)
        .collect();
    json!({"counts": by_kind, "first": named})
}

/// The runtime a background job drives its async work on (jobs run on their own thread).
fn job_runtime() -> Result<tokio::runtime::Runtime, KnowcodeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            KnowcodeError::new(ErrorCode::Internal, format!("cannot start a runtime: {e}"))
        })
}

/// The export job: Markdown pages, `manifest.json` and `knowcode_knowledge.json`.
fn export_job(store_dir: &Path, output: &Path) -> Result<Value, KnowcodeError> {
    let runtime = job_runtime()?;
    let cache = crate::load::GenerationCache::new(store_dir.to_path_buf());
    let generation = runtime.block_on(cache.current())?;
    crate::ops::export::export(&generation, output, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_escape_the_root_are_refused() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("repo");
        let sibling = parent.path().join("repo-backup");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&sibling).unwrap();
        std::os::unix::fs::symlink(&sibling, root.join("link")).unwrap();
        let root = root.canonicalize().unwrap();
        assert!(confine(&root, "docs/out").is_ok());
        assert!(confine(&root, "new/folder").is_ok());
        assert!(confine(&root, "100%25-done").is_ok());
        for escape in [
            "../repo-backup",
            "/etc",
            "docs/../../repo-backup/x",
            "link/x",
            sibling.to_str().unwrap(),
            "%2e%2e/repo-backup",
            "docs%2f..%2f..%2fx",
            "%2Fetc",
            "docs/\0/x",
        ] {
            let err = confine(&root, escape).unwrap_err();
            assert_eq!(err.code, ErrorCode::PathOutsideRoot, "{escape}");
        }
    }
}
