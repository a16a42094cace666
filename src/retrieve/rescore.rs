//! Structural re-scoring of a one-line question's candidates: what a code-search question
//! says beyond its words. A named symbol's definition comes first — strongest in the file
//! named after it, found by name even when no leg retrieved it; file and folder names that
//! spell the question's words are evidence; a file several of whose parts match ranks as a
//! file; examples, documentation sources and compat/legacy copies rank below the code they
//! show; and repeats from one file decay so other relevant files reach the top. Boosts are
//! counted in units of the best fused score, so they outweigh the small differences of rank
//! fusion. Reports (long questions) are left to the report reading in `rank`; nothing here
//! reads the store.

use std::collections::HashMap;

use super::hit::{Hit, places_by, places_in_file};
use super::question::{QueryShape, Question};
use super::resolve::{may_be_named, misspelt_member, owned_or_bound, owner_written};
use crate::load::files::{fold_word, folder_words, spells, stem_words};
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};
use crate::text::split_identifier;

/// The definition of a symbol-shaped question's symbol gains this many best scores.
const DEFINITION_BOOST: f64 = 3.0;
/// … times this when the definition's file is named after the symbol.
const NAMED_FILE_FACTOR: f64 = 1.5;
/// Identifiers written inside a sentence get this share of the definition boost.
const SENTENCE_SYMBOL_SHARE: f64 = 0.5;
/// Definitions of one name taken at most (in the order [`definitions`] gives).
const MAX_DEFINITIONS: usize = 5;
/// A file whose name or folders spell all of a sentence's words: its hits gain this many
/// best scores (in proportion to the share of word weight matched). Swept on the code-search
/// benchmark: 0.3 / 0.6 / 1.0 / 1.5 → 0.828 / 0.831 / 0.838 / 0.839 NDCG@10.
const PATH_WORDS_BOOST: f64 = 1.0;
/// … times this when the question spells the file's whole name (every word of
/// `ToStringBuilder` or `procedure`, not `ReflectionToStringBuilder` or `procedureBuilder`):
/// the file is about what was asked, not about it and something else. Swept on the
/// code-search benchmark, lexical (2026-12-02): 1 / 1.5 / 2 / 3 / 4 → 0.856 / 0.857 / 0.860 /
/// 0.867 / 0.866 NDCG@10; change descriptions unchanged at Acc@5 (53.4 → 54.0 / 53.4 at Acc@1
/// with 2 / 3).
const WHOLE_NAME_FACTOR: f64 = 3.0;
/// The whole-name factor when vectors ranked too: they already find the file that is about
/// the question, and 3 churned (17 questions up, 26 down). With the model (2026-12-02):
/// 1 / 1.5 / 2 / 3 → 0.884 / 0.887 / 0.887 / 0.886 NDCG@10; change descriptions Acc@1 53.4 /
/// 54.0 / – / 53.4, Acc@5 81.8 throughout.
const WHOLE_NAME_FACTOR_WITH_VECTORS: f64 = 1.5;
/// A file's best hit gains this share of the file's summed score over the best file's
/// (0.1 / 0.3 / 0.6 → 0.829 / 0.838 / 0.843 with the path boost at 1.0).
const COHERENCE_SHARE: f64 = 0.6;
/// The part of a spelled definition's score a coherence lift may reach.
const COHERENCE_CEILING: f64 = 0.99;
/// Multiplier for examples, documentation sources and compat/legacy copies.
const COPY_PRIOR: f64 = 0.3;
/// The n-th hit (from 0) of one file keeps `REPEAT_DECAY^n` of its score (0.7 / 0.5 / 0.35
/// → 0.828 / 0.831 / 0.834: kept at semble's 0.5, the gain is within one query's noise).
const REPEAT_DECAY: f64 = 0.5;
/// The file-prior strength (about 18 words) from which the ranking's own file evidence
/// (pooled files, each file's n-th entity gaining a decaying share) speaks for the file, so
/// the coherence lift and the repeat decay, made for one-sentence questions, stand aside (one
/// file's definitions of one name still decay, [`decay_namesakes`]): they counted the
/// file a second time and pushed its second edited function below other files' best (lexical
/// plane, 2026-12-04: change descriptions' function Acc@1 / @5 33 / 59 → 35 / 63 of 120, first
/// entity 58 → 60, file Acc@1 91 → 92 of 176; from half strength the same @5 with two fewer
/// at Acc@1; from the first word past ten, file Acc@1 90; bug reports, docstrings and code
/// search unchanged).
const FILE_PRIOR_TAKES_OVER: f64 = 0.25;

