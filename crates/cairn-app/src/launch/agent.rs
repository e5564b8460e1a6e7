//! The agent a front end runs, from the settings and the models.

use std::sync::Arc;

use cairn_llm::Provider;
use cairn_memory::{MemoryIndex, Workspace};

use super::{context_budget, upkeep, ChatModel, Config, Warn};
use cairn_core::agent::Upkeep;
use cairn_core::session::OpenedSession;
use std::time::Duration;

use async_trait::async_trait;

use crate::settings::CompletionMode;
use cairn_core::subagents::{ModelResolver, ResolvedModel};
use cairn_core::tools::handlers::{
    self,
    bash::{Bash, CommandRules, EnvScrub, SandboxChoice},
};
use cairn_core::tools::{ProtectRules, ToolRegistry};
use cairn_core::{
    Agent, AgentConfig, AgentParts, ApprovalPolicy, Completion, ContextBudget, PurposeTimeouts,
    StallLimits, SubagentLimits,
};

/// Continue prompts a strict run gets by default.
const DEFAULT_NUDGES: u32 = 2;

/// Builds the models subagent definitions name, from the settings as they were read.
/// A definition comes from the workspace, which someone else may have prepared: it may
/// only name a provider the user configured (`[providers]`) or the chat provider, never
/// a bare kind that would send the workspace to a service the user did not choose just
/// because its key is in the environment.
pub struct SettingsModels {
    settings: crate::settings::Settings,
    overrides: crate::settings::EnvOverrides,
    secrets: crate::settings::SecretStore,
    /// The chat provider's name.
    chat: Option<String>,
}

impl SettingsModels {
    pub fn of(config: &Config) -> Self {
        Self {
            settings: config.settings.clone(),
            overrides: config.overrides.clone(),
            secrets: config.secrets.clone(),
            chat: config
                .resolve(crate::settings::Purpose::Chat)
                .ok()
                .map(|r| r.name),
        }
    }
}

#[async_trait]
impl ModelResolver for SettingsModels {
    async fn resolve(&self, spec: &str) -> Result<ResolvedModel, String> {
        let configured = || {
            let mut names: Vec<&str> = self.settings.providers.keys().map(String::as_str).collect();
            if let Some(chat) = self.chat.as_deref().filter(|c| !names.contains(c)) {
                names.push(chat);
            }
            match names.is_empty() {
                true => "no providers are configured".to_string(),
                false => format!("the configured providers are: {}", names.join(", ")),
            }
        };
        let resolved = self
            .settings
            .resolve_spec(spec, &self.overrides, &self.secrets)
            .map_err(|e| format!("{e}; {}", configured()))?;
        let chosen = self.settings.providers.contains_key(&resolved.name)
            || self.chat.as_deref() == Some(resolved.name.as_str());
        if !chosen {
            return Err(format!(
                "the provider `{}` is not one you configured (add it under [providers] in \
                 config.toml to let subagents use it); {}",
                resolved.name,
                configured()
            ));
        }
        let provider = resolved
            .build()
            .await
            .map_err(|e| format!("{}: {e}", super::describe_failure(&resolved)))?;
        Ok(ResolvedModel {
            provider,
            label: format!("{}/{}", resolved.name, resolved.model),
            model: resolved.model,
        })
    }
}

pub struct AgentOptions {
    /// Every tool call allowed without asking (overrides the settings' policy).
    pub yes: bool,
    pub max_steps: u32,
    /// `[run]`: deadline, completion, stall limits.
    pub deadline: Option<Duration>,
    pub completion: Completion,
    pub stall: StallLimits,
    /// `[subagents]`.
    pub subagents: SubagentLimits,
    /// `[timeouts]`.
    pub timeouts: PurposeTimeouts,
    /// The user's own skills folder.
    pub user_skills: Option<std::path::PathBuf>,
    /// The user's hook commands (`[hooks]`).
    pub user_hooks: Option<Arc<cairn_core::hooks::ShellHooks>>,
    /// `web_fetch`, when its client could start.
    pub web: Option<Arc<handlers::web_fetch::WebFetch>>,
    /// `web_search`, when `[web] search` names a service Cairn asks and its key is found.
    pub search: Option<Arc<handlers::web_search::WebSearch>>,
    /// Builds the models subagent definitions name.
    pub models: Option<Arc<dyn ModelResolver>>,
    /// The user's MCP servers (the front end keeps one hub for its lifetime).
    pub mcp: Option<Arc<cairn_core::mcp::McpHub>>,
    /// The approval policy from the settings.
    pub approval: Option<ApprovalPolicy>,
    /// Writes that ask first (`[approvals]`).
    pub protect: ProtectRules,
    /// What bash commands do not get from the environment.
    pub bash_env: EnvScrub,
    /// How bash commands are held (`[tools.bash] sandbox`, `network`).
    pub bash_sandbox: SandboxChoice,
    /// Bash command prefixes allowed without asking or refused.
    pub bash_rules: CommandRules,
    pub context: ContextBudget,
    pub evict_tool_output_chars: usize,
    pub upkeep: Upkeep,
    /// `provider/model` of the chat model, as the settings name it.
    pub model_label: Option<String>,
    /// `[run] steering_mode` and `follow_up_mode`.
    pub steering_mode: cairn_protocol::QueueMode,
    pub follow_up_mode: cairn_protocol::QueueMode,
}

