//! A team's shared index on S3-compatible object storage, against a real loopback server
//! (moto, started by `scripts/test` through `scripts/loopback-s3.py`, which exports
//! `KNOWCODE_TEST_S3_*`): publication, a second checkout's overlay, a killed build, two
//! builders at once, and typed errors that never print a secret.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{copy_dir, fixtures, require_model};
use serde_json::Value;

/// The loopback server `scripts/test` started.
struct Loopback {
    endpoint: String,
    bucket: String,
    key_id: String,
    secret: String,
}

fn loopback() -> Loopback {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: run the tests with scripts/test, which starts the loopback S3 server (scripts/loopback-s3.py)")
        })
    };
    Loopback {
        endpoint: var("KNOWCODE_TEST_S3_ENDPOINT"),
        bucket: var("KNOWCODE_TEST_S3_BUCKET"),
        key_id: var("KNOWCODE_TEST_S3_KEY_ID"),
        secret: var("KNOWCODE_TEST_S3_SECRET"),
    }
}

/// A prefix of the bucket no other test uses; its local folder (staging mirror, caches) is
/// deleted when the test ends.
struct TestStore(String);

impl std::ops::Deref for TestStore {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        if let Ok(store) = knowcode::store::shared::SharedStore::open(&self.0) {
            let _ = std::fs::remove_dir_all(store.local_dir());
        }
    }
}

impl Loopback {
    fn store(&self, name: &str) -> TestStore {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        TestStore(format!(
            "s3://{}/{name}-{}-{nanos}",
            self.bucket,
            std::process::id()
        ))
    }

    /// The binary with the server's environment (credentials from the environment only).
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_knowcode"));
        command
            .args(args)
            .env_remove("KNOWCODE_FAIL_STAGE")
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", &self.key_id)
            .env("AWS_SECRET_ACCESS_KEY", &self.secret);
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("knowcode runs")
    }

    /// A reading command (`args` then `--store store --root root --json`), asserting success.
    fn read(&self, args: &[&str], store: &str, root: &str) -> Value {
        let mut args = args.to_vec();
        args.extend(["--store", store, "--root", root, "--json"]);
        self.ok_json(&args)
    }

    fn ok_json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "knowcode {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON object")
    }
}

fn python_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("python"), dir.path());
    dir
}

