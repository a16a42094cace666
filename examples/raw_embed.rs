//! Raw model throughput on a repository's chunks, without any pipeline bookkeeping: the
//! reference `scripts/bench-index` compares the embed stage against.
//! `cargo run --release --example raw_embed -- DIR`

use std::time::Instant;

use knowcode::config::Config;
use knowcode::embed::Embedder;
use knowcode::index::{self, IndexOptions, NoProgress, Timings};

fn main() -> anyhow::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let config = Config::load(std::path::Path::new(&root))?;
    let options = IndexOptions {
        root: root.clone().into(),
        store_dir: root.into(),
        ignore_globs: vec![],
        embed: false,
        temporal: false,
        config: config.clone(),
    };
    let analysis = index::analyse(&options, &NoProgress, &mut Timings::default())?;
    let texts: Vec<&str> = analysis
        .chunks
        .iter()
        .map(|c| c.embed_text.as_str())
        .collect();
    let mut embedder = Embedder::load(&config)?;
    let started = Instant::now();
    let mut done = 0;
    for batch in texts.chunks(config.embedding.batch_size) {
        embedder.embed_all(batch, &mut |_| {});
        done += batch.len();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{{\"chunks\":{done},\"seconds\":{secs:.2},\"chunks_per_second\":{:.1}}}",
        done as f64 / secs
    );
    Ok(())
}
