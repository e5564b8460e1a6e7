//! The settings' MCP section in the real window: servers with their state and why one
//! failed, one added and one disabled, both written to config.toml.

use super::{click, json, wait_for, DesktopApp, Sandbox, Session, Value, PATIENCE};
use cairn_e2e::mcp_server_toml;
use cairn_testkit::mcp::flaky;
use pretty_assertions::assert_eq;

/// `name:state:error` of each server the section shows.
const SERVERS: &str = "
    return [...document.querySelectorAll('[data-testid=mcp-server]')].map((e) =>
      e.querySelector('strong').textContent + ':' + e.dataset.state + ':' +
      (e.querySelector('[data-testid=mcp-state]').textContent) + ':' +
      (e.querySelector('[data-testid=mcp-error]')?.textContent ?? ''));";

async fn servers(s: &Session) -> Vec<String> {
    let value = s.execute(SERVERS, vec![]).await.unwrap();
    serde_json::from_value(value).unwrap_or_default()
}

/// Waits until the section lists servers for which `want` holds.
async fn wait_servers(s: &Session, what: &str, want: impl Fn(&[String]) -> bool) -> Vec<String> {
    let want = &want;
    wait_for(what, PATIENCE, || async move {
        let listed = servers(s).await;
        Ok(want(&listed).then_some(listed))
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_list_add_and_disable_mcp_servers() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "[memory]\nflush = false\nconsolidation_interval_hours = 0\n{}{}",
        mcp_server_toml("flaky", flaky(&[]), ""),
        mcp_server_toml("dead", flaky(&["--die-at-start"]), ""),
    ));
    DesktopApp::drive(&sandbox, "desktop_e2e_mcp", async |s| {
        click(s, "[data-testid=settings-button]").await;
        let listed = wait_servers(s, "both servers started or failed", |l| {
            l.len() == 2
                && l.iter()
                    .all(|x| !x.contains(":stopped:") && !x.contains(":starting:"))
        })
        .await;
        assert!(listed[0].starts_with("dead:failed:failed:"), "{listed:?}");
        assert!(listed[0].contains("the token is missing"), "{listed:?}");
        assert!(
            listed[0].contains("flaky_server.py --die-at-start"),
            "{listed:?}"
        );
        assert_eq!(listed[1], "flaky:running:running:");

        // Add one from its command line.
        let (command, args) = flaky(&[]);
        let line = format!("{command} {}", args.join(" "));
        let section = "[data-testid=mcp-servers]";
        let name = s
            .find(&format!("{section} input[placeholder='e.g. everything']"))
            .await
            .unwrap()
            .unwrap();
        name.send_keys("more").await.unwrap();
        let input = s
            .find(&format!("{section} input[placeholder^='npx']"))
            .await
            .unwrap()
            .unwrap();
        input.send_keys(&line).await.unwrap();
        click(s, &format!("{section} .mcp-add + button")).await;
        wait_servers(s, "the new server listed", |l| {
            l.iter().any(|x| x.starts_with("more:"))
        })
        .await;

        // Disable one.
        click(s, "input[aria-label='Enable flaky']").await;
        wait_servers(s, "flaky disabled", |l| {
            l.iter().any(|x| x.starts_with("flaky:stopped:disabled:"))
        })
        .await;
    })
    .await;
    let written =
        std::fs::read_to_string(sandbox.home().join(".config/cairn/config.toml")).unwrap();
    let settings: Value = toml_to_json(&written);
    assert_eq!(settings["mcp"]["servers"]["flaky"]["enabled"], json!(false));
    let more = &settings["mcp"]["servers"]["more"];
    assert_eq!(more["command"], json!("python3"));
    assert!(
        more["args"][0]
            .as_str()
            .unwrap()
            .ends_with("flaky_server.py"),
        "{written}"
    );
}

/// config.toml as JSON, to look into.
fn toml_to_json(text: &str) -> Value {
    let value: toml::Value = toml::from_str(text).unwrap();
    serde_json::to_value(value).unwrap()
}
