//! Small text utilities shared by several stages: content hashes, identifier splitting for the
//! code-aware search column, and whitespace collapsing. Pure functions; no I/O.

use sha2::{Digest, Sha256};

/// A short, stable content hash (first 16 bytes of SHA-256, hex).
/// Hash of a file's bytes as read (what freshness compares when mtimes differ: a fresh
/// checkout, a `touch`, an index built on another machine).
pub fn bytes_hash(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..16])
}

pub fn content_hash(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(&hasher.finalize()[..16])
}

/// A character of an identifier as the parsed languages write one: a letter, a digit, `_` or
/// `$` (JavaScript, PHP).
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Splits one identifier at `_`, `-`, camelCase and letter/digit boundaries, lower-cased.
/// `parseHTTPResponse2` → `["parse", "http", "response", "2"]`.
pub fn split_identifier(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut parts = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut parts);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let lower_to_upper = prev.is_lowercase() && c.is_uppercase();
            let acronym_end =
                prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase());
            let digit_edge = prev.is_ascii_digit() != c.is_ascii_digit() && prev.is_alphanumeric();
            if lower_to_upper || acronym_end || digit_edge {
                flush(&mut current, &mut parts);
            }
        }
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut parts);
    parts
}

fn flush(current: &mut String, parts: &mut Vec<String>) {
    if !current.is_empty() {
        parts.push(std::mem::take(current));
    }
}

/// The code-aware search text: the original text followed by the split parts of every
/// compound identifier in it, so `getUserName` is found by `user name` and by `getusername`.
pub fn code_search_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 3);
    out.push_str(text);
    let mut seen = std::collections::HashSet::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.len() < 3 || !seen.insert(word) {
            continue;
        }
        let parts = split_identifier(word);
        if parts.len() > 1 {
            out.push('\n');
            out.push_str(&parts.join(" "));
        }
    }
    out
}

/// English and code words too common to tell files apart in a long question.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were", "be",
    "been", "it", "this", "that", "with", "as", "at", "by", "from", "not", "no", "but", "if",
    "then", "else", "when", "while", "do", "does", "did", "have", "has", "had", "can", "could",
    "should", "would", "will", "we", "you", "he", "she", "they", "them", "my", "our", "your",
    "its", "there", "here", "so", "such", "than", "too", "very", "just", "also", "into", "out",
    "up", "down", "over", "under", "about", "after", "before", "all", "any", "both", "each", "few",
    "more", "most", "other", "some", "own", "same", "only", "what", "which", "who", "why", "how",
    "self", "none", "true", "false", "return", "def", "class", "import", "pass", "fn", "let",
    "var", "const", "pub", "use", "new", "me",
];

/// The words a text is searched by: every identifier lower-cased whole and, when compound, as
/// its parts; one-letter words, digits-only words and stop words dropped. The in-memory file
/// index and the questions it answers share this tokenizer.
pub fn search_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.is_empty() {
            continue;
        }
        let whole = word.to_lowercase();
        let parts = split_identifier(word);
        let compound = parts.len() > 1;
        if keeps(&whole) {
            out.push(whole);
        }
        if compound {
            out.extend(parts.into_iter().filter(|p| keeps(p)));
        }
    }
    out
}

fn keeps(word: &str) -> bool {
    word.len() > 1 && !word.bytes().all(|b| b.is_ascii_digit()) && !STOP_WORDS.contains(&word)
}

/// Collapses runs of whitespace to one space and trims.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cuts `text` to at most `max_chars` characters on a char boundary, appending `…` when cut.
pub fn truncate_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((idx, _)) => format!("{}…", &text[..idx]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_camel_snake_acronyms_and_digits() {
        assert_eq!(
            split_identifier("parseHTTPResponse2"),
            ["parse", "http", "response", "2"]
        );
        assert_eq!(split_identifier("get_user_name"), ["get", "user", "name"]);
        assert_eq!(split_identifier("XMLParser"), ["xml", "parser"]);
        assert_eq!(split_identifier("plain"), ["plain"]);
    }

    #[test]
    fn search_text_appends_parts_of_compound_identifiers_once() {
        let text = code_search_text("fn getUserName() { getUserName() }");
        assert!(text.ends_with("\nget user name"));
        assert_eq!(text.matches("get user name").count(), 1);
    }

    #[test]
    fn search_words_keep_identifiers_whole_and_split_without_stop_words() {
        assert_eq!(
            search_words("The golden_sect_DataFrame fails in tools.py"),
            [
                "golden_sect_dataframe",
                "golden",
                "sect",
                "data",
                "frame",
                "fails",
                "tools",
                "py"
            ]
        );
        assert!(search_words("a 42 of x").is_empty());
    }

    #[test]
    fn hash_is_stable_and_separates_parts() {
        assert_eq!(content_hash(&["ab", "c"]), content_hash(&["ab", "c"]));
        assert_ne!(content_hash(&["ab", "c"]), content_hash(&["a", "bc"]));
    }
}
