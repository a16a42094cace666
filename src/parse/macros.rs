//! C and C++ macros the grammar cannot expand. Libraries wrap their declarations in
//! macros — `FMT_EXPORT template <…> class X`, `FMT_API void f()`, `UV_EXTERN int uv_run()`,
//! `simdjson_inline bool f()`, `FMT_BEGIN_NAMESPACE` on a line of its own,
//! `template <typename T, FMT_ENABLE_IF(…)>` — and tree-sitter, which sees the macro as a
//! stray word, loses the declaration (and often the rest of the class) to an error node.
//! This module blanks those macro uses to spaces (a template-parameter macro becomes `int`)
//! in a view of the same length, so the declaration is found at its own offsets. It reads
//! tokens only (comments, strings and preprocessor lines are skipped, never changed) and
//! must not touch a macro whose removal could change what a well-formed declaration means:
//! only bare words standing where a declaration cannot have them are blanked.

use std::ops::Range;

/// `text` with the macros that decorate declarations blanked (see the module docs).
pub fn blank_declaration_macros(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let (tokens, directives) = tokenize(bytes);
    let mut view = bytes.to_vec();
    let conditions = directives
        .into_iter()
        .filter_map(|directive| condition(bytes, directive))
        .map(|range| (range, "1"));
    for (range, replacement) in macro_uses(bytes, &tokens).into_iter().chain(conditions) {
        let slice = &mut view[range];
        super::view::blank(slice);
        slice[..replacement.len()].copy_from_slice(replacement.as_bytes());
    }
    view
}

/// A token of code: an identifier (keywords included) or one punctuation byte.
#[derive(Debug, Clone, Copy)]
struct Token {
    start: usize,
    end: usize,
    word: bool,
    /// The first token on its line.
    opens_line: bool,
}

impl Token {
    fn text<'a>(&self, bytes: &'a [u8]) -> &'a str {
        std::str::from_utf8(&bytes[self.start..self.end]).unwrap_or_default()
    }

    fn is(&self, bytes: &[u8], punct: u8) -> bool {
        !self.word && bytes[self.start] == punct
    }
}

/// Identifiers and punctuation, skipping whitespace, comments, string and character
/// literals (raw strings included), numbers and preprocessor lines (returned apart).
fn tokenize(bytes: &[u8]) -> (Vec<Token>, Vec<Range<usize>>) {
    let mut tokens = Vec::new();
    let mut directives = Vec::new();
    let (mut i, mut opens_line) = (0, true);
    while i < bytes.len() {
        let byte = bytes[i];
        let rest = &bytes[i..];
        i = match byte {
            b'\n' => {
                opens_line = true;
                i + 1
            }
            _ if byte.is_ascii_whitespace() => i + 1,
            b'#' if opens_line => {
                let end = end_of_directive(bytes, i);
                directives.push(i..end);
                end
            }
            b'/' if rest.starts_with(b"//") => end_of_line(bytes, i),
            b'/' if rest.starts_with(b"/*") => {
                find(bytes, i + 2, b"*/").map_or(bytes.len(), |e| e + 2)
            }
            b'"' | b'\'' => end_of_literal(bytes, i),
            b'0'..=b'9' => {
                i + rest
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'\'' | b'_')))
                    .unwrap_or(rest.len())
            }
            _ if byte == b'_' || byte.is_ascii_alphabetic() => {
                let end = i + rest
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .unwrap_or(rest.len());
                if bytes.get(end) == Some(&b'"') && bytes[end - 1] == b'R' {
                    end_of_raw_string(bytes, end)
                } else {
                    tokens.push(Token {
                        start: i,
                        end,
                        word: true,
                        opens_line,
                    });
                    opens_line = false;
                    end
                }
            }
            _ => {
                // Punctuation; the bytes of a non-ASCII character are never a token.
                if byte.is_ascii() {
                    tokens.push(Token {
                        start: i,
                        end: i + 1,
                        word: false,
                        opens_line,
                    });
                    opens_line = false;
                }
                i + 1
            }
        };
    }
    (tokens, directives)
}

