//! `knowcode history`: answers from the git history a `--temporal` build stored with its
//! generation (`index::history`): recent commits, or the commits whose surviving lines overlap
//! one entity's span, with insertions and deletions. It only reads what the build wrote.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::KnowcodeError;
use crate::index::history::Commit;
pub use crate::index::history::{History, read};
use crate::parse::Entity;

/// `YYYY-MM-DD` of a Unix time (UTC).
fn date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn commit_json(commit: &Commit) -> Value {
    json!({
        "commit": &commit.id[..commit.id.len().min(10)],
        "date": date(commit.time),
        "author": commit.author,
        "summary": commit.summary,
    })
}

/// The last `limit` commits.
pub fn recent(history: &History, limit: usize) -> Value {
    let commits: Vec<Value> = history
        .commits
        .iter()
        .take(limit)
        .map(commit_json)
        .collect();
    json!({"head": history.head, "commits_read": history.commits.len(), "commits": commits})
}

/// Commits whose hunks overlap the entity's span, newest first, with line counts.
pub fn for_entity(history: &History, entity: &Entity, limit: usize) -> Value {
    let (start, end) = (entity.span.start_line, entity.span.end_line);
    let mut per_commit: BTreeMap<usize, (u32, u32)> = BTreeMap::new();
    for touch in history.files.get(&entity.path).into_iter().flatten() {
        if touch.ranges.iter().any(|&(s, e)| s <= end && e >= start) {
            let row = per_commit.entry(touch.commit).or_default();
            row.0 += touch.insertions;
            row.1 += touch.deletions;
        }
    }
    let commits: Vec<Value> = per_commit
        .iter()
        .take(limit)
        .map(|(&i, &(insertions, deletions))| {
            let mut row = commit_json(&history.commits[i]);
            row["insertions"] = json!(insertions);
            row["deletions"] = json!(deletions);
            row
        })
        .collect();
    json!({
        "entity": entity.id,
        "lines": [start, end],
        "commits_touching": per_commit.len(),
        "commits": commits,
    })
}

/// `history [ENTITY]` on a loaded generation: recent commits, or the commits that touched
/// one entity (a disambiguation list when the name is ambiguous).
pub fn query(
    generation: &crate::load::generation::LoadedGeneration,
    target: Option<&str>,
    limit: usize,
) -> Result<Value, KnowcodeError> {
    let history = read(&generation.dir)?;
    match target {
        None => Ok(recent(&history, limit)),
        Some(target) => match crate::retrieve::find_target(generation, target)? {
            crate::retrieve::Target::Entity(entity) => Ok(for_entity(&history, entity, limit)),
            crate::retrieve::Target::Ambiguous(candidates) => {
                Ok(crate::retrieve::payload::to_json(&candidates))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_796_000_000), "2026-11-30");
        assert_eq!(date(951_782_400), "2000-02-29");
    }
}