/// Re-scores `hits` in place for a one-line question (reports are returned unchanged, and a
/// question long enough for the file prior skips the file coherence and the repeat decay);
/// `hybrid` when vectors ranked too.
pub fn rescore(
    generation: &LoadedGeneration,
    question: &Question,
    hybrid: bool,
    hits: &mut Vec<Hit>,
) {
    if question.long || hits.is_empty() {
        return;
    }
    let best = hits.iter().map(|h| h.score).fold(0.0, f64::max);
    if best <= 0.0 {
        return;
    }
    boost_definitions(generation, question, hits, best);
    if question.shape != QueryShape::Identifier {
        boost_path_words(generation, question, hybrid, hits, best);
    }
    let files_ranked_already = question.file_prior_strength() >= FILE_PRIOR_TAKES_OVER;
    if !files_ranked_already {
        add_coherence(generation, question, hits, best);
    }
    demote_copies(generation, question, hits);
    if files_ranked_already {
        decay_namesakes(generation, hits);
    } else {
        decay_repeats(generation, hits);
    }
}

/// A symbol the question names: the written form, the name a definition carries (its last
/// segment) and the qualifier before it (`a::b`, `a.b`, `a->b`, `Foo#bar`).
#[derive(Debug, PartialEq)]
struct Symbol {
    name: String,
    qualifier: Option<String>,
}

/// `basic_format_args`, `itoa::Buffer::format`, `Foo#bar`, `obj->m`, `Router.use`: the
/// qualifier and the last segment.
fn parse_symbol(written: &str) -> Option<Symbol> {
    let trimmed = written.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    let parts: Vec<&str> = trimmed
        .split("::")
        .flat_map(|p| p.split("->"))
        .flat_map(|p| p.split(['.', '#']))
        .filter(|p| !p.is_empty())
        .collect();
    let (name, qualifier) = parts.split_last()?;
    let valid = |s: &str| s.chars().all(|c| c.is_alphanumeric() || c == '_');
    if name.len() < 2 || !parts.iter().all(|p| valid(p)) {
        return None;
    }
    Some(Symbol {
        name: name.to_string(),
        qualifier: (!qualifier.is_empty()).then(|| qualifier.join(".")),
    })
}

/// The symbols of a question with the share of the boost each gets: the whole question when
/// it is one symbol, else the identifiers (compound words, qualified paths) written in it.
fn symbols(question: &Question) -> Vec<(Symbol, f64)> {
    if question.shape == QueryShape::Identifier {
        return question
            .text
            .split_whitespace()
            .filter_map(parse_symbol)
            .map(|s| (s, 1.0))
            .collect();
    }
    question
        .text
        .split_whitespace()
        .filter(|w| is_identifier_shaped(w))
        .filter_map(parse_symbol)
        .map(|s| (s, SENTENCE_SYMBOL_SHARE))
        .collect()
}

