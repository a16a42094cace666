//! The shared store on S3-compatible object storage, against a loopback server behind a
//! byte-counting proxy (`scripts/bench-shared` starts both and runs this): publishing the
//! bench corpus, opening its generation cold (empty local cache) and warm (cache filled, a new
//! reader as in a new process), warm `query` p50/p95 from the bucket next to the same corpus's
//! local store (interleaved, same process), bytes read from the store per warm query, and the
//! overlay build for 10 changed files. Prints figures; nothing is asserted.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{QUESTIONS, bench_store, percentile, query_ms};
use knowcode::config::Config;
use knowcode::index::{self, IndexOptions, NoProgress};
use knowcode::load::GenerationCache;
use knowcode::retrieve::Retriever;
use knowcode::store::Store;
use knowcode::store::shared::SharedStore;

/// Bytes the proxy relayed from the server so far (it rewrites the file every 50 ms).
fn bytes_from_server(counter: &Path) -> u64 {
    std::thread::sleep(std::time::Duration::from_millis(200));
    std::fs::read_to_string(counter)
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn seconds(since: Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

fn summary(samples: &mut [f64]) -> String {
    samples.sort_by(f64::total_cmp);
    format!(
        "p50 {:.1} ms, p95 {:.1} ms",
        percentile(samples, 0.5),
        percentile(samples, 0.95)
    )
}

/// Copies `from` into `to`, leaving out what `skip` names (relative paths); returns the files
/// copied.
fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![from.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a folder").flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(from).unwrap().to_path_buf();
            if skip(&rel) {
                continue;
            }
            let target = to.join(&rel);
            if path.is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                pending.push(path);
            } else {
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::copy(&path, &target).unwrap();
                files.push(target);
            }
        }
    }
    files.sort();
    files
}

/// A copy of the corpus (no index) with one function appended to each of its first ten Rust
/// files.
fn tree_with_ten_changes(corpus: &Path) -> (tempfile::TempDir, usize) {
    let copy = tempfile::tempdir().expect("temp dir");
    let files = copy_tree(corpus, copy.path(), &|rel| rel.starts_with(".knowcode"));
    let mut lines = 0;
    let rust = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"));
    for (n, file) in rust.take(10).enumerate() {
        let mut text = std::fs::read_to_string(file).unwrap();
        lines += text.lines().count();
        text.push_str(&format!(
            "\n/// Added on a branch: the overlay benchmark's change number {n}.\npub fn overlay_bench_{n}(input: usize) -> usize {{\n    input * {n}\n}}\n"
        ));
        std::fs::write(file, text).unwrap();
    }
    (copy, lines)
}

/// The shared store's local folder starts from the corpus's own current generation, so
/// publishing reuses its vectors instead of embedding the corpus again.
fn seed_local_folder(corpus: &Path, shared: &SharedStore) {
    let (own, mirror) = (Store::at(corpus), Store::at(&shared.local_dir()));
    if mirror.current_id().is_some() {
        return;
    }
    let Some(id) = own.current_id() else { return };
    copy_tree(
        &own.generation_dir(&id),
        &mirror.generation_dir(&id),
        &|_| false,
    );
    mirror.point_current_at(&id).expect("seed the local folder");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (Some(uri), Some(counter)) = (
        std::env::var_os("KNOWCODE_BENCH_S3"),
        std::env::var_os("KNOWCODE_BENCH_S3_BYTES"),
    ) else {
        eprintln!("shared: skipped — run scripts/bench-shared (it starts the loopback S3 server)");
        return;
    };
    let (uri, counter) = (uri.to_string_lossy().into_owned(), PathBuf::from(counter));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let corpus = bench_store(&runtime);
    let config = Config::load(&corpus).expect("config");
    let shared = SharedStore::open(&uri).expect("the loopback store");

    let started = Instant::now();
    let options = IndexOptions {
        root: corpus.clone(),
        store_dir: shared.local_dir(),
        ignore_globs: Vec::new(),
        embed: true,
        temporal: false,
        config: config.clone(),
    };
    std::fs::create_dir_all(&options.store_dir).expect("local folder");
    seed_local_folder(&corpus, &shared);
    let published = runtime
        .block_on(index::shared::run(&options, &shared, &NoProgress))
        .expect("publish the corpus");
    println!(
        "publish to {uri}: {:.1}s ({} chunks, {} embedded, {} reused)",
        seconds(started),
        published.chunks,
        published.embedded,
        published.reused
    );

    let _ = std::fs::remove_dir_all(Store::at(&shared.local_dir()).caches());
    let before = bytes_from_server(&counter);
    let started = Instant::now();
    runtime
        .block_on(GenerationCache::shared(shared.clone()).current())
        .expect("cold open");
    let cold = seconds(started);
    let cold_bytes = bytes_from_server(&counter) - before;
    let before = bytes_from_server(&counter);
    let started = Instant::now();
    runtime
        .block_on(GenerationCache::shared(shared.clone()).current())
        .expect("warm open");
    let warm = seconds(started);
    let warm_bytes = bytes_from_server(&counter) - before;
    println!(
        "open the shared generation: cold {cold:.2}s ({:.1} MiB read), warm {warm:.2}s ({:.1} KiB read; the generation's local copy)",
        cold_bytes as f64 / 1048576.0,
        warm_bytes as f64 / 1024.0
    );

    let local = Retriever::new(corpus.clone(), config.clone());
    let remote =
        Retriever::shared(shared.clone(), config.clone()).with_working_tree(Some(corpus.clone()));
    for retriever in [&local, &remote] {
        query_ms(
            &runtime,
            retriever,
            "warm up: load the model and the generation",
        );
    }
    let (mut local_ms, mut remote_ms) = (Vec::new(), Vec::new());
    let mut remote_bytes = 0;
    for _ in 0..5 {
        for question in QUESTIONS {
            local_ms.push(query_ms(&runtime, &local, question));
            let before = bytes_from_server(&counter);
            remote_ms.push(query_ms(&runtime, &remote, question));
            remote_bytes += bytes_from_server(&counter) - before;
        }
    }
    let n = remote_ms.len();
    println!(
        "warm query ({n} samples each, interleaved): local {} | shared {}; {:.1} KiB read from the store per warm query",
        summary(&mut local_ms),
        summary(&mut remote_ms),
        remote_bytes as f64 / n as f64 / 1024.0
    );

    let started = Instant::now();
    drop(knowcode::embed::Embedder::load(&config).expect("the model"));
    let model_load = seconds(started);
    let (branch, lines) = tree_with_ten_changes(&corpus);
    let overlaid =
        Retriever::shared(shared.clone(), config).with_working_tree(Some(branch.path().into()));
    let started = Instant::now();
    let generation = runtime.block_on(overlaid.generation()).expect("overlay");
    println!(
        "overlay for 10 changed files ({lines} lines, {} files covered): {:.1}s, of which loading the model ≈ {model_load:.1}s",
        generation.overlay_files,
        seconds(started)
    );
}
