//! Warm `query` latency with `scope=all` against `scope=project`, on a project whose
//! dependencies are indexed (`knowcode deps`).
//!
//! `KNOWCODE_BENCH_DEPS_STORE` names the project's store (its manifest names the tree whose
//! manifests list the dependencies; `KNOWCODE_CACHE` holds their indexes — `scripts/bench-deps`
//! prepares both on this repository). Questions about the project and questions naming one of
//! its dependencies are asked round-robin with everything loaded; p50/p95 per scope are
//! printed, then criterion times both.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use knowcode::config::Config;
use knowcode::retrieve::{QueryRequest, Retriever};

const QUESTIONS: &[&str] = &[
    "where is a working tree's overlay merged over the base generation",
    "how are generations published atomically",
    "which function reads a question's traceback frames",
    "how does eval mine tasks from merge commits",
    "spawn a task on the tokio runtime",
    "parse a JSON string with serde_json from_str",
    "discover a git repository with git2",
    "walk a directory honouring gitignore with the ignore crate",
];

/// Rounds over the questions for the percentiles.
const ROUNDS: usize = 20;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ask(runtime: &tokio::runtime::Runtime, retriever: &Retriever, question: &str, all: bool) -> f64 {
    let request = QueryRequest::new(question);
    let started = std::time::Instant::now();
    if all {
        runtime
            .block_on(retriever.query_scoped(&request, true))
            .expect("scoped query");
    } else {
        runtime.block_on(retriever.query(&request)).expect("query");
    }
    started.elapsed().as_secs_f64() * 1000.0
}

fn scoped_query_latency(c: &mut Criterion) {
    let Some(store) = std::env::var_os("KNOWCODE_BENCH_DEPS_STORE").map(PathBuf::from) else {
        eprintln!("KNOWCODE_BENCH_DEPS_STORE is not set: run scripts/bench-deps");
        return;
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let config = Config::load(&store).expect("config");
    let retriever = Retriever::new(store, config);
    let indexes = runtime
        .block_on(retriever.dependency_indexes())
        .expect("dependency indexes");
    println!("dependencies indexed: {}", indexes.packages.len());
    // Warm: every generation the questions reach is loaded once.
    for question in QUESTIONS {
        ask(&runtime, &retriever, question, true);
    }
    // Both scopes are asked question by question, so a busy moment of the machine falls on
    // both alike.
    let (mut project, mut all) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for question in QUESTIONS {
            project.push(ask(&runtime, &retriever, question, false));
            all.push(ask(&runtime, &retriever, question, true));
        }
    }
    for (scope, times) in [("project", &mut project), ("all", &mut all)] {
        times.sort_by(|a, b| a.total_cmp(b));
        println!(
            "scope={scope}: p50 {:.1} ms, p95 {:.1} ms over {} queries",
            percentile(times, 0.5),
            percentile(times, 0.95),
            times.len()
        );
    }
    println!(
        "p95 all / project: {:.2}x",
        percentile(&all, 0.95) / percentile(&project, 0.95)
    );
    let mut i = 0;
    c.bench_function("query_scope_all_warm", |b| {
        b.iter(|| {
            i += 1;
            ask(&runtime, &retriever, QUESTIONS[i % QUESTIONS.len()], true)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = scoped_query_latency
}
criterion_main!(benches);
