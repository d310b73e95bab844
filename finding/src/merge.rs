//! Merging the findings directories of a sharded campaign into one (`pallas-diff merge`).
//!
//! An input is a shard (a findings directory `pallas-diff fuzz` wrote, with its `shard.json`,
//! [`crate::shard`]) or an earlier merge's output (with its `merge.json`, [`MergeRecord`]). The
//! merge:
//!
//! * checks that every input was made under one [`Contract`] (an incompatible one is refused,
//!   naming the field and both directories) and that no two shards share a case (their
//!   [`SeedRange`]s are disjoint; a shard met twice, e.g. in a shard and in a merge of it, is
//!   counted once);
//! * buckets by signature the way [`crate::sink`] does: bucket keys connected through the
//!   aliases of any input (a raw key that reduced into a bucket) are one bucket, whose count is
//!   the sum of every shard's counts of its keys and whose finding directory is the smallest
//!   case ([`CostRecord`], ties broken by key, then by the files' bytes, so the choice does not
//!   depend on the order of the inputs), copied byte for byte;
//! * writes `buckets.json`, `merge.json` (every source shard: its seeds, where it came from and
//!   its own bucket counts; which shards found each bucket) and one `<NNNN>-<slug>/` directory
//!   per bucket, numbered in key order;
//! * writes `stats.json`, the campaign record ([`fuzz::campaign::record`]): every shard's own
//!   record kept by shard id, the summary summed over them, the series merged by time
//!   ([`stats`]); a shard without a `stats.json` is listed under `stats_missing` and warned
//!   about ([`MergedCampaign::warnings`]).
//!
//! The output is built whole in a temporary directory next to `--out` and renamed into place
//! ([`fsio::write_dir_atomic`]), so it is the old complete directory or the new complete one.
//! An existing `--out` that is a merged directory is one of the inputs, so merging more shards
//! into it adds them, and merging the same inputs again changes nothing (it is not even
//! rewritten). Everything is computed from the shard records and the finding directories, never
//! from the order of the arguments.
//!
//! The inputs and their finding directories are read in parallel, on the caller's rayon pool
//! (`pallas-diff merge --jobs` installs one of that size); everything read is collected in
//! input order, so the output and the error reported for several bad inputs do not depend on
//! which read finished first.

use crate::fsio::{self, IoError};
use crate::shard::{Contract, FieldDifference, SHARD_FILE, SeedRange, ShardError, ShardRecord};
use crate::signature::{BUCKETS_FILE, Bucket, Buckets, BucketsError, CostRecord};
use fuzz::campaign::record::{CampaignRecord, STATS_FILE};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file name of the merge record in a merged findings directory.
pub const MERGE_FILE: &str = "merge.json";

/// The version of the `merge.json` format.
pub const MERGE_FORMAT: u32 = 1;

/// One shard of a merged directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSource {
    /// Its identity, from its seeds (`seed-3`, `seed-3+seed-9` for a directory two campaigns
    /// wrote).
    pub id: String,
    /// The findings directory it was merged from (as given to the merge that first saw it).
    pub origin: String,
    /// Its runs' cases.
    pub seeds: Vec<SeedRange>,
    /// Its own buckets: signature key → count.
    pub buckets: BTreeMap<String, u64>,
}

impl ShardSource {
    /// Whether `other` is this shard (met again, perhaps from another directory).
    fn same_shard(&self, other: &ShardSource) -> bool {
        self.seeds == other.seeds && self.buckets == other.buckets
    }
}

/// `merge.json`: what a merged findings directory is made of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// [`MERGE_FORMAT`].
    pub format: u32,
    /// The contract every shard was made under.
    pub contract: Contract,
    /// Every source shard, by id.
    pub shards: Vec<ShardSource>,
    /// The shards that found each bucket (bucket key → shard ids).
    pub found_in: BTreeMap<String, Vec<String>>,
}

