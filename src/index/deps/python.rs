//! Python: the distributions the project declares (`pyproject.toml`'s `[project]` and
//! `[tool.poetry]` dependencies, `requirements*.txt`; with `all`, every distribution
//! installed), as installed in the project's virtualenv (`$VIRTUAL_ENV`, `.venv`, `venv`):
//! versions from `*.dist-info/METADATA`, files from its `top_level.txt` or `RECORD`. The folder
//! indexed is the virtualenv's `site-packages`, limited to the distribution's own top-level
//! packages and modules, so paths read `requests/sessions.py`. Versions a lockfile pins
//! (`uv.lock`, `poetry.lock`, `name==version` in requirements) name what is missing, and an
//! installed version that differs from the pinned one is reported (the installed sources, the
//! code that runs, are what is indexed).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Dependency, Discovery, Ecosystem, Missing, Problem, read_text, read_toml};

const ECOSYSTEM: Ecosystem = Ecosystem::Python;

/// An installed distribution.
struct Installed {
    name: String,
    version: String,
    tops: Vec<String>,
}

pub(super) fn discover(root: &Path, all: bool) -> Discovery {
    let mut out = Discovery::default();
    let declared = declared(root, &mut out);
    let venv = virtualenv(root);
    if declared.is_empty() && !(all && venv.is_some()) {
        return out;
    }
    let Some(site) = venv.as_deref().and_then(site_packages) else {
        for name in declared {
            out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                name,
                version: None,
                reason: "no virtualenv found ($VIRTUAL_ENV, .venv, venv)".into(),
                fetch: fetch_command(root),
            });
        }
        return out;
    };
    let installed = installed(&site);
    let locked = locked(root, &mut out);
    let wanted: Vec<String> = if all {
        installed.keys().cloned().collect()
    } else {
        declared.into_iter().collect()
    };
    for name in wanted {
        let pinned = locked.get(&name);
        match installed.get(&name) {
            Some(dist) if !dist.tops.is_empty() => {
                if let Some((version, lockfile)) = pinned.filter(|(v, _)| *v != dist.version) {
                    out.problems.push(Problem {
                        ecosystem: ECOSYSTEM,
                        path: lockfile.clone(),
                        reason: format!(
                            "{name}: installed {}, {lockfile} pins {version} (the installed sources are indexed; {} to match)",
                            dist.version,
                            fetch_command(root)
                        ),
                    });
                }
                out.found.push(Dependency {
                    ecosystem: ECOSYSTEM,
                    name: dist.name.clone(),
                    version: dist.version.clone(),
                    root: site.clone(),
                    only: dist.tops.clone(),
                })
            }
            Some(dist) => out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                name,
                version: Some(dist.version.clone()),
                reason: "installed without Python sources (no top_level.txt or RECORD entries)"
                    .into(),
                fetch: fetch_command(root),
            }),
            None => out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                version: pinned.map(|(v, _)| v.clone()),
                name,
                reason: "not installed in the virtualenv".into(),
                fetch: fetch_command(root),
            }),
        }
    }
    out
}

/// PEP 503's normal form: lowercase, runs of `-_.` as one `-`.
pub(super) fn normalise(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
        } else {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The distribution a requirement string names (`requests[socks]>=2.31; python_version>"3"`).
fn requirement_name(requirement: &str) -> Option<String> {
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    let name = &requirement[..end];
    (!name.is_empty()).then(|| normalise(name))
}

/// Names the project declares, normalised.
fn declared(root: &Path, out: &mut Discovery) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let pyproject = root.join("pyproject.toml");
    if pyproject.is_file() {
        match read_toml::<toml::Value>(&pyproject) {
            Ok(value) => {
                let project = value.get("project");
                let listed = project
                    .and_then(|p| p.get("dependencies"))
                    .and_then(|d| d.as_array())
                    .into_iter()
                    .flatten();
                let optional = project
                    .and_then(|p| p.get("optional-dependencies"))
                    .and_then(|d| d.as_table())
                    .into_iter()
                    .flat_map(|t| t.values())
                    .filter_map(|v| v.as_array())
                    .flatten();
                names.extend(
                    listed
                        .chain(optional)
                        .filter_map(|r| r.as_str())
                        .filter_map(requirement_name),
                );
                let poetry = value
                    .get("tool")
                    .and_then(|t| t.get("poetry"))
                    .and_then(|p| p.get("dependencies"))
                    .and_then(|d| d.as_table());
                names.extend(
                    poetry
                        .into_iter()
                        .flat_map(|t| t.keys())
                        .filter(|k| k.as_str() != "python")
                        .map(|k| normalise(k)),
                );
            }
            Err(unusable) => out.problem(ECOSYSTEM, root, &pyproject, unusable.to_string()),
        }
    }
    for file in requirement_files(root) {
        let Ok(text) = read_text(&file) else { continue };
        names.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('-'))
                .filter_map(requirement_name),
        );
    }
    names
}

