//! The settings file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::error::SettingsError;
use super::run::{CompactionSettings, RunSettings};
use super::web::WebSettings;
use cairn_core::config::ApprovalPolicy;
pub use cairn_core::hooks::{HookCommand, HookSettings};

/// Wire formats Cairn can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat-completions server.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// A GGUF model run in-process through llama.cpp.
    Local,
    /// Answers played back from a JSON script (tests).
    Scripted,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Local,
        ProviderKind::Scripted,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Local => "local",
            ProviderKind::Scripted => "scripted",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The environment variable holding this kind's API key.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::Openai => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Local | ProviderKind::Scripted => None,
        }
    }
}

/// One configured provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The GGUF file (local provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<PathBuf>,
    /// A Jinja chat template used instead of the one in the model file (local provider),
    /// like llama-server's `--chat-template-file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_file: Option<PathBuf>,
    /// Extra HTTP headers sent with every request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Read the key from this environment variable instead of the kind's usual one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Longest time one model call may take in all, in seconds (default 600), besides
    /// the 60 s a stalled answer may stay silent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_s: Option<u64>,
    /// Anthropic: extended thinking, with this many tokens of reasoning (at least 1,024)
    /// before each answer, shown as "Thinking" in the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Whether the model sees pictures (sent them) or not (sent their text). Unset: as the
    /// provider says (Anthropic's models; a local server's model information), else not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// The longest side of a picture sent to the model, in pixels (default 1,568).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_max_side: Option<u32>,
}

impl ProviderSettings {
    pub fn of_kind(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: None,
            model: None,
            model_path: None,
            chat_template_file: None,
            headers: BTreeMap::new(),
            context_window: None,
            api_key_env: None,
            call_timeout_s: None,
            thinking_budget: None,
            vision: None,
            image_max_side: None,
        }
    }
}

/// Which model serves each purpose: `"provider"`, `"provider/model"` or `"model"` (on the
/// default provider). Unset purposes use the chat model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct PurposeModels {
    pub chat: Option<String>,
    pub memory_flush: Option<String>,
    pub consolidation: Option<String>,
    pub compaction: Option<String>,
    /// Gather's intent step.
    pub intent: Option<String>,
}

/// `[gather]`: what Gather does besides the workspace context and recall.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct GatherSettings {
    /// Read the message's goal, constraints and lookups with the intent model (`[models]
    /// intent`, else the chat model) beside the workspace context (default: off).
    pub intent: Option<bool>,
}

/// `[memory]`: how long-term memory keeps itself. Unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct MemorySettings {
    /// Ask the flush model for durable facts after every run and before every
    /// compaction (default true).
    pub flush: Option<bool>,
    /// Hours between background consolidations (default 6; 0 turns the timer off).
    pub consolidation_interval_hours: Option<f64>,
    /// Most characters MEMORY.md may have after a consolidation (default 16,000).
    pub memory_budget_chars: Option<usize>,
    /// Largest share of MEMORY.md's bullets a consolidation may drop (default 0.25).
    pub max_dropped_share: Option<f64>,
    /// Daily logs older than this many days move to memory/archive/ (default 90).
    pub archive_after_days: Option<u32>,
    /// What makes the vectors of search by meaning: `"local"` (the bundled
    /// all-MiniLM-L6-v2; the default when it is installed), `"provider/model"` on an
    /// OpenAI-compatible server, or `"none"` (keyword search only).
    pub embedder: Option<String>,
    /// Paths left out of the index, as globs in `.gitignore`'s syntax (`"drafts/"`,
    /// `"*.log"`), on top of the workspace's `.gitignore`, `.ignore` and `.cairnignore`.
    pub exclude: Option<Vec<String>>,
    /// The largest file the index reads, in MB (default 5 for notes, 50 for documents).
    pub max_file_mb: Option<u64>,
    /// Folders outside the workspace searched in place (`"~/Notes"`): indexed and
    /// watched, readable by the model under their name (`Notes/…`), never written.
    pub folders: Option<Vec<String>>,
    /// Read text in pictures (PNG, JPEG, WebP, TIFF) and scanned PDF pages with Tesseract
    /// (default true; off: pictures are not indexed, scanned pages not read).
    pub ocr: Option<bool>,
    /// Tesseract's languages OCR reads (default `["eng"]`); each needs its package,
    /// `tesseract-ocr-<lang>`.
    pub ocr_languages: Option<Vec<String>>,
    /// Whether newer daily logs rank above older ones of near-equal relevance (default
    /// on). Undated notes and MEMORY.md never age either way.
    pub recency: Option<Recency>,
    /// The most of its score a year-old log's hit loses to age, 0 to 0.9 (default 0.15;
    /// a question that asks for the latest, "now", "currently", weighs it twice).
    pub recency_strength: Option<f64>,
}

