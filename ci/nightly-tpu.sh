#!/usr/bin/env bash
# The nightly TPU job: on a host with a TPU, replay the whole corpus on every engine including
# `pallas-tpu` (TPU hardware), then run a campaign whose lowered cases are confirmed on the TPU.
# Exits 2 if no TPU is present (a nightly TPU job that silently ran on CPU would prove nothing),
# 3 if anything was found.
#
# Settings (environment):
#   PALLAS_DIFF_JAX_VERSION  JAX/jaxlib version to install (default: the pin in
#                            tpu-runner/python/requirements.txt; TPU hosts usually want newer)
#   PALLAS_DIFF_PYTHON       an existing interpreter with jax[tpu] (skips the venv)
#   NIGHTLY_TIME             campaign length (default 2h)
#   NIGHTLY_OUT              findings directory (default findings-nightly)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
bin=target/release/pallas-diff
$bin probe --require-tpu
$bin replay corpus/cases --engines oracle,pallas-interpret,pallas-tpu-interpret,pallas-tpu-lower,pallas-tpu \
  --junit target/nightly-tpu-replay.xml
$bin fuzz --time "${NIGHTLY_TIME:-2h}" --config ci/campaign-nightly.json \
  --engines oracle,pallas-sim,pallas-tpu-lower,pallas-tpu --out "${NIGHTLY_OUT:-findings-nightly}" --json
