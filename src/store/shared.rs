//! A store on S3-compatible object storage (`--store s3://bucket/prefix`), shared by a team:
//! the same `.knowcode/` layout as on disk (`current`, `generations/<id>/…`) under the prefix,
//! plus a `lease` object held by the one builder at work. This module owns the object keys,
//! the client (configured from the environment only), the lease, the conditional write of
//! `current`, uploads, downloads and cleaning. It never builds or ranks, and never prints a
//! credential: every error it raises has the environment's secrets masked.
//!
//! Publication: a builder creates `lease` with `If-None-Match: *` (a second builder fails fast
//! with `store_locked` instead of embedding for an hour), uploads a generation staged on disk,
//! validates it where it now lives, and replaces `current` with `If-Match` on the ETag it read
//! before building (`If-None-Match` when there was none): even if a lease expired under a very
//! slow build, exactly one of two builders moves the pointer. A killed build leaves objects
//! under `generations/<id>/` that `current` never names; the next build cleans them.
//!
//! One TLS stack: the client is object_store's S3 over reqwest with rustls on ring, the crypto
//! provider the rest of the binary already links; `open` installs it as the process default.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{
    ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, KnowcodeError};

const SCHEME: &str = "s3://";
const KNOWCODE: &str = ".knowcode";
const CURRENT: &str = "current";
const LEASE: &str = "lease";
const GENERATIONS: &str = "generations";
/// The file whose upload completes a generation (uploaded last).
const MANIFEST: &str = "manifest.json";
/// How long a lease protects a build when its holder stops renewing it (killed, crashed).
pub const LEASE_SECONDS_ENV: &str = "KNOWCODE_LEASE_SECONDS";
const DEFAULT_LEASE: Duration = Duration::from_secs(2 * 60 * 60);
/// The environment variables whose values must never reach a log, payload or error.
const SECRET_ENV: &[&str] = &[
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ACCESS_KEY_ID",
];

/// Publications this process made to any shared store: readers in the same process re-read
/// `current` when it moved, instead of waiting for their next poll.
static PUBLISHED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times this process moved a shared `current` (see [`SharedStore::publish`]).
pub fn publications() -> u64 {
    PUBLISHED.load(std::sync::atomic::Ordering::SeqCst)
}

/// A `--store` argument: a folder, or a shared store's URI.
pub fn is_shared_uri(store: &Path) -> bool {
    store.to_str().is_some_and(|s| s.starts_with(SCHEME))
}

/// The step of talking to object storage that failed (doctor names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Configure,
    Reach,
    Authenticate,
    Read,
    Write,
}

impl Step {
    /// The step's name in payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Configure => "configure",
            Step::Reach => "reach",
            Step::Authenticate => "authenticate",
            Step::Read => "read",
            Step::Write => "write",
        }
    }
}

/// A failure talking to the shared store, secrets masked.
#[derive(Debug, Clone, thiserror::Error)]
#[error("shared store {uri}: {step} failed: {message}", step = step.as_str())]
pub struct SharedError {
    pub uri: String,
    pub step: Step,
    pub message: String,
}

impl SharedError {
    fn new(uri: &str, step: Step, message: impl std::fmt::Display) -> Self {
        SharedError {
            uri: uri.to_string(),
            step,
            message: mask_secrets(&without_xml(&message.to_string())),
        }
    }

    fn from_object_store(uri: &str, step: Step, error: object_store::Error) -> Self {
        let text = error.to_string();
        let step = match &error {
            object_store::Error::Unauthenticated { .. }
            | object_store::Error::PermissionDenied { .. } => Step::Authenticate,
            _ if looks_refused(&text) => Step::Authenticate,
            _ if looks_unreachable(&text) => Step::Reach,
            _ => step,
        };
        SharedError::new(uri, step, error)
    }

    /// The catalogue entry: `store_unreachable` with a hint for the step that failed.
    pub fn to_knowcode(&self) -> KnowcodeError {
        let hint = match self.step {
            Step::Configure => {
                "pass --store s3://bucket/prefix; credentials, region and endpoint come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP=true for plain HTTP)"
            }
            Step::Reach => {
                "the endpoint did not answer: check AWS_ENDPOINT_URL (and AWS_ALLOW_HTTP=true for an http:// endpoint) and the network; knowcode doctor --store names the failing step"
            }
            Step::Authenticate => {
                "the credentials were refused: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment and the bucket policy"
            }
            Step::Read | Step::Write => {
                "the bucket answered with an error: check that the bucket exists and the prefix is readable (writable for builds); knowcode doctor --store names the failing step"
            }
        };
        let mut error = KnowcodeError::new(ErrorCode::StoreUnreachable, self.to_string());
        error.hint = hint.to_string();
        error
    }
}

