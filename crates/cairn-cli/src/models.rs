//! `cairn models` and `cairn doctor`: what is configured, and whether it works.

use std::time::Duration;

use cairn_app::cairn_llm::LlmError;
use cairn_app::settings::{ProviderKind, Purpose, ResolvedProvider};
use serde::Serialize;

use crate::args::Cli;
use crate::escape;
use crate::setup::{self, Config};
use crate::terminal::clean_line;

/// How long to wait for a server's model list.
const LIST_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Serialize)]
struct ProviderModels {
    name: String,
    kind: &'static str,
    model: String,
    /// Used for chat right now.
    active: bool,
    models: Vec<String>,
    error: Option<String>,
}

pub async fn models(cli: &Cli, json: bool) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let active = config.resolve(Purpose::Chat)?;
    let mut out = Vec::new();
    for resolved in candidates(&config, &active)? {
        let (models, error) = match list(&resolved).await {
            Ok(models) => (models, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        out.push(ProviderModels {
            active: resolved.name == active.name,
            kind: resolved.kind().name(),
            model: if resolved.name == active.name {
                active.model.clone()
            } else {
                resolved.model
            },
            name: resolved.name,
            models,
            error,
        });
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "providers": out }))?
        );
        return Ok(0);
    }
    for p in out {
        let mark = if p.active { "*" } else { " " };
        println!("{mark} {} ({}), model {}", p.name, p.kind, p.model);
        match p.error {
            Some(error) => println!("    cannot list models: {}", escape::prose_line(&error)),
            None if p.models.is_empty() => println!("    no models found"),
            None => p
                .models
                .iter()
                .for_each(|m| println!("    {}", escape::prose_line(m))),
        }
    }
    Ok(0)
}

/// `cairn models --local`: the model servers running on this machine, their models and the
/// context window each runs with.
pub async fn local(json: bool) -> anyhow::Result<u8> {
    let servers = cairn_app::cairn_llm::openai::window::discover_local_servers().await;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "servers": servers }))?
        );
        return Ok(0);
    }
    if servers.is_empty() {
        let looked: Vec<String> = cairn_app::cairn_llm::openai::window::DEFAULT_PORTS
            .iter()
            .map(|(kind, port)| format!("{} on {port}", kind.label()))
            .collect();
        println!(
            "no model server found on this machine (looked for {})",
            looked.join(", ")
        );
        return Ok(0);
    }
    for server in servers {
        println!("{} at {}", server.kind.label(), server.base_url);
        if server.models.is_empty() {
            println!("    no models");
        }
        for model in server.models {
            let window = model
                .context_window
                .map_or("window not reported".to_string(), |w| format!("{w} tokens"));
            println!("    {} ({window})", escape::prose_line(&model.id));
        }
    }
    Ok(0)
}

pub async fn doctor(cli: &Cli) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    println!("settings: {}", config.settings_path.display());
    let backend = match config.secrets.backend() {
        cairn_app::settings::SecretBackend::Keyring => "the OS keyring".to_string(),
        cairn_app::settings::SecretBackend::File(path) => {
            format!("{} (no keyring service running)", path.display())
        }
    };
    println!("keys: {backend}");
    let active = config.resolve(Purpose::Chat)?;
    let mut problems = 0;
    for resolved in candidates(&config, &active)? {
        let role = if resolved.name == active.name {
            " (in use)"
        } else {
            ""
        };
        println!("\n{} ({}){role}", resolved.name, resolved.kind().name());
        let resolved = if resolved.name == active.name {
            active.clone()
        } else {
            resolved
        };
        problems += check(&resolved).await;
    }
    problems += check_embedder(&config).await;
    println!("\nmemory upkeep");
    match cairn_app::launch::memory_upkeep_paused(&config) {
        // Not a problem: a choice made for the user, said with how to change it.
        Some(why) => println!("  · {why}"),
        None if config.settings.memory.flush == Some(false) => {
            println!("  · off (`[memory] flush = false`)")
        }
        None => ok("the memory flush and consolidation run in the background"),
    }
    problems += check_folders(cli, &config);
    problems += crate::reading::check(&config);
    problems += crate::sandbox::check(cli, &config).await;
    if problems == 0 {
        println!("\nall good");
        Ok(0)
    } else {
        println!("\n{problems} problem(s) found");
        Ok(1)
    }
}

