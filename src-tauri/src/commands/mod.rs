//! The commands the page may call: thin wrappers over [`Desktop`]. `names.rs` lists
//! them once; [`handler`] registers them and a test checks the two agree.

pub(crate) mod app;
pub(crate) mod context;
pub(crate) mod exchange;
mod files;
pub(crate) mod mcp;
pub(crate) mod memory;
mod pictures;
mod run;
pub(crate) mod sessions;
pub(crate) mod settings;

include!("names.rs");

pub use crate::desktop::DesktopState;

/// The invoke handler with every command of [`COMMANDS`].
pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        app::app_info,
        app::ui_ready,
        app::first_screen,
        app::subscribe,
        app::open_link,
        sessions::list_sessions,
        sessions::open_session,
        sessions::rename_session,
        sessions::delete_session,
        sessions::switch_branch,
        context::context_usage,
        context::compact_now,
        context::slash_commands,
        exchange::export_session,
        exchange::import_conversations,
        exchange::pick_model_file,
        exchange::pick_pictures,
        pictures::attach_picture,
        pictures::picture_thumbnail,
        pictures::read_picture,
        run::send_message,
        run::steer,
        run::follow_up,
        run::take_follow_up,
        run::set_follow_up_mode,
        run::set_thinking,
        run::resume_run,
        run::attach_run,
        run::abort,
        run::resolve_approval,
        run::edit_message,
        run::retry,
        run::choose_model,
        mcp::mcp_servers,
        mcp::add_mcp_server,
        mcp::set_mcp_server_enabled,
        mcp::remove_mcp_server,
        files::list_files,
        files::read_file,
        files::write_file,
        files::create_file,
        files::create_folder,
        files::move_path,
        files::trash_path,
        files::list_trash,
        files::restore_trash,
        files::list_changes,
        files::revert_changes,
        files::reveal_path,
        files::list_folders,
        files::read_document,
        files::open_in_viewer,
        exchange::pick_folder,
        app::restart_app,
        memory::memory_search,
        memory::search_sessions,
        memory::index_status,
        memory::memory_overview,
        memory::index_coverage,
        memory::consolidate_now,
        settings::get_settings,
        settings::save_settings,
        settings::set_api_key,
        settings::check_provider,
        settings::discover_local_servers,
    ]
}