/// Capitalised words inside a sentence (`Serializer`): a type's name as people write it in
/// prose. A word opening a line or following `.`/`:` is capitalised anyway and does not count.
fn capitalised_names(question: &Question) -> Vec<String> {
    question
        .text
        .lines()
        .flat_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let starts_sentence = |i: usize| i == 0 || words[i - 1].ends_with(['.', '!', '?', ':']);
            words
                .iter()
                .enumerate()
                .filter(|&(i, w)| !starts_sentence(i) && is_capitalized_name(w))
                .map(|(_, w)| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A capitalised word inside a sentence (`Serializer`, `Router`): a type's name as people
/// write it (callers skip the sentence's first word, capitalised anyway); not an acronym.
fn is_capitalized_name(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric());
    let mut chars = word.chars();
    word.len() >= 3
        && chars.next().is_some_and(char::is_uppercase)
        && chars.clone().any(char::is_lowercase)
        && chars.all(char::is_alphanumeric)
}

/// A word written as code: snake_case, camelCase/PascalCase with an inner capital, or a
/// qualified path.
fn is_identifier_shaped(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    let inner_capital =
        word.chars().skip(1).any(|c| c.is_uppercase()) && word.chars().any(|c| c.is_lowercase());
    (word.contains('_') && word.trim_matches('_').contains(|c: char| c.is_alphabetic()))
        || inner_capital
        || word.contains("::")
        || word.contains("->")
        || (word.contains('.') && word.split('.').all(|part| part.len() > 1))
}

/// The definitions of `symbol` outside tests (unless asked), those agreeing with its
/// qualifier first; of an unqualified symbol, those under a type the question also writes
/// first; then classes before functions, those in the file named after it before the rest,
/// at most [`MAX_DEFINITIONS`].
fn definitions<'g>(
    generation: &'g LoadedGeneration,
    question: &Question,
    symbol: &Symbol,
) -> Vec<&'g Entity> {
    let about_tests = question.about_tests;
    let outside_tests = |e: &&Entity| may_be_named(e, about_tests);
    // A definition named by the whole written form (Elixir's `defmodule Plug.Conn`) is the one.
    let whole = symbol
        .qualifier
        .as_ref()
        .map(|qualifier| format!("{qualifier}.{}", symbol.name));
    let mut found: Vec<&Entity> = whole
        .iter()
        .flat_map(|name| generation.entities_named(name))
        .filter(outside_tests)
        .collect();
    if found.is_empty() {
        found = generation
            .entities_named(&symbol.name)
            .filter(outside_tests)
            .collect();
    }
    // The qualifier's last part owns the symbol (`Dict` in `nodes.Dict.items`).
    let owners: Vec<String> = symbol
        .qualifier
        .iter()
        .filter_map(|q| q.rsplit('.').next())
        .map(str::to_string)
        .collect();
    if found.is_empty() {
        found.extend(misspelt_member(generation, &owners, &symbol.name).filter(outside_tests));
    }
    found = owned_or_bound(generation, &owners, &symbol.name, found, about_tests);
    if let Some(owner) = owners.first() {
        let last = owner.to_lowercase();
        let agrees = |e: &Entity| {
            e.qualified_name.to_lowercase().contains(&last) || e.path.to_lowercase().contains(&last)
        };
        if found.iter().any(|e| agrees(e)) {
            found.retain(|e| agrees(e));
        }
    }
    drop_constructors(&mut found);
    // The file named after the symbol first among equals, so the cut below keeps it (a C#
    // partial class's many `SqlMapper.*.cs` parts sort before `SqlMapper.cs`). The key is
    // computed once per definition: a common name has hundreds.
    found.sort_by_cached_key(|&e| {
        let owner_unwritten = owners.is_empty() && !owner_written(question, e);
        let unnamed = !file_named_after(&e.path, &symbol.name);
        (owner_unwritten, kind_order(e.kind), unnamed, e.id.as_str())
    });
    found.truncate(MAX_DEFINITIONS);
    found
}

/// A constructor shares its class's name (Java, C#, C++): the question names the type, and
/// the class — whose span holds the constructor — is the answer, not a rival sharing its boost.
fn drop_constructors<'g>(found: &mut Vec<&'g Entity>) {
    let classes: Vec<&'g str> = found
        .iter()
        .filter(|e| e.kind == EntityKind::Class)
        .map(|&e| e.id.as_str())
        .collect();
    found.retain(|e| {
        e.kind == EntityKind::Class || !e.parent.as_deref().is_some_and(|p| classes.contains(&p))
    });
}

fn kind_order(kind: EntityKind) -> u8 {
    match kind {
        EntityKind::Class => 0,
        EntityKind::Function | EntityKind::Method => 1,
        _ => 2,
    }
}

/// Whether a file's name (without its extension) is the symbol, ignoring case and
/// separators. The whole name counts: `DynamicParameters.ParamInfo.cs`, a part of a C#
/// partial class, is not the file named after `DynamicParameters`.
fn file_named_after(path: &str, symbol: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    split_identifier(stem) == split_identifier(symbol)
}

