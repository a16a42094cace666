//! Stage 1, walk: find the files to index under a root and load them. Honours nested
//! `.gitignore`, `.ignore`, `.knowcodeignore` and `--ignore` globs; skips hidden and vendored
//! folders. Binary, huge, minified and special files are skipped with a [`SkipReason`];
//! symlinks are followed only to regular files inside the root. This stage reads files and
//! never parses them or writes anything.

use crate::error::WalkError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Folder names never descended into, wherever they are.
pub const VENDORED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    "vendor",
    "bower_components",
    ".tox",
    ".mypy_cache",
    ".knowcode",
];

/// A line longer than this marks a file as minified/generated.
const MINIFIED_LINE_CHARS: usize = 5_000;

/// Why a file was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    Binary,
    TooLarge,
    Minified,
    NotRegularFile,
    SymlinkOutsideRoot,
    BrokenSymlink,
    NonUtf8Path,
    Unreadable,
    Vanished,
}

impl SkipReason {
    /// The reason's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::Minified => "minified",
            SkipReason::NotRegularFile => "not_regular_file",
            SkipReason::SymlinkOutsideRoot => "symlink_outside_root",
            SkipReason::BrokenSymlink => "broken_symlink",
            SkipReason::NonUtf8Path => "non_utf8_path",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Vanished => "vanished",
        }
    }
}

/// Options of a walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub max_file_bytes: u64,
    /// Extra gitignore-style globs to leave out (`--ignore`).
    pub ignore_globs: Vec<String>,
    /// Absolute folders to leave out (e.g. a store kept inside the root).
    pub exclude_dirs: Vec<PathBuf>,
}

/// A file loaded for parsing.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Root-relative path with `/` separators.
    pub rel_path: String,
    pub text: String,
    pub state: FileState,
    /// True when the bytes were not valid UTF-8 and were decoded lossily.
    pub lossy: bool,
}

/// What freshness compares: size and modification time, and the bytes' hash when they differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub size: u64,
    pub mtime_ns: i64,
    /// Hash of the bytes (`text::bytes_hash`), when the file was read; `stat_files` does not
    /// read files and leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
}

/// A file the walk left out, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedFile {
    pub path: String,
    pub reason: SkipReason,
}

/// Everything the walk found.
#[derive(Debug, Default)]
pub struct WalkOutput {
    pub files: Vec<SourceFile>,
    pub skipped: Vec<SkippedFile>,
    /// Files of languages knowcode cannot parse, counted by extension.
    pub unsupported: BTreeMap<String, usize>,
}

/// Walks `root` and loads every file `supported` accepts, in parallel; results sorted by path.
pub fn walk(
    root: &Path,
    options: &WalkOptions,
    supported: &(dyn Fn(&str) -> bool + Sync),
) -> Result<WalkOutput, WalkError> {
    let root = root.canonicalize()?;
    let (candidates, mut skipped) = list_candidates(&root, options)?;
    let mut output = WalkOutput::default();
    let mut to_load = Vec::new();
    for (rel, abs) in candidates {
        if supported(&rel) {
            to_load.push((rel, abs));
        } else {
            *output.unsupported.entry(extension_of(&rel)).or_default() += 1;
        }
    }
    let loaded: Vec<Result<SourceFile, SkippedFile>> = to_load
        .par_iter()
        .map(|(rel, abs)| load_file(&root, rel, abs, options.max_file_bytes))
        .collect();
    for item in loaded {
        match item {
            Ok(file) => output.files.push(file),
            Err(skip) => skipped.push(skip),
        }
    }
    output.files.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    output.skipped = skipped;
    Ok(output)
}

/// The files `supported` accepts under `root` with their size and mtime, without reading
/// them: what freshness compares with a manifest.
pub fn stat_files(
    root: &Path,
    options: &WalkOptions,
    supported: &(dyn Fn(&str) -> bool + Sync),
) -> Result<BTreeMap<String, FileState>, WalkError> {
    let root = root.canonicalize()?;
    let (candidates, _) = list_candidates(&root, options)?;
    Ok(candidates
        .into_iter()
        .filter(|(rel, _)| supported(rel))
        .filter_map(|(rel, abs)| Some((rel, file_state(&std::fs::metadata(abs).ok()?))))
        .collect())
}

