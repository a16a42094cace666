//! Evidence per file: an in-memory BM25 index over whole files (every chunk's words plus the
//! path's words), built once when a generation is loaded. A long question names many things;
//! the file where most of them meet is likelier than any single chunk says, so the ranking
//! turns this file order into a prior on the entities of each file. This module only scores
//! files from the chunks it is given; it never reads the disk or the LanceDB tables.

use std::collections::HashMap;

use crate::parse::languages::family_of;
use crate::store::read::ChunkRow;
use crate::text::search_words;
use crate::walk::{is_generated_path, is_test_path};

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;

/// Okapi BM25 over a set of documents, each a bag of words under a key. The file-evidence
/// leg ranks files with it; `knowcode eval`'s baseline ranks whole files and definitions with
/// the same code, so the baseline and the index share one tokenizer and one formula.
#[derive(Debug, Default)]
pub struct Bm25 {
    keys: Vec<String>,
    lengths: Vec<u32>,
    average_length: f64,
    postings: HashMap<String, Vec<(u32, u32)>>,
}

impl Bm25 {
    /// Indexes `(key, word counts)` documents, in order (a key's position is its number).
    pub fn build(documents: impl IntoIterator<Item = (String, HashMap<String, u32>)>) -> Bm25 {
        let mut index = Bm25::default();
        for (key, words) in documents {
            let number = index.keys.len() as u32;
            index.keys.push(key);
            index.lengths.push(words.values().sum());
            for (word, tf) in words {
                index.postings.entry(word).or_default().push((number, tf));
            }
        }
        let total: u64 = index.lengths.iter().map(|&l| u64::from(l)).sum();
        index.average_length = total as f64 / index.keys.len().max(1) as f64;
        index
    }

    /// Keys by BM25 over the question's words (each distinct word once), best first, ties by
    /// key; at most `limit`, only keys with a positive score.
    pub fn rank(&self, words: &[String], limit: usize) -> Vec<(&str, f64)> {
        self.rank_where(words, limit, B, |_| true)
    }

