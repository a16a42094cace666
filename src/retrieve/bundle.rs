//! Task-aware context: what an agent needs differs by task (explain, debug, extend, review,
//! locate, general). Each task type has a template — sections in priority order — and a
//! bundle per entity is packed into its token budget section by section; source that does
//! not fit is cut at a line (statement) boundary with a marker.

use serde::Serialize;

use super::profile::{ResponseProfile, TaskType};
use super::tokens;
use crate::graph::EdgeKind;
use crate::load::generation::LoadedGeneration;
use crate::parse::{Entity, EntityKind};
use crate::walk::is_test_path;

/// A part of an entity's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Header,
    Signature,
    Doc,
    Parent,
    Callers,
    Callees,
    Children,
    Source,
}

impl Section {
    /// How much a section contributes to answering (sufficiency coverage weight).
    pub fn weight(self) -> f64 {
        match self {
            Section::Header => 1.0,
            Section::Signature | Section::Doc => 2.0,
            Section::Source => 3.0,
            Section::Callers | Section::Callees => 1.0,
            Section::Parent | Section::Children => 0.5,
        }
    }
}

/// The sections of a task type, most important first.
pub fn template(task: TaskType) -> &'static [Section] {
    use Section::*;
    match task {
        TaskType::Explain => &[
            Header, Signature, Doc, Parent, Callees, Callers, Children, Source,
        ],
        TaskType::Debug => &[Header, Signature, Source, Callees, Callers, Doc, Parent],
        TaskType::Extend => &[
            Header, Signature, Doc, Children, Parent, Callers, Callees, Source,
        ],
        TaskType::Review => &[Header, Signature, Source, Doc, Callers, Callees, Parent],
        TaskType::Locate => &[Header, Signature, Doc, Parent, Callers],
        TaskType::General => &[
            Header, Signature, Doc, Parent, Callees, Callers, Children, Source,
        ],
    }
}

const RULES: &[(TaskType, &[&str])] = &[
    (
        TaskType::Debug,
        &[
            "error",
            "exception",
            "bug",
            "fail",
            "crash",
            "traceback",
            "panic",
            "broken",
            "wrong",
            "fix",
            "not working",
            "raises",
            "stack trace",
        ],
    ),
    (
        TaskType::Extend,
        &[
            "add ",
            "implement",
            "extend",
            "support for",
            "new ",
            "introduce",
            "feature",
            "allow",
        ],
    ),
    (
        TaskType::Review,
        &[
            "review", "audit", "risk", "security", "vulnerab", "smell", "refactor", "quality",
        ],
    ),
    (
        TaskType::Locate,
        &[
            "where",
            "find",
            "locate",
            "which file",
            "defined",
            "definition of",
        ],
    ),
    (
        TaskType::Explain,
        &[
            "how",
            "what",
            "explain",
            "why",
            "describe",
            "purpose",
            "understand",
            "work",
        ],
    ),
];

/// `auto`: the task type a query reads as, with a confidence in [0, 1].
pub fn classify(question: &super::question::Question) -> (TaskType, f64) {
    let lower = format!("{} ", question.text.to_lowercase());
    let mut best = (TaskType::General, 0usize);
    for (task, words) in RULES {
        let hits = words.iter().filter(|w| lower.contains(**w)).count();
        if hits > best.1 {
            best = (*task, hits);
        }
    }
    match best {
        (TaskType::General, _) if question.shape == super::question::QueryShape::Identifier => {
            (TaskType::Locate, 0.6)
        }
        (TaskType::General, _) => (TaskType::General, 0.3),
        (task, hits) => (task, (0.55 + 0.15 * hits as f64).min(0.95)),
    }
}

/// One entity's packed context.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub entity_id: String,
    pub text: String,
    pub tokens: usize,
    /// Sections the profile wanted that had content.
    pub planned: Vec<Section>,
    pub included: Vec<Section>,
    pub truncated: bool,
    pub source_included: bool,
    /// Source tokens the profile left out (summary-first), for the reduction summary.
    pub source_tokens_omitted: usize,
}

