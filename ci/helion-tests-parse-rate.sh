#!/usr/bin/env bash
# How many of the kernels of Helion's own Pallas tests pallas-diff reads exactly as the tests
# write them, and whether the reference agrees with real Helion on them (issue 39's target).
#
# For every test_pallas*.py in HELION_TEST_DIR: `pallas-diff import FILE --json` (kernels found,
# imported, not imported with the reason, grouped by construct), then `pallas-diff check CASE
# --engines oracle,helion-pallas --json` on every imported case script, one at a time, each under
# `timeout`. Prints a summary: files, kernels found and imported (parse rate), check outcomes by
# class, how often the reference agrees with Helion where Helion runs the case without crashing,
# and every disagreement, each case with the xfail/skip marks of the Helion test that calls it and
# whether that call sits in an assertRaises (Helion's own word on it). One failing kernel never
# stops the run.
#
# Usage: ci/helion-tests-parse-rate.sh HELION_TEST_DIR [PALLAS_DIFF_BIN] [OUT_DIR]
#   HELION_TEST_DIR  a folder holding Helion's test files (its test/ folder, or them exported
#                    from a Helion checkout: `git -C helion archive HEAD test | tar -x`); only
#                    read, never run. Keep them out of this repository.
#   PALLAS_DIFF_BIN  default: target/release/pallas-diff of this repository (it finds its Helion
#                    venv, .venv-helion, beside its own workspace: `pallas-diff probe`)
#   OUT_DIR          default: ${TMPDIR:-/tmp}/helion-tests-parse-rate; holds import/ (the JSON
#                    of each import), cases/ (the case scripts), check/ (each check's JSON,
#                    stderr and exit status), summary.txt and summary.json
# Environment: CASE_TIMEOUT (seconds per check, default 300), ENGINES (default
#   oracle,helion-pallas), RESUME=1 (keep the cases and the checks already done in OUT_DIR; a
#   rerun after an interruption checks only the rest).
# Costs about 10 s of CPU a case (Helion compiles each kernel, then runs 8 extra input sets): 153
# cases took 28 minutes on 2 shared cores. Run it under `nice` beside other work.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 1 || $# -gt 3 || $1 == -h || $1 == --help ]]; then
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
src=$(cd "$1" && pwd)
bin=${2:-$here/target/release/pallas-diff}
out=${3:-${TMPDIR:-/tmp}/helion-tests-parse-rate}
case_timeout=${CASE_TIMEOUT:-300}
engines=${ENGINES:-oracle,helion-pallas}
resume=${RESUME:-0}