impl MergeRecord {
    /// Reads `<dir>/merge.json`; `None` when there is none.
    pub fn load(dir: &Path) -> Result<Option<MergeRecord>, ShardError> {
        let path = dir.join(MERGE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        crate::shard::load_record(&path, "merge record", MERGE_FORMAT, |r: &MergeRecord| {
            r.format
        })
        .map(Some)
    }
}

/// Why a merge was refused.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No input directory.
    #[error("nothing to merge: give at least one findings directory")]
    NoInputs,
    /// An input does not exist.
    #[error("{}: no such directory", .0.display())]
    Missing(PathBuf),
    /// An input is a file.
    #[error("{}: not a directory (give findings directories written by `pallas-diff fuzz` or `pallas-diff merge`)", .0.display())]
    NotADirectory(PathBuf),
    /// An input has neither record.
    #[error(
        "{}: no {SHARD_FILE} or {MERGE_FILE}: not a findings directory of `pallas-diff fuzz` or `pallas-diff merge` (or one written before the shard contract was recorded), so nothing says which seeds, config, engines and versions its findings come from",
        .0.display()
    )]
    NoContract(PathBuf),
    /// A record cannot be read, or a shard's runs disagree.
    #[error(transparent)]
    Record(#[from] ShardError),
    /// A `buckets.json` cannot be read.
    #[error(transparent)]
    Buckets(#[from] BucketsError),
    /// I/O.
    #[error(transparent)]
    Io(#[from] IoError),
    /// `buckets.json` names a finding directory that is not there (or not a name inside it).
    #[error("{}: bucket `{key}` names its finding directory `{dir}`, which is not a directory inside it with a meta.json", path.display())]
    MissingFinding {
        /// The findings directory.
        path: PathBuf,
        /// The bucket.
        key: String,
        /// The directory it names.
        dir: String,
    },
    /// A merged directory's record counts a bucket its `buckets.json` lacks.
    #[error("{}: {MERGE_FILE} counts bucket `{key}` of shard {shard}, which {BUCKETS_FILE} does not hold", path.display())]
    Inconsistent {
        /// The merged directory.
        path: PathBuf,
        /// The shard.
        shard: String,
        /// The key.
        key: String,
    },
    /// Two inputs were made under different contracts.
    #[error(
        "incompatible shards: `{}` is {} in {} but {} in {}; merge only shards of one campaign (same generator config, engines, codegen options and versions)",
        difference.field, difference.first, first.display(), difference.second, second.display()
    )]
    Incompatible {
        /// Where the contracts differ (boxed: errors travel in `Result`s).
        difference: Box<FieldDifference>,
        /// The first input.
        first: PathBuf,
        /// The input that differs from it.
        second: PathBuf,
    },
    /// Two shards share cases.
    #[error(
        "overlapping shards: {first} ({first_range}) and {second} ({second_range}) ran the same cases; shards of one campaign need distinct seeds (`SHARD=k ci/campaign.sh` uses seed k)"
    )]
    Overlap {
        /// One shard's origin.
        first: String,
        /// Its range.
        first_range: SeedRange,
        /// The other's.
        second: String,
        /// Its range.
        second_range: SeedRange,
    },
    /// `--out` exists and is something else.
    #[error("{}: exists and is not a merged findings directory (no {MERGE_FILE}); give a new or a merged --out", .0.display())]
    OutNotMerged(PathBuf),
}

/// What a merge produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// The buckets of the output.
    pub buckets: Buckets,
    /// Its record.
    pub record: MergeRecord,
    /// Whether the output was written (`false`: it already held exactly this).
    pub changed: bool,
}

/// What a merge produced, with its campaign record.
#[derive(Clone, Debug)]
pub struct MergedCampaign {
    /// The findings.
    pub merged: Merged,
    /// The output's `stats.json`.
    pub stats: CampaignRecord,
    /// What the merge could not count: shards without a `stats.json`, or with one that covers
    /// only the last of the campaigns that wrote the directory.
    pub warnings: Vec<String>,
}

/// One input directory, read.
struct Input {
    path: PathBuf,
    contract: Contract,
    shards: Vec<ShardSource>,
    buckets: Buckets,
    stats: stats::InputStats,
}

fn shard_id(seeds: &[SeedRange]) -> String {
    let ids: BTreeSet<u64> = seeds.iter().map(|s| s.seed).collect();
    ids.iter()
        .map(|s| format!("seed-{s}"))
        .collect::<Vec<_>>()
        .join("+")
}

fn load_input(path: &Path) -> Result<Input, MergeError> {
    if !path.exists() {
        return Err(MergeError::Missing(path.to_path_buf()));
    }
    if !path.is_dir() {
        return Err(MergeError::NotADirectory(path.to_path_buf()));
    }
    let buckets = Buckets::load(path)?;
    for b in buckets.buckets.values() {
        // A bucket's directory is one name inside the findings directory: a merge copies what
        // it holds, so `..` or an absolute path must not reach outside.
        let mut parts = Path::new(&b.dir).components();
        let one_name = matches!(
            (parts.next(), parts.next()),
            (Some(std::path::Component::Normal(_)), None)
        );
        if !one_name || !path.join(&b.dir).join("meta.json").is_file() {
            return Err(MergeError::MissingFinding {
                path: path.to_path_buf(),
                key: b.key.clone(),
                dir: b.dir.clone(),
            });
        }
    }
    let stats_record = stats::load_stats(path)?;
    if let Some(record) = MergeRecord::load(path)? {
        for s in &record.shards {
            if let Some(key) = s.buckets.keys().find(|k| buckets.find(k).is_none()) {
                return Err(MergeError::Inconsistent {
                    path: path.to_path_buf(),
                    shard: s.id.clone(),
                    key: key.clone(),
                });
            }
        }
        return Ok(Input {
            path: path.to_path_buf(),
            contract: record.contract,
            stats: stats::InputStats::of_merge(&record.shards, stats_record),
            shards: record.shards,
            buckets,
        });
    }
    let Some(record) = ShardRecord::load(path)? else {
        return Err(MergeError::NoContract(path.to_path_buf()));
    };
    let contract = record.contract(path)?.clone();
    let seeds = record.seeds();
    let shard = ShardSource {
        id: shard_id(&seeds),
        origin: path.display().to_string(),
        seeds,
        buckets: buckets
            .buckets
            .iter()
            .map(|(k, b)| (k.clone(), b.count))
            .collect(),
    };
    Ok(Input {
        path: path.to_path_buf(),
        contract,
        stats: stats::InputStats::of_shard(path, &shard, stats_record),
        shards: vec![shard],
        buckets,
    })
}

