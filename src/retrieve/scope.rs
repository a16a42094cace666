//! Retrieval beyond the project (`scope`): the indexes of its dependencies, found by
//! `index::deps` from the working tree's manifests and built once per machine by
//! `index::deps::cache`, and its workspace's sibling repositories, each read by a [`Retriever`]
//! of its own that shares the project's model and question vector. `search` looks a
//! dependency's definition up by its qualified name (`retrieve::qualified`) or, when no
//! package is named, by the project's search rules in every package; `semantic_search` ranks
//! several indexes as one list (each index ranks on its own, its hits scaled by its closeness
//! to the text); `query` asks the packages a question names, or the package of that ranking's
//! first hit, and with `all` keeps the project's answer unless another source's is more
//! sufficient. Rows carry `package` (`name@version`) or `repo` and paths relative to their
//! root, never a machine path. This module never builds an index and never ranks inside a
//! generation.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::payload::{EntityRow, QueryPayload};
use super::profile::Verbosity;
use super::{QueryRequest, Retriever, SemanticHit};
use crate::error::KnowcodeError;
use crate::index::deps::{self, Dependency, Ecosystem};

/// How long a found set of dependency indexes is trusted before the manifests are read again
/// (a `knowcode deps` run meanwhile is picked up).
const REDISCOVER_AFTER: Duration = Duration::from_secs(30);
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
    /// The package's folder as this project's discovery found it.
    sources: std::path::PathBuf,
    /// Whether its current generation has vectors (read off its manifest: a lexical package
    /// is never loaded for a ranking by similarity).
    embedded: bool,
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

    /// What to say when a pattern names a package no index is for.
    fn not_indexed(&self, package: &str) -> String {
        let indexed: Vec<&str> = self.packages.iter().map(|p| p.package.as_str()).collect();
        match indexed.is_empty() {
            true => format!("no dependency named `{package}` is indexed; {NO_DEPENDENCIES}"),
            false => format!(
                "no dependency named `{package}` is indexed (indexed: {}); add it to the project's manifest and run `knowcode deps`",
                indexed.join(", ")
            ),
        }
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

/// The package a dependencies-only pattern names when no indexed package has that name: the
/// first segment of a qualified pattern written in lower case (`itoa::Buffer::format`,
/// `requests.get`), lower-cased. A capitalised first segment is a type (`Session.send`).
fn unindexed_package(
    pattern: &str,
    named: &[(&DependencyIndex, Vec<&str>)],
    with_project: bool,
) -> Option<String> {
    let parts = segments(pattern);
    let first = parts.first()?;
    let lower_case = first.chars().next().is_some_and(|c| c.is_lowercase());
    (!with_project && named.is_empty() && parts.len() >= 2 && lower_case)
        .then(|| first.to_lowercase())
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

/// A `search` row with where it comes from.
pub type PackageRow = Sourced<EntityRow>;
/// A `query` answer with where it comes from.
pub type PackageAnswer = Sourced<QueryPayload>;

/// One sibling repository's freshness (`inspect freshness` with `workspace.roots`).
#[derive(Debug, Clone, Serialize)]
pub struct RootFreshness {
    pub repo: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<crate::load::freshness::Freshness>,
    /// Why there is no freshness: the root has no index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `search` over dependencies (`scope=dependencies|all`).
#[derive(Debug, Clone, Serialize)]
pub struct ScopedSearchPayload {
    pub results: Vec<PackageRow>,
    pub total: usize,
    /// The project's freshness.
    pub freshness: crate::load::freshness::Freshness,
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

    /// The freshness of each sibling repository of the workspace (empty without
    /// `workspace.roots`), each against its own working tree.
    pub async fn workspace_freshness(&self) -> Result<Vec<RootFreshness>, KnowcodeError> {
        if self.config.workspace.roots.is_empty() {
            return Ok(Vec::new());
        }
        let indexes = self.dependency_indexes().await?;
        let mut roots = Vec::new();
        for repo in &indexes.repos {
            let generation = repo.retriever.generation().await?;
            roots.push(RootFreshness {
                repo: repo.repo.clone(),
                freshness: Some(crate::load::freshness::check(&generation)),
                hint: None,
            });
        }
        roots.extend(indexes.repos_missing.iter().map(|repo| RootFreshness {
            repo: repo.clone(),
            freshness: None,
            hint: Some(format!("no index: run knowcode index in {repo}")),
        }));
        Ok(roots)
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
                let (_, manifest) = crate::store::Store::at(&dir).current_manifest().ok()?;
                let package = dependency.label();
                let kept = previous.packages.iter().find(|p| p.package == package);
                Some(DependencyIndex {
                    names: import_names(&dependency),
                    sources: dependency.root,
                    embedded: manifest.kind == crate::store::GenerationKind::Full,
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
        let named = indexes.named_in_pattern(pattern);
        // Searched by the project's rules, each with its place on equal matches: the project
        // and its siblings (0) before any package; a named package is looked up instead.
        let mut searched: Vec<(usize, Source)> = Vec::new();
        if with_project {
            searched.push((0, Source::Project(self)));
            searched.extend(indexes.repos.iter().map(|repo| (0, Source::Repo(repo))));
        }
        if named.is_empty() {
            let packages = indexes.packages.iter().map(Source::Package);
            searched.extend((1..).zip(packages));
        }
        // (match rank, place, row)
        let mut rows: Vec<(u8, usize, PackageRow)> = Vec::new();
        let mut total = 0;
        let mut freshness = None;
        for (place, source) in &searched {
            let found = source
                .retriever()
                .search_ranked(pattern, limit, verbosity)
                .await?;
            total += found.total;
            if let Source::Project(_) = source {
                freshness = Some(found.freshness);
            }
            rows.extend(
                found
                    .rows
                    .into_iter()
                    .map(|(rank, row)| (rank, *place, source.wrap(row))),
            );
        }
        let freshness = match freshness {
            Some(freshness) => freshness,
            None => crate::load::freshness::check(&*self.generation().await?),
        };
        let standard = verbosity != Verbosity::Minimal;
        for (package, rest) in &named {
            let generation = package.retriever.generation().await?;
            let found = super::qualified::lookup(&generation, &package.sources, rest);
            total += found.len();
            let source = Source::Package(package);
            rows.extend(
                found
                    .into_iter()
                    .take(limit)
                    .map(|e| (0, 0, source.wrap(super::search::search_row(e, standard)))),
            );
        }
        rows.sort_by_key(|(rank, order, _)| (*rank, *order));
        let mut hint = indexes.hint();
        if let Some(package) = unindexed_package(pattern, &named, with_project) {
            // `itoa::Buffer::format` where no indexed package is itoa: rows from other
            // packages that merely share the last segment are not an answer.
            rows.retain(|(_, _, row)| row.item.id.to_lowercase().contains(&package));
            if rows.is_empty() {
                total = 0;
                hint = Some(indexes.not_indexed(&package));
            }
        }
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
            hint,
        })
    }

    /// `query` with a scope other than `project`. Packages the question names are each asked
    /// and the most sufficient answer is kept; a question naming none is answered from the
    /// package of the first hit of one ranking over every package ([`Self::merged_semantic_hits`]).
    /// With `with_project` (`all`), the project answers unless a sibling repository or a named
    /// package answers more sufficiently.
    pub async fn query_scoped(
        &self,
        request: &QueryRequest,
        with_project: bool,
    ) -> Result<PackageAnswer, KnowcodeError> {
        let indexes = self.dependency_indexes().await?;
        let named = indexes.named_in_question(&request.query);
        let packages: Vec<&DependencyIndex> = match (with_project, named.is_empty()) {
            (true, true) => Vec::new(),
            (_, false) => named,
            (false, true) => self
                .package_for_question(&indexes, request)
                .await?
                .into_iter()
                .collect(),
        };
        // Siblings and packages are asked on tasks of their own while the project answers
        // here: the answer waits for the slowest source, not for the sum.
        let mut others: Vec<Source> = Vec::new();
        if with_project {
            others.extend(indexes.repos.iter().map(Source::Repo));
        }
        others.extend(packages.into_iter().map(Source::Package));
        let asked: Vec<_> = others
            .iter()
            .filter_map(|source| {
                let (retriever, request) = (source.shared()?, request.clone());
                Some((
                    source,
                    tokio::spawn(async move { retriever.query(&request).await }),
                ))
            })
            .collect();
        let mut answers = Vec::new();
        if with_project {
            answers.push(Source::Project(self).wrap(self.query(request).await?));
        }
        // A package or sibling that cannot answer (an unreadable store) is said in `errors`,
        // never the end of the answer.
        let mut failed = Vec::new();
        for (source, answer) in asked {
            match answer.await {
                Ok(Ok(answer)) => answers.push(source.wrap(answer)),
                Ok(Err(e)) => failed.push(format!("{}: {}", source.label(), e.message)),
                Err(e) => failed.push(format!("{}: stopped: {e}", source.label())),
            }
        }
        // The first answer (the project's, with `all`) wins ties.
        let best = answers.into_iter().reduce(|a, b| {
            if b.item.sufficiency_score > a.item.sufficiency_score {
                b
            } else {
                a
            }
        });
        match best {
            Some(mut answer) => {
                answer.item.errors.extend(failed);
                Ok(answer)
            }
            None if !failed.is_empty() => {
                let freshness = crate::load::freshness::check(&*self.generation().await?);
                Ok(Source::Project(self).wrap(QueryPayload::nothing(freshness, failed.join("; "))))
            }
            None => {
                let why = indexes.hint().unwrap_or_else(|| {
                    "no dependency's definitions match the question's words: name the package (e.g. `tokio spawn`)".to_string()
                });
                let freshness = crate::load::freshness::check(&*self.generation().await?);
                Ok(Source::Project(self).wrap(QueryPayload::nothing(freshness, why)))
            }
        }
    }

    /// The package to answer a question that names none: the package of the first hit of one
    /// ranking over the packages with vectors, else (none has vectors, or none matched) the
    /// package with the most definitions named by the question's words.
    async fn package_for_question<'a>(
        &self,
        indexes: &'a DependencyIndexes,
        request: &QueryRequest,
    ) -> Result<Option<&'a DependencyIndex>, KnowcodeError> {
        let sources: Vec<Source> = indexes.packages.iter().map(Source::Package).collect();
        let merged = self
            .merged_semantic_hits(&sources, &request.query, 1, false)
            .await;
        let first = merged.hits.first().and_then(|hit| {
            indexes
                .packages
                .iter()
                .find(|p| hit.package.as_deref() == Some(p.package.as_str()))
        });
        if first.is_some() {
            return Ok(first);
        }
        let words: Vec<&str> = request
            .query
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > 2)
            .collect();
        let mut best: Option<(usize, &DependencyIndex)> = None;
        for package in &indexes.packages {
            let generation = package.retriever.generation().await?;
            let named = words
                .iter()
                .filter(|w| generation.entities_named(w).next().is_some())
                .count();
            if named > best.map_or(0, |(n, _)| n) {
                best = Some((named, package));
            }
        }
        Ok(best.map(|(_, p)| p))
    }
}

