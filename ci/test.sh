#!/usr/bin/env bash
# The PR job: build, every test, and a CI-sized fault hunt. Tests that need JAX provision a
# local venv (.venv, jax==0.10.2 from PyPI) themselves on first use; tests that need a TPU or
# real Helion skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
# The code rules: rustfmt-formatted, clippy-clean with -D warnings (skipped, with the reason, on
# a toolchain without the component).
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "skip fmt: rustfmt is not installed"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets -- -D warnings
else
  echo "skip clippy: clippy is not installed"
fi
cargo test --workspace --no-fail-fast
# A CI-sized hunt (in-process, a deterministic case budget per fault): a change that loses a bug
# class fails here. Every fault is in (see README, "Proving the harness"); each is detected in a
# few thousand cases at most, so the whole hunt takes seconds.
cargo build --release --bin pallas-diff
target/release/pallas-diff hunt --repeat 1 --cases 40000 --reduce-time 5s --out target/ci-hunt \
  --inject all
