//! Local telemetry: one JSONL line per tool call next to the store — tool, action, payload
//! bytes, duration, outcome; never argument values — rotated by size. Nothing leaves the
//! machine; clearing is a CLI-only operation.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const FILE: &str = "telemetry.jsonl";
const MAX_BYTES: u64 = 1024 * 1024;

/// One recorded call. The allowlist of fields is this struct.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    pub ts_ms: u64,
    pub tool: String,
    pub action: String,
    pub bytes: usize,
    pub ms: u64,
    pub outcome: String,
}

pub struct Telemetry {
    path: PathBuf,
    lock: Mutex<()>,
}

impl Telemetry {
    /// Telemetry kept in `<store>/.knowcode/telemetry.jsonl`.
    pub fn at(store_base: &Path) -> Telemetry {
        Telemetry {
            path: store_base.join(FILE),
            lock: Mutex::new(()),
        }
    }

    /// Appends an event; failures to write are logged, never returned to the caller.
    pub fn record(&self, event: &Event) {
        let _guard = self.lock.lock().expect("telemetry lock");
        if let Err(err) = self.append(event) {
            tracing::debug!("telemetry not written: {err}");
        }
    }

    fn append(&self, event: &Event) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&self.path)
            .map(|m| m.len() > MAX_BYTES)
            .unwrap_or(false)
        {
            std::fs::rename(&self.path, self.path.with_extension("jsonl.1"))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        writeln!(file, "{}", serde_json::to_string(event).unwrap_or_default())
    }

    /// Per `tool:action`: count, p50 and p95 duration (ms), max payload bytes, errors.
    pub fn summary(&self) -> Value {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut groups: BTreeMap<String, Vec<Event>> = BTreeMap::new();
        for event in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Event>(l).ok())
        {
            groups
                .entry(format!("{}:{}", event.tool, event.action))
                .or_default()
                .push(event);
        }
        let mut out = serde_json::Map::new();
        for (key, events) in groups {
            let mut ms: Vec<u64> = events.iter().map(|e| e.ms).collect();
            ms.sort_unstable();
            let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
            out.insert(
                key,
                json!({
                    "count": events.len(),
                    "p50_ms": pct(0.5),
                    "p95_ms": pct(0.95),
                    "max_bytes": events.iter().map(|e| e.bytes).max().unwrap_or(0),
                    "errors": events.iter().filter(|e| e.outcome != "ok").count(),
                }),
            );
        }
        json!({"events": out})
    }
}