const MAX_NAMES: usize = 8;

/// Names listed at minimal verbosity (callers, callees, members), before `+N more`.
const MINIMAL_NAMES: usize = 4;

fn list_names(names: Vec<String>, profile: &ResponseProfile) -> String {
    let max = if profile.standard_fields() {
        MAX_NAMES
    } else {
        MINIMAL_NAMES
    };
    let total = names.len();
    let mut shown: Vec<String> = names.into_iter().take(max).collect();
    if total > max {
        shown.push(format!("+{} more", total - max));
    }
    shown.join(", ")
}

/// Names of related entities as one list writes them, in [`ListKey`] order: each other file's
/// path once, after the first name from it (`A.f (x/a.rs), A.g, B.h (x/b.rs)`); the entity's
/// own file goes unsaid.
struct NameList<'a> {
    generation: &'a LoadedGeneration,
    from_path: &'a str,
    said: std::collections::HashSet<&'a str>,
}

impl<'a> NameList<'a> {
    fn new(generation: &'a LoadedGeneration, from_path: &'a str) -> Self {
        NameList {
            generation,
            from_path,
            said: std::collections::HashSet::new(),
        }
    }

    /// `id`'s qualified name, with its path the first time that path comes up.
    fn name(&mut self, id: &str) -> String {
        match self.generation.entity(id) {
            Some(e) if e.path == self.from_path || !self.said.insert(e.path.as_str()) => {
                e.qualified_name.clone()
            }
            Some(e) => format!("{} ({})", e.qualified_name, e.path),
            None => id.to_string(),
        }
    }
}

/// Where a related entity stands in a list: the entity's own file first, then the others by
/// path, so that one file's names stand together; by qualified name within a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ListKey {
    in_other_file: bool,
    path: String,
    name: String,
    id: String,
}

impl ListKey {
    fn of(generation: &LoadedGeneration, id: &str, from_path: &str) -> ListKey {
        let (in_other_file, path, name) = match generation.entity(id) {
            Some(e) => (
                e.path != from_path,
                e.path.clone(),
                e.qualified_name.clone(),
            ),
            None => (true, String::new(), id.to_string()),
        };
        ListKey {
            in_other_file,
            path,
            name,
            id: id.to_string(),
        }
    }
}

