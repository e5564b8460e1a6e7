//! `cairn key set | delete`: the keys of providers and of web search services; each says
//! where keys are kept (the system keyring, or the key file where there is none).

use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;
use cairn_app::settings::Secret;

use crate::args::{Cli, KeyCommand};
use crate::setup;

pub fn run(cli: &Cli, command: &KeyCommand) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    match command {
        KeyCommand::Set { provider } => {
            // Fails early for names that are neither configured, a provider kind nor a
            // search service that takes a key (brave, tavily, exa).
            config
                .settings
                .check_key_name(provider, &config.overrides, &config.secrets)?;
            let key = read_key(provider)?;
            config.secrets.set(provider, &Secret::new(key))?;
            eprintln!("stored the key for {provider}");
        }
        KeyCommand::Delete { provider } => {
            if config.secrets.delete(provider)? {
                eprintln!("removed the key for {provider}");
            } else {
                eprintln!("no key was stored for {provider}");
            }
        }
    }
    eprintln!("{}", config.secrets.backend().describe());
    Ok(0)
}

fn read_key(provider: &str) -> anyhow::Result<String> {
    let key = if std::io::stdin().is_terminal() {
        eprint!("API key for {provider} (not shown): ");
        std::io::stderr().flush()?;
        rpassword::read_password()?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line
    };
    let key = key.trim().to_string();
    if key.is_empty() {
        bail!("no key given");
    }
    Ok(key)
}