[[ -x $bin ]] || { echo "error: no pallas-diff binary at $bin (cargo build --release)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 is needed for the tally" >&2; exit 2; }
shopt -s nullglob
files=("$src"/test_pallas*.py)
shopt -u nullglob
[[ ${#files[@]} -gt 0 ]] || { echo "error: no test_pallas*.py in $src" >&2; exit 2; }

mkdir -p "$out/import" "$out/cases" "$out/check"
out=$(cd "$out" && pwd)
echo "helion-tests-parse-rate: ${#files[@]} files from $src; binary $bin; out $out"

# 1. Import every file. Exit 2 is "no kernel imported" (the JSON still lists why); anything else
# but 0 is recorded and the file counts as read with what its JSON says (nothing, if none).
for f in "${files[@]}"; do
  stem=$(basename "$f" .py)
  if [[ $resume == 1 && -s $out/import/$stem.json ]]; then
    continue
  fi
  rm -rf "${out:?}/cases/$stem"
  rc=0
  "$bin" import "$f" --out "$out/cases/$stem" --json >"$out/import/$stem.json" \
    2>"$out/import/$stem.err" || rc=$?
  echo "$rc" >"$out/import/$stem.rc"
  echo "import $stem: exit $rc"
done

# 2. Check every imported case script, one at a time.
shopt -s nullglob
cases=("$out"/cases/*/*.py)
shopt -u nullglob
n=${#cases[@]}
i=0
for c in "${cases[@]}"; do
  i=$((i + 1))
  stem=$(basename "$(dirname "$c")")
  name=$(basename "$c" .py)
  dir=$out/check/$stem
  mkdir -p "$dir"
  if [[ $resume == 1 && -s $dir/$name.rc ]]; then
    continue
  fi
  start=$SECONDS
  rc=0
  timeout "$case_timeout" "$bin" check "$c" --engines "$engines" --json \
    >"$dir/$name.json" 2>"$dir/$name.err" || rc=$?
  echo "$rc" >"$dir/$name.rc"
  outcome=$(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["outcome"])
except Exception: print("-")' "$dir/$name.json")
  echo "[$i/$n] $name: exit $rc, $outcome ($((SECONDS - start)) s)"
done

# 3. The tally.
python3 - "$out" "$src" <<'EOF' | tee "$out/summary.txt"
import collections, glob, json, os, re, sys

out, src = sys.argv[1], sys.argv[2]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def construct(reason):
    """The construct a reason names: the frontend's refused construct as it names it, else the
    importer's reason with its line numbers and names taken out."""
    r = re.sub(r"^line \d+: ", "", reason.strip())
    m = re.match(r"the frontend refuses `([^`]*)`", r)
    if m:
        return "frontend refuses `%s`" % m.group(1)
    if r.startswith("no call of"):
        return "no call of the kernel in its file to take inputs from (direct, code_and_output or run_example)"
    return re.sub(r"`[^`]*`", "`_`", r)


def test_marks(path, line):
    """The xfail/skip decorators of the test function around `line` of `path` (the test that
    makes the call the case takes its inputs from): Helion's own word that it fails there."""
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return ""
    call = min(line, len(lines)) - 1
    i = call
    while i >= 0 and not re.match(r"\s*def test_\w*", lines[i]):
        i -= 1
    indent = lambda l: len(l) - len(l.lstrip())
    raises = ""
    # A call inside `with self.assertRaises...:` is one the test expects Helion to refuse.
    for w in range(i + 1, call):
        if not re.match(r"\s*with self\.assertRaises", lines[w]):
            continue
        j, text = w, lines[w].strip()
        while not text.endswith(":") and j + 1 < call:
            j += 1
            text += " " + lines[j].strip()
        if all(indent(l) > indent(lines[w]) for l in lines[j + 1:call + 1] if l.strip()):
            raises = re.sub(r"^with self\.|:$", "", text)
    block = []
    i -= 1
    # The decorators: up to the blank line (or the def, the class) before them.
    while i >= 0 and lines[i].strip() and not re.match(r"\s*(def|class) ", lines[i]):
        block.insert(0, re.sub(r"\s+#.*$", "", lines[i].strip()))
        i -= 1
    decorators = re.findall(r"@[\w.]+(?:\((?:[^()]|\([^()]*\))*\))?", " ".join(block))
    marks = [d for d in decorators if re.search(r"xfail|skip|expectedFailure", d)]
    return "; ".join(marks + ["expects a raise: " + raises] if raises else marks)


files = sorted(glob.glob(os.path.join(out, "import", "*.json")))
per_file, reasons, not_imported = [], collections.Counter(), []
marks = {}
found = imported = cases = no_call = 0
for path in files:
    stem = os.path.basename(path)[:-5]
    d = load(path) or {}
    rc = open(os.path.join(out, "import", stem + ".rc")).read().strip()
    ok = {(v["line"]) for v in d.get("imported", [])}
    bad = {}
    for v in d.get("not_imported", []):
        bad.setdefault(v["line"], v)
    kernels = ok | set(bad)
    for line, v in sorted(bad.items()):
        if line in ok:
            continue
        c = construct(v["reason"])
        reasons[c] += 1
        no_call += c.startswith("no call of")
        not_imported.append((stem, line, v["kernel"], v["reason"]))
    for v in d.get("imported", []):
        m = re.search(r":(\d+)$", v.get("inputs_from", ""))
        if m:
            marks[v["name"]] = test_marks(os.path.join(src, stem + ".py"), int(m.group(1)))
    found += len(kernels)
    imported += len(ok)
    cases += len(d.get("imported", []))
    try:
        text = open(os.path.join(src, stem + ".py")).read()
    except OSError:
        text = ""
    # helion.kernel(fn, ...) called rather than used as a decorator: import does not list these.
    called = len(re.findall(r"(?<!@)\bhelion\.kernel\(", text))
    per_file.append((stem, rc, len(kernels), len(ok), len(d.get("imported", [])), called))

checks = []
for rcpath in sorted(glob.glob(os.path.join(out, "check", "*", "*.rc"))):
    base = rcpath[:-3]
    rc = open(rcpath).read().strip()
    d = load(base + ".json")
    err = ""
    try:
        lines = [l for l in open(base + ".err").read().splitlines() if l.strip()]
        err = next((l for l in lines if l.startswith("error")), lines[-1] if lines else "")
    except OSError:
        pass
    if d is None:
        outcome = {"124": "timeout (per-case)", "2": "invalid input (exit 2)"}.get(rc, "exit " + rc)
        checks.append(dict(case=os.path.basename(base), rc=rc, outcome=outcome, helion="-",
                           detail=err, d=None))
        continue
    helion = next((e for e in d.get("engines", []) if e.get("engine") == "helion-pallas"), None)
    checks.append(dict(case=os.path.basename(base), rc=rc, outcome=d.get("outcome", "?"),
                       helion=(helion or {}).get("status", "absent"),
                       detail=(helion or {}).get("detail") or "", d=d))

w = sys.stdout.write
w("\n== Helion's Pallas test kernels through pallas-diff (%s)\n" % src)
w("%-34s %6s %8s %9s %6s %7s\n" % ("file", "import", "kernels", "imported", "cases", "called"))
for stem, rc, k, ok, nc, called in per_file:
    w("%-34s %6s %8d %9d %6d %7d\n" % (stem, "exit " + rc, k, ok, nc, called))
pct = lambda a, b: "%.1f%%" % (100.0 * a / b) if b else "n/a"
w("files read: %d\n" % len(per_file))
w("kernels found: %d; imported (parse as written): %d = %s; not imported: %d\n"
  % (found, imported, pct(imported, found), found - imported))
w("  of the kernels some call in their file gives inputs to: %d of %d = %s "
  "(the other %d have no call the importer reads)\n"
  % (imported, found - no_call, pct(imported, found - no_call), no_call))
w("case scripts (one per call site): %d\n" % cases)
w("(called: `helion.kernel(fn, ...)` spelled as a call, not a decorator; import lists only "
  "decorated kernels, so these %d are not in the counts)\n" % sum(p[5] for p in per_file))

w("\n== Not imported, by construct (kernels)\n")
for c, k in reasons.most_common():
    w("%4d  %s\n" % (k, c))

w("\n== check --engines oracle,helion-pallas: outcomes (%d cases)\n" % len(checks))
for o, k in collections.Counter(c["outcome"] for c in checks).most_common():
    w("%4d  %s\n" % (k, o))
w("helion-pallas status: %s\n" % ", ".join(
    "%s %d" % kv for kv in collections.Counter(c["helion"] for c in checks).most_common()))
crashes = [c for c in checks if c["outcome"] == "helion-crash"]
w("helion-crash on a call Helion's test expects to raise (assertRaises): %d of %d\n" % (
    sum("expects a raise" in marks.get(c["case"], "") for c in crashes), len(crashes)))

ran = [c for c in checks if c["helion"] == "ok"]
DISAGREE = {"mismatch", "helion-accepts-invalid", "invalid-case"}
disagree = [c for c in ran if c["outcome"] in DISAGREE]
known = [c for c in ran if c["outcome"] == "known-issue"]
agree = len(ran) - len(disagree)
w("\n== Reference vs Helion where Helion runs the case without crashing\n")
w("Helion ran (helion-pallas ok): %d of %d cases; the reference agrees on %d = %s "
  "(%d of them counted as a listed known issue)\n"
  % (len(ran), len(checks), agree, pct(agree, len(ran)), len(known)))
for c in known:
    w("  known issue: %s: %s\n" % (c["case"], (c["d"] or {}).get("known_issue")))


def describe(c):
    """What differs, in one line."""
    d = c["d"] or {}
    m = d.get("mismatch")
    if not m:
        ref = next((e for e in d.get("engines", []) if e.get("engine") == "oracle"), {})
        return "the reference refuses the case (%s); Helion runs it" % (
            (ref.get("detail") or "").splitlines() or [""])[0][:200]
    s = m.get("input_set")
    where = "extra input set %s (%s)" % (s.get("number"), s.get("flavor")) if s else \
        "the case's own inputs"
    first = (m.get("first") or [{}])[0]
    return "%s: %s of `%s` %s differ (max abs err %s) on %s; first at %s: Helion %s, reference %s" % (
        m.get("kind"), m.get("count"), m.get("output"), m.get("shape"), m.get("max_abs_err"),
        where, first.get("index"), first.get("engine"), first.get("reference"))


own = [c for c in disagree if not ((c["d"] or {}).get("mismatch") or {}).get("input_set")]
marked = [c for c in disagree if marks.get(c["case"])]
w("disagreements: %d (%d on the case's own inputs, %d only on extra input sets; %d where "
  "Helion's test is itself marked xfail/skip)\n"
  % (len(disagree), len(own), len(disagree) - len(own), len(marked)))
for c in disagree:
    w("  %s: %s: %s\n" % (c["case"], c["outcome"], describe(c)))
    if marks.get(c["case"]):
        w("    Helion's test is marked: %s\n" % marks[c["case"]])

w("\n== Cases that are not agree (outcome, helion-pallas status, first detail line)\n")
for c in checks:
    if c["outcome"] != "agree":
        detail = (c["detail"].splitlines() or [""])[0][:200]
        ki = (c["d"] or {}).get("known_issue")
        mk = marks.get(c["case"])
        w("  %s: %s%s; helion %s; %s%s\n" % (c["case"], c["outcome"], " (%s)" % ki if ki else "",
                                            c["helion"], detail, " [test: %s]" % mk if mk else ""))

with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(dict(files=[p[0] for p in per_file], kernels_found=found, imported=imported,
                   cases=cases, no_call=no_call, reasons=reasons.most_common(),
                   not_imported=not_imported,
                   outcomes=collections.Counter(c["outcome"] for c in checks),
                   helion_ran=len(ran), reference_agrees=agree,
                   disagreements=[dict(case=c["case"], outcome=c["outcome"], what=describe(c),
                                       mismatch=(c["d"] or {}).get("mismatch"),
                                       test_marks=marks.get(c["case"], ""))
                                  for c in disagree],
                   checks=[dict({k: v for k, v in c.items() if k != "d"}, test_marks=marks.get(c["case"], ""))
                           for c in checks]),
              f, indent=1)
EOF
