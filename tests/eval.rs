//! `knowcode eval` through the real binary on a real git repository with a scripted history:
//! which commits become tasks (trailers dropped; merges, reverts, version bumps, formatting-only,
//! test-only, short and too-wide commits skipped), which files and definitions are gold (carried
//! forward past later edits), and that the report's figures follow from its per-task ranks.

mod common;

use std::path::Path;

use common::{git_at, knowcode, require_model};
use serde_json::Value;

const INVOICE: &str = r#""""Invoices: totals and discounts."""


def compute_total(lines):
    """Sum of quantity times unit price over the invoice lines."""
    return sum(line.quantity * line.unit_price for line in lines)


def apply_discount(total, percent):
    """The total after a percentage discount."""
    return total - total * percent / 100
"#;

const TAX: &str = r#""""Value added tax."""


def vat_rate(country):
    """The standard VAT rate of a country, as a fraction."""
    return {"de": 0.19, "fr": 0.2}.get(country, 0.0)


def tax_for(amount, country):
    """VAT owed on an amount sold into a country."""
    return amount * vat_rate(country)
"#;

const ROUTE: &str = r#""""Delivery routes."""


def shortest_route(depots, destination):
    """The depot closest to the destination by straight-line distance."""
    return min(depots, key=lambda depot: abs(depot - destination))


class Courier:
    """A courier with a capacity in parcels."""

    def assign(self, parcels):
        """Takes parcels up to the courier's capacity."""
        return parcels[: self.capacity]
"#;

const TEST_INVOICE: &str = r#"from billing.invoice import apply_discount


def test_discount():
    assert apply_discount(100, 10) == 90
"#;

/// One scripted commit: files written, the message, and when.
struct Step<'a> {
    writes: &'a [(&'a str, &'a str)],
    message: &'a str,
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn commit(root: &Path, step: &Step, at: i64) {
    for (path, text) in step.writes {
        write(root, path, text);
    }
    git_at(root, &["add", "-A"], None);
    git_at(root, &["commit", "-q", "-m", step.message], Some(at));
}

/// A scripted history being written into a fresh repository, one commit an hour, so the
/// order of commits (and merges) is known.
struct History<'a> {
    root: &'a Path,
    clock: std::cell::Cell<i64>,
}

impl<'a> History<'a> {
    fn start(root: &'a Path) -> Self {
        git_at(root, &["init", "-q"], None);
        History {
            root,
            clock: std::cell::Cell::new(1_700_000_000),
        }
    }

    /// The next commit's time.
    fn tick(&self) -> i64 {
        self.clock.set(self.clock.get() + 3600);
        self.clock.get()
    }

    fn commit(&self, step: Step) {
        commit(self.root, &step, self.tick());
    }
}

