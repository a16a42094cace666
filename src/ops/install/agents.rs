//! The agents `knowcode install` knows: how to tell one is present, where its MCP
//! configuration lives (per project and per user), and the shape of its server entry, each as
//! the agent documents it. Data and small pure functions only; no file is read or written here.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::edit::{Change, Format};

/// The name every entry is written under.
pub const SERVER_NAME: &str = "knowcode";
/// The tools that only read (safe to allow without asking); lifecycle builds, so it asks.
pub const READ_ONLY_TOOLS: [&str; 2] = ["knowcode_retrieve", "knowcode_inspect"];

/// The folders a user-level path is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `$HOME`.
    Home,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (Zed, OpenCode: on every platform).
    XdgConfig,
    /// The platform's config folder (`~/.config` on Linux, `~/Library/Application Support`
    /// on macOS): VS Code and its extensions.
    PlatformConfig,
}

/// How an agent's server entry is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"command", "args"}`.
    Plain,
    /// `{"type": "stdio", "command", "args"}` (Claude Code, VS Code).
    Stdio,
    /// `{"type": "local", "command": [..], "enabled": true}` (OpenCode).
    OpenCode,
    /// `{"command", "args", "disabled": false, "autoApprove": [read-only tools]}` (Cline).
    Cline,
}

/// One supported agent.
#[derive(Debug)]
pub struct Agent {
    /// The name `--agent` takes.
    pub name: &'static str,
    pub display: &'static str,
    /// Folders (relative to their base) whose presence means the agent is installed.
    pub markers: &'static [(Base, &'static str)],
    /// Executables on PATH that mean the agent is installed.
    pub binaries: &'static [&'static str],
    /// The project-level config file, relative to the repository.
    pub project_file: Option<&'static str>,
    /// The user-level config file.
    pub user_file: Option<(Base, &'static str)>,
    pub format: Format,
    /// Keys leading to the object that holds the servers.
    pub container: &'static [&'static str],
    pub shape: Shape,
}

/// Every agent, in the order they are reported.
pub const AGENTS: [Agent; 9] = [
    Agent {
        name: "claude-code",
        display: "Claude Code",
        markers: &[(Base::Home, ".claude"), (Base::Home, ".claude.json")],
        binaries: &["claude"],
        project_file: Some(".mcp.json"),
        user_file: Some((Base::Home, ".claude.json")),
        format: Format::Json,
        container: &["mcpServers"],
        shape: Shape::Stdio,
    },
    Agent {
        name: "codex",
        display: "Codex",
        markers: &[(Base::Home, ".codex")],
        binaries: &["codex"],
        project_file: None,
        user_file: Some((Base::Home, ".codex/config.toml")),
        format: Format::Toml,
        container: &["mcp_servers"],
        shape: Shape::Plain,
    },
    Agent {
        name: "cursor",
        display: "Cursor",
        markers: &[(Base::Home, ".cursor")],
        binaries: &["cursor"],
        project_file: Some(".cursor/mcp.json"),
        user_file: Some((Base::Home, ".cursor/mcp.json")),
        format: Format::Json,
        container: &["mcpServers"],
        shape: Shape::Plain,
    },
    Agent {
        name: "vscode",
        display: "VS Code",
        markers: &[(Base::PlatformConfig, "Code")],
        binaries: &["code"],
        project_file: Some(".vscode/mcp.json"),
        user_file: Some((Base::PlatformConfig, "Code/User/mcp.json")),
        format: Format::Json,
        container: &["servers"],
        shape: Shape::Stdio,
    },
    Agent {
        name: "gemini",
        display: "Gemini CLI",
        markers: &[(Base::Home, ".gemini")],
        binaries: &["gemini"],
        project_file: Some(".gemini/settings.json"),
        user_file: Some((Base::Home, ".gemini/settings.json")),
        format: Format::Json,
        container: &["mcpServers"],
        shape: Shape::Plain,
    },
    Agent {
        name: "opencode",
        display: "OpenCode",
        markers: &[(Base::XdgConfig, "opencode")],
        binaries: &["opencode"],
        project_file: Some("opencode.json"),
        user_file: Some((Base::XdgConfig, "opencode/opencode.json")),
        format: Format::Json,
        container: &["mcp"],
        shape: Shape::OpenCode,
    },
    Agent {
        name: "windsurf",
        display: "Windsurf",
        markers: &[(Base::Home, ".codeium/windsurf")],
        binaries: &["windsurf"],
        project_file: None,
        user_file: Some((Base::Home, ".codeium/windsurf/mcp_config.json")),
        format: Format::Json,
        container: &["mcpServers"],
        shape: Shape::Plain,
    },
    Agent {
        name: "zed",
        display: "Zed",
        markers: &[(Base::XdgConfig, "zed")],
        binaries: &["zed", "zeditor"],
        project_file: None,
        user_file: Some((Base::XdgConfig, "zed/settings.json")),
        format: Format::Json,
        container: &["context_servers"],
        shape: Shape::Plain,
    },
    Agent {
        name: "cline",
        display: "Cline",
        markers: &[(
            Base::PlatformConfig,
            "Code/User/globalStorage/saoudrizwan.claude-dev",
        )],
        binaries: &[],
        project_file: None,
        user_file: Some((
            Base::PlatformConfig,
            "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        )),
        format: Format::Json,
        container: &["mcpServers"],
        shape: Shape::Cline,
    },
];

/// The agent `--agent` names (a few common spellings accepted).
pub fn by_name(name: &str) -> Option<&'static Agent> {
    let wanted = match name.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
        "claude" | "claude-code" => "claude-code",
        "vs-code" | "code" | "vscode" | "copilot" => "vscode",
        "gemini" | "gemini-cli" => "gemini",
        other => return AGENTS.iter().find(|a| a.name == other),
    };
    AGENTS.iter().find(|a| a.name == wanted)
}

