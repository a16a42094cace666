//! Task mining for `knowcode eval`: a repository's own history as a retrieval test set. Each
//! commit says in words what changed and its diff says where, so a commit becomes a task:
//! query = its message (trailers dropped), gold = the non-test source files it touched and the
//! definitions its hunks touched, both carried forward to the indexed tree. This module reads
//! git data (libgit2) and the index's entity spans; it never writes and never ranks.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::error::KnowcodeError;
use crate::index::history::{Hunk, RepoView, carry_range, git_error, hunks_of, patch_hunks};
use crate::parse::Entity;

/// Words a message needs, once trailers are gone, to be a question worth asking.
pub const MIN_MESSAGE_WORDS: usize = 12;
/// Non-test source files a task's commit may touch.
pub const MAX_GOLD_FILES: usize = 3;
/// Share of a gold file's lines (as the commit left them) that must survive to the indexed
/// tree; below it the file changed too much since for the commit's gold to mean anything.
pub const MIN_SURVIVING_SHARE: f64 = 0.5;
/// Lines of one carried hunk read for gold definitions (a huge new file needs no more).
const MAX_GOLD_LINES_PER_RANGE: u32 = 5_000;

/// `--tasks`'s default: the tasks a report aims for.
pub const DEFAULT_TASKS: usize = 50;
/// `--commits`'s default: the most commits read while looking for them.
pub const DEFAULT_MAX_COMMITS: usize = 5_000;
/// The longest the miner reads history before it reports what it found.
pub const MAX_MINING_TIME: std::time::Duration = std::time::Duration::from_secs(120);

/// What the miner is asked for.
#[derive(Debug, Clone)]
pub struct MineOptions {
    /// Tasks wanted: history is read back from HEAD until this many are found.
    pub tasks: usize,
    /// The most commits read, newest first (merges included in the count).
    pub commits: usize,
    /// Commits older than this (seconds since the epoch) are not read.
    pub since: Option<i64>,
    /// The longest history is read for.
    pub time_limit: std::time::Duration,
}

impl Default for MineOptions {
    fn default() -> Self {
        MineOptions {
            tasks: DEFAULT_TASKS,
            commits: DEFAULT_MAX_COMMITS,
            since: None,
            time_limit: MAX_MINING_TIME,
        }
    }
}

/// Why the miner stopped reading history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// As many tasks as asked were found.
    Enough,
    /// `--commits` commits were read.
    CommitLimit,
    /// The next commit is older than `--since`.
    Since,
    /// [`MAX_MINING_TIME`] passed.
    TimeLimit,
    /// The first commit was read.
    HistoryStart,
}

/// One task mined from one commit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Task {
    /// The commit's id, abbreviated.
    pub commit: String,
    /// The commit message with trailers dropped: the question.
    pub query: String,
    /// Root-relative paths at the indexed tree.
    pub gold_files: Vec<String>,
    /// Ids of the innermost definitions the commit's hunks touched, at the indexed tree.
    pub gold_entities: Vec<String>,
}

/// Why a commit gave no task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A merge commit without a description of its own (`Merge branch 'x'`); a merged pull
    /// request's title and description make a task, and a squash merge is an ordinary commit.
    Merge,
    /// A commit of a merged branch whose merge was asked as a task already.
    InMergedPullRequest,
    /// Fewer than [`MIN_MESSAGE_WORDS`] words once trailers are dropped.
    ShortMessage,
    Revert,
    VersionBump,
    /// The source changes are whitespace and line breaks only.
    FormattingOnly,
    /// Tests, documents or configuration only.
    NoSourceFiles,
    /// More than [`MAX_GOLD_FILES`] non-test source files.
    TooManyFiles,
    /// A touched source file is deleted since or not in the index.
    GoldFileMissing,
    /// A touched file was mostly rewritten since (see [`MIN_SURVIVING_SHARE`]).
    ChangedSince,
}

impl SkipReason {
    /// The reason's name in the report's skip counts.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Merge => "merge",
            SkipReason::InMergedPullRequest => "in_merged_pull_request",
            SkipReason::ShortMessage => "short_message",
            SkipReason::Revert => "revert",
            SkipReason::VersionBump => "version_bump",
            SkipReason::FormattingOnly => "formatting_only",
            SkipReason::NoSourceFiles => "no_source_files",
            SkipReason::TooManyFiles => "too_many_files",
            SkipReason::GoldFileMissing => "gold_file_missing",
            SkipReason::ChangedSince => "changed_since",
        }
    }
}

