//! Stage 5, embed: the local embedding model (fastembed over ONNX Runtime loaded at run time,
//! never downloaded). Chunks are embedded in batches that cross file boundaries; a failing
//! batch is retried once and then split so one bad chunk cannot fail a build. This module
//! loads files from the model folder and the ONNX Runtime library; it never touches the network.

use std::path::Path;
use std::sync::OnceLock;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

use crate::config::{Config, onnxruntime_library};
use crate::error::{ErrorCode, KnowcodeError};

/// Files a model folder must hold.
pub const MODEL_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// Test hook: embedding any text containing this value fails, to prove batch isolation
/// (a fault the real model cannot be made to produce on demand).
const FAIL_ENV: &str = "KNOWCODE_TEST_EMBED_FAIL_ON";
/// Test hook: embedding a question containing this value panics, to prove a panic in
/// inference neither kills the server nor poisons later questions.
const PANIC_ENV: &str = "KNOWCODE_TEST_EMBED_PANIC_ON";

/// The process's one ONNX Runtime environment (ort allows a single one; it must stay alive).
static ORT: OnceLock<Result<ort::environment::Environment, KnowcodeError>> = OnceLock::new();

/// Loads the ONNX Runtime shared library once per process and returns its environment.
pub fn init_onnxruntime() -> Result<ort::environment::Environment, KnowcodeError> {
    let unavailable = |message: String| KnowcodeError::new(ErrorCode::ModelUnavailable, message);
    let result = ORT.get_or_init(|| {
        let path = onnxruntime_library();
        if !path.is_file() {
            return Err(unavailable(format!(
                "ONNX Runtime library not found at {}",
                path.display()
            )));
        }
        let builder = ort::init_from(&path)
            .map_err(|e| unavailable(format!("cannot load {}: {e}", path.display())))?;
        builder
            .build()
            .map_err(|e| unavailable(format!("cannot start ONNX Runtime: {e}")))
    });
    result.clone()
}

/// The model a generation's vectors were made with: queries must use the same (recorded in
/// the manifest).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EmbeddingInfo {
    pub model_id: String,
    pub dimension: usize,
    pub max_length: usize,
}

/// What the configured model produces: the identity an index's vectors must share with it.
pub fn configured_info(config: &Config) -> EmbeddingInfo {
    EmbeddingInfo {
        model_id: config.embedding.model_id.clone(),
        dimension: config.embedding.dimension,
        max_length: config.embedding.max_length,
    }
}

/// Whether an index's vectors (built with `index`) can be searched with the configured
/// model: the one rule `doctor` and retrieval share. Model id, dimension and `max_length`
/// must all agree; a different `max_length` embeds the same text differently.
pub fn check_compatible(index: &EmbeddingInfo, config: &Config) -> Result<(), KnowcodeError> {
    let configured = configured_info(config);
    if *index == configured {
        return Ok(());
    }
    Err(KnowcodeError::new(
        ErrorCode::ModelMismatch,
        format!(
            "the index was built with {} ({} dimensions, max_length {}); aimodels.yaml configures {} ({} dimensions, max_length {})",
            index.model_id,
            index.dimension,
            index.max_length,
            configured.model_id,
            configured.dimension,
            configured.max_length
        ),
    ))
}

/// Why the model cannot be used, if it cannot (checked without loading it).
pub fn model_problem(config: &Config) -> Option<String> {
    let dir = config.model_dir();
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "model folder {} lacks {}",
            dir.display(),
            missing.join(", ")
        ));
    }
    let lib = onnxruntime_library();
    (!lib.is_file()).then(|| format!("ONNX Runtime library not found at {}", lib.display()))
}

