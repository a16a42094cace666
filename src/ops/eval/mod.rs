//! `knowcode eval`: evidence on the user's own repository. Tasks come from its git history
//! ([`mine`]); each is asked through the same code as `query` (the default answer with its
//! `also` pointers, and the whole ranking) and `semantic_search`, next to a BM25 baseline over
//! whole files and over definitions that shares the index's tokenizer ([`Bm25`]); the report
//! gives hit rates at file and entity level and what the answers cost in tokens. This module
//! reads the current generation and the working tree; it never builds, never writes the store
//! and never prints (the CLI renders the report and the progress).

pub mod mine;
pub mod score;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use self::mine::{IndexedTree, MineOptions, SkipReason, Task};
use self::score::{Scores, dedup_in_order, first_relevant, median};
use crate::error::KnowcodeError;
use crate::load::files::{Bm25, count_words, file_words};
use crate::load::generation::LoadedGeneration;
use crate::retrieve::RetrievalMode;
use crate::retrieve::{QueryRequest, Retriever, tokens};
use crate::text::search_words;

/// Chunks `semantic_search` is asked for per task.
const SEMANTIC_LIMIT: usize = 50;
/// Files and definitions the baseline ranks per task.
const BASELINE_LIMIT: usize = 50;
/// Files of the baseline's order an agent is assumed to read before giving up.
const BASELINE_READING_LIMIT: usize = 10;

/// What `knowcode eval` is asked for.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The repository's indexed folder (the working tree read for the baseline and tokens).
    pub root: PathBuf,
    pub mine: MineOptions,
}

/// The rankings compared, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranking {
    /// The default `query` answer (one entity) followed by its `also` pointers.
    Answer,
    /// Everything `query` ranked, best first.
    Query,
    /// `semantic_search`'s chunks.
    Semantic,
    /// BM25 over whole files (file level) and over definitions (entity level).
    Bm25,
}

impl Ranking {
    /// The ranking's name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Ranking::Answer => "answer",
            Ranking::Query => "query",
            Ranking::Semantic => "semantic",
            Ranking::Bm25 => "bm25",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Ranking::Answer => "knowcode answer + also",
            Ranking::Query => "knowcode query",
            Ranking::Semantic => "knowcode semantic_search",
            Ranking::Bm25 => "BM25 (files / definitions)",
        }
    }
}

/// One task's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    pub commit: String,
    /// The question asked: the commit message without trailers.
    pub query: String,
    pub gold_files: Vec<String>,
    pub gold_entities: usize,
    /// Per ranking, the 0-based rank of the first gold file (null: not in the list).
    pub file_rank: BTreeMap<Ranking, Option<usize>>,
    /// Per ranking, the 0-based rank of the first gold definition (absent without gold
    /// definitions).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub entity_rank: BTreeMap<Ranking, Option<usize>>,
    pub tokens: TaskTokens,
}

/// What one task costs an agent, in tokens.
#[derive(Debug, Clone, Serialize)]
pub struct TaskTokens {
    /// The default answer's payload.
    pub answer: usize,
    /// The answer plus the `also` pointers followed (each read as its definition's source)
    /// until one lands in a gold file; null when none does.
    pub to_first_relevant: Option<usize>,
    /// The gold files read whole.
    pub gold_files: usize,
    /// The baseline's files read whole in its order until a gold file; null when no gold file
    /// is among its first ten.
    pub baseline_reading: Option<usize>,
}

/// Token figures over all tasks (medians per task; `found` counts where a figure exists).
#[derive(Debug, Clone, Serialize)]
pub struct TokenSummary {
    pub answer_median: Option<usize>,
    pub to_first_relevant_median: Option<usize>,
    pub to_first_relevant_found: usize,
    pub gold_files_median: Option<usize>,
    pub baseline_reading_median: Option<usize>,
    pub baseline_reading_found: usize,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub ranking: Ranking,
    #[serde(flatten)]
    pub scores: Scores,
}

