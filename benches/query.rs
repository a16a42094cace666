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

mod common;

use common::{QUESTIONS, bench_store, percentile, query_ms};
use criterion::{Criterion, criterion_group, criterion_main};
use knowcode::config::Config;
use knowcode::retrieve::{QueryRequest, Retriever};

/// A bug report of about 400 words, shaped like the ones agents bring: prose, the user's own
/// code, a panic message with locations, and what was expected.
const LONG_QUESTION: &str = r##"Deserializing a large map with duplicate keys panics instead of returning an error

**Describe the bug**
We read configuration files written by another team into a `HashMap<String, Value>` with
serde_json. Since we upgraded, a file that contains the same key twice makes the whole service
panic instead of returning an error that we could report to the user. The same file was
accepted (last value wins) by the previous version, and the documentation of `from_str` says
that malformed input gives an `Error` with its line and column, not a panic.

```rust
use std::collections::HashMap;
use serde_json::Value;

struct Loader {
    cache: HashMap<String, Value>,
}

impl Loader {
    fn new() -> Self {
        Loader { cache: HashMap::new() }
    }

    fn load(&mut self, name: &str, text: &str) -> Result<(), String> {
        let parsed: HashMap<String, Value> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (key, value) in parsed {
            self.cache.insert(format!("{name}.{key}"), value);
        }
        Ok(())
    }
}

fn main() {
    let mut loader = Loader::new();
    loader.load("a", r#"{"x": 1, "x": 2}"#).unwrap();
}
```

Output:

```
thread 'main' panicked at src/de.rs:2092:9:
called `Option::unwrap()` on a `None` value
stack backtrace:
   0: serde_json::de::Deserializer<R>::parse_object_colon
             at src/de.rs:1974:13
   1: serde_json::de::MapAccess::next_key_seed
             at src/de.rs:1990:21
   2: serde_json::value::de::visit_object
             at src/value/de.rs:560:9
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace.
```

**Expected behavior**
Either the last value wins, as before, or `from_str` returns an error that says which key was
duplicated and where, so that we can show it to whoever wrote the file. A panic takes the whole
service down, and we cannot catch it reliably in the request handler.

**What we tried**
Parsing into `Value` first and converting afterwards works, but it doubles the memory of large
files, and some of them are hundreds of megabytes. Wrapping the call in `catch_unwind` hides the
problem but leaves us without a useful message. We also looked at `deserialize_map` and the
`MapAccess` implementation, and it looks like the key is consumed before the colon is checked,
but we are not sure whether the escape handling of `parse_str` plays a part when the key holds
an escaped quote. Any pointer to where the map keys are read would help us write a fix.

**Versions**
serde_json 1.0, serde 1.0, rustc 1.80 on Linux x86_64.
"##;

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
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
    let mut long: Vec<f64> = (0..40)
        .map(|_| query_ms(&runtime, &retriever, LONG_QUESTION))
        .collect();
    long.sort_by(f64::total_cmp);
    eprintln!(
        "warm query, a {}-word bug report ({} samples): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        LONG_QUESTION.split_whitespace().count(),
        long.len(),
        percentile(&long, 0.5),
        percentile(&long, 0.95),
        long[long.len() - 1]
    );
    c.bench_function("query_long_report_warm", |b| {
        b.iter(|| {
            runtime
                .block_on(retriever.query(&QueryRequest::new(LONG_QUESTION)))
                .expect("query")
        })
    });
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

/// `(repository store, questions)` of the issue benchmark (`run_issues.py`), when it has run:
/// each repository's store holds its last tree, which is close enough for payload sizes.
fn issue_sets() -> Vec<(PathBuf, Vec<String>)> {
    let tasks = std::env::var_os("KNOWCODE_ISSUE_TASKS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/issues/tasks.jsonl"),
        PathBuf::from,
    );
    let stores = std::env::var_os("KNOWCODE_EVAL_CACHE")
        .map_or_else(|| home().join(".cache/knowcode-eval"), PathBuf::from)
        .join("issues/stores");
    let Ok(text) = std::fs::read_to_string(tasks) else {
        return Vec::new();
    };
    let mut sets: std::collections::BTreeMap<PathBuf, Vec<String>> = Default::default();
    for task in text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
    {
        let (Some(repo), Some(query)) = (task["repo"].as_str(), task["query"].as_str()) else {
            continue;
        };
        let store = stores.join(repo.replace('/', "+"));
        if store.is_dir() {
            sets.entry(store).or_default().push(query.to_string());
        }
    }
    sets.into_iter().collect()
}

fn payload_sizes(_: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut sets = evaluation_sets();
    if sets.is_empty() {
        let store = bench_store(&runtime);
        sets.push((store, QUESTIONS.iter().map(|q| q.to_string()).collect()));
    }
    print_payload_sizes(&runtime, "docstring questions", &sets);
    let issues = issue_sets();
    if !issues.is_empty() {
        print_payload_sizes(&runtime, "bug reports and change descriptions", &issues);
    }
}

fn print_payload_sizes(
    runtime: &tokio::runtime::Runtime,
    label: &str,
    sets: &[(PathBuf, Vec<String>)],
) {
    let mut sizes = Vec::new();
    for (store, questions) in sets {
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
        "default query payload bytes, {label}, over {} questions in {} corpora: min {:.0}, p25 {:.0}, median {:.0}, p75 {:.0}, p95 {:.0}, max {:.0}",
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

/// Warm latency on a code-search index: `KNOWCODE_BENCH_CODESEARCH=STORE:QUERIES.jsonl` (a store
/// `run_codesearch.py --reuse` keeps, and its repository's queries) prints p50/p95 of the
/// default `query` and of `semantic_search` (limit 10), each question asked five times.
fn code_search_latency(_: &mut Criterion) {
    let Some(spec) = std::env::var_os("KNOWCODE_BENCH_CODESEARCH") else {
        return;
    };
    let spec = spec.to_string_lossy().into_owned();
    let (store, queries) = spec.split_once(':').expect("STORE:QUERIES.jsonl");
    let questions: Vec<String> = std::fs::read_to_string(queries)
        .expect("queries")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|row| row["query"].as_str().map(str::to_string))
        .collect();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let store = PathBuf::from(store);
    let retriever = Retriever::new(store.clone(), Config::load(&store).expect("config"));
    query_ms(
        &runtime,
        &retriever,
        "warm up: load the model and the generation",
    );
    let repeated = || (0..5).flat_map(|_| questions.iter());
    let mut query: Vec<f64> = repeated()
        .map(|q| query_ms(&runtime, &retriever, q))
        .collect();
    let mut semantic: Vec<f64> = repeated()
        .map(|q| {
            let started = std::time::Instant::now();
            runtime
                .block_on(retriever.semantic_search(q, 10))
                .expect("semantic_search");
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    for (name, samples) in [("query", &mut query), ("semantic_search", &mut semantic)] {
        samples.sort_by(f64::total_cmp);
        eprintln!(
            "warm {name} on {} ({} samples): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            store.display(),
            samples.len(),
            percentile(samples, 0.5),
            percentile(samples, 0.95),
            samples[samples.len() - 1]
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = warm_query_latency, payload_sizes, code_search_latency
}
criterion_main!(benches);
