//! The settings as the settings dialog edits them. Keys never reach the page: it only
//! learns whether one is stored, and where keys are kept.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cairn_app::cairn_core::{ApprovalPolicy, Policy};
use cairn_app::launch::Config;
use cairn_app::settings::{
    CompletionMode, ProviderKind, ProviderSettings, SecretBackend, Settings,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::error::{AppError, AppResult};

#[path = "settings_web.rs"]
mod web;
pub use web::WebSearchView;

/// The settings as the page edits them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    pub default_provider: Option<String>,
    pub providers: Vec<ProviderView>,
    pub models: PurposeModelsView,
    /// Where the bundled model is looked for (read-only in the page).
    #[serde(default)]
    pub bundled_model_path: String,
    pub consolidation_interval_hours: Option<f64>,
    /// `[memory] flush`: the flush after runs and consolidation write memory (`None`: yes,
    /// unless the only model is a local one).
    #[serde(default)]
    pub memory_flush: Option<bool>,
    /// `[memory] embedder`: `"local"`, `"none"`, `"provider/model"`, or unset (the bundled
    /// model when it is installed).
    #[serde(default)]
    pub embedder: Option<String>,
    /// Whether the bundled embedding model is installed (read-only in the page).
    #[serde(default)]
    pub bundled_embedder_installed: bool,
    pub approval: ApprovalView,
    pub workspace: Option<String>,
    /// `[memory] folders`: folders searched in place, as written (`~/Notes`). Read at
    /// start: a change applies when the app starts again.
    #[serde(default)]
    pub folders: Vec<String>,
    #[serde(default)]
    pub path: String,
    /// Where API keys are kept (read-only in the page).
    #[serde(default)]
    pub key_store: KeyStoreView,
    /// Limits of a run: `[run]`, `[timeouts]`, `[subagents]`.
    #[serde(default)]
    pub limits: LimitsView,
    /// `[web] allow_private`: web_fetch may reach loopback and private addresses.
    #[serde(default)]
    pub web_allow_private: bool,
    /// `[web] search` and `searxng_url`.
    #[serde(default)]
    pub web_search: WebSearchView,
    /// The user's hook commands (`[hooks]`), shown read-only: they are edited in
    /// config.toml.
    #[serde(default)]
    pub hooks: Vec<HookView>,
}

/// When a hook runs (its table in config.toml: `[[hooks.pre_tool]]` ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    PreTool,
    PostTool,
    UserPrompt,
    Stop,
    SessionStart,
}

/// One hook command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HookView {
    pub event: HookEvent,
    pub matcher: Option<String>,
    pub command: String,
    pub timeout_s: Option<u64>,
}

impl HookView {
    fn all(settings: &Settings) -> Vec<Self> {
        let hooks = &settings.hooks;
        [
            (HookEvent::PreTool, &hooks.pre_tool),
            (HookEvent::PostTool, &hooks.post_tool),
            (HookEvent::UserPrompt, &hooks.user_prompt),
            (HookEvent::Stop, &hooks.stop),
            (HookEvent::SessionStart, &hooks.session_start),
        ]
        .into_iter()
        .flat_map(|(event, list)| {
            list.iter().map(move |h| HookView {
                event,
                matcher: h.matcher.clone(),
                command: h.command.clone(),
                timeout_s: h.timeout_s,
            })
        })
        .collect()
    }
}

/// The limits the dialog edits; `None`: the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "Limits")]
pub struct LimitsView {
    pub max_steps: Option<u32>,
    pub deadline_s: Option<u64>,
    /// Open work items never let a run complete.
    #[serde(default)]
    pub strict: bool,
    pub chat_timeout_s: Option<u64>,
    pub memory_flush_timeout_s: Option<u64>,
    pub compaction_timeout_s: Option<u64>,
    pub consolidation_timeout_s: Option<u64>,
    pub subagents_timeout_s: Option<u64>,
    pub subagent_max_depth: Option<u32>,
}

