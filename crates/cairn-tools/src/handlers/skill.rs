//! `skill`: loads a skill's instructions and lists the files beside its SKILL.md, or reads
//! one of those files (for skills in the user's folder, which the file tools cannot reach).

use std::path::PathBuf;

use async_trait::async_trait;
use cairn_memory::beneath::{self, EntryKind};
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::skills::{self, Skill, SkillHome};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Files listed at most, and how deep.
const MAX_FILES: usize = 100;
const MAX_DEPTH: usize = 4;
/// The largest file `skill{name, file}` returns.
const MAX_FILE_BYTES: u64 = 256 << 10;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillArgs {
    name: String,
    #[serde(default)]
    file: Option<String>,
}

/// Loads skills from the workspace and `user_dir`.
pub struct SkillTool {
    pub user_dir: Option<PathBuf>,
}

#[async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "skill".into(),
            description: "Load a skill listed under Skills: its instructions and the files beside \
                its SKILL.md (scripts, references). Follow the instructions. With `file`, returns \
                one of those files."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's name."},
                    "file": {"type": "string", "description": "A file of the skill, relative to its folder (e.g. `reference.md`)."}
                },
                "required": ["name"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: SkillArgs = parse_args(args)?;
        let root = ctx.workspace.root().to_path_buf();
        let user_dir = self.user_dir.clone();
        tokio::task::spawn_blocking(move || answer(&root, user_dir.as_deref(), args))
            .await
            .map_err(|e| ToolError::Failed(format!("the skill could not be read: {e}")))?
    }
}

fn answer(
    workspace: &std::path::Path,
    user_dir: Option<&std::path::Path>,
    args: SkillArgs,
) -> Result<ToolOutput, ToolError> {
    let found = skills::load(workspace, user_dir);
    let Some(skill) = found.get(&args.name) else {
        let broken = found
            .problems
            .iter()
            .find(|p| p.contains(&format!("{}/SKILL.md:", args.name)));
        let names: Vec<&str> = found.skills.iter().map(|s| s.name.as_str()).collect();
        return Err(ToolError::Failed(match broken {
            Some(problem) => format!("the skill `{}` cannot be used: {problem}", args.name),
            None if names.is_empty() => "there are no skills".to_string(),
            None => format!(
                "there is no skill named `{}`; the skills are: {}",
                args.name,
                names.join(", ")
            ),
        }));
    };
    match args.file {
        Some(file) => read_file(workspace, skill, &file),
        None => Ok(ToolOutput::ok(overview(workspace, skill))),
    }
}

/// The instructions, then the files beside them.
fn overview(workspace: &std::path::Path, skill: &Skill) -> String {
    let mut text = format!(
        "# Skill `{}` ({})\n\n{}\n",
        skill.name,
        skill.shown_path(),
        skill.instructions
    );
    let (root, folder) = skill.root(workspace);
    let mut files = Vec::new();
    list(&root, &folder, "", 0, &mut files);
    files.retain(|f| f != "SKILL.md");
    if !files.is_empty() {
        let how = match skill.home {
            SkillHome::Workspace => {
                format!("read them with read_file at `{folder}/<file>` or with skill{{name, file}}")
            }
            SkillHome::User(_) => "read them with skill{name, file}".to_string(),
        };
        text.push_str(&format!("\nFiles of this skill ({how}):\n"));
        for file in &files {
            text.push_str(&format!("- {file}\n"));
        }
        if files.len() >= MAX_FILES {
            text.push_str("- … (more not listed)\n");
        }
    }
    text
}

/// The files under `folder/sub` beneath `root`, as paths relative to `folder`.
fn list(root: &std::path::Path, folder: &str, sub: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let dir = if sub.is_empty() {
        folder.to_string()
    } else {
        format!("{folder}/{sub}")
    };
    let Ok(mut entries) = beneath::entries(root, &dir) else {
        return;
    };
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for entry in entries {
        let name = entry.name.to_string_lossy().to_string();
        if name.starts_with('.') || out.len() >= MAX_FILES {
            continue;
        }
        let rel = if sub.is_empty() {
            name
        } else {
            format!("{sub}/{name}")
        };
        match entry.kind {
            EntryKind::Dir => list(root, folder, &rel, depth + 1, out),
            EntryKind::File => out.push(rel),
            _ => {}
        }
    }
}