fn render(
    generation: &LoadedGeneration,
    entity: &Entity,
    section: Section,
    profile: &ResponseProfile,
) -> Option<String> {
    let text = match section {
        Section::Header => format!(
            "## {} ({}, {}:{}-{})",
            entity.qualified_name,
            entity.kind.as_str(),
            entity.path,
            entity.span.start_line,
            entity.span.end_line
        ),
        Section::Signature => entity.signature.clone(),
        Section::Doc => {
            let doc = readable_doc(entity.doc.as_deref()?);
            if profile.full_docs() {
                doc
            } else {
                doc.split("\n\n").next().unwrap_or(&doc).to_string()
            }
        }
        Section::Parent => {
            let parent = generation.entity(entity.parent.as_deref()?)?;
            if parent.kind.is_file_level() {
                return None;
            }
            format!("in {} {}", flavour(parent), parent.qualified_name)
        }
        Section::Callees => {
            let mut targets = Vec::new();
            let mut unresolved = Vec::new();
            for edge in generation.outgoing(&entity.id, EdgeKind::Calls) {
                match &edge.target {
                    Some(t) => targets.push(ListKey::of(generation, t, &entity.path)),
                    None => unresolved.push(edge.target_name.clone()),
                }
            }
            targets.sort();
            targets.dedup();
            let mut names = NameList::new(generation, &entity.path);
            let resolved: Vec<String> = targets.iter().map(|key| names.name(&key.id)).collect();
            unresolved.sort();
            unresolved.dedup();
            if resolved.is_empty() && unresolved.is_empty() {
                return None;
            }
            let mut line = format!(
                "calls: {}",
                if resolved.is_empty() {
                    "-".into()
                } else {
                    list_names(resolved, profile)
                }
            );
            if !unresolved.is_empty() {
                line.push_str(&format!(
                    "; unresolved: {}",
                    list_names(unresolved, profile)
                ));
            }
            line
        }
        Section::Callers => {
            // Callers outside tests first: they show how the code is meant to be used.
            let mut ordered: Vec<(bool, ListKey, u32)> = generation
                .incoming(&entity.id, EdgeKind::Calls)
                .map(|e| {
                    let in_tests = generation
                        .entity(&e.source)
                        .is_some_and(|caller| is_test_path(&caller.path));
                    (
                        in_tests,
                        ListKey::of(generation, &e.source, &entity.path),
                        e.line,
                    )
                })
                .collect();
            ordered.sort();
            ordered.dedup();
            let mut names = NameList::new(generation, &entity.path);
            // A caller that calls it in several places is written once, with each line.
            let callers: Vec<String> = ordered
                .chunk_by(|a, b| a.1 == b.1)
                .map(|calls| {
                    let lines: Vec<String> = calls.iter().map(|(_, _, l)| l.to_string()).collect();
                    format!("{}:{}", names.name(&calls[0].1.id), lines.join(","))
                })
                .collect();
            if callers.is_empty() {
                let unresolved = generation.unresolved_calls_named(&entity.name);
                if unresolved == 0 || entity.kind.is_file_level() {
                    return None;
                }
                let calls = if unresolved == 1 {
                    "call uses"
                } else {
                    "calls use"
                };
                format!(
                    "called by: none resolved ({unresolved} unresolved {calls} the name `{}`)",
                    entity.name
                )
            } else {
                format!("called by: {}", list_names(callers, profile))
            }
        }
        Section::Children => {
            let members: Vec<String> = generation
                .outgoing(&entity.id, EdgeKind::Contains)
                .filter_map(|e| generation.entity(e.target.as_deref()?))
                .filter(|e| {
                    e.kind != EntityKind::Section
                        || entity.kind == EntityKind::Section
                        || entity.kind == EntityKind::Document
                })
                .map(|e| e.name.clone())
                .collect();
            if members.is_empty() {
                return None;
            }
            format!("members: {}", list_names(members, profile))
        }
        Section::Source => render_source(entity, &generation.source_of(&entity.id))?,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// Packs one entity into `budget` tokens following the task template and the profile.
pub fn build_bundle(
    generation: &LoadedGeneration,
    entity: &Entity,
    task: TaskType,
    profile: &ResponseProfile,
    budget: usize,
    focus: Option<&Focus>,
) -> Bundle {
    let mut bundle = Bundle {
        entity_id: entity.id.clone(),
        text: String::new(),
        tokens: 0,
        planned: Vec::new(),
        included: Vec::new(),
        truncated: false,
        source_included: false,
        source_tokens_omitted: 0,
    };
    let excerpt = focus
        .filter(|_| profile.include_source && profile.source_excerpt())
        .and_then(|focus| source_excerpt(generation, entity, focus));
    for &section in template(task) {
        if section == Section::Source && !profile.include_source {
            if let Some(source) = render(generation, entity, Section::Source, profile) {
                bundle.source_tokens_omitted = tokens::count(&source);
            }
            continue;
        }
        let rendered = match &excerpt {
            Some(excerpt) if section == Section::Source => Some(excerpt.clone()),
            _ => render(generation, entity, section, profile),
        };
        let Some(content) = rendered else {
            continue;
        };
        bundle.planned.push(section);
        // The excerpt to come already shows the signature or the doc: said once.
        if matches!(section, Section::Signature | Section::Doc)
            && let Some(excerpt) = &excerpt
            && (shows_every_line(excerpt, &content)
                || (section == Section::Signature && opens_with(excerpt, &content)))
            && tokens::count(&join(&bundle.text, excerpt)) <= budget
        {
            bundle.included.push(section);
            continue;
        }
        let candidate = join(&bundle.text, &content);
        let candidate_tokens = tokens::count(&candidate);
        if candidate_tokens <= budget {
            bundle.text = candidate;
            bundle.tokens = candidate_tokens;
            bundle.included.push(section);
            bundle.source_included |= section == Section::Source;
            continue;
        }
        bundle.truncated = true;
        if section == Section::Source {
            if let Some(cut) = truncated_source(&bundle.text, &content, budget) {
                bundle.tokens = tokens::count(&cut);
                bundle.text = cut;
                bundle.included.push(section);
                bundle.source_included = true;
            }
        } else if bundle.text.is_empty() {
            // Even the header is over budget: keep what fits of it.
            bundle.text = tokens::fit_chars(&content, budget);
            bundle.tokens = tokens::count(&bundle.text);
            if !bundle.text.is_empty() {
                bundle.included.push(section);
            }
        }
    }
    bundle
}

/// What a question points at inside an entity's source: its words and the lines its traceback
/// frames name.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    words: std::collections::HashSet<String>,
    /// `(written path, line)` of every frame.
    frames: Vec<(String, u32)>,
}

impl Focus {
    pub fn of(question: &super::question::Question) -> Focus {
        Focus {
            words: question.words.iter().cloned().collect(),
            frames: question
                .frames
                .iter()
                .map(|f| (f.path.replace('\\', "/"), f.line))
                .collect(),
        }
    }

    /// How far `line` is from the nearest line a frame names in `path` (None: no frame there).
    fn frame_distance(&self, path: &str, line: u32) -> Option<u32> {
        self.frames
            .iter()
            .filter(|(p, _)| p == path || p.ends_with(&format!("/{path}")))
            .map(|(_, l)| l.abs_diff(line))
            .min()
    }

    /// How strongly a source line is pointed at: a frame's line beats any word overlap, the
    /// code right around it comes next (a fix guards the failing line or handles what it
    /// raises), and the words of a comment or docstring line (`prose`) do not count: it
    /// restates the question's words and is rarely what a fix edits.
    fn weight(&self, path: &str, number: u32, line: &str, prose: bool) -> usize {
        let frame = match self.frame_distance(path, number) {
            Some(0) => 100,
            Some(1) if !prose && !line.trim().is_empty() => 50,
            _ => 0,
        };
        if prose {
            return frame;
        }
        let mut words = crate::text::search_words(line);
        words.sort();
        words.dedup();
        frame + words.iter().filter(|w| self.words.contains(*w)).count()
    }
}

/// What a definition is, as its language says it: a class's flavour when the grammar tells
/// it (`struct`, `trait`, `interface`), else its kind.
fn flavour(entity: &Entity) -> &str {
    match entity.subkind.as_deref() {
        Some(subkind)
            if entity.kind == EntityKind::Class && subkind != crate::parse::TEST_SUBKIND =>
        {
            subkind
        }
        _ => entity.kind.as_str(),
    }
}

static INLINE_DOC_TAG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\{@(?:code|link|linkplain|literal|value)\s+([^{}]*)\}").unwrap()
});