impl LimitsView {
    fn of(settings: &Settings) -> Self {
        let (run, timeouts) = (&settings.run, &settings.timeouts);
        Self {
            max_steps: run.max_steps,
            deadline_s: run.deadline_s,
            strict: run.completion == Some(CompletionMode::Strict),
            chat_timeout_s: timeouts.chat,
            memory_flush_timeout_s: timeouts.memory_flush,
            compaction_timeout_s: timeouts.compaction,
            consolidation_timeout_s: timeouts.consolidation,
            subagents_timeout_s: timeouts.subagents,
            subagent_max_depth: settings.subagents.max_depth,
        }
    }

    /// Writes the limits into `next`, keeping what the dialog does not show.
    fn apply(&self, next: &mut Settings) -> AppResult<()> {
        if self.max_steps == Some(0) {
            return Err(AppError::invalid("a run needs at least 1 step"));
        }
        next.run.max_steps = self.max_steps;
        next.run.deadline_s = self.deadline_s.filter(|s| *s > 0);
        next.run.completion = match (self.strict, next.run.completion) {
            (true, _) => Some(CompletionMode::Strict),
            (false, Some(CompletionMode::Strict)) => None,
            (false, kept) => kept,
        };
        let t = &mut next.timeouts;
        t.chat = self.chat_timeout_s.filter(|s| *s > 0);
        t.memory_flush = self.memory_flush_timeout_s.filter(|s| *s > 0);
        t.compaction = self.compaction_timeout_s.filter(|s| *s > 0);
        t.consolidation = self.consolidation_timeout_s.filter(|s| *s > 0);
        t.subagents = self.subagents_timeout_s.filter(|s| *s > 0);
        next.subagents.max_depth = self.subagent_max_depth;
        Ok(())
    }
}

