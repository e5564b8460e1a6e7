//! The embedder of search by meaning, as `[memory] embedder` chooses: the bundled
//! all-MiniLM-L6-v2 run in-process (the default when it is installed), a model on an
//! OpenAI-compatible `/embeddings` endpoint (`"provider/model"`, e.g. an Ollama or
//! llama.cpp server), or none (`"none"`: keyword search only).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cairn_embed::candle::TokenCounter;
use cairn_llm::openai::OpenAiProvider;
use cairn_memory::chunk::Tokens;
use cairn_memory::index::Embedder;

use super::{Config, Warn};
use crate::settings::ProviderKind;

/// `[memory] embedder` for the bundled model.
pub const BUNDLED: &str = "local";
/// `[memory] embedder` for keyword search only.
pub const NONE: &str = "none";

/// The configured provider a remote embedder of the settings runs on, resolved the way the
/// embedder itself is made (`"provider/model"`, or a model on the default provider). `None`
/// for the bundled embedder, none, or a spec that names no configured provider.
pub fn embedder_provider(config: &Config) -> Option<String> {
    let spec = config.settings.memory.embedder.as_deref()?.trim();
    if matches!(spec, "" | NONE | BUNDLED) {
        return None;
    }
    config
        .settings
        .resolve_spec(spec, &config.overrides, &config.secrets)
        .ok()
        .map(|resolved| resolved.name)
}

/// The embedder the settings choose, or `None` (told to `warn` when one was asked for
/// and cannot be had).
pub fn embedder(config: &Config, warn: Warn<'_>) -> Option<Arc<dyn Embedder>> {
    chosen(config, warn, |model| model)
}

/// As [`embedder`], for a process that embeds a query or two and exits (`cairn search`):
/// the bundled model holds less memory for its queries and answers them a little later
/// (`cairn_embed::bundled::Bundled::for_few_queries`).
pub fn embedder_for_few_queries(config: &Config, warn: Warn<'_>) -> Option<Arc<dyn Embedder>> {
    chosen(config, warn, cairn_embed::bundled::Bundled::for_few_queries)
}

fn chosen(
    config: &Config,
    warn: Warn<'_>,
    tune: fn(cairn_embed::bundled::Bundled) -> cairn_embed::bundled::Bundled,
) -> Option<Arc<dyn Embedder>> {
    let spec = config.settings.memory.embedder.as_deref().map(str::trim);
    match spec {
        Some(NONE) | Some("") => None,
        None => Bundled::installed(tune).map(|b| Arc::new(b) as Arc<dyn Embedder>),
        Some(BUNDLED) => match Bundled::installed(tune) {
            Some(bundled) => Some(Arc::new(bundled)),
            None => {
                warn(
                    "search by meaning is off: the bundled embedding model is not installed \
                     (`cairn models --fetch` fetches it)"
                        .into(),
                );
                None
            }
        },
        Some(spec) => match remote(config, spec) {
            Ok(remote) => Some(Arc::new(remote)),
            Err(problem) => {
                warn(format!(
                    "search by meaning is off: `[memory] embedder = \"{spec}\"`: {problem}"
                ));
                None
            }
        },
    }
}

/// Waits (`timeout` at most) until no thread is inside the embedding engine, and lets none
/// in afterwards; says whether none is. A process calls it before it exits (as
/// `cairn_llm::local::settle` for the chat model): exiting while a graph loads or runs
/// would crash the process under it.
pub fn settle_embedder(timeout: std::time::Duration) -> bool {
    cairn_embed::settle(timeout)
}

/// The bundled model (run as `cairn_embed::bundled` chooses), with its tokenizer.
struct Bundled {
    model: cairn_embed::bundled::Bundled,
    tokens: OnceLock<Option<Arc<dyn Tokens>>>,
}

/// The bundled model's tokenizer, as the index's chunking counts with it. It is read at the
/// first text to count, not when the index only asks how chunks are cut, as it does at
/// every start: a start with nothing new to index does not hold its vocabulary (a few MB).
struct Counted {
    dir: PathBuf,
    counter: OnceLock<Option<TokenCounter>>,
    name: String,
}

impl Counted {
    fn counter(&self) -> Option<&TokenCounter> {
        self.counter
            .get_or_init(|| match TokenCounter::load(&self.dir) {
                Ok(counter) => Some(counter),
                Err(error) => {
                    tracing::warn!(%error, "chunks are sized by their characters");
                    None
                }
            })
            .as_ref()
    }
}