impl AgentOptions {
    /// The options of `config`'s settings, with the flush and compaction models;
    /// `max_steps` from a flag beats the settings'.
    pub async fn from_config(
        config: &Config,
        chat: &ChatModel,
        yes: bool,
        max_steps: Option<u32>,
        warn: Warn<'_>,
    ) -> Self {
        let (context, evict_tool_output_chars) = context_budget(config, chat);
        let protect = ProtectRules::from_settings(&config.settings.approvals).unwrap_or_else(|e| {
            warn(format!("{e}; the default protected paths apply"));
            ProtectRules::default()
        });
        let settings = &config.settings;
        let bash_env = env_scrub(settings);
        let bash_rules = CommandRules::new(&settings.tools.bash.allow, &settings.tools.bash.deny);
        let bash_sandbox = sandbox_choice(config);
        let user_hooks = match settings.hooks.is_empty() {
            true => None,
            false => match cairn_core::hooks::ShellHooks::new(&settings.hooks, bash_env.clone()) {
                Ok(hooks) => Some(Arc::new(hooks.hiding(&bash_sandbox))),
                Err(e) => {
                    warn(format!("[hooks] {e}; your hooks are off until it is fixed"));
                    None
                }
            },
        };
        let reach = handlers::web_fetch::guard::Reach {
            allow_private: settings.web.allow_private == Some(true),
            also: Vec::new(),
        };
        let web = handlers::web_fetch::WebFetch::new(reach)
            .map(Arc::new)
            .map_err(|e| warn(format!("web_fetch is unavailable: {e}")))
            .ok();
        let search = super::web_search(config, warn);
        super::check_provider_search(config, chat, warn);
        let run = &settings.run;
        let defaults = AgentConfig::default();
        let completion = match run.completion {
            Some(CompletionMode::Strict) => Completion::Strict {
                nudges: run.nudges.unwrap_or(DEFAULT_NUDGES),
            },
            _ => Completion::Lenient,
        };
        let stall = StallLimits {
            repeats: run.stall_repeats.unwrap_or(defaults.stall.repeats),
            same_results: run
                .stall_same_results
                .unwrap_or(defaults.stall.same_results),
        };
        let sub = &settings.subagents;
        let limits = defaults.subagents;
        let subagents = SubagentLimits {
            max_depth: sub.max_depth.unwrap_or(limits.max_depth),
            timeout: sub.timeout_s.map_or(limits.timeout, Duration::from_secs),
            max_timeout: sub
                .max_timeout_s
                .map_or(limits.max_timeout, Duration::from_secs),
        };
        Self {
            yes,
            max_steps: max_steps
                .or(run.max_steps)
                .unwrap_or(defaults.max_steps)
                .max(1),
            deadline: run.deadline_s.filter(|s| *s > 0).map(Duration::from_secs),
            completion,
            stall,
            subagents,
            timeouts: settings.timeouts.to_limits(),
            user_hooks,
            web,
            search,
            user_skills: config
                .settings_path
                .parent()
                .map(|dir| dir.join(cairn_core::skills::FOLDER)),
            models: Some(Arc::new(SettingsModels::of(config))),
            mcp: None,
            approval: config.settings.approval.clone(),
            protect,
            bash_env,
            bash_sandbox,
            bash_rules,
            context,
            evict_tool_output_chars,
            upkeep: upkeep(config, chat, warn).await,
            model_label: config
                .resolve(crate::settings::Purpose::Chat)
                .ok()
                .map(|r| format!("{}/{}", r.name, chat.1)),
            steering_mode: run.steering_mode.unwrap_or_default(),
            follow_up_mode: run.follow_up_mode.unwrap_or_default(),
        }
    }
}

/// What commands Cairn starts (bash, hooks, MCP servers) do not get from its environment:
/// the providers' and search services' keys and Cairn's own variables.
pub fn env_scrub(settings: &crate::settings::Settings) -> EnvScrub {
    let search_keys = crate::settings::SearchBackend::KEYED
        .into_iter()
        .filter_map(|b| b.key_env().map(String::from));
    EnvScrub {
        also_remove: settings
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .chain(search_keys)
            .collect(),
        pass: settings.tools.bash.pass_env.clone(),
        allow_only: false,
    }
}

/// How bash commands are held: in the sandbox unless `[tools.bash] sandbox = false`, which
/// hides Cairn's config folder (settings, keys, the user's skills) and the key file.
pub fn sandbox_choice(config: &Config) -> SandboxChoice {
    let bash = &config.settings.tools.bash;
    let approvals = &config.settings.approvals;
    let hidden = config.own_paths();
    let home = dirs::home_dir();
    let paths = |list: &[String]| -> Vec<std::path::PathBuf> {
        list.iter()
            .map(|p| super::config::expand_home(p, home.as_deref()))
            .collect()
    };
    SandboxChoice {
        on: bash.sandbox != Some(false),
        network: bash.network == Some(true),
        hidden,
        reach: crate::cairn_process::Reach {
            hide: paths(&bash.hide),
            read_only: paths(&bash.read_only),
            writable: paths(&bash.writable),
        },
        ask_paths: approvals.ask_paths.clone().unwrap_or_else(|| {
            cairn_core::tools::protect::DEFAULT_ASK_PATHS
                .map(String::from)
                .to_vec()
        }),
        executables: approvals.ask_executables != Some(false),
    }
}