/// The history, oldest first; the comments say what each commit must give.
fn scripted_repository(root: &Path) {
    let history = History::start(root);
    // Four source files at once: too_many_files.
    history.commit(Step {
            writes: &[
                ("billing/invoice.py", INVOICE),
                ("billing/tax.py", TAX),
                ("shipping/route.py", ROUTE),
                ("shipping/__init__.py", "\"\"\"Shipping.\"\"\"\n"),
                ("tests/test_invoice.py", TEST_INVOICE),
                (
                    "README.md",
                    "# Shop\n\nBilling and shipping for a small shop.\n",
                ),
            ],
            message: "Start the shop with billing for invoices and taxes and shipping routes for couriers",
        });
    // A task: gold billing/invoice.py, apply_discount; the trailers must not reach the query.
    history.commit(Step {
            writes: &[(
                "billing/invoice.py",
                &INVOICE.replace(
                    "return total - total * percent / 100",
                    "return max(0, total - total * percent / 100)",
                ),
            )],
            message: "Never let apply_discount return a negative invoice total when the discount percent is above one hundred\n\nSigned-off-by: Tester <t@example.com>\nCo-authored-by: Other <o@example.com>",
        });
    // Tests only: no_source_files.
    history.commit(Step {
            writes: &[(
                "tests/test_invoice.py",
                &format!(
                    "{TEST_INVOICE}\n\ndef test_big_discount():\n    assert apply_discount(100, 150) == 0\n"
                ),
            )],
            message: "Cover the discount above one hundred percent in the invoice tests so it stays fixed",
        });
    // Too few words: short_message.
    history.commit(Step {
        writes: &[("billing/tax.py", &TAX.replace("0.19", "0.190"))],
        message: "Fix the German rate",
    });
    // Re-indentation and trailing spaces only: formatting_only.
    history.commit(Step {
            writes: &[(
                "shipping/route.py",
                &ROUTE.replace(
                    "    return min(depots, key=lambda depot: abs(depot - destination))",
                    "    return min(depots,   key=lambda depot: abs(depot - destination))   ",
                ),
            )],
            message: "Tidy the spacing in the route module so that the formatter stops complaining about it",
        });
    // A version bump.
    history.commit(Step {
            writes: &[(
                "shipping/__init__.py",
                "\"\"\"Shipping.\"\"\"\n__version__ = \"1.2.0\"\n",
            )],
            message: "Bump version to 1.2.0 for the release with the discount fix and the new shipping rules",
        });
    // A side branch merged with --no-ff under git's own message: the merge has no words of its
    // own and is skipped, the branch's commit is a task (gold shipping/route.py, Courier.assign).
    git_at(root, &["checkout", "-q", "-b", "courier"], None);
    let route_now = std::fs::read_to_string(root.join("shipping/route.py")).unwrap();
    history.commit(Step {
            writes: &[(
                "shipping/route.py",
                &route_now.replace(
                    "return parcels[: self.capacity]",
                    "return sorted(parcels, key=len)[: self.capacity]",
                ),
            )],
            message: "Courier.assign takes the smallest parcels first so that a courier carries as many parcels as the capacity allows",
        });
    git_at(root, &["checkout", "-q", "main"], None);
    git_at(
        root,
        &[
            "merge",
            "-q",
            "--no-ff",
            "courier",
            "-m",
            "Merge branch 'courier'",
        ],
        Some(history.tick()),
    );
    // A task: gold billing/tax.py, tax_for (a test file beside it does not count).
    let tax_now = std::fs::read_to_string(root.join("billing/tax.py")).unwrap();
    history.commit(Step {
            writes: &[
                (
                    "billing/tax.py",
                    &tax_now.replace(
                        "return amount * vat_rate(country)",
                        "return round(amount * vat_rate(country), 2)",
                    ),
                ),
                (
                    "tests/test_tax.py",
                    "from billing.tax import tax_for\n\n\ndef test_rounding():\n    assert tax_for(10.555, 'de') == 2.01\n",
                ),
            ],
            message: "Round the VAT that tax_for returns to whole cents because invoices printed fractions of a cent",
        });
    // A task above the previous one's lines: gold billing/tax.py, zero_rated; the previous
    // task's gold must still be tax_for, now lower in the file.
    let tax_now = std::fs::read_to_string(root.join("billing/tax.py")).unwrap();
    history.commit(Step {
            writes: &[(
                "billing/tax.py",
                &tax_now.replace(
                    "\n\ndef vat_rate(country):",
                    "\n\ndef zero_rated(product):\n    \"\"\"Whether a product carries no VAT at all.\"\"\"\n    return product.category in (\"books\", \"food\")\n\n\ndef vat_rate(country):",
                ),
            )],
            message: "Add zero_rated to tell which products carry no value added tax at all, such as books and food",
        });
    // A rename without edits: no content change (formatting_only), and the Courier task's
    // gold follows the file to its new name.
    git_at(
        root,
        &["mv", "shipping/route.py", "shipping/routes.py"],
        None,
    );
    git_at(
        root,
        &[
            "commit",
            "-q",
            "-m",
            "Rename the route module to routes because it holds more than one route helper now",
        ],
        Some(history.tick()),
    );
}

fn eval_json(root: &Path, extra: &[&str]) -> Value {
    let path = root.to_str().unwrap();
    let mut args = vec!["eval", path, "--json"];
    args.extend_from_slice(extra);
    common::knowcode_ok_json(&args)
}

fn row<'a>(rows: &'a Value, ranking: &str) -> Option<&'a Value> {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["ranking"] == ranking)
}

