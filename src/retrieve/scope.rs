//! Retrieval beyond the project (`scope`): the indexes of its dependencies, found by
//! `index::deps` from the working tree's manifests and built once per machine by
//! `index::deps::cache`, each read by a [`Retriever`] of its own that shares the project's
//! model and question vector. `search` looks a dependency's definition up by its qualified
//! name (`tokio::spawn`, `requests.Session.send`, `express.Router`) or, when no package is
//! named, by the project's search rules in every package; `query` asks the packages a question
//! names (or those whose definitions its words name) and keeps the best answer; `all` answers
//! from the project unless the question names a dependency that answers it better. Rows carry
//! `package` (`name@version`) and paths relative to the package, never a machine path. This
//! module never builds an index and never ranks inside a generation.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::payload::{EntityRow, QueryPayload};
use super::profile::Verbosity;
use super::{QueryRequest, Retriever};
use crate::error::KnowcodeError;
use crate::index::deps::{self, Dependency, Ecosystem};
use crate::parse::Entity;

/// How long a found set of dependency indexes is trusted before the manifests are read again
/// (a `knowcode deps` run meanwhile is picked up).
const REDISCOVER_AFTER: Duration = Duration::from_secs(30);
/// Packages a `query` without a named package is asked in, at most.
const QUERIED_PACKAGES: usize = 3;
/// A package's closeness to a question uses its this many nearest chunks and definitions (1,
/// 3 and 10 measured in docs/benchmarks.md; 3 was the steadiest).
const CLOSEST_DEFINITIONS: usize = 3;

/// The lazily found dependency indexes of a retriever.
pub type DependencySlot = Mutex<Option<(Instant, Arc<DependencyIndexes>)>>;

/// One indexed dependency.
pub struct DependencyIndex {
    /// `name@version`.
    pub package: String,
    /// How code and questions name the package (`serde_json`, `requests`, `cobra`).
    names: Vec<String>,
    pub retriever: Arc<Retriever>,
}

/// One sibling repository of the workspace (`workspace.roots`), read from its own store.
pub struct RepoIndex {
    /// The sibling's folder name, as rows name it.
    pub repo: String,
    pub retriever: Arc<Retriever>,
}

/// The project's dependencies that have an index on this machine, and its workspace's
/// sibling repositories that have one.
#[derive(Default)]
pub struct DependencyIndexes {
    pub packages: Vec<DependencyIndex>,
    pub repos: Vec<RepoIndex>,
    /// Sibling roots configured but not indexed (or not folders), by name.
    pub repos_missing: Vec<String>,
}

impl DependencyIndexes {
    /// What to do when nothing beyond the project can be looked in.
    fn hint(&self) -> Option<String> {
        let mut hints = Vec::new();
        if self.packages.is_empty() {
            hints.push(NO_DEPENDENCIES.to_string());
        }
        if !self.repos_missing.is_empty() {
            hints.push(format!(
                "workspace roots without an index: {} (run knowcode index in each)",
                self.repos_missing.join(", ")
            ));
        }
        (!hints.is_empty()).then(|| hints.join("; "))
    }

    /// The packages named at the start of `pattern` (`tokio::spawn`, `requests.get`), with
    /// the rest of the pattern split into its segments.
    fn named_in_pattern<'a>(
        &'a self,
        pattern: &'a str,
    ) -> Vec<(&'a DependencyIndex, Vec<&'a str>)> {
        let mut out = Vec::new();
        for package in &self.packages {
            for name in &package.names {
                let Some(rest) = pattern.strip_prefix(name.as_str()) else {
                    continue;
                };
                let rest = ["::", ".", "/"]
                    .iter()
                    .find_map(|sep| rest.strip_prefix(sep));
                if let Some(rest) = rest.filter(|r| !r.is_empty()) {
                    out.push((package, segments(rest)));
                    break;
                }
            }
        }
        out
    }

    /// The packages a question names as a word.
    fn named_in_question(&self, question: &str) -> Vec<&DependencyIndex> {
        let words: std::collections::HashSet<&str> = question
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        self.packages
            .iter()
            .filter(|p| {
                p.names
                    .iter()
                    .any(|n| n.len() > 2 && words.contains(n.as_str()))
            })
            .collect()
    }
}

