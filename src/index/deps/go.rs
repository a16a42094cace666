//! Go: the modules `go.mod` requires (direct ones are those without `// indirect`; `all`
//! takes both), in the module cache (`$GOMODCACHE`, else `$GOPATH/pkg/mod`, else
//! `~/go/pkg/mod`) at `<escaped path>@<version>`, where an upper-case letter is written `!`
//! and its lower case; and the standard library packages the project's own `.go` files import
//! (`net/http`), each a dependency of its own (`net/http@go1.22`, its non-test files only) in
//! the installed Go's sources (`$GOROOT/src`, else the `go` on `PATH`, else the usual install
//! folders). Nothing here runs `go`.

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
    out.merge(standard_library(root));
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

/// Project `.go` files read for their imports, at most (a bound on discovery's time).
const IMPORT_SCAN_FILES: usize = 2_000;

/// The standard library packages the project imports, each with the installed sources of its
/// folder (non-test files directly in it), or one `missing` line when no Go is installed.
fn standard_library(root: &Path) -> Discovery {
    let mut out = Discovery::default();
    let packages = imported_standard_packages(root);
    if packages.is_empty() {
        return out;
    }
    let Some((src, version)) = go_root().and_then(|r| Some((r.join("src"), go_version(&r)?)))
    else {
        out.missing.push(Missing {
            ecosystem: ECOSYSTEM,
            name: "std".into(),
            version: None,
            reason: format!(
                "the project imports {} standard library package(s) and no Go installation was found ($GOROOT)",
                packages.len()
            ),
            fetch: "install Go (its sources: $GOROOT/src), e.g. apt install golang-src".into(),
        });
        return out;
    };
    for package in packages {
        let folder = src.join(&package);
        let only = package_files(&folder);
        if only.is_empty() {
            continue;
        }
        out.found.push(Dependency {
            ecosystem: ECOSYSTEM,
            name: package,
            version: version.clone(),
            root: folder,
            only,
        });
    }
    out
}

/// Import paths without a dot in their first segment (`fmt`, `net/http`; not `C`) in the
/// project's `.go` files (git-ignored files and `vendor/` left out).
fn imported_standard_packages(root: &Path) -> Vec<String> {
    let mut packages = std::collections::BTreeSet::new();
    let files = ignore::WalkBuilder::new(root)
        .filter_entry(|e| e.file_name() != "vendor" && e.file_name() != "testdata")
        .build()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "go"))
        .take(IMPORT_SCAN_FILES);
    for file in files {
        let Ok(text) = std::fs::read_to_string(file.path()) else {
            continue;
        };
        packages.extend(imports(&text).into_iter().filter(|p| is_standard(p)));
    }
    packages.into_iter().collect()
}

fn is_standard(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or("");
    !first.contains('.') && path != "C" && !path.is_empty()
}

/// The import paths of a Go file: `import "fmt"`, `import h "net/http"` and import blocks.
fn imports(go: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let quoted = |line: &str| {
        let start = line.find('"')?;
        let end = line[start + 1..].find('"')?;
        Some(line[start + 1..start + 1 + end].to_string())
    };
    for line in go.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if in_block {
            if code.starts_with(')') {
                in_block = false;
            } else if let Some(path) = quoted(code) {
                out.push(path);
            }
        } else if let Some(rest) = code.strip_prefix("import") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                in_block = !rest.contains(')');
                out.extend(quoted(rest));
            } else {
                out.extend(quoted(rest));
            }
        } else if code.starts_with("func ") || code.starts_with("type ") {
            break;
        }
    }
    out
}

/// The `.go` files of one package folder, tests left out.
fn package_files(folder: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.ends_with(".go") && !n.ends_with("_test.go"))
        .collect();
    files.sort();
    files
}

/// The installed Go: `$GOROOT`, the folder above the `bin/go` on `PATH`, or a usual install
/// folder (`/usr/local/go`, Debian's `/usr/lib/go` and `/usr/share/go`), whichever holds
/// `src/fmt`.
fn go_root() -> Option<PathBuf> {
    let from_env = std::env::var_os("GOROOT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let from_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("go"))
            .find(|go| go.is_file())
            .and_then(|go| std::fs::canonicalize(go).ok())
            .and_then(|go| Some(go.parent()?.parent()?.to_path_buf()))
    });
    let usual = ["/usr/local/go", "/usr/lib/go", "/usr/share/go"].map(PathBuf::from);
    from_env
        .into_iter()
        .chain(from_path)
        .chain(usual)
        .find(|root| root.join("src").join("fmt").is_dir())
}

/// `go1.22.2` from `$GOROOT/VERSION`, else `go1.<n>` from the sources' `internal/goversion`.
fn go_version(root: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(root.join("VERSION"))
        && let Some(first) = text.lines().next().filter(|l| l.starts_with("go"))
    {
        return Some(first.trim().to_string());
    }
    let text = std::fs::read_to_string(root.join("src/internal/goversion/goversion.go")).ok()?;
    let minor = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("const Version = "))?;
    Some(format!("go1.{}", minor.trim()))
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
    fn standard_imports_are_read_from_lines_and_blocks() {
        let go = "package main\n\nimport \"fmt\"\nimport h \"net/http\"\nimport (\n\t\"encoding/json\" // why\n\tcobra \"github.com/spf13/cobra\"\n\t\"C\"\n)\n\nfunc main() {}\n";
        let found: Vec<String> = imports(go).into_iter().filter(|p| is_standard(p)).collect();
        assert_eq!(found, ["fmt", "net/http", "encoding/json"]);
    }

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