/// Each named symbol's definitions gain `DEFINITION_BOOST` best scores (shared among several
/// definitions of one name), more in a file named after the symbol; a definition no leg
/// retrieved joins the candidates.
fn boost_definitions(
    generation: &LoadedGeneration,
    question: &Question,
    hits: &mut Vec<Hit>,
    best: f64,
) {
    let mut index: HashMap<String, usize> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.entity_id.clone(), i))
        .collect();
    for (symbol, share) in symbols(question) {
        let found = definitions(generation, question, &symbol);
        let spread = (found.len().max(1) as f64).sqrt();
        for entity in found {
            let named = file_named_after(&entity.path, &symbol.name);
            let boost = best * DEFINITION_BOOST * share / spread
                * if named { NAMED_FILE_FACTOR } else { 1.0 };
            let position = match index.get(&entity.id) {
                Some(&i) => i,
                None => {
                    let Some(chunk) = generation.first_chunk_index(&entity.id) else {
                        continue;
                    };
                    hits.push(Hit::unscored(&entity.id, chunk));
                    index.insert(entity.id.clone(), hits.len() - 1);
                    hits.len() - 1
                }
            };
            hits[position].score += boost;
            hits[position].evidence.name_match = true;
        }
    }
}

/// Hits of files whose name or folders spell the sentence's words gain up to
/// `PATH_WORDS_BOOST` best scores: the share of the question's word weight (inverse
/// frequency among paths) that the path spells, [`WHOLE_NAME_FACTOR`] times that when the
/// question spells the file's whole name ([`WHOLE_NAME_FACTOR_WITH_VECTORS`] on the hybrid
/// plane).
fn boost_path_words(
    generation: &LoadedGeneration,
    question: &Question,
    hybrid: bool,
    hits: &mut [Hit],
    best: f64,
) {
    let asked = asked_words(generation, question);
    let whole_factor = if hybrid {
        WHOLE_NAME_FACTOR_WITH_VECTORS
    } else {
        WHOLE_NAME_FACTOR
    };
    let total: f64 = asked.iter().map(|a| a.weight).sum();
    if total <= 0.0 {
        return;
    }
    let mut by_path: HashMap<&str, f64> = HashMap::new();
    for hit in hits.iter_mut() {
        let path = generation.chunks[hit.chunk].path.as_str();
        let share = *by_path
            .entry(path)
            .or_insert_with(|| path_share(path, &asked, whole_factor) / total);
        hit.score += best * PATH_WORDS_BOOST * share;
    }
}

/// A word of the question as path words are compared with it.
struct AskedWord {
    /// Folded ([`fold_word`]).
    word: String,
    /// Whether a path word that begins it spells it ([`spells`]): not for a compound
    /// identifier's whole (`pixel_data_handlers`), whose parts are words of their own.
    stems: bool,
    /// How rare the paths spelling it are ([`crate::load::files::FileIndex::path_word_weight`]).
    weight: f64,
}

impl AskedWord {
    fn spelled_by(&self, path_word: &str) -> bool {
        if self.stems {
            spells(path_word, &self.word)
        } else {
            path_word == self.word
        }
    }
}

/// The question's words of three letters or more, each once, weighed.
fn asked_words(generation: &LoadedGeneration, question: &Question) -> Vec<AskedWord> {
    let compounds = compound_wholes(&question.text);
    let mut words: Vec<(String, bool)> = question
        .words
        .iter()
        .filter(|w| w.len() > 2)
        .map(|w| (fold_word(w), !compounds.contains(w)))
        .collect();
    words.sort();
    words.dedup();
    words
        .into_iter()
        .map(|(word, stems)| AskedWord {
            weight: generation.files.path_word_weight(&word, stems),
            word,
            stems,
        })
        .collect()
}

/// The question word weight a path spells, times `whole_factor` when every word of the
/// file's name (of three letters or more) is asked.
fn path_share(path: &str, asked: &[AskedWord], whole_factor: f64) -> f64 {
    let name = stem_words(path);
    let folders: Vec<String> = folder_words(path).collect();
    let matched: f64 = asked
        .iter()
        .filter(|a| name.iter().chain(&folders).any(|p| a.spelled_by(p)))
        .map(|a| a.weight)
        .sum();
    let mut asked_name = name.iter().filter(|p| p.len() > 2).peekable();
    let whole_name =
        asked_name.peek().is_some() && asked_name.all(|p| asked.iter().any(|a| a.spelled_by(p)));
    matched * if whole_name { whole_factor } else { 1.0 }
}