/// The hub of the servers under `[mcp.servers]`, eager ones starting; `None` without any.
/// What is wrong with a server's settings goes to `warn` (and its status).
pub fn mcp_hub(
    config: &Config,
    workspace: &Workspace,
    warn: Warn<'_>,
) -> Option<Arc<cairn_core::mcp::McpHub>> {
    let settings = &config.settings.mcp;
    if settings.servers.is_empty() {
        return None;
    }
    for problem in settings.problems() {
        warn(format!("{problem}; that server is left out"));
    }
    let hub = cairn_core::mcp::McpHub::new(
        settings,
        cairn_core::mcp::HubOptions {
            workspace: Some(workspace.root().to_path_buf()),
            env: env_scrub(&config.settings),
            sandbox: Some(sandbox_choice(config).sandbox(workspace.root())),
        },
    );
    hub.start_eager();
    Some(Arc::new(hub))
}

pub fn build_agent(
    workspace: Arc<Workspace>,
    provider: Arc<dyn Provider>,
    model: String,
    session: OpenedSession,
    options: AgentOptions,
    memory: Option<MemoryIndex>,
) -> Agent {
    // `--yes`: the user allowed every call, protected paths included.
    let (approval, protect) = match (options.yes, options.approval) {
        (true, _) => (ApprovalPolicy::allow_all(), ProtectRules::off()),
        (false, policy) => {
            let mut policy = policy.unwrap_or_default();
            if let Some(hub) = &options.mcp {
                policy.mcp = hub.policies();
            }
            (policy, options.protect)
        }
    };
    let config = AgentConfig {
        model,
        model_label: options.model_label.clone(),
        steering_mode: options.steering_mode,
        follow_up_mode: options.follow_up_mode,
        max_steps: options.max_steps,
        deadline: options.deadline,
        completion: options.completion,
        stall: options.stall,
        subagents: options.subagents,
        timeouts: options.timeouts,
        user_skills: options.user_skills.clone(),
        approval,
        protect,
        bash_rules: options.bash_rules,
        context: options.context,
        evict_tool_output_chars: options.evict_tool_output_chars,
        ..AgentConfig::default()
    };
    let mut tools = ToolRegistry::with_memory(memory.clone());
    tools.register(Arc::new(Bash::new(
        options.bash_env,
        options.bash_sandbox,
        options.yes,
    )));
    tools.register(Arc::new(handlers::skill::SkillTool {
        user_dir: options.user_skills,
    }));
    if let Some(web) = options.web {
        tools.register(web);
    }
    if let Some(search) = options.search {
        tools.register(search);
    }
    tools.extend(handlers::work::tools());
    tools.extend(handlers::subagents::tools());
    Agent::new(AgentParts {
        workspace,
        provider,
        session,
        config,
        tools,
        hooks: options
            .user_hooks
            .into_iter()
            .map(|h| h as Arc<dyn cairn_core::hooks::Hook>)
            .collect(),
        memory,
        upkeep: options.upkeep,
        mcp: options.mcp,
        models: options.models,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{EnvOverrides, SecretStore, Settings};

    fn models(text: &str, mut env: EnvOverrides) -> (tempfile::TempDir, SettingsModels) {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(&script, "[]").unwrap();
        env.script = Some(script);
        let config = Config {
            settings: Settings::parse(text, std::path::Path::new("config.toml")).unwrap(),
            settings_path: dir.path().join("config.toml"),
            secrets: SecretStore::detect(dir.path()),
            overrides: env,
        };
        let models = SettingsModels::of(&config);
        (dir, models)
    }

    #[tokio::test]
    async fn a_definition_may_only_name_providers_the_user_chose() {
        // The chat model is local; an OpenAI key sits in the environment.
        let env = EnvOverrides {
            openai_key: Some("sk-env".into()),
            ..EnvOverrides::default()
        };
        let (_dir, models) = models(
            "default_provider = \"mine\"\n[providers.mine]\nkind = \"scripted\"\n",
            env,
        );
        let refused = models.resolve("openai/gpt-4o").await.err().unwrap();
        assert!(refused.contains("not one you configured"), "{refused}");
        assert!(
            refused.ends_with("the configured providers are: mine"),
            "{refused}"
        );
        let refused = models.resolve("anthropic").await.err().unwrap();
        assert!(refused.contains("`anthropic`"), "{refused}");
        let resolved = models.resolve("mine/other-model").await.unwrap();
        assert_eq!(resolved.model, "other-model");
        assert_eq!(resolved.label, "mine/other-model");
    }
}
