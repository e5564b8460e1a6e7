//! The settings view's tests: what the page edits is saved to config.toml and read back.

use super::*;
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
        has_key: false,
    });
    let err = view.apply(&config.settings).unwrap_err();
    assert!(err.message.contains("http://"), "{}", err.message);
    view.providers[0].base_url = None;
    view.providers[0].kind = "scripted".into();
    assert!(view.apply(&config.settings).is_err());
}
