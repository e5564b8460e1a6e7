//! The model for each purpose beside the chat model, and what the settings say about
//! the context budget and background memory upkeep.

use std::sync::Arc;
use std::time::Duration;

use cairn_memory::{MemoryIndex, Workspace};

use super::{describe_failure, ChatModel, Config, LaunchError, Warn};
use crate::settings::{MemorySettings, ProviderKind, Purpose};
use cairn_core::agent::Upkeep;
use cairn_core::upkeep::{
    ConsolidationOptions, ConsolidationScheduler, Consolidator, ModelChoice, ModelSource,
    SchedulerHandle, SystemClock,
};
use cairn_core::{AgentConfig, ContextBudget};

/// The model for `purpose`, sharing the chat provider when the purpose is the chat model
/// (a local model is loaded once), and whether it is a local model. A purpose without
/// its own `[models]` entry is the chat model: nothing is resolved again (no second key
/// lookup). `None` (with a warning) when it cannot be built.
async fn model_beside_chat(
    config: &Config,
    purpose: Purpose,
    chat: &ChatModel,
    warn: Warn<'_>,
) -> Option<(ModelChoice, bool)> {
    let share = || {
        let local = chat.0.info().kind == ProviderKind::Local.name();
        Some((ModelChoice::new(chat.0.clone(), chat.1.clone()), local))
    };
    let models = &config.settings.models;
    let own = match purpose {
        Purpose::Chat => None,
        Purpose::MemoryFlush => models.memory_flush.as_ref(),
        Purpose::Consolidation => models.consolidation.as_ref(),
        Purpose::Compaction => models.compaction.as_ref(),
        Purpose::Intent => models.intent.as_ref(),
    };
    if own.is_none() {
        return share();
    }
    let resolved = match config.resolve(purpose) {
        Ok(resolved) => resolved,
        Err(e) => {
            warn(format!("no {purpose:?} model: {e}"));
            return None;
        }
    };
    let local = resolved.kind() == ProviderKind::Local;
    let chat_name = config
        .resolve(Purpose::Chat)
        .ok()
        .map(|r| (r.name, r.model));
    if chat_name == Some((resolved.name.clone(), resolved.model.clone())) {
        return share();
    }
    match resolved.build().await {
        Ok(provider) => Some((ModelChoice::new(provider, resolved.model), local)),
        Err(e) => {
            warn(format!("{}: {e}", describe_failure(&resolved)));
            None
        }
    }
}

/// The model that writes memory for `purpose` (flush, consolidation): `None` when
/// `memory.flush = false`, and for a local model unless `memory.flush = true`, since a
/// small local model would fill the memory with noise.
async fn memory_writer(
    config: &Config,
    purpose: Purpose,
    chat: &ChatModel,
    warn: Warn<'_>,
) -> Option<ModelChoice> {
    let explicit = config.settings.memory.flush;
    if explicit == Some(false) {
        return None;
    }
    model_beside_chat(config, purpose, chat, warn)
        .await
        .filter(|(_, local)| !local || explicit == Some(true))
        .map(|(choice, _)| choice)
}

/// Why memory is not written in the background (the flush after runs and consolidation),
/// and how to turn it on, when that is so because the only model is a local one; `None`
/// when it runs, or was switched off on purpose (`[memory] flush = false`).
pub fn memory_upkeep_paused(config: &Config) -> Option<String> {
    let explicit = config.settings.memory.flush;
    if explicit.is_some() {
        return None;
    }
    let writer = config
        .resolve(Purpose::MemoryFlush)
        .or_else(|_| config.resolve(Purpose::Chat))
        .ok()?;
    (writer.kind() == ProviderKind::Local).then(|| {
        format!(
            "memory consolidation and the memory flush are paused: the only model is the local \
             `{}`, and a small local model would damage MEMORY.md. Configure a provider (an \
             OpenAI-compatible server or Anthropic), or set `[memory] flush = true` to let \
             the local model write memory anyway",
            writer.model
        )
    })
}

/// The flush and compaction models (see [`memory_writer`] for when the flush is off).
pub async fn upkeep(config: &Config, chat: &ChatModel, warn: Warn<'_>) -> Upkeep {
    let flush = memory_writer(config, Purpose::MemoryFlush, chat, warn).await;
    let compaction = match config.settings.models.compaction {
        Some(_) => model_beside_chat(config, Purpose::Compaction, chat, warn)
            .await
            .map(|(choice, _)| choice),
        None => None,
    };
    let intent = intent_reader(config, chat, warn).await;
    Upkeep {
        flush,
        compaction,
        intent,
        flushed: None,
    }
}

