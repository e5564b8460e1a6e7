//! `[web] search` as the settings dialog edits it. A service's key is stored apart, under
//! the service's name (`brave`, `tavily`, `exa`) through `set_api_key`, like a provider's:
//! the page only learns whether one is stored.

use cairn_app::launch::Config;
use cairn_app::settings::{SearchBackend, WebSettings};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::non_empty;
use crate::ipc::error::{AppError, AppResult};

/// Where web searches go, and what the page may know of the services' keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "WebSearch")]
pub struct WebSearchView {
    /// `[web] search`; `None`: no web search.
    pub service: Option<SearchBackend>,
    /// `[web] searxng_url`: the user's SearXNG (needed with `searxng`).
    pub searxng_url: Option<String>,
    /// The services whose key is in the key store (read-only).
    #[serde(default)]
    pub stored_keys: Vec<SearchBackend>,
    /// The services whose key the environment gives (`BRAVE_API_KEY` ...), used before a
    /// stored one (read-only).
    #[serde(default)]
    pub env_keys: Vec<SearchBackend>,
}

impl WebSearchView {
    pub fn of(config: &Config) -> Self {
        let web = &config.settings.web;
        let keyed = SearchBackend::KEYED.into_iter();
        Self {
            service: web.search_backend(),
            searxng_url: web.searxng_url.clone(),
            stored_keys: keyed
                .clone()
                .filter(|b| matches!(config.secrets.get(b.name()), Ok(Some(_))))
                .collect(),
            env_keys: keyed
                .filter(|b| config.overrides.search_keys.contains_key(b.name()))
                .collect(),
        }
    }

    /// Writes the choice into `web`, keeping what the dialog does not show (`search_url`,
    /// `allow_private`). SearXNG needs its address, an http(s) URL.
    pub fn apply(&self, web: &mut WebSettings) -> AppResult<()> {
        let url = non_empty(&self.searxng_url);
        if self.service == Some(SearchBackend::Searxng) {
            match &url {
                None => {
                    return Err(AppError::invalid(
                        "web search through SearXNG needs the address of your instance, \
                         e.g. http://localhost:8888",
                    ))
                }
                Some(url) => check_url(url)?,
            }
        }
        web.search = self.service;
        web.searxng_url = url;
        Ok(())
    }
}

/// An http or https URL with a host.
fn check_url(url: &str) -> AppResult<()> {
    let parsed = tauri::Url::parse(url).ok();
    let web = parsed
        .as_ref()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    if web {
        Ok(())
    } else {
        Err(AppError::invalid(format!(
            "the SearXNG address `{url}` is not a web address: it starts with http:// or \
             https://, e.g. http://localhost:8888"
        )))
    }
}
