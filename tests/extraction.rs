//! Specific facts each language's extraction must get right, stated as behaviour (the golden
//! files pin everything else).

mod common;

use knowcode::config::Config;
use knowcode::graph::{EdgeKind, Resolution};
use knowcode::index::{self, Analysis, IndexOptions, NoProgress, Timings};
use knowcode::parse::EntityKind;

fn analyse_dir(root: &std::path::Path) -> Analysis {
    let options = IndexOptions {
        root: root.to_path_buf(),
        store_dir: root.to_path_buf(),
        ignore_globs: vec![],
        embed: false,
        temporal: false,
        config: Config::default(),
    };
    index::analyse(&options, &NoProgress, &mut Timings::default()).unwrap()
}

/// Analyses a temporary folder holding `files` as (name, text).
fn analyse_files(files: &[(&str, &str)]) -> Analysis {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    analyse_dir(dir.path())
}

fn analyse(fixture: &str) -> Analysis {
    analyse_dir(&common::fixtures().join(fixture))
}

fn entity<'a>(a: &'a Analysis, id: &str) -> &'a knowcode::parse::Entity {
    a.parsed
        .iter()
        .flat_map(|f| &f.entities)
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no entity {id}"))
}

fn edge(
    a: &Analysis,
    kind: EdgeKind,
    source: &str,
    target_name_or_id: &str,
) -> knowcode::graph::Edge {
    a.graph
        .edges
        .iter()
        .find(|e| {
            e.kind == kind
                && e.source == source
                && (e.target.as_deref() == Some(target_name_or_id)
                    || e.target_name == target_name_or_id)
        })
        .cloned()
        .unwrap_or_else(|| panic!("no {kind:?} edge {source} -> {target_name_or_id}"))
}

#[test]
fn python_methods_docstrings_and_import_bound_calls() {
    let a = analyse("python");
    let total = entity(&a, "shop/cart.py::Cart.total");
    assert_eq!(total.kind, EntityKind::Method);
    assert_eq!(
        total.doc.as_deref(),
        Some("Sum of subtotals after the discount, rounded to cents.")
    );
    assert_eq!(total.signature, "def total(self, discount=0):");
    let call = edge(
        &a,
        EdgeKind::Calls,
        "shop/cart.py::Cart.total",
        "shop/pricing.py::apply_discount",
    );
    assert_eq!(call.resolution, Resolution::ImportBound);
    assert_eq!(call.line, 32);
    let inherits = edge(
        &a,
        EdgeKind::Inherits,
        "shop/cart.py::Cart",
        "shop/cart.py::Item",
    );
    assert_eq!(inherits.resolution, Resolution::SameFile);
    let import = edge(&a, EdgeKind::Imports, "shop/cart.py", "shop/pricing.py");
    assert!(import.resolution.is_resolved());
    // `json.dumps` is outside the repository: kept, but unresolved.
    let external = edge(&a, EdgeKind::Calls, "shop/cart.py::Cart.to_json", "dumps");
    assert_eq!(external.resolution, Resolution::Unresolved);
    assert!(a.graph.unresolved_by_file["shop/cart.py"] >= 1);
}

#[test]
fn ambiguous_calls_are_never_settled_by_the_first_match() {
    // `__init__` exists twice in cart.py; a bare call to it from elsewhere must not pick one.
    let dir = common::copy_fixture("python");
    std::fs::write(dir.path().join("other.py"), "def run():\n    __init__()\n").unwrap();
    let a = analyse_dir(dir.path());
    let call = edge(&a, EdgeKind::Calls, "other.py::run", "__init__");
    assert_eq!(call.resolution, Resolution::Ambiguous);
    assert_eq!(call.candidates, 2);
    assert!(call.target.is_none());
}

#[test]
fn rust_impl_methods_belong_to_their_type_and_traits_are_implemented() {
    let a = analyse("rust");
    let new = entity(&a, "src/shapes.rs::Circle.new");
    assert_eq!(new.kind, EntityKind::Method);
    assert_eq!(new.parent.as_deref(), Some("src/shapes.rs::Circle"));
    assert_eq!(
        new.doc.as_deref(),
        Some("Create a circle with the given radius.")
    );
    let circle = entity(&a, "src/shapes.rs::Circle");
    assert_eq!(circle.subkind.as_deref(), Some("struct"));
    edge(
        &a,
        EdgeKind::Implements,
        "src/shapes.rs::Circle",
        "src/shapes.rs::Area",
    );
    let call = edge(
        &a,
        EdgeKind::Calls,
        "src/lib.rs::unit_circle",
        "src/shapes.rs::Circle.new",
    );
    assert!(call.resolution.is_resolved());
    edge(&a, EdgeKind::Imports, "src/lib.rs", "src/shapes.rs");
}

