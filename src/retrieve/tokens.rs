//! The token counter: the one place tokens are counted (cl100k, via tiktoken-rs). Budgets,
//! `total_tokens` and truncation all answer to it.

/// Exact token count of `text`.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// The longest prefix of `text` made of whole lines that fits in `budget` tokens, and how
/// many lines were left out.
pub fn fit_lines(text: &str, budget: usize) -> (String, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let (mut lo, mut hi) = (0usize, lines.len());
    // Binary search on the number of kept lines (token count grows with lines).
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count(&lines[..mid].join("\n")) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lines[..lo].join("\n"), lines.len() - lo)
}

/// Cuts `text` to at most `budget` tokens on a char boundary (last resort for one long line).
pub fn fit_chars(text: &str, budget: usize) -> String {
    if count(text) <= budget {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count(&chars[..mid].iter().collect::<String>()) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    chars[..lo].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
    }

    #[test]
    fn fit_lines_keeps_whole_lines_within_budget() {
        let text = (0..50)
            .map(|i| format!("let value_{i} = compute({i});"))
            .collect::<Vec<_>>()
            .join("\n");
        let (kept, dropped) = fit_lines(&text, 40);
        assert!(count(&kept) <= 40);
        assert!(dropped > 0);
        assert!(kept.lines().all(|l| l.ends_with(';')));
    }

    #[test]
    fn fit_chars_respects_budget() {
        let cut = fit_chars(&"word ".repeat(100), 10);
        assert!(count(&cut) <= 10);
        assert!(!cut.is_empty());
    }
}
