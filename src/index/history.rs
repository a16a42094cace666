//! Git history as a build stage: with `build --temporal`, the last [`MAX_COMMITS`]
//! first-parent commits read with libgit2 (`git2`) and, per indexed file, every hunk those
//! commits made, with its line range carried forward through later commits into the
//! coordinates of the indexed version, stored in the generation as `history.json`. Renames are
//! followed: hunks written under a file's former name count for the indexed file. Also the
//! repository view and hunk arithmetic `knowcode eval` mines tasks with. This module reads the
//! repository's git data and never writes to it; `ops::history` answers questions from what it
//! stored.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, KnowcodeError};

pub const HISTORY_FILE: &str = "history.json";
/// First-parent commits read, newest first.
pub const MAX_COMMITS: usize = 500;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Commit {
    pub id: String,
    pub author: String,
    /// Seconds since the epoch (commit time).
    pub time: i64,
    pub summary: String,
}

/// One hunk of one commit in one file: the lines it wrote that survive in the indexed
/// version, as ranges in that version's line numbers (a deletion is a one-line range at the
/// gap it left).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Touch {
    /// Index into [`History::commits`].
    pub commit: usize,
    pub ranges: Vec<(u32, u32)>,
    pub insertions: u32,
    pub deletions: u32,
}

/// The git history a temporal build stores in its generation (`history.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct History {
    pub head: String,
    pub commits: Vec<Commit>,
    pub files: BTreeMap<String, Vec<Touch>>,
}

/// A hunk as git reports it (1-based; a zero-length side names the line before the gap).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hunk {
    old_start: i64,
    old_lines: i64,
    new_start: i64,
    new_lines: i64,
}

impl Hunk {
    /// The lines the hunk wrote, in the new version's numbers (a deletion marks the line
    /// before the gap it left).
    pub(crate) fn written(&self) -> (i64, i64) {
        let first = self.new_start.max(1);
        (first, (self.new_start + self.new_lines - 1).max(first))
    }
}

/// The parts of lines `start..=end` (before a commit) that the commit left untouched, in
/// the line numbers after it: lines it replaced drop out, and insertions split the range.
pub(crate) fn carry_range(start: i64, end: i64, hunks: &[Hunk]) -> Vec<(i64, i64)> {
    let mut pieces = vec![(start, end)];
    for h in hunks {
        let mut next = Vec::with_capacity(pieces.len() + 1);
        for (s, e) in pieces {
            if h.old_lines == 0 {
                if h.old_start >= s && h.old_start < e {
                    next.extend([(s, h.old_start), (h.old_start + 1, e)]);
                } else {
                    next.push((s, e));
                }
                continue;
            }
            let (rs, re) = (h.old_start, h.old_start + h.old_lines - 1);
            if re < s || rs > e {
                next.push((s, e));
                continue;
            }
            if s < rs {
                next.push((s, rs - 1));
            }
            if e > re {
                next.push((re + 1, e));
            }
        }
        pieces = next;
    }
    pieces
        .into_iter()
        .map(|(s, e)| (map_line(s, hunks), map_line(e, hunks)))
        .collect()
}

/// Where `line` of the version before a commit ends up after it.
pub(crate) fn map_line(line: i64, hunks: &[Hunk]) -> i64 {
    let mut delta = 0;
    for h in hunks {
        if h.old_lines == 0 {
            if line > h.old_start {
                delta += h.new_lines;
                continue;
            }
            break;
        }
        if line < h.old_start {
            break;
        }
        if line < h.old_start + h.old_lines {
            return if h.new_lines == 0 {
                h.new_start.max(1)
            } else {
                h.new_start + (line - h.old_start).min(h.new_lines - 1)
            };
        }
        delta += h.new_lines - h.old_lines;
    }
    line + delta
}

pub(crate) fn git_error(e: git2::Error) -> KnowcodeError {
    KnowcodeError::new(ErrorCode::InvalidArgument, format!("git: {}", e.message()))
        .with_hint("`build --temporal` and `eval` need the indexed folder to be inside a git repository with at least one commit")
}

/// A git repository seen from an indexed folder inside it.
pub(crate) struct RepoView {
    pub repo: git2::Repository,
    /// The indexed folder relative to the work tree (`""` at its top).
    pub prefix: String,
}

