//! Code search by description, ranked the way the code-search benchmark asks, through the real
//! CLI on the lexical plane: a named symbol's definition first (the file named after it
//! strongest), other relevant files past repeats of one file, and a C++ API's header as an
//! answer.

mod common;

use std::path::Path;

use common::{knowcode_ok_json, lexical_repo};
use serde_json::Value;

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
    // The definition sits in a long header; short callers and a test repeat the name (the
    // shape of fmt's `basic_format_args`, where plain ranking put the callers first).
    let methods: String = (0..40)
        .map(|i| format!("  int helper_{i}(int x) const {{ return x + {i}; }}\n"))
        .collect();
    let base = format!(
        "#pragma once\nnamespace fmt {{\n/** A view of the formatting arguments. */\nclass basic_format_args {{\n public:\n{methods}}};\n}}\n"
    );
    let compile = "#pragma once\n#include \"base.h\"\nnamespace fmt {\n// compile-time basic_format_args\ninline int compile_args(basic_format_args args) { return vformat(basic_format_args(args)); }\ninline int compile_more(basic_format_args args) { return compile_args(args); }\n}\n";
    let xchar = "#pragma once\n#include \"base.h\"\nnamespace fmt {\ninline int wide(basic_format_args args) { return vformat(args); } // basic_format_args\n}\n";
    let test = "#include \"fmt/base.h\"\nTEST(args, basic_format_args) { basic_format_args a; EXPECT_EQ(a.helper_1(1), 2); }\n";
    let repo = lexical_repo(&[
        ("include/fmt/base.h", &base),
        ("include/fmt/compile.h", compile),
        ("include/fmt/xchar.h", xchar),
        ("test/args-test.cc", test),
    ]);
    let ids = ranked(repo.path(), "basic_format_args");
    assert_eq!(
        ids[0], "include/fmt/base.h::fmt.basic_format_args",
        "{ids:?}"
    );
}

#[test]
fn the_file_named_after_a_symbol_holds_its_first_answer() {
    // The other copy's docstring repeats the name, so the words alone prefer it.
    let class = |doc: &str| {
        format!(
            "class RateLimiter:\n    \"\"\"{doc}\"\"\"\n\n    def allow(self, key):\n        return True\n"
        )
    };
    let repo = lexical_repo(&[
        (
            "src/limits.py",
            &class(
                "A rate limiter: the rate limiter keeps a RateLimiter per key. RateLimiter RateLimiter.",
            ),
        ),
        ("src/rate_limiter.py", &class("Token bucket.")),
    ]);
    let ids = ranked(repo.path(), "RateLimiter");
    assert_eq!(ids[0], "src/rate_limiter.py::RateLimiter", "{ids:?}");
}

#[test]
fn types_a_sentence_names_stay_above_a_file_that_only_mentions_them_often() {
    let generated: String = (0..6)
        .map(|i| format!("fn serialize_variant_{i}(cx: &Ctxt) -> TokenStream {{\n    // emits a Serialize impl calling the Serializer\n    quote! {{ _serde::Serialize::serialize(__self, __serializer); _serde::Serializer::serialize_unit(__serializer) }}\n}}\n\n"))
        .collect();
    let traits = "/// A data structure that can be serialized.\npub trait Serialize {\n    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;\n}\n\n/// A data format that can serialize any data structure.\npub trait Serializer: Sized {\n    type Ok;\n    type Error;\n    fn serialize_bool(self, v: bool) -> Result<Self::Ok, Self::Error>;\n}\n";
    let repo = lexical_repo(&[
        ("serde_derive/src/ser.rs", &generated),
        ("serde_core/src/ser/mod.rs", traits),
    ]);
    let ids = ranked(repo.path(), "Serialize and Serializer trait definitions");
    assert_eq!(
        files_of(&ids[..1]),
        ["serde_core/src/ser/mod.rs"],
        "{ids:?}"
    );
}

#[test]
fn examples_rank_below_the_code_they_use() {
    let example = "package main\n\n// URL parameters are extracted from the path segments of the request\nfunc main() {\n    r := chi.NewRouter()\n    r.Get(\"/articles/{id}\", func(w http.ResponseWriter, req *http.Request) {\n        id := chi.URLParam(req, \"id\") // the URL parameter from the path segment\n        w.Write([]byte(id))\n    })\n}\n";
    let context = "package chi\n\n// URLParam returns the url parameter from a http.Request object.\nfunc URLParam(r *http.Request, key string) string {\n    if rctx := RouteContext(r.Context()); rctx != nil { return rctx.URLParam(key) }\n    return \"\"\n}\n";
    let repo = lexical_repo(&[
        ("_examples/rest/main.go", example),
        ("_examples/params/main.go", example),
        ("context.go", context),
    ]);
    let ids = ranked(
        repo.path(),
        "how URL parameters are extracted from path segments",
    );
    assert_eq!(ids[0], "context.go::URLParam", "{ids:?}");
}

