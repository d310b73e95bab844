#!/usr/bin/env bash
# The nightly real-Helion job: install the Helion environment (~6 GB, 2-3 minutes; never done by
# the PR job), run the tests that need it (they skip elsewhere), replay the corpus on the Helion
# engines, then run a campaign whose every case also goes through helion==1.5.1 (its Pallas
# backend in interpret mode, its eager mode, and the TPU lowering of the kernel it builds).
# Exits 2 when the Helion environment cannot be made, 3 if anything was found.
#
# Settings (environment):
#   PALLAS_DIFF_HELION_VERSION  the helion release to test (default: the pin in
#                               tpu-runner/python/requirements-helion.txt)
#   NIGHTLY_TIME                campaign length (default 1h)
#   NIGHTLY_OUT                 findings directory (default findings-helion)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
bin=target/release/pallas-diff
$bin provision --helion
$bin probe --require-helion
cargo test --release -p pallas-diff-fuzz --test helion_engines
cargo test --release -p pallas-diff-tpu-runner --test helion_faults
$bin fuzz --time "${NIGHTLY_TIME:-1h}" --seed random \
  --engines oracle,pallas-sim,helion-pallas,helion-eager,helion-tpu-lower \
  --out "${NIGHTLY_OUT:-findings-helion}" --json
