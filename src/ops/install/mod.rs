//! `knowcode install`: writes (or, with `uninstall`, removes) this binary's MCP server entry in
//! the config file of each agent present — Claude Code, Codex, Cursor, VS Code, Gemini CLI,
//! OpenCode, Windsurf, Zed, Cline — plus Claude Code's allowlist for the read-only tools and,
//! when asked, a short section in `AGENTS.md`/`CLAUDE.md`. Each file is edited in place
//! (`edit`), only at the keys knowcode owns; what had to be created for an entry is remembered
//! in `<config>/knowcode/installed.json` so that uninstalling restores the file byte for byte.
//! One agent failing (malformed file, read-only folder) never stops the others. Nothing is
//! written on a dry run. Does not start servers (`doctor --mcp` does).

pub mod agents;
pub mod edit;
mod instructions;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use agents::{AGENTS, Agent, Homes, SERVER_NAME, Scope};
use edit::{Change, EditError, Format, KeyPath};

/// What `install` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--agent` names; empty means every agent found on this machine.
    pub agents: Vec<String>,
    /// `--project` / `--user`; `None` means the project file where the agent has one.
    pub scope: Option<Scope>,
    pub dry_run: bool,
    pub uninstall: bool,
    /// Also write (or remove) the instructions section in AGENTS.md / CLAUDE.md.
    pub instructions: bool,
    /// The repository served (absolute).
    pub project: PathBuf,
    /// The knowcode binary the entries start (absolute).
    pub binary: PathBuf,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Added,
    Updated,
    Unchanged,
    Removed,
    /// Uninstall found nothing of knowcode's there.
    Absent,
}

/// One file's change; `diff` is the exact edit (unified diff), empty when nothing changed.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    pub path: PathBuf,
    /// `project` or `user`; absent for the instructions files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<&'static str>,
    pub action: Action,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// Why the change in `diff` could not be made (the file is left as it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FileChange {
    fn new(path: &Path, action: Action) -> Self {
        Self {
            path: path.to_path_buf(),
            scope: None,
            action,
            diff: String::new(),
            error: None,
        }
    }

    fn in_scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope.as_str());
        self
    }
}

/// How one agent came out.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Done { files: Vec<FileChange> },
    Skipped { reason: String },
    Failed { error: String },
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentReport {
    pub agent: &'static str,
    pub display: &'static str,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Everything `install` did (or, on a dry run, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub dry_run: bool,
    pub agents: Vec<AgentReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<FileChange>,
}

impl Report {
    /// No named agent failed and every instructions file was written.
    pub fn ok(&self) -> bool {
        let agent_failed = self
            .agents
            .iter()
            .any(|a| matches!(a.outcome, Outcome::Failed { .. }));
        !agent_failed && self.instructions.iter().all(|f| f.error.is_none())
    }
}

/// Why `install` could not run at all (per-agent problems are in the report instead).
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("no home folder ($HOME is not set): user-level agent configs cannot be found")]
    NoHome,
    #[error("unknown agent `{0}`; known: {known}", known = known_agents())]
    UnknownAgent(String),
}

/// A failure on one file.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error("{path}: {source}")]
    Edit { path: PathBuf, source: EditError },
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
}

fn known_agents() -> String {
    AGENTS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

/// Runs `install` (or `install --uninstall`) for the chosen agents.
pub fn run(options: &Options) -> Result<Report, InstallError> {
    let homes = Homes::from_env().ok_or(InstallError::NoHome)?;
    let chosen = choose(options, &homes)?;
    let mut record = Record::load(&homes);
    let mut report = Report {
        dry_run: options.dry_run,
        agents: Vec::new(),
        instructions: Vec::new(),
    };
    for agent in chosen {
        let outcome = configure(agent, options, &homes, &mut record);
        report.agents.push(AgentReport {
            agent: agent.name,
            display: agent.display,
            outcome,
        });
    }
    if options.instructions {
        report.instructions = instructions::apply(options);
    }
    if !options.dry_run {
        record.save(&homes);
    }
    Ok(report)
}

/// The agents to configure: the named ones, else those present (every one on uninstall).
fn choose(options: &Options, homes: &Homes) -> Result<Vec<&'static Agent>, InstallError> {
    if options.agents.is_empty() {
        return Ok(AGENTS
            .iter()
            .filter(|a| options.uninstall || a.is_present(homes))
            .collect());
    }
    options
        .agents
        .iter()
        .map(|name| agents::by_name(name).ok_or_else(|| InstallError::UnknownAgent(name.clone())))
        .collect()
}