/// `[memory] recency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recency {
    On,
    Off,
}

/// `[context]`: the context budget of a conversation. Unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ContextSettings {
    /// Tokens kept free below the context window; passing it compacts (default 16,000).
    pub reserve_tokens: Option<u64>,
    /// Tokens of recent conversation a compaction keeps as they are (default 20,000).
    pub keep_recent_tokens: Option<u64>,
    /// Tool results longer than this many characters are saved to a file and shown to
    /// the model as head and tail (default 50,000).
    pub evict_tool_output_chars: Option<usize>,
    /// A model that cannot use tools gets the compact context: no guidance about tools,
    /// the workspace template's own text left out, the user's notes within a small share
    /// of the window (default true).
    pub compact: Option<bool>,
}

/// A section that switches a behaviour on or off (`enabled`, default on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct Toggle {
    pub enabled: Option<bool>,
}

impl Toggle {
    /// Whether it is on: unless `enabled = false`.
    pub fn on(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// `[subagents]`: limits of subagents. Unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct SubagentSettings {
    /// How deep subagents may nest (default 2).
    pub max_depth: Option<u32>,
    /// Seconds `agent_send` waits unless the call or the definition says (default 30).
    pub timeout_s: Option<u64>,
    /// The longest wait a call or definition may ask for, and the limit of background
    /// subagents (default 600).
    pub max_timeout_s: Option<u64>,
}

/// `[timeouts]`: the longest one model call may take in all, in seconds, per purpose.
/// Unset: the provider's `call_timeout_s`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct TimeoutSettings {
    pub chat: Option<u64>,
    pub memory_flush: Option<u64>,
    pub compaction: Option<u64>,
    pub consolidation: Option<u64>,
    /// A subagent's model calls (else `chat`).
    pub subagents: Option<u64>,
    /// Gather's intent step (default 30).
    pub intent: Option<u64>,
}

impl TimeoutSettings {
    pub fn to_limits(&self) -> cairn_core::config::PurposeTimeouts {
        let limit = |s: Option<u64>| s.filter(|s| *s > 0).map(std::time::Duration::from_secs);
        cairn_core::config::PurposeTimeouts {
            chat: limit(self.chat),
            memory_flush: limit(self.memory_flush),
            compaction: limit(self.compaction),
            consolidation: limit(self.consolidation),
            subagents: limit(self.subagents),
            intent: limit(self.intent).or(cairn_core::config::PurposeTimeouts::default().intent),
        }
    }
}

/// `[tools]`: settings of single tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ToolSettings {
    #[serde(default, skip_serializing_if = "is_default")]
    pub bash: cairn_core::tools::handlers::bash::BashSettings,
}