/// The mined test set.
#[derive(Debug, Clone, Default)]
pub struct Mined {
    pub head: String,
    pub commits_read: usize,
    pub tasks: Vec<Task>,
    pub skipped: BTreeMap<SkipReason, usize>,
    /// Why reading stopped (None before it started).
    pub stopped: Option<Stop>,
}

/// The indexed tree as the miner sees it: which files it holds and their definitions.
pub struct IndexedTree<'g> {
    definitions: HashMap<&'g str, Vec<&'g Entity>>,
}

impl<'g> IndexedTree<'g> {
    /// Groups the index's entities by file; definitions are the entities below file level
    /// outside prose (module and document entities still mark their file as indexed).
    pub fn new(entities: &'g [Entity]) -> Self {
        let mut definitions: HashMap<&str, Vec<&Entity>> = HashMap::new();
        for entity in entities {
            let list = definitions.entry(entity.path.as_str()).or_default();
            if !entity.kind.is_file_level() && !entity.kind.is_prose() {
                list.push(entity);
            }
        }
        IndexedTree { definitions }
    }

    fn has_file(&self, path: &str) -> bool {
        self.definitions.contains_key(path)
    }

    /// The innermost definitions holding any line of `ranges`, sorted by id.
    fn definitions_touched(&self, path: &str, ranges: &[(u32, u32)]) -> Vec<String> {
        let Some(definitions) = self.definitions.get(path) else {
            return Vec::new();
        };
        let mut touched = BTreeSet::new();
        for &(start, end) in ranges {
            let end = end.min(start.saturating_add(MAX_GOLD_LINES_PER_RANGE));
            for line in start..=end {
                let innermost = definitions
                    .iter()
                    .filter(|e| e.span.start_line <= line && line <= e.span.end_line)
                    .min_by_key(|e| e.span.end_line - e.span.start_line);
                if let Some(entity) = innermost {
                    touched.insert(entity.id.clone());
                }
            }
        }
        touched.into_iter().collect()
    }
}

/// Reads the history of the repository holding `root` back from HEAD, newest first, and
/// mines tasks until `options.tasks` are found or a bound of `options` is reached.
pub fn mine(
    root: &std::path::Path,
    options: &MineOptions,
    indexed: &IndexedTree,
) -> Result<Mined, KnowcodeError> {
    let started = std::time::Instant::now();
    let view = RepoView::open(root)?;
    let repo = &view.repo;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git_error)?;
    let head_tree = head.tree().map_err(git_error)?;
    let mut walk = repo.revwalk().map_err(git_error)?;
    walk.push(head.id()).map_err(git_error)?;
    walk.set_sorting(git2::Sort::TIME).map_err(git_error)?;
    let mut mined = Mined {
        head: head.id().to_string(),
        ..Mined::default()
    };
    // Commits of branches whose merge became a task.
    let mut merged_branches: HashSet<git2::Oid> = HashSet::new();
    let mut walk = walk.peekable();
    mined.stopped = Some(loop {
        if mined.tasks.len() >= options.tasks {
            break Stop::Enough;
        }
        if mined.commits_read >= options.commits {
            break Stop::CommitLimit;
        }
        if started.elapsed() >= options.time_limit {
            break Stop::TimeLimit;
        }
        let Some(oid) = walk.next() else {
            break Stop::HistoryStart;
        };
        let oid = oid.map_err(git_error)?;
        let commit = repo.find_commit(oid).map_err(git_error)?;
        if options
            .since
            .is_some_and(|since| commit.time().seconds() < since)
        {
            break Stop::Since;
        }
        mined.commits_read += 1;
        let outcome = if merged_branches.contains(&oid) {
            Err(SkipReason::InMergedPullRequest)
        } else {
            task_of(&view, &commit, &head_tree, indexed)?
        };
        match outcome {
            Ok(task) => {
                if commit.parent_count() > 1 {
                    merged_branches.extend(branch_commits(repo, &commit));
                }
                mined.tasks.push(task);
            }
            Err(reason) => *mined.skipped.entry(reason).or_default() += 1,
        }
    });
    Ok(mined)
}