/// Acc@k and MRR recomputed from the per-task ranks the report lists.
fn assert_rows_follow_from_ranks(report: &Value, level: &str, ranks_key: &str) {
    for row in report[level].as_array().unwrap() {
        let ranking = row["ranking"].as_str().unwrap();
        let ranks: Vec<Option<u64>> = report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.get(ranks_key))
            .map(|ranks| ranks[ranking].as_u64())
            .collect();
        assert_eq!(row["tasks"], ranks.len(), "{level} {ranking}");
        let acc = |k: u64| {
            let hits = ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count();
            (1000.0 * hits as f64 / ranks.len() as f64).round() / 10.0
        };
        for (k, key) in [
            (1, "acc_at_1"),
            (3, "acc_at_3"),
            (5, "acc_at_5"),
            (10, "acc_at_10"),
        ] {
            assert_eq!(
                row[key].as_f64().unwrap(),
                acc(k),
                "{level} {ranking} {key}"
            );
        }
        let mrr: f64 = ranks
            .iter()
            .flatten()
            .map(|&r| 1.0 / (r + 1) as f64)
            .sum::<f64>()
            / ranks.len() as f64;
        assert!(
            (row["mrr"].as_f64().unwrap() - mrr).abs() < 0.0006,
            "{level} {ranking} mrr"
        );
    }
}

#[test]
fn eval_mines_tasks_from_history_and_scores_every_ranking() {
    require_model();
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    scripted_repository(root);
    common::index_json(root, &[]);

    let report = eval_json(root, &[]);
    assert_eq!(report["commits_read"], 11, "{report}");
    assert_eq!(report["stopped"], "history_start", "{report}");
    assert!(
        report["shortfall"]
            .as_str()
            .unwrap()
            .starts_with("found 4 of the 50 tasks asked in 11 commits"),
        "{report}"
    );
    let skipped = &report["skipped"];
    for (reason, n) in [
        ("too_many_files", 1),
        ("no_source_files", 1),
        ("short_message", 1),
        ("formatting_only", 2),
        ("version_bump", 1),
        ("merge", 1),
    ] {
        assert_eq!(skipped[reason], n, "{reason}: {skipped}");
    }
    let tasks = report["tasks"].as_array().unwrap();
    let gold: Vec<(Vec<&str>, u64)> = tasks
        .iter()
        .map(|t| {
            let files = t["gold_files"].as_array().unwrap();
            (
                files.iter().map(|f| f.as_str().unwrap()).collect(),
                t["gold_entities"].as_u64().unwrap(),
            )
        })
        .collect();
    // Newest first: zero_rated, tax_for, Courier.assign, apply_discount.
    assert_eq!(
        gold,
        [
            (vec!["billing/tax.py"], 1),
            (vec!["billing/tax.py"], 1),
            (vec!["shipping/routes.py"], 1),
            (vec!["billing/invoice.py"], 1),
        ],
        "{report}"
    );
    let discount = tasks[3]["query"].as_str().unwrap();
    assert!(
        discount.starts_with("Never let apply_discount"),
        "{discount}"
    );
    assert!(!discount.contains("Signed-off-by") && !discount.contains("Co-authored-by"));

    // Every question names its definition: the answer and the ranking find the gold entity
    // first, so the entity ranks pin which definitions are gold (tax_for carried past the
    // later insertion above it).
    for task in tasks {
        assert_eq!(task["entity_rank"]["query"], 0, "{task}");
        assert_eq!(task["file_rank"]["answer"], 0, "{task}");
    }
    assert_eq!(report["retrieval_mode"], "hybrid");
    assert!(row(&report["file_level"], "semantic").is_some(), "{report}");
    assert_eq!(
        row(&report["file_level"], "query").unwrap()["acc_at_1"],
        100.0
    );
    assert_rows_follow_from_ranks(&report, "file_level", "file_rank");
    assert_rows_follow_from_ranks(&report, "entity_level", "entity_rank");

    // Tokens: gold files are counted whole from the working tree with the one token counter.
    let invoice = std::fs::read_to_string(root.join("billing/invoice.py")).unwrap();
    assert_eq!(
        tasks[3]["tokens"]["gold_files"],
        knowcode::retrieve::tokens::count(&invoice)
    );
    for task in tasks {
        let t = &task["tokens"];
        // The answer is right first time, so reaching the gold file costs the answer alone.
        assert_eq!(t["to_first_relevant"], t["answer"], "{task}");
    }

    // The lexical plane only: query alone, said so.
    let lexical = eval_json(root, &["--no-embed"]);
    assert_eq!(lexical["retrieval_mode"], "lexical");
    assert!(
        row(&lexical["file_level"], "semantic").is_none(),
        "{lexical}"
    );
    assert!(
        lexical["notes"]
            .to_string()
            .contains("semantic_search is not scored"),
        "{lexical}"
    );
    // The date filter: nothing is newer than 2100.
    let none = eval_json(root, &["--since", "2100-01-01"]);
    assert_eq!(none["tasks_used"], 0);
    assert_eq!(none["commits_read"], 0);

    // doctor points at the command.
    let out = knowcode(
        &["doctor", "--store", root.to_str().unwrap(), "--json"],
        &[],
    );
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = common::doctor_check(&doctor, "eval");
    assert!(
        check["message"].as_str().unwrap().contains("knowcode eval"),
        "{check}"
    );
}

