#!/bin/bash -eu
# The ClusterFuzzLite (OSS-Fuzz) build of pallas-diff's cargo-fuzz targets, following the
# OSS-Fuzz Rust conventions: `cargo fuzz build -O`, every target copied into $OUT, its seed
# corpus zipped into $OUT/<target>_seed_corpus.zip, its dictionary (fuzz/cargo-fuzz/<target>.dict,
# where one exists) copied to $OUT/<target>.dict.
#
# The builder image (Dockerfile) runs it with SRC, OUT and SANITIZER set; cargo fuzz's default
# sanitizer is address, ClusterFuzzLite's default, and the image's cargo adds the flags of its
# coverage build. It also runs outside Docker with SRC (holding pallas-diff/) and OUT pointing
# at local directories: ci/cflite-build.sh does that in ci/test.sh.
#   CFLITE_CARGO_FUZZ_FLAGS   more `cargo fuzz build` flags (a stable toolchain needs
#                             `--sanitizer none`: ASan takes -Z flags)
#   CARGO_TARGET_DIR          where cargo builds (default fuzz/cargo-fuzz/target)
#
# Seed corpora: frontend gets the regression corpus's case scripts (corpus/cases/*.py), the spec
# kernels and the bad-input scripts; differential and planner_total take raw bytes that the
# generator reads a config and a case from, so theirs are fuzz/cargo-fuzz/seed-corpus.sh's
# deterministic byte buffers (the corpus's case JSON would be just other bytes to them).
cd "$SRC/pallas-diff"
fuzz_dir=fuzz/cargo-fuzz
# Word splitting of the extra flags is wanted.
# shellcheck disable=SC2086
cargo fuzz build -O --fuzz-dir "$fuzz_dir" ${CFLITE_CARGO_FUZZ_FLAGS:-}
triple=$(rustc -vV | sed -n 's/^host: //p')
bin_dir="${CARGO_TARGET_DIR:-$fuzz_dir/target}/$triple/release"
# The seeds alone, in a fresh directory (fuzz/cargo-fuzz/corpus/ also holds what local runs
# found).
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
"$fuzz_dir/seed-corpus.sh" "$seeds"
cp corpus/cases/*.py "$seeds/frontend/"
out=$(cd "$OUT" && pwd)
targets=$(cargo fuzz list --fuzz-dir "$fuzz_dir")
for target in $targets; do
  cp "$bin_dir/$target" "$out/"
  rm -f "$out/${target}_seed_corpus.zip"
  if [ ! -d "$seeds/$target" ]; then
    echo "build.sh: no seed corpus for target $target (add it to $fuzz_dir/seed-corpus.sh)" >&2
    exit 1
  fi
  (cd "$seeds/$target" && zip -q -r "$out/${target}_seed_corpus.zip" .)
  if [ -f "$fuzz_dir/$target.dict" ]; then
    cp "$fuzz_dir/$target.dict" "$out/$target.dict"
  fi
done
echo "build.sh: built $(echo "$targets" | wc -w) target(s) into $out"