/// The folders the bases stand for, read once from the environment.
#[derive(Debug, Clone)]
pub struct Homes {
    pub home: PathBuf,
    pub xdg_config: PathBuf,
    pub platform_config: PathBuf,
    /// `CODEX_HOME`, when set, replaces `~/.codex`.
    pub codex_home: Option<PathBuf>,
}

impl Homes {
    /// From `$HOME` (required) and the XDG variables.
    pub fn from_env() -> Option<Self> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)?;
        let xdg_config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"));
        let platform_config = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else {
            xdg_config.clone()
        };
        Some(Self {
            home,
            xdg_config,
            platform_config,
            codex_home: std::env::var_os("CODEX_HOME").map(PathBuf::from),
        })
    }

    pub fn resolve(&self, base: Base, relative: &str) -> PathBuf {
        if let (Some(codex), Some(rest)) = (&self.codex_home, relative.strip_prefix(".codex/")) {
            return codex.join(rest);
        }
        match base {
            Base::Home => self.home.join(relative),
            Base::XdgConfig => self.xdg_config.join(relative),
            Base::PlatformConfig => self.platform_config.join(relative),
        }
    }
}

impl Agent {
    /// Whether the agent looks installed: one of its folders exists, or one of its commands
    /// is on PATH.
    pub fn is_present(&self, homes: &Homes) -> bool {
        self.markers
            .iter()
            .any(|(base, rel)| homes.resolve(*base, rel).exists())
            || self.binaries.iter().any(|b| on_path(b))
    }

    /// The config file for a scope, if the agent has one at that scope.
    pub fn config_file(&self, scope: Scope, project: &Path, homes: &Homes) -> Option<PathBuf> {
        match scope {
            Scope::Project => self.project_file.map(|rel| project_file(project, rel)),
            Scope::User => self.user_file.map(|(base, rel)| homes.resolve(base, rel)),
        }
    }

