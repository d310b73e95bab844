//! The per-case digest (`fuzz --digest FILE`): one line per case of everything the in-process
//! check decided about it, so that a refactor, a speed-up or a move to another library can be
//! proved not to change behaviour by comparing two files (or their sha256) instead of totals.
//!
//! A line is `INDEX SEED OUTCOME VERDICT HASH`: the case's index in the campaign, the generator
//! seed it was drawn from ([`super::draw`]), its outcome, `lowered` / the refusing rule id /
//! `crash`, and a 64-bit FNV-1a hash of the whole [`CaseReport`] but its timings: the verdict
//! with its message and span, the codegen gap, the planner's decisions, the mismatch, the known
//! issue, every engine's status and details (the reference's too) and the bits of every output value. A
//! compiler crash contributes its message's first line only (the rest is a backtrace).
//! Lines are sorted by index, so the file does not depend on `--jobs`. JAX confirmations are
//! not in it: which cases a JAX engine confirms depends on the worker pool's pace.

use crate::check::CaseReport;
use crate::engines::{EngineRun, EngineStatus};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The lines of a campaign's digest, collected as its threads check cases.
#[derive(Default)]
pub struct Digest {
    lines: Mutex<Vec<(u64, String)>>,
}

impl Digest {
    /// An empty digest.
    pub fn new() -> Digest {
        Digest::default()
    }

    /// Records case `index`, drawn from `seed`, as `report` classified it.
    pub fn record(&self, index: u64, seed: u64, report: &CaseReport) {
        let line = line(index, seed, report);
        self.lines.lock().expect("digest lock").push((index, line));
    }

    /// Writes the lines, sorted by case index, to `path` atomically (a temporary file renamed).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut lines = std::mem::take(&mut *self.lines.lock().expect("digest lock"));
        lines.sort_unstable_by_key(|(i, _)| *i);
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".partial");
        let tmp = std::path::PathBuf::from(tmp);
        {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            for (_, l) in &lines {
                writeln!(w, "{l}")?;
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    }
}

/// One case's digest line (see the module doc).
pub fn line(index: u64, seed: u64, report: &CaseReport) -> String {
    let verdict = match &report.verdict {
        Some(compiler::verdict::Verdict::Lowered) => "lowered".to_owned(),
        Some(compiler::verdict::Verdict::Rejected(r)) => r.rule.to_string(),
        None => "crash".to_owned(),
    };
    format!(
        "{index:08} {seed:016x} {} {verdict} {:016x}",
        report.outcome,
        report_hash(report)
    )
}

/// FNV-1a, 64 bits: stable across runs, platforms and Rust releases (unlike `std`'s hashers),
/// which is all a digest needs; it is not collision-resistant against an adversary.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A field: its length first, so that adjacent fields cannot trade bytes.
    fn field(&mut self, bytes: &[u8]) {
        self.bytes(&(bytes.len() as u64).to_le_bytes());
        self.bytes(bytes);
    }
}

fn report_hash(report: &CaseReport) -> u64 {
    let mut h = Fnv::new();
    h.field(json(&report.outcome).as_bytes());
    h.field(json(&report.decided_by).as_bytes());
    h.field(json(&report.verdict).as_bytes());
    h.field(json(&report.gap).as_bytes());
    let crash = report
        .crash
        .as_deref()
        .map(|c| c.lines().next().unwrap_or(""));
    h.field(json(&crash).as_bytes());
    h.field(json(&report.mismatch).as_bytes());
    h.field(json(&report.known_issue).as_bytes());
    h.field(json(&report.decisions).as_bytes());
    h.field(json(&report.values_match).as_bytes());
    run_hash(&mut h, &report.reference);
    match &report.eager_reference {
        Some(run) => run_hash(&mut h, run),
        None => h.field(b"-"),
    }
    h.bytes(&(report.engines.len() as u64).to_le_bytes());
    for run in &report.engines {
        run_hash(&mut h, run);
    }
    h.0
}

/// An engine run without its timing: the engine, its status and its outputs' bits.
fn run_hash(h: &mut Fnv, run: &EngineRun) {
    h.field(run.engine.name().as_bytes());
    // The status's own details by `Debug`: serde cannot write a lone internally tagged
    // `EngineStatus` holding a string. Outputs are hashed by their bits below instead.
    match &run.status {
        EngineStatus::Outputs(_) => h.field(b"outputs"),
        other => h.field(format!("{other:?}").as_bytes()),
    }
    if let EngineStatus::Outputs(outputs) = &run.status {
        h.bytes(&(outputs.len() as u64).to_le_bytes());
        for t in outputs {
            h.field(t.dtype.name().as_bytes());
            h.bytes(&(t.shape.len() as u64).to_le_bytes());
            for d in &t.shape {
                h.bytes(&(*d as u64).to_le_bytes());
            }
            h.bytes(&(t.values.len() as u64).to_le_bytes());
            for v in &t.values {
                h.bytes(&v.to_bits().to_le_bytes());
            }
        }
    }
}

/// A report field's JSON text: what the field says, in the form records keep it.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("a report field serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_case;
    use crate::generators::{GenConfig, generate_from_seed};
    use compiler::compile::CodegenOptions;

    /// A lowered case the reference ran, with outputs to hash.
    fn lowered_report() -> (u64, CaseReport) {
        let cfg = GenConfig::default().normalized();
        (0..200u64)
            .map(|seed| {
                let case = generate_from_seed(seed, &cfg);
                (seed, check_case(&case, &[], &CodegenOptions::default()))
            })
            .find(|(_, r)| {
                r.lowered()
                    && matches!(&r.reference.status, EngineStatus::Outputs(o) if !o.is_empty())
            })
            .expect("one of 200 generated cases lowers")
    }

    #[test]
    fn a_line_names_the_case_and_ignores_timings() {
        let (seed, mut report) = lowered_report();
        let a = line(3, seed, &report);
        assert!(
            a.starts_with(&format!("00000003 {seed:016x} {} lowered ", report.outcome)),
            "{a}"
        );
        report.compile_seconds += 1.0;
        report.reference.seconds += 1.0;
        assert_eq!(line(3, seed, &report), a);
    }

    #[test]
    fn one_output_bit_changes_the_hash() {
        let (seed, mut report) = lowered_report();
        let a = line(0, seed, &report);
        let EngineStatus::Outputs(outputs) = &mut report.reference.status else {
            unreachable!("lowered_report has outputs")
        };
        let v = &mut outputs[0].values[0];
        *v = f64::from_bits(v.to_bits() ^ 1);
        assert_ne!(line(0, seed, &report), a);
    }

    #[test]
    fn written_sorted_by_index_whatever_the_order_recorded() {
        let (seed, report) = lowered_report();
        let d = Digest::new();
        for i in [2, 0, 1] {
            d.record(i, seed, &report);
        }
        let dir = std::env::temp_dir().join(format!("pallas-diff-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("digest.txt");
        d.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let indices: Vec<&str> = text.lines().map(|l| &l[..8]).collect();
        assert_eq!(indices, ["00000000", "00000001", "00000002"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
