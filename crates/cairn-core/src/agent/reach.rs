//! What a run reaches beyond the workspace at its start: the tools of the user's MCP
//! servers, a prompt template or a skill invoked as `/name args`.

use cairn_protocol::{NoticeLevel, Outcome};

use super::flow::{Flow, Run};

impl Run {
    /// Offers the tools of the user's MCP servers as they are now (starting those not
    /// running); a server that is not available is told to the user once.
    pub(super) async fn attach_mcp_tools(&mut self) -> Flow {
        let Some(hub) = self.inner.mcp.clone() else {
            return Ok(());
        };
        let found = tokio::select! {
            found = hub.tools() => found,
            () = self.cancel.cancelled() => return Err(Outcome::Aborted),
        };
        for problem in found.problems {
            self.notice(NoticeLevel::Warning, problem);
        }
        let mut tools = self.settings.tools.clone();
        tools.replace_mcp(found.tools);
        // Subagents started by this run get them too.
        self.inner.state().settings.tools = tools.clone();
        self.settings.tools = tools;
        Ok(())
    }

    /// The skill `/name args` names, when `text` is such a call and the skill exists.
    pub(super) async fn invoked_skill(&self, text: &str) -> Option<crate::skills::Skill> {
        let (name, _) = crate::skills::invocation(text)?;
        let name = name.to_string();
        let root = self.inner.workspace.root().to_path_buf();
        let user = self.settings.config.user_skills.clone();
        let found =
            tokio::task::spawn_blocking(move || crate::skills::load(&root, user.as_deref()))
                .await
                .ok()?;
        found.get(&name).cloned()
    }

    /// `text` with the prompt template it invokes (`/name args`, `prompts/name.md`)
    /// expanded; as it is when it invokes none. A template that cannot be read is told,
    /// and the text goes as typed.
    pub(super) async fn expand_template(&self, text: String) -> String {
        let Some((name, _)) = crate::skills::invocation(&text) else {
            return text;
        };
        let name = name.to_string();
        let root = self.inner.workspace.root().to_path_buf();
        let Ok(found) = tokio::task::spawn_blocking(move || crate::prompts::load(&root)).await
        else {
            return text;
        };
        if let Some((_, expanded)) = crate::prompts::expand(&found, &text) {
            return expanded;
        }
        let file = format!("{}/{name}.md:", crate::prompts::FOLDER);
        if let Some(problem) = found.problems.iter().find(|p| p.starts_with(&file)) {
            self.notice(
                NoticeLevel::Warning,
                format!("the prompt template `{name}` cannot be used, so the message goes as typed: {problem}"),
            );
        }
        text
    }
}
