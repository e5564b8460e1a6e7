//! The search services `web_search` speaks to: where a query goes, how each service is
//! asked, and how its answer becomes hits.
//!
//! - Brave: `GET /res/v1/web/search?q=&count=`, key in `X-Subscription-Token`, hits in
//!   `web.results[] {title, url, description}` (no `web` at all when nothing was found).
//! - Tavily: `POST /search {query, max_results}`, `Authorization: Bearer`, hits in
//!   `results[] {title, url, content}`.
//! - Exa: `POST /search {query, numResults, contents: {text: {maxCharacters}}}`, key in
//!   `x-api-key`, hits in `results[] {title, url, text | highlights}`.
//! - SearXNG: `GET /search?q=&format=json` on the user's instance, no key, hits in
//!   `results[] {title, url, content}` (it returns a page of about 20 whatever is asked).

use serde::Deserialize;
use serde_json::{json, Value};

use super::snippet;

/// Characters of page text asked of Exa per hit (the snippet shown is shorter).
const EXA_TEXT_CHARS: usize = 600;

/// A search service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Brave,
    Tavily,
    Exa,
    Searxng,
}

impl Backend {
    /// Its name in config.toml and in the key store.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Brave => "brave",
            Backend::Tavily => "tavily",
            Backend::Exa => "exa",
            Backend::Searxng => "searxng",
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Backend::Brave => "Brave Search",
            Backend::Tavily => "Tavily",
            Backend::Exa => "Exa",
            Backend::Searxng => "SearXNG",
        }
    }

    /// Whether it takes an API key (SearXNG, the user's own instance, does not).
    pub fn needs_key(self) -> bool {
        !matches!(self, Backend::Searxng)
    }

    /// The service's own address; SearXNG has none (it is the user's instance).
    pub fn default_base(self) -> Option<&'static str> {
        match self {
            Backend::Brave => Some("https://api.search.brave.com"),
            Backend::Tavily => Some("https://api.tavily.com"),
            Backend::Exa => Some("https://api.exa.ai"),
            Backend::Searxng => None,
        }
    }

    /// The path of the search endpoint under the base address.
    pub(super) fn path(self) -> &'static str {
        match self {
            Backend::Brave => "/res/v1/web/search",
            Backend::Tavily | Backend::Exa | Backend::Searxng => "/search",
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// The request for `count` hits on `query` at `endpoint`.
pub(super) fn request(
    backend: Backend,
    client: &reqwest::Client,
    endpoint: &url::Url,
    key: Option<&str>,
    query: &str,
    count: usize,
) -> reqwest::RequestBuilder {
    let key = key.unwrap_or_default();
    let get = |pairs: &[(&str, &str)]| {
        let mut url = endpoint.clone();
        url.query_pairs_mut().extend_pairs(pairs);
        client.get(url)
    };
    let request = match backend {
        Backend::Brave => {
            get(&[("q", query), ("count", &count.to_string())]).header("X-Subscription-Token", key)
        }
        Backend::Tavily => client
            .post(endpoint.clone())
            .bearer_auth(key)
            .json(&json!({"query": query, "max_results": count})),
        Backend::Exa => client
            .post(endpoint.clone())
            .header("x-api-key", key)
            .json(&json!({
                "query": query,
                "numResults": count,
                "contents": {"text": {"maxCharacters": EXA_TEXT_CHARS}}
            })),
        Backend::Searxng => get(&[("q", query), ("format", "json")]),
    };
    request.header(reqwest::header::ACCEPT, "application/json")
}

/// The hits in a service's JSON answer, cleaned (tags stripped, entities decoded, trimmed);
/// hits without an http(s) address are dropped, and so are repeated addresses.
pub(super) fn parse(backend: Backend, answer: Value) -> Result<Vec<Hit>, String> {
    let raw = match backend {
        Backend::Brave => brave(answer)?,
        Backend::Tavily | Backend::Searxng => plain(answer)?,
        Backend::Exa => exa(answer)?,
    };
    let mut hits: Vec<Hit> = Vec::new();
    for (title, url, text) in raw {
        let Some(url) = web_address(url.as_deref().unwrap_or_default()) else {
            continue;
        };
        if hits.iter().any(|h| h.url == url) {
            continue;
        }
        hits.push(Hit {
            title: snippet::clean(title.as_deref().unwrap_or(""), snippet::TITLE_CHARS),
            url,
            snippet: snippet::clean(&text, snippet::SNIPPET_CHARS),
        });
    }
    Ok(hits)
}

/// `url` written out as a web address on one line; `None` for anything but http(s).
fn web_address(url: &str) -> Option<String> {
    let url = url::Url::parse(url.trim()).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

/// A hit as the service gave it: title, address, text.
type RawHit = (Option<String>, Option<String>, String);

fn shape_error(e: serde_json::Error) -> String {
    format!("the answer is JSON but not search results ({e})")
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
    /// Present in every search answer, with or without hits.
    #[serde(default)]
    query: Option<Value>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveHit>,
}

#[derive(Deserialize)]
struct BraveHit {
    title: Option<String>,
    url: Option<String>,
    description: Option<String>,
}

fn brave(answer: Value) -> Result<Vec<RawHit>, String> {
    let answer: BraveAnswer = serde_json::from_value(answer).map_err(shape_error)?;
    match answer.web {
        Some(web) => Ok(web
            .results
            .into_iter()
            .map(|h| (h.title, h.url, h.description.unwrap_or_default()))
            .collect()),
        None if answer.query.is_some() => Ok(Vec::new()),
        None => Err("the answer is JSON but holds neither `web.results` nor `query`".into()),
    }
}

#[derive(Deserialize)]
struct PlainAnswer {
    results: Vec<PlainHit>,
}

#[derive(Deserialize)]
struct PlainHit {
    title: Option<String>,
    url: Option<String>,
    content: Option<String>,
}

fn plain(answer: Value) -> Result<Vec<RawHit>, String> {
    let answer: PlainAnswer = serde_json::from_value(answer).map_err(shape_error)?;
    Ok(answer
        .results
        .into_iter()
        .map(|h| (h.title, h.url, h.content.unwrap_or_default()))
        .collect())
}

#[derive(Deserialize)]
struct ExaAnswer {
    results: Vec<ExaHit>,
}

#[derive(Deserialize)]
struct ExaHit {
    title: Option<String>,
    url: Option<String>,
    text: Option<String>,
    highlights: Option<Vec<String>>,
    summary: Option<String>,
}

fn exa(answer: Value) -> Result<Vec<RawHit>, String> {
    let answer: ExaAnswer = serde_json::from_value(answer).map_err(shape_error)?;
    Ok(answer
        .results
        .into_iter()
        .map(|h| {
            let highlights = h.highlights.unwrap_or_default().join(" … ");
            let text = [Some(highlights), h.text, h.summary]
                .into_iter()
                .flatten()
                .find(|t| !t.trim().is_empty())
                .unwrap_or_default();
            (h.title, h.url, text)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brave_without_web_results_is_an_empty_search_and_nonsense_is_an_error() {
        let empty = parse(Backend::Brave, json!({"query": {"original": "x"}})).unwrap();
        assert_eq!(empty, Vec::new());
        let err = parse(Backend::Brave, json!({"hello": 1})).unwrap_err();
        assert!(err.contains("neither `web.results` nor `query`"), "{err}");
        let err = parse(Backend::Tavily, json!({"hello": 1})).unwrap_err();
        assert!(err.contains("missing field `results`"), "{err}");
    }

    #[test]
    fn exa_prefers_highlights_then_text_and_hits_without_urls_or_repeated_go() {
        let hits = parse(
            Backend::Exa,
            json!({"results": [
                {"title": null, "url": "https://a.example/", "text": "page text",
                 "highlights": ["one", "two"]},
                {"title": "B", "url": "https://b.example/", "text": "only text"},
                {"title": "no url", "text": "x"},
                {"title": "script", "url": "javascript:alert(1)", "text": "x"},
                {"title": "again", "url": "https://a.example/", "text": "y"}
            ]}),
        )
        .unwrap();
        assert_eq!(
            hits,
            vec![
                Hit {
                    title: String::new(),
                    url: "https://a.example/".into(),
                    snippet: "one … two".into()
                },
                Hit {
                    title: "B".into(),
                    url: "https://b.example/".into(),
                    snippet: "only text".into()
                },
            ]
        );
    }
}
