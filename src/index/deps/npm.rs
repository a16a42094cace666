//! JavaScript and TypeScript: the packages `package.json` names (`dependencies`,
//! `devDependencies`, `optionalDependencies`, `peerDependencies`; `@types/*` included), or
//! with `all` every top-level package in `node_modules`, at the version each installed
//! `node_modules/<name>/package.json` records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Dependency, Discovery, Ecosystem, Missing, Unusable, read_json};

const ECOSYSTEM: Ecosystem = Ecosystem::Npm;
const SECTIONS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
];

pub(super) fn discover(root: &Path, all: bool) -> Discovery {
    let mut out = Discovery::default();
    let manifest = root.join("package.json");
    if !manifest.is_file() {
        return out;
    }
    let declared: BTreeSet<String> = match read_json(&manifest) {
        Ok(value) => SECTIONS
            .iter()
            .filter_map(|s| value.get(s).and_then(|d| d.as_object()))
            .flat_map(|d| d.keys().cloned())
            .collect(),
        Err(unusable) => {
            out.problem(ECOSYSTEM, root, &manifest, unusable.to_string());
            return out;
        }
    };
    let modules = root.join("node_modules");
    let wanted: BTreeSet<String> = if all {
        installed_names(&modules)
    } else {
        declared
    };
    for name in wanted {
        let folder = modules.join(&name);
        match installed_version(&folder) {
            Ok(version) => out.found.push(Dependency {
                ecosystem: ECOSYSTEM,
                name,
                version,
                root: folder,
                only: Vec::new(),
            }),
            Err(unusable) => out.missing.push(Missing {
                ecosystem: ECOSYSTEM,
                name,
                version: None,
                reason: unusable.to_string(),
                fetch: if root.join("package-lock.json").is_file() {
                    "npm ci".into()
                } else {
                    "npm install".into()
                },
            }),
        }
    }
    out
}

fn installed_version(folder: &Path) -> Result<String, Unusable> {
    if !folder.is_dir() {
        return Err(Unusable::Absent("not in node_modules"));
    }
    read_json(&folder.join("package.json"))?
        .get("version")
        .and_then(|v| v.as_str())
        .map(String::from)
        .ok_or(Unusable::Absent("package.json has no version"))
}

/// `node_modules/<name>` and `node_modules/@scope/<name>` (not `.bin` and other dot folders).
fn installed_names(modules: &Path) -> BTreeSet<String> {
    let entries = |dir: &PathBuf| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|e| {
                e.flatten()
                    .filter_map(|e| e.file_name().to_str().map(String::from))
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut names = BTreeSet::new();
    for name in entries(&modules.to_path_buf()) {
        if name.starts_with('@') {
            for inner in entries(&modules.join(&name)) {
                names.insert(format!("{name}/{inner}"));
            }
        } else {
            names.insert(name);
        }
    }
    names
}