/// One file of the skill, read beneath the skill's folder (no `..` out, no links out).
fn read_file(
    workspace: &std::path::Path,
    skill: &Skill,
    file: &str,
) -> Result<ToolOutput, ToolError> {
    let file = file.trim().trim_start_matches("./");
    if file.is_empty() || file.starts_with('/') || file.split(['/', '\\']).any(|p| p == "..") {
        return Err(ToolError::Failed(format!(
            "`{file}` is not a file of the skill (give a path inside its folder)"
        )));
    }
    // The skill's own folder is the root: a link may not lead out of it, not even to
    // another file of the folder above (a user skill's `ref.md -> ../../secrets.toml`).
    let (root, folder) = skill.root(workspace);
    let bytes = beneath::read(&root.join(folder), file, MAX_FILE_BYTES)
        .map_err(|e| ToolError::Failed(format!("{file}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("{file} is not a text file")))?;
    Ok(ToolOutput::ok(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};

    /// A skill laid out as skill repositories ship them.
    fn pdf_skill(ws: &TestWs) {
        ws.write(
            "skills/pdf/SKILL.md",
            "---\nname: pdf\ndescription: Extract text from PDF files.\n---\n\n# PDF\n\nRun `scripts/extract.py FILE`; see reference.md for the options.\n",
        );
        ws.write("skills/pdf/scripts/extract.py", "print('text')\n");
        ws.write("skills/pdf/reference.md", "# Options\n--pages N\n");
    }

    #[tokio::test]
    async fn a_skill_loads_with_its_files_and_reads_one() {
        let ws = TestWs::new();
        pdf_skill(&ws);
        let tool = SkillTool { user_dir: None };
        let shown = ok(ws.call(&tool, json!({"name": "pdf"})).await);
        assert!(
            shown.starts_with("# Skill `pdf` (skills/pdf/SKILL.md)"),
            "{shown}"
        );
        assert!(shown.contains("Run `scripts/extract.py FILE`"));
        assert!(
            shown.contains("- reference.md\n- scripts/extract.py\n"),
            "{shown}"
        );
        let reference = ok(ws
            .call(&tool, json!({"name": "pdf", "file": "reference.md"}))
            .await);
        assert_eq!(reference, "# Options\n--pages N\n");
    }

    #[tokio::test]
    async fn files_outside_the_skill_and_unknown_skills_are_refused() {
        let ws = TestWs::new();
        pdf_skill(&ws);
        ws.write("secret.txt", "top secret");
        let tool = SkillTool { user_dir: None };
        let err = failed(
            ws.call(&tool, json!({"name": "pdf", "file": "../../secret.txt"}))
                .await,
        );
        assert!(err.contains("not a file of the skill"), "{err}");
        let err = failed(ws.call(&tool, json!({"name": "nope"})).await);
        assert!(err.contains("no skill named `nope`"), "{err}");
        assert!(err.contains("pdf"), "{err}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_inside_a_skill_does_not_lead_out() {
        let ws = TestWs::new();
        pdf_skill(&ws);
        let outside = ws.escaping_link();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            ws.root().join("skills/pdf/leak.md"),
        )
        .unwrap();
        let tool = SkillTool { user_dir: None };
        let result = ws
            .call(&tool, json!({"name": "pdf", "file": "leak.md"}))
            .await;
        assert!(!format!("{result:?}").contains("top secret"), "{result:?}");
        assert!(result.is_err());
    }

    #[tokio::test]
    async fn user_skills_are_read_from_their_own_folder() {
        let ws = TestWs::new();
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(user.path().join("mine")).unwrap();
        std::fs::write(
            user.path().join("mine/SKILL.md"),
            "---\ndescription: Mine.\n---\nDo mine.\n",
        )
        .unwrap();
        std::fs::write(user.path().join("mine/notes.txt"), "n\n").unwrap();
        let tool = SkillTool {
            user_dir: Some(user.path().to_path_buf()),
        };
        let shown = ok(ws.call(&tool, json!({"name": "mine"})).await);
        assert!(
            shown.contains("read them with skill{name, file}"),
            "{shown}"
        );
        let notes = ok(ws
            .call(&tool, json!({"name": "mine", "file": "notes.txt"}))
            .await);
        assert_eq!(notes, "n\n");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_user_skills_link_does_not_reach_the_config_folder() {
        let ws = TestWs::new();
        let config = tempfile::tempdir().unwrap();
        let skills = config.path().join("skills");
        std::fs::create_dir_all(skills.join("mine")).unwrap();
        std::fs::write(
            config.path().join("secrets.toml"),
            "openai = \"sk-top-secret\"\n",
        )
        .unwrap();
        std::fs::write(
            skills.join("mine/SKILL.md"),
            "---\ndescription: Mine.\n---\nSee ref.md.\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("../../secrets.toml", skills.join("mine/ref.md")).unwrap();
        std::fs::create_dir_all(skills.join("other")).unwrap();
        std::fs::write(skills.join("other/private.md"), "other's\n").unwrap();
        std::os::unix::fs::symlink("../other/private.md", skills.join("mine/near.md")).unwrap();
        let tool = SkillTool {
            user_dir: Some(skills.clone()),
        };
        for file in ["ref.md", "near.md"] {
            let result = ws.call(&tool, json!({"name": "mine", "file": file})).await;
            let shown = format!("{result:?}");
            assert!(
                !shown.contains("sk-top-secret") && !shown.contains("other's"),
                "{shown}"
            );
            assert!(result.is_err(), "{file}: {shown}");
        }
    }
}
