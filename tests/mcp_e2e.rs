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
    let stdout = common::run_mcp_script("mcp_client.py", &[]);
    assert!(stdout.contains("all checks passed"));
}