#[test]
fn go_methods_are_qualified_by_receiver_and_package_calls_resolve() {
    let a = analyse("go");
    let get = entity(&a, "store/store.go::Store.Get");
    assert_eq!(get.kind, EntityKind::Method);
    assert_eq!(
        get.doc.as_deref(),
        Some("Get returns the value for a normalized key.")
    );
    let call = edge(&a, EdgeKind::Calls, "main.go::main", "store/store.go::New");
    assert_eq!(call.resolution, Resolution::ImportBound);
    edge(
        &a,
        EdgeKind::Calls,
        "store/store.go::Store.Get",
        "store/store.go::normalize",
    );
}

#[test]
fn java_typescript_csharp_php_heritage_is_extracted() {
    let java = analyse("java");
    edge(
        &java,
        EdgeKind::Implements,
        "com/shop/Square.java::Square",
        "com/shop/Shape.java::Shape",
    );
    edge(
        &java,
        EdgeKind::Inherits,
        "com/shop/Square.java::Square",
        "com/shop/Square.java::Base",
    );
    let call = edge(
        &java,
        EdgeKind::Calls,
        "com/shop/Square.java::Square.area",
        "com/shop/Square.java::Util.square",
    );
    assert!(call.resolution.is_resolved());

    let ts = analyse("typescript");
    edge(
        &ts,
        EdgeKind::Inherits,
        "src/user.ts::User",
        "src/user.ts::Account",
    );
    edge(
        &ts,
        EdgeKind::Implements,
        "src/user.ts::User",
        "src/user.ts::Person",
    );
    let call = edge(
        &ts,
        EdgeKind::Calls,
        "src/user.ts::User.displayName",
        "src/format.ts::formatName",
    );
    assert_eq!(call.resolution, Resolution::ImportBound);
    assert_eq!(
        entity(&ts, "src/view.tsx::Badge").kind,
        EntityKind::Function
    );

    let cs = analyse("csharp");
    assert_eq!(
        entity(&cs, "Bank.cs::Bank.Savings.Balance").doc.as_deref(),
        Some("Current balance.")
    );
    edge(
        &cs,
        EdgeKind::Inherits,
        "Bank.cs::Bank.Savings",
        "Bank.cs::Bank.IAccount",
    );

    let php = analyse("php");
    // `namespace Billing;` (file-scoped, no braces) does not qualify names.
    edge(
        &php,
        EdgeKind::Implements,
        "src/Invoice.php::Invoice",
        "src/Invoice.php::Totalable",
    );
}

#[test]
fn javascript_ruby_c_cpp_entities_and_calls() {
    let js = analyse("javascript");
    assert_eq!(
        entity(&js, "lib/math.js::multiply").kind,
        EntityKind::Function
    );
    edge(
        &js,
        EdgeKind::Calls,
        "lib/calc.js::Calculator.plus",
        "lib/math.js::add",
    );
    edge(&js, EdgeKind::Imports, "lib/calc.js", "lib/math.js");

    let ruby = analyse("ruby");
    assert_eq!(
        entity(&ruby, "lib/greeter.rb::Greeter.greet").kind,
        EntityKind::Method
    );
    edge(
        &ruby,
        EdgeKind::Calls,
        "lib/greeter.rb::Greeter.greet",
        "lib/greeter.rb::Formatter.shout",
    );
    edge(
        &ruby,
        EdgeKind::Inherits,
        "lib/greeter.rb::Greeter",
        "lib/formatter.rb::BaseGreeter",
    );

    let c = analyse("c");
    assert_eq!(
        entity(&c, "list.c::list_sum").doc.as_deref(),
        Some("Sum all values in the list.")
    );
    edge(&c, EdgeKind::Imports, "list.c", "list.h");

    let cpp = analyse("cpp");
    let area = entity(&cpp, "shapes.cpp::geo.Circle.area");
    assert_eq!(area.kind, EntityKind::Method);
    edge(
        &cpp,
        EdgeKind::Inherits,
        "shapes.cpp::geo.Circle",
        "shapes.cpp::geo.Shape",
    );
    assert_eq!(
        entity(&cpp, "shapes.cpp::Ring.perimeter").kind,
        EntityKind::Method
    );
}