fn extension_of(rel: &str) -> String {
    Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_else(|| "(none)".into())
}

type Candidates = (Vec<(String, PathBuf)>, Vec<SkippedFile>);

fn list_candidates(root: &Path, options: &WalkOptions) -> Result<Candidates, WalkError> {
    let mut overrides = OverrideBuilder::new(root);
    for glob in &options.ignore_globs {
        overrides.add(&format!("!{glob}"))?;
    }
    let exclude = options.exclude_dirs.clone();
    let walker = WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(".knowcodeignore")
        .overrides(overrides.build()?)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let vendored = entry
                .file_name()
                .to_str()
                .is_some_and(|n| VENDORED_DIRS.contains(&n));
            !(is_dir && (vendored || exclude.iter().any(|d| entry.path().starts_with(d))))
        })
        .build();
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel_str) = rel.to_str().map(|s| s.replace('\\', "/")) else {
            skipped.push(SkippedFile {
                path: rel.to_string_lossy().into_owned(),
                reason: SkipReason::NonUtf8Path,
            });
            continue;
        };
        match classify_entry(root, entry.path(), file_type) {
            Ok(()) => candidates.push((rel_str, entry.path().to_path_buf())),
            Err(reason) => skipped.push(SkippedFile {
                path: rel_str,
                reason,
            }),
        }
    }
    Ok((candidates, skipped))
}

/// Regular files pass; symlinks pass only when they resolve to a regular file inside the root.
fn classify_entry(
    root: &Path,
    path: &Path,
    file_type: std::fs::FileType,
) -> Result<(), SkipReason> {
    if file_type.is_file() {
        return Ok(());
    }
    if !file_type.is_symlink() {
        return Err(SkipReason::NotRegularFile);
    }
    let target = path.canonicalize().map_err(|_| SkipReason::BrokenSymlink)?;
    if !target.starts_with(root) {
        return Err(SkipReason::SymlinkOutsideRoot);
    }
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(SkipReason::NotRegularFile),
        Err(_) => Err(SkipReason::BrokenSymlink),
    }
}

fn load_file(
    root: &Path,
    rel: &str,
    abs: &Path,
    max_bytes: u64,
) -> Result<SourceFile, SkippedFile> {
    let skip = |reason| SkippedFile {
        path: rel.to_string(),
        reason,
    };
    let meta = std::fs::metadata(abs).map_err(|e| skip(io_reason(&e)))?;
    if !meta.is_file() {
        return Err(skip(SkipReason::NotRegularFile));
    }
    if meta.len() > max_bytes {
        return Err(skip(SkipReason::TooLarge));
    }
    debug_assert!(abs.starts_with(root) || abs.canonicalize().is_ok_and(|c| c.starts_with(root)));
    let bytes = std::fs::read(abs).map_err(|e| skip(io_reason(&e)))?;
    if bytes.len() as u64 > max_bytes {
        return Err(skip(SkipReason::TooLarge));
    }
    if looks_binary(&bytes) {
        return Err(skip(SkipReason::Binary));
    }
    let content_hash = crate::text::bytes_hash(&bytes);
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    };
    if looks_minified(&text) {
        return Err(skip(SkipReason::Minified));
    }
    Ok(SourceFile {
        rel_path: rel.to_string(),
        text,
        state: FileState {
            content_hash: Some(content_hash),
            ..file_state(&meta)
        },
        lossy,
    })
}

fn io_reason(err: &std::io::Error) -> SkipReason {
    match err.kind() {
        std::io::ErrorKind::NotFound => SkipReason::Vanished,
        _ => SkipReason::Unreadable,
    }
}

