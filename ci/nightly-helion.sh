#!/usr/bin/env bash
# The nightly real-Helion job: install the Helion environment (~6 GB, 2-3 minutes; never done by
# the PR job), run the tests that need it (they skip elsewhere), then run a campaign whose every
# case also goes through real Helion (its Pallas backend in interpret mode, its eager mode, and
# the TPU lowering of the kernel it builds) on the Helion build HELION_BUILD. On a build other
# than the pinned release, every finding is then run on the pinned release too (`bisect`): a
# finding the pinned release does not show is labelled a new regression in the job summary and
# in $out/regressions.txt.
# Exits 2 when the Helion environment cannot be made, 3 if anything was found.
#
# Settings (environment):
#   HELION_BUILD                the Helion build under test: `pinned` (default), a release
#                               (`1.5.0`), a wheel, or a Helion source tree (e.g. a checkout of
#                               Helion's main branch)
#   PALLAS_DIFF_HELION_VERSION  the pinned release (default: the pin in
#                               tpu-runner/python/requirements-helion.txt)
#   NIGHTLY_TIME                campaign length (default 1h)
#   NIGHTLY_GEN_CONFIG          generator config (default ci/gen-helion-language.json: torch
#                               ops, Helion's input constructors and boundary shapes on, which
#                               only the reference and real Helion check)
#   NIGHTLY_OUT                 findings directory (default findings-helion)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${HELION_BUILD:-pinned}"
out="${NIGHTLY_OUT:-findings-helion}"
cargo build --release
bin=target/release/pallas-diff
$bin provision --helion
[ "$build" = pinned ] || $bin provision --helion-build "$build"
$bin --helion-build "$build" probe --require-helion
cargo test --release -p pallas-diff-fuzz --test helion_engines
cargo test --release -p pallas-diff-tpu-runner --test helion_faults --test helion_builds
status=0
$bin --helion-build "$build" fuzz --time "${NIGHTLY_TIME:-1h}" --seed random \
  --config "${NIGHTLY_GEN_CONFIG:-ci/gen-helion-language.json}" \
  --engines oracle,pallas-sim,helion-pallas,helion-eager,helion-tpu-lower \
  --out "$out" --json || status=$?
if [ "$build" != pinned ] && [ -d "$out" ]; then
  : > "$out/regressions.txt"
  for finding in "$out"/*/; do
    [ -f "$finding/meta.json" ] || continue
    # Only the Helion engines' findings have a range across Helion builds.
    grep -q '"engine": *"helion-' "$finding/meta.json" || continue
    range=$($bin bisect "$finding" --builds pinned,"$build" --json 2>/dev/null) || continue
    if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); b=r["builds"]; sys.exit(0 if b[0]["behaves"]=="good" and b[-1]["behaves"]=="bad" else 1)' "$range"; then
      echo "new regression (absent on the pinned release): $finding" | tee -a "$out/regressions.txt"
    fi
  done
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
      echo "### Helion build \`$build\`"
      if [ -s "$out/regressions.txt" ]; then sed 's/^/- /' "$out/regressions.txt"; else echo "No new regression against the pinned release."; fi
    } >> "$GITHUB_STEP_SUMMARY"
  fi
fi
exit "$status"
