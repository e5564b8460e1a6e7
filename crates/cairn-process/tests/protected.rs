//! What [`Sandbox::protecting`] adds, seen from outside: executable files and files
//! matching the user's globs cannot be written, renamed or deleted inside the sandbox (nor
//! a file made in a folder a `<folder>/**` glob protects), ordinary files can, and a file
//! made executable or made just before a call is protected for that call. Run as this
//! process and as an unprivileged user, who can do all of it without the sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;

use cairn_process::Sandbox;
use pretty_assertions::assert_eq;
use support::{available, Scene, Who, TRIED};

const GLOB: &str = "knowledge/private/**";

/// One kind of file, three of it planted: one to write (`-w`), one to rename (`-r`), one
/// to delete (`-d`).
struct Kind {
    /// The path without the suffix, relative to the workspace.
    stem: String,
    ext: &'static str,
}

impl Kind {
    fn new(stem: String, ext: &'static str) -> Self {
        Self { stem, ext }
    }

    fn path(&self, op: &str) -> String {
        format!("{}-{op}.{}", self.stem, self.ext)
    }

    fn plant(&self, scene: &Scene, mode: u32) {
        for op in ["w", "r", "d"] {
            let file = scene.ws.join(self.path(op));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, "as it was\n").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }

    fn chmod(&self, scene: &Scene, mode: u32) {
        for op in ["w", "r", "d"] {
            let file = scene.ws.join(self.path(op));
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }

    /// The attempts, one line each so that one refusal stops nothing.
    fn attempts(&self) -> String {
        let (w, r, d) = (self.path("w"), self.path("r"), self.path("d"));
        format!("echo pwned >> {w}\nmv {r} {r}.moved\nrm -f {d}\n")
    }

    /// Whether the write, the rename and the delete landed.
    fn landed(&self, scene: &Scene) -> [bool; 3] {
        let at = |op: &str| scene.ws.join(self.path(op));
        let written = std::fs::read_to_string(at("w")).unwrap() != "as it was\n";
        let renamed = scene.ws.join(format!("{}.moved", self.path("r"))).exists();
        [written, renamed, !at("d").exists()]
    }
}

/// The files of one attempt, named after `tag`: a script, a private note, an ordinary
/// note, a script made executable after the sandbox's last call and one made after it.
struct Files {
    script: Kind,
    private: Kind,
    note: Kind,
    late: Kind,
    fresh: Kind,
    new_private: String,
}

impl Files {
    fn new(tag: &str) -> Self {
        Self {
            script: Kind::new(format!("tools/{tag}-script"), "sh"),
            private: Kind::new(format!("knowledge/private/{tag}-secret"), "md"),
            note: Kind::new(format!("notes/{tag}-note"), "md"),
            late: Kind::new(format!("tools/deep/er/{tag}-late"), "sh"),
            fresh: Kind::new(format!("tools/new/{tag}-fresh"), "sh"),
            new_private: format!("knowledge/private/{tag}-new.md"),
        }
    }

    fn kinds(&self) -> [&Kind; 5] {
        [
            &self.script,
            &self.private,
            &self.note,
            &self.late,
            &self.fresh,
        ]
    }

    fn script(&self) -> String {
        let mut script: String = self.kinds().iter().map(|k| k.attempts()).collect();
        script.push_str(&format!("echo new > {}\necho {TRIED}\n", self.new_private));
        script
    }
}

async fn protection_check(scene: &Scene, who: Who) {
    let sandbox: Sandbox = scene
        .sandbox(false)
        .protecting(&[GLOB.to_string()], true)
        .unwrap();
    // Without the sandbox, `who` may do all of it.
    let free = Files::new("free");
    for kind in free.kinds() {
        kind.plant(scene, 0o755);
    }
    scene.give_to(who);
    let out = scene.run_as(who, None, &free.script()).await;
    assert!(out.stdout.contains(TRIED), "{who:?}: {out:?}");
    for kind in free.kinds() {
        assert_eq!(
            kind.landed(scene),
            [true; 3],
            "{who:?}: {} without the sandbox",
            kind.stem
        );
    }
    assert!(scene.ws.join(&free.new_private).exists(), "{who:?}");

    // Inside it. The sandbox knows the workspace from a first call, then a script is made
    // executable and another made, right before the next.
    let held = Files::new("held");
    held.script.plant(scene, 0o755);
    held.private.plant(scene, 0o644);
    held.note.plant(scene, 0o644);
    held.late.plant(scene, 0o644);
    scene.give_to(who);
    let out = scene
        .run_as(who, Some(&sandbox), &format!("echo {TRIED}"))
        .await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{who:?}: {out:?}");
    held.late.chmod(scene, 0o755);
    held.fresh.plant(scene, 0o755);
    scene.give_to(who);
    let out = scene.run_as(who, Some(&sandbox), &held.script()).await;
    assert!(out.stdout.contains(TRIED), "{who:?}: {out:?}");
    assert!(
        out.stderr.contains("Read-only file system"),
        "{who:?}: {out:?}"
    );
    for kind in [&held.script, &held.private, &held.late, &held.fresh] {
        assert_eq!(
            kind.landed(scene),
            [false; 3],
            "{who:?}: {}: {out:?}",
            kind.stem
        );
    }
    assert_eq!(held.note.landed(scene), [true; 3], "{who:?}: {out:?}");
    assert!(
        !scene.ws.join(&held.new_private).exists(),
        "{who:?}: {out:?}"
    );
}

#[tokio::test]
async fn executables_and_files_matching_a_glob_are_read_only_when_asked() {
    available();
    protection_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn executables_and_files_matching_a_glob_are_read_only_for_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        protection_check(&scene, Who::User(user)).await;
    }
}

#[test]
fn a_glob_that_does_not_parse_is_named() {
    let scene = Scene::new();
    let error = scene
        .sandbox(false)
        .protecting(&["notes/**".into(), "a/[".into()], false)
        .unwrap_err();
    assert!(error.contains("`a/[`"), "{error}");
}