/// Size and mtime of a file, as freshness compares them.
pub fn file_state(meta: &std::fs::Metadata) -> FileState {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    FileState {
        size: meta.len(),
        mtime_ns,
        content_hash: None,
    }
}

/// A NUL byte in the first 8 KiB marks a binary file (git's heuristic).
fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

/// Any single line longer than [`MINIFIED_LINE_CHARS`] marks a minified or generated file.
fn looks_minified(text: &str) -> bool {
    text.len() > MINIFIED_LINE_CHARS && text.lines().any(|line| line.len() > MINIFIED_LINE_CHARS)
}

/// A root-relative path's folders and its file name.
fn folders_and_file(path: &str) -> (impl Iterator<Item = &str>, &str) {
    let (folders, file) = path.rsplit_once('/').unwrap_or(("", path));
    (folders.split('/').filter(|s| !s.is_empty()), file)
}

/// Whether a path holds tests, examples or benchmarks rather than the code they exercise: a
/// folder named so (`tests/`, `__tests__/`, `spec/`, `examples/`, `benches/`, `testdata/`,
/// Java's `src/test/`) or whose name is made of such words (`SelfTest/`, `integration-tests/`),
/// or a file named by the common test conventions (`test_x.py`, `x_test.go`, `x.test.ts`,
/// `x.spec.js`, `x_spec.rb`, `XTest.java`, `XTests.cs`).
pub fn is_test_path(path: &str) -> bool {
    const FOLDERS: &[&str] = &[
        "test",
        "tests",
        "__tests__",
        "spec",
        "specs",
        "testing",
        "testdata",
        "example",
        "examples",
        "bench",
        "benches",
        "benchmarks",
    ];
    let (folders, file) = folders_and_file(path);
    let test_folder = |s: &str| {
        FOLDERS.contains(&s)
            || crate::text::split_identifier(s)
                .iter()
                .any(|w| w == "test" || w == "tests")
    };
    if folders.into_iter().any(test_folder) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    let extension = file.rsplit_once('.').map_or("", |(_, e)| e);
    let camel_suffix = |suffix: &str| {
        stem.strip_suffix(suffix)
            .is_some_and(|rest| rest.ends_with(|c: char| c.is_alphanumeric()))
    };
    (stem.starts_with("test_") && !SHELL_EXTENSIONS.contains(&extension))
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || camel_suffix("Test")
        || camel_suffix("Tests")
        || camel_suffix("Spec")
        || file.contains(".test.")
        || file.contains(".spec.")
        || TEST_FILE_CONVENTIONS
            .iter()
            .any(|(ext, rule)| *ext == extension && rule(stem))
}

/// Whether a file stem follows a naming rule.
type StemRule = fn(&str) -> bool;

/// Shell scripts: `test_functions.bash` is a library (bats-core's), shell tests are `.bats`
/// files or live in test folders.
const SHELL_EXTENSIONS: &[&str] = &["sh", "bash", "zsh", "ksh"];

/// Test files known by a language's own convention, beside the shared ones above: Bats
/// files are test scripts, Haskell's hspec discovers `Spec.hs`, ScalaTest and munit name
/// suites `*Suite.scala`.
const TEST_FILE_CONVENTIONS: &[(&str, StemRule)] = &[
    ("bats", |_| true),
    ("hs", |stem| stem == "Spec"),
    ("scala", |stem| {
        stem.ends_with("Suite") && stem.len() > "Suite".len()
    }),
];