/// Where API keys are kept: the system keyring, or the key file where there is none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "KeyStore")]
pub struct KeyStoreView {
    pub kind: KeyStoreKind,
    /// The key file, when keys are kept in one.
    pub path: Option<String>,
    /// One sentence saying where keys are kept and how they are protected.
    pub description: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeyStoreKind {
    #[default]
    Keyring,
    File,
}

impl KeyStoreView {
    pub fn of(backend: &SecretBackend) -> Self {
        let (kind, path) = match backend {
            SecretBackend::Keyring => (KeyStoreKind::Keyring, None),
            SecretBackend::File(path) => (KeyStoreKind::File, Some(path.display().to_string())),
        };
        Self {
            kind,
            path,
            description: backend.describe(),
        }
    }
}

/// A configured provider as the settings show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "ProviderSettings")]
pub struct ProviderView {
    pub name: String,
    /// A [`ProviderKind`]'s name (checked when saved).
    #[ts(as = "ProviderKind")]
    pub kind: String,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The GGUF file (local provider).
    pub model_path: Option<String>,
    pub context_window: Option<u64>,
    /// Whether the model is sent pictures: `None` as the provider says, else yes or no.
    #[serde(default)]
    pub vision: Option<bool>,
    /// The longest side of a picture sent to it, in pixels; `None`: the default (1,568).
    #[serde(default)]
    pub image_max_side: Option<u32>,
    #[serde(default)]
    /// Whether a key is stored for it (the key itself never reaches the page).
    pub has_key: bool,
}

/// The sizes `image_max_side` may take.
const PICTURE_SIDES: std::ops::RangeInclusive<u32> = 64..=8_192;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct PurposeModelsView {
    pub memory_flush: Option<String>,
    pub consolidation: Option<String>,
    pub compaction: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ApprovalView {
    pub default: Policy,
    #[serde(default)]
    pub tools: BTreeMap<String, Policy>,
}

impl SettingsView {
    pub fn of(config: &Config) -> Self {
        let settings = &config.settings;
        let approval = settings.approval.clone().unwrap_or_default();
        Self {
            default_provider: settings.default_provider.clone(),
            providers: settings
                .providers
                .iter()
                .map(|(name, p)| ProviderView::of(config, name, p))
                .collect(),
            models: PurposeModelsView {
                memory_flush: settings.models.memory_flush.clone(),
                consolidation: settings.models.consolidation.clone(),
                compaction: settings.models.compaction.clone(),
            },
            bundled_model_path: cairn_app::cairn_models::default_model_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            consolidation_interval_hours: settings.memory.consolidation_interval_hours,
            memory_flush: settings.memory.flush,
            embedder: settings.memory.embedder.clone(),
            bundled_embedder_installed: cairn_app::cairn_embed::candle::default_embedder_dir()
                .is_some_and(|d| d.join("model.safetensors").is_file()),
            approval: ApprovalView {
                default: approval.default,
                tools: approval.tools,
            },
            workspace: settings.workspace.as_ref().map(|p| p.display().to_string()),
            folders: settings.memory.folders.clone().unwrap_or_default(),
            path: config.settings_path.display().to_string(),
            key_store: KeyStoreView::of(config.secrets.backend()),
            limits: LimitsView::of(settings),
            web_allow_private: settings.web.allow_private == Some(true),
            web_search: WebSearchView::of(config),
            hooks: HookView::all(settings),
        }
    }

    /// `settings` with this view's changes; what the view does not show (headers, chat
    /// templates, `[context]`, other `[memory]` fields) is kept.
    pub fn apply(&self, settings: &Settings) -> AppResult<Settings> {
        let mut next = settings.clone();
        let mut providers = BTreeMap::new();
        for view in &self.providers {
            let name = view.name.trim();
            if name.is_empty() || name.contains('/') {
                return Err(AppError::invalid(format!(
                    "`{name}` cannot name a provider (empty, or has a /)"
                )));
            }
            if providers.contains_key(name) {
                return Err(AppError::invalid(format!(
                    "two providers are named `{name}`"
                )));
            }
            let old = settings.providers.get(name);
            providers.insert(name.to_string(), view.apply(old)?);
        }
        next.providers = providers;
        next.default_provider = non_empty(&self.default_provider);
        next.models.memory_flush = non_empty(&self.models.memory_flush);
        next.models.consolidation = non_empty(&self.models.consolidation);
        next.models.compaction = non_empty(&self.models.compaction);
        if let Some(hours) = self.consolidation_interval_hours {
            if !hours.is_finite() || hours < 0.0 {
                return Err(AppError::invalid(
                    "the consolidation interval is a number of hours, 0 or more",
                ));
            }
        }
        next.memory.consolidation_interval_hours = self.consolidation_interval_hours;
        next.memory.flush = self.memory_flush;
        next.memory.embedder = self.checked_embedder(&next.providers)?;
        next.approval = Some(ApprovalPolicy {
            default: self.approval.default,
            tools: self.approval.tools.clone(),
            mcp: Default::default(),
        });
        next.workspace = non_empty(&self.workspace).map(PathBuf::from);
        next.memory.folders = self.checked_folders()?;
        next.web.allow_private = self.web_allow_private.then_some(true);
        self.web_search.apply(&mut next.web)?;
        self.limits.apply(&mut next)?;
        Ok(next)
    }
}

impl SettingsView {
    /// The folders, trimmed, without repeats; each an absolute path or under `~`.
    fn checked_folders(&self) -> AppResult<Option<Vec<String>>> {
        let mut folders: Vec<String> = Vec::new();
        for given in &self.folders {
            let folder = given.trim();
            if folder.is_empty() {
                continue;
            }
            if !(folder.starts_with('/') || folder == "~" || folder.starts_with("~/")) {
                return Err(AppError::invalid(format!(
                    "`{folder}` is not a full path: a folder searched in place starts with / \
                     or ~/"
                )));
            }
            if !folders.iter().any(|f| f == folder) {
                folders.push(folder.to_string());
            }
        }
        Ok((!folders.is_empty()).then_some(folders))
    }

    /// The embedder asked for, if it can be had: a provider named must be one of
    /// `providers` and speak the OpenAI wire format.
    fn checked_embedder(
        &self,
        providers: &BTreeMap<String, ProviderSettings>,
    ) -> AppResult<Option<String>> {
        let Some(spec) = non_empty(&self.embedder) else {
            return Ok(None);
        };
        if spec == "local" || spec == "none" {
            return Ok(Some(spec));
        }
        let Some((provider, model)) = spec.split_once('/') else {
            return Err(AppError::invalid(format!(
                "`{spec}` is not an embedder: \"local\", \"none\" or \"provider/model\""
            )));
        };
        match providers.get(provider.trim()) {
            None => Err(AppError::invalid(format!(
                "search by meaning names the provider `{provider}`, which is not set up"
            ))),
            Some(p) if p.kind != ProviderKind::Openai => Err(AppError::invalid(format!(
                "search by meaning needs an OpenAI-compatible provider for embeddings; \
                 `{provider}` is not one"
            ))),
            Some(_) if model.trim().is_empty() => Err(AppError::invalid(
                "search by meaning through a provider needs the embedding model's name",
            )),
            Some(_) => Ok(Some(format!("{}/{}", provider.trim(), model.trim()))),
        }
    }
}

fn non_empty(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

impl ProviderView {
    fn of(config: &Config, name: &str, p: &ProviderSettings) -> Self {
        let has_key = p.kind.key_env().is_some() && matches!(config.secrets.get(name), Ok(Some(_)));
        Self {
            name: name.to_string(),
            kind: p.kind.name().to_string(),
            base_url: p.base_url.clone(),
            model: p.model.clone(),
            model_path: p.model_path.as_ref().map(|p| p.display().to_string()),
            context_window: p.context_window,
            vision: p.vision,
            image_max_side: p.image_max_side,
            has_key,
        }
    }

    /// These settings over `old` (the provider's previous settings, if any).
    pub fn apply(&self, old: Option<&ProviderSettings>) -> AppResult<ProviderSettings> {
        let kind = ProviderKind::from_name(&self.kind)
            .filter(|k| *k != ProviderKind::Scripted)
            .ok_or_else(|| {
                AppError::invalid(format!(
                    "`{}` is not a provider kind (openai, anthropic, local)",
                    self.kind
                ))
            })?;
        let mut p = old
            .filter(|o| o.kind == kind)
            .cloned()
            .unwrap_or_else(|| ProviderSettings::of_kind(kind));
        if let Some(url) = non_empty(&self.base_url) {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(AppError::invalid(format!(
                    "the base URL of `{}` must start with http:// or https://",
                    self.name
                )));
            }
            p.base_url = Some(url);
        } else {
            p.base_url = None;
        }
        p.model = non_empty(&self.model);
        p.model_path = non_empty(&self.model_path).map(PathBuf::from);
        p.context_window = self.context_window.filter(|w| *w > 0);
        p.vision = self.vision;
        p.image_max_side = self.checked_picture_side()?;
        Ok(p)
    }

    /// The largest picture side, checked unless the model is sent no pictures (then it is
    /// kept as it was, unused).
    fn checked_picture_side(&self) -> AppResult<Option<u32>> {
        match self.image_max_side {
            Some(side) if self.vision != Some(false) && !PICTURE_SIDES.contains(&side) => {
                Err(AppError::invalid(format!(
                    "the largest picture side of `{}` is {side} pixels: it must be from {} \
                     to {}",
                    self.name,
                    PICTURE_SIDES.start(),
                    PICTURE_SIDES.end()
                )))
            }
            side => Ok(side),
        }
    }
}

/// Writes `settings` to config.toml (see [`Settings::save`]: comments kept, the previous
/// file kept as config.toml.bak).
pub fn save(config: &Config, settings: &Settings) -> AppResult<()> {
    settings.save(&config.settings_path).map_err(|e| match e {
        cairn_app::settings::SettingsError::Io { path, source } => {
            AppError::io(path.display(), source)
        }
        other => AppError::invalid(format!("cannot write the settings: {other}")),
    })
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