/// `defineGetter(req, 'ip', function ip() {…})`: a named function handed to a call is a
/// definition, documented by the comment above the call.
#[test]
fn a_named_function_handed_to_a_call_is_a_documented_definition() {
    let a = analyse_files(&[(
        "request.js",
        "var req = {};\n\n/**\n * The remote address, through trusted proxies.\n */\n\n\
         defineGetter(req, 'ip', function ip() {\n  return proxyaddr(this);\n});\n\n\
         items.forEach(function (item) { use(item); });\n",
    )]);
    let ip = entity(&a, "request.js::ip");
    assert_eq!(ip.kind, EntityKind::Function);
    assert_eq!(
        ip.doc.as_deref(),
        Some("The remote address, through trusted proxies.")
    );
    let functions = a.parsed[0]
        .entities
        .iter()
        .filter(|e| e.kind == EntityKind::Function)
        .count();
    assert_eq!(functions, 1, "an anonymous callback is not a definition");

    let headed = analyse_files(&[(
        "first.js",
        "/**\n * Licensed under MIT.\n */\n\nfunction first() {}\n",
    )]);
    assert_eq!(
        entity(&headed, "first.js::first").doc,
        None,
        "a file's leading block, a blank line below, is the file's doc"
    );
}

#[test]
fn markdown_sections_nest_by_heading_level() {
    let a = analyse("markdown");
    let doc = entity(&a, "docs/guide.md");
    assert_eq!(doc.kind, EntityKind::Document);
    let linux = entity(&a, "docs/guide.md::User guide.Installing.On Linux");
    assert_eq!(linux.kind, EntityKind::Section);
    assert_eq!(
        linux.parent.as_deref(),
        Some("docs/guide.md::User guide.Installing")
    );
    let section_chunks: Vec<_> = a
        .chunks
        .iter()
        .filter(|c| c.kind == EntityKind::Section)
        .collect();
    assert!(section_chunks.len() >= 4);
    // A section's own chunk stops at its subsections.
    let installing = a
        .chunks
        .iter()
        .find(|c| c.entity_id == "docs/guide.md::User guide.Installing")
        .unwrap();
    assert!(installing.text.contains("Run the installer."));
    assert!(!installing.text.contains("Use the package manager."));
}

#[test]
fn setext_headings_after_the_first_open_their_own_sections() {
    let a = analyse_files(&[(
        "notes.md",
        "Title\n=====\n\nintro\n\nPart A\n------\n\nalpha text\n\nPart B\n------\n\nbeta text\n\n# Other\n\nomega\n",
    )]);
    for part in ["Part A", "Part B"] {
        let section = entity(&a, &format!("notes.md::Title.{part}"));
        assert_eq!(section.kind, EntityKind::Section);
        assert_eq!(section.parent.as_deref(), Some("notes.md::Title"));
    }
    assert_eq!(entity(&a, "notes.md::Title.Part A").span.start_line, 6);
    let own = |id: &str| {
        a.chunks
            .iter()
            .find(|c| c.entity_id == id)
            .unwrap()
            .text
            .clone()
    };
    assert!(own("notes.md::Title.Part A").contains("alpha text"));
    assert!(!own("notes.md::Title.Part A").contains("beta text"));
    assert!(
        !own("notes.md::Title").contains("alpha text"),
        "the parent stops at its subsections"
    );
    assert_eq!(entity(&a, "notes.md::Other").kind, EntityKind::Section);
}

#[test]
fn class_chunks_stop_at_members_and_files_get_import_headers() {
    let a = analyse("python");
    let cart = a
        .chunks
        .iter()
        .find(|c| c.entity_id == "shop/cart.py::Cart")
        .unwrap();
    assert!(
        cart.text.contains("def add(self, item): …"),
        "{}",
        cart.text
    );
    assert!(!cart.text.contains("self.items.append"));
    let header = a
        .chunks
        .iter()
        .find(|c| c.id == "shop/cart.py#header")
        .unwrap();
    assert!(
        header
            .text
            .contains("from shop.pricing import apply_discount, round_cents")
    );
    assert!(
        header
            .embed_text
            .starts_with("shop/cart.py | shop.cart | module")
    );
}