    /// [`Bm25::rank`] among the keys `keep` accepts (the others are never scored; word
    /// statistics stay those of every document), with length normalisation `b` (0: none, 1:
    /// full) in place of the usual 0.75.
    pub fn rank_where(
        &self,
        words: &[String],
        limit: usize,
        b: f64,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<(&str, f64)> {
        let mut distinct: Vec<&String> = words.iter().collect();
        distinct.sort();
        distinct.dedup();
        let documents = self.keys.len() as f64;
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for word in distinct {
            let Some(postings) = self.postings.get(word.as_str()) else {
                continue;
            };
            let df = postings.len() as f64;
            let idf = (1.0 + (documents - df + 0.5) / (df + 0.5)).ln();
            for &(document, tf) in postings {
                if !keep(&self.keys[document as usize]) {
                    continue;
                }
                let tf = f64::from(tf);
                let length = f64::from(self.lengths[document as usize]);
                let norm = K1 * (1.0 - b + b * length / self.average_length.max(1.0));
                *scores.entry(document).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(&str, f64)> = scores
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(d, s)| (self.keys[d as usize].as_str(), s))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        ranked.truncate(limit);
        ranked
    }

    /// How many documents hold the word.
    pub fn document_frequency(&self, word: &str) -> usize {
        self.postings.get(word).map_or(0, Vec::len)
    }

    /// Every key, in the order documents were given.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }
}

/// Adds `text`'s search words to a bag of words.
pub fn count_words(words: &mut HashMap<String, u32>, text: &str) {
    for word in search_words(text) {
        *words.entry(word).or_default() += 1;
    }
}

/// A whole file as one bag of words: its path's words once, then `texts`' words.
pub fn file_words<'a>(
    path: &str,
    texts: impl IntoIterator<Item = &'a str>,
) -> HashMap<String, u32> {
    let mut words = HashMap::new();
    count_words(&mut words, &path_words(path));
    for text in texts {
        count_words(&mut words, text);
    }
    words
}

/// Term statistics of each function and method (a unit: what a fix edits), keyed by entity
/// id: the unit's chunks' words plus its path's words, as BM25 over functions reads them. A
/// report names the identifiers, messages and values of the code it is about; among the units
/// of the files the evidence points at, the one whose own text holds most of them is likelier
/// than the class or module around it.
pub fn unit_index(chunks: &[ChunkRow]) -> Bm25 {
    let mut position: HashMap<&str, usize> = HashMap::new();
    let mut units: Vec<(String, HashMap<String, u32>)> = Vec::new();
    for chunk in chunks.iter().filter(|c| c.kind.is_unit()) {
        let unit = *position.entry(chunk.entity_id.as_str()).or_insert_with(|| {
            units.push((chunk.entity_id.clone(), file_words(&chunk.path, [])));
            units.len() - 1
        });
        count_words(&mut units[unit].1, &chunk.text);
    }
    Bm25::build(units)
}

/// Whole-file term statistics of one generation.
#[derive(Debug, Default)]
pub struct FileIndex {
    bm25: Bm25,
    /// Files made only of prose or plain text (Markdown sections, documents, `.rst` pages,
    /// configuration): the file leg weighs them like prose (a changelog is a text file).
    prose: std::collections::HashSet<String>,
    /// File name without its extension → the files of that name (indices into the keys).
    by_stem: HashMap<String, Vec<u32>>,
    /// A C or C++ unit's name (`catch_list` for `catch_list.h`, `catch_list.cpp`,
    /// `inline/catch_list.h`, `catch_list-inl.h`) → its files (indices into the keys).
    units: HashMap<String, Vec<u32>>,
    /// Each file's module path as parts (see [`module_parts`]), in key order.
    modules: Vec<Vec<String>>,
    /// Code files in a language family that holds less than [`MINORITY_SHARE`] of the
    /// project's own code files (a C++ library's Python and Ruby scripts).
    minority: std::collections::HashSet<String>,
    /// How many files' paths spell each word (see [`spelled_words`]).
    path_word_files: HashMap<String, u32>,
}

impl FileIndex {
    /// Indexes the chunks' texts by file (a chunk's words count for its file; the path's
    /// words are added once per file).
    pub fn build(chunks: &[ChunkRow]) -> FileIndex {
        let mut file_of: HashMap<&str, usize> = HashMap::new();
        let mut files: Vec<(String, HashMap<String, u32>)> = Vec::new();
        let mut only_prose: Vec<bool> = Vec::new();
        for chunk in chunks {
            let file = *file_of.entry(chunk.path.as_str()).or_insert_with(|| {
                files.push((chunk.path.clone(), file_words(&chunk.path, [])));
                only_prose.push(true);
                files.len() - 1
            });
            only_prose[file] &= chunk.kind.reads_as_prose();
            count_words(&mut files[file].1, &chunk.text);
        }
        let mut index = FileIndex {
            bm25: Bm25::build(files),
            ..FileIndex::default()
        };
        index.minority = minority_language_files(index.bm25.keys());
        for path in index.bm25.keys() {
            let mut words = spelled_words(path);
            words.sort();
            words.dedup();
            for word in words {
                *index.path_word_files.entry(word).or_default() += 1;
            }
        }
        index.modules = index.bm25.keys().iter().map(|p| module_parts(p)).collect();
        for (file, path) in index.bm25.keys().iter().enumerate() {
            if only_prose[file] {
                index.prose.insert(path.clone());
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            if let Some(unit) = native_unit(name) {
                index.units.entry(unit).or_default().push(file as u32);
            }
            if let Some((stem, _)) = name.rsplit_once('.') {
                index
                    .by_stem
                    .entry(stem.to_string())
                    .or_default()
                    .push(file as u32);
            }
        }
        index
    }

    /// Files by BM25 over the question's words, best first (see [`Bm25::rank`]).
    pub fn rank(&self, words: &[String], limit: usize) -> Vec<(&str, f64)> {
        self.bm25.rank(words, limit)
    }

    /// The share of the indexed files whose text holds the (folded) word, in [0, 1].
    pub fn share_holding(&self, word: &str) -> f64 {
        self.bm25.document_frequency(word) as f64 / self.bm25.keys().len().max(1) as f64
    }

    /// Whether the file holds only prose or plain text (no definitions, no module code).
    pub fn is_prose(&self, path: &str) -> bool {
        self.prose.contains(path)
    }

    /// The files whose name without its extension is `stem` (`L031` → `rules/L031.py`).
    pub fn named<'a>(&'a self, stem: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.by_stem
            .get(stem)
            .into_iter()
            .flatten()
            .map(|&file| self.bm25.keys()[file as usize].as_str())
    }

