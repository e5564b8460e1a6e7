//! The settings view's tests: what the page edits is saved to config.toml and read back.

use super::*;
use cairn_app::settings::SearchBackend;
use pretty_assertions::assert_eq;
use std::path::Path;

fn config(dir: &Path, text: &str) -> Config {
    std::fs::write(dir.join("config.toml"), text).unwrap();
    Config::load(Some(dir)).unwrap()
}

#[test]
fn limits_are_saved_to_their_sections_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        "[run]\nstall_repeats = 4\ncompletion = \"strict\"\n[timeouts]\nconsolidation = 900\n",
    );
    let mut view = SettingsView::of(&config);
    assert!(view.limits.strict);
    assert_eq!(view.limits.consolidation_timeout_s, Some(900));
    view.limits.strict = false;
    view.limits.max_steps = Some(12);
    view.limits.chat_timeout_s = Some(90);
    view.limits.deadline_s = Some(0);
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap().settings;
    assert_eq!(reread.run.max_steps, Some(12));
    assert_eq!(reread.run.completion, None);
    assert_eq!(reread.run.deadline_s, None);
    assert_eq!(reread.run.stall_repeats, Some(4));
    assert_eq!(reread.timeouts.chat, Some(90));
    assert_eq!(reread.timeouts.consolidation, Some(900));
    view.limits.max_steps = Some(0);
    assert!(view.apply(&config.settings).is_err());
}

#[test]
fn folders_are_saved_trimmed_once_each_and_refused_when_not_full_paths() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "[memory]\nexclude = [\"drafts/\"]\n");
    let mut view = SettingsView::of(&config);
    assert!(view.folders.is_empty());
    view.folders = vec![
        " ~/Notes ".into(),
        "/data/papers".into(),
        "~/Notes".into(),
        "".into(),
    ];
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap();
    assert_eq!(
        reread.settings.memory.folders.as_deref(),
        Some(&["~/Notes".to_string(), "/data/papers".to_string()][..])
    );
    // What the view does not show in [memory] is kept.
    assert_eq!(
        reread.settings.memory.exclude.as_deref(),
        Some(&["drafts/".to_string()][..])
    );
    assert_eq!(
        SettingsView::of(&reread).folders,
        ["~/Notes", "/data/papers"]
    );
    view.folders = vec!["Notes".into()];
    let error = view.apply(&config.settings).unwrap_err();
    assert!(error.message.contains("not a full path"), "{error:?}");
    view.folders = Vec::new();
    assert_eq!(view.apply(&config.settings).unwrap().memory.folders, None);
}

#[test]
fn the_embedder_is_saved_when_it_can_be_had_and_refused_with_the_reason_when_not() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        "[providers.ollama]\nkind = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n\
         [providers.claude]\nkind = \"anthropic\"\n[memory]\nembedder = \"none\"\n",
    );
    let mut view = SettingsView::of(&config);
    assert_eq!(view.embedder.as_deref(), Some("none"));
    view.embedder = Some(" ollama / nomic-embed-text ".into());
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap();
    assert_eq!(
        reread.settings.memory.embedder.as_deref(),
        Some("ollama/nomic-embed-text")
    );
    for (spec, says) in [
        ("claude/voyage", "OpenAI-compatible"),
        ("lmstudio/bge", "not set up"),
        ("ollama/", "model's name"),
        ("bert", "not an embedder"),
    ] {
        view.embedder = Some(spec.into());
        let err = view.apply(&config.settings).unwrap_err();
        assert!(err.message.contains(says), "{spec}: {}", err.message);
    }
    view.embedder = Some(String::new());
    assert_eq!(view.apply(&config.settings).unwrap().memory.embedder, None);
}

