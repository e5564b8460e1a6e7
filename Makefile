# Cairn: `make run` starts the app, `make test` runs every test. Both set up what is missing.

CARGO ?= cargo
NPM ?= npm
# One target dir for every crate and both commands.
export CARGO_TARGET_DIR ?= $(CURDIR)/target
# Clippy lints the workspace's own crates while they are built (clippy-driver wraps rustc
# for workspace members only; warnings are errors through [workspace.lints]), so no
# separate `cargo clippy` pass checks every dependency a second time.
export RUSTC_WORKSPACE_WRAPPER ?= $(shell rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
# A build from a fresh clone never reuses incremental state; it would only take disk.
ifdef CI
export CARGO_INCREMENTAL ?= 0
endif

.PHONY: run test setup ui lint build test-ui test-rust bench bundle bundle-debug start-order

setup:
	@./scripts/setup.sh

# The page, built into ui/dist (embedded in the app by the build that follows).
ui: setup
	cd ui && $(NPM) run --silent build

# Built with the same selection as `make test` so everything (llama.cpp, WebKitGTK
# bindings) is compiled once for both; the app is the debug build.
run: setup ui build
	$(CARGO_TARGET_DIR)/debug/cairn-desktop

# Formatting; clippy runs inside `build` (see RUSTC_WORKSPACE_WRAPPER).
lint:
	$(CARGO) fmt --all -- --check

# The end-to-end tests run the real binaries, so they are built first. Every command uses
# the same selection (whole workspace, all targets): cargo then resolves features the same
# way each time and each crate is compiled once.
build: ui
	$(CARGO) build --workspace --all-targets --locked

test-ui: ui
	cd ui && $(NPM) test --silent

# OpenVINO's libraries too, which the embedding engines' tests compare with ONNX Runtime.
test-rust: build bundle-debug
	@./scripts/fetch-model.sh --compared
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --workspace --locked --no-fail-fast; \
	else \
		$(CARGO) test --workspace --locked --no-fail-fast; \
	fi

test: setup lint test-ui test-rust

# Installers (.deb and .rpm with the app and the `cairn` CLI) with the Tauri bundler (its
# CLI comes from ui/'s npm packages), from the release build: target/release/bundle/.
TAURI := $(CURDIR)/ui/node_modules/.bin/tauri
with_cli = '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/cairn":"$(1)"}},"rpm":{"files":{"/usr/bin/cairn":"$(1)"}}}}}'
bundle: setup ui
	$(CARGO) build --release --locked -p cairn-desktop -p cairn-cli
	cd src-tauri && $(TAURI) bundle --bundles deb,rpm --config $(call with_cli,$(CARGO_TARGET_DIR)/release/cairn)

# src-tauri/start-order.txt again: the functions the release app runs as it starts, which
# its build lays out side by side (see scripts/start-order.sh). Built as `bundle` builds it.
start-order: setup ui
	$(CARGO) build --release --locked -p cairn-desktop -p cairn-cli
	$(CARGO) build --release --locked -p cairn-bench
	scripts/start-order.sh $(CARGO_TARGET_DIR)/release/cairn-desktop

# The .deb of the debug build, which the install test unpacks and starts.
bundle-debug: build
	cd src-tauri && $(TAURI) bundle --debug --bundles deb --config $(call with_cli,$(CARGO_TARGET_DIR)/debug/cairn)

# The app is built as `make bundle` builds it: what is built together decides cargo's
# features, and so the names src-tauri/start-order.txt lists.
bench: setup ui
	$(CARGO) run --release --locked -p cairn-bench -- harness
	$(CARGO) run --release --locked -p cairn-bench -- search
	$(CARGO) run --release --locked -p cairn-bench -- recall
	$(CARGO) run --release --locked -p cairn-bench -- vectors
	$(CARGO) run --release --locked -p cairn-bench -- compaction
	$(CARGO) run --release --locked -p cairn-bench -- knowledge
	$(CARGO) run --release --locked -p cairn-bench -- sandbox
	$(CARGO) build --release --locked -p cairn-desktop -p cairn-cli
	$(CARGO) build --release --locked -p cairn-bare-window
	$(CARGO) run --release --locked -p cairn-bench -- desktop
