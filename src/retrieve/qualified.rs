//! Qualified names of a dependency (`tokio::spawn`, `requests.Session.send`, `express.Router`,
//! `http.NewRequest`) resolved to the definitions they name inside one package's index: by the
//! definitions' own qualified names and folders, and for JavaScript by following what a module
//! exports (`exports.Router = Router` where `Router = require('./router')`) to the file that
//! defines it. Reads the package's files only to follow exports; never ranks by similarity.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::load::generation::LoadedGeneration;
use crate::parse::Entity;
use crate::text::is_name_char;

/// JavaScript files read when following an export, at most (shallowest first).
const EXPORT_SCAN_FILES: usize = 200;

/// The definitions `segments` (the pattern after the package's name) name in a package, best
/// first. A single name is first looked up among what a JavaScript package exports under it
/// (`express.json` is body-parser's, not `res.json`), reading its files under `sources` (the
/// package's folder as this project found it: the index may have been built from another
/// project's copy), then among definitions by name.
pub fn lookup<'g>(
    generation: &'g LoadedGeneration,
    sources: &Path,
    segments: &[&str],
) -> Vec<&'g Entity> {
    if let [name] = segments {
        let found = exported(generation, sources, name);
        if !found.is_empty() {
            return found;
        }
    }
    by_names(&generation.entities, segments)
}

/// Definitions of a package named by the segments after its name: the longest tail of the
/// segments that is a definition's qualified name (`Session.send`) or name (`spawn`),
/// public ones first, then those whose file or folder the earlier segments name
/// (`sync::mpsc::channel` → `sync/mpsc`), free functions before methods, then those whose
/// file is named after them, shallower files first.
fn by_names<'g>(entities: &'g [Entity], segments: &[&str]) -> Vec<&'g Entity> {
    for take in (1..=segments.len().min(3)).rev() {
        let tail = segments[segments.len() - take..].join(".");
        let hints: Vec<&str> = segments[..segments.len() - take].to_vec();
        let dotted = format!(".{tail}");
        let mut found: Vec<&Entity> = entities
            .iter()
            .filter(|e| !e.kind.is_file_level() && !e.kind.is_prose())
            .filter(|e| {
                e.qualified_name == tail
                    || e.qualified_name.ends_with(&dotted)
                    || (take == 1 && e.name == tail)
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        found.sort_by_key(|e| {
            let public = is_public(e);
            let hinted = hints.iter().filter(|h| e.path.contains(*h)).count();
            let stem_named =
                Path::new(&e.path).file_stem().and_then(|s| s.to_str()) == Some(e.name.as_str());
            let method = e.qualified_name.contains('.');
            (
                crate::walk::is_test_path(&e.path),
                !public,
                std::cmp::Reverse(hinted),
                method,
                !stem_named,
                e.path.matches('/').count(),
                e.id.clone(),
            )
        });
        return found;
    }
    Vec::new()
}

/// Whether a definition is part of its package's public surface, as its signature says.
fn is_public(entity: &Entity) -> bool {
    let signature = entity.signature.trim_start();
    if entity.name.starts_with('_') {
        return false;
    }
    if signature.starts_with("pub(") {
        return false;
    }
    let private_rust = entity.path.ends_with(".rs") && !signature.starts_with("pub ");
    let private_go =
        entity.path.ends_with(".go") && entity.name.chars().next().is_some_and(char::is_lowercase);
    !(private_rust || private_go)
}

/// A CommonJS or ES module export of a binding: `exports.X = …`, `module.exports.X = …`, or
/// `export { …X… } from '…'` (the name is put in by [`export_pattern`]).
fn export_pattern(name: &str) -> Regex {
    let name = regex::escape(name);
    Regex::new(&format!(
        r#"(?m)^\s*(?:module\.)?exports\.{name}\s*=\s*([^;\n]+)|export\s*\{{[^}}]*\b{name}\b[^}}]*\}}\s*from\s*['"]([^'"]+)['"]"#
    ))
    .expect("export pattern")
}

static REQUIRE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^require\(\s*['"]([^'"]+)['"]\s*\)"#).unwrap());

/// What a JavaScript package exports under `name`: the file a relative `require`/`from`
/// names (its module entity), a definition of the exporting file named by the bound
/// identifier, else the exporting file itself (the binding comes from another package).
fn exported<'g>(generation: &'g LoadedGeneration, sources: &Path, name: &str) -> Vec<&'g Entity> {
    let pattern = export_pattern(name);
    let mut modules: Vec<&Entity> = generation
        .entities
        .iter()
        .filter(|e| e.kind.is_file_level() && is_javascript(&e.path))
        .filter(|e| !crate::walk::is_test_path(&e.path))
        .collect();
    modules.sort_by_key(|e| (e.path.matches('/').count(), e.path.clone()));
    for module in modules.into_iter().take(EXPORT_SCAN_FILES) {
        let Ok(text) = std::fs::read_to_string(sources.join(&module.path)) else {
            continue;
        };
        let Some(found) = pattern.captures(&text) else {
            continue;
        };
        let bound = found.get(1).map(|m| m.as_str().trim());
        let spec = found
            .get(2)
            .map(|m| m.as_str().to_string())
            .or_else(|| bound.and_then(|b| required_spec(&text, b)));
        if let Some(target) = spec.and_then(|s| resolve_relative(generation, &module.path, &s)) {
            return named_in(generation, &target.path, &[name, bound.unwrap_or(name)])
                .or(Some(target))
                .into_iter()
                .collect();
        }
        let defined = bound.and_then(|b| named_in(generation, &module.path, &[b]));
        return defined.into_iter().chain(std::iter::once(module)).collect();
    }
    Vec::new()
}