/// A pattern's segments: `sync::mpsc::channel`, `Session.send`, `lib/router`.
fn segments(pattern: &str) -> Vec<&str> {
    pattern
        .split("::")
        .flat_map(|part| part.split(['.', '/']))
        .filter(|s| !s.is_empty())
        .collect()
}

/// How code and questions name a dependency.
fn import_names(dependency: &Dependency) -> Vec<String> {
    let mut names = vec![dependency.name.clone()];
    match dependency.ecosystem {
        Ecosystem::Cargo => names.push(dependency.name.replace('-', "_")),
        Ecosystem::Python => {
            names.extend(
                dependency
                    .only
                    .iter()
                    .map(|t| t.trim_end_matches(".py").to_string()),
            );
            names.push(dependency.name.to_lowercase().replace('-', "_"));
        }
        Ecosystem::Npm => {
            if let Some((_, last)) = dependency.name.rsplit_once('/') {
                names.push(last.to_string());
            }
        }
        Ecosystem::Go => {
            let parts: Vec<&str> = dependency.name.split('/').collect();
            let last = match parts.as_slice() {
                [.., name, major]
                    if major.starts_with('v') && major[1..].parse::<u32>().is_ok() =>
                {
                    name
                }
                [.., name] => name,
                [] => "",
            };
            names.push(last.to_string());
        }
    }
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.dedup();
    names
}

/// A row or an answer and where it comes from: a dependency (`package`, `name@version`), a
/// sibling repository (`repo`), or the project (neither).
#[derive(Debug, Clone, Serialize)]
pub struct Sourced<T> {
    #[serde(flatten)]
    pub item: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

impl<T> Sourced<T> {
    fn project(item: T) -> Self {
        Sourced {
            item,
            package: None,
            repo: None,
        }
    }

    fn of_package(package: &DependencyIndex, item: T) -> Self {
        Sourced {
            package: Some(package.package.clone()),
            ..Sourced::project(item)
        }
    }

    fn of_repo(repo: &RepoIndex, item: T) -> Self {
        Sourced {
            repo: Some(repo.repo.clone()),
            ..Sourced::project(item)
        }
    }
}

/// A `search` row with where it comes from.
pub type PackageRow = Sourced<EntityRow>;
/// A `query` answer with where it comes from.
pub type PackageAnswer = Sourced<QueryPayload>;

/// `search` over dependencies (`scope=dependencies|all`).
#[derive(Debug, Clone, Serialize)]
pub struct ScopedSearchPayload {
    pub results: Vec<PackageRow>,
    pub total: usize,
    /// The project's freshness.
    pub freshness: super::freshness::Freshness,
    /// Dependency indexes looked in.
    pub packages_searched: usize,
    /// Why nothing could be looked in, when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

const NO_DEPENDENCIES: &str = "no dependency index on this machine: run `knowcode deps` in the project (sources must be on disk: cargo fetch, pip install, npm ci, go mod download)";

impl Retriever {
    /// The dependency indexes of the project this retriever answers about, found again at
    /// most every [`REDISCOVER_AFTER`] (the retrievers of packages still there are kept, with
    /// the generations they loaded).
    pub async fn dependency_indexes(&self) -> Result<Arc<DependencyIndexes>, KnowcodeError> {
        let previous = self.dependencies.lock().expect("deps lock").clone();
        if let Some((at, found)) = &previous
            && at.elapsed() < REDISCOVER_AFTER
        {
            return Ok(Arc::clone(found));
        }
        let root = self.generation().await?.root.clone();
        let previous = previous.map(|(_, found)| found).unwrap_or_default();
        let found = Arc::new(self.find_dependency_indexes(&root, &previous));
        *self.dependencies.lock().expect("deps lock") = Some((Instant::now(), Arc::clone(&found)));
        Ok(found)
    }

