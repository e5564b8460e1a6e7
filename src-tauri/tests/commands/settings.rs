//! The settings dialog's commands: keys never shown and kept out of config.toml, bad values
//! refused, and what is saved taking effect from the next message.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn settings_never_show_a_key_and_refuse_bad_values() {
    let app = App::new("http://127.0.0.1:9/v1");
    let settings = app.ok("get_settings", json!({}));
    assert_eq!(settings["providers"][0]["name"], "mock");
    assert_eq!(settings["providers"][0]["has_key"], false);
    let mut bad = settings.clone();
    bad["providers"][0]["base_url"] = json!("file:///etc");
    assert_eq!(
        app.code("save_settings", json!({"settings": bad})),
        "invalid"
    );
    assert_eq!(
        app.code("open_link", json!({"url": "javascript:alert(1)"})),
        "invalid"
    );
    assert_eq!(
        app.code("open_link", json!({"url": "file:///etc/passwd"})),
        "invalid"
    );
}

#[test]
fn a_new_key_reaches_the_remote_embedder_at_once() {
    // Every request is refused: the embedder's calls are only looked at, not answered.
    let (_rt, server) = serve(Vec::new());
    let app = App::with_config(&format!(
        "default_provider = \"mock\"\n[providers.mock]\nkind = \"openai\"\n\
         base_url = \"{}/v1\"\nmodel = \"test-model\"\n\
         [memory]\nflush = false\nembedder = \"mock/embed-model\"\n",
        server.url()
    ));
    app.ok(
        "set_api_key",
        json!({"provider": "mock", "key": "sk-new-key"}),
    );
    let seen = server.requests().len();
    // Search falls back to words when the query cannot be embedded; it still asked.
    app.ok("memory_search", json!({"query": "quokka", "limit": 5}));
    let asked: Vec<_> = server.requests()[seen..]
        .iter()
        .filter(|r| r.path == "/v1/embeddings")
        .map(|r| r.header("authorization").map(str::to_string))
        .collect();
    assert!(!asked.is_empty(), "the query was not embedded");
    assert_eq!(
        asked.last().cloned().flatten().as_deref(),
        Some("Bearer sk-new-key")
    );
}

/// The names of the tools the model was offered in the server's `i`-th request.
fn offered(server: &MockServer, i: usize) -> Vec<String> {
    let body = server.requests()[i].body_json().unwrap();
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_search_service_and_its_key_apply_from_the_next_message_and_the_key_stays_out_of_the_file() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("No search yet.")),
        MockResponse::sse(text_stream("Now I can search.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let mut settings = app.ok("get_settings", json!({}));
    assert_eq!(
        settings["web_search"],
        json!({"service": null, "searxng_url": null, "stored_keys": [], "env_keys": []})
    );
    settings["web_search"]["service"] = json!("brave");
    settings["providers"][0]["vision"] = json!(true);
    settings["providers"][0]["image_max_side"] = json!(1024);
    app.ok("save_settings", json!({"settings": settings}));
    // Brave without its key: no web_search (the start warns instead).
    let body = app.with_channel(json!({"text": "hi"}));
    app.ok("send_message", body);
    assert!(!offered(&server, 0).contains(&"web_search".to_string()));
    const KEY: &str = "BSA-secret-key-0123";
    app.ok("set_api_key", json!({"provider": "brave", "key": KEY}));
    let body = app.with_channel(json!({"text": "search now"}));
    app.ok("send_message", body);
    assert!(
        offered(&server, 1).contains(&"web_search".to_string()),
        "{:?}",
        offered(&server, 1)
    );
    let settings = app.ok("get_settings", json!({}));
    assert_eq!(settings["web_search"]["stored_keys"], json!(["brave"]));
    assert_eq!(settings["providers"][0]["vision"], json!(true));
    assert_eq!(settings["providers"][0]["image_max_side"], json!(1024));
    assert!(!settings.to_string().contains(KEY));
    let config_dir = app._dir.path().join("config");
    let text = std::fs::read_to_string(config_dir.join("config.toml")).unwrap();
    assert!(text.contains("search = \"brave\""), "{text}");
    assert!(!text.contains(KEY), "{text}");
    if settings["key_store"]["kind"] == "file" {
        let keys = std::fs::read_to_string(config_dir.join("secrets.toml")).unwrap();
        assert!(keys.contains(KEY));
    } else {
        app.ok("set_api_key", json!({"provider": "brave", "key": null}));
    }
}

#[test]
fn searxng_without_a_web_address_is_refused_and_nothing_is_written() {
    let app = App::new("http://127.0.0.1:9/v1");
    let mut settings = app.ok("get_settings", json!({}));
    settings["web_search"]["service"] = json!("searxng");
    settings["web_search"]["searxng_url"] = json!("searx.lan");
    let config = app._dir.path().join("config/config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    assert_eq!(
        app.code("save_settings", json!({"settings": settings})),
        "invalid"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

/// Whether the app says background consolidation runs, waiting up to 20 s for `want`
/// (a settings save restarts it in the background).
fn consolidation_becomes(app: &App, want: bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let on = app.ok("memory_overview", json!({}))["consolidation_enabled"] == json!(true);
        if on == want || std::time::Instant::now() > deadline {
            return on;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn consolidation_follows_the_settings_without_a_restart() {
    let (_rt, server) = serve(Vec::new());
    let app = App::new(&format!("{}/v1", server.url()));
    // As at launch (without fetching the bundled models).
    tauri::async_runtime::block_on(app.desktop.start_consolidation());
    // `[memory] flush = false`: nothing may write memory, so nothing consolidates.
    assert!(!consolidation_becomes(&app, false));
    let mut settings = app.ok("get_settings", json!({}));
    assert_eq!(settings["memory_flush"], json!(false));
    settings["memory_flush"] = json!(null);
    app.ok("save_settings", json!({"settings": settings.clone()}));
    assert!(
        consolidation_becomes(&app, true),
        "turning the flush on did not start consolidation"
    );
    // An interval of 0 turns it off again, at once.
    settings["consolidation_interval_hours"] = json!(0.0);
    app.ok("save_settings", json!({"settings": settings}));
    assert!(!consolidation_becomes(&app, false));
}

#[test]
fn the_queue_mode_is_saved_applied_and_read_back() {
    let app = App::new("http://127.0.0.1:9/v1");
    assert_eq!(app.ok("app_info", json!({}))["follow_up_mode"], "all");
    app.ok("set_follow_up_mode", json!({"mode": "one-at-a-time"}));
    assert_eq!(
        app.ok("app_info", json!({}))["follow_up_mode"],
        "one-at-a-time"
    );
    let path = app.ok("get_settings", json!({}))["path"]
        .as_str()
        .unwrap()
        .to_string();
    let saved = std::fs::read_to_string(path).unwrap();
    assert!(
        saved.contains("follow_up_mode = \"one-at-a-time\""),
        "{saved}"
    );
    // What the settings had is kept.
    assert!(saved.contains("[providers.mock]"), "{saved}");
    assert!(app
        .call("set_follow_up_mode", json!({"mode": "sometimes"}))
        .is_err());
}
