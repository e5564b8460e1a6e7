//! The contract with the page, declared once, here: `ui/src/api/commands.ts` is made from
//! [`COMMANDS`](crate::commands::COMMANDS) and `ui/src/api/types.ts` from the Rust types
//! that cross (ts-rs, which follows their serde attributes), and a test fails while a file
//! in the tree is not what they make (`CAIRN_UPDATE_IPC=1 cargo test -p cairn-desktop
//! contract` writes both). The page's `invoke` takes only these names and the page is
//! type-checked against these types, so a command or a field renamed or removed here is
//! an error where the page still uses it.

use ts_rs::{Config, TS};

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

/// The declaration of `T` as the page sees it.
fn declare<T: TS>(config: &Config) -> String {
    let mut out = String::new();
    if let Some(docs) = T::docs() {
        out.push_str(&super::pretty::one_line_docs(docs.trim()));
        out.push('\n');
    }
    out.push_str("export ");
    out.push_str(&super::pretty::declaration(&T::decl(config)));
    out
}

/// The modules of types the page imports, by file under `ui/src/api/`: `types.ts`
/// re-exports the parts in `types/`, each importing what it names from the others.
pub fn types_ts() -> Vec<(String, String)> {
    use crate::ipc::{dropped, error, files, memory, pictures, settings, views};
    use cairn_protocol as p;
    // Integers are numbers on the page (JSON's), not bigints.
    let c = &Config::new().with_large_int("number");
    let agent = vec![
        declare::<error::AppError>(c),
        declare::<error::ErrorCode>(c),
        declare::<crate::commands::app::AppInfo>(c),
        declare::<crate::commands::app::FirstScreen>(c),
        declare::<crate::commands::app::PageMarks>(c),
        declare::<crate::commands::app::StartSteps>(c),
        declare::<crate::commands::context::SlashCommand>(c),
        declare::<crate::commands::sessions::SessionSummary>(c),
        declare::<views::TranscriptItem>(c),
        declare::<views::SummaryOf>(c),
        declare::<views::BranchSiblings>(c),
        declare::<views::ToolCallView>(c),
        declare::<views::ToolResultView>(c),
        declare::<views::SessionView>(c),
        declare::<views::LastRun>(c),
        declare::<views::InterruptedRun>(c),
        declare::<p::ApprovalDecision>(c),
        declare::<p::NoticeLevel>(c),
        declare::<p::Phase>(c),
        declare::<p::QueueMode>(c),
        declare::<p::ThinkingLevel>(c),
        declare::<p::Outcome>(c),
        declare::<p::ErrorInfo>(c),
        declare::<p::ErrorKind>(c),
        declare::<p::RunSummary>(c),
        declare::<p::Message>(c),
        declare::<p::AssistantMessage>(c),
        declare::<p::ToolResultMessage>(c),
        declare::<p::StopReason>(c),
        declare::<p::Usage>(c),
        declare::<p::ContentBlock>(c),
        declare::<p::Picture>(c),
        declare::<p::ToolCall>(c),
        declare::<p::FileChange>(c),
        declare::<p::ContextPart>(c),
        declare::<p::AgentEvent>(c),
        declare::<p::Intent>(c),
        declare::<p::WorkStatus>(c),
        declare::<p::WorkItem>(c),
        declare::<p::WorkPriority>(c),
    ];
    let workspace = vec![
        declare::<files::FileNode>(c),
        declare::<files::FileText>(c),
        declare::<files::SavedFile>(c),
        declare::<files::OutsideFolder>(c),
        declare::<super::documents::DocumentPage>(c),
        declare::<super::documents::DocumentText>(c),
        declare::<pictures::WorkspacePicture>(c),
        declare::<pictures::PickedPictures>(c),
        declare::<memory::SearchHitView>(c),
        declare::<memory::SnippetPart>(c),
        declare::<memory::SearchResultsView>(c),
        declare::<cairn_app::cairn_memory::SearchMode>(c),
        declare::<memory::CoverageView>(c),
        declare::<cairn_app::cairn_memory::IndexStatus>(c),
        declare::<memory::MemoryOverview>(c),
        declare::<memory::ConsolidationResult>(c),
        declare::<memory::CoverageFile>(c),
        declare::<memory::OcrFile>(c),
        declare::<memory::CoverageReport>(c),
        declare::<cairn_app::cairn_core::upkeep::ConsolidationStatus>(c),
        declare::<crate::hub::AppEvent>(c),
        declare::<dropped::Refused>(c),
        declare::<cairn_app::cairn_memory::changes::ChangeState>(c),
        declare::<cairn_app::cairn_memory::changes::Change>(c),
        declare::<cairn_app::cairn_memory::trash::Trashed>(c),
        declare::<crate::commands::exchange::ImportReport>(c),
        declare::<cairn_app::cairn_core::agent::ContextUsage>(c),
        declare::<crate::commands::memory::SessionHit>(c),
    ];
    let settings = vec![
        declare::<settings::ProviderView>(c),
        declare::<cairn_app::settings::ProviderKind>(c),
        declare::<cairn_app::cairn_llm::openai::window::LocalServer>(c),
        declare::<cairn_app::cairn_llm::openai::window::ServerKind>(c),
        declare::<cairn_app::cairn_llm::openai::window::FoundModel>(c),
        declare::<settings::LimitsView>(c),
        declare::<settings::SettingsView>(c),
        declare::<settings::PurposeModelsView>(c),
        declare::<settings::ApprovalView>(c),
        declare::<cairn_app::cairn_core::Policy>(c),
        declare::<settings::HookView>(c),
        declare::<settings::HookEvent>(c),
        declare::<settings::KeyStoreView>(c),
        declare::<settings::WebSearchView>(c),
        declare::<cairn_app::settings::SearchBackend>(c),
        declare::<settings::KeyStoreKind>(c),
        declare::<crate::commands::settings::ConnectionCheck>(c),
        declare::<p::McpState>(c),
        declare::<p::McpTransport>(c),
        declare::<p::McpToolInfo>(c),
        declare::<p::McpServerStatus>(c),
        declare::<crate::commands::mcp::NewServer>(c),
    ];
    modules(&[
        ("agent", agent),
        ("workspace", workspace),
        ("settings", settings),
    ])
}

