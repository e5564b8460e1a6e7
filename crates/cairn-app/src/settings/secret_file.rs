//! The key file used where no OS keyring exists (headless Linux without a Secret
//! Service): `secrets.toml` in the config folder, readable only by the user on Unix.
//! Updates from several processes (the CLI and the desktop app) are serialised by an OS
//! file lock on `secrets.toml.lock` and written atomically, so none is lost. A file that
//! cannot be read is reported by line number, never by its text.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::error::SettingsError;

/// How the key file is protected, said after its path.
#[cfg(unix)]
pub(super) const PROTECTION: &str = "readable only by you";
/// Windows: the file carries no ACL of its own; it relies on the profile folder's.
#[cfg(windows)]
pub(super) const PROTECTION: &str = "protected only by the permissions of your user profile folder";
#[cfg(not(any(unix, windows)))]
pub(super) const PROTECTION: &str = "protected only by the permissions of its folder";

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct KeyFile {
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

pub(super) type Keys = BTreeMap<String, String>;

/// The keys in the file at `path` (none when it does not exist).
pub(super) fn read(path: &Path) -> Result<Keys, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => return Err(io_error(path, source)),
    };
    tighten_permissions(path)?;
    let file: KeyFile = toml::from_str(&text).map_err(|e| SettingsError::Invalid {
        path: path.to_path_buf(),
        message: unreadable(&text, e.span()),
    })?;
    Ok(file.keys)
}

/// Reads the keys, lets `change` edit them and writes them back when it returns true,
/// all under the file lock, so concurrent updates (threads or processes) each see the
/// one before. Returns what `change` returned.
pub(super) fn update(
    path: &Path,
    change: impl FnOnce(&mut Keys) -> bool,
) -> Result<bool, SettingsError> {
    let _lock = lock(path)?;
    let mut keys = read(path)?;
    let changed = change(&mut keys);
    if changed {
        write(path, keys)?;
    }
    Ok(changed)
}

/// A parse error without the text of the line: toml's own message quotes it (and
/// serde's may quote the value), and the line may hold a key.
fn unreadable(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    const FORM: &str = "each key is a line `provider = \"key\"` under `[keys]`";
    match span {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text.as_bytes()[..start]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            format!(
                "line {line} cannot be read ({FORM}; the line is not shown, as it may hold a key)"
            )
        }
        None => format!("the file cannot be read ({FORM})"),
    }
}

fn write(path: &Path, keys: Keys) -> Result<(), SettingsError> {
    let text = toml::to_string(&KeyFile { keys })
        .map_err(|_| SettingsError::Secrets("cannot write the key file".into()))?;
    cairn_memory::write_atomic(path, text.as_bytes(), Some(0o600))
        .map_err(|source| io_error(path, source))
}

/// Waits for and holds the lock beside the key file (`<name>.lock`); the file itself is
/// replaced on every write, so it cannot carry the lock.
fn lock(path: &Path) -> Result<File, SettingsError> {
    let lock_path = lock_path(path);
    if let Some(parent) = lock_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| io_error(parent, source))?;
    }
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(&lock_path)
        .map_err(|source| io_error(&lock_path, source))?;
    file.lock().map_err(|source| io_error(&lock_path, source))?;
    Ok(file)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

fn io_error(path: &Path, source: std::io::Error) -> SettingsError {
    SettingsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A key file others can read is made private again (and the user warned). Elsewhere the
/// file has the permissions of its folder (on Windows, the user profile's).
fn tighten_permissions(path: &Path) -> Result<(), SettingsError> {
    #[cfg(not(unix))]
    let _ = path;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| io_error(path, e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                "{} was readable by others; made it private (0600)",
                path.display()
            );
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| io_error(path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const KEY: &str = "sk-live-51HxQeYdontLeakThis0123456789";

    #[test]
    fn a_malformed_file_names_the_line_but_never_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.toml");
        for (text, line) in [
            // Unterminated string: toml quotes the whole line in its message.
            (format!("[keys]\nclaude = \"sk-ok\"\nopenai = \"{KEY}\n"), 3),
            // A bare value: toml quotes the line.
            (format!("[keys]\nopenai = {KEY}\n"), 2),
            // Valid TOML of the wrong shape: serde quotes the value.
            (format!("keys = \"{KEY}\"\n"), 1),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = read(&path).unwrap_err().to_string();
            assert!(!err.contains(KEY), "{err}");
            assert!(!err.contains("sk-live"), "{err}");
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            assert!(
                err.contains(&format!("line {line} cannot be read")),
                "{err}"
            );
        }
    }

    #[test]
    fn concurrent_updates_from_many_threads_lose_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn/secrets.toml");
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    update(&path, |keys| {
                        keys.insert(format!("provider{i}"), format!("sk-{i}"));
                        true
                    })
                    .unwrap();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let keys = read(&path).unwrap();
        let expected: Keys = (0..16)
            .map(|i| (format!("provider{i}"), format!("sk-{i}")))
            .collect();
        assert_eq!(keys, expected);
    }
}