/// The condition of an `#if`/`#elif` line: the grammar parses every branch whatever the
/// condition says, but fails on conditions it cannot read (`FMT_HAS_INCLUDE(<xlocale.h>)`),
/// so the view writes `1` there.
fn condition(bytes: &[u8], directive: Range<usize>) -> Option<Range<usize>> {
    let line = &bytes[directive.clone()];
    let after_hash = 1; // a directive's range starts at its `#`
    let keyword_start = after_hash
        + line[after_hash..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    let keyword_len = line[keyword_start..]
        .iter()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(line.len() - keyword_start);
    let keyword = &line[keyword_start..keyword_start + keyword_len];
    let after = keyword_start + keyword_len;
    let start = after
        + line[after..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    matches!(keyword, b"if" | b"elif").then(|| directive.start + start..directive.end)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes[from.min(bytes.len())..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn end_of_line(bytes: &[u8], from: usize) -> usize {
    find(bytes, from, b"\n").unwrap_or(bytes.len())
}

/// A preprocessor line ends at a line break not escaped by a backslash.
fn end_of_directive(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    loop {
        let end = end_of_line(bytes, at);
        let line = &bytes[at..end];
        if end < bytes.len() && line.trim_ascii_end().ends_with(b"\\") {
            at = end + 1;
        } else {
            return end;
        }
    }
}

/// A string or character literal ends at its unescaped quote, or at the line's end.
fn end_of_literal(bytes: &[u8], from: usize) -> usize {
    let quote = bytes[from];
    let mut i = from + 1;
    while i < bytes.len() && bytes[i] != b'\n' {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    i.min(bytes.len())
}

/// `R"delim( … )delim"`, from the opening quote.
fn end_of_raw_string(bytes: &[u8], quote: usize) -> usize {
    let Some(open) = find(bytes, quote, b"(") else {
        return bytes.len();
    };
    let mut closing = vec![b')'];
    closing.extend_from_slice(&bytes[quote + 1..open]);
    closing.push(b'"');
    find(bytes, open + 1, &closing).map_or(bytes.len(), |e| e + closing.len())
}

/// `FMT_API`, `UV_EXTERN`, `FMT_BEGIN_NAMESPACE`: an upper-case word opening with a letter,
/// with an underscore (so `FILE`, `NULL`, `DWORD` stay the names they are).
fn is_macro_name(word: &str) -> bool {
    is_upper_word(word) && word.as_bytes()[0].is_ascii_uppercase() && word.contains('_')
}

/// Three or more upper-case letters, digits and underscores (`WINAPI`, `FMT_API`).
fn is_upper_word(word: &str) -> bool {
    word.len() >= 3
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Words that begin a declaration; a plain word standing right before one of them can only
/// be a macro (`simdjson_inline bool f()`). `const` and `volatile` are left out: `T const&`.
const DECLARATION_STARTS: &[&str] = &[
    "template",
    "class",
    "struct",
    "union",
    "enum",
    "namespace",
    "inline",
    "static",
    "extern",
    "constexpr",
    "consteval",
    "constinit",
    "virtual",
    "explicit",
    "friend",
    "typedef",
    "using",
    "void",
    "bool",
    "char",
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "auto",
];

/// Keywords that may open a declaration after a macro (`FMT_API const T& f()`,
/// `FMT_CONSTEXPR operator T()`), though not after a plain word (`T const&`).
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "operator",
    "typename",
    "mutable",
    "thread_local",
];

/// C and C++ keywords: never a macro.
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "break",
    "case",
    "catch",
    "co_await",
    "co_return",
    "co_yield",
    "concept",
    "const",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "dynamic_cast",
    "else",
    "export",
    "false",
    "for",
    "goto",
    "if",
    "import",
    "module",
    "mutable",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typeid",
    "typename",
    "volatile",
    "while",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word) || DECLARATION_STARTS.contains(&word)
}

/// The byte ranges to blank, each with what to write at its start (`int` for a
/// template-parameter macro, else nothing).
fn macro_uses(bytes: &[u8], tokens: &[Token]) -> Vec<(Range<usize>, &'static str)> {
    let mut uses = Vec::new();
    let mut blanked = vec![false; tokens.len()];
    for t in 0..tokens.len() {
        let token = tokens[t];
        if !token.word {
            continue;
        }
        let word = token.text(bytes);
        let next = tokens.get(t + 1);
        let at_start = starts_statement(bytes, tokens, t, &blanked);
        if is_macro_name(word) && !after_member_access(bytes, tokens, t) {
            let alone_on_line = next.is_none_or(|n| n.opens_line);
            if declaration_follows(bytes, tokens, t + 1) || (at_start && alone_on_line) {
                blanked[t] = true;
                uses.push((token.start..token.end, ""));
                continue;
            }
            let after_if = t > 0 && tokens[t - 1].word && tokens[t - 1].text(bytes) == "if";
            if after_if && next.is_some_and(|n| n.is(bytes, b'(')) {
                uses.push((token.start..token.end, ""));
                continue;
            }
            if next.is_some_and(|n| n.is(bytes, b'('))
                && let Some(close) = matching_paren(bytes, tokens, t + 1)
            {
                let after = tokens.get(close + 1);
                let call = token.start..tokens[close].end;
                if t > 0 && in_template_parameters(bytes, tokens, t) {
                    uses.push((call, "int"));
                } else if at_start && after.is_none_or(|a| a.opens_line && !a.is(bytes, b'{')) {
                    blanked[t..=close].fill(true);
                    uses.push((call, ""));
                }
            }
            continue;
        }
        if is_calling_convention(bytes, tokens, t) {
            uses.push((token.start..token.end, ""));
            continue;
        }
        let before_declaration =
            next.is_some_and(|n| n.word && DECLARATION_STARTS.contains(&n.text(bytes)));
        if before_declaration && !is_keyword(word) && at_start {
            blanked[t] = true;
            uses.push((token.start..token.end, ""));
        }
    }
    uses
}

/// Whether a declaration starts at token `t` (after a macro): a declaration keyword, a
/// destructor, or a type followed by what a declarator starts with (`std::string f`,
/// `node<T>`, `T* p`, a constructor's `name(`). A word followed by `;`, `=`, `,` or `)` is
/// the declared name itself, so the word before it is a type (`CRITICAL_SECTION lock;`).
fn declaration_follows(bytes: &[u8], tokens: &[Token], t: usize) -> bool {
    let Some(first) = tokens.get(t) else {
        return false;
    };
    if first.is(bytes, b'~') {
        return true;
    }
    if !first.word {
        return false;
    }
    if is_keyword(first.text(bytes)) {
        let text = first.text(bytes);
        return DECLARATION_STARTS.contains(&text) || QUALIFIERS.contains(&text);
    }
    let Some(second) = tokens.get(t + 1) else {
        return false;
    };
    second.word
        || [b'(', b'<', b'*', b'&']
            .iter()
            .any(|&p| second.is(bytes, p))
        || (second.is(bytes, b':') && tokens.get(t + 2).is_some_and(|n| n.is(bytes, b':')))
}

/// `BOOL WINAPI f(`, `BOOLEAN NTAPI f(`: an upper-case word between a return type and a
/// function's name is a calling-convention macro (two types in a row are not C).
fn is_calling_convention(bytes: &[u8], tokens: &[Token], t: usize) -> bool {
    let type_word = |i: usize| {
        tokens.get(i).is_some_and(|n| {
            let text = n.text(bytes);
            n.word && (!is_keyword(text) || DECLARATION_STARTS.contains(&text))
        })
    };
    let name = tokens
        .get(t + 1)
        .is_some_and(|n| n.word && !is_keyword(n.text(bytes)));
    is_upper_word(tokens[t].text(bytes))
        && t > 0
        && type_word(t - 1)
        && name
        && tokens.get(t + 2).is_some_and(|n| n.is(bytes, b'('))
}

/// Whether token `t` opens a statement or declaration: the file's first token, or one after
/// `;`, `{`, `}`, an access specifier's `:`, a blanked macro, or a declaration specifier
/// (`static FMT_CONSTEXPR void`).
fn starts_statement(bytes: &[u8], tokens: &[Token], t: usize, blanked: &[bool]) -> bool {
    let Some(prev) = t.checked_sub(1).map(|p| tokens[p]) else {
        return true;
    };
    if blanked[t - 1] || prev.is(bytes, b';') || prev.is(bytes, b'{') || prev.is(bytes, b'}') {
        return true;
    }
    if prev.is(bytes, b':') && t >= 2 {
        return matches!(
            tokens[t - 2].text(bytes),
            "public" | "private" | "protected"
        );
    }
    prev.word
        && matches!(
            prev.text(bytes),
            "static" | "inline" | "virtual" | "explicit" | "constexpr" | "friend" | "extern"
        )
}

/// `a.FOO_BAR`, `a->FOO_BAR`, `ns::FOO_BAR`: a member or a qualified name, not a macro.
fn after_member_access(bytes: &[u8], tokens: &[Token], t: usize) -> bool {
    let pair = |first: u8, second: u8| {
        t >= 2 && tokens[t - 2].is(bytes, first) && tokens[t - 1].is(bytes, second)
    };
    (t >= 1 && tokens[t - 1].is(bytes, b'.')) || pair(b'-', b'>') || pair(b':', b':')
}

/// The index of the `)` closing the `(` at `open`.
fn matching_paren(bytes: &[u8], tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        if token.is(bytes, b'(') {
            depth += 1;
        } else if token.is(bytes, b')') {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        } else if token.is(bytes, b';') || token.is(bytes, b'{') {
            return None;
        }
    }
    None
}

/// Whether token `t` is a parameter of `template <…>`: after `<` or `,`, and walking back
/// over balanced brackets reaches a `<` that follows `template`.
fn in_template_parameters(bytes: &[u8], tokens: &[Token], t: usize) -> bool {
    let prev = tokens[t - 1];
    if !(prev.is(bytes, b'<') || prev.is(bytes, b',')) {
        return false;
    }
    let mut depth = 0i32;
    for i in (0..t).rev() {
        let token = tokens[i];
        if token.is(bytes, b')') || token.is(bytes, b'>') {
            depth += 1;
        } else if token.is(bytes, b'(') {
            depth -= 1;
        } else if token.is(bytes, b'<') {
            if depth == 0 {
                return i > 0 && tokens[i - 1].word && tokens[i - 1].text(bytes) == "template";
            }
            depth -= 1;
        } else if token.is(bytes, b';') || token.is(bytes, b'{') || token.is(bytes, b'}') {
            return false;
        }
        if depth < 0 {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> String {
        let view = String::from_utf8(blank_declaration_macros(text)).unwrap();
        assert_eq!(view.len(), text.len(), "the view keeps every offset");
        view
    }

    #[test]
    fn macros_before_declarations_are_blanked() {
        assert_eq!(
            view("FMT_EXPORT template <typename C> class store {};"),
            "           template <typename C> class store {};"
        );
        assert_eq!(
            view("FMT_API std::string vformat(string_view f);"),
            "        std::string vformat(string_view f);"
        );
        assert_eq!(
            view("UV_EXTERN int uv_run(uv_loop_t*);"),
            "          int uv_run(uv_loop_t*);"
        );
        assert_eq!(
            view("  static FMT_CONSTEXPR void to_esc(uint8_t c);"),
            "  static               void to_esc(uint8_t c);"
        );
        assert_eq!(
            view("  FMT_CONSTEXPR typed_node(const Arg& arg) : value(arg) {}"),
            "                typed_node(const Arg& arg) : value(arg) {}"
        );
        assert_eq!(
            view("  FMT_CONSTEXPR operator const Char*() const;"),
            "                operator const Char*() const;"
        );
        assert_eq!(
            view("static BOOL WINAPI once(INIT_ONCE* o);"),
            "static BOOL        once(INIT_ONCE* o);"
        );
        assert_eq!(
            view("simdjson_inline bool is_ok() const noexcept;"),
            "                bool is_ok() const noexcept;"
        );
    }

    #[test]
    fn namespace_and_pragma_macros_on_their_own_lines_are_blanked() {
        let text = "FMT_BEGIN_NAMESPACE\nnamespace detail {\nFMT_PRAGMA_GCC(push_options)\nFMT_PRAGMA_GCC(optimize(\"Og\"))\nint f();\n}\nFMT_END_NAMESPACE\n";
        let blank = |line: &str| " ".repeat(line.len());
        let expected = format!(
            "{}\nnamespace detail {{\n{}\n{}\nint f();\n}}\n{}\n",
            blank("FMT_BEGIN_NAMESPACE"),
            blank("FMT_PRAGMA_GCC(push_options)"),
            blank("FMT_PRAGMA_GCC(optimize(\"Og\"))"),
            blank("FMT_END_NAMESPACE")
        );
        assert_eq!(view(text), expected);
    }

    #[test]
    fn a_template_parameter_macro_becomes_an_unnamed_int() {
        let enable_if = "FMT_ENABLE_IF(std::is_integral<T>::value)";
        let padded = format!("int{}", " ".repeat(enable_if.len() - 3));
        assert_eq!(
            view(&format!("template <typename T, {enable_if}>\nvoid f(T);")),
            format!("template <typename T, {padded}>\nvoid f(T);")
        );
    }

    #[test]
    fn an_if_condition_the_grammar_cannot_read_becomes_1() {
        let condition = "FMT_HAS_INCLUDE(<xlocale.h>)";
        assert_eq!(
            view(&format!(
                "#  if {condition}\n#  include <xlocale.h>\n#endif\n"
            )),
            format!(
                "#  if 1{}\n#  include <xlocale.h>\n#endif\n",
                " ".repeat(condition.len() - 1)
            )
        );
        let guard = "#ifndef FMT_ARGS_H_\n#define FMT_ARGS_H_\n#endif\n";
        assert_eq!(view(guard), guard);
    }

    #[test]
    fn a_macro_condition_after_if_is_blanked() {
        assert_eq!(
            view("void f() {\n  if FMT_CONSTEXPR20 (copy) g();\n}"),
            "void f() {\n  if                 (copy) g();\n}"
        );
    }

    #[test]
    fn well_formed_code_comments_strings_and_directives_are_untouched() {
        let code = "static CRITICAL_SECTION uv__signal_lock;\nCONSOLE_INFO a, b;\n/* This class holds FMT_API int */\n// static FOO_BAR int\n#define FMT_API inline \\\n  FOO_BAR int\nconst char* s = \"FMT_API int x\";\nT const& f();\nDWORD run(void*);\nFILE* open(const char* p);\nint n = FOO_MAX + ns::FOO_BAR;\nf(a, FOO_CALL(x), b);\nauto r = R\"x(FMT_API int)x\";\nstatic_assert(FOO_BAR(1), \"\");\nswitch (x) { case FOO_ONE: break; }\n";
        assert_eq!(view(code), code);
    }

    #[test]
    fn a_macro_call_that_opens_a_block_is_kept() {
        let code = "TEST_CASE(\"parses\") {\n  CHECK(parse(\"1\") == 1);\n}\n";
        assert_eq!(view(code), code);
    }
}