impl RepoView {
    /// Opens the repository holding `root`.
    pub fn open(root: &Path) -> Result<RepoView, KnowcodeError> {
        let repo = git2::Repository::discover(root).map_err(git_error)?;
        let workdir = repo
            .workdir()
            .and_then(|w| w.canonicalize().ok())
            .ok_or_else(|| git_error(git2::Error::from_str("bare repository")))?;
        let root = root.canonicalize().map_err(|e| {
            KnowcodeError::new(
                ErrorCode::InvalidArgument,
                format!("{}: {e}", root.display()),
            )
        })?;
        let prefix = root
            .strip_prefix(&workdir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(RepoView { repo, prefix })
    }

    /// A repository path relative to the indexed folder (None outside it).
    pub fn to_root_relative(&self, repo_path: &str) -> Option<String> {
        if self.prefix.is_empty() {
            Some(repo_path.to_string())
        } else {
            repo_path
                .strip_prefix(&self.prefix)
                .and_then(|rest| rest.strip_prefix('/'))
                .map(str::to_string)
        }
    }

    /// A root-relative path as a path in the repository's trees.
    pub fn repo_path(&self, root_relative: &str) -> std::path::PathBuf {
        if self.prefix.is_empty() {
            root_relative.into()
        } else {
            Path::new(&self.prefix).join(root_relative)
        }
    }

    /// The root-relative path of one side of a diff delta.
    pub fn side_path(&self, file: git2::DiffFile) -> Option<String> {
        file.path()
            .and_then(|p| self.to_root_relative(&p.to_string_lossy()))
    }

    /// The diff between two trees (`None`: the empty tree), no context lines, limited to the
    /// indexed folder, renames detected.
    pub fn diff(
        &self,
        old: Option<&git2::Tree>,
        new: Option<&git2::Tree>,
    ) -> Result<git2::Diff<'_>, KnowcodeError> {
        let mut options = git2::DiffOptions::new();
        options.context_lines(0);
        if !self.prefix.is_empty() {
            options.pathspec(&self.prefix);
        }
        let mut diff = self
            .repo
            .diff_tree_to_tree(old, new, Some(&mut options))
            .map_err(git_error)?;
        diff.find_similar(Some(git2::DiffFindOptions::new().renames(true)))
            .map_err(git_error)?;
        Ok(diff)
    }
}

/// The hunks of one delta of a diff (empty when git cannot make a patch of it, e.g. binary).
pub(crate) fn hunks_of(diff: &git2::Diff, delta_index: usize) -> Vec<Hunk> {
    match git2::Patch::from_diff(diff, delta_index) {
        Ok(Some(patch)) => patch_hunks(&patch),
        _ => Vec::new(),
    }
}

/// The hunks of a patch.
pub(crate) fn patch_hunks(patch: &git2::Patch) -> Vec<Hunk> {
    (0..patch.num_hunks())
        .filter_map(|h| patch.hunk(h).ok())
        .map(|(hunk, _)| Hunk {
            old_start: hunk.old_start() as i64,
            old_lines: hunk.old_lines() as i64,
            new_start: hunk.new_start() as i64,
            new_lines: hunk.new_lines() as i64,
        })
        .collect()
}

