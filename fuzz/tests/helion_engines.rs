//! The real-Helion engines end to end: case script -> rendered kernel -> Helion worker ->
//! classification, on kernels whose Helion 1.5.1 behaviour was measured by hand.
//!
//! These need the opt-in Helion environment (~6 GB, `pallas-diff provision --helion`). Without
//! it every test prints why it is skipped and passes without checking anything; CI's Helion job
//! provisions it and runs them.

use compiler::compile::CodegenOptions;
use lang::frontend::parse_case;
use pallas_diff_fuzz::check::{CaseReport, HelionHealth, ValueAgreement, check_case};
use pallas_diff_fuzz::engines::{self, EngineStatus, Pools};
use pallas_diff_fuzz::outcome::Outcome;
use std::sync::{Arc, OnceLock};
use tpu_runner::{Pool, PoolConfig, Runtime};

/// One Helion worker shared by the tests of this file (it takes ~6 s to import torch and
/// Helion), or why there is none.
fn helion_pool() -> Result<Arc<Pool>, String> {
    static POOL: OnceLock<Result<Arc<Pool>, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let python = tpu_runner::helion_python_if_present()?;
        let config = PoolConfig::for_runtime(Runtime::Helion, python).with_workers(1);
        Pool::new(config)
            .map(Arc::new)
            .map_err(|e| format!("the Helion worker does not start: {e}"))
    })
    .clone()
}

/// Checks `script` with the reference, pallas-sim and the named Helion engines; `None` (after
/// printing why) when the Helion environment is absent.
fn check(script: &str, helion: &[&str]) -> Option<CaseReport> {
    let pool = match helion_pool() {
        Ok(p) => p,
        Err(why) => {
            // Written to the process's stderr, not through the test harness's capture, so the
            // reason shows in a passing run too (once per test binary).
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "skip helion_engines: {why}");
            });
            return None;
        }
    };
    let case = parse_case(script, "case.py").expect("the test case parses");
    let mut names = vec!["oracle".to_string(), "pallas-sim".to_string()];
    names.extend(helion.iter().map(|s| s.to_string()));
    let pools = Pools {
        jax: None,
        helion: Some(pool),
    };
    let ids: Vec<engines::EngineId> = names
        .iter()
        .map(|n| n.parse().expect("an engine"))
        .collect();
    let engines = engines::build_with(&ids, &pools).expect("engines");
    Some(check_case(&case, &engines, &CodegenOptions::default()))
}

fn status<'a>(r: &'a CaseReport, engine: &str) -> &'a EngineStatus {
    &r.engines
        .iter()
        .find(|e| e.engine.name() == engine)
        .unwrap_or_else(|| panic!("{engine} did not run"))
        .status
}

