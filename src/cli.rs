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
use knowcode::retrieve::profile::{TaskType, Verbosity};
use knowcode::retrieve::{Direction, QueryRequest, Retriever};

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
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The repository to serve (must exist); default: $CLAUDE_PROJECT_DIR, else the current folder.
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Also list the predecessor's five flat tools (deprecated).
    #[arg(long)]
    pub legacy_tools: bool,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    #[arg(long, default_value = ".")]
    pub store: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The folder holding the index (`.knowcode/`).
    #[arg(long, default_value = ".")]
    pub store: PathBuf,
    /// Print exactly the payload the MCP tool returns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct BudgetArgs {
    /// explain, debug, extend, review, locate, general or auto.
    #[arg(long, default_value = "auto")]
    pub task_type: String,
    #[arg(long, default_value_t = knowcode::retrieve::DEFAULT_MAX_TOKENS)]
    pub max_tokens: usize,
    #[arg(long, default_value_t = knowcode::retrieve::DEFAULT_LIMIT_ENTITIES)]
    pub limit_entities: usize,
    #[arg(long)]
    pub expand_deps: bool,
    /// minimal, standard, verbose or diagnostic.
    #[arg(long, default_value = "minimal")]
    pub verbosity: String,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// The question (omit with --batch).
    pub text: Option<String>,
    /// A JSONL file of {"id","query"} lines; prints one line per query:
    /// {"id", "payload", "entities": [{"id","file","line_start","line_end"}]}.
    #[arg(long)]
    pub batch: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    pub name: String,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    #[arg(long, default_value = "minimal")]
    pub verbosity: String,
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
    /// callers or callees.
    #[arg(long, default_value = "callers")]
    pub direction: String,
    #[arg(long, default_value_t = 1)]
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
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
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
    /// Print the summary as one JSON object on stdout.
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
        Command::Build(args) => run_index(args, true).await,
        Command::Mcp(args) => {
            let root = knowcode::serve::service::resolve_root(args.store.as_deref())?;
            let service = knowcode::serve::service::Service::new(root)?;
            knowcode::serve::mcp::serve_stdio(service, args.legacy_tools).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor(args) => {
            let config = Config::load(&args.store)?;
            let report = knowcode::doctor::run(&args.store, &config).await;
            if args.json {
                println!("{}", report.to_json());
            } else {
                for check in &report.checks {
                    let mark = match check.status {
                        knowcode::doctor::Status::Pass => "pass",
                        knowcode::doctor::Status::Warn => "WARN",
                        knowcode::doctor::Status::Fail => "FAIL",
                    };
                    println!("{mark}  {:<12} {}", check.name, check.message);
                    if !check.hint.is_empty() && check.status != knowcode::doctor::Status::Pass {
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
        Command::Query(args) if args.batch.is_some() => run_query_batch(args).await,
        Command::Query(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let mut request = QueryRequest::new(args.text.clone().unwrap_or_default());
                apply_budget(&mut request, &args.budget)?;
                retriever.query(&request).await
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Context(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let mut request = QueryRequest::new(String::new());
                apply_budget(&mut request, &args.budget)?;
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
            let result = async {
                let verbosity = parse_verbosity(&args.verbosity)?;
                retriever.search(&args.name, args.limit, verbosity).await
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::Trace(args) => {
            let retriever = retriever(&args.store)?;
            let result = async {
                let direction = match args.direction.as_str() {
                    "callers" => Direction::Callers,
                    "callees" => Direction::Callees,
                    other => {
                        return Err(KnowcodeError::invalid_argument(
                            "direction",
                            format!("`{other}` is not callers or callees"),
                        ));
                    }
                };
                retriever.trace(&args.entity, direction, args.depth).await
            }
            .await;
            Ok(print_payload(result, args.store.json))
        }
        Command::SemanticSearch(args) => run_semantic(args).await,
    }
}

fn retriever(store: &StoreArgs) -> anyhow::Result<Retriever> {
    let config = Config::load(&store.store)?;
    Ok(Retriever::new(store.store.clone(), config))
}

fn parse_verbosity(value: &str) -> Result<Verbosity, KnowcodeError> {
    Verbosity::parse(value).ok_or_else(|| {
        KnowcodeError::invalid_argument(
            "verbosity",
            "must be minimal, standard, verbose or diagnostic",
        )
    })
}

fn apply_budget(request: &mut QueryRequest, budget: &BudgetArgs) -> Result<(), KnowcodeError> {
    request.task_type = match budget.task_type.as_str() {
        "auto" => None,
        other => Some(TaskType::parse(other).ok_or_else(|| {
            KnowcodeError::invalid_argument(
                "task_type",
                "must be auto, explain, debug, extend, review, locate or general",
            )
        })?),
    };
    request.max_tokens = budget.max_tokens;
    request.limit_entities = budget.limit_entities;
    request.expand_deps = budget.expand_deps;
    request.verbosity = parse_verbosity(&budget.verbosity)?;
    Ok(())
}

/// Prints a payload (compact JSON, or readable text) and turns errors into exit code 1.
fn print_payload(result: Result<serde_json::Value, KnowcodeError>, json: bool) -> ExitCode {
    match result {
        Ok(payload) => {
            if json {
                println!("{}", serde_json::to_string(&payload).unwrap_or_default());
            } else {
                print_readable(&payload);
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
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
    }
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
        apply_budget(&mut request, &args.budget).map_err(|e| anyhow::anyhow!(e.message))?;
        match retriever.answer(&request).await {
            Ok((payload, entities)) => {
                let spans: Vec<serde_json::Value> = entities
                    .iter()
                    .map(|e| serde_json::json!({"id": e.id, "file": e.path, "line_start": e.span.start_line, "line_end": e.span.end_line}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"id": item.id, "payload": payload, "entities": spans})
                )?;
            }
            Err(err) => {
                eprintln!(
                    "error [{}]: {}\nhint: {}",
                    err.code.as_str(),
                    err.message,
                    err.hint
                );
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `semantic-search TEXT`, or the batch form the evaluation uses (model loaded once).
async fn run_semantic(args: SemanticArgs) -> anyhow::Result<ExitCode> {
    let retriever = retriever(&args.store)?;
    let Some(batch) = &args.batch else {
        let text = args.text.clone().unwrap_or_default();
        return Ok(print_payload(
            retriever.semantic_search(&text, args.limit).await,
            args.store.json,
        ));
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for item in read_batch(batch)? {
        let hits = match retriever
            .semantic_hits(&item.query, args.limit, false)
            .await
        {
            Ok((hits, _)) => hits,
            Err(err) => {
                eprintln!(
                    "error [{}]: {}\nhint: {}",
                    err.code.as_str(),
                    err.message,
                    err.hint
                );
                return Ok(ExitCode::FAILURE);
            }
        };
        use std::io::Write;
        writeln!(out, "{}", serde_json::json!({"id": item.id, "hits": hits}))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_index(args: IndexArgs, card: bool) -> anyhow::Result<ExitCode> {
    let root = args.path.clone();
    if !root.is_dir() {
        anyhow::bail!("{} is not a directory", root.display());
    }
    let store_dir = args.store.clone().unwrap_or_else(|| root.clone());
    std::fs::create_dir_all(&store_dir)?;
    let config = Config::load(&root)?;
    let options = IndexOptions {
        root,
        store_dir,
        ignore_globs: args.ignore,
        embed: !args.no_embed,
        config,
    };
    let progress = BarProgress::new();
    match index::run(&options, &progress).await {
        Ok(summary) => {
            if args.json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                println!("{}", summary.line());
                if card {
                    let store = knowcode::store::Store::at(&options.store_dir);
                    if let Ok(report) =
                        knowcode::quality::read(&store.generation_dir(&summary.generation_id))
                    {
                        println!("{}", knowcode::quality::card(&report));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            progress.finish();
            let err = err.to_knowcode();
            if args.json {
                println!("{}", serde_json::to_string(&err.to_json())?);
            }
            eprintln!(
                "error [{}]: {}\nhint: {}",
                err.code.as_str(),
                err.message,
                err.hint
            );
            Ok(ExitCode::FAILURE)
        }
    }
}
