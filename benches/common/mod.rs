//! What the benchmarks share: the questions, the bench corpus's store, percentiles and one
//! timed query.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Instant;

use knowcode::config::Config;
use knowcode::index::{self, IndexOptions, NoProgress};
use knowcode::retrieve::{QueryRequest, Retriever};

/// Questions of the shapes agents ask, about the bench corpus.
pub const QUESTIONS: &[&str] = &[
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

/// The bench corpus (`scripts/bench-index` assembles it), indexed in place on first use.
pub fn bench_store(runtime: &tokio::runtime::Runtime) -> PathBuf {
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

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One `query` at default settings, in milliseconds.
pub fn query_ms(runtime: &tokio::runtime::Runtime, retriever: &Retriever, question: &str) -> f64 {
    let started = Instant::now();
    runtime
        .block_on(retriever.query(&QueryRequest::new(question)))
        .expect("query");
    started.elapsed().as_secs_f64() * 1000.0
}
