//! The error catalogue: every failure an agent or a user can see has a stable `code` and a
//! `hint` naming the next action. One table here; the CLI, MCP and REST surfaces render it.
//! This module must not decide *when* an error happens, only what it is called and says.

use std::path::PathBuf;

/// Stable machine-readable error codes (the `code` field of every error payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    MissingKnowledgeStore,
    MissingSemanticIndex,
    EntityNotFound,
    PathOutsideRoot,
    JobAlreadyRunning,
    UnknownJob,
    NoJobs,
    MissingPreflightReport,
    InvalidArgument,
    InvalidConfig,
    ModelUnavailable,
    ModelMismatch,
    StoreLocked,
    StoreCorrupt,
    StoreUnreachable,
    BuildFailed,
    ChatUnavailable,
    MissingHistory,
    Internal,
}

impl ErrorCode {
    /// The snake_case code string agents match on.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingKnowledgeStore => "missing_knowledge_store",
            Self::MissingSemanticIndex => "missing_semantic_index",
            Self::EntityNotFound => "entity_not_found",
            Self::PathOutsideRoot => "path_outside_root",
            Self::JobAlreadyRunning => "job_already_running",
            Self::UnknownJob => "unknown_job",
            Self::NoJobs => "no_jobs",
            Self::MissingPreflightReport => "missing_preflight_report",
            Self::InvalidArgument => "invalid_argument",
            Self::InvalidConfig => "invalid_config",
            Self::ModelUnavailable => "model_unavailable",
            Self::ModelMismatch => "model_mismatch",
            Self::StoreLocked => "store_locked",
            Self::StoreCorrupt => "store_corrupt",
            Self::StoreUnreachable => "store_unreachable",
            Self::BuildFailed => "build_failed",
            Self::ChatUnavailable => "chat_unavailable",
            Self::MissingHistory => "missing_history",
            Self::Internal => "internal",
        }
    }

    /// The default next action for this code.
    pub fn hint(self) -> &'static str {
        match self {
            Self::MissingKnowledgeStore => {
                "no index yet: run knowcode_lifecycle action=build (CLI: knowcode build), then poll knowcode_inspect action=job_status"
            }
            Self::MissingSemanticIndex => {
                "the current generation has no vectors: run a build with the embedding model available (knowcode doctor tells why it is missing)"
            }
            Self::EntityNotFound => "use knowcode_retrieve action=search to find the exact id",
            Self::PathOutsideRoot => "pass a path inside the served repository root",
            Self::JobAlreadyRunning => {
                "poll knowcode_inspect action=job_status and submit again when it finishes"
            }
            Self::UnknownJob => "omit job_id to get the latest job",
            Self::NoJobs => "start one with knowcode_lifecycle action=build",
            Self::MissingPreflightReport => {
                "run knowcode_lifecycle action=build, or knowcode_inspect action=preflight for an ad hoc report"
            }
            Self::InvalidArgument => "fix the named argument and call again",
            Self::InvalidConfig => "fix the named key in aimodels.yaml",
            Self::ModelUnavailable => {
                "run `knowcode setup` (or set KNOWCODE_MODEL_DIR / ORT_DYLIB_PATH); knowcode doctor shows what is missing"
            }
            Self::ModelMismatch => {
                "rebuild the index with the configured model, or configure the model the index was built with"
            }
            Self::StoreLocked => "another build holds the store lock; wait for it to finish",
            Self::StoreCorrupt => {
                "run knowcode doctor; a fresh knowcode build replaces the damaged generation"
            }
            Self::StoreUnreachable => {
                "check AWS_ENDPOINT_URL, AWS_REGION and the credentials in the environment; knowcode doctor --store s3://… names the failing step"
            }
            Self::BuildFailed => {
                "see the named stage in the message; the previous generation stays current"
            }
            Self::ChatUnavailable => {
                "check `chat.endpoint` in aimodels.yaml and that the server answers; without an endpoint `knowcode ask` answers with the retrieved context itself"
            }
            Self::MissingHistory => {
                "rebuild with history: knowcode build --temporal (the repository must be a git checkout)"
            }
            Self::Internal => "report this with the message; retrying may help",
        }
    }
}

