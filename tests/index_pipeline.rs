//! The real pipeline end to end: the real binary, the real ONNX model, real LanceDB tables in
//! temp dirs. Publication, vector reuse, fault injection in every stage, `--no-embed`, and
//! hostile input.

mod common;

use std::path::Path;

use common::{copy_fixture, index_json, knowcode, require_model};
use knowcode::store::Store;
use knowcode::store::tables;
use serde_json::Value;

fn current_id(dir: &Path) -> String {
    Store::at(dir).current_id().expect("a current generation")
}

fn row_counts(dir: &Path) -> tables::RowCounts {
    let store = Store::at(dir);
    let generation = store.generation_dir(&store.current_id().unwrap());
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(tables::row_counts(&tables::location(&generation)))
        .unwrap()
}

fn n(summary: &Value, key: &str) -> u64 {
    summary[key]
        .as_u64()
        .unwrap_or_else(|| panic!("summary lacks {key}: {summary}"))
}

#[test]
fn index_publishes_a_full_generation_and_reindex_reuses_every_vector() {
    require_model();
    let repo = copy_fixture("python");
    let first = index_json(repo.path(), &[]);
    assert_eq!(first["kind"], "full");
    for key in [
        "generation_id",
        "kind",
        "files",
        "skipped",
        "entities",
        "edges_resolved",
        "edges_unresolved",
        "chunks",
        "embedded",
        "reused",
        "seconds",
    ] {
        assert!(first.get(key).is_some(), "summary lacks {key}");
    }
    assert_eq!(n(&first, "files"), 3);
    assert_eq!(n(&first, "embedded"), n(&first, "chunks"));
    assert_eq!(n(&first, "reused"), 0);
    let counts = row_counts(repo.path());
    assert_eq!(counts.chunks as u64, n(&first, "chunks"));
    assert_eq!(counts.vectors, counts.chunks, "every chunk has a vector");
    assert_eq!(counts.entities as u64, n(&first, "entities"));
    let definitions = 11; // 2 classes, 6 methods and 3 functions in the python fixture
    assert_eq!(n(&first, "views_embedded"), definitions);
    assert_eq!(
        counts.views as u64, definitions,
        "every definition has a signature view"
    );

    let second = index_json(repo.path(), &[]);
    assert_eq!(n(&second, "embedded"), 0);
    assert_eq!(n(&second, "reused"), n(&second, "chunks"));
    assert_eq!(n(&second, "views_embedded"), 0);
    assert_eq!(n(&second, "views_reused"), definitions);
    assert_ne!(second["generation_id"], first["generation_id"]);
    assert_eq!(
        current_id(repo.path()),
        second["generation_id"].as_str().unwrap()
    );
    assert!(
        Store::at(repo.path()).generation_ids().len() <= 2,
        "old generations are cleaned"
    );
}

#[test]
fn an_edited_file_reembeds_only_its_changed_chunks() {
    require_model();
    let repo = copy_fixture("python");
    let first = index_json(repo.path(), &[]);
    let pricing = repo.path().join("shop/pricing.py");
    let text = std::fs::read_to_string(&pricing)
        .unwrap()
        .replace("return round(value, 2)", "return round(value, 3)");
    std::fs::write(&pricing, text).unwrap();
    let second = index_json(repo.path(), &[]);
    assert_eq!(
        n(&second, "embedded"),
        1,
        "only round_cents changed: {second}"
    );
    assert_eq!(n(&second, "reused"), n(&first, "chunks") - 1);
}

#[test]
fn a_failure_in_any_stage_leaves_the_previous_generation_current_and_readable() {
    require_model();
    let repo = copy_fixture("go");
    let good = index_json(repo.path(), &[]);
    let good_id = good["generation_id"].as_str().unwrap().to_string();
    let path = repo.path().to_str().unwrap();
    for stage in knowcode::error::Stage::ALL {
        let out = knowcode(&["index", path], &[("KNOWCODE_FAIL_STAGE", stage.as_str())]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "stage {stage}: build should fail");
        assert!(
            stderr.contains(&format!("`{stage}`")),
            "stage {stage} not named: {stderr}"
        );
        assert_eq!(
            current_id(repo.path()),
            good_id,
            "stage {stage} changed the current generation"
        );
        assert_eq!(row_counts(repo.path()).chunks as u64, n(&good, "chunks"));
    }
    // The next build cleans whatever the failures left and succeeds.
    let next = index_json(repo.path(), &[]);
    assert_eq!(n(&next, "embedded"), 0);
    assert!(!repo.path().join(".knowcode/staging").exists());
}

#[test]
fn no_embed_gives_a_lexical_generation_and_never_replaces_a_full_one() {
    let repo = copy_fixture("rust");
    let lexical = index_json(repo.path(), &["--no-embed"]);
    assert_eq!(lexical["kind"], "lexical");
    assert!(lexical["note"].as_str().unwrap().contains("--no-embed"));
    assert_eq!(row_counts(repo.path()).vectors, 0);
    assert!(row_counts(repo.path()).chunks > 0);

    require_model();
    let full = index_json(repo.path(), &[]);
    assert_eq!(full["kind"], "full");
    let again = index_json(repo.path(), &["--no-embed"]);
    assert_eq!(again["kind"], "full");
    assert_eq!(again["generation_id"], full["generation_id"]);
    assert_eq!(
        current_id(repo.path()),
        full["generation_id"].as_str().unwrap()
    );
}