/// Where a ranked list or an answer comes from: the project, a sibling repository or a
/// package (everything else about it is read off the index it points at).
#[derive(Clone, Copy)]
enum Source<'a> {
    Project(&'a Retriever),
    Repo(&'a RepoIndex),
    Package(&'a DependencyIndex),
}

impl<'a> Source<'a> {
    fn retriever(&self) -> &'a Retriever {
        match *self {
            Source::Project(retriever) => retriever,
            Source::Repo(repo) => &repo.retriever,
            Source::Package(package) => &package.retriever,
        }
    }

    /// Known to have no vectors (a lexical package), so not loaded to rank by similarity.
    fn lexical(&self) -> bool {
        matches!(self, Source::Package(package) if !package.embedded)
    }

    /// The source's closeness to the question and its own ranking of it; none without
    /// vectors.
    async fn ranked_with_closeness(
        &self,
        plan: &super::plan::QueryPlan,
        query: &str,
        limit: usize,
        with_text: bool,
    ) -> Result<Option<(f32, Vec<SemanticHit>)>, KnowcodeError> {
        let generation = self.retriever().generation().await?;
        let vector = self
            .retriever()
            .query_vector(&generation, plan.question.embedding_text())
            .await?;
        let Some(vector) = vector else {
            return Ok(None);
        };
        let closeness = package_closeness(&generation, &vector).await;
        let (hits, _) = self
            .retriever()
            .semantic_hits_in(&generation, query, limit, with_text)
            .await?;
        Ok(Some((closeness, hits)))
    }

    /// How errors name the source: `name@version`, the sibling's folder, or `project`.
    fn label(&self) -> &'a str {
        match *self {
            Source::Project(_) => "project",
            Source::Repo(repo) => &repo.repo,
            Source::Package(package) => &package.package,
        }
    }

    /// The retriever of a sibling or a package, to move onto a task (none for the project).
    fn shared(&self) -> Option<Arc<Retriever>> {
        match *self {
            Source::Project(_) => None,
            Source::Repo(repo) => Some(Arc::clone(&repo.retriever)),
            Source::Package(package) => Some(Arc::clone(&package.retriever)),
        }
    }

    fn wrap<T>(&self, item: T) -> Sourced<T> {
        let (package, repo) = match *self {
            Source::Project(_) => (None, None),
            Source::Repo(repo) => (None, Some(repo.repo.clone())),
            Source::Package(package) => (Some(package.package.clone()), None),
        };
        Sourced {
            item,
            package,
            repo,
        }
    }
}

