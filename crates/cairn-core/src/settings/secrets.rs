//! API keys: in the OS keyring (Secret Service on Linux) when one is running, otherwise in
//! a file only the user can read (`secrets.toml`, mode 0600, in the config folder). Never
//! in the workspace, never in logs (see [`Secret`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::SettingsError;

const SERVICE: &str = "cairn";

/// A key that does not show itself in logs or debug output.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Where keys are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretBackend {
    /// The OS keyring.
    Keyring,
    /// A 0600 file (no keyring service is running).
    File(PathBuf),
}

/// Stores one key per provider name.
#[derive(Debug, Clone)]
pub struct SecretStore {
    backend: SecretBackend,
}

impl SecretStore {
    /// The keyring when it answers, else the file in `config_dir`.
    pub fn detect(config_dir: &Path) -> Self {
        let file = config_dir.join("secrets.toml");
        if keyring_available() {
            Self {
                backend: SecretBackend::Keyring,
            }
        } else {
            Self {
                backend: SecretBackend::File(file),
            }
        }
    }

    /// Always the file (tests, and users who prefer it).
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            backend: SecretBackend::File(path.into()),
        }
    }

    pub fn backend(&self) -> &SecretBackend {
        &self.backend
    }

    pub fn get(&self, provider: &str) -> Result<Option<Secret>, SettingsError> {
        match &self.backend {
            SecretBackend::Keyring => match entry(provider)?.get_password() {
                Ok(key) => Ok(Some(Secret(key))),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(SettingsError::Secrets(e.to_string())),
            },
            SecretBackend::File(path) => Ok(read_file(path)?.remove(provider).map(Secret)),
        }
    }

    pub fn set(&self, provider: &str, key: &Secret) -> Result<(), SettingsError> {
        match &self.backend {
            SecretBackend::Keyring => entry(provider)?
                .set_password(key.expose())
                .map_err(|e| SettingsError::Secrets(e.to_string())),
            SecretBackend::File(path) => {
                let mut keys = read_file(path)?;
                keys.insert(provider.to_string(), key.expose().to_string());
                write_file(path, &keys)
            }
        }
    }

    /// Removes the key; true when there was one.
    pub fn delete(&self, provider: &str) -> Result<bool, SettingsError> {
        match &self.backend {
            SecretBackend::Keyring => match entry(provider)?.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(SettingsError::Secrets(e.to_string())),
            },
            SecretBackend::File(path) => {
                let mut keys = read_file(path)?;
                let had = keys.remove(provider).is_some();
                if had {
                    write_file(path, &keys)?;
                }
                Ok(had)
            }
        }
    }
}

fn entry(provider: &str) -> Result<keyring::Entry, SettingsError> {
    keyring::Entry::new(SERVICE, provider).map_err(|e| SettingsError::Secrets(e.to_string()))
}

/// Whether a keyring service answers (headless machines usually have none).
fn keyring_available() -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return false;
    }
    match keyring::Entry::new(SERVICE, "cairn-probe") {
        Ok(entry) => matches!(entry.get_password(), Ok(_) | Err(keyring::Error::NoEntry)),
        Err(_) => false,
    }
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct KeyFile {
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

fn read_file(path: &Path) -> Result<BTreeMap<String, String>, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(SettingsError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    tighten_permissions(path)?;
    let file: KeyFile = toml::from_str(&text).map_err(|e| SettingsError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })?;
    Ok(file.keys)
}

fn write_file(path: &Path, keys: &BTreeMap<String, String>) -> Result<(), SettingsError> {
    let text = toml::to_string(&KeyFile { keys: keys.clone() })
        .map_err(|e| SettingsError::Secrets(e.to_string()))?;
    cairn_memory::write_atomic(path, text.as_bytes(), Some(0o600)).map_err(|source| {
        SettingsError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A key file others can read is made private again (and the user warned).
fn tighten_permissions(path: &Path) -> Result<(), SettingsError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let io = |source| SettingsError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mode = std::fs::metadata(path).map_err(io)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                "{} was readable by others; made it private (0600)",
                path.display()
            );
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_fallback_stores_keys_privately() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::file(dir.path().join("cairn/secrets.toml"));
        assert_eq!(store.get("openai").unwrap(), None);
        store.set("openai", &Secret::new("sk-one")).unwrap();
        store.set("claude", &Secret::new("sk-two")).unwrap();
        assert_eq!(store.get("openai").unwrap(), Some(Secret::new("sk-one")));
        assert!(store.delete("openai").unwrap());
        assert!(!store.delete("openai").unwrap());
        assert_eq!(store.get("claude").unwrap().unwrap().expose(), "sk-two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = dir.path().join("cairn/secrets.toml");
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            store.get("claude").unwrap();
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }

    #[test]
    fn without_a_session_bus_the_file_is_used() {
        let dir = tempfile::tempdir().unwrap();
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            let store = SecretStore::detect(dir.path());
            assert_eq!(
                store.backend(),
                &SecretBackend::File(dir.path().join("secrets.toml"))
            );
        }
    }

    #[test]
    fn secrets_do_not_show_in_debug_output() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
    }
}
