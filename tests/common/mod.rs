//! Helpers shared by the integration tests: fixture copies, running the real binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copies `tests/fixtures/<name>` into a fresh temp dir and returns it.
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join(name), dir.path());
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs the real `knowcode` binary.
pub fn knowcode(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_knowcode"));
    command
        .args(args)
        .env_remove("KNOWCODE_FAIL_STAGE")
        .env_remove("KNOWCODE_TEST_EMBED_FAIL_ON");
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().expect("knowcode runs")
}

/// `knowcode index <dir> --json` (plus extra args), asserting success; returns the summary.
pub fn index_json(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let path = dir.to_str().unwrap();
    let mut args = vec!["index", path, "--json"];
    args.extend_from_slice(extra);
    let out = knowcode(&args, &[]);
    assert!(
        out.status.success(),
        "index failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("summary is one JSON object")
}

/// Fails with a clear message when the model has not been installed by scripts/setup.
pub fn require_model() {
    let config = knowcode::config::Config::default();
    if let Some(problem) = knowcode::embed::model_problem(&config) {
        panic!("the embedding model is required for this test ({problem}); run scripts/setup");
    }
}