/// Whether a path holds generated, bundled or vendored code, which a fix rarely touches: an
/// amalgamated single header (`single_include/`, `singleheader/`, `amalgamation/`), a build
/// bundle (`dist/`), vendored third-party code (`vendor/`, `third_party/`, `deps/`, …) or a
/// generated file by its name (`x.pb.go`, `x_pb2.py`, `x.min.js`, `zz_generated.x.go`), or a
/// tool copied into the project whole (`versioneer.py`, and the `_version.py` it writes).
pub fn is_generated_path(path: &str) -> bool {
    const FOLDERS: &[&str] = &[
        "single_include",
        "singleheader",
        "single_header",
        "amalgamation",
        "amalgamated",
        "dist",
        "vendor",
        "vendored",
        "third_party",
        "thirdparty",
        "third-party",
        "3rdparty",
        "node_modules",
        "deps",
        "dependencies",
        "generated",
        "__generated__",
    ];
    let (mut folders, file) = folders_and_file(path);
    if folders.any(|s| FOLDERS.contains(&s)) {
        return true;
    }
    let words: Vec<&str> = file.split(['.', '_', '-']).collect();
    let marked = |w: &str| words[1..].contains(&w);
    words.len() > 2 && (marked("pb") || marked("pb2") || marked("min") || marked("bundle"))
        || words.contains(&"generated")
        || COPIED_TOOLS.contains(&file)
        || GENERATED_SUFFIXES
            .iter()
            .any(|suffix| file.ends_with(suffix))
}

/// Top-level folders holding a repository's own tooling rather than the code it ships:
/// release and maintenance scripts, build helpers, CI configuration. `tools/` is not one:
/// it is often a product of its own (go-zero's `tools/goctl`, LLVM's `tools/`).
const TOOLING_FOLDERS: &[&str] = &[
    "scripts",
    "script",
    "build_tools",
    "ci",
    ".github",
    "devtools",
];

/// The tooling folder a path lies in (`script/bump_changelog.py` → `script`), if any. Only the
/// first folder counts: a `scripts/` deeper in the tree (`src/app/scripts/`) belongs to the
/// code it sits in.
pub fn tooling_folder(path: &str) -> Option<&'static str> {
    let (first, _) = path.split_once('/')?;
    TOOLING_FOLDERS
        .iter()
        .copied()
        .find(|folder| *folder == first)
}

/// Whether a path records the project's history or people rather than explaining its code:
/// a changelog, release notes or news file (`CHANGELOG.md`, `HISTORY.rst`, `NEWS`,
/// `CHANGES.txt`), a contributors' list or guide, or a page in a folder of such notes
/// (`docs/whatsnew/`, `changelog.d/`, `newsfragments/`). The caller decides what it means for
/// code: `changes.py` is named like a changelog and is code.
pub fn is_history_path(path: &str) -> bool {
    const STEMS: &[&str] = &[
        "changelog",
        "changes",
        "history",
        "news",
        "releases",
        "release-notes",
        "release_notes",
        "releasenotes",
        "whatsnew",
        "authors",
        "contributors",
        "contributing",
    ];
    const FOLDERS: &[&str] = &[
        "whatsnew",
        "changelog",
        "changelogs",
        "changelog.d",
        "newsfragments",
        "release-notes",
        "release_notes",
        "releasenotes",
    ];
    let lower = path.to_lowercase();
    let (mut folders, file) = folders_and_file(&lower);
    let stem = file.split('.').next().unwrap_or(file);
    STEMS.contains(&stem) || folders.any(|f| FOLDERS.contains(&f))
}

