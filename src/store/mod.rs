//! Stage 6, store: generations on disk. Each build writes LanceDB tables (`entities`,
//! `edges`, `chunks`) and a manifest into `<store>/.knowcode/staging/<id>/`, validates them,
//! renames the folder into `generations/<id>/` and then replaces the `current` pointer
//! atomically (write, fsync, rename, fsync). A build that fails before that leaves the
//! previous generation current. One build at a time holds `lock` (an OS file lock, released
//! if the process dies). Readers open whatever `current` names and never write.

pub(crate) mod legacy;
pub mod manifest;
pub(crate) mod read;
pub mod shared;
pub mod tables;

use crate::error::StoreResult;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use manifest::{GenerationKind, Manifest};

use crate::error::{BuildError, ErrorCode, KnowcodeError};

const DIR_NAME: &str = ".knowcode";
const CURRENT: &str = "current";
const LOCK: &str = "lock";
const GENERATIONS: &str = "generations";
const STAGING: &str = "staging";
const CACHE: &str = "cache";
/// Shared generations kept in [`Store::caches`] (the current one and the one before).
const CACHED_SHARED: usize = 2;

/// Writes a file and fsyncs it.
pub fn write_synced(path: &Path, bytes: &[u8]) -> StoreResult<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

fn sync_dir(dir: &Path) -> StoreResult<()> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// The `.knowcode` folder of a store.
#[derive(Debug, Clone)]
pub struct Store {
    base: PathBuf,
}

/// Held for the duration of a build; dropping it releases the lock.
pub struct StoreLock {
    _file: File,
}

/// A generation being written; not visible to readers until published.
#[derive(Debug)]
pub struct Staging {
    pub id: String,
    pub dir: PathBuf,
}

impl Store {
    /// The store kept in `store_dir` (the folder that holds `.knowcode`).
    pub fn at(store_dir: &Path) -> Store {
        Store {
            base: store_dir.join(DIR_NAME),
        }
    }

    /// The `.knowcode` folder.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The id `current` names, if any.
    pub fn current_id(&self) -> Option<String> {
        let id = std::fs::read_to_string(self.base.join(CURRENT)).ok()?;
        let id = id.trim();
        (!id.is_empty()).then(|| id.to_string())
    }

    /// The folder of a published generation.
    pub fn generation_dir(&self, id: &str) -> PathBuf {
        self.base.join(GENERATIONS).join(id)
    }

    /// The folder of local copies of a shared store's generations (readers search them;
    /// the builder's validation leaves the copy it checked there).
    pub fn caches(&self) -> PathBuf {
        self.base.join(CACHE)
    }

    /// The local copy of shared generation `id`, in [`Store::caches`].
    pub fn cached_copy(&self, id: &str) -> PathBuf {
        self.caches().join(id)
    }

