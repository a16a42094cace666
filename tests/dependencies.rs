//! The project's dependencies through the real binary, with real packages: the Cargo registry
//! sources this build fetched, the Python packages `scripts/test` installed into its virtualenv
//! from PyPI, npm packages when `npm` can install them, the Go standard library when Go's
//! sources are installed (`scripts/test` installs Debian's) and the Go module cache when `go`
//! is (otherwise said and skipped). Discovery, versions, what is missing and how to fetch it, a
//! second project reusing a package's index, `search` by a dependency's qualified name, `scope`
//! answers without machine paths, and bad input reported per dependency while the project
//! still indexes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A knowcode cache of the test's own, with the model and runtime the setup installed.
struct Cache {
    dir: tempfile::TempDir,
    model: PathBuf,
    runtime: PathBuf,
}

impl Cache {
    fn new() -> Cache {
        Cache {
            dir: tempfile::tempdir().unwrap(),
            model: knowcode::config::Config::default().model_dir(),
            runtime: knowcode::config::onnxruntime_library(),
        }
    }

    fn run(&self, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
        let mut envs = vec![
            ("KNOWCODE_CACHE", self.dir.path().to_str().unwrap()),
            ("KNOWCODE_MODEL_DIR", self.model.to_str().unwrap()),
            ("ORT_DYLIB_PATH", self.runtime.to_str().unwrap()),
        ];
        envs.extend_from_slice(extra);
        common::knowcode(args, &envs)
    }

    fn json(&self, args: &[&str], extra: &[(&str, &str)]) -> Value {
        let out = self.run(args, extra);
        assert!(
            out.status.success(),
            "knowcode {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON object")
    }

    /// `search` or `query` of `text` on the project at `root`, with `--scope scope`.
    fn scoped(
        &self,
        action: &str,
        text: &str,
        root: &str,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> Value {
        self.json(
            &[action, text, "--store", root, "--scope", scope, "--json"],
            extra,
        )
    }

    /// Whether any payload text holds a path of this machine.
    fn assert_no_machine_path(&self, payload: &Value, project: &Path) {
        let text = payload.to_string();
        for machine in [
            self.dir.path().to_str().unwrap(),
            project.to_str().unwrap(),
            std::env::var("HOME").unwrap_or_default().as_str(),
            ".cargo/registry",
            "site-packages",
            "node_modules",
            "/usr/",
        ] {
            assert!(
                machine.is_empty() || !text.contains(machine),
                "{machine} in {payload}"
            );
        }
    }
}

/// The version this crate's own Cargo.lock resolved for `name`.
fn locked_version(name: &str) -> String {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let marker = format!("name = \"{name}\"\nversion = \"");
    let start = lock.find(&marker).expect("locked") + marker.len();
    lock[start..].split('"').next().unwrap().to_string()
}

/// Writes `text` to `rel` under `root`, making its folders.
fn write_in(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A temporary project holding `files` (paths relative to it).
fn project_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        write_in(dir.path(), rel, text);
    }
    dir
}

/// A Rust project depending on `itoa` (as this build locked it, so its sources are in the
/// registry) and on a crate nobody fetched.
fn rust_project(itoa: &str) -> tempfile::TempDir {
    let registry = "registry+https://github.com/rust-lang/crates.io-index";
    project_with(&[
        (
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\nnever-fetched-crate = \"9\"\n",
        ),
        (
            "Cargo.lock",
            &format!(
                "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"itoa\", \"never-fetched-crate\"]\n\n[[package]]\nname = \"itoa\"\nversion = \"{itoa}\"\nsource = \"{registry}\"\n\n[[package]]\nname = \"never-fetched-crate\"\nversion = \"9.9.9\"\nsource = \"{registry}\"\n"
            ),
        ),
        (
            "src/main.rs",
            "/// Prints an invoice number with itoa.\nfn print_invoice_number(n: u64) {\n    let mut buffer = itoa::Buffer::new();\n    println!(\"{}\", buffer.format(n));\n}\n\nfn main() {\n    print_invoice_number(7);\n}\n",
        ),
    ])
}

