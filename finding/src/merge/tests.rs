//! Merge tests on hand-made shards: finding directories whose files say where they come from
//! (the merge copies them byte for byte and never parses them), and real `shard.json` and
//! `buckets.json` records.

use super::*;
use crate::finding::Versions;
use crate::shard::ShardRun;
use crate::signature::Signature;
use compiler::compile::CodegenOptions;
use fuzz::engines::EngineId;
use fuzz::generators::GenConfig;

fn contract() -> Contract {
    Contract::new(
        &GenConfig::default(),
        &[EngineId::Reference, EngineId::PallasSim],
        &CodegenOptions::default(),
        Versions::this_build(),
    )
}

/// A signature keyed on its symptom: a finding in code Helion emitted (one in ours with no
/// decision keys `emitted/<engine>/-` whatever its symptom).
fn sig(outcome: &str, cause: &str) -> Signature {
    Signature {
        outcome: fuzz::outcome::Outcome::from_name(outcome).expect("an outcome"),
        engine: Some("helion-pallas".parse().expect("an engine")),
        cause: Some(cause.into()),
        loop_type: None,
        forms: BTreeSet::new(),
        decisions: Default::default(),
        ablated: Default::default(),
    }
}

fn cost(statements: usize) -> CostRecord {
    CostRecord {
        statements,
        exprs: 0,
        input_elements: 0,
        input_complexity: 0,
        block_sizes: 0,
        literals: 0,
        ..Default::default()
    }
}

/// One bucket of a hand-made shard.
struct B {
    sig: Signature,
    count: u64,
    statements: usize,
    aliases: &'static [&'static str],
}

fn b(outcome: &str, cause: &str, count: u64, statements: usize) -> B {
    B {
        sig: sig(outcome, cause),
        count,
        statements,
        aliases: &[],
    }
}

/// A shard `name` under `root`: seed `seed`, `cases` cases, these buckets.
fn shard(root: &Path, name: &str, seed: u64, c: Contract, buckets: &[B]) -> PathBuf {
    let dir = root.join(name);
    ShardRun::begin(&dir, c, seed)
        .unwrap()
        .finish(1000)
        .unwrap();
    let mut index = Buckets::default();
    for (i, x) in buckets.iter().enumerate() {
        let d = format!("{:04}-{}", i + 1, x.sig.slug());
        fsio::write_dir_atomic(
            &dir.join(&d),
            &[
                ("meta.json", format!("{name} {}", x.sig.key()).as_bytes()),
                (
                    "case.json",
                    format!("{} statements", x.statements).as_bytes(),
                ),
            ],
        )
        .unwrap();
        index.buckets.insert(
            x.sig.key(),
            Bucket {
                key: x.sig.key(),
                signature: x.sig.clone(),
                count: x.count,
                dir: d,
                cost: cost(x.statements),
                aliases: x.aliases.iter().map(|s| s.to_string()).collect(),
            },
        );
    }
    index.save(&dir).unwrap();
    dir
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fsio::read_tree(dir).unwrap()
}

fn meta_of(out: &Path, b: &Bucket) -> String {
    std::fs::read_to_string(out.join(&b.dir).join("meta.json")).unwrap()
}

