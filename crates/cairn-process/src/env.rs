//! The environment a child process gets: Cairn's own, minus what would hand it the user's
//! secrets (provider keys, Cairn's variables, the session bus that reaches the keyring), and
//! git's protected settings for commands the model writes.

use std::ffi::{OsStr, OsString};

/// Variables never passed to a child unless `pass` names them.
const REMOVED: [&str; 3] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    // The session bus reaches the Secret Service, which holds the keys.
    "DBUS_SESSION_BUS_ADDRESS",
];

/// Every variable starting with this is Cairn's own (keys, base URLs, scripts).
const CAIRN_PREFIX: &str = "CAIRN_";

/// Which variables a child does not get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvScrub {
    /// More names to remove: the `api_key_env` of every configured provider.
    pub also_remove: Vec<String>,
    /// Names passed on whatever the rules say (`[tools.bash] pass_env`).
    pub pass: Vec<String>,
}

impl EnvScrub {
    /// Whether a variable named `name` is kept from the child.
    pub fn removes(&self, name: &OsStr) -> bool {
        let Some(name) = name.to_str() else {
            return false;
        };
        if self.pass.iter().any(|p| p == name) {
            return false;
        }
        REMOVED.contains(&name)
            || name.starts_with(CAIRN_PREFIX)
            || self.also_remove.iter().any(|r| r == name)
    }

    /// `parent` without the removed variables.
    pub fn apply(
        &self,
        parent: impl Iterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        parent.filter(|(name, _)| !self.removes(name)).collect()
    }
}

/// Adds `safe.bareRepository=explicit` to git's command-line scope through the
/// environment (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`), after any
/// such settings `env` already holds. git reads this setting only from protected scopes,
/// never from a repository's own config, so a folder made to look like a bare repository
/// (`HEAD`, `config` with `core.fsmonitor`, `objects/`, `refs/`) is never taken for one.
pub fn protect_git(env: &mut Vec<(OsString, OsString)>) {
    let count_of = |env: &[(OsString, OsString)]| {
        env.iter()
            .find(|(k, _)| k == "GIT_CONFIG_COUNT")
            .and_then(|(_, v)| v.to_str()?.trim().parse::<usize>().ok())
    };
    let kept = match count_of(env) {
        Some(n) => n,
        None => {
            // Missing or unreadable: git would refuse the whole scope, so start it afresh.
            env.retain(|(k, _)| !k.to_string_lossy().starts_with("GIT_CONFIG_"));
            0
        }
    };
    env.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
    env.push((
        format!("GIT_CONFIG_KEY_{kept}").into(),
        "safe.bareRepository".into(),
    ));
    env.push((format!("GIT_CONFIG_VALUE_{kept}").into(), "explicit".into()));
    env.push(("GIT_CONFIG_COUNT".into(), (kept + 1).to_string().into()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn names(scrub: &EnvScrub, list: &[&str]) -> Vec<String> {
        let parent = list
            .iter()
            .map(|v| (OsString::from(v), OsString::from("x")));
        scrub
            .apply(parent)
            .into_iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn keys_cairn_variables_and_the_session_bus_are_removed() {
        let scrub = EnvScrub {
            also_remove: vec!["MY_LLM_TOKEN".into()],
            pass: vec!["CAIRN_WORKSPACE".into()],
        };
        let list = [
            "PATH",
            "HOME",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "CAIRN_SCRIPT",
            "CAIRN_WORKSPACE",
            "DBUS_SESSION_BUS_ADDRESS",
            "MY_LLM_TOKEN",
            "LANG",
        ];
        assert_eq!(
            names(&scrub, &list),
            ["PATH", "HOME", "CAIRN_WORKSPACE", "LANG"]
        );
        assert_eq!(
            names(&EnvScrub::default(), &["CAIRN_WORKSPACE", "MY_LLM_TOKEN"]),
            ["MY_LLM_TOKEN"]
        );
    }

    #[test]
    fn git_protection_follows_the_settings_already_there() {
        let mut env = vars(&[("PATH", "/bin")]);
        protect_git(&mut env);
        let expected = [
            ("PATH", "/bin"),
            ("GIT_CONFIG_KEY_0", "safe.bareRepository"),
            ("GIT_CONFIG_VALUE_0", "explicit"),
            ("GIT_CONFIG_COUNT", "1"),
        ];
        assert_eq!(env, vars(&expected));
        let mut env = vars(&[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "Ann"),
        ]);
        protect_git(&mut env);
        let expected = [
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "Ann"),
            ("GIT_CONFIG_KEY_1", "safe.bareRepository"),
            ("GIT_CONFIG_VALUE_1", "explicit"),
            ("GIT_CONFIG_COUNT", "2"),
        ];
        assert_eq!(env, vars(&expected));
        let mut env = vars(&[("GIT_CONFIG_COUNT", "x"), ("GIT_CONFIG_KEY_0", "a.b")]);
        protect_git(&mut env);
        assert_eq!(env.last(), Some(&("GIT_CONFIG_COUNT".into(), "1".into())));
        assert_eq!(env.len(), 3);
    }
}
