//! The campaign records of a merge: every input's `stats.json` read by shard id, and the
//! output's, [`CampaignRecord::merged`] of the shards' records (summaries summed, series merged
//! by time, each shard's own record kept). A shard without a record is named in the output's
//! `stats_missing` and in a warning, never counted as zero cases silently.

use super::ShardSource;
use crate::fsio;
use crate::shard::ShardError;
use fuzz::campaign::record::{CampaignRecord, STATS_FILE, STATS_FORMAT, ShardStats};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Reads `<dir>/stats.json` ([`CampaignRecord::parse`]); `None` when there is none.
pub fn load_stats(dir: &Path) -> Result<Option<CampaignRecord>, ShardError> {
    let path = dir.join(STATS_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let text = fsio::read_to_string(&path)?;
    let record = CampaignRecord::parse(&text).map_err(|e| ShardError::Json {
        path: path.clone(),
        what: "campaign record",
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    if record.format != STATS_FORMAT {
        return Err(ShardError::Format {
            path,
            found: record.format,
            supported: STATS_FORMAT,
        });
    }
    Ok(Some(record))
}

/// The records one input holds, by shard id.
#[derive(Default)]
pub(super) struct InputStats {
    /// Shard id → its own record.
    records: BTreeMap<String, CampaignRecord>,
    /// Shards of the input with no record.
    missing: BTreeSet<String>,
    /// What the merge should say about them.
    warnings: Vec<String>,
}

impl InputStats {
    /// The record of a shard directory (one shard, `shard`), from `dir`.
    pub(super) fn of_shard(
        dir: &Path,
        shard: &ShardSource,
        record: Option<CampaignRecord>,
    ) -> InputStats {
        let mut out = InputStats::default();
        match record {
            Some(r) => {
                // A directory several campaigns wrote keeps the last one's record only.
                if shard.seeds.len() > 1 {
                    out.warnings.push(format!(
                        "{}: {STATS_FILE} is the last campaign's (seed {}) of the {} that wrote this directory; the others' counts are not in the merged {STATS_FILE}",
                        dir.display(),
                        r.seed.map_or("?".to_string(), |s| s.to_string()),
                        shard.seeds.len()
                    ));
                }
                out.records.insert(shard.id.clone(), r);
            }
            None => {
                out.missing.insert(shard.id.clone());
            }
        }
        out
    }

    /// The records of a merged directory with these shards.
    pub(super) fn of_merge(shards: &[ShardSource], record: Option<CampaignRecord>) -> InputStats {
        let mut out = InputStats::default();
        if let Some(r) = record {
            out.missing.extend(r.stats_missing);
            for s in r.shards {
                out.records.insert(s.id, s.record);
            }
        }
        for s in shards {
            if !out.records.contains_key(&s.id) {
                out.missing.insert(s.id.clone());
            }
        }
        out
    }
}

/// The output's `stats.json` and the warnings of the merge, for the merged `shards`.
pub(super) fn plan_stats<'a>(
    inputs: impl IntoIterator<Item = &'a InputStats>,
    shards: &BTreeMap<String, ShardSource>,
) -> (CampaignRecord, Vec<String>) {
    let mut records: BTreeMap<&str, &CampaignRecord> = BTreeMap::new();
    let mut warnings = Vec::new();
    for input in inputs {
        // A shard met twice (in a shard and in a merge of it) has one record: the first kept.
        for (id, r) in &input.records {
            records.entry(id.as_str()).or_insert(r);
        }
        warnings.extend(input.warnings.iter().cloned());
    }
    let mut with = Vec::new();
    let mut missing = Vec::new();
    for (id, s) in shards {
        match records.get(id.as_str()) {
            Some(r) => with.push(ShardStats {
                id: id.clone(),
                origin: s.origin.clone(),
                record: (*r).clone(),
            }),
            None => {
                warnings.push(format!(
                    "shard {id} ({}) has no {STATS_FILE}: its cases and outcomes are not in the merged {STATS_FILE} (listed under stats_missing)",
                    s.origin
                ));
                missing.push(id.clone());
            }
        }
    }
    (CampaignRecord::merged(with, missing), warnings)
}