/// Union-find over signature keys; the root of a set is its least key (deterministic).
#[derive(Default)]
struct KeySets {
    parent: BTreeMap<String, String>,
}

impl KeySets {
    fn add(&mut self, key: &str) {
        self.parent
            .entry(key.to_string())
            .or_insert_with(|| key.to_string());
    }

    fn root(&self, key: &str) -> String {
        let mut k = key.to_string();
        // Paths are short (a few keys per bucket): no compression needed.
        while let Some(p) = self.parent.get(&k) {
            if *p == k {
                break;
            }
            k = p.clone();
        }
        k
    }

    fn join(&mut self, a: &str, b: &str) {
        self.add(a);
        self.add(b);
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent.insert(hi, lo);
        }
    }
}

/// A bucket of one input with its finding directory's files.
struct Candidate {
    bucket: Bucket,
    files: Tree,
}

impl Candidate {
    fn rank(&self) -> (&CostRecord, &str, &[(String, Vec<u8>)]) {
        (&self.bucket.cost, &self.bucket.key, &self.files)
    }
}

/// Checks the contracts and collects the shards, each once.
fn collect_shards(inputs: &[Input]) -> Result<BTreeMap<String, ShardSource>, MergeError> {
    let first = &inputs[0];
    for other in &inputs[1..] {
        if let Some(difference) = first.contract.difference(&other.contract) {
            return Err(MergeError::Incompatible {
                difference: Box::new(difference),
                first: first.path.clone(),
                second: other.path.clone(),
            });
        }
    }
    let mut shards: BTreeMap<String, ShardSource> = BTreeMap::new();
    for s in inputs.iter().flat_map(|i| &i.shards) {
        if let Some(known) = shards.get_mut(&s.id)
            && known.same_shard(s)
        {
            // One shard met twice: keep one origin, the same whatever the argument order.
            if s.origin < known.origin {
                known.origin = s.origin.clone();
            }
            continue;
        }
        for known in shards.values() {
            for a in &known.seeds {
                if let Some(b) = s.seeds.iter().find(|b| a.overlaps(b)) {
                    return Err(MergeError::Overlap {
                        first: known.origin.clone(),
                        first_range: *a,
                        second: s.origin.clone(),
                        second_range: *b,
                    });
                }
            }
        }
        shards.insert(s.id.clone(), s.clone());
    }
    Ok(shards)
}

/// The files of a directory: relative paths and bytes, sorted ([`fsio::read_tree`]).
type Tree = Vec<(String, Vec<u8>)>;

