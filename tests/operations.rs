//! Operations through the real binary: doctor --mcp, history from a real git repository,
//! telemetry privacy, deterministic export, watch mode following edits, the REST API over a
//! real loopback socket, and ask against a local chat server that checks what it receives.

mod common;

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{
    ChildGuard, RawMcp, copy_fixture, free_port, git, http, index_json, knowcode, knowcode_json,
    wait_until,
};
use serde_json::{Value, json};

#[test]
fn doctor_mcp_performs_a_real_handshake() {
    common::require_model();
    let repo = copy_fixture("python");
    let root = repo.path().to_str().unwrap();
    index_json(repo.path(), &["--no-embed"]);
    let out = knowcode(&["doctor", "--store", root, "--mcp", "--json"], &[]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mcp = common::doctor_check(&report, "mcp");
    assert_eq!(mcp["status"], "pass", "{report}");
    assert!(
        mcp["message"].as_str().unwrap().contains("3 tools"),
        "{mcp}"
    );
    assert!(out.status.success(), "{report}");
}

#[test]
fn history_lists_the_commits_that_touched_an_entity() {
    fn summaries(history: &Value) -> Vec<&str> {
        history["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["summary"].as_str().unwrap())
            .collect()
    }
    let repo = copy_fixture("python");
    let root = repo.path();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "initial shop"]);
    let pricing = root.join("shop/pricing.py");
    let text = std::fs::read_to_string(&pricing).unwrap();
    std::fs::write(
        &pricing,
        text.replacen(
            "def round_cents",
            "def helper_added_later():\n    return 1\n\n\ndef round_cents",
            1,
        ),
    )
    .unwrap();
    git(root, &["commit", "-qam", "add a helper"]);
    git(root, &["mv", "shop/pricing.py", "shop/prices.py"]);
    git(root, &["commit", "-qm", "rename pricing to prices"]);
    let store = root.to_str().unwrap();

    index_json(root, &["--no-embed"]);
    let (ok, missing) = knowcode_json(&["history", "--store", store, "--json"]);
    assert!(!ok);
    assert_eq!(missing["code"], "missing_history");
    assert!(missing["hint"].as_str().unwrap().contains("--temporal"));

    index_json(root, &["--no-embed", "--temporal"]);
    let (_, recent) = knowcode_json(&["history", "--store", store, "--json"]);
    assert_eq!(
        summaries(&recent),
        ["rename pricing to prices", "add a helper", "initial shop"]
    );
    let (_, helper) = knowcode_json(&["history", "helper_added_later", "--store", store, "--json"]);
    assert_eq!(helper["commits"][0]["summary"], "add a helper", "{helper}");
    assert_eq!(helper["commits"][0]["insertions"], 4, "{helper}");
    assert_eq!(
        helper["commits_touching"], 1,
        "the initial commit's lines around the insertion are not the helper's: {helper}"
    );
    let (_, untouched) = knowcode_json(&["history", "round_cents", "--store", store, "--json"]);
    assert_eq!(
        summaries(&untouched),
        ["initial shop"],
        "lines moved down by the insertion above are not attributed to it"
    );

    let mut mcp = RawMcp::start(root);
    let (is_error, payload) = mcp.call(
        "knowcode_inspect",
        json!({"action": "history", "target": "helper_added_later"}),
    );
    assert!(!is_error, "{payload}");
    assert_eq!(payload, helper);
}

fn telemetry_text(root: &Path) -> String {
    ["telemetry.jsonl", "telemetry.jsonl.1"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join(".knowcode").join(f)).unwrap_or_default())
        .collect()
}

