//! The MCP server proven with a real client: the official Python SDK (`mcp` on PyPI,
//! installed by scripts/test) drives the real binary over stdio through the whole contract.
//! Also pins the per-turn schema cost of the default tool surface.

mod common;

use knowcode::serve::tools;

#[test]
fn default_tool_surface_costs_at_most_1000_tokens_per_turn() {
    let cost = tools::schema_tokens(false);
    println!("default tool schema: {cost} tokens (compact JSON / 4)");
    assert!(cost <= 1000, "schema costs {cost} tokens");
    assert_eq!(tools::tool_list(false).len(), 3);
    assert_eq!(tools::tool_list(true).len(), 8);
}

#[test]
fn a_real_mcp_client_drives_the_whole_contract_over_stdio() {
    common::require_model();
    let repo = common::copy_fixture("python");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = std::process::Command::new(common::python())
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_knowcode"))
        .arg(repo.path())
        .output()
        .expect("python runs (scripts/test installs the MCP SDK)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "MCP e2e failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all checks passed"));
}
