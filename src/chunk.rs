//! Stage 4, chunk: cut entity-aligned chunks. An entity's chunk is its own text — a class
//! stops at its members, which appear only as their signature lines — and long bodies are
//! split at statement boundaries with a one-statement overlap. Each file also gets a header
//! chunk (module doc + imports in the language's own syntax) and, when the file has code
//! outside its definitions (tables, constants, registrations, a script's body), module-code
//! chunks of that code; Markdown is cut by section; a Rust `impl` block becomes an outline
//! chunk of its type. Every chunk carries an embedding text (path and qualified name as plain
//! words, the doc written above the definition on its first part, then the text), a
//! code-aware search text (a structural header `path | name | kind` plus the chunk's own
//! words, identifiers split) and a content hash of the embedding text that decides vector
//! reuse. Each definition also has a short signature view, embedded separately. Pure: no I/O,
//! no model.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use std::collections::HashMap;

use crate::parse::{Entity, EntityKind, ParsedFile, Span};
use crate::text::{code_search_text, content_hash, split_identifier, truncate_chars};

/// Characters of the embedding text kept (the model truncates at `max_length` tokens anyway;
/// this bounds tokenizer work on huge chunks).
const MAX_EMBED_CHARS: usize = 2_400;
/// Rough characters per token, for splitting decisions only (budgets use a real tokenizer).
pub const CHARS_PER_TOKEN: usize = 4;

/// A unit of retrieval and embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// `<entity id>#<part>`, or `<path>#header` for a file header.
    pub id: String,
    pub entity_id: String,
    pub path: String,
    pub qualified_name: String,
    pub kind: EntityKind,
    pub language: String,
    pub start_line: u32,
    pub end_line: u32,
    pub part: u32,
    /// The source shown to an agent.
    pub text: String,
    /// What the model embeds: path and qualified name as words, the doc above the definition
    /// (first part only), then the text — cut at a character bound.
    pub embed_text: String,
    /// The code-aware full-text column (identifiers split).
    pub search_text: String,
    /// Hash of `embed_text`: equal hashes reuse the previous generation's vector.
    pub content_hash: String,
}

/// Chunks every file in parallel; output in file order.
pub fn chunk_all(files: &[ParsedFile], max_chunk_tokens: usize) -> Vec<Chunk> {
    files
        .par_iter()
        .flat_map_iter(|file| chunk_file(file, max_chunk_tokens))
        .collect()
}

/// The chunks of one file: its header, then each entity's own text in source order.
pub fn chunk_file(file: &ParsedFile, max_chunk_tokens: usize) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    if let Some(header) = header_chunk(file) {
        chunks.push(header);
    }
    for (index, entity) in file.entities.iter().enumerate() {
        let (text, collapsed) = match entity.kind {
            EntityKind::Document => preamble(file),
            // A text file is cut at its blank-line blocks (the entity's split lines).
            EntityKind::Text => (file.text.clone(), false),
            EntityKind::Module => continue,
            _ => own_text(file, index),
        };
        if text.trim().is_empty() {
            continue;
        }
        // Collapsed members break the line mapping: such a chunk stays whole and reports
        // the entity's own span.
        let pieces = if collapsed {
            vec![(text, entity.span.start_line, entity.span.end_line)]
        } else {
            split_pieces(&text, entity.span.start_line, entity, max_chunk_tokens)
        };
        for (part, (piece, first_line, last_line)) in pieces.into_iter().enumerate() {
            chunks.push(make_chunk(
                entity,
                part as u32,
                piece,
                first_line,
                last_line,
            ));
        }
    }
    let outlines = container_chunks(file, &chunks);
    chunks.extend(outlines);
    chunks.extend(module_code_chunks(file, max_chunk_tokens));
    chunks
}

/// Module code shorter than this many non-blank characters is not worth a chunk (a logger,
/// `__all__`, a main guard).
const MIN_MODULE_CODE_CHARS: usize = 40;

