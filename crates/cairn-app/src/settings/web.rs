//! `[web]`: what `web_fetch` may reach, and which service `web_search` asks.
//!
//! ```toml
//! [web]
//! search = "brave"            # or "tavily", "exa", "searxng", "provider"
//! searxng_url = "http://localhost:8888"   # your SearXNG (search = "searxng")
//! search_url = "https://proxy.example/brave"  # optional: another address for the service
//! ```

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use cairn_core::tools::handlers::web_search::Backend;

/// `[web] search`: where web searches go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SearchBackend {
    /// The Brave Search API (a key: `cairn key set brave` or `BRAVE_API_KEY`).
    Brave,
    /// Tavily (`cairn key set tavily` or `TAVILY_API_KEY`).
    Tavily,
    /// Exa (`cairn key set exa` or `EXA_API_KEY`).
    Exa,
    /// The user's own SearXNG at `searxng_url`, no key.
    Searxng,
    /// The chat provider's own search, run on its servers (Anthropic's web search tool):
    /// no `web_search` tool of Cairn's.
    Provider,
}

impl SearchBackend {
    /// The services whose keys Cairn keeps.
    pub const KEYED: [SearchBackend; 3] = [
        SearchBackend::Brave,
        SearchBackend::Tavily,
        SearchBackend::Exa,
    ];

    /// Its name in config.toml.
    pub fn name(self) -> &'static str {
        match self {
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
            SearchBackend::Exa => "exa",
            SearchBackend::Searxng => "searxng",
            SearchBackend::Provider => "provider",
        }
    }

    /// The service Cairn's `web_search` tool asks; `None` when the provider searches.
    pub fn local(self) -> Option<Backend> {
        match self {
            SearchBackend::Brave => Some(Backend::Brave),
            SearchBackend::Tavily => Some(Backend::Tavily),
            SearchBackend::Exa => Some(Backend::Exa),
            SearchBackend::Searxng => Some(Backend::Searxng),
            SearchBackend::Provider => None,
        }
    }

    /// The name its key is kept under (`cairn key set <name>`), when it takes one.
    pub fn key_name(self) -> Option<&'static str> {
        Self::KEYED.contains(&self).then(|| self.name())
    }

    /// The environment variable read for its key before the key store.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            SearchBackend::Brave => Some("BRAVE_API_KEY"),
            SearchBackend::Tavily => Some("TAVILY_API_KEY"),
            SearchBackend::Exa => Some("EXA_API_KEY"),
            SearchBackend::Searxng | SearchBackend::Provider => None,
        }
    }

    /// The service whose key is kept under `name`.
    pub fn keyed(name: &str) -> Option<Self> {
        Self::KEYED.into_iter().find(|b| b.name() == name)
    }
}

/// `[web]`: what `web_fetch` may reach and where `web_search` sends queries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct WebSettings {
    /// Loopback, private and link-local addresses too (default false).
    pub allow_private: Option<bool>,
    /// The search service (default: none, and no `web_search` tool).
    pub search: Option<SearchBackend>,
    /// The address of the user's SearXNG (`search = "searxng"`), e.g.
    /// `http://localhost:8888`: on their machine or network, which `web_fetch`'s guard
    /// would refuse, and still does.
    pub searxng_url: Option<String>,
    /// Another address for the search service (a proxy), instead of its own.
    pub search_url: Option<String>,
}

impl WebSettings {
    /// The search service chosen, if any.
    pub fn search_backend(&self) -> Option<SearchBackend> {
        self.search
    }

    /// Where the search service is asked instead of its own address: for SearXNG
    /// `searxng_url` (else `search_url`), for the others `search_url`.
    pub fn search_base(&self) -> Option<&str> {
        match self.search {
            Some(SearchBackend::Searxng) => given(&self.searxng_url).or(given(&self.search_url)),
            _ => given(&self.search_url),
        }
    }
}

/// An address that is set and not blank.
fn given(url: &Option<String>) -> Option<&str> {
    url.as_deref().filter(|u| !u.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The `[web]` table of a config file.
    fn web(text: &str) -> Result<WebSettings, String> {
        #[derive(Deserialize)]
        struct File {
            #[serde(default)]
            web: WebSettings,
        }
        toml::from_str::<File>(text)
            .map(|f| f.web)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn every_search_service_parses_and_an_unknown_one_is_named() {
        for backend in [
            SearchBackend::Brave,
            SearchBackend::Tavily,
            SearchBackend::Exa,
            SearchBackend::Searxng,
            SearchBackend::Provider,
        ] {
            let text = format!("[web]\nsearch = \"{}\"\n", backend.name());
            assert_eq!(web(&text).unwrap().search_backend(), Some(backend));
        }
        assert_eq!(web("").unwrap().search_backend(), None);
        let err = web("[web]\nallow_private = true\nsearch = \"bing\"\n").unwrap_err();
        assert_eq!(
            err,
            "unknown variant `bing`, expected one of `brave`, `tavily`, `exa`, `searxng`, \
             `provider`"
        );
        let err = web("[web]\nsearxng = \"http://x\"\n").unwrap_err();
        assert!(err.contains("unknown field `searxng`"), "{err}");
    }

    #[test]
    fn searxng_is_asked_at_its_url_and_the_others_at_search_url() {
        let searxng = web(
            "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://localhost:8888\"\n\
             search_url = \"http://other\"\n",
        )
        .unwrap();
        assert_eq!(searxng.search_base(), Some("http://localhost:8888"));
        let brave =
            web("[web]\nsearch = \"brave\"\nsearxng_url = \"http://localhost:8888\"\n").unwrap();
        assert_eq!(brave.search_base(), None);
        let proxied = web("[web]\nsearch = \"exa\"\nsearch_url = \"https://proxy/exa\"\n").unwrap();
        assert_eq!(proxied.search_base(), Some("https://proxy/exa"));
        assert_eq!(SearchBackend::keyed("tavily"), Some(SearchBackend::Tavily));
        assert_eq!(SearchBackend::keyed("searxng"), None);
        assert_eq!(SearchBackend::Provider.local(), None);
        assert_eq!(SearchBackend::Brave.key_env(), Some("BRAVE_API_KEY"));
    }
}