impl From<SharedError> for KnowcodeError {
    fn from(error: SharedError) -> Self {
        error.to_knowcode()
    }
}

/// The server answered, and refused the credentials (S3 reports some as generic 403s).
fn looks_refused(text: &str) -> bool {
    contains_any(
        text,
        &[
            "403 Forbidden",
            "401 Unauthorized",
            "SignatureDoesNotMatch",
            "InvalidAccessKeyId",
            "AccessDenied",
            "ExpiredToken",
        ],
    )
}

/// No answer at all: connection, DNS or timeout failures.
fn looks_unreachable(text: &str) -> bool {
    contains_any(
        &text.to_ascii_lowercase(),
        &[
            "error sending request",
            "connection refused",
            "dns error",
            "timed out",
            "tcp connect",
        ],
    )
}

fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| text.contains(needle))
}

/// An S3 error body (`<Error><Code>…</Code><Message>…</Message>…`) shortened to its code and
/// message; other text as it is.
fn without_xml(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.to_string();
    };
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let from = text.find(&open)? + open.len();
        let to = text[from..].find('<')? + from;
        Some(text[from..to].to_string())
    };
    let head = text[..start].trim_end().trim_end_matches(':');
    match (tag("Code"), tag("Message")) {
        (Some(code), Some(message)) => format!("{head}: {code}: {message}"),
        _ => head.to_string(),
    }
}

/// `text` with the values of the credential variables replaced by `***`.
pub fn mask_secrets(text: &str) -> String {
    let mut out = text.to_string();
    for name in SECRET_ENV {
        if let Ok(value) = std::env::var(name)
            && value.len() >= 4
        {
            out = out.replace(&value, "***");
        }
    }
    out
}

/// What `current` said when read: the generation id and the object's version, which the
/// publishing write must still find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    pub id: String,
    version: UpdateVersion,
}

/// The lease object's body: who builds, and until when the lease protects them.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LeaseBody {
    holder: String,
    expires_at_ms: u64,
}

/// A held build lease: who holds it and the version of the lease object it wrote, which a
/// renewal must still find. [`SharedStore::release`] deletes it.
#[derive(Debug)]
pub struct Lease {
    holder: String,
    version: UpdateVersion,
}

fn lease_of(holder: &str, written: object_store::PutResult) -> Lease {
    Lease {
        holder: holder.to_string(),
        version: UpdateVersion {
            e_tag: written.e_tag,
            version: written.version,
        },
    }
}

fn lease_body(holder: &str) -> Vec<u8> {
    serde_json::to_vec(&LeaseBody {
        holder: holder.to_string(),
        expires_at_ms: now_ms() + lease_duration().as_millis() as u64,
    })
    .expect("lease body serialises")
}

/// How often a builder renews its lease: three times per lease period.
pub fn lease_renewal_interval() -> Duration {
    lease_duration() / 3
}

/// One shared store: `s3://bucket/prefix`.
#[derive(Clone)]
pub struct SharedStore {
    uri: String,
    bucket: String,
    prefix: String,
    client: Arc<AmazonS3>,
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStore")
            .field("uri", &self.uri)
            .finish()
    }
}

