//! Which provider and model serve a purpose: flags and environment first, then the
//! settings file, then what the environment implies, and finally the bundled local model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_llm::{LlmError, Provider};

use super::error::SettingsError;
use super::file::{ProviderKind, ProviderSettings, Settings};
use super::secrets::{Secret, SecretStore};
use super::web::SearchBackend;

/// What a model is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Chat,
    MemoryFlush,
    Consolidation,
    Compaction,
    Intent,
}

/// Values from flags and environment variables; they beat the settings file for chat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvOverrides {
    /// `--provider` / `CAIRN_PROVIDER`: a provider name from the settings or a kind.
    pub provider: Option<String>,
    /// `--model` / `CAIRN_MODEL`.
    pub model: Option<String>,
    /// `--base-url` / `CAIRN_BASE_URL`.
    pub base_url: Option<String>,
    /// `CAIRN_MODEL_PATH`: the GGUF file for the local provider.
    pub model_path: Option<PathBuf>,
    /// `CAIRN_SCRIPT`: the answers of the scripted provider.
    pub script: Option<PathBuf>,
    /// `OPENAI_API_KEY`.
    pub openai_key: Option<String>,
    /// `ANTHROPIC_API_KEY`.
    pub anthropic_key: Option<String>,
    /// The search services' keys by service name (`brave` from `BRAVE_API_KEY` ...).
    pub search_keys: BTreeMap<String, Secret>,
}

impl EnvOverrides {
    /// Reads the `CAIRN_*` variables and the API keys (empty values count as unset).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            provider: var("CAIRN_PROVIDER"),
            model: var("CAIRN_MODEL"),
            base_url: var("CAIRN_BASE_URL"),
            model_path: var("CAIRN_MODEL_PATH").map(PathBuf::from),
            script: var("CAIRN_SCRIPT").map(PathBuf::from),
            openai_key: var("OPENAI_API_KEY"),
            anthropic_key: var("ANTHROPIC_API_KEY"),
            search_keys: SearchBackend::KEYED
                .into_iter()
                .filter_map(|b| Some((b.name().to_string(), Secret::new(var(b.key_env()?)?))))
                .collect(),
        }
    }

    fn key_for(&self, kind: ProviderKind, env_name: Option<&str>) -> Option<String> {
        if let Some(name) = env_name {
            return std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        }
        match kind {
            ProviderKind::Openai => self.openai_key.clone(),
            ProviderKind::Anthropic => self.anthropic_key.clone(),
            ProviderKind::Local | ProviderKind::Scripted => None,
        }
    }
}

/// A provider ready to build: its settings with every override applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedProvider {
    /// The provider's name (a key of `[providers]` or a kind name).
    pub name: String,
    pub model: String,
    pub settings: ProviderSettings,
    pub api_key: Option<Secret>,
    /// Where the key came from: `env`, `keyring`, `file`, or `None`.
    pub key_source: Option<&'static str>,
    /// The script file (scripted provider).
    pub script: Option<PathBuf>,
    /// `[web] search = "provider"`: the provider offers its own web search (Anthropic's;
    /// the other providers have none).
    pub provider_search: bool,
}