/// A failure with a stable code, a human message and a hint.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct KnowcodeError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
}

impl KnowcodeError {
    /// An error with `code`'s default hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: code.hint().to_string(),
        }
    }

    /// Replaces the code's default hint with a more specific next action.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// `invalid_argument` naming the argument and what is wrong with it.
    pub fn invalid_argument(name: &str, why: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InvalidArgument,
            format!("invalid argument `{name}`: {why}"),
        )
    }

    /// `missing_knowledge_store`: nothing is published under `store`.
    pub fn missing_store(store: &std::path::Path) -> Self {
        Self::new(
            ErrorCode::MissingKnowledgeStore,
            format!("no published knowcode index under {}", store.display()),
        )
    }

    /// `path_outside_root`: `path` escapes the served `root`.
    pub fn path_outside_root(path: &str, root: &std::path::Path) -> Self {
        Self::new(
            ErrorCode::PathOutsideRoot,
            format!("path `{path}` is outside the root {}", root.display()),
        )
    }

    /// The `{error, code, hint}` payload every surface returns.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": self.message, "code": self.code.as_str(), "hint": self.hint})
    }
}

/// A failure reading or writing a generation's files and tables. Build stages wrap it in
/// [`BuildError`] (naming the stage); readers turn it into `store_corrupt`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Lance(#[from] lancedb::Error),
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("the system clock is before 1970: {0}")]
    Clock(#[from] std::time::SystemTimeError),
    /// A table, column or value that is not as this version writes it.
    #[error("{0}")]
    Layout(String),
}

/// Why a repository could not be walked at all (single unreadable files are skipped, not
/// errors).
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A bad `--ignore` glob or ignore file.
    #[error("{0}")]
    Ignore(#[from] ignore::Error),
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// Errors of the build pipeline, each naming the stage that failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("build failed in stage `{stage}`: {source}")]
    Stage {
        stage: Stage,
        #[source]
        source: anyhow::Error,
    },
    #[error("the store {0} is locked by another build")]
    Locked(PathBuf),
    /// A failure the catalogue names itself (a temporal build outside a git checkout:
    /// history's `invalid_argument` with its git hint): its code reaches the caller instead of
    /// a generic `build_failed`.
    #[error("{0}")]
    Refused(KnowcodeError),
}

impl BuildError {
    /// Wraps a failure as having happened in `stage` (for `map_err`).
    pub fn at<E: Into<anyhow::Error>>(stage: Stage) -> impl FnOnce(E) -> BuildError {
        move |source| BuildError::Stage {
            stage,
            source: source.into(),
        }
    }

    /// The catalogue entry for this failure.
    pub fn to_knowcode(&self) -> KnowcodeError {
        match self {
            BuildError::Locked(_) => KnowcodeError::new(ErrorCode::StoreLocked, self.to_string()),
            BuildError::Refused(error) => error.clone(),
            BuildError::Stage { .. } => {
                KnowcodeError::new(ErrorCode::BuildFailed, format!("{self:#}"))
            }
        }
    }
}

/// The stages of a build, in order. Named in errors and progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Walk,
    Parse,
    Graph,
    Chunk,
    History,
    Embed,
    Store,
    Publish,
    /// A shared store only: upload, validation there and the pointer's conditional write.
    Share,
}

impl Stage {
    /// Every stage of a build into a folder, in build order (a shared store adds
    /// [`Stage::Share`] after them).
    pub const ALL: [Stage; 8] = [
        Stage::Walk,
        Stage::Parse,
        Stage::Graph,
        Stage::Chunk,
        Stage::History,
        Stage::Embed,
        Stage::Store,
        Stage::Publish,
    ];

    /// The stage's name in errors, progress and timings.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Walk => "walk",
            Stage::Parse => "parse",
            Stage::Graph => "graph",
            Stage::Chunk => "chunk",
            Stage::History => "history",
            Stage::Embed => "embed",
            Stage::Store => "store",
            Stage::Publish => "publish",
            Stage::Share => "share",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