/// Prints the folders searched in place (`[memory] folders`) and whether each can be;
/// returns the number of problems.
fn check_folders(cli: &Cli, config: &Config) -> u32 {
    if config.memory_folders().is_empty() {
        return 0;
    }
    println!("\nfolders searched in place");
    let workspace = match setup::workspace(cli, config) {
        Ok(workspace) => workspace,
        Err(e) => {
            return bad(
                &format!("the workspace cannot be opened: {e:#}"),
                "see above",
            )
        }
    };
    let mut problems = 0;
    for problem in workspace.folder_problems() {
        problems += bad(&clean_line(problem), "change `[memory] folders`");
    }
    for folder in workspace.folders() {
        let shown = clean_line(&folder.root.display().to_string());
        match cairn_app::cairn_memory::index::folders::unavailable(folder) {
            None => ok(&format!("{shown} (as {}/)", clean_line(&folder.name))),
            Some(why) => {
                problems += bad(
                    &format!("{shown}: {}", clean_line(&why)),
                    "mount or create it, or take it out of `[memory] folders`",
                );
            }
        }
    }
    problems
}

/// Prints the checks of search by meaning's embedder; returns the number of problems.
async fn check_embedder(config: &Config) -> u32 {
    println!("\nsearch by meaning");
    let setting = config.settings.memory.embedder.as_deref().map(str::trim);
    if setting == Some("none") {
        println!("  · off (`[memory] embedder = \"none\"`): search is by keyword only");
        return 0;
    }
    let mut warnings = Vec::new();
    let Some(embedder) = cairn_app::launch::embedder(config, &mut |w| warnings.push(w)) else {
        let why = warnings.pop().unwrap_or_else(|| {
            "the bundled embedding model (all-MiniLM-L6-v2) is not installed".into()
        });
        return bad(
            &why,
            "run `cairn models --fetch` to install it, or set `[memory] embedder` (\"none\" \
             for keyword search only)",
        );
    };
    let model = embedder.model();
    let started = std::time::Instant::now();
    let probe = tokio::task::spawn_blocking(move || {
        let vectors = embedder.embed(&["a test sentence"]);
        // Named once it has run: the engine that loaded, not the one foretold.
        (vectors, embedder.model(), embedder.engine())
    })
    .await;
    match probe {
        Ok((Ok(vectors), model, engine)) => {
            let dimensions = vectors.first().map_or(0, Vec::len);
            let engine = engine.map(|e| format!(": {e}")).unwrap_or_default();
            ok(&format!(
                "{model} embeds in {:.2} s ({dimensions} dimensions){engine}",
                started.elapsed().as_secs_f64()
            ));
            0
        }
        Ok((Err(e), ..)) => bad(
            &format!("{model} does not embed: {e}"),
            "check the model files, or the server of `[memory] embedder`",
        ),
        Err(e) => bad(&format!("embedding failed: {e}"), "report this"),
    }
}

/// The providers worth showing: configured ones, ones with a key, and the one in use.
fn candidates(config: &Config, active: &ResolvedProvider) -> anyhow::Result<Vec<ResolvedProvider>> {
    let mut out = Vec::new();
    for name in config.settings.provider_names() {
        let resolved = config
            .settings
            .resolve_named(&name, &config.overrides, &config.secrets)?;
        let configured = config.settings.providers.contains_key(&name)
            || resolved.api_key.is_some()
            || resolved.kind() == ProviderKind::Local
            || name == active.name;
        if configured {
            out.push(resolved);
        }
    }
    if !out.iter().any(|r| r.name == active.name) {
        out.push(active.clone());
    }
    Ok(out)
}

