//! Bug reports: a finding directory as Markdown, ready to file.
//!
//! Sections: a one-line summary; the case script with its inputs spelled out (runnable by real
//! Helion); the emitted Pallas module; the reference against the engine at the first differing
//! elements; the verdict and rule; the engines and versions; and the standalone `repro.py`
//! ([`crate::repro`]) that needs only JAX and NumPy. A mismatch on an extra input set of a
//! Helion engine (`meta.json` records the set with its mismatch) is reported on that set: the
//! set is re-derived from the case ([`failing_set`]), its inputs follow the case script as
//! Python that replaces the script's own, and the reference shown is the reference on them.
//!
//! A finding made with injected faults (`meta.json` `codegen.faults`, `--inject`) is a defect of
//! pallas-diff's model, not of Helion: the report says so first, names the `--inject` line that
//! shows it, and claims the case script runs unchanged in real Helion only when nothing was
//! injected.

use crate::finding::Finding;
use crate::repro::{Expected, ReproError, repro_py};
use crate::signature::Signature;
use crate::tensor::NamedTensor;
use compiler::verdict::Verdict;
use fuzz::check::output_names;
use fuzz::compare::MismatchKind;
use fuzz::engines::EngineId;
use lang::render::{render_case, spell_out_inputs};
use std::fmt::Write;

/// What the reproducer section holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Repro {
    /// The script.
    Script(String),
    /// Why there is none.
    None(String),
}

/// The extra input set the finding's mismatch was on (`meta.json`, `fuzz::input_sets`),
/// re-derived from the case; `None` when the mismatch was on the case's own inputs.
pub fn failing_set(f: &Finding) -> Option<fuzz::input_sets::InputSet> {
    let label = f.meta.report.mismatch.as_ref()?.input_set?;
    let own = f.case.input_tensors().ok()?;
    fuzz::input_sets::of_label(&f.case, &own, label)
}

/// The reference outputs of the finding's case (evaluated now, in process), on the inputs the
/// mismatch was on ([`failing_set`]).
pub fn reference_outputs(f: &Finding) -> Result<Expected, String> {
    let evaluated = match failing_set(f) {
        Some(set) => oracle::evaluate_with_inputs(&f.case, &Ok(set.inputs)),
        None => oracle::evaluate(&f.case),
    };
    match evaluated {
        Ok(out) => {
            let names = output_names(&f.case);
            let magnitude = out.magnitude;
            let outputs = out
                .outputs
                .into_iter()
                .enumerate()
                .map(|(i, o)| NamedTensor {
                    name: names
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| format!("output {i}")),
                    dtype: o.tensor.dtype,
                    shape: o.tensor.shape,
                    values: o.tensor.values,
                })
                .collect();
            Ok(Expected { outputs, magnitude })
        }
        Err(e) => Err(format!("{:?} at {}: {}", e.kind, e.span, e.message)),
    }
}

/// The injected faults of a finding, each with what it does (a name this build does not know
/// is given alone).
pub fn injected_faults(f: &Finding) -> Vec<(String, Option<&'static str>)> {
    f.meta
        .codegen
        .faults
        .iter()
        .map(|name| {
            let summary = compiler::faults::FaultSet::parse(name)
                .ok()
                .and_then(|set| set.iter().next())
                .map(|fault| fault.summary());
            (name.clone(), summary)
        })
        .collect()
}

/// The `--inject` value that reintroduces the finding's faults, if any.
fn inject_flag(f: &Finding) -> Option<String> {
    (!f.meta.codegen.faults.is_empty()).then(|| f.meta.codegen.faults.join(","))
}

/// The `pallas-diff check` line that shows a finding made with injected faults, run in its
/// directory; `None` when nothing was injected.
pub fn check_command(f: &Finding) -> Option<String> {
    let flag = inject_flag(f)?;
    let engines = engines_to_reproduce(f.meta.report.decided_by);
    Some(format!(
        "pallas-diff check case.py --inject {flag} --engines {engines}"
    ))
}