/// The commits a merge brought in: reachable from its other parents, not from its first.
fn branch_commits(repo: &git2::Repository, merge: &git2::Commit) -> Vec<git2::Oid> {
    let Ok(mut walk) = repo.revwalk() else {
        return Vec::new();
    };
    for parent in merge.parent_ids().skip(1) {
        let _ = walk.push(parent);
    }
    if let Ok(first) = merge.parent_id(0) {
        let _ = walk.hide(first);
    }
    walk.flatten().collect()
}

/// The task one commit gives, or why it gives none. A merge is asked by its own description
/// against its first parent: what the merged pull request changed on the main line.
fn task_of(
    view: &RepoView,
    commit: &git2::Commit,
    head_tree: &git2::Tree,
    indexed: &IndexedTree,
) -> Result<Result<Task, SkipReason>, KnowcodeError> {
    let message = commit.message().unwrap_or("");
    let message = if commit.parent_count() > 1 {
        let description = merge_description(message);
        if description.trim().is_empty() {
            return Ok(Err(SkipReason::Merge));
        }
        description
    } else {
        message.to_string()
    };
    if let Some(reason) = message_skip(&message) {
        return Ok(Err(reason));
    }
    let message = message.as_str();
    let tree = commit.tree().map_err(git_error)?;
    let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let diff = view.diff(parent.as_ref(), Some(&tree))?;
    // Non-test source files the commit wrote, with the line ranges it wrote in them.
    let mut written: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
    let mut formatting_only = true;
    for index in 0..diff.deltas().len() {
        let Some(delta) = diff.get_delta(index) else {
            continue;
        };
        let side = if delta.status() == git2::Delta::Deleted {
            delta.old_file()
        } else {
            delta.new_file()
        };
        let Some(path) = view.side_path(side) else {
            continue;
        };
        if !crate::parse::languages::is_code(&path) || crate::walk::is_test_path(&path) {
            continue;
        }
        if delta.status() == git2::Delta::Deleted {
            return Ok(Err(SkipReason::GoldFileMissing));
        }
        let patch = git2::Patch::from_diff(&diff, index).ok().flatten();
        formatting_only &= patch.as_ref().is_some_and(whitespace_only);
        let hunks = patch.as_ref().map(patch_hunks).unwrap_or_default();
        written.push((path, written_ranges(&hunks)));
    }
    if written.is_empty() {
        return Ok(Err(SkipReason::NoSourceFiles));
    }
    if written.len() > MAX_GOLD_FILES {
        return Ok(Err(SkipReason::TooManyFiles));
    }
    if formatting_only {
        return Ok(Err(SkipReason::FormattingOnly));
    }
    let mut task = Task {
        commit: commit.id().to_string()[..10].to_string(),
        query: clean_message(message),
        gold_files: Vec::new(),
        gold_entities: Vec::new(),
    };
    for (path, ranges) in written {
        let Some((now, hunks)) = carried_to_head(view, &tree, head_tree, &path)? else {
            return Ok(Err(SkipReason::GoldFileMissing));
        };
        if !indexed.has_file(&now) {
            return Ok(Err(SkipReason::GoldFileMissing));
        }
        if surviving_share(view, &tree, &path, &hunks) < MIN_SURVIVING_SHARE {
            return Ok(Err(SkipReason::ChangedSince));
        }
        let carried: Vec<(u32, u32)> = ranges
            .into_iter()
            .flat_map(|(s, e)| carry_range(s, e, &hunks))
            .map(|(s, e)| (s.max(1) as u32, e.max(1) as u32))
            .collect();
        task.gold_entities
            .extend(indexed.definitions_touched(&now, &carried));
        task.gold_files.push(now);
    }
    Ok(Ok(task))
}

/// Lines each hunk wrote, in the commit's line numbers.
fn written_ranges(hunks: &[Hunk]) -> Vec<(i64, i64)> {
    hunks.iter().map(Hunk::written).collect()
}

/// Whether a patch's removed and added lines hold the same characters once whitespace is
/// ignored (re-indentation, re-wrapping, trailing spaces).
fn whitespace_only(patch: &git2::Patch) -> bool {
    let (mut removed, mut added) = (String::new(), String::new());
    for hunk in 0..patch.num_hunks() {
        let lines = patch.num_lines_in_hunk(hunk).unwrap_or(0);
        for line in (0..lines).filter_map(|l| patch.line_in_hunk(hunk, l).ok()) {
            let side = match line.origin() {
                '-' => &mut removed,
                '+' => &mut added,
                _ => continue,
            };
            side.extend(
                String::from_utf8_lossy(line.content())
                    .chars()
                    .filter(|c| !c.is_whitespace()),
            );
        }
    }
    removed == added
}

