//! A build into a shared store (`knowcode index --store s3://…`): the generation is staged on
//! disk in the store's local folder (a mirror whose `current` is the shared one, so unchanged
//! chunks reuse its vectors), built by the ordinary pipeline, uploaded, validated by fetching
//! it back the way readers do (into their local copy), and published by one conditional write of the shared `current`.
//! The build lease makes a second builder fail fast with `store_locked`; the conditional write
//! makes sure of it. This module owns that order; the objects and writes are `store::shared`'s.

use crate::error::{BuildError, ErrorCode, KnowcodeError, Stage};
use crate::store::shared::{Lease, Pointer, SharedStore};
use crate::store::{Manifest, Store, tables};

use super::{IndexOptions, IndexSummary, Progress, fail_point};

/// Builds `options.root` into `shared`; `options.store_dir` must be the store's local folder
/// ([`SharedStore::local_dir`]).
pub async fn run(
    options: &IndexOptions,
    shared: &SharedStore,
    progress: &dyn Progress,
) -> Result<IndexSummary, BuildError> {
    let refused = |e: crate::store::shared::SharedError| BuildError::Refused(e.to_knowcode());
    let holder = builder_name();
    let Some(lease) = shared.acquire_lease(&holder).await.map_err(refused)? else {
        let who = shared
            .lease_holder()
            .await
            .unwrap_or_else(|| "another builder".into());
        return Err(BuildError::Refused(KnowcodeError::new(
            ErrorCode::StoreLocked,
            format!("{} is being built by {who}", shared.uri()),
        )));
    };
    let renewal = Renewal::start(shared, lease);
    let result = build_and_publish(options, shared, progress).await;
    let still_held = tokio::task::spawn_blocking(move || renewal.stop())
        .await
        .ok()
        .flatten();
    match still_held {
        Some(lease) => {
            if let Err(e) = shared.release(lease).await {
                tracing::warn!("could not release the build lease: {e}");
            }
        }
        None => tracing::warn!("the build lease was lost; leaving the new holder's lease alone"),
    }
    result
}

/// Renews the lease while the build runs, so a build longer than the lease period keeps it.
/// It runs on a thread of its own, with its own client and runtime, so that it renews whatever
/// runtime the build runs on (a job's has one thread, which the pipeline's blocking stages
/// occupy). A lease found taken over is not renewed again, nor released: the conditional
/// pointer write still lets only one build publish.
struct Renewal {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Option<Lease>>,
}

impl Renewal {
    fn start(shared: &SharedStore, lease: Lease) -> Renewal {
        let (stop, stopped) = std::sync::mpsc::channel();
        let uri = shared.uri().to_string();
        let thread = std::thread::spawn(move || keep_renewing(&uri, lease, &stopped));
        Renewal { stop, thread }
    }

    /// Stops renewing; the lease if it is still ours.
    fn stop(self) -> Option<Lease> {
        let _ = self.stop.send(());
        self.thread.join().ok().flatten()
    }
}

fn keep_renewing(
    uri: &str,
    mut lease: Lease,
    stopped: &std::sync::mpsc::Receiver<()>,
) -> Option<Lease> {
    let interval = crate::store::shared::lease_renewal_interval();
    let renewer = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|runtime| Ok((runtime, SharedStore::open(uri).map_err(|e| e.to_string())?)));
    let (runtime, store) = match renewer {
        Ok(renewer) => renewer,
        Err(why) => {
            tracing::warn!("cannot renew the build lease ({why}); it lasts one period");
            let _ = stopped.recv();
            return Some(lease);
        }
    };
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
        match runtime.block_on(store.renew(&mut lease)) {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("the build lease expired and was taken over");
                let _ = stopped.recv();
                return None;
            }
            Err(e) => tracing::warn!("could not renew the build lease: {e}"),
        }
    }
    Some(lease)
}

