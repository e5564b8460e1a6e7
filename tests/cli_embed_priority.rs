//! The bundled embedder yields to the user as the user runs it: `cairn index` started by an
//! unprivileged user (every test here runs as root, who may set any priority) embeds its
//! chunks on threads at `nice` 10, while the process itself keeps its normal priority.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::time::Duration;

use cairn_e2e::{cairn_bin, Sandbox};

/// The nice value of every thread of process `pid`, by thread id.
fn thread_nices(pid: u32) -> Vec<(u32, i32)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_string_lossy().parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            // Fields after the command's closing parenthesis; nice is the 17th.
            let rest = stat.rsplit_once(')')?.1;
            Some((tid, rest.split_whitespace().nth(16)?.parse().ok()?))
        })
        .collect()
}

fn id(flag: &str, user: &str) -> String {
    let out = std::process::Command::new("id")
        .args([flag, user])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unprivileged_users_chunks_are_embedded_at_background_priority() {
    let Some(user) = cairn_testkit::unprivileged_user() else {
        eprintln!("not root: this process is the unprivileged user, and the embedder's unit test covers it");
        return;
    };
    let sandbox = Sandbox::new();
    sandbox.install_embedder_copy();
    for n in 0..24 {
        let path = sandbox.workspace().join(format!("knowledge/trip-{n}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let days: String = (0..24)
            .map(|day| {
                format!(
                    "On day {day} of trip {n} the ferry to the island leaves at nine and \
                     returns at six; bring the tickets, the map of the harbour and a coat. "
                )
            })
            .collect();
        std::fs::write(&path, format!("# Trip {n}\n\n{days}\n")).unwrap();
    }
    let chown = std::process::Command::new("chown")
        .args(["-R", &format!("{user}:{user}")])
        .arg(sandbox.dir.path())
        .status()
        .unwrap();
    assert!(chown.success());
    // `setpriv` runs cairn in its own process (its pid is the child's), as the user.
    let index = sandbox.cairn(&["index", "--json"]);
    let std = index.as_std();
    let mut command = tokio::process::Command::new("setpriv");
    command
        .arg(format!("--reuid={}", id("-u", user)))
        .arg(format!("--regid={}", id("-g", user)))
        .args(["--clear-groups", "--"])
        .arg(cairn_bin())
        .args(std.get_args())
        .current_dir(sandbox.dir.path())
        .env_clear()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    for (key, value) in std.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command.env("PATH", "/usr/bin:/bin");
    let child = command.spawn().unwrap();
    let pid = child.id().unwrap();
    let watch = std::thread::spawn(move || {
        let mut background = HashSet::new();
        let (mut most_at_once, mut main_lowered) = (0, false);
        loop {
            let threads = thread_nices(pid);
            if threads.is_empty() {
                return (background, main_lowered, most_at_once);
            }
            let now: Vec<u32> = threads.iter().filter(|t| t.1 == 10).map(|t| t.0).collect();
            most_at_once = most_at_once.max(now.len());
            background.extend(now);
            main_lowered |= threads.iter().any(|&(tid, nice)| tid == pid && nice != 0);
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let out = tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
        .await
        .expect("cairn index did not finish")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["embedded"], report["chunks"], "{report}");
    assert!(report["chunks"].as_u64().unwrap() > 24, "{report}");
    let (background, main_lowered, most_at_once) = watch.join().unwrap();
    // The process itself (its main thread) stays at normal priority.
    assert!(!main_lowered, "the main thread left nice 0");
    // The thread that embeds and, beside it on more than one core, its lanes.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let lanes = if cores > 1 { cores.min(4) } else { 0 };
    assert!(
        most_at_once > lanes,
        "{most_at_once} threads at nice 10 at once ({} in all)",
        background.len()
    );
}
