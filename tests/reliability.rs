//! Reliability with real processes: hostile MCP input over raw stdio, queries from two
//! processes while builds publish, two builds at once, and a bounded store after many
//! builds, `scripts/crash-test` (SIGKILL at random moments) with a small count, and a
//! command whose reader hangs up.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use common::{RawMcp, copy_fixture, index_json, knowcode};
use serde_json::{Value, json};

fn code(payload: &Value) -> &str {
    payload["code"].as_str().unwrap_or("")
}

#[test]
fn hostile_mcp_input_gets_typed_errors_and_the_server_stays_up() {
    let repo = copy_fixture("python");
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("escape")).unwrap();
    let mut mcp = RawMcp::start(repo.path());
    let retrieve = "knowcode_retrieve";

    let typed = [
        (json!({"action": "query", "query": 5}), "query"),
        (json!({"action": "query"}), "query"),
        (
            json!({"action": "query", "query": "x", "surprise": true}),
            "surprise",
        ),
        (json!({"action": "explode"}), "action"),
        (json!({"query": "x"}), "action"),
        (
            json!({"action": "query", "query": "x", "max_tokens": -3}),
            "max_tokens",
        ),
        (
            json!({"action": "query", "query": "x", "max_tokens": 1e300}),
            "max_tokens",
        ),
        (
            json!({"action": "query", "query": "x".repeat(10 << 20)}),
            "limit",
        ),
    ];
    for (arguments, mentions) in typed {
        let (is_error, payload) = mcp.call(retrieve, arguments);
        assert!(is_error, "{payload}");
        assert_eq!(code(&payload), "invalid_argument", "{payload}");
        assert!(
            payload["error"].as_str().unwrap().contains(mentions),
            "{payload}"
        );
        assert!(!payload["hint"].as_str().unwrap().is_empty());
    }
    // Nested within serde's limit: a typed argument error; beyond it: a JSON-RPC parse error.
    let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let (is_error, payload) = mcp.call(
        retrieve,
        json!({"action": "query", "query": serde_json::from_str::<Value>(&nested).unwrap()}),
    );
    assert!(
        is_error && code(&payload) == "invalid_argument",
        "{payload}"
    );
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{}{}}}"#,
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    mcp.send_raw(deep.as_bytes());
    assert_eq!(mcp.next_message()["error"]["code"], -32700);
    mcp.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"ping\",\"x\":\"\xff\xfe\"}");
    assert_eq!(mcp.next_message()["error"]["code"], -32700);
    mcp.send_raw(b"definitely not json");
    assert_eq!(mcp.next_message()["error"]["code"], -32700);
    mcp.send_raw(br#"{"jsonrpc":"2.0","id":902}"#);
    let invalid = mcp.next_message();
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(invalid["id"], 902);

    let (is_error, payload) = mcp.call("knowcode_explode", json!({"action": "query"}));
    assert!(is_error && payload["error"].as_str().unwrap().contains("unknown tool"));
    let unknown_method = mcp.request("tools/explode", json!({}));
    assert!(unknown_method.get("error").is_some(), "{unknown_method}");

    for escape in [
        "..",
        "../x",
        "/etc",
        "escape/out",
        "%2e%2e/x",
        "docs%2F..%2F..%2Fx",
        "a\u{0}b",
    ] {
        let (is_error, payload) = mcp.call(
            "knowcode_lifecycle",
            json!({"action": "export", "output": escape}),
        );
        assert!(is_error, "{escape}: {payload}");
        assert_eq!(code(&payload), "path_outside_root", "{escape}: {payload}");
    }
    assert!(
        std::fs::read_dir(outside.path()).unwrap().next().is_none(),
        "nothing was written outside the root"
    );

    let pong = mcp.request("ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    assert!(mcp.alive());
}

/// `def marker_v<N>()` in `marker.py`: which build a generation came from.
fn write_marker(root: &Path, version: u32) {
    std::fs::write(
        root.join("marker.py"),
        format!("def marker_v{version}():\n    \"\"\"Build marker {version}.\"\"\"\n    return {version}\n"),
    )
    .unwrap();
}

/// The marker version a search payload shows, with the generation it came from.
fn marker_seen(payload: &Value) -> (String, Vec<String>) {
    let generation = payload["freshness"]["generation_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let markers = payload["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_str())
        .filter(|id| id.starts_with("marker.py::marker_v"))
        .map(str::to_string)
        .collect();
    (generation, markers)
}

#[test]
fn queries_during_publication_never_fail_and_each_answer_is_one_generation() {
    common::require_model();
    let repo = copy_fixture("python");
    let root = repo.path().to_path_buf();
    write_marker(&root, 0);
    let first = index_json(&root, &[]);
    let expected: Arc<Mutex<HashMap<String, String>>> = Arc::new(Mutex::new(HashMap::from([(
        first["generation_id"].as_str().unwrap().to_string(),
        "marker.py::marker_v0".to_string(),
    )])));
    let building = Arc::new(AtomicBool::new(true));

    let builder = {
        let (root, expected, building) = (root.clone(), expected.clone(), building.clone());
        std::thread::spawn(move || {
            for version in 1..=4 {
                write_marker(&root, version);
                let summary = index_json(&root, &[]);
                expected.lock().unwrap().insert(
                    summary["generation_id"].as_str().unwrap().to_string(),
                    format!("marker.py::marker_v{version}"),
                );
            }
            building.store(false, Ordering::SeqCst);
        })
    };
    let cli = {
        let (root, building) = (root.clone(), building.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while building.load(Ordering::SeqCst) {
                let out = knowcode(
                    &[
                        "search",
                        "marker",
                        "--json",
                        "--store",
                        root.to_str().unwrap(),
                    ],
                    &[],
                );
                assert!(
                    out.status.success(),
                    "CLI query failed during a build: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                seen.push(marker_seen(&serde_json::from_slice(&out.stdout).unwrap()));
            }
            seen
        })
    };
    let mut mcp = RawMcp::start(&root);
    let mut seen = Vec::new();
    while building.load(Ordering::SeqCst) {
        let (is_error, payload) = mcp.call(
            "knowcode_retrieve",
            json!({"action": "search", "query": "marker"}),
        );
        assert!(!is_error, "MCP query failed during a build: {payload}");
        seen.push(marker_seen(&payload));
    }
    builder.join().unwrap();
    let cli_seen = cli.join().unwrap();

    let expected = expected.lock().unwrap();
    let mut generations = HashSet::new();
    for (generation, markers) in seen.iter().chain(&cli_seen) {
        let want = expected
            .get(generation)
            .unwrap_or_else(|| panic!("answer from unknown generation {generation}"));
        assert_eq!(markers, &vec![want.clone()], "generation {generation}");
        generations.insert(generation.clone());
    }
    println!(
        "{} MCP + {} CLI answers over {} generations, zero errors",
        seen.len(),
        cli_seen.len(),
        generations.len()
    );
    assert!(seen.len() >= 4 && !cli_seen.is_empty());
}

#[test]
fn two_builds_at_once_one_wins_and_the_store_stays_valid() {
    let repo = copy_fixture("go");
    let root = repo.path();
    index_json(root, &["--no-embed"]);
    {
        let _held = knowcode::store::Store::at(root).lock().unwrap();
        let refused = knowcode(&["index", root.to_str().unwrap(), "--no-embed"], &[]);
        assert!(!refused.status.success());
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("lock"),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }
    let spawn = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_knowcode"))
            .args(["index", root.to_str().unwrap(), "--no-embed", "--json"])
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let outcomes = [&a, &b];
    assert!(
        outcomes.iter().any(|o| o.status.success()),
        "one build wins"
    );
    for loser in outcomes.iter().filter(|o| !o.status.success()) {
        assert!(String::from_utf8_lossy(&loser.stderr).contains("lock"));
    }
    let search = knowcode(&["search", "Get", "--store", root.to_str().unwrap()], &[]);
    assert!(search.status.success(), "the store still answers");
}

#[test]
fn the_store_stays_bounded_over_many_builds() {
    let repo = copy_fixture("rust");
    let root = repo.path();
    let store = knowcode::store::Store::at(root);
    let mut sizes = Vec::new();
    for build in 0..8 {
        std::fs::write(
            root.join(format!("extra_{build}.rs")),
            format!("pub fn extra_{build}() -> u32 {{ {build} }}\n"),
        )
        .unwrap();
        index_json(root, &["--no-embed"]);
        sizes.push(store.disk_bytes());
        assert!(
            store.generation_ids().len() <= 2,
            "old generations are removed"
        );
    }
    println!("store bytes after each build: {sizes:?}");
    assert!(
        sizes[7] < sizes[1] * 2,
        "size grows with the code, not with the number of builds: {sizes:?}"
    );
}

#[test]
fn crash_test_script_survives_sigkill_at_random_moments() {
    common::require_model();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/crash-test");
    let out = std::process::Command::new("python3")
        .arg(script)
        .args(["--count", "5", "--bin", env!("CARGO_BIN_EXE_knowcode")])
        .output()
        .expect("python3 runs scripts/crash-test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("5 kills survived"), "{stdout}");
}

/// A reader that goes away (`knowcode query … | head -1`) ends a one-shot command the way it
/// ends any Unix tool, by SIGPIPE: no panic and no backtrace on stderr.
#[cfg(unix)]
#[test]
fn a_command_whose_reader_hangs_up_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let repo =
        common::lexical_repo(&[("src/cart.py", "def total(items):\n    return sum(items)\n")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .args(["query", "total", "--store"])
        .arg(repo.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("knowcode runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("knowcode ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}",
        output.status
    );
}
