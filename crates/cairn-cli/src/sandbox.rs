//! `cairn doctor`'s shell sandbox section: whether bash commands are held, why not when
//! they are not, and a short battery run inside the sandbox with each result.

use crate::setup::Config;
use cairn_app::cairn_process::{SandboxStatus, SelfTestPaths};

use crate::args::Cli;
use crate::models::{bad, ok};

/// Prints the sandbox's checks; returns the number of problems.
pub async fn check(cli: &Cli, config: &Config) -> u32 {
    println!("\nshell sandbox");
    let choice = cairn_app::launch::sandbox_choice(config);
    if !choice.on {
        println!(
            "  · off (`[tools.bash] sandbox = false`): every bash command asks and runs with \
             all your rights"
        );
        return 0;
    }
    let workspace = match crate::setup::workspace(cli, config) {
        Ok(workspace) => workspace,
        Err(e) => {
            return bad(
                &format!("no workspace to try it in: {e}"),
                "check --workspace",
            )
        }
    };
    let root = workspace.root();
    let sandbox = choice.sandbox(root);
    match SandboxStatus::of(sandbox.clone()) {
        SandboxStatus::Active(_) => {
            let network = if choice.network { "on" } else { "off" };
            ok(&format!(
                "bubblewrap holds every bash command (network {network})"
            ));
        }
        SandboxStatus::Off => {}
        SandboxStatus::Unavailable(why) => {
            return bad(
                &format!("the sandbox cannot start: {why}"),
                "until it can, every bash command asks and \"always\" offers nothing",
            )
        }
    }
    let paths = SelfTestPaths {
        outside: dirs_home().unwrap_or_else(|| root.join("..")),
        protected: root.join(".cairn"),
        config: config
            .settings_path
            .parent()
            .map_or_else(|| root.join(".cairn"), |d| d.to_path_buf()),
    };
    let mut problems = 0;
    for why in sandbox.refusals() {
        problems += bad(&why, "commands get the default there; change the setting");
    }
    let scrub = cairn_app::launch::env_scrub(&config.settings);
    for check in cairn_app::cairn_process::self_test(&sandbox, &paths, &scrub).await {
        let line = format!("{}: {}", check.name, check.detail);
        match check.passed {
            true => ok(&line),
            false => problems += bad(&line, "report this: the sandbox let it through"),
        }
    }
    if let Some(advice) = cairn_app::cairn_process::git_bare_repositories().await {
        println!("  · {advice}");
    }
    problems
}

fn dirs_home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(std::path::PathBuf::from)
}
