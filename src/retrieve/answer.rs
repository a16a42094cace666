//! An answer's projection: the packed bundles of `query` or `context` turned into the payload
//! the response profile asks for (context text fitted to the budget, sufficiency, freshness,
//! `also`, and at higher verbosity the task, evidence rows, ranked files and diagnostics). It
//! decides nothing about ranking or packing.

use super::bundle::Bundle;
use super::hit::{Ranking, RetrievalMode};
use super::payload::{BundleRow, Diagnostics, EvidenceRow, FileRow, QueryPayload, StandardFields};
use super::profile::{ResponseProfile, TaskType};
use super::{sufficiency, tokens};
use crate::load::LoadedGeneration;
use crate::load::freshness;

/// The bundles of one answer and what the profile makes of them.
pub(super) struct Answer<'a> {
    pub(super) generation: &'a LoadedGeneration,
    pub(super) profile: ResponseProfile,
    pub(super) bundles: &'a [Bundle],
    pub(super) confidence: f64,
    pub(super) ranking: Option<&'a Ranking>,
    /// `path:line qualified_name` of the next candidates (query only).
    pub(super) also: &'a [String],
}

impl Answer<'_> {
    pub(super) fn payload(
        &self,
        max_tokens: usize,
        task: TaskType,
        task_confidence: f64,
        query: &str,
        limit: usize,
    ) -> QueryPayload {
        let mut context_text = self
            .bundles
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let also_tokens = lines_tokens(self.also);
        let context_budget = max_tokens.saturating_sub(also_tokens);
        if tokens::count(&context_text) > context_budget {
            context_text = tokens::fit_chars(&context_text, context_budget);
        }
        let total_tokens = tokens::count(&context_text) + also_tokens;
        let sufficiency = sufficiency::score(
            if self.bundles.is_empty() {
                0.0
            } else {
                self.confidence
            },
            self.bundles,
        );
        let source_included = self.bundles.iter().any(|b| b.source_included);
        QueryPayload {
            context_text,
            sufficiency_score: sufficiency.score,
            total_tokens,
            freshness: freshness::check(self.generation),
            source_included,
            reduction_summary: (!source_included).then(|| self.reduction_summary()),
            also: self.also.to_vec(),
            errors: self.errors(),
            standard: self
                .profile
                .standard_fields()
                .then(|| self.standard_fields(task, task_confidence)),
            evidence: self
                .profile
                .evidence()
                .then(|| self.evidence_rows(limit))
                .flatten(),
            files: self.profile.evidence().then(|| self.file_rows()).flatten(),
            diagnostics: self.profile.diagnostics().then(|| Diagnostics {
                query: query.to_string(),
                max_tokens,
                limit_entities: limit,
                lexical_weight: self.ranking.map(|r| r.lexical_weight),
                confidence: sufficiency.confidence,
                coverage: sufficiency.coverage,
                sections: self
                    .bundles
                    .iter()
                    .map(|b| BundleRow {
                        entity: b.entity_id.clone(),
                        planned: b.planned.clone(),
                        included: b.included.clone(),
                        tokens: b.tokens,
                    })
                    .collect(),
            }),
        }
    }

    /// What a summary left out, when no bundle carries source.
    fn reduction_summary(&self) -> String {
        if self.bundles.is_empty() {
            return "no matching entity".to_string();
        }
        let omitted: usize = self.bundles.iter().map(|b| b.source_tokens_omitted).sum();
        format!(
            "summary of {} entit{}; {omitted} source tokens omitted (verbosity=standard adds source)",
            self.bundles.len(),
            if self.bundles.len() == 1 { "y" } else { "ies" }
        )
    }

    /// The ranking's problems, a lexical generation and an overlay not applied said as such.
    fn errors(&self) -> Vec<String> {
        let mut errors: Vec<String> = self.ranking.map(|r| r.errors.clone()).unwrap_or_default();
        if self.generation.manifest.kind == crate::store::GenerationKind::Lexical {
            errors.push("lexical generation: ranked without vectors".into());
        }
        if let Some(note) = self.generation.overlay_note() {
            errors.push(format!(
                "overlay not applied ({}): {}; {}",
                note.reason, note.detail, note.hint
            ));
        }
        errors
    }

    fn standard_fields(&self, task: TaskType, task_confidence: f64) -> StandardFields {
        StandardFields {
            task_type: task.as_str(),
            task_confidence: (task_confidence * 100.0).round() / 100.0,
            retrieval_mode: self.ranking.map_or(RetrievalMode::Exact, |r| r.mode),
            entities: self.bundles.iter().map(|b| b.entity_id.clone()).collect(),
            truncated: self.bundles.iter().any(|b| b.truncated),
        }
    }

    /// The ranked entities behind the answer (at least three), when it was ranked.
    fn evidence_rows(&self, limit: usize) -> Option<Vec<EvidenceRow>> {
        let ranking = self.ranking?;
        let rows = ranking
            .hits
            .iter()
            .take(limit.max(3))
            .enumerate()
            .map(|(i, h)| EvidenceRow {
                rank: i + 1,
                entity_id: h.entity_id.clone(),
                chunk_id: self.generation.chunks[h.chunk].id.clone(),
                score: round4(h.score),
                signals: h.evidence.clone(),
            })
            .collect();
        Some(rows)
    }

    /// The best-ranked files, when the ranking pooled any.
    fn file_rows(&self) -> Option<Vec<FileRow>> {
        let files: Vec<FileRow> = self
            .ranking?
            .files
            .iter()
            .take(EVIDENCE_FILES)
            .map(|f| FileRow {
                path: f.path.clone(),
                score: round4(f.score),
            })
            .collect();
        (!files.is_empty()).then_some(files)
    }
}

/// A score rounded to four decimals for a payload.
pub(super) fn round4(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

/// Ranked files listed with the evidence (verbose and up).
const EVIDENCE_FILES: usize = 5;

/// Tokens of lines as they are joined into a payload (0 for none).
pub(super) fn lines_tokens(lines: &[String]) -> usize {
    if lines.is_empty() {
        0
    } else {
        tokens::count(&lines.join("\n"))
    }
}
