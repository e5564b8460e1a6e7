//! The settings dialog: read, save (the chat model is built again), keys, trying a
//! provider.

use std::time::Duration;

use cairn_app::launch::Config;
use cairn_app::settings::Secret;

use super::app::{info, AppInfo};
use super::DesktopState;
use crate::ipc::error::AppResult;
use crate::ipc::settings::{self, ProviderView, SettingsView};
use serde::Serialize;
use ts_rs::TS;

#[tauri::command(rename_all = "snake_case")]
pub async fn get_settings(desktop: DesktopState<'_>) -> AppResult<SettingsView> {
    Ok(SettingsView::of(&desktop.config()))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_settings(
    desktop: DesktopState<'_>,
    settings: SettingsView,
) -> AppResult<AppInfo> {
    let config = desktop.config();
    let next = settings.apply(&config.settings)?;
    settings::save(&config, &next)?;
    let reloaded = Config::load(desktop.paths.config_dir.as_deref())?;
    let consolidation_changed = consolidation_inputs(&config) != consolidation_inputs(&reloaded);
    desktop.reload(reloaded).await?;
    let desktop = desktop.inner().clone();
    // Load the new model in the background (and consolidate as the settings now say);
    // the page gets the new names at once.
    let warm = desktop.clone();
    tauri::async_runtime::spawn(async move {
        if consolidation_changed || warm.scheduler.lock().await.is_none() {
            warm.start_consolidation().await;
        } else if let Err(e) = warm.chat_model().await {
            warm.notice(e.message);
        }
    });
    Ok(info(&desktop).await)
}

/// What background consolidation is made from: the providers, the models for each
/// purpose, `[memory]` and the timeouts.
fn consolidation_inputs(config: &Config) -> impl PartialEq + '_ {
    let s = &config.settings;
    (
        &s.default_provider,
        &s.providers,
        &s.models,
        &s.memory,
        &s.timeouts,
    )
}

/// Stores (with no key: removes) the key kept under `provider`: a provider's name, or a
/// search service's (`brave`, `tavily`, `exa`). The agent is made again for the next
/// message, with the new key.
#[tauri::command(rename_all = "snake_case")]
pub async fn set_api_key(
    desktop: DesktopState<'_>,
    provider: String,
    key: Option<String>,
) -> AppResult<()> {
    let config = desktop.config();
    match key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => config.secrets.set(&provider, &Secret::new(key))?,
        None => {
            config.secrets.delete(&provider)?;
        }
    }
    let next = Config::load(desktop.paths.config_dir.as_deref())?;
    // A remote embedder holds the key it was made with: make it again with the new one
    // (whichever way the setting names the provider), even when the reload itself has to
    // wait for a run to end.
    let embeds_with_it = cairn_app::launch::embedder_provider(&next).as_deref() == Some(&provider);
    let a_models_key = next.settings.providers.contains_key(&provider);
    let reloaded = desktop.reload(next).await;
    if embeds_with_it {
        desktop.renew_embedder();
    }
    // A key may be what consolidation waited for; one already running keeps its model
    // (built with the old key) until it is made again here.
    if reloaded.is_ok() && a_models_key {
        let desktop = desktop.inner().clone();
        tauri::async_runtime::spawn(async move { desktop.start_consolidation().await });
    }
    reloaded
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ConnectionCheck {
    pub ok: bool,
    pub message: String,
    pub models: Vec<String>,
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// Lists the models of `provider` as edited in the dialog (not saved yet), with `key`
/// or the stored one.
#[tauri::command(rename_all = "snake_case")]
pub async fn check_provider(
    desktop: DesktopState<'_>,
    provider: ProviderView,
    key: Option<String>,
) -> AppResult<ConnectionCheck> {
    let config = desktop.config();
    let mut trial = config.settings.clone();
    let old = trial.providers.get(&provider.name).cloned();
    trial
        .providers
        .insert(provider.name.clone(), provider.apply(old.as_ref())?);
    let mut resolved = trial.resolve_named(&provider.name, &config.overrides, &config.secrets)?;
    if let Some(key) = key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        resolved.api_key = Some(Secret::new(key));
    }
    let listed = tokio::time::timeout(CHECK_TIMEOUT, resolved.list_models()).await;
    Ok(match listed {
        Ok(Ok(models)) => ConnectionCheck {
            ok: true,
            message: format!("connected: {} model(s)", models.len()),
            models,
        },
        Ok(Err(e)) => ConnectionCheck {
            ok: false,
            message: e.to_string(),
            models: Vec::new(),
        },
        Err(_) => ConnectionCheck {
            ok: false,
            message: format!("no answer within {} s", CHECK_TIMEOUT.as_secs()),
            models: Vec::new(),
        },
    })
}

/// Model servers running on this machine (Ollama, LM Studio, llama.cpp's server, vLLM on
/// their default ports), their models and the context window each runs with.
#[tauri::command(rename_all = "snake_case")]
pub async fn discover_local_servers(
) -> AppResult<Vec<cairn_app::cairn_llm::openai::window::LocalServer>> {
    Ok(cairn_app::cairn_llm::openai::window::discover_local_servers().await)
}
