//! `cairn prompts`: the workspace's prompt templates (`prompts/<name>.md`), each invoked as
//! `/name args` in a message.

use serde_json::json;

use crate::args::Cli;
use crate::escape::prose_line;
use crate::setup;

pub fn run(cli: &Cli, json: bool) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let found = cairn_app::cairn_core::prompts::load(workspace.root());
    if json {
        let prompts: Vec<_> = found
            .prompts
            .iter()
            .map(|p| {
                json!({"name": p.name, "description": p.description, "arguments": p.arguments,
                       "usage": p.usage(), "path": p.path()})
            })
            .collect();
        println!(
            "{}",
            json!({"prompts": prompts, "problems": found.problems})
        );
        return Ok(0);
    }
    if found.prompts.is_empty() {
        println!(
            "no prompt templates: add prompts/<name>.md (front matter: description, arguments) \
             and call it as /name in a message"
        );
    }
    for prompt in &found.prompts {
        println!(
            "{}  {}",
            prose_line(&prompt.usage()),
            prose_line(&prompt.description)
        );
    }
    for problem in &found.problems {
        eprintln!("left out: {}", prose_line(problem));
    }
    Ok(0)
}
