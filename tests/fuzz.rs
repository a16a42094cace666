//! Fuzzing parse → graph → chunk with proptest, for every language: arbitrary bytes, and
//! fixture files mutated (bytes spliced in, cut, duplicated). Nothing may panic, and what
//! comes out must stay consistent (spans inside the file, chunks of known entities, edges
//! from known entities). `scripts/fuzz SECONDS` runs this with many more cases and fresh
//! seeds; failures proptest finds are kept in `tests/fuzz.proptest-regressions` and replayed
//! first on every run, and inputs saved in `tests/fuzz-regressions/` are replayed by
//! `saved_crashing_inputs_stay_fixed`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use knowcode::parse::{self, languages};
use knowcode::walk::{FileState, SourceFile};
use proptest::prelude::*;

/// One representative extension per parser (Markdown included).
fn extensions() -> Vec<&'static str> {
    languages::LANGUAGES
        .iter()
        .map(|spec| spec.extensions[0])
        .collect()
}

/// Every fixture file a parser claims: the seeds mutations start from.
fn seed_files() -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut paths,
    );
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            languages::for_path(&name)?;
            Some((name, std::fs::read(&p).ok()?))
        })
        .collect()
}

/// Runs the pipeline's pure stages on one file and checks what they produce.
fn run_pipeline(name: &str, bytes: &[u8]) {
    let Some(language) = languages::for_path(name) else {
        panic!("no parser for {name}");
    };
    let (text, lossy) = match String::from_utf8(bytes.to_vec()) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    };
    let file = SourceFile {
        rel_path: format!("fuzz/{name}"),
        text,
        state: FileState {
            size: bytes.len() as u64,
            mtime_ns: 0,
            content_hash: None,
        },
        lossy,
    };
    let parsed = parse::parse_file(file, language);
    let text_len = parsed.text.len();
    let lines = parsed.line_count() as u32;
    let ids: HashSet<String> = parsed.entities.iter().map(|e| e.id.clone()).collect();
    for entity in &parsed.entities {
        assert!(entity.span.start_byte <= entity.span.end_byte, "{entity:?}");
        assert!(entity.span.end_byte <= text_len, "{entity:?}");
        assert!(entity.span.end_line <= lines + 1, "{entity:?}");
    }
    let files = [parsed];
    let graph = knowcode::graph::build(&files);
    for edge in &graph.edges {
        assert!(ids.contains(&edge.source), "{edge:?}");
    }
    let chunks = knowcode::chunk::chunk_all(&files, 512);
    for chunk in &chunks {
        assert!(ids.contains(&chunk.entity_id), "{chunk:?}");
        assert!(chunk.start_line <= chunk.end_line, "{chunk:?}");
        assert!(chunk.end_line <= lines + 1, "{chunk:?}");
    }
}

/// An edit applied to a seed file.
#[derive(Debug, Clone)]
enum Mutation {
    Insert(f64, Vec<u8>),
    Cut(f64, f64),
    Duplicate(f64, f64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let noise = prop_oneof![
        proptest::collection::vec(any::<u8>(), 1..40),
        proptest::sample::select(vec![
            b"{".to_vec(),
            b"}".to_vec(),
            b"(".to_vec(),
            b"\"\"\"".to_vec(),
            b"/*".to_vec(),
            b"\n    def ".to_vec(),
            b"class ".to_vec(),
            b"fn ".to_vec(),
            b"\xff\xfe".to_vec(),
            b"\0".to_vec(),
            b"\r\n".to_vec(),
            b"```".to_vec(),
        ]),
    ];
    prop_oneof![
        (0.0..1.0f64, noise).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (0.0..1.0f64, 0.0..0.3f64).prop_map(|(at, len)| Mutation::Cut(at, len)),
        (0.0..1.0f64, 0.0..0.3f64).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let at = |f: f64, len: usize| ((f * len as f64) as usize).min(len);
        match m {
            Mutation::Insert(f, noise) => {
                let i = at(*f, bytes.len());
                bytes.splice(i..i, noise.iter().copied());
            }
            Mutation::Cut(f, l) => {
                let i = at(*f, bytes.len());
                let j = (i + at(*l, bytes.len())).min(bytes.len());
                bytes.drain(i..j);
            }
            Mutation::Duplicate(f, l) => {
                let i = at(*f, bytes.len());
                let j = (i + at(*l, bytes.len())).min(bytes.len());
                let copy = bytes[i..j].to_vec();
                bytes.splice(j..j, copy);
            }
        }
    }
    bytes
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_break_the_pipeline(
        ext in proptest::sample::select(extensions()),
        bytes in proptest::collection::vec(any::<u8>(), 0..3000),
    ) {
        run_pipeline(&format!("input.{ext}"), &bytes);
    }

    #[test]
    fn mutated_source_never_breaks_the_pipeline(
        seed in proptest::sample::select(seed_files()),
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        let (name, bytes) = seed;
        run_pipeline(&name, &apply(bytes, &mutations));
    }
}

/// Inputs that once broke a stage, saved as `<anything>.<ext>` files.
#[test]
fn saved_crashing_inputs_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if languages::for_path(&name).is_some() {
            run_pipeline(&name, &std::fs::read(entry.path()).unwrap());
            replayed += 1;
        }
    }
    assert!(replayed > 0, "tests/fuzz-regressions holds saved inputs");
}