/// Reads the history of `files` (root-relative paths) from the repository holding `root`.
pub fn collect(root: &Path, files: &BTreeSet<String>) -> Result<History, KnowcodeError> {
    let view = RepoView::open(root)?;
    let repo = &view.repo;
    let head = repo
        .head()
        .map_err(git_error)?
        .peel_to_commit()
        .map_err(git_error)?;
    let mut walk = repo.revwalk().map_err(git_error)?;
    walk.push(head.id()).map_err(git_error)?;
    walk.simplify_first_parent().map_err(git_error)?;

    let mut history = History {
        head: head.id().to_string(),
        commits: Vec::new(),
        files: BTreeMap::new(),
    };
    // Per file, the hunks of newer commits (newest first), to carry ranges forward.
    let mut newer: HashMap<String, Vec<Vec<Hunk>>> = HashMap::new();
    // Older names of indexed files, learnt from renames while walking back in time.
    let mut former_names: HashMap<String, String> = HashMap::new();
    for oid in walk.take(MAX_COMMITS) {
        let commit = repo
            .find_commit(oid.map_err(git_error)?)
            .map_err(git_error)?;
        let index = history.commits.len();
        history.commits.push(Commit {
            id: commit.id().to_string(),
            author: commit.author().name().unwrap_or("").to_string(),
            time: commit.time().seconds(),
            summary: commit.summary().unwrap_or("").to_string(),
        });
        let tree = commit.tree().map_err(git_error)?;
        let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
        let diff = view.diff(parent.as_ref(), Some(&tree))?;
        for delta_index in 0..diff.deltas().len() {
            let Some(delta) = diff.get_delta(delta_index) else {
                continue;
            };
            // The indexed file this delta wrote, under its name then.
            let Some(path) = view.side_path(delta.new_file()).and_then(|p| {
                if files.contains(&p) {
                    Some(p)
                } else {
                    former_names.get(&p).cloned()
                }
            }) else {
                continue;
            };
            if delta.status() == git2::Delta::Renamed
                && let Some(old) = view.side_path(delta.old_file())
            {
                former_names.insert(old, path.clone());
            }
            let hunks = hunks_of(&diff, delta_index);
            let later = newer.entry(path.clone()).or_default();
            let touches = history.files.entry(path).or_default();
            for hunk in &hunks {
                let mut ranges = vec![hunk.written()];
                for newer_hunks in later.iter().rev() {
                    ranges = ranges
                        .into_iter()
                        .flat_map(|(s, e)| carry_range(s, e, newer_hunks))
                        .collect();
                }
                touches.push(Touch {
                    commit: index,
                    ranges: ranges
                        .into_iter()
                        .map(|(s, e)| (s.max(1) as u32, e.max(1) as u32))
                        .collect(),
                    insertions: hunk.new_lines as u32,
                    deletions: hunk.old_lines as u32,
                });
            }
            later.push(hunks);
        }
    }
    Ok(history)
}

/// Writes the history into a generation folder.
pub fn write(dir: &Path, history: &History) -> crate::error::StoreResult<()> {
    crate::store::write_synced(&dir.join(HISTORY_FILE), &serde_json::to_vec(history)?)
}

/// The history stored with a generation, or why there is none.
pub fn read(dir: &Path) -> Result<History, KnowcodeError> {
    let text = std::fs::read(dir.join(HISTORY_FILE)).map_err(|_| {
        KnowcodeError::new(
            ErrorCode::MissingHistory,
            "the current generation was built without --temporal",
        )
    })?;
    serde_json::from_slice(&text)
        .map_err(|e| KnowcodeError::new(ErrorCode::StoreCorrupt, format!("{HISTORY_FILE}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: i64, old_lines: i64, new_start: i64, new_lines: i64) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
        }
    }

    #[test]
    fn lines_move_with_insertions_and_deletions_above_them() {
        let inserted_two_after_line_3 = [hunk(3, 0, 4, 2)];
        assert_eq!(map_line(2, &inserted_two_after_line_3), 2);
        assert_eq!(map_line(10, &inserted_two_after_line_3), 12);
        let deleted_lines_5_to_7 = [hunk(5, 3, 4, 0)];
        assert_eq!(map_line(4, &deleted_lines_5_to_7), 4);
        assert_eq!(map_line(6, &deleted_lines_5_to_7), 4);
        assert_eq!(map_line(9, &deleted_lines_5_to_7), 6);
        let replaced_line_5_by_three = [hunk(5, 1, 5, 3)];
        assert_eq!(map_line(5, &replaced_line_5_by_three), 5);
        assert_eq!(map_line(6, &replaced_line_5_by_three), 8);
    }

    #[test]
    fn ranges_lose_replaced_lines_and_split_around_insertions() {
        let inserted_five_after_line_10 = [hunk(10, 0, 11, 5)];
        assert_eq!(
            carry_range(1, 13, &inserted_five_after_line_10),
            [(1, 10), (16, 18)]
        );
        let replaced_lines_4_to_5 = [hunk(4, 2, 4, 1)];
        assert_eq!(carry_range(1, 8, &replaced_lines_4_to_5), [(1, 3), (5, 7)]);
        assert!(carry_range(4, 5, &replaced_lines_4_to_5).is_empty());
    }
}
