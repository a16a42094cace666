//! The chores of a squashed change message. A merged pull request's message lists every commit
//! of its branch: besides the change itself ("Fix crash if numpy doesn't have version") come
//! lines such as "* Add changelog entry", "* typo fix" or "* re run jobs", and sign-off or
//! pre-commit.ci trailers. They speak of the repository's housekeeping, not of the code the
//! change edits, and their words pull the ranking toward release scripts, changelogs and tests.
//! This module finds those lines so a question can be matched without them. It is pure text
//! work: it never decides how long or what kind of question it is (that still reads the whole
//! message), and it never touches a line that says anything else.

/// Words a chore line is about: at least one must be there.
const CHORE_NOUNS: &[&str] = &[
    "changelog",
    "whatsnew",
    "typo",
    "typos",
    "test",
    "tests",
    "doc",
    "docs",
    "documentation",
    "readme",
    "rst",
    "review",
    "comment",
    "comments",
    "stickler",
    "coverage",
    "ci",
    "jobs",
    "pep8",
    "cleanup",
    "notes",
    "imports",
    "merge",
    "rerun",
];

/// Words that may surround them: verbs and connectives of a chore line.
const CHORE_FILLER: &[&str] = &[
    "add", "added", "adds", "update", "updated", "updates", "fix", "fixed", "fixes", "entry",
    "release", "note", "new", "whats", "run", "re", "pre", "commit", "branch", "master", "main",
    "to", "the", "a", "an", "for", "and", "in", "of", "from", "more", "minor", "clean", "up",
    "unused", "changes", "change", "log", "s", "t",
];

/// `text` without its chore lines: bullets ("* …", "- …") made only of chore words with at
/// least one chore noun, and sign-off, co-author and pre-commit.ci trailers. Other lines stay
/// as written, in order.
pub fn without_chores(text: &str) -> String {
    text.lines()
        .filter(|line| !is_chore(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_chore(line: &str) -> bool {
    let line = line.trim();
    if line.starts_with("Signed-off-by:")
        || line.starts_with("Co-authored-by:")
        || line.contains("pre-commit.ci")
    {
        return true;
    }
    let Some(bullet) = line.strip_prefix("* ").or_else(|| line.strip_prefix("- ")) else {
        return false;
    };
    let words: Vec<String> = bullet
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let is_noun = |w: &String| CHORE_NOUNS.contains(&w.as_str());
    words.iter().any(is_noun)
        && words
            .iter()
            .all(|w| is_noun(w) || CHORE_FILLER.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chore_bullets_and_trailers_go_and_the_change_stays() {
        let message = "Fix crash if numpy doesn't have version (#1892)\n\n\
            * Fix crash if numpy doesn't have version\n\n* Add changelog entry\n\n\
            * re run jobs\n\n* Update ChangeLog\n\n\
            * [pre-commit.ci] auto fixes from pre-commit.com hooks\n\n\
            for more information, see https://pre-commit.ci\n\
            Signed-off-by: A Dev <dev@example.com>";
        let kept: Vec<String> = without_chores(message)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        assert_eq!(
            kept,
            [
                "Fix crash if numpy doesn't have version (#1892)",
                "* Fix crash if numpy doesn't have version"
            ]
        );
    }

    #[test]
    fn a_bullet_saying_anything_else_stays() {
        for line in [
            "* fix dc_limit",
            "* Update test_parser fixtures for the new dialect",
            "* linting",
            "* Update",
            "* Add tests for the lexer",
        ] {
            assert_eq!(without_chores(line), line, "{line}");
        }
        assert_eq!(without_chores("* add tests\n* typo fix\n- Update docs"), "");
    }
}
