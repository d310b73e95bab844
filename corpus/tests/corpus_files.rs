//! The corpus and finding-directory file formats without JAX: a corrupt corpus file is a clear
//! error naming the file (and the JSON line and column), bless records what happens now, an
//! entry expected to fail that passes says "fixed?", and a finding directory round-trips.

use compiler::compile::CodegenOptions;
use finding::finding::{
    FINDING_FILES, Finding, FindingProvenance, META_FORMAT, Versions, write_finding_dir,
};
use fuzz::check::check_case;
use pallas_diff_corpus::entry::{Corpus, CorpusError, Expected, default_dir, load_entry};
use pallas_diff_corpus::expectations::load_spec_kernels;
use pallas_diff_corpus::replay::{TrialResult, bless, check_reference, judge};
use std::path::{Path, PathBuf};

/// Copies entry `stem` (JSON and script) of the real corpus into `dir`.
fn copy_entry(stem: &str, dir: &Path) -> PathBuf {
    let src = default_dir().join(format!("{stem}.json"));
    let dst = dir.join(format!("{stem}.json"));
    std::fs::copy(&src, &dst).unwrap();
    std::fs::copy(src.with_extension("py"), dst.with_extension("py")).unwrap();
    dst
}

const D12: &str = "0003-d12-tail-run-masked-not-clamped";

#[test]
fn a_corrupt_file_is_an_error_naming_file_line_and_column() {
    let t = tempfile::tempdir().unwrap();
    let good = copy_entry(D12, t.path());
    let text = std::fs::read_to_string(&good).unwrap();
    let bad = t.path().join("0099-broken.json");
    // Cut the file in the middle of line 5.
    let cut: usize = text.lines().take(4).map(|l| l.len() + 1).sum::<usize>() + 3;
    std::fs::write(&bad, &text[..cut]).unwrap();
    let err = Corpus::load(t.path()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, CorpusError::Json { .. }), "{msg}");
    assert!(msg.contains("0099-broken.json:"), "{msg}");
    assert!(
        msg.split(':').any(|p| p.trim().parse::<usize>().is_ok()),
        "no line/column: {msg}"
    );
    // Lenient loading keeps the good entry and reports the bad file.
    let (corpus, errors) = Corpus::load_lenient(t.path());
    assert_eq!(corpus.entries.len(), 1);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path(), bad.as_path());
}

#[test]
fn format_rules_are_errors_not_panics() {
    let t = tempfile::tempdir().unwrap();
    let good = copy_entry(D12, t.path());
    let text = std::fs::read_to_string(&good).unwrap();
    let cases = [
        ("0003-wrong-name.json", text.clone(), "named"),
        (
            "0003-d12-tail-run-masked-not-clamped.json",
            text.replacen("\"*\": \"agree\"", "\"*\": \"sometimes\"", 1),
            "not an expected outcome",
        ),
        (
            "0003-d12-tail-run-masked-not-clamped.json",
            text.replacen("\"format\": 1", "\"format\": 7", 1),
            "entry format 7",
        ),
        (
            "0003-d12-tail-run-masked-not-clamped.json",
            text.replacen("\"*\": \"agree\"", "\"pallas-gpu\": \"agree\"", 1),
            "unknown engine `pallas-gpu`",
        ),
        (
            "0003-d12-tail-run-masked-not-clamped.json",
            text.replacen("\"*\": \"agree\"", "\"pallas-tpu\": \"agree\"", 1),
            "`*`",
        ),
    ];
    for (name, body, needle) in cases {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, body).unwrap();
        let msg = load_entry(&p).unwrap_err().to_string();
        assert!(msg.contains(name), "{msg}");
        assert!(msg.contains(needle), "`{needle}` not in: {msg}");
    }
}

#[test]
fn bless_records_what_happens_now_and_says_what_changed() {
    let t = tempfile::tempdir().unwrap();
    let path = copy_entry(D12, t.path());
    // Break two expectations: the compile-level outcome and one reference value.
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text
        .replacen(
            "\"*\": \"agree\"",
            "\"*\": \"rejected:selector.wider-than-block\"",
            1,
        )
        .replacen(
            "\"values\": [\n          7,",
            "\"values\": [\n          6,",
            1,
        );
    assert_ne!(broken, text);
    std::fs::write(&path, broken).unwrap();
    let corpus = Corpus::load(t.path()).unwrap();
    let TrialResult::Fail { message, updates } = check_reference(&corpus.entries[0]) else {
        panic!("a broken entry passed");
    };
    assert!(
        message.contains("rejected:selector.wider-than-block"),
        "{message}"
    );
    assert!(message.contains("the reference changed"), "{message}");
    let updates: Vec<_> = updates.into_iter().map(|u| (path.clone(), u)).collect();
    let changes = bless(&updates).unwrap();
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes[0].contains("*: rejected:selector.wider-than-block -> agree"));
    let corpus = Corpus::load(t.path()).unwrap();
    assert_eq!(check_reference(&corpus.entries[0]), TrialResult::Pass);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "bless restores the file"
    );
}

