//! Step 3 of the main window test: what a model sends can run nothing and load nothing.
//! (Included by `desktop_e2e.rs`.)

use cairn_e2e::webdriver::{wait_for, Session, PATIENCE};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{answer_facts, send};

/// The innermost element of answer `arguments[0]` (0-based) holding text `arguments[1]`.
const FIND_TEXT: &str = "
    const m = document.querySelectorAll('[data-testid=message-assistant]')[arguments[0]];
    const walk = document.createTreeWalker(m, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      if (walk.currentNode.textContent.includes(arguments[1])) return walk.currentNode.parentElement;
    }
    return null;";

/// Step 3: raw HTML, a javascript: link and a remote image from the model run nothing and
/// load nothing; the HTML shows as text.
pub async fn model_html_and_script_links_stay_inert(s: &Session) {
    let url = s.current_url().await.unwrap();
    send(s, "Show me something").await;
    let shown = answer_facts(
        s,
        4,
        "return {imgs: m.querySelectorAll('img').length,
                 scripts: [...m.querySelectorAll('a')].filter(a =>
                    !/^(https?:|mailto:)/i.test(a.getAttribute('href') || '')).length,
                 text: m.textContent};",
    )
    .await;
    assert_eq!(shown["imgs"], 0, "{shown}");
    assert_eq!(shown["scripts"], 0, "{shown}");
    let text = shown["text"].as_str().unwrap();
    assert!(
        text.contains("<img src=x onerror=\"window.__pwned=1\">"),
        "{text}"
    );
    assert!(text.contains("click me"), "{text}");

    // Clicking the "click me" text does nothing either.
    wait_for(
        "a click on the \"click me\" text",
        PATIENCE,
        || async move {
            let target = s
                .execute(FIND_TEXT, vec![json!(3), json!("click me")])
                .await;
            match target {
                Ok(el) if !el.is_null() => s.element(&el)?.click().await.map(Some),
                Ok(_) => Ok(None),
                Err(e) => Err(e),
            }
        },
    )
    .await;
    let page = s
        .execute(
            "return {pwned: typeof window.__pwned,
                     remote: performance.getEntriesByType('resource')
                        .filter(e => e.name.includes('example.invalid')).length};",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(page, json!({"pwned": "undefined", "remote": 0}));
    assert_eq!(s.current_url().await.unwrap(), url);
}
