//! Watch mode: file events from the OS (the `notify` crate: inotify on Linux) under the
//! root, debounced and coalesced, then one rebuild that publishes a new generation. A
//! rebuild re-parses the tree (phase one is ~120 k lines/s) but re-embeds only chunks whose
//! content changed, so an edit costs about one model call. Events inside `.knowcode`, `.git`,
//! hidden and vendored folders are ignored (our own writes must not trigger builds). This
//! module drives [`crate::index::run`]; it never answers queries.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use crate::error::{BuildError, ErrorCode, KnowcodeError};
use crate::index::{self, IndexOptions, IndexSummary, NoProgress};

/// Quiet time after the last event before a rebuild starts.
pub const DEBOUNCE: Duration = Duration::from_millis(400);
/// Longest a burst of events may postpone a rebuild.
pub const MAX_DELAY: Duration = Duration::from_secs(5);
/// Wait before retrying when another build holds the store lock.
const LOCKED_RETRY: Duration = Duration::from_secs(1);

/// True when a changed path can affect the index.
pub fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return false;
    };
    !relative.components().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        name.starts_with('.') || crate::walk::VENDORED_DIRS.contains(&name.as_ref())
    })
}

/// Waits for a relevant event, then for the burst to end. `None` when stopped.
fn next_burst(
    root: &Path,
    events: &Receiver<notify::Result<notify::Event>>,
    stop: &AtomicBool,
) -> Option<usize> {
    let is_relevant = |event: &notify::Result<notify::Event>| {
        event
            .as_ref()
            .is_ok_and(|e| e.paths.iter().any(|p| relevant(root, p)))
    };
    loop {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        match events.recv_timeout(Duration::from_millis(500)) {
            Ok(event) if is_relevant(&event) => break,
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    let started = Instant::now();
    let mut coalesced = 1;
    while started.elapsed() < MAX_DELAY {
        match events.recv_timeout(DEBOUNCE) {
            Ok(event) => coalesced += usize::from(is_relevant(&event)),
            Err(_) => break,
        }
    }
    Some(coalesced)
}

/// Rebuilds, waiting while another build holds the lock.
fn rebuild(
    runtime: &tokio::runtime::Runtime,
    options: &IndexOptions,
    stop: &AtomicBool,
) -> Result<IndexSummary, KnowcodeError> {
    loop {
        match runtime.block_on(index::run(options, &NoProgress)) {
            Err(BuildError::Locked(_)) if !stop.load(Ordering::SeqCst) => {
                std::thread::sleep(LOCKED_RETRY)
            }
            result => {
                crate::load::freshness::invalidate();
                return result.map_err(|e| e.to_knowcode());
            }
        }
    }
}

/// Watches `options.root` until `stop` is set, rebuilding after each burst of changes and
/// reporting every outcome (with the number of events coalesced) to `on_build`. With
/// `build_first`, one build runs once the watch is in place (so no change is missed between
/// that build and the first event).
pub fn watch(
    options: IndexOptions,
    stop: Arc<AtomicBool>,
    build_first: bool,
    on_build: impl Fn(usize, Result<IndexSummary, KnowcodeError>),
) -> Result<(), KnowcodeError> {
    let cannot = |what: &str, e: &dyn std::fmt::Display| {
        KnowcodeError::new(
            ErrorCode::Internal,
            format!("cannot watch {}: {what}: {e}", options.root.display()),
        )
    };
    let (tx, events) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .map_err(|e| cannot("no file watcher", &e))?;
    let root = options
        .root
        .canonicalize()
        .map_err(|e| cannot("the folder", &e))?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| cannot("subscribing to changes", &e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| cannot("no runtime", &e))?;
    if build_first {
        on_build(0, rebuild(&runtime, &options, &stop));
    }
    while let Some(coalesced) = next_burst(&root, &events, &stop) {
        on_build(coalesced, rebuild(&runtime, &options, &stop));
    }
    Ok(())
}

/// Starts [`watch`] on a background thread that logs each rebuild (for `mcp --watch` and
/// `serve --watch`, where stdout belongs to the protocol).
pub fn spawn_logging(options: IndexOptions) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let result = watch(options, flag, false, |events, outcome| match outcome {
            Ok(summary) => tracing::info!("watch: {events} change(s) → {}", summary.line()),
            Err(e) => tracing::warn!("watch: rebuild failed [{}]: {}", e.code.as_str(), e),
        });
        if let Err(e) = result {
            tracing::warn!("watch stopped: {e}");
        }
    });
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_writes_and_hidden_or_vendored_folders_are_not_relevant() {
        let root = Path::new("/repo");
        assert!(relevant(root, Path::new("/repo/src/lib.rs")));
        assert!(!relevant(root, Path::new("/repo/.knowcode/current")));
        assert!(!relevant(root, Path::new("/repo/.git/index")));
        assert!(!relevant(root, Path::new("/repo/node_modules/x/index.js")));
        assert!(!relevant(root, Path::new("/elsewhere/a.rs")));
    }
}