#[test]
fn an_expected_finding_that_passes_fails_the_trial() {
    let t = tempfile::tempdir().unwrap();
    let path = copy_entry(D12, t.path());
    let mut entry = load_entry(&path).unwrap();
    let key = "mismatch/pallas-interpret/values/fori_loop/tile-index";
    entry.set_expected(
        "pallas-interpret"
            .parse::<pallas_diff_corpus::entry::EngineKey>()
            .unwrap(),
        Expected::Finding(key.into()),
    );
    entry.links.insert(
        "pallas-interpret".parse().unwrap(),
        "https://github.com/pytorch/helion/issues/1".into(),
    );
    // The case agrees (no engine: lowered and the reference evaluates it), so the bug is fixed.
    let report = check_case(&entry.case, &[], &CodegenOptions::default());
    let TrialResult::Fail { message, updates } =
        judge(&entry, "pallas-interpret".parse().unwrap(), &report)
    else {
        panic!("a fixed finding passed");
    };
    assert!(message.contains("fixed? update the entry"), "{message}");
    assert!(message.contains("issues/1"), "{message}");
    assert_eq!(updates.len(), 1);
    // The other engines still expect agreement.
    assert_eq!(
        judge(&entry, "pallas-tpu-lower".parse().unwrap(), &report),
        TrialResult::Pass
    );
}

#[test]
fn a_finding_directory_round_trips_with_exactly_five_files() {
    let k = load_spec_kernels()
        .unwrap()
        .into_iter()
        .find(|k| k.name() == "d12_tail_run_masked_not_clamped")
        .unwrap();
    let report = check_case(&k.case, &[], &CodegenOptions::default());
    let provenance = FindingProvenance {
        seed: Some(7),
        generator: Some("test".into()),
        source: None,
    };
    let f = Finding::new(
        &k.case,
        &report,
        &CodegenOptions::default(),
        Versions::this_build(),
        provenance,
    );
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("0001-agree");
    write_finding_dir(&dir, &f).unwrap();
    write_finding_dir(&dir, &f).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = FINDING_FILES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        1,
        "no temporary left next to it"
    );
    let back = Finding::load(&dir).unwrap();
    assert_eq!(back, f);
    assert!(back.emitted.as_deref().unwrap().contains("pl.pallas_call"));
    let meta = std::fs::read_to_string(dir.join("meta.json")).unwrap();
    assert!(
        meta.starts_with(&format!("{{\n  \"format\": {META_FORMAT},\n  \"key\": ")),
        "{meta}"
    );
}

/// A corpus entry blessed when signatures had their own index-form classifier expects a
/// finding whose key ends in the old form names; on load it names its case's forms now.
#[test]
fn an_entry_expecting_old_form_names_reads_with_its_cases_forms() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cases/0003-d12-tail-run-masked-not-clamped.json");
    let text = std::fs::read_to_string(&src).unwrap();
    let old = "mismatch/helion-pallas/values/fori_loop/tile-index+k+tail";
    let edited = text.replacen(
        "\"expect\": {\"*\": \"agree\"}",
        &format!("\"expect\": {{\"*\": \"agree\", \"helion-pallas\": \"finding:{old}\"}}"),
        1,
    );
    assert_ne!(edited, text, "the fixture entry changed shape");
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("0003-d12-tail-run-masked-not-clamped.json");
    std::fs::write(&path, edited).unwrap();
    let entry = pallas_diff_corpus::entry::load_entry(&path).unwrap();
    let forms: Vec<&str> = finding::signature::index_forms(&entry.case)
        .iter()
        .map(|f| f.name())
        .collect();
    assert!(!forms.is_empty());
    let want = format!(
        "mismatch/helion-pallas/values/fori_loop/{}",
        forms.join("+")
    );
    assert_eq!(
        entry.expected(fuzz::engines::EngineId::Worker(
            tpu_runner::Mode::HelionPallas
        )),
        Some(&pallas_diff_corpus::entry::Expected::Finding(want))
    );
}