impl SharedStore {
    /// The store at `uri` (`s3://bucket[/prefix]`), its client configured from the
    /// environment (`AWS_*`), never from arguments.
    pub fn open(uri: &str) -> Result<SharedStore, SharedError> {
        let rest = uri
            .strip_prefix(SCHEME)
            .ok_or_else(|| SharedError::new(uri, Step::Configure, "not an s3:// URI"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(SharedError::new(uri, Step::Configure, "no bucket named"));
        }
        let prefix = prefix.trim_matches('/').to_string();
        let uri = if prefix.is_empty() {
            format!("{SCHEME}{bucket}")
        } else {
            format!("{SCHEME}{bucket}/{prefix}")
        };
        install_crypto_provider();
        let client = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map_err(|e| SharedError::new(&uri, Step::Configure, e))?;
        Ok(SharedStore {
            uri,
            bucket: bucket.to_string(),
            prefix,
            client: Arc::new(client),
        })
    }

    /// `s3://bucket/prefix`, as given (normalised).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The local folder that holds this store's staging, caches and telemetry: one per URI
    /// under the user's cache, never on the bucket.
    pub fn local_dir(&self) -> PathBuf {
        let digest = crate::text::bytes_hash(self.uri.as_bytes());
        let name: String = format!("{}-{}", self.bucket, &digest[..12])
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        crate::config::cache_dir().join("shared").join(name)
    }

    fn key(&self, parts: &[&str]) -> String {
        let mut key = String::new();
        if !self.prefix.is_empty() {
            key.push_str(&self.prefix);
            key.push('/');
        }
        key.push_str(KNOWCODE);
        for part in parts {
            key.push('/');
            key.push_str(part);
        }
        key
    }

    fn path(&self, parts: &[&str]) -> ObjectPath {
        ObjectPath::from(self.key(parts))
    }

    fn fail(&self, step: Step) -> impl Fn(object_store::Error) -> SharedError + '_ {
        move |e| SharedError::from_object_store(&self.uri, step, e)
    }

    /// Every object under `prefix`.
    async fn list(&self, prefix: &ObjectPath) -> Result<Vec<ObjectMeta>, SharedError> {
        self.client
            .list(Some(prefix))
            .try_collect()
            .await
            .map_err(self.fail(Step::Read))
    }

    /// The generation `current` names, or None when nothing was ever published.
    pub async fn current(&self) -> Result<Option<Pointer>, SharedError> {
        match self.client.get(&self.path(&[CURRENT])).await {
            Ok(result) => {
                let version = UpdateVersion {
                    e_tag: result.meta.e_tag.clone(),
                    version: result.meta.version.clone(),
                };
                let bytes = result.bytes().await.map_err(self.fail(Step::Read))?;
                let id = String::from_utf8_lossy(&bytes).trim().to_string();
                Ok((!id.is_empty()).then_some(Pointer { id, version }))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail(Step::Read)(e)),
        }
    }

    /// Takes the build lease, or `Ok(None)` when another builder holds an unexpired one. An
    /// expired lease (its holder was killed) is taken over with a conditional write, so two
    /// builders cannot both take it over.
    pub async fn acquire_lease(&self, holder: &str) -> Result<Option<Lease>, SharedError> {
        let path = self.path(&[LEASE]);
        let body = lease_body(holder);
        let create = PutOptions::from(PutMode::Create);
        match self
            .client
            .put_opts(&path, PutPayload::from(body.clone()), create)
            .await
        {
            Ok(written) => return Ok(Some(lease_of(holder, written))),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {}
            Err(e) => return Err(self.fail(Step::Write)(e)),
        }
        let existing = match self.client.get(&path).await {
            Ok(result) => result,
            // Released meanwhile: try once more from the start.
            Err(object_store::Error::NotFound { .. }) => {
                return Box::pin(self.acquire_lease(holder)).await;
            }
            Err(e) => return Err(self.fail(Step::Read)(e)),
        };
        let version = UpdateVersion {
            e_tag: existing.meta.e_tag.clone(),
            version: existing.meta.version.clone(),
        };
        let held: Option<LeaseBody> = existing
            .bytes()
            .await
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if held.is_some_and(|lease| lease.expires_at_ms > now_ms()) {
            return Ok(None);
        }
        let update = PutOptions::from(PutMode::Update(version));
        match self
            .client
            .put_opts(&path, PutPayload::from(body), update)
            .await
        {
            Ok(written) => Ok(Some(lease_of(holder, written))),
            Err(object_store::Error::Precondition { .. }) => Ok(None),
            Err(e) => Err(self.fail(Step::Write)(e)),
        }
    }

