#!/usr/bin/env bash
# The PR job: build, every test, and a CI-sized fault hunt. Tests that need JAX provision a
# local venv (.venv, jax==0.10.2 from PyPI) themselves on first use; tests that need a TPU or
# real Helion skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
cargo test --workspace --no-fail-fast
# A CI-sized hunt (in-process, a deterministic case budget per fault): a change that loses a bug
# class fails here. issue-2006 is a known generator gap (see README, "Proving the harness").
cargo build --release --bin pallas-diff
target/release/pallas-diff hunt --repeat 1 --cases 40000 --reduce-time 5s --out target/ci-hunt \
  --inject d1,d2,d5,d8,d9,d10,d11,d12,d13,d14,issue-2214
