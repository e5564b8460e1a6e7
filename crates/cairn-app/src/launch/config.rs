//! Settings, secrets and overrides as one `Config`, the errors of a start, and opening
//! the session a conversation goes on in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_llm::{LlmError, Provider};
use cairn_memory::{MemoryError, Workspace};

use crate::settings::{
    self, EnvOverrides, ProviderKind, Purpose, ResolvedProvider, SecretStore, Settings,
    SettingsError,
};
use cairn_core::session::{OpenedSession, SessionStore};
use cairn_core::upkeep::{ConsolidateError, ModelChoice, ModelLoader, ModelSource};
use cairn_core::HarnessError;

/// Where warnings go: a front end prints them or shows them.
pub type Warn<'a> = &'a mut (dyn FnMut(String) + Send);

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot tell the home folder (set HOME, or choose a workspace)")]
    NoHome,
    #[error("cannot tell the config folder (set HOME)")]
    NoConfigDir,
    #[error("cannot open the workspace {}: {source}", dir.display())]
    Workspace { dir: PathBuf, source: MemoryError },
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("{what}: {source}")]
    Provider { what: String, source: LlmError },
    #[error(transparent)]
    Session(#[from] HarnessError),
}

/// Settings, secrets and overrides: everything that decides which model answers.
pub struct Config {
    pub settings: Settings,
    pub settings_path: PathBuf,
    pub secrets: SecretStore,
    pub overrides: EnvOverrides,
}

impl Config {
    /// Cairn's config folder (settings, keys, the user's skills) and the key file, which no
    /// sandboxed process sees.
    pub fn own_paths(&self) -> Vec<PathBuf> {
        let mut own: Vec<PathBuf> = self
            .settings_path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        if let crate::settings::SecretBackend::File(path) = self.secrets.backend() {
            own.push(path.clone());
        }
        own
    }

    /// Reads config.toml from the config folder (`dir`, else the platform's) and the
    /// environment's overrides.
    pub fn load(dir: Option<&Path>) -> Result<Self, LaunchError> {
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => settings::config_dir().ok_or(LaunchError::NoConfigDir)?,
        };
        let settings_path = dir.join("config.toml");
        let settings = Settings::load(&settings_path)?;
        Ok(Self {
            settings,
            settings_path,
            secrets: SecretStore::detect(&dir),
            overrides: EnvOverrides::from_env(),
        })
    }

    pub fn resolve(&self, purpose: Purpose) -> Result<ResolvedProvider, LaunchError> {
        Ok(self
            .settings
            .resolve(purpose, &self.overrides, &self.secrets)?)
    }

    /// The workspace: `dir`, else the settings', else `~/Cairn`; made when missing.
    pub fn workspace(&self, dir: Option<&Path>) -> Result<Arc<Workspace>, LaunchError> {
        let dir = match dir.or(self.settings.workspace.as_deref()) {
            Some(dir) => dir.to_path_buf(),
            None => home_dir().ok_or(LaunchError::NoHome)?.join("Cairn"),
        };
        let workspace = Workspace::open_or_create(&dir)
            .map_err(|source| LaunchError::Workspace { dir, source })?;
        // Pictures of the conversation are read in the languages the index reads.
        let ocr = match self.settings.memory.ocr {
            Some(false) => Vec::new(),
            _ => super::reading::wanted(self),
        };
        Ok(Arc::new(
            workspace.with_folders(&self.memory_folders()).with_ocr(ocr),
        ))
    }

    /// `[memory] folders`, `~` expanded.
    pub fn memory_folders(&self) -> Vec<PathBuf> {
        let home = home_dir();
        self.settings
            .memory
            .folders
            .iter()
            .flatten()
            .map(|given| expand_home(given, home.as_deref()))
            .collect()
    }

    /// The chat provider and its model name.
    pub async fn chat(&self) -> Result<ChatModel, LaunchError> {
        let choice = self.model(Purpose::Chat).await?;
        Ok((choice.provider, choice.model))
    }

    /// The provider and model for `purpose` (`[models]` in the settings, else the chat model).
    pub async fn model(&self, purpose: Purpose) -> Result<ModelChoice, LaunchError> {
        let resolved = self.resolve(purpose)?;
        let provider = resolved
            .build()
            .await
            .map_err(|source| LaunchError::Provider {
                what: describe_failure(&resolved),
                source,
            })?;
        Ok(ModelChoice::new(provider, resolved.model))
    }

    /// The consolidation model, resolved now (settings and keys are checked here) and
    /// built only by a run that has daily logs to offer.
    pub fn consolidation_model(&self) -> Result<ModelSource, LaunchError> {
        let resolved = Arc::new(self.resolve(Purpose::Consolidation)?);
        let timeout = self.settings.timeouts.to_limits().consolidation;
        let load: ModelLoader = Box::new(move || {
            let resolved = resolved.clone();
            Box::pin(async move {
                let provider = resolved.build().await.map_err(|source| {
                    let failure = LaunchError::Provider {
                        what: describe_failure(&resolved),
                        source,
                    };
                    ConsolidateError::NoModel(failure.to_string())
                })?;
                Ok(ModelChoice::new(provider, resolved.model.clone()).with_timeout(timeout))
            })
        });
        Ok(ModelSource::OnDemand(load))
    }
}

/// The chat provider and the model name it runs.
pub type ChatModel = (Arc<dyn Provider>, String);

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

pub(crate) fn describe_failure(resolved: &ResolvedProvider) -> String {
    match resolved.kind() {
        // The model's own errors say what to do (fetch the bundled model, fix the path).
        ProviderKind::Local => format!(
            "the local model `{}` could not be loaded",
            resolved
                .model_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ),
        _ => format!("cannot use the provider `{}`", resolved.name),
    }
}

/// The session store of `workspace`.
pub fn store(workspace: &Workspace) -> SessionStore {
    SessionStore::with_catalog(
        workspace.sessions_dir(),
        workspace.state_dir().join("state.db"),
    )
}

/// Opens the named session, the latest one (`latest`), or a new one; repairs of a torn
/// file go to `warn`.
pub async fn session(
    store: &SessionStore,
    id: Option<&str>,
    latest: bool,
    warn: Warn<'_>,
) -> Result<OpenedSession, LaunchError> {
    let id = match (id, latest) {
        (Some(id), _) => Some(id.to_string()),
        (None, true) => store.latest()?,
        (None, false) => None,
    };
    let opened = match id {
        Some(id) => store.open(&id).await?,
        None => store.create()?,
    };
    for repair in &opened.repairs {
        warn(format!("session {}: {repair}", opened.tree.id()));
    }
    Ok(opened)
}

/// A path from the settings with a leading `~` taken as `home`.
pub fn expand_home(given: &str, home: Option<&Path>) -> PathBuf {
    match (given.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (_, Some(home)) if given == "~" => home.to_path_buf(),
        _ => PathBuf::from(given),
    }
}
