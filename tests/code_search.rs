//! Code search by description, ranked the way the code-search benchmark asks, through the real
//! CLI on the lexical plane: a named symbol's definition first (the file named after it
//! strongest), other relevant files past repeats of one file, and a C++ API's header as an
//! answer.

mod common;

use std::path::Path;

use common::{index_json, knowcode_ok_json};
use serde_json::Value;

/// Writes `files` (path, text) under a fresh folder and indexes it on the lexical plane.
fn indexed(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    index_json(dir.path(), &["--no-embed"]);
    dir
}

/// The entity ids `query` packs for a question, in order.
fn ranked(store: &Path, question: &str) -> Vec<String> {
    let answer = knowcode_ok_json(&[
        "query",
        question,
        "--store",
        store.to_str().unwrap(),
        "--limit-entities",
        "5",
        "--verbosity",
        "standard",
        "--json",
    ]);
    answer["entities"]
        .as_array()
        .unwrap_or_else(|| panic!("no entities: {answer}"))
        .iter()
        .map(|e| e.as_str().unwrap_or_default().to_string())
        .collect()
}

fn files_of(ids: &[String]) -> Vec<&str> {
    ids.iter()
        .map(|id| id.split("::").next().unwrap())
        .collect()
}

#[test]
fn a_named_symbol_is_answered_by_its_definition_not_its_callers_or_tests() {
    let callers: String = (0..6)
        .map(|i| format!("def step_{i}(lines):\n    return [tokenize_line(l) for l in lines]  # tokenize_line\n\n"))
        .collect();
    let repo = indexed(&[
        (
            "src/parser/lexer.py",
            "def tokenize_line(text):\n    return text.split()\n",
        ),
        ("src/pipeline.py", &callers),
        (
            "tests/test_lexer.py",
            "def test_tokenize_line():\n    assert tokenize_line('a b') == ['a', 'b']\n    assert tokenize_line('') == []\n",
        ),
    ]);
    let ids = ranked(repo.path(), "tokenize_line");
    assert_eq!(ids[0], "src/parser/lexer.py::tokenize_line", "{ids:?}");
}

#[test]
fn the_file_named_after_a_symbol_holds_its_first_answer() {
    let class = |doc: &str| {
        format!(
            "class RateLimiter:\n    \"\"\"{doc}\"\"\"\n\n    def allow(self, key):\n        return True\n"
        )
    };
    let repo = indexed(&[
        ("src/limits.py", &class("A limiter kept for old callers.")),
        ("src/rate_limiter.py", &class("Token bucket limiter.")),
    ]);
    let ids = ranked(repo.path(), "RateLimiter");
    assert_eq!(ids[0], "src/rate_limiter.py::RateLimiter", "{ids:?}");
}

#[test]
fn a_second_relevant_file_reaches_the_top_three_past_repeats_of_the_first() {
    let base: String = (0..8)
        .map(|i| {
            format!("  def handle_request_{i}(env)\n    log_request(env, 'request {i} handled')\n  end\n\n")
        })
        .collect();
    let repo = indexed(&[
        ("lib/server/base.rb", &format!("class Base\n{base}end\n")),
        (
            "lib/server/middleware/logger.rb",
            "class Logger\n  def call(env)\n    write(env)\n  end\nend\n",
        ),
    ]);
    let ids = ranked(repo.path(), "request logging middleware");
    assert!(
        files_of(&ids[..3]).contains(&"lib/server/middleware/logger.rb"),
        "{ids:?}"
    );
}

#[test]
fn a_cpp_api_question_is_answered_by_the_public_header() {
    let header = "#pragma once\nnamespace store {\n/** Arguments collected at run time. */\nclass dynamic_arg_store {\n public:\n  void push_back(int value);\n  int size() const;\n};\n}\n";
    let source = "#include \"store/arg_store.h\"\nnamespace store {\nvoid dynamic_arg_store::push_back(int value) {\n  // dynamic_arg_store grows: dynamic_arg_store keeps every value\n  values_.push_back(value);\n}\nint dynamic_arg_store::size() const { return values_.size(); }\n}\n";
    let repo = indexed(&[
        ("include/store/arg_store.h", header),
        ("src/arg_store.cc", source),
    ]);
    let ids = ranked(repo.path(), "dynamic_arg_store");
    assert_eq!(
        ids[0], "include/store/arg_store.h::store.dynamic_arg_store",
        "{ids:?}"
    );
    let answer: Value = knowcode_ok_json(&[
        "query",
        "dynamic_arg_store",
        "--store",
        repo.path().to_str().unwrap(),
        "--verbosity",
        "standard",
        "--json",
    ]);
    assert_eq!(
        answer["entities"][0], "include/store/arg_store.h::store.dynamic_arg_store",
        "the default one-entity answer too: {answer}"
    );
}
