//! Entity resolution for names agents pass loosely: exact id > exact name > qualified-name
//! suffix > case-insensitive name > substring. Several equally good matches give a short
//! disambiguation list instead of a guess. Also which of a name's definitions a question
//! means: the one under the owner written with it or elsewhere in the question, a member one
//! letter away, the function an assignment binds. It reads names; it never scores.

use super::question::Question;
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};
use crate::text::is_name_char;
use crate::walk::is_test_path;

/// Names (of files or definitions) shorter than this are not read as misspelt: too many lie
/// a letter apart.
pub const MISSPELT_MIN_CHARS: usize = 8;

/// At most this many candidates are listed when a name is ambiguous.
pub const MAX_CANDIDATES: usize = 8;

/// Whether a question's written name can mean `entity`: a definition, not a file's module or
/// document, and outside tests unless the question is about them.
pub fn may_be_named(entity: &Entity, about_tests: bool) -> bool {
    !entity.kind.is_file_level() && (about_tests || !is_test_path(&entity.path))
}

pub enum Resolved<'a> {
    Found(&'a Entity),
    Ambiguous(Vec<&'a Entity>),
    NotFound,
}

fn decide(mut matches: Vec<&Entity>) -> Option<Resolved<'_>> {
    // A definition beats a file whose stem happens to share its name (`__init__`).
    if matches.iter().any(|e| !e.kind.is_file_level()) {
        matches.retain(|e| !e.kind.is_file_level());
    }
    matches.sort_by(|a, b| a.id.cmp(&b.id));
    matches.dedup_by(|a, b| a.id == b.id);
    match matches.len() {
        0 => None,
        1 => Some(Resolved::Found(matches[0])),
        _ => {
            matches.truncate(MAX_CANDIDATES);
            Some(Resolved::Ambiguous(matches))
        }
    }
}

/// Resolves `target` in one generation.
pub fn resolve<'a>(generation: &'a LoadedGeneration, target: &str) -> Resolved<'a> {
    let target = target.trim();
    if target.is_empty() {
        return Resolved::NotFound;
    }
    if let Some(entity) = generation.entity(target) {
        return Resolved::Found(entity);
    }
    let normalized = target.replace("::", ".").replace('#', ".");
    let passes: [&dyn Fn(&Entity) -> bool; 4] = [
        &|e| e.name == target,
        &|e| {
            e.qualified_name == normalized || e.qualified_name.ends_with(&format!(".{normalized}"))
        },
        &|e| {
            e.name.eq_ignore_ascii_case(target)
                || e.qualified_name.eq_ignore_ascii_case(&normalized)
        },
        &|e| e.name.to_lowercase().contains(&target.to_lowercase()) && !e.kind.is_file_level(),
    ];
    for (i, pass) in passes.iter().enumerate() {
        let matches: Vec<&Entity> = if i == 0 {
            generation.entities_named(target).collect()
        } else {
            generation.entities.iter().filter(|e| pass(e)).collect()
        };
        if let Some(resolved) = decide(matches) {
            return resolved;
        }
    }
    Resolved::NotFound
}

/// What stands before a definition's own name in its qualified name (`Catch.Capturer` of
/// `Catch.Capturer.captureValue`); None for a top-level definition.
fn qualifier(entity: &Entity) -> Option<&str> {
    entity
        .qualified_name
        .strip_suffix(entity.name.as_str())?
        .strip_suffix('.')
}

/// Whether a definition's qualified name puts it right under `owner` (`Dict.getitem` under
/// `Dict`, `Catch.Capturer.captureValue` under `Capturer`).
pub fn owned_by(entity: &Entity, owner: &str) -> bool {
    qualifier(entity)
        .and_then(|before| before.strip_suffix(owner))
        .is_some_and(|outer| outer.is_empty() || outer.ends_with('.'))
}

/// Whether the question also writes the type that owns `entity` (`Module` in "Make Module
/// call the `__init__` of NodeNG" for `Module.__init__`): as a name or as a plain word, spelt
/// as the type is. Among the many definitions of a common name (`__init__`, `parse`, `run`)
/// these are the ones the question means.
pub fn owner_written(question: &Question, entity: &Entity) -> bool {
    let Some(owner) = qualifier(entity).and_then(|before| before.rsplit('.').next()) else {
        return false;
    };
    owner != entity.name
        && (question.names.iter().any(|n| n.text == owner)
            || question.plain_words.iter().any(|w| w == owner))
}

/// The definitions a member written under its owners means: `definitions` (the project's
/// definitions of that name) when one of them is an owner's own or no owner is written, else
/// the function an assignment binds to it ([`assigned_member`]) when there is one.
pub fn owned_or_bound<'g>(
    generation: &'g LoadedGeneration,
    owners: &[String],
    member: &str,
    definitions: Vec<&'g Entity>,
    about_tests: bool,
) -> Vec<&'g Entity> {
    let owned = |e: &&Entity| owners.iter().any(|o| owned_by(e, o));
    if owners.is_empty() || definitions.iter().any(owned) {
        return definitions;
    }
    let bound = assigned_member(generation, owners, member, about_tests);
    if bound.is_empty() { definitions } else { bound }
}