#[test]
fn eval_outside_git_and_with_a_bad_date_gives_typed_errors() {
    let repo = common::copy_fixture("python");
    common::index_json(repo.path(), &["--no-embed"]);
    let path = repo.path().to_str().unwrap();
    let out = knowcode(&["eval", path, "--json"], &[]);
    assert!(!out.status.success());
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["code"], "invalid_argument", "{error}");
    let out = knowcode(&["eval", path, "--since", "last week", "--json"], &[]);
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["code"], "invalid_argument", "{error}");
    assert!(error.to_string().contains("since"), "{error}");
}

/// A pull request merged with a merge commit: the hosting service's first line, then the
/// request's title and description.
fn merge_pull_request(root: &Path, branch: &str, message: &str, at: i64) {
    git_at(root, &["checkout", "-q", "main"], None);
    git_at(
        root,
        &["merge", "-q", "--no-ff", branch, "-m", message],
        Some(at),
    );
}

/// A history where changes are described in pull requests, not commits: branch commits say
/// "wip" and "fix", merges carry the request's title and description.
fn pull_request_history(root: &Path) {
    let history = History::start(root);
    history.commit(Step {
        writes: &[
            ("billing/invoice.py", INVOICE),
            ("billing/tax.py", TAX),
            ("shipping/route.py", ROUTE),
        ],
        message: "init",
    });
    // Pull request #1: two short commits; the merge is a task (gold billing/invoice.py).
    git_at(root, &["checkout", "-q", "-b", "fix-discount"], None);
    let floored = INVOICE.replace(
        "return total - total * percent / 100",
        "return max(0, total - total * percent / 100)",
    );
    history.commit(Step {
        writes: &[("billing/invoice.py", &floored)],
        message: "wip",
    });
    history.commit(Step {
        writes: &[("billing/invoice.py", &floored.replace("max(0,", "max(0.0,"))],
        message: "fix",
    });
    merge_pull_request(
        root,
        "fix-discount",
        "Merge pull request #1 from tester/fix-discount\n\nNever let apply_discount return a negative total\n\nA discount above one hundred percent made the invoice total negative; it is floored at zero now.",
        history.tick(),
    );
    // Pull request #2: one well-described commit; the merge is the task, and the commit is
    // not asked twice (in_merged_pull_request).
    git_at(root, &["checkout", "-q", "-b", "tax-rounding"], None);
    let tax_now = std::fs::read_to_string(root.join("billing/tax.py")).unwrap();
    history.commit(Step {
            writes: &[(
                "billing/tax.py",
                &tax_now.replace(
                    "return amount * vat_rate(country)",
                    "return round(amount * vat_rate(country), 2)",
                ),
            )],
            message: "Round the VAT that tax_for returns to whole cents because invoices printed fractions of a cent",
        });
    merge_pull_request(
        root,
        "tax-rounding",
        "Merge pull request #2 from tester/tax-rounding\n\nRound the VAT to whole cents\n\nInvoices printed fractions of a cent because tax_for returned the raw product.",
        history.tick(),
    );
    // A plain merge of a short commit: merge and short_message.
    git_at(root, &["checkout", "-q", "-b", "courier"], None);
    let route_now = std::fs::read_to_string(root.join("shipping/route.py")).unwrap();
    history.commit(Step {
        writes: &[(
            "shipping/route.py",
            &route_now.replace(
                "parcels[: self.capacity]",
                "sorted(parcels)[: self.capacity]",
            ),
        )],
        message: "smaller first",
    });
    merge_pull_request(root, "courier", "Merge branch 'courier'", history.tick());
    // A GitLab merge request: the title and description without the "See merge request" line.
    git_at(root, &["checkout", "-q", "-b", "zero-rated"], None);
    let tax_now = std::fs::read_to_string(root.join("billing/tax.py")).unwrap();
    history.commit(Step {
            writes: &[(
                "billing/tax.py",
                &tax_now.replace(
                    "\n\ndef vat_rate(country):",
                    "\n\ndef zero_rated(product):\n    \"\"\"Whether a product carries no VAT.\"\"\"\n    return product.category in (\"books\", \"food\")\n\n\ndef vat_rate(country):",
                ),
            )],
            message: "zero rated",
        });
    merge_pull_request(
        root,
        "zero-rated",
        "Merge branch 'zero-rated' into 'main'\n\nAdd zero_rated to tell which products carry no value added tax, such as books and food\n\nSee merge request shop/billing!3",
        history.tick(),
    );
}