    /// The other files of a C or C++ unit: a header and its source, its inline definitions
    /// (`-inl.h`, `inline/x.h`). A fix that changes a declaration changes both. Names that
    /// more than [`MAX_UNIT_FILES`] files share (`common.h`, `utils.c`) pair nothing.
    pub fn companions<'a>(&'a self, path: &str) -> impl Iterator<Item = &'a str> + 'a {
        let name = path.rsplit('/').next().unwrap_or(path);
        let path = path.to_string();
        native_unit(name)
            .and_then(|unit| self.units.get(&unit))
            .filter(|files| files.len() <= MAX_UNIT_FILES)
            .into_iter()
            .flatten()
            .map(|&file| self.bm25.keys()[file as usize].as_str())
            .filter(move |other| *other != path)
    }

    /// The file a module path names (`a/b` from `a.b`, `a::b`, an import specifier): the file
    /// whose module path ends with the longest tail of the written one, of at least two parts
    /// (the shortest path when several do).
    pub fn module_named(&self, written: &str) -> Option<&str> {
        let written: Vec<String> = written.split('/').map(module_part).collect();
        (2..=written.len()).rev().find_map(|take| {
            let tail = &written[written.len() - take..];
            self.modules
                .iter()
                .zip(self.bm25.keys())
                .filter(|(parts, _)| parts.ends_with(tail))
                .map(|(_, path)| path.as_str())
                .min_by_key(|path| path.len())
        })
    }

    /// Whether the file is code in a language the project barely uses (see [`MINORITY_SHARE`]).
    pub fn is_minority_language(&self, path: &str) -> bool {
        self.minority.contains(path)
    }

    /// Every indexed file path, in first-seen order.
    pub fn paths(&self) -> &[String] {
        self.bm25.keys()
    }

    /// How telling a (folded) word is when a path spells it — with `stems`, a path word that
    /// begins it spells it too ([`spells`]): BM25's inverse document frequency over the files'
    /// path words (a folder every path goes through tells nothing).
    pub fn path_word_weight(&self, word: &str, stems: bool) -> f64 {
        let files = self.bm25.keys().len() as f64;
        let spelled: u32 = if stems {
            stems_of(word)
                .filter_map(|stem| self.path_word_files.get(stem))
                .sum()
        } else {
            self.path_word_files.get(word).copied().unwrap_or(0)
        };
        let spelled = f64::from(spelled).min(files);
        (1.0 + (files - spelled + 0.5) / (spelled + 0.5)).ln()
    }
}

/// The path words that spell `word` ([`spells`]): the word itself and its beginnings of at
/// least [`MIN_STEM`] letters.
fn stems_of(word: &str) -> impl Iterator<Item = &str> {
    word.char_indices()
        .map(|(i, _)| i)
        .skip(MIN_STEM)
        .map(move |end| &word[..end])
        .chain(std::iter::once(word))
}

/// A word folded for comparing with path words: lower case, a plural `s` dropped, and the
/// words a helper file is named by (`helpers`, `utilities`, `utils`) made one, so "string
/// helpers" spells `StringUtils.java` (code search +0.001 NDCG@10: two commons-lang
/// questions up, none down, 2026-12-02).
pub fn fold_word(word: &str) -> String {
    let lower = word.to_lowercase();
    let folded = match lower.strip_suffix('s') {
        Some(stem) if stem.len() > 3 && !stem.ends_with('s') => stem.to_string(),
        _ => lower,
    };
    match folded.as_str() {
        "helper" | "utility" | "utilitie" => "util".to_string(),
        _ => folded,
    }
}

/// A path word shorter than this stands only for itself; from this length on it also stands
/// for the question words it begins (see [`spells`]). Code search NDCG@10 over 21
/// repositories, lexical (2026-12-02): whole words only 0.846; from 3 letters 0.853, from 4
/// 0.854 (`str` took "string" to `StrTokenizer`); either direction (a question word that
/// begins a path word too, "json" for `jsonrep`) 0.855 but one change description fewer first.
const MIN_STEM: usize = 4;

