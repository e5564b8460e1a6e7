//! The bash policy: plain lines, deny rules, prefixes remembered by "always".

use super::*;
use pretty_assertions::assert_eq;

fn words(line: &str) -> Vec<Vec<String>> {
    parse(line).commands
}

fn w(s: &str) -> Vec<String> {
    words_of(s)
}

#[test]
fn plain_command_lines() {
    for (line, commands) in [
        ("git status -s", vec![w("git status -s")]),
        (
            "ls -la notes && wc -l notes/*.md",
            vec![w("ls -la notes"), w("wc -l notes/*.md")],
        ),
        (
            "cat a.md | grep 'x y' ; echo \"done\"",
            vec![
                w("cat a.md"),
                vec!["grep".into(), "x y".into()],
                w("echo done"),
            ],
        ),
        ("make test 2>&1", vec![w("make test")]),
        ("ls missing 2>/dev/null\nls", vec![w("ls missing"), w("ls")]),
        ("sleep 1 &", vec![w("sleep 1")]),
    ] {
        let parsed = parse(line);
        assert!(parsed.plain, "{line}: {parsed:?}");
        assert_eq!(parsed.commands, commands, "{line}");
    }
}

#[test]
fn anything_that_expands_or_writes_is_not_plain() {
    for line in [
        "echo $(cat ~/.ssh/id_rsa)",
        "echo `id`",
        "ls > listing.txt",
        "ls >> listing.txt",
        "cat <(ls)",
        "(cd /; rm -rf x)",
        "X=1 ls",
        "$CMD args",
        "ls \"$HOME\"",
        "if true; then ls; fi",
        "for f in *; do rm $f; done",
        "f() { ls; }; f",
        "cat <<EOF\nhi\nEOF",
        "ls &> out.txt",
        "echo 'unterminated",
        "",
    ] {
        assert!(!parse(line).plain, "{line}");
    }
}

#[test]
fn commands_inside_substitutions_are_still_seen() {
    assert_eq!(
        words("echo $(git push origin main)"),
        vec![w("echo"), w("git push origin main")]
    );
    assert_eq!(words("(rm -rf build)"), vec![w("rm -rf build")]);
}

#[test]
fn rules_allow_only_plain_lines_whose_every_part_is_allowed() {
    let rules = CommandRules::new(
        &["git status".into(), "ls".into()],
        &["git push".into(), "rm -rf /".into()],
    );
    let remembered = vec![w("cargo test")];
    for line in [
        "git status -s",
        "ls && git status",
        "ls | cargo test -q 2>&1",
    ] {
        assert!(rules.allows(&parse(line), &remembered), "{line}");
    }
    for line in [
        "git statusx",
        "git status; rm x",
        "ls > out.txt",
        "ls $(rm x)",
        "git log",
    ] {
        assert!(!rules.allows(&parse(line), &remembered), "{line}");
    }
    assert_eq!(
        rules.denied(&parse("ls && git push origin")),
        Some("git push".into())
    );
    assert_eq!(
        rules.denied(&parse("echo $(git push)")),
        Some("git push".into())
    );
    assert_eq!(rules.denied(&parse("rm -rf /")), Some("rm -rf /".into()));
    assert_eq!(rules.denied(&parse("rm -rf build")), None);
}

#[test]
fn always_remembers_one_prefix_per_command_of_a_plain_line() {
    assert_eq!(
        always_prefixes(&parse("git status -s && ls -la && ls x")),
        Some(vec![w("git status"), w("ls")])
    );
    assert_eq!(always_prefixes(&parse("ls > x")), None);
    assert_eq!(always_prefixes(&parse("ls && python -c 'print(1)'")), None);
}

