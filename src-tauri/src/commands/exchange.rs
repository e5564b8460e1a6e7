//! Files in and out of the app through the system's dialog (tauri-plugin-dialog, called
//! from here: the page gets no file-system access): a session saved as Markdown with its
//! pictures beside it, conversations exported from ChatGPT or Claude made into sessions,
//! pictures for a message, a GGUF model file.

use std::path::{Path, PathBuf};

use cairn_app::cairn_core::session::{export, import, SessionStore};
use cairn_app::cairn_memory::Attachments;
use cairn_protocol::Picture;
use serde::Serialize;
use tauri::Manager;
use tauri_plugin_dialog::{Dialog, FileDialogBuilder};
use ts_rs::TS;

use super::DesktopState;
use crate::hub::AppEvent;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::pictures::{PickedPictures, PICTURE_EXTENSIONS};

/// What an import made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ImportReport {
    /// "ChatGPT" or "Claude".
    pub source: String,
    /// Conversations written as new sessions.
    pub sessions: usize,
    /// Conversations imported before and unchanged since, left as they are.
    pub already: usize,
}

/// A file name for a session's Markdown: its title without characters file systems
/// refuse, or the id.
pub fn file_name(title: Option<&str>, id: &str) -> String {
    let cleaned: String = title
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " -_.,()".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_matches('.').trim();
    let stem: String = if cleaned.is_empty() {
        id.to_string()
    } else {
        cleaned.chars().take(80).collect()
    };
    format!("{stem}.md")
}

/// A session as an exported file holds it.
pub struct Exported {
    /// The file name to offer for it.
    pub name: String,
    pub markdown: String,
    /// The pictures its Markdown links to, to copy beside it.
    pub pictures: Vec<Picture>,
}

/// The Markdown of session `id`, the file name to offer for it and its pictures.
pub fn markdown_of(store: &SessionStore, id: &str) -> AppResult<Exported> {
    let id = store.resolve(id)?;
    let loaded = store.load(&id)?;
    Ok(Exported {
        name: file_name(loaded.tree.title(), &id),
        markdown: export::to_markdown(&loaded.tree),
        pictures: export::pictures(&loaded.tree),
    })
}

/// Copies `pictures` into the folder beside an exported file that its Markdown links to
/// (`attachments/`), each under its hash, so the links work wherever the file goes. A
/// picture no longer kept is left out; the reasons are returned. Blocking.
pub fn copy_pictures(
    attachments: &Attachments,
    pictures: &[Picture],
    beside: &Path,
) -> Vec<String> {
    let folder = beside.join(export::PICTURES_FOLDER);
    let mut problems = Vec::new();
    for picture in pictures {
        let target = folder.join(picture.file_name());
        if target.is_file() {
            continue;
        }
        let copied = attachments.bytes_of(picture).and_then(|bytes| {
            std::fs::create_dir_all(&folder)
                .and_then(|()| std::fs::write(&target, bytes))
                .map_err(|e| format!("cannot write {}: {e}", target.display()))
        });
        if let Err(why) = copied {
            problems.push(why);
        }
    }
    problems
}

/// Imports the export at `path` into `store`.
pub async fn import_file(store: &SessionStore, path: &Path) -> AppResult<ImportReport> {
    let bytes = std::fs::read(path).map_err(|e| AppError::io(path.display(), e))?;
    let (source, conversations) =
        import::parse(&bytes).map_err(|e| AppError::invalid(e.to_string()))?;
    let done = import::import(store, source, &conversations)
        .await
        .map_err(|e| AppError::new(ErrorCode::Io, e.to_string()))?;
    let new = done
        .iter()
        .filter(|i| matches!(i, import::Imported::New(_)))
        .count();
    Ok(ImportReport {
        source: source.name().to_string(),
        sessions: new,
        already: done.len() - new,
    })
}

/// A file dialog, where the dialog plugin runs (not in the commands' tests).
fn file_dialog<R: tauri::Runtime>(app: &tauri::AppHandle<R>) -> AppResult<FileDialogBuilder<R>> {
    app.try_state::<Dialog<R>>()
        .map(|dialog| dialog.file())
        .ok_or_else(|| AppError::new(ErrorCode::Internal, "no file dialog is available"))
}

