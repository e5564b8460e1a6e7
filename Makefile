# Cairn: `make run` starts the app, `make test` runs every test. Both set up what is missing.

CARGO ?= cargo
# One target dir for every crate and both commands.
export CARGO_TARGET_DIR ?= $(CURDIR)/target

.PHONY: run test setup lint build bench

setup:
	@./scripts/setup.sh

# Built with the same selection as `make test` so llama.cpp is compiled once for both.
run: setup build
	$(CARGO_TARGET_DIR)/debug/cairn chat

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# The end-to-end tests run the real binaries, so they are built first. Every command uses
# the same selection (whole workspace, all targets): cargo then resolves features the same
# way each time and llama.cpp is compiled once.
build:
	$(CARGO) build --workspace --all-targets --locked

test: setup lint build
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --workspace --locked --no-fail-fast; \
	else \
		$(CARGO) test --workspace --locked --no-fail-fast; \
	fi

bench: setup
	$(CARGO) run --release --locked -p cairn-bench -- harness
	$(CARGO) run --release --locked -p cairn-bench -- search
	$(CARGO) run --release --locked -p cairn-bench -- compaction
