//! One app per workspace: a second launch on the same workspace hands over to the running
//! window and exits before it opens anything; a launch on another workspace runs.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{DesktopApp, Sandbox};
use cairn_e2e::desktop::sibling_bin;

/// The environment of the app process running on `workspace` (its display, session bus
/// and folders), read from /proc.
fn app_environment(workspace: &std::path::Path) -> Vec<(String, String)> {
    let want = format!("CAIRN_WORKSPACE={}", workspace.display());
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let dir = entry.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != "cairn-desktop" {
            continue;
        }
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        let vars: Vec<String> = environ
            .split(|b| *b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        if vars.contains(&want) {
            return vars
                .iter()
                .filter_map(|v| v.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        }
    }
    panic!("no cairn-desktop process runs on {}", workspace.display());
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn launch(env: &[(String, String)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(sibling_bin("cairn-desktop"));
    cmd.env_clear()
        .envs(env.iter().cloned())
        .env_remove("TAURI_WEBVIEW_AUTOMATION")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_launch_on_the_same_workspace_hands_over_and_exits() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[memory]\nflush = false\nconsolidation_interval_hours = 0\n");
    DesktopApp::drive(&sandbox, "desktop_e2e_single", async |s| {
        let env = app_environment(&sandbox.workspace());
        let sessions = sandbox.workspace().join("sessions");
        let before = files_in(&sessions);

        let started = Instant::now();
        let second = tokio::time::timeout(Duration::from_secs(30), launch(&env).output())
            .await
            .expect("the second launch did not exit")
            .unwrap();
        assert_eq!(
            second.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&second.stderr)
        );
        eprintln!("the second launch handed over in {:?}", started.elapsed());
        assert_eq!(
            files_in(&sessions),
            before,
            "the second launch touched the sessions"
        );
        // The first window still answers.
        s.execute("return document.title", vec![]).await.unwrap();

        // Another workspace is another app: it runs.
        let other = tempfile::tempdir().unwrap();
        let mut env = env.clone();
        for (key, value) in &mut env {
            if key == "CAIRN_WORKSPACE" {
                *value = other.path().display().to_string();
            }
        }
        let mut third = launch(&env).spawn().unwrap();
        let waited = tokio::time::timeout(Duration::from_secs(5), third.wait()).await;
        assert!(
            waited.is_err(),
            "an app on another workspace exited: {waited:?}"
        );
        third.kill().await.unwrap();
    })
    .await;
}