fn configure(
    agent: &'static Agent,
    options: &Options,
    homes: &Homes,
    record: &mut Record,
) -> Outcome {
    if !options.uninstall && !agent.is_present(homes) {
        let reason = format!(
            "{} is not installed here (nothing found on PATH or in its folders)",
            agent.display
        );
        return Outcome::Skipped { reason };
    }
    let targets = targets(agent, options, homes);
    if targets.is_empty() {
        return Outcome::Skipped {
            reason: format!(
                "{} has no {}-level config file",
                agent.display,
                options.scope.unwrap_or(Scope::Project).as_str()
            ),
        };
    }
    let mut files = Vec::new();
    for (scope, file) in targets {
        let entry =
            |existing: &Value| agent.entry_change(&options.binary, &options.project, existing);
        let mut edits = vec![edit_file(&file, agent.format, entry, options, record)];
        if let Some((allow_file, change)) = agent.allowlist(scope, &options.project, homes) {
            edits.push(edit_file(
                &allow_file,
                Format::Json,
                |_| change.clone(),
                options,
                record,
            ));
        }
        for edit in edits {
            match edit {
                Ok(change) => files.push(change.in_scope(scope)),
                Err(err) => {
                    return Outcome::Failed {
                        error: err.to_string(),
                    };
                }
            }
        }
    }
    Outcome::Done { files }
}

/// The files for this agent: on install, the asked scope's, else the project file where the
/// agent has one, else the user file; on uninstall, every scope's unless one is asked.
fn targets(agent: &Agent, options: &Options, homes: &Homes) -> Vec<(Scope, PathBuf)> {
    let scopes: &[Scope] = match options.scope {
        Some(Scope::Project) => &[Scope::Project],
        Some(Scope::User) => &[Scope::User],
        None => &[Scope::Project, Scope::User],
    };
    let mut files = scopes.iter().filter_map(|scope| {
        agent
            .config_file(*scope, &options.project, homes)
            .map(|file| (*scope, file))
    });
    match options.uninstall {
        true => files.collect(),
        false => files.next().into_iter().collect(),
    }
}

/// Applies (or reverts) one change to one file, honouring the dry run.
fn edit_file(
    path: &Path,
    format: Format,
    change_for: impl Fn(&Value) -> Change,
    options: &Options,
    record: &mut Record,
) -> Result<FileChange, FileError> {
    let existed = path.exists();
    if options.uninstall && !existed {
        record.take(path);
        return Ok(FileChange::new(path, Action::Absent));
    }
    let before = match existed {
        true => std::fs::read_to_string(path).map_err(|e| io_error(path, e))?,
        false => String::new(),
    };
    let edit_error = |source| FileError::Edit {
        path: path.to_path_buf(),
        source,
    };
    let current = edit::parse_value(format, &before).map_err(edit_error)?;
    let change = change_for(&current);
    let mut remove_folder = false;
    let (after, action) = if options.uninstall {
        let created = match options.dry_run {
            true => record.peek(path),
            false => record.take(path),
        };
        remove_folder = created.created_folder;
        uninstall_text(format, &before, &change, &created).map_err(edit_error)?
    } else {
        let (after, action, created) =
            install_text(existed, format, &before, &current, &change).map_err(edit_error)?;
        if !options.dry_run && action != Action::Unchanged {
            let written = after.as_deref().unwrap_or_default();
            // Where the editor had to reflow the container (a one-line object), removing the
            // entry would not give the old bytes back: keep them, to restore while the file
            // is still exactly as knowcode wrote it.
            let reverts_exactly = existed
                && edit::revert(format, written, &change, &created)
                    .ok()
                    .as_deref()
                    == Some(before.as_str());
            let original = (existed && !reverts_exactly).then_some(before.as_str());
            record.remember(path, !existed, created, original, written);
        }
        (after, action)
    };
    let changed = match &after {
        Some(text) => !existed || *text != before,
        None => existed,
    };
    let mut diff = String::new();
    if changed {
        diff = unified_diff(
            path,
            &before,
            after.as_deref().unwrap_or(""),
            existed,
            after.is_some(),
        );
        if !options.dry_run {
            write_or_delete(path, after.as_deref(), remove_folder)?;
        }
    }
    Ok(FileChange {
        diff,
        ..FileChange::new(path, action)
    })
}