#[test]
fn a_view_saved_back_keeps_what_the_dialog_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        r#"
# Written by hand.
default_provider = "ollama"
[providers.ollama]
kind = "openai"
base_url = "http://localhost:11434/v1"
model = "llama3.2" # the quick one
headers = { "X-Title" = "Cairn" }
[context]
# room for the answer
reserve_tokens = 9000
[[hooks.pre_tool]]
matcher = "bash"
command = "./check.sh"
[mcp.servers.files]
command = "files-mcp"
"#,
    );
    let mut view = SettingsView::of(&config);
    assert_eq!(view.hooks.len(), 1);
    assert_eq!(view.hooks[0].event, HookEvent::PreTool);
    assert!(!view.web_allow_private);
    view.providers[0].model = Some("qwen3".into());
    view.consolidation_interval_hours = Some(2.0);
    view.web_allow_private = true;
    view.hooks.clear();
    let next = view.apply(&config.settings).unwrap();
    save(&config, &next).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap();
    let ollama = &reread.settings.providers["ollama"];
    assert_eq!(ollama.model.as_deref(), Some("qwen3"));
    assert_eq!(ollama.headers["X-Title"], "Cairn");
    assert_eq!(reread.settings.context.reserve_tokens, Some(9000));
    assert_eq!(reread.settings.web.allow_private, Some(true));
    // Hooks and servers are not edited by the dialog's Save: they stay.
    assert_eq!(reread.settings.hooks.pre_tool[0].command, "./check.sh");
    assert!(reread.settings.mcp.servers.contains_key("files"));
    assert_eq!(
        reread.settings.memory.consolidation_interval_hours,
        Some(2.0)
    );
    assert!(dir.path().join("config.toml.bak").exists());
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    for kept in [
        "# Written by hand.",
        "model = \"qwen3\" # the quick one",
        "headers = { \"X-Title\" = \"Cairn\" }",
        "# room for the answer\nreserve_tokens = 9000",
    ] {
        assert!(text.contains(kept), "{kept:?} is not in\n{text}");
    }
}

#[test]
fn the_view_says_where_keys_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "");
    let path = dir.path().join("secrets.toml");
    config.secrets = cairn_app::settings::SecretStore::file(&path);
    let protection = if cfg!(windows) {
        "protected only by the permissions of your user profile folder"
    } else {
        "readable only by you"
    };
    assert_eq!(
        SettingsView::of(&config).key_store,
        KeyStoreView {
            kind: KeyStoreKind::File,
            path: Some(path.display().to_string()),
            description: format!(
                "No system keyring was found: keys are kept in {}, {protection}",
                path.display()
            ),
        }
    );
    let json = serde_json::to_value(KeyStoreView::of(&SecretBackend::Keyring)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "kind": "keyring",
            "path": null,
            "description": "Keys are kept in the system keyring"
        })
    );
}

#[test]
fn bad_provider_settings_are_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "");
    let mut view = SettingsView::of(&config);
    view.providers.push(ProviderView {
        name: "x".into(),
        kind: "openai".into(),
        base_url: Some("javascript:alert(1)".into()),
        model: None,
        model_path: None,
        context_window: None,
        vision: None,
        image_max_side: None,
        has_key: false,
    });
    let err = view.apply(&config.settings).unwrap_err();
    assert!(err.message.contains("http://"), "{}", err.message);
    view.providers[0].base_url = None;
    view.providers[0].kind = "scripted".into();
    assert!(view.apply(&config.settings).is_err());
}