fn path(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

#[test]
fn cargo_dependencies_are_found_indexed_once_and_searched_by_qualified_name() {
    common::require_model();
    let cache = Cache::new();
    let itoa = locked_version("itoa");
    let project = rust_project(&itoa);
    let root = path(project.path());

    // Discovery: versions from Cargo.lock, sources from the registry, the rest missing.
    let listed = cache.json(&["deps", root, "--list", "--json"], &[]);
    let indexed = listed["indexed"].as_array().unwrap();
    assert_eq!(indexed.len(), 1, "{listed}");
    assert_eq!(indexed[0]["name"], "itoa");
    assert_eq!(indexed[0]["version"], itoa.as_str());
    assert_eq!(indexed[0]["outcome"], "not_indexed");
    let missing = &listed["missing"][0];
    assert_eq!(missing["name"], "never-fetched-crate", "{listed}");
    assert_eq!(missing["version"], "9.9.9");
    assert_eq!(missing["fetch"], "cargo fetch");

    // `index` builds the project, then its dependencies on the lexical plane.
    let out = cache.run(&["index", root, "--json"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("dependencies: 1 indexed (1 built now") && said.contains("cargo fetch"),
        "{said}"
    );
    let stats = cache.json(&["inspect", "stats", "--store", root, "--json"], &[]);
    let dependency = &stats["dependencies"]["indexed"][0];
    assert_eq!(dependency["kind"], "lexical", "{stats}");
    assert_eq!(dependency["outcome"], "indexed", "{stats}");
    assert!(dependency["entities"].as_u64().unwrap() > 5, "{stats}");
    assert!(dependency["bytes"].as_u64().unwrap() > 1000, "{stats}");

    // doctor checks the cache and names what is missing.
    let out = cache.run(&["doctor", "--store", root, "--json"], &[]);
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = common::doctor_check(&doctor, "dependencies");
    assert_eq!(check["status"], "warn", "{check}");
    let message = check["message"].as_str().unwrap();
    assert!(
        message.starts_with("1 of 1 dependencies indexed")
            && message.contains("never-fetched-crate missing (cargo fetch)"),
        "{check}"
    );

    // `knowcode deps` adds vectors (once), and a second project locking the same version
    // reuses them: nothing is embedded again.
    let embedded = cache.json(&["deps", root, "--json"], &[]);
    assert_eq!(embedded["indexed"][0]["outcome"], "built", "{embedded}");
    assert_eq!(embedded["indexed"][0]["kind"], "full", "{embedded}");
    let second = rust_project(&itoa);
    let again = cache.json(&["deps", path(second.path()), "--json"], &[]);
    assert_eq!(again["indexed"][0]["outcome"], "reused", "{again}");

    // `search` by the qualified name a caller writes, scoped to dependencies.
    let found = cache.scoped("search", "itoa::Buffer::format", root, "dependencies", &[]);
    let first = &found["results"][0];
    assert_eq!(first["package"], format!("itoa@{itoa}"), "{found}");
    assert_eq!(first["id"], "src/lib.rs::Buffer.format", "{found}");
    cache.assert_no_machine_path(&found, project.path());
    // A crate the project does not depend on answers nothing, and the hint names the
    // indexed ones instead of another crate's `format`.
    let absent = cache.scoped("search", "ryu::Buffer::format", root, "dependencies", &[]);
    assert_eq!(absent["results"], serde_json::json!([]), "{absent}");
    let hint = absent["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("no dependency named `ryu`") && hint.contains(&format!("itoa@{itoa}")),
        "{absent}"
    );
    // `semantic_search` ranks the packages and, with `all`, the project in one list.
    let ranked = cache.scoped(
        "semantic-search",
        "format an integer into decimal text in a stack buffer",
        root,
        "dependencies",
        &[],
    );
    let hits = ranked["results"].as_array().unwrap();
    assert!(!hits.is_empty(), "{ranked}");
    assert!(
        hits.iter()
            .enumerate()
            .all(|(i, h)| h["package"] == format!("itoa@{itoa}") && h["rank"] == i + 1),
        "{ranked}"
    );
    assert_eq!(ranked["packages_searched"], 1, "{ranked}");
    cache.assert_no_machine_path(&ranked, project.path());
    let both = cache.scoped(
        "semantic-search",
        "print the invoice number",
        root,
        "all",
        &[],
    );
    assert_eq!(both["packages_searched"], 2, "{both}");
    let hits = both["results"].as_array().unwrap();
    assert!(hits[0].get("package").is_none(), "{both}");
    assert!(
        hits.iter()
            .take(2)
            .any(|h| h.get("package").is_none() && h["qualified_name"] == "print_invoice_number"),
        "{both}"
    );
    assert!(hits.iter().any(|h| h.get("package").is_some()), "{both}");
    // The project's own search is unchanged (no package rows).
    let own = cache.json(
        &["search", "print_invoice_number", "--store", root, "--json"],
        &[],
    );
    assert!(own["results"][0].get("package").is_none(), "{own}");

    // `query` over both: a question about the project answers from the project; one naming the
    // dependency answers from it.
    let project_answer = cache.scoped("query", "print an invoice number", root, "all", &[]);
    assert!(project_answer.get("package").is_none(), "{project_answer}");
    assert!(
        project_answer["context_text"]
            .as_str()
            .unwrap()
            .contains("print_invoice_number"),
        "{project_answer}"
    );
    let dependency_answer = cache.scoped(
        "query",
        "how does itoa format an integer into its Buffer",
        root,
        "dependencies",
        &[],
    );
    assert_eq!(
        dependency_answer["package"],
        format!("itoa@{itoa}"),
        "{dependency_answer}"
    );
    cache.assert_no_machine_path(&dependency_answer, project.path());
}

/// The virtualenv `scripts/test` made (with packages from PyPI), when there is one.
fn test_virtualenv() -> Option<PathBuf> {
    let python = PathBuf::from(common::python());
    let venv = python.parent()?.parent()?.to_path_buf();
    venv.join("pyvenv.cfg").is_file().then_some(venv)
}

/// The version a virtualenv has installed of `name`, from its dist-info.
fn installed_version(venv: &Path, name: &str) -> String {
    let lib = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let prefix = format!("{name}-");
    let dist = std::fs::read_dir(lib.join("site-packages"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(&prefix) && n.ends_with(".dist-info"))
        .expect("installed");
    dist[prefix.len()..dist.len() - ".dist-info".len()].to_string()
}

#[test]
fn python_dependencies_come_from_the_virtualenv_and_answer_over_mcp() {
    let Some(venv) = test_virtualenv() else {
        panic!(
            "no virtualenv: run the tests with scripts/test, which installs the MCP SDK into one"
        );
    };
    let cache = Cache::new();
    let project = project_with(&[
        (
            "pyproject.toml",
            "[project]\nname = \"shop\"\nversion = \"0.1\"\ndependencies = [\"click>=8\", \"not-a-real-package-xyz==1.0\"]\n",
        ),
        (
            "cli.py",
            "import click\n\n\n@click.command()\ndef checkout():\n    \"\"\"Check the cart out and print the total.\"\"\"\n    click.echo('total')\n",
        ),
    ]);
    let venv_env = [("VIRTUAL_ENV", venv.to_str().unwrap())];
    let root = path(project.path());
    let built = cache.json(&["deps", root, "--no-embed", "--json"], &venv_env);
    let click = &built["indexed"][0];
    assert_eq!(click["name"], "click", "{built}");
    assert_eq!(click["version"], installed_version(&venv, "click").as_str());
    assert_eq!(click["outcome"], "built");
    let missing = &built["missing"][0];
    assert_eq!(missing["name"], "not-a-real-package-xyz", "{built}");
    assert!(
        missing["fetch"].as_str().unwrap().contains("pip install"),
        "{built}"
    );
    // A lockfile pins versions: the missing package's version comes from it, and an installed
    // version other than the pinned one is reported (the installed sources stay indexed).
    write_in(
        project.path(),
        "uv.lock",
        "version = 1\n\n[[package]]\nname = \"click\"\nversion = \"0.0.1\"\n\n[[package]]\nname = \"not-a-real-package-xyz\"\nversion = \"1.0\"\n",
    );
    let listed = cache.json(&["deps", root, "--list", "--json"], &venv_env);
    assert_eq!(listed["missing"][0]["version"], "1.0", "{listed}");
    assert_eq!(listed["missing"][0]["fetch"], "uv sync", "{listed}");
    let drift = listed["problems"][0]["reason"].as_str().unwrap();
    assert!(
        drift.starts_with("click: installed ") && drift.contains("uv.lock pins 0.0.1"),
        "{listed}"
    );
    assert_eq!(listed["indexed"][0]["outcome"], "indexed", "{listed}");
    std::fs::remove_file(project.path().join("uv.lock")).unwrap();

    let out = cache.run(
        &["index", root, "--no-embed", "--no-deps", "--json"],
        &venv_env,
    );
    assert!(out.status.success());
    let found = cache.scoped(
        "search",
        "click.Command.invoke",
        root,
        "dependencies",
        &venv_env,
    );
    assert_eq!(
        found["results"][0]["id"], "click/core.py::Command.invoke",
        "{found}"
    );
    cache.assert_no_machine_path(&found, project.path());

    // Over MCP: `scope` on both actions, a bad scope a typed error.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_contract.py");
    let out = Command::new(common::python())
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_knowcode"))
        .arg(root)
        .arg("dependency_scope")
        .env("KNOWCODE_CACHE", cache.dir.path())
        .env("KNOWCODE_MODEL_DIR", &cache.model)
        .env("ORT_DYLIB_PATH", &cache.runtime)
        .env("VIRTUAL_ENV", &venv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("dependency_scope: all checks passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn npm_packages_in_node_modules_are_found_at_their_installed_versions_and_their_exports_followed() {
    let Ok(npm) = Command::new("npm").arg("--version").output() else {
        println!("npm is not installed here: the npm discovery test is skipped");
        return;
    };
    assert!(npm.status.success());
    let project = tempfile::tempdir().unwrap();
    let manifest = project.path().join("package.json");
    std::fs::write(
        &manifest,
        r#"{"name":"app","version":"1.0.0","dependencies":{"ms":"2.1.3","express":"4.21.2"}}"#,
    )
    .unwrap();
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(project.path())
        .output()
        .unwrap();
    if !installed.status.success() {
        println!(
            "npm could not install ms@2.1.3 and express@4.21.2 here ({}): the npm discovery test is skipped",
            String::from_utf8_lossy(&installed.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return;
    }
    // Declared since, never installed.
    std::fs::write(
        &manifest,
        r#"{"name":"app","version":"1.0.0","dependencies":{"ms":"2.1.3","express":"4.21.2"},"devDependencies":{"left-pad-never-installed":"1.0.0"}}"#,
    )
    .unwrap();
    // A symlink loop in node_modules is not followed.
    #[cfg(unix)]
    std::os::unix::fs::symlink(".", project.path().join("node_modules/loop")).unwrap();
    let cache = Cache::new();
    let root = path(project.path());
    let built = cache.json(&["deps", root, "--no-embed", "--json"], &[]);
    let names: Vec<String> = built["indexed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{}@{}",
                i["name"].as_str().unwrap(),
                i["version"].as_str().unwrap()
            )
        })
        .collect();
    // Direct dependencies only: express's own (body-parser, router's helpers) are not indexed.
    assert_eq!(names, ["express@4.21.2", "ms@2.1.3"], "{built}");
    assert_eq!(
        built["missing"][0]["name"], "left-pad-never-installed",
        "{built}"
    );
    let everything = cache.json(
        &[
            "deps",
            root,
            "--no-embed",
            "--select",
            "all",
            "--list",
            "--json",
        ],
        &[],
    );
    assert!(
        everything["indexed"].to_string().contains("\"ms\""),
        "{everything}"
    );
    cache.run(&["index", root, "--no-embed", "--no-deps"], &[]);
    let found = cache.scoped("search", "ms.parse", root, "dependencies", &[]);
    assert_eq!(found["results"][0]["id"], "index.js::parse", "{found}");
    assert_eq!(found["results"][0]["package"], "ms@2.1.3");
    // express.Router is `exports.Router = Router` with `Router = require('./router')`: the
    // export is followed to the file that defines it.
    let router = cache.scoped("search", "express.Router", root, "dependencies", &[]);
    assert_eq!(
        router["results"][0]["id"], "lib/router/index.js",
        "{router}"
    );
    assert_eq!(router["results"][0]["package"], "express@4.21.2");
    // express.json is body-parser's (another package), not the response's own `json` method:
    // the answer is the file that exports it.
    let json = cache.scoped("search", "express.json", root, "dependencies", &[]);
    assert_eq!(json["results"][0]["id"], "lib/express.js", "{json}");
    cache.assert_no_machine_path(&router, project.path());

    // A package whose index can no longer be read is named in the answer's errors; the
    // answer still comes.
    let generations = cache
        .dir
        .path()
        .join("deps/npm/express@4.21.2/.knowcode/generations");
    for generation in std::fs::read_dir(&generations).unwrap().flatten() {
        std::fs::remove_dir_all(generation.path().join("lance")).unwrap();
    }
    let answer = cache.scoped(
        "query",
        "how does express route a request to its handler",
        root,
        "all",
        &[],
    );
    assert!(answer.get("package").is_none(), "{answer}");
    assert!(
        answer["errors"].to_string().contains("express@4.21.2"),
        "{answer}"
    );
}

/// The installed Go's sources, as discovery looks for them.
fn go_sources() -> Option<PathBuf> {
    let env = std::env::var_os("GOROOT").map(PathBuf::from);
    let usual = ["/usr/local/go", "/usr/lib/go", "/usr/share/go"].map(PathBuf::from);
    env.into_iter()
        .chain(usual)
        .find(|root| root.join("src/net/http/request.go").is_file())
}

#[test]
fn go_standard_library_packages_the_project_imports_are_indexed_from_the_installed_go() {
    if go_sources().is_none() {
        println!(
            "no Go sources here ($GOROOT, /usr/local/go, /usr/lib/go, /usr/share/go): the Go standard library test is skipped"
        );
        return;
    }
    let project = project_with(&[
        ("go.mod", "module example.com/app\n\ngo 1.19\n"),
        (
            "main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n// Fetch builds the request for a page.\nfunc Fetch(url string) {\n\treq, _ := http.NewRequest(\"GET\", url, nil)\n\tfmt.Println(req)\n}\n",
        ),
    ]);
    let cache = Cache::new();
    let root = path(project.path());
    let built = cache.json(&["deps", root, "--no-embed", "--json"], &[]);
    let names: Vec<&str> = built["indexed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fmt", "net/http"], "{built}");
    assert!(
        built["indexed"][1]["version"]
            .as_str()
            .unwrap()
            .starts_with("go1."),
        "{built}"
    );
    cache.run(&["index", root, "--no-embed", "--no-deps"], &[]);
    let found = cache.scoped("search", "http.NewRequest", root, "dependencies", &[]);
    assert_eq!(
        found["results"][0]["id"], "request.go::NewRequest",
        "{found}"
    );
    assert!(
        found["results"][0]["package"]
            .as_str()
            .unwrap()
            .starts_with("net/http@go1."),
        "{found}"
    );
    cache.assert_no_machine_path(&found, project.path());
}

#[test]
fn go_modules_are_found_in_the_module_cache_when_go_is_here() {
    if Command::new("go").arg("version").output().is_err() {
        println!(
            "go is not installed here: the Go module cache test is skipped (go.mod parsing is unit-tested)"
        );
        return;
    }
    let project = project_with(&[(
        "go.mod",
        "module example.com/app\n\ngo 1.21\n\nrequire github.com/never/fetched v1.0.0\n",
    )]);
    let cache = Cache::new();
    let listed = cache.json(
        &["deps", path(project.path()), "--list", "--json"],
        &[("GOFLAGS", "-mod=mod")],
    );
    assert_eq!(listed["missing"][0]["fetch"], "go mod download", "{listed}");
}

#[test]
fn bad_manifests_and_deleted_packages_are_reported_while_the_project_still_indexes() {
    let cache = Cache::new();
    let project = common::copy_fixture("rust");
    let root = project.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\n\n[dependencies]\nmini = \"1\"\n",
    )
    .unwrap();
    std::fs::write(root.join("Cargo.lock"), "this is [not toml").unwrap();
    std::fs::write(root.join("package.json"), "{ not json").unwrap();
    let out = cache.run(&["index", path(root), "--no-embed", "--json"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("2 unreadable manifest(s)"), "{said}");
    let stats = cache.json(&["inspect", "stats", "--store", path(root), "--json"], &[]);
    let problems = stats["dependencies"]["problems"].to_string();
    assert!(
        problems.contains("Cargo.lock does not parse") && problems.contains("package.json"),
        "{stats}"
    );

    // A vendored crate (with a file that is not UTF-8) indexed, then deleted: reported missing.
    let registry = "registry+https://github.com/rust-lang/crates.io-index";
    std::fs::write(
        root.join("Cargo.lock"),
        format!("version = 4\n\n[[package]]\nname = \"fixture\"\nversion = \"0.1.0\"\ndependencies = [\"mini\"]\n\n[[package]]\nname = \"mini\"\nversion = \"1.0.0\"\nsource = \"{registry}\"\n"),
    )
    .unwrap();
    std::fs::remove_file(root.join("package.json")).unwrap();
    let vendored = root.join("vendor/mini-1.0.0");
    write_in(
        &vendored,
        "Cargo.toml",
        "[package]\nname = \"mini\"\nversion = \"1.0.0\"\n",
    );
    write_in(
        &vendored,
        "src/lib.rs",
        "/// Doubles.\npub fn twice(x: u32) -> u32 {\n    x * 2\n}\n",
    );
    write_in(
        &vendored,
        "src/latin1.rs",
        b"// caf\xe9\npub fn cafe() {}\n",
    );
    let built = cache.json(&["deps", path(root), "--no-embed", "--json"], &[]);
    assert_eq!(built["indexed"][0]["outcome"], "built", "{built}");
    assert_eq!(built["indexed"][0]["name"], "mini");
    std::fs::remove_dir_all(root.join("vendor")).unwrap();
    let stats = cache.json(&["inspect", "stats", "--store", path(root), "--json"], &[]);
    let missing = &stats["dependencies"]["missing"][0];
    assert_eq!(missing["name"], "mini", "{stats}");
    assert_eq!(missing["fetch"], "cargo fetch");
    let answer = cache.json(
        &["search", "total_area", "--store", path(root), "--json"],
        &[],
    );
    assert!(
        answer["total"].as_u64().unwrap() > 0,
        "the project still answers: {answer}"
    );
}

#[test]
fn sibling_repositories_answer_with_scope_all_each_row_naming_its_repo() {
    let cache = Cache::new();
    let workspace = tempfile::tempdir().unwrap();
    let project = workspace.path().join("shop");
    let sibling = workspace.path().join("kvstore");
    let unindexed = workspace.path().join("docs-site");
    common::copy_dir(&common::fixtures().join("python"), &project);
    common::copy_dir(&common::fixtures().join("go"), &sibling);
    std::fs::create_dir_all(&unindexed).unwrap();
    for repo in [&project, &sibling] {
        let out = cache.run(&["index", path(repo), "--no-embed", "--json"], &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(
        project.join("aimodels.yaml"),
        "workspace:\n  roots: [../kvstore, ../docs-site]\n",
    )
    .unwrap();
    let root = path(&project);

    // `search` over the workspace: the sibling's rows name it, the project's do not.
    let found = cache.scoped("search", "normalize", root, "all", &[]);
    let first = &found["results"][0];
    assert_eq!(first["repo"], "kvstore", "{found}");
    assert_eq!(first["id"], "store/store.go::normalize", "{found}");
    assert!(
        found["hint"].as_str().unwrap().contains("docs-site"),
        "an unindexed root is named: {found}"
    );
    let own = cache.scoped("search", "round_cents", root, "all", &[]);
    assert!(own["results"][0].get("repo").is_none(), "{own}");
    cache.assert_no_machine_path(&found, &project);

    // `query`: a question about the sibling answers from it, with its own freshness.
    let answer = cache.scoped(
        "query",
        "how does Store.Get normalize the key before the lookup",
        root,
        "all",
        &[],
    );
    assert_eq!(answer["repo"], "kvstore", "{answer}");
    let sibling_generation = cache.json(
        &["inspect", "freshness", "--store", path(&sibling), "--json"],
        &[],
    );
    assert_eq!(
        answer["freshness"]["generation_id"], sibling_generation["generation_id"],
        "{answer}"
    );
    // `inspect freshness` reports each root of the workspace against its own tree.
    let freshness = cache.json(&["inspect", "freshness", "--store", root, "--json"], &[]);
    let roots = freshness["workspace"].as_array().unwrap();
    assert_eq!(roots[0]["repo"], "kvstore", "{freshness}");
    assert_eq!(
        roots[0]["freshness"]["generation_id"], sibling_generation["generation_id"],
        "{freshness}"
    );
    assert_eq!(roots[1]["repo"], "docs-site", "{freshness}");
    assert!(roots[1].get("freshness").is_none(), "{freshness}");
    // A question about the project still answers from the project; `project` scope ignores
    // the workspace.
    let own_answer = cache.scoped(
        "query",
        "apply a percentage discount to an amount",
        root,
        "all",
        &[],
    );
    assert!(own_answer.get("repo").is_none(), "{own_answer}");
    let project_only = cache.json(&["search", "normalize", "--store", root, "--json"], &[]);
    assert_eq!(project_only["total"], 0, "{project_only}");
    // The same sibling from the command line.
    std::fs::remove_file(project.join("aimodels.yaml")).unwrap();
    let flagged = cache.json(
        &[
            "search",
            "normalize",
            "--store",
            root,
            "--scope",
            "all",
            "--workspace-root",
            path(&sibling),
            "--json",
        ],
        &[],
    );
    assert_eq!(flagged["results"][0]["repo"], "kvstore", "{flagged}");
}