/// A top-level definition of file `path` with one of `names`.
fn named_in<'g>(
    generation: &'g LoadedGeneration,
    path: &str,
    names: &[&str],
) -> Option<&'g Entity> {
    generation.entities.iter().find(|e| {
        e.path == path
            && !e.kind.is_file_level()
            && !e.qualified_name.contains('.')
            && names.contains(&e.name.as_str())
    })
}

/// The module a bound expression requires: `require('./router')` itself, or an identifier
/// declared as `const Router = require('./router')` in the same file.
fn required_spec(text: &str, bound: &str) -> Option<String> {
    if let Some(found) = REQUIRE.captures(bound) {
        return Some(found[1].to_string());
    }
    let ident = bound.trim_end_matches(';');
    if !ident.chars().all(is_name_char) {
        return None;
    }
    let declared = Regex::new(&format!(
        r#"(?:var|let|const)\s+(?:{0}|\{{[^}}]*\b{0}\b[^}}]*\}})\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)"#,
        regex::escape(ident)
    ))
    .ok()?;
    Some(declared.captures(text)?[1].to_string())
}

/// The module entity of a relative import from `from` (`./router` → `router.js`,
/// `router/index.js`, or the TypeScript twins); none for another package's name.
fn resolve_relative<'g>(
    generation: &'g LoadedGeneration,
    from: &str,
    spec: &str,
) -> Option<&'g Entity> {
    if !spec.starts_with('.') {
        return None;
    }
    let base = Path::new(from).parent().unwrap_or(Path::new(""));
    let mut parts: Vec<String> = Vec::new();
    for part in base.join(spec).components() {
        match part {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    let joined = parts.join("/");
    ["", ".js", ".cjs", ".mjs", ".ts", "/index.js", "/index.ts"]
        .iter()
        .find_map(|suffix| generation.entity(&format!("{joined}{suffix}")))
        .filter(|e| e.kind.is_file_level())
}

fn is_javascript(path: &str) -> bool {
    [".js", ".cjs", ".mjs", ".ts", ".mts", ".cts"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_are_found_in_commonjs_and_es_modules() {
        let pattern = export_pattern("Router");
        let cjs = "var Router = require('./router');\nexports.Router = Router;\n";
        let found = pattern.captures(cjs).unwrap();
        assert_eq!(&found[1], "Router");
        assert_eq!(required_spec(cjs, &found[1]).as_deref(), Some("./router"));
        let esm = "export { Route, Router as default } from './router/index.js';";
        assert_eq!(&pattern.captures(esm).unwrap()[2], "./router/index.js");
        assert!(pattern.captures("exports.RouterX = 1;").is_none());
        let destructured = "const { Argument, Command } = require('./lib/command.js');";
        assert_eq!(
            required_spec(destructured, "Command").as_deref(),
            Some("./lib/command.js")
        );
    }
}
