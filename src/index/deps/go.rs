//! Go: the modules `go.mod` requires (direct ones are those without `// indirect`; `all`
//! takes both), in the module cache (`$GOMODCACHE`, else `$GOPATH/pkg/mod`, else
//! `~/go/pkg/mod`) at `<escaped path>@<version>`, where an upper-case letter is written `!`
//! and its lower case.

use std::path::{Path, PathBuf};

use super::{Dependency, Discovery, Ecosystem, Missing, read_text};

const ECOSYSTEM: Ecosystem = Ecosystem::Go;

pub(super) fn discover(root: &Path, all: bool) -> Discovery {
    let mut out = Discovery::default();
    let manifest = root.join("go.mod");
    if !manifest.is_file() {
        return out;
    }
    let text = match read_text(&manifest) {
        Ok(text) => text,
        Err(unusable) => {
            out.problem(ECOSYSTEM, root, &manifest, unusable.to_string());
            return out;
        }
    };
    let cache = module_cache();
    for (path, version, indirect) in requirements(&text) {
        if indirect && !all {
            continue;
        }
        let folder = cache
            .as_ref()
            .map(|c| c.join(format!("{}@{version}", escape(&path))));
        match folder.filter(|f| f.is_dir()) {
            Some(folder) => out.found.push(Dependency {
                ecosystem: ECOSYSTEM,
                name: path,
                version,
                root: folder,
                only: Vec::new(),
            }),
            None => out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                name: path,
                version: Some(version),
                reason: "not in the Go module cache".into(),
                fetch: "go mod download".into(),
            }),
        }
    }
    out
}

/// `(module path, version, indirect)` of every `require`, single-line or in a block.
fn requirements(go_mod: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in go_mod.lines() {
        let (code, comment) = line.split_once("//").unwrap_or((line, ""));
        let code = code.trim();
        let spec = if in_block {
            if code == ")" {
                in_block = false;
                continue;
            }
            code
        } else if code == "require (" {
            in_block = true;
            continue;
        } else if let Some(rest) = code.strip_prefix("require ") {
            rest.trim()
        } else {
            continue;
        };
        let mut words = spec.split_whitespace();
        if let (Some(path), Some(version)) = (words.next(), words.next()) {
            out.push((
                path.to_string(),
                version.to_string(),
                comment.trim() == "indirect",
            ));
        }
    }
    out
}

/// The module cache's case-encoding: `github.com/BurntSushi/toml` → `github.com/!burnt!sushi/toml`.
fn escape(path: &str) -> String {
    path.chars()
        .map(|c| {
            if c.is_ascii_uppercase() {
                format!("!{}", c.to_ascii_lowercase())
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn module_cache() -> Option<PathBuf> {
    if let Some(cache) = std::env::var_os("GOMODCACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(cache));
    }
    if let Some(gopath) = std::env::var_os("GOPATH").filter(|v| !v.is_empty()) {
        let first = std::env::split_paths(&gopath).next()?;
        return Some(first.join("pkg").join("mod"));
    }
    super::home().map(|h| h.join("go").join("pkg").join("mod"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_in_blocks_and_lines_with_indirect_marked() {
        let go_mod = "module example.com/app\n\ngo 1.22\n\nrequire github.com/spf13/cobra v1.8.0\n\nrequire (\n\tgithub.com/BurntSushi/toml v1.3.2\n\tgolang.org/x/sys v0.20.0 // indirect\n)\n";
        assert_eq!(
            requirements(go_mod),
            [
                ("github.com/spf13/cobra".into(), "v1.8.0".into(), false),
                ("github.com/BurntSushi/toml".into(), "v1.3.2".into(), false),
                ("golang.org/x/sys".into(), "v0.20.0".into(), true),
            ]
        );
        assert_eq!(
            escape("github.com/BurntSushi/toml"),
            "github.com/!burnt!sushi/toml"
        );
    }
}
