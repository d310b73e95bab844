//! A finding whose mismatch was on an extra input set (`fuzz::input_sets`): `meta.json`
//! records the set, survives a write and a load, and the report re-derives the very set:
//! the failing inputs as Python, the `check` line that derives them, and the reference's
//! outputs on them.

use pallas_diff_finding::finding::{Finding, MismatchRecord, write_finding_dir};
use pallas_diff_finding::report::{failing_set, markdown, reference_outputs};
use std::path::Path;

#[test]
fn a_finding_on_an_input_set_reports_that_set() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/findings-fa8d122/0005-mismatch-pallas-sim");
    let mut f = Finding::load(&dir).expect("fixture loads");
    let own = f.case.input_tensors().expect("inputs");
    let set = fuzz::input_sets::derive(&f.case, &own, 1)
        .pop()
        .expect("set 1");
    let label = fuzz::input_sets::SetLabel::of(&set);
    let first = f.meta.report.mismatch.clone().expect("a mismatch");
    f.meta.report.mismatch = Some(MismatchRecord {
        input_set: Some(label),
        ..first
    });

    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("0001-mismatch-helion-pallas");
    write_finding_dir(&out, &f).unwrap();
    let meta = std::fs::read_to_string(out.join("meta.json")).unwrap();
    assert!(
        meta.contains(r#""input_set": {"#) && meta.contains(r#""flavor": "specials""#),
        "{meta}"
    );
    let back = Finding::load(&out).unwrap();
    assert_eq!(back.meta.report.mismatch, f.meta.report.mismatch);

    let derived = failing_set(&back).expect("the set is re-derived");
    let bits = |ts: &[lang::tensor::Tensor]| {
        ts.iter()
            .flat_map(|t| t.values.iter().map(|v| v.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&derived.inputs), bits(&set.inputs));
    let md = markdown(&back);
    assert!(
        md.contains("### The failing inputs: input set 1 (specials)"),
        "{md}"
    );
    assert!(md.contains("--helion-input-sets 8"), "{md}");
    let x = &back.case.inputs[0].name;
    assert!(md.contains(&format!("{x} = torch.from_numpy(")), "{md}");
    // The reference in the report is the reference on the set.
    let on_set = oracle::evaluate_with_inputs(&back.case, &Ok(set.inputs.clone())).unwrap();
    let reported = reference_outputs(&back).unwrap();
    let values_bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        values_bits(&reported.outputs[0].values),
        values_bits(&on_set.outputs[0].tensor.values)
    );

    // The case's own inputs: no such section.
    let mut own_inputs = back.clone();
    if let Some(m) = own_inputs.meta.report.mismatch.as_mut() {
        m.input_set = None;
    }
    assert!(failing_set(&own_inputs).is_none());
    assert!(!markdown(&own_inputs).contains("The failing inputs"));
}
