//! Files read as text only: source and configuration formats without a grammar here
//! (Protocol Buffers, Terraform, SQL, YAML, Dockerfiles, …), and files of a parsed language
//! whose parse timed out. Each becomes one file-level entity of kind `text`, split at
//! blank-line blocks (and inside long blocks) so the chunker cuts bounded pieces that keep
//! their lines. This module decides which paths are text by name alone — the walk and
//! freshness ask it without reading files — and never parses.

use super::{Entity, EntityKind, ParsedFile};

/// A text format: its name (the entity's `language`) and the file names it claims.
struct TextFormat {
    name: &'static str,
    /// Lower-case extensions, without the dot.
    extensions: &'static [&'static str],
    /// Exact file names (`Dockerfile`, `CMakeLists.txt`).
    file_names: &'static [&'static str],
}

/// Source and configuration formats knowcode reads as text. Data (CSV, lock files, logs,
/// snapshots, expected outputs) is left out: it drowns code in search without answering
/// questions about it.
static TEXT_FORMATS: &[TextFormat] = &[
    TextFormat {
        name: "protobuf",
        extensions: &["proto"],
        file_names: &[],
    },
    TextFormat {
        name: "thrift",
        extensions: &["thrift"],
        file_names: &[],
    },
    TextFormat {
        name: "graphql",
        extensions: &["graphql", "gql"],
        file_names: &[],
    },
    TextFormat {
        name: "terraform",
        extensions: &["tf", "tfvars", "hcl"],
        file_names: &[],
    },
    TextFormat {
        name: "sql",
        extensions: &["sql"],
        file_names: &[],
    },
    TextFormat {
        name: "yaml",
        extensions: &["yml", "yaml"],
        file_names: &[],
    },
    TextFormat {
        name: "toml",
        extensions: &["toml"],
        file_names: &[],
    },
    TextFormat {
        name: "json",
        extensions: &["json", "jsonc", "json5"],
        file_names: &[],
    },
    TextFormat {
        name: "xml",
        extensions: &[
            "xml", "xsd", "xsl", "csproj", "fsproj", "props", "targets", "plist",
        ],
        file_names: &[],
    },
    TextFormat {
        name: "ini",
        extensions: &["ini", "cfg", "conf", "properties", "editorconfig"],
        file_names: &[],
    },
    TextFormat {
        name: "build",
        extensions: &[
            "gradle", "cmake", "mk", "mak", "bzl", "bazel", "nix", "just",
        ],
        file_names: &[
            "Makefile",
            "GNUmakefile",
            "makefile",
            "CMakeLists.txt",
            "BUILD",
            "WORKSPACE",
            "Justfile",
            "justfile",
            "Rakefile",
            "Gemfile",
            "Podfile",
            "Vagrantfile",
            "Jenkinsfile",
            "Procfile",
            "Brewfile",
            "Fastfile",
            "Caddyfile",
        ],
    },
    TextFormat {
        name: "dockerfile",
        extensions: &["dockerfile", "containerfile"],
        file_names: &["Dockerfile", "Containerfile"],
    },
    TextFormat {
        name: "requirements",
        extensions: &[],
        file_names: &["requirements.txt"],
    },
    TextFormat {
        name: "markup",
        extensions: &[
            "html", "htm", "css", "scss", "sass", "less", "styl", "rst", "adoc", "org", "tex",
        ],
        file_names: &[],
    },
    TextFormat {
        name: "template",
        extensions: &[
            "erb", "ejs", "hbs", "mustache", "jinja", "j2", "twig", "liquid", "eex", "heex",
            "leex", "tmpl", "tpl",
        ],
        file_names: &[],
    },
    TextFormat {
        name: "source",
        extensions: &[
            "pl",
            "pm",
            "r",
            "jl",
            "erl",
            "hrl",
            "clj",
            "cljs",
            "cljc",
            "edn",
            "ml",
            "mli",
            "fs",
            "fsi",
            "fsx",
            "nim",
            "m",
            "mm",
            "groovy",
            "ps1",
            "psm1",
            "fish",
            "vim",
            "elm",
            "purs",
            "cr",
            "d",
            "v",
            "sol",
            "vala",
            "adb",
            "ads",
            "f90",
            "f95",
            "pas",
            "tcl",
            "awk",
            "asm",
            "s",
            "cu",
            "cuh",
            "glsl",
            "hlsl",
            "wgsl",
            "metal",
            "jsonnet",
            "libsonnet",
            "rego",
            "dhall",
            "cabal",
            "gleam",
            "odin",
            "hx",
            "rkt",
            "scm",
            "lisp",
            "el",
            "coffee",
            "cob",
            "vb",
            "bas",
        ],
        file_names: &[],
    },
];

