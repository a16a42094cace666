//! Golden files pin what each language's fixture repository yields: entities (ids, kinds,
//! spans, signatures, docs), edges (with their resolution) and chunks. Regenerate with
//! `UPDATE_GOLDEN=1 cargo test --release --test golden` and review the diff.

mod common;

use std::fmt::Write;
use std::path::Path;

use knowcode::config::Config;
use knowcode::index::{self, IndexOptions, NoProgress, Timings};

fn render(fixture: &str) -> String {
    let root = common::fixtures().join(fixture);
    let options = IndexOptions {
        root: root.clone(),
        store_dir: root,
        ignore_globs: vec![],
        embed: false,
        temporal: false,
        config: Config::default(),
    };
    let analysis = index::analyse(&options, &NoProgress, &mut Timings::default()).unwrap();
    let mut out = String::new();
    writeln!(out, "# entities").unwrap();
    for file in &analysis.parsed {
        for e in &file.entities {
            let doc = e
                .doc
                .as_deref()
                .map(|d| d.lines().next().unwrap_or(""))
                .unwrap_or("");
            writeln!(
                out,
                "{} {} [{}:{}-{}:{}] parent={} sig={:?} doc={:?}{}",
                e.kind.as_str(),
                e.id,
                e.span.start_line,
                e.span.start_col,
                e.span.end_line,
                e.span.end_col,
                e.parent.as_deref().unwrap_or("-"),
                e.signature,
                doc,
                e.subkind
                    .as_deref()
                    .map(|s| format!(" subkind={s}"))
                    .unwrap_or_default(),
            )
            .unwrap();
        }
        for issue in &file.issues {
            writeln!(
                out,
                "issue {} {:?} line {}",
                file.path, issue.kind, issue.line
            )
            .unwrap();
        }
    }
    writeln!(out, "# edges").unwrap();
    let mut edges: Vec<String> = analysis
        .graph
        .edges
        .iter()
        .map(|e| {
            format!(
                "{} {} -> {} ({}, {} candidates) @{}:{}",
                e.kind.as_str(),
                e.source,
                e.target
                    .clone()
                    .unwrap_or_else(|| format!("?{}", e.target_name)),
                e.resolution.as_str(),
                e.candidates,
                e.path,
                e.line
            )
        })
        .collect();
    edges.sort();
    for edge in edges {
        writeln!(out, "{edge}").unwrap();
    }
    writeln!(out, "# unresolved per file").unwrap();
    for (path, n) in &analysis.graph.unresolved_by_file {
        writeln!(out, "{path} {n}").unwrap();
    }
    writeln!(out, "# chunks").unwrap();
    for c in &analysis.chunks {
        let first = c.text.lines().next().unwrap_or("");
        writeln!(
            out,
            "{} [{}-{}] {} {:?}",
            c.id,
            c.start_line,
            c.end_line,
            c.kind.as_str(),
            first
        )
        .unwrap();
    }
    out
}

fn check(fixture: &str) {
    let actual = render(fixture);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{fixture}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", path.display()));
    if actual != expected {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .filter(|(e, a)| e != a)
            .take(5)
            .map(|(e, a)| format!("- {e}\n+ {a}"))
            .collect();
        panic!(
            "{fixture}: output differs from {}:\n{}",
            path.display(),
            diff.join("\n")
        );
    }
}

macro_rules! golden {
    ($($name:ident => $fixture:literal),* $(,)?) => {
        $(#[test] fn $name() { check($fixture); })*
    };
}

golden! {
    python_fixture_matches_golden => "python",
    rust_fixture_matches_golden => "rust",
    go_fixture_matches_golden => "go",
    java_fixture_matches_golden => "java",
    javascript_fixture_matches_golden => "javascript",
    typescript_fixture_matches_golden => "typescript",
    c_fixture_matches_golden => "c",
    cpp_fixture_matches_golden => "cpp",
    csharp_fixture_matches_golden => "csharp",
    ruby_fixture_matches_golden => "ruby",
    php_fixture_matches_golden => "php",
    markdown_fixture_matches_golden => "markdown",
    kotlin_fixture_matches_golden => "kotlin",
    swift_fixture_matches_golden => "swift",
    scala_fixture_matches_golden => "scala",
    lua_fixture_matches_golden => "lua",
    bash_fixture_matches_golden => "bash",
    elixir_fixture_matches_golden => "elixir",
    haskell_fixture_matches_golden => "haskell",
    zig_fixture_matches_golden => "zig",
    dart_fixture_matches_golden => "dart",
}