/// The whole report (`--json` prints it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub generation: String,
    /// `full` or `lexical`.
    pub generation_kind: String,
    /// The plane `query` ranked on for these tasks.
    pub retrieval_mode: RetrievalMode,
    pub head: String,
    pub commits_read: usize,
    /// Tasks asked for (`--tasks`).
    pub tasks_asked: usize,
    /// Why history stopped being read.
    pub stopped: Option<mine::Stop>,
    /// Set when fewer tasks than asked were found: the counts and what to try.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<String>,
    pub tasks_used: usize,
    pub skipped: BTreeMap<String, usize>,
    pub notes: Vec<String>,
    pub file_level: Vec<Row>,
    pub entity_level: Vec<Row>,
    pub tokens: TokenSummary,
    pub tasks: Vec<TaskResult>,
}

/// Mines the tasks, asks every ranking, and scores them. `progress(done, total)` is called
/// after each task.
pub async fn run(
    retriever: &Retriever,
    options: &EvalOptions,
    progress: &dyn Fn(usize, usize),
) -> Result<EvalReport, KnowcodeError> {
    let generation = retriever.generation().await?;
    let mined = mine::mine(
        &options.root,
        &options.mine,
        &IndexedTree::new(&generation.entities),
    )?;
    let mut baseline = Baseline::build(&options.root, &generation);
    let mut notes = vec![
        "the index reflects today's tree, not each commit's parent: gold files and definitions are \
         carried forward to it, and tasks whose gold file was mostly rewritten since are skipped"
            .to_string(),
    ];
    let mut semantic = generation.has_vectors() && !retriever.is_lexical_only();
    if !semantic {
        notes.push(
            "lexical generation or --no-embed: query ranks on the lexical plane and \
             semantic_search is not scored"
                .to_string(),
        );
    }
    let mut mode = RetrievalMode::Lexical;
    let mut results = Vec::with_capacity(mined.tasks.len());
    for (done, task) in mined.tasks.iter().enumerate() {
        let answer = retriever.answer(&QueryRequest::new(&task.query)).await?;
        mode = answer.mode;
        let semantic_hits = if semantic {
            match retriever
                .semantic_hits(&task.query, SEMANTIC_LIMIT, false)
                .await
            {
                Ok((hits, _)) => Some(hits),
                Err(e) => {
                    semantic = false;
                    notes.push(format!(
                        "semantic_search not scored: {} ({})",
                        e.message,
                        e.code.as_str()
                    ));
                    None
                }
            }
        } else {
            None
        };
        let mut lists: BTreeMap<Ranking, RankedLists> = BTreeMap::new();
        let answer_ids: Vec<String> = answer
            .entities
            .iter()
            .take(1)
            .map(|e| e.id.clone())
            .chain(answer.also.iter().cloned())
            .collect();
        lists.insert(
            Ranking::Answer,
            RankedLists::of_entities(&generation, answer_ids.clone()),
        );
        lists.insert(
            Ranking::Query,
            RankedLists::of_entities(&generation, answer.ranked.clone()),
        );
        if let Some(hits) = semantic_hits {
            lists.insert(
                Ranking::Semantic,
                RankedLists {
                    files: dedup_in_order(hits.iter().map(|h| h.file.clone())),
                    entities: dedup_in_order(hits.into_iter().map(|h| h.entity_id)),
                },
            );
        }
        let baseline_lists = baseline.rank(&task.query);
        let answer_tokens =
            tokens::count(&crate::retrieve::payload::to_json(&answer.payload).to_string());
        let tokens = TaskTokens {
            answer: answer_tokens,
            to_first_relevant: tokens_to_first_relevant(
                &generation,
                &answer_ids,
                answer_tokens,
                &task.gold_files,
            ),
            gold_files: task.gold_files.iter().map(|f| baseline.tokens(f)).sum(),
            baseline_reading: baseline.reading_cost(&baseline_lists.files, &task.gold_files),
        };
        lists.insert(Ranking::Bm25, baseline_lists);
        results.push(task_result(task, &lists, tokens));
        progress(done + 1, mined.tasks.len());
    }
    Ok(EvalReport {
        generation: generation.id.clone(),
        generation_kind: generation.manifest.kind.as_str().to_string(),
        retrieval_mode: mode,
        head: mined.head.clone(),
        commits_read: mined.commits_read,
        tasks_asked: options.mine.tasks,
        stopped: mined.stopped,
        shortfall: shortfall(&mined, &options.mine),
        tasks_used: results.len(),
        skipped: mined
            .skipped
            .iter()
            .map(|(reason, n)| (reason.as_str().to_string(), *n))
            .collect(),
        notes,
        file_level: rows(&results, |r| Some(&r.file_rank)),
        entity_level: rows(&results, |r| {
            (!r.entity_rank.is_empty()).then_some(&r.entity_rank)
        }),
        tokens: token_summary(&results),
        tasks: results,
    })
}