const MADE: &str =
    "// Made from the Rust types that cross between cairn-desktop and the page; do not\n\
     // edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p\n\
     // cairn-desktop contract` writes it.\n";

/// `types/<part>.ts` for each part of declarations, importing the names it uses from the
/// other parts, and `types.ts` exporting them all.
fn modules(parts: &[(&str, Vec<String>)]) -> Vec<(String, String)> {
    let declared = |decls: &[String]| -> Vec<String> {
        decls
            .iter()
            .filter_map(|decl| {
                let line = decl.lines().find(|l| l.starts_with("export "))?;
                let rest = line.strip_prefix("export ")?;
                let rest = rest.split_once(' ')?.1;
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                Some(name)
            })
            .collect()
    };
    let names: Vec<(&str, Vec<String>)> = parts
        .iter()
        .map(|(part, decls)| (*part, declared(decls)))
        .collect();
    let mut files = Vec::new();
    let mut index = String::from(MADE);
    index.push('\n');
    for (part, decls) in parts {
        let body: String = decls.iter().map(|d| format!("\n{d}\n")).collect();
        let mut out = String::from(MADE);
        for (other, theirs) in names.iter().filter(|(other, _)| other != part) {
            let used: Vec<&str> = theirs
                .iter()
                .filter(|name| mentions(&body, name))
                .map(String::as_str)
                .collect();
            if !used.is_empty() {
                out.push_str(&format!(
                    "\nimport type {{ {} }} from \"./{other}\";\n",
                    used.join(", ")
                ));
            }
        }
        out.push_str(&body);
        files.push((format!("types/{part}.ts"), out));
        index.push_str(&format!("export type * from \"./types/{part}\";\n"));
    }
    files.push(("types.ts".to_string(), index));
    files
}

/// Whether `text` names `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let before = text[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = text[at + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
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
    fn the_page_has_the_types_of_the_shell() {
        let api = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/api");
        for (file, made) in types_ts() {
            let path = api.join(file);
            if std::env::var_os("CAIRN_UPDATE_IPC").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &made).unwrap();
            }
            let kept = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                kept == made,
                "{} is not what the Rust types make: run \
                 `CAIRN_UPDATE_IPC=1 cargo test -p cairn-desktop contract` and commit it",
                path.display()
            );
        }
    }

    #[test]
    fn a_name_is_mentioned_as_a_whole_word() {
        assert!(mentions("x: Phase;", "Phase"));
        assert!(!mentions("x: PhaseKind;", "Phase"));
        assert!(!mentions("x: OldPhase;", "Phase"));
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