/// Runs a blocking dialog off the async threads; `None` when it was cancelled.
async fn pick(
    ask: impl FnOnce() -> Option<tauri_plugin_dialog::FilePath> + Send + 'static,
) -> AppResult<Option<PathBuf>> {
    let picked = tauri::async_runtime::spawn_blocking(ask)
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
    picked
        .map(|p| {
            p.into_path()
                .map_err(|e| AppError::invalid(format!("that file cannot be used: {e}")))
        })
        .transpose()
}

/// Saves a session as Markdown where the user picks; the path, or `None` if cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_session<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    desktop: DesktopState<'_>,
    id: String,
) -> AppResult<Option<String>> {
    let exported = markdown_of(&desktop.store, &id)?;
    let dialog = file_dialog(&app)?
        .add_filter("Markdown", &["md"])
        .set_file_name(exported.name);
    let Some(path) = pick(move || dialog.blocking_save_file()).await? else {
        return Ok(None);
    };
    // The dialog has already asked before replacing a file.
    std::fs::write(&path, exported.markdown).map_err(|e| AppError::io(path.display(), e))?;
    if !exported.pictures.is_empty() {
        let attachments = desktop.workspace.attachments().clone();
        let beside = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let problems = tauri::async_runtime::spawn_blocking(move || {
            copy_pictures(&attachments, &exported.pictures, &beside)
        })
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
        for why in problems {
            tracing::warn!("a picture of the exported session was left out: {why}");
        }
    }
    Ok(Some(path.display().to_string()))
}

/// Makes sessions of a ChatGPT or Claude export the user picks; `None` if cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn import_conversations<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    desktop: DesktopState<'_>,
) -> AppResult<Option<ImportReport>> {
    let dialog = file_dialog(&app)?.add_filter("Exported conversations", &["json"]);
    let Some(path) = pick(move || dialog.blocking_pick_file()).await? else {
        return Ok(None);
    };
    let report = import_file(&desktop.store, &path).await?;
    if let Some(index) = desktop.index() {
        if let Err(e) = index.sync_in_background() {
            tracing::warn!("cannot queue the imported sessions for indexing: {e}");
        }
    }
    desktop.emit(AppEvent::SessionsChanged);
    Ok(Some(report))
}

/// Pictures the user picks for the next message (PNG, JPEG, WebP, GIF), kept in the
/// attachments; those that cannot be read are refused with why. Empty when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_pictures<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    desktop: DesktopState<'_>,
) -> AppResult<PickedPictures> {
    let extensions: Vec<String> = PICTURE_EXTENSIONS
        .iter()
        .flat_map(|e| [e.to_string(), e.to_ascii_uppercase()])
        .collect();
    let extensions: Vec<&str> = extensions.iter().map(String::as_str).collect();
    let dialog = file_dialog(&app)?
        .set_title("Pictures for your message")
        .add_filter("Pictures (PNG, JPEG, WebP, GIF)", &extensions);
    let picked = tauri::async_runtime::spawn_blocking(move || dialog.blocking_pick_files())
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
    let paths: Vec<PathBuf> = picked
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| p.into_path().ok())
        .collect();
    let attachments = desktop.workspace.attachments().clone();
    tauri::async_runtime::spawn_blocking(move || {
        crate::ipc::pictures::attach_files(&attachments, &paths)
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))
}

/// A GGUF model file the user picks for a local provider; its path, or `None` if
/// cancelled. The file is checked to be a GGUF model before it is offered.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_model_file<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
) -> AppResult<Option<String>> {
    let mut dialog = file_dialog(&app)?.add_filter("GGUF model", &["gguf"]);
    if let Some(dir) = cairn_app::cairn_models::models_dir().filter(|d| d.is_dir()) {
        dialog = dialog.set_directory(dir);
    }
    let Some(path) = pick(move || dialog.blocking_pick_file()).await? else {
        return Ok(None);
    };
    cairn_app::cairn_llm::local::LocalProvider::probe(&path)
        .map_err(|e| AppError::invalid(e.to_string()))?;
    Ok(Some(path.display().to_string()))
}

