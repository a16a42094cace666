//! The dependency rule of `docs/ARCHITECTURE.md`, checked against the code: each top-level
//! module may name (`crate::<module>`) only the modules below it. Comments and string
//! literals are not code and are skipped. Also: only `store/` talks to LanceDB and Arrow, and
//! library functions return typed errors (no `String` errors, no public `anyhow::Result`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module and the modules it may use. Layers, bottom up: foundation (`error`, `text`,
/// `config`); the build stages in pipeline order (`walk → parse → graph → chunk → embed →
/// store`), each using only earlier stages; `index`, which drives them; `retrieve`, which
/// reads what `store` published and never builds; then the two top layers: `ops` (operating
/// an index) and `serve` (the surfaces). `serve` calls into `ops`; `ops` knows of `serve`
/// only its contract (`doctor --mcp` is a client of the tools and needs their names).
/// The read side has two floors: `load` opens the current generation (overlay, freshness)
/// and never names `retrieve`; `retrieve` ranks and packs what `load` hands it.
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("text", &[]),
    ("config", &["error"]),
    ("walk", &["error", "text", "config"]),
    ("parse", &["error", "text", "config", "walk"]),
    ("graph", &["error", "text", "config", "walk", "parse"]),
    (
        "chunk",
        &["error", "text", "config", "walk", "parse", "graph"],
    ),
    (
        "embed",
        &["error", "text", "config", "walk", "parse", "graph", "chunk"],
    ),
    (
        "store",
        &[
            "error", "text", "config", "walk", "parse", "graph", "chunk", "embed",
        ],
    ),
    (
        "index",
        &[
            "error", "text", "config", "walk", "parse", "graph", "chunk", "embed", "store",
        ],
    ),
    (
        "load",
        &[
            "error", "text", "config", "walk", "parse", "graph", "chunk", "embed", "store", "index",
        ],
    ),
    (
        "retrieve",
        &[
            "error", "text", "config", "walk", "parse", "graph", "chunk", "embed", "store",
            "index", "load",
        ],
    ),
    (
        "ops",
        &[
            "error",
            "text",
            "config",
            "walk",
            "parse",
            "graph",
            "chunk",
            "embed",
            "store",
            "index",
            "load",
            "retrieve",
            "serve::contract",
        ],
    ),
    (
        "serve",
        &[
            "error", "text", "config", "walk", "parse", "graph", "chunk", "embed", "store",
            "index", "load", "retrieve", "ops",
        ],
    ),
];

/// The line without its `//` comment and with string literals emptied.
fn code_of(line: &str) -> String {
    let mut code = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => break,
            _ if !in_string => code.push(c),
            _ => {}
        }
    }
    code
}

/// Every `crate::<module>[::<submodule>]` a source tree names in code.
fn used_modules(dir: &Path) -> BTreeSet<(String, String)> {
    let pattern = regex::Regex::new(r"\bcrate::([a-z_]+)(?:::([a-z_]+))?").unwrap();
    let mut used = BTreeSet::new();
    let files: Vec<_> = if dir.is_dir() {
        walk_rs(dir)
    } else {
        vec![dir.with_extension("rs")]
    };
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            for capture in pattern.captures_iter(&code_of(line)) {
                let module = capture[1].to_string();
                let sub = capture.get(2).map_or("", |m| m.as_str()).to_string();
                used.insert((module, sub));
            }
        }
    }
    used
}

