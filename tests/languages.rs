//! Every language knowcode parses, asked through the real CLI over a small fixture indexed
//! with the real model: a definition found by its name, a documented function found by the
//! words of its doc comment, and a call followed across files with `trace`. Also: Vue and
//! Svelte components (their script read at the file's own lines), files read as text only
//! (found by both planes), and broken files that leave their neighbours indexed.

mod common;

use std::path::Path;

use common::{copy_fixture, index_json, knowcode, knowcode_ok_json, require_model, write_project};
use serde_json::Value;

/// What one language's fixture must answer.
struct Case {
    fixture: &'static str,
    /// A name to search, and the id of its definition.
    search: (&'static str, &'static str),
    /// The function documented "Sum of the line prices after the discount, …".
    documented: &'static str,
    /// The function it calls in the other file.
    callee: &'static str,
}

const DOC_QUESTION: &str = "sum of the line prices after the discount";

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter_map(|v| v.as_str().or_else(|| v["id"].as_str()).map(str::to_string))
        .collect()
}

fn json(args: &[&str], store: &Path) -> Value {
    let mut args = args.to_vec();
    args.extend(["--store", store.to_str().unwrap(), "--json"]);
    knowcode_ok_json(&args)
}

fn check(case: &Case) {
    require_model();
    let repo = copy_fixture(case.fixture);
    let summary = index_json(repo.path(), &[]);
    assert!(summary["files"].as_u64().unwrap() >= 2, "{summary}");
    let store = repo.path();

    let (name, id) = case.search;
    let found = json(&["search", name], store);
    assert_eq!(found["results"][0]["id"], id, "search {name}: {found}");

    let answer = json(&["query", DOC_QUESTION, "--verbosity", "standard"], store);
    assert_eq!(
        answer["entities"][0], case.documented,
        "the doc's words find the documented function: {answer}"
    );

    let callees = json(&["trace", case.documented, "--direction", "callees"], store);
    assert!(
        ids(&callees["nodes"]).iter().any(|n| n == case.callee),
        "{} calls {}: {callees}",
        case.documented,
        case.callee
    );
}

macro_rules! languages {
    ($($test:ident => $case:expr),* $(,)?) => {
        $(#[test] fn $test() { check(&$case); })*
    };
}

languages! {
    kotlin_definitions_docs_and_calls_are_found => Case {
        fixture: "kotlin",
        search: ("CartRegistry", "src/main/kotlin/shop/Cart.kt::CartRegistry"),
        documented: "src/main/kotlin/shop/Cart.kt::Cart.total",
        callee: "src/main/kotlin/shop/Pricing.kt::applyDiscount",
    },
    swift_definitions_docs_and_calls_are_found => Case {
        fixture: "swift",
        search: ("PaymentState", "Sources/Shop/Cart.swift::PaymentState"),
        documented: "Sources/Shop/Cart.swift::Cart.total",
        callee: "Sources/Shop/Pricing.swift::applyDiscount",
    },
    scala_definitions_docs_and_calls_are_found => Case {
        fixture: "scala",
        search: ("Pricing", "src/main/scala/shop/Pricing.scala::Pricing"),
        documented: "src/main/scala/shop/Cart.scala::Cart.total",
        callee: "src/main/scala/shop/Pricing.scala::Pricing.applyDiscount",
    },
    lua_definitions_docs_and_calls_are_found => Case {
        fixture: "lua",
        search: ("format_price", "lua/shop/cart.lua::format_price"),
        documented: "lua/shop/cart.lua::Cart.total",
        callee: "lua/shop/pricing.lua::M.apply_discount",
    },
    bash_definitions_docs_and_calls_are_found => Case {
        fixture: "bash",
        search: ("cart_add", "lib/cart.bash::cart_add"),
        documented: "lib/cart.bash::cart_total",
        callee: "lib/pricing.sh::apply_discount",
    },
    elixir_definitions_docs_and_calls_are_found => Case {
        fixture: "elixir",
        search: ("Shop.Pricing", "lib/shop/pricing.ex::Shop.Pricing"),
        documented: "lib/shop/cart.ex::Shop.Cart.total",
        callee: "lib/shop/pricing.ex::Shop.Pricing.apply_discount",
    },
    haskell_definitions_docs_and_calls_are_found => Case {
        fixture: "haskell",
        search: ("Priced", "src/Shop/Cart.hs::Priced"),
        documented: "src/Shop/Cart.hs::total",
        callee: "src/Shop/Pricing.hs::applyDiscount",
    },
    zig_definitions_docs_and_calls_are_found => Case {
        fixture: "zig",
        search: ("PaymentState", "src/cart.zig::PaymentState"),
        documented: "src/cart.zig::Cart.total",
        callee: "src/pricing.zig::applyDiscount",
    },
    dart_definitions_docs_and_calls_are_found => Case {
        fixture: "dart",
        search: ("CartAware", "lib/cart.dart::CartAware"),
        documented: "lib/cart.dart::Cart.total",
        callee: "lib/pricing.dart::applyDiscount",
    },
}

const VUE_COMPONENT: &str = r#"<template>
  <div class="cart">
    <p>{{ formatTotal(total) }}</p>
  </div>
</template>

<script setup lang="ts">
import { computed } from 'vue'

/** Formats a cart total as a price label with two decimals. */
function formatTotal(total: number): string {
  return total.toFixed(2) + ' EUR'
}
</script>

<style scoped>
.cart { color: green; }
</style>
"#;

const SVELTE_COMPONENT: &str = r#"<script>
  /** Counts how many times the basket button was pressed. */
  export function countBasketClicks(count) {
    return count + 1;
  }
</script>

<button on:click={() => countBasketClicks(0)}>add</button>
"#;

#[test]
fn vue_and_svelte_scripts_are_parsed_at_their_own_lines() {
    let repo = write_project(&[
        ("src/components/CartTotal.vue", VUE_COMPONENT),
        ("src/components/Basket.svelte", SVELTE_COMPONENT),
    ]);
    index_json(repo.path(), &["--no-embed"]);
    let vue = json(&["search", "formatTotal"], repo.path());
    let hit = &vue["results"][0];
    assert_eq!(
        hit["id"], "src/components/CartTotal.vue::formatTotal",
        "{vue}"
    );
    assert_eq!(hit["lines"], "11-13", "the component's own lines: {vue}");
    let svelte = json(&["search", "countBasketClicks"], repo.path());
    assert_eq!(
        svelte["results"][0]["id"], "src/components/Basket.svelte::countBasketClicks",
        "{svelte}"
    );
    assert_eq!(svelte["results"][0]["lines"], "3-5", "{svelte}");
}

const PROTO: &str = r#"syntax = "proto3";

package shop.v1;

// Reserves stock for every line of an order before payment.
service InventoryReservation {
  rpc ReserveStock(ReserveStockRequest) returns (ReserveStockReply);
}

message ReserveStockRequest {
  string order_id = 1;
  repeated string skus = 2;
}
"#;

const TERRAFORM: &str = r#"resource "aws_s3_bucket" "invoice_archive" {
  bucket = "shop-invoice-archive"
}