/// Whether a (folded) path word stands for a (folded) question word: the same word, or a path
/// word of at least [`MIN_STEM`] letters that begins it. Paths abbreviate and keep the stem
/// (`impl` for "implementations", `conn` for "connection", `attr` for "attributes", `strip`
/// for "stripping", `distill` for "distilled").
pub fn spells(path_word: &str, word: &str) -> bool {
    path_word == word || (path_word.len() >= MIN_STEM && word.starts_with(path_word))
}

/// The words of a file's name without its extension (`ToStringBuilder.java` → to, string,
/// builder), folded ([`fold_word`]).
pub fn stem_words(path: &str) -> Vec<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    crate::text::split_identifier(stem)
        .iter()
        .map(|w| fold_word(w))
        .collect()
}

/// The words of a path's last three folders, split into identifier parts and folded
/// ([`fold_word`]).
pub fn folder_words(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split('/')
        .rev()
        .skip(1)
        .take(3)
        .flat_map(crate::text::split_identifier)
        .map(|w| fold_word(&w))
}

/// The words a path spells: its file name without extension ([`stem_words`]) and its last
/// three folders ([`folder_words`]).
fn spelled_words(path: &str) -> Vec<String> {
    stem_words(path)
        .into_iter()
        .chain(folder_words(path))
        .collect()
}

/// A language family with less than this share of the project's own code files (outside
/// tests and generated code) is a minority language: its files are build scripts, tooling and
/// bindings around the project rather than the project.
const MINORITY_SHARE: f64 = 0.1;

/// The code files whose language family is a minority (see [`MINORITY_SHARE`]).
fn minority_language_files(paths: &[String]) -> std::collections::HashSet<String> {
    let own = |p: &&String| !is_test_path(p) && !is_generated_path(p);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for path in paths.iter().filter(own) {
        if let Some(family) = family_of(path) {
            *counts.entry(family).or_default() += 1;
        }
    }
    let total: usize = counts.values().sum();
    paths
        .iter()
        .filter(|p| {
            family_of(p).is_some_and(|f| {
                (counts.get(f).copied().unwrap_or(0) as f64) < MINORITY_SHARE * total as f64
            })
        })
        .cloned()
        .collect()
}

/// Files sharing one C or C++ unit name beyond which the name is too common to pair them.
const MAX_UNIT_FILES: usize = 3;

/// The unit a C or C++ file belongs to: its name without the extension and an inline or
/// implementation suffix (`document-inl.h` → `document`); None for other languages.
fn native_unit(name: &str) -> Option<String> {
    const NATIVE: &[&str] = &[
        "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "ipp", "inl", "tpp",
    ];
    let (stem, extension) = name.rsplit_once('.')?;
    if !NATIVE.contains(&extension) {
        return None;
    }
    let unit = ["-inl", "_inl", ".inl", "-impl", "_impl", ".impl"]
        .iter()
        .find_map(|suffix| stem.strip_suffix(suffix))
        .unwrap_or(stem);
    Some(unit.to_string())
}

fn module_part(part: &str) -> String {
    part.replace('-', "_")
}

/// A file's module path as parts: its path without the extension, its package-index file
/// name (`__init__`, `index`, `mod`) and source-root folders (`src`, `lib`, `main/java`), with
/// `-` read as `_` (`tracing-core/src/x.rs` is `tracing_core/x`).
fn module_parts(path: &str) -> Vec<String> {
    let stem = crate::graph::strip_extension(path);
    let mut parts: Vec<&str> = stem.split('/').collect();
    if parts.len() > 1 && matches!(parts.last(), Some(&("__init__" | "index" | "mod"))) {
        parts.pop();
    }
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .filter(|&(i, p)| i == last || !matches!(p, "src" | "lib" | "main" | "java"))
        .map(|(_, p)| module_part(p))
        .collect()
}

