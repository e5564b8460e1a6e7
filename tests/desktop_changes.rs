//! The agent's change to a file, reviewed and reverted in the real window: the card shows
//! the diff it made; Revert is refused with the reason while the file holds a later edit,
//! and goes through once it holds what the change left. (Included by `desktop_e2e.rs`.)

use cairn_e2e::webdriver::{wait_for, Session, WdError, PATIENCE};
use cairn_e2e::Sandbox;

use super::{click, text_of};

/// `path` was written with `text` by the run's `write_file` call (a new file).
pub async fn a_change_is_reverted_from_its_card_unless_the_file_changed(
    s: &Session,
    sandbox: &Sandbox,
    path: &str,
    text: &str,
) {
    let file = sandbox.workspace().join(path);
    let card = "[data-testid=tool-card][data-tool=write_file]";
    let revert = format!("{card} [data-testid=revert-change]");
    if s.find(&revert).await.unwrap().is_none() {
        click(s, &format!("{card} .tool-head")).await;
    }
    wait_for("the card's Revert", PATIENCE, || async {
        s.find(&revert).await
    })
    .await;
    let diff = format!("{card} [data-testid=tool-diff][data-path='{path}']");
    let shown = text_of(s, &diff).await.unwrap();
    assert!(shown.contains("new file"), "{shown}");

    // The user adds a line meanwhile: the card says so without moving its Revert, which
    // refuses, says why, and writes nothing.
    let place = place_of(s, &revert).await;
    let mine = format!("{text}- my own line\n");
    std::fs::write(&file, &mine).unwrap();
    let state = format!("{card} [data-testid=change-state]");
    wait_for("the card to say Changed since", PATIENCE, || async {
        let shown = text_of(s, &state).await.unwrap_or_default();
        Ok((shown == "Changed since").then_some(()))
    })
    .await;
    assert_eq!(place_of(s, &revert).await, place, "Revert moved");
    click(s, &revert).await;
    let refusal = format!("{card} [data-testid=revert-error]");
    wait_for("the refusal on the card", PATIENCE, || async {
        match text_of(s, &refusal).await? {
            shown if shown.contains("changed since") => Ok(Some(())),
            shown if shown.is_empty() => Ok(None),
            shown => Err(WdError(format!("it reads {shown:?}"))),
        }
    })
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);

    // As the change left it again: the revert goes through. The call made the file, so
    // reverting moves it to the trash.
    std::fs::write(&file, text).unwrap();
    click(s, &revert).await;
    wait_for("the card to say Reverted", PATIENCE, || async {
        let shown = text_of(s, &state).await?;
        Ok((shown == "Reverted").then_some(()))
    })
    .await;
    assert!(!file.exists(), "{path} is still there");

    // The Changes tab lists the run's file, reverted.
    click(s, "#tab-changes").await;
    let listed = format!("[data-testid=changes-file][data-path='{path}'][data-state=reverted]");
    wait_for("the file in the Changes tab", PATIENCE, || async {
        s.find(&listed).await
    })
    .await;
    click(s, "#tab-editor").await;
}

/// Where the element `css` is in the window (left and top, in CSS pixels).
async fn place_of(s: &Session, css: &str) -> (i64, i64) {
    let place = s
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();
             return [Math.round(r.left), Math.round(r.top)];",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap_or_else(|e| panic!("{css}: {}", e.0));
    (
        place[0].as_i64().unwrap_or(-1),
        place[1].as_i64().unwrap_or(-1),
    )
}
