//! API keys: in the OS keyring (Keychain on macOS, Credential Manager on Windows, Secret
//! Service on Linux) when one answers, otherwise in a key file in the config folder (see
//! [`secret_file`](super::secret_file)). Never in the workspace, never in logs or errors
//! (see [`Secret`]).

use std::path::{Path, PathBuf};

use super::error::SettingsError;
use super::secret_file;

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
    /// The key file (no keyring answers on this machine).
    File(PathBuf),
}

impl SecretBackend {
    /// Where keys are kept, as one sentence for the settings page and `cairn key`.
    pub fn describe(&self) -> String {
        match self {
            Self::Keyring => "Keys are kept in the system keyring".to_string(),
            Self::File(path) => format!(
                "No system keyring was found: keys are kept in {}, {}",
                path.display(),
                secret_file::PROTECTION
            ),
        }
    }
}

/// Stores one key per provider name.
#[derive(Debug, Clone)]
pub struct SecretStore {
    backend: SecretBackend,
}

impl SecretStore {
    /// The keyring when it answers, else the file in `config_dir`.
    pub fn detect(config_dir: &Path) -> Self {
        let backend = if keyring_available() {
            SecretBackend::Keyring
        } else {
            SecretBackend::File(config_dir.join("secrets.toml"))
        };
        Self { backend }
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
                Err(e) => Err(keyring_error(&e)),
            },
            SecretBackend::File(path) => Ok(secret_file::read(path)?.remove(provider).map(Secret)),
        }
    }

    pub fn set(&self, provider: &str, key: &Secret) -> Result<(), SettingsError> {
        match &self.backend {
            SecretBackend::Keyring => entry(provider)?
                .set_password(key.expose())
                .map_err(|e| keyring_error(&e)),
            SecretBackend::File(path) => {
                secret_file::update(path, |keys| {
                    keys.insert(provider.to_string(), key.expose().to_string());
                    true
                })?;
                Ok(())
            }
        }
    }

    /// Removes the key; true when there was one.
    pub fn delete(&self, provider: &str) -> Result<bool, SettingsError> {
        match &self.backend {
            SecretBackend::Keyring => match entry(provider)?.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(keyring_error(&e)),
            },
            SecretBackend::File(path) => {
                secret_file::update(path, |keys| keys.remove(provider).is_some())
            }
        }
    }
}

fn entry(provider: &str) -> Result<keyring::Entry, SettingsError> {
    keyring::Entry::new(SERVICE, provider).map_err(|e| keyring_error(&e))
}

/// The keyring's error, told without anything it holds (an ambiguous match lists the
/// matching credentials).
fn keyring_error(e: &keyring::Error) -> SettingsError {
    let message = match e {
        keyring::Error::Ambiguous(items) => {
            format!("{} keyring entries match; remove all but one", items.len())
        }
        keyring::Error::BadEncoding(_) => "the stored key is not UTF-8 text".to_string(),
        other => other.to_string(),
    };
    SettingsError::Secrets(message)
}

/// Whether a keyring that keeps keys on disk answers. A build without a native store
/// for this platform gets keyring's in-memory mock, which does not count.
fn keyring_available() -> bool {
    use keyring::credential::CredentialPersistence;
    if !session_bus_present() {
        return false;
    }
    let builder = keyring::default::default_credential_builder();
    if !matches!(builder.persistence(), CredentialPersistence::UntilDelete) {
        return false;
    }
    match keyring::Entry::new(SERVICE, "cairn-probe") {
        Ok(entry) => matches!(entry.get_password(), Ok(_) | Err(keyring::Error::NoEntry)),
        Err(_) => false,
    }
}

/// The Secret Service lives on the D-Bus session bus: without one (headless machines,
/// CI) there is no keyring to ask. macOS and Windows always have theirs.
fn session_bus_present() -> bool {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

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
    fn without_a_session_bus_the_file_is_used_and_said() {
        let dir = tempfile::tempdir().unwrap();
        if cfg!(target_os = "linux") && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            let store = SecretStore::detect(dir.path());
            let path = dir.path().join("secrets.toml");
            assert_eq!(store.backend(), &SecretBackend::File(path.clone()));
            assert_eq!(
                store.backend().describe(),
                format!(
                    "No system keyring was found: keys are kept in {}, readable only by you",
                    path.display()
                )
            );
        }
        assert_eq!(
            SecretBackend::Keyring.describe(),
            "Keys are kept in the system keyring"
        );
    }

    /// Every desktop platform has a native store compiled in: keyring's in-memory mock
    /// (what a build without the platform's feature gets) would lose keys on exit.
    #[test]
    fn the_build_has_a_keyring_that_keeps_keys() {
        use keyring::credential::CredentialPersistence;
        let persistence = keyring::default::default_credential_builder().persistence();
        assert!(matches!(persistence, CredentialPersistence::UntilDelete));
    }

    #[test]
    fn secrets_do_not_show_in_debug_output() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
    }
}