/// Everything in config.toml. Every field is optional: an empty file is valid.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct Settings {
    /// The provider used when nothing else says which.
    pub default_provider: Option<String>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSettings>,
    #[serde(default)]
    pub models: PurposeModels,
    pub approval: Option<ApprovalPolicy>,
    /// `[tools.*]`: settings of single tools.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tools: ToolSettings,
    /// `[approvals]`: writes that ask first whatever the policy says.
    #[serde(default, skip_serializing_if = "is_default")]
    pub approvals: cairn_core::tools::ProtectSettings,
    /// Context window in tokens for models whose provider does not say.
    pub context_window: Option<u64>,
    /// The workspace folder (default `~/Cairn`).
    pub workspace: Option<PathBuf>,
    #[serde(default)]
    pub memory: MemorySettings,
    #[serde(default)]
    pub context: ContextSettings,
    /// `[compaction]`: compaction as the window fills.
    #[serde(default, skip_serializing_if = "is_default")]
    pub compaction: CompactionSettings,
    /// `[eviction]`: long tool results kept in a file, the model shown head and tail.
    #[serde(default, skip_serializing_if = "is_default")]
    pub eviction: Toggle,
    #[serde(default, skip_serializing_if = "is_default")]
    pub run: RunSettings,
    #[serde(default, skip_serializing_if = "is_default")]
    pub subagents: SubagentSettings,
    #[serde(default, skip_serializing_if = "is_default")]
    pub timeouts: TimeoutSettings,
    #[serde(default, skip_serializing_if = "is_default")]
    pub gather: GatherSettings,
    #[serde(default, skip_serializing_if = "is_default")]
    pub hooks: HookSettings,
    /// `[web]`: what `web_fetch` may reach, which service `web_search` asks.
    #[serde(default, skip_serializing_if = "is_default")]
    pub web: WebSettings,
    /// `[mcp.servers.<name>]`: the MCP servers whose tools the model may call.
    #[serde(default, skip_serializing_if = "is_default")]
    pub mcp: cairn_core::mcp::McpSettings,
}

