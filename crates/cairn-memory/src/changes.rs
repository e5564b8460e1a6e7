//! What the agent changed in workspace files, kept so that each change can be reviewed and
//! undone. A tool that writes a file first records the change under
//! `.cairn/changes/<session>/`: a note `<id>.json` (which file, which call of which run,
//! when), the bytes before it (`<id>.before`, absent for a new file) and after it
//! (`<id>.after`). The note is written last, so a listed change always has its texts.
//!
//! [`revert`] puts the text before back, only if the file still holds exactly what the
//! change left: a later edit (the user's, or another change) is never overwritten. A new
//! file is reverted by moving it to the trash, from where it can be restored.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::beneath::{self, Swap};
use crate::error::MemoryError;
use crate::paths::PRIVATE_DIR;
use crate::trash;
use crate::workspace::Workspace;

/// Where changes are kept, relative to the workspace root.
pub const CHANGES_DIR: &str = ".cairn/changes";

/// Texts larger than this are not kept: such a change is made but cannot be reverted.
pub const MAX_KEPT_BYTES: usize = 16 * 1024 * 1024;

/// How long changes are kept for review and revert.
pub const KEEP_DAYS: i64 = 30;

/// Which run made a change: the session, the run and the tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeScope {
    pub session_id: String,
    pub run_id: String,
}

/// A change's note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChangeNote {
    pub id: String,
    pub session_id: String,
    pub run_id: String,
    pub call_id: String,
    pub tool: String,
    /// The file, relative to the workspace root.
    pub path: String,
    /// Whether the file existed before the change.
    pub existed: bool,
    pub made_at: DateTime<Utc>,
    #[serde(default)]
    pub reverted_at: Option<DateTime<Utc>>,
}

/// Where a change stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeState {
    /// The file holds what the change left: it can be reverted.
    Applied,
    /// Reverted from the app.
    Reverted,
    /// The file was changed (or removed) since: reverting would lose that.
    ChangedSince,
}

/// A change with its texts (as text; bytes that are not UTF-8 are shown replaced) and its
/// state, as the app lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(rename = "AgentChange")]
pub struct Change {
    #[serde(flatten)]
    pub note: ChangeNote,
    pub before: Option<String>,
    pub after: String,
    pub state: ChangeState,
}

#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("no kept change has the id `{0}`")]
    Unknown(String),
    #[error("this change to `{0}` was already reverted")]
    Reverted(String),
    #[error(
        "`{0}` changed since (edited, or changed again by the agent), so reverting would \
         lose that; nothing was written. Revert the later change first, or edit the file"
    )]
    ChangedSince(String),
    #[error(
        "`{0}` was changed by something else between these changes; revert them one at a \
         time, newest first"
    )]
    Gap(String),
    #[error("these changes are not all to the same file")]
    Mixed,
    #[error("no change was given")]
    Nothing,
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn session_dir(session_id: &str) -> String {
    format!("{CHANGES_DIR}/{session_id}")
}

fn part(session_id: &str, id: &str, suffix: &str) -> String {
    format!("{CHANGES_DIR}/{session_id}/{id}.{suffix}")
}

/// What [`record`] is told of a change about to be made.
pub struct Made<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub path: &'a str,
    pub before: Option<&'a [u8]>,
    pub after: &'a [u8],
}

/// Keeps a change before it is made; `None` when its texts are too large to keep (the
/// change can then not be reverted). Call it before writing the file: once it returns, the
/// text before is safe.
pub fn record(
    workspace: &Workspace,
    scope: &ChangeScope,
    made: &Made<'_>,
    now: DateTime<Utc>,
) -> Result<Option<ChangeNote>, ChangeError> {
    if !valid_id(&scope.session_id) {
        return Err(ChangeError::Unknown(scope.session_id.clone()));
    }
    if made.before.map_or(0, <[u8]>::len).max(made.after.len()) > MAX_KEPT_BYTES {
        return Ok(None);
    }
    let root = workspace.root();
    let note = ChangeNote {
        id: uuid::Uuid::now_v7().to_string(),
        session_id: scope.session_id.clone(),
        run_id: scope.run_id.clone(),
        call_id: made.call_id.to_string(),
        tool: made.tool.to_string(),
        path: made.path.to_string(),
        existed: made.before.is_some(),
        made_at: now,
        reverted_at: None,
    };
    if let Some(before) = made.before {
        beneath::write_private_atomic(root, &part(&note.session_id, &note.id, "before"), before)?;
    }
    beneath::write_private_atomic(root, &part(&note.session_id, &note.id, "after"), made.after)?;
    write_note(workspace, &note)?;
    Ok(Some(note))
}