/// The new text after installing (`current` is `before` parsed), what happened, and the
/// containers the change created.
fn install_text(
    existed: bool,
    format: Format,
    before: &str,
    current: &Value,
    change: &Change,
) -> Result<(Option<String>, Action, Vec<KeyPath>), EditError> {
    if edit::is_applied(current, change) {
        return Ok((Some(before.to_string()), Action::Unchanged, Vec::new()));
    }
    let had_entry = edit::has_member(current, change);
    let (mut after, created) = edit::apply(format, before, change)?;
    if !existed && !after.ends_with('\n') {
        after.push('\n');
    }
    let action = if had_entry {
        Action::Updated
    } else {
        Action::Added
    };
    Ok((Some(after), action, created))
}

/// The new text after uninstalling (`None`: delete the file knowcode created), and what
/// happened.
fn uninstall_text(
    format: Format,
    before: &str,
    change: &Change,
    created: &Created,
) -> Result<(Option<String>, Action), EditError> {
    let untouched_since = created.written_sha256.as_deref() == Some(&sha256_hex(before));
    if let (Some(original), true) = (&created.original, untouched_since) {
        return Ok((Some(original.clone()), Action::Removed));
    }
    let after = edit::revert(format, before, change, &created.created)?;
    if after == before {
        return Ok((Some(after), Action::Absent));
    }
    let delete = created.created_file && edit::is_empty_document(format, &after)?;
    Ok((if delete { None } else { Some(after) }, Action::Removed))
}

fn unified_diff(path: &Path, before: &str, after: &str, existed: bool, kept: bool) -> String {
    let old = if existed {
        path.display().to_string()
    } else {
        "/dev/null".into()
    };
    let new = if kept {
        path.display().to_string()
    } else {
        "/dev/null".into()
    };
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(&old, &new)
        .to_string()
}

fn io_error(path: &Path, err: std::io::Error) -> FileError {
    let reason = match err.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
            format!("cannot write here ({err}); nothing was changed in this file")
        }
        _ => err.to_string(),
    };
    FileError::Io {
        path: path.to_path_buf(),
        reason,
    }
}

/// Writes the new text through a temporary file beside it, or deletes the file (and, with
/// `remove_folder`, the folder knowcode created for it, when nothing else is in it).
fn write_or_delete(path: &Path, text: Option<&str>, remove_folder: bool) -> Result<(), FileError> {
    let Some(text) = text else {
        std::fs::remove_file(path).map_err(|e| io_error(path, e))?;
        if let Some(folder) = path.parent().filter(|_| remove_folder) {
            let _ = std::fs::remove_dir(folder); // only succeeds when empty
        }
        return Ok(());
    };
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(|e| io_error(folder, e))?;
    let mut part = tempfile::NamedTempFile::new_in(folder).map_err(|e| io_error(path, e))?;
    std::io::Write::write_all(&mut part, text.as_bytes()).map_err(|e| io_error(path, e))?;
    keep_permissions(part.path(), path);
    part.persist(path).map_err(|e| io_error(path, e.error))?;
    Ok(())
}