#[test]
fn eval_asks_merged_pull_requests_and_aims_for_a_number_of_tasks() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    pull_request_history(root);
    common::index_json(root, &["--no-embed"]);

    let report = eval_json(root, &["--no-embed"]);
    let queries: Vec<&str> = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["query"].as_str().unwrap())
        .collect();
    assert_eq!(queries.len(), 3, "{report}");
    assert!(queries[0].starts_with("Add zero_rated"), "{queries:?}");
    assert!(!queries[0].contains("See merge request"), "{queries:?}");
    assert!(
        queries[1].starts_with("Round the VAT to whole cents"),
        "{queries:?}"
    );
    assert!(
        queries[2].starts_with("Never let apply_discount"),
        "{queries:?}"
    );
    assert!(
        queries.iter().all(|q| !q.contains("Merge pull request")),
        "{queries:?}"
    );
    let gold: Vec<&str> = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["gold_files"][0].as_str().unwrap())
        .collect();
    assert_eq!(
        gold,
        ["billing/tax.py", "billing/tax.py", "billing/invoice.py"]
    );
    let skipped = &report["skipped"];
    assert_eq!(skipped["merge"], 1, "{skipped}");
    // wip, fix, the tax commit and "zero rated" came in with a merge that was asked.
    assert_eq!(skipped["in_merged_pull_request"], 4, "{skipped}");
    assert_eq!(skipped["short_message"], 2, "{skipped}");
    assert_eq!(report["commits_read"], 10, "{report}");
    let shortfall = report["shortfall"].as_str().unwrap();
    assert!(
        shortfall
            .starts_with("found 3 of the 50 tasks asked in 10 commits: the whole history was read"),
        "{shortfall}"
    );

    // Enough tasks: reading stops there and nothing is said.
    let two = eval_json(root, &["--no-embed", "--tasks", "2"]);
    assert_eq!(two["tasks_used"], 2, "{two}");
    assert_eq!(two["stopped"], "enough", "{two}");
    assert!(two.get("shortfall").is_none(), "{two}");
    // --commits bounds the reading, and the report says which bound stopped it.
    let bounded = eval_json(root, &["--no-embed", "--commits", "3"]);
    assert_eq!(bounded["commits_read"], 3, "{bounded}");
    assert_eq!(bounded["stopped"], "commit_limit", "{bounded}");
    assert!(
        bounded["shortfall"]
            .as_str()
            .unwrap()
            .contains("raise --commits"),
        "{bounded}"
    );
    // The readable report opens with the shortfall.
    let out = knowcode(
        &[
            "eval",
            root.to_str().unwrap(),
            "--no-embed",
            "--since",
            "2100-01-01",
        ],
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("FEWER TASKS THAN ASKED: found 0 of the 50 tasks asked in 0 commits")
            && text.contains("--since"),
        "{text}"
    );
}