/// The function a member bound by assignment runs. A project may attach a function to a class
/// after defining both (`nodes.Name._infer = decorators.path_wrapper(infer_name)` in Python,
/// `Router.prototype.route = route` in JavaScript), so nothing is defined under the class by
/// that name: the right side's last name the project defines as a function (the innermost of
/// any wrappers) is what the written `Name._infer` runs, the one in the assignment's own file
/// when several share the name. Only owners the project defines are looked for: a type, or a
/// function for the `prototype` form (a JavaScript constructor function).
pub fn assigned_member<'g>(
    generation: &'g LoadedGeneration,
    owners: &[String],
    member: &str,
    about_tests: bool,
) -> Vec<&'g Entity> {
    let mut targets: Vec<String> = Vec::new();
    for owner in owners {
        let kinds: Vec<EntityKind> = generation.entities_named(owner).map(|e| e.kind).collect();
        if kinds.contains(&EntityKind::Class) {
            targets.push(format!("{owner}.{member}"));
        }
        if kinds
            .iter()
            .any(|k| *k == EntityKind::Class || k.is_callable())
        {
            targets.push(format!("{owner}.prototype.{member}"));
        }
    }
    let mut found: Vec<&Entity> = Vec::new();
    for target in targets {
        let chunks = generation
            .chunks
            .iter()
            .filter(|c| (about_tests || !is_test_path(&c.path)) && c.text.contains(&target));
        for chunk in chunks {
            for right in assignments_to(&chunk.text, &target) {
                let function = innermost_function(generation, right, &chunk.path, about_tests);
                if let Some(f) = function.filter(|f| !found.iter().any(|x| x.id == f.id)) {
                    found.push(f);
                }
            }
        }
    }
    found
}

/// The right sides of the statements `target = …` in `text`: `target` not the tail of a longer
/// name, `=` not `==` or a compound assignment; each up to the line's end outside brackets, a
/// `{` opening a body, or a comment.
fn assignments_to<'t>(text: &'t str, target: &str) -> Vec<&'t str> {
    text.match_indices(target)
        .filter(|(at, _)| !text[..*at].chars().next_back().is_some_and(is_name_char))
        .filter_map(|(at, _)| {
            let rest = text[at + target.len()..].trim_start_matches([' ', '\t']);
            let right = rest.strip_prefix('=').filter(|r| !r.starts_with('='))?;
            Some(statement_head(right).trim())
        })
        .collect()
}

/// An assignment's right side up to where the statement ends or a body or comment begins.
fn statement_head(right: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in right.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' | '#' => return &right[..i],
            '/' if right[i..].starts_with("//") => return &right[..i],
            '\n' if depth <= 0 => return &right[..i],
            _ => {}
        }
    }
    right
}

/// The function the last name in `right` that names any function stands for: the one in
/// `path` (the assignment's file), else the only one; none when several elsewhere share it.
fn innermost_function<'g>(
    generation: &'g LoadedGeneration,
    right: &str,
    path: &str,
    about_tests: bool,
) -> Option<&'g Entity> {
    let functions = |word: &str| -> Vec<&'g Entity> {
        generation
            .entities_named(word)
            .filter(|e| e.kind.is_callable() && may_be_named(e, about_tests))
            .collect()
    };
    let candidates = right
        .rsplit(|c: char| !is_name_char(c))
        .map(functions)
        .find(|found| !found.is_empty())?;
    match candidates.iter().find(|e| e.path == path) {
        Some(here) => Some(*here),
        None => (candidates.len() == 1).then(|| candidates[0]),
    }
}

/// A member written under its owner (`Location.get_get_sun_rise_set_transit`) that the
/// project does not define, read as the owners' one member nearest to it in spelling, when
/// at most a quarter of the written name differs: reports and changelogs misspell long names.
pub fn misspelt_member<'g>(
    generation: &'g LoadedGeneration,
    owners: &[String],
    written: &str,
) -> Option<&'g Entity> {
    // Owners the project does not define (`np`, `os.path`) own nothing here: no scan.
    let defined = |owner: &String| generation.entities_named(owner).next().is_some();
    if written.chars().count() < MISSPELT_MIN_CHARS || !owners.iter().any(defined) {
        return None;
    }
    let allowed = written.chars().count() / 4;
    let mut nearest: Vec<(usize, &Entity)> = generation
        .entities
        .iter()
        .filter(|e| !e.kind.is_file_level() && owners.iter().any(|o| owned_by(e, o)))
        .map(|e| (strsim::levenshtein(&e.name, written), e))
        .filter(|&(distance, _)| distance <= allowed)
        .collect();
    nearest.sort_by_key(|&(distance, _)| distance);
    match nearest.as_slice() {
        [(_, only)] => Some(*only),
        [(best, first), (next, _), ..] if best < next => Some(*first),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assignments_right_side_ends_at_its_statement_body_or_comment() {
        let text = "nodes.Name._infer = wrap(\n    infer_name\n)  # the lookup\n\
                    AssignName._infer = other\n\
                    if nodes.Name._infer == x: pass\n\
                    nodes.Name._infer += 1\n\
                    Router.prototype.route = function route(path) { return path; }";
        assert_eq!(
            assignments_to(text, "Name._infer"),
            ["wrap(\n    infer_name\n)"]
        );
        assert_eq!(
            assignments_to(text, "Router.prototype.route"),
            ["function route(path)"]
        );
    }
}
