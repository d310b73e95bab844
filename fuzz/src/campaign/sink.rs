//! Where a campaign's findings go. The campaign only detects and classifies; deduplication,
//! reduction and the on-disk format belong to the corpus crate, which implements
//! [`FindingSink`] (the fuzz crate cannot depend on it: the corpus replays through `check`).

use crate::check::{CaseReport, PreparedCase};

/// What the sink did with a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filed {
    /// A new bucket: written to this directory.
    New(std::path::PathBuf),
    /// A known bucket: counted, nothing written.
    Duplicate,
}

/// Receives findings. Must write atomically (a finding is on disk whole or not at all).
pub trait FindingSink: Send + Sync {
    /// Files one finding (`seed` is the case's generator seed). `prepared` is the case as the
    /// campaign prepared it (compiled under the campaign's options, its reference run): a sink
    /// that checks the case on more engines reuses it.
    fn file(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: u64,
    ) -> std::io::Result<Filed>;

    /// [`FindingSink::file`] of a mutant of the seed kernel `origin` (`fuzz --seeds`): a sink
    /// that records provenance names the seed; by default it files as [`FindingSink::file`].
    fn file_from(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: u64,
        origin: Option<&str>,
    ) -> std::io::Result<Filed> {
        let _ = origin;
        self.file(prepared, report, seed)
    }
}
