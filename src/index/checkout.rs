//! Whether a working tree is a checkout of the repository a generation indexed. A build
//! records what identifies the repository ([`Identity`]: the first commit of its history);
//! a reader of an index built elsewhere asks [`judge`] before it overlays the tree's
//! differences, so an empty folder, a home folder or another project answers from the index
//! alone instead of counting every indexed file as deleted or indexing unrelated files.
//! This module only reads (git's object database, file metadata); it never builds an overlay
//! and never writes to the repository.

use std::path::{Path, PathBuf};

use crate::store::Manifest;
pub use crate::store::manifest::Identity;

/// The indexed files a tree must hold at their paths (a fraction) to count as a checkout.
const PRESENT_FRACTION: f64 = 0.5;
/// Indexed paths looked at, at most (evenly spread), to judge the fraction present.
const SAMPLE: usize = 1000;

/// The identity of the repository at `root` (empty outside git or in an empty repository).
pub fn identify(root: &Path) -> Identity {
    Identity {
        root_commit: first_commit(root),
    }
}

/// None in a shallow clone (a CI checkout of depth 1): its oldest commit is wherever the clone
/// was cut, which a developer's older clone may not have yet, so the files decide instead.
fn first_commit(root: &Path) -> Option<String> {
    let repo = git2::Repository::discover(root).ok()?;
    if repo.is_shallow() {
        return None;
    }
    let mut walk = repo.revwalk().ok()?;
    walk.push_head().ok()?;
    walk.simplify_first_parent().ok()?;
    walk.flatten().last().map(|oid| oid.to_string())
}

/// Why a working tree is not taken for a checkout of the indexed repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCheckout {
    /// The folder holds no file at all.
    Empty,
    /// A git repository whose history does not contain the indexed one's first commit.
    OtherHistory,
    /// Too few of the indexed files are present at their paths.
    FewIndexedFiles { present: usize, looked_at: usize },
}

impl NotCheckout {
    /// One sentence for payloads and logs.
    pub fn describe(&self) -> String {
        match self {
            NotCheckout::Empty => "the folder is empty".into(),
            NotCheckout::OtherHistory => {
                "its git history does not contain the indexed repository's first commit".into()
            }
            NotCheckout::FewIndexedFiles { present, looked_at } => format!(
                "only {present} of {looked_at} indexed files are present at their paths (at least half are needed)"
            ),
        }
    }
}

/// Whether `tree` is a checkout of the repository `base` indexed:
/// - an empty folder is not;
/// - when the index recorded its first commit and `tree` is inside a git repository (not a
///   shallow clone, which may lack old commits), that commit must be in its object database;
/// - at least half of the indexed files (a sample of at most [`SAMPLE`]) must exist at their
///   paths, which also tells a subfolder or a parent folder of the checkout from the checkout.
pub fn judge(base: &Manifest, tree: &Path) -> Result<(), NotCheckout> {
    if is_empty(tree) {
        return Err(NotCheckout::Empty);
    }
    if let Some(commit) = base.repository.root_commit.as_deref()
        && let Ok(repo) = git2::Repository::discover(tree)
        && !repo.is_shallow()
    {
        let known = git2::Oid::from_str(commit).is_ok_and(|oid| repo.find_commit(oid).is_ok());
        if !known {
            return Err(NotCheckout::OtherHistory);
        }
    }
    let paths: Vec<&String> = base.files.keys().collect();
    if paths.is_empty() {
        return Ok(());
    }
    let step = paths.len().div_ceil(SAMPLE);
    let sample: Vec<&String> = paths.iter().step_by(step).copied().collect();
    let present = sample.iter().filter(|p| tree.join(p).is_file()).count();
    if (present as f64) < PRESENT_FRACTION * sample.len() as f64 {
        return Err(NotCheckout::FewIndexedFiles {
            present,
            looked_at: sample.len(),
        });
    }
    Ok(())
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none())
}

/// The top of the git working tree holding `dir`, when there is one: where a reader started
/// in a subfolder of its checkout takes its working tree from.
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::discover(dir).ok()?;
    repo.workdir()?.canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest_of(files: &[&str], root_commit: Option<&str>) -> Manifest {
        let mut manifest: Manifest = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "builder_version": "test", "generation_id": "g",
            "kind": "lexical", "created_at_ms": 0, "root": "/indexed",
            "counts": crate::store::manifest::Counts::default(), "embedding": null,
            "files": {}, "skipped": [], "unsupported": {}, "issues": []
        }))
        .unwrap();
        for path in files {
            let record = crate::store::manifest::FileRecord {
                size: 1,
                mtime_ns: 0,
                language: "python".into(),
                entities: 0,
                unresolved: 0,
                content_hash: None,
            };
            manifest.files.insert(path.to_string(), record);
        }
        manifest.repository.root_commit = root_commit.map(String::from);
        manifest
    }

    fn tree_with(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        }
        dir
    }

    #[test]
    fn an_empty_folder_is_not_a_checkout() {
        let base = manifest_of(&["a.py"], None);
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(judge(&base, empty.path()), Err(NotCheckout::Empty));
    }

    #[test]
    fn half_of_the_indexed_files_at_their_paths_make_a_checkout() {
        let base = manifest_of(&["a.py", "b.py", "c.py", "d.py"], None);
        assert_eq!(
            judge(&base, tree_with(&["a.py", "b.py", "x.py"]).path()),
            Ok(())
        );
        assert_eq!(
            judge(&base, tree_with(&["a.py", "y.py", "z.py"]).path()),
            Err(NotCheckout::FewIndexedFiles {
                present: 1,
                looked_at: 4
            })
        );
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@e",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    #[test]
    fn the_first_commit_is_recorded_except_in_a_shallow_clone() {
        let full = tree_with(&["a.py"]);
        git(full.path(), &["init", "-q"]);
        git(full.path(), &["add", "-A"]);
        git(full.path(), &["commit", "-qm", "first"]);
        std::fs::write(full.path().join("b.py"), "y = 2\n").unwrap();
        git(full.path(), &["add", "-A"]);
        git(full.path(), &["commit", "-qm", "second"]);
        let first = identify(full.path()).root_commit.expect("a first commit");
        assert_eq!(
            first,
            git2::Repository::open(full.path())
                .unwrap()
                .revparse_single("HEAD~1")
                .unwrap()
                .id()
                .to_string()
        );
        let shallow = tempfile::tempdir().unwrap();
        let source = format!("file://{}", full.path().display());
        git(
            shallow.path(),
            &["clone", "-q", "--depth", "1", &source, "."],
        );
        assert_eq!(identify(shallow.path()).root_commit, None);
    }

    #[test]
    fn a_git_tree_without_the_indexed_first_commit_is_another_history() {
        let tree = tree_with(&["a.py"]);
        git2::Repository::init(tree.path()).unwrap();
        let unknown = "0123456789abcdef0123456789abcdef01234567";
        let base = manifest_of(&["a.py"], Some(unknown));
        assert_eq!(judge(&base, tree.path()), Err(NotCheckout::OtherHistory));
        // Without a recorded commit, the files decide.
        assert_eq!(judge(&manifest_of(&["a.py"], None), tree.path()), Ok(()));
    }
}
