//! The plan of a call's mounts: order, precedence, what no setting opens, the budget.

use super::*;
use pretty_assertions::assert_eq;

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    /// A home with a config folder, a key file, a credential store and a workspace.
    fn new() -> Self {
        // Not under /tmp, which is empty inside the sandbox and so never bound.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for sub in [
            ".config/cairn",
            ".aws",
            ".cache/pip",
            "ws/.cairn",
            "ws/sessions",
            "ws/notes/deep",
            "ws/app/.git",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("keys.toml"), "k").unwrap();
        Self { _dir: dir, root }
    }

    fn own(&self) -> Vec<PathBuf> {
        vec![self.root.join(".config/cairn"), self.root.join("keys.toml")]
    }

    fn secrets(&self) -> Vec<PathBuf> {
        vec![self.root.join(".aws"), self.root.join(".nope")]
    }

    fn plan(&self, reach: &Reach) -> Vec<(String, Mount)> {
        let ws = self.root.join("ws");
        let own = self.own();
        plan(Plan {
            workspace: &ws,
            own: &own,
            secrets: self.secrets(),
            homes: Vec::new(),
            tools: Vec::new(),
            protected: vec![ws.join(".cairn"), ws.join("app/.git"), ws.join("sessions")],
            executables: Vec::new(),
            reach,
        })
        .mounts
        .into_iter()
        .map(|(p, m)| (p.strip_prefix(&self.root).unwrap().display().to_string(), m))
        .collect()
    }
}

#[test]
fn defaults_mount_the_workspace_then_what_is_in_it() {
    let tree = Tree::new();
    use Mount::*;
    let want: Vec<(String, Mount)> = [
        ("ws", Writable),
        ("keys.toml", Hidden),
        (".aws", Hidden),
        (".config/cairn", Hidden),
        ("ws/.cairn", ReadOnly),
        ("ws/sessions", ReadOnly),
        // Its parent, pinned: it cannot be moved aside with the .git/ in it.
        ("ws/app", Writable),
        ("ws/app/.git", ReadOnly),
    ]
    .into_iter()
    .map(|(p, m)| (p.to_string(), m))
    .collect();
    assert_eq!(tree.plan(&Reach::default()), want);
}

#[test]
fn settings_widen_and_narrow_deeper_paths_on_top() {
    let tree = Tree::new();
    let reach = Reach {
        hide: vec!["notes/deep".into()],
        read_only: vec!["notes".into(), tree.root.join(".aws")],
        writable: vec![tree.root.join(".cache/pip"), "app/.git".into()],
    };
    let plan = tree.plan(&reach);
    let find = |p: &str| plan.iter().find(|(path, _)| path == p).map(|(_, m)| *m);
    assert_eq!(find("ws/notes"), Some(Mount::ReadOnly));
    assert_eq!(find("ws/notes/deep"), Some(Mount::Hidden));
    assert_eq!(
        find(".aws"),
        Some(Mount::Hidden),
        "a credential store is never shown again"
    );
    let why = refusals(&tree.root.join("ws"), &tree.own(), &tree.secrets(), &reach);
    assert_eq!(why.len(), 1, "{why:#?}");
    assert!(why[0].contains("is a credential store"), "{why:#?}");
    assert_eq!(find(".cache/pip"), Some(Mount::Writable));
    assert_eq!(find("ws/app/.git"), Some(Mount::Writable));
    let depth = |p: &str| plan.iter().position(|(path, _)| path == p).unwrap();
    assert!(depth("ws/notes") < depth("ws/notes/deep"));
}