/// Forgets a change recorded by [`record`] that was not made after all (the write failed).
pub fn discard(workspace: &Workspace, note: &ChangeNote) {
    let root = workspace.root();
    let _ = beneath::remove_private(root, &part(&note.session_id, &note.id, "json"));
    let _ = beneath::remove_private(root, &part(&note.session_id, &note.id, "before"));
    let _ = beneath::remove_private(root, &part(&note.session_id, &note.id, "after"));
}

fn write_note(workspace: &Workspace, note: &ChangeNote) -> Result<(), ChangeError> {
    let bytes = serde_json::to_vec_pretty(note).unwrap_or_default();
    beneath::write_private_atomic(
        workspace.root(),
        &part(&note.session_id, &note.id, "json"),
        &bytes,
    )?;
    Ok(())
}

fn read_note(workspace: &Workspace, session_id: &str, id: &str) -> Result<ChangeNote, ChangeError> {
    let unknown = || ChangeError::Unknown(id.to_string());
    if !valid_id(session_id) || !valid_id(id) {
        return Err(unknown());
    }
    let bytes = beneath::read(workspace.root(), &part(session_id, id, "json"), 64 * 1024)
        .map_err(|_| unknown())?;
    let note: ChangeNote = serde_json::from_slice(&bytes).map_err(|_| unknown())?;
    // A note names its own id and session; one copied elsewhere, or pointing into
    // `.cairn/`, is not followed.
    if note.id != id
        || note.session_id != session_id
        || note.path.split('/').next() == Some(PRIVATE_DIR)
    {
        return Err(unknown());
    }
    Ok(note)
}

fn read_part(
    workspace: &Workspace,
    note: &ChangeNote,
    suffix: &str,
) -> Result<Vec<u8>, ChangeError> {
    beneath::read(
        workspace.root(),
        &part(&note.session_id, &note.id, suffix),
        MAX_KEPT_BYTES as u64 + 1,
    )
    .map_err(|_| ChangeError::Unknown(note.id.clone()))
}

/// The texts of a change: before (`None` for a new file) and after.
fn texts(
    workspace: &Workspace,
    note: &ChangeNote,
) -> Result<(Option<Vec<u8>>, Vec<u8>), ChangeError> {
    let before = if note.existed {
        Some(read_part(workspace, note, "before")?)
    } else {
        None
    };
    Ok((before, read_part(workspace, note, "after")?))
}

/// What is at `path` now (`None`: nothing, or not a file that can be read).
fn current(workspace: &Workspace, path: &str) -> Option<Vec<u8>> {
    beneath::read(workspace.root(), path, MAX_KEPT_BYTES as u64 + 1).ok()
}

/// The changes kept for a session, oldest first, with their states. Notes that cannot be
/// read are left out.
pub fn list(workspace: &Workspace, session_id: &str) -> Result<Vec<Change>, ChangeError> {
    let root = workspace.root();
    if !valid_id(session_id) || !beneath::exists(root, &session_dir(session_id))? {
        return Ok(Vec::new());
    }
    let mut notes = Vec::new();
    for entry in beneath::entries(root, &session_dir(session_id))? {
        let name = entry.name.to_string_lossy();
        if let Some(id) = name.strip_suffix(".json") {
            if let Ok(note) = read_note(workspace, session_id, id) {
                notes.push(note);
            }
        }
    }
    notes.sort_by(|a, b| a.made_at.cmp(&b.made_at).then(a.id.cmp(&b.id)));
    let mut changes = Vec::with_capacity(notes.len());
    for note in notes {
        let Ok((before, after)) = texts(workspace, &note) else {
            continue;
        };
        let state = if note.reverted_at.is_some() {
            ChangeState::Reverted
        } else if current(workspace, &note.path).as_deref() == Some(after.as_slice()) {
            ChangeState::Applied
        } else {
            ChangeState::ChangedSince
        };
        changes.push(Change {
            before: before.map(|b| String::from_utf8_lossy(&b).into_owned()),
            after: String::from_utf8_lossy(&after).into_owned(),
            note,
            state,
        });
    }
    Ok(changes)
}

