//! Entity resolution for names agents pass loosely: exact id > exact name > qualified-name
//! suffix > case-insensitive name > substring. Several equally good matches give a short
//! disambiguation list instead of a guess.

use crate::load::generation::LoadedGeneration;
use crate::parse::Entity;

/// At most this many candidates are listed when a name is ambiguous.
pub const MAX_CANDIDATES: usize = 8;

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