fn walk_rs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (module, allowed) in ALLOWED {
        for (used, sub) in used_modules(&src.join(module)) {
            let ok = used == *module
                || allowed.contains(&used.as_str())
                || allowed.contains(&format!("{used}::{sub}").as_str());
            if !ok {
                violations.push(format!("{module} uses crate::{used}::{sub}"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_rule_covers_every_module_of_the_crate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let ruled: BTreeSet<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    assert_eq!(declared, ruled);
}

/// Every library source file (not the binary's `main.rs` and `cli.rs`), with its path.
fn library_files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    walk_rs(&src)
        .into_iter()
        .filter(|p| !p.ends_with("main.rs") && !p.ends_with("cli.rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.strip_prefix(&src).unwrap().display().to_string();
            (name, text)
        })
        .collect()
}

#[test]
fn only_the_store_reads_lancedb_arrow_object_store_and_rustls() {
    let pattern =
        regex::Regex::new(r"\b(lancedb|arrow_array|arrow_schema|object_store|rustls)::").unwrap();
    let offenders: Vec<String> = library_files()
        .into_iter()
        .filter(|(name, _)| !name.starts_with("store/") && name != "error.rs")
        .filter(|(_, text)| text.lines().any(|l| pattern.is_match(&code_of(l))))
        .map(|(name, _)| name)
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

/// One TLS stack in the build: rustls, in one version, on ring. Turning on lancedb's (or
/// object_store's) `aws` feature would add aws-lc-rs beside ring; a default reqwest, OpenSSL.
#[test]
fn the_lockfile_holds_one_tls_stack() {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let packages: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    for second in [
        "aws-lc-rs",
        "aws-lc-sys",
        "openssl",
        "openssl-sys",
        "native-tls",
    ] {
        assert!(!packages.contains(&second), "{second} is in Cargo.lock");
    }
    let rustls = packages.iter().filter(|p| **p == "rustls").count();
    assert_eq!(rustls, 1, "rustls in {rustls} versions");
    assert!(packages.contains(&"ring"));
}

#[test]
fn library_errors_are_typed() {
    let string_error = regex::Regex::new(r"Result<[^;{]*,\s*String>").unwrap();
    let public_anyhow =
        regex::Regex::new(r"pub(\([a-z]+\))?\s+(async\s+)?fn[^{;]*anyhow::Result").unwrap();
    let mut offenders = Vec::new();
    for (name, text) in library_files() {
        let code: String = text.lines().map(|l| code_of(l) + "\n").collect();
        if string_error.is_match(&code) {
            offenders.push(format!("{name}: a String error"));
        }
        if public_anyhow.is_match(&code) {
            offenders.push(format!(
                "{name}: a public function returning anyhow::Result"
            ));
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The files of one flat module folder (its `mod.rs` left out: the surface re-exports what
/// the files define) and, for each, the sibling files it names in code: `super::file`,
/// `super::{file, …}` (to the end of the `use`) and `crate::<module>::file`, tests included.
fn sibling_uses(module: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module);
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let path = regex::Regex::new(&format!(
        r"\b(?:super::(?:super::)?|crate::{module}::)(\{{[^;]*|[a-z_]+)"
    ))
    .unwrap();
    let word = regex::Regex::new(r"\b[a-z_]+\b").unwrap();
    let mut uses = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(dir.join(format!("{file}.rs"))).unwrap();
        let code: String = text.lines().map(|l| code_of(l) + "\n").collect();
        let named: BTreeSet<String> = path
            .captures_iter(&code)
            .flat_map(|c| {
                word.find_iter(c.get(1).unwrap().as_str())
                    .map(|m| m.as_str().to_string())
                    .collect::<Vec<_>>()
            })
            .filter(|w| w != file && files.contains(w))
            .collect();
        uses.insert(file.clone(), named);
    }
    uses
}

/// A circle among `uses`, as the files walked, if there is one.
fn circle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        file: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|f| f == file) {
            let mut found = path[at..].to_vec();
            found.push(file.to_string());
            return Some(found);
        }
        if done.contains(file) {
            return None;
        }
        path.push(file.to_string());
        for next in uses.get(file).into_iter().flatten() {
            if let Some(found) = visit(next, uses, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(file.to_string());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|file| visit(file, uses, &mut Vec::new(), &mut done))
}

/// Loading and ranking each read bottom up: no two files of `load/` or of `retrieve/` use
/// each other, directly or around a longer circle, so shared types live below both users.
#[test]
fn the_files_of_load_and_retrieve_form_no_circles() {
    for module in ["load", "retrieve"] {
        let uses = sibling_uses(module);
        assert!(uses.len() > 3, "{module}: {uses:?}");
        assert_eq!(circle(&uses), None, "{module}");
    }
}

/// The checker sees a circle when there is one.
#[test]
fn a_circle_of_files_is_found() {
    let uses: BTreeMap<String, BTreeSet<String>> = [
        ("rank", &["hit", "rescore"][..]),
        ("rescore", &["rank"][..]),
        ("hit", &[][..]),
    ]
    .into_iter()
    .map(|(f, u)| (f.to_string(), u.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(
        circle(&uses),
        Some(vec!["rank".into(), "rescore".into(), "rank".into()])
    );
}

/// `retrieve/mod.rs` is the surface and the request types, not the actions.
#[test]
fn the_retrieve_surface_stays_small() {
    let surface = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/retrieve/mod.rs");
    let lines = std::fs::read_to_string(surface).unwrap().lines().count();
    assert!(lines <= 400, "retrieve/mod.rs has {lines} lines");
}