impl Tokens for Counted {
    /// Without a tokenizer that reads, a text's characters: never fewer than its tokens, so
    /// a chunk still fits the window.
    fn count(&self, text: &str) -> usize {
        self.counter()
            .map_or_else(|| text.chars().count(), |counter| counter.count(text))
    }

    fn window(&self) -> usize {
        cairn_embed::MAX_TOKENS
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// How long the bundled model stays loaded with nothing to embed: a search by meaning
/// or a changed note loads it again in about a second.
pub const EMBEDDER_IDLE: std::time::Duration = std::time::Duration::from_secs(5 * 60);

impl Bundled {
    fn installed(
        tune: fn(cairn_embed::bundled::Bundled) -> cairn_embed::bundled::Bundled,
    ) -> Option<Self> {
        cairn_embed::bundled::Bundled::installed().map(|model| Self {
            model: tune(model.with_idle(EMBEDDER_IDLE)),
            tokens: OnceLock::new(),
        })
    }
}

impl Embedder for Bundled {
    fn model(&self) -> String {
        self.model.name()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.model.embed(texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        self.model.embed_query(text)
    }

    fn engine(&self) -> Option<String> {
        Some(self.model.engine())
    }

    fn dimensions(&self) -> Option<usize> {
        self.model.dimensions()
    }

    fn tokens(&self) -> Option<Arc<dyn Tokens>> {
        self.tokens
            .get_or_init(|| {
                let dir = self.model.dir().to_path_buf();
                if !dir.join("tokenizer.json").is_file() {
                    tracing::warn!(dir = %dir.display(), "no tokenizer.json: chunks are sized by an estimate");
                    return None;
                }
                Some(Arc::new(Counted {
                    // The tokenizer is the model's whatever engine runs it.
                    name: dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    dir,
                    counter: OnceLock::new(),
                }) as Arc<dyn Tokens>)
            })
            .clone()
    }
}

/// A model on an OpenAI-compatible server.
struct Remote {
    provider: OpenAiProvider,
    name: String,
    model: String,
}

fn remote(config: &Config, spec: &str) -> Result<Remote, String> {
    let resolved = config
        .settings
        .resolve_spec(spec, &config.overrides, &config.secrets)
        .map_err(|e| e.to_string())?;
    if resolved.kind() != ProviderKind::Openai {
        return Err(format!(
            "`{}` is not an OpenAI-compatible provider; embeddings come from the bundled \
             model (\"{BUNDLED}\") or an OpenAI-compatible server",
            resolved.name
        ));
    }
    let provider = crate::settings::openai_provider(&resolved).map_err(|e| e.to_string())?;
    Ok(Remote {
        provider,
        name: format!("{}/{}", resolved.name, resolved.model),
        model: resolved.model,
    })
}

impl Embedder for Remote {
    fn model(&self) -> String {
        self.name.clone()
    }

    /// Called from the index's threads, never from inside the async runtime's: the call
    /// gets a small runtime of its own on a thread of its own.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| e.to_string())?;
                    runtime
                        .block_on(self.provider.embed(&self.model, &texts))
                        .map_err(|e| e.to_string())
                })
                .join()
                .unwrap_or_else(|_| Err("the embedding call panicked".into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use cairn_memory::index::SearchMode;
    use cairn_memory::{IndexOptions, MemoryIndex, SearchQuery, Workspace};
    use cairn_testkit::{MockResponse, MockServer};
    use serde_json::json;

    use super::*;

    fn config(dir: &std::path::Path, toml: &str) -> Config {
        std::fs::write(dir.join("config.toml"), toml).unwrap();
        Config::load(Some(dir)).unwrap()
    }

    /// The bundled model through the index: a question finds the note that answers it
    /// in other words, first.
    #[test]
    fn the_bundled_model_finds_a_note_by_its_meaning() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), "[memory]\nembedder = \"local\"\n");
        let mut warnings = Vec::new();
        let embedder = embedder(&config, &mut |w| warnings.push(w));
        let embedder = embedder.unwrap_or_else(|| panic!("no embedder: {warnings:?}"));
        assert_eq!(embedder.model(), "all-MiniLM-L6-v2 (int8, cairn-onnx-4)");
        let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
        let notes = [
            ("car.md", "# Transport\n\nWe agreed to sell the old vehicle before winter and cycle instead.\n"),
            ("garden.md", "# Garden\n\nTomatoes want full sun; water them every morning in July.\n"),
            ("teeth.md", "# Health\n\nThe dentist said to floss daily; next check-up in March.\n"),
        ];
        for (name, text) in notes {
            std::fs::write(ws.root().join("knowledge").join(name), text).unwrap();
        }
        let options = IndexOptions {
            embedder: Some(embedder),
            ..IndexOptions::default()
        };
        let index = MemoryIndex::open(&ws, options).unwrap();
        index.sync().unwrap();
        let status = index.wait_embedded(|_, _| {});
        assert!(
            status.embedding_current() && status.to_embed > 3,
            "{status:?}"
        );
        let ask = |text: &str, mode| {
            let query = SearchQuery {
                mode,
                limit: 3,
                ..SearchQuery::new(text)
            };
            let results = index.search(&query).unwrap();
            results
                .results
                .into_iter()
                .map(|h| h.path)
                .collect::<Vec<_>>()
        };
        let question = "what did I decide about the car";
        assert_eq!(
            ask(question, Some(SearchMode::Semantic))[0],
            "knowledge/car.md"
        );
        assert_eq!(ask(question, None)[0], "knowledge/car.md");
        assert_eq!(
            ask("when do I see the dentist", None)[0],
            "knowledge/teeth.md"
        );
        assert!(!ask(question, Some(SearchMode::Keyword)).contains(&"knowledge/car.md".into()));
    }