#[test]
fn one_chunk_the_model_fails_on_does_not_fail_the_build() {
    require_model();
    let repo = copy_fixture("python");
    let out = knowcode(
        &["index", repo.path().to_str().unwrap(), "--json"],
        &[("KNOWCODE_TEST_EMBED_FAIL_ON", "Round a money value")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(n(&summary, "embed_failures"), 1);
    assert_eq!(n(&summary, "embedded"), n(&summary, "chunks") - 1);
    let counts = row_counts(repo.path());
    assert_eq!(counts.vectors, counts.chunks - 1);
}

#[test]
fn hostile_files_are_skipped_with_a_reason_and_nothing_crashes() {
    let repo = copy_fixture("javascript");
    let root = repo.path();
    std::fs::write(root.join("blob.js"), b"\x00\x01binary\x00").unwrap();
    std::fs::write(
        root.join("latin1.js"),
        b"// caf\xe9\nfunction cafe() { return 1; }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("min.js"),
        format!("var a={};", "1+".repeat(100_000) + "1"),
    )
    .unwrap();
    std::fs::write(root.join("huge.js"), "x".repeat(5 * 1024 * 1024)).unwrap();
    // 2 GiB, sparse: skipped by its size without being read.
    std::fs::File::create(root.join("sparse.js"))
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    use std::os::unix::ffi::OsStrExt;
    let latin1_name = std::ffi::OsStr::from_bytes(b"caf\xe9.js");
    std::fs::write(root.join(latin1_name), "function named() {}\n").unwrap();
    std::fs::write(root.join("broken.js"), "function broken( {\n").unwrap();
    std::os::unix::fs::symlink("loop_b.js", root.join("loop_a.js")).unwrap();
    std::os::unix::fs::symlink("loop_a.js", root.join("loop_b.js")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("outside.js")).unwrap();
    std::os::unix::fs::symlink("lib/math.js", root.join("inside.js")).unwrap();
    let fifo = root.join("pipe.js");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(root.join("ignored.js"), "function ignored() {}\n").unwrap();
    std::fs::write(root.join(".knowcodeignore"), "ignored.js\n").unwrap();

    let summary = index_json(root, &["--no-embed", "--ignore", "lib/calc.js"]);
    let manifest = knowcode::store::Manifest::read(
        &Store::at(root).generation_dir(summary["generation_id"].as_str().unwrap()),
    )
    .unwrap();
    let reason = |path: &str| {
        manifest
            .skipped
            .iter()
            .find(|s| s.path == path)
            .map(|s| s.reason.as_str())
    };
    assert_eq!(reason("blob.js"), Some("binary"));
    assert_eq!(reason("min.js"), Some("minified"));
    assert_eq!(reason("huge.js"), Some("too_large"));
    assert_eq!(reason("sparse.js"), Some("too_large"));
    assert_eq!(reason("caf\u{fffd}.js"), Some("non_utf8_path"));
    assert_eq!(reason("loop_a.js"), Some("broken_symlink"));
    assert_eq!(reason("outside.js"), Some("symlink_outside_root"));
    assert_eq!(reason("pipe.js"), Some("not_regular_file"));
    assert!(
        manifest.files.contains_key("inside.js"),
        "a symlink inside the root is indexed"
    );
    assert!(manifest.files.contains_key("latin1.js"));
    assert!(
        manifest
            .issues
            .iter()
            .any(|i| i.path == "latin1.js" && i.kind == knowcode::parse::IssueKind::InvalidUtf8)
    );
    assert!(
        manifest
            .issues
            .iter()
            .any(|i| i.path == "broken.js" && i.kind == knowcode::parse::IssueKind::SyntaxError)
    );
    assert!(
        !manifest.files.contains_key("ignored.js"),
        ".knowcodeignore is honoured"
    );
    assert!(
        !manifest.files.contains_key("lib/calc.js"),
        "--ignore is honoured"
    );
    assert_eq!(n(&summary, "skipped") as usize, manifest.skipped.len());
}

#[test]
fn nested_gitignore_and_vendored_folders_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/gen")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    std::fs::write(root.join("src/.gitignore"), "gen/\n").unwrap();
    std::fs::write(root.join("src/main.py"), "def main():\n    pass\n").unwrap();
    std::fs::write(root.join("src/gen/out.py"), "def generated():\n    pass\n").unwrap();
    std::fs::write(
        root.join("node_modules/dep/index.js"),
        "function dep() {}\n",
    )
    .unwrap();
    let summary = index_json(root, &["--no-embed"]);
    assert_eq!(n(&summary, "files"), 1);
}

#[test]
fn a_missing_path_is_a_clear_error() {
    let out = knowcode(&["index", "/nonexistent/knowcode-test"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}