#[test]
fn buckets_by_signature_sum_counts_and_keep_the_smallest_case() {
    let t = tempfile::tempdir().unwrap();
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[
            b("mismatch", "values", 3, 9),
            b("lowering-error", "x", 1, 4),
        ],
    );
    let c = shard(
        t.path(),
        "c",
        1,
        contract(),
        &[b("mismatch", "values", 2, 5), b("runtime-error", "y", 7, 6)],
    );
    let out = t.path().join("merged");
    let m = merge(&[a.clone(), c.clone()], &out).unwrap();
    assert!(m.changed);
    assert_eq!(m.buckets.buckets.len(), 3, "one bucket per cause");
    let mismatch = &m.buckets.buckets[&sig("mismatch", "values").key()];
    assert_eq!(mismatch.count, 5, "counts add up");
    assert_eq!(mismatch.cost, cost(5), "the smaller case");
    assert!(meta_of(&out, mismatch).starts_with("c "), "copied from c");
    assert_eq!(m.buckets.total(), 3 + 1 + 2 + 7);
    // Numbered in key order: lowering-error < mismatch < runtime-error.
    let dirs: Vec<&str> = m.buckets.buckets.values().map(|b| b.dir.as_str()).collect();
    assert_eq!(
        dirs,
        [
            "0001-lowering-error-helion-pallas",
            "0002-mismatch-helion-pallas",
            "0003-runtime-error-helion-pallas"
        ]
    );
    // Every source shard is recorded, and which shards found each bucket.
    let ids: Vec<&str> = m.record.shards.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["seed-0", "seed-1"]);
    assert_eq!(m.record.shards[0].origin, a.display().to_string());
    assert_eq!(
        m.record.found_in[&mismatch.key],
        vec!["seed-0".to_string(), "seed-1".to_string()]
    );
    // The output reads back as what was returned.
    assert_eq!(Buckets::load(&out).unwrap(), m.buckets);
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
}

#[test]
fn merging_again_changes_nothing_and_argument_order_does_not_matter() {
    let t = tempfile::tempdir().unwrap();
    // Equal costs: the tie is broken by the files, not by the order of the arguments.
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[b("mismatch", "values", 3, 5)],
    );
    let c = shard(
        t.path(),
        "c",
        1,
        contract(),
        &[b("mismatch", "values", 2, 5)],
    );
    let out = t.path().join("merged");
    merge(&[a.clone(), c.clone()], &out).unwrap();
    let first = tree(&out);
    let again = merge(&[a.clone(), c.clone()], &out).unwrap();
    assert!(!again.changed, "the same inputs again write nothing");
    assert_eq!(again.buckets.total(), 5, "a shard met twice counts once");
    assert!(!merge(std::slice::from_ref(&out), &out).unwrap().changed);
    assert!(
        !merge(&[c.clone(), a.clone(), out.clone()], &out)
            .unwrap()
            .changed
    );
    assert_eq!(tree(&out), first);
    let reversed = t.path().join("reversed");
    merge(&[c, a], &reversed).unwrap();
    assert_eq!(tree(&reversed), first);
}

#[test]
fn a_merged_directory_takes_more_shards_without_counting_any_twice() {
    let t = tempfile::tempdir().unwrap();
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[b("mismatch", "values", 3, 9)],
    );
    let c = shard(
        t.path(),
        "c",
        1,
        contract(),
        &[b("mismatch", "values", 2, 9)],
    );
    let d = shard(
        t.path(),
        "d",
        2,
        contract(),
        &[b("mismatch", "values", 4, 1)],
    );
    let out = t.path().join("merged");
    merge(std::slice::from_ref(&a), &out).unwrap();
    merge(std::slice::from_ref(&c), &out).unwrap();
    let m = merge(&[a.clone(), d.clone()], &out).unwrap();
    let bucket = &m.buckets.buckets[&sig("mismatch", "values").key()];
    assert_eq!(bucket.count, 9);
    assert!(meta_of(&out, bucket).starts_with("d "));
    assert_eq!(m.record.shards.len(), 3);
    // A merge of merges is the merge of their shards.
    let left = t.path().join("left");
    let right = t.path().join("right");
    merge(&[a, c], &left).unwrap();
    merge(&[d], &right).unwrap();
    let both = t.path().join("both");
    merge(&[left, right], &both).unwrap();
    assert_eq!(Buckets::load(&both).unwrap(), m.buckets);
}

