//! Knowledge outside markdown, in the real window: a folder searched in place listed under
//! its own heading and opened read-only, a PDF hit opened at its page as extracted text,
//! and the memory panel's Coverage naming a document that could not be read. (Included by
//! `desktop_e2e.rs`.)

use cairn_e2e::webdriver::{wait_for, Session, WdError, PATIENCE};
use cairn_e2e::Sandbox;

/// A word only on the third page of `knowledge/tides.pdf`.
const PAGE_THREE_WORD: &str = "quillwort";

/// Writes the workspace's PDFs and the folder searched in place (`<sandbox>/Notes`); the
/// settings' `[memory] folders` line to add.
pub fn prepare(sandbox: &Sandbox) -> String {
    let knowledge = sandbox.workspace().join("knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    let pdf = cairn_testkit::documents::pdf(&[
        "Tide tables for the harbour",
        "March high water at six",
        &format!("April low water and {PAGE_THREE_WORD} on the dunes"),
    ]);
    std::fs::write(knowledge.join("tides.pdf"), pdf).unwrap();
    std::fs::write(knowledge.join("broken.pdf"), b"%PDF-1.5 this is not a PDF").unwrap();
    let notes = sandbox.home().join("Notes");
    std::fs::create_dir_all(notes.join("trips")).unwrap();
    std::fs::write(
        notes.join("trips/croatia.md"),
        "# Croatia\n\nSplit in June: the ferry to Hvar leaves at nine.\n",
    )
    .unwrap();
    format!("folders = [\"{}\"]\n", notes.display())
}

pub async fn documents_and_folders_searched_in_place(s: &Session, sandbox: &Sandbox) {
    // The folder, under its own heading, read-only.
    let folder = "[data-testid=outside-folder][data-name=Notes]";
    wait_for("the Notes folder in the tree", PATIENCE, || async move {
        s.find(folder).await
    })
    .await;
    click(s, "[data-testid=tree-item][data-path='Notes/trips']").await;
    click(
        s,
        "[data-testid=tree-item][data-path='Notes/trips/croatia.md']",
    )
    .await;
    wait_for("the note in the editor", PATIENCE, || async move {
        let content = s.find("[data-testid=editor] .cm-content").await?;
        match content {
            Some(el) => Ok(el.text().await?.contains("ferry to Hvar").then_some(())),
            None => Ok(None),
        }
    })
    .await;
    assert!(s
        .find("[data-testid=editor-read-only]")
        .await
        .unwrap()
        .is_some());
    let editable = s
        .execute(
            "return document.querySelector('[data-testid=editor] .cm-content').contentEditable;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(editable, "false");

    // A hit on the PDF's third page opens its text there.
    s.press(&[cairn_e2e::webdriver::keys::CONTROL, "k"])
        .await
        .unwrap();
    let search = wait_for("the search box", PATIENCE, || async move {
        s.find("[data-testid=search-box]").await
    })
    .await;
    search.send_keys(PAGE_THREE_WORD).await.unwrap();
    let (search, mut tries) = (&search, 0);
    wait_for("the PDF's hit", PATIENCE, move || {
        tries += 1;
        async move {
            let hit = s.find("[data-testid=search-hit][data-path='knowledge/tides.pdf']");
            match hit.await? {
                Some(hit) => hit.click().await.map(Some),
                // Still being indexed: search again, as a user would.
                None if tries % 30 == 0 => search.send_keys(" ").await.map(|()| None),
                None => Ok(None),
            }
        }
    })
    .await;
    let target = ".document-page.target[data-page='3']";
    let text = wait_for("page 3 shown as the hit's page", PATIENCE, || async move {
        match s.find(target).await? {
            Some(page) => Ok(Some(page.text().await?)),
            None => Ok(None),
        }
    })
    .await;
    assert!(text.contains(PAGE_THREE_WORD), "{text}");
    assert!(s
        .find("[data-testid=open-in-viewer]")
        .await
        .unwrap()
        .is_some());

    // Coverage says which document could not be read, and why.
    click(s, "#tab-memory").await;
    wait_for("the broken PDF in Coverage", PATIENCE, || async move {
        let Some(list) = s.find("[data-testid=coverage]").await? else {
            return Ok(None);
        };
        let shown = list.text().await?;
        if shown.contains("knowledge/broken.pdf") && shown.contains("failed") {
            return Ok(Some(()));
        }
        // The index may still be reading it: ask again.
        if let Some(refresh) = s.find("[data-testid=coverage] button").await? {
            refresh.click().await?;
        }
        Err(WdError(format!("Coverage reads {shown:?}")))
    })
    .await;
    // Nothing was written into the folder searched in place.
    let notes = sandbox.home().join("Notes");
    let mut names: Vec<String> = walk(&notes);
    names.sort();
    assert_eq!(names, ["trips", "trips/croatia.md"]);
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        out.push(name.clone());
        if entry.path().is_dir() {
            out.extend(
                walk(&entry.path())
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        }
    }
    out
}

async fn click(s: &Session, css: &str) {
    let el = wait_for(css, PATIENCE, || async move { s.find(css).await }).await;
    el.click().await.unwrap();
}