/// A rewritten file keeps its mode; a new one gets the usual 0644 (a temporary file is 0600).
pub(crate) fn keep_permissions(temporary: &Path, path: &Path) {
    match std::fs::metadata(path) {
        Ok(meta) => {
            let _ = std::fs::set_permissions(temporary, meta.permissions());
        }
        #[cfg(unix)]
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(temporary, std::fs::Permissions::from_mode(0o644));
        }
        #[cfg(not(unix))]
        Err(_) => {}
    }
}

/// What knowcode created to hold its entries, per file, so that uninstalling removes exactly
/// that: the file itself, or the containers (`mcpServers`, `permissions.allow`, …).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: BTreeMap<PathBuf, Created>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Created {
    created_file: bool,
    /// The file's folder did not exist either (`.cursor/`, `.vscode/`, …).
    #[serde(default)]
    created_folder: bool,
    created: Vec<KeyPath>,
    /// The file before the first install, kept only when removing the entry alone would not
    /// give its bytes back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    original: Option<String>,
    /// The file as knowcode last wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    written_sha256: Option<String>,
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

impl Record {
    fn path(homes: &Homes) -> PathBuf {
        homes.xdg_config.join("knowcode").join("installed.json")
    }

    fn load(homes: &Homes) -> Self {
        std::fs::read_to_string(Self::path(homes))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn save(&self, homes: &Homes) {
        let path = Self::path(homes);
        if self.files.is_empty() {
            let _ = write_or_delete(&path, None, true);
            return;
        }
        if let Ok(text) = serde_json::to_string_pretty(self) {
            let _ = write_or_delete(&path, Some(&text), false);
        }
    }

    /// Notes what an install created; an earlier record for the file is kept (the first
    /// install is the one that created things).
    fn remember(
        &mut self,
        path: &Path,
        created_file: bool,
        created: Vec<KeyPath>,
        original: Option<&str>,
        written: &str,
    ) {
        let folder_missing = path.parent().is_some_and(|folder| !folder.exists());
        let entry = self.files.entry(path.to_path_buf()).or_default();
        if entry.original.is_none() && entry.written_sha256.is_none() {
            entry.original = original.map(str::to_string);
        }
        entry.written_sha256 = Some(sha256_hex(written));
        entry.created_file |= created_file;
        entry.created_folder |= created_file && folder_missing;
        for container in created {
            if !entry.created.contains(&container) {
                entry.created.push(container);
            }
        }
    }

    fn take(&mut self, path: &Path) -> Created {
        self.files.remove(path).unwrap_or_default()
    }

    fn peek(&self, path: &Path) -> Created {
        self.files.get(path).cloned().unwrap_or_default()
    }
}

/// One knowcode server entry found in an agent's config (for `doctor --mcp`).
#[derive(Debug, Clone)]
pub struct FoundEntry {
    pub agent: &'static str,
    pub file: PathBuf,
    pub command: String,
    pub args: Vec<String>,
}

/// Every knowcode entry in the project's and the user's agent configs.
pub fn found_entries(project: &Path) -> Vec<FoundEntry> {
    let Some(homes) = Homes::from_env() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for agent in &AGENTS {
        for scope in [Scope::Project, Scope::User] {
            let Some(file) = agent.config_file(scope, project, &homes) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(document) = edit::parse_value(agent.format, &text) else {
                continue;
            };
            let container = agent.container.join("/");
            let entry = document
                .pointer(&format!("/{container}/{SERVER_NAME}"))
                .or_else(|| document.pointer(&format!("/{container}/servers/{SERVER_NAME}")));
            if let Some((command, args)) = entry.and_then(command_line) {
                found.push(FoundEntry {
                    agent: agent.display,
                    file,
                    command,
                    args,
                });
            }
        }
    }
    found
}

/// `command` + `args`, or OpenCode's single `command` array.
fn command_line(entry: &Value) -> Option<(String, Vec<String>)> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    match &entry["command"] {
        Value::String(command) => Some((command.clone(), strings(&entry["args"]))),
        Value::Array(_) => {
            let mut line = strings(&entry["command"]);
            (!line.is_empty()).then(|| {
                let command = line.remove(0);
                (command, line)
            })
        }
        _ => None,
    }
}
