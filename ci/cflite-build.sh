#!/usr/bin/env bash
# Checks .clusterfuzzlite/build.sh without Docker: runs it with SRC and OUT set to local
# directories (under target/cflite-local), then runs every target it built over its seed
# corpus (each input once, `-runs=0`, with its dictionary where there is one): a target missing
# from $OUT, a missing or empty seed corpus, a malformed dictionary or a crashing seed fails.
# Without cargo-fuzz or zip it says why, and still type-checks the targets (`cargo check` of
# the cargo-fuzz crate, its own workspace), so they cannot rot on a host without the tools.
#
# The build is the stable one (`--sanitizer none`; the builder image's nightly builds with
# ASan) and leaves the fuzz crate's fat LTO and single codegen unit off: they are there for
# fuzzing throughput and would triple this build's time, while what is checked here is the
# script, the targets and their seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
check_only() {
  echo "skip cflite-build: $1; type-checking the cargo-fuzz targets instead"
  cargo check --locked --manifest-path fuzz/cargo-fuzz/Cargo.toml --bins \
    --target-dir target/cargo-fuzz-check
  exit 0
}
if ! cargo fuzz --version >/dev/null 2>&1; then
  check_only "cargo-fuzz is not installed (cargo install --locked cargo-fuzz --version 0.13.2)"
fi
for tool in zip unzip; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    check_only "$tool is not installed"
  fi
done
root=$PWD
work=$root/target/cflite-local
rm -rf "$work"
mkdir -p "$work/src" "$work/out" "$work/seeds"
ln -s "$root" "$work/src/pallas-diff"
SRC=$work/src OUT=$work/out CFLITE_CARGO_FUZZ_FLAGS="--sanitizer none" \
  CARGO_TARGET_DIR=$root/target/cflite CARGO_PROFILE_RELEASE_LTO=false \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 bash .clusterfuzzlite/build.sh
status=0
for src in fuzz/cargo-fuzz/fuzz_targets/*.rs; do
  target=$(basename "$src" .rs)
  bin=$work/out/$target
  zipped=$work/out/${target}_seed_corpus.zip
  if [ ! -x "$bin" ] || [ ! -f "$zipped" ]; then
    echo "cflite-build: $target: no $bin or no $zipped"
    status=1
    continue
  fi
  seeds=$work/seeds/$target
  mkdir -p "$seeds"
  unzip -q "$zipped" -d "$seeds"
  n=$(find "$seeds" -type f | wc -l)
  if ((n == 0)); then
    echo "cflite-build: $target: empty seed corpus"
    status=1
    continue
  fi
  args=(-runs=0)
  if [ -f "$work/out/$target.dict" ]; then
    args+=(-dict="$work/out/$target.dict")
  fi
  if "$bin" "${args[@]}" "$seeds" >"$work/$target.log" 2>&1; then
    echo "cflite-build: $target ran its $n seed(s) clean"
  else
    echo "cflite-build: $target FAILED on its seeds (log: $work/$target.log):"
    tail -20 "$work/$target.log"
    status=1
  fi
done
exit $status