#[test]
fn web_search_is_saved_with_the_comments_kept_and_its_key_only_in_the_key_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(
        dir.path(),
        "# Mine.\n[web]\nallow_private = true # my wiki\nsearch_url = \"https://proxy/brave\"\n",
    );
    config.secrets = cairn_app::settings::SecretStore::file(dir.path().join("secrets.toml"));
    let mut view = SettingsView::of(&config);
    assert_eq!(view.web_search, WebSearchView::default());
    view.web_search.service = Some(SearchBackend::Brave);
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    // The key is stored as the dialog stores it: under the service's name.
    let name = SearchBackend::Brave.key_name().unwrap();
    let key = cairn_app::settings::Secret::new("BSA-secret-0123");
    config.secrets.set(name, &key).unwrap();
    let mut reread = Config::load(Some(dir.path())).unwrap();
    reread.secrets = config.secrets.clone();
    assert_eq!(
        SettingsView::of(&reread).web_search,
        WebSearchView {
            service: Some(SearchBackend::Brave),
            searxng_url: None,
            stored_keys: vec![SearchBackend::Brave],
            env_keys: Vec::new(),
        }
    );
    assert_eq!(
        reread
            .settings
            .search_key(&reread.overrides, &reread.secrets)
            .unwrap(),
        Some(key)
    );
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    for kept in [
        "# Mine.",
        "allow_private = true # my wiki",
        "search_url = \"https://proxy/brave\"",
        "search = \"brave\"",
    ] {
        assert!(text.contains(kept), "{kept:?} is not in\n{text}");
    }
    assert!(!text.contains("BSA-secret"), "{text}");
    // Off again: no service, the rest of [web] stays.
    view.web_search.service = None;
    let off = view.apply(&reread.settings).unwrap();
    assert_eq!(off.web.search, None);
    assert_eq!(off.web.search_url.as_deref(), Some("https://proxy/brave"));
}

#[test]
fn searxng_is_saved_with_its_address_and_refused_without_a_web_address() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "");
    let mut view = SettingsView::of(&config);
    view.web_search.service = Some(SearchBackend::Searxng);
    for (url, says) in [
        (None, "needs the address"),
        (Some("  "), "needs the address"),
        (Some("localhost:8888"), "not a web address"),
        (Some("ftp://searx.lan"), "not a web address"),
        (Some("http://"), "not a web address"),
    ] {
        view.web_search.searxng_url = url.map(str::to_string);
        let err = view.apply(&config.settings).unwrap_err();
        assert!(err.message.contains(says), "{url:?}: {}", err.message);
    }
    view.web_search.searxng_url = Some(" http://searx.lan:8888 ".into());
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap();
    assert_eq!(
        reread.settings.web.search_base(),
        Some("http://searx.lan:8888")
    );
    assert_eq!(
        SettingsView::of(&reread).web_search.searxng_url.as_deref(),
        Some("http://searx.lan:8888")
    );
}

#[test]
fn whether_a_provider_sees_pictures_and_how_large_is_saved_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        "[providers.a]\nkind = \"openai\"\nvision = true # llava\n\
         [providers.b]\nkind = \"anthropic\"\n[providers.c]\nkind = \"openai\"\n",
    );
    let mut view = SettingsView::of(&config);
    let sees = |v: &SettingsView| -> Vec<(Option<bool>, Option<u32>)> {
        v.providers
            .iter()
            .map(|p| (p.vision, p.image_max_side))
            .collect()
    };
    assert_eq!(
        sees(&view),
        [(Some(true), None), (None, None), (None, None)]
    );
    view.providers[0].image_max_side = Some(1024);
    view.providers[1].vision = Some(false);
    view.providers[2].image_max_side = Some(8192);
    save(&config, &view.apply(&config.settings).unwrap()).unwrap();
    let reread = Config::load(Some(dir.path())).unwrap();
    assert_eq!(
        sees(&SettingsView::of(&reread)),
        [
            (Some(true), Some(1024)),
            (Some(false), None),
            (None, Some(8192))
        ]
    );
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(text.contains("vision = true # llava"), "{text}");
    view.providers[0].vision = None;
    view.providers[0].image_max_side = None;
    let unset = view.apply(&reread.settings).unwrap();
    assert_eq!(unset.providers["a"].vision, None);
    assert_eq!(unset.providers["a"].image_max_side, None);
    for side in [0, 63, 8193] {
        view.providers[2].image_max_side = Some(side);
        let err = view.apply(&config.settings).unwrap_err();
        assert!(
            err.message.contains("from 64 to 8192"),
            "{side}: {}",
            err.message
        );
    }
    // Sent no pictures, the size is not used: it is kept, not checked.
    view.providers[2].vision = Some(false);
    assert_eq!(
        view.apply(&config.settings).unwrap().providers["c"].image_max_side,
        Some(8193)
    );
}
