//! The command list as the page sees it: `ui/src/api/commands.ts` is made from
//! [`COMMANDS`](crate::commands::COMMANDS), and a test fails while the file in the tree is
//! not what the list makes (`CAIRN_UPDATE_IPC=1 cargo test -p cairn-desktop contract`
//! writes it). The page's `invoke` takes only these names, so a command renamed or
//! removed here is an error where the page still calls it.

/// The TypeScript module for `commands`.
pub fn commands_ts(commands: &[&str]) -> String {
    let mut out = String::from(
        "// Made from src-tauri/src/commands/names.rs; do not edit. A test of cairn-desktop\n\
         // checks it; `CAIRN_UPDATE_IPC=1 cargo test -p cairn-desktop contract` writes it.\n\n\
         /** Every command the page may call. */\nexport const COMMANDS = [\n",
    );
    for command in commands {
        out.push_str(&format!("  \"{command}\",\n"));
    }
    out.push_str("] as const;\n\nexport type Command = (typeof COMMANDS)[number];\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_the_command_list_the_shell_registers() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/api/commands.ts");
        let made = commands_ts(crate::commands::COMMANDS);
        if std::env::var_os("CAIRN_UPDATE_IPC").is_some() {
            std::fs::write(&path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == made,
            "{} is not the command list of names.rs: run \
             `CAIRN_UPDATE_IPC=1 cargo test -p cairn-desktop contract` and commit it",
            path.display()
        );
    }

    #[test]
    fn every_name_is_a_plain_identifier() {
        for command in crate::commands::COMMANDS {
            assert!(
                command.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{command}"
            );
        }
    }
}