    /// The index asks how chunks are cut at every start; the tokenizer is read only when a
    /// text is counted, and a tokenizer that does not read counts characters, never fewer
    /// than the tokens.
    #[test]
    fn the_tokenizer_is_read_at_the_first_text_to_count() {
        let Some(model) = cairn_embed::bundled::Bundled::installed() else {
            panic!("the bundled model is not installed");
        };
        let counted = Counted {
            dir: model.dir().to_path_buf(),
            counter: OnceLock::new(),
            name: "all-MiniLM-L6-v2".into(),
        };
        assert_eq!(counted.window(), 256);
        assert_eq!(counted.name(), "all-MiniLM-L6-v2");
        assert!(counted.counter.get().is_none(), "read before any text");
        assert_eq!(counted.count("the tomatoes want full sun"), 5);
        assert!(counted.counter.get().is_some_and(Option::is_some));

        let broken = tempfile::tempdir().unwrap();
        std::fs::write(broken.path().join("tokenizer.json"), "{ not json").unwrap();
        let counted = Counted {
            dir: broken.path().to_path_buf(),
            counter: OnceLock::new(),
            name: "broken".into(),
        };
        assert_eq!(counted.count("the tomatoes want full sun"), 26);
    }

    #[test]
    fn none_turns_search_by_meaning_off_and_a_chat_only_provider_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut warnings = Vec::new();
        let off = config(dir.path(), "[memory]\nembedder = \"none\"\n");
        assert!(embedder(&off, &mut |w| warnings.push(w)).is_none());
        assert!(warnings.is_empty(), "{warnings:?}");
        let anthropic = config(dir.path(), "[memory]\nembedder = \"anthropic/claude\"\n");
        assert!(embedder(&anthropic, &mut |w| warnings.push(w)).is_none());
        assert!(
            warnings[0].contains("not an OpenAI-compatible provider"),
            "{warnings:?}"
        );
    }

    /// An OpenAI-compatible server's embeddings, called from the index's own threads.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_server_model_embeds_through_the_index() {
        let vector = |x: f32| json!({"object": "embedding", "index": 0, "embedding": [x, 1.0 - x]});
        let answer = |xs: &[f32]| {
            let data: Vec<_> = xs
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let mut v = vector(*x);
                    v["index"] = json!(i);
                    v
                })
                .collect();
            MockResponse::json(200, json!({"object": "list", "data": data}))
        };
        let server = MockServer::start(vec![answer(&[0.5])]).await;
        let dir = tempfile::tempdir().unwrap();
        let toml = format!(
            "[providers.lan]\nkind = \"openai\"\nbase_url = \"{}/v1\"\n\n[memory]\nembedder = \"lan/nomic-embed-text\"\n",
            server.url()
        );
        let config = config(dir.path(), &toml);
        let mut warnings = Vec::new();
        let embedder = embedder(&config, &mut |w| warnings.push(w)).unwrap();
        assert_eq!(embedder.model(), "lan/nomic-embed-text");
        let got = tokio::task::spawn_blocking(move || embedder.embed(&["the car"]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, vec![vec![0.5, 0.5]]);
        let request = &server.requests()[0];
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(
            request.body_json().unwrap(),
            json!({"model": "nomic-embed-text", "input": ["the car"]})
        );
    }
}
