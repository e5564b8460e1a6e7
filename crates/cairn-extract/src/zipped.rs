//! A zip archive (DOCX, ODT and EPUB are zip files) read with caps: a member is inflated
//! only up to a limit, so a small archive cannot expand into gigabytes.

use std::io::{Cursor, Read};

use zip::ZipArchive;

/// The most one member may inflate to.
pub const MAX_MEMBER_BYTES: u64 = 64 << 20;
/// The most all members read from one archive may inflate to.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

pub struct Zipped<'a> {
    archive: ZipArchive<Cursor<&'a [u8]>>,
    read: u64,
}

impl<'a> Zipped<'a> {
    pub fn open(bytes: &'a [u8], what: &str) -> Result<Self, String> {
        let archive = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| format!("not a valid {what} (its zip container: {e})"))?;
        Ok(Self { archive, read: 0 })
    }

    /// The member `name` as text, `None` when the archive has no such member.
    pub fn text(&mut self, name: &str) -> Result<Option<String>, String> {
        let mut member = match self.archive.by_name(name) {
            Ok(member) => member,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(format!("cannot read `{name}` in the archive: {e}")),
        };
        let room = MAX_MEMBER_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.read));
        let mut bytes = Vec::new();
        (&mut member)
            .take(room + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot inflate `{name}`: {e}"))?;
        if bytes.len() as u64 > room {
            return Err(format!(
                "`{name}` inflates past {} MB; the file is not read",
                room >> 20
            ));
        }
        self.read += bytes.len() as u64;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }
}
