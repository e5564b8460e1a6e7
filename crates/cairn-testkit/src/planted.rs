//! Workspaces someone else prepared: files a hostile note or repository can hold, for the
//! tests of what must never run or leak because of them.

use std::path::Path;

/// Plants at `root` the files that make git take it for a bare repository (`HEAD`, `config`,
/// `objects/`, `refs/`) whose config runs `touch <flag>` through `diff.external` (on
/// `git diff --no-index`) and `core.fsmonitor`; with two notes `a.md` and `b.md` to diff.
pub fn bare_repository(root: &Path, flag: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join("HEAD"), "ref: refs/heads/main\n")?;
    let run = format!("\"touch {}; false\"", flag.display());
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = {run}\n\
         [diff]\n\texternal = {run}\n"
    );
    std::fs::write(root.join("config"), config)?;
    for dir in ["objects", "refs"] {
        std::fs::create_dir_all(root.join(dir))?;
        std::fs::write(root.join(dir).join("x"), "")?;
    }
    std::fs::write(root.join("a.md"), "one\n")?;
    std::fs::write(root.join("b.md"), "two\n")
}
