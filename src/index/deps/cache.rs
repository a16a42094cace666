//! The machine's dependency indexes: one store per ecosystem, name and version under
//! `$KNOWCODE_CACHE/deps/<ecosystem>/<name>@<version>/`, built with the ordinary pipeline from
//! the package's folder and then reused by every project that locks the same version — a
//! package version never changes, so a store that exists is never rebuilt, except once to add
//! vectors to a lexical one when they are asked for. A package whose source is larger than
//! [`MAX_EMBEDDED_BYTES`] is indexed on the lexical plane only, and says so. Failures are per package (typed reason in the report) and never reach the project's
//! own index. This module builds; reading the stores is `retrieve::scope`'s job.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Dependency, Ecosystem};
use crate::config::Config;
use crate::store::{GenerationKind, Store};
use crate::walk::{self, WalkOptions};

/// Source bytes above which a dependency is indexed without vectors (the model embeds about
/// 4,000 tokens a second: a 1 MiB package is about a minute of work).
pub const MAX_EMBEDDED_BYTES: u64 = 1024 * 1024;

/// What happened to one dependency's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its store already held a generation (built for this or another project).
    Reused,
    /// Built now.
    Built,
    /// Could not be built; the reason says why.
    Failed,
    /// Indexed (`inspect stats`, `knowcode deps --list`).
    Indexed,
    /// Not indexed yet (`inspect stats`, `knowcode deps --list`).
    NotIndexed,
}

impl Outcome {
    /// The outcome's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Reused => "reused",
            Outcome::Built => "built",
            Outcome::Failed => "failed",
            Outcome::Indexed => "indexed",
            Outcome::NotIndexed => "not_indexed",
        }
    }
}

/// One dependency's index, as `inspect stats` and `knowcode deps` list it.
#[derive(Debug, Clone, Serialize)]
pub struct Indexed {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    pub outcome: Outcome,
    /// `full` or `lexical`, when a generation exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub entities: usize,
    /// Bytes of source indexed.
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The folder holding every dependency store.
pub fn deps_dir() -> PathBuf {
    crate::config::cache_dir().join("deps")
}

/// The store of one package version.
pub fn store_dir(ecosystem: Ecosystem, name: &str, version: &str) -> PathBuf {
    let safe = |s: &str| s.replace(['/', '\\'], "+");
    deps_dir()
        .join(ecosystem.as_str())
        .join(format!("{}@{}", safe(name), safe(version)))
}

/// The walk options that limit `root` to the dependency's own files.
fn walk_globs(dependency: &Dependency) -> Vec<String> {
    if dependency.only.is_empty() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(&dependency.root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|name| !dependency.only.contains(name))
        .map(|name| format!("/{name}"))
        .collect()
}

/// Source bytes of the files the dependency's index would read.
fn source_bytes(
    dependency: &Dependency,
    globs: &[String],
    config: &Config,
) -> Result<u64, super::Unusable> {
    let options = WalkOptions {
        max_file_bytes: config.index.max_file_bytes,
        ignore_globs: globs.to_vec(),
        exclude_dirs: Vec::new(),
    };
    let files = walk::stat_files(
        &dependency.root,
        &options,
        &crate::parse::languages::is_supported,
    )
    .map_err(|e| super::Unusable::Read {
        file: dependency.label(),
        message: e.to_string(),
    })?;
    Ok(files.values().map(|s| s.size).sum())
}

/// Every dependency's index, built when its store holds none yet (`embed`: with vectors,
/// unless the package is larger than [`MAX_EMBEDDED_BYTES`]).
pub async fn ensure(dependencies: &[Dependency], config: &Config, embed: bool) -> Vec<Indexed> {
    let mut out = Vec::with_capacity(dependencies.len());
    for dependency in dependencies {
        out.push(ensure_one(dependency, config, embed).await);
    }
    out
}

/// Each dependency's index as it is, nothing built.
pub fn status(dependencies: &[Dependency]) -> Vec<Indexed> {
    dependencies
        .iter()
        .map(|d| match existing(d) {
            Some(indexed) => Indexed {
                outcome: Outcome::Indexed,
                ..indexed
            },
            None => Indexed {
                outcome: Outcome::NotIndexed,
                ..blank(d)
            },
        })
        .collect()
}

fn blank(dependency: &Dependency) -> Indexed {
    Indexed {
        ecosystem: dependency.ecosystem,
        name: dependency.name.clone(),
        version: dependency.version.clone(),
        outcome: Outcome::Reused,
        kind: None,
        entities: 0,
        bytes: 0,
        reason: None,
    }
}

/// The dependency's index when its store holds one.
fn existing(dependency: &Dependency) -> Option<Indexed> {
    let dir = store_dir(dependency.ecosystem, &dependency.name, &dependency.version);
    let (kind, entities, bytes) = describe(&dir)?;
    Some(Indexed {
        kind: Some(kind),
        entities,
        bytes,
        reason: (kind == "lexical" && bytes > MAX_EMBEDDED_BYTES)
            .then(|| lexical_only_reason(bytes)),
        ..blank(dependency)
    })
}

async fn ensure_one(dependency: &Dependency, config: &Config, embed: bool) -> Indexed {
    if let Some(existing) = existing(dependency) {
        let complete =
            existing.kind == Some("full") || !embed || existing.bytes > MAX_EMBEDDED_BYTES;
        if complete {
            return existing;
        }
    }
    let dir = store_dir(dependency.ecosystem, &dependency.name, &dependency.version);
    let mut indexed = blank(dependency);
    let globs = walk_globs(dependency);
    let bytes = match source_bytes(dependency, &globs, config) {
        Ok(bytes) => bytes,
        Err(unusable) => {
            return Indexed {
                outcome: Outcome::Failed,
                reason: Some(unusable.to_string()),
                ..indexed
            };
        }
    };
    let too_large = bytes > MAX_EMBEDDED_BYTES;
    let options = crate::index::IndexOptions {
        root: dependency.root.clone(),
        store_dir: dir.clone(),
        ignore_globs: globs,
        embed: embed && !too_large,
        temporal: false,
        config: config.clone(),
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Indexed {
            outcome: Outcome::Failed,
            reason: Some(format!("cannot create {}: {e}", dir.display())),
            ..indexed
        };
    }
    match crate::index::run(&options, &crate::index::NoProgress).await {
        Ok(summary) => {
            indexed.outcome = Outcome::Built;
            indexed.kind = Some(summary.kind.as_str());
            indexed.entities = summary.entities;
            indexed.bytes = bytes;
            if too_large && embed {
                indexed.reason = Some(lexical_only_reason(bytes));
            }
            indexed
        }
        Err(e) => Indexed {
            outcome: Outcome::Failed,
            reason: Some(e.to_string()),
            ..indexed
        },
    }
}

fn lexical_only_reason(bytes: u64) -> String {
    format!("lexical plane only: {bytes} bytes of source, above {MAX_EMBEDDED_BYTES}")
}

/// `(kind, entities, bytes)` of the store's current generation, if it has one.
pub fn describe(dir: &Path) -> Option<(&'static str, usize, u64)> {
    let (_, manifest) = Store::at(dir).current_manifest().ok()?;
    let bytes = manifest.files.values().map(|f| f.size).sum();
    let kind = match manifest.kind {
        GenerationKind::Full => "full",
        GenerationKind::Lexical => "lexical",
    };
    Some((kind, manifest.counts.entities, bytes))
}