/// A doc as a reader wants it: Javadoc's inline tags (`{@code x}`, `{@link A#b}`) give their
/// text and HTML's escapes their characters (`&lt;T&gt;` is `<T>`). The stored doc, which
/// ranking reads, is left as written.
fn readable_doc(doc: &str) -> String {
    let doc = INLINE_DOC_TAG.replace_all(doc, "$1");
    [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(doc.into_owned(), |text, (escape, character)| {
        text.replace(escape, character)
    })
}

/// Which lines of a definition's source are comments or docstrings: lines opening with a
/// comment marker (`//`, `/*`, `*`, `# `, `-- `), and the lines of a triple-quoted string that
/// opens on a line of its own (Python's docstrings).
fn prose_lines(lines: &[&str]) -> Vec<bool> {
    let mut in_docstring = false;
    lines
        .iter()
        .map(|line| {
            let text = line.trim_start();
            let quotes = text.matches("\"\"\"").count() + text.matches("\'\'\'").count();
            let opens_with_string = text
                .trim_start_matches(crate::parse::STRING_PREFIXES)
                .starts_with(['"', '\'']);
            let opens = !in_docstring && quotes % 2 == 1 && opens_with_string;
            let prose =
                in_docstring || opens || (quotes >= 2 && opens_with_string) || is_comment(text);
            if quotes % 2 == 1 && (opens || in_docstring) {
                in_docstring = !in_docstring;
            }
            prose
        })
        .collect()
}

/// Whether a (left-trimmed) line opens with a comment marker.
fn is_comment(text: &str) -> bool {
    text.starts_with("//")
        || text.starts_with("/*")
        || text.starts_with('*')
        || text == "#"
        || text.starts_with("# ")
        || text.starts_with("#:")
        || text.starts_with("-- ")
}

/// Whether the excerpt's first line (the definition's first line) begins `signature`: the
/// excerpt already shows which definition this is.
fn opens_with(excerpt: &str, signature: &str) -> bool {
    excerpt
        .lines()
        .find_map(|line| line.split_once(": "))
        .map(|(_, code)| code.trim())
        .is_some_and(|first| !first.is_empty() && signature.trim().starts_with(first))
}

/// Whether every non-blank line of `content` is written in `excerpt`.
fn shows_every_line(excerpt: &str, content: &str) -> bool {
    content
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .all(|line| excerpt.contains(line))
}

/// Source lines an excerpt shows at most (besides the first line): 4 → 7 showed an edited
/// line in 10.1 % of the change descriptions' default answers instead of 7.7 % (lexical plane,
/// 2026-12-03), median answer 257 / 214 / 215 tokens on the three issue sets.
const EXCERPT_LINES: usize = 7;
/// Characters of one excerpt line shown.
const EXCERPT_LINE_CHARS: usize = 120;

/// The source floor at minimal verbosity: the entity's first line and the lines the question
/// points at most (frame lines, then code lines with the most question words; comments and
/// docstrings restate the question and are not what a fix edits), each with its line number, in
/// source order, gaps marked; the whole source is one `verbosity=standard` away.
fn source_excerpt(generation: &LoadedGeneration, entity: &Entity, focus: &Focus) -> Option<String> {
    let source = generation.source_of(&entity.id);
    let lines: Vec<&str> = source.lines().collect();
    if lines.is_empty() {
        return None;
    }
    let first = entity.span.start_line;
    let number = |i: usize| first + i as u32;
    if lines.len() <= EXCERPT_LINES + 1 {
        return render_source(entity, &source);
    }
    let prose = prose_lines(&lines);
    let mut scored: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, l)| (focus.weight(&entity.path, number(i), l, prose[i]), i))
        .filter(|(w, _)| *w > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut keep: Vec<usize> = std::iter::once(0)
        .chain(scored.into_iter().take(EXCERPT_LINES).map(|(_, i)| i))
        .collect();
    if keep.len() == 1 {
        keep.extend(1..=EXCERPT_LINES);
    }
    keep.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut previous: Option<usize> = None;
    for &i in &keep {
        if previous.is_some_and(|p| i > p + 1) {
            out.push("…".into());
        }
        out.push(format!(
            "{}: {}",
            number(i),
            crate::text::truncate_chars(lines[i], EXCERPT_LINE_CHARS)
        ));
        previous = Some(i);
    }
    let body = format!(
        "{}\n… [excerpt: {} of {} lines; verbosity=standard shows all]",
        out.join("\n"),
        keep.len(),
        lines.len()
    );
    render_source(entity, &body)
}

