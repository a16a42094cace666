//! The contract's promises an agent acts on (`published`, defaults, the threshold, legacy
//! tools, the vector plane, a bad config), each driven by the official MCP SDK against the
//! real binary: `tests/mcp_contract.py <bin> <repo> <scenario>`.

mod common;

fn scenario(name: &str) {
    let stdout = common::run_mcp_script("mcp_contract.py", &[name]);
    assert!(stdout.contains(&format!("{name}: all checks passed")));
}

#[test]
fn published_is_true_only_when_a_new_generation_became_current() {
    scenario("publish");
}

#[test]
fn minimal_payloads_defaults_threshold_and_byte_caps() {
    scenario("payloads");
}

#[test]
fn the_five_legacy_tools_route_with_their_predecessors_defaults() {
    scenario("legacy");
}

#[test]
fn an_unusable_vector_plane_is_an_error_or_a_stated_fallback() {
    scenario("vector_plane");
}

#[test]
fn a_legacy_flat_store_is_ready_for_every_reader() {
    scenario("legacy_store");
}

#[test]
fn a_panicking_job_ends_failed_and_the_next_can_start() {
    scenario("job_panic");
}

#[test]
fn a_bad_config_answers_invalid_config_on_every_call() {
    scenario("bad_config");
}

#[test]
fn a_store_built_elsewhere_reports_freshness_for_the_served_root() {
    scenario("shared_root");
}