/// toml's error as `line N: what is wrong`, without the quoted line toml's own text shows
/// (a line under `headers` may hold a token).
fn without_source(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim_end();
    match error.span() {
        Some(span) => {
            let line = 1 + text.as_bytes()[..span.start.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            format!("line {line}: {message}")
        }
        None => message.to_string(),
    }
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl Settings {
    /// Reads `path`; a missing file means default settings.
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(SettingsError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self, SettingsError> {
        let settings: Settings = toml::from_str(text).map_err(|e| SettingsError::Invalid {
            path: path.to_path_buf(),
            message: without_source(text, &e),
        })?;
        if let Some(name) = settings
            .providers
            .keys()
            .find(|n| n.is_empty() || n.contains('/'))
        {
            return Err(SettingsError::Invalid {
                path: path.to_path_buf(),
                message: format!("provider name `{name}` must be non-empty and without `/`"),
            });
        }
        Ok(settings)
    }

    /// Writes the settings to `path` atomically, readable by the user only (a file may hold
    /// headers with tokens). They are laid over the file as it is, so the user's comments,
    /// key order and formatting stay wherever a value did not change; only a merge that reads
    /// back as exactly these settings is written, else the settings as a new file. The
    /// previous file, when it differs, is kept beside it as `config.toml.bak`.
    pub fn save(&self, path: &Path) -> Result<(), SettingsError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SettingsError::Io { path, source }
        };
        let fresh = toml::to_string_pretty(self).map_err(|e| SettingsError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let old = match std::fs::read(path) {
            Ok(old) => Some(old),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(path)(e)),
        };
        let merged = old
            .as_deref()
            .and_then(|old| std::str::from_utf8(old).ok())
            .and_then(|old| super::merge::merge(old, &fresh).ok())
            .filter(|merged| toml::from_str::<Settings>(merged).is_ok_and(|back| back == *self));
        let text = merged.unwrap_or(fresh);
        if let Some(old) = old.filter(|old| old != text.as_bytes()) {
            let backup = path.with_extension("toml.bak");
            cairn_memory::write_atomic(&backup, &old, Some(0o600)).map_err(io(&backup))?;
        }
        cairn_memory::write_atomic(path, text.as_bytes(), Some(0o600)).map_err(io(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hooks_are_read_in_the_documented_shape() {
        let text = r#"
[[hooks.pre_tool]]
matcher = "write_file"      # a tool name or a regex over tool names; absent: every tool
command = "/path/to/script" # run with sh -c, the workspace as its working directory
timeout_s = 10

[[hooks.user_prompt]]
command = "echo hi"
"#;
        let settings = Settings::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(
            settings.hooks.pre_tool,
            vec![HookCommand {
                matcher: Some("write_file".into()),
                command: "/path/to/script".into(),
                timeout_s: Some(10),
            }]
        );
        assert_eq!(settings.hooks.user_prompt[0].command, "echo hi");
        assert!(Settings::parse(
            "[[hooks.pre_tools]]\ncommand = \"x\"\n",
            Path::new("c.toml")
        )
        .is_err());
    }

    #[test]
    fn a_parse_error_names_the_line_but_never_shows_it() {
        let text = "[providers.x]\nkind = \"openai\"\nheaders = { Authorization = \"Bearer sk-live-123\" \n";
        let error = Settings::parse(text, Path::new("config.toml")).unwrap_err();
        let shown = error.to_string();
        assert!(shown.starts_with("config.toml: line 3: "), "{shown}");
        assert!(!shown.contains("sk-live-123"), "{shown}");
        let wrong = "[providers.x]\nkind = \"gpt\"\n";
        let shown = Settings::parse(wrong, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            shown.starts_with("c.toml: line 2: unknown variant `gpt`"),
            "{shown}"
        );
    }

    #[test]
    fn a_full_file_parses() {
        let text = r#"
            default_provider = "ollama"
            context_window = 32000
            [providers.ollama]
            kind = "openai"
            base_url = "http://localhost:11434/v1"
            model = "llama3.2"
            headers = { "X-Title" = "Cairn" }
            [models]
            memory_flush = "local"
            [approval]
            default = "ask"
            tools = { read_file = "allow" }
        "#;
        let settings = Settings::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(settings.default_provider.as_deref(), Some("ollama"));
        let ollama = &settings.providers["ollama"];
        assert_eq!(ollama.kind, ProviderKind::Openai);
        assert_eq!(ollama.headers["X-Title"], "Cairn");
        assert_eq!(settings.models.memory_flush.as_deref(), Some("local"));
        assert_eq!(
            settings.approval.unwrap().for_tool("bash"),
            cairn_core::Policy::Ask
        );
    }

    #[test]
    fn mistakes_name_the_file_and_the_place() {
        let err = Settings::parse(
            "[providers.x]\nkind = \"gpt\"\n",
            Path::new("/c/config.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("/c/config.toml: "), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let err = Settings::parse("colour = 1", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn/config.toml");
        let mut settings = Settings {
            default_provider: Some("local".into()),
            ..Settings::default()
        };
        settings.providers.insert(
            "local".into(),
            ProviderSettings::of_kind(ProviderKind::Local),
        );
        settings.save(&path).unwrap();
        assert_eq!(Settings::load(&path).unwrap(), settings);
        assert_eq!(
            Settings::load(&dir.path().join("missing.toml")).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn saving_keeps_the_users_comments_and_the_file_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my providers\ndefault_provider = \"a\"  # the usual one\n\n\
                      [providers.a]\nkind = \"openai\"\nmodel = \"m1\" # fast\n";
        std::fs::write(&path, before).unwrap();
        let mut settings = Settings::load(&path).unwrap();
        settings.providers.get_mut("a").unwrap().model = Some("m2".into());
        settings.save(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            before.replace("\"m1\"", "\"m2\"")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("config.toml.bak")).unwrap(),
            before
        );
        assert_eq!(Settings::load(&path).unwrap(), settings);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// `[compaction]` and `[eviction]` turn off on their own, and a misspelt key is refused.
    #[test]
    fn the_sections_parse_and_refuse_what_they_do_not_know() {
        let parse = |text: &str| toml::from_str::<Settings>(text);
        let settings =
            parse("[compaction]\nenabled = false\n[eviction]\nenabled = false\n").unwrap();
        assert!(!settings.compaction.on() && !settings.eviction.on());
        let defaults = parse("").unwrap();
        assert!(defaults.compaction.on() && defaults.eviction.on());
        assert!(parse("[compaction]\nenable = false\n").is_err());
    }
}
