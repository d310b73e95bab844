//! Real mutants, end to end: of a small real Python module written here (needs only an
//! interpreter with mutmut 3, the Helion environment's), and of Helion itself in the fork
//! server (needs the Helion environment). Each skips with the reason when its interpreter is
//! absent. No timings are asserted.

use pallas_diff_mutants::mutant::{self, SourceFile};
use pallas_diff_mutants::server::{self, ForkServer, Overlay};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const CALC: &str = r#""""A small module to mutate."""


def add(a, b):
    return a + b


def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def is_small(n):
    if n < 10 and n >= 0:
        return True
    return False


def describe(n):
    import logging

    logging.getLogger(__name__).debug("n is %d", n)
    return n == "small"


def in_window(n, lo, hi):
    if n is not None:
        return (
            n >= lo
            and n < hi
        )
    return False
"#;

/// A test of `calc` as a script: exit 0 when every assertion holds.
const CALC_TEST: &str = r#"
import calc
assert calc.add(2, 3) == 5
assert calc.clamp(5, 0, 3) == 3
assert calc.clamp(-1, 0, 3) == 0
assert calc.clamp(2, 0, 3) == 2
assert calc.is_small(3) is True
assert calc.is_small(10) is False
assert calc.is_small(-1) is False
assert calc.is_small(9) is True
assert calc.is_small(0) is True
"#;

/// Whether `python` imports mutmut 3's operators and libcst.
fn has_mutmut(python: &Path) -> Result<bool, String> {
    Ok(Command::new(python)
        .args(["-c", "import mutmut.mutation.mutators, libcst"])
        .status()
        .map_err(|e| e.to_string())?
        .success())
}

/// The Helion environment's interpreter, which has mutmut 3 (`requirements-helion.txt`), or
/// why there is none.
fn mutmut_python() -> Result<PathBuf, String> {
    let python = tpu_runner::helion_python_if_present()?;
    if has_mutmut(&python)? {
        Ok(python)
    } else {
        Err(format!(
            "{} has no mutmut 3 (`pip install -r tpu-runner/python/requirements-helion.txt`)",
            python.display()
        ))
    }
}

/// An interpreter with mutmut 3 for mutants of a small module, which need no Helion: the
/// Helion environment's when present, else the JAX venv's (`requirements.txt` pins mutmut and
/// libcst too, so CI on a fresh clone runs the test), or why there is none.
fn small_module_python() -> Result<PathBuf, String> {
    if let Ok(python) = mutmut_python() {
        return Ok(python);
    }
    let python = tpu_runner::provision().map_err(|e| e.to_string())?;
    if has_mutmut(&python)? {
        Ok(python)
    } else {
        Err(format!(
            "neither the Helion environment nor {} has mutmut 3 (`pip install -r tpu-runner/python/requirements.txt`)",
            python.display()
        ))
    }
}

