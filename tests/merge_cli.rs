//! `pallas-diff fuzz` writes the shard contract and `pallas-diff merge` merges the shards, on
//! the built binary: two in-process shards of a fault-injected campaign merged by signature
//! (counts summed, re-merging a no-op, the merge replayable), and shards that must not merge
//! refused with exit 2 naming the reason.

mod common;
use common::{Run, run_in};

use finding::merge::MergeRecord;
use finding::shard::{SeedRange, ShardRecord};
use finding::signature::Buckets;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    common::scratch("merge-cli", name)
}

/// A shard: `cases` cases of seed `seed` with every fault injected, unreduced, and `extra` flags (so
/// the buckets depend on the seed and the case count only).
fn shard(cwd: &Path, out: &str, seed: u64, cases: u64, extra: &[&str]) -> Run {
    let seed = seed.to_string();
    let cases = cases.to_string();
    let mut args = vec![
        "fuzz",
        "--cases",
        &cases,
        "--seed",
        &seed,
        "--inject",
        "all",
        "--no-reduce",
        "--jobs",
        "2",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    run_in(cwd, &args)
}

#[test]
fn shards_merge_by_signature_and_incompatible_ones_are_refused() {
    let t = scratch("shards");
    for (out, seed) in [("a", 0), ("b", 1)] {
        let r = shard(&t, out, seed, 150, &["--engines", "oracle,pallas-sim"]);
        assert_eq!(r.code, 3, "injected faults give findings: {r:?}");
        let rec = ShardRecord::load(&t.join(out)).unwrap().unwrap();
        assert_eq!(
            rec.seeds(),
            vec![SeedRange {
                seed,
                cases: Some(150)
            }]
        );
        let c = rec.contract(&t.join(out)).unwrap();
        assert_eq!(c.codegen.faults.len(), compiler::faults::Fault::ALL.len());
    }
    let r = run_in(&t, &["merge", "a", "b", "--out", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("merged 2 shard(s) into m: "), "{r:?}");
    let (a, b, m) = (
        Buckets::load(&t.join("a")).unwrap(),
        Buckets::load(&t.join("b")).unwrap(),
        Buckets::load(&t.join("m")).unwrap(),
    );
    assert_eq!(m.total(), a.total() + b.total(), "counts add up");
    let keys: std::collections::BTreeSet<&String> =
        a.buckets.keys().chain(b.buckets.keys()).collect();
    // One bucket per cause: each shard's key is a merged bucket's key or alias (buckets one
    // shard merged by convergence, `Signature::subsumes`, stay merged), and nothing is lost.
    assert!(m.buckets.len() <= keys.len(), "one bucket per signature");
    for key in &keys {
        assert!(m.find(key).is_some(), "{key} is in the merge");
    }
    let record: MergeRecord =
        serde_json::from_str(&std::fs::read_to_string(t.join("m/merge.json")).unwrap()).unwrap();
    assert_eq!(record.shards.len(), 2);
    let again = run_in(&t, &["merge", "b", "a", "--out", "m", "--json"]);
    assert_eq!(again.code, 0, "{again:?}");
    let json: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(json["changed"], false, "{again:?}");
    assert_eq!(json["findings"], m.total());
    // The merged directory is a findings directory like any other.
    let replay = run_in(&t, &["replay", "m"]);
    assert_eq!(
        replay.code, 0,
        "every merged finding reproduces: {replay:?}"
    );
    // The engine set is a set: the same contract in another order.
    let same = shard(&t, "same", 2, 20, &["--engines", "pallas-sim,oracle"]);
    assert!(same.code == 0 || same.code == 3, "{same:?}");
    let r = run_in(&t, &["merge", "same", "--out", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    // Poison padding: another contract.
    let c = shard(
        &t,
        "c",
        3,
        20,
        &["--engines", "oracle,pallas-sim", "--poison-padding"],
    );
    assert!(c.code == 0 || c.code == 3, "{c:?}");
    let r = run_in(&t, &["merge", "a", "c", "--out", "m2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("incompatible shards: `codegen.poison_padding` is false in a but true in c"),
        "{r:?}"
    );
    // Seed 0 again, fewer cases: the same cases as a's first ones.
    shard(&t, "d", 0, 40, &["--engines", "oracle,pallas-sim"]);
    let r = run_in(&t, &["merge", "a", "d", "--out", "m2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("overlapping shards"), "{r:?}");
    assert!(!t.join("m2").exists(), "a refused merge writes nothing");
    // A directory without a contract.
    std::fs::create_dir(t.join("bare")).unwrap();
    let r = run_in(&t, &["merge", "bare", "--out", "m2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("bare: no shard.json or merge.json"),
        "{r:?}"
    );
}

/// The shards of a `pallas-diff mutants` run merge with the same command: their directories
/// are recognised (and a mix of them with campaign findings refused, writing nothing).
#[test]
fn mutants_shards_merge_with_the_same_command() {
    let t = scratch("mutants-shards");
    for shard in ["s0", "s1"] {
        let dir = t.join(shard);
        std::fs::create_dir_all(&dir).unwrap();
        mutants::report::write_all(&dir, &[], &mutants::Review::none()).unwrap();
    }
    let r = run_in(&t, &["merge", "s0", "s1", "--out", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("mutants.json, summary.txt"), "{r:?}");
    for file in ["mutants.json", "summary.txt", "survivors.md", "junit.xml"] {
        assert!(t.join("m").join(file).is_file(), "{file}: {r:?}");
    }
    std::fs::create_dir(t.join("findings")).unwrap();
    let r = run_in(&t, &["merge", "s0", "findings", "--out", "m2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("merge campaigns' findings and mutants' shards apart"),
        "{r:?}"
    );
    assert!(!t.join("m2").exists(), "a refused merge writes nothing");
    let r = run_in(&t, &["merge", "s0", "typo", "--out", "m2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("typo: no such directory"), "{r:?}");
}
