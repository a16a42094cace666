//! Priors that scale a fused hit before file evidence is pooled: the entity's kind (prose, text
//! and file headers below definitions), its place (tests unless asked, generated or vendored
//! code, the repository's own tooling, a language the project barely uses), changelog-like
//! history files, and test blocks inside source files. Pure functions of the hit and the
//! question; they read no ranks.

use crate::load::generation::LoadedGeneration;
use crate::parse::{EntityKind, TEST_SUBKIND};
use crate::retrieve::question::{QueryShape, Question};
use crate::walk::{is_generated_path, is_history_path, is_test_path, tooling_folder};

/// Score multiplier for definitions in tests, examples and benchmarks (`walk::is_test_path`)
/// unless the query asks about those: they show how code is used and rarely are the code asked
/// about, and a test spells the calls, fixtures and words of the behaviour it checks (its name
/// often restates a change description's title) better than the code. One multiplier for every
/// question: reports had 0.3 and shorter questions 0.6 until 2026-12-04, when 0.3 for both
/// lifted the docstring benchmark's R@5 0.776 → 0.781 (14 questions up, none down) and lexical
/// code search 0.866 → 0.868 (3 up, none down), with the issue sets' function figures unchanged.
const TEST_PRIOR: f64 = 0.3;
/// Score multiplier for generated, bundled and vendored code (`walk::is_generated_path`): an
/// amalgamated single header holds every name of the library and otherwise outranks the
/// files a fix changes.
const GENERATED_PRIOR: f64 = 0.3;
/// Score multiplier for the repository's own tooling (`walk::tooling_folder`: top-level
/// `scripts/`, `build_tools/`, `ci/`, …) unless the question names the folder: a release
/// script shares a change description's housekeeping words ("Add changelog entry" and
/// astroid's `script/bump_changelog.py`) and is rarely the code asked about (lexical plane,
/// 2026-12-05: change descriptions' function Acc@5 63 → 64 of 120, two multi-language files
/// closer, nothing lower; demoting `tools/` too lifted go-zero's `core/` files but `tools/` is
/// go-zero's own `goctl`, so it is not tooling here).
const TOOLING_PRIOR: f64 = 0.3;
/// Score multiplier for code in a language the project barely uses
/// (`FileIndex::is_minority_language`).
const MINORITY_LANGUAGE_PRIOR: f64 = 0.5;
/// Score multiplier for file headers and documentation sections, and for the whole-file
/// evidence of a file that is only prose (a changelog names everything a commit does).
const PROSE_PRIOR: f64 = 0.5;
/// The prose multiplier for a report (a long question): its prose names the feature, the
/// flag and the symptom, which the documentation names too, but the fix goes into code.
const REPORT_PROSE_PRIOR: f64 = 0.2;
/// The share of the prose multiplier a text file keeps (see `kind_prior`; 1.0 / 0.5 / 0.3
/// → change descriptions `semantic` Acc@5 78.4 / 83.0 / 83.0 with the history prior and
/// text files as prose in the file leg, 2026-12-02).
const TEXT_SHARE: f64 = 0.5;
/// Score multiplier for prose in a changelog, release notes or contributors' list
/// (`walk::is_history_path`): such a file restates every change in the words a change
/// description uses, and no change description is answered by it (1.0 → 0.2: change
/// descriptions `semantic` Acc@5 78.4 → 83.0 with the model; 0.1 gained nothing more).
const HISTORY_PRIOR: f64 = 0.2;

/// How likely code at this place is the answer, before looking at the query: tests (unless
/// the question is about them), generated or vendored code, the repository's own tooling, and
/// code in a language the project barely uses, less than the project's own.
pub(super) fn place_prior(generation: &LoadedGeneration, path: &str, question: &Question) -> f64 {
    let place = if is_generated_path(path) {
        GENERATED_PRIOR
    } else if !question.about_tests && is_test_path(path) {
        TEST_PRIOR
    } else if is_unasked_tooling(path, question) {
        TOOLING_PRIOR
    } else {
        1.0
    };
    let language = if generation.files.is_minority_language(path) {
        MINORITY_LANGUAGE_PRIOR
    } else {
        1.0
    };
    place * language
}

/// Whether a path lies in the repository's tooling and the question does not name that
/// folder (`scripts`, `ci`).
fn is_unasked_tooling(path: &str, question: &Question) -> bool {
    tooling_folder(path).is_some_and(|folder| {
        let name = folder.trim_start_matches('.');
        !question.words.iter().any(|word| word == name)
    })
}

/// A test written beside the code it exercises (Zig's `test "…"` blocks, subkind `test`)
/// weighs what a test file's definitions weigh.
pub(super) fn test_block_prior(
    generation: &LoadedGeneration,
    entity_id: &str,
    question: &Question,
) -> f64 {
    let is_test_block = generation
        .entity(entity_id)
        .is_some_and(|e| e.subkind.as_deref() == Some(TEST_SUBKIND));
    if is_test_block && !question.about_tests {
        TEST_PRIOR
    } else {
        1.0
    }
}

/// How likely an entity of this kind is the answer, before looking at the query: file
/// headers and prose (Markdown sections) answer fewer code questions than definitions and
/// otherwise crowd them out of the top ranks (measured on the benchmark).
pub(super) fn kind_prior(kind: EntityKind, question: &Question) -> f64 {
    match kind {
        EntityKind::Function | EntityKind::Method | EntityKind::Class => 1.0,
        EntityKind::Module => PROSE_PRIOR,
        // A text file (configuration, a format without a grammar) is weighed like prose, and
        // half of that again for a sentence: at 1.0 for one-line questions, the YAML and JSON
        // fixtures of the Python issue trees took 10 points of Acc@5 from the change
        // descriptions; at the prose weight, embedded `.rst` pages (changelogs, what's-new
        // notes, contributing guides) still outranked the code with the model (2026-12-02).
        // A question that is one identifier keeps the prose weight: a text file spelling it
        // (a `.proto` service, a Terraform resource) holds the only definition there is.
        EntityKind::Text if question.shape == QueryShape::Identifier => prose_prior(question),
        EntityKind::Text => prose_prior(question) * TEXT_SHARE,
        EntityKind::Section | EntityKind::Document => prose_prior(question),
    }
}

/// The history prior of prose or text in a file that records changes rather than
/// explains the code ([`is_history_path`]); code keeps 1.0 whatever its file is called
/// (`changes.py` is code).
pub(super) fn history_prior(reads_as_prose: bool, path: &str) -> f64 {
    if reads_as_prose && is_history_path(path) {
        HISTORY_PRIOR
    } else {
        1.0
    }
}

/// How likely documentation answers this question: less for a report than for a one-line
/// question.
pub(super) fn prose_prior(question: &Question) -> f64 {
    if question.long {
        REPORT_PROSE_PRIOR
    } else {
        PROSE_PRIOR
    }
}