#[test]
fn telemetry_never_records_a_secret_and_only_the_cli_clears_it() {
    let repo = copy_fixture("python");
    let root = repo.path();
    index_json(root, &["--no-embed"]);
    let secret = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";
    let mut mcp = RawMcp::start(root);
    for _ in 0..2 {
        mcp.call(
            "knowcode_retrieve",
            json!({"action": "query", "query": format!("discount {secret}")}),
        );
    }
    mcp.call(
        "knowcode_retrieve",
        json!({"action": "context", "target": secret}),
    );
    mcp.call("knowcode_retrieve", json!({"action": secret}));
    mcp.call(secret, json!({"action": "query", "query": secret}));
    let (is_error, refused) = mcp.call("knowcode_lifecycle", json!({"action": "clear_telemetry"}));
    assert!(is_error && refused["code"] == "invalid_argument");
    drop(mcp);

    let text = telemetry_text(root);
    assert!(text.lines().count() >= 6, "{text}");
    assert!(
        !text.contains(secret),
        "the secret reached telemetry:\n{text}"
    );
    assert!(!text.contains("sk-live"), "{text}");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let queries: Vec<&Value> = events
        .iter()
        .filter(|e| e["action"] == "query" && e["tool"] == "knowcode_retrieve")
        .collect();
    assert_eq!(queries.len(), 2);
    assert_eq!(
        queries[0]["fields"]["query_id"], queries[1]["fields"]["query_id"],
        "equal queries share a keyed hash"
    );

    let store = root.to_str().unwrap();
    let (ok, shown) = knowcode_json(&["telemetry", "show", "--store", store, "--json"]);
    assert!(ok);
    assert_eq!(shown["events"]["knowcode_retrieve:query"]["count"], 2);
    assert_eq!(
        shown["events"]["knowcode_retrieve:query"]["distinct_inputs"],
        1
    );
    let cleared = knowcode(&["telemetry", "clear", "--store", store], &[]);
    assert!(cleared.status.success());
    assert!(telemetry_text(root).is_empty());
    assert!(!root.join(".knowcode/telemetry.key").exists());
}

fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                let name = entry
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((name, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn export_writes_deterministic_markdown_and_the_legacy_json() {
    let repo = copy_fixture("python");
    let root = repo.path();
    index_json(root, &["--no-embed"]);
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("a"), out.path().join("b"));
    let store = root.to_str().unwrap();
    let (ok, summary) = knowcode_json(&[
        "export",
        "--store",
        store,
        "--output",
        a.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{summary}");
    knowcode_json(&[
        "export",
        "--store",
        store,
        "--output",
        b.to_str().unwrap(),
        "--json",
    ]);
    let (first, second) = (read_tree(&a), read_tree(&b));
    assert_eq!(
        first, second,
        "two exports of one generation are byte-identical"
    );

    let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "index.md",
        "architecture.md",
        "manifest.json",
        "knowcode_knowledge.json",
        "modules/shop/cart.py.md",
        "modules/shop/pricing.py.md",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let page = std::fs::read_to_string(a.join("modules/shop/cart.py.md")).unwrap();
    assert!(
        page.contains("`Cart.total`") && page.contains("shop/pricing.py"),
        "{page}"
    );
    let architecture = std::fs::read_to_string(a.join("architecture.md")).unwrap();
    assert!(
        architecture.contains("| `shop/cart.py` | `shop/pricing.py` |"),
        "{architecture}"
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(a.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["files"].as_array().unwrap().len(), first.len() - 1);
    let knowledge: Value =
        serde_json::from_slice(&std::fs::read(a.join("knowcode_knowledge.json")).unwrap()).unwrap();
    assert!(knowledge["entities"].as_array().unwrap().len() > 5);
    assert!(knowledge["relationships"].as_array().unwrap().len() > 5);

    // The flat file alone, next to the sources, is a store readers accept.
    let legacy = copy_fixture("python");
    std::fs::copy(
        a.join("knowcode_knowledge.json"),
        legacy.path().join("knowcode_knowledge.json"),
    )
    .unwrap();
    let legacy_store = legacy.path().to_str().unwrap();
    let (ok, found) = knowcode_json(&["search", "round_cents", "--json", "--store", legacy_store]);
    assert!(ok, "{found}");
    assert_eq!(found["results"][0]["id"], "shop/pricing.py::round_cents");
    let (ok, answer) = knowcode_json(&[
        "query",
        "apply a percentage discount",
        "--json",
        "--store",
        legacy_store,
    ]);
    assert!(ok, "{answer}");
    assert!(
        answer["context_text"]
            .as_str()
            .unwrap()
            .contains("apply_discount"),
        "{answer}"
    );
    assert!(
        !legacy.path().join(".knowcode").exists(),
        "reading never writes the store"
    );
}

/// `knowcode search NAME --json` ids and whether the answer is stale.
fn search_ids(root: &Path, name: &str) -> (Vec<String>, bool) {
    let (_, payload) =
        knowcode_json(&["search", name, "--json", "--store", root.to_str().unwrap()]);
    let ids = payload["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect();
    (ids, payload["freshness"]["is_stale"] == true)
}

#[test]
fn watch_follows_edits_additions_and_deletions() {
    let repo = copy_fixture("python");
    let root = repo.path().to_path_buf();
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .args(["watch", root.to_str().unwrap(), "--no-embed"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = ChildGuard(child);
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let first = lines
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap();
    assert!(first.contains("generation"), "{first}");

    let pricing = root.join("shop/pricing.py");
    let mut text = std::fs::read_to_string(&pricing).unwrap();
    text.push_str("\n\ndef watched_edit(x):\n    return x\n");
    std::fs::write(&pricing, text).unwrap();
    wait_until(30, "the edit to be indexed", || {
        search_ids(&root, "watched_edit")
            .0
            .first()
            .map(String::as_str)
            == Some("shop/pricing.py::watched_edit")
    });
    std::fs::write(
        root.join("shop/added.py"),
        "def watched_addition():\n    return 2\n",
    )
    .unwrap();
    wait_until(30, "the new file to be indexed", || {
        search_ids(&root, "watched_addition")
            .0
            .first()
            .map(String::as_str)
            == Some("shop/added.py::watched_addition")
    });
    std::fs::remove_file(root.join("shop/added.py")).unwrap();
    wait_until(30, "the deletion to be indexed", || {
        !search_ids(&root, "watched_addition")
            .0
            .contains(&"shop/added.py::watched_addition".to_string())
    });
    wait_until(10, "freshness to report the index current", || {
        !search_ids(&root, "watched_edit").1
    });
}

#[test]
fn mcp_watch_rebuilds_in_the_background_without_touching_stdout() {
    common::require_model();
    let repo = copy_fixture("python");
    let root = repo.path();
    index_json(root, &[]);
    let mut mcp = RawMcp::start_with(root, &["--watch"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::fs::write(
        root.join("shop/watched.py"),
        "def seen_by_the_server():\n    return 3\n",
    )
    .unwrap();
    wait_until(
        60,
        "the MCP server's watcher to publish the new file",
        || {
            let (is_error, payload) = mcp.call(
                "knowcode_retrieve",
                json!({"action": "search", "query": "seen_by_the_server"}),
            );
            !is_error && payload["results"][0]["id"] == "shop/watched.py::seen_by_the_server"
        },
    );
    assert!(mcp.alive());
}

#[test]
fn rest_api_serves_the_mcp_payloads_over_loopback() {
    let repo = copy_fixture("python");
    let root = repo.path();
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .args([
            "serve",
            "--store",
            root.to_str().unwrap(),
            "--port",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = ChildGuard(child);
    wait_until(30, "the REST server", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });

    let (status, body) = http(port, "GET", "/api/v1/stats", "");
    assert_eq!(status, 412, "{body}");
    assert_eq!(body["code"], "missing_knowledge_store");
    assert!(body["hint"].as_str().is_some());
    let (status, health) = http(port, "GET", "/api/v1/health", "");
    assert_eq!((status, &health["index_ready"]), (200, &json!(false)));

    index_json(root, &["--no-embed"]);
    let (status, search) = http(port, "GET", "/api/v1/search?q=round_cents", "");
    assert_eq!(status, 200);
    let (_, cli_search) = knowcode_json(&[
        "search",
        "round_cents",
        "--json",
        "--store",
        root.to_str().unwrap(),
    ]);
    assert_eq!(search, cli_search, "REST and MCP/CLI payloads are the same");
    for path in [
        "/api/v1/stats",
        "/api/v1/freshness",
        "/api/v1/context?target=Cart.total",
        "/api/v1/trace/shop%2Fpricing.py::apply_discount?direction=callers&depth=2",
        "/api/v1/impact/round_cents",
        "/openapi.json",
    ] {
        let (status, body) = http(port, "GET", path, "");
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (_, impact) = http(port, "GET", "/api/v1/impact/round_cents", "");
    assert!(
        impact["files"]
            .as_array()
            .unwrap()
            .contains(&json!("shop/cart.py")),
        "{impact}"
    );
    let (_, openapi) = http(port, "GET", "/openapi.json", "");
    assert!(openapi["paths"]["/api/v1/context/query"]["post"].is_object());
    let (status, query) = http(
        port,
        "POST",
        "/api/v1/context/query",
        r#"{"query":"apply a discount"}"#,
    );
    assert_eq!(status, 200, "{query}");
    assert!(query["total_tokens"].as_u64().unwrap() <= 4000);
    assert_eq!(
        http(port, "GET", "/api/v1/trace/nothing_like_this", "").0,
        404
    );
    assert_eq!(
        http(port, "POST", "/api/v1/context/query", "{not json").0,
        400
    );
    assert_eq!(
        http(port, "GET", "/api/v1/search?q=x&limit=many", "").0,
        400
    );
}

/// A one-shot chat server: answers every request with `reply` and hands the raw requests
/// back.
fn chat_server(reply: &'static str) -> (u16, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let _ = tx.send(format!("{head}{}", String::from_utf8_lossy(&body)));
            let answer = json!({"choices": [{"message": {"role": "assistant", "content": reply}}]})
                .to_string();
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            )
            .unwrap();
        }
    });
    (port, rx)
}

#[test]
fn ask_answers_locally_when_sufficient_and_otherwise_asks_the_configured_model() {
    let repo = copy_fixture("python");
    let root = repo.path();
    index_json(root, &["--no-embed"]);
    let (port, requests) = chat_server("apply_discount lowers the amount by a percentage.");
    let config = |threshold: f64| {
        std::fs::write(
            root.join("aimodels.yaml"),
            format!(
                "config:\n  sufficiency_threshold: {threshold}\nchat:\n  endpoint: http://127.0.0.1:{port}/v1\n  model: test-model\n  api_key_env: KNOWCODE_TEST_CHAT_KEY\n"
            ),
        )
        .unwrap();
    };
    let store = root.to_str().unwrap();
    let ask = || {
        let out = knowcode(
            &[
                "ask",
                "how is a discount applied to an amount?",
                "--store",
                store,
                "--json",
            ],
            &[("KNOWCODE_TEST_CHAT_KEY", "test-key-123")],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };

    config(0.0);
    let local = ask();
    assert_eq!(local["answered_by"], "local", "{local}");
    assert!(local["answer"].as_str().unwrap().contains("apply_discount"));
    assert!(
        requests.try_recv().is_err(),
        "nothing is sent when the context suffices"
    );

    config(1.0);
    let remote = ask();
    assert_eq!(remote["answered_by"], "chat", "{remote}");
    assert_eq!(
        remote["answer"],
        "apply_discount lowers the amount by a percentage."
    );
    let request = requests
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    assert!(
        request.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer test-key-123")
    );
    let body: Value =
        serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["model"], "test-model");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("how is a discount applied") && user.contains("apply_discount"),
        "{user}"
    );
}
