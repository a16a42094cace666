//! `search`: entities by name or pattern, best match first (exact id or name, qualified-name
//! suffix, prefix, substring), definitions before files and a type before its extensions; a
//! pattern no name matches falls back to a ranked lookup. Rows never carry source.

use super::payload::{EntityRow, SearchPayload};
use super::plan::QueryPlan;
use super::profile::{Action, ResponseProfile, TaskType, Verbosity};
use super::{Retriever, require_text};
use crate::error::KnowcodeError;
use crate::load::freshness::{self, Freshness};

impl Retriever {
    /// `search`: entities by name or pattern, never with source.
    pub async fn search(
        &self,
        pattern: &str,
        limit: usize,
        verbosity: Verbosity,
    ) -> Result<SearchPayload, KnowcodeError> {
        let found = self.search_ranked(pattern, limit, verbosity).await?;
        Ok(SearchPayload {
            results: found.rows.into_iter().map(|(_, row)| row).collect(),
            total: found.total,
            freshness: found.freshness,
            match_kind: found.match_kind,
        })
    }

    /// `search`'s rows with how well each matched (0: exact id or name … 4: ranked), so rows
    /// of several indexes can be merged (`scope`).
    pub async fn search_ranked(
        &self,
        pattern: &str,
        limit: usize,
        verbosity: Verbosity,
    ) -> Result<SearchFound, KnowcodeError> {
        require_text(pattern)?;
        let generation = self.generation().await?;
        let mut matches: Vec<(u8, &crate::parse::Entity)> = Vec::new();
        let lower = pattern.to_lowercase();
        for entity in &generation.entities {
            let name = entity.name.to_lowercase();
            let rank = if entity.id == pattern || entity.name == pattern {
                0
            } else if entity.qualified_name.ends_with(pattern) || name == lower {
                1
            } else if name.starts_with(&lower) {
                2
            } else if name.contains(&lower) || entity.qualified_name.to_lowercase().contains(&lower)
            {
                3
            } else {
                continue;
            };
            matches.push((rank, entity));
        }
        let mode = if matches.is_empty() { "ranked" } else { "name" };
        if matches.is_empty() {
            let plan =
                QueryPlan::for_lookup(pattern, Action::Search, self.config.config.hybrid_alpha);
            let ranking = self.ranked(&generation, &plan, limit).await;
            for hit in &ranking.hits {
                if let Some(entity) = generation.entity(&hit.entity_id) {
                    matches.push((4, entity));
                }
            }
        }
        // Name matches: definitions before files, a type before its extensions and
        // instances, then by id. A ranked fallback keeps the ranking's order (a stable sort).
        matches.sort_by(|a, b| {
            let order = |(rank, e): &(u8, &crate::parse::Entity)| {
                (
                    *rank,
                    *rank < 4 && e.kind.is_file_level(),
                    *rank < 4 && is_extension(e),
                )
            };
            order(a).cmp(&order(b)).then_with(|| {
                if a.0 < 4 {
                    a.1.id.cmp(&b.1.id)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
        });
        let total = matches.len();
        let profile = ResponseProfile::new(Action::Search, TaskType::Locate, verbosity);
        let rows = matches
            .into_iter()
            .take(limit)
            .map(|(rank, e)| (rank, search_row(e, profile.standard_fields())))
            .collect();
        Ok(SearchFound {
            rows,
            total,
            freshness: freshness::check(&generation),
            match_kind: profile.standard_fields().then_some(mode),
        })
    }
}

/// An entity that adds to a type defined elsewhere (a Swift or Dart extension, a Haskell
/// instance): a search for the name lists the type first.
fn is_extension(entity: &crate::parse::Entity) -> bool {
    matches!(entity.subkind.as_deref(), Some("extension" | "instance"))
}

/// A `search` row: id, kind and lines, with signature and doc line when `standard`.
pub(crate) fn search_row(entity: &crate::parse::Entity, standard: bool) -> EntityRow {
    let mut row = entity_row(entity);
    if standard {
        row.signature = Some(entity.signature.clone());
        row.doc = entity
            .doc
            .as_ref()
            .map(|doc| doc.lines().next().unwrap_or("").to_string());
    }
    row
}

/// `search`'s rows with their match rank, before they become a payload.
pub struct SearchFound {
    pub rows: Vec<(u8, EntityRow)>,
    pub total: usize,
    pub freshness: Freshness,
    pub match_kind: Option<&'static str>,
}

/// An entity's id, kind and line range (the summary row of `search` and disambiguation).
pub(super) fn entity_row(entity: &crate::parse::Entity) -> EntityRow {
    EntityRow {
        id: entity.id.clone(),
        kind: entity.kind.as_str(),
        lines: format!("{}-{}", entity.span.start_line, entity.span.end_line),
        signature: None,
        doc: None,
    }
}
