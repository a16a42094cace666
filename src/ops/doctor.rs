//! `doctor`: checks that say whether knowcode can be trusted here, each pass/warn/fail with
//! a message and a hint — config, ONNX Runtime, model files vs the index, the store and its
//! current generation, builder drift, freshness, disk footprint, unparsed languages, and
//! with `--mcp` a real handshake with `knowcode mcp`. A shared store (`s3://…`) is checked
//! step by step (reach, authenticate, read `current`, open the generation).
//! Read-only.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::embed;
use crate::error::{ErrorCode, KnowcodeError};
use crate::load::GenerationCache;
use crate::parse::IssueKind;
use crate::store::legacy::Readiness;
use crate::store::shared::SharedStore;
use crate::store::{Store, manifest::SCHEMA_VERSION};

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Warn,
    Fail,
}

/// One named check with what it found and, on failure, what to do.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hint: String,
}

/// Every check `doctor` ran, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// The configured `sufficiency_threshold` agents compare `sufficiency_score` with.
    pub sufficiency_threshold: f64,
}

impl Report {
    /// No check failed (warnings allowed).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// The report as the `inspect doctor` payload.
    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.passed(),
            "sufficiency_threshold": self.sufficiency_threshold,
            "checks": self.checks,
        })
    }

    fn push(
        &mut self,
        name: &'static str,
        status: Status,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.checks.push(Check {
            name,
            status,
            message: message.into(),
            hint: hint.into(),
        });
    }
}

/// Runs every check against the store in `root`.
pub async fn run(root: &Path, config: &Config) -> Report {
    let mut report = runtime_checks(root, config);
    let store = Store::at(root);
    let manifest = match crate::store::legacy::readiness(root) {
        Readiness::LegacyFlat => {
            report.push(
                "store",
                Status::Warn,
                "legacy flat store (knowcode_knowledge.json): lexical answers only, no freshness of its own",
                "run knowcode build for a published generation",
            );
            None
        }
        Readiness::Generation(_) | Readiness::Missing => match store.current_manifest() {
            Ok((id, manifest)) => {
                report.push(
                    "store",
                    Status::Pass,
                    format!("current generation {id} ({})", manifest.kind.as_str()),
                    "",
                );
                Some(manifest)
            }
            Err(e) => {
                report.push("store", Status::Fail, e.message, e.hint);
                None
            }
        },
    };
    if let Some(manifest) = manifest {
        let cache = GenerationCache::new(root.to_path_buf());
        check_generation(&mut report, &cache, config, &manifest).await;
    }
    finish(report, root, &store, config)
}

/// Runs every check against a shared store read for the working tree `tree`: the store is
/// reached, authenticated, its `current` read and the generation opened, and the report names
/// the step that failed.
pub async fn run_shared(shared: &SharedStore, tree: &Path, config: &Config) -> Report {
    let mut report = runtime_checks(tree, config);
    let manifest = match shared_generation(shared).await {
        Ok(id) => {
            let cache = GenerationCache::shared(shared.clone());
            let mut cache = cache;
            cache.set_working_tree(tree.to_path_buf(), None);
            match cache.current().await {
                Ok(generation) => {
                    report.push(
                        "store",
                        Status::Pass,
                        format!(
                            "{}: reached, authenticated, current generation {id} ({}) readable",
                            shared.uri(),
                            generation.manifest.kind.as_str()
                        ),
                        "",
                    );
                    Some((cache, generation.manifest.clone()))
                }
                Err(e) => {
                    report.push("store", Status::Fail, e.message, e.hint);
                    None
                }
            }
        }
        Err(e) => {
            report.push("store", Status::Fail, e.message, e.hint);
            None
        }
    };
    if let Some((cache, manifest)) = manifest {
        check_generation(&mut report, &cache, config, &manifest).await;
    }
    finish(report, tree, &Store::at(&shared.local_dir()), config)
}

