#!/bin/sh
# Writes src-tauri/start-order.txt: the functions a release build of the app runs while it
# starts, which src-tauri/build.rs hands to the linker so that they sit side by side.
#
#   make start-order    (or: scripts/start-order.sh [BINARY])
#
# BINARY is a release build (default target/release/cairn-desktop), built as `make bundle`
# builds it: what is built together decides cargo's features, and so the functions' names.
# `make start-order` builds it so and runs this script. The app starts three
# times under callgrind in an Xvfb display of its own, each time in a new profile with the
# installed models linked in: a first start, one with an OpenAI-compatible server set, and
# one opening the 200-message session that `cairn-bench desktop` writes (with the
# cairn-bench beside BINARY). The functions of the binary any of them ran, up to some
# seconds after its first frame, are listed as the linker names them.
# Run it again after a change of dependencies, compiler or the start's code: names a build
# no longer has are skipped by the linker, and the start's code then spreads out again
# (`cairn-bench desktop` reports how many of the names the binary has).
set -eu

cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/release/cairn-desktop}")
OUT=src-tauri/start-order.txt
for tool in valgrind callgrind_control Xvfb dbus-run-session nm python3; do
    command -v "$tool" >/dev/null || { echo "start-order: $tool is needed" >&2; exit 1; }
done

TMP=$(mktemp -d)
XVFB_PID=
APP_PID=
cleanup() {
    [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

DISPLAY_NUMBER=97
while [ -e "/tmp/.X11-unix/X$DISPLAY_NUMBER" ]; do DISPLAY_NUMBER=$((DISPLAY_NUMBER + 1)); done
Xvfb ":$DISPLAY_NUMBER" -screen 0 1280x800x24 >/dev/null 2>&1 &
XVFB_PID=$!
sleep 1
MODELS=${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models

# One start under callgrind in a profile of its own: $1 names it, $2 is its config.toml.
start_once() {
    H=$TMP/$1
    mkdir -p "$H/.local/share/cairn" "$H/config" "$H/rt"
    chmod 700 "$H/rt"
    [ -d "$MODELS" ] && ln -s "$MODELS" "$H/.local/share/cairn/models"
    [ -n "$2" ] && printf '%s\n' "$2" >"$H/config/config.toml"
    env -i PATH="$PATH" HOME="$H" XDG_CONFIG_HOME="$H/.config" XDG_DATA_HOME="$H/.local/share" \
        XDG_CACHE_HOME="$H/.cache" XDG_RUNTIME_DIR="$H/rt" DISPLAY=":$DISPLAY_NUMBER" \
        CAIRN_REPORT_READY=1 CAIRN_WORKSPACE="${WORKSPACE:-$H/workspace}" \
        CAIRN_CONFIG_DIR="$H/config" \
        dbus-run-session -- valgrind --tool=callgrind --demangle=no \
        --callgrind-out-file="$TMP/callgrind.$1.out" "$BIN" >"$H/app.out" 2>"$H/app.err" &
    APP_PID=$!
    # Ready within five minutes under callgrind (about ten seconds on a 2-core EPYC).
    waited=0
    until grep -q '^cairn-ready' "$H/app.out" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        if [ "$waited" -ge 300 ] || ! kill -0 "$APP_PID" 2>/dev/null; then
            echo "start-order: the app did not become ready under callgrind ($1)" >&2
            tail -5 "$H/app.err" >&2
            exit 1
        fi
    done
    # What the app does in its first seconds after the first frame (the index's reconcile,
    # the settings' reads) counts as start too: the memory is read after them.
    sleep 15
    # The process under callgrind (not dbus-run-session, whose command line names the file).
    for pid in $(pgrep -f "callgrind-out-file=$TMP/callgrind.$1.out"); do
        case "$(cat "/proc/$pid/comm" 2>/dev/null)" in
            dbus-run-sessio) ;;
            *) callgrind_control -d "$pid" >/dev/null 2>&1 && sleep 2 && kill "$pid" ;;
        esac
    done
    kill "$APP_PID" 2>/dev/null || true
    wait "$APP_PID" 2>/dev/null || true
    APP_PID=
}

PROVIDER='default_provider = "loopback"

[providers.loopback]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "a-model"'
WORKSPACE=
# A first start (the bundled model by default), and a start with an OpenAI-compatible
# server set (nothing listens there, so no answer is asked for).
start_once first ""
start_once provider "$PROVIDER"
# And one that opens a long session: the one `cairn-bench desktop` measures.
BENCH=$(dirname "$BIN")/cairn-bench
if [ -x "$BENCH" ]; then
    WORKSPACE=$TMP/long-workspace
    "$BENCH" desktop --write-session "$WORKSPACE" >/dev/null
    start_once long "$PROVIDER"
else
    echo "start-order: no $BENCH to write a long session with; left out" >&2
fi

nm --defined-only "$BIN" >"$TMP/symbols"
python3 - "$TMP" "$BIN" "$OUT" <<'PY'
import glob, os, re, sys
tmp, binary, out = sys.argv[1:]
objects, functions, current, ran = {}, {}, None, []
for path in sorted(glob.glob(tmp + "/callgrind.*")):
    for line in open(path, errors="replace"):
        found = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not found:
            continue
        kind, number, name = found.groups()
        names = objects if kind in ("ob", "cob") else functions
        if name:
            names[number] = name
        if kind == "ob":
            current = objects.get(number)
        elif kind == "fn" and current is not None and os.path.realpath(current) == binary:
            ran.append(functions[number])
text = set()
for line in open(tmp + "/symbols"):
    fields = line.split()
    if len(fields) == 3 and fields[1] in "tTwW":
        text.add(fields[2])
seen, order = set(), []
for name in ran:
    name = name.split("'")[0]  # callgrind marks recursion levels with 'N
    if name in text and name not in seen:
        seen.add(name)
        order.append(name)
if len(order) < 100:
    sys.exit("start-order: only %d functions found: is %s a release build?" % (len(order), binary))
open(out, "w").write("\n".join(order) + "\n")
print("start-order: %d functions in %s" % (len(order), out))
PY