/// Names of files that are data however they end (`package-lock.json` is JSON, but a
/// generated lock file), and knowcode's own configuration.
const DATA_FILE_NAMES: &[&str] = &[
    // knowcode's own configuration, not the project's.
    "aimodels.yaml",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "composer.lock",
    "yarn.lock",
    "pnpm-lock.yaml",
];

/// The text format of a path, by file name then extension; None for files not read as text.
pub fn format_of(path: &str) -> Option<&'static str> {
    let file = path.rsplit('/').next().unwrap_or(path);
    if DATA_FILE_NAMES.contains(&file) {
        return None;
    }
    if let Some(format) = TEXT_FORMATS.iter().find(|f| f.file_names.contains(&file)) {
        return Some(format.name);
    }
    let ext = file.rsplit_once('.')?.1.to_ascii_lowercase();
    TEXT_FORMATS
        .iter()
        .find(|f| f.extensions.contains(&ext.as_str()))
        .map(|f| f.name)
}

/// A block without a blank line longer than this is cut every this many lines.
const MAX_BLOCK_LINES: u32 = 40;

/// Fills `parsed` as a text file: one entity of kind `text` spanning the file, whose split
/// lines are the starts of blank-line blocks (and every [`MAX_BLOCK_LINES`] lines inside a
/// longer block). Any entities, calls or imports a failed parse left are replaced.
pub(super) fn read_as_text(parsed: &mut ParsedFile, format: &str) {
    let file_name = parsed.path.rsplit('/').next().unwrap_or(&parsed.path);
    let file = Entity {
        split_lines: block_starts(&parsed.text),
        ..parsed.whole_file_entity(
            EntityKind::Text,
            file_name.to_string(),
            parsed.path.clone(),
            format.to_string(),
        )
    };
    parsed.entities = vec![file];
    parsed.calls.clear();
    parsed.imports.clear();
    parsed.heritage.clear();
    parsed.containers.clear();
}

/// 1-based lines where a blank-line block starts, and cuts inside blocks longer than
/// [`MAX_BLOCK_LINES`].
fn block_starts(text: &str) -> Vec<u32> {
    let mut starts = Vec::new();
    let mut previous_blank = true;
    let mut block_start = 1;
    for (index, line) in text.lines().enumerate() {
        let number = index as u32 + 1;
        let blank = line.trim().is_empty();
        if !blank && previous_blank {
            block_start = number;
            if number > 1 {
                starts.push(number);
            }
        } else if !blank && number - block_start >= MAX_BLOCK_LINES {
            block_start = number;
            starts.push(number);
        }
        previous_blank = blank;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_known_by_name_and_extension_and_data_is_not_text() {
        assert_eq!(format_of("api/v1/cart.proto"), Some("protobuf"));
        assert_eq!(format_of("infra/main.tf"), Some("terraform"));
        assert_eq!(format_of("deploy/Dockerfile"), Some("dockerfile"));
        assert_eq!(format_of("CMakeLists.txt"), Some("build"));
        assert_eq!(format_of("config/App.YAML"), Some("yaml"));
        assert_eq!(format_of("package-lock.json"), None);
        assert_eq!(format_of("tests/ui/error.stderr"), None);
        assert_eq!(format_of("notes.txt"), None);
        assert_eq!(format_of("LICENSE"), None);
    }

    #[test]
    fn blocks_start_after_blank_lines_and_long_blocks_are_cut() {
        assert_eq!(block_starts("a\nb\n\nc\n\n\nd\n"), vec![4, 7]);
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        assert_eq!(block_starts(&long), vec![41, 81]);
    }
}