/// The file's own code outside its definitions, imports, module doc and comments —
/// keyword tables, constants, registrations, a setup script's call — in pieces of at most
/// the chunk budget. Gaps where definitions were are marked `…`. Without these chunks such
/// code is in no chunk at all: neither searchable nor part of its file's evidence.
fn module_code_chunks(file: &ParsedFile, max_chunk_tokens: usize) -> Vec<Chunk> {
    let Some(module) = file
        .entities
        .first()
        .filter(|m| m.kind == EntityKind::Module)
    else {
        return Vec::new();
    };
    let lines: Vec<&str> = file.text.lines().collect();
    let kept = module_code_lines(file, &lines);
    let code_chars: usize = kept
        .iter()
        .map(|&i| lines[i].chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    if code_chars < MIN_MODULE_CODE_CHARS {
        return Vec::new();
    }
    let kept_lines: Vec<&str> = kept.iter().map(|&i| lines[i]).collect();
    let cuts = line_window_cuts(&kept_lines, max_chunk_tokens * CHARS_PER_TOKEN);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts)
        .chain(std::iter::once(kept.len()))
        .collect();
    bounds
        .windows(2)
        .map(|window| &kept[window[0]..window[1]])
        .enumerate()
        .map(|(n, piece)| {
            let mut text = String::new();
            for (k, &i) in piece.iter().enumerate() {
                if k > 0 && piece[k - 1] + 1 != i {
                    text.push_str("…\n");
                }
                text.push_str(lines[i]);
                text.push('\n');
            }
            let first = piece[0] as u32 + 1;
            let last = *piece.last().expect("pieces are not empty") as u32 + 1;
            make_chunk(module, n as u32 + 1, text, first, last)
        })
        .collect()
}

/// Indices (0-based) of the code lines no definition, container, import or module doc
/// covers.
fn module_code_lines(file: &ParsedFile, lines: &[&str]) -> Vec<usize> {
    let mut covered = vec![false; lines.len()];
    let mut cover = |first: u32, last: u32| {
        for line in first.max(1)..=last.min(lines.len() as u32) {
            covered[line as usize - 1] = true;
        }
    };
    for entity in file.entities.iter().skip(1) {
        cover(entity.span.start_line, entity.span.end_line);
    }
    for span in &file.containers {
        cover(span.start_line, span.end_line);
    }
    for import in &file.imports {
        cover(import.line, import.end_line);
    }
    if let Some((first, last)) = file
        .entities
        .first()
        .and_then(|m| m.doc.as_deref())
        .and_then(|doc| doc_lines(lines, doc))
    {
        cover(first, last);
    }
    (0..lines.len())
        .filter(|&i| !covered[i] && is_code_line(lines[i].trim()))
        .collect()
}

/// Whether a line outside definitions says something: not blank, not a comment (licences,
/// the docs of the definitions that follow), not only a package, namespace or file marker or
/// punctuation.
fn is_code_line(trimmed: &str) -> bool {
    const COMMENTS: [&str; 6] = ["//", "#", "/*", "*", "--", ";"];
    const MARKERS: [&str; 5] = ["package ", "namespace ", "import (", "<?php", "?>"];
    let says_nothing = trimmed.is_empty()
        || COMMENTS.iter().any(|m| trimmed.starts_with(m))
        || MARKERS.iter().any(|m| trimmed.starts_with(m))
        || (trimmed.starts_with("mod ") && trimmed.ends_with(';'))
        || trimmed == "end"
        || trimmed.chars().all(|c| "{}()[];,".contains(c));
    !says_nothing
}

/// The 1-based lines where the module doc is written: from the first line holding its first
/// line to the next holding its last.
fn doc_lines(lines: &[&str], doc: &str) -> Option<(u32, u32)> {
    let first_text = doc.lines().map(str::trim).find(|l| !l.is_empty())?;
    let last_text = doc.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let start = lines.iter().position(|l| l.contains(first_text))?;
    let end = start + lines[start..].iter().position(|l| l.contains(last_text))?;
    // Past the closing quote of a Python docstring.
    let closing = lines[end..]
        .iter()
        .take(2)
        .position(|l| l.trim_end().ends_with("\"\"\"") || l.trim_end().ends_with("'''"))
        .map_or(end, |k| end + k);
    Some((start as u32 + 1, closing as u32 + 1))
}

fn structural_header(path: &str, qualified_name: &str, kind: EntityKind) -> String {
    format!("{path} | {qualified_name} | {}", kind.as_str())
}