#[test]
fn rust_impl_blocks_become_outline_parts_of_their_type() {
    let a = analyse("rust");
    let circle: Vec<_> = a
        .chunks
        .iter()
        .filter(|c| c.entity_id == "src/shapes.rs::Circle")
        .collect();
    let spans: Vec<(u32, u32, u32)> = circle
        .iter()
        .map(|c| (c.part, c.start_line, c.end_line))
        .collect();
    assert_eq!(spans, [(0, 8, 10), (1, 12, 17), (2, 19, 23)]);
    let inherent = circle[1];
    assert!(
        inherent.text.starts_with("impl Circle {"),
        "{}",
        inherent.text
    );
    assert!(
        inherent
            .text
            .contains("/// Create a circle with the given radius."),
        "member docs stay in the outline: {}",
        inherent.text
    );
    assert!(inherent.text.contains("pub fn new(radius: f64) -> Self …"));
    assert!(
        !inherent.text.contains("Circle { radius }"),
        "bodies are collapsed"
    );
    assert!(circle[2].text.contains("fn area(&self) -> f64 …"));
    assert!(!circle[2].text.contains("consts::PI"));
}

#[test]
fn signature_views_are_the_qualified_name_as_words_and_the_signature() {
    let a = analyse("go");
    let view = |id: &str| knowcode::chunk::signature_view(entity(&a, id));
    let methods: Vec<_> = a
        .parsed
        .iter()
        .flat_map(|f| &f.entities)
        .filter(|e| e.kind == EntityKind::Method)
        .collect();
    let method = methods.first().expect("the go fixture has methods");
    let text = view(&method.id).unwrap();
    let (words, signature) = text.split_once('\n').unwrap();
    assert_eq!(signature, method.signature);
    assert!(
        !words.contains('.') && words == words.to_lowercase(),
        "{words}"
    );
    let module = &a.parsed[0].entities[0];
    assert_eq!(view(&module.id), None, "files have no signature view");
}

#[test]
fn long_bodies_split_at_statement_boundaries_with_overlap() {
    let mut body = String::from("def long_function(x):\n    \"\"\"Does many steps.\"\"\"\n");
    for i in 0..120 {
        body.push_str(&format!(
            "    value_{i} = compute_step_{i}(x, {i}) + another_helper_call(x)\n"
        ));
    }
    let a = analyse_files(&[("long.py", &body)]);
    let parts: Vec<_> = a
        .chunks
        .iter()
        .filter(|c| c.entity_id == "long.py::long_function")
        .collect();
    assert!(
        parts.len() >= 3,
        "expected a split, got {} parts",
        parts.len()
    );
    for pair in parts.windows(2) {
        // Each piece starts on a statement line, overlapping the previous by one statement.
        assert_eq!(pair[1].start_line, pair[0].end_line);
        assert!(pair[1].text.trim_start().starts_with("value_"));
    }
    assert_eq!(parts.last().unwrap().end_line, 122);
}

#[test]
fn syntax_errors_yield_partial_results_in_every_language() {
    let broken = [
        ("a.py", "def ok():\n    pass\n\ndef broken(:\n"),
        ("a.rs", "fn ok() {}\nfn broken( {\n"),
        ("a.js", "function ok() {}\nfunction broken( {\n"),
        ("a.ts", "function ok(): void {}\nclass {\n"),
        (
            "b.tsx",
            "export function Ok() { return <div/>; }\nfunction broken( {\n",
        ),
        ("a.go", "package a\nfunc ok() {}\nfunc broken( {\n"),
        ("A.java", "class A { void ok() {} void broken( { }\n"),
        ("a.c", "int ok(void) { return 0; }\nint broken( {\n"),
        ("a.cpp", "int ok() { return 0; }\nclass X {\n"),
        ("a.cs", "class A { void Ok() {} void Broken( { }\n"),
        ("a.rb", "def ok\nend\ndef broken(\n"),
        ("a.php", "<?php\nfunction ok() {}\nfunction broken( {\n"),
        ("a.kt", "fun ok() {}\nfun broken( {\n"),
        ("a.swift", "func ok() {}\nfunc broken( {\n"),
        (
            "a.scala",
            "object A { def ok(): Int = 1\n def broken( = }\n",
        ),
        ("a.lua", "function ok() end\nfunction broken(\n"),
        ("a.sh", "ok() { true; }\nbroken() { (\n"),
        (
            "a.ex",
            "defmodule A do\n  def ok, do: 1\n  def broken(\nend\n",
        ),
        ("a.hs", "ok = 1\nbroken = (\n"),
        ("a.zig", "fn ok() void {}\nfn broken( {\n"),
        ("a.dart", "void ok() {}\nvoid broken( {\n"),
    ];
    let a = analyse_files(&broken);
    assert_eq!(a.parsed.len(), broken.len());
    for file in &a.parsed {
        assert!(
            file.issues
                .iter()
                .any(|i| i.kind == knowcode::parse::IssueKind::SyntaxError),
            "{} has no recorded syntax error",
            file.path
        );
        let names: Vec<&str> = file.entities.iter().map(|e| e.name.as_str()).collect();
        assert!(
            names.iter().any(|n| n.eq_ignore_ascii_case("ok")),
            "{}: the valid definition was lost: {names:?}",
            file.path
        );
    }
}

