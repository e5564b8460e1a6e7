//! git's settings as a sandboxed command sees them: the user's `~/.gitconfig` and
//! `~/.config/git/config` (their name, aliases, colours) without what hands out a
//! credential: `[credential]` sections (helpers, some of them with a token inline), URL
//! rewrites that carry a user or token (`[url "https://TOKEN@host/"]`), HTTP headers
//! (`http.extraHeader`), any key naming a password or token, and includes (which lead to
//! files of the hidden home). The copy is written into Cairn's cache in that home
//! (`~/.cache/cairn/sandbox/`, with the original's permissions) and bound read-only where
//! the original was; the original is never shown.

use std::path::{Path, PathBuf};

/// The settings files looked for, relative to the home.
const FILES: [&str; 2] = [".gitconfig", ".config/git/config"];

/// Larger settings files are not shown at all.
const MAX_BYTES: u64 = 1 << 20;

/// For each of git's settings files in `home`: the filtered copy, and where it is shown.
pub(crate) fn shown(home: &Path) -> Vec<(PathBuf, PathBuf)> {
    FILES
        .iter()
        .filter_map(|name| {
            let at = home.join(name);
            let meta = std::fs::metadata(&at).ok()?;
            if !meta.is_file() || meta.len() > MAX_BYTES {
                return None;
            }
            let text = std::fs::read_to_string(&at).ok()?;
            let copy = write_copy(home, &without_credentials(&text), &meta).ok()?;
            Some((copy, at))
        })
        .collect()
}

/// `text` (a git config file) without the sections and keys that carry credentials.
pub(crate) fn without_credentials(text: &str) -> String {
    let mut out = String::new();
    let mut dropping = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(header) = trimmed.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or_default();
            dropping = secret_section(header);
            // A key may follow the header on its line: `[core] editor = vim`.
            if !dropping {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        if dropping || secret_key(trimmed) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Whether a section (`credential "https://host"`, `url.https://t@host/`, `include`)
/// carries credentials or leads elsewhere.
fn secret_section(header: &str) -> bool {
    let lower = header.trim().to_ascii_lowercase();
    let name = lower
        .split(|c: char| c == '"' || c == '.' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    match name {
        "credential" | "include" | "includeif" => true,
        "url" => lower.contains('@'),
        _ => false,
    }
}

/// Whether a key line sets a header, a password or a token.
fn secret_key(line: &str) -> bool {
    let key = line
        .split('=')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    ["extraheader", "password", "token", "secret"]
        .iter()
        .any(|word| key.contains(word))
}

/// Writes `text` into Cairn's folder in `home` under a name of its content, once, with
/// the permissions of the original (`meta`).
fn write_copy(home: &Path, text: &str, meta: &std::fs::Metadata) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let dir = copies_dir(home)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let path = dir.join(format!("gitconfig-{:016x}", hasher.finish()));
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
        return Ok(path);
    }
    // Written aside, then renamed: a sandbox starting meanwhile reads a whole file.
    let aside = dir.join(format!(".gitconfig-{}", uuid::Uuid::new_v4()));
    std::fs::write(&aside, text)?;
    let placed = std::fs::set_permissions(&aside, meta.permissions())
        .and_then(|()| std::fs::rename(&aside, &path));
    if placed.is_err() {
        let _ = std::fs::remove_file(&aside);
    }
    placed.map(|()| path)
}

/// `<home>/.cache/cairn/sandbox`, made if missing: passable (to whoever starts the
/// sandbox), not listable by others.
fn copies_dir(home: &Path) -> std::io::Result<PathBuf> {
    let dir = home.join(".cache").join("cairn").join("sandbox");
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o711)
            .create(&dir)?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn credentials_headers_tokens_and_includes_are_left_out() {
        let text = "\
[user]
\tname = Ann
\temail = ann@example.org
[credential]
\thelper = \"!f() { echo password=ghp_inline; }; f\"
[credential \"https://gitlab.example\"]
\tusername = ann
[url \"https://ghp_token@github.com/\"]
\tinsteadOf = https://github.com/
[url \"git@github.com:\"]
\tinsteadOf = gh:
[http \"https://git.example\"]
\textraHeader = Authorization: Bearer abc
\tsslVerify = true
[include]
\tpath = ~/.secret-gitconfig
[alias]
\tst = status
\tgithub-token = ghp_alias
";
        let want = "\
[user]
\tname = Ann
\temail = ann@example.org
[http \"https://git.example\"]
\tsslVerify = true
[alias]
\tst = status
";
        assert_eq!(without_credentials(text), want);
    }
}
