//! Scoring for `knowcode eval`: where the first relevant item sits in a ranked list, and the
//! usual figures over many tasks (Acc@k, MRR, medians). Pure arithmetic on lists; it knows
//! nothing of git, the index or tokens.

use serde::Serialize;

/// The cut-offs reported.
pub const CUTOFFS: [usize; 4] = [1, 3, 5, 10];

/// Items in first-seen order, each once.
pub fn dedup_in_order(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// The 0-based rank of the first item of `ranked` that is in `gold`.
pub fn first_relevant(ranked: &[String], gold: &[String]) -> Option<usize> {
    ranked.iter().position(|item| gold.contains(item))
}

/// One ranking's figures over a set of tasks: Acc@k in percent, MRR over the whole list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    pub tasks: usize,
    pub acc_at_1: f64,
    pub acc_at_3: f64,
    pub acc_at_5: f64,
    pub acc_at_10: f64,
    pub mrr: f64,
}

impl Scores {
    /// Figures from each task's rank of its first relevant item (None: not in the list).
    pub fn of(ranks: &[Option<usize>]) -> Scores {
        let tasks = ranks.len();
        let share = |k: usize| {
            let hits = ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count();
            round(100.0 * hits as f64 / tasks.max(1) as f64, 1)
        };
        let reciprocal: f64 = ranks.iter().flatten().map(|&r| 1.0 / (r + 1) as f64).sum();
        Scores {
            tasks,
            acc_at_1: share(CUTOFFS[0]),
            acc_at_3: share(CUTOFFS[1]),
            acc_at_5: share(CUTOFFS[2]),
            acc_at_10: share(CUTOFFS[3]),
            mrr: round(reciprocal / tasks.max(1) as f64, 3),
        }
    }
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

/// The median of some counts (the lower middle for an even number), None for none.
pub fn median(values: &[usize]) -> Option<usize> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().saturating_sub(1) / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_and_mrr_follow_the_first_relevant_rank() {
        // Ranks 0, 2, 7 and a miss.
        let scores = Scores::of(&[Some(0), Some(2), Some(7), None]);
        assert_eq!(scores.tasks, 4);
        assert_eq!(scores.acc_at_1, 25.0);
        assert_eq!(scores.acc_at_3, 50.0);
        assert_eq!(scores.acc_at_5, 50.0);
        assert_eq!(scores.acc_at_10, 75.0);
        // (1 + 1/3 + 1/8) / 4 = 0.3646
        assert_eq!(scores.mrr, 0.365);
        assert_eq!(Scores::of(&[]).acc_at_1, 0.0);
    }

    #[test]
    fn lists_deduplicate_in_order_and_find_the_first_gold_item() {
        let files = dedup_in_order(["a", "b", "a", "c"].map(String::from));
        assert_eq!(files, ["a", "b", "c"]);
        assert_eq!(first_relevant(&files, &["c".into(), "b".into()]), Some(1));
        assert_eq!(first_relevant(&files, &["z".into()]), None);
    }

    #[test]
    fn medians_take_the_lower_middle() {
        assert_eq!(median(&[5, 1, 3]), Some(3));
        assert_eq!(median(&[4, 1, 3, 2]), Some(2));
        assert_eq!(median(&[]), None);
    }
}
