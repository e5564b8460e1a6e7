//! Gather: the workspace context every model call starts from (the system prompt plus
//! AGENTS.md, the user's standing instructions).

use cairn_memory::Workspace;

const BUILTIN_PROMPT: &str = include_str!("prompts/system.md");
/// AGENTS.md beyond this many characters is cut (and the model told where to read the rest).
const AGENTS_BUDGET: usize = 24_000;

/// The system prompt for a run and what went wrong building it.
pub(super) struct Gathered {
    pub system_prompt: String,
    pub warnings: Vec<String>,
}

/// Composes the system prompt: `base` (or the built-in prompt), the date and the workspace,
/// then AGENTS.md.
pub(super) async fn gather(workspace: &Workspace, base: Option<&str>) -> Gathered {
    let mut warnings = Vec::new();
    let mut prompt = base.unwrap_or(BUILTIN_PROMPT).trim_end().to_string();
    prompt.push_str(&format!(
        "\n\nToday is {}. The workspace is {}.",
        chrono::Local::now().format("%A %Y-%m-%d"),
        workspace.root().display()
    ));
    let agents_path = workspace.root().join("AGENTS.md");
    match tokio::fs::read_to_string(&agents_path).await {
        Ok(text) if !text.trim().is_empty() => {
            prompt.push_str("\n\n# Workspace instructions (AGENTS.md)\n\n");
            prompt.push_str(&cut(&text, AGENTS_BUDGET));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => warnings.push(format!("AGENTS.md could not be read and was left out: {e}")),
    }
    Gathered {
        system_prompt: prompt,
        warnings,
    }
}

fn cut(text: &str, budget: usize) -> String {
    if text.len() <= budget {
        return text.to_string();
    }
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[AGENTS.md continues beyond this point; read the rest with read_file]",
        &text[..end]
    )
}
