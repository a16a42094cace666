//! Retrieval through the real CLI (`--json` prints exactly the MCP payload) over real indexes
//! built with the real model: ranking, exact mode, profiles, budgets, sufficiency, trace,
//! disambiguation, freshness and the lexical fallback.

mod common;

use std::path::Path;

use common::{copy_fixture, index_json, knowcode, lexical_repo, require_model};
use serde_json::Value;

fn cli_json(args: &[&str]) -> (bool, Value) {
    let out = knowcode(args, &[]);
    let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), value)
}

fn query(store: &Path, text: &str, extra: &[&str]) -> Value {
    let mut args = vec!["query", text, "--store", store.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let (ok, value) = cli_json(&args);
    assert!(ok, "query failed: {value}");
    value
}

fn indexed(fixture: &str) -> tempfile::TempDir {
    require_model();
    let repo = copy_fixture(fixture);
    index_json(repo.path(), &[]);
    repo
}

/// The ids of the first `n` ranked entities (the diagnostic evidence), best first.
fn ranked_ids(store: &Path, text: &str, n: usize) -> Vec<String> {
    let limit = n.to_string();
    let ranked = query(
        store,
        text,
        &["--verbosity", "diagnostic", "--limit-entities", &limit],
    );
    ranked["evidence"]
        .as_array()
        .unwrap_or_else(|| panic!("no evidence: {ranked}"))
        .iter()
        .filter_map(|e| Some(e["entity_id"].as_str()?.to_string()))
        .collect()
}

fn first_entity(payload: &Value) -> String {
    payload["entities"][0]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_description_finds_the_right_function_and_an_identifier_its_definition() {
    let repo = indexed("python");
    let nl = query(
        repo.path(),
        "round a money amount to whole cents",
        &["--verbosity", "standard"],
    );
    assert_eq!(first_entity(&nl), "shop/pricing.py::round_cents", "{nl}");
    let ident = query(repo.path(), "apply_discount", &["--verbosity", "standard"]);
    assert_eq!(
        first_entity(&ident),
        "shop/pricing.py::apply_discount",
        "{ident}"
    );
    assert!(
        ident["sufficiency_score"].as_f64().unwrap() >= 0.8,
        "a named definition is a confident answer: {ident}"
    );
}

#[test]
fn a_description_all_three_legs_agree_on_is_a_sufficient_minimal_answer() {
    let repo = indexed("python");
    let verbose = query(
        repo.path(),
        "round a money value to cents",
        &["--verbosity", "verbose"],
    );
    let signals = &verbose["evidence"][0]["signals"];
    assert_eq!(
        (
            &signals["lexical_rank"],
            &signals["vector_rank"],
            &signals["signature_rank"]
        ),
        (&Value::from(1), &Value::from(1), &Value::from(1)),
        "{verbose}"
    );
    let minimal = query(repo.path(), "round a money value to cents", &[]);
    assert!(
        minimal["context_text"]
            .as_str()
            .unwrap()
            .starts_with("## round_cents (function"),
        "{minimal}"
    );
    assert!(
        minimal["sufficiency_score"].as_f64().unwrap() >= 0.8,
        "the default (explain-able) minimal answer reaches the threshold: {minimal}"
    );
    let vague = query(repo.path(), "something about the shop", &[]);
    assert!(
        vague["sufficiency_score"].as_f64().unwrap() < 0.8,
        "{vague}"
    );
}

#[test]
fn a_quoted_query_is_an_exact_substring_search() {
    let repo = indexed("python");
    let exact = query(
        repo.path(),
        "\"self.items.append(item)\"",
        &["--verbosity", "standard"],
    );
    assert_eq!(exact["retrieval_mode"], "exact");
    assert_eq!(first_entity(&exact), "shop/cart.py::Cart.add");
}

#[test]
fn minimal_is_summary_first_and_each_verbosity_adds_its_fields() {
    let repo = indexed("python");
    let store = repo.path();
    let minimal = query(
        store,
        "how is the cart total computed",
        &["--task-type", "explain"],
    );
    let keys: Vec<&str> = minimal
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys.len(), 6, "{keys:?}");
    for key in [
        "context_text",
        "sufficiency_score",
        "total_tokens",
        "freshness",
        "reduction_summary",
        "also",
    ] {
        assert!(minimal.get(key).is_some(), "minimal lacks {key}");
    }
    assert!(
        !minimal["context_text"].as_str().unwrap().contains("```"),
        "no source at minimal explain"
    );

    let debug = query(
        store,
        "how is the cart total computed",
        &["--task-type", "debug"],
    );
    assert_eq!(
        debug["source_included"], true,
        "debug is source-hungry even at minimal"
    );
    assert!(debug.get("reduction_summary").is_none());
    assert!(
        debug["context_text"]
            .as_str()
            .unwrap()
            .contains("```python")
    );

    let standard = query(
        store,
        "how is the cart total computed",
        &["--task-type", "explain", "--verbosity", "standard"],
    );
    assert_eq!(standard["source_included"], true);
    for key in [
        "task_type",
        "task_confidence",
        "retrieval_mode",
        "entities",
        "truncated",
    ] {
        assert!(standard.get(key).is_some(), "standard lacks {key}");
    }
    assert!(standard.get("evidence").is_none());
    let verbose = query(
        store,
        "how is the cart total computed",
        &["--verbosity", "verbose"],
    );
    assert!(
        verbose["evidence"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    assert!(verbose.get("diagnostics").is_none());
    let diagnostic = query(
        store,
        "how is the cart total computed",
        &["--verbosity", "diagnostic"],
    );
    assert!(diagnostic["diagnostics"]["coverage"].as_f64().is_some());
}

#[test]
fn budgets_are_split_per_entity_and_never_exceeded() {
    let repo = indexed("python");
    let store = repo.path();
    let three = query(
        store,
        "cart items prices totals",
        &[
            "--max-tokens",
            "300",
            "--limit-entities",
            "3",
            "--verbosity",
            "diagnostic",
            "--task-type",
            "debug",
        ],
    );
    assert!(three["total_tokens"].as_u64().unwrap() <= 300);
    let sections = three["diagnostics"]["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 3);
    for section in sections {
        assert!(section["tokens"].as_u64().unwrap() <= 100, "{section}");
    }
    // A bundle that wants more than the whole budget is cut to it, at a line, with a marker.
    let long = format!(
        "def long_function(x):\n    \"\"\"Computes many values.\"\"\"\n{}    return x\n",
        (0..80)
            .map(|i| format!("    x = x + helper_number_{i}(x)\n"))
            .collect::<String>()
    );
    std::fs::write(store.join("long.py"), long).unwrap();
    index_json(store, &[]);
    let one = query(
        store,
        "long_function",
        &[
            "--max-tokens",
            "300",
            "--task-type",
            "debug",
            "--verbosity",
            "standard",
        ],
    );
    assert_eq!(first_entity(&one), "long.py::long_function");
    let total = one["total_tokens"].as_u64().unwrap();
    assert!(
        total <= 300 && total > 200,
        "one bundle filling the budget: {total}"
    );
    assert_eq!(one["truncated"], true);
    assert!(
        one["context_text"]
            .as_str()
            .unwrap()
            .contains("[truncated:")
    );
}

#[test]
fn a_smaller_budget_never_raises_sufficiency() {
    let repo = indexed("python");
    let mut previous = f64::MAX;
    for budget in ["2000", "400", "120", "40"] {
        let answer = query(
            repo.path(),
            "apply a percentage discount",
            &["--max-tokens", budget, "--task-type", "explain"],
        );
        let score = answer["sufficiency_score"].as_f64().unwrap();
        assert!(score <= previous, "budget {budget}: {score} > {previous}");
        previous = score;
    }
}

#[test]
fn trace_follows_callers_and_callees_to_a_depth_and_names_unknown_entities() {
    let repo = indexed("python");
    let store = repo.path().to_str().unwrap();
    let (ok, callers) = cli_json(&[
        "trace",
        "apply_discount",
        "--direction",
        "callers",
        "--depth",
        "2",
        "--store",
        store,
        "--json",
    ]);
    assert!(ok);
    let ids: Vec<(&str, u64)> = callers["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n["depth"].as_u64().unwrap()))
        .collect();
    assert!(ids.contains(&("shop/cart.py::Cart.total", 1)), "{callers}");
    assert!(ids.contains(&("shop/cart.py::checkout", 2)), "{callers}");
    let (_, callees) = cli_json(&[
        "trace",
        "Cart.total",
        "--direction",
        "callees",
        "--store",
        store,
        "--json",
    ]);
    let ids: Vec<&str> = callees["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"shop/pricing.py::round_cents"));
    assert!(
        callees["unresolved"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "sum")
    );
    let (ok, missing) = cli_json(&[
        "trace",
        "no_such_function_anywhere",
        "--store",
        store,
        "--json",
    ]);
    assert!(!ok);
    assert_eq!(missing["code"], "entity_not_found");
    let (ok, deep) = cli_json(&[
        "trace", "checkout", "--depth", "9", "--store", store, "--json",
    ]);
    assert!(!ok);
    assert_eq!(deep["code"], "invalid_argument");
}

#[test]
fn an_ambiguous_name_gives_a_short_disambiguation_list() {
    let repo = indexed("python");
    let (ok, answer) = cli_json(&[
        "context",
        "__init__",
        "--store",
        repo.path().to_str().unwrap(),
        "--json",
    ]);
    assert!(ok);
    assert_eq!(answer["ambiguous"], true);
    let ids: Vec<&str> = answer["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["shop/cart.py::Cart.__init__", "shop/cart.py::Item.__init__"]
    );
    let (ok, exact) = cli_json(&[
        "context",
        "shop/cart.py::Item.__init__",
        "--store",
        repo.path().to_str().unwrap(),
        "--json",
    ]);
    assert!(ok);
    assert!(
        exact["context_text"]
            .as_str()
            .unwrap()
            .contains("Item.__init__")
    );
}

#[test]
fn freshness_reports_edits_additions_and_deletions() {
    let repo = indexed("python");
    let store = repo.path();
    let fresh = query(store, "checkout", &[]);
    assert_eq!(
        fresh["freshness"]["is_stale"], false,
        "{}",
        fresh["freshness"]
    );
    std::thread::sleep(std::time::Duration::from_millis(2100)); // past the freshness cache
    std::fs::write(
        store.join("shop/pricing.py"),
        "def apply_discount(a, p):\n    return a\n",
    )
    .unwrap();
    std::fs::write(store.join("shop/new.py"), "def fresh():\n    pass\n").unwrap();
    std::fs::remove_file(store.join("shop/__init__.py")).unwrap();
    let stale = query(store, "checkout", &[]);
    let reasons: Vec<&str> = stale["freshness"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(stale["freshness"]["is_stale"], true);
    for reason in ["source_changed", "files_added", "files_deleted"] {
        assert!(reasons.contains(&reason), "{reasons:?}");
    }
}

#[test]
fn a_file_rewritten_with_the_same_bytes_is_not_staleness_but_a_same_size_edit_is() {
    let repo = copy_fixture("python");
    index_json(repo.path(), &["--no-embed"]);
    let path = repo.path().join("shop/pricing.py");
    let original = std::fs::read(&path).unwrap();
    let past_the_cache = || std::thread::sleep(std::time::Duration::from_millis(2100));
    past_the_cache();
    std::fs::write(&path, &original).unwrap(); // a checkout or a touch: new mtime, same bytes
    let touched = query(repo.path(), "apply_discount", &[]);
    assert_eq!(
        touched["freshness"]["is_stale"], false,
        "{}",
        touched["freshness"]
    );
    let mut edited = original.clone();
    let letter = edited.iter().position(|b| *b == b'a').unwrap();
    edited[letter] = b'b';
    past_the_cache();
    std::fs::write(&path, &edited).unwrap();
    let stale = query(repo.path(), "apply_discount", &[]);
    assert_eq!(
        stale["freshness"]["is_stale"], true,
        "{}",
        stale["freshness"]
    );
    assert_eq!(stale["freshness"]["changed"], 1, "{}", stale["freshness"]);
}

#[test]
fn an_index_built_from_another_checkout_answers_for_the_root_it_is_read_with() {
    let built = copy_fixture("python");
    index_json(built.path(), &["--no-embed"]);
    let checkout = copy_fixture("python"); // the same files, later mtimes, no index
    let (store, root) = (
        built.path().to_str().unwrap(),
        checkout.path().to_str().unwrap(),
    );
    let at_root = |extra: &[&str]| {
        let mut args = vec!["--root", root];
        args.extend_from_slice(extra);
        query(built.path(), "apply_discount", &args)
    };
    let same = at_root(&[]);
    assert_eq!(
        same["freshness"]["is_stale"], false,
        "{}",
        same["freshness"]
    );
    std::thread::sleep(std::time::Duration::from_millis(2100)); // past the freshness cache
    std::fs::write(
        checkout.path().join("shop/extra.py"),
        "def extra():\n    pass\n",
    )
    .unwrap();
    // The added file is indexed into the checkout's overlay and answers there.
    let added = at_root(&[]);
    assert_eq!(
        added["freshness"]["is_stale"], false,
        "{}",
        added["freshness"]
    );
    assert_eq!(
        added["freshness"]["overlay_files"], 1,
        "{}",
        added["freshness"]
    );
    let (_, found) = cli_json(&[
        "search", "extra", "--store", store, "--root", root, "--json",
    ]);
    assert!(
        found["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == "shop/extra.py::extra"),
        "{found}"
    );
    let at_build = query(built.path(), "apply_discount", &[]);
    assert_eq!(
        at_build["freshness"]["is_stale"], false,
        "{}",
        at_build["freshness"]
    );
    let (ok, refused) = cli_json(&[
        "query",
        "x",
        "--store",
        store,
        "--root",
        "/no/such/folder",
        "--json",
    ]);
    assert!(!ok);
    assert_eq!(refused["code"], "invalid_argument", "{refused}");
}

#[test]
fn a_lexical_generation_answers_and_says_so() {
    let repo = copy_fixture("python");
    index_json(repo.path(), &["--no-embed"]);
    let answer = query(repo.path(), "apply_discount", &["--verbosity", "standard"]);
    assert_eq!(answer["retrieval_mode"], "lexical");
    assert_eq!(first_entity(&answer), "shop/pricing.py::apply_discount");
    assert!(
        answer["freshness"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "semantic_index_missing")
    );
    let (ok, semantic) = cli_json(&[
        "semantic-search",
        "discount",
        "--store",
        repo.path().to_str().unwrap(),
        "--json",
    ]);
    assert!(!ok);
    assert_eq!(semantic["code"], "missing_semantic_index");
}

#[test]
fn querying_without_an_index_names_the_build_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, answer) = cli_json(&[
        "query",
        "anything",
        "--store",
        dir.path().to_str().unwrap(),
        "--json",
    ]);
    assert!(!ok);
    assert_eq!(answer["code"], "missing_knowledge_store");
    assert!(
        answer["hint"]
            .as_str()
            .unwrap()
            .contains("knowcode_lifecycle action=build")
    );
}

#[test]
fn semantic_search_batch_prints_one_contract_line_per_query() {
    let repo = indexed("typescript");
    let queries = repo.path().join("queries.jsonl");
    std::fs::write(&queries, "{\"id\":\"q1\",\"query\":\"join first and last name\"}\n{\"id\":\"q2\",\"query\":\"user display name\"}\n").unwrap();
    let out = knowcode(
        &[
            "semantic-search",
            "--store",
            repo.path().to_str().unwrap(),
            "--batch",
            queries.to_str().unwrap(),
            "--limit",
            "3",
            "--json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "q1");
    let hits = lines[0]["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3);
    assert_eq!(hits[0]["entity_id"], "src/format.ts::formatName");
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit["rank"], i + 1);
        for key in [
            "file",
            "entity_id",
            "qualified_name",
            "kind",
            "line_start",
            "line_end",
            "score",
        ] {
            assert!(hit.get(key).is_some(), "hit lacks {key}");
        }
    }
}

/// A bug report shaped like the ones agents bring: prose, the user's own code (which defines
/// its own `__init__` and `add`, and calls the package's `Cart`), a traceback through
/// site-packages, and the error message.
const BUG_REPORT: &str = r#"Checkout crashes when a discount above 100 percent is configured

I wrap the cart in my own basket class and the checkout fails:

```python
from shop.cart import Cart, Item, checkout

class Basket:
    def __init__(self):
        self.cart = Cart()

    def add(self, name, price):
        self.cart.add(Item(name, price))

basket = Basket()
basket.add("tea", 3.5)
print(checkout(basket.cart))
```

```
Traceback (most recent call last):
  File "/home/me/app/basket.py", line 12, in <module>
    print(checkout(basket.cart))
  File "/usr/lib/python3/site-packages/shop/cart.py", line 40, in checkout
    return cart.total()
  File "/usr/lib/python3/site-packages/shop/cart.py", line 31, in total
    return round_cents(apply_discount(raw, discount))
  File "/usr/lib/python3/site-packages/shop/pricing.py", line 7, in apply_discount
    raise ValueError("percent out of range")
ValueError: percent out of range
```
"#;

fn also_files(payload: &Value) -> Vec<String> {
    payload["also"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| p.as_str().unwrap().split(':').next().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_bug_report_is_answered_from_its_innermost_frame_not_from_the_users_own_names() {
    let repo = indexed("python");
    let answer = query(repo.path(), BUG_REPORT, &["--verbosity", "verbose"]);
    assert_eq!(
        first_entity(&answer),
        "shop/pricing.py::apply_discount",
        "{answer}"
    );
    let top = &answer["evidence"][0]["signals"];
    assert_eq!(top["frame"], true, "{answer}");
    assert_eq!(top["message"], true, "{answer}");
    // The user's `__init__` and `add` name nothing of the package: they must not lead.
    for evidence in answer["evidence"].as_array().unwrap().iter().take(2) {
        let id = evidence["entity_id"].as_str().unwrap();
        assert!(
            !id.ends_with("__init__") && !id.ends_with(".add"),
            "{answer}"
        );
    }
    assert_eq!(answer["files"][0]["path"], "shop/pricing.py", "{answer}");
    assert!(
        also_files(&answer).contains(&"shop/cart.py".to_string()),
        "{answer}"
    );
}

#[test]
fn the_lexical_plane_reads_the_report_too_and_every_query_answer_points_further() {
    let repo = copy_fixture("python");
    index_json(repo.path(), &["--no-embed"]);
    let answer = query(repo.path(), BUG_REPORT, &[]);
    let minimal_keys: Vec<&str> = answer
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert!(minimal_keys.contains(&"also"), "{answer}");
    let pointers = answer["also"].as_array().unwrap();
    assert!((1..=5).contains(&pointers.len()), "{answer}");
    let shape = regex::Regex::new(r"^[\w./-]+:\d+ [\w.]+$").unwrap();
    for pointer in pointers {
        assert!(shape.is_match(pointer.as_str().unwrap()), "{pointer}");
    }
    assert!(
        answer["context_text"]
            .as_str()
            .unwrap()
            .contains("apply_discount"),
        "{answer}"
    );
    // The pointers are inside the budget.
    let tight = query(repo.path(), BUG_REPORT, &["--max-tokens", "120"]);
    assert!(tight["total_tokens"].as_u64().unwrap() <= 120, "{tight}");
}

#[test]
fn a_many_entity_answer_spans_files_instead_of_filling_up_with_one() {
    require_model();
    let repo = tempfile::tempdir().unwrap();
    let crowded: String = (0..8)
        .map(|i| format!("def cart_total_{i}(cart):\n    \"\"\"Cart total with rule {i}.\"\"\"\n    return sum(cart) + {i}\n\n\n"))
        .collect();
    std::fs::write(repo.path().join("crowded.py"), crowded).unwrap();
    for name in ["left", "right"] {
        let text: String = (0..2)
            .map(|i| format!("def {name}_cart_total_{i}(cart):\n    \"\"\"The {name} cart total.\"\"\"\n    return sum(cart) * {i}\n\n\n"))
            .collect();
        std::fs::write(repo.path().join(format!("{name}.py")), text).unwrap();
    }
    index_json(repo.path(), &[]);
    let payload = query(
        repo.path(),
        "cart total",
        &["--limit-entities", "8", "--max-tokens", "4000"],
    );
    // Each packed entity opens with `## name (kind, path:start-end)`.
    let files: Vec<String> = payload["context_text"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("## "))
        .filter_map(|line| {
            line.rsplit_once(", ")?
                .1
                .split(':')
                .next()
                .map(String::from)
        })
        .collect();
    assert_eq!(files.len(), 8, "{payload}");
    // Two slots per file (a quarter of eight) while other files have hits; the rest refill
    // from the crowded file in rank order.
    for other in ["left.py", "right.py"] {
        assert_eq!(files.iter().filter(|f| *f == other).count(), 2, "{files:?}");
    }
    assert_eq!(
        files.iter().filter(|f| *f == "crowded.py").count(),
        4,
        "{files:?}"
    );
}

#[test]
fn a_panic_while_embedding_a_question_leaves_later_questions_on_the_vector_plane() {
    let repo = indexed("python");
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("questions.jsonl");
    std::fs::write(
        &batch,
        "{\"id\":\"boom\",\"query\":\"apply a discount BOOM_MARKER\"}\n\
         {\"id\":\"calm\",\"query\":\"apply a percentage discount\"}\n",
    )
    .unwrap();
    let store = repo.path().to_str().unwrap();
    let out = knowcode(
        &[
            "query",
            "--batch",
            batch.to_str().unwrap(),
            "--store",
            store,
            "--verbosity",
            "standard",
        ],
        &[("KNOWCODE_TEST_EMBED_PANIC_ON", "BOOM_MARKER")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (boom, calm) = (&answers[0]["payload"], &answers[1]["payload"]);
    assert_eq!(boom["retrieval_mode"], "lexical", "{boom}");
    assert!(
        boom["errors"][0].as_str().unwrap().starts_with("internal"),
        "{boom}"
    );
    assert_eq!(calm["retrieval_mode"], "hybrid", "{calm}");
    assert!(calm.get("errors").is_none(), "{calm}");
}

const INVOICE_JAVA: &str = "class Invoice {\n    int total(int[] lines) {\n        int sum = 0;\n        for (int line : lines) { sum += line; }\n        return sum;\n    }\n}\n";

#[test]
fn a_java_frame_names_its_file_through_the_package() {
    // Two `Invoice.java` in two packages, the same code: only the frame's package tells them
    // apart (without it, the tie goes to `alpha` by id).
    let repo = lexical_repo(&[
        ("src/main/java/com/acme/alpha/Invoice.java", INVOICE_JAVA),
        ("src/main/java/com/acme/zeta/Invoice.java", INVOICE_JAVA),
    ]);
    let report = "Total of an invoice overflows\n```\nException in thread \"main\" java.lang.ArithmeticException: integer overflow\n\tat com.acme.zeta.Invoice.total(Invoice.java:4)\n\tat com.acme.App.main(App.java:9)\n```\n";
    let answer = query(repo.path(), report, &["--verbosity", "standard"]);
    assert_eq!(
        first_entity(&answer),
        "src/main/java/com/acme/zeta/Invoice.java::Invoice.total",
        "{answer}"
    );
}

#[test]
fn a_bundled_copy_ranks_below_the_source_it_copies() {
    // The same function in the source and in a build's bundled copy of it: the report is
    // answered from the source (without the place prior, the tie goes to the copy by id).
    let code = "/* Flushes the frame buffer once the frame limit is reached. */\nint flush_frame_buffer(int *buffer, int limit) {\n    if (limit <= 0) { return -1; }\n    buffer[0] = 0;\n    return limit;\n}\n";
    let repo = lexical_repo(&[("dist/codec.c", code), ("src/codec.c", code)]);
    let report = "flush_frame_buffer returns -1 when the frame limit is zero\n\nCalling flush_frame_buffer with a limit of zero should flush nothing, but it fails.";
    let answer = query(repo.path(), report, &["--verbosity", "standard"]);
    assert_eq!(
        first_entity(&answer),
        "src/codec.c::flush_frame_buffer",
        "{answer}"
    );
}

/// The header of the default answer's first entity: `## name (kind, path:start-end)`.
fn first_header(payload: &Value) -> &str {
    payload["context_text"]
        .as_str()
        .and_then(|t| t.lines().next())
        .unwrap_or_default()
}

/// The entity a `path:line name` pointer of `also` names.
fn also_names(payload: &Value) -> Vec<String> {
    payload["also"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str()?.split_once(' ').map(|(_, n)| n.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A report quoting the error one method of a class raises: the answer is that method, and
/// `also` points at other units rather than back at the class around it.
#[test]
fn a_report_quoting_an_error_is_answered_by_the_method_that_raises_it() {
    let repo = indexed("units/python");
    let report = "Removing stock fails although enough units are in the warehouse\n\n\
        I add 5 units of ABC to the Stock and nothing is reserved, then `remove(\"ABC\", 5)` raises:\n\n\
        ValueError: cannot remove 5 units of ABC: only 5 in stock\n\n\
        Taking out exactly the units left should work; count(\"ABC\") says 5.";
    let answer = query(repo.path(), report, &[]);
    assert_eq!(
        first_header(&answer),
        "## Stock.remove (method, inventory/stock.py:15-20)",
        "{answer}"
    );
    assert!(
        !also_names(&answer).contains(&"Stock".to_string()),
        "{answer}"
    );
}

/// A Java stack is written innermost frame first: the method the failure surfaced in is the
/// answer, not its caller further down the trace.
#[test]
fn a_java_trace_is_answered_by_its_innermost_frame() {
    let repo = indexed("units/java");
    let report = "NullPointerException when an invoice has a line whose category has no tax rate\n\n\
        Exception in thread \"main\" java.lang.NullPointerException\n\
        \tat com.acme.billing.InvoiceService.applyTax(InvoiceService.java:23)\n\
        \tat com.acme.billing.InvoiceService.total(InvoiceService.java:17)\n\
        \tat com.acme.app.Main.main(Main.java:8)\n";
    let answer = query(repo.path(), report, &["--verbosity", "verbose"]);
    assert_eq!(
        first_entity(&answer),
        "src/main/java/com/acme/billing/InvoiceService.java::InvoiceService.applyTax",
        "{answer}"
    );
    assert_eq!(answer["evidence"][0]["signals"]["frame"], true, "{answer}");
}

/// A change description of one method's behaviour in a class of many: the method is the
/// answer and the class is not spent on a pointer.
#[test]
fn a_change_to_one_method_of_a_large_class_is_answered_by_that_method() {
    let repo = indexed("units/typescript");
    let change = "Setting a key the cache already holds must not evict the oldest entry: when \
        the key is present, set replaces its value and makes it the most recently used without \
        evicting anything";
    let answer = query(repo.path(), change, &[]);
    assert_eq!(
        first_header(&answer),
        "## LruCache.set (method, src/cache.ts:18-24)",
        "{answer}"
    );
    assert!(
        !also_names(&answer).contains(&"LruCache".to_string()),
        "{answer}"
    );
}

/// A report that links the line it blames (a repository host's permalink, `…/blob/<ref>/path#L20`)
/// is answered by the method holding that line, even when its words fit another method better.
#[test]
fn a_report_linking_a_line_is_answered_by_the_method_holding_it() {
    let repo = indexed("units/typescript");
    let report = "Keys vanish from a full cache\n\n\
        After filling the cache, the size is right but the keys miss the one I had just read. \
        I think the problem is here: https://github.com/acme/cache/blob/0a1b2c3/src/cache.ts#L20";
    let answer = query(repo.path(), report, &[]);
    assert_eq!(
        first_header(&answer),
        "## LruCache.set (method, src/cache.ts:18-24)",
        "{answer}"
    );
}

/// A change description may name a function by a plain word (`fuentes`, no underscore or case
/// change to mark it as code): when the project names a function so and hardly uses the word
/// elsewhere, the function is the answer, not the function whose words the rest fits better.
#[test]
fn a_rare_plain_word_naming_a_function_is_read_as_its_name() {
    let thermal = "\"\"\"Module temperature models.\"\"\"\n\n\n\
        def fuentes(poa_global, temp_air, wind_speed, times):\n    \
            \"\"\"Cell temperature from an energy balance, stepped through the times.\"\"\"\n    \
            step = (times[1] - times[0]).total_seconds() / 3600\n    \
            return temp_air + poa_global * 0.03 * step / (1 + wind_speed)\n\n\n\
        def faiman(poa_global, temp_air, wind_speed):\n    \
            \"\"\"Cell temperature from an empirical heat loss factor.\"\"\"\n    \
            return temp_air + poa_global / (25.0 + 6.84 * wind_speed)\n";
    let solar = "\"\"\"Where the sun is.\"\"\"\n\n\n\
        def ephemeris(times, latitude, longitude):\n    \
            \"\"\"Solar position for tz-aware times; naive inputs are an error.\n\n    \
            The timedelta from the epoch is taken in UTC, so times must carry a tz.\n    \
            \"\"\"\n    \
            if times.tz is None:\n        \
                raise ValueError(\"ephemeris needs tz-aware inputs\")\n    \
            elapsed = times.tz_convert(\"UTC\") - times[0]\n    \
            return latitude + longitude * elapsed.total_seconds()\n";
    // Twenty more modules, so `fuentes` is in one file of 22 (under 5 %).
    let parts: Vec<(String, String)> = (1..=20)
        .map(|i| {
            let text = format!(
                "\"\"\"Helpers, part {i}.\"\"\"\n\n\ndef helper_{i}(value):\n    \
                 \"\"\"Adds {i} to a value.\"\"\"\n    return value + {i}\n"
            );
            (format!("models/part{i}.py"), text)
        })
        .collect();
    let mut files: Vec<(&str, &str)> =
        vec![("models/thermal.py", thermal), ("models/solar.py", solar)];
    files.extend(parts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let repo = lexical_repo(&files);
    let change = "Fix fuentes error for tz-aware inputs (#4071)\n\n\
        * swap out timedelta calculation; add tz test";
    let answer = query(repo.path(), change, &[]);
    assert_eq!(
        first_header(&answer),
        "## fuentes (function, models/thermal.py:4-7)",
        "{answer}"
    );
}

/// A common name (`__init__`) has many definitions; a question that also writes a type's name
/// ("Make Module call the `__init__` of NodeBase", the shape of astroid's #1262) means that
/// type's, not the first few in id order (here six expression nodes whose paths sort first).
#[test]
fn a_common_name_means_the_definition_under_the_type_the_question_writes() {
    let base = "\"\"\"The node every tree node derives from.\"\"\"\n\n\n\
        class NodeBase:\n    \
            \"\"\"A node of the tree: its position and its parent.\"\"\"\n\n    \
            def __init__(self, lineno=None, parent=None):\n        \
                self.lineno = lineno\n        \
                self.parent = parent\n";
    let scoped = "\"\"\"Nodes that open a scope.\"\"\"\n\n\
        from astra.nodes.base import NodeBase\n\n\n\
        class Module(NodeBase):\n    \
            \"\"\"A whole source file: its name, its body and the names it defines.\"\"\"\n\n    \
            def __init__(self, name, doc=None):\n        \
                self.name = name\n        \
                self.doc = doc\n        \
                self.body = []\n";
    let expressions: Vec<(String, String)> = [
        "Attribute",
        "Binary",
        "Call",
        "Compare",
        "Constant",
        "Keyword",
    ]
    .iter()
    .map(|class| {
        let lower = class.to_lowercase();
        let text = format!(
            "\"\"\"The {lower} expression node.\"\"\"\n\n\
                     from astra.nodes.base import NodeBase\n\n\n\
                     class {class}(NodeBase):\n    \
                         \"\"\"A {lower} expression and its operands.\"\"\"\n\n    \
                         def __init__(self, left, right=None):\n        \
                             super().__init__()\n        \
                             self.left = left\n        \
                             self.right = right\n"
        );
        (format!("astra/calls/{lower}.py"), text)
    })
    .collect();
    let mut files: Vec<(&str, &str)> = vec![
        ("astra/nodes/base.py", base),
        ("astra/nodes/scoped.py", scoped),
    ];
    files.extend(expressions.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let repo = lexical_repo(&files);
    let ranked = ranked_ids(
        repo.path(),
        "Make Module call the __init__ of NodeBase (#12)",
        3,
    );
    assert!(
        ranked.contains(&"astra/nodes/scoped.py::Module.__init__".to_string()),
        "{ranked:?}"
    );
}

/// Within the leading file, the long function that does the work outranks the short one that
/// shares a few of the report's words (the shape of Catch2#1608: the report quotes the
/// destructor's assertion, the fix splits the names in the constructor).
#[test]
fn a_report_is_answered_by_the_long_function_that_does_the_work_not_a_short_neighbour() {
    let capture = "\"\"\"Messages recorded for an assertion: what CAPTURE(...) shows when a check fails.\"\"\"\n\n\n\
        class Capturer:\n    \
            \"\"\"Records the values of the expressions named in one CAPTURE(...) call.\"\"\"\n\n    \
            def __init__(self, macro, names, values):\n        \
                self.macro = macro\n        \
                self.messages = []\n        \
                self.captured = 0\n        \
                start = 0\n        \
                # One message per name.\n        \
                for pos, char in enumerate(names):\n            \
                    if char == \",\":\n                \
                        self.messages.append(names[start:pos].strip())\n                \
                        start = pos + 1\n        \
                self.messages.append(names[start:].strip())\n        \
                for name, value in zip(self.messages, values):\n            \
                    self.record(name, value)\n\n    \
            def record(self, name, value):\n        \
                \"\"\"Adds `name := value` to the messages of the running check.\"\"\"\n        \
                self.captured += 1\n        \
                return \"%s := %r\" % (name, value)\n\n    \
            def close(self):\n        \
                \"\"\"Ends the capture: every message was recorded once.\"\"\"\n        \
                assert self.captured == len(self.messages)\n";
    // Eight more modules, so the report's rarer words name one file.
    let parts: Vec<(String, String)> = (1..=8)
        .map(|i| {
            let text = format!(
                "\"\"\"Reporters, part {i}.\"\"\"\n\n\ndef report_{i}(stream, result):\n    \
                 \"\"\"Writes a result, part {i}.\"\"\"\n    stream.write(str(result) + \"{i}\")\n"
            );
            (format!("check/report{i}.py"), text)
        })
        .collect();
    let mut files: Vec<(&str, &str)> = vec![("check/capture.py", capture)];
    files.extend(parts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let repo = lexical_repo(&files);
    let report = "CAPTURE(\"text, with comma\") fails\n\n\
        When a string containing a comma is passed to CAPTURE and the check succeeds, the program \
        fails an assertion because the captured count differs from the messages.\n\n\
        Expected: the quoted text is one message. CAPTURE((\"text, with comma\")) works as expected.";
    let answer = query(repo.path(), report, &[]);
    assert_eq!(
        first_header(&answer),
        "## Capturer.__init__ (method, check/capture.py:7-19)",
        "{answer}"
    );
}

/// A Rust report names an `impl` block the way Rust people speak of it, `Drop for Drain`: the
/// answer is that block's method, not the method whose words the rest of the report fits
/// (`par_drain`, which the report calls) nor another type's `drop`.
#[test]
fn a_rust_trait_for_a_type_is_answered_by_that_impl_blocks_method() {
    let vec = "//! Parallel draining of a vector's range.\n\n\
        use std::ops::Range;\n\n\
        pub struct Drain<'data, T> {\n    vec: &'data mut Vec<T>,\n    range: Range<usize>,\n    orig_len: usize,\n}\n\n\
        impl<T> ParallelDrainRange for Vec<T> {\n    \
            fn par_drain(&mut self, range: Range<usize>) -> Drain<'_, T> {\n        \
                let orig_len = self.len();\n        \
                // The range is checked here; the tail moves back when the drain is dropped.\n        \
                assert!(range.start <= range.end && range.end <= orig_len, \"drain range out of bounds\");\n        \
                Drain { vec: self, range, orig_len }\n    }\n}\n\n\
        impl<'data, T> Drain<'data, T> {\n    \
            pub fn len(&self) -> usize {\n        self.range.end - self.range.start\n    }\n}\n\n\
        impl<'data, T> Iterator for Drain<'data, T> {\n    \
            type Item = T;\n    fn next(&mut self) -> Option<T> {\n        None\n    }\n}\n\n\
        impl<'data, T> Drop for Drain<'data, T> {\n    \
            fn drop(&mut self) {\n        \
                if self.range.is_empty() {\n            return;\n        }\n        \
                let start = self.range.start;\n        \
                unsafe { self.vec.set_len(start) };\n    }\n}\n\n\
        pub struct IntoIter<T> {\n    vec: Vec<T>,\n}\n\n\
        impl<T> Drop for IntoIter<T> {\n    \
            fn drop(&mut self) {\n        self.vec.clear();\n    }\n}\n";
    let lib = "//! Parallel iterators over collections.\npub mod vec;\n\n\
        pub trait ParallelDrainRange {\n    \
            fn par_drain(&mut self, range: std::ops::Range<usize>) -> vec::Drain<'_, u8>;\n}\n";
    let repo = lexical_repo(&[("src/vec.rs", vec), ("src/lib.rs", lib)]);
    let report = "Bug in Drop for Drain<'data, T>\n\n\
        If you drain an empty range of a vector with par_drain(5..5), the vector loses its tail: \
        the range is empty, yet after the drain the vec has only 5 elements left, not 10.";
    let answer = query(repo.path(), report, &[]);
    assert!(
        first_header(&answer).starts_with("## Drain.drop (method, src/vec.rs:"),
        "{answer}"
    );
}

/// A question that speaks of a type's constructor means the method that builds it
/// (`__init__` here; `constructor`, `init`, `new` or the type's own name elsewhere), not the
/// method whose words the rest of the question fits (`formatted` names the family and given
/// names too).
#[test]
fn a_question_about_a_types_constructor_is_answered_by_the_constructor() {
    let person = "\"\"\"Person names as DICOM writes them: family^given^middle.\"\"\"\n\n\n\
        class PersonName:\n    \
            \"\"\"A person's name, with its components and the encodings used to read it.\"\"\"\n\n    \
            def __init__(self, val, encodings=None):\n        \
                self.original = val\n        \
                self.encodings = encodings or [\"iso8601\"]\n        \
                self.components = str(val).split(\"^\")\n\n    \
            @classmethod\n    \
            def from_named_components(cls, family_name=\"\", given_name=\"\", middle_name=\"\"):\n        \
                \"\"\"Builds a name from its named components, family name first.\"\"\"\n        \
                return cls(\"^\".join([family_name, given_name, middle_name]))\n\n    \
            def family_name(self):\n        \
                \"\"\"The family name component of the person's name.\"\"\"\n        \
                return self.components[0]\n\n    \
            def given_name(self):\n        \
                \"\"\"The given name component of the person's name.\"\"\"\n        \
                return self.components[1] if len(self.components) > 1 else \"\"\n\n    \
            def formatted(self, fmt):\n        \
                \"\"\"The name's components given to a format string.\"\"\"\n        \
                return fmt % {\"family_name\": self.family_name(), \"given_name\": self.given_name()}\n";
    let tag = "\"\"\"Tags of a data element.\"\"\"\n\n\n\
        def tag_for_keyword(keyword):\n    \
            \"\"\"The tag a keyword names.\"\"\"\n    \
            return hash(keyword) & 0xFFFFFFFF\n";
    let repo = lexical_repo(&[("names/person.py", person), ("names/tag.py", tag)]);
    let question = "PersonName constructor fails on bytes\n\n\
        Building a PersonName from the raw bytes of a family name and given name raises instead \
        of decoding them with the encodings given.";
    let answer = query(repo.path(), question, &[]);
    assert!(
        first_header(&answer).starts_with("## PersonName.__init__ (method, names/person.py:"),
        "{answer}"
    );
}

/// A change description that misspells a member under its owner
/// (`Location.get_get_sun_rise_set_transit`) means the owner's member nearest in spelling,
/// not the owner it qualifies.
#[test]
fn a_misspelt_member_under_its_owner_is_read_as_the_nearest_member() {
    let location = "\"\"\"A place on Earth and the sun's path over it.\"\"\"\n\n\n\
        class Location:\n    \
            \"\"\"Latitude, longitude, altitude and time zone of a site.\"\"\"\n\n    \
            def __init__(self, latitude, longitude, tz=\"UTC\", altitude=0):\n        \
                self.latitude = latitude\n        \
                self.longitude = longitude\n        \
                self.tz = tz\n        \
                self.altitude = altitude\n\n    \
            def get_solarposition(self, times):\n        \
                \"\"\"The sun's zenith and azimuth at the site for each of the times.\"\"\"\n        \
                return [(self.latitude, t) for t in times]\n\n    \
            def get_clearsky(self, times, model=\"ineichen\"):\n        \
                \"\"\"Clear-sky irradiance at the site for each of the times.\"\"\"\n        \
                return [(model, t) for t in times]\n\n    \
            def get_sun_rise_set_transit(self, times, method=\"pyephem\"):\n        \
                \"\"\"Sunrise, sunset and transit times for each day of the times.\"\"\"\n        \
                return [(method, t, self.longitude) for t in times]\n";
    let irradiance = "\"\"\"Irradiance on tilted planes.\"\"\"\n\n\n\
        def get_total_irradiance(surface_tilt, surface_azimuth, dni, ghi, dhi):\n    \
            \"\"\"Total irradiance on a plane from its tilt and the sky's components.\"\"\"\n    \
            return dni + ghi + dhi + surface_tilt * 0 + surface_azimuth * 0\n";
    let repo = lexical_repo(&[
        ("pv/location.py", location),
        ("pv/irradiance.py", irradiance),
    ]);
    let change =
        "Fix typo in documentation pv.location.Location.get_get_sun_rise_set_transit (#1776)";
    let answer = query(repo.path(), change, &[]);
    assert!(
        first_header(&answer)
            .starts_with("## Location.get_sun_rise_set_transit (method, pv/location.py:"),
        "{answer}"
    );
}

/// A change description of a couple of dozen words that edits two methods of one file ranks
/// the second right after the first: the file's evidence already speaks for both, and the
/// one-sentence rescoring must not halve the second again below other files' best.
#[test]
fn a_change_description_ranks_its_files_second_method_before_other_files() {
    let references = "\"\"\"Rule: column references must use the aliases a query defines.\"\"\"\n\n\n\
        class ReferenceRule:\n    \
            \"\"\"Checks that column references name aliases the query defines.\"\"\"\n\n    \
            def lint_references_and_aliases(self, references, aliases, dialect):\n        \
                \"\"\"Flags each column reference that names an alias the query does not define.\"\"\"\n        \
                for reference in references:\n            \
                    if reference.qualifier not in aliases:\n                \
                        yield reference\n\n    \
            def evaluate(self, select, dialect):\n        \
                \"\"\"Collects the aliases of the SELECT clause and the references of the WHERE clause.\"\"\"\n        \
                aliases = select.aliases()\n        \
                references = select.where_references()\n        \
                return list(self.lint_references_and_aliases(references, aliases, dialect))\n";
    let joins = "\"\"\"Rule: every alias a JOIN defines is used.\"\"\"\n\n\n\
        def lint_aliases_in_join(select, dialect):\n    \
            \"\"\"Flags each alias of a JOIN clause that no column reference of the SELECT uses.\"\"\"\n    \
            used = {reference.qualifier for reference in select.references()}\n    \
            return [alias for alias in select.join_aliases() if alias not in used]\n";
    let layout = "\"\"\"Rule: keywords are upper case.\"\"\"\n\n\n\
        def lint_keywords(select, dialect):\n    \
            \"\"\"Flags each keyword of the SELECT written in lower case.\"\"\"\n    \
            return [word for word in select.keywords() if word != word.upper()]\n";
    let repo = lexical_repo(&[
        ("rules/references.py", references),
        ("rules/joins.py", joins),
        ("rules/layout.py", layout),
    ]);
    let change = "Allow SELECT column alias in WHERE clauses for certain dialects: references to \
        an alias the SELECT defines are no longer flagged when the dialect allows it";
    let ids = ranked_ids(repo.path(), change, 3);
    assert_eq!(
        ids[..2],
        [
            "rules/references.py::ReferenceRule.evaluate",
            "rules/references.py::ReferenceRule.lint_references_and_aliases"
        ],
        "{ids:?}"
    );
}

/// In a description of a couple of dozen words, a file's second definition of a name the
/// question writes (an overload, or the same method on another type) still yields to other
/// files' definitions of it: near-copies must not fill the places the other candidates need.
#[test]
fn one_files_second_definition_of_a_written_name_yields_to_other_files() {
    let array = "\"\"\"Arrays of a parsed JSON document held in memory.\"\"\"\n\n\n\
        class Array:\n    \
            \"\"\"A JSON array parsed in full.\"\"\"\n\n    \
            def at_pointer(self, pointer):\n        \
                \"\"\"The element a JSON pointer names, looked up in the array.\"\"\"\n        \
                index, _, rest = pointer.lstrip(\"/\").partition(\"/\")\n        \
                element = self.elements[int(index)]\n        \
                return element.at_pointer(\"/\" + rest) if rest else element\n\n\n\
        class ArrayResult:\n    \
            \"\"\"An array or the error met while parsing it.\"\"\"\n\n    \
            def at_pointer(self, pointer):\n        \
                \"\"\"The element a JSON pointer names, or the error the array carries.\"\"\"\n        \
                if self.error:\n            \
                    return self.error\n        \
                return self.value.at_pointer(pointer)\n";
    let document = "\"\"\"A document parsed on demand: values are read as the caller walks to them.\"\"\"\n\n\n\
        class Document:\n    \
            \"\"\"An on-demand document: one pass over the input, forward only.\"\"\"\n\n    \
            def at_pointer(self, pointer):\n        \
                \"\"\"The value a JSON pointer names, read from the current position of the document.\"\"\"\n        \
                value = self.root()\n        \
                for key in pointer.lstrip(\"/\").split(\"/\"):\n            \
                    value = value.find_field(key)\n        \
                return value\n\n    \
            def rewind(self):\n        \
                \"\"\"Rewinds the document to its start, so a JSON pointer can be read again.\"\"\"\n        \
                self.position = 0\n";
    let value = "\"\"\"Values of an on-demand document.\"\"\"\n\n\n\
        class Value:\n    \
            \"\"\"One value of an on-demand document, read when asked for.\"\"\"\n\n    \
            def at_pointer(self, pointer):\n        \
                \"\"\"The value under this one that a pointer names.\"\"\"\n        \
                return self.document.at_pointer(self.path + pointer)\n";
    let repo = lexical_repo(&[
        ("dom/array.py", array),
        ("ondemand/document.py", document),
        ("ondemand/value.py", value),
    ]);
    let report = "at_pointer in On Demand should automatically rewind. Currently, users of the \
        On Demand API who use at_pointer (JSON Pointer) to reach an element have to manually \
        rewind. Why don't we make that automatic?";
    let ids = ranked_ids(repo.path(), report, 3);
    let files: Vec<&str> = ids
        .iter()
        .filter_map(|id| id.split_once("::").map(|(file, _)| file))
        .collect();
    assert_eq!(
        files,
        ["dom/array.py", "ondemand/document.py", "ondemand/value.py"],
        "{ids:?}"
    );
}

/// astroid's numpy helpers, where "Fix crash if numpy doesn't have version" is fixed: the code
/// the change descriptions of the chore and tooling tests are about.
const NUMPY_UTILS: &str = r#""""Helpers shared by the numpy brain modules."""


def numpy_supports_type_hints():
    """Whether the installed numpy has type hints."""
    return _get_numpy_version() >= ("1", "20", "0")


def _get_numpy_version():
    """The installed numpy's version as a tuple of strings."""
    import numpy

    return tuple(numpy.version.version.split("."))
"#;

#[test]
fn a_release_script_sharing_a_change_descriptions_housekeeping_words_yields_to_the_code() {
    let script = "\"\"\"Bumps the version in the ChangeLog when a release is made.\"\"\"\n\n\n\
        def get_whats_new(changelog, version):\n    \
            \"\"\"The changelog entry of a version: the lines under its header.\"\"\"\n    \
            header = f\"What's New in astroid {version}?\"\n    \
            entry = changelog.split(header, 1)[1]\n    \
            return entry.split(\"What's New\", 1)[0]\n\n\n\
        def transform_content(content, version):\n    \
            \"\"\"Adds an empty changelog entry for the next version.\"\"\"\n    \
            return content.replace(\"What's New\", f\"What's New in {version}\", 1)\n";
    let repo = lexical_repo(&[
        ("script/bump_changelog.py", script),
        ("astroid/brain/numpy_utils.py", NUMPY_UTILS),
    ]);
    let squashed = "Fix crash if numpy doesn't have version (#1892)\n\n\
        * Fix crash if numpy doesn't have version\n\n* Add changelog entry\n\n* Update ChangeLog";
    let ids = ranked_ids(repo.path(), squashed, 2);
    assert_eq!(
        ids[0], "astroid/brain/numpy_utils.py::_get_numpy_version",
        "{ids:?}"
    );
    let about_the_script =
        "The release script writes the changelog entry of a version under the wrong header";
    let ids = ranked_ids(repo.path(), about_the_script, 2);
    assert_eq!(ids[0], "script/bump_changelog.py::get_whats_new", "{ids:?}");
}

#[test]
fn a_change_naming_two_functions_of_a_file_ranks_the_function_where_they_meet() {
    let chain = r#""""Runs a photovoltaic system model from weather data to power."""


class ModelChain:
    """A chain of models from weather to AC power."""

    def _assign_weather(self, data):
        """Stores the weather columns this chain needs."""
        self.weather = data[["ghi", "dni", "dhi", "temp_air", "wind_speed"]]

    def _assign_times(self):
        """Takes the index of the weather as the chain's times."""
        self.times = self.weather.index

    def _verify_df(self, data, required):
        """Raises if a column the model needs is missing."""
        missing = [c for c in required if c not in data]
        if missing:
            raise ValueError(f"missing columns {missing}")

    def prepare_inputs(self, weather):
        """Prepares the solar position and irradiance inputs from weather."""
        self._verify_df(weather, required=["ghi", "dni", "dhi"])
        self._assign_weather(weather)
        self._assign_times()
        self.solar_position = self.location.get_solarposition(self.weather.index)
        return self

    def prepare_inputs_from_poa(self, data):
        """Prepares the inputs from plane-of-array irradiance."""
        self._verify_df(data, required=["poa_global"])
        self._assign_weather(data)
        self.total_irrad = data
        return self

    def run_model(self, weather):
        """Runs the chain from weather to AC power."""
        self.prepare_inputs(weather)
        return self.ac

    def run_model_from_poa(self, data):
        """Runs the chain from plane-of-array irradiance to AC power."""
        self.prepare_inputs_from_poa(data)
        return self.ac

    def complete_irradiance(self, weather):
        """Fills in the irradiance components weather lacks, at the chain's times."""
        self._assign_weather(weather)
        self.times = self.weather.index
        return self
"#;
    let repo = lexical_repo(&[("pvlib/modelchain.py", chain)]);
    let squashed = "Make sure times are assigned with ModelChain.run_from_poa (#1162)\n\n\
        * Make sure times are assigned with ModelChain.run_from_poa\n\n\
        * move _assign_times to _assign_weather";
    let ids = ranked_ids(repo.path(), squashed, 4);
    let place = |name: &str| ids.iter().position(|id| id.ends_with(&format!("::{name}")));
    let meeting = place("ModelChain.prepare_inputs").unwrap_or_else(|| panic!("{ids:?}"));
    assert!(meeting < 3, "{ids:?}");
    assert!(
        place("ModelChain").is_none_or(|class| meeting < class),
        "{ids:?}"
    );
}

#[test]
fn a_change_messages_chore_bullets_do_not_lead_it_to_code_sharing_their_words() {
    let jobs = r#""""Jobs the manager runs again when an entry of the changelog of a module changes."""


class JobRunner:
    """Re-runs inference jobs; each entry added to its log is a job to run again."""

    def rerun(self, entry):
        """Runs the job of a changelog entry again and updates the log."""
        self.log.append(entry)
        return self.run(entry)

    def add_entry(self, entry):
        """Adds an entry to the changelog of jobs to run."""
        self.log.append(entry)
"#;
    let repo = lexical_repo(&[
        ("astroid/brain/numpy_utils.py", NUMPY_UTILS),
        ("astroid/interpreter/jobs.py", jobs),
    ]);
    let squashed = "Fix crash if numpy doesn't have version (#1892)\n\n\
        * Fix crash if numpy doesn't have version\n\n* Add changelog entry\n\n\
        * re run jobs\n\n* Update ChangeLog";
    let ids = ranked_ids(repo.path(), squashed, 2);
    assert_eq!(
        ids[0], "astroid/brain/numpy_utils.py::_get_numpy_version",
        "{ids:?}"
    );
    // The same words as the question itself, not as chores, still find that code.
    let about_the_jobs = "Adding an entry to the changelog of jobs does not run the job again";
    let ids = ranked_ids(repo.path(), about_the_jobs, 2);
    assert_eq!(
        ids[0], "astroid/interpreter/jobs.py::JobRunner.add_entry",
        "{ids:?}"
    );
}

#[test]
fn a_change_naming_a_class_and_describing_one_of_its_methods_ranks_that_method_first() {
    let fields = r#""""Field classes for various types of data."""


class Field:
    """Basic field from which other fields should extend."""

    def __init__(self, default=None, data_key=None):
        self.default = default
        self.data_key = data_key
        self.parent = None
        self.name = None

    def _bind_to_schema(self, field_name, schema):
        """Update field with values from its parent schema."""
        self.parent = self.parent or schema
        self.name = self.name or field_name

    @property
    def root(self):
        """Reference to the top-level schema this field belongs to."""
        ret = self
        while hasattr(ret, "parent"):
            ret = ret.parent
        return ret


class DateTime(Field):
    """A formatted datetime string.

    Example: ``'2014-12-22T03:12:58.019077+00:00'``
    """

    SERIALIZATION_FUNCS = {"iso": "isoformat", "rfc": "rfcformat"}
    DESERIALIZATION_FUNCS = {"iso": "from_iso", "rfc": "from_rfc"}
    DEFAULT_FORMAT = "iso"
    OBJ_TYPE = "datetime"
    SCHEMA_OPTS_VAR_NAME = "datetimeformat"

    def __init__(self, format=None, **kwargs):
        super().__init__(**kwargs)
        self.format = format

    def _bind_to_schema(self, field_name, schema):
        super()._bind_to_schema(field_name, schema)
        self.format = (
            self.format
            or getattr(self.parent.opts, self.SCHEMA_OPTS_VAR_NAME)
            or self.DEFAULT_FORMAT
        )

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        data_format = self.format or self.DEFAULT_FORMAT
        format_func = self.SERIALIZATION_FUNCS.get(data_format)
        if format_func:
            return getattr(value, format_func)()
        return value.strftime(data_format)

    def _deserialize(self, value, attr, data, **kwargs):
        if not value:
            raise ValueError("Cannot deserialize an empty datetime")
        data_format = self.format or self.DEFAULT_FORMAT
        func = self.DESERIALIZATION_FUNCS.get(data_format)
        return getattr(value, func)() if func else value


class Date(DateTime):
    """ISO8601-formatted date string."""

    OBJ_TYPE = "date"
    SCHEMA_OPTS_VAR_NAME = "dateformat"


class Nested(Field):
    """Allows you to nest a schema inside a field."""

    def __init__(self, nested, **kwargs):
        super().__init__(**kwargs)
        self.nested = nested

    @property
    def schema(self):
        """The nested schema object."""
        return self.nested(context=getattr(self.parent, "context", {}))
"#;
    let schema = r#""""The Schema class."""


class SchemaOpts:
    """class Meta options for the Schema."""

    def __init__(self, meta):
        self.fields = getattr(meta, "fields", ())
        self.dateformat = getattr(meta, "dateformat", None)
        self.datetimeformat = getattr(meta, "datetimeformat", None)


class Schema:
    """Base schema class with which to define custom schemas."""

    OPTIONS_CLASS = SchemaOpts

    def __init__(self, only=None, context=None):
        self.only = only
        self.context = context or {}
        self.opts = self.OPTIONS_CLASS(getattr(self, "Meta", None))

    def on_bind_field(self, field_name, field_obj):
        """Hook to modify a field when it is bound to the Schema."""
        return None

    def _bind_field(self, field_name, field_obj):
        """Bind field to the schema, setting any necessary attributes on the field."""
        field_obj._bind_to_schema(field_name, self)
        self.on_bind_field(field_name, field_obj)
"#;
    let changelog = "Changelog\n=========\n\n3.0.0\n-----\n\n\
        - Nested DateTime format: the schema opts of the root are used.\n";
    let repo = lexical_repo(&[
        ("src/marshmallow/fields.py", fields),
        ("src/marshmallow/schema.py", schema),
        ("CHANGELOG.rst", changelog),
    ]);
    let squashed = "Nested DateTime Format (#1359)\n\n\
        * Resolve the schema opts using root instead of parent\n\n* Update changelog";
    let ids = ranked_ids(repo.path(), squashed, 3);
    assert_eq!(
        ids[0], "src/marshmallow/fields.py::DateTime._bind_to_schema",
        "{ids:?}"
    );
    assert_eq!(ids[1], "src/marshmallow/fields.py::DateTime", "{ids:?}");
    // About the class as a whole, or a one-line description of it: the class stays first.
    let about_the_class = "DateTime is completely unnecessary (#1406)\n\n\
        * Whatever peculiarity this was working around no longer exists";
    let ids = ranked_ids(repo.path(), about_the_class, 3);
    assert_eq!(ids[0], "src/marshmallow/fields.py::DateTime", "{ids:?}");
    let one_line = "how DateTime resolves the schema opts using root instead of parent";
    let ids = ranked_ids(repo.path(), one_line, 3);
    assert_eq!(ids[0], "src/marshmallow/fields.py::DateTime", "{ids:?}");
}

#[test]
fn a_report_pasting_lines_of_one_method_is_answered_by_that_method() {
    let cache = r#""""A cache of loaded values that expire after a time to live."""

import time


class Entry:
    def __init__(self, value, deadline):
        self.value = value
        self.deadline = deadline

    def expired(self):
        return time.time() >= self.deadline


class Cache:
    """Values by key, loaded on first use and again once their time to live has passed."""

    def __init__(self, loader, ttl):
        self.loader = loader
        self.ttl = ttl
        self.entries = {}

    def get(self, key):
        """Returns the cached value of a key, loading it again when it expired."""
        entry = self.entries.get(key)
        if entry is None or entry.expired():
            return self.load(key)
        return entry.value

    def load(self, key):
        started = time.time()
        value = self.loader(key)
        self.entries[key] = Entry(value, started + self.ttl)
        return value

    def expire(self):
        """Drops every entry whose time to live has passed."""
        now = time.time()
        self.entries = {k: e for k, e in self.entries.items() if e.deadline > now}
"#;
    let repo = lexical_repo(&[("cachelib/cache.py", cache)]);
    let prose = "Cache.get returns stale values after the ttl has passed\n\n\
        Calling `Cache.get` once the ttl has passed still returns the old value when the \
        loader is slow: the entry expires too early or too late. The deadline is computed \
        from the time the loading started:\n";
    let pasted = "```python\nvalue = self.loader(key)\n\
        self.entries[key] = Entry(value, started + self.ttl)\n```\n";
    let ids = ranked_ids(repo.path(), &format!("{prose}\n{pasted}"), 2);
    assert_eq!(ids[0], "cachelib/cache.py::Cache.load", "{ids:?}");
    // Without the pasted lines the method the report names comes first.
    let ids = ranked_ids(repo.path(), prose, 2);
    assert_eq!(ids[0], "cachelib/cache.py::Cache.get", "{ids:?}");
}

#[test]
fn a_header_defining_a_name_many_times_gains_one_companion_share_not_one_per_namesake() {
    let header = r#"#pragma once
#include <string>
#include <vector>

namespace report {

template <typename T> struct StringMaker {
    static std::string convert(const T& value) { return describe(value); }
};

template <> struct StringMaker<std::string> {
    static std::string convert(const std::string& value) { return '"' + value + '"'; }
};

template <> struct StringMaker<char> {
    static std::string convert(char value) { return std::string(1, value); }
};

template <> struct StringMaker<int> {
    static std::string convert(int value) { return std::to_string(value); }
};

template <> struct StringMaker<long> {
    static std::string convert(long value) { return std::to_string(value); }
};

template <typename T> struct StringMaker<std::vector<T>> {
    static std::string convert(const std::vector<T>& values) { return joinAll(values); }
};

template <> struct StringMaker<float> { static std::string convert(float value); };
template <> struct StringMaker<double> { static std::string convert(double value); };

std::string fpToString(double value, int precision);

} // namespace report
"#;
    let source = r#"#include "tostring.hpp"

#include <iomanip>
#include <sstream>

namespace report {

std::string fpToString(double value, int precision) {
    std::ostringstream oss;
    oss << std::setprecision(precision) << std::fixed << value;
    return oss.str();
}

std::string StringMaker<float>::convert(float value) {
    return fpToString(value, 5) + 'f';
}

std::string StringMaker<double>::convert(double value) {
    return fpToString(value, 10);
}

} // namespace report
"#;
    let repo = lexical_repo(&[("src/tostring.hpp", header), ("src/tostring.cpp", source)]);
    let question = "Allow a custom precision for floating point values in failure messages\n\n\
        The precision of float and double values is hard-coded to 5 and 10 digits when they are \
        converted to a string for a failure message, which is too few to tell two doubles \
        apart. Add a way to set the precision of the conversion.";
    let ranked = query(
        repo.path(),
        question,
        &["--verbosity", "diagnostic", "--limit-entities", "12"],
    );
    let evidence = ranked["evidence"].as_array().expect("evidence");
    let header_companions: Vec<&str> = evidence
        .iter()
        .filter(|e| e["signals"]["companion"] == true)
        .filter_map(|e| e["entity_id"].as_str())
        .filter(|id| id.starts_with("src/tostring.hpp::"))
        .collect();
    // The six inline `convert`s of the header are not the declaration of the source's
    // `convert(float)`: one of them stands for it, not all six.
    assert_eq!(header_companions.len(), 1, "{evidence:?}");
    let first = evidence[0]["entity_id"].as_str().unwrap();
    assert!(first.starts_with("src/tostring.cpp::"), "{evidence:?}");
}

#[test]
fn a_change_about_a_named_types_constructors_ranks_its_constructor_first() {
    let person = r#""""Person names as written in records: family, given and middle name components."""


class PersonName:
    """A person name with its family, given, middle, prefix and suffix components.

    Components are separated by carets; name groups by equal signs.
    """

    def __init__(self, value, encodings=None):
        self.original = value
        self.encodings = encodings or ["default"]
        self.components = value.split("=")

    def family_name(self):
        """The family name component."""
        return self.components[0].split("^")[0]

    def given_name(self):
        """The given name component."""
        return self.components[0].split("^")[1]

    def formatted(self, template):
        """The name components formatted with a template."""
        parts = self.components[0].split("^")
        return template.format(*parts)
"#;
    let repo = lexical_repo(&[("names/person.py", person)]);
    let bullet = "\n\n* Added PersonName.from_named_components and \
        PersonName.from_named_components_veterinary";
    let ids = ranked_ids(
        repo.path(),
        &format!("Person Name Constructors (#1331){bullet}"),
        2,
    );
    assert_eq!(ids[0], "names/person.py::PersonName.__init__", "{ids:?}");
    assert_eq!(ids[1], "names/person.py::PersonName", "{ids:?}");
    // Without speaking of constructors the type does not hand its place to `__init__`.
    let ids = ranked_ids(
        repo.path(),
        &format!("Person Name components (#1331){bullet}"),
        2,
    );
    assert_ne!(ids[0], "names/person.py::PersonName.__init__", "{ids:?}");
}

#[test]
fn a_name_nothing_defines_stands_for_the_family_named_after_it() {
    let protocols = r#""""How each kind of node answers what was assigned to it."""


def for_assigned_stmts(self, node=None, context=None, assign_path=None):
    """What a for loop's target is assigned: the items of what it iterates."""
    for item in self.iter.infer(context):
        yield from item.elements


def sequence_assigned_stmts(self, node=None, context=None, assign_path=None):
    """What an element of a tuple or list target is assigned, by its index."""
    index = self.elts.index(node)
    return self.parent.assigned_stmts(self, context, [index] + (assign_path or []))


def arguments_assigned_stmts(self, node=None, context=None, assign_path=None):
    """What an argument of the call binds, when it is known."""
    return self.call_context.get(node.name, [])
"#;
    let lookup = r#""""Looking up the statements that bind a name in a scope."""


class LookupMixIn:
    def _filter_stmts(self, stmts, frame, offset):
        """Filters the statements assigned to a name down to those that reach this node:
        the typing of each parameter is checked, a parameter's assigned statements are
        added, and assigned statements in other branches are dropped."""
        kept = []
        for stmt in stmts:
            if stmt.frame() is frame and stmt.lineno <= offset:
                kept.append(stmt)
        return kept

    def assigned_names(self):
        """The names assigned in this scope, with the typing of each parameter."""
        return [stmt.name for stmt in self.body if stmt.is_assign]

    def lookup_typing(self, name):
        """The typing a parameter or an assigned name was given."""
        return self.annotations.get(name)
"#;
    let repo = lexical_repo(&[
        ("astro/protocols.py", protocols),
        ("astro/lookup.py", lookup),
    ]);
    let ranked = query(
        repo.path(),
        "Add parameter typing to ``assigned_stmts`` (#1249)",
        &["--verbosity", "diagnostic", "--limit-entities", "6"],
    );
    let evidence = ranked["evidence"].as_array().expect("evidence");
    let first = evidence[0]["entity_id"].as_str().unwrap();
    assert!(first.ends_with("_assigned_stmts"), "{evidence:?}");
    let family: Vec<&str> = evidence
        .iter()
        .filter(|e| e["signals"]["name_match"] == true)
        .filter_map(|e| e["entity_id"].as_str())
        .collect();
    assert_eq!(family.len(), 3, "{evidence:?}");
    assert!(
        family
            .iter()
            .all(|id| id.starts_with("astro/protocols.py::"))
    );
}

#[test]
fn a_member_bound_by_assignment_is_answered_by_the_function_it_binds() {
    let nodes = r#""""The nodes of the tree."""


class NodeNG:
    def _infer(self, context=None):
        """Infers what this node stands for; each kind of node binds its own."""
        raise InferenceError(node=self, context=context)

    def infer(self, context=None):
        """The values this node may stand for, inferred once and cached."""
        return self._infer(context)


class Name(NodeNG):
    """A name read in an expression."""

    def __init__(self, name, lineno=None):
        self.name = name
        self.lineno = lineno


class Attribute(NodeNG):
    """An attribute read on an expression."""

    def __init__(self, attrname, expr=None):
        self.attrname = attrname
        self.expr = expr
"#;
    let decorators = r#""""Wrappers shared by the inference functions."""


def path_wrapper(func):
    """Stops an inference that comes back to a node it is already inferring."""
    def wrapped(node, context=None):
        if context is not None and node in context.path:
            return
        yield from func(node, context)
    return wrapped
"#;
    let inference = r#""""How each kind of node is inferred, bound to the node classes below."""
from astro import decorators, nodes


def infer_name(self, context=None):
    """The values a name is bound to in its scope."""
    frame, stmts = self.lookup(self.name)
    return bind_all(stmts, context)


def infer_attribute(self, context=None):
    """The values an attribute holds on each value of its expression."""
    for owner in self.expr.infer(context):
        yield from owner.igetattr(self.attrname, context)


nodes.Name._infer = decorators.path_wrapper(infer_name)  # the lookup in its scope
nodes.Attribute._infer = decorators.path_wrapper(infer_attribute)
"#;
    let repo = lexical_repo(&[
        ("astro/nodes.py", nodes),
        ("astro/decorators.py", decorators),
        ("astro/inference.py", inference),
    ]);
    let ranked = ranked_ids(repo.path(), "Add typing to ``Name._infer`` (#1651)", 3);
    assert_eq!(ranked[0], "astro/inference.py::infer_name", "{ranked:?}");
}

#[test]
fn a_report_quoting_values_is_answered_by_the_function_spelling_them() {
    // "works with "OB", "OF", not "OL"": the setter listing the binary VRs is what the fix
    // extends; before the quoted values counted, the report's `save_as` ranked first.
    let element = r#""""One data element of a dataset: its tag, value representation and value."""
from dicom.multival import MultiValue

BACKSLASH = "\\"


class DataElement:
    """A tag, its value representation (VR) and its value, converted on assignment."""

    def __init__(self, tag, vr, value):
        self.tag = tag
        self.VR = vr
        self.value = value

    @property
    def value(self):
        """The element's value."""
        return self._value

    @value.setter
    def value(self, val):
        """Splits a multi-valued string on backslashes, except for binary VRs, and stores it."""
        if isinstance(val, (str, bytes)) and self.VR not in ['OB', 'OW', 'OF', 'UN', 'UT']:
            if BACKSLASH in val:
                val = val.split(BACKSLASH)
        self._value = MultiValue(val) if isinstance(val, list) else val

    def keyword(self):
        """The element's keyword from the dictionary of tags."""
        return lookup_keyword(self.tag)

    def description(self):
        """A one-line description of the element for printing."""
        return f"({self.tag:08x}) {self.VR}: {self.value!r}"


def lookup_keyword(tag):
    """The keyword of a tag, or an empty string for private tags."""
    return KEYWORDS.get(tag, "")


KEYWORDS = {0x00100010: "PatientName"}
"#;
    let multival = r#""""A list of values held by one element."""


class MultiValue(list):
    """Values of a multi-valued element; each is converted by the element's type."""

    def __init__(self, iterable, converter=str):
        super().__init__(converter(v) for v in iterable)

    def to_bytes(self):
        """The values joined by backslashes as bytes, for writing a multi-valued element."""
        return b"\\".join(str(v).encode() for v in self)
"#;
    let writer = r#""""Writes a dataset's elements to a file, each VR by its own writer."""


def write_bytes(fp, element):
    """Writes a binary value as it is; the value must be a bytes-like object."""
    fp.write(element.value)


def write_text(fp, element):
    """Writes a text value, multiple values joined by backslashes."""
    value = element.value
    if isinstance(value, list):
        value = "\\".join(value)
    fp.write(value.encode())


WRITERS = {"OB": write_bytes, "OW": write_bytes, "OF": write_bytes, "OL": write_bytes, "PN": write_text}


def write_element(fp, element):
    """Writes one element with the writer of its VR."""
    WRITERS[element.VR](fp, element)


def save_as(dataset, path):
    """Writes every element of a dataset to the file at `path`."""
    with open(path, "wb") as fp:
        for element in dataset:
            write_element(fp, element)
"#;
    let repo = lexical_repo(&[
        ("dicom/element.py", element),
        ("dicom/multival.py", multival),
        ("dicom/writer.py", writer),
    ]);
    let report = r#"Error : a bytes-like object is required, not 'MultiValue'
I get this error when saving an element whose VR is given as "OL"; it works fine with "OB", "OF" etc.

```python
data = array.array('H', values).tobytes()
seq.add_new(0x00660040, 'OL', data)
ds.save_as("out.dcm")
```
TypeError: a bytes-like object is required, not 'MultiValue'
"#;
    let ranked = ranked_ids(repo.path(), report, 3);
    assert_eq!(
        ranked[0], "dicom/element.py::DataElement.value#2",
        "{ranked:?}"
    );
}

#[test]
fn a_go_report_quoting_values_is_answered_by_the_switch_spelling_them() {
    // Before the quoted values counted, `Accepts` (the header's name) ranked first.
    let encoding = r#"// Package encoding compresses response bodies with the encoding a client accepts.
package encoding

import (
	"compress/flate"
	"compress/gzip"
	"io"
	"strings"
)

// Negotiate picks the first encoding of an Accept-Encoding header this server can write.
func Negotiate(header string) string {
	for _, part := range strings.Split(header, ",") {
		name := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		if Supported(name) {
			return name
		}
	}
	return "identity"
}

// Supported reports whether the server can compress with the named encoding.
func Supported(name string) bool {
	switch name {
	case "gzip", "deflate":
		return true
	}
	return false
}

// NewWriter wraps w in a compressor for the named encoding.
func NewWriter(w io.Writer, name string) (io.WriteCloser, error) {
	if name == "gzip" {
		return gzip.NewWriter(w), nil
	}
	return flate.NewWriter(w, flate.DefaultCompression)
}
"#;
    let header = r#"package encoding

import "net/http"

// SetHeaders writes the response headers of a compressed body in the named encoding.
func SetHeaders(h http.Header, name string) {
	h.Set("Content-Encoding", name)
	h.Add("Vary", "Accept-Encoding")
	h.Del("Content-Length")
}

// Accepts reports whether a request's Accept-Encoding header allows any compression.
func Accepts(r *http.Request) bool {
	return r.Header.Get("Accept-Encoding") != ""
}
"#;
    let repo = lexical_repo(&[
        ("go.mod", "module example.com/serve\n"),
        ("encoding/encoding.go", encoding),
        ("encoding/header.go", header),
    ]);
    let report = "Responses are never compressed for browsers that only accept \"br\"\n\nWhen the Accept-Encoding header is \"br\" the server answers uncompressed. With \"gzip\" or \"deflate\" it compresses the body as expected. Brotli should be supported too.";
    let ranked = ranked_ids(repo.path(), report, 3);
    assert_eq!(ranked[0], "encoding/encoding.go::Supported", "{ranked:?}");
}

#[test]
fn quoted_values_that_many_functions_spell_alike_credit_none_of_them() {
    // Six readers spell 'utf-8' and 'strict' alike: which five to credit would be an accident
    // of order, so none is credited for the values.
    let readers: String = ["config", "manifest", "lockfile", "readme", "license", "changelog"]
        .iter()
        .map(|name| {
            format!(
                "def read_{name}(path):\n    \"\"\"Reads the {name} file.\"\"\"\n    with open(path, 'rb') as f:\n        return f.read().decode('utf-8', 'strict')\n\n\n"
            )
        })
        .collect();
    let repo = lexical_repo(&[("pkg/readers.py", &readers)]);
    let report = "Reading a file with a BOM fails\n\nThe readers decode with \"utf-8\" and \"strict\", so a file starting with a byte order mark cannot be read.";
    let ranked = query(
        repo.path(),
        report,
        &["--verbosity", "diagnostic", "--limit-entities", "10"],
    );
    let evidence = ranked["evidence"].as_array().expect("diagnostic evidence");
    assert!(evidence.len() >= 6, "{ranked}");
    assert!(
        evidence
            .iter()
            .all(|e| e["signals"].get("message").is_none()),
        "{evidence:?}"
    );
}

#[test]
fn a_method_bound_to_a_javascript_prototype_is_answered_by_the_function_bound() {
    let router = r#"'use strict';

/** A router: an ordered stack of layers, each a path and its handlers. */
function Router(options) {
  this.stack = [];
  this.strict = Boolean(options && options.strict);
}

/** Appends a layer for `path`, keeping the trailing slash only in strict mode. */
function addLayer(path) {
  var layer = { path: this.strict ? path : path.replace(/\/$/, ''), handlers: [] };
  this.stack.push(layer);
  return layer;
}

/** Runs the layers matching the request's path, in order. */
function dispatch(req, res, done) {
  var matched = this.stack.filter(function (layer) { return layer.path === req.path; });
  matched.forEach(function (layer) { layer.handlers.forEach(function (h) { h(req, res); }); });
  done();
}

Router.prototype.route = addLayer;
Router.prototype.handle = dispatch;

module.exports = Router;
"#;
    let app = r#"'use strict';

/** The application: settings and a lazily made router. */
function App() {
  this.settings = {};
}

/** Registers an application-level route: a path and its handlers, after the app's own. */
function route(app, path, handlers) {
  app.settings.routes = (app.settings.routes || []).concat([{ path: path, handlers: handlers }]);
  return app;
}

module.exports = { App: App, route: route };
"#;
    let repo = lexical_repo(&[("lib/router.js", router), ("lib/app.js", app)]);
    let ranked = ranked_ids(
        repo.path(),
        "Fix ``Router.route`` dropping the trailing slash (#3120)",
        3,
    );
    assert_eq!(ranked[0], "lib/router.js::addLayer", "{ranked:?}");
}

#[test]
fn a_report_quoting_a_tool_tagged_error_line_is_answered_by_the_function_writing_it() {
    let app = r#"//! The command line: every flag the tool takes.

pub struct Args {
    pub pattern: String,
    pub paths: Vec<String>,
    pub hidden: bool,
}

/// Declares the flags and reads the search paths and the pattern from the command line.
pub fn build_app(argv: &[String]) -> Args {
    let mut hidden = false;
    let mut rest = Vec::new();
    for arg in argv {
        match arg.as_str() {
            "--hidden" => hidden = true,
            // one or more search paths follow the pattern; a missing one is reported later
            _ => rest.push(arg.clone()),
        }
    }
    let pattern = rest.first().cloned().unwrap_or_default();
    let paths = rest.into_iter().skip(1).collect();
    Args { pattern, paths, hidden }
}
"#;
    let main = r#"//! Entry point: checks the search paths, then walks them.

mod app;

use std::path::Path;

fn print_error(message: &str) {
    eprintln!("[seek error]: {message}");
}

/// Checks every search path before the walk starts.
fn run(args: &app::Args) -> Result<(), String> {
    for path in &args.paths {
        if !Path::new(path).is_dir() {
            return Err(format!("'{path}' is not a directory"));
        }
    }
    walk(&args.paths, &args.pattern);
    Ok(())
}

fn walk(paths: &[String], pattern: &str) {
    for path in paths {
        println!("{path}: {pattern}");
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = app::build_app(&argv);
    if let Err(message) = run(&args) {
        print_error(&message);
        std::process::exit(1);
    }
}
"#;
    let repo = lexical_repo(&[("src/app.rs", app), ("src/main.rs", main)]);
    let report = "Do not exit immediately if one of the search paths is missing\n\n\
        When one of the search paths given on the command line does not exist, seek stops \
        before searching the others:\n\n```bash\n> seek . real fake\n\
        [seek error]: 'fake' is not a directory\n```\n\n\
        It would be better to search the paths that exist and report the missing one.";
    let ids = ranked_ids(repo.path(), report, 3);
    // `run` writes "'…' is not a directory"; `build_app` shares more of the report's words
    // and led before the tagged line was read as a message.
    assert_eq!(ids[0], "src/main.rs::run", "{ids:?}");
}

#[test]
fn a_report_whose_title_names_a_frame_of_its_trace_is_answered_by_that_frame() {
    let dataset = r#""""A record of typed elements, read lazily from raw bytes."""

from records.values import convert


class Dataset:
    """Elements by tag, converted on first access."""

    def __init__(self, raw):
        self.raw = raw
        self.elements = {}

    def __getitem__(self, tag):
        if tag not in self.elements:
            self.elements[tag] = convert(self.raw[tag])
        return self.elements[tag]

    def to_json_dict(self, suppress_invalid_tags=False):
        """Returns the record as a JSON-ready dict, leaving out invalid tags when asked."""
        out = {}
        for key in self.raw:
            element = self[key]
            try:
                out[key] = {"Value": [element]}
            except ValueError:
                if not suppress_invalid_tags:
                    raise
        return out
"#;
    let values = r#""""Conversion of raw element bytes to Python values."""


def convert(raw):
    """Converts an integer string; refuses a value that would lose its fraction."""
    text = raw.decode("ascii").strip()
    number = float(text)
    if number != int(number):
        raise TypeError("Could not convert value to integer without loss")
    return int(number)
"#;
    let repo = lexical_repo(&[
        ("records/dataset.py", dataset),
        ("records/values.py", values),
    ]);
    let report = r#"Dataset.to_json_dict still raises when suppress_invalid_tags is set

I call `ds.to_json_dict(suppress_invalid_tags=True)` and can live with losing invalid tags, but a value such as `2.5` still raises:

```
Traceback (most recent call last):
  File "export.py", line 12, in main
    doc = ds.to_json_dict(suppress_invalid_tags=True)
  File "/usr/lib/python3/site-packages/records/dataset.py", line 22, in to_json_dict
    element = self[key]
  File "/usr/lib/python3/site-packages/records/dataset.py", line 15, in __getitem__
    self.elements[tag] = convert(self.raw[tag])
  File "/usr/lib/python3/site-packages/records/values.py", line 9, in convert
    raise TypeError("Could not convert value to integer without loss")
TypeError: Could not convert value to integer without loss
```
"#;
    let ids = ranked_ids(repo.path(), report, 3);
    // The innermost frame, `convert`, raises as it should; the title names the method the
    // reporter means, and it led only once the title was read.
    assert_eq!(
        ids[0], "records/dataset.py::Dataset.to_json_dict",
        "{ids:?}"
    );
    let untitled = report.replacen(
        "Dataset.to_json_dict still raises",
        "Exporting a record still raises",
        1,
    );
    let ids = ranked_ids(repo.path(), &untitled, 3);
    assert_eq!(ids[0], "records/values.py::convert", "{ids:?}");
}

#[test]
fn a_go_panic_on_a_nil_receiver_is_answered_by_the_caller_that_held_the_nil() {
    let balancer = r#"package rpc

// balancerWrapper hands resolved addresses to the balancer.
type balancerWrapper struct {
	addrs []string
	done  bool
}

// handleResolvedAddrs records the addresses the resolver found.
func (b *balancerWrapper) handleResolvedAddrs(addrs []string, err error) {
	if b.done {
		return
	}
	b.addrs = addrs
}
"#;
    let clientconn = r#"package rpc

// ClientConn is a connection to a service.
type ClientConn struct {
	balancer *balancerWrapper
	config   string
}

// Close tears the connection down and drops its balancer.
func (cc *ClientConn) Close() {
	cc.balancer = nil
}

// handleServiceConfig applies a service config the resolver sent and passes the addresses on.
func (cc *ClientConn) handleServiceConfig(js string, addrs []string) {
	cc.config = js
	cc.balancer.handleResolvedAddrs(addrs, nil)
}
"#;
    let resolver = r#"package rpc

// resolverWrapper watches the resolver and forwards what it finds.
type resolverWrapper struct {
	cc      *ClientConn
	updates chan []string
}

// watcher forwards every update of the resolver to the connection.
func (r *resolverWrapper) watcher() {
	for addrs := range r.updates {
		r.cc.handleServiceConfig("{}", addrs)
	}
}

// start runs the watcher.
func (r *resolverWrapper) start() {
	go r.watcher()
}
"#;
    let repo = lexical_repo(&[
        ("rpc/balancer.go", balancer),
        ("rpc/clientconn.go", clientconn),
        ("rpc/resolver.go", resolver),
    ]);
    let report = r#"panic when closing a ClientConn while the resolver sends a config

Closing a ClientConn while the resolver delivers a new service config panics:

```
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x20 pc=0x910846]

goroutine 41 [running]:
example.com/app/vendor/example.com/rpc.(*balancerWrapper).handleResolvedAddrs(0x0, 0xc448770280, 0x1, 0x1, 0x0, 0x0)
        /go/src/example.com/app/vendor/example.com/rpc/balancer.go:11 +0x26
example.com/app/vendor/example.com/rpc.(*ClientConn).handleServiceConfig(0xc43dc7ac00, 0xc445bfbc00, 0x1a7, 0x1, 0x1)
        /go/src/example.com/app/vendor/example.com/rpc/clientconn.go:17 +0x299
example.com/app/vendor/example.com/rpc.(*resolverWrapper).watcher(0xc43af18930)
        /go/src/example.com/app/vendor/example.com/rpc/resolver.go:12 +0x2d6
created by example.com/app/vendor/example.com/rpc.(*resolverWrapper).start
        /go/src/example.com/app/vendor/example.com/rpc/resolver.go:18 +0x3f
```
"#;
    // `handleResolvedAddrs(0x0, …)` was called on a nil receiver: the nil came from
    // `handleServiceConfig`. The goroutine's `created by` line is its outermost frame (it was
    // read as a location after the trace, so `watcher`'s file led before).
    let ids = ranked_ids(repo.path(), report, 3);
    assert_eq!(
        ids[0], "rpc/clientconn.go::ClientConn.handleServiceConfig",
        "{ids:?}"
    );
    let live = report.replacen("(0x0, 0xc448770280", "(0xc42, 0xc448770280", 1);
    let ids = ranked_ids(repo.path(), &live, 3);
    assert_eq!(
        ids[0], "rpc/balancer.go::balancerWrapper.handleResolvedAddrs",
        "{ids:?}"
    );
}

#[test]
fn a_python_function_defined_twice_is_answered_by_the_definition_that_runs() {
    let generate = r#""""Writes the concept dictionaries from the downloaded code tables."""

import json


def write_concepts(path, concepts):
    """Writes the concept names by code."""
    with open(path, "w") as f:
        json.dump(concepts, f)


def write_snomed_mapping(path, mapping):
    with open(path, "w") as f:
        f.write("snomed_mapping = {\n")
        for code, concept in mapping:
            f.write(f"    {code!r}: {concept!r},\n")
        f.write("}\n")


def write_snomed_mapping(path, mapping):
    with open(path, "w") as f:
        f.write("snomed_mapping = {\n")
        for code, concept in sorted(mapping):
            f.write(f"    {code!r}: {concept!r},\n")
        f.write("}\n")
"#;
    let element = r#""""One element of a record."""


class Element:
    """A tagged value."""

    @property
    def value(self):
        """Returns the element's value as stored."""
        return self._value

    @value.setter
    def value(self, val):
        self._value = val
"#;
    let repo = lexical_repo(&[
        ("source/generate.py", generate),
        ("records/element.py", element),
    ]);
    let change = "Fix duplicate entries in the SNOMED mapping (#1421)\n\n\
        * write_snomed_mapping writes each code of the mapping once\n\n\
        * the snomed mapping file is written in code order";
    let ids = ranked_ids(repo.path(), change, 3);
    // Python rebinds the name at the second `def`: the first never runs, and the fix edits
    // the second. Both hold the same words; before the rule the first led by its id.
    assert_eq!(
        ids[0], "source/generate.py::write_snomed_mapping#2",
        "{ids:?}"
    );
    // A property's getter and setter share a name and both run: the getter keeps its place.
    let ids = ranked_ids(
        repo.path(),
        "Returns the element's value as stored, where is that",
        3,
    );
    assert_eq!(ids[0], "records/element.py::Element.value", "{ids:?}");
}

#[test]
fn a_rust_test_beside_the_code_yields_to_the_code_it_tests() {
    let codes = r#"//! The process exit code.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExitCode {
    Success,
    GeneralError,
}

pub fn merge_exitcodes(results: &[ExitCode]) -> ExitCode {
    if results.iter().any(|&c| c != ExitCode::Success) {
        return ExitCode::GeneralError;
    }
    ExitCode::Success
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_when_no_results() {
        let no_matches: Vec<ExitCode> = Vec::new();
        assert_eq!(merge_exitcodes(&no_matches), ExitCode::Success);
    }
}
"#;
    let main = r#"//! The command line.

mod exit_codes;

fn run(paths: &[String]) -> exit_codes::ExitCode {
    let statuses: Vec<exit_codes::ExitCode> =
        paths.iter().map(|_| exit_codes::ExitCode::Success).collect();
    exit_codes::merge_exitcodes(&statuses)
}
"#;
    let repo = lexical_repo(&[("src/exit_codes.rs", codes), ("src/main.rs", main)]);
    let report = "Thoughts on non-zero exit code for no matches?\n\n\
        `grep` returns a non-zero exit code when no matches are found, making it easy to use \
        in shell scripts and if conditions without having to inspect the results. What are \
        your thoughts on having the tool do the same, so that a search with results and one \
        with no results have differing exit codes that could be checked directly?";
    let ids = ranked_ids(repo.path(), report, 5);
    // The `#[cfg(test)]` module's function shares the most words with the report ("no
    // matches", "no results") and led before; it is a test, and weighs what a test file's
    // functions weigh, below the two functions of the code.
    let test = ids
        .iter()
        .position(|id| id == "src/exit_codes.rs::tests.success_when_no_results");
    assert!(test.is_some_and(|rank| rank >= 2), "{ids:?}");
}

/// Callers and callees name each other file once: the names from one file stand together,
/// the first carrying the path; a caller with several call sites is written once.
#[test]
fn related_names_say_each_files_path_once() {
    let cart = "def cart_total(lines):\n    \"\"\"Sum of the cart's line prices.\"\"\"\n    return sum(line_price(l) for l in lines)\n\n\n\
        def line_price(line):\n    return line[0] * line[1]\n";
    let report = "from shop.cart import cart_total\n\n\n\
        def weekly_report(weeks):\n    return [cart_total(w) for w in weeks]\n\n\n\
        def monthly_report(months):\n    return [cart_total(m) for m in months]\n\n\n\
        def yearly_report(years):\n    return [cart_total(y) for y in years]\n\n\n\
        def report_range(weeks):\n    first = cart_total(weeks[0])\n    return first, cart_total(weeks[-1])\n";
    let repo = lexical_repo(&[("shop/cart.py", cart), ("shop/report.py", report)]);
    let answer = query(
        repo.path(),
        "how is cart_total computed",
        &["--verbosity", "standard"],
    );
    let text = answer["context_text"].as_str().unwrap_or_default();
    let called_by = text
        .lines()
        .find(|l| l.starts_with("called by: "))
        .unwrap_or_else(|| panic!("no callers: {answer}"));
    assert_eq!(
        called_by,
        "called by: monthly_report (shop/report.py):9, report_range:17,18, weekly_report:5, yearly_report:13",
        "{answer}"
    );
    let calls = text
        .lines()
        .find(|l| l.starts_with("calls: "))
        .unwrap_or_else(|| panic!("no callees: {answer}"));
    assert!(calls.starts_with("calls: line_price"), "{answer}");
}

/// A method's answer says what its owner is in the language's own words: a Go struct is a
/// struct, an interface an interface.
#[test]
fn a_methods_owner_is_named_by_its_flavour() {
    let cart = "package shop\n\n\
        // Cart holds the lines a customer is buying.\n\
        type Cart struct {\n\tlines []int\n}\n\n\
        // Total sums the cart's line prices in cents.\n\
        func (c *Cart) Total() int {\n\tsum := 0\n\tfor _, l := range c.lines {\n\t\tsum += l\n\t}\n\treturn sum\n}\n";
    let repo = lexical_repo(&[("shop/cart.go", cart)]);
    let answer = query(repo.path(), "how does the cart compute its Total", &[]);
    let text = answer["context_text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("## Cart.Total (method, shop/cart.go:"),
        "{answer}"
    );
    assert!(text.contains("\nin struct Cart"), "{answer}");
}

/// The fix's file is found more often than its function: a function of the answer's own file
/// ranked right behind it leads `also`, before the other files' pointers.
#[test]
fn also_points_first_at_the_runner_up_in_the_answers_file() {
    let invoice = "def parse_invoice_total(text):\n    \"\"\"Read the invoice total from the text.\"\"\"\n    return float(text.split('total:')[1])\n\n\n\
        def parse_invoice_tax(text):\n    \"\"\"Read the invoice tax from the text.\"\"\"\n    return float(text.split('tax:')[1])\n";
    let header = "def invoice_header(text):\n    \"\"\"The first line of an invoice.\"\"\"\n    return text.splitlines()[0]\n";
    let repo = lexical_repo(&[
        ("billing/invoice.py", invoice),
        ("billing/header.py", header),
    ]);
    let ranked = ranked_ids(repo.path(), "parse the invoice total and tax", 3);
    assert!(ranked[0].starts_with("billing/invoice.py::"), "{ranked:?}");
    let runner_up = ranked[1..]
        .iter()
        .find(|id| id.starts_with("billing/invoice.py::"))
        .unwrap_or_else(|| panic!("no runner-up in the answer's file: {ranked:?}"));
    assert!(
        ranked[1].starts_with("billing/header.py::"),
        "the other file ranks in between, so a pointer per file would come first: {ranked:?}"
    );
    let answer = query(repo.path(), "parse the invoice total and tax", &[]);
    let name = runner_up.rsplit("::").next().unwrap();
    assert!(
        answer["also"][0]
            .as_str()
            .is_some_and(|p| p.starts_with("billing/invoice.py:") && p.ends_with(name)),
        "{answer}"
    );
    assert!(
        also_files(&answer).contains(&"billing/header.py".to_string()),
        "the other files keep their pointers: {answer}"
    );
}
