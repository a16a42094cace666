//! Configuration: `aimodels.yaml` (found at the indexed root, or named by `KNOWCODE_CONFIG`)
//! merged over built-in defaults, plus the cache folder layout. Unknown keys and bad values are
//! errors that name the key. This module reads files and the environment; it never writes.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{ErrorCode, KnowcodeError};

/// The name of the configuration file looked up at the root.
pub const CONFIG_FILE: &str = "aimodels.yaml";

/// Everything configurable, with defaults.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub config: RetrievalConfig,
    pub embedding: EmbeddingConfig,
    pub index: IndexConfig,
    pub chat: ChatConfig,
    pub workspace: WorkspaceConfig,
}

/// Sibling repositories one server answers over (`scope=all`), each with its own store.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceConfig {
    /// Folders of the sibling repositories (relative ones against the project's folder), each
    /// indexed on its own (`knowcode index <root>`).
    pub roots: Vec<PathBuf>,
}

/// The OpenAI-compatible chat endpoint `knowcode ask` falls back to when the retrieved
/// context is not sufficient. Unset `endpoint` = never send anything anywhere.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ChatConfig {
    /// Base URL, e.g. `http://127.0.0.1:8080/v1` (`/chat/completions` is appended).
    pub endpoint: Option<String>,
    pub model: String,
    /// Name of the environment variable holding the API key (the key never goes in a file).
    pub api_key_env: Option<String>,
    pub timeout_secs: u64,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            model: "gpt-4o-mini".into(),
            api_key_env: None,
            timeout_secs: 60,
        }
    }
}

/// Retrieval knobs.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RetrievalConfig {
    /// Score at or above which an agent may answer from the returned context alone.
    pub sufficiency_threshold: f64,
    /// Weight of the lexical (full-text) leg in rank fusion; the vector leg gets `1 - alpha`.
    pub hybrid_alpha: f64,
}

/// The embedding model.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingConfig {
    /// Recorded in the manifest; a generation built with another model is refused.
    pub model_id: String,
    /// Folder with `model.onnx` and the tokenizer files; default: the cache folder.
    pub model_dir: Option<PathBuf>,
    pub dimension: usize,
    /// Tokens per chunk the model sees (longer texts are truncated).
    pub max_length: usize,
    pub batch_size: usize,
    /// ONNX Runtime intra-op threads; 0 = all cores.
    pub threads: usize,
}

/// `index.overlay_max_files`'s default (measured in docs/benchmarks.md, "Overlays").
pub const DEFAULT_OVERLAY_MAX_FILES: usize = 200;

/// Indexing knobs.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// Files larger than this are skipped (reason `too_large`).
    pub max_file_bytes: u64,
    /// Bodies estimated above this many tokens are split at statement boundaries.
    pub max_chunk_tokens: usize,
    /// Generations kept after a publish (current included).
    pub keep_generations: usize,
    /// Where readers started in this repository without `--store` find the index: a shared
    /// store's `s3://bucket/prefix`, or a folder (relative to this file's folder). `index`
    /// never publishes to it without `--store`.
    pub store: Option<String>,
    /// A reader of an index built elsewhere overlays at most this many files of its working
    /// tree before answering (files it has not overlaid before); past it, answers come from
    /// the index alone at once and a server builds the overlay in the background.
    pub overlay_max_files: usize,
    /// Which of the project's dependencies are indexed beside it (`direct`, `all`, `none`).
    pub dependencies: DependencySelection,
}

/// `index.dependencies`: which dependencies are indexed (from sources already on disk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DependencySelection {
    /// The packages the project's own manifests name.
    #[default]
    Direct,
    /// Every package of the lockfile or environment.
    All,
    /// None.
    None,
}

/// `index.store` as written (a shared store's URI or a folder), and the folder a relative
/// folder is resolved against: the configuration file's.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSetting {
    pub value: String,
    pub base: PathBuf,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            sufficiency_threshold: 0.8,
            hybrid_alpha: 0.5,
        }
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        Self {
            model_id: "all-MiniLM-L6-v2".into(),
            model_dir: None,
            dimension: 384,
            max_length: 128,
            batch_size: 32,
            threads: 0,
        }
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            max_file_bytes: 1024 * 1024,
            max_chunk_tokens: 400,
            keep_generations: 2,
            store: None,
            overlay_max_files: DEFAULT_OVERLAY_MAX_FILES,
            dependencies: DependencySelection::Direct,
        }
    }
}

impl Config {
    /// Loads `KNOWCODE_CONFIG` if set, else `<root>/aimodels.yaml` if present, else defaults.
    pub fn load(root: &Path) -> Result<Config, KnowcodeError> {
        let path = Self::file_for(root);
        if !path.is_file() {
            return Ok(Config::default());
        }
        Self::from_file(&path)
    }

    /// The configuration file that applies to `root`: `KNOWCODE_CONFIG`, else
    /// `<root>/aimodels.yaml` (which may not exist).
    fn file_for(root: &Path) -> PathBuf {
        match std::env::var_os("KNOWCODE_CONFIG") {
            Some(p) => PathBuf::from(p),
            None => root.join(CONFIG_FILE),
        }
    }

    /// `index.store` as the configuration for `root` writes it, if set. A missing or invalid
    /// file names none (the commands that load it report an invalid file themselves).
    pub fn store_setting(root: &Path) -> Option<StoreSetting> {
        let value = Self::load(root).ok()?.index.store?;
        let file = Self::file_for(root);
        Some(StoreSetting {
            value,
            base: file.parent().unwrap_or(root).to_path_buf(),
        })
    }