/// The finding's `repro.py`, or why there is none (no module, an in-process engine, an invalid
/// case).
pub fn repro_of(f: &Finding) -> Repro {
    let Some(module) = &f.emitted else {
        return Repro::None(format!(
            "the compiler produced no module (outcome `{}`): the case script above is the reproducer",
            f.meta.report.outcome
        ));
    };
    let Some(engine) = f.meta.report.decided_by else {
        return Repro::None("no engine decided the outcome".into());
    };
    let mode = match engine {
        EngineId::Worker(m) if m.runtime() == tpu_runner::Runtime::Jax => m,
        // The in-process executor models the TPU interpreter: reproduce there, in real JAX.
        EngineId::PallasSim => tpu_runner::Mode::PallasTpuInterpret,
        EngineId::Worker(_) | EngineId::Reference => {
            return Repro::None(format!(
                "`{engine}` is not a JAX engine: the case script above is the reproducer"
            ));
        }
    };
    let expected = match reference_outputs(f) {
        Ok(e) => e,
        Err(why) => return Repro::None(format!("the reference refuses the case: {why}")),
    };
    let title = match inject_flag(f) {
        Some(faults) => format!(
            "{} [with injected fault {faults}: a defect of pallas-diff's model, not of Helion]",
            summary(f)
        ),
        None => summary(f),
    };
    match repro_py(&f.case, module, mode, &expected, &title) {
        Ok(s) => Repro::Script(s),
        Err(ReproError::Inputs(why)) => Repro::None(why),
    }
}

fn engine_detail(f: &Finding) -> Option<String> {
    let engine = f.meta.report.decided_by?;
    f.meta
        .report
        .engines
        .iter()
        .find(|e| e.engine == engine)
        .and_then(|e| e.detail.clone())
}