/// A loaded embedding model.
pub struct Embedder {
    model: TextEmbedding,
    info: EmbeddingInfo,
    batch_size: usize,
    fail_on: Option<String>,
    panic_on: Option<String>,
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>, KnowcodeError> {
    std::fs::read(dir.join(file)).map_err(|e| {
        KnowcodeError::new(
            ErrorCode::ModelUnavailable,
            format!("{}: {e}", dir.join(file).display()),
        )
    })
}

impl Embedder {
    /// Loads the configured model and checks its dimension.
    pub fn load(config: &Config) -> Result<Embedder, KnowcodeError> {
        if let Some(problem) = model_problem(config) {
            return Err(KnowcodeError::new(ErrorCode::ModelUnavailable, problem));
        }
        let environment = init_onnxruntime()?;
        let dir = config.model_dir();
        let tokenizer = TokenizerFiles {
            tokenizer_file: read(&dir, "tokenizer.json")?,
            config_file: read(&dir, "config.json")?,
            special_tokens_map_file: read(&dir, "special_tokens_map.json")?,
            tokenizer_config_file: read(&dir, "tokenizer_config.json")?,
        };
        let model = UserDefinedEmbeddingModel::new(read(&dir, "model.onnx")?, tokenizer)
            .with_pooling(Pooling::Mean);
        let mut options = InitOptionsUserDefined::new()
            .with_environment(environment)
            .with_max_length(config.embedding.max_length);
        if config.embedding.threads > 0 {
            options = options.with_intra_threads(config.embedding.threads);
        }
        let model = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
            KnowcodeError::new(
                ErrorCode::ModelUnavailable,
                format!("cannot load the model: {e}"),
            )
        })?;
        let mut embedder = Embedder {
            model,
            info: configured_info(config),
            batch_size: config.embedding.batch_size,
            fail_on: std::env::var(FAIL_ENV).ok().filter(|v| !v.is_empty()),
            panic_on: std::env::var(PANIC_ENV).ok().filter(|v| !v.is_empty()),
        };
        let probe = embedder.embed_query("dimension probe")?;
        if probe.len() != config.embedding.dimension {
            return Err(KnowcodeError::new(
                ErrorCode::ModelMismatch,
                format!(
                    "model gives {} dimensions, aimodels.yaml says {}",
                    probe.len(),
                    config.embedding.dimension
                ),
            ));
        }
        Ok(embedder)
    }

    /// The identity of the vectors this model produces (model id, dimension, `max_length`).
    pub fn info(&self) -> &EmbeddingInfo {
        &self.info
    }

    /// Embeds one query text.
    pub fn embed_query(&mut self, text: &str) -> Result<Vec<f32>, KnowcodeError> {
        if let Some(marker) = &self.panic_on {
            assert!(!text.contains(marker.as_str()), "injected inference panic");
        }
        let mut out = self.model.embed([text], Some(1)).map_err(|e| {
            KnowcodeError::new(ErrorCode::Internal, format!("embedding failed: {e}"))
        })?;
        out.pop()
            .ok_or_else(|| KnowcodeError::new(ErrorCode::Internal, "embedding returned nothing"))
    }

    fn try_embed(&mut self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        if let Some(marker) = &self.fail_on
            && texts.iter().any(|t| t.contains(marker.as_str()))
        {
            anyhow::bail!("injected embedding failure");
        }
        let vectors = self.model.embed(texts, Some(texts.len()))?;
        anyhow::ensure!(
            vectors.len() == texts.len(),
            "model returned {} vectors for {} texts",
            vectors.len(),
            texts.len()
        );
        Ok(vectors)
    }

    /// Embeds texts in batches; `None` marks a text the model failed on even alone.
    /// `on_batch` is told how many texts each finished batch held.
    pub fn embed_all(
        &mut self,
        texts: &[&str],
        on_batch: &mut dyn FnMut(usize),
    ) -> Vec<Option<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            let result = self.try_embed(batch).or_else(|_| self.try_embed(batch));
            match result {
                Ok(vectors) => out.extend(vectors.into_iter().map(Some)),
                Err(err) => {
                    tracing::warn!(
                        "embedding batch failed twice ({err:#}); isolating its {} chunks",
                        batch.len()
                    );
                    for text in batch {
                        out.push(
                            self.try_embed(std::slice::from_ref(text))
                                .ok()
                                .and_then(|mut v| v.pop()),
                        );
                    }
                }
            }
            on_batch(batch.len());
        }
        out
    }
}