/// A ranking's answer to one task, as files and as entity ids, each once, best first.
struct RankedLists {
    files: Vec<String>,
    entities: Vec<String>,
}

impl RankedLists {
    fn of_entities(generation: &LoadedGeneration, ids: Vec<String>) -> RankedLists {
        let files = ids
            .iter()
            .filter_map(|id| generation.entity(id).map(|e| e.path.clone()));
        RankedLists {
            files: dedup_in_order(files),
            entities: dedup_in_order(ids),
        }
    }
}

fn task_result(
    task: &Task,
    lists: &BTreeMap<Ranking, RankedLists>,
    tokens: TaskTokens,
) -> TaskResult {
    let with_entities = !task.gold_entities.is_empty();
    TaskResult {
        commit: task.commit.clone(),
        query: task.query.clone(),
        gold_files: task.gold_files.clone(),
        gold_entities: task.gold_entities.len(),
        file_rank: lists
            .iter()
            .map(|(r, l)| (*r, first_relevant(&l.files, &task.gold_files)))
            .collect(),
        entity_rank: lists
            .iter()
            .filter(|_| with_entities)
            .map(|(r, l)| (*r, first_relevant(&l.entities, &task.gold_entities)))
            .collect(),
        tokens,
    }
}

/// One row per ranking present in the tasks `ranks_of` selects.
fn rows(
    results: &[TaskResult],
    ranks_of: impl Fn(&TaskResult) -> Option<&BTreeMap<Ranking, Option<usize>>>,
) -> Vec<Row> {
    let mut per_ranking: BTreeMap<Ranking, Vec<Option<usize>>> = BTreeMap::new();
    for ranks in results.iter().filter_map(ranks_of) {
        for (ranking, rank) in ranks {
            per_ranking.entry(*ranking).or_default().push(*rank);
        }
    }
    per_ranking
        .into_iter()
        .map(|(ranking, ranks)| Row {
            ranking,
            scores: Scores::of(&ranks),
        })
        .collect()
}

/// The answer's tokens, plus each followed pointer's definition, until a gold file.
fn tokens_to_first_relevant(
    generation: &LoadedGeneration,
    answer_ids: &[String],
    answer_tokens: usize,
    gold_files: &[String],
) -> Option<usize> {
    let mut spent = answer_tokens;
    for (i, id) in answer_ids.iter().enumerate() {
        let entity = generation.entity(id)?;
        if i > 0 {
            spent += tokens::count(&generation.source_of(id));
        }
        if gold_files.contains(&entity.path) {
            return Some(spent);
        }
    }
    None
}

