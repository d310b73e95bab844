#!/usr/bin/env bash
# The nightly mutation job, one shard of it: install the Helion environment (with mutmut 3 and
# coverage.py, tpu-runner/python/requirements-helion.txt), run the mutants tests, then
# `pallas-diff mutants` on shard SHARD of SHARDS of a uniform sample of the Pallas backend's
# mutants; `merge` merges the shards' output directories into one (summary, survivors, JUnit).
# Exits 2 when the Helion environment cannot be made.
#
# Settings (environment):
#   SHARD / SHARDS      this shard (0-based) and the count (default 0 / 1)
#   MUTANTS_SAMPLE      mutants sampled over every shard (default 300)
#   MUTANTS_SEED        the sample's and the campaign suite's seed (default: the date, YYYYMMDD)
#   MUTANTS_OUT         output directory (default mutants-shard-$SHARD)
#   MUTANTS_JOBS        parallel Helion workers (default 2)
# `ci/nightly-mutants.sh merge DIR... OUT` merges shards.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
bin=target/release/pallas-diff
if [ "${1:-}" = merge ]; then
  shift
  out="${@: -1}"
  dirs=("${@:1:$#-1}")
  exec $bin merge "${dirs[@]}" --out "$out"
fi
$bin provision --helion
$bin probe --require-helion
cargo test --release -p pallas-diff-mutants
shard="${SHARD:-0}"
out="${MUTANTS_OUT:-mutants-shard-$shard}"
$bin mutants --sample "${MUTANTS_SAMPLE:-300}" --seed "${MUTANTS_SEED:-$(date -u +%Y%m%d)}" \
  --shard "$shard/${SHARDS:-1}" --jobs "${MUTANTS_JOBS:-2}" --out "$out"