fn path(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// A checkout on another branch: `Cart.add` renamed, `pricing.py` deleted, `shipping.py` added.
fn branch_of(tree: &Path) -> tempfile::TempDir {
    let branch = tempfile::tempdir().unwrap();
    copy_dir(tree, branch.path());
    let cart = branch.path().join("shop/cart.py");
    let text = std::fs::read_to_string(&cart).unwrap();
    assert!(text.contains("def add(self, item):"));
    std::fs::write(
        &cart,
        text.replace(
            "def add(self, item):",
            "def add_item(self, item, quantity=1):",
        ),
    )
    .unwrap();
    std::fs::remove_file(branch.path().join("shop/pricing.py")).unwrap();
    std::fs::write(
        branch.path().join("shop/shipping.py"),
        "\"\"\"Shipping costs.\"\"\"\n\n\ndef shipping_fee(weight_kg, express=False):\n    \"\"\"Compute the parcel shipping fee from its weight; express doubles it.\"\"\"\n    base = 4.5 + 1.2 * weight_kg\n    return base * 2 if express else base\n",
    )
    .unwrap();
    branch
}

fn ids(search: &Value) -> Vec<String> {
    search["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_generation_built_to_the_bucket_answers_another_checkout_through_its_overlay() {
    require_model();
    let s3 = loopback();
    let store = s3.store("overlay");
    let tree = python_tree();
    let built = s3.ok_json(&["index", path(tree.path()), "--store", &store, "--json"]);
    assert_eq!(built["published"], true);
    assert_eq!(built["kind"], "full");

    // The checkout it was built from: nothing differs, no overlay.
    let same = s3.read(&["inspect", "freshness"], &store, path(tree.path()));
    assert_eq!(same["generation_id"], built["generation_id"]);
    assert_eq!(same["is_stale"], false, "{same}");
    assert!(same.get("overlay_files").is_none(), "{same}");

    // Another branch: an edited, an added and a deleted file, answered by the overlay.
    let branch = branch_of(tree.path());
    let root = path(branch.path());
    let fresh = s3.read(&["inspect", "freshness"], &store, root);
    assert_eq!(fresh["overlay_files"], 3, "{fresh}");
    assert_eq!(
        fresh["is_stale"], false,
        "the overlay covers every difference: {fresh}"
    );

    let answer = s3.read(
        &["query", "shipping fee computed from the parcel weight"],
        &store,
        root,
    );
    let context = answer["context_text"].as_str().unwrap();
    assert!(
        context.starts_with("## shipping_fee"),
        "the added file answers: {answer}"
    );
    let renamed = s3.read(&["search", "add_item"], &store, root);
    assert!(ids(&renamed).contains(&"shop/cart.py::Cart.add_item".to_string()));
    let old = s3.read(&["search", "Cart.add"], &store, root);
    assert!(
        !ids(&old).contains(&"shop/cart.py::Cart.add".to_string()),
        "the edited file's old entity is gone: {old}"
    );
    let deleted = s3.read(&["search", "round_cents"], &store, root);
    assert!(
        ids(&deleted)
            .iter()
            .all(|id| !id.starts_with("shop/pricing.py")),
        "the deleted file vanished: {deleted}"
    );

    // The base is unchanged for the checkout it was built from.
    let base = s3.read(&["search", "round_cents"], &store, path(tree.path()));
    assert!(ids(&base).contains(&"shop/pricing.py::round_cents".to_string()));
}

/// Starts a build that stops for good where it would move the shared `current`, and returns
/// once it got there (its stage log says so).
fn build_stuck_before_publishing(
    s3: &Loopback,
    tree: &Path,
    store: &str,
    lease_seconds: &str,
) -> std::process::Child {
    let mut child = s3
        .command(&["index", path(tree), "--store", store, "--json"])
        .env("KNOWCODE_FAIL_STAGE", "share:hang")
        .env("KNOWCODE_LEASE_SECONDS", lease_seconds)
        .env("RUST_LOG", "knowcode::stage=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if line.contains("stage=\"share\"") || line.contains("stage=share") {
            return child;
        }
        seen.push(line);
    }
    let status = child.wait();
    panic!("the build never reached the share stage ({status:?}): {seen:#?}");
}

#[test]
fn a_build_killed_before_the_pointer_moves_leaves_the_previous_generation_current() {
    require_model();
    let s3 = loopback();
    let store = s3.store("killed");
    let tree = python_tree();
    let first = s3.ok_json(&["index", path(tree.path()), "--store", &store, "--json"]);
    let branch = branch_of(tree.path());

    let mut stuck = build_stuck_before_publishing(&s3, branch.path(), &store, "1");
    stuck.kill().unwrap();
    stuck.wait().unwrap();

    // Readers still get the first generation, whole.
    let fresh = s3.read(&["inspect", "freshness"], &store, path(tree.path()));
    assert_eq!(fresh["generation_id"], first["generation_id"]);
    let hit = s3.read(&["search", "round_cents"], &store, path(tree.path()));
    assert!(ids(&hit).contains(&"shop/pricing.py::round_cents".to_string()));

    // Once the dead builder's lease expired, the next build publishes.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let next = s3.ok_json(&["index", path(branch.path()), "--store", &store, "--json"]);
    assert_eq!(next["published"], true);
    let now = s3.read(&["inspect", "freshness"], &store, path(branch.path()));
    assert_eq!(now["generation_id"], next["generation_id"]);
    assert_ne!(next["generation_id"], first["generation_id"]);
}

#[test]
fn of_two_builders_at_once_the_second_is_told_store_locked_while_the_first_renews_its_lease() {
    require_model();
    let s3 = loopback();
    let store = s3.store("locked");
    let tree = python_tree();
    let first = s3.ok_json(&["index", path(tree.path()), "--store", &store, "--json"]);

    // A two-second lease, renewed while the holder works: still held well after two seconds.
    let mut holder = build_stuck_before_publishing(&s3, tree.path(), &store, "2");
    std::thread::sleep(std::time::Duration::from_secs(4));
    let second = s3.run(&["index", path(tree.path()), "--store", &store, "--json"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(!second.status.success());
    let error: Value = serde_json::from_slice(&second.stdout).expect("a JSON error");
    assert_eq!(error["code"], "store_locked", "{error}");
    assert!(
        error["error"].as_str().unwrap().contains("pid"),
        "names the holder: {error}"
    );
    let fresh = s3.read(&["inspect", "freshness"], &store, path(tree.path()));
    assert_eq!(fresh["generation_id"], first["generation_id"]);
}

fn assert_secret_absent(out: &Output, secret: &str) {
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(stream).contains(secret),
            "the secret was printed: {}",
            String::from_utf8_lossy(stream)
        );
    }
}

#[test]
fn bad_credentials_and_an_unreachable_endpoint_are_typed_errors_without_the_secret() {
    let s3 = loopback();
    let store = s3.store("errors");
    let tree = python_tree();
    let root = path(tree.path());

    // `query` under a changed environment: a typed `store_unreachable` error, never a panic.
    let unreachable_query = |set: &[(&str, &str)], unset: &[&str]| {
        let mut command = s3.command(&[
            "query",
            "cart total",
            "--store",
            &store,
            "--root",
            root,
            "--json",
        ]);
        command.envs(set.iter().copied());
        for name in unset {
            command.env_remove(name);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && !stderr.contains("panicked"),
            "{stderr}"
        );
        let error: Value = serde_json::from_slice(&out.stdout).expect("a JSON error");
        assert_eq!(error["code"], "store_unreachable", "{error}");
        (out, error)
    };

    let wrong_secret = "wrong-secret-value-do-not-print";
    let (refused, error) = unreachable_query(&[("AWS_SECRET_ACCESS_KEY", wrong_secret)], &[]);
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("AWS_SECRET_ACCESS_KEY")
    );
    assert_secret_absent(&refused, wrong_secret);

    let unknown_key = s3
        .command(&["index", root, "--store", &store, "--json", "--no-embed"])
        .env("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
        .output()
        .unwrap();
    let error: Value = serde_json::from_slice(&unknown_key.stdout).unwrap();
    assert_eq!(error["code"], "store_unreachable", "{error}");
    assert_secret_absent(&unknown_key, &s3.secret);

    let (unreachable, error) =
        unreachable_query(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")], &[]);
    assert!(
        error["hint"].as_str().unwrap().contains("AWS_ENDPOINT_URL"),
        "{error}"
    );
    assert_secret_absent(&unreachable, &s3.secret);

    // HTTPS to a server that speaks plain HTTP: the TLS stack (rustls on ring, installed by
    // the store) starts and its handshake fails.
    let https = s3.endpoint.replacen("http://", "https://", 1);
    let (handshake, _) = unreachable_query(&[("AWS_ENDPOINT_URL", &https)], &["AWS_ALLOW_HTTP"]);
    assert_secret_absent(&handshake, &s3.secret);

    // doctor names the failing step.
    let doctor = s3
        .command(&["doctor", "--store", &store, "--json"])
        .current_dir(tree.path())
        .env("AWS_SECRET_ACCESS_KEY", wrong_secret)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = common::doctor_check(&report, "store");
    assert_eq!(check["status"], "fail", "{report}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("authenticate failed"),
        "{report}"
    );
    assert_secret_absent(&doctor, wrong_secret);
}

fn run_mcp_scenario(s3: &Loopback, scenario: &str, store: &str) {
    let stdout = common::run_mcp_script_with(
        "mcp_contract.py",
        &[scenario],
        &[
            ("KNOWCODE_TEST_STORE", store),
            ("AWS_ENDPOINT_URL", &s3.endpoint),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", &s3.key_id),
            ("AWS_SECRET_ACCESS_KEY", &s3.secret),
        ],
    );
    assert!(
        stdout.contains(&format!("{scenario}: all checks passed")),
        "{stdout}"
    );
}

#[test]
fn an_agent_builds_and_reads_a_shared_store_over_mcp() {
    let s3 = loopback();
    run_mcp_scenario(&s3, "shared_s3", &s3.store("mcp"));
}

#[test]
fn a_build_submitted_over_mcp_renews_its_lease() {
    let s3 = loopback();
    run_mcp_scenario(&s3, "shared_s3_lease", &s3.store("mcp-lease"));
}

#[test]
fn a_server_started_outside_its_checkout_answers_from_the_index_and_builds_large_overlays_later() {
    let s3 = loopback();
    run_mcp_scenario(&s3, "shared_s3_elsewhere", &s3.store("mcp-elsewhere"));
}

#[test]
fn doctor_passes_on_a_published_shared_store() {
    require_model();
    let s3 = loopback();
    let store = s3.store("doctor");
    let tree = python_tree();
    let empty = s3
        .command(&["doctor", "--store", &store, "--json"])
        .current_dir(tree.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&empty.stdout).unwrap();
    let check = common::doctor_check(&report, "store");
    assert_eq!(check["status"], "fail");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("nothing is published")
    );

    s3.ok_json(&["index", path(tree.path()), "--store", &store, "--json"]);
    let out = s3
        .command(&["doctor", "--store", &store, "--json"])
        .current_dir(tree.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        common::doctor_check(&report, "store")["status"],
        "pass",
        "{report}"
    );
    assert_eq!(
        common::doctor_check(&report, "tables")["status"],
        "pass",
        "{report}"
    );
}

#[test]
fn a_checkout_whose_aimodels_yaml_names_the_shared_store_reads_it_without_flags() {
    require_model();
    let s3 = loopback();
    let store = s3.store("configured");
    let tree = python_tree();
    let built = s3.ok_json(&["index", path(tree.path()), "--store", &store, "--json"]);

    // A teammate's checkout on another branch, configured once in aimodels.yaml.
    let branch = branch_of(tree.path());
    std::fs::write(
        branch.path().join("aimodels.yaml"),
        format!("index:\n  store: {}\n", &*store),
    )
    .unwrap();
    let in_branch = |args: &[&str]| {
        let out = s3
            .command(args)
            .current_dir(branch.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (fresh, _) = in_branch(&["inspect", "freshness", "--json"]);
    let fresh: Value = serde_json::from_slice(&fresh).unwrap();
    assert_eq!(fresh["generation_id"], built["generation_id"], "{fresh}");
    assert_eq!(fresh["overlay_files"], 3, "{fresh}");
    let (found, _) = in_branch(&["search", "shipping_fee", "--json"]);
    let found: Value = serde_json::from_slice(&found).unwrap();
    assert!(ids(&found).contains(&"shop/shipping.py::shipping_fee".to_string()));

    // `index` without --store builds locally and says where it did not publish.
    let (_, said) = in_branch(&["index", ".", "--no-embed", "--json"]);
    assert!(said.contains(&*store) && said.contains("--store"), "{said}");
    assert!(branch.path().join(".knowcode").is_dir());
    let (after, _) = in_branch(&["inspect", "freshness", "--json"]);
    let after: Value = serde_json::from_slice(&after).unwrap();
    assert_eq!(after["generation_id"], built["generation_id"], "{after}");
}

/// A folder of `n` Python files unrelated to the fixture, with a git history of its own.
fn unrelated_tree(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..n {
        let text = format!(
            "def helper_{i}(x):\n    \"\"\"Scratch helper {i}.\"\"\"\n    return x + {i}\n"
        );
        std::fs::write(dir.path().join(format!("scratch_{i}.py")), text).unwrap();
    }
    common::git(dir.path(), &["init", "-q"]);
    common::git(dir.path(), &["add", "-A"]);
    common::git(dir.path(), &["commit", "-qm", "scratch"]);
    dir
}

/// The fixture as a git repository (its first commit is what the index records).
fn python_repository() -> tempfile::TempDir {
    let tree = python_tree();
    common::git(tree.path(), &["init", "-q"]);
    common::git(tree.path(), &["add", "-A"]);
    common::git(tree.path(), &["commit", "-qm", "shop: carts and prices"]);
    tree
}

#[test]
fn a_reader_outside_its_checkout_answers_from_the_index_and_says_why() {
    let s3 = loopback();
    let store = s3.store("elsewhere");
    let tree = python_repository();
    let built = s3.ok_json(&[
        "index",
        path(tree.path()),
        "--store",
        &store,
        "--no-embed",
        "--json",
    ]);
    assert_eq!(built["published"], true);
    let cache = tempfile::tempdir().unwrap();
    let query_with = |dir: &Path, cache: &Path| -> Value {
        let out = s3
            .command(&[
                "query",
                "round an amount to cents",
                "--store",
                &store,
                "--json",
            ])
            .current_dir(dir)
            .env("KNOWCODE_CACHE", cache)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let query_from = |dir: &Path| query_with(dir, cache.path());
    let overlays = cache.path().join("overlays");

    let empty = tempfile::tempdir().unwrap();
    let unrelated = unrelated_tree(40);
    for (dir, why) in [
        (empty.path(), "the folder is empty"),
        (
            unrelated.path(),
            "does not contain the indexed repository's first commit",
        ),
    ] {
        let answer = query_from(dir);
        assert!(
            answer["context_text"]
                .as_str()
                .unwrap()
                .contains("round_cents"),
            "answered from the index: {answer}"
        );
        let note = &answer["freshness"]["overlay"];
        assert_eq!(note["applied"], false, "{answer}");
        assert_eq!(note["reason"], "not_a_checkout", "{answer}");
        assert!(note["detail"].as_str().unwrap().contains(why), "{note}");
        assert_eq!(answer["freshness"]["is_stale"], false, "{answer}");
        let errors = answer["errors"].to_string();
        assert!(
            errors.contains("not_a_checkout") && errors.contains("--root"),
            "{errors}"
        );
        assert!(
            !overlays.exists(),
            "no overlay is built for {}",
            dir.display()
        );
    }

    // A checkout (a clone, read from a subfolder) with 3 edited files answers through its
    // overlay; the clone's first commit is the indexed one.
    let clone = tempfile::tempdir().unwrap();
    let source = format!("file://{}", path(tree.path()));
    common::git(clone.path(), &["clone", "-q", &source, "."]);
    let edit = |rel: &str, add: &str| {
        let file = clone.path().join(rel);
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}\n{add}")).unwrap();
    };
    edit("shop/cart.py", "def gift_wrap_fee(order):\n    return 3\n");
    edit(
        "shop/pricing.py",
        "def round_to_nickel(amount):\n    return round(amount * 20) / 20\n",
    );
    edit("shop/__init__.py", "VERSION = '2'\n");
    let answer = query_from(&clone.path().join("shop"));
    assert_eq!(answer["freshness"]["overlay_files"], 3, "{answer}");
    assert!(answer["freshness"].get("overlay").is_none(), "{answer}");
    assert_eq!(std::fs::read_dir(&overlays).unwrap().count(), 1);
    let found = {
        let out = s3
            .command(&["search", "round_to_nickel", "--store", &store, "--json"])
            .current_dir(clone.path().join("shop"))
            .env("KNOWCODE_CACHE", cache.path())
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert!(
        ids(&found).contains(&"shop/pricing.py::round_to_nickel".to_string()),
        "{found}"
    );

    // Past index.overlay_max_files (3 files never overlaid on this machine), a one-shot
    // reader answers from the index at once.
    std::fs::write(
        clone.path().join("aimodels.yaml"),
        "index:\n  overlay_max_files: 2\n",
    )
    .unwrap();
    let fresh_cache = tempfile::tempdir().unwrap();
    let bounded = query_with(clone.path(), fresh_cache.path());
    assert!(!fresh_cache.path().join("overlays").exists());
    let note = &bounded["freshness"]["overlay"];
    assert_eq!(note["reason"], "too_many_files", "{bounded}");
    assert!(
        bounded["context_text"]
            .as_str()
            .unwrap()
            .contains("round_cents"),
        "{bounded}"
    );
}