#[test]
fn nothing_opens_cairns_own() {
    let tree = Tree::new();
    let ws = tree.root.join("ws");
    let reach = Reach {
        hide: vec![tree.root.clone()],
        read_only: vec![
            tree.root.join(".config/cairn/config.toml"),
            "sessions".into(),
        ],
        writable: vec![
            tree.root.join(".config"),
            tree.root.join("keys.toml"),
            "../ws/.cairn/index".into(),
            tree.root.join(".cache"),
        ],
    };
    let why = refusals(&ws, &tree.own(), &[], &reach);
    assert_eq!(why.len(), 6, "{why:#?}");
    // A link to Cairn's own is judged where it leads.
    std::os::unix::fs::symlink(tree.root.join(".config/cairn"), tree.root.join("cfg")).unwrap();
    let linked = Reach {
        writable: vec![tree.root.join("cfg")],
        ..Reach::default()
    };
    assert_eq!(refusals(&ws, &tree.own(), &[], &linked).len(), 1);
    let linked_plan = tree.plan(&linked);
    assert!(
        linked_plan.contains(&(".config/cairn".to_string(), Mount::Hidden)),
        "{linked_plan:?}"
    );
    assert!(
        why[0].contains("config.toml` is left out: it is Cairn's own"),
        "{why:#?}"
    );
    assert!(
        why[2].contains("`") && why[2].contains("holds Cairn's own"),
        "{why:#?}"
    );
    assert!(why[5].starts_with("[tools.bash] hide:"), "{why:#?}");
    let plan = tree.plan(&reach);
    let find = |p: &str| plan.iter().find(|(path, _)| path == p).map(|(_, m)| *m);
    assert_eq!(find(".config/cairn"), Some(Mount::Hidden));
    assert_eq!(find("keys.toml"), Some(Mount::Hidden));
    assert_eq!(find(".config"), None);
    assert_eq!(find("ws/sessions"), Some(Mount::ReadOnly));
    assert_eq!(find(".cache"), Some(Mount::Writable));
    assert_eq!(
        find(""),
        None,
        "the folder holding the workspace is not hidden"
    );
}

#[test]
fn a_home_is_hidden_whole_with_what_a_call_needs_on_top() {
    let tree = Tree::new();
    let root = &tree.root;
    // The tree's root stands for the home; the workspace is inside it.
    for sub in [".cargo/bin", ".config/gh", "projects/other"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let ws = root.join("ws");
    let own = tree.own();
    let reach = Reach {
        read_only: vec![root.join(".config")],
        ..Reach::default()
    };
    let mounts: Vec<(String, Mount)> = plan(Plan {
        workspace: &ws,
        own: &own,
        secrets: vec![root.join(".aws"), root.join(".config/gh")],
        homes: vec![root.clone()],
        tools: vec![root.join(".cargo/bin"), root.join(".nvm")],
        protected: vec![ws.join(".cairn")],
        executables: Vec::new(),
        reach: &reach,
    })
    .mounts
    .into_iter()
    .map(|(p, m)| {
        let rel = p.strip_prefix(root).unwrap().display().to_string();
        (if rel.is_empty() { "~".into() } else { rel }, m)
    })
    .collect();
    use Mount::*;
    let want: Vec<(String, Mount)> = [
        ("~", Hidden),
        ("ws", Writable),
        // The key file: the home's hiding covers it, as it covers .aws.
        (".config", ReadOnly),
        (".config/cairn", Hidden),
        (".config/gh", Hidden),
        ("ws/.cairn", ReadOnly),
        (".cargo/bin", ReadOnly),
    ]
    .into_iter()
    .map(|(p, m)| (p.to_string(), m))
    .collect();
    assert_eq!(mounts, want);
}

#[test]
fn past_the_budget_deep_executables_then_pins_are_left_out_and_said() {
    let tree = Tree::new();
    let ws = tree.root.join("ws");
    let own = tree.own();
    let scripts: Vec<PathBuf> = (0..MOUNT_BUDGET)
        .map(|n| ws.join(format!("tools/{n:03}/run")))
        .collect();
    let shallow = ws.join("build.sh");
    let protected: Vec<PathBuf> = (0..MOUNT_BUDGET / 2)
        .map(|n| ws.join(format!("repos/r{n}/.git")))
        .collect();
    let mut executables = scripts.clone();
    executables.push(shallow.clone());
    let planned = plan(Plan {
        workspace: &ws,
        own: &own,
        secrets: Vec::new(),
        protected: protected.clone(),
        executables,
        homes: Vec::new(),
        tools: Vec::new(),
        reach: &Reach::default(),
    });
    assert_eq!(
        planned.mounts.len(),
        MOUNT_BUDGET,
        "{}",
        planned.mounts.len()
    );
    let has = |p: &PathBuf| planned.mounts.iter().any(|(path, _)| path == p);
    assert!(
        protected.iter().all(has),
        "protected entries are never left out"
    );
    assert!(has(&shallow), "the shallowest executable is kept");
    assert!(planned.executables_left > 0 && !has(scripts.last().unwrap()));
    assert!(planned.pins_left > 0, "{planned:?}");
    let note = planned.note().unwrap();
    assert!(note.starts_with("[sandbox: "), "{note}");
    assert!(note.contains(&format!("{} executable files", planned.executables_left)));
    let small = plan(Plan {
        workspace: &ws,
        own: &own,
        secrets: Vec::new(),
        protected: protected[..2].to_vec(),
        executables: vec![shallow],
        homes: Vec::new(),
        tools: Vec::new(),
        reach: &Reach::default(),
    });
    assert_eq!(small.note(), None);
}