resource "aws_s3_bucket_lifecycle_configuration" "invoice_archive" {
  bucket = aws_s3_bucket.invoice_archive.id
  rule {
    id     = "expire-old-invoices"
    status = "Enabled"
  }
}
"#;

#[test]
fn text_only_files_are_found_by_both_planes_and_say_they_are_text() {
    require_model();
    let repo = write_project(&[
        ("api/inventory.proto", PROTO),
        ("infra/archive.tf", TERRAFORM),
        ("src/cart.py", "def total(lines):\n    return sum(lines)\n"),
    ]);
    index_json(repo.path(), &[]);
    let found = json(&["search", "InventoryReservation"], repo.path());
    assert_eq!(found["results"][0]["id"], "api/inventory.proto", "{found}");
    assert_eq!(found["results"][0]["kind"], "text", "{found}");
    let semantic = json(
        &[
            "semantic-search",
            "lifecycle rule that expires old invoices in the archive bucket",
        ],
        repo.path(),
    );
    // Text is weighed like prose (code answers most questions), but the one file about the
    // question is found, above the other text file.
    let hits = semantic["results"].as_array().unwrap();
    let first_text = hits
        .iter()
        .position(|h| h["kind"] == "text")
        .expect("a text hit");
    assert!(first_text < 2, "{semantic}");
    assert_eq!(hits[first_text]["file"], "infra/archive.tf", "{semantic}");
    let stats = json(&["inspect", "stats"], repo.path());
    assert_eq!(stats["text_only"], 2, "{stats}");
    assert_eq!(stats["languages"]["protobuf"], 1, "{stats}");
    assert_eq!(stats["languages"]["terraform"], 1, "{stats}");
    assert_eq!(stats["languages"]["python"], 1, "{stats}");
}

#[test]
fn broken_and_hostile_files_in_new_languages_leave_the_rest_indexed() {
    let huge = format!(
        "package big\n\n{}",
        "fun filler(): Int = 1\n".repeat(10 * 1024 * 1024 / 22)
    );
    let minified = format!("local t={{{}}}\n", "a=1,".repeat(3_000));
    let mut latin1 =
        b"-- caf\xe9 helpers\nlocal function brewCoffee(cups)\n  return cups\nend\n".to_vec();
    latin1.extend_from_slice(b"\n");
    let repo = write_project(&[
        ("src/Broken.kt", "class Broken {\n  fun half( {\n"),
        ("src/Big.kt", &huge),
        ("lua/min.lua", &minified),
        (
            "scripts/garbage.sh",
            "}}}} ((( \"\n]] fi esac done ;;\n)))\n{{{ <<<\n'''\n",
        ),
        (
            "src/Fine.kt",
            "/** Still indexed beside its broken neighbours. */\nfun stillHere() = 1\n",
        ),
    ]);
    std::fs::write(repo.path().join("lua/latin1.lua"), latin1).unwrap();
    let summary = index_json(repo.path(), &["--no-embed"]);
    assert!(summary["files"].as_u64().unwrap() >= 4, "{summary}");
    let fine = json(&["search", "stillHere"], repo.path());
    assert_eq!(fine["results"][0]["id"], "src/Fine.kt::stillHere", "{fine}");
    let coffee = json(&["search", "brewCoffee"], repo.path());
    assert_eq!(
        coffee["results"][0]["id"], "lua/latin1.lua::brewCoffee",
        "{coffee}"
    );
    let garbage = json(&["search", "garbage"], repo.path());
    assert_eq!(
        garbage["results"][0]["kind"], "text",
        "read as text: {garbage}"
    );
    let stats = json(&["inspect", "stats"], repo.path());
    let counts = &stats["problems"]["counts"];
    assert!(counts["syntax_error"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(counts["too_large"], 1, "{stats}");
    assert_eq!(counts["minified"], 1, "{stats}");
    assert_eq!(counts["invalid_utf8"], 1, "{stats}");
    let doctor = knowcode(
        &["doctor", "--store", repo.path().to_str().unwrap(), "--json"],
        &[],
    );
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let languages = common::doctor_check(&report, "languages");
    assert!(
        languages["message"]
            .as_str()
            .unwrap_or_default()
            .contains("scripts/garbage.sh"),
        "{languages}"
    );
}
