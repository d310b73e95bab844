#!/usr/bin/env bash
# Seeds the cargo-fuzz corpora (fuzz/cargo-fuzz/corpus/<target>/, gitignored):
# - frontend: every spec kernel and every bad-input script;
# - differential, planner_total: 32 deterministic 4 KiB byte buffers each (what the checks'
#   smoke tests feed them: the generator reads a GenConfig and then the case from the bytes).
# An argument puts the corpora under that directory instead (`<dir>/<target>/`, what
# .clusterfuzzlite/build.sh zips: the seeds alone, not what local runs added to corpus/).
# Run from anywhere; then e.g.
#   cargo fuzz run --fuzz-dir fuzz/cargo-fuzz frontend --sanitizer none -- \
#     -dict=fuzz/cargo-fuzz/frontend.dict -max_total_time=300
#   cargo fuzz run --fuzz-dir fuzz/cargo-fuzz differential --sanitizer none -- -max_total_time=120
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/corpus}"
dest="$out/frontend"
mkdir -p "$dest"
cp "$root"/corpus/spec-kernels/*.py "$dest"/
cp "$root"/compiler/tests/bad-input/*.py "$dest"/
echo "seeded $(ls "$dest" | wc -l) files into $dest"
for target in differential planner_total; do
  dest="$out/$target"
  mkdir -p "$dest"
  python3 - "$dest" <<'PY'
import random, sys
for seed in range(32):
    with open(f"{sys.argv[1]}/seed-{seed:02}", "wb") as f:
        f.write(random.Random(seed).randbytes(4096))
PY
  echo "seeded $(ls "$dest" | wc -l) files into $dest"
done