#[test]
fn deep_nesting_and_huge_lines_do_not_crash() {
    let nested = format!(
        "const x = {}1{};\n",
        "[\n".repeat(10_000),
        "]\n".repeat(10_000)
    );
    let mut deep_py = String::new();
    for depth in 0..200 {
        deep_py.push_str(&format!("{}def f{depth}():\n", "    ".repeat(depth)));
    }
    deep_py.push_str(&format!("{}pass\n", "    ".repeat(200)));
    let a = analyse_files(&[("nested.js", &nested), ("deep.py", &deep_py)]);
    let deep = a.parsed.iter().find(|f| f.path == "deep.py").unwrap();
    assert!(
        deep.issues
            .iter()
            .any(|i| i.kind == knowcode::parse::IssueKind::TooDeep)
    );
    assert!(deep.entities.len() > 100);
}

#[test]
fn code_outside_definitions_gets_module_code_chunks() {
    let a = analyse_files(&[
        (
            "keywords.py",
            "\"\"\"A list of all SQL key words.\"\"\"\n\n# Reserved words.\nreserved_keywords = \"\"\"VACUUM\nBOOST\nANALYZE\n\"\"\"\n\ndef is_reserved(word):\n    return word in reserved_keywords\n\nunreserved = [\"TRAN\", \"TRANSACTION\"]\n",
        ),
        (
            "small.py",
            "\"\"\"Only a logger.\"\"\"\nimport logging\n\nlog = logging.getLogger(__name__)\n\ndef run():\n    log.info(\"run\")\n",
        ),
    ]);
    let code: Vec<_> = a
        .chunks
        .iter()
        .filter(|c| c.path == "keywords.py" && c.kind == EntityKind::Module && c.part >= 1)
        .collect();
    assert_eq!(code.len(), 1, "{code:#?}");
    let chunk = code[0];
    // The table and the later constant, the definition between them cut out, no docstring or
    // comment repeated.
    assert_eq!(
        chunk.text,
        "reserved_keywords = \"\"\"VACUUM\nBOOST\nANALYZE\n\"\"\"\n…\nunreserved = [\"TRAN\", \"TRANSACTION\"]\n"
    );
    assert_eq!((chunk.start_line, chunk.end_line), (4, 12));
    assert!(
        chunk.search_text.contains("VACUUM"),
        "{}",
        chunk.search_text
    );
    assert!(
        !a.chunks
            .iter()
            .any(|c| c.path == "small.py" && c.kind == EntityKind::Module && c.part >= 1),
        "a logger alone is not worth a chunk"
    );
}

/// (fixture, entity id, its doc's first line) for each language's doc convention.
const DOC_CONVENTIONS: &[(&str, &str, &str)] = &[
    (
        "kotlin",
        "src/main/kotlin/shop/Cart.kt::Cart",
        "A shopping cart holding product lines.",
    ),
    (
        "swift",
        "Sources/Shop/Cart.swift::Cart.add",
        "Adds a line to the cart.",
    ),
    (
        "scala",
        "src/main/scala/shop/Cart.scala::Cart",
        "A shopping cart holding product lines.",
    ),
    (
        "lua",
        "lua/shop/cart.lua::Cart.add",
        "Adds a line to the cart.",
    ),
    (
        "bash",
        "lib/pricing.sh::apply_discount",
        "Applies a percentage discount to an amount in cents.",
    ),
    (
        "elixir",
        "lib/shop/cart.ex::Shop.Cart",
        "A shopping cart holding product lines.",
    ),
    (
        "elixir",
        "lib/shop/cart.ex::Shop.Cart.add",
        "Adds a line to the cart.",
    ),
    (
        "haskell",
        "src/Shop/Cart.hs::total",
        "Sum of the line prices after the discount, rounded to cents.",
    ),
    ("zig", "src/cart.zig::Cart.add", "Adds a line to the cart."),
    (
        "dart",
        "lib/cart.dart::Cart.add",
        "Adds a line to the cart.",
    ),
];

