//! Findings directories written before the typed schema still load: `fixtures/findings-fa8d122`
//! is a campaign's output as pallas-diff at commit fa8d122 wrote it (`fuzz --engines
//! oracle,pallas-sim --inject d12-tail-clamped-before-mask,d1-read-after-write --time 40s --seed
//! 5 --jobs 1`, its `shard.json` left out). The test works on a copy, as a
//! user's own directory would be read: loading, re-checking and writing back, never touching
//! the fixture.

use fuzz::check::check_case;
use fuzz::engines::{Engine, EngineId};
use fuzz::outcome::Outcome;
use pallas_diff_finding::finding::{Finding, write_finding_dir};
use pallas_diff_finding::signature::{self, BUCKETS_FORMAT, Buckets};
use std::path::{Path, PathBuf};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A copy of the fixture and its finding directories.
fn fixture_copy() -> (tempfile::TempDir, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/findings-fa8d122");
    let t = tempfile::tempdir().unwrap();
    copy_dir(&src, t.path());
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    (t, dirs)
}

#[test]
fn findings_of_fa8d122_load_with_typed_fields() {
    let (_t, dirs) = fixture_copy();
    for dir in &dirs {
        let f = Finding::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let r = &f.meta.report;
        assert!(r.outcome.is_finding(), "{}: {:?}", dir.display(), r.outcome);
        assert_eq!(r.decided_by, Some(EngineId::PallasSim));
        assert_eq!(f.meta.signature.engine, Some(EngineId::PallasSim));
        assert_eq!(f.meta.signature.outcome, r.outcome);
        assert_eq!(r.engines[0].engine, EngineId::Reference);
        // The key on disk is the key now: these findings name no index forms.
        let raw: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(raw["key"].as_str(), Some(f.meta.key.as_str()));
        assert_eq!(f.meta.key, f.meta.signature.key(), "{}", dir.display());
        if let Some(m) = &r.mismatch {
            assert_eq!(r.outcome, Outcome::Mismatch);
            assert_eq!(raw["mismatch"]["kind"].as_str(), Some(m.kind.name()));
        }
    }
    let runtime_error = dirs
        .iter()
        .map(|d| Finding::load(d).unwrap())
        .find(|f| f.meta.report.outcome == Outcome::RuntimeError)
        .expect("the fixture holds a runtime error");
    // Written before the typed stage and class: they are absent, the detail says them.
    let sim = &runtime_error.meta.report.engines[1];
    assert_eq!((sim.stage, sim.class.as_deref()), (None, None));
    assert!(
        sim.detail
            .as_deref()
            .unwrap_or("")
            .starts_with("run JaxRuntimeError")
    );
}

#[test]
fn buckets_of_fa8d122_load_and_keep_their_keys() {
    let (t, dirs) = fixture_copy();
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("buckets.json")).unwrap())
            .unwrap();
    let b = Buckets::load(t.path()).unwrap();
    assert_eq!(b.format, BUCKETS_FORMAT);
    assert_eq!(b.buckets.len(), 3);
    // Format 4 on disk; its keys name no index forms, so they are the keys now.
    assert_eq!(raw["format"], 4);
    let on_disk: Vec<&String> = raw["buckets"].as_object().unwrap().keys().collect();
    assert_eq!(on_disk, b.buckets.keys().collect::<Vec<_>>());
    for (key, bucket) in &b.buckets {
        assert_eq!(key, &bucket.signature.key());
        assert!(
            dirs.iter().any(|d| d.ends_with(&bucket.dir)),
            "{}",
            bucket.dir
        );
    }
    b.save(t.path()).unwrap();
    assert_eq!(Buckets::load(t.path()).unwrap(), b);
}

/// Findings of the fixture whose model bug is now a gap of our model, with the construct it
/// names: `0006` reads a 1-row tensor by a tile of 2 rows, which torch clamps to the row and
/// Helion reads as a dim of 1 that broadcasts (`compiler/src/lower/memory.rs`, `ref_index`).
const NOW_A_GAP: &[(&str, &str)] = &[(
    "0006-mismatch-pallas-sim",
    "a tile into a dim of size 1 over more rows",
)];