#[test]
fn prefixes_keep_subcommands_and_refuse_interpreters() {
    assert_eq!(prefix_of(&w("git status -s")), Some(w("git status")));
    for line in [
        "git -C x status",
        "git -c core.pager=sh status",
        "git --exec-path=. status",
        "git grep -O x",
        "git submodule foreach x",
    ] {
        assert_eq!(prefix_of(&w(line)), None, "{line}");
    }
    assert_eq!(prefix_of(&w("ls -la")), Some(w("ls")));
    assert_eq!(prefix_of(&w("cargo test -p x")), Some(w("cargo test")));
    for line in [
        "python -c x",
        "bash -c ls",
        "sudo ls",
        "/usr/bin/env ls",
        "xargs rm",
    ] {
        assert_eq!(prefix_of(&w(line)), None, "{line}");
    }
    assert!(starts_with(&w("git status -s"), &w("git status")));
    assert!(!starts_with(&w("git statusx"), &w("git status")));
    assert!(!starts_with(&w("git"), &w("git status")));
}

#[test]
fn deny_rules_see_through_quotes_folders_and_wrappers() {
    let rules = CommandRules::new(&[], &["git push".into()]);
    for line in [
        "g''it push origin",
        "g\"i\"t push",
        "\\git push",
        "/usr/bin/git push",
        "command git push",
        "env GIT_DIR=x git push",
        "env -u HOME git push",
        "nice -n 5 git push",
        "timeout 10 git push",
        "timeout -s KILL 10 git push",
        "sudo -u root git push",
        "nohup env command git push",
        "ls && 'git' \"push\"",
    ] {
        assert_eq!(
            rules.denied(&parse(line)),
            Some("git push".into()),
            "{line}"
        );
    }
    for line in ["git pull", "echo git push", "gitk push"] {
        assert_eq!(rules.denied(&parse(line)), None, "{line}");
    }
}

#[test]
fn a_glob_that_could_expand_to_an_option_is_not_plain() {
    for line in [
        "tar czf notes.tgz *",
        "ls ?x",
        "cat [a-z]*",
        "rm {-rf,x}",
        "wc -l * && ls",
    ] {
        assert!(!parse(line).plain, "{line}");
    }
    for line in [
        "wc -l notes/*.md",
        "ls -- *",
        "ls ./*",
        "cat '*'",
        "echo \"*\"",
    ] {
        assert!(parse(line).plain, "{line}");
    }
}

#[test]
fn quoted_words_are_read_as_bash_reads_them() {
    assert_eq!(words("g''it st\"atus\""), vec![w("git status")]);
    assert!(parse("\\ls -la").plain);
    assert!(!parse("ls \\*").plain);
    assert!(!parse("ls a$(id)").plain);
}

#[test]
fn programs_that_run_anything_are_never_remembered() {
    for line in [
        "find . -name x",
        "source x.sh",
        ". x.sh",
        "awk '{print}' f",
        "sed -n 1p f",
        "nice ls",
        "setsid ls",
        "nodejs x.js",
        "npx cowsay",
        "python3.12 -c x",
        "/usr/bin/python3.11 x.py",
        "node20 x.js",
        "perl5.36 x",
        "tar czf notes.tgz notes",
        "sort -u a.txt",
        "rsync -a a b",
        "zip -r a.zip a",
        "sqlite3 db.sqlite .tables",
        "ssh host ls",
        "less a.txt",
        "man ls",
        "vim a.txt",
        "busybox ls",
    ] {
        assert_eq!(always_prefixes(&parse(line)), None, "{line}");
    }
    assert_eq!(prefix_of(&w("lsblk")), Some(w("lsblk")));
    assert_eq!(prefix_of(&w("3to2 x")), Some(w("3to2")));
}

/// Runs `f` on a thread with a small stack, as a front end's worker thread might have.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_deeply_nested_line_is_not_plain_and_does_not_overflow() {
    on_small_stack(|| {
        let depth = 20_000;
        let line = format!("{}ls{}", "$(".repeat(depth), ")".repeat(depth));
        assert!(!parse(&line).plain);
        let line = format!("{}ls{}", "(".repeat(depth), ")".repeat(depth));
        assert!(!parse(&line).plain);
    });
}