    /// Reads and validates `aimodels.yaml` at `path`; an `invalid_config` error names the file and the key.
    pub fn from_file(path: &Path) -> Result<Config, KnowcodeError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            KnowcodeError::new(ErrorCode::InvalidConfig, format!("{}: {e}", path.display()))
        })?;
        Self::from_yaml(&text).map_err(|e| {
            KnowcodeError::new(
                ErrorCode::InvalidConfig,
                format!("{}: {}", path.display(), e.message),
            )
        })
    }

    /// Parses and validates YAML text; an `invalid_config` error names the offending key.
    pub fn from_yaml(text: &str) -> Result<Config, KnowcodeError> {
        let config: Config = if text.trim().is_empty() {
            Config::default()
        } else {
            serde_yaml_ng::from_str(text)
                .map_err(|e| KnowcodeError::new(ErrorCode::InvalidConfig, e.to_string()))?
        };
        config.validate()?;
        Ok(config)
    }

    /// The first rule the values break, naming the key.
    fn validate(&self) -> Result<(), KnowcodeError> {
        let invalid = |why: String| Err(KnowcodeError::new(ErrorCode::InvalidConfig, why));
        let unit = |key: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                invalid(format!("`{key}` must be within [0, 1], got {v}"))
            }
        };
        let positive = |key: &str, v: usize| {
            if v > 0 {
                Ok(())
            } else {
                invalid(format!("`{key}` must be greater than 0"))
            }
        };
        unit(
            "config.sufficiency_threshold",
            self.config.sufficiency_threshold,
        )?;
        unit("config.hybrid_alpha", self.config.hybrid_alpha)?;
        positive("embedding.dimension", self.embedding.dimension)?;
        positive("embedding.max_length", self.embedding.max_length)?;
        positive("embedding.batch_size", self.embedding.batch_size)?;
        positive("index.max_chunk_tokens", self.index.max_chunk_tokens)?;
        if self.index.keep_generations < 2 {
            return invalid("`index.keep_generations` must be at least 2".into());
        }
        if self
            .index
            .store
            .as_ref()
            .is_some_and(|s| s.trim().is_empty())
        {
            return invalid(
                "`index.store` must not be empty (omit it to use the repository's own index)"
                    .into(),
            );
        }
        if self.embedding.model_id.trim().is_empty() {
            return invalid("`embedding.model_id` must not be empty".into());
        }
        Ok(())
    }

    /// The model folder: `embedding.model_dir` → `KNOWCODE_MODEL_DIR` → the cache folder.
    pub fn model_dir(&self) -> PathBuf {
        if let Some(dir) = &self.embedding.model_dir {
            return dir.clone();
        }
        if let Some(dir) = std::env::var_os("KNOWCODE_MODEL_DIR") {
            return PathBuf::from(dir);
        }
        cache_dir().join("models").join(&self.embedding.model_id)
    }
}

/// `KNOWCODE_CACHE`, else `$XDG_CACHE_HOME/knowcode`, else `~/.cache/knowcode`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KNOWCODE_CACHE") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("knowcode");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("knowcode")
}

/// The ONNX Runtime library: `ORT_DYLIB_PATH`, else the one `scripts/setup` put in the cache.
pub fn onnxruntime_library() -> PathBuf {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH") {
        return PathBuf::from(path);
    }
    cache_dir()
        .join("onnxruntime")
        .join("libonnxruntime.so.1.31.1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_yaml_gives_defaults() {
        assert_eq!(Config::from_yaml("").unwrap(), Config::default());
        assert_eq!(Config::default().config.sufficiency_threshold, 0.8);
    }

    #[test]
    fn unknown_key_is_named() {
        let err = Config::from_yaml("config:\n  sufficiency_treshold: 0.7\n").unwrap_err();
        assert!(err.message.contains("sufficiency_treshold"), "{err}");
        assert_eq!(err.code, ErrorCode::InvalidConfig);
    }

    #[test]
    fn out_of_range_value_is_named() {
        let err = Config::from_yaml("config:\n  hybrid_alpha: 1.5\n").unwrap_err();
        assert!(err.message.contains("config.hybrid_alpha"), "{err}");
        let err = Config::from_yaml("embedding:\n  batch_size: 0\n").unwrap_err();
        assert!(err.message.contains("embedding.batch_size"), "{err}");
    }

    #[test]
    fn index_store_is_read_with_the_folder_it_is_relative_to() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join(CONFIG_FILE),
            "index:\n  store: s3://team-index/myrepo\n",
        )
        .unwrap();
        let setting = Config::store_setting(repo.path()).unwrap();
        assert_eq!(setting.value, "s3://team-index/myrepo");
        assert_eq!(setting.base, repo.path());
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(Config::store_setting(bare.path()), None);
        let empty = Config::from_yaml("index:\n  store: ' '\n").unwrap_err();
        assert_eq!(empty.code, ErrorCode::InvalidConfig);
        assert!(empty.message.contains("index.store"), "{}", empty.message);
    }

    #[test]
    fn the_repository_aimodels_yaml_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CONFIG_FILE);
        let config = Config::from_file(&path).unwrap();
        assert_eq!(config.config.sufficiency_threshold, 0.8);
    }
}