#[test]
fn a_raw_key_that_reduced_elsewhere_joins_its_bucket() {
    let t = tempfile::tempdir().unwrap();
    let raw = sig("mismatch", "values-raw");
    let reduced = B {
        aliases: &["mismatch/helion-pallas/values-raw/-/-"],
        ..b("mismatch", "values", 2, 3)
    };
    assert_eq!(raw.key(), reduced.aliases[0]);
    let a = shard(t.path(), "a", 0, contract(), &[reduced]);
    // Shard c ran without reduction: its bucket is the raw key.
    let c = shard(
        t.path(),
        "c",
        1,
        contract(),
        &[b("mismatch", "values-raw", 5, 30)],
    );
    let m = merge(&[c, a], &t.path().join("merged")).unwrap();
    assert_eq!(m.buckets.buckets.len(), 1);
    let only = m.buckets.buckets.values().next().unwrap();
    assert_eq!(only.key, sig("mismatch", "values").key());
    assert_eq!(only.count, 7);
    assert!(only.aliases.contains(&raw.key()));
    assert_eq!(m.buckets.find(&raw.key()).map(|b| &b.key), Some(&only.key));
}

#[test]
fn incompatible_or_overlapping_shards_are_refused_and_the_output_kept() {
    let t = tempfile::tempdir().unwrap();
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[b("mismatch", "values", 3, 9)],
    );
    let out = t.path().join("merged");
    merge(std::slice::from_ref(&a), &out).unwrap();
    let before = tree(&out);
    let mut other = contract();
    other.versions.jax = Some("0.4.0".into());
    let c = shard(t.path(), "c", 1, other, &[]);
    let e = merge(&[a.clone(), c.clone()], &out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`versions.jax`") && e.contains("\"0.4.0\""),
        "{e}"
    );
    assert!(
        e.contains(&a.display().to_string()) && e.contains(&c.display().to_string()),
        "{e}"
    );
    // Seed 0 again, with other findings: the same cases, counted twice if merged.
    let again = shard(
        t.path(),
        "again",
        0,
        contract(),
        &[b("mismatch", "values", 1, 9)],
    );
    let e = merge(&[a.clone(), again], &out).unwrap_err().to_string();
    assert!(
        e.contains("overlapping shards") && e.contains("seed 0 cases 0..1000"),
        "{e}"
    );
    assert_eq!(
        tree(&out),
        before,
        "a refused merge leaves the output as it was"
    );
    // The same shard under another spelling of its path is one input.
    let spelled = t.path().join("c/../a");
    let m = merge(&[a, spelled], &t.path().join("once")).unwrap();
    assert_eq!(m.buckets.total(), 3);
}

#[test]
fn inputs_and_outputs_that_are_not_findings_directories_are_named() {
    let t = tempfile::tempdir().unwrap();
    assert!(matches!(
        merge(&[], &t.path().join("o")),
        Err(MergeError::NoInputs)
    ));
    let missing = t.path().join("missing");
    let e = merge(std::slice::from_ref(&missing), &t.path().join("o")).unwrap_err();
    assert!(e.to_string().contains("missing: no such directory"), "{e}");
    let plain = t.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let e = merge(std::slice::from_ref(&plain), &t.path().join("o")).unwrap_err();
    assert!(e.to_string().contains("no shard.json or merge.json"), "{e}");
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[b("mismatch", "values", 3, 9)],
    );
    // A shard is not a merge output: it would be overwritten.
    let e = merge(std::slice::from_ref(&a), &a).unwrap_err().to_string();
    assert!(e.contains("is not a merged findings directory"), "{e}");
    // A bucket whose directory is outside the findings directory is refused, not copied.
    let outside = shard(
        t.path(),
        "outside",
        5,
        contract(),
        &[b("mismatch", "values", 1, 1)],
    );
    let mut index = Buckets::load(&outside).unwrap();
    for bucket in index.buckets.values_mut() {
        bucket.dir = "../a/0001-mismatch-helion-pallas".into();
    }
    index.save(&outside).unwrap();
    let e = merge(&[outside], &t.path().join("o"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`../a/0001-mismatch-helion-pallas`, which is not a directory inside it"),
        "{e}"
    );
    std::fs::remove_dir_all(a.join("0001-mismatch-helion-pallas")).unwrap();
    let e = merge(&[a], &t.path().join("o")).unwrap_err().to_string();
    assert!(
        e.contains("`0001-mismatch-helion-pallas`, which is not a directory inside it"),
        "{e}"
    );
    assert!(
        !t.path().join("o").exists(),
        "nothing is written on a refusal"
    );
}

