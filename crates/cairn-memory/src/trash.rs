//! The workspace's trash. Deleting a file or folder from the app moves it to
//! `.cairn/trash/<id>/<name>` with a note `.cairn/trash/<id>.json` of where it was and when,
//! so it can be put back. Nothing is ever deleted outright; emptying the trash is the user's
//! call (they can remove `.cairn/trash/` themselves).
//!
//! The moves go through [`beneath`]: the workspace side obeys a tool's write rules (no
//! `.cairn/`, no `sessions/`, no link that leads out), the trash side must stay in
//! `.cairn/`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::beneath;
use crate::error::MemoryError;
use crate::paths::PRIVATE_DIR;
use crate::workspace::Workspace;

/// Where trashed entries go, relative to the workspace root.
pub const TRASH_DIR: &str = ".cairn/trash";

/// One trashed file or folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Trashed {
    pub id: String,
    /// Where it was, relative to the workspace root.
    pub path: String,
    pub dir: bool,
    pub deleted_at: DateTime<Utc>,
}

#[derive(Debug, thiserror::Error)]
pub enum TrashError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("`{0}` does not exist")]
    Missing(String),
    #[error("nothing in the trash has the id `{0}`")]
    Unknown(String),
    #[error("`{0}` exists again; move or rename it first, then restore")]
    Occupied(String),
}

fn note_path(id: &str) -> String {
    format!("{TRASH_DIR}/{id}.json")
}

fn held_path(item: &Trashed) -> String {
    let name = item.path.rsplit('/').next().unwrap_or(&item.path);
    format!("{TRASH_DIR}/{}/{name}", item.id)
}

/// Moves `rel` into the trash; what it was and where, for [`restore`].
pub fn trash(workspace: &Workspace, rel: &str, now: DateTime<Utc>) -> Result<Trashed, TrashError> {
    let root = workspace.root();
    let rel = rel.trim().trim_end_matches('/');
    if !beneath::exists(root, rel)? {
        return Err(TrashError::Missing(rel.to_string()));
    }
    // Checked as a write (where the path leads must be the workspace's, not `.cairn/`).
    workspace
        .resolve(rel, crate::Access::Write)
        .map_err(MemoryError::from)?;
    let path: Vec<&str> = rel
        .split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let item = Trashed {
        id: uuid::Uuid::now_v7().to_string(),
        path: path.join("/"),
        dir: std::fs::symlink_metadata(workspace.root().join(rel)).is_ok_and(|m| m.is_dir()),
        deleted_at: now,
    };
    // The note first: an entry moved without its note could not be put back by the app.
    let note = serde_json::to_vec_pretty(&item).unwrap_or_default();
    beneath::write_private_atomic(root, &note_path(&item.id), &note)?;
    if let Err(e) = beneath::rename_private(root, rel, &held_path(&item)) {
        let _ = beneath::remove_private(root, &note_path(&item.id));
        return Err(e.into());
    }
    Ok(item)
}

/// What the trash holds, newest first. Notes that cannot be read, or whose entry is gone,
/// are left out.
pub fn list(workspace: &Workspace) -> Result<Vec<Trashed>, TrashError> {
    let root = workspace.root();
    if !beneath::exists(root, TRASH_DIR)? {
        return Ok(Vec::new());
    }
    let mut items = Vec::new();
    for entry in beneath::entries(root, TRASH_DIR)? {
        let name = entry.name.to_string_lossy();
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        if let Ok(item) = read_note(workspace, id) {
            if beneath::exists(root, &held_path(&item))? {
                items.push(item);
            }
        }
    }
    items.sort_by(|a, b| b.deleted_at.cmp(&a.deleted_at).then(b.id.cmp(&a.id)));
    Ok(items)
}

fn read_note(workspace: &Workspace, id: &str) -> Result<Trashed, TrashError> {
    let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !valid {
        return Err(TrashError::Unknown(id.to_string()));
    }
    let bytes = beneath::read(workspace.root(), &note_path(id), 64 * 1024)
        .map_err(|_| TrashError::Unknown(id.to_string()))?;
    let item: Trashed =
        serde_json::from_slice(&bytes).map_err(|_| TrashError::Unknown(id.to_string()))?;
    // A note names its own id; one copied under another name (or edited to point into
    // `.cairn/`) is not followed.
    if item.id != id || item.path.split('/').next() == Some(PRIVATE_DIR) {
        return Err(TrashError::Unknown(id.to_string()));
    }
    Ok(item)
}