fn token_summary(results: &[TaskResult]) -> TokenSummary {
    let collect = |f: &dyn Fn(&TaskTokens) -> Option<usize>| -> Vec<usize> {
        results.iter().filter_map(|r| f(&r.tokens)).collect()
    };
    let first = collect(&|t| t.to_first_relevant);
    let reading = collect(&|t| t.baseline_reading);
    TokenSummary {
        answer_median: median(&collect(&|t| Some(t.answer))),
        to_first_relevant_median: median(&first),
        to_first_relevant_found: first.len(),
        gold_files_median: median(&collect(&|t| Some(t.gold_files))),
        baseline_reading_median: median(&reading),
        baseline_reading_found: reading.len(),
    }
}

/// The baseline: BM25 over the indexed files as they are on disk (path words plus content)
/// and over definitions (qualified name plus source), with the index's tokenizer.
struct Baseline {
    files: Bm25,
    definitions: Bm25,
    root: PathBuf,
    token_counts: HashMap<String, usize>,
}

impl Baseline {
    fn build(root: &Path, generation: &LoadedGeneration) -> Baseline {
        let files = generation.files.paths().iter().filter_map(|path| {
            let text = std::fs::read(root.join(path)).ok()?;
            Some((
                path.clone(),
                file_words(path, [String::from_utf8_lossy(&text).as_ref()]),
            ))
        });
        let files = Bm25::build(files.collect::<Vec<_>>());
        let definitions = generation
            .entities
            .iter()
            .filter(|e| !e.kind.is_file_level() && !e.kind.is_prose())
            .map(|e| {
                let mut words = HashMap::new();
                count_words(&mut words, &e.qualified_name);
                count_words(&mut words, &generation.source_of(&e.id));
                (e.id.clone(), words)
            })
            .collect::<Vec<_>>();
        Baseline {
            files,
            definitions: Bm25::build(definitions),
            root: root.to_path_buf(),
            token_counts: HashMap::new(),
        }
    }

    fn rank(&self, query: &str) -> RankedLists {
        let words = search_words(query);
        let files = self.files.rank(&words, BASELINE_LIMIT);
        let definitions = self.definitions.rank(&words, BASELINE_LIMIT);
        RankedLists {
            files: files.into_iter().map(|(f, _)| f.to_string()).collect(),
            entities: definitions
                .into_iter()
                .map(|(id, _)| id.to_string())
                .collect(),
        }
    }

    /// Tokens of a file read whole from the working tree (0 when it cannot be read).
    fn tokens(&mut self, path: &str) -> usize {
        if let Some(&n) = self.token_counts.get(path) {
            return n;
        }
        let n = std::fs::read(self.root.join(path))
            .map(|bytes| tokens::count(&String::from_utf8_lossy(&bytes)))
            .unwrap_or(0);
        self.token_counts.insert(path.to_string(), n);
        n
    }

    /// Tokens of reading `files` whole in order up to the first gold one.
    fn reading_cost(&mut self, files: &[String], gold: &[String]) -> Option<usize> {
        let mut spent = 0;
        for file in files.iter().take(BASELINE_READING_LIMIT) {
            spent += self.tokens(file);
            if gold.contains(file) {
                return Some(spent);
            }
        }
        None
    }
}

/// The report as a terminal table.
/// What a report says first when history gave fewer tasks than asked: the counts, why
/// reading stopped, the largest skip reasons, and what to try.
fn shortfall(mined: &mine::Mined, options: &MineOptions) -> Option<String> {
    if mined.tasks.len() >= options.tasks {
        return None;
    }
    let (why, hint) = match mined.stopped {
        Some(mine::Stop::CommitLimit) => (
            format!("the --commits limit ({}) was reached", options.commits),
            "raise --commits to read further back",
        ),
        Some(mine::Stop::Since) => (
            "the next commit is older than --since".to_string(),
            "an earlier --since reads further back",
        ),
        Some(mine::Stop::TimeLimit) => (
            format!("reading stopped after {} s", options.time_limit.as_secs()),
            "a narrower --since or a smaller --commits bound finishes sooner",
        ),
        _ => (
            "the whole history was read".to_string(),
            "a longer history (or one that describes its changes in commit messages or pull requests) gives more",
        ),
    };
    let mut skipped: Vec<(&SkipReason, &usize)> = mined.skipped.iter().collect();
    skipped.sort_by(|a, b| b.1.cmp(a.1));
    let skipped: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|(reason, n)| format!("{} {n}", reason.as_str()))
        .collect();
    Some(format!(
        "found {} of the {} tasks asked in {} commits: {why} (most skipped: {}); {hint}",
        mined.tasks.len(),
        options.tasks,
        mined.commits_read,
        if skipped.is_empty() {
            "none".to_string()
        } else {
            skipped.join(", ")
        },
    ))
}