    /// A retriever over `dir`: the one found last time, when there was one, else a new one.
    fn kept_or_new(
        &self,
        previous: Option<&Arc<Retriever>>,
        dir: std::path::PathBuf,
    ) -> Arc<Retriever> {
        previous.map_or_else(|| Arc::new(self.sibling(dir)), Arc::clone)
    }

    fn find_dependency_indexes(
        &self,
        root: &Path,
        previous: &DependencyIndexes,
    ) -> DependencyIndexes {
        let selection = self.config.index.dependencies;
        let discovery = deps::discover(root, selection);
        let packages = discovery
            .found
            .into_iter()
            .filter_map(|dependency| {
                let dir = deps::cache::store_dir(
                    dependency.ecosystem,
                    &dependency.name,
                    &dependency.version,
                );
                crate::store::Store::at(&dir).current_id()?;
                let package = dependency.label();
                let kept = previous.packages.iter().find(|p| p.package == package);
                Some(DependencyIndex {
                    names: import_names(&dependency),
                    retriever: self.kept_or_new(kept.map(|p| &p.retriever), dir),
                    package,
                })
            })
            .collect();
        let (repos, repos_missing) = self.find_repos(root, previous);
        DependencyIndexes {
            packages,
            repos,
            repos_missing,
        }
    }

    /// The workspace's sibling repositories (relative roots against the project's folder).
    fn find_repos(
        &self,
        root: &Path,
        previous: &DependencyIndexes,
    ) -> (Vec<RepoIndex>, Vec<String>) {
        let mut repos = Vec::new();
        let mut missing = Vec::new();
        for configured in &self.config.workspace.roots {
            let folder = root.join(configured);
            let repo = folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| configured.to_string_lossy().into_owned());
            if crate::store::Store::at(&folder).current_id().is_some() {
                let kept = previous.repos.iter().find(|r| r.repo == repo);
                repos.push(RepoIndex {
                    retriever: self.kept_or_new(kept.map(|r| &r.retriever), folder),
                    repo,
                });
            } else {
                missing.push(repo);
            }
        }
        (repos, missing)
    }

    /// `search` with a scope other than `project`: with `with_project` (`all`), the project's
    /// and its sibling repositories' rows first on equal matches.
    pub async fn search_scoped(
        &self,
        pattern: &str,
        limit: usize,
        verbosity: Verbosity,
        with_project: bool,
    ) -> Result<ScopedSearchPayload, KnowcodeError> {
        let indexes = self.dependency_indexes().await?;
        // (match rank, order, row): the project and its siblings come before any package.
        let mut rows: Vec<(u8, usize, PackageRow)> = Vec::new();
        let mut total = 0;
        let freshness = if with_project {
            let project = self.search_ranked(pattern, limit, verbosity).await?;
            total += project.total;
            rows.extend(
                project
                    .rows
                    .into_iter()
                    .map(|(rank, row)| (rank, 0, Sourced::project(row))),
            );
            for repo in &indexes.repos {
                let found = repo
                    .retriever
                    .search_ranked(pattern, limit, verbosity)
                    .await?;
                total += found.total;
                rows.extend(
                    found
                        .rows
                        .into_iter()
                        .map(|(rank, row)| (rank, 0, Sourced::of_repo(repo, row))),
                );
            }
            project.freshness
        } else {
            super::freshness::check(&*self.generation().await?)
        };
        let named = indexes.named_in_pattern(pattern);
        let standard = verbosity != Verbosity::Minimal;
        for (package, rest) in &named {
            let generation = package.retriever.generation().await?;
            let found = qualified_lookup(&generation.entities, rest);
            total += found.len();
            rows.extend(found.into_iter().take(limit).map(|e| {
                (
                    0,
                    0,
                    Sourced::of_package(package, super::search_row(e, standard)),
                )
            }));
        }
        if named.is_empty() {
            for (order, package) in indexes.packages.iter().enumerate() {
                let found = package
                    .retriever
                    .search_ranked(pattern, limit, verbosity)
                    .await?;
                total += found.total;
                rows.extend(
                    found
                        .rows
                        .into_iter()
                        .map(|(rank, row)| (rank, order + 1, Sourced::of_package(package, row))),
                );
            }
        }
        rows.sort_by_key(|(rank, order, _)| (*rank, *order));
        Ok(ScopedSearchPayload {
            results: rows
                .into_iter()
                .take(limit)
                .map(|(_, _, row)| row)
                .collect(),
            total,
            freshness,
            packages_searched: if named.is_empty() {
                indexes.packages.len()
            } else {
                named.len()
            },
            hint: indexes.hint(),
        })
    }