/// Puts a trashed entry back where it was; refuses when something is there now.
pub fn restore(workspace: &Workspace, id: &str) -> Result<Trashed, TrashError> {
    let root = workspace.root();
    let item = read_note(workspace, id)?;
    if beneath::exists(root, &item.path)? {
        return Err(TrashError::Occupied(item.path));
    }
    let held = held_path(&item);
    if !beneath::exists(root, &held)? {
        return Err(TrashError::Unknown(id.to_string()));
    }
    // Refused by the rename itself if something arrived at the place meanwhile.
    beneath::rename_private(root, &held, &item.path).map_err(|e| match e.io_kind() {
        Some(std::io::ErrorKind::AlreadyExists) => TrashError::Occupied(item.path.clone()),
        _ => e.into(),
    })?;
    let _ = beneath::remove_private(root, &note_path(id));
    let _ = beneath::remove_private(root, &format!("{TRASH_DIR}/{id}"));
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_trashed_file_and_folder_come_back_whole() {
        let (_dir, ws) = workspace();
        let root = ws.root();
        fs::create_dir_all(root.join("knowledge/trips")).unwrap();
        fs::write(root.join("knowledge/trips/rome.md"), "# Rome\n").unwrap();
        fs::write(root.join("knowledge/car.md"), "vehicle notes").unwrap();

        let file = trash(&ws, "knowledge/car.md", Utc::now()).unwrap();
        let folder = trash(&ws, "knowledge/trips/", Utc::now()).unwrap();
        assert!(!root.join("knowledge/car.md").exists());
        assert!(!root.join("knowledge/trips").exists());
        assert!(folder.dir && !file.dir);
        let listed = list(&ws).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].path, "knowledge/trips");

        restore(&ws, &folder.id).unwrap();
        assert_eq!(
            fs::read_to_string(root.join("knowledge/trips/rome.md")).unwrap(),
            "# Rome\n"
        );
        // Something new at the old place: the restore refuses and keeps both.
        fs::write(root.join("knowledge/car.md"), "a new note").unwrap();
        let err = restore(&ws, &file.id).unwrap_err();
        assert!(matches!(err, TrashError::Occupied(_)), "{err}");
        assert_eq!(
            fs::read_to_string(root.join("knowledge/car.md")).unwrap(),
            "a new note"
        );
        fs::remove_file(root.join("knowledge/car.md")).unwrap();
        restore(&ws, &file.id).unwrap();
        assert_eq!(
            fs::read_to_string(root.join("knowledge/car.md")).unwrap(),
            "vehicle notes"
        );
        assert!(list(&ws).unwrap().is_empty());
    }

    #[test]
    fn protected_places_and_forged_notes_are_refused() {
        let (_dir, ws) = workspace();
        let root = ws.root();
        for path in [
            ".cairn/state.db",
            "sessions",
            "../outside",
            "/etc/passwd",
            "",
        ] {
            assert!(trash(&ws, path, Utc::now()).is_err(), "{path}");
        }
        assert!(matches!(
            trash(&ws, "knowledge/none.md", Utc::now()),
            Err(TrashError::Missing(_))
        ));
        // A note planted to "restore" over the catalog, or with a path-like id.
        fs::create_dir_all(root.join(TRASH_DIR)).unwrap();
        let forged = r#"{"id":"x1","path":".cairn/state.db","dir":false,"deleted_at":"2026-01-01T00:00:00Z"}"#;
        fs::write(root.join(TRASH_DIR).join("x1.json"), forged).unwrap();
        fs::create_dir_all(root.join(TRASH_DIR).join("x1")).unwrap();
        fs::write(root.join(TRASH_DIR).join("x1/state.db"), "evil").unwrap();
        assert!(matches!(restore(&ws, "x1"), Err(TrashError::Unknown(_))));
        assert!(matches!(restore(&ws, "../x1"), Err(TrashError::Unknown(_))));
        assert!(list(&ws).unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_trashed_as_a_link_and_what_it_leads_to_stays() {
        let (dir, ws) = workspace();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "keep me").unwrap();
        std::os::unix::fs::symlink(&outside, ws.root().join("knowledge/link.md")).unwrap();
        // The link moves into the trash; the file it leads to is not touched.
        let item = trash(&ws, "knowledge/link.md", Utc::now()).unwrap();
        assert!(fs::symlink_metadata(ws.root().join("knowledge/link.md")).is_err());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep me");
        restore(&ws, &item.id).unwrap();
        let back = fs::symlink_metadata(ws.root().join("knowledge/link.md")).unwrap();
        assert!(back.file_type().is_symlink());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep me");
    }
}
