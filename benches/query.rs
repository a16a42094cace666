//! Warm `query` latency on a large index, and the size of default `query` payloads.
//!
//! `cargo bench --bench query` uses the `scripts/bench-index` corpus (216 files of real Rust,
//! indexed in place on first use, ~2 minutes) or `KNOWCODE_BENCH_STORE`. Latency is one
//! `Retriever::query` at default settings (minimal, 1500 tokens, 1 entity) with the model and
//! generation already loaded, query embedding included; it prints p50/p95/p99 over every
//! question, then lets criterion time a round-robin over them. Payload sizes are the compact
//! JSON of the same default answer over the evaluation questions against their own corpora
//! (`~/.cache/knowcode-eval/stores`, when present), printed as a distribution.

use std::path::{Path, PathBuf};
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use knowcode::config::Config;
use knowcode::index::{self, IndexOptions, NoProgress};
use knowcode::retrieve::{QueryRequest, Retriever};

const QUESTIONS: &[&str] = &[
    "parse a regular expression into an abstract syntax tree",
    "serialize a map to a JSON string",
    "walk a directory honouring gitignore files",
    "join two tasks in parallel on a thread pool",
    "render the help message of a command line parser",
    "escape a string for output",
    "how are errors reported with their position",
    "compute a case-insensitive character class",
    "deserialize a number without losing precision",
    "match glob patterns against paths",
    "Deserializer::end",
    "ClassUnicode negate",
    "where is the thread pool's sleep logic",
    "value to string with pretty printing",
    "Arg::required",
    "how does the parser handle repetition operators",
];

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn bench_store(runtime: &tokio::runtime::Runtime) -> PathBuf {
    let store = std::env::var_os("KNOWCODE_BENCH_STORE")
        .map(PathBuf::from)
        .unwrap_or_else(|| knowcode::config::cache_dir().join("bench-corpus"));
    assert!(
        store.is_dir(),
        "{} is missing: run scripts/bench-index once (it assembles the corpus) or set KNOWCODE_BENCH_STORE",
        store.display()
    );
    if knowcode::store::Store::at(&store).current_id().is_none() {
        eprintln!("indexing {} first ...", store.display());
        let options = IndexOptions {
            root: store.clone(),
            store_dir: store.clone(),
            ignore_globs: Vec::new(),
            embed: true,
            temporal: false,
            config: Config::load(&store).expect("config"),
        };
        runtime
            .block_on(index::run(&options, &NoProgress))
            .expect("index the benchmark corpus");
    }
    store
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn query_ms(runtime: &tokio::runtime::Runtime, retriever: &Retriever, question: &str) -> f64 {
    let started = Instant::now();
    runtime
        .block_on(retriever.query(&QueryRequest::new(question)))
        .expect("query");
    started.elapsed().as_secs_f64() * 1000.0
}

fn warm_query_latency(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let store = bench_store(&runtime);
    let retriever = Retriever::new(store.clone(), Config::load(&store).expect("config"));
    query_ms(
        &runtime,
        &retriever,
        "warm up: load the model and the generation",
    );
    let mut samples: Vec<f64> = (0..10)
        .flat_map(|_| QUESTIONS.iter())
        .map(|q| query_ms(&runtime, &retriever, q))
        .collect();
    samples.sort_by(f64::total_cmp);
    eprintln!(
        "warm query on {} ({} samples): p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        store.display(),
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        percentile(&samples, 0.99),
        samples[samples.len() - 1]
    );
    let mut next = 0;
    c.bench_function("query_default_warm", |b| {
        b.iter(|| {
            next = (next + 1) % QUESTIONS.len();
            runtime
                .block_on(retriever.query(&QueryRequest::new(QUESTIONS[next])))
                .expect("query")
        })
    });
}

/// `(corpus store, questions)` of the evaluation, when it has been set up.
fn evaluation_sets() -> Vec<(PathBuf, Vec<String>)> {
    let stores = std::env::var_os("KNOWCODE_EVAL_CACHE")
        .map_or_else(|| home().join(".cache/knowcode-eval"), PathBuf::from)
        .join("stores");
    let Ok(entries) = std::fs::read_dir(&stores) else {
        return Vec::new();
    };
    let mut sets: Vec<(PathBuf, Vec<String>)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let corpus = name.strip_suffix(".queries.jsonl")?.to_string();
            let questions = std::fs::read_to_string(e.path())
                .ok()?
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["query"].as_str().map(str::to_string))
                .collect();
            Some((stores.join(corpus), questions))
        })
        .filter(|(store, _)| Path::new(store).is_dir())
        .collect();
    sets.sort();
    sets
}

fn payload_sizes(_: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut sets = evaluation_sets();
    if sets.is_empty() {
        let store = bench_store(&runtime);
        sets.push((store, QUESTIONS.iter().map(|q| q.to_string()).collect()));
    }
    let mut sizes = Vec::new();
    for (store, questions) in &sets {
        let retriever = Retriever::new(store.clone(), Config::load(store).expect("config"));
        for question in questions {
            let payload = runtime
                .block_on(retriever.query(&QueryRequest::new(question.as_str())))
                .expect("query");
            sizes.push(serde_json::to_string(&payload).expect("json").len() as f64);
        }
    }
    sizes.sort_by(f64::total_cmp);
    eprintln!(
        "default query payload bytes over {} questions in {} corpora: min {:.0}, p25 {:.0}, median {:.0}, p75 {:.0}, p95 {:.0}, max {:.0}",
        sizes.len(),
        sets.len(),
        sizes[0],
        percentile(&sizes, 0.25),
        percentile(&sizes, 0.5),
        percentile(&sizes, 0.75),
        percentile(&sizes, 0.95),
        sizes[sizes.len() - 1]
    );
    for low in (0..)
        .map(|i| i * 250)
        .take_while(|&l| (l as f64) <= sizes[sizes.len() - 1])
    {
        let n = sizes
            .iter()
            .filter(|&&s| s >= low as f64 && s < (low + 250) as f64)
            .count();
        eprintln!(
            "  {:>5}-{:<5} {:>4} {}",
            low,
            low + 249,
            n,
            "#".repeat(n.div_ceil(10))
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = warm_query_latency, payload_sizes
}
criterion_main!(benches);
