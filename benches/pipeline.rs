//! Throughput of phase one (walk + parse + graph + chunk) on this repository's own sources
//! and fixtures. `cargo bench --bench pipeline`; reports time per iteration, and prints the
//! lines per second once.

use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use knowcode::config::Config;
use knowcode::index::{self, IndexOptions, NoProgress, Timings};

fn options(root: &Path) -> IndexOptions {
    IndexOptions {
        root: root.to_path_buf(),
        store_dir: root.to_path_buf(),
        ignore_globs: vec![],
        embed: false,
        temporal: false,
        config: Config::default(),
    }
}

fn phase_one(c: &mut Criterion) {
    let root = std::env::var_os("KNOWCODE_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let opts = options(&root);
    let probe = index::analyse(&opts, &NoProgress, &mut Timings::default()).expect("analyse");
    let lines: usize = probe.parsed.iter().map(|f| f.line_count()).sum();
    let started = Instant::now();
    index::analyse(&opts, &NoProgress, &mut Timings::default()).expect("analyse");
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "phase one on {}: {} files, {lines} lines, {} chunks, {:.0} LOC/s",
        root.display(),
        probe.parsed.len(),
        probe.chunks.len(),
        lines as f64 / secs
    );
    let mut group = c.benchmark_group("phase_one");
    group.throughput(Throughput::Elements(lines as u64));
    group.sample_size(10);
    group.bench_function("walk_parse_graph_chunk", |b| {
        b.iter(|| index::analyse(&opts, &NoProgress, &mut Timings::default()).expect("analyse"))
    });
    group.finish();
}

criterion_group!(benches, phase_one);
criterion_main!(benches);
