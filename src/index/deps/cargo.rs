//! Rust: the crates `Cargo.toml` names (`dependencies`, `dev-dependencies`,
//! `build-dependencies`, per target too, and those of workspace members), their versions as
//! `Cargo.lock` resolved them, and their sources in `vendor/` or the registry's unpacked
//! crates (`$CARGO_HOME/registry/src/*/<name>-<version>`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Dependency, Discovery, Ecosystem, Missing, read_toml};

const ECOSYSTEM: Ecosystem = Ecosystem::Cargo;
const DEPENDENCY_TABLES: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];

#[derive(Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<LockedPackage>,
}

#[derive(Deserialize)]
struct LockedPackage {
    name: String,
    version: String,
    /// Absent for the workspace's own packages.
    source: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
}

pub(super) fn discover(root: &Path, all: bool) -> Discovery {
    let mut out = Discovery::default();
    let manifest_path = root.join("Cargo.toml");
    if !manifest_path.is_file() {
        return out;
    }
    let lock_path = root.join("Cargo.lock");
    let lock: Lock = match read_toml(&lock_path) {
        Ok(lock) => lock,
        Err(unusable) => {
            let reason = if lock_path.exists() {
                unusable.to_string()
            } else {
                "no Cargo.lock: versions are not resolved (run `cargo generate-lockfile`)".into()
            };
            out.problem(ECOSYSTEM, root, &lock_path, reason);
            return out;
        }
    };
    let wanted: Vec<(String, String)> = if all {
        lock.package
            .iter()
            .filter(|p| p.source.is_some())
            .map(|p| (p.name.clone(), p.version.clone()))
            .collect()
    } else {
        let names = match declared(root, &manifest_path) {
            Ok(names) => names,
            Err(unusable) => {
                out.problem(ECOSYSTEM, root, &manifest_path, unusable.to_string());
                return out;
            }
        };
        resolved(&lock, &names)
    };
    let registries = registry_folders();
    for (name, version) in wanted {
        match source_folder(root, &registries, &name, &version) {
            Some(folder) => out.found.push(Dependency {
                ecosystem: ECOSYSTEM,
                name,
                version,
                root: folder,
                only: Vec::new(),
            }),
            None => out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                name,
                version: Some(version),
                reason: "not in vendor/ nor in the registry's unpacked sources".into(),
                fetch: "cargo fetch".into(),
            }),
        }
    }
    out
}

/// Package names the manifest and its workspace members declare (renames resolved).
fn declared(root: &Path, manifest: &Path) -> Result<BTreeSet<String>, super::Unusable> {
    let value: toml::Value = read_toml(manifest)?;
    let mut names = BTreeSet::new();
    collect_names(&value, &mut names);
    let members = value
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    for member in members.iter().filter_map(|m| m.as_str()) {
        for folder in member_folders(root, member) {
            if let Ok(value) = read_toml::<toml::Value>(&folder.join("Cargo.toml")) {
                collect_names(&value, &mut names);
            }
        }
    }
    Ok(names)
}

/// A workspace member pattern's folders (`crates/*` or a plain path).
fn member_folders(root: &Path, pattern: &str) -> Vec<PathBuf> {
    match pattern.strip_suffix("/*") {
        Some(parent) => std::fs::read_dir(root.join(parent))
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default(),
        None => vec![root.join(pattern)],
    }
}

fn collect_names(manifest: &toml::Value, names: &mut BTreeSet<String>) {
    let mut tables: Vec<&toml::Value> = DEPENDENCY_TABLES
        .iter()
        .filter_map(|t| manifest.get(t))
        .collect();
    if let Some(workspace) = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
    {
        tables.push(workspace);
    }
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            tables.extend(DEPENDENCY_TABLES.iter().filter_map(|t| target.get(t)));
        }
    }
    for table in tables.iter().filter_map(|t| t.as_table()) {
        for (key, spec) in table {
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            names.insert(package.to_string());
        }
    }
}

/// The locked versions of `names`: when a name is locked at several versions, those the
/// workspace's own packages depend on (`"name version"` entries), else all of them.
fn resolved(lock: &Lock, names: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut versions: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for package in lock.package.iter().filter(|p| p.source.is_some()) {
        if names.contains(&package.name) {
            versions
                .entry(&package.name)
                .or_default()
                .push(&package.version);
        }
    }
    let own_requirements: BTreeSet<&str> = lock
        .package
        .iter()
        .filter(|p| p.source.is_none())
        .flat_map(|p| p.dependencies.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    for (name, candidates) in versions {
        let chosen: Vec<&str> = candidates
            .iter()
            .copied()
            .filter(|v| own_requirements.contains(format!("{name} {v}").as_str()))
            .collect();
        let chosen = if candidates.len() == 1 || chosen.is_empty() {
            candidates
        } else {
            chosen
        };
        out.extend(
            chosen
                .into_iter()
                .map(|v| (name.to_string(), v.to_string())),
        );
    }
    out
}

/// `$CARGO_HOME/registry/src/*` (every registry's unpacked crates).
fn registry_folders() -> Vec<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| super::home().map(|h| h.join(".cargo")));
    let Some(src) = cargo_home.map(|h| h.join("registry").join("src")) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = std::fs::read_dir(src)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    folders.sort();
    folders
}

fn source_folder(
    root: &Path,
    registries: &[PathBuf],
    name: &str,
    version: &str,
) -> Option<PathBuf> {
    let versioned = format!("{name}-{version}");
    let vendored = [
        root.join("vendor").join(&versioned),
        root.join("vendor").join(name),
    ];
    vendored
        .into_iter()
        .chain(registries.iter().map(|r| r.join(&versioned)))
        .find(|folder| folder.join("Cargo.toml").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_locked_twice_takes_the_version_the_workspace_asks_for() {
        let lock: Lock = toml::from_str(
            r#"
            [[package]]
            name = "app"
            version = "0.1.0"
            dependencies = ["rand 0.8.5", "serde"]

            [[package]]
            name = "rand"
            version = "0.8.5"
            source = "registry+https://github.com/rust-lang/crates.io-index"

            [[package]]
            name = "rand"
            version = "0.9.1"
            source = "registry+https://github.com/rust-lang/crates.io-index"

            [[package]]
            name = "serde"
            version = "1.0.200"
            source = "registry+https://github.com/rust-lang/crates.io-index"
            "#,
        )
        .unwrap();
        let names = ["rand", "serde"].map(String::from).into_iter().collect();
        assert_eq!(
            resolved(&lock, &names),
            [
                ("rand".into(), "0.8.5".into()),
                ("serde".into(), "1.0.200".into())
            ]
        );
    }

    #[test]
    fn renamed_target_and_workspace_dependencies_are_declared() {
        let manifest: toml::Value = toml::from_str(
            r#"
            [dependencies]
            serde = "1"
            rand_core = { package = "rand_core", version = "0.6" }
            json = { package = "serde_json", version = "1" }
            [target.'cfg(unix)'.dependencies]
            libc = "0.2"
            [dev-dependencies]
            tempfile = "3"
            [workspace.dependencies]
            tokio = "1"
            "#,
        )
        .unwrap();
        let mut names = BTreeSet::new();
        collect_names(&manifest, &mut names);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "libc",
                "rand_core",
                "serde",
                "serde_json",
                "tempfile",
                "tokio"
            ]
        );
    }
}
