#!/usr/bin/env bash
# Seeds the frontend fuzz corpus (fuzz/cargo-fuzz/corpus/frontend/, gitignored) with every
# spec kernel and every bad-input script. Run from anywhere; then
#   cargo +nightly fuzz run --fuzz-dir fuzz/cargo-fuzz frontend --sanitizer none -- \
#     -dict=fuzz/cargo-fuzz/frontend.dict -max_total_time=300
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$here/corpus/frontend"
mkdir -p "$dest"
cp "$root"/corpus/spec-kernels/*.py "$dest"/
cp "$root"/compiler/tests/bad-input/*.py "$dest"/
echo "seeded $(ls "$dest" | wc -l) files into $dest"