    /// Keeps the newest [`CACHED_SHARED`] local copies of shared generations, `current`
    /// always among them (best effort: a copy in use elsewhere may fail to go).
    pub fn prune_caches(&self, current: &str) {
        let Ok(entries) = std::fs::read_dir(self.caches()) else {
            return;
        };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|id| id != current)
            .collect();
        ids.sort();
        let excess = (ids.len() + 1).saturating_sub(CACHED_SHARED);
        for id in ids.into_iter().take(excess) {
            let _ = std::fs::remove_dir_all(self.cached_copy(&id));
        }
    }

    /// Takes the build lock or says who holds it.
    pub fn lock(&self) -> Result<StoreLock, BuildError> {
        std::fs::create_dir_all(&self.base).map_err(BuildError::at(crate::error::Stage::Store))?;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.base.join(LOCK))
            .map_err(BuildError::at(crate::error::Stage::Store))?;
        match file.try_lock() {
            Ok(()) => Ok(StoreLock { _file: file }),
            Err(_) => Err(BuildError::Locked(self.base.clone())),
        }
    }

    /// Starts a generation in a fresh staging folder. Ids sort by creation time.
    pub fn begin(&self) -> StoreResult<Staging> {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis();
        let mut id = format!("g{millis}");
        let mut n = 1;
        while self.generation_dir(&id).exists() || self.base.join(STAGING).join(&id).exists() {
            n += 1;
            id = format!("g{millis}-{n}");
        }
        let staging = self.staging(&id);
        std::fs::create_dir_all(&staging.dir)?;
        Ok(staging)
    }

    /// The staging folder generation `id` is written into before [`Store::publish`] (not
    /// created: [`Store::begin`] picks a fresh id and creates it; a shared store's mirror
    /// fills it with a generation downloaded under its own id).
    pub fn staging(&self, id: &str) -> Staging {
        Staging {
            id: id.to_string(),
            dir: self.base.join(STAGING).join(id),
        }
    }

    /// Moves a validated staging folder into place and points `current` at it.
    pub fn publish(&self, staging: Staging) -> StoreResult<String> {
        let generations = self.base.join(GENERATIONS);
        std::fs::create_dir_all(&generations)?;
        let target = generations.join(&staging.id);
        std::fs::rename(&staging.dir, &target)?;
        sync_dir(&generations)?;
        self.point_current_at(&staging.id)?;
        Ok(staging.id)
    }

    /// Replaces `current` with `id` atomically (write, fsync, rename, fsync); the generation
    /// must already be in place.
    pub fn point_current_at(&self, id: &str) -> StoreResult<()> {
        let tmp = self.base.join("current.tmp");
        write_synced(&tmp, format!("{id}\n").as_bytes())?;
        std::fs::rename(&tmp, self.base.join(CURRENT))?;
        sync_dir(&self.base)
    }

    /// Published generation ids, oldest first.
    pub fn generation_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.base.join(GENERATIONS))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        ids.sort_by_key(|id| generation_sort_key(id));
        ids
    }

    /// Removes staging leftovers (only call under the lock) and all but the newest `keep`
    /// generations; the current one is never removed.
    pub fn clean(&self, keep: usize) -> StoreResult<()> {
        let staging = self.base.join(STAGING);
        if staging.exists() {
            std::fs::remove_dir_all(&staging)?;
        }
        let _ = std::fs::remove_file(self.base.join("current.tmp"));
        let current = self.current_id();
        let ids = self.generation_ids();
        let excess = ids.len().saturating_sub(keep);
        for id in ids.into_iter().take(excess) {
            if Some(&id) != current.as_ref() {
                std::fs::remove_dir_all(self.generation_dir(&id))?;
            }
        }
        Ok(())
    }

    /// Total bytes under `.knowcode`.
    pub fn disk_bytes(&self) -> u64 {
        let mut total = 0;
        let mut pending = vec![self.base.clone()];
        while let Some(path) = pending.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_dir() {
                total += meta.len();
                continue;
            }
            if let Ok(entries) = std::fs::read_dir(&path) {
                pending.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        }
        total
    }

    /// The manifest of the current generation, or `missing_knowledge_store`.
    pub fn current_manifest(&self) -> Result<(String, Manifest), KnowcodeError> {
        let store_dir = self.base.parent().unwrap_or(&self.base);
        let id = self
            .current_id()
            .ok_or_else(|| KnowcodeError::missing_store(store_dir))?;
        let manifest = Manifest::read(&self.generation_dir(&id)).map_err(|e| {
            KnowcodeError::new(
                ErrorCode::StoreCorrupt,
                format!("generation {id}: unreadable manifest: {e}"),
            )
        })?;
        Ok((id, manifest))
    }
}

/// `g<millis>[-n]` sorts by time, then by n.
fn generation_sort_key(id: &str) -> (u128, u32) {
    let rest = id.trim_start_matches('g');
    let (millis, n) = rest.split_once('-').unwrap_or((rest, "1"));
    (millis.parse().unwrap_or(0), n.parse().unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_moves_staging_and_points_current() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let _lock = store.lock().unwrap();
        let staging = store.begin().unwrap();
        std::fs::write(staging.dir.join("x"), b"1").unwrap();
        let id = store.publish(staging).unwrap();
        assert_eq!(store.current_id().as_deref(), Some(id.as_str()));
        assert!(store.generation_dir(&id).join("x").exists());
    }

    #[test]
    fn a_second_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let _held = store.lock().unwrap();
        assert!(matches!(store.lock(), Err(BuildError::Locked(_))));
    }

    #[test]
    fn clean_keeps_newest_and_current_and_drops_staging() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let mut ids = Vec::new();
        for _ in 0..4 {
            let staging = store.begin().unwrap();
            ids.push(store.publish(staging).unwrap());
        }
        let leftover = store.begin().unwrap();
        store.clean(2).unwrap();
        assert_eq!(store.generation_ids(), ids[2..].to_vec());
        assert!(!leftover.dir.exists());
    }

    #[test]
    fn generation_ids_sort_numerically() {
        assert!(generation_sort_key("g99") < generation_sort_key("g100"));
        assert!(generation_sort_key("g100") < generation_sort_key("g100-2"));
    }
}
