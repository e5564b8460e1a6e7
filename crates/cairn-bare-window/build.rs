//! Tauri's build helpers for the bare window (config, ACL, embedded assets); its one
//! command is `ui_ready`.

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(&["ui_ready"]));
    if let Err(e) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri build: {e:#}");
        std::process::exit(1);
    }
}
