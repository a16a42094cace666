//! Local telemetry: one JSONL line per tool call in `<store>/.knowcode/telemetry.jsonl`,
//! never leaving the machine. Privacy is structural: a record holds only fields on the
//! allowlist of its event type ([`allowed_fields`]); free text is never written — query and
//! target texts become keyed hashes (HMAC-SHA-256 with a per-store random key kept in
//! `telemetry.key`, mode 0600, so equal queries can be counted without being readable or
//! guessable from a dictionary), enum-valued arguments are recorded only when they are one
//! of the enum's values, and unknown tool or action names are recorded as `other`. Files
//! rotate by size and by age. Clearing is CLI-only (`knowcode telemetry clear`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::contract::{self, Kind, Use};

const FILE: &str = "telemetry.jsonl";
const ROTATED: &str = "telemetry.jsonl.1";
const KEY_FILE: &str = "telemetry.key";
/// Rotate when the live file passes this size.
pub const MAX_BYTES: u64 = 1024 * 1024;
/// Rotate when the live file's oldest event is older than this; a rotated file older than
/// this is deleted.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// One recorded call: fixed fields plus the allowlisted `fields` of its event type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    pub ts_ms: u64,
    pub tool: String,
    pub action: String,
    pub bytes: usize,
    pub ms: u64,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub fields: Map<String, Value>,
}

/// The arguments recorded for an event type: a retrieval action's arguments in the contract.
/// How each is recorded follows its kind: free text only as a keyed hash under `<name>_id`; a
/// choice only when it is one of its names; a number as is; flags not at all.
fn allowed_fields(tool: &str, action: &str) -> &'static [Use] {
    match contract::action_spec(tool, action) {
        Some(spec) if spec.tool == contract::RETRIEVE => spec.args,
        _ => &[],
    }
}

/// A tool or action name as recorded: known names only.
pub fn known_name(name: &str, known: &[&str]) -> String {
    if known.contains(&name) {
        name.to_string()
    } else {
        "other".to_string()
    }
}

/// The telemetry file of one store.
pub struct Telemetry {
    dir: PathBuf,
    lock: Mutex<()>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Telemetry {
    /// Telemetry kept in `<store>/.knowcode/`.
    pub fn at(store_base: &Path) -> Telemetry {
        Telemetry {
            dir: store_base.to_path_buf(),
            lock: Mutex::new(()),
        }
    }

    /// The live telemetry file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// The event for one call, with only allowlisted fields of its arguments.
    pub fn event(
        &self,
        tool: &str,
        action: &str,
        arguments: &Map<String, Value>,
        bytes: usize,
        ms: u64,
        outcome: &str,
    ) -> Event {
        let tool = known_name(tool, &contract::TOOLS);
        let known_actions: Vec<&str> = contract::ACTIONS.iter().map(|s| s.action).collect();
        let action = known_name(action, &known_actions);
        let mut fields = Map::new();
        for used in allowed_fields(&tool, &action) {
            let name = used.param.name;
            let Some(value) = arguments.get(name) else {
                continue;
            };
            match (used.param.kind, value) {
                (Kind::Text, Value::String(text)) => {
                    if let Some(id) = self.keyed_hash(text) {
                        fields.insert(format!("{name}_id"), json!(id));
                    }
                }
                (Kind::Choice(names), Value::String(text)) if names().contains(&text.as_str()) => {
                    fields.insert(name.into(), value.clone());
                }
                (Kind::Integer, Value::Number(_)) => {
                    fields.insert(name.into(), value.clone());
                }
                _ => {}
            }
        }
        Event {
            ts_ms: now_ms(),
            tool,
            action,
            bytes,
            ms,
            outcome: outcome.to_string(),
            fields,
        }
    }

    /// HMAC-SHA-256 of `text` under the store's key, first 16 hex digits.
    fn keyed_hash(&self, text: &str) -> Option<String> {
        let key = self.key().ok()?;
        let mut inner_pad = [0x36u8; 64];
        let mut outer_pad = [0x5cu8; 64];
        for (i, byte) in key.iter().enumerate() {
            inner_pad[i] ^= byte;
            outer_pad[i] ^= byte;
        }
        let inner = Sha256::new()
            .chain_update(inner_pad)
            .chain_update(text.as_bytes())
            .finalize();
        let outer = Sha256::new()
            .chain_update(outer_pad)
            .chain_update(inner)
            .finalize();
        Some(hex::encode(&outer[..8]))
    }

    /// The per-store key, created (32 random bytes, mode 0600) on first use.
    fn key(&self) -> std::io::Result<[u8; 32]> {
        let path = self.dir.join(KEY_FILE);
        if let Ok(bytes) = std::fs::read(&path)
            && let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice())
        {
            return Ok(key);
        }
        let mut key = [0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
        std::fs::create_dir_all(&self.dir)?;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)?;
        file.write_all(&key)?;
        Ok(key)
    }

    /// Appends an event; failures to write are logged, never returned to the caller.
    pub fn record(&self, event: &Event) {
        let _guard = self.lock.lock().expect("telemetry lock");
        if let Err(err) = self.append(event) {
            tracing::debug!("telemetry not written: {err}");
        }
    }