/// The intent step's model, when `[gather] intent = true`: it costs a model call before
/// every run, so it is off unless asked for (and a small local model's reading adds more
/// noise than it finds).
async fn intent_reader(config: &Config, chat: &ChatModel, warn: Warn<'_>) -> Option<ModelChoice> {
    if config.settings.gather.intent != Some(true) {
        return None;
    }
    model_beside_chat(config, Purpose::Intent, chat, warn)
        .await
        .map(|(choice, _)| choice)
}

/// Background consolidation for a long-lived front end: on the settings' interval and
/// after flushes, with the consolidation model under the flush's rule. Sets
/// `upkeep.flushed` so flushes reach it. `None` when it is off.
pub async fn consolidation(
    config: &Config,
    chat: &ChatModel,
    workspace: &Arc<Workspace>,
    index: Option<&MemoryIndex>,
    upkeep: &mut Upkeep,
    warn: Warn<'_>,
) -> Option<SchedulerHandle> {
    let consolidator = consolidator(config, chat, workspace, index, warn).await?;
    let flushed = Arc::new(tokio::sync::Notify::new());
    upkeep.flushed = Some(flushed.clone());
    Some(ConsolidationScheduler::spawn(
        Arc::new(consolidator),
        flushed,
    ))
}

/// The consolidator the settings ask for, or `None` when consolidation is off.
pub async fn consolidator(
    config: &Config,
    chat: &ChatModel,
    workspace: &Arc<Workspace>,
    index: Option<&MemoryIndex>,
    warn: Warn<'_>,
) -> Option<Consolidator> {
    let options = consolidation_options(&config.settings.memory);
    options.interval?;
    let model = memory_writer(config, Purpose::Consolidation, chat, warn)
        .await?
        .with_timeout(config.settings.timeouts.to_limits().consolidation);
    Some(assemble(config, workspace, model.into(), index))
}

/// A consolidation asked for now (`cairn consolidate`, the app's "Consolidate now" when no
/// background consolidation runs), whatever the interval says. Its model is `chat` when the
/// settings give consolidation the chat model (a local model is not loaded twice), else
/// the consolidation model, built only if there are logs to merge.
pub fn consolidator_now(
    config: &Config,
    workspace: &Arc<Workspace>,
    chat: Option<&ChatModel>,
    index: Option<&MemoryIndex>,
) -> Result<Consolidator, LaunchError> {
    let model = match chat.filter(|_| consolidates_with_chat(config)) {
        Some((provider, model)) => ModelChoice::new(provider.clone(), model.clone())
            .with_timeout(config.settings.timeouts.to_limits().consolidation)
            .into(),
        None => config.consolidation_model()?,
    };
    Ok(assemble(config, workspace, model, index))
}

/// Whether the settings give consolidation the chat model itself.
pub fn consolidates_with_chat(config: &Config) -> bool {
    let names = |purpose| config.resolve(purpose).ok().map(|r| (r.name, r.model));
    names(Purpose::Consolidation) == names(Purpose::Chat)
}

/// Every front end's consolidator: the settings' options, and the index told of what it
/// writes.
fn assemble(
    config: &Config,
    workspace: &Arc<Workspace>,
    model: ModelSource,
    index: Option<&MemoryIndex>,
) -> Consolidator {
    let options = consolidation_options(&config.settings.memory);
    let consolidator = Consolidator::new(workspace.clone(), model, options, Arc::new(SystemClock));
    match index {
        Some(index) => consolidator.with_index(index.clone()),
        None => consolidator,
    }
}

/// The context budget from the settings' `[context]`. The window is the chat provider's
/// (its settings' `context_window`, which the built provider reports, else what the
/// model says), else the global `context_window`.
pub fn context_budget(config: &Config, chat: &ChatModel) -> (ContextBudget, usize) {
    budget_of(&config.settings, chat.0.info().context_window)
}

/// The context budget and the eviction threshold of `settings`, for a provider that says
/// its window is `provider_window`.
fn budget_of(
    settings: &crate::settings::Settings,
    provider_window: Option<u64>,
) -> (ContextBudget, usize) {
    let defaults = ContextBudget::default();
    let context = &settings.context;
    let budget = ContextBudget {
        window: provider_window.or(settings.context_window),
        reserve_tokens: context.reserve_tokens.unwrap_or(defaults.reserve_tokens),
        keep_recent_tokens: context
            .keep_recent_tokens
            .unwrap_or(defaults.keep_recent_tokens),
        compact: context.compact.unwrap_or(defaults.compact),
        compaction: settings.compaction.on(),
        background: settings.compaction.mode != Some(crate::settings::CompactionMode::Inline),
        start_percent: settings
            .compaction
            .start_percent
            .map_or(defaults.start_percent, |p| p.clamp(10, 99)),
    };
    // Off, no result is ever long enough to be evicted.
    let evict = match settings.eviction.on() {
        true => context
            .evict_tool_output_chars
            .unwrap_or(AgentConfig::default().evict_tool_output_chars),
        false => usize::MAX,
    };
    (budget, evict)
}