/// A shard's `stats.json`: `cases` cases, of which `mismatch` mismatched, sampled twice.
fn write_stats(dir: &Path, seed: u64, cases: u64, mismatch: u64) {
    let text = format!(
        r#"{{"format":1,"seed":{seed},"engines":["oracle","pallas-sim"],"seconds":6.0,
        "cases":{cases},"outcomes":{{"agree":{agree},"mismatch":{mismatch}}},"findings":1,
        "coverage":{{"slice/unroll/tail":{{"cases":{cases},"lowered":{cases},"rejected":0}}}},
        "series":[{{"seconds":0.5,"cases":1,"outcomes":{{"agree":1}}}},
                  {{"seconds":6.0,"cases":{cases},"outcomes":{{"agree":{agree},"mismatch":{mismatch}}}}}]}}"#,
        agree = cases - mismatch
    );
    std::fs::write(dir.join(STATS_FILE), text).unwrap();
}

#[test]
fn campaign_records_merge_by_shard_and_a_missing_one_is_named() {
    let t = tempfile::tempdir().unwrap();
    let a = shard(
        t.path(),
        "a",
        0,
        contract(),
        &[b("mismatch", "values", 3, 9)],
    );
    let c = shard(
        t.path(),
        "c",
        1,
        contract(),
        &[b("mismatch", "values", 2, 5)],
    );
    let d = shard(t.path(), "d", 2, contract(), &[]);
    write_stats(&a, 0, 100, 3);
    write_stats(&c, 1, 50, 2);
    let out = t.path().join("merged");
    let m = merge_campaign(&[a.clone(), c.clone(), d.clone()], &out).unwrap();
    assert_eq!(m.stats.stats.cases, 150);
    assert_eq!(m.stats.stats.outcomes[&fuzz::outcome::Outcome::Mismatch], 5);
    assert_eq!(m.stats.stats.coverage["slice/unroll/tail"].lowered, 150);
    let ids: Vec<&str> = m.stats.shards.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["seed-0", "seed-1"]);
    assert_eq!(m.stats.shards[1].origin, c.display().to_string());
    assert_eq!(m.stats.stats_missing, ["seed-2"]);
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(
        m.warnings[0].contains("shard seed-2") && m.warnings[0].contains("no stats.json"),
        "{:?}",
        m.warnings
    );
    assert_eq!(m.stats.series.last().unwrap().cases, 150);
    // The output's record reads back, and a merge of it with more shards is the merge of all.
    let back = load_stats(&out).unwrap().unwrap();
    assert_eq!(back.stats.cases, 150);
    let again = merge_campaign(std::slice::from_ref(&a), &out).unwrap();
    assert!(!again.merged.changed, "the shard is in the merge already");
    assert_eq!(
        again.stats.stats.cases, 150,
        "a shard met twice counts once"
    );
    assert_eq!(again.stats.stats_missing, ["seed-2"], "still missing");
    let e = t.path().join("e");
    let e = shard(&e, "e", 3, contract(), &[]);
    write_stats(&e, 3, 10, 0);
    let more = merge_campaign(std::slice::from_ref(&e), &out).unwrap();
    assert_eq!(more.stats.stats.cases, 160);
    assert_eq!(more.stats.shards.len(), 3);
    // A malformed record refuses the merge, naming the file.
    std::fs::write(c.join(STATS_FILE), "{\"format\":1,\"cases\":\"many\"}").unwrap();
    let err = merge_campaign(&[a, c.clone()], &t.path().join("bad"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&c.join(STATS_FILE).display().to_string()) && err.contains("campaign record"),
        "{err}"
    );
}