/// Where a file of a commit's tree is at HEAD (the indexed tree) and the hunks between the
/// two versions; None when it is gone. The common cases are cheap: the same blob (no hunks)
/// or the same path (one blob diff); only a file missing at its path costs a tree diff with
/// rename detection.
fn carried_to_head(
    view: &RepoView,
    tree: &git2::Tree,
    head_tree: &git2::Tree,
    path: &str,
) -> Result<Option<(String, Vec<Hunk>)>, KnowcodeError> {
    let repo_path = view.repo_path(path);
    let Ok(then) = tree.get_path(&repo_path) else {
        return Ok(None);
    };
    if let Ok(now) = head_tree.get_path(&repo_path) {
        if now.id() == then.id() {
            return Ok(Some((path.to_string(), Vec::new())));
        }
        let (old, new) = (blob(view, then.id())?, blob(view, now.id())?);
        let mut options = git2::DiffOptions::new();
        options.context_lines(0);
        let patch = git2::Patch::from_blobs(&old, None, &new, None, Some(&mut options))
            .map_err(git_error)?;
        return Ok(Some((path.to_string(), patch_hunks(&patch))));
    }
    let diff = view.diff(Some(tree), Some(head_tree))?;
    for index in 0..diff.deltas().len() {
        let Some(delta) = diff.get_delta(index) else {
            continue;
        };
        if delta.status() == git2::Delta::Renamed
            && view.side_path(delta.old_file()).as_deref() == Some(path)
            && let Some(new_path) = view.side_path(delta.new_file())
        {
            return Ok(Some((new_path, hunks_of(&diff, index))));
        }
    }
    Ok(None)
}

fn blob(view: &RepoView, id: git2::Oid) -> Result<git2::Blob<'_>, KnowcodeError> {
    view.repo.find_blob(id).map_err(git_error)
}

/// The share of the file's lines at the commit that are unchanged at HEAD.
fn surviving_share(view: &RepoView, tree: &git2::Tree, path: &str, hunks: &[Hunk]) -> f64 {
    if hunks.is_empty() {
        return 1.0;
    }
    let lines = tree
        .get_path(&view.repo_path(path))
        .ok()
        .and_then(|entry| blob(view, entry.id()).ok())
        .map(|blob| bytecount_lines(blob.content()))
        .unwrap_or(0);
    if lines == 0 {
        return 1.0;
    }
    let kept: i64 = carry_range(1, lines, hunks)
        .iter()
        .map(|(s, e)| e - s + 1)
        .sum();
    kept as f64 / lines as f64
}

fn bytecount_lines(content: &[u8]) -> i64 {
    let newlines = content.iter().filter(|&&b| b == b'\n').count() as i64;
    newlines + i64::from(content.last().is_some_and(|&b| b != b'\n'))
}

/// A merge commit's own words: the message without the line a hosting service or git writes
/// (`Merge pull request #12 from a/b`, `Merge branch 'x' into 'main'`, `Merged in x (pull
/// request #12)`) and GitLab's `See merge request g/p!12`: the pull request's title and
/// description, or nothing for a plain merge.
fn merge_description(message: &str) -> String {
    static BOILERPLATE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)^\s*(merge (pull request|branch(es)?|remote-tracking branch|tag|commit)\b.*|merged in \S+.*|merge \S+ into \S+\s*)$",
        )
        .expect("regex")
    });
    static SEE_REQUEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^\s*see merge request \S+\s*$").expect("regex"));
    let mut lines = message.lines().peekable();
    if lines
        .peek()
        .is_some_and(|first| BOILERPLATE.is_match(first))
    {
        lines.next();
    }
    lines
        .filter(|line| !SEE_REQUEST.is_match(line))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Why a message alone rules its commit out, if it does.