fn make_chunk(entity: &Entity, part: u32, text: String, start_line: u32, end_line: u32) -> Chunk {
    let header = structural_header(&entity.path, &entity.qualified_name, entity.kind);
    let doc_outside_text = entity
        .doc
        .as_deref()
        .filter(|d| !text.contains(d.lines().next().unwrap_or(d)));
    // The model reads plain words best: path and name, no separators or kind labels.
    let mut embed = format!("{} {}", entity.path, entity.qualified_name);
    if part == 0
        && let Some(doc) = doc_outside_text
    {
        embed.push('\n');
        embed.push_str(doc);
    }
    embed.push('\n');
    embed.push_str(&text);
    let embed_text = truncate_chars(&embed, MAX_EMBED_CHARS);
    // The lexical column is the chunk's own words (path, name, code and any docstring inside
    // it); docs written above a definition are left to the embedding, so other entities'
    // docs do not drown a definition's own name and body in full-text ranking.
    let search_source = format!("{header}\n{text}");
    Chunk {
        id: format!("{}#{part}", entity.id),
        entity_id: entity.id.clone(),
        path: entity.path.clone(),
        qualified_name: entity.qualified_name.clone(),
        kind: entity.kind,
        language: entity.language.clone(),
        start_line,
        end_line,
        part,
        content_hash: content_hash(&[&embed_text]),
        search_text: code_search_text(&search_source),
        embed_text,
        text,
    }
}

/// The short text embedded for a definition's signature view: its qualified name as words and
/// its signature line (`command mark flag required\nfunc (c *Command) MarkFlagRequired(name
/// string) error`). A one-sentence description of what a definition does matches this view
/// better than the body: as a third ranking leg it added 4 points of mean R@5 on the benchmark.
/// None for files, documents and sections.
pub fn signature_view(entity: &Entity) -> Option<String> {
    if !matches!(
        entity.kind,
        EntityKind::Function | EntityKind::Method | EntityKind::Class
    ) {
        return None;
    }
    let words: Vec<String> = entity
        .qualified_name
        .split(['.', ':'])
        .flat_map(split_identifier)
        .collect();
    Some(format!("{}\n{}", words.join(" "), entity.signature))
}

/// The signature view with the hash of its text, which keys its vector for reuse.
pub fn hashed_signature_view(entity: &Entity) -> Option<(String, String)> {
    signature_view(entity).map(|view| (content_hash(&[&view]), view))
}

/// Module doc plus the import statements, as written.
fn header_chunk(file: &ParsedFile) -> Option<Chunk> {
    let module = file.entities.first()?;
    if module.kind == EntityKind::Document {
        return None;
    }
    let imports: Vec<&str> = file.imports.iter().map(|i| i.text.as_str()).collect();
    let doc = module.doc.as_deref().unwrap_or("");
    if imports.is_empty() && doc.is_empty() {
        return None;
    }
    let text = [doc, &imports.join("\n")]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let end_line = file.imports.iter().map(|i| i.end_line).max().unwrap_or(1);
    let header = structural_header(&file.path, &module.qualified_name, module.kind);
    let embed_text = truncate_chars(&format!("{header}\n{text}"), MAX_EMBED_CHARS);
    Some(Chunk {
        id: format!("{}#header", file.path),
        entity_id: module.id.clone(),
        path: file.path.clone(),
        qualified_name: module.qualified_name.clone(),
        kind: module.kind,
        language: module.language.clone(),
        start_line: 1,
        end_line,
        part: 0,
        content_hash: content_hash(&[&embed_text]),
        search_text: code_search_text(&format!("{header}\n{text}")),
        embed_text,
        text,
    })
}

/// Markdown text before the first heading.
fn preamble(file: &ParsedFile) -> (String, bool) {
    let end = file
        .entities
        .iter()
        .skip(1)
        .map(|e| e.span.start_byte)
        .min()
        .unwrap_or(file.text.len());
    (file.text[..end].to_string(), false)
}

/// The entity's text with each directly nested entity reduced to its signature line, and
/// whether anything was reduced.
pub fn own_text(file: &ParsedFile, index: usize) -> (String, bool) {
    let entity = &file.entities[index];
    let children = file.entities.iter().filter(|child| {
        child.parent.as_deref() == Some(entity.id.as_str())
            && entity.span.contains(&child.span)
            && child.id != entity.id
    });
    collapse_members(file, &entity.span, children)
}

/// The text of `span` with each of `members` (in source order) reduced to its signature
/// line followed by ` …`, and whether anything was reduced.
fn collapse_members<'a>(
    file: &ParsedFile,
    span: &Span,
    members: impl Iterator<Item = &'a Entity>,
) -> (String, bool) {
    let mut text = String::new();
    let mut cursor = span.start_byte;
    for member in members {
        if member.span.start_byte < cursor {
            continue;
        }
        text.push_str(&file.text[cursor..member.span.start_byte]);
        let summary = if member.signature.is_empty() {
            member.name.as_str()
        } else {
            member.signature.as_str()
        };
        text.push_str(summary);
        text.push_str(" …");
        cursor = member.span.end_byte;
    }
    let collapsed = cursor != span.start_byte;
    text.push_str(&file.text[cursor..span.end_byte]);
    (text, collapsed)
}