/// The merge of `inputs` (module docs), without writing it: the files of the output directory,
/// its buckets, its record, its campaign record and the warnings.
fn plan(inputs: &[Input]) -> Result<(Tree, MergedCampaign), MergeError> {
    let shards = collect_shards(inputs)?;
    let (stats, warnings) = stats::plan_stats(inputs.iter().map(|i| &i.stats), &shards);
    let mut sets = KeySets::default();
    for b in inputs.iter().flat_map(|i| i.buckets.buckets.values()) {
        sets.add(&b.key);
        for alias in &b.aliases {
            sets.join(&b.key, alias);
        }
    }
    for key in shards.values().flat_map(|s| s.buckets.keys()) {
        sets.add(key);
    }
    // Every key of a set, and the best candidate of each set.
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for key in sets.parent.keys() {
        members
            .entry(sets.root(key))
            .or_default()
            .insert(key.clone());
    }
    // Every finding directory is read (in parallel; the first unreadable one in input order is
    // the error), then ranked in input order.
    let dirs: Vec<(&Path, &Bucket)> = inputs
        .iter()
        .flat_map(|i| i.buckets.buckets.values().map(|b| (i.path.as_path(), b)))
        .collect();
    let trees: Vec<Result<Tree, IoError>> = dirs
        .par_iter()
        .map(|(path, b)| fsio::read_tree(&path.join(&b.dir)))
        .collect();
    let mut best: BTreeMap<String, Candidate> = BTreeMap::new();
    for ((_, b), files) in dirs.into_iter().zip(trees) {
        let candidate = Candidate {
            bucket: b.clone(),
            files: files?,
        };
        let root = sets.root(&b.key);
        match best.get(&root) {
            Some(known) if known.rank() <= candidate.rank() => {}
            Some(_) | None => {
                best.insert(root, candidate);
            }
        }
    }
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut found_by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in shards.values() {
        for (key, n) in &s.buckets {
            let root = sets.root(key);
            *counts.entry(root.clone()).or_default() += n;
            found_by.entry(root).or_default().insert(s.id.clone());
        }
    }
    // Output order: by the winning key, so numbering does not depend on the inputs' order.
    let mut winners: Vec<(&String, &Candidate)> = best.iter().collect();
    winners.sort_by(|a, b| a.1.bucket.key.cmp(&b.1.bucket.key));
    let mut buckets = Buckets::default();
    let mut found_in = BTreeMap::new();
    let mut files: Tree = Vec::new();
    for (i, (root, c)) in winners.into_iter().enumerate() {
        let dir = format!("{:04}-{}", i + 1, c.bucket.signature.slug());
        let key = c.bucket.key.clone();
        let aliases: BTreeSet<String> = members
            .get(root)
            .into_iter()
            .flatten()
            .filter(|k| **k != key)
            .cloned()
            .collect();
        buckets.buckets.insert(
            key.clone(),
            Bucket {
                key: key.clone(),
                signature: c.bucket.signature.clone(),
                count: counts.get(root).copied().unwrap_or(0),
                dir: dir.clone(),
                cost: c.bucket.cost.clone(),
                aliases,
            },
        );
        found_in.insert(
            key,
            found_by
                .get(root)
                .into_iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>(),
        );
        files.extend(
            c.files
                .iter()
                .map(|(name, bytes)| (format!("{dir}/{name}"), bytes.clone())),
        );
    }
    let record = MergeRecord {
        format: MERGE_FORMAT,
        contract: inputs[0].contract.clone(),
        shards: shards.into_values().collect(),
        found_in,
    };
    let json = |r: Result<String, serde_json::Error>| r.expect("a record serializes");
    files.push((
        BUCKETS_FILE.to_string(),
        json(crate::json::to_string_of(&buckets)).into_bytes(),
    ));
    files.push((
        MERGE_FILE.to_string(),
        json(crate::json::to_string_ordered(
            &record,
            &["format", "shards"],
        ))
        .into_bytes(),
    ));
    files.push((
        STATS_FILE.to_string(),
        json(serde_json::to_string(&stats)).into_bytes(),
    ));
    files.sort();
    let merged = Merged {
        buckets,
        record,
        changed: false,
    };
    Ok((
        files,
        MergedCampaign {
            merged,
            stats,
            warnings,
        },
    ))
}

/// The same directory, whatever the spelling (`a/../b`, `./b`), when it exists.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        (Ok(_) | Err(_), Ok(_) | Err(_)) => a == b,
    }
}

/// Merges the findings directories `inputs` into `out` (module docs): the findings only.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    merge_campaign(inputs, out).map(|c| c.merged)
}

/// Merges the findings directories `inputs` into `out` (module docs), with the campaign record
/// and what it could not count.
pub fn merge_campaign(inputs: &[PathBuf], out: &Path) -> Result<MergedCampaign, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::NoInputs);
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    for p in inputs {
        if !paths.iter().any(|q| same_dir(p, q)) {
            paths.push(p.clone());
        }
    }
    if out.exists() {
        if !out.is_dir() {
            return Err(MergeError::OutNotMerged(out.to_path_buf()));
        }
        let empty = std::fs::read_dir(out)
            .map_err(|e| IoError::new(out, "list", e))?
            .next()
            .is_none();
        if out.join(MERGE_FILE).exists() {
            if !paths.iter().any(|q| same_dir(out, q)) {
                paths.push(out.to_path_buf());
            }
        } else if !empty {
            return Err(MergeError::OutNotMerged(out.to_path_buf()));
        }
    }
    // In parallel; the first input in order that cannot be read is the error.
    let loaded = paths
        .par_iter()
        .map(|p| load_input(p))
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let (files, mut campaign) = plan(&loaded)?;
    let unchanged = out.join(MERGE_FILE).exists() && fsio::read_tree(out)? == files;
    if !unchanged {
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        fsio::write_dir_atomic(out, &refs)?;
    }
    campaign.merged.changed = !unchanged;
    Ok(campaign)
}

mod stats;
pub use stats::load_stats;

#[cfg(test)]
mod tests;
