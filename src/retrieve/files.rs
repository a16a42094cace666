//! Evidence per file: an in-memory BM25 index over whole files (every chunk's words plus the
//! path's words), built once when a generation is loaded. A long question names many things;
//! the file where most of them meet is likelier than any single chunk says, so the ranking
//! turns this file order into a prior on the entities of each file. This module only scores
//! files from the chunks it is given; it never reads the disk or the LanceDB tables.

use std::collections::HashMap;

use super::generation::ChunkRow;
use crate::text::search_words;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;

/// Whole-file term statistics of one generation.
#[derive(Debug, Default)]
pub struct FileIndex {
    paths: Vec<String>,
    lengths: Vec<u32>,
    average_length: f64,
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Files made only of prose (Markdown sections, documents).
    prose: std::collections::HashSet<String>,
    /// File name without its extension → the files of that name (indices into `paths`).
    by_stem: HashMap<String, Vec<u32>>,
}

impl FileIndex {
    /// Indexes the chunks' texts by file (a chunk's words count for its file; the path's
    /// words are added once per file).
    pub fn build(chunks: &[ChunkRow]) -> FileIndex {
        let mut file_of: HashMap<&str, u32> = HashMap::new();
        let mut counts: Vec<HashMap<String, u32>> = Vec::new();
        let mut index = FileIndex::default();
        let mut only_prose: Vec<bool> = Vec::new();
        for chunk in chunks {
            let file = *file_of.entry(chunk.path.as_str()).or_insert_with(|| {
                index.paths.push(chunk.path.clone());
                only_prose.push(true);
                let mut words = HashMap::new();
                for word in search_words(&path_words(&chunk.path)) {
                    *words.entry(word).or_default() += 1;
                }
                counts.push(words);
                (index.paths.len() - 1) as u32
            });
            only_prose[file as usize] &= chunk.kind.is_prose();
            let words = &mut counts[file as usize];
            for word in search_words(&chunk.text) {
                *words.entry(word).or_default() += 1;
            }
        }
        for (file, words) in counts.into_iter().enumerate() {
            index.lengths.push(words.values().sum());
            for (word, tf) in words {
                index
                    .postings
                    .entry(word)
                    .or_default()
                    .push((file as u32, tf));
            }
        }
        for (file, path) in index.paths.iter().enumerate() {
            if only_prose[file] {
                index.prose.insert(path.clone());
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            if let Some((stem, _)) = name.rsplit_once('.') {
                index
                    .by_stem
                    .entry(stem.to_string())
                    .or_default()
                    .push(file as u32);
            }
        }
        let total: u64 = index.lengths.iter().map(|&l| u64::from(l)).sum();
        index.average_length = total as f64 / index.paths.len().max(1) as f64;
        index
    }

    /// Files by BM25 over the question's words (each distinct word once), best first, ties by
    /// path; at most `limit`, only files with a positive score.
    pub fn rank(&self, words: &[String], limit: usize) -> Vec<(&str, f64)> {
        let mut distinct: Vec<&String> = words.iter().collect();
        distinct.sort();
        distinct.dedup();
        let files = self.paths.len() as f64;
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for word in distinct {
            let Some(postings) = self.postings.get(word.as_str()) else {
                continue;
            };
            let df = postings.len() as f64;
            let idf = (1.0 + (files - df + 0.5) / (df + 0.5)).ln();
            for &(file, tf) in postings {
                let tf = f64::from(tf);
                let length = f64::from(self.lengths[file as usize]);
                let norm = K1 * (1.0 - B + B * length / self.average_length.max(1.0));
                *scores.entry(file).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(&str, f64)> = scores
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(f, s)| (self.paths[f as usize].as_str(), s))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        ranked.truncate(limit);
        ranked
    }

    /// Whether the file holds only prose (no definitions, no module code).
    pub fn is_prose(&self, path: &str) -> bool {
        self.prose.contains(path)
    }

    /// The files whose name without its extension is `stem` (`L031` → `rules/L031.py`).
    pub fn named<'a>(&'a self, stem: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.by_stem
            .get(stem)
            .into_iter()
            .flatten()
            .map(|&file| self.paths[file as usize].as_str())
    }

    /// Every indexed file path, in first-seen order.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }
}

/// A path read as words: `src/pvlib/tools.py` → `src pvlib tools py`.
fn path_words(path: &str) -> String {
    path.replace(['/', '.', '-'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::EntityKind;

    fn chunk(path: &str, text: &str) -> ChunkRow {
        ChunkRow {
            id: format!("{path}#0"),
            entity_id: path.to_string(),
            path: path.to_string(),
            kind: EntityKind::Function,
            start_line: 1,
            end_line: 1,
            part: 0,
            text: text.to_string(),
        }
    }

    #[test]
    fn the_file_where_the_words_meet_ranks_first_and_path_words_count() {
        let index = FileIndex::build(&[
            chunk(
                "pkg/tools.py",
                "def golden_section(lower, upper): iterations",
            ),
            chunk("pkg/tools.py", "def bounds(lower, upper): pass"),
            chunk("pkg/other.py", "def lower(): pass"),
            chunk("pkg/io.py", "def read(): pass"),
        ]);
        let words = search_words("golden section search with equal upper and lower bounds");
        let ranked = index.rank(&words, 10);
        assert_eq!(ranked[0].0, "pkg/tools.py");
        assert_eq!(ranked.len(), 2, "{ranked:?}");
        assert_eq!(index.rank(&search_words("io"), 10)[0].0, "pkg/io.py");
        assert!(index.rank(&search_words("nothing matches"), 10).is_empty());
    }
}