pub fn table(report: &EvalReport) -> String {
    let mut out = report
        .shortfall
        .as_ref()
        .map(|s| format!("FEWER TASKS THAN ASKED: {s}\n"))
        .unwrap_or_default();
    out += &format!(
        "knowcode eval: {} tasks from {} commits (generation {}, {}; query on the {} plane)\n",
        report.tasks_used,
        report.commits_read,
        report.generation,
        report.generation_kind,
        retrieval_mode_name(report.retrieval_mode),
    );
    if !report.skipped.is_empty() {
        let skipped: Vec<String> = report
            .skipped
            .iter()
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        out += &format!("skipped: {}\n", skipped.join(", "));
    }
    for note in &report.notes {
        out += &format!("note: {note}\n");
    }
    for (title, rows) in [
        ("file level", &report.file_level),
        ("entity level", &report.entity_level),
    ] {
        let tasks = rows.first().map_or(0, |r| r.scores.tasks);
        out += &format!(
            "\n{title} ({tasks} tasks)\n  {:<28} {:>6} {:>6} {:>6} {:>7} {:>6}\n",
            "", "Acc@1", "Acc@3", "Acc@5", "Acc@10", "MRR"
        );
        for row in rows {
            let s = &row.scores;
            out += &format!(
                "  {:<28} {:>6.1} {:>6.1} {:>6.1} {:>7.1} {:>6.3}\n",
                row.ranking.label(),
                s.acc_at_1,
                s.acc_at_3,
                s.acc_at_5,
                s.acc_at_10,
                s.mrr
            );
        }
    }
    let t = &report.tokens;
    let figure = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
    out += &format!(
        "\ntokens (median per task)\n  default answer                      {:>8}\n  \
         answer + pointers to a gold file    {:>8}  (reached in {} of {})\n  \
         gold files read whole               {:>8}\n  \
         BM25's files read until a gold one  {:>8}  (reached in {} of {} within {} files)\n",
        figure(t.answer_median),
        figure(t.to_first_relevant_median),
        t.to_first_relevant_found,
        report.tasks_used,
        figure(t.gold_files_median),
        figure(t.baseline_reading_median),
        t.baseline_reading_found,
        report.tasks_used,
        BASELINE_READING_LIMIT,
    );
    out
}

fn retrieval_mode_name(mode: RetrievalMode) -> &'static str {
    match mode {
        RetrievalMode::Hybrid => "vector and lexical",
        RetrievalMode::Lexical | RetrievalMode::Exact => "lexical",
    }
}

/// `YYYY-MM-DD` (UTC midnight) as seconds since the epoch.
pub fn parse_date(text: &str) -> Result<i64, KnowcodeError> {
    let invalid = || KnowcodeError::invalid_argument("since", "must be a date as YYYY-MM-DD");
    let mut parts = text.trim().splitn(3, '-').map(|p| p.parse::<i64>());
    let (Some(Ok(year)), Some(Ok(month)), Some(Ok(day))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(invalid());
    }
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_to_utc_midnight() {
        assert_eq!(parse_date("1970-01-01").unwrap(), 0);
        assert_eq!(parse_date("2000-02-29").unwrap(), 951_782_400);
        assert!(parse_date("2026-13-01").is_err());
        assert!(parse_date("yesterday").is_err());
    }
}
