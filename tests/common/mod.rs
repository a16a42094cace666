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

/// Writes `files` (path, text) under a fresh folder.
pub fn write_project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// [`write_project`], indexed on the lexical plane (no model needed).
pub fn lexical_repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let repo = write_project(files);
    index_json(repo.path(), &["--no-embed"]);
    repo
}

/// Runs the real `knowcode` binary.
pub fn knowcode(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_knowcode"));
    command
        .args(args)
        .env_remove("KNOWCODE_FAIL_STAGE")
        .env_remove("KNOWCODE_TEST_EMBED_FAIL_ON")
        .env_remove("KNOWCODE_TEST_EMBED_PANIC_ON");
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
    knowcode_ok_json(&args)
}

/// Runs the real binary, asserting success; returns stdout parsed as one JSON object.
pub fn knowcode_ok_json(args: &[&str]) -> serde_json::Value {
    let out = knowcode(args, &[]);
    assert!(
        out.status.success(),
        "knowcode {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// The check called `name` in a `doctor --json` report.
pub fn doctor_check<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .expect("a checks list")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {report}"))
}

/// Fails with a clear message when the model has not been installed by scripts/setup.
pub fn require_model() {
    let config = knowcode::config::Config::default();
    if let Some(problem) = knowcode::embed::model_problem(&config) {
        panic!("the embedding model is required for this test ({problem}); run scripts/setup");
    }
}

/// A raw JSON-RPC client of `knowcode mcp` over stdio: sends arbitrary bytes, reads every
/// stdout line (each must be a JSON-RPC message) on a background thread.
pub struct RawMcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    next_id: u64,
}

impl RawMcp {
    /// Starts `knowcode mcp --store <root>` and completes the initialize handshake.
    pub fn start(root: &Path) -> RawMcp {
        Self::start_with(root, &[])
    }

    /// Like [`RawMcp::start`], with extra `mcp` arguments (e.g. `--watch`).
    pub fn start_with(root: &Path, extra: &[&str]) -> RawMcp {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = Command::new(env!("CARGO_BIN_EXE_knowcode"))
            .args(["mcp", "--store", root.to_str().unwrap()])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("knowcode mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = RawMcp {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw-test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    /// Writes one line (a newline is appended).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next stdout line as JSON; panics when it is not a JSON-RPC 2.0 message.
    pub fn next_message(&mut self) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the server answers within 120 s");
        let message: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:.200}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line:.200}");
        message
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        let message =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(message.to_string().as_bytes());
        loop {
            let answer = self.next_message();
            if answer["id"] == id {
                return answer;
            }
        }
    }

    /// Calls a tool; returns (isError, the payload parsed from its one text item).
    pub fn call(&mut self, tool: &str, arguments: serde_json::Value) -> (bool, serde_json::Value) {
        let answer = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": arguments}),
        );
        let result = &answer["result"];
        assert!(
            result.is_object(),
            "tools/call failed at protocol level: {answer}"
        );
        let text = result["content"][0]["text"].as_str().unwrap_or("null");
        let payload = serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
        (result["isError"] == true, payload)
    }

    /// True while the server process runs.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for RawMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 request over a real socket: (status, JSON body).
pub fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("server listens");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (
        status,
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

/// Kills a spawned child when dropped.
pub struct ChildGuard(pub std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `probe` every 200 ms for up to `seconds`; panics with `what` when it never holds.
pub fn wait_until(seconds: u64, what: &str, mut probe: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::time::Instant::now() < deadline {
        if probe() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("timed out waiting for {what}");
}

/// `knowcode <args> --json`-style call returning stdout parsed as JSON (any exit code).
pub fn knowcode_json(args: &[&str]) -> (bool, serde_json::Value) {
    let out = knowcode(args, &[]);
    let value = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.success(), value)
}

/// The Python with the MCP SDK: `KNOWCODE_TEST_PYTHON`, else the venv scripts/test makes.
pub fn python() -> String {
    std::env::var("KNOWCODE_TEST_PYTHON").unwrap_or_else(|_| {
        let venv = knowcode::config::cache_dir().join("py/bin/python");
        if venv.is_file() {
            venv.to_string_lossy().into_owned()
        } else {
            "python3".into()
        }
    })
}

/// Runs `tests/<script>` with the MCP SDK's Python against the real binary and a copy of the
/// python fixture (`<script> <bin> <repo> [args]`); asserts it exits 0 and returns its stdout.
pub fn run_mcp_script(script: &str, args: &[&str]) -> String {
    run_mcp_script_with(script, args, &[])
}

/// [`run_mcp_script`] with extra environment variables for the script and its servers.
pub fn run_mcp_script_with(script: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    require_model();
    let repo = copy_fixture("python");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let out = Command::new(python())
        .arg(&path)
        .arg(env!("CARGO_BIN_EXE_knowcode"))
        .arg(repo.path())
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .expect("python runs (scripts/test installs the MCP SDK)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// Runs git in `dir` as a fixed test identity.
pub fn git(dir: &Path, args: &[&str]) {
    git_at(dir, args, None);
}

/// Runs git in `dir` as a fixed test identity; `at` (seconds since the epoch) pins the author
/// and committer dates, so a scripted history has a known order.
pub fn git_at(dir: &Path, args: &[&str], at: Option<i64>) {
    let mut command = Command::new("git");
    command
        .args(["-c", "user.name=Tester", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null());
    if let Some(at) = at {
        let date = format!("@{at} +0000");
        command
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date);
    }
    let status = command.status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}
