//! The regression corpus: the spec kernels with their expectation headers, the entries
//! (`corpus/cases/`) that pin what every engine does on a case, their replay (and the replay of
//! findings directories), the promotion of a finding into an entry, and the fault hunt that
//! proves campaigns find each historical defect. Findings themselves (signatures, directories,
//! the campaign sink, merge, reports) are the `finding` crate's.
//!
//! * [`expectations`]: the `# pallas-diff:` headers of the spec kernels, parsed;
//! * [`spec`]: seeding the corpus from the spec kernels, cross-checked against their headers;
//! * [`entry`]: the corpus format (`corpus/cases/<id>-<slug>.json` and `.py`) and
//!   [`entry::Corpus::add_finding`];
//! * [`replay`]: one trial per entry × engine (or per finding of a findings directory), and
//!   bless;
//! * [`promote`]: a finding into the corpus, its expectations blessed from a run now
//!   (`pallas-diff corpus add`);
//! * [`hunt`]: how fast campaigns find each injected historical defect (`pallas-diff hunt`);
//! * [`junit`]: JUnit XML of a replay and of a hunt, for CI systems' test reports.

pub mod entry;
pub mod expectations;
pub mod hunt;
pub mod junit;
pub mod promote;
pub mod replay;
pub mod spec;