/// A resident-Ref kernel Helion 1.5.1 lowers: tile runs over the live rows and a tail slice
/// (the case-script format's own example, with a fixed outer block).
const LOWERED: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def tail_runs(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
tail_runs(x)
"#;

#[test]
fn a_kernel_helion_lowers_agrees_in_every_helion_mode() {
    let Some(r) = check(
        LOWERED,
        &["helion-pallas", "helion-eager", "helion-tpu-lower"],
    ) else {
        return;
    };
    assert_eq!(r.outcome, Outcome::Agree, "{r:#?}");
    assert!(status(&r, "helion-pallas").outputs().is_some());
    assert!(status(&r, "helion-eager").outputs().is_some());
    assert_eq!(status(&r, "helion-tpu-lower"), &EngineStatus::Lowered);
    let generated = r
        .engines
        .iter()
        .find(|e| e.engine.name() == "helion-pallas")
        .and_then(|e| e.generated.as_deref())
        .unwrap_or_default();
    assert!(
        generated.contains("pallas_call") || generated.contains("pl."),
        "Helion's generated module is kept for reports:\n{generated}"
    );
    assert_eq!(r.helion_agreement(), Some(("lowered".to_string(), true)));
    assert_eq!(r.helion_reached_codegen(), Some(true), "{r:#?}");
    assert_eq!(r.helion_health(), Some(HelionHealth::Lowered));
    // The modes with outputs ran the kernel they compiled once on the extra input sets too,
    // each judged by the reference and compared with it; helion-tpu-lower has no values.
    for engine in ["helion-pallas", "helion-eager"] {
        let run = r
            .engines
            .iter()
            .find(|e| e.engine.name() == engine)
            .unwrap();
        let sets = run.input_sets.as_ref().expect("extra input sets ran");
        assert_eq!(
            sets.derived,
            pallas_diff_fuzz::input_sets::extra_sets(),
            "{engine}"
        );
        // Every set is compared (a set with NaN/inf beside its finite twin) or dropped.
        let dropped = sets.dropped_invalid + sets.dropped_overflow + sets.dropped_diverges;
        assert!(
            sets.compared + dropped >= sets.derived,
            "{engine}: {sets:?}"
        );
        assert!(
            sets.compared > 0 && sets.mismatch.is_none(),
            "{engine}: {sets:?}"
        );
    }
    let lowered = r
        .engines
        .iter()
        .find(|e| e.engine.name() == "helion-tpu-lower");
    assert!(lowered.unwrap().input_sets.is_none());
    // Values: our module (pallas-sim) and each Helion engine that ran to outputs, both
    // against the reference; helion-tpu-lower only lowers.
    assert_eq!(
        r.helion_value_agreement(),
        vec![
            ("helion-pallas".parse().unwrap(), ValueAgreement::Agree),
            ("helion-eager".parse().unwrap(), ValueAgreement::Agree),
        ]
    );
}

#[test]
fn a_non_power_of_two_config_block_is_refused_by_both() {
    // D-1.5.1-09: Helion refuses block_sizes=[3] with InvalidConfig, and so does the model.
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[3], pallas_loop_type="fori_loop"),
)
def k(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            acc = acc + x[outer, :, :].sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(9, 2, 128, dtype=torch.float32)
k(x)
"#;
    let Some(r) = check(script, &["helion-pallas"]) else {
        return;
    };
    assert_eq!(r.outcome, Outcome::Rejected, "{r:#?}");
    let EngineStatus::Refused { class, message, .. } = status(&r, "helion-pallas") else {
        panic!("{r:#?}")
    };
    assert_eq!(class, "InvalidConfig");
    assert!(
        message.contains("must be a power of two, got 3"),
        "{message}"
    );
    assert_eq!(
        r.helion_agreement(),
        Some(("config.block-size-not-power-of-two".to_string(), true))
    );
    assert_eq!(
        r.helion_message_agreement(),
        Some(true),
        "the rule's message is Helion's"
    );
}

#[test]
fn an_absent_loop_type_defaults_as_in_helion() {
    // D-1.5.1-10: with no `pallas_loop_type` and a data-dependent inner bound, Helion 1.5.1
    // defaults to fori_loop and lowers; so does the model.
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[]),
)
def k(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :]
        out[request, :, :] = acc
    return out


x = torch.ones(9, 2, 128, dtype=torch.float32)
k(x)
"#;
    let Some(r) = check(script, &["helion-pallas"]) else {
        return;
    };
    assert_eq!(r.outcome, Outcome::Agree, "{r:#?}");
    assert_eq!(r.helion_agreement(), Some(("lowered".to_string(), true)));
}

#[test]
fn a_store_of_a_lower_rank_value_is_refused_by_both() {
    // D-1.5.1-20: `out[outer, :, :] = acc` with a rank-2 `acc` is RankMismatch in Helion 1.5.1,
    // and a tracing refusal of the model (the class our TracingError rules stand for).
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def k(x: torch.Tensor):
    out = torch.zeros([8, 2, 128], dtype=torch.float32)
    for outer in hl.tile(x.size(0), block_size=4):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        acc = acc + x[outer, :, :].sum(dim=0)
        out[outer, :, :] = acc
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
k(x)
"#;
    let Some(r) = check(script, &["helion-pallas"]) else {
        return;
    };
    assert_eq!(r.outcome, Outcome::Rejected, "{r:#?}");
    let EngineStatus::Refused { class, message, .. } = status(&r, "helion-pallas") else {
        panic!("{r:#?}")
    };
    assert_eq!(class, "RankMismatch");
    assert_eq!(
        r.helion_agreement(),
        Some(("trace.type-error".to_string(), true))
    );
    let ours = &r.rejection().expect("the model refuses it").message;
    assert!(
        message.starts_with("Expected ndim=3, but got ndim=2")
            && ours.contains("Expected ndim=3, but got ndim=2"),
        "{message} / {ours}"
    );
}