#[test]
fn a_second_relevant_file_reaches_the_top_three_past_repeats_of_the_first() {
    // Every part of base.rb says the question's words; the middleware itself says few of
    // them. Without re-scoring base.rb fills the first three places (sinatra's shape).
    let base: String = (0..8)
        .map(|i| {
            format!("  # adds request logging middleware {i} to the stack\n  def use_logging_{i}(app)\n    middleware << [:logging, app, 'request {i}']\n  end\n\n")
        })
        .collect();
    let logger = "# Writes one line per request.\nclass RequestLogger\n  def call(env)\n    started = Time.now\n    status, headers, body = @app.call(env)\n    write(env, status, Time.now - started)\n    [status, headers, body]\n  end\nend\n";
    let repo = lexical_repo(&[
        ("lib/server/base.rb", &format!("class Base\n{base}end\n")),
        ("lib/server/middleware/request_logger.rb", logger),
    ]);
    let ids = ranked(repo.path(), "request logging middleware");
    assert!(
        files_of(&ids[..3]).contains(&"lib/server/middleware/request_logger.rb"),
        "{ids:?}"
    );
}

#[test]
fn a_cpp_api_question_is_answered_by_the_public_header() {
    let header = "#pragma once\nnamespace store {\n/** Arguments collected at run time. */\nclass dynamic_arg_store {\n public:\n  void push_back(int value);\n  int size() const;\n};\n}\n";
    let source = "#include \"store/arg_store.h\"\nnamespace store {\nvoid dynamic_arg_store::push_back(int value) {\n  // dynamic_arg_store grows: dynamic_arg_store keeps every value\n  values_.push_back(value);\n}\nint dynamic_arg_store::size() const { return values_.size(); }\n}\n";
    let repo = lexical_repo(&[
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

#[test]
fn a_class_behind_export_macros_is_its_own_definition() {
    // fmt's shape: the namespace opened by a macro, the class exported by one, a constructor
    // and a method wearing constexpr macros, a template parameter made by a macro. Without
    // the macro view the grammar loses the class and the question lands on a mention.
    let header = "#include \"base.h\"\n\nFMT_BEGIN_NAMESPACE\n\n/**\n * A dynamic list of formatting arguments with storage.\n */\nFMT_EXPORT template <typename Context> class dynamic_format_arg_store {\n public:\n  FMT_CONSTEXPR dynamic_format_arg_store() : size_(0) {}\n\n  template <typename T, FMT_ENABLE_IF(std::is_integral<T>::value)>\n  FMT_CONSTEXPR20 void push_back(const T& arg) {\n    if FMT_CONSTEXPR20 (sizeof(T) > 4) grow();\n    ++size_;\n  }\n\n private:\n  int size_;\n};\n\nFMT_END_NAMESPACE\n";
    let mentions = "FMT_BEGIN_NAMESPACE\n// dynamic_format_arg_store converts to basic_format_args\ntemplate <typename Context> class dynamic_format_arg_store;\nclass basic_format_args {\n  // built from a dynamic_format_arg_store or a static one\n  int size_;\n};\nFMT_END_NAMESPACE\n";
    let repo = lexical_repo(&[("args.h", header), ("base.h", mentions)]);
    let ids = ranked(repo.path(), "dynamic_format_arg_store");
    // The class first — not its constructor, which shares its name — the mentions below.
    assert_eq!(ids[0], "args.h::dynamic_format_arg_store", "{ids:?}");
    let found = knowcode_ok_json(&[
        "search",
        "push_back",
        "--store",
        repo.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        found["results"][0]["id"], "args.h::dynamic_format_arg_store.push_back",
        "{found}"
    );
}

#[test]
fn a_partial_class_is_answered_by_the_file_named_after_it() {
    // C#'s shape of dapper: `SqlMapper` split over `SqlMapper.cs` and more parts than the
    // definitions a name is given; the parts sort first by id and once crowded the file out.
    let part = |p: &str| {
        format!(
            "namespace Dapper\n{{\n    public static partial class SqlMapper\n    {{\n        private static int Part{p}() => 1;\n    }}\n}}\n"
        )
    };
    let parts: Vec<(String, String)> = ["A", "B", "C", "D", "E", "F"]
        .iter()
        .map(|p| (format!("Dapper/SqlMapper.Part{p}.cs"), part(p)))
        .collect();
    let main = "namespace Dapper\n{\n    /// <summary>A simple object mapper.</summary>\n    public static partial class SqlMapper\n    {\n        public static int Query(string sql) => sql.Length;\n    }\n}\n";
    let mut files: Vec<(&str, &str)> = parts
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    files.push(("Dapper/SqlMapper.cs", main));
    let repo = lexical_repo(&files);
    let ids = ranked(repo.path(), "SqlMapper");
    assert_eq!(ids[0], "Dapper/SqlMapper.cs::Dapper.SqlMapper", "{ids:?}");
}

#[test]
fn code_ranks_above_the_changelog_that_describes_it() {
    // A change description reads like its changelog entry, word for word; the code is the
    // answer, the history pages below it.
    let changelog = "Changelog\n=========\n\n2.4.0\n-----\n- Uploads retry after a timeout, with exponential backoff between the attempts.\n- The retry budget of an upload is configurable.\n";
    let whatsnew = "What's new in 2.4\n=================\nUploads now retry after a timeout with exponential backoff.\n";
    let upload = "import time\n\n\ndef send_chunk(conn, chunk, attempts=3, backoff=0.5):\n    \"\"\"Sends one chunk, trying again when the connection times out.\"\"\"\n    for attempt in range(attempts):\n        try:\n            return conn.write(chunk)\n        except TimeoutError:\n            time.sleep(backoff * 2 ** attempt)\n    raise TimeoutError(\"gave up\")\n";
    let repo = lexical_repo(&[
        ("CHANGELOG.rst", changelog),
        ("docs/whatsnew/v2.4.rst", whatsnew),
        ("src/upload.py", upload),
        (
            "src/conn.py",
            "class Connection:\n    def write(self, data):\n        return len(data)\n",
        ),
    ]);
    let ids = ranked(
        repo.path(),
        "Uploads retry after a timeout with exponential backoff",
    );
    let first_history = ids
        .iter()
        .position(|id| id.ends_with(".rst"))
        .unwrap_or(ids.len());
    let code: Vec<usize> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| id.starts_with("src/upload.py"))
        .map(|(i, _)| i)
        .collect();
    assert!(
        code.len() == 2 && code.iter().all(|&i| i < first_history),
        "{ids:?}"
    );
}

#[test]
fn a_folder_or_file_name_abbreviating_a_word_of_the_question_spells_it() {
    // chi's shape: `strip.go` says "stripping" only through its name; the rewrite middleware
    // says the question's other words (URL, path, middleware) over and over.
    let strip = "package middleware\n\n// StripSlashes matches request paths with a trailing slash, strips it and routes on.\nfunc StripSlashes(next http.Handler) http.Handler {\n\tfn := func(w http.ResponseWriter, r *http.Request) {\n\t\tif len(r.URL.Path) > 1 && r.URL.Path[len(r.URL.Path)-1] == '/' {\n\t\t\tr.URL.Path = r.URL.Path[:len(r.URL.Path)-1]\n\t\t}\n\t\tnext.ServeHTTP(w, r)\n\t}\n\treturn http.HandlerFunc(fn)\n}\n";
    let rewrite = "package middleware\n\n// PathRewrite is a middleware that rewrites the URL path of the request: every URL path\n// that starts with old is rewritten to start with new before the router sees the path.\nfunc PathRewrite(old, new string) func(http.Handler) http.Handler {\n\treturn func(next http.Handler) http.Handler {\n\t\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\t\tr.URL.Path = strings.Replace(r.URL.Path, old, new, 1)\n\t\t\tnext.ServeHTTP(w, r)\n\t\t})\n\t}\n}\n";
    let logger = "package middleware\n\n// Logger is a middleware that logs the start and end of each request path.\nfunc Logger(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\tlog.Printf(\"request %s %s\", r.Method, r.URL.Path)\n\t\tnext.ServeHTTP(w, r)\n\t})\n}\n";
    let repo = lexical_repo(&[
        ("middleware/strip.go", strip),
        ("middleware/path_rewrite.go", rewrite),
        ("middleware/logger.go", logger),
    ]);
    let ids = ranked(repo.path(), "URL path stripping middleware");
    assert_eq!(ids[0], "middleware/strip.go::StripSlashes", "{ids:?}");
}

#[test]
fn a_getter_handed_to_a_call_is_answered_as_a_function() {
    // Express defines `req.ip`, `req.hostname`, … as named functions handed to `defineGetter`;
    // without them the whole file was the only answer.
    let request = "'use strict';\n\nvar req = Object.create(http.IncomingMessage.prototype);\n\n/**\n * Check if the given `type(s)` is acceptable.\n */\n\nreq.accepts = function accepts() {\n  var accept = accepts(this);\n  return accept.types.apply(accept, arguments);\n};\n\n/**\n * Return the remote address from the trusted proxy.\n */\n\ndefineGetter(req, 'ip', function ip() {\n  var trust = this.app.get('trust proxy fn');\n  return proxyaddr(this, trust);\n});\n\n/**\n * Parse the \"Host\" header field to a hostname.\n */\n\ndefineGetter(req, 'hostname', function hostname() {\n  var host = this.get('X-Forwarded-Host');\n  return host ? host.split(',')[0] : this.get('Host');\n});\n\nfunction defineGetter(obj, name, getter) {\n  Object.defineProperty(obj, name, { configurable: true, enumerable: true, get: getter });\n}\n";
    let repo = lexical_repo(&[("lib/request.js", request)]);
    let ids = ranked(repo.path(), "remote ip address behind a trusted proxy");
    assert_eq!(ids[0], "lib/request.js::ip", "{ids:?}");
}

#[test]
fn a_module_named_by_its_whole_dotted_name_is_its_definition() {
    // Elixir names a module by its whole alias (`defmodule Plug.Conn`); the question writes
    // that alias inside a sentence, and the modules below it and the test adapter say more of
    // its words.
    let conn = "defmodule Plug.Conn do\n  @moduledoc \"The request and its response.\"\n  defstruct host: \"www.example.com\", method: \"GET\", status: nil\n\n  def halt(%Plug.Conn{} = conn), do: %{conn | halted: true}\nend\n";
    let query = "defmodule Plug.Conn.Query do\n  @moduledoc \"Decodes the query string of an HTTP connection.\"\n\n  def decode(query, conn) do\n    # the HTTP connection query: a Plug.Conn field, decoded for the connection\n    String.split(query, \"&\") |> Enum.map(&decode_pair(&1, conn))\n  end\n\n  def decode_pair(pair, conn), do: {pair, conn}\nend\n";
    let adapter = "defmodule Plug.Adapters.Test.Conn do\n  @moduledoc \"A test connection: builds a Plug.Conn struct for tests.\"\n\n  def conn(method, path), do: %Plug.Conn{method: method, host: path}\nend\n";
    let repo = lexical_repo(&[
        ("lib/plug/conn.ex", conn),
        ("lib/plug/conn/query.ex", query),
        ("lib/plug/adapters/test/conn.ex", adapter),
    ]);
    let ids = ranked(
        repo.path(),
        "Plug.Conn struct and HTTP connection representation",
    );
    assert_eq!(ids[0], "lib/plug/conn.ex::Plug.Conn", "{ids:?}");
}

#[test]
fn a_file_whose_whole_name_the_question_spells_ranks_above_a_longer_namesake() {
    // commons-lang's shape: `ReflectionToStringBuilder` says "to string builder" as often as
    // `ToStringBuilder` and more in its code, but only the second is all the question asks.
    let plain = "package lang.builder;\n\n/** Assists in implementing toString methods. */\npublic class ToStringBuilder {\n    private final StringBuffer buffer = new StringBuffer();\n\n    public ToStringBuilder append(String fieldName, Object value) {\n        buffer.append(fieldName).append('=').append(value).append(',');\n        return this;\n    }\n\n    public String build() {\n        return buffer.toString();\n    }\n}\n";
    let reflective = "package lang.builder;\n\n/** Builds a toString description of an object through reflection: every field's toString. */\npublic class ReflectionToStringBuilder extends ToStringBuilder {\n    public static String toString(Object object) {\n        // the toString of each field, read by reflection, for a readable description\n        return new ReflectionToStringBuilder().describe(object).toString();\n    }\n\n    ReflectionToStringBuilder describe(Object object) {\n        for (java.lang.reflect.Field field : object.getClass().getDeclaredFields()) {\n            append(field.getName(), field.toString());\n        }\n        return this;\n    }\n}\n";
    let others: Vec<(String, String)> = [
        "math/Fraction",
        "math/NumberUtils",
        "time/DateUtils",
        "time/StopWatch",
        "text/WordUtils",
        "text/StrTokenizer",
    ]
    .iter()
    .map(|name| {
        let class = name.rsplit('/').next().unwrap();
        (
            format!("src/{name}.java"),
            format!("package lang;\n\n/** Operations on values. */\npublic class {class} {{\n    public static int apply(int value) {{\n        return value + 1;\n    }}\n}}\n"),
        )
    })
    .collect();
    let mut files: Vec<(&str, &str)> = others
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    files.push(("src/builder/ToStringBuilder.java", plain));
    files.push(("src/builder/ReflectionToStringBuilder.java", reflective));
    let repo = lexical_repo(&files);
    let ids = ranked(
        repo.path(),
        "to string builder for readable object descriptions",
    );
    assert_eq!(
        ids[0], "src/builder/ToStringBuilder.java::ToStringBuilder",
        "{ids:?}"
    );
}
