#!/usr/bin/env bash
# A libFuzzer campaign on one `cargo fuzz` target (default `differential`), on stable Rust, built
# for throughput the way fuzz/cargo-fuzz/README.md "Throughput" measures it: no debug
# assertions, no compare tracing, coverage instrumentation on the compiler crate only
# (focus-coverage.sh), hit counts off. One libFuzzer job per core by default.
#   CARGO_FUZZ_TARGET   target (default differential)
#   CARGO_FUZZ_TIME     seconds per run (default 3600)
#   CARGO_FUZZ_JOBS     parallel libFuzzer jobs (default: the number of cores)
#   CARGO_FUZZ_FULL_COVERAGE=1   instrument every crate instead (slower, finer signal)
# A crash (a finding, or a harness bug) is written to fuzz/cargo-fuzz/artifacts/<target>/ and
# makes the script exit non-zero; `cargo fuzz run ... <target> <artifact>` reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_FUZZ_TARGET:-differential}
jobs=${CARGO_FUZZ_JOBS:-$(nproc)}
# Pinned: focus-coverage.sh recognizes the RUSTFLAGS spelling of this version.
if [[ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz 0.13.2" ]]; then
  cargo install --locked --force cargo-fuzz --version 0.13.2
fi
fuzz/cargo-fuzz/seed-corpus.sh
build=(-O --no-trace-compares --sanitizer none --fuzz-dir fuzz/cargo-fuzz)
if [[ ${CARGO_FUZZ_FULL_COVERAGE:-0} == 1 ]]; then
  build+=(--target-dir target/fuzz-full)
else
  # Its own target dir: cargo cannot see what the wrapper does to the flags (see the script).
  # This replaces a RUSTC_WRAPPER set in the environment (sccache, say) for the fuzz build.
  export RUSTC_WRAPPER="$PWD/fuzz/cargo-fuzz/focus-coverage.sh"
  build+=(--target-dir target/fuzz-focus)
fi
cargo fuzz build "${build[@]}" "$target"
# Fork mode supervises the jobs, merges what they find into one corpus and stops at the first
# crash, hang or OOM (fork mode ignores the last two unless told). It runs ~15% fewer exec/s per
# core than independent `-jobs`, which restart jobs instead (README "Throughput").
exec cargo fuzz run "${build[@]}" "$target" -- \
  -use_counters=0 -max_total_time="${CARGO_FUZZ_TIME:-3600}" \
  -fork="$jobs" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0 -print_final_stats=1