impl Settings {
    /// The provider named `name` as it would be used (overrides for chat do not apply,
    /// except keys, base URL and model path from the environment).
    pub fn resolve_named(
        &self,
        name: &str,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<ResolvedProvider, SettingsError> {
        self.build_choice(name, None, env, secrets)
    }

    /// The provider and model `spec` names: `provider/model`, `provider`, or `model` (on
    /// the chat provider).
    pub fn resolve_spec(
        &self,
        spec: &str,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<ResolvedProvider, SettingsError> {
        let (name, model) = self.split_spec(spec, env)?;
        self.build_choice(&name, model, env, secrets)
    }

    /// The provider and model for `purpose`.
    pub fn resolve(
        &self,
        purpose: Purpose,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<ResolvedProvider, SettingsError> {
        let purpose_spec = match purpose {
            Purpose::Chat => None,
            Purpose::MemoryFlush => self.models.memory_flush.as_deref(),
            Purpose::Consolidation => self.models.consolidation.as_deref(),
            Purpose::Compaction => self.models.compaction.as_deref(),
            Purpose::Intent => self.models.intent.as_deref(),
        };
        let (name, model) = match purpose_spec {
            Some(spec) => self.split_spec(spec, env)?,
            None => self.chat_choice(env)?,
        };
        self.build_choice(&name, model, env, secrets)
    }

    /// Every provider the user can pick: the configured ones, then the kinds not shadowed.
    pub fn provider_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.providers.keys().cloned().collect();
        for kind in ProviderKind::ALL {
            if kind != ProviderKind::Scripted && !names.iter().any(|n| n == kind.name()) {
                names.push(kind.name().to_string());
            }
        }
        names
    }

    /// The key of the `[web] search` service: its environment variable, else the key
    /// store; `None` when the service takes no key or none is found.
    pub fn search_key(
        &self,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<Option<Secret>, SettingsError> {
        let Some(name) = self.web.search_backend().and_then(SearchBackend::key_name) else {
            return Ok(None);
        };
        match env.search_keys.get(name) {
            Some(key) => Ok(Some(key.clone())),
            None => secrets.get(name),
        }
    }

    /// Whether a key may be stored under `name`: a provider (configured or a kind) or a
    /// search service that takes a key. The error lists both.
    pub fn check_key_name(
        &self,
        name: &str,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<(), SettingsError> {
        if SearchBackend::keyed(name).is_some() {
            return Ok(());
        }
        match self.resolve_named(name, env, secrets) {
            Ok(_) => Ok(()),
            Err(SettingsError::UnknownProvider { name, known }) => {
                let services: Vec<&str> = SearchBackend::KEYED.iter().map(|b| b.name()).collect();
                Err(SettingsError::UnknownProvider {
                    name,
                    known: format!("{known}; search services: {}", services.join(", ")),
                })
            }
            Err(other) => Err(other),
        }
    }

    fn chat_choice(&self, env: &EnvOverrides) -> Result<(String, Option<String>), SettingsError> {
        let (mut name, mut model) = match &self.models.chat {
            Some(spec) => {
                let (name, model) = self.split_spec(spec, &EnvOverrides::default())?;
                (Some(name), model)
            }
            None => (None, None),
        };
        if let Some(provider) = &env.provider {
            if name.as_deref() != Some(provider.as_str()) {
                model = None;
            }
            name = Some(provider.clone());
        }
        let name = name
            .or_else(|| self.default_provider.clone())
            .unwrap_or_else(|| implied_provider(env).to_string());
        Ok((name, env.model.clone().or(model)))
    }

    /// `provider/model`, `provider`, or `model` (on the chat provider).
    fn split_spec(
        &self,
        spec: &str,
        env: &EnvOverrides,
    ) -> Result<(String, Option<String>), SettingsError> {
        if let Some((name, model)) = spec.split_once('/') {
            if self.is_provider(name) {
                return Ok((name.to_string(), Some(model.to_string())));
            }
        }
        if self.is_provider(spec) {
            return Ok((spec.to_string(), None));
        }
        let (name, _) = self.chat_choice(env)?;
        Ok((name, Some(spec.to_string())))
    }

    fn is_provider(&self, name: &str) -> bool {
        self.providers.contains_key(name) || ProviderKind::from_name(name).is_some()
    }

    fn build_choice(
        &self,
        name: &str,
        model: Option<String>,
        env: &EnvOverrides,
        secrets: &SecretStore,
    ) -> Result<ResolvedProvider, SettingsError> {
        let mut settings = match self.providers.get(name) {
            Some(settings) => settings.clone(),
            None => match ProviderKind::from_name(name) {
                Some(kind) => ProviderSettings::of_kind(kind),
                None => {
                    return Err(SettingsError::UnknownProvider {
                        name: name.to_string(),
                        known: self.provider_names().join(", "),
                    })
                }
            },
        };
        let kind = settings.kind;
        if matches!(kind, ProviderKind::Openai | ProviderKind::Anthropic) && env.base_url.is_some()
        {
            settings.base_url = env.base_url.clone();
        }
        if kind == ProviderKind::Local && env.model_path.is_some() {
            settings.model_path = env.model_path.clone();
        }
        if settings.context_window.is_none() {
            settings.context_window = self.context_window;
        }
        let model = model
            .or_else(|| settings.model.clone())
            .unwrap_or_else(|| default_model(&settings));
        let (api_key, key_source) = match env.key_for(kind, settings.api_key_env.as_deref()) {
            Some(key) => (Some(Secret::new(key)), Some("env")),
            None if kind.key_env().is_some() => {
                let source = match secrets.backend() {
                    super::SecretBackend::Keyring => "keyring",
                    super::SecretBackend::File(_) => "file",
                };
                let key = secrets.get(name)?;
                let source = key.as_ref().map(|_| source);
                (key, source)
            }
            None => (None, None),
        };
        let script = (kind == ProviderKind::Scripted)
            .then(|| env.script.clone())
            .flatten();
        Ok(ResolvedProvider {
            name: name.to_string(),
            model,
            settings,
            api_key,
            key_source,
            script,
            provider_search: self.web.search_backend() == Some(SearchBackend::Provider),
        })
    }
}

/// With nothing configured: a server or key in the environment, else the local model.
fn implied_provider(env: &EnvOverrides) -> &'static str {
    if env.base_url.is_some() || env.openai_key.is_some() {
        "openai"
    } else if env.anthropic_key.is_some() {
        "anthropic"
    } else {
        "local"
    }
}

fn default_model(settings: &ProviderSettings) -> String {
    match settings.kind {
        ProviderKind::Openai => "gpt-4o-mini".into(),
        ProviderKind::Anthropic => "claude-sonnet-4-5".into(),
        ProviderKind::Local => local_model_path(settings)
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "local".into()),
        ProviderKind::Scripted => "scripted".into(),
    }
}

/// The GGUF file of a local provider: its setting, else the bundled model's place.
pub(super) fn local_model_path(settings: &ProviderSettings) -> Option<PathBuf> {
    settings
        .model_path
        .clone()
        .or_else(cairn_models::default_model_path)
}

impl ResolvedProvider {
    pub fn kind(&self) -> ProviderKind {
        self.settings.kind
    }

    /// The model file (local provider).
    pub fn model_path(&self) -> Option<PathBuf> {
        local_model_path(&self.settings)
    }

    /// Builds the provider. Loading a local model reads the file on a blocking thread.
    pub async fn build(&self) -> Result<Arc<dyn Provider>, LlmError> {
        super::build::build(self).await
    }

    /// The models this provider offers (asks the server for remote providers).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        super::build::list_models(self).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::Path;

    fn settings(text: &str) -> Settings {
        Settings::parse(text, Path::new("config.toml")).unwrap()
    }

    fn store() -> (tempfile::TempDir, SecretStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::file(dir.path().join("secrets.toml"));
        (dir, store)
    }

    fn pick(
        s: &Settings,
        purpose: Purpose,
        env: &EnvOverrides,
        store: &SecretStore,
    ) -> (String, String) {
        let r = s.resolve(purpose, env, store).unwrap();
        (r.name, r.model)
    }

    #[test]
    fn nothing_configured_means_the_local_model() {
        let (_d, store) = store();
        let r = Settings::default()
            .resolve(Purpose::Chat, &EnvOverrides::default(), &store)
            .unwrap();
        assert_eq!(r.kind(), ProviderKind::Local);
        assert_eq!(r.model, "SmolLM2-135M-Instruct.Q4_1");
        assert_eq!(r.api_key, None);
    }

    #[test]
    fn a_key_or_server_in_the_environment_implies_a_remote_provider() {
        let (_d, store) = store();
        let env = EnvOverrides {
            openai_key: Some("sk".into()),
            ..Default::default()
        };
        let r = Settings::default()
            .resolve(Purpose::Chat, &env, &store)
            .unwrap();
        assert_eq!(
            (r.name.as_str(), r.model.as_str(), r.key_source),
            ("openai", "gpt-4o-mini", Some("env"))
        );
        let env = EnvOverrides {
            anthropic_key: Some("sk".into()),
            ..Default::default()
        };
        assert_eq!(
            pick(&Settings::default(), Purpose::Chat, &env, &store).0,
            "anthropic"
        );
    }

    #[test]
    fn flags_beat_the_file_and_purposes_fall_back_to_chat() {
        let (_d, store) = store();
        let s = settings(
            r#"
            default_provider = "ollama"
            [providers.ollama]
            kind = "openai"
            base_url = "http://localhost:11434/v1"
            model = "llama3.2"
            [models]
            memory_flush = "local"
            consolidation = "ollama/qwen3"
            compaction = "tiny-model"
            "#,
        );
        let none = EnvOverrides::default();
        assert_eq!(
            pick(&s, Purpose::Chat, &none, &store),
            ("ollama".into(), "llama3.2".into())
        );
        assert_eq!(pick(&s, Purpose::MemoryFlush, &none, &store).0, "local");
        assert_eq!(
            pick(&s, Purpose::Consolidation, &none, &store),
            ("ollama".into(), "qwen3".into())
        );
        assert_eq!(
            pick(&s, Purpose::Compaction, &none, &store),
            ("ollama".into(), "tiny-model".into())
        );
        let env = EnvOverrides {
            model: Some("mistral".into()),
            ..Default::default()
        };
        assert_eq!(
            pick(&s, Purpose::Chat, &env, &store),
            ("ollama".into(), "mistral".into())
        );
        let env = EnvOverrides {
            provider: Some("openai".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        };
        let r = s.resolve(Purpose::Chat, &env, &store).unwrap();
        assert_eq!(
            (r.name.as_str(), r.model.as_str()),
            ("openai", "gpt-4o-mini")
        );
        assert_eq!(
            r.settings.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
    }

    #[test]
    fn keys_come_from_the_environment_before_the_store() {
        let (_d, store) = store();
        store.set("claude", &Secret::new("sk-stored")).unwrap();
        let s =
            settings("default_provider = \"claude\"\n[providers.claude]\nkind = \"anthropic\"\n");
        let r = s
            .resolve(Purpose::Chat, &EnvOverrides::default(), &store)
            .unwrap();
        assert_eq!(
            (r.api_key.unwrap().expose(), r.key_source),
            ("sk-stored", Some("file"))
        );
        let env = EnvOverrides {
            anthropic_key: Some("sk-env".into()),
            ..Default::default()
        };
        let r = s.resolve(Purpose::Chat, &env, &store).unwrap();
        assert_eq!(
            (r.api_key.unwrap().expose(), r.key_source),
            ("sk-env", Some("env"))
        );
    }

    #[test]
    fn a_search_key_comes_from_its_variable_before_the_store() {
        let (_d, store) = store();
        let brave = settings("[web]\nsearch = \"brave\"\n");
        let none = EnvOverrides::default();
        assert_eq!(brave.search_key(&none, &store).unwrap(), None);
        store.set("brave", &Secret::new("bsk-stored")).unwrap();
        assert_eq!(
            brave.search_key(&none, &store).unwrap(),
            Some(Secret::new("bsk-stored"))
        );
        let env = EnvOverrides {
            search_keys: BTreeMap::from([("brave".to_string(), Secret::new("bsk-env"))]),
            ..Default::default()
        };
        assert_eq!(
            brave.search_key(&env, &store).unwrap(),
            Some(Secret::new("bsk-env"))
        );
        let searxng = settings("[web]\nsearch = \"searxng\"\n");
        assert_eq!(searxng.search_key(&env, &store).unwrap(), None);
    }

    #[test]
    fn keys_are_taken_for_providers_and_search_services_only() {
        let (_d, store) = store();
        let none = EnvOverrides::default();
        let s = Settings::default();
        for name in ["brave", "tavily", "exa", "openai", "anthropic"] {
            s.check_key_name(name, &none, &store).unwrap();
        }
        let err = s
            .check_key_name("bing", &none, &store)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "unknown provider `bing`; known: openai, anthropic, local; search services: brave, \
             tavily, exa"
        );
    }

    #[test]
    fn an_unknown_provider_lists_the_known_ones() {
        let (_d, store) = store();
        let env = EnvOverrides {
            provider: Some("gemini".into()),
            ..Default::default()
        };
        let err = Settings::default()
            .resolve(Purpose::Chat, &env, &store)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "unknown provider `gemini`; known: openai, anthropic, local"
        );
    }
}
