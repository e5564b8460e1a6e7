//! Links planted in a workspace that lead out: consolidation neither reads nor writes
//! through them.

use std::path::Path;

use cairn_core::upkeep::{ConsolidateError, RunMode};
use pretty_assertions::assert_eq;

use super::{fixture, Fixture, LOG_TEXT, MEMORY_MD, MERGED};

const CREDENTIALS: &str = "# Memory\n- aws_secret_access_key = OUTSIDE-SECRET-42\n";

fn plant(f: &Fixture, at: &str, target: &Path) {
    let at = f.workspace.root().join(at);
    if at.is_dir() {
        std::fs::remove_dir_all(&at).unwrap();
    } else {
        let _ = std::fs::remove_file(&at);
    }
    std::os::unix::fs::symlink(target, at).unwrap();
}

async fn refused(f: &Fixture) -> String {
    let err = f
        .consolidator()
        .run(RunMode::Write, Default::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ConsolidateError::File(_)), "{err:?}");
    err.to_string()
}

#[tokio::test]
async fn a_memory_file_that_leads_out_is_neither_read_nor_replaced() {
    let outside = tempfile::tempdir().unwrap();
    let credentials = outside.path().join("credentials");
    std::fs::write(&credentials, CREDENTIALS).unwrap();
    let f = fixture(&[MERGED]);
    plant(&f, "MEMORY.md", &credentials);
    let err = refused(&f).await;
    assert!(
        err.contains("`MEMORY.md` is a symbolic link that leads outside"),
        "{err}"
    );
    assert!(f.asked().iter().all(|a| !a.contains("OUTSIDE-SECRET")));
    assert_eq!(std::fs::read_to_string(&credentials).unwrap(), CREDENTIALS);
    assert!(
        std::fs::symlink_metadata(f.workspace.root().join("MEMORY.md"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(f.archive(), Vec::<String>::new(), "no copy of it is kept");
}

#[tokio::test]
async fn daily_logs_in_a_folder_that_leads_out_are_not_read() {
    let outside = tempfile::tempdir().unwrap();
    let log = outside.path().join("2026-03-08.md");
    std::fs::write(&log, "- OUTSIDE-LOG-9\n").unwrap();
    let f = fixture(&[MERGED]);
    plant(&f, "memory", outside.path());
    let err = refused(&f).await;
    assert!(
        err.contains("`memory` is a symbolic link that leads outside"),
        "{err}"
    );
    assert!(f.asked().is_empty());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "- OUTSIDE-LOG-9\n");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[tokio::test]
async fn a_backup_into_an_archive_that_leads_out_stops_the_rewrite() {
    let outside = tempfile::tempdir().unwrap();
    let f = fixture(&[MERGED]);
    plant(&f, "memory/archive", outside.path());
    let err = refused(&f).await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    assert_eq!(f.read("MEMORY.md"), MEMORY_MD);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(f.asked()[0].contains(LOG_TEXT.trim_end()));
}
