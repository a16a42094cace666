//! Entity resolution for names agents pass loosely: exact id > exact name > qualified-name
//! suffix > case-insensitive name > substring. Several equally good matches give a short
//! disambiguation list instead of a guess.

use crate::load::generation::LoadedGeneration;
use crate::parse::Entity;
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

/// Whether a definition's qualified name puts it right under `owner` (`Dict.getitem` under
/// `Dict`, `Catch.Capturer.captureValue` under `Capturer`).
pub fn owned_by(entity: &Entity, owner: &str) -> bool {
    let qualified = &entity.qualified_name;
    let Some(before) = qualified
        .strip_suffix(entity.name.as_str())
        .and_then(|q| q.strip_suffix('.'))
    else {
        return false;
    };
    before
        .strip_suffix(owner)
        .is_some_and(|outer| outer.is_empty() || outer.ends_with('.'))
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