    /// `query` with a scope other than `project`: the packages the question names, the most
    /// sufficient answer kept, else the answer of the package closest to the question; with
    /// `with_project` (`all`), the project's answer unless a sibling repository or a named
    /// package answers more sufficiently.
    pub async fn query_scoped(
        &self,
        request: &QueryRequest,
        with_project: bool,
    ) -> Result<PackageAnswer, KnowcodeError> {
        let indexes = self.dependency_indexes().await?;
        let named = indexes.named_in_question(&request.query);
        let named_none = named.is_empty();
        let project = match with_project {
            true => Some(self.query(request).await?),
            false => None,
        };
        let packages: Vec<&DependencyIndex> = match (with_project, named.is_empty()) {
            (true, true) => Vec::new(),
            (_, false) => named,
            (false, true) => self.packages_for_question(&indexes, request).await?,
        };
        let mut others = Vec::new();
        if with_project {
            for repo in &indexes.repos {
                others.push(Sourced::of_repo(repo, repo.retriever.query(request).await?));
            }
        }
        for package in packages {
            others.push(Sourced::of_package(
                package,
                package.retriever.query(request).await?,
            ));
        }
        // Packages chosen by closeness answer in that order (the closest one's answer); named
        // packages and siblings are compared by how sufficient their answers are.
        let closest_first = !with_project && named_none;
        let best = match closest_first {
            true => others.into_iter().next(),
            false => others.into_iter().reduce(|a, b| {
                if b.item.sufficiency_score > a.item.sufficiency_score {
                    b
                } else {
                    a
                }
            }),
        };
        let answer = match (project, best) {
            (Some(project), Some(other))
                if other.item.sufficiency_score <= project.sufficiency_score =>
            {
                Sourced::project(project)
            }
            (_, Some(other)) => other,
            (Some(project), None) => Sourced::project(project),
            (None, None) => {
                let why = indexes.hint().unwrap_or_else(|| {
                    "no dependency's definitions match the question's words: name the package (e.g. `tokio spawn`)".to_string()
                });
                let freshness = super::freshness::check(&*self.generation().await?);
                Sourced::project(QueryPayload::nothing(freshness, why))
            }
        };
        Ok(answer)
    }

    /// Up to [`QUERIED_PACKAGES`] packages closest to the question, closest first: by
    /// [`package_closeness`] to the question's vector (computed once, shared), then by how many
    /// of the question's words name a definition of the package (the only measure of a
    /// lexical one).
    async fn packages_for_question<'a>(
        &self,
        indexes: &'a DependencyIndexes,
        request: &QueryRequest,
    ) -> Result<Vec<&'a DependencyIndex>, KnowcodeError> {
        let plan = super::plan::QueryPlan::for_query(request, self.config.config.hybrid_alpha);
        let words: Vec<&str> = request
            .query
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > 2)
            .collect();
        let mut scored = Vec::new();
        for package in &indexes.packages {
            let generation = package.retriever.generation().await?;
            let vector = match generation.has_vectors() {
                true => package
                    .retriever
                    .query_vector(&generation, plan.question.embedding_text())
                    .await
                    .ok()
                    .flatten(),
                false => None,
            };
            let similarity = match vector {
                Some(v) => package_closeness(&generation, &v).await,
                None => 0.0,
            };
            let hits = words
                .iter()
                .filter(|w| generation.entities_named(w).next().is_some())
                .count();
            if similarity > 0.0 || hits > 0 {
                scored.push((similarity, hits, package));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        Ok(scored
            .into_iter()
            .take(QUERIED_PACKAGES)
            .map(|(_, _, p)| p)
            .collect())
    }
}