/// Consolidation's options: the defaults, with what `[memory]` sets. Values that make no sense (negative hours,
/// a share outside 0..=1, a budget of 0) fall back to the default.
pub fn consolidation_options(settings: &MemorySettings) -> ConsolidationOptions {
    let defaults = ConsolidationOptions::default();
    let interval = match settings.consolidation_interval_hours {
        Some(0.0) => None,
        Some(hours) => Duration::try_from_secs_f64(hours * 3600.0)
            .ok()
            .or(defaults.interval),
        None => defaults.interval,
    };
    ConsolidationOptions {
        interval,
        budget_chars: settings
            .memory_budget_chars
            .filter(|&n| n > 0)
            .unwrap_or(defaults.budget_chars),
        max_dropped_share: settings
            .max_dropped_share
            .filter(|share| (0.0..=1.0).contains(share))
            .unwrap_or(defaults.max_dropped_share),
        archive_after_days: settings
            .archive_after_days
            .unwrap_or(defaults.archive_after_days),
        ..defaults
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    /// With only a local model, memory upkeep is said to be paused, with why and how to
    /// turn it on; a provider, or a choice either way, says nothing.
    #[test]
    fn memory_upkeep_is_said_paused_with_only_a_local_model() {
        let dir = tempfile::tempdir().unwrap();
        let paused = |toml: &str| {
            std::fs::write(dir.path().join("config.toml"), toml).unwrap();
            memory_upkeep_paused(&Config::load(Some(dir.path())).unwrap())
        };
        let why = paused("").expect("the bundled model alone pauses it");
        assert!(why.contains("would damage MEMORY.md"), "{why}");
        assert!(why.contains("Configure a provider"), "{why}");
        assert!(why.contains("`[memory] flush = true`"), "{why}");
        assert_eq!(paused("[memory]\nflush = true\n"), None);
        assert_eq!(paused("[memory]\nflush = false\n"), None);
        let provider = "default_provider = \"ollama\"\n[providers.ollama]\nkind = \"openai\"\n\
                        base_url = \"http://localhost:11434/v1\"\nmodel = \"llama3.2\"\n";
        assert_eq!(paused(provider), None);
    }

    #[test]
    fn compaction_and_eviction_switch_off_each_on_its_own() {
        let budget = |text: &str| budget_of(&toml::from_str(text).unwrap(), Some(8_000));
        let (on, evict) = budget("[context]\nevict_tool_output_chars = 2000\n");
        assert!(on.compaction);
        assert_eq!(evict, 2_000);
        let (off, evict) = budget("[compaction]\nenabled = false\n");
        assert!(!off.compaction);
        assert_eq!(evict, 50_000);
        let (on, evict) =
            budget("[eviction]\nenabled = false\n[context]\nevict_tool_output_chars = 2000\n");
        assert!(on.compaction);
        assert_eq!(evict, usize::MAX);
    }

    #[test]
    fn settings_override_the_defaults_and_zero_hours_turns_the_timer_off() {
        let settings = MemorySettings {
            consolidation_interval_hours: Some(0.5),
            memory_budget_chars: Some(8000),
            max_dropped_share: Some(0.1),
            archive_after_days: Some(30),
            ..MemorySettings::default()
        };
        assert_eq!(
            consolidation_options(&settings),
            ConsolidationOptions {
                interval: Some(Duration::from_secs(1800)),
                budget_chars: 8000,
                max_dropped_share: 0.1,
                archive_after_days: 30,
                ..ConsolidationOptions::default()
            }
        );
        let off = MemorySettings {
            consolidation_interval_hours: Some(0.0),
            max_dropped_share: Some(2.0),
            ..MemorySettings::default()
        };
        let options = consolidation_options(&off);
        assert_eq!(options.interval, None);
        assert_eq!(options.max_dropped_share, 0.25);
        assert_eq!(
            consolidation_options(&MemorySettings::default()),
            ConsolidationOptions::default()
        );
    }
}
