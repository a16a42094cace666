//! knowcode: index a repository once, hand coding agents the smallest context that answers.
//!
//! The modules follow the pipeline data flows through:
//! `walk → parse → graph → chunk → embed → store` (driven by [`index`], whose build stages
//! also write each generation's quality report and git history), then on the read side `load`
//! (the current generation opened, overlaid and checked for freshness), `retrieve` (ranking and
//! packing) and `serve`, and `ops` for running an index (doctor, history, export, watch, ask,
//! eval), which only reads what the build stored. `config` and `error` are shared by all of them.
//! Nothing in the library writes to stdout: the CLI in `main.rs` owns stdout.

pub mod chunk;
pub mod config;
pub mod embed;
pub mod error;
pub mod graph;
pub mod index;
pub mod load;
pub mod ops;
pub mod parse;
pub mod retrieve;
pub mod serve;
pub mod store;
pub mod text;
pub mod walk;

/// The version recorded in every manifest as the builder of a generation.
pub const BUILDER_VERSION: &str = env!("CARGO_PKG_VERSION");
