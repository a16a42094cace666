//! The quality report card over parsed code: parse success, language coverage (files we
//! skip count against it), documentation density, naming, structure, relationship density
//! and unresolved references — each with a score, an A–F grade and its evidence — plus an
//! overall score and recommendations. `build` stores it in the generation; `preflight`
//! computes it without writing.

use crate::error::StoreResult;
use std::path::Path;

use serde_json::{Value, json};

use super::Analysis;
use crate::parse::{EntityKind, IssueKind};

/// The report's file name inside a generation.
pub const REPORT_FILE: &str = "preflight_report.json";

fn grade(score: f64) -> &'static str {
    match score {
        s if s >= 90.0 => "A",
        s if s >= 80.0 => "B",
        s if s >= 70.0 => "C",
        s if s >= 60.0 => "D",
        _ => "F",
    }
}

fn dimension(
    name: &str,
    ratio: f64,
    evidence: String,
    advice: &str,
) -> (Value, f64, Option<String>) {
    let score = (ratio.clamp(0.0, 1.0) * 1000.0).round() / 10.0;
    let recommendation = (score < 70.0).then(|| advice.to_string());
    (
        json!({"name": name, "score": score, "grade": grade(score), "evidence": evidence}),
        score,
        recommendation,
    )
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

fn follows_convention(language: &str, kind: EntityKind, name: &str) -> bool {
    let snake = name
        .chars()
        .all(|c| c.is_lowercase() || c.is_ascii_digit() || c == '_');
    let camel = name.chars().next().is_some_and(|c| c.is_lowercase()) && !name.contains('_');
    let pascal = name.chars().next().is_some_and(|c| c.is_uppercase()) && !name.contains('_');
    if kind == EntityKind::Class {
        return language == "c" || language == "cpp" || pascal;
    }
    match language {
        "python" | "rust" | "ruby" => snake || name.starts_with("__"),
        "go" | "csharp" => camel || pascal,
        "javascript" | "typescript" | "tsx" | "java" | "php" => {
            camel || pascal || name == "constructor"
        }
        _ => true,
    }
}

/// Computes the report card.
pub fn report(analysis: &Analysis) -> Value {
    let files = analysis.parsed.len();
    let clean = analysis
        .parsed
        .iter()
        .filter(|f| !f.issues.iter().any(|i| i.kind == IssueKind::SyntaxError))
        .count();
    let text_only = analysis
        .parsed
        .iter()
        .filter(|f| {
            f.entities
                .first()
                .is_some_and(|e| e.kind == EntityKind::Text)
        })
        .count();
    let structured = files - text_only;
    let skipped = analysis.walked.skipped.len();
    let definitions: Vec<_> = analysis
        .parsed
        .iter()
        .flat_map(|f| &f.entities)
        .filter(|e| {
            matches!(
                e.kind,
                EntityKind::Class | EntityKind::Function | EntityKind::Method
            )
        })
        .collect();
    let documented = definitions.iter().filter(|e| e.doc.is_some()).count();
    let well_named = definitions
        .iter()
        .filter(|e| follows_convention(&e.language, e.kind, &e.name))
        .count();
    let callables: Vec<_> = definitions
        .iter()
        .filter(|e| e.kind.is_callable())
        .collect();
    let short = callables
        .iter()
        .filter(|e| e.span.end_line - e.span.start_line < 60)
        .count();
    let references: Vec<_> = analysis
        .graph
        .edges
        .iter()
        .filter(|e| e.kind != crate::graph::EdgeKind::Contains)
        .collect();
    let resolved = references
        .iter()
        .filter(|e| e.resolution.is_resolved())
        .count();
    let resolved_calls = references
        .iter()
        .filter(|e| e.kind == crate::graph::EdgeKind::Calls && e.resolution.is_resolved())
        .count();
    let density = if callables.is_empty() {
        0.0
    } else {
        resolved_calls as f64 / callables.len() as f64
    };

    let dims = [
        dimension(
            "parse_success",
            ratio(clean, files),
            format!("{clean}/{files} files parse without syntax errors"),
            "fix the syntax errors knowcode reports; those files are only partly indexed",
        ),
        dimension(
            "language_coverage",
            ratio(structured, files + skipped),
            format!("{structured} parsed, {text_only} read as text only, {skipped} skipped"),
            "text-only files have no definitions or calls and skipped files are invisible to retrieval; check `knowcode inspect stats`",
        ),
        dimension(
            "documentation_density",
            ratio(documented, definitions.len()),
            format!("{documented}/{} definitions documented", definitions.len()),
            "document public functions and classes: docs feed both ranking and summaries",
        ),
        dimension(
            "naming",
            ratio(well_named, definitions.len()),
            format!(
                "{well_named}/{} names follow their language's convention",
                definitions.len()
            ),
            "consistent names make identifier queries land",
        ),
        dimension(
            "structure",
            ratio(short, callables.len()),
            format!("{short}/{} functions under 60 lines", callables.len()),
            "long functions are split into several chunks; smaller units retrieve better",
        ),
        dimension(
            "relationship_density",
            (density / 2.0).min(1.0),
            format!(
                "{resolved_calls} resolved calls over {} functions",
                callables.len()
            ),
            "few resolved calls: traces and caller lists will be thin",
        ),
        dimension(
            "unresolved_references",
            ratio(resolved, references.len()),
            format!("{resolved}/{} references resolved", references.len()),
            "many references point outside the repository or are ambiguous; traces may miss callers",
        ),
    ];
    let overall = dims.iter().map(|d| d.1).sum::<f64>() / dims.len() as f64;
    let overall = (overall * 10.0).round() / 10.0;
    json!({
        "overall": {"score": overall, "grade": grade(overall)},
        "dimensions": dims.iter().map(|d| d.0.clone()).collect::<Vec<_>>(),
        "recommendations": dims.iter().filter_map(|d| d.2.clone()).collect::<Vec<_>>(),
    })
}

/// One line per dimension, for the terminal.
pub fn card(report: &Value) -> String {
    let mut out = format!(
        "quality {} ({})",
        report["overall"]["grade"].as_str().unwrap_or("?"),
        report["overall"]["score"]
    );
    for d in report["dimensions"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n  {:<22} {} {:>5}  {}",
            d["name"].as_str().unwrap_or(""),
            d["grade"].as_str().unwrap_or(""),
            d["score"],
            d["evidence"].as_str().unwrap_or("")
        ));
    }
    out
}

/// Writes `report` into a generation folder being staged.
pub fn write(generation_dir: &Path, report: &Value) -> StoreResult<()> {
    crate::store::write_synced(
        &generation_dir.join(REPORT_FILE),
        serde_json::to_string(report)?.as_bytes(),
    )
}

/// The report a generation stored, as the `inspect quality` payload.
pub fn read(generation_dir: &Path) -> StoreResult<Value> {
    Ok(serde_json::from_str(&std::fs::read_to_string(
        generation_dir.join(REPORT_FILE),
    )?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_follow_scores() {
        assert_eq!(grade(95.0), "A");
        assert_eq!(grade(85.0), "B");
        assert_eq!(grade(10.0), "F");
    }

    #[test]
    fn naming_conventions_per_language() {
        assert!(follows_convention(
            "python",
            EntityKind::Function,
            "apply_discount"
        ));
        assert!(!follows_convention(
            "python",
            EntityKind::Function,
            "applyDiscount"
        ));
        assert!(follows_convention(
            "typescript",
            EntityKind::Method,
            "displayName"
        ));
        assert!(!follows_convention("java", EntityKind::Class, "lower_case"));
    }
}