    /// The server entry: this binary serving this repository.
    pub fn entry(&self, binary: &Path, project: &Path) -> Value {
        let command = binary.to_string_lossy();
        let args = server_args(project);
        match self.shape {
            Shape::Plain => json!({"command": command, "args": args}),
            Shape::Stdio => json!({"type": "stdio", "command": command, "args": args}),
            Shape::OpenCode => {
                let mut line = vec![command.to_string()];
                line.extend(args);
                json!({"type": "local", "command": line, "enabled": true})
            }
            Shape::Cline => json!({
                "command": command,
                "args": args,
                "disabled": false,
                "autoApprove": READ_ONLY_TOOLS,
            }),
        }
    }

    /// The server-entry change for this agent's file.
    pub fn entry_change(&self, binary: &Path, project: &Path, existing: &Value) -> Change {
        Change::Member {
            path: self.container_path(existing),
            name: SERVER_NAME.to_string(),
            value: self.entry(binary, project),
        }
    }

    /// The keys to the servers object; OpenCode 2 nests them under `mcp.servers`.
    fn container_path(&self, existing: &Value) -> Vec<String> {
        let mut path: Vec<String> = self.container.iter().map(|s| s.to_string()).collect();
        let nested_servers = existing
            .pointer("/mcp/servers")
            .is_some_and(Value::is_object);
        if self.shape == Shape::OpenCode && nested_servers {
            path.push("servers".into());
        }
        path
    }

    /// The allowlist change, where the agent keeps one in a separate file: Claude Code's
    /// `permissions.allow` in `.claude/settings.json` (project) or `~/.claude/settings.json`.
    pub fn allowlist(
        &self,
        scope: Scope,
        project: &Path,
        homes: &Homes,
    ) -> Option<(PathBuf, Change)> {
        if self.name != "claude-code" {
            return None;
        }
        let file = match scope {
            Scope::Project => project.join(".claude/settings.json"),
            Scope::User => homes.home.join(".claude/settings.json"),
        };
        let items = READ_ONLY_TOOLS
            .iter()
            .map(|tool| format!("mcp__{SERVER_NAME}__{tool}"))
            .collect();
        Some((
            file,
            Change::ArrayItems {
                path: vec!["permissions".into(), "allow".into()],
                items,
            },
        ))
    }
}

/// The project file, or the `.jsonc` beside it when only that one exists (OpenCode).
fn project_file(project: &Path, relative: &str) -> PathBuf {
    let plain = project.join(relative);
    let commented = project.join(format!("{relative}c"));
    if !plain.exists() && relative.ends_with(".json") && commented.exists() {
        return commented;
    }
    plain
}

/// `mcp --store <repository>`: the entry serves this repository wherever the agent starts it.
pub fn server_args(project: &Path) -> Vec<String> {
    vec![
        "mcp".into(),
        "--store".into(),
        project.to_string_lossy().into_owned(),
    ]
}

/// Where the configuration is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

fn on_path(binary: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(binary).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_spellings_resolve() {
        assert_eq!(by_name("Claude").unwrap().name, "claude-code");
        assert_eq!(by_name("vs_code").unwrap().name, "vscode");
        assert_eq!(by_name("zed").unwrap().name, "zed");
        assert!(by_name("emacs").is_none());
        let mut names: Vec<&str> = AGENTS.iter().map(|a| a.name).collect();
        names.dedup();
        assert_eq!(names.len(), AGENTS.len());
    }

    #[test]
    fn opencode_entry_is_one_command_line() {
        let agent = by_name("opencode").unwrap();
        let entry = agent.entry(Path::new("/bin/knowcode"), Path::new("/repo"));
        assert_eq!(
            entry["command"],
            json!(["/bin/knowcode", "mcp", "--store", "/repo"])
        );
        let v2 = json!({"mcp": {"servers": {}}});
        let Change::Member { path, .. } = agent.entry_change(Path::new("/b"), Path::new("/r"), &v2)
        else {
            panic!("member change expected");
        };
        assert_eq!(path, ["mcp", "servers"]);
    }
}