fn forms(sig: &Signature) -> String {
    let mut parts = Vec::new();
    if let Some(l) = sig.loop_type {
        parts.push(l.name().to_string());
    }
    if !sig.decisions.is_empty() {
        let decisions: Vec<String> = sig.decisions.iter().map(|d| d.to_string()).collect();
        parts.push(format!("decisions {}", decisions.join(", ")));
    } else if sig.is_our_code() {
        parts.push("no planner or codegen decision".to_string());
    }
    if !sig.ablated.is_empty() {
        // What a reader can skip: the finding still shows with these lowered by their plain
        // path (`pallas-diff check --plain ...`).
        let ablated: Vec<String> = sig.ablated.iter().map(|d| d.to_string()).collect();
        parts.push(format!(
            "not needed (shows with --plain {})",
            ablated.join(",")
        ));
    }
    if !sig.forms.is_empty() {
        parts.push(
            sig.forms
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// The one-line summary.
pub fn summary(f: &Finding) -> String {
    let m = &f.meta;
    let who = m
        .report
        .decided_by
        .map(|e| format!(" in `{e}`"))
        .unwrap_or_default();
    let what = if let Some(mm) = &m.report.mismatch {
        match mm.first.first() {
            Some(d) if matches!(mm.kind, MismatchKind::Values | MismatchKind::Poison) => format!(
                "`{}`{:?} is {}, the reference says {} ({} element(s) differ)",
                mm.output, d.index, d.engine, d.reference, mm.count
            ),
            _ => format!("`{}` differs from the reference ({})", mm.output, mm.kind),
        }
    } else if let Some(d) = engine_detail(f) {
        d.lines().next().unwrap_or("").to_string()
    } else {
        m.signature.cause.clone().unwrap_or_default()
    };
    format!(
        "{}{who}: kernel `{}`{}: {what}",
        m.report.outcome,
        f.case.kernel.name,
        forms(&m.signature)
    )
}

/// Where the finding's case came from, when a campaign drew it: its generator seed, and the
/// seed kernel it is a mutant of (`fuzz --seeds`), or the provenance's note.
pub fn provenance_line(f: &Finding) -> Option<String> {
    let p = &f.meta.provenance;
    let seed = p.seed.map(|s| format!("generator seed {s}"));
    let source = p
        .source
        .as_ref()
        .map(|s| match s.strip_prefix(crate::sink::SEED_SOURCE_PREFIX) {
            Some(name) => {
                let name = name.split(';').next().unwrap_or(name);
                format!("a mutant of seed kernel `{name}`")
            }
            None => s.clone(),
        });
    match (seed, source) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(format!("Provenance: {a}.")),
        (Some(a), Some(b)) => Some(format!("Provenance: {b} ({a}).")),
    }
}

/// The Markdown report of a finding.
pub fn markdown(f: &Finding) -> String {
    let m = &f.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", summary(f));
    let faults = injected_faults(f);
    if let Some(check) = check_command(f) {
        let names: Vec<&str> = faults.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(
            out,
            "> **Injected fault{}: {}.** This finding is in pallas-diff's model with a reintroduced defect, not in Helion; `{check}` (in the finding's directory) shows it, and real Helion, which has no such defect, should agree with the reference. Do not file it upstream.",
            if faults.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        for (name, summary) in &faults {
            if let Some(summary) = summary {
                let _ = writeln!(out, ">\n> `{name}`: {summary}.");
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "Signature: `{}`\n", m.key);
    if let Some(line) = provenance_line(f) {
        let _ = writeln!(out, "{line}\n");
    }
    if let Some(c) = &m.cross_check {
        let _ = writeln!(
            out,
            "Cross-check on {}{}: {} ({}).{}\n",
            c.engines
                .iter()
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", "),
            c.of_unreduced_case
                .as_ref()
                .map(|why| format!(
                    ", of the case before reduction (not re-run on this one: {why})"
                ))
                .unwrap_or_default(),
            c.result.name(),
            c.outcome,
            c.result
                .warning()
                .map(|w| format!(" **{w}.**"))
                .unwrap_or_default()
        );
    }
    if let Some(r) = &m.reduction {
        let _ = writeln!(
            out,
            "Reduced from {} to {} kernel-body lines in {:.1} s ({} attempts, {} engine runs{}).\n",
            r.original_body_lines,
            r.body_lines,
            r.seconds,
            r.attempts,
            r.engine_runs,
            if r.exhausted {
                "; budget exhausted"
            } else {
                ""
            }
        );
    }
    out.push_str("## Case script (Helion)\n\n");
    match inject_flag(f) {
        None => out.push_str(
            "Runs unchanged in real Helion with `HELION_BACKEND=pallas HELION_PALLAS_INTERPRET=1`; inputs are spelled out.\n\n",
        ),
        Some(flag) => {
            let _ = writeln!(
                out,
                "Inputs are spelled out. The finding needs `--inject {flag}` (pallas-diff only): real Helion runs this script without the fault and should agree with the reference.\n"
            );
        }
    }
    let script = spell_out_inputs(&f.case)
        .map(|c| render_case(&c))
        .unwrap_or_else(|_| render_case(&f.case));
    let _ = writeln!(out, "```python\n{}```\n", script);
    if let Some(section) = failing_set_section(f) {
        out.push_str(&section);
    }
    out.push_str("## Emitted Pallas module\n\n");
    match &f.emitted {
        Some(src) => {
            if let Some(flag) = inject_flag(f) {
                let _ = writeln!(
                    out,
                    "Emitted by pallas-diff's model with `{flag}` injected: not what Helion emits.\n"
                );
            }
            let _ = writeln!(out, "```python\n{}```\n", ensure_newline(src));
        }
        None => out.push_str("No module: the compiler produced none.\n\n"),
    }
    out.push_str("## Reference vs engine\n\n");
    match &m.report.mismatch {
        Some(mm) => {
            let _ = writeln!(
                out,
                "`{}` on output `{}` (shape {:?}): {}, {} element(s) differ, max abs err {}, max rel err {}.\n",
                mm.engine,
                mm.output,
                mm.shape,
                mm.kind,
                mm.count,
                fmt_err(mm.max_abs_err),
                fmt_err(mm.max_rel_err)
            );
            out.push_str("| index | engine | reference |\n|---|---|---|\n");
            for d in &mm.first {
                let _ = writeln!(out, "| {:?} | {} | {} |", d.index, d.engine, d.reference);
            }
            out.push('\n');
        }
        None => {
            let _ = writeln!(
                out,
                "No output comparison: the outcome is `{}`{}.\n",
                m.report.outcome,
                engine_detail(f)
                    .map(|d| format!(": {}", d.lines().next().unwrap_or("")))
                    .unwrap_or_default()
            );
        }
    }
    if let Ok(refs) = reference_outputs(f) {
        for o in &refs.outputs {
            let head: Vec<String> = o.values.iter().take(8).map(|v| v.to_string()).collect();
            let _ = writeln!(
                out,
                "Reference `{}`: {} {:?} [{}{}]",
                o.name,
                o.dtype.name(),
                o.shape,
                head.join(", "),
                if o.values.len() > 8 { ", ..." } else { "" }
            );
        }
        out.push('\n');
    }
    out.push_str("## Verdict\n\n");
    match &m.report.verdict {
        Some(Verdict::Lowered) => out.push_str("lowered (every narrowing subscript planned)\n\n"),
        Some(Verdict::Rejected(r)) => {
            let _ = writeln!(
                out,
                "rejected: `{}` [`{}`] at {}: {}\n",
                r.class(),
                r.rule,
                r.span,
                r.message
            );
        }
        None => out.push_str("none: the compiler panicked (see the log)\n\n"),
    }
    out.push_str(
        "## Engines and versions\n\n| engine | status | seconds | detail |\n|---|---|---|---|\n",
    );
    for e in &m.report.engines {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {} |",
            e.engine,
            e.status,
            e.seconds,
            e.detail
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
                .replace('|', "\\|")
        );
    }
    let v = &m.versions;
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let _ = writeln!(
        out,
        "\npallas-diff {} (case format {}); python {}, jax {}, jaxlib {}; XLA_FLAGS {}; TPU kind {}; devices {}; codegen poison_padding={}, injected faults: {}.\n",
        v.pallas_diff,
        v.case_format,
        opt(&v.python),
        opt(&v.jax),
        opt(&v.jaxlib),
        opt(&v.xla_flags),
        opt(&v.tpu_kind),
        if v.devices.is_empty() {
            "-".to_string()
        } else {
            v.devices.join(", ")
        },
        m.codegen.poison_padding,
        inject_flag(f).unwrap_or_else(|| "none".into())
    );
    if m.report.decided_by.is_some_and(EngineId::is_helion) {
        let _ = writeln!(
            out,
            "## Helion\n\nDecided by real Helion ({}): helion {}{}, torch {}, jax {}.{} The case script above is what Helion ran (`HELION_BACKEND=pallas HELION_PALLAS_INTERPRET=1 python case.py` for `helion-pallas`, `HELION_INTERPRET=1` for `helion-eager`); its traceback and the module Helion generated are in the log:\n\n```text\n{}```\n",
            m.report.decided_by.map_or("", EngineId::name),
            opt(&v.helion),
            v.helion_build
                .as_ref()
                .filter(|b| b.id != b.version || b.commit.is_some())
                .map(|b| format!(" (build {b})"))
                .unwrap_or_default(),
            opt(&v.torch),
            opt(&v.helion_jax),
            m.regression
                .as_ref()
                .map(|r| format!(
                    " Across Helion builds ({}): {}.",
                    r.builds.len(),
                    r.summary()
                ))
                .unwrap_or_default(),
            ensure_newline(&f.log)
        );
    }
    out.push_str("## Standalone reproducer (`repro.py`)\n\n");
    match repro_of(f) {
        Repro::Script(s) => {
            out.push_str("Needs only JAX and NumPy: fails while the bug is present, prints OK once fixed.\n\n");
            if let Some(flag) = inject_flag(f) {
                let _ = writeln!(
                    out,
                    "The module in it was emitted with `{flag}` injected: it reproduces the model's defect, not a Helion one.\n"
                );
            }
            if m.report.decided_by == Some(EngineId::PallasSim) {
                out.push_str("`pallas-sim` models JAX's TPU interpreter; this runs the module there. If it passes, the finding is a divergence of `pallas-sim`, not of the module.\n\n");
            }
            let _ = writeln!(out, "```python\n{}```", ensure_newline(&s));
        }
        Repro::None(why) => {
            let _ = writeln!(out, "None: {why}.");
        }
    }
    out
}

/// The inputs of the set the mismatch was on, as Python that replaces the script's own
/// inputs, with the `check` line that derives the same set; `None` when the mismatch was on
/// the case's own inputs.
fn failing_set_section(f: &Finding) -> Option<String> {
    let set = failing_set(f)?;
    let label = fuzz::input_sets::SetLabel::of(&set);
    let engines = engines_to_reproduce(f.meta.report.decided_by);
    let mut out = format!(
        "### The failing inputs: {label}\n\n\
         The mismatch is on {label}, values pallas-diff derives from the case's seed for its \
         dtypes, not on the script's own inputs: put these in place of the script's inputs, \
         before the call. `pallas-diff check case.py --engines {engines} --helion-input-sets {}` \
         derives the same set.\n\n```python\nimport numpy as np\n\n",
        label.number.max(fuzz::input_sets::DEFAULT_EXTRA_SETS)
    );
    for (input, t) in f.case.inputs.iter().zip(&set.inputs) {
        let _ = writeln!(out, "{} = {}", input.name, torch_literal(t));
    }
    out.push_str("```\n\n");
    Some(out)
}

/// A torch expression building exactly `t` (NaN and ±inf included), through NumPy (which has no
/// bfloat16: a bfloat16 tensor is built in float32, where its values are exact, and cast).
fn torch_literal(t: &lang::tensor::Tensor) -> String {
    let bf16 = t.dtype == lang::tensor::DType::Bfloat16;
    let built = lang::tensor::Tensor {
        dtype: if bf16 {
            lang::tensor::DType::Float32
        } else {
            t.dtype
        },
        shape: t.shape.clone(),
        values: t.values.clone(),
    };
    let np = crate::repro::numpy_literal(&built);
    if bf16 {
        format!("torch.from_numpy({np}).to(torch.bfloat16)")
    } else {
        format!("torch.from_numpy({np})")
    }
}

fn ensure_newline(s: &str) -> String {
    if s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

fn fmt_err(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:e}"),
        Some(_) => "inf".into(),
        None => "-".into(),
    }
}

/// The `--engines` of a `pallas-diff check` that shows a finding `engine` decided: the
/// reference, and that engine (none: the compiler decided it).
pub fn engines_to_reproduce(engine: Option<EngineId>) -> String {
    match engine {
        Some(e) if e != EngineId::Reference => format!("{},{e}", EngineId::Reference),
        Some(_) | None => EngineId::Reference.to_string(),
    }
}