#[test]
fn each_language_reads_its_own_doc_convention() {
    for (fixture, id, doc) in DOC_CONVENTIONS {
        let a = analyse(fixture);
        let entity = entity(&a, id);
        assert_eq!(
            entity.doc.as_deref().and_then(|d| d.lines().next()),
            Some(*doc),
            "{fixture}: {id}"
        );
    }
}

#[test]
fn new_languages_import_and_inherit() {
    let scala = analyse("scala");
    let import = scala
        .parsed
        .iter()
        .flat_map(|f| &f.imports)
        .find(|i| i.text.contains("Pricing.applyDiscount"))
        .expect("the import");
    assert_eq!(import.module, "shop.Pricing.applyDiscount");
    assert_eq!(import.names, ["applyDiscount"]);
    edge(
        &scala,
        EdgeKind::Inherits,
        "src/main/scala/shop/Cart.scala::Line",
        "src/main/scala/shop/Pricing.scala::Priced",
    );
    let haskell = analyse("haskell");
    let total = entity(&haskell, "src/Shop/Cart.hs::total");
    assert_eq!(
        total.signature, "total :: Int -> Cart -> Double",
        "the type signature leads"
    );
    assert_eq!(total.span.start_line, 30);
    let instance = entity(&haskell, "src/Shop/Cart.hs::Line.Priced");
    assert_eq!(instance.subkind.as_deref(), Some("instance"));
    let elixir = analyse("elixir");
    assert!(
        elixir
            .parsed
            .iter()
            .flat_map(|f| &f.calls)
            .all(|c| c.name != "total" && c.name != "add"),
        "a def's head is not a call"
    );
    let zig = analyse("zig");
    let test = entity(&zig, "src/pricing.zig::discount of ten percent");
    assert_eq!(test.subkind.as_deref(), Some("test"));
    let swift = analyse("swift");
    let clear = entity(&swift, "Sources/Shop/Cart.swift::Cart.clear");
    assert_eq!(
        clear.kind,
        EntityKind::Method,
        "an extension's member is the type's method"
    );
}

#[test]
fn rust_tests_beside_the_code_are_tests() {
    let source = r#"pub fn merge(codes: &[i32]) -> i32 {
    codes.iter().copied().max().unwrap_or(0)
}

#[test]
fn merge_of_nothing_is_success() {
    assert_eq!(merge(&[]), 0);
}

#[tokio::test]
async fn merges_asynchronously() {}

#[cfg(test)]
fn fixture() -> Vec<i32> {
    vec![1]
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case(i32);

    fn helper() -> Case {
        Case(merge(&[1]))
    }

    #[test]
    #[should_panic]
    fn panics() {
        panic!()
    }
}

#[cfg(feature = "cli")]
mod cli {
    pub fn run() {}
}

#[test]
#[ignore]
fn slow_merge() {}

#[inline]
fn fast_merge() {}

#[cfg(test)]
use std::collections::HashMap;

#[must_use]
fn checked_merge() -> i32 {
    0
}

#[cfg(test)]
#[allow(dead_code)]
mod more_tests {
    fn unused() {}
}
"#;
    let a = analyse_files(&[("codes.rs", source)]);
    let subkind = |id: &str| entity(&a, id).subkind.as_deref();
    for id in [
        "codes.rs::merge_of_nothing_is_success",
        "codes.rs::merges_asynchronously",
        "codes.rs::fixture",
        "codes.rs::tests.Case",
        "codes.rs::tests.helper",
        "codes.rs::tests.panics",
        "codes.rs::slow_merge",
        "codes.rs::more_tests.unused",
    ] {
        assert_eq!(subkind(id), Some("test"), "{id} is a test");
    }
    assert_eq!(
        subkind("codes.rs::merge"),
        None,
        "the code under test is not"
    );
    assert_eq!(
        subkind("codes.rs::cli.run"),
        None,
        "another cfg is not a test"
    );
    for id in ["codes.rs::fast_merge", "codes.rs::checked_merge"] {
        assert_eq!(
            subkind(id),
            None,
            "{id} follows a test's item, not its attribute"
        );
    }
}
