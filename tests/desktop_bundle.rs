//! The installer: the .deb the bundler makes (`make bundle-debug`, which `make test` runs)
//! unpacked into a scratch root with `dpkg -x`, and the app and the CLI started from there.
//! (Included by `desktop_e2e.rs`.)

use std::path::PathBuf;
use std::process::Command;

use cairn_e2e::desktop::{sibling_bin, DesktopApp};
use cairn_e2e::webdriver::{wait_for, PATIENCE};
use cairn_e2e::Sandbox;

/// The one .deb in `target/debug/bundle/deb/`.
fn the_deb() -> PathBuf {
    let dir = sibling_bin("bundle/deb");
    let debs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `make bundle-debug` (`make test` does)",
                dir.display()
            )
        })
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(
        debs.len(),
        1,
        "one .deb expected in {}: {debs:?}",
        dir.display()
    );
    debs.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deb_unpacked_into_a_scratch_root_starts_the_app_and_the_cli() {
    let root = tempfile::tempdir().unwrap();
    let unpacked = Command::new("dpkg")
        .arg("-x")
        .arg(the_deb())
        .arg(root.path())
        .status()
        .unwrap();
    assert!(unpacked.success(), "dpkg -x failed");
    let bin = root.path().join("usr/bin");
    // The app and the CLI, nothing else (no benchmark binary).
    let mut installed: Vec<String> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    installed.sort();
    assert_eq!(installed, ["cairn", "cairn-desktop"]);
    let entry =
        std::fs::read_to_string(root.path().join("usr/share/applications/Cairn.desktop")).unwrap();
    assert!(entry.contains("Exec=cairn-desktop"), "{entry}");

    let version = Command::new(bin.join("cairn"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("cairn "));

    // The app from the package opens its window on a new workspace.
    let sandbox = Sandbox::new();
    sandbox.write_settings(
        "default_provider = \"mock\"\n[providers.mock]\nkind = \"openai\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"test-model\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n",
    );
    let app = DesktopApp::launch_binary(&sandbox, "bundle", &bin.join("cairn-desktop")).await;
    let s = &app.session;
    wait_for("the message box of the packaged app", PATIENCE, || async {
        s.find("[data-testid=composer]").await
    })
    .await;
    app.quit().await;
    assert!(sandbox.workspace().join("AGENTS.md").is_file());
}
