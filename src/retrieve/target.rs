//! An entity argument resolved (id, name, qualified-name suffix, fuzzy) to one entity, a
//! disambiguation list, or `entity_not_found`: what `context`, `trace`, `impact` and `history`
//! take.

use super::payload::Disambiguation;
use super::resolve::{self, Resolved};
use super::search::entity_row;
use crate::error::{ErrorCode, KnowcodeError};
use crate::load::LoadedGeneration;
use crate::load::freshness;

/// What an entity argument named.
pub enum Target<'g> {
    Entity(&'g crate::parse::Entity),
    /// Several equally good matches: the disambiguation payload to return instead.
    Ambiguous(Disambiguation),
}

/// Resolves an entity argument (id, name, qualified-name suffix, fuzzy), or
/// `entity_not_found`.
pub fn find_target<'g>(
    generation: &'g LoadedGeneration,
    target: &str,
) -> Result<Target<'g>, KnowcodeError> {
    match resolve::resolve(generation, target) {
        Resolved::Found(entity) => Ok(Target::Entity(entity)),
        Resolved::Ambiguous(candidates) => Ok(Target::Ambiguous(disambiguation(
            generation,
            target,
            &candidates,
        ))),
        Resolved::NotFound => Err(not_found(target)),
    }
}

fn not_found(target: &str) -> KnowcodeError {
    KnowcodeError::new(
        ErrorCode::EntityNotFound,
        format!("no entity matches `{target}`"),
    )
}

fn disambiguation(
    generation: &LoadedGeneration,
    target: &str,
    candidates: &[&crate::parse::Entity],
) -> Disambiguation {
    Disambiguation {
        ambiguous: true,
        target: target.to_string(),
        candidates: candidates.iter().map(|e| entity_row(e)).collect(),
        hint: "call again with one candidate's id",
        freshness: freshness::check(generation),
    }
}
