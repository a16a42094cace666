//! The instructions section `install --instructions` keeps in the repository's `AGENTS.md`
//! and/or `CLAUDE.md`: when to call `knowcode_retrieve` and with which action. The section sits
//! between two HTML comments, so a second install replaces it instead of adding another, and
//! uninstalling removes exactly it (and the file, when nothing else was in it). Knows nothing
//! about agents' MCP config files.

use std::path::{Path, PathBuf};

use super::{Action, FileChange, Options, unified_diff, write_or_delete};

const BEGIN: &str = "<!-- knowcode:begin -->";
const END: &str = "<!-- knowcode:end -->";

/// The section, markers included (ends with a newline).
pub fn section() -> String {
    format!(
        "{BEGIN}
## Finding code with knowcode

This repository is indexed by knowcode (MCP server `knowcode`). Ask it before reading whole files:
- `knowcode_retrieve` `action=query` with the question in plain words (\"where is the retry policy
  applied?\"): the best entities, summaries first, and `also` for the next candidates.
- `action=search` for a name you know, `action=context` for one entity's source and neighbours,
  `action=trace` for callers or callees, `action=semantic_search` for ranked chunks.
- A `sufficiency_score` below the server's threshold means: ask a narrower question or raise
  `verbosity`/`max_tokens` before opening files.
- `knowcode_inspect action=freshness` says whether the index is behind your edits;
  `knowcode_lifecycle action=build` refreshes it (ask the user first).
{END}
"
    )
}

/// The files the section goes in: those of AGENTS.md and CLAUDE.md that exist, else a new
/// AGENTS.md. On uninstall, every one that holds the section.
fn targets(project: &Path, uninstall: bool) -> Vec<PathBuf> {
    let existing: Vec<PathBuf> = ["AGENTS.md", "CLAUDE.md"]
        .iter()
        .map(|name| project.join(name))
        .filter(|path| path.is_file())
        .collect();
    match (existing.is_empty(), uninstall) {
        (true, false) => vec![project.join("AGENTS.md")],
        _ => existing,
    }
}

/// Writes (or removes) the section in each target, honouring the dry run.
pub fn apply(options: &Options) -> Vec<FileChange> {
    targets(&options.project, options.uninstall)
        .into_iter()
        .map(|path| edit(&path, options))
        .collect()
}

fn edit(path: &Path, options: &Options) -> FileChange {
    let existed = path.is_file();
    let before = match existed {
        true => match std::fs::read_to_string(path) {
            Ok(text) => text,
            // Not text, or not readable: never replaced by a file holding only the section.
            Err(err) => return unreadable(path, err),
        },
        false => String::new(),
    };
    let (after, action) = match options.uninstall {
        true => without_section(&before),
        false => with_section(&before),
    };
    let keep = !(options.uninstall && existed && after.trim().is_empty());
    let changed = after != before || (existed && !keep);
    let mut change = FileChange::new(path, action);
    if !changed {
        return change;
    }
    change.diff = unified_diff(path, &before, &after, existed, keep);
    if !options.dry_run {
        change.error = write_or_delete(path, keep.then_some(after.as_str()), false)
            .err()
            .map(|err| err.to_string());
    }
    change
}

/// An existing instructions file that cannot be read as text: reported, left untouched.
fn unreadable(path: &Path, err: std::io::Error) -> FileChange {
    let mut change = FileChange::new(path, Action::Unchanged);
    change.error = Some(format!(
        "{}: cannot read it as text ({err}); left as it is",
        path.display()
    ));
    change
}

/// The text with the current section: replaced in place, or appended after a blank line.
fn with_section(text: &str) -> (String, Action) {
    if let Some((start, end)) = span(text) {
        let mut updated = text.to_string();
        updated.replace_range(start..end, &section());
        let action = if updated == text {
            Action::Unchanged
        } else {
            Action::Updated
        };
        return (updated, action);
    }
    let separator = match text {
        "" => "",
        t if t.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    (format!("{text}{separator}{}", section()), Action::Added)
}

/// The text without the section and the blank line that separated it.
fn without_section(text: &str) -> (String, Action) {
    let Some((mut start, end)) = span(text) else {
        return (text.to_string(), Action::Absent);
    };
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    let mut trimmed = text.to_string();
    trimmed.replace_range(start..end, "");
    (trimmed, Action::Removed)
}

/// The byte range of the section, end marker's newline included.
fn span(text: &str) -> Option<(usize, usize)> {
    let start = text.find(BEGIN)?;
    let end = start + text[start..].find(END)? + END.len();
    let end = if text[end..].starts_with('\n') {
        end + 1
    } else {
        end
    };
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_is_added_once_and_removed_exactly() {
        let before = "# Project\n\nBuild with make.\n";
        let (once, action) = with_section(before);
        assert_eq!(action, Action::Added);
        let (twice, again) = with_section(&once);
        assert_eq!((twice.as_str(), again), (once.as_str(), Action::Unchanged));
        assert_eq!(once.matches(BEGIN).count(), 1);
        assert_eq!(
            without_section(&once),
            (before.to_string(), Action::Removed)
        );
    }

    #[test]
    fn an_old_section_is_replaced_in_place() {
        let text = format!("intro\n\n{BEGIN}\nold words\n{END}\n\nmore\n");
        let (updated, action) = with_section(&text);
        assert_eq!(action, Action::Updated);
        assert!(
            updated.starts_with("intro\n\n") && updated.ends_with("\nmore\n"),
            "{updated}"
        );
        assert!(!updated.contains("old words"));
    }
}
