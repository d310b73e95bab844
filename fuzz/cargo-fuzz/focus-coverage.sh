#!/usr/bin/env bash
# A RUSTC_WRAPPER for `cargo fuzz build|run`: libFuzzer's coverage instrumentation (the
# `sancov-module` pass and its `-sanitizer-coverage-*` options, which cargo-fuzz puts in RUSTFLAGS
# for every crate) stays only on the crates whose `--crate-name` matches
# PALLAS_DIFF_COVERAGE_CRATES, an extended regex. The default is the system under test, the
# compiler crate (validator, planner, lowering), the vocabulary crate whose frontend the
# `frontend` target exercises, and the fuzz target binaries. The executor (pallas-sim), the
# reference and the generator are tools, not the subject, and stay uninstrumented.
#
# Why: libFuzzer's per-run bookkeeping walks every counter a run touched, and was ~30% of the
# `differential` target's time (perf, 2026-11-30). The reference, the generator and third-party
# crates add counters whose coverage is not a property of the compiler. See README.md
# "Throughput" for the measured effect.
#
#   RUSTC_WRAPPER=$PWD/fuzz/cargo-fuzz/focus-coverage.sh cargo fuzz run -O --no-trace-compares \
#     --sanitizer none --fuzz-dir fuzz/cargo-fuzz --target-dir target/fuzz-focus differential
#
# The crates outside the list also lose cargo-fuzz's `-simplifycfg-branch-fold-threshold=0`,
# which keeps branches apart only so that they count as separate coverage.
#
# Give it its own --target-dir: cargo does not know what a wrapper does to the flags, so it would
# reuse artifacts from a build that instrumented everything (or none of it).
set -euo pipefail

rustc=$1
shift
keep=${PALLAS_DIFF_COVERAGE_CRATES:-pallas_diff_compiler|pallas_diff_lang|differential|frontend|planner_total}

crate=""
prev=""
for a in "$@"; do
    if [[ $prev == --crate-name ]]; then
        crate=$a
    fi
    prev=$a
done

if [[ -n $crate && $crate =~ ^(${keep})$ ]]; then
    exec "$rustc" "$@"
fi

is_coverage_codegen_flag() {
    [[ $1 == passes=sancov-module || $1 == llvm-args=-sanitizer-coverage* ||
        $1 == llvm-args=-simplifycfg-branch-fold-threshold=* ]]
}

args=()
while (($#)); do
    case $1 in
    -C)
        # The two-argument spelling, `-C passes=sancov-module`.
        if (($# > 1)) && is_coverage_codegen_flag "$2"; then
            shift 2
            continue
        fi
        ;;
    -C*)
        if is_coverage_codegen_flag "${1#-C}"; then
            shift
            continue
        fi
        ;;
    esac
    args+=("$1")
    shift
done
# `${args[@]+...}`: an empty array is "unbound" under `set -u` in bash before 4.4.
exec "$rustc" ${args[@]+"${args[@]}"}