/// Reverts the changes `ids` of a session: one change, or several changes to one file made
/// one after the other (a run's changes to it). The file gets the text before the first
/// back, only if it holds exactly what the last left at the moment of writing. A file the
/// first change created goes to the trash. Returns the file's path.
pub fn revert(
    workspace: &Workspace,
    session_id: &str,
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<String, ChangeError> {
    let mut notes = ids
        .iter()
        .map(|id| read_note(workspace, session_id, id))
        .collect::<Result<Vec<_>, _>>()?;
    notes.sort_by(|a, b| a.made_at.cmp(&b.made_at).then(a.id.cmp(&b.id)));
    notes.dedup_by(|a, b| a.id == b.id);
    let (Some(first), Some(last)) = (notes.first(), notes.last()) else {
        return Err(ChangeError::Nothing);
    };
    let path = first.path.clone();
    if notes.iter().any(|n| n.path != path) {
        return Err(ChangeError::Mixed);
    }
    if notes.iter().any(|n| n.reverted_at.is_some()) {
        return Err(ChangeError::Reverted(path));
    }
    let (before, _) = texts(workspace, first)?;
    let (_, after) = texts(workspace, last)?;
    // Each change must have started from what the one before it left.
    for pair in notes.windows(2) {
        let (_, left) = texts(workspace, &pair[0])?;
        let (found, _) = texts(workspace, &pair[1])?;
        if found.as_deref() != Some(left.as_slice()) {
            return Err(ChangeError::Gap(path));
        }
    }
    let root = workspace.root();
    match before {
        Some(before) => {
            let swapped =
                beneath::replace_if(root, &path, &before, |now| now == Some(after.as_slice()))?;
            if swapped == Swap::Kept {
                return Err(ChangeError::ChangedSince(path));
            }
        }
        None => {
            if current(workspace, &path).as_deref() != Some(after.as_slice()) {
                return Err(ChangeError::ChangedSince(path));
            }
            // Into the trash rather than deleted: a save landing just now is restorable.
            trash::trash(workspace, &path, now).map_err(|e| match e {
                trash::TrashError::Memory(e) => ChangeError::Memory(e),
                _ => ChangeError::ChangedSince(path.clone()),
            })?;
        }
    }
    for mut note in notes {
        note.reverted_at = Some(now);
        write_note(workspace, &note)?;
    }
    Ok(path)
}

/// Forgets the changes made before `now - keep_days` (their notes and texts), in every
/// session: kept changes would otherwise grow without end. Returns how many went.
pub fn prune(
    workspace: &Workspace,
    keep_days: i64,
    now: DateTime<Utc>,
) -> Result<usize, ChangeError> {
    let root = workspace.root();
    if !beneath::exists(root, CHANGES_DIR)? {
        return Ok(0);
    }
    let cutoff = now - chrono::Duration::days(keep_days);
    let mut gone = 0;
    for session in beneath::entries(root, CHANGES_DIR)? {
        let session_id = session.name.to_string_lossy().into_owned();
        if !valid_id(&session_id) {
            continue;
        }
        for entry in beneath::entries(root, &session_dir(&session_id))? {
            let name = entry.name.to_string_lossy();
            let Some(id) = name.strip_suffix(".json") else {
                continue;
            };
            match read_note(workspace, &session_id, id) {
                Ok(note) if note.made_at < cutoff => {
                    discard(workspace, &note);
                    gone += 1;
                }
                _ => {}
            }
        }
    }
    Ok(gone)
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
