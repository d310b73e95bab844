#!/usr/bin/env bash
# A CPU fuzz campaign (one shard of a distributed campaign). Every shard runs the same generator
# config with its own seed range, so shards never repeat each other's cases:
#   SHARD=k SHARDS=n ci/campaign.sh    (k in 0..n)
# Each shard's findings directory records its shard contract (shard.json: seed range, generator
# config, engines, codegen options, versions). The shards of one campaign are merged by
# signature into one findings directory (contracts checked, counts summed, the smallest
# reproducer kept, every shard recorded; merging again changes nothing):
#   ci/campaign.sh merge findings-shard-0 findings-shard-1 ...
#   CAMPAIGN_TIME   length (default 1h)
#   CAMPAIGN_OUT    findings directory (default findings-shard-$SHARD; for merge, findings-merged)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = merge ]; then
  shift
  cargo build --release --bin pallas-diff
  exec target/release/pallas-diff merge "$@" --out "${CAMPAIGN_OUT:-findings-merged}"
fi
shard=${SHARD:-0}
shards=${SHARDS:-1}
if ((shard < 0 || shard >= shards)); then
  echo "ci/campaign.sh: SHARD=$shard is not in 0..$shards" >&2
  exit 2
fi
cargo build --release
# Seeds are the shard index; case k of shard s uses case_seed(s, k), independent across shards.
exec target/release/pallas-diff fuzz --time "${CAMPAIGN_TIME:-1h}" --seed "$shard" \
  --config ci/campaign-nightly.json \
  --engines oracle,pallas-sim,pallas-tpu-interpret,pallas-tpu-lower \
  --out "${CAMPAIGN_OUT:-findings-shard-$shard}" --json
