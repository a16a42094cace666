//! Dependencies: which packages a project declares, at which locked version, and where their
//! sources already are on this machine (a Cargo registry's unpacked crates or `vendor/`, the
//! project's virtualenv, `node_modules`, the Go module cache). Discovery reads manifests,
//! lockfiles and package metadata only; it never downloads, never runs a package manager and
//! never fails the project's own index: a lockfile that does not parse or a folder that cannot
//! be read is a [`Problem`] of that ecosystem, a declared package that is not on disk is
//! [`Missing`] with the command that would fetch it. Indexing the packages found is
//! [`cache`]'s job.

pub mod cache;
mod cargo;
mod go;
mod npm;
mod python;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A package ecosystem knowcode finds dependencies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ecosystem {
    Cargo,
    Python,
    Npm,
    Go,
}

impl Ecosystem {
    /// The ecosystem's name in payloads and cache folders.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Cargo => "cargo",
            Ecosystem::Python => "python",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "go",
        }
    }
}

/// Which dependencies are indexed (`index.dependencies`).
pub use crate::config::DependencySelection as Selection;

/// A dependency whose sources are on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependency {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    /// The folder indexed (paths in answers are relative to it).
    #[serde(skip)]
    pub root: PathBuf,
    /// Top-level entries of `root` that belong to the package, when `root` is shared with
    /// other packages (a virtualenv's `site-packages`); empty: all of `root`.
    #[serde(skip)]
    pub only: Vec<String>,
}

impl Dependency {
    /// `name@version`, as rows name it.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// A declared dependency whose sources are not on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub ecosystem: Ecosystem,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub reason: String,
    /// The command that would fetch it (knowcode never does).
    pub fetch: String,
}

/// A manifest, lockfile or folder of one ecosystem that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub ecosystem: Ecosystem,
    /// Project-relative path of what failed.
    pub path: String,
    pub reason: String,
}

/// What discovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Discovery {
    pub found: Vec<Dependency>,
    pub missing: Vec<Missing>,
    pub problems: Vec<Problem>,
}

impl Discovery {
    pub(super) fn merge(&mut self, other: Discovery) {
        self.found.extend(other.found);
        self.missing.extend(other.missing);
        self.problems.extend(other.problems);
    }

    fn problem(&mut self, ecosystem: Ecosystem, root: &Path, path: &Path, reason: String) {
        let path = path.strip_prefix(root).unwrap_or(path);
        self.problems.push(Problem {
            ecosystem,
            path: path.to_string_lossy().into_owned(),
            reason,
        });
    }
}

/// The dependencies of the project at `root`, per `selection`, in every ecosystem whose
/// manifest is there. Found packages are sorted and unique by ecosystem, name and version.
pub fn discover(root: &Path, selection: Selection) -> Discovery {
    let mut discovery = Discovery::default();
    if selection == Selection::None {
        return discovery;
    }
    let all = selection == Selection::All;
    discovery.merge(cargo::discover(root, all));
    discovery.merge(python::discover(root, all));
    discovery.merge(npm::discover(root, all));
    discovery.merge(go::discover(root, all));
    discovery.found.sort_by(|a, b| {
        (a.ecosystem, &a.name, &a.version).cmp(&(b.ecosystem, &b.name, &b.version))
    });
    discovery
        .found
        .dedup_by(|a, b| (a.ecosystem, &a.name, &a.version) == (b.ecosystem, &b.name, &b.version));
    discovery
}

/// What `knowcode deps`, `knowcode index` and `inspect stats` say about the dependencies.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub indexed: Vec<cache::Indexed>,
    pub missing: Vec<Missing>,
    pub problems: Vec<Problem>,
}

impl Report {
    pub fn new(discovery: &Discovery, indexed: Vec<cache::Indexed>) -> Report {
        Report {
            indexed,
            missing: discovery.missing.clone(),
            problems: discovery.problems.clone(),
        }
    }