#[test]
fn a_partial_index_list_in_hl_store_is_a_known_helion_crash() {
    // D-1.5.1-20: `hl.store(out, [request], acc)` on a 3-D `out` hits Helion's internal
    // `AssertionError: invalid subscript`, wrapped as InternalError: not a documented refusal.
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def partial_store(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            acc = acc + x[outer, :, :].sum(dim=0)
        hl.store(out, [request], acc)
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
partial_store(x)
"#;
    let Some(r) = check(script, &["helion-pallas"]) else {
        return;
    };
    // A known Helion bug (docs/helion-findings.md): counted as its known issue, not a new
    // finding every night.
    assert_eq!(r.outcome, Outcome::KnownIssue, "{r:#?}");
    assert_eq!(r.known_issue, Some("helion-partial-index-list-assertion"));
    let EngineStatus::KernelError { kind, message, .. } = status(&r, "helion-pallas") else {
        panic!("{r:#?}")
    };
    assert!(kind.contains("InternalError"), "{kind}");
    assert!(message.contains("invalid subscript"), "{message}");
    // The generator-health table counts it as a case Helion cannot run, by its cause.
    let Some(HelionHealth::CannotRun(cause)) = r.helion_health() else {
        panic!("{r:#?}")
    };
    assert!(
        cause.contains("invalid subscript") && cause.contains("indexing_strategy.py"),
        "{cause}"
    );
}

#[test]
fn a_negative_index_is_refused_by_both_with_one_class() {
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def last_row(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[-1, :, :]
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
last_row(x)
"#;
    let Some(r) = check(script, &["helion-pallas"]) else {
        return;
    };
    assert_eq!(r.outcome, Outcome::Rejected, "{r:#?}");
    let EngineStatus::Refused { class, line, .. } = status(&r, "helion-pallas") else {
        panic!("{r:#?}")
    };
    assert_eq!(class, "InvalidIndexingType");
    // The rendered kernel keeps the case script's lines: the subscript is on line 17.
    assert_eq!(*line, Some(17), "{r:#?}");
    // D-1.5.1-17: 1.5.1's one trace-time template, with Python's repr of the entry.
    assert_eq!(r.helion_message_agreement(), Some(true), "{r:#?}");
    // A refusal never reaches Helion's code generation (the coverage table's Helion column).
    assert_eq!(r.helion_reached_codegen(), Some(false), "{r:#?}");
    assert_eq!(
        r.helion_health(),
        Some(HelionHealth::Refused("InvalidIndexingType".into()))
    );
}

#[test]
fn an_int_argument_reaches_helion_as_a_python_int() {
    let script = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def first_rows(x: torch.Tensor, n: int):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(n, block_size=4):
            acc = acc + x[outer, :, :].sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.arange(2048, dtype=torch.float32).reshape(8, 2, 128)
first_rows(x, 8)
"#;
    let Some(r) = check(script, &["helion-pallas", "helion-eager"]) else {
        return;
    };
    assert!(status(&r, "helion-pallas").outputs().is_some(), "{r:#?}");
    assert!(
        matches!(r.outcome, Outcome::Agree | Outcome::VerdictMismatch),
        "Helion ran the kernel with n=8: {r:#?}"
    );
}

/// A `bool` argument reaches the Helion kernel as Python's `True`/`False` (the worker's
/// `{"bool": b}`), and Helion branches on it as the reference does: the two values take
/// different arms, so an argument lost on the way would differ from the reference on one.
#[test]
fn a_bool_parameter_reaches_helion_and_selects_the_branch() {
    for arg in ["True", "False"] {
        let script = format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8]))
def kernel(x: torch.Tensor, flag: bool):
    out = torch.zeros_like(x)
    for tm in hl.tile(x.size(0)):
        v = x[tm, :]
        if flag:
            v = v * 2.0
        else:
            v = v - 1.0
        out[tm, :] = v
    return out


torch.manual_seed(0)
x = torch.randn(16, 128)
kernel(x, {arg})
"#
        );
        let Some(r) = check(&script, &["helion-pallas", "helion-eager"]) else {
            return;
        };
        // Our model passes no bool scalar to its kernel: `unsupported`, the reference and
        // Helion still compared.
        assert_eq!(r.outcome, Outcome::Unsupported, "{arg}: {r:#?}");
        for engine in ["helion-pallas", "helion-eager"] {
            let id: engines::EngineId = engine.parse().unwrap();
            assert!(status(&r, engine).outputs().is_some(), "{arg}: {r:#?}");
            assert_eq!(
                r.values_match.iter().find(|(e, _)| *e == id),
                Some(&(id, true)),
                "{engine}, flag {arg}: {r:#?}"
            );
        }
    }
}