    /// Extends a held lease by another period, if it is still ours (`Ok(false)`: it expired
    /// and another builder took it over).
    pub async fn renew(&self, lease: &mut Lease) -> Result<bool, SharedError> {
        let update = PutOptions::from(PutMode::Update(lease.version.clone()));
        let body = PutPayload::from(lease_body(&lease.holder));
        match self
            .client
            .put_opts(&self.path(&[LEASE]), body, update)
            .await
        {
            Ok(written) => {
                *lease = lease_of(&lease.holder, written);
                Ok(true)
            }
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.fail(Step::Write)(e)),
        }
    }

    /// Who holds the lease, for `store_locked`'s message.
    pub async fn lease_holder(&self) -> Option<String> {
        let bytes = self.client.get(&self.path(&[LEASE])).await.ok()?;
        let body: LeaseBody = serde_json::from_slice(&bytes.bytes().await.ok()?).ok()?;
        Some(body.holder)
    }

    /// Gives the lease back.
    pub async fn release(&self, _lease: Lease) -> Result<(), SharedError> {
        match self.client.delete(&self.path(&[LEASE])).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail(Step::Write)(e)),
        }
    }

    /// Uploads a generation folder staged on disk to `generations/<id>/`, its manifest last
    /// (a generation without a manifest is incomplete and never named by `current`).
    pub async fn upload_generation(&self, id: &str, dir: &Path) -> Result<u64, SharedError> {
        let mut files = files_under(dir).map_err(|e| SharedError::new(&self.uri, Step::Read, e))?;
        files.sort_by_key(|rel| rel == MANIFEST);
        let mut bytes = 0;
        for rel in files {
            let data = std::fs::read(dir.join(&rel))
                .map_err(|e| SharedError::new(&self.uri, Step::Read, e))?;
            bytes += data.len() as u64;
            let path = self.path(&[GENERATIONS, id, &rel]);
            self.client
                .put(&path, PutPayload::from(data))
                .await
                .map_err(self.fail(Step::Write))?;
        }
        Ok(bytes)
    }

    /// Downloads a whole generation into `dir` (a builder's base for reusing vectors, a
    /// reader's local copy), eight objects at a time.
    pub async fn download_generation(&self, id: &str, dir: &Path) -> Result<(), SharedError> {
        let prefix = self.path(&[GENERATIONS, id]);
        let objects = self.list(&prefix).await?;
        if objects.is_empty() {
            return Err(SharedError::new(
                &self.uri,
                Step::Read,
                format!("generation {id} has no objects"),
            ));
        }
        let downloads = objects.into_iter().map(|object| {
            let rel = object.location.as_ref()[prefix.as_ref().len()..]
                .trim_start_matches('/')
                .to_string();
            async move {
                let bytes = self
                    .client
                    .get(&object.location)
                    .await
                    .map_err(self.fail(Step::Read))?
                    .bytes()
                    .await
                    .map_err(self.fail(Step::Read))?;
                let target = dir.join(&rel);
                let write = |e: std::io::Error| SharedError::new(&self.uri, Step::Write, e);
                std::fs::create_dir_all(target.parent().unwrap_or(dir)).map_err(write)?;
                write_atomically(&target, &bytes).map_err(write)
            }
        });
        futures::stream::iter(downloads)
            .buffer_unordered(8)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    /// Makes `copy` a complete local copy of generation `id`, unless it already is one: the
    /// objects are downloaded into a partial folder beside it, which is then renamed into
    /// place. A copy another process completed meanwhile is kept (it may be open).
    pub async fn fetch_copy(&self, id: &str, copy: &Path) -> Result<(), SharedError> {
        if super::Manifest::read(copy).is_ok() {
            return Ok(());
        }
        let partial = copy.with_extension(format!("part{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&partial);
        self.download_generation(id, &partial).await?;
        if super::Manifest::read(copy).is_ok() {
            let _ = std::fs::remove_dir_all(&partial);
            return Ok(());
        }
        let _ = std::fs::remove_dir_all(copy);
        std::fs::rename(&partial, copy).map_err(|e| SharedError::new(&self.uri, Step::Write, e))
    }

    /// Points `current` at `id` if it still names what `expected` read (`None`: nothing was
    /// published). `Ok(false)`: another builder published meanwhile, nothing was changed.
    pub async fn publish(&self, id: &str, expected: Option<&Pointer>) -> Result<bool, SharedError> {
        let mode = match expected {
            Some(pointer) => PutMode::Update(pointer.version.clone()),
            None => PutMode::Create,
        };
        let body = PutPayload::from(format!("{id}\n").into_bytes());
        match self
            .client
            .put_opts(&self.path(&[CURRENT]), body, PutOptions::from(mode))
            .await
        {
            Ok(_) => {
                PUBLISHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(true)
            }
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(self.fail(Step::Write)(e)),
        }
    }

    /// Generation ids with a manifest (complete uploads), oldest first, and those without one
    /// (a killed build's leftovers).
    pub async fn generations(&self) -> Result<(Vec<String>, Vec<String>), SharedError> {
        let prefix = self.path(&[GENERATIONS]);
        let objects = self.list(&prefix).await?;
        let mut all = BTreeSet::new();
        let mut complete = BTreeSet::new();
        for object in &objects {
            let rel = object.location.as_ref()[prefix.as_ref().len()..].trim_start_matches('/');
            let Some((id, rest)) = rel.split_once('/') else {
                continue;
            };
            all.insert(id.to_string());
            if rest == MANIFEST {
                complete.insert(id.to_string());
            }
        }
        let mut complete: Vec<String> = complete.into_iter().collect();
        complete.sort_by_key(|id| super::generation_sort_key(id));
        let incomplete = all
            .into_iter()
            .filter(|id| !complete.contains(id))
            .collect();
        Ok((complete, incomplete))
    }

    /// Deletes incomplete uploads and all but the newest `keep` complete generations; the
    /// current one is never deleted. Only call under the lease.
    pub async fn clean(&self, keep: usize) -> Result<usize, SharedError> {
        let current = self.current().await?.map(|p| p.id);
        let (complete, incomplete) = self.generations().await?;
        let excess = complete.len().saturating_sub(keep);
        let doomed: Vec<String> = complete
            .into_iter()
            .take(excess)
            .chain(incomplete)
            .filter(|id| Some(id) != current.as_ref())
            .collect();
        for id in &doomed {
            let objects = self.list(&self.path(&[GENERATIONS, id])).await?;
            for object in objects {
                match self.client.delete(&object.location).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(self.fail(Step::Write)(e)),
                }
            }
        }
        Ok(doomed.len())
    }

    /// Lists the store's `.knowcode/` prefix once: reachable, authenticated and readable.
    pub async fn probe(&self) -> Result<(), SharedError> {
        let prefix = self.path(&[]);
        self.client
            .list_with_delimiter(Some(&prefix))
            .await
            .map(|_| ())
            .map_err(self.fail(Step::Read))
    }
}

/// Makes ring rustls's process-wide crypto provider (reqwest is built without one of its own, so
/// that aws-lc-rs is not linked beside ring). Idempotent: a provider already installed stays.
pub(crate) fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn lease_duration() -> Duration {
    std::env::var(LEASE_SECONDS_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_LEASE)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Files under `dir`, as `/`-separated paths relative to it.
fn files_under(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.part{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_bucket_and_prefix_and_nothing_else() {
        assert!(is_shared_uri(Path::new("s3://team/repo")));
        assert!(!is_shared_uri(Path::new("/tmp/s3")));
        let store = SharedStore::open("s3://team/some/prefix/").unwrap();
        assert_eq!(store.uri(), "s3://team/some/prefix");
        assert_eq!(
            store.key(&[GENERATIONS, "g1"]),
            "some/prefix/.knowcode/generations/g1"
        );
        let bare = SharedStore::open("s3://team").unwrap();
        assert_eq!(bare.key(&[CURRENT]), ".knowcode/current");
        let err = SharedStore::open("s3:///x").unwrap_err();
        assert_eq!(err.step, Step::Configure);
        assert_eq!(err.to_knowcode().code, ErrorCode::StoreUnreachable);
    }

    #[test]
    fn s3_error_bodies_shrink_to_code_and_message() {
        let text = "GET failed: 403 Forbidden: <?xml version=\"1.0\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>Bad signature.</Message><RequestId>x</RequestId></Error>";
        assert_eq!(
            without_xml(text),
            "GET failed: 403 Forbidden: SignatureDoesNotMatch: Bad signature."
        );
        assert_eq!(without_xml("plain"), "plain");
    }

    #[test]
    fn each_uri_has_its_own_local_folder() {
        let a = SharedStore::open("s3://team/a").unwrap().local_dir();
        let b = SharedStore::open("s3://team/b").unwrap().local_dir();
        assert_ne!(a, b);
        assert!(a.starts_with(crate::config::cache_dir()));
    }
}