#[test]
fn real_mutants_of_a_small_module_apply_and_most_are_killed() {
    let python = match small_module_python() {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: no interpreter with mutmut 3: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calc.py");
    std::fs::write(&path, CALC).unwrap();
    let file = SourceFile {
        rel: "calc.py".into(),
        path: path.clone(),
    };
    let all = mutant::enumerate(
        &python,
        &server::script("mutant_enumerate.py"),
        std::slice::from_ref(&file),
    )
    .unwrap();
    assert!(all.len() >= 10, "{} mutants", all.len());
    // Ids are unique and stable.
    let mut ids: Vec<String> = all.iter().map(|m| m.id()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all.len());
    let again = mutant::enumerate(
        &python,
        &server::script("mutant_enumerate.py"),
        std::slice::from_ref(&file),
    )
    .unwrap();
    assert_eq!(all, again);
    // The operators asked for are there.
    let has = |op: &str, from: &str, to: &str| {
        all.iter()
            .any(|m| m.operator == op && m.original == from && m.replacement == to)
    };
    assert!(has("swap_op:Add->Subtract", "a + b", "a - b"), "{all:#?}");
    assert!(has("min_max_swap", "min(x, hi)", "max(x, hi)"));
    assert!(has("drop_clamp", "max(lo, min(x, hi))", "lo"));
    assert!(
        all.iter()
            .any(|m| m.operator.starts_with("swap_op:LessThan"))
    );
    assert!(all.iter().any(|m| m.operator == "swap_op:And->Or"));
    // A node spanning lines inside an indented block is spliced where it sits, its
    // indentation kept (libcst renders a node alone at column 0; mutmut's new operator node
    // brings its own whitespace).
    let window = all
        .iter()
        .find(|m| m.operator == "swap_op:And->Or" && m.original.contains("n >= lo"))
        .unwrap_or_else(|| panic!("no And->Or mutant of in_window: {all:#?}"));
    assert!(
        window
            .apply(CALC)
            .unwrap()
            .contains("        return (\n            n >= lo or n < hi\n        )\n"),
        "{window:#?}"
    );
    assert!(all.iter().any(|m| m.operator == "name:True->False"));
    // Mutants of the logged message are marked; a string compared with is code.
    let strings = |text: &str| -> Vec<bool> {
        all.iter()
            .filter(|m| m.operator == "string" && m.original.contains(text))
            .map(|m| m.in_message)
            .collect()
    };
    let logged = strings("n is");
    assert!(
        !logged.is_empty() && logged.iter().all(|&x| x),
        "{logged:?}"
    );
    let compared = strings("small");
    assert!(
        !compared.is_empty() && compared.iter().all(|&x| !x),
        "{compared:?}"
    );
    // Every mutant applies, parses, and the test kills most of the others.
    let test = dir.path().join("test_calc.py");
    std::fs::write(&test, CALC_TEST).unwrap();
    let unmutated = run_test(&python, dir.path(), &test);
    assert!(unmutated, "the test fails on the unmutated module");
    let mut killed = 0;
    let mut of_code = 0;
    for m in &all {
        let text = m.apply(CALC).unwrap();
        std::fs::write(&path, &text).unwrap();
        let diff = m.diff(CALC).unwrap();
        assert!(diff.contains(&format!("@@ -{},", m.line)), "{diff}");
        if m.in_message || m.line < 4 || m.line > 16 {
            continue;
        }
        of_code += 1;
        if !run_test(&python, dir.path(), &test) {
            killed += 1;
        }
    }
    std::fs::write(&path, CALC).unwrap();
    assert!(
        killed * 10 >= of_code * 7,
        "{killed} of {of_code} mutants of add/clamp/is_small killed"
    );
}

fn run_test(python: &Path, dir: &Path, test: &Path) -> bool {
    Command::new(python)
        .arg(test)
        .current_dir(dir)
        .env("PYTHONPATH", dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn a_helion_mutant_is_killed_in_the_fork_server_and_an_import_breaking_one_is_invalid() {
    let python = match mutmut_python() {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: the Helion environment is absent: {why}");
            return;
        }
    };
    let root = server::helion_root(&python).unwrap();
    // The Pallas codegen of `hl.store`/`hl.load` (108 lines): every lowered case runs it.
    let rel = "helion/_compiler/pallas/memory_ops.py";
    let file = SourceFile {
        rel: rel.into(),
        path: root.join(rel),
    };
    let all = mutant::enumerate(
        &python,
        &server::script("mutant_enumerate.py"),
        std::slice::from_ref(&file),
    )
    .unwrap();
    // The store's index parts computed without its subscript.
    let m = all
        .iter()
        .find(|m| {
            m.original == "pallas_codegen.index_parts(state, subscript, tensor)"
                && m.replacement == "pallas_codegen.index_parts(state, None, tensor)"
        })
        .unwrap_or_else(|| panic!("no such mutant among {all:#?}"));
    let scratch = tempfile::tempdir().unwrap();
    let server = ForkServer::start(&python, &scratch.path().join("zygote.log")).unwrap();
    let overlays = scratch.path().join("overlays");
    let corpus = pallas_diff_mutants::suite::corpus_cases(&corpus::entry::default_dir()).unwrap();
    let case = &corpus
        .iter()
        .find(|c| c.name.starts_with("0001-"))
        .expect("the corpus's first entry")
        .case;
    let timeout = Duration::from_secs(300);
    let observe = |overlay: &Overlay| {
        let pool = std::sync::Arc::new(overlay.pool(&server, timeout).unwrap());
        assert_eq!(pool.availability().helion.as_deref(), Some("1.5.1"));
        pallas_diff_mutants::suite::observe_case(case, tpu_runner::Mode::HelionPallas, pool).0
    };
    let baseline = observe(&Overlay::baseline(&server, None, &overlays).unwrap());
    assert_eq!(baseline.outcome, "agree", "{baseline:?}");
    let mutated = observe(&Overlay::of_mutant(&server, &file, m, &overlays).unwrap());
    let how = mutated.kill_against(&baseline);
    assert!(how.is_some(), "the mutant survived: {mutated:?}");
    // A module that does not parse: the worker's hello fails (an invalid mutant).
    let mut broken = m.clone();
    broken.replacement = format!("{} +* ", m.original);
    let overlay = Overlay::of_mutant(&server, &file, &broken, &overlays).unwrap();
    match overlay.pool(&server, timeout) {
        Err(tpu_runner::RunError::JaxUnavailable { .. }) => {}
        Err(e) => panic!("expected a failed hello, got {e}"),
        Ok(_) => panic!("a module that does not parse imported"),
    }
}
