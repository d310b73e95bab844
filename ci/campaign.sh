#!/usr/bin/env bash
# A CPU fuzz campaign (one shard of a distributed campaign). Every shard runs the same generator
# config with its own seed range, so shards never repeat each other's cases:
#   SHARD=k SHARDS=n ci/campaign.sh    (k in 0..n)
# Findings of all shards can be merged by copying their directories into one; the bucket index
# (buckets.json) deduplicates by signature when `pallas-diff replay`/`report` read them.
#   CAMPAIGN_TIME   length (default 1h)
#   CAMPAIGN_OUT    findings directory (default findings-shard-$SHARD)
set -euo pipefail
cd "$(dirname "$0")/.."
shard=${SHARD:-0}
shards=${SHARDS:-1}
cargo build --release
# Seeds are the shard index; case k of shard s uses case_seed(s, k), independent across shards.
exec target/release/pallas-diff fuzz --time "${CAMPAIGN_TIME:-1h}" --seed "$shard" \
  --config ci/campaign-nightly.json \
  --engines oracle,pallas-sim,pallas-tpu-interpret,pallas-tpu-lower \
  --out "${CAMPAIGN_OUT:-findings-shard-$shard}" --json