/// A path read as words: `src/pvlib/tools.py` → `src pvlib tools py`.
fn path_words(path: &str) -> String {
    path.replace(['/', '.', '-'], " ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_spell_their_stem_and_three_folders_folded() {
        assert_eq!(
            spelled_words("a/b/middleware/loggers/RequestLogger.rb"),
            ["request", "logger", "logger", "middleware", "b"]
        );
        assert_eq!(fold_word("Strings"), "string");
        assert_eq!(fold_word("class"), "class");
        for helper in ["helpers", "Utils", "utility", "utilities"] {
            assert_eq!(fold_word(helper), "util", "{helper}");
        }
    }

    #[test]
    fn a_path_word_spells_the_question_words_it_begins() {
        assert!(spells("impl", "implementation"));
        assert!(spells("strip", "stripping"));
        assert!(spells("str", "str"));
        assert!(
            !spells("str", "string"),
            "three letters stand only for themselves"
        );
        assert!(
            !spells("loader", "load"),
            "a question word does not stand for longer ones"
        );
        assert!(!spells("parser", "parsing"));
        let stems: Vec<&str> = stems_of("impls").collect();
        assert_eq!(stems, ["impl", "impls"]);
        assert!(stems_of("strip").all(|stem| spells(stem, "strip")));
    }

    use super::*;
    use crate::parse::EntityKind;

    fn chunk(path: &str, text: &str) -> ChunkRow {
        ChunkRow {
            id: format!("{path}#0"),
            entity_id: path.to_string(),
            path: path.to_string(),
            kind: EntityKind::Function,
            start_line: 1,
            end_line: 1,
            part: 0,
            text: text.to_string(),
        }
    }

    #[test]
    fn the_file_where_the_words_meet_ranks_first_and_path_words_count() {
        let index = FileIndex::build(&[
            chunk(
                "pkg/tools.py",
                "def golden_section(lower, upper): iterations",
            ),
            chunk("pkg/tools.py", "def bounds(lower, upper): pass"),
            chunk("pkg/other.py", "def lower(): pass"),
            chunk("pkg/io.py", "def read(): pass"),
        ]);
        let words = search_words("golden section search with equal upper and lower bounds");
        let ranked = index.rank(&words, 10);
        assert_eq!(ranked[0].0, "pkg/tools.py");
        assert_eq!(ranked.len(), 2, "{ranked:?}");
        assert_eq!(index.rank(&search_words("io"), 10)[0].0, "pkg/io.py");
        assert!(index.rank(&search_words("nothing matches"), 10).is_empty());
    }

    #[test]
    fn module_paths_name_files_past_source_roots_and_index_files() {
        let index = FileIndex::build(&[
            chunk("src/plugin/customParseFormat/index.js", "x"),
            chunk("tracing-core/src/dispatcher.rs", "x"),
            chunk("src/main/java/com/acme/xml/ser/ToXmlGenerator.java", "x"),
            chunk("astroid/brain/brain_numpy.py", "x"),
        ]);
        for (written, file) in [
            (
                "dayjs/plugin/customParseFormat",
                "src/plugin/customParseFormat/index.js",
            ),
            ("tracing_core/dispatcher", "tracing-core/src/dispatcher.rs"),
            (
                "com/acme/xml/ser/ToXmlGenerator",
                "src/main/java/com/acme/xml/ser/ToXmlGenerator.java",
            ),
            ("astroid/brain/brain_numpy", "astroid/brain/brain_numpy.py"),
        ] {
            assert_eq!(index.module_named(written), Some(file), "{written}");
        }
        assert_eq!(index.module_named("other/dispatcher"), None);
    }

    #[test]
    fn a_header_its_source_and_its_inline_definitions_are_companions() {
        let index = FileIndex::build(&[
            chunk("include/simdjson/dom/element.h", "class element"),
            chunk("include/simdjson/inline/element.h", "element::get"),
            chunk("src/element-inl.h", "inline"),
            chunk("include/internal/catch_list.h", "listTests"),
            chunk("include/internal/catch_list.cpp", "listTests"),
            chunk("src/bytes.rs", "struct Bytes"),
        ]);
        let mut found: Vec<&str> = index.companions("include/simdjson/dom/element.h").collect();
        found.sort();
        assert_eq!(
            found,
            ["include/simdjson/inline/element.h", "src/element-inl.h"]
        );
        assert_eq!(
            index
                .companions("include/internal/catch_list.cpp")
                .collect::<Vec<_>>(),
            ["include/internal/catch_list.h"]
        );
        assert_eq!(index.companions("src/bytes.rs").count(), 0);
    }
}