/// Pinned versions by normalised name, with the file that pins them: `uv.lock` and
/// `poetry.lock` (`[[package]]` tables), else `name==version` lines of `requirements*.txt`.
fn locked(root: &Path, out: &mut Discovery) -> BTreeMap<String, (String, String)> {
    let mut pins = BTreeMap::new();
    for lockfile in ["uv.lock", "poetry.lock"] {
        let path = root.join(lockfile);
        if !path.is_file() {
            continue;
        }
        match read_toml::<toml::Value>(&path) {
            Ok(value) => {
                let packages = value.get("package").and_then(|p| p.as_array());
                for package in packages.into_iter().flatten() {
                    let name = package.get("name").and_then(|n| n.as_str());
                    let version = package.get("version").and_then(|v| v.as_str());
                    if let (Some(name), Some(version)) = (name, version) {
                        pins.insert(normalise(name), (version.to_string(), lockfile.to_string()));
                    }
                }
                return pins;
            }
            Err(unusable) => out.problem(ECOSYSTEM, root, &path, unusable.to_string()),
        }
    }
    for file in requirement_files(root) {
        let Ok(text) = read_text(&file) else { continue };
        let label = file.file_name().map(|n| n.to_string_lossy().into_owned());
        for line in text.lines().map(str::trim) {
            let Some((name, version)) = line.split_once("==") else {
                continue;
            };
            let version = version.split([';', ' ', '#']).next().unwrap_or("").trim();
            if let (Some(name), false) = (requirement_name(name), version.is_empty()) {
                pins.insert(
                    name,
                    (version.to_string(), label.clone().unwrap_or_default()),
                );
            }
        }
    }
    pins
}

/// The project's `requirements*.txt` files.
fn requirement_files(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("requirements") && n.ends_with(".txt"))
        })
        .collect();
    files.sort();
    files
}

/// The project's virtualenv: `$VIRTUAL_ENV`, else `.venv` or `venv` in the project.
fn virtualenv(root: &Path) -> Option<PathBuf> {
    let active = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
    active
        .into_iter()
        .chain([root.join(".venv"), root.join("venv")])
        .find(|v| v.join("pyvenv.cfg").is_file())
}

/// `<venv>/lib/python3.X/site-packages`.
fn site_packages(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    let mut found: Vec<PathBuf> = lib
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found.pop()
}

/// Installed distributions by normalised name.
fn installed(site: &Path) -> BTreeMap<String, Installed> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(site) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("dist-info") {
            continue;
        }
        let Ok(metadata) = std::fs::read_to_string(path.join("METADATA")) else {
            continue;
        };
        let field = |key: &str| {
            metadata
                .lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
        };
        let (Some(name), Some(version)) = (field("Name:"), field("Version:")) else {
            continue;
        };
        let tops = top_levels(site, &path);
        out.insert(
            normalise(&name),
            Installed {
                name,
                version,
                tops,
            },
        );
    }
    out
}

/// The distribution's top-level packages and modules that exist in `site`.
fn top_levels(site: &Path, dist_info: &Path) -> Vec<String> {
    let mut tops: BTreeSet<String> = std::fs::read_to_string(dist_info.join("top_level.txt"))
        .map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if tops.is_empty()
        && let Ok(record) = std::fs::read_to_string(dist_info.join("RECORD"))
    {
        for line in record.lines() {
            let path = line.split(',').next().unwrap_or("");
            let first = path.split('/').next().unwrap_or("");
            let own = !first.is_empty()
                && first != ".."
                && !first.ends_with(".dist-info")
                && first != "__pycache__"
                && (path.contains('/') || first.ends_with(".py"));
            if own {
                tops.insert(first.trim_end_matches(".py").to_string());
            }
        }
    }
    tops.into_iter()
        .filter_map(|top| {
            if site.join(&top).is_dir() {
                Some(top)
            } else if site.join(format!("{top}.py")).is_file() {
                Some(format!("{top}.py"))
            } else {
                None
            }
        })
        .collect()
}

fn fetch_command(root: &Path) -> String {
    if root.join("uv.lock").is_file() {
        "uv sync".into()
    } else if root.join("poetry.lock").is_file() {
        "poetry install".into()
    } else {
        "pip install -e . (or pip install -r requirements.txt) in the project's virtualenv".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockfiles_pin_versions_and_uv_lock_comes_first() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("requirements.txt"),
            "Click==8.1.7 ; python_version > '3'\nrich>=13\n",
        )
        .unwrap();
        let mut out = Discovery::default();
        let pins = locked(root.path(), &mut out);
        assert_eq!(pins["click"], ("8.1.7".into(), "requirements.txt".into()));
        assert!(!pins.contains_key("rich"));
        std::fs::write(
            root.path().join("uv.lock"),
            "version = 1\n\n[[package]]\nname = \"Rich\"\nversion = \"13.7.1\"\n",
        )
        .unwrap();
        let pins = locked(root.path(), &mut out);
        assert_eq!(pins["rich"], ("13.7.1".into(), "uv.lock".into()));
        assert!(out.problems.is_empty());
        std::fs::write(root.path().join("uv.lock"), "[[package]\n").unwrap();
        locked(root.path(), &mut out);
        assert_eq!(out.problems[0].path, "uv.lock");
    }

    #[test]
    fn requirement_strings_give_normalised_names() {
        assert_eq!(
            requirement_name("requests[socks]>=2.31; python_version>'3'").as_deref(),
            Some("requests")
        );
        assert_eq!(
            requirement_name("Typing_Extensions==4.12").as_deref(),
            Some("typing-extensions")
        );
        assert_eq!(normalise("zope.interface"), "zope-interface");
        assert_eq!(requirement_name(">=1"), None);
    }
}