/// The shared store's current id, or the failing step as a typed error.
async fn shared_generation(shared: &SharedStore) -> Result<String, KnowcodeError> {
    shared.probe().await?;
    match shared.current().await? {
        Some(pointer) => Ok(pointer.id),
        None => Err(KnowcodeError::new(
            ErrorCode::MissingKnowledgeStore,
            format!(
                "{}: reached and readable, but nothing is published yet",
                shared.uri()
            ),
        )),
    }
}

/// The eval pointer and the local disk footprint, last in every report.
fn finish(mut report: Report, root: &Path, store: &Store, config: &Config) -> Report {
    report.push("eval", Status::Pass, eval_hint(root), "");
    check_dependencies(&mut report, root, config);
    let bytes = store.disk_bytes();
    let status = if bytes > 1 << 30 {
        Status::Warn
    } else {
        Status::Pass
    };
    report.push(
        "disk",
        status,
        format!("{:.1} MiB under .knowcode", bytes as f64 / (1 << 20) as f64),
        "",
    );
    report
}

/// The project's dependency indexes (only when its manifests name dependencies): each found
/// package indexed and readable, nothing missing, every manifest readable.
fn check_dependencies(report: &mut Report, root: &Path, config: &Config) {
    use crate::index::deps::{self, cache};
    let found = deps::discover(root, config.index.dependencies);
    if found == deps::Discovery::default() {
        return;
    }
    let status = cache::status(&found.found);
    let not_indexed: Vec<String> = status
        .iter()
        .filter(|s| s.outcome == cache::Outcome::NotIndexed)
        .map(|s| format!("{}@{}", s.name, s.version))
        .collect();
    let mut problems: Vec<String> = found
        .problems
        .iter()
        .map(|p| format!("{} {}: {}", p.ecosystem.as_str(), p.path, p.reason))
        .collect();
    problems.extend(
        found
            .missing
            .iter()
            .map(|m| format!("{} {} missing ({})", m.ecosystem.as_str(), m.name, m.fetch)),
    );
    let indexed = status.len() - not_indexed.len();
    let message = format!(
        "{indexed} of {} dependencies indexed in {}{}{}",
        status.len(),
        cache::deps_dir().display(),
        if not_indexed.is_empty() {
            String::new()
        } else {
            format!("; not indexed: {}", not_indexed.join(", "))
        },
        if problems.is_empty() {
            String::new()
        } else {
            format!("; {}", problems.join("; "))
        }
    );
    let clean = not_indexed.is_empty() && problems.is_empty();
    let hint = if clean {
        ""
    } else {
        "run knowcode deps (after fetching what is missing)"
    };
    let status = if clean { Status::Pass } else { Status::Warn };
    report.push("dependencies", status, message, hint);
}

/// Configuration, ONNX Runtime and model files.
fn runtime_checks(root: &Path, config: &Config) -> Report {
    let mut report = Report {
        checks: Vec::new(),
        sufficiency_threshold: config.config.sufficiency_threshold,
    };
    match Config::load(root) {
        Ok(loaded) => report.push(
            "config",
            Status::Pass,
            format!(
                "aimodels.yaml valid (or defaults); sufficiency_threshold {}",
                loaded.config.sufficiency_threshold
            ),
            "",
        ),
        Err(e) => report.push("config", Status::Fail, e.message, e.hint),
    }
    match embed::init_onnxruntime() {
        Ok(_) => report.push(
            "onnxruntime",
            Status::Pass,
            format!("loaded {}", crate::config::onnxruntime_library().display()),
            "",
        ),
        Err(e) => report.push("onnxruntime", Status::Fail, e.message, e.hint),
    }
    match embed::model_problem(config) {
        None => report.push(
            "model",
            Status::Pass,
            format!(
                "{} in {}",
                config.embedding.model_id,
                config.model_dir().display()
            ),
            "",
        ),
        Some(problem) => report.push(
            "model",
            Status::Fail,
            problem,
            "run `knowcode setup` (offline: `knowcode setup --from DIR` with the wheels it names)",
        ),
    }
    report
}