/// Outline chunks of the blocks that hold a type's members away from its definition (Rust
/// `impl`): the block with each member reduced to its signature line, appended to the type's
/// chunks as further parts. A question about what a type does can then land on the block
/// that groups the answer with its siblings and their docs. Blocks of types defined in
/// another file have no owner here and get no outline.
fn container_chunks(file: &ParsedFile, chunks: &[Chunk]) -> Vec<Chunk> {
    let mut next_part: HashMap<&str, u32> = HashMap::new();
    for chunk in chunks {
        let next = next_part.entry(chunk.entity_id.as_str()).or_insert(0);
        *next = (*next).max(chunk.part + 1);
    }
    let mut outlines = Vec::new();
    for span in &file.containers {
        let Some(owner) = container_owner(file, span) else {
            continue;
        };
        let members = file
            .entities
            .iter()
            .filter(|e| e.parent.as_deref() == Some(owner.id.as_str()) && span.contains(&e.span));
        let (text, _) = collapse_members(file, span, members);
        let part = next_part.entry(owner.id.as_str()).or_insert(0);
        outlines.push(make_chunk(
            owner,
            *part,
            text,
            span.start_line,
            span.end_line,
        ));
        *part += 1;
    }
    outlines
}

/// The class that the members inside `span` belong to, when it is defined outside the span.
fn container_owner<'a>(file: &'a ParsedFile, span: &Span) -> Option<&'a Entity> {
    let member = file
        .entities
        .iter()
        .find(|e| span.contains(&e.span) && e.span != *span)?;
    let owner_id = member.parent.as_deref()?;
    file.entities
        .iter()
        .find(|e| e.id == owner_id && e.kind == EntityKind::Class && !span.contains(&e.span))
}

/// Splits text longer than the budget at the entity's statement lines (or, lacking those,
/// at line boundaries), repeating the previous piece's last statement when it is short.
/// Returns (text, first line, last line) per piece.
fn split_pieces(
    text: &str,
    start_line: u32,
    entity: &Entity,
    max_tokens: usize,
) -> Vec<(String, u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let last_line = start_line + lines.len().saturating_sub(1) as u32;
    let max_chars = max_tokens * CHARS_PER_TOKEN;
    if text.len() <= max_chars || lines.len() < 2 {
        return vec![(text.to_string(), start_line, last_line.max(start_line))];
    }
    // Offsets (0-based, into `lines`) where a piece may start.
    let mut cuts: Vec<usize> = entity
        .split_lines
        .iter()
        .filter(|&&l| l > start_line && l <= last_line)
        .map(|&l| (l - start_line) as usize)
        .collect();
    if cuts.is_empty() {
        cuts = line_window_cuts(&lines, max_chars);
    }
    let mut segments = Vec::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain(std::iter::once(lines.len())) {
        if cut > from {
            segments.push((from, cut));
            from = cut;
        }
    }
    let seg_chars = |(a, b): (usize, usize)| lines[a..b].iter().map(|l| l.len() + 1).sum::<usize>();
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut piece_chars = 0;
    for (i, &segment) in segments.iter().enumerate() {
        let size = seg_chars(segment);
        if piece_chars > 0 && piece_chars + size > max_chars {
            let piece_end = segment.0;
            pieces.push((piece_start, piece_end));
            let previous = segments[i - 1];
            let overlap = seg_chars(previous) <= max_chars / 4 && previous.0 > piece_start;
            piece_start = if overlap { previous.0 } else { piece_end };
            piece_chars = seg_chars((piece_start, piece_end));
        }
        piece_chars += size;
    }
    pieces.push((piece_start, lines.len()));
    pieces
        .into_iter()
        .map(|(a, b)| {
            (
                lines[a..b].join("\n"),
                start_line + a as u32,
                start_line + b.saturating_sub(1) as u32,
            )
        })
        .collect()
}

/// Line offsets cutting `lines` into windows of about `max_chars`, preferring blank lines.
fn line_window_cuts(lines: &[&str], max_chars: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut size = 0;
    for (i, line) in lines.iter().enumerate() {
        let soft_cut = line.trim().is_empty() && size > max_chars / 2;
        if i > 0 && (size + line.len() > max_chars || soft_cut) {
            cuts.push(i);
            size = 0;
        }
        size += line.len() + 1;
    }
    cuts
}
