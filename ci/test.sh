#!/usr/bin/env bash
# The PR job: lint-free build and every test. Tests that need JAX provision a local venv
# (.venv, jax==0.10.2 from PyPI) themselves on first use; tests that need a TPU or real Helion
# skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
cargo test --workspace --no-fail-fast
