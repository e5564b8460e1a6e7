//! The desktop app under WebDriver: WebKitWebDriver inside a D-Bus session and a virtual
//! X display, started with the app's environment, and one WebDriver session on the app.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::webdriver::{driver_ready, Session};
use crate::Sandbox;

const DRIVER: &str = "/usr/bin/WebKitWebDriver";

/// A binary next to the test executable (`target/<profile>/<name>`).
pub fn sibling_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    profile_dir.join(name)
}

/// Where failing desktop tests leave a screenshot, the page source and the driver's log:
/// `desktop-e2e/` in the target folder the running executable is in (a test's or the
/// benchmark's), else in the temporary folder.
pub fn artifacts_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "target"))
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    target.join("desktop-e2e")
}

/// Fails (never skips) when a tool the desktop tests need is missing.
fn require_tools(app: &Path) {
    assert!(
        app.is_file(),
        "{} is missing: build it first (`cargo build --workspace --all-targets`; `make test` does)",
        app.display()
    );
    for tool in [DRIVER, "/usr/bin/xvfb-run", "/usr/bin/dbus-run-session"] {
        assert!(
            Path::new(tool).is_file(),
            "{tool} is missing: `make test` installs it (scripts/setup.sh: webkit2gtk-driver, xvfb, xauth, dbus)"
        );
    }
}

/// The app in a WebDriver session. Dropping it kills the driver's whole process group
/// (driver, X server, D-Bus daemon and the app), also when a test panics.
pub struct DesktopApp {
    pub session: Session,
    driver: Driver,
}

/// The driver's process group, killed when dropped.
struct Driver {
    child: Child,
    log: PathBuf,
}

impl DesktopApp {
    /// Starts the driver with the sandbox's environment, then the app through a new
    /// session, and waits until the page shows its message box.
    pub async fn launch(sandbox: &Sandbox, name: &str) -> DesktopApp {
        Self::launch_binary(sandbox, name, &sibling_bin("cairn-desktop")).await
    }

    /// [`DesktopApp::launch`] with the app binary at `app` (e.g. one unpacked from a
    /// package).
    pub async fn launch_binary(sandbox: &Sandbox, name: &str, app: &Path) -> DesktopApp {
        require_tools(app);
        let port = free_port();
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let log = dir.join(format!("{name}.driver.log"));
        let child = driver_command(sandbox, port, &log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {DRIVER}: {e}"));
        let driver = Driver { child, log };
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while !driver_ready(&base).await {
            if started.elapsed() > Duration::from_secs(30) {
                panic!(
                    "WebKitWebDriver did not answer within 30 s\n{}",
                    driver.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "webkitgtk:browserOptions": {"binary": app.display().to_string(), "args": []}
        }}});
        match Session::start(&base, capabilities).await {
            Ok(session) => DesktopApp { session, driver },
            Err(e) => panic!(
                "cannot start the app through WebDriver: {e}\n{}",
                driver.log_tail()
            ),
        }
    }

    /// Launches the app on `sandbox`, runs `steps` against its window and quits it; when a
    /// step fails, a screenshot, the page source and the driver's log are kept first.
    pub async fn drive(sandbox: &Sandbox, name: &str, steps: impl AsyncFnOnce(&Session)) {
        use futures::FutureExt;
        let app = Self::launch(sandbox, name).await;
        let outcome = std::panic::AssertUnwindSafe(steps(&app.session))
            .catch_unwind()
            .await;
        if let Err(panic) = outcome {
            app.save_failure(name).await;
            drop(app);
            std::panic::resume_unwind(panic);
        }
        app.quit().await;
    }

    /// Saves a screenshot, the page source and the driver's log for a failed test.
    pub async fn save_failure(&self, name: &str) {
        let dir = artifacts_dir();
        if let Ok(png) = self.session.screenshot().await {
            let _ = std::fs::write(dir.join(format!("{name}.png")), png);
        }
        if let Ok(html) = self.session.source().await {
            let _ = std::fs::write(dir.join(format!("{name}.html")), html);
        }
        eprintln!(
            "desktop test {name} failed: screenshot, page source and driver log in {}\n{}",
            dir.display(),
            self.driver.log_tail()
        );
    }

    /// Ends the session (closing the window), then stops the driver.
    pub async fn quit(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.session.delete()).await;
    }
}

impl Driver {
    /// The end of the driver's output (the app's stderr goes there too).
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(40);
        format!(
            "--- {} (last lines) ---\n{}",
            self.log.display(),
            lines[start..].join("\n")
        )
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        for signal in ["-TERM", "-KILL"] {
            let _ = Command::new("kill").args([signal, "--", &group]).status();
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.wait();
    }
}

/// `dbus-run-session -- xvfb-run -a ... WebKitWebDriver --port=N` in its own process
/// group, with the sandbox's home, settings and workspace and nothing of the outer
/// environment's keys or Cairn settings.
fn driver_command(sandbox: &Sandbox, port: u16, log: &Path) -> Command {
    let out = std::fs::File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let err = out.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new("dbus-run-session");
    cmd.args([
        "--",
        "xvfb-run",
        "-a",
        "-s",
        "-screen 0 1280x800x24",
        DRIVER,
    ])
    .arg(format!("--port={port}"));
    for (key, _) in std::env::vars() {
        let outer = ["CAIRN_", "OPENAI_", "ANTHROPIC_", "XDG_", "WAYLAND_"];
        if outer.iter().any(|p| key.starts_with(p))
            || key == "DISPLAY"
            || key == "DBUS_SESSION_BUS_ADDRESS"
        {
            cmd.env_remove(key);
        }
    }
    let home = sandbox.home();
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    );
    cmd.env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("CAIRN_CONFIG_DIR", home.join(".config/cairn"))
        .env("CAIRN_WORKSPACE", sandbox.workspace())
        .env("CAIRN_PACKAGE_INDEX", "http://127.0.0.1:9")
        .env("OPENAI_API_KEY", "test")
        .env("GDK_BACKEND", "x11")
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        .env("TAURI_WEBVIEW_AUTOMATION", "true")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    cmd
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free loopback port: {e}"))
}
