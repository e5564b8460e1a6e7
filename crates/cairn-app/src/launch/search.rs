//! The `web_search` tool from `[web] search` and the service's key: offered only when a
//! service is chosen and, for those that take one, its key is found. With `search =
//! "provider"` the Anthropic provider offers its own search instead (set where the
//! provider is built, `settings/build.rs`); another chat provider gets a warning.

use std::sync::Arc;

use cairn_core::tools::handlers::web_search::{SearchConfig, WebSearch};

use super::{ChatModel, Config, Warn};
use crate::settings::{ProviderKind, SearchBackend, Secret};

/// The tool, or `None` (with a warning saying what to do when something is missing):
/// no service chosen, the provider's own search chosen, or a key or address missing.
pub fn web_search(config: &Config, warn: Warn<'_>) -> Option<Arc<WebSearch>> {
    let web = &config.settings.web;
    let chosen = web.search_backend()?;
    let backend = chosen.local()?;
    let key = match chosen.key_name() {
        Some(_) => Some(key(config, chosen, warn)?),
        None => None,
    };
    let base_url = web.search_base().map(String::from);
    if chosen == SearchBackend::Searxng && base_url.is_none() {
        warn(
            "[web] search = \"searxng\" needs the address of your instance: set [web] \
             searxng_url (e.g. \"http://localhost:8888\"); web_search is off until then"
                .into(),
        );
        return None;
    }
    let config = SearchConfig {
        backend,
        base_url,
        key: key.map(|k| k.expose().to_string()),
    };
    WebSearch::new(config)
        .map(Arc::new)
        .map_err(|e| warn(format!("web_search is unavailable: {e}")))
        .ok()
}

/// `[web] search = "provider"` with a chat model whose provider has no search of its own
/// (only Anthropic's has): a warning, since nothing searches the web then.
pub fn check_provider_search(config: &Config, chat: &ChatModel, warn: Warn<'_>) {
    if config.settings.web.search_backend() != Some(SearchBackend::Provider) {
        return;
    }
    let kind = chat.0.info().kind;
    if kind != ProviderKind::Anthropic.name() {
        warn(format!(
            "[web] search = \"provider\" needs the Anthropic provider, and the chat model \
             `{}` is {kind}'s: no web search is offered (choose an Anthropic model, or set \
             [web] search to brave, tavily, exa or searxng)",
            chat.1
        ));
    }
}

/// The service's key from its environment variable or the key store.
fn key(config: &Config, chosen: SearchBackend, warn: Warn<'_>) -> Option<Secret> {
    let name = chosen.name();
    match config
        .settings
        .search_key(&config.overrides, &config.secrets)
    {
        Ok(Some(key)) => Some(key),
        Ok(None) => {
            let env = chosen.key_env().unwrap_or_default();
            warn(format!(
                "[web] search = \"{name}\" needs an API key: store it with `cairn key set \
                 {name}` (or set {env}); web_search is off until then"
            ));
            None
        }
        Err(e) => {
            warn(format!(
                "the key for [web] search = \"{name}\" could not be read ({e}); web_search \
                 is off"
            ));
            None
        }
    }
}