async fn list(resolved: &ResolvedProvider) -> Result<Vec<String>, LlmError> {
    match tokio::time::timeout(LIST_TIMEOUT, resolved.list_models()).await {
        Ok(result) => result,
        Err(_) => Err(LlmError::Transient(format!(
            "no answer in {} s",
            LIST_TIMEOUT.as_secs()
        ))),
    }
}

/// Prints the checks of one provider; returns the number of problems.
async fn check(resolved: &ResolvedProvider) -> u32 {
    match resolved.kind() {
        ProviderKind::Local => check_local(resolved).await,
        ProviderKind::Scripted => {
            ok(&format!(
                "script {}",
                resolved
                    .script
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ));
            0
        }
        ProviderKind::Openai | ProviderKind::Anthropic => check_remote(resolved).await,
    }
}

async fn check_local(resolved: &ResolvedProvider) -> u32 {
    let Some(path) = resolved.model_path() else {
        return bad(
            "no model file configured",
            "set CAIRN_MODEL_PATH or model_path in the settings",
        );
    };
    if !path.is_file() {
        return bad(
            &format!("model file {} is missing", path.display()),
            "run `cairn models --fetch` to install the bundled model",
        );
    }
    ok(&format!("model file {}", path.display()));
    let started = std::time::Instant::now();
    match resolved.build().await {
        Ok(provider) => {
            let info = provider.info();
            let window = info
                .context_window
                .map(|w| format!(", context {w} tokens"))
                .unwrap_or_default();
            ok(&format!(
                "loads in {:.2} s{window}",
                started.elapsed().as_secs_f64()
            ));
            if !info.supports_tools {
                println!("  · this model cannot use tools; chats run without them");
            }
            0
        }
        Err(e) => bad(
            &format!("does not load: {e}"),
            "check that the file is a complete GGUF model",
        ),
    }
}

async fn check_remote(resolved: &ResolvedProvider) -> u32 {
    let url = resolved
        .settings
        .base_url
        .clone()
        .unwrap_or_else(|| match resolved.kind() {
            ProviderKind::Anthropic => "https://api.anthropic.com".into(),
            _ => "https://api.openai.com/v1".into(),
        });
    match resolved.key_source {
        Some(source) => ok(&format!("key from {source}")),
        None => println!(
            "  · no key (fine for local servers; else `cairn key set {}`)",
            resolved.name
        ),
    }
    match list(resolved).await {
        Ok(models) => {
            ok(&format!("{url} answers ({} models)", models.len()));
            if models.is_empty() || models.iter().any(|m| m == &resolved.model) {
                ok(&format!("model {}", resolved.model));
                0
            } else {
                let some: Vec<_> = models.iter().take(8).cloned().collect();
                bad(
                    &format!("model {} is not offered", resolved.model),
                    &format!("pick one of: {}", some.join(", ")),
                )
            }
        }
        Err(LlmError::Auth(message)) => bad(
            &format!("key rejected: {message}"),
            &format!("store a valid key with `cairn key set {}`", resolved.name),
        ),
        Err(e) => bad(
            &format!("{url} cannot be used: {e}"),
            "check the base URL and that the server is running",
        ),
    }
}

/// A check that passed; `text` may quote a server, so it is escaped.
pub(crate) fn ok(text: &str) {
    println!("  ✓ {}", escape::prose_line(text));
}

/// A check that failed; `problem` and `fix` may quote a server, so they are escaped.
pub(crate) fn bad(problem: &str, fix: &str) -> u32 {
    let (problem, fix) = (escape::prose_line(problem), escape::prose_line(fix));
    println!("  ✗ {problem}\n    fix: {fix}");
    1
}