/// The lower-cased wholes of the compound identifiers a text writes (`pixel_data_handlers`,
/// `httpclient` for `HttpClient`).
fn compound_wholes(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| split_identifier(word).len() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// A file's best hit gains `COHERENCE_SHARE` best scores times the file's summed score over
/// the best file's: several matching parts make the file likelier.
fn add_coherence(generation: &LoadedGeneration, question: &Question, hits: &mut [Hit], best: f64) {
    let mut sums: HashMap<&str, (f64, usize)> = HashMap::new();
    for (i, hit) in hits.iter().enumerate() {
        let entry = sums
            .entry(generation.chunks[hit.chunk].path.as_str())
            .or_insert((0.0, i));
        entry.0 += hit.score;
        if hit.score > hits[entry.1].score {
            entry.1 = i;
        }
    }
    let top = sums.values().map(|(sum, _)| *sum).fold(0.0, f64::max);
    if top <= 0.0 {
        return;
    }
    let lifts: Vec<(usize, f64)> = sums
        .values()
        .map(|&(sum, leader)| (leader, best * COHERENCE_SHARE * sum / top))
        .collect();
    // Coherence never lifts a file past a definition the question spells by name ("apply a
    // percentage discount" → `apply_discount`): a description of one definition keeps that
    // definition first however many parts its neighbour file has.
    let spelled = strongest_spelled(generation, question, hits);
    for (leader, lift) in lifts {
        let lifted = hits[leader].score + lift;
        hits[leader].score = match spelled {
            Some(ceiling) if hits[leader].score < ceiling => {
                lifted.min(ceiling * COHERENCE_CEILING)
            }
            _ => lifted,
        };
    }
}

/// The score of the strongest hit whose definition's name the question spells: a name of at
/// least two words, every one of them among the question's words, or a type's name the
/// question writes capitalised inside a sentence (`Serializer`).
fn strongest_spelled(
    generation: &LoadedGeneration,
    question: &Question,
    hits: &[Hit],
) -> Option<f64> {
    let words: std::collections::HashSet<String> =
        question.words.iter().map(|w| fold_word(w)).collect();
    let written = capitalised_names(question);
    hits.iter()
        .filter(|hit| {
            generation.entity(&hit.entity_id).is_some_and(|e| {
                let parts = split_identifier(&e.name);
                written.contains(&e.name)
                    || (parts.len() >= 2 && parts.iter().all(|p| words.contains(&fold_word(p))))
            })
        })
        .map(|hit| hit.score)
        .reduce(f64::max)
}

/// Folder names of copies of the code rather than the code: examples, documentation
/// sources, compatibility and legacy layers.
const COPY_FOLDERS: &[&str] = &[
    "example",
    "examples",
    "_examples",
    "sample",
    "samples",
    "demo",
    "demos",
    "doc",
    "docs",
    "compat",
    "legacy",
    "deprecated",
];

/// Whether a path is an example, a documentation source or a compat/legacy copy.
fn is_copy_path(path: &str) -> bool {
    path.split('/')
        .rev()
        .skip(1)
        .any(|folder| COPY_FOLDERS.contains(&folder.to_lowercase().as_str()))
}

/// Examples, documentation sources and compat/legacy copies keep `COPY_PRIOR` of their
/// score unless the question is about them (tests are demoted by `rank`'s place prior).
fn demote_copies(generation: &LoadedGeneration, question: &Question, hits: &mut [Hit]) {
    if question.about_tests {
        return;
    }
    for hit in hits.iter_mut() {
        if is_copy_path(&generation.chunks[hit.chunk].path) {
            hit.score *= COPY_PRIOR;
        }
    }
}

/// The n-th best of one file's definitions of one name keeps `REPEAT_DECAY^n` of its score:
/// overloads, or one method on several types (`at_pointer` of `array` and of
/// `simdjson_result<array>`), are near-copies, and a question naming the name means one of
/// them, so they must not fill the places of other files' candidates once the repeat decay
/// stands aside (with the model, simdjson-1624's edited `at_pointer` fell from 3rd to 5th
/// behind a second DOM overload; with this, every issue set's figures are those of the repeat
/// decay standing aside, and simdjson-1624 is back at 3rd, 2026-12-05).
fn decay_namesakes(generation: &LoadedGeneration, hits: &mut [Hit]) {
    let name = |i: usize| {
        let chunk = &generation.chunks[hits[i].chunk];
        let name = generation
            .entity(&hits[i].entity_id)
            .map(|e| e.name.as_str());
        (
            chunk.path.as_str(),
            name.unwrap_or(hits[i].entity_id.as_str()),
        )
    };
    let places = places_by(hits, |_| false, name);
    for (i, nth) in places {
        hits[i].score *= REPEAT_DECAY.powi(nth);
    }
}

/// The n-th best hit of one file keeps `REPEAT_DECAY^n` of its score.
fn decay_repeats(generation: &LoadedGeneration, hits: &mut [Hit]) {
    for (i, nth) in places_in_file(generation, hits, false) {
        hits[i].score *= REPEAT_DECAY.powi(nth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_identifiers_are_told_from_plain_words() {
        let wholes = compound_wholes("Fix docstring for pixel_data_handlers and HttpClient");
        let mut wholes: Vec<&str> = wholes.iter().map(String::as_str).collect();
        wholes.sort();
        assert_eq!(wholes, ["httpclient", "pixel_data_handlers"]);
    }

    #[test]
    fn symbols_are_split_into_qualifier_and_name() {
        assert_eq!(
            parse_symbol("itoa::Buffer::format"),
            Some(Symbol {
                name: "format".into(),
                qualifier: Some("itoa.Buffer".into())
            })
        );
        assert_eq!(parse_symbol("Foo#bar").unwrap().name, "bar");
        assert_eq!(
            parse_symbol("obj->method").unwrap().qualifier.as_deref(),
            Some("obj")
        );
        assert_eq!(
            parse_symbol("`basic_format_args`").unwrap().name,
            "basic_format_args"
        );
        assert_eq!(parse_symbol("a"), None);
    }

    #[test]
    fn identifier_shaped_words_are_code_in_a_sentence() {
        for word in [
            "snake_case",
            "camelCase",
            "Foo::bar",
            "req.params",
            "obj->m",
        ] {
            assert!(is_identifier_shaped(word), "{word}");
        }
        for word in ["middleware", "Request", "URL", "e.g.", "__"] {
            assert!(!is_identifier_shaped(word), "{word}");
        }
    }

    #[test]
    fn capitalised_words_inside_a_sentence_may_name_types() {
        for word in ["Serializer", "Router,", "`Mux`"] {
            assert!(is_capitalized_name(word), "{word}");
        }
        for word in ["URL", "HTTP", "a", "Go", "serializer"] {
            assert!(!is_capitalized_name(word), "{word}");
        }
    }

    #[test]
    fn sentence_openers_are_not_names() {
        let names = |text: &str| capitalised_names(&Question::read(text));
        assert_eq!(
            names("Serialize and Serializer trait definitions"),
            ["Serializer"]
        );
        assert!(names("Remove complexity\n\nWhatever this was. At this point").is_empty());
    }

    #[test]
    fn files_named_after_a_symbol_ignore_case_and_separators() {
        assert!(file_named_after("include/fmt/base.h", "Base"));
        assert!(file_named_after("src/string_utils.rs", "StringUtils"));
        assert!(!file_named_after("src/strings.rs", "StringUtils"));
        assert!(file_named_after(
            "Dapper/DynamicParameters.cs",
            "DynamicParameters"
        ));
        assert!(!file_named_after(
            "Dapper/DynamicParameters.ParamInfo.cs",
            "DynamicParameters"
        ));
    }

    #[test]
    fn copies_of_the_code_are_known_by_their_folders() {
        assert!(is_copy_path("_examples/rest/main.go"));
        assert!(is_copy_path("src/compat/old_api.py"));
        assert!(!is_copy_path("docs.go"));
    }
}