/// Each finding, checked again under the codegen options it records, shows the signature it
/// records (or, listed in [`NOW_A_GAP`], that gap); written back and read again, its metadata
/// is unchanged.
#[test]
fn findings_of_fa8d122_still_reproduce_and_round_trip() {
    let (_t, dirs) = fixture_copy();
    let sim: Vec<Box<dyn Engine>> =
        fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    for dir in &dirs {
        let f = Finding::load(dir).unwrap();
        let codegen = f.meta.codegen.options().unwrap();
        let report = check_case(&f.case, &sim, &codegen);
        let now = signature::signature(&f.case, &report);
        if let Some((_, construct)) = NOW_A_GAP.iter().find(|(d, _)| dir.ends_with(d)) {
            assert_eq!(report.outcome, Outcome::Unsupported, "{}", dir.display());
            assert!(
                report
                    .gap
                    .as_deref()
                    .is_some_and(|g| g.starts_with(construct)),
                "{}: {:?}",
                dir.display(),
                report.gap
            );
        } else {
            assert!(
                f.meta.signature.holds_for(&now),
                "{}: recorded {}, now {}",
                dir.display(),
                f.meta.key,
                now.key()
            );
        }
        write_finding_dir(dir, &f).unwrap();
        assert_eq!(Finding::load(dir).unwrap(), f, "{}", dir.display());
    }
}

/// The campaign record written at fa8d122 (`stats.json`, names as keys) reads with typed keys.
#[test]
fn stats_of_fa8d122_load_with_typed_keys() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/findings-fa8d122/stats.json");
    let text = std::fs::read_to_string(path).unwrap();
    let r = fuzz::campaign::record::CampaignRecord::parse(&text).unwrap();
    assert_eq!(r.engines, [EngineId::Reference, EngineId::PallasSim]);
    let counted: u64 = r.stats.outcomes.values().sum();
    assert_eq!(counted, r.stats.cases);
    assert!(r.stats.outcomes[&Outcome::Agree] > 0);
    assert_eq!(r.new_findings.len(), 3);
    assert!(
        r.new_findings
            .iter()
            .all(|f| f.engine == Some(EngineId::PallasSim))
    );
    let last = r.series.last().expect("a series");
    assert_eq!(last.outcomes.values().sum::<u64>(), last.cases);
}

/// A `meta.json` of format 1 for a finding in code Helion emitted names the index forms of
/// the classifier signatures had then: on load its forms (and key) are its case's now.
#[test]
fn a_format_1_helion_finding_takes_its_cases_forms() {
    let (_t, dirs) = fixture_copy();
    let dir = &dirs[0];
    let path = dir.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(meta["format"], 1);
    let old_key =
        "runtime-error/helion-pallas/run:JaxRuntimeError (IndexError)/fori_loop/tile-index+k+none";
    meta["key"] = old_key.into();
    meta["decided_by"] = "helion-pallas".into();
    meta["signature"] = serde_json::json!({
        "outcome": "runtime-error", "engine": "helion-pallas",
        "cause": "run:JaxRuntimeError (IndexError)", "loop_type": "fori_loop",
        "forms": ["tile-index+k", "none"]});
    std::fs::write(&path, meta.to_string()).unwrap();
    let f = Finding::load(dir).unwrap();
    assert_eq!(f.meta.format, pallas_diff_finding::finding::META_FORMAT);
    assert_eq!(f.meta.signature.forms, signature::index_forms(&f.case));
    assert!(!f.meta.signature.forms.is_empty());
    assert_eq!(f.meta.key, f.meta.signature.key());
    assert_ne!(f.meta.key, old_key);
    assert!(
        f.meta
            .key
            .starts_with("runtime-error/helion-pallas/run:JaxRuntimeError (IndexError)/fori_loop/"),
        "{}",
        f.meta.key
    );
}
