//! The environment a child process gets: Cairn's own, minus what would hand it the user's
//! secrets (provider keys, Cairn's variables, the session bus that reaches the keyring), and
//! git's protected settings for commands the model writes. A command the model wrote gets
//! less: only the variables a program needs to run ([`KEPT`]), whatever else the user's
//! environment holds (`GITHUB_TOKEN`, `AWS_*`, `HF_TOKEN` …), unless `pass_env` names it.

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

/// What a command the model wrote gets of Cairn's environment (besides `pass_env`): where
/// programs are and whose they are, the language and terminal, the toolchains' own folders,
/// certificates and proxies. A name ending in `*` stands for every name it starts.
pub const KEPT: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "HOSTNAME",
    "PWD",
    "SHLVL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "COLUMNS",
    "LINES",
    "EDITOR",
    "VISUAL",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "RUST_BACKTRACE",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
    "NVM_DIR",
    "NVM_BIN",
    "NODE_PATH",
    "VOLTA_HOME",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "JAVA_HOME",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "SDKMAN_DIR",
    "CC",
    "CXX",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// Parts of a name that make it look like a secret's: such a variable reaches a command
/// only when `pass_env` names it, whatever other list holds it.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "AUTH",
    "COOKIE",
    "SESSION",
];

/// Which variables a child does not get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvScrub {
    /// More names to remove: the `api_key_env` of every configured provider.
    pub also_remove: Vec<String>,
    /// Names passed on whatever the rules say (`[tools.bash] pass_env`).
    pub pass: Vec<String>,
    /// Only the names of [`KEPT`] (and `pass`) reach the child: a command the model wrote.
    pub allow_only: bool,
}

impl EnvScrub {
    /// The same scrub for commands the model wrote: only [`KEPT`] and `pass`.
    pub fn for_commands(&self) -> Self {
        Self {
            allow_only: true,
            ..self.clone()
        }
    }

    /// Whether a variable named `name` (whose value is `value`) is kept from the child.
    pub fn removes(&self, name: &OsStr, value: &OsStr) -> bool {
        let Some(name) = name.to_str() else {
            return self.allow_only;
        };
        if self.pass.iter().any(|p| p == name) {
            return false;
        }
        if self.allow_only && !kept(name, value) {
            return true;
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
        parent
            .filter(|(name, value)| !self.removes(name, value))
            .collect()
    }
}

/// Whether `name` is one of [`KEPT`] and looks like no secret; a proxy only without a
/// user or password in it.
fn kept(name: &str, value: &OsStr) -> bool {
    let listed = KEPT.iter().any(|k| match k.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => *k == name,
    });
    let upper = name.to_ascii_uppercase();
    let secret = SECRET_WORDS.iter().any(|w| upper.contains(w));
    let proxy_with_user = upper.ends_with("_PROXY") && value.to_string_lossy().contains('@');
    listed && !secret && !proxy_with_user
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
            allow_only: false,
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
    fn commands_get_only_what_programs_need_and_what_pass_env_names() {
        let scrub = EnvScrub {
            also_remove: vec!["MY_LLM_KEY".into()],
            pass: vec!["GITHUB_TOKEN".into(), "MY_LLM_KEY".into()],
            allow_only: false,
        }
        .for_commands();
        let list = [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "TERM",
            "CARGO_HOME",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "GEMINI_API_KEY",
            "HF_TOKEN",
            "MY_LLM_KEY",
            "OPENAI_API_KEY",
            "CAIRN_WORKSPACE",
            "SOME_TOOL_SETTING",
            "LC_AUTH_TOKEN",
        ];
        assert_eq!(
            names(&scrub, &list),
            [
                "PATH",
                "HOME",
                "LANG",
                "LC_ALL",
                "TERM",
                "CARGO_HOME",
                "GITHUB_TOKEN",
                "MY_LLM_KEY"
            ]
        );
        let proxies = vars(&[
            ("https_proxy", "http://proxy:3128"),
            ("HTTP_PROXY", "http://ann:pw@proxy:3128"),
        ]);
        let kept: Vec<_> = scrub
            .apply(proxies.into_iter())
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(kept, ["https_proxy"]);
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