async fn build_and_publish(
    options: &IndexOptions,
    shared: &SharedStore,
    progress: &dyn Progress,
) -> Result<IndexSummary, BuildError> {
    let share = BuildError::at(Stage::Share);
    let before = shared.current().await.map_err(share)?;
    let store = Store::at(&options.store_dir);
    mirror_current(&store, shared, before.as_ref()).await;
    let summary = super::run(options, progress).await?;
    if !summary.published {
        return Ok(summary);
    }
    let id = summary.generation_id.clone();
    let dir = store.generation_dir(&id);
    shared
        .upload_generation(&id, &dir)
        .await
        .map_err(BuildError::at(Stage::Share))?;
    validate(shared, &store, &id).await?;
    fail_point(Stage::Share)?;
    let moved = shared
        .publish(&id, before.as_ref())
        .await
        .map_err(BuildError::at(Stage::Share))?;
    if !moved {
        return Err(BuildError::Refused(KnowcodeError::new(
            ErrorCode::StoreLocked,
            format!(
                "another builder published to {} meanwhile; generation {id} was uploaded but not made current",
                shared.uri()
            ),
        )));
    }
    match shared.clean(options.config.index.keep_generations).await {
        Ok(n) if n > 0 => tracing::info!("removed {n} old or incomplete shared generation(s)"),
        Ok(_) => {}
        Err(e) => tracing::warn!("could not clean old shared generations: {e}"),
    }
    Ok(summary)
}

/// Makes the local folder's `current` the shared one (downloading it when missing), so the
/// pipeline reuses its vectors and never trades a shared full generation for a lexical one.
/// A failure only costs reuse: the build goes on and embeds everything.
async fn mirror_current(store: &Store, shared: &SharedStore, pointer: Option<&Pointer>) {
    let Some(pointer) = pointer else { return };
    if store.current_id().as_deref() == Some(pointer.id.as_str()) {
        return;
    }
    let adopt = async {
        let _lock = store.lock().map_err(|e| e.to_string())?;
        store.clean(usize::MAX).map_err(|e| e.to_string())?;
        if Manifest::read(&store.generation_dir(&pointer.id)).is_ok() {
            // Built here before (and current here until a later build of ours).
            return store
                .point_current_at(&pointer.id)
                .map_err(|e| e.to_string());
        }
        let staging = store.staging(&pointer.id);
        shared
            .download_generation(&pointer.id, &staging.dir)
            .await
            .map_err(|e| e.to_string())?;
        store
            .publish(staging)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    if let Err(why) = adopt.await {
        tracing::warn!(
            "could not mirror shared generation {} ({why}); embedding everything",
            pointer.id
        );
    }
}

/// The uploaded generation, fetched the way readers fetch it (every object, into the local
/// copy readers of this store open) and opened there, holds what its manifest says.
async fn validate(shared: &SharedStore, store: &Store, id: &str) -> Result<(), BuildError> {
    let manifest = Manifest::read(&store.generation_dir(id)).map_err(share_failed)?;
    let copy = store.cached_copy(id);
    shared.fetch_copy(id, &copy).await.map_err(share_failed)?;
    store.prune_caches(id);
    Manifest::read(&copy).map_err(share_failed)?;
    let counts = tables::row_counts(&tables::location(&copy))
        .await
        .map_err(share_failed)?;
    let expected = (
        manifest.counts.entities,
        manifest.counts.edges,
        manifest.counts.chunks,
        manifest.counts.vectors,
    );
    let found = (counts.entities, counts.edges, counts.chunks, counts.vectors);
    if found != expected {
        return Err(share_failed(anyhow::anyhow!(
            "validation on the shared store failed: read (entities, edges, chunks, vectors) = {found:?}, the manifest says {expected:?}"
        )));
    }
    Ok(())
}

/// A failure of the share stage, for `map_err` over any error type.
fn share_failed<E: Into<anyhow::Error>>(error: E) -> BuildError {
    BuildError::at(Stage::Share)(error)
}

/// `user@host pid N`, for the lease and `store_locked`'s message.
fn builder_name() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "someone".into());
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into());
    format!("{user}@{host} pid {}", std::process::id())
}