/// How close a package's index is to a question's vector: the mean cosine similarity of its
/// [`CLOSEST_DEFINITIONS`] nearest chunks plus that of its nearest signature views (code and
/// names: on the docstring corpora as dependencies, 88.6 % of questions chose their package,
/// against 83.6 % with signature views alone and 84.3 % with chunks alone).
async fn package_closeness(
    generation: &super::generation::LoadedGeneration,
    vector: &[f32],
) -> f32 {
    let views = generation
        .signature_views
        .nearest_scored(vector, CLOSEST_DEFINITIONS);
    let views = views.iter().map(|(_, s)| *s).sum::<f32>() / views.len().max(1) as f32;
    let chunks = generation
        .chunk_table
        .nearest_similarities(vector, CLOSEST_DEFINITIONS)
        .await
        .unwrap_or_default();
    let chunks = chunks.iter().sum::<f64>() / chunks.len().max(1) as f64;
    views + chunks as f32
}

/// Definitions of a package named by the segments after its name: the longest tail of the
/// segments that is a definition's qualified name (`Session.send`) or name (`spawn`),
/// public ones first, then those whose file or folder the earlier segments name
/// (`sync::mpsc::channel` → `sync/mpsc`), free functions before methods, then those whose
/// file is named after them, shallower files first.
fn qualified_lookup<'g>(entities: &'g [Entity], segments: &[&str]) -> Vec<&'g Entity> {
    for take in (1..=segments.len().min(3)).rev() {
        let tail = segments[segments.len() - take..].join(".");
        let hints: Vec<&str> = segments[..segments.len() - take].to_vec();
        let dotted = format!(".{tail}");
        let mut found: Vec<&Entity> = entities
            .iter()
            .filter(|e| !e.kind.is_file_level() && !e.kind.is_prose())
            .filter(|e| {
                e.qualified_name == tail
                    || e.qualified_name.ends_with(&dotted)
                    || (take == 1 && e.name == tail)
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        found.sort_by_key(|e| {
            let public = is_public(e);
            let hinted = hints.iter().filter(|h| e.path.contains(*h)).count();
            let stem_named =
                Path::new(&e.path).file_stem().and_then(|s| s.to_str()) == Some(e.name.as_str());
            let method = e.qualified_name.contains('.');
            (
                crate::walk::is_test_path(&e.path),
                !public,
                std::cmp::Reverse(hinted),
                method,
                !stem_named,
                e.path.matches('/').count(),
                e.id.clone(),
            )
        });
        return found;
    }
    Vec::new()
}

/// Whether a definition is part of its package's public surface, as its signature says.
fn is_public(entity: &Entity) -> bool {
    let signature = entity.signature.trim_start();
    if entity.name.starts_with('_') {
        return false;
    }
    if signature.starts_with("pub(") {
        return false;
    }
    let private_rust = entity.path.ends_with(".rs") && !signature.starts_with("pub ");
    let private_go =
        entity.path.ends_with(".go") && entity.name.chars().next().is_some_and(char::is_lowercase);
    !(private_rust || private_go)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_patterns_split_into_segments() {
        assert_eq!(segments("sync::mpsc::channel"), ["sync", "mpsc", "channel"]);
        assert_eq!(segments("Session.send"), ["Session", "send"]);
    }

    #[test]
    fn go_modules_are_named_by_their_last_segment_without_the_major_version() {
        let dependency = |name: &str| Dependency {
            ecosystem: Ecosystem::Go,
            name: name.into(),
            version: "v2.0.0".into(),
            root: Default::default(),
            only: Vec::new(),
        };
        assert!(import_names(&dependency("github.com/spf13/cobra")).contains(&"cobra".to_string()));
        assert!(import_names(&dependency("github.com/go-chi/chi/v5")).contains(&"chi".to_string()));
    }
}