/// Points at `knowcode eval`, which measures retrieval on the repository's own history.
fn eval_hint(root: &Path) -> String {
    match git2::Repository::discover(root) {
        Ok(_) => "git history found: `knowcode eval` measures hit rates and tokens saved on it"
            .to_string(),
        Err(_) => "no git repository here: `knowcode eval` needs one to mine its tasks".to_string(),
    }
}

async fn check_generation(
    report: &mut Report,
    cache: &GenerationCache,
    config: &Config,
    manifest: &crate::store::Manifest,
) {
    let compatible = manifest.embedding.as_ref().map_or(Ok(()), |index| {
        crate::embed::check_compatible(index, config)
    });
    match compatible {
        Ok(()) => report.push(
            "model_match",
            Status::Pass,
            "index and configured model agree",
            "",
        ),
        Err(e) => report.push(
            "model_match",
            Status::Fail,
            e.message,
            "rebuild the index or configure that model",
        ),
    }
    if manifest.builder_version == crate::BUILDER_VERSION
        && manifest.schema_version == SCHEMA_VERSION
    {
        report.push(
            "builder",
            Status::Pass,
            format!("built by knowcode {}", manifest.builder_version),
            "",
        );
    } else {
        report.push(
            "builder",
            Status::Warn,
            format!(
                "built by knowcode {} (schema {})",
                manifest.builder_version, manifest.schema_version
            ),
            "rebuild with this version",
        );
    }
    match cache.current().await {
        Ok(generation) => {
            let counts_match = generation.entities.len() == manifest.counts.entities
                && generation.edges.len() == manifest.counts.edges
                && generation.chunks.len() == manifest.counts.chunks;
            if counts_match {
                report.push(
                    "tables",
                    Status::Pass,
                    format!(
                        "{} entities, {} edges, {} chunks",
                        manifest.counts.entities, manifest.counts.edges, manifest.counts.chunks
                    ),
                    "",
                );
            } else {
                report.push(
                    "tables",
                    Status::Fail,
                    "table row counts differ from the manifest",
                    "rebuild the index",
                );
            }
            let freshness = crate::load::freshness::check(&generation);
            let status = if freshness.is_stale {
                Status::Warn
            } else {
                Status::Pass
            };
            report.push(
                "freshness",
                status,
                format!("reasons: {:?}", freshness.reasons),
                if freshness.is_stale {
                    "run knowcode build"
                } else {
                    ""
                },
            );
        }
        Err(e) => report.push("tables", Status::Fail, e.message, e.hint),
    }
    let fallen_back: Vec<String> = manifest
        .issues
        .iter()
        .filter(|i| i.read_as_text)
        .map(|i| i.path.clone())
        .collect();
    let lossy = manifest
        .issues
        .iter()
        .filter(|i| i.kind == IssueKind::InvalidUtf8)
        .count();
    let skipped = manifest.skipped.len();
    if fallen_back.is_empty() && lossy == 0 && skipped == 0 {
        report.push(
            "languages",
            Status::Pass,
            "every indexed file was read by its grammar or as its text format",
            "",
        );
    } else {
        let mut parts = Vec::new();
        if !fallen_back.is_empty() {
            parts.push(format!(
                "{} read as text after a failed parse ({})",
                fallen_back.len(),
                fallen_back
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if lossy > 0 {
            parts.push(format!("{lossy} with invalid UTF-8 replaced"));
        }
        if skipped > 0 {
            parts.push(format!("{skipped} skipped (binary, too large, minified …)"));
        }
        report.push(
            "languages",
            Status::Warn,
            parts.join("; "),
            "`knowcode inspect stats` names them; skipped files are invisible to retrieval",
        );
    }
}

/// `doctor --mcp`: a real handshake with `knowcode mcp` on this store — initialize, list the
/// tools, run one query (a typed error such as `missing_knowledge_store` still proves the
/// protocol works; an untyped failure does not).
pub async fn check_mcp(report: &mut Report, root: &Path) {
    let started = std::time::Instant::now();
    let outcome = match std::env::current_exe() {
        Ok(binary) => {
            let mut command = tokio::process::Command::new(binary);
            command.arg("mcp").arg("--store").arg(root);
            timed_handshake(command, true).await
        }
        Err(e) => Err(e.into()),
    };
    match outcome {
        Ok(summary) => report.push(
            "mcp",
            Status::Pass,
            format!("{summary} in {} ms", started.elapsed().as_millis()),
            "",
        ),
        Err(e) => report.push(
            "mcp",
            Status::Fail,
            format!("MCP handshake failed: {e:#}"),
            "run `knowcode mcp --store .` by hand and read its stderr",
        ),
    }
}

/// `doctor --mcp`, per agent: every knowcode entry in the project's and the user's agent
/// configs (`install::found_entries`) is started as the agent would start it — its command
/// must exist, answer `initialize` and list exactly the three tools.
pub async fn check_agent_entries(report: &mut Report, root: &Path) {
    let project = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let entries = crate::ops::install::found_entries(&project);
    if entries.is_empty() {
        report.push(
            "mcp_clients",
            Status::Warn,
            "no agent config here or in your home folder has a knowcode entry",
            "run `knowcode install` (or `knowcode install --agent NAME`)",
        );
    }
    for entry in entries {
        let place = format!("{} ({})", entry.agent, entry.file.display());
        let outcome = match resolve_command(&entry.command) {
            Some(binary) => {
                let mut command = tokio::process::Command::new(binary);
                command.args(&entry.args).current_dir(&project);
                timed_handshake(command, false).await
            }
            None => Err(anyhow::anyhow!("command {} not found", entry.command)),
        };
        match outcome {
            Ok(summary) => report.push(
                "mcp_client",
                Status::Pass,
                format!("{place}: {summary}"),
                "",
            ),
            Err(e) => report.push(
                "mcp_client",
                Status::Fail,
                format!("{place}: {e:#}"),
                "run `knowcode install` again to rewrite the entry for this binary",
            ),
        }
    }
}

/// An absolute command that exists, or a bare name found on PATH.
fn resolve_command(command: &str) -> Option<std::path::PathBuf> {
    let path = Path::new(command);
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|dir| dir.join(command))
        .find(|candidate| candidate.is_file())
}

async fn timed_handshake(command: tokio::process::Command, query: bool) -> anyhow::Result<String> {
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        mcp_handshake(command, query),
    )
    .await
    .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within 60 s")))
}

/// Starts the server, initializes, checks the three tools and, with `query`, runs one query.
async fn mcp_handshake(command: tokio::process::Command, query: bool) -> anyhow::Result<String> {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let client = ().serve(transport).await?;
    let tools = client.list_all_tools().await?;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    anyhow::ensure!(
        names
            == [
                crate::serve::contract::INSPECT,
                crate::serve::contract::LIFECYCLE,
                crate::serve::contract::RETRIEVE
            ],
        "unexpected tools {names:?}"
    );
    if !query {
        client.cancel().await?;
        return Ok(format!("starts, initialize, {} tools", names.len()));
    }
    let arguments = json!({"action": "query", "query": "main entry point"});
    let result = client
        .call_tool(
            CallToolRequestParams::new(crate::serve::contract::RETRIEVE)
                .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        )
        .await?;
    let result = serde_json::to_value(&result)?;
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let payload: Value = serde_json::from_str(text)?;
    let query = if result["isError"] == true {
        let code = payload["code"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("query failed without a typed error: {text}"))?;
        format!("typed error {code}")
    } else {
        anyhow::ensure!(
            payload.get("sufficiency_score").is_some(),
            "query payload lacks sufficiency_score"
        );
        format!("{} bytes", text.len())
    };
    client.cancel().await?;
    Ok(format!(
        "initialize, {} tools, one query ({query})",
        names.len()
    ))
}