/// Asks for a folder to search in place (the settings' `[memory] folders`); `None` when
/// the dialog was cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_folder<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> AppResult<Option<String>> {
    let mut dialog = file_dialog(&app)?.set_title("A folder to search in place");
    if let Some(home) = dirs::home_dir() {
        dialog = dialog.set_directory(home);
    }
    let picked = pick(move || dialog.blocking_pick_folder()).await?;
    Ok(picked.map(|p| p.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_comes_from_the_title_without_what_file_systems_refuse() {
        assert_eq!(
            file_name(Some("Car: which one?"), "x"),
            "Car- which one-.md"
        );
        assert_eq!(
            file_name(Some("../../etc/passwd"), "x"),
            "-..-etc-passwd.md"
        );
        assert_eq!(file_name(Some("  "), "0193"), "0193.md");
        assert_eq!(file_name(None, "0193"), "0193.md");
        assert_eq!(file_name(Some(&"é".repeat(200)), "x").chars().count(), 83);
    }

    #[tokio::test]
    async fn a_session_goes_out_as_markdown_and_an_export_comes_in() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let export = dir.path().join("conversations.json");
        std::fs::write(
            &export,
            r#"[{"name": "Tea", "chat_messages": [
                {"sender": "human", "text": "Green or black?", "created_at": "2026-01-01T00:00:00Z"},
                {"sender": "assistant", "text": "Green, in the morning.", "created_at": "2026-01-01T00:00:05Z"}]}]"#,
        )
        .unwrap();
        let report = import_file(&store, &export).await.unwrap();
        assert_eq!(
            report,
            ImportReport {
                source: "Claude".into(),
                sessions: 1,
                already: 0,
            }
        );
        // The same file again: nothing new, and it says so.
        let again = import_file(&store, &export).await.unwrap();
        assert_eq!((again.sessions, again.already), (0, 1));
        assert_eq!(store.list().unwrap().len(), 1);
        let id = store.list().unwrap()[0].id.clone();
        let exported = markdown_of(&store, &id).unwrap();
        assert_eq!(exported.name, "Tea.md");
        assert!(
            exported.markdown.contains("Green, in the morning."),
            "{}",
            exported.markdown
        );
        assert!(exported.pictures.is_empty());

        std::fs::write(&export, "{}").unwrap();
        let err = import_file(&store, &export).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Invalid);
    }

    #[tokio::test]
    async fn an_exported_session_takes_its_pictures_along_beside_it() {
        use base64::Engine as _;
        use cairn_protocol::{ContentBlock, EntryKind, Message};
        let dir = tempfile::tempdir().unwrap();
        let workspace =
            cairn_app::cairn_memory::Workspace::open_or_create(&dir.path().join("ws")).unwrap();
        let attachments = workspace.attachments();
        let receipt = cairn_testkit::pictures::RECEIPT_PNG;
        let data = base64::engine::general_purpose::STANDARD.encode(receipt);
        let picture =
            crate::ipc::pictures::attach(attachments, Some("receipt.png"), &data).unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let mut session = store.create().unwrap();
        let content = vec![
            ContentBlock::Text {
                text: "What is the total?".into(),
            },
            ContentBlock::Image(picture.clone()),
        ];
        session
            .record(EntryKind::Message {
                message: Message::User { content },
            })
            .await
            .unwrap();
        let exported = markdown_of(&store, session.tree.id()).unwrap();
        assert_eq!(exported.pictures, vec![picture.clone()]);
        let link = format!("](attachments/{}.png)", picture.sha256);
        assert!(exported.markdown.contains(&link), "{}", exported.markdown);

        let out = dir.path().join("exported");
        std::fs::create_dir_all(&out).unwrap();
        let problems = copy_pictures(attachments, &exported.pictures, &out);
        assert!(problems.is_empty(), "{problems:?}");
        let copied = out.join("attachments").join(picture.file_name());
        assert_eq!(std::fs::read(&copied).unwrap(), receipt);

        // A picture no longer kept is left out, saying which.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::remove_file(attachments.path_of(&picture)).unwrap();
        let problems = copy_pictures(attachments, &exported.pictures, &elsewhere);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("no longer kept"), "{problems:?}");
        assert!(!elsewhere.join("attachments").exists());
    }
}