/// Source in a fence of its language; None when there is none.
fn render_source(entity: &Entity, body: &str) -> Option<String> {
    (!body.trim().is_empty()).then(|| format!("```{}\n{}\n```", entity.language, body))
}

fn join(text: &str, content: &str) -> String {
    if text.is_empty() {
        content.to_string()
    } else {
        format!("{text}\n{content}")
    }
}

/// The source cut at a line boundary so that `text` + source + marker fits `budget`.
fn truncated_source(text: &str, source: &str, budget: usize) -> Option<String> {
    let body = source.strip_suffix("\n```").unwrap_or(source);
    let total_lines = body.lines().count();
    let marker_for = |dropped: usize| format!("… [truncated: {dropped} more lines]\n```");
    let reserve = tokens::count(&join(text, &marker_for(total_lines))) + 2;
    let (kept, _) = tokens::fit_lines(body, budget.checked_sub(reserve)?);
    if kept.lines().count() <= 1 {
        return None; // only the fence opened: nothing of the source fits
    }
    let dropped = total_lines - kept.lines().count();
    let cut = join(text, &format!("{kept}\n{}", marker_for(dropped)));
    (tokens::count(&cut) <= budget).then_some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::question::Question;

    #[test]
    fn comments_and_docstrings_are_told_from_code() {
        let source = [
            "def reindl(ghi, dni):",
            "    r\"\"\"",
            "    Diffuse irradiance with Reindl's model.",
            "    \"\"\"",
            "    # the horizon brightening term",
            "    term = ghi / dni  # inline comments stay code",
            "    \"\"\"Not a docstring but a one-line string.\"\"\"",
            "    return term",
            "    // a C comment",
            "     * a block comment's line",
            "#include <stdio.h>",
        ];
        assert_eq!(
            prose_lines(&source),
            [
                false, true, true, true, true, false, true, false, true, true, false
            ]
        );
    }

    #[test]
    fn the_code_around_a_frames_line_outweighs_the_questions_words() {
        let focus = Focus::of(&Question::read(
            "Traceback (most recent call last):\n  File \"/site-packages/pkg/fmt.py\", line 10, in render\n    out = template.format(*values)\nTypeError: unsupported format string passed to NoneType.__format__",
        ));
        let path = "pkg/fmt.py";
        let wordy = focus.weight(
            path,
            3,
            "    values = template.format_values(render)",
            false,
        );
        assert!(focus.weight(path, 10, "    out = template.format(*values)", false) > wordy);
        for next_to_it in [9, 11] {
            assert!(focus.weight(path, next_to_it, "    except TypeError:", false) > wordy);
        }
        assert_eq!(focus.weight(path, 11, "    # comment", true), 0);
        assert_eq!(focus.weight(path, 11, "", false), 0);
        assert_eq!(focus.weight(path, 12, "    return out", false), 0);
        assert_eq!(focus.weight("other/fmt.py", 11, "    return out", false), 0);
    }

    #[test]
    fn javadoc_inline_tags_and_html_escapes_read_as_text() {
        assert_eq!(
            readable_doc("Returns {@code &lt;configuration&gt;} if {@link Plugin#apply} ran."),
            "Returns <configuration> if Plugin#apply ran."
        );
        assert_eq!(
            readable_doc("a &amp;&amp; b, {@literal List<T>}"),
            "a && b, List<T>"
        );
        assert_eq!(readable_doc("Plain {words} stay."), "Plain {words} stay.");
    }

    #[test]
    fn classification_reads_intent() {
        assert_eq!(
            classify(&Question::read("why does checkout raise an exception")).0,
            TaskType::Debug
        );
        assert_eq!(
            classify(&Question::read("add support for coupons")).0,
            TaskType::Extend
        );
        assert_eq!(
            classify(&Question::read("where is the discount defined")).0,
            TaskType::Locate
        );
        assert_eq!(
            classify(&Question::read("how does the cart compute its total")).0,
            TaskType::Explain
        );
        assert_eq!(
            classify(&Question::read("apply_discount")).0,
            TaskType::Locate
        );
        let (_, confidence) = classify(&Question::read("cart totals"));
        assert!(confidence < 0.5);
    }

    #[test]
    fn source_hungry_templates_put_source_early() {
        for task in [TaskType::Debug, TaskType::Review] {
            assert!(
                template(task)
                    .iter()
                    .position(|s| *s == Section::Source)
                    .unwrap()
                    <= 2
            );
        }
        assert!(!template(TaskType::Locate).contains(&Section::Source));
    }
}