    /// One line for a build's log.
    pub fn line(&self) -> String {
        let count = |o: cache::Outcome| self.indexed.iter().filter(|i| i.outcome == o).count();
        let mut line = format!(
            "dependencies: {} indexed ({} built now, {} already)",
            count(cache::Outcome::Built)
                + count(cache::Outcome::Reused)
                + count(cache::Outcome::Indexed),
            count(cache::Outcome::Built),
            count(cache::Outcome::Reused) + count(cache::Outcome::Indexed)
        );
        let waiting = count(cache::Outcome::NotIndexed);
        if waiting > 0 {
            line += &format!(", {waiting} not indexed yet (knowcode deps)");
        }
        let failed = count(cache::Outcome::Failed);
        if failed > 0 {
            line += &format!(", {failed} failed");
        }
        if !self.missing.is_empty() {
            let fetch: std::collections::BTreeSet<&str> =
                self.missing.iter().map(|m| m.fetch.as_str()).collect();
            line += &format!(
                ", {} missing (fetch with: {})",
                self.missing.len(),
                fetch.into_iter().collect::<Vec<_>>().join("; ")
            );
        }
        if !self.problems.is_empty() {
            line += &format!(", {} unreadable manifest(s)", self.problems.len());
        }
        line
    }

    /// A readable table: one line per dependency, then what is missing and unreadable.
    pub fn table(&self) -> String {
        let mut out = self.line() + "\n";
        for i in &self.indexed {
            out += &format!(
                "  {:<7} {:<40} {:<11} {:<8} {:>7} entities {:>10} bytes{}\n",
                i.ecosystem.as_str(),
                format!("{}@{}", i.name, i.version),
                i.outcome.as_str(),
                i.kind.unwrap_or("-"),
                i.entities,
                i.bytes,
                i.reason
                    .as_ref()
                    .map(|r| format!("  ({r})"))
                    .unwrap_or_default()
            );
        }
        for m in &self.missing {
            out += &format!(
                "  missing {} {}{}: {} — {}\n",
                m.ecosystem.as_str(),
                m.name,
                m.version
                    .as_ref()
                    .map(|v| format!("@{v}"))
                    .unwrap_or_default(),
                m.reason,
                m.fetch
            );
        }
        for p in &self.problems {
            out += &format!(
                "  unreadable {} {}: {}\n",
                p.ecosystem.as_str(),
                p.path,
                p.reason
            );
        }
        out
    }
}

/// After a project's build: its dependencies found and each one's index ensured on the
/// lexical plane (a fraction of a second per package; `knowcode deps` adds vectors). None when
/// the project declares none.
pub async fn index_for_project(root: &Path, config: &crate::config::Config) -> Option<Report> {
    let found = discover(root, config.index.dependencies);
    if found == Discovery::default() {
        return None;
    }
    let indexed = cache::ensure(&found.found, config, false).await;
    Some(Report::new(&found, indexed))
}

/// Why a manifest, lockfile or package folder could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("cannot read {file}: {message}")]
    Read { file: String, message: String },
    #[error("{file} does not parse: {message}")]
    Parse { file: String, message: String },
    #[error("{0}")]
    Absent(&'static str),
}

/// A file's name, as problems name it (never a machine path).
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file's text.
fn read_text(path: &Path) -> Result<String, Unusable> {
    std::fs::read_to_string(path).map_err(|e| Unusable::Read {
        file: file_name(path),
        message: e.to_string(),
    })
}

/// A TOML file, parsed.
fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, Unusable> {
    toml::from_str(&read_text(path)?).map_err(|e| Unusable::Parse {
        file: file_name(path),
        message: e.message().to_string(),
    })
}

/// A JSON file, parsed.
fn read_json(path: &Path) -> Result<serde_json::Value, Unusable> {
    serde_json::from_str(&read_text(path)?).map_err(|e| Unusable::Parse {
        file: file_name(path),
        message: e.to_string(),
    })
}

/// `$HOME`, for caches under it.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}