/// A `semantic_search` hit with where it comes from.
pub type SourcedHit = Sourced<SemanticHit>;

/// One ranking over every index searched, and why some were not.
#[derive(Debug, Clone, Serialize)]
pub struct ScopedHits {
    pub results: Vec<SourcedHit>,
    /// Indexes ranked together (dependencies with vectors, and with `all` the project and its
    /// siblings).
    pub packages_searched: usize,
    /// Why some or all dependencies could not be searched, when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `semantic_search` beyond the project (`scope=dependencies|all`).
#[derive(Debug, Clone, Serialize)]
pub struct ScopedSemanticPayload {
    #[serde(flatten)]
    pub found: ScopedHits,
    /// The project's freshness.
    pub freshness: crate::load::freshness::Freshness,
}

/// What one ranking over several indexes found.
#[derive(Default)]
struct Merged {
    hits: Vec<SourcedHit>,
    /// Indexes ranked.
    searched: usize,
    /// Indexes without vectors, not ranked.
    lexical: usize,
    /// Indexes that could not be read, each `source: why`.
    failed: Vec<String>,
}

/// How many hits each source contributes to a merged ranking, at least.
const MERGED_PER_SOURCE: usize = 10;

/// How sharply a merged ranking prefers the index closest to the question: a hit's score is
/// scaled by `exp(CLOSENESS_SHARPNESS × (closeness − closest))`. On the docstring corpora as
/// dependencies (scripts/eval-deps-scope), 4 ranked best: 2 mixed in too much of farther
/// packages, 8 and more approach answering from the closest package alone.
const CLOSENESS_SHARPNESS: f64 = 4.0;

fn closeness_weight(closeness: f32, closest: f32) -> f64 {
    (CLOSENESS_SHARPNESS * f64::from(closeness - closest)).exp()
}

impl Retriever {
    /// The sources a scoped ranking covers: with `with_project` the project and its siblings,
    /// then the packages `question` names (every package when it names none).
    fn sources<'a>(
        &'a self,
        indexes: &'a DependencyIndexes,
        question: &str,
        with_project: bool,
    ) -> Vec<Source<'a>> {
        let mut sources = Vec::new();
        if with_project {
            sources.push(Source::Project(self));
            sources.extend(indexes.repos.iter().map(Source::Repo));
        }
        let named = indexes.named_in_question(question);
        let packages = match named.is_empty() {
            true => indexes.packages.iter().collect(),
            false => named,
        };
        sources.extend(packages.into_iter().map(Source::Package));
        sources
    }

    /// One ranking over several indexes. Each ranks the question on its own (hybrid fusion is
    /// rank-based, so its scores do not compare across indexes); a hit's score is then scaled
    /// by its index's closeness to the question ([`package_closeness`], raw cosine
    /// similarities, which do compare) relative to the closest index's. Indexes without
    /// vectors are skipped and counted; one that cannot be read is skipped and named.
    async fn merged_semantic_hits(
        &self,
        sources: &[Source<'_>],
        query: &str,
        limit: usize,
        with_text: bool,
    ) -> Merged {
        let plan = super::plan::QueryPlan::for_lookup(
            query,
            super::profile::Action::SemanticSearch,
            self.config.config.hybrid_alpha,
        );
        let mut out = Merged::default();
        let mut ranked = Vec::new();
        for (order, source) in sources.iter().enumerate() {
            if source.lexical() {
                out.lexical += 1;
                continue;
            }
            let per_source = limit.max(MERGED_PER_SOURCE);
            match source
                .ranked_with_closeness(&plan, query, per_source, with_text)
                .await
            {
                Ok(Some((closeness, hits))) => ranked.push((order, closeness, hits)),
                Ok(None) => out.lexical += 1,
                Err(e) => out
                    .failed
                    .push(format!("{}: {}", source.label(), e.message)),
            }
        }
        let closest = ranked
            .iter()
            .map(|(_, c, _)| *c)
            .fold(f32::NEG_INFINITY, f32::max);
        out.searched = ranked.len();
        let mut merged: Vec<(f64, usize, SourcedHit)> = ranked
            .into_iter()
            .flat_map(|(order, closeness, hits)| {
                let weight = closeness_weight(closeness, closest);
                let source = &sources[order];
                hits.into_iter()
                    .map(move |hit| (hit.score * weight, order, source.wrap(hit)))
            })
            .collect();
        merged.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.item.rank.cmp(&b.2.item.rank))
        });
        out.hits = merged
            .into_iter()
            .take(limit)
            .enumerate()
            .map(|(i, (score, _, mut hit))| {
                hit.item.rank = i + 1;
                hit.item.score = super::answer::round4(score);
                hit
            })
            .collect();
        out
    }

    /// One ranking of `query` over the dependencies (with `with_project`, the project and its
    /// siblings too), for the payload and the CLI's batch form.
    pub async fn semantic_hits_scoped(
        &self,
        query: &str,
        limit: usize,
        with_project: bool,
        with_text: bool,
    ) -> Result<ScopedHits, KnowcodeError> {
        super::require_text(query)?;
        let indexes = self.dependency_indexes().await?;
        let sources = self.sources(&indexes, query, with_project);
        let merged = self
            .merged_semantic_hits(&sources, query, limit, with_text)
            .await;
        let lexical = merged.lexical;
        let notes: Vec<String> = indexes
            .hint()
            .into_iter()
            .chain((lexical > 0).then(|| {
                format!("{lexical} index(es) have no vectors and were not searched: run `knowcode deps` (without --no-embed) to add them")
            }))
            .chain(merged.failed.iter().map(|f| format!("not searched: {f}")))
            .collect();
        Ok(ScopedHits {
            results: merged.hits,
            packages_searched: merged.searched,
            hint: (!notes.is_empty()).then(|| notes.join("; ")),
        })
    }

    /// `semantic_search` with a scope other than `project`.
    pub async fn semantic_search_scoped(
        &self,
        query: &str,
        limit: usize,
        with_project: bool,
    ) -> Result<ScopedSemanticPayload, KnowcodeError> {
        let found = self
            .semantic_hits_scoped(query, limit, with_project, true)
            .await?;
        Ok(ScopedSemanticPayload {
            found,
            freshness: crate::load::freshness::check(&*self.generation().await?),
        })
    }
}

/// How close a package's index is to a question's vector: the mean cosine similarity of its
/// [`CLOSEST_DEFINITIONS`] nearest chunks plus that of its nearest signature views (code and
/// names: on the docstring corpora as dependencies, 88.6 % of questions chose their package,
/// against 83.6 % with signature views alone and 84.3 % with chunks alone).
async fn package_closeness(
    generation: &crate::load::generation::LoadedGeneration,
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