/// Files a tool writes into a project whole, the same in every project that uses it.
const COPIED_TOOLS: &[&str] = &["versioneer.py", "_version.py"];
/// File name endings of code generators: Dart's build_runner family (`json_serializable`,
/// `freezed`, `auto_route`, `mockito`), Swift's `*.generated.swift` is caught by the word.
const GENERATED_SUFFIXES: &[&str] = &[".g.dart", ".freezed.dart", ".gr.dart", ".mocks.dart"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognised_by_folder_and_file_name() {
        for path in [
            "tests/test_cart.py",
            "src/__tests__/a.ts",
            "pkg/cmd_test.go",
            "lib/x.spec.js",
            "examples/demo.rs",
            "test_utils.py",
            "src/test/java/com/x/Pojo.java",
            "src/main/java/com/x/ToXmlGeneratorTest.java",
            "projects/SelfTest/UsageTests/Misc.tests.cpp",
            "spec/models/user_spec.rb",
            "pkg/testdata/input.go",
            "src/commonTest/kotlin/CartTest.kt",
            "Tests/ShopTests/CartTests.swift",
            "modules/core/CartSpec.scala",
            "modules/core/CartSuite.scala",
            "spec/cart_spec.lua",
            "lib/cart.bats",
            "cart_test.exs",
            "Spec.hs",
            "lib/cart_test.dart",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/click/testing.py",
            "src/contest.rs",
            "src/attestation/x.go",
            "src/main/java/com/x/Test.java",
            "src/main/java/com/x/Latest.java",
            "lib/pytest_plugin.py",
            "Sources/Suite.scala",
            "lib/bats-core/test_functions.bash",
            "src/XMonad/Spec/Layout.hs",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }

    #[test]
    fn generated_bundled_and_vendored_paths_are_recognised() {
        for path in [
            "single_include/catch2/catch.hpp",
            "singleheader/simdjson.h",
            "api/v1/service.pb.go",
            "proto/service_pb2.py",
            "dist/dayjs.min.js",
            "vendor/github.com/x/y.go",
            "third_party/zlib/inflate.c",
            "apis/zz_generated.deepcopy.go",
            "lib/models/cart.g.dart",
            "lib/models/cart.freezed.dart",
            "versioneer.py",
            "pvlib/_version.py",
        ] {
            assert!(is_generated_path(path), "{path}");
        }
        for path in [
            "include/catch2/catch.hpp",
            "src/min.rs",
            "lib/bundle.js",
            "src/generator.py",
            "lib/cart.dart",
            "lib/g.dart",
            "src/version.py",
        ] {
            assert!(!is_generated_path(path), "{path}");
        }
    }

    #[test]
    fn tooling_is_a_top_level_folder_of_scripts_build_helpers_or_ci() {
        assert_eq!(tooling_folder("script/bump_changelog.py"), Some("script"));
        assert_eq!(
            tooling_folder("build_tools/sphinx/github_link.py"),
            Some("build_tools")
        );
        assert_eq!(tooling_folder(".github/workflows/ci.yml"), Some(".github"));
        for path in [
            "src/app/scripts/run.py",
            "tools/goctl/gen.go",
            "scripts.py",
            "ci.go",
        ] {
            assert_eq!(tooling_folder(path), None, "{path}");
        }
    }

    #[test]
    fn history_files_are_known_by_name_and_folder() {
        for path in [
            "CHANGELOG.rst",
            "HISTORY.md",
            "NEWS",
            "docs/CONTRIBUTING.rst",
            "docs/sphinx/source/whatsnew/v0.9.0.rst",
            "changelog.d/1234.bugfix",
        ] {
            assert!(is_history_path(path), "{path}");
        }
        for path in [
            "README.md",
            "docs/api.rst",
            "src/changes/apply.py",
            "newsletter.md",
        ] {
            assert!(!is_history_path(path), "{path}");
        }
    }

    #[test]
    fn binary_and_minified_heuristics() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary(b"plain text"));
        assert!(looks_minified(&"x".repeat(MINIFIED_LINE_CHARS + 1)));
        assert!(!looks_minified(&"short line\n".repeat(1000)));
    }

    #[test]
    fn a_file_deleted_during_the_walk_is_skipped_as_vanished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        std::fs::remove_file(&path).unwrap();
        let skipped = load_file(dir.path(), "gone.py", &path, 1024).unwrap_err();
        assert_eq!(skipped.reason, SkipReason::Vanished);
    }

    #[test]
    fn unreadable_files_are_skipped_as_unreadable() {
        // Tests run as root here, so permissions cannot make a file unreadable; the mapping
        // from the I/O error is what decides.
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(io_reason(&denied), SkipReason::Unreadable);
        let dir = tempfile::tempdir().unwrap();
        let skipped = load_file(dir.path(), "d", dir.path(), 1024).unwrap_err();
        assert_eq!(skipped.reason, SkipReason::NotRegularFile);
    }
}