    fn append(&self, event: &Event) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        self.rotate(SystemTime::now())?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path())?;
        writeln!(file, "{}", serde_json::to_string(event).unwrap_or_default())
    }

    /// Rotates the live file when too big or too old; deletes a rotated file past its age.
    fn rotate(&self, now: SystemTime) -> std::io::Result<()> {
        let live = self.path();
        let rotated = self.dir.join(ROTATED);
        let too_old = |ts_ms: u64| {
            let age = now
                .duration_since(UNIX_EPOCH + Duration::from_millis(ts_ms))
                .unwrap_or_default();
            age > MAX_AGE
        };
        if let Some(newest) = last_event_ms(&rotated)
            && too_old(newest)
        {
            std::fs::remove_file(&rotated)?;
        }
        let too_big = std::fs::metadata(&live).is_ok_and(|m| m.len() > MAX_BYTES);
        if too_big || first_event_ms(&live).is_some_and(too_old) {
            std::fs::rename(&live, &rotated)?;
        }
        Ok(())
    }

    /// Every recorded event, oldest first (rotated file included).
    pub fn events(&self) -> Vec<Event> {
        [self.dir.join(ROTATED), self.path()]
            .iter()
            .flat_map(|path| {
                std::fs::read_to_string(path)
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Event>(l).ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Per `tool:action`: count, p50 and p95 duration (ms), max payload bytes, errors.
    pub fn summary(&self) -> Value {
        let mut groups: BTreeMap<String, Vec<Event>> = BTreeMap::new();
        for event in self.events() {
            groups
                .entry(format!("{}:{}", event.tool, event.action))
                .or_default()
                .push(event);
        }
        let mut out = Map::new();
        for (key, events) in groups {
            let mut ms: Vec<u64> = events.iter().map(|e| e.ms).collect();
            ms.sort_unstable();
            let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
            let distinct: std::collections::BTreeSet<&str> = events
                .iter()
                .filter_map(|e| e.fields.get("query_id").or(e.fields.get("target_id")))
                .filter_map(Value::as_str)
                .collect();
            out.insert(
                key,
                json!({
                    "count": events.len(),
                    "distinct_inputs": distinct.len(),
                    "p50_ms": pct(0.5),
                    "p95_ms": pct(0.95),
                    "max_bytes": events.iter().map(|e| e.bytes).max().unwrap_or(0),
                    "errors": events.iter().filter(|e| e.outcome != "ok").count(),
                }),
            );
        }
        json!({"events": out})
    }

    /// Deletes the telemetry files and the key (CLI only). Returns how many files went.
    pub fn clear(&self) -> std::io::Result<usize> {
        let _guard = self.lock.lock().expect("telemetry lock");
        let mut removed = 0;
        for name in [FILE, ROTATED, KEY_FILE] {
            match std::fs::remove_file(self.dir.join(name)) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }
}

/// The time of a file's first event: only its first line is read (this runs on every
/// recorded call).
fn first_event_ms(path: &Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut line).ok()?;
    serde_json::from_str::<Event>(&line).ok().map(|e| e.ts_ms)
}

/// The time of a file's last event: only its tail is read.
fn last_event_ms(path: &Path) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 64 * 1024;
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(TAIL)))
        .ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    String::from_utf8_lossy(&tail)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Event>(l).ok())
        .map(|e| e.ts_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn only_allowlisted_fields_are_kept_and_text_becomes_a_keyed_hash() {
        let dir = tempfile::tempdir().unwrap();
        let telemetry = Telemetry::at(dir.path());
        let secret = "AKIAIOSFODNN7EXAMPLE password=hunter2";
        let args = arguments(
            json!({"action": "query", "query": secret, "task_type": secret,
                                    "verbosity": "minimal", "max_tokens": 900, "extra": secret}),
        );
        let event = telemetry.event(contract::RETRIEVE, "query", &args, 10, 3, "ok");
        let line = serde_json::to_string(&event).unwrap();
        assert!(
            !line.contains("hunter2") && !line.contains("AKIA"),
            "{line}"
        );
        assert_eq!(event.fields["verbosity"], "minimal");
        assert_eq!(event.fields["max_tokens"], 900);
        assert!(event.fields.get("task_type").is_none());
        let again = telemetry.event(contract::RETRIEVE, "query", &args, 10, 3, "ok");
        assert_eq!(event.fields["query_id"], again.fields["query_id"]);
        let other_store = Telemetry::at(&dir.path().join("other"));
        let elsewhere = other_store.event(contract::RETRIEVE, "query", &args, 10, 3, "ok");
        assert_ne!(event.fields["query_id"], elsewhere.fields["query_id"]);
        let unknown = telemetry.event(secret, secret, &args, 1, 1, "invalid_argument");
        assert_eq!(
            (unknown.tool.as_str(), unknown.action.as_str()),
            ("other", "other")
        );
    }

    #[test]
    fn files_rotate_by_age_and_old_rotations_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let telemetry = Telemetry::at(dir.path());
        let mut old = telemetry.event(contract::INSPECT, "stats", &Map::new(), 1, 1, "ok");
        old.ts_ms = 1_000;
        telemetry.record(&old);
        telemetry.rotate(SystemTime::now()).unwrap();
        assert!(
            dir.path().join(ROTATED).exists(),
            "an old live file rotates"
        );
        assert!(!telemetry.path().exists());
        telemetry.rotate(SystemTime::now()).unwrap();
        assert!(
            !dir.path().join(ROTATED).exists(),
            "an old rotation is deleted"
        );
        let fresh = telemetry.event(contract::INSPECT, "stats", &Map::new(), 1, 1, "ok");
        telemetry.record(&fresh);
        telemetry.rotate(SystemTime::now()).unwrap();
        assert_eq!(telemetry.events().len(), 1, "a fresh file stays");
        assert_eq!(telemetry.clear().unwrap(), 1);
        assert!(telemetry.events().is_empty());
    }
}