fn message_skip(message: &str) -> Option<SkipReason> {
    static REVERT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(?i)^\s*(revert\b|reapply ")"#).expect("regex"));
    static VERSION_BUMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)^\s*(v?\d+(\.\d+)+\S*\s*$|(bump|release|prepare|cut)\b.*\bv?\d+\.\d+|bump(ed)?\s+(the\s+)?version\b|version\s+bump\b)",
        )
        .expect("regex")
    });
    let summary = message.lines().next().unwrap_or("");
    if REVERT.is_match(summary) {
        return Some(SkipReason::Revert);
    }
    if VERSION_BUMP.is_match(summary) {
        return Some(SkipReason::VersionBump);
    }
    let words = clean_message(message)
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    (words < MIN_MESSAGE_WORDS).then_some(SkipReason::ShortMessage)
}

/// The message without trailers: `…-by:` lines anywhere, and a closing paragraph made only of
/// `Token: value` lines (git's trailer block: `Change-Id:`, `Fixes:`, `Refs:`, …).
pub fn clean_message(message: &str) -> String {
    static BY_LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^\s*[a-z][a-z-]*-by\s*:").expect("regex"));
    static TRAILER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*[A-Za-z][A-Za-z0-9-]*\s*:\s*\S").expect("regex"));
    let mut paragraphs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in message.lines() {
        if line.trim().is_empty() {
            if !paragraphs.last().is_some_and(Vec::is_empty) {
                paragraphs.push(Vec::new());
            }
        } else if !BY_LINE.is_match(line) {
            paragraphs.last_mut().expect("one paragraph").push(line);
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    if paragraphs.len() > 1
        && paragraphs
            .last()
            .is_some_and(|p| p.iter().all(|line| TRAILER.is_match(line)))
    {
        paragraphs.pop();
    }
    paragraphs
        .iter()
        .map(|p| p.join("\n"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_are_dropped_and_the_prose_kept() {
        let message = "Fix the parser when a block ends the file\n\n\
                       The tokenizer stopped one byte early.\n\
                       Signed-off-by: A Person <a@example.com>\n\n\
                       Co-authored-by: B <b@example.com>\n\
                       Change-Id: I1234\nRefs: #12\n";
        assert_eq!(
            clean_message(message),
            "Fix the parser when a block ends the file\n\nThe tokenizer stopped one byte early."
        );
        // A lone paragraph of `Key: value` lines is the message itself, not a trailer block.
        assert_eq!(
            clean_message("fix: handle empty input"),
            "fix: handle empty input"
        );
    }

    #[test]
    fn reverts_version_bumps_and_short_messages_are_skipped() {
        let long = " because the cache kept stale entries after a reload of the configuration";
        assert_eq!(
            message_skip(&format!("Revert \"Add caching\"{long}")),
            Some(SkipReason::Revert)
        );
        assert_eq!(
            message_skip(&format!("Bump version to 2.3.1{long}")),
            Some(SkipReason::VersionBump)
        );
        assert_eq!(message_skip("v1.2.0"), Some(SkipReason::VersionBump));
        assert_eq!(message_skip("Fix typo"), Some(SkipReason::ShortMessage));
        assert_eq!(message_skip(&format!("Drop stale entries{long}")), None);
    }

    #[test]
    fn a_merge_is_asked_by_its_pull_request_title_and_description() {
        let github = "Merge pull request #42 from someone/fix-proxy\n\nHonour no_proxy for \
                      hosts given with a port\n\nThe match compared the host with its port.";
        assert_eq!(
            merge_description(github),
            "Honour no_proxy for hosts given with a port\n\nThe match compared the host with its port."
        );
        let gitlab = "Merge branch 'fix-cache' into 'main'\n\nDrop stale cache entries\n\n\
                      See merge request group/project!12";
        assert_eq!(merge_description(gitlab), "Drop stale cache entries");
        assert_eq!(merge_description("Merge branch 'main' into feature"), "");
        assert_eq!(
            merge_description("Merge remote-tracking branch 'origin/main'\n"),
            ""
        );
        // A merge written by hand keeps its words.
        assert_eq!(
            merge_description("Bring the courier rules in"),
            "Bring the courier rules in"
        );
    }

    #[test]
    fn line_counts_include_a_last_line_without_newline() {
        assert_eq!(bytecount_lines(b""), 0);
        assert_eq!(bytecount_lines(b"a\nb\n"), 2);
        assert_eq!(bytecount_lines(b"a\nb"), 2);
    }
}
