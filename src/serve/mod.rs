//! The serving surfaces. `contract` is the table of every tool argument the surfaces derive
//! their schemas and parsers from. [`service::Service`] is the one dispatcher behind every surface: it
//! owns the served root, path confinement, the retriever, background jobs and telemetry.
//! `mcp` speaks the Model Context Protocol over stdio behind `stdio_guard`, which answers
//! malformed input itself. Nothing here writes to stdout except
//! the MCP transport itself.

pub mod contract;
pub(crate) mod jobs;
pub mod mcp;
pub mod rest;
pub mod service;
pub(crate) mod stdio_guard;
pub mod telemetry;
pub mod tools;
