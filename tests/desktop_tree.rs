//! The workspace pane's delete, in the real window: the file goes to `.cairn/trash/` on
//! disk, and Undo puts it back as it was. (Included by `desktop_e2e.rs`.)

use cairn_e2e::webdriver::{wait_for, Session, WdError, PATIENCE};
use cairn_e2e::Sandbox;

/// `path` holds `text` in the workspace; deleting it from the tree's menu moves it to the
/// trash, and Undo brings it back.
pub async fn a_deleted_file_waits_in_the_trash_and_comes_back(
    s: &Session,
    sandbox: &Sandbox,
    path: &str,
    text: &str,
) {
    let file = sandbox.workspace().join(path);
    let row = format!("[data-testid=tree-item][data-path='{path}']");
    let found = wait_for(&row, PATIENCE, || async { s.find(&row).await }).await;
    // The row's menu, as a right-click opens it.
    found
        .execute(
            "arguments[0].dispatchEvent(new MouseEvent('contextmenu', {bubbles: true})); \
             return true;",
        )
        .await
        .unwrap();
    let delete = wait_for("the Delete item", PATIENCE, || async {
        s.find("[data-testid=tree-menu] button.danger").await
    })
    .await;
    delete.click().await.unwrap();
    wait_for("the deleted notice", PATIENCE, || async {
        s.find("[data-testid=deleted-notice]").await
    })
    .await;
    assert!(!file.exists(), "{path} is still in the workspace");
    let trash = sandbox.workspace().join(".cairn/trash");
    let name = file.file_name().unwrap();
    let held: Vec<_> = std::fs::read_dir(&trash)
        .unwrap()
        .flatten()
        .map(|e| e.path().join(name))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(std::fs::read_to_string(&held[0]).unwrap(), text);

    let undo = wait_for("Undo", PATIENCE, || async {
        s.find("[data-testid=deleted-notice] button").await
    })
    .await;
    undo.click().await.unwrap();
    wait_for(&format!("{path} back on disk"), PATIENCE, || async {
        match std::fs::read_to_string(&file) {
            Ok(back) if back == text => Ok(Some(())),
            Ok(back) => Err(WdError(format!("it reads {back:?}"))),
            Err(_) => Ok(None),
        }
    })
    .await;
    wait_for(&format!("{path} back in the tree"), PATIENCE, || async {
        s.find(&row).await
    })
    .await;
}
