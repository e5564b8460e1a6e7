//! The environment a bash command gets: Cairn's own, minus what would hand it the user's
//! secrets (provider keys, Cairn's variables, the session bus that reaches the keyring).

use std::ffi::{OsStr, OsString};

use serde::{Deserialize, Serialize};

/// Variables never passed to a command unless `[tools.bash] pass_env` names them.
const REMOVED: [&str; 3] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    // The session bus reaches the Secret Service, which holds the keys.
    "DBUS_SESSION_BUS_ADDRESS",
];

/// Every variable starting with this is Cairn's own (keys, base URLs, scripts).
const CAIRN_PREFIX: &str = "CAIRN_";

/// `[tools.bash]` in config.toml.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct BashSettings {
    /// Variables passed on to commands even though they would be removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Command prefixes that run without asking, e.g. `["git status", "ls"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Command prefixes that are refused, e.g. `["git push", "rm -rf /"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// Which variables a command does not get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvScrub {
    /// More names to remove: the `api_key_env` of every configured provider.
    pub also_remove: Vec<String>,
    /// Names passed on whatever the rules say.
    pub pass: Vec<String>,
}

impl EnvScrub {
    /// Whether a variable named `name` is kept from the command.
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(scrub: &EnvScrub, vars: &[&str]) -> Vec<String> {
        let parent = vars
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
        let vars = [
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
            names(&scrub, &vars),
            ["PATH", "HOME", "CAIRN_WORKSPACE", "LANG"]
        );
        assert_eq!(
            names(&EnvScrub::default(), &["CAIRN_WORKSPACE", "MY_LLM_TOKEN"]),
            ["MY_LLM_TOKEN"]
        );
    }
}
