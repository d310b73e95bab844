//! Shared helpers of the codegen tests: compiling spec kernels, checking that emitted modules
//! compile as Python, and (when a JAX interpreter is configured) running them.

#![allow(dead_code)]

use corpus::expectations::{SpecKernel, load_spec_kernel, spec_kernels_dir};
use pallas_diff_compiler::compile::{
    CodegenOptions, Compiled, Lowered, NotModelled, Refused, compile,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Loads `corpus/spec-kernels/<name>.py`.
pub fn spec(name: &str) -> SpecKernel {
    let path = spec_kernels_dir().join(format!("{name}.py"));
    load_spec_kernel(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compiles spec kernel `name` with default options.
pub fn compile_spec(name: &str) -> (SpecKernel, Compiled) {
    let k = spec(name);
    let c = compile(&k.case, &CodegenOptions::default());
    (k, c)
}

/// The emitted source, or a panic naming why there is none.
pub fn source_of(name: &str, c: &Compiled) -> String {
    match &c {
        Compiled::Lowered(Lowered { module: s, .. }) => s.to_string(),
        Compiled::Rejected(Refused { rejection: r, .. }) => panic!("{name}: rejected: {r}"),
        Compiled::Gap(NotModelled { gap: g, .. }) => panic!("{name}: {g}"),
    }
}

/// `python3`, if present.
pub fn python3() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("python3"))
}

/// A Python with JAX for running emitted modules, only when `PALLAS_DIFF_JAX_TESTS=1`:
/// `$PALLAS_DIFF_JAX_PYTHON`, else the workspace venv `.venv/bin/python`, if it imports JAX.
pub fn jax_python() -> Option<PathBuf> {
    if std::env::var_os("PALLAS_DIFF_JAX_TESTS").is_none_or(|v| v != "1") {
        return None;
    }
    let candidates: Vec<PathBuf> = std::env::var_os("PALLAS_DIFF_JAX_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")])
        .collect();
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import jax, jax.experimental.pallas"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Byte-compiles each `(name, source)` with `py_compile` (one Python process for all);
/// returns the failures.
pub fn py_compile_all(python: &Path, sources: &[(String, String)]) -> Vec<String> {
    let dir = scratch_dir("py_compile");
    let mut files = Vec::new();
    for (name, src) in sources {
        let file = dir.path().join(format!("{name}.py"));
        std::fs::write(&file, src).expect("write module");
        files.push(file);
    }
    let script = "import py_compile, sys\n\
                  for f in sys.argv[1:]:\n\
                  \x20   try:\n\
                  \x20       py_compile.compile(f, doraise=True)\n\
                  \x20   except py_compile.PyCompileError as e:\n\
                  \x20       print(f, repr(e.msg), sep=': ')\n";
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(&files)
        .output()
        .expect("run python3");
    let mut failures: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    if !out.status.success() {
        failures.push(format!(
            "py_compile crashed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    failures
}

/// A fresh directory under the system temp dir, removed when the returned guard drops (a
/// directory per call used to stay behind: 252 `pallas-diff-codegen-*` in /tmp after a day).
pub fn scratch_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pallas-diff-codegen-{tag}-"))
        .tempdir()
        .expect("create scratch dir")
}

/// One token of the tiny regex dialect the upstream tests use.
#[derive(Clone, Debug)]
enum Tok {
    Lit(char),
    /// `\d+`
    Digits,
    /// `[^)]+`
    NotParen,
}

fn tokens(pattern: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some('d') => {
                    assert_eq!(it.next(), Some('+'), "only \\d+ is supported in {pattern}");
                    out.push(Tok::Digits);
                }
                Some(e) => out.push(Tok::Lit(e)),
                None => panic!("dangling escape in {pattern}"),
            },
            '[' => {
                let class: String = it.by_ref().take(3).collect();
                assert_eq!(class, "^)]", "only [^)]+ is supported in {pattern}");
                assert_eq!(it.next(), Some('+'), "only [^)]+ is supported in {pattern}");
                out.push(Tok::NotParen);
            }
            '.' | '(' | ')' | ']' | '*' | '+' | '?' | '|' | '{' | '}' | '^' | '$' => {
                panic!("unescaped `{c}` in {pattern}")
            }
            c => out.push(Tok::Lit(c)),
        }
    }
    out
}

fn match_here(toks: &[Tok], text: &[char]) -> bool {
    let Some((t, rest)) = toks.split_first() else {
        return true;
    };
    match t {
        Tok::Lit(c) => text.first() == Some(c) && match_here(rest, &text[1..]),
        Tok::Digits | Tok::NotParen => {
            let ok = |c: char| match t {
                Tok::Digits => c.is_ascii_digit(),
                _ => c != ')',
            };
            let n = text.iter().take_while(|&&c| ok(c)).count();
            (1..=n).rev().any(|k| match_here(rest, &text[k..]))
        }
    }
}

/// Whether the (escaped-literal, `\d+`, `[^)]+`) regex `pattern` matches somewhere in `text`
/// (Python's `re.search`, as upstream's `assertRegex`).
pub fn regex_search(pattern: &str, text: &str) -> bool {
    let toks = tokens(pattern);
    let chars: Vec<char> = text.chars().collect();
    (0..=chars.len()).any(|i| match_here(&toks, &chars[i..]))
}

/// Upstream's `assertNarrowingIsResident`: no materializing slice, no gather.
pub fn assert_narrowing_is_resident(name: &str, code: &str) {
    assert!(
        !code.contains("dynamic_slice_in_dim"),
        "{name}: emits dynamic_slice_in_dim\n{code}"
    );
    assert!(!code.contains("jnp.take"), "{name}: emits jnp.take\n{code}");
}

/// `assertRegex`.
pub fn assert_regex(name: &str, code: &str, pattern: &str) {
    assert!(
        regex_search(pattern, code),
        "{name}: no match for /{pattern}/ in\n{code}"
    );
}

/// `assertIn`.
pub fn assert_in(name: &str, code: &str, needle: &str) {
    assert!(code.contains(needle), "{name}: `{needle}` not in\n{code}");
}
