#!/usr/bin/env bash
# The README's screenshot of the dashboard (docs/dashboard.png), made from a real small
# campaign: two shards (side by side) of a fault-injected campaign (the in-process engines, JAX confirming
# lowered cases with pallas-tpu-interpret), merged, and a fault hunt, rendered by
# `pallas-diff dashboard` and shot by Debian's headless chromium.
#   dashboard/screenshot.sh [OUT.png]     (default docs/dashboard.png; ~1 min on 2 cores)
#   SHOT_TIME   each shard's length (default 25s)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/dashboard.png}
cargo build --release --bin pallas-diff
bin=$PWD/target/release/pallas-diff
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Side by side, as the nightly matrix runs them (a finding is exit 3).
pids=()
for seed in 0 1; do
  "$bin" fuzz --time "${SHOT_TIME:-25s}" --seed "$seed" --jobs 1 \
    --engines oracle,pallas-sim,pallas-tpu-interpret \
    --inject d12-tail-clamped-before-mask --out "shard-$seed" >/dev/null &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || [ $? = 3 ]; done
"$bin" merge shard-0 shard-1 --out merged >/dev/null
"$bin" hunt --inject all --repeat 1 \
  --cases 40000 --reduce-time 3s --out hunt >/dev/null
"$bin" dashboard merged hunt -o report.html
cd - >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=5000 \
  --user-data-dir="$work/profile" --window-size=1280,1800 --screenshot="$PWD/$out" \
  "file://$work/report.html"
echo "wrote $out"
