//! Which lowered, in-process-agreeing cases each JAX engine confirms when it cannot confirm them
//! all: novelty first. This module owns the confirmation cells and the per-engine queues.
//!
//! A case's *cells* ([`ConfirmCell`]) are index form × loop type × tail × input dtypes ×
//! construct flags, one per narrowing subscript form it contains. Each JAX engine has its own
//! bounded queue; a case waiting in it is ranked by what it would add for that engine
//! ([`Rank`]): first a case with a cell the engine has not confirmed yet, then the case whose
//! rarest cell has the fewest lowered cases so far, then the rest, oldest first within a rank.
//! A full queue drops its worst-ranked case for a better one (the dropped one is counted as
//! skipped). In the default two-minute campaign JAX confirms ~0.1% of the agreeing cases, so
//! which ones matters more than how many: in arrival order most cells never reached JAX.

use crate::check::PreparedCase;
use crate::generators::{Feature, IndexForm};
use lang::ir::LoopType;
use lang::tensor::DType;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The constructs whose presence splits a cell (bit `i` of [`ConfirmCell::constructs`] is
/// `CONSTRUCTS[i]`).
const CONSTRUCTS: [Feature; 8] = [
    Feature::LiveLoop,
    Feature::StaticInnerLoop,
    Feature::LiveBranch,
    Feature::DirectWrite,
    Feature::AliasWrite,
    Feature::AtomicWrite,
    Feature::NonDividingExtent,
    Feature::Permute,
];

/// One confirmation cell: what a JAX engine should see at least once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfirmCell {
    /// The subscript's index form.
    pub form: IndexForm,
    /// The case's loop type.
    pub loop_type: LoopType,
    /// Whether the subscript sits in an `if` branch (the tail position).
    pub tail: bool,
    /// The input dtypes, as a bit set in [`DType::ALL`] order.
    pub dtypes: u8,
    /// The constructs present, as a bit set over [`CONSTRUCTS`] (views count as one bit).
    pub constructs: u16,
}

impl ConfirmCell {
    /// The coverage table's cell this one refines (index form × loop type × tail; dtypes and
    /// constructs cleared).
    pub fn coarse(self) -> ConfirmCell {
        ConfirmCell {
            dtypes: 0,
            constructs: 0,
            ..self
        }
    }
}

/// The cells of a case with these features (none when it has no narrowing subscript).
pub fn cells(features: &BTreeSet<Feature>) -> Vec<ConfirmCell> {
    let mut dtypes = 0u8;
    let mut constructs = 0u16;
    for f in features {
        if let Feature::DType(d) = f
            && let Some(i) = DType::ALL.iter().position(|x| x == d)
        {
            dtypes |= 1 << i;
        }
        if let Some(i) = CONSTRUCTS.iter().position(|c| c == f) {
            constructs |= 1 << i;
        }
        if matches!(f, Feature::View(_)) {
            constructs |= 1 << CONSTRUCTS.len();
        }
    }
    let mut out: Vec<ConfirmCell> = features
        .iter()
        .filter_map(|f| match f {
            Feature::Index {
                form,
                loop_type,
                in_branch,
            } => Some(ConfirmCell {
                form: *form,
                loop_type: *loop_type,
                tail: *in_branch,
                dtypes,
                constructs,
            }),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How much confirming a case would add for one engine; smaller is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// 0: the engine has not confirmed (or started) a case of one of its coverage-table cells
    /// ([`ConfirmCell::coarse`]); 1: of one of its cells; 2: it has all of them.
    tier: u8,
    /// Lowered cases seen so far in its rarest cell.
    rarity: u64,
    /// Arrival order.
    seq: u64,
}

/// A case waiting for confirmation.
pub struct Pending {
    /// The case as the in-process check prepared it: the confirmation runs the JAX engine on
    /// the same compile and reference.
    pub prepared: PreparedCase<'static>,
    /// Its generator seed.
    pub seed: u64,
    /// Its cells.
    pub cells: Vec<ConfirmCell>,
    /// Whether a confirmation already moved the case out of `agree` (another engine's must not
    /// move it again).
    pub reclassified: AtomicBool,
    seq: u64,
}

#[derive(Default)]
struct EngineQueue {
    /// Cases confirmed or being confirmed per cell.
    confirmed: HashMap<ConfirmCell, u64>,
    /// The same per coverage-table cell ([`ConfirmCell::coarse`]).
    confirmed_coarse: HashMap<ConfirmCell, u64>,
    waiting: Vec<Arc<Pending>>,
    skipped: u64,
}

#[derive(Default)]
struct State {
    /// Lowered agreeing cases seen per cell (what "rare" means).
    lowered: HashMap<ConfirmCell, u64>,
    engines: Vec<EngineQueue>,
    next_seq: u64,
    closed: bool,
}

impl State {
    fn rank(&self, engine: usize, p: &Pending) -> Rank {
        let q = &self.engines[engine];
        let unseen =
            |m: &HashMap<ConfirmCell, u64>, c: ConfirmCell| m.get(&c).copied().unwrap_or(0) == 0;
        let tier = if p
            .cells
            .iter()
            .any(|c| unseen(&q.confirmed_coarse, c.coarse()))
        {
            0
        } else if p.cells.iter().any(|c| unseen(&q.confirmed, *c)) {
            1
        } else {
            2
        };
        let rarity = p
            .cells
            .iter()
            .map(|c| self.lowered.get(c).copied().unwrap_or(0))
            .min()
            .unwrap_or(u64::MAX);
        Rank {
            tier,
            rarity,
            seq: p.seq,
        }
    }
}

/// Whether a full queue waits for room or drops its worst case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenFull {
    /// Drop the worst-ranked case (the campaign's default, `Confirmation::Sample`).
    Drop,
    /// Wait for room (`Confirmation::Every`: every case is confirmed).
    Wait,
}

/// The per-engine queues, shared by the producers and the confirmers.
pub struct Selector {
    state: Mutex<State>,
    ready: Condvar,
    room: Condvar,
    capacity: usize,
    when_full: WhenFull,
}

/// What one engine's selection did, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineSelection {
    /// Cells with at least one case confirmed (or being confirmed).
    pub cells_confirmed: usize,
    /// Cases not confirmed (dropped from a full queue, or left waiting at the end).
    pub skipped: u64,
}

impl Selector {
    /// Queues for `engines` JAX engines, each holding at most `capacity` waiting cases.
    pub fn new(engines: usize, capacity: usize, when_full: WhenFull) -> Selector {
        let state = State {
            engines: (0..engines).map(|_| EngineQueue::default()).collect(),
            ..State::default()
        };
        Selector {
            state: Mutex::new(state),
            ready: Condvar::new(),
            room: Condvar::new(),
            capacity: capacity.max(1),
            when_full,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers a lowered agreeing case to every engine. Returns false when the selector is
    /// closed (the campaign is stopping).
    pub fn offer(
        &self,
        prepared: PreparedCase<'static>,
        seed: u64,
        cells: Vec<ConfirmCell>,
    ) -> bool {
        let mut st = self.lock();
        for c in &cells {
            *st.lowered.entry(*c).or_default() += 1;
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        let pending = Arc::new(Pending {
            prepared,
            seed,
            cells,
            reclassified: AtomicBool::new(false),
            seq,
        });
        for e in 0..st.engines.len() {
            loop {
                if st.closed {
                    return false;
                }
                if st.engines[e].waiting.len() < self.capacity {
                    st.engines[e].waiting.push(Arc::clone(&pending));
                    break;
                }
                match self.when_full {
                    WhenFull::Wait => {
                        st = self.room.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                    WhenFull::Drop => {
                        let new = st.rank(e, &pending);
                        let worst = st.engines[e]
                            .waiting
                            .iter()
                            .enumerate()
                            .map(|(i, p)| (st.rank(e, p), i))
                            .max();
                        let q_skip = match worst {
                            Some((rank, i)) if new < rank => {
                                st.engines[e].waiting[i] = Arc::clone(&pending);
                                true
                            }
                            Some(_) | None => true,
                        };
                        st.engines[e].skipped += u64::from(q_skip);
                        break;
                    }
                }
            }
        }
        drop(st);
        self.ready.notify_all();
        true
    }

    /// Takes up to `k` best-ranked cases of the engine whose best case ranks best, waiting for
    /// work; counts their cells as confirmed for it. `None` once closed and empty.
    pub fn take(&self, k: usize) -> Option<(usize, Vec<Arc<Pending>>)> {
        let mut st = self.lock();
        loop {
            let best = (0..st.engines.len())
                .filter_map(|e| {
                    let q = &st.engines[e];
                    let best = q.waiting.iter().map(|p| st.rank(e, p)).min()?;
                    let done: u64 = q.confirmed.values().sum();
                    Some(((best.tier, best.rarity, done, best.seq), e))
                })
                .min();
            if let Some((_, e)) = best {
                let mut taken = Vec::new();
                while taken.len() < k.max(1) {
                    let Some((_, i)) = st.engines[e]
                        .waiting
                        .iter()
                        .enumerate()
                        .map(|(i, p)| (st.rank(e, p), i))
                        .min()
                    else {
                        break;
                    };
                    let q = &mut st.engines[e];
                    let p = q.waiting.swap_remove(i);
                    for c in &p.cells {
                        *q.confirmed.entry(*c).or_default() += 1;
                        *q.confirmed_coarse.entry(c.coarse()).or_default() += 1;
                    }
                    taken.push(p);
                }
                drop(st);
                self.room.notify_all();
                return Some((e, taken));
            }
            if st.closed {
                return None;
            }
            st = self.ready.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Returns cases taken for `engine` but not confirmed (the campaign ran out of time): their
    /// cells no longer count as confirmed, and they count as skipped.
    pub fn give_back(&self, engine: usize, taken: &[Arc<Pending>]) {
        let mut st = self.lock();
        let q = &mut st.engines[engine];
        for p in taken {
            for c in &p.cells {
                for (m, c) in [
                    (&mut q.confirmed, *c),
                    (&mut q.confirmed_coarse, c.coarse()),
                ] {
                    if let Some(n) = m.get_mut(&c) {
                        *n = n.saturating_sub(1);
                    }
                }
            }
        }
        q.skipped += taken.len() as u64;
    }

    /// No more offers; waiting confirmers drain what is queued (or, with `discard`, leave it,
    /// counted as skipped).
    pub fn close(&self, discard: bool) {
        let mut st = self.lock();
        st.closed = true;
        if discard {
            for q in &mut st.engines {
                q.skipped += q.waiting.len() as u64;
                q.waiting.clear();
            }
        }
        drop(st);
        self.ready.notify_all();
        self.room.notify_all();
    }

    /// Cells with a lowered agreeing case so far.
    pub fn cells_lowered(&self) -> usize {
        self.lock().lowered.len()
    }

    /// Per engine, in construction order: what its selection did.
    pub fn selections(&self) -> Vec<EngineSelection> {
        let st = self.lock();
        st.engines
            .iter()
            .map(|q| EngineSelection {
                cells_confirmed: q.confirmed.values().filter(|&&n| n > 0).count(),
                skipped: q.skipped + q.waiting.len() as u64,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(n: u16) -> ConfirmCell {
        ConfirmCell {
            form: IndexForm::Int,
            loop_type: LoopType::Unroll,
            tail: false,
            dtypes: 1,
            constructs: n,
        }
    }

    fn case() -> PreparedCase<'static> {
        let case =
            crate::generators::generate_from_seed(1, &crate::generators::GenConfig::default());
        PreparedCase::owned(crate::check::Depth::Full, case, &Default::default())
    }

    #[test]
    fn a_new_cell_goes_first_then_the_rarest() {
        let s = Selector::new(1, 8, WhenFull::Drop);
        // Cell 0 is common (three cases), cell 1 rare (one), cell 2 new to the engine.
        for seed in 0..3 {
            s.offer(case(), seed, vec![cell(0)]);
        }
        let (_, first) = s.take(1).unwrap();
        assert_eq!(first[0].seed, 0, "oldest case of an unconfirmed cell");
        s.offer(case(), 10, vec![cell(1)]);
        s.offer(case(), 11, vec![cell(2)]);
        let (_, next) = s.take(2).unwrap();
        let seeds: BTreeSet<u64> = next.iter().map(|p| p.seed).collect();
        assert_eq!(seeds, BTreeSet::from([10, 11]), "unconfirmed cells first");
        let (_, rest) = s.take(8).unwrap();
        assert_eq!(rest.iter().map(|p| p.seed).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(s.selections()[0].cells_confirmed, 3);
    }

    #[test]
    fn an_unconfirmed_coverage_table_cell_beats_an_unconfirmed_fine_cell() {
        let s = Selector::new(1, 8, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(0)]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 0);
        // Seed 1 refines the confirmed table cell (new constructs); seed 2 opens a new one.
        s.offer(case(), 1, vec![cell(3)]);
        let mut other = cell(0);
        other.tail = true;
        s.offer(case(), 2, vec![other]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 2);
        assert_eq!(s.take(1).unwrap().1[0].seed, 1);
    }

    #[test]
    fn a_full_queue_drops_its_worst_case_for_a_new_cell() {
        let s = Selector::new(2, 2, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(0)]);
        s.offer(case(), 1, vec![cell(0)]);
        s.offer(case(), 2, vec![cell(0)]); // no better than what waits: skipped
        s.offer(case(), 3, vec![cell(5)]); // a new cell: replaces the worst (seed 1)
        let sel = s.selections();
        assert_eq!(sel[0].skipped, 4, "two skipped, two still waiting");
        s.close(false);
        let mut seeds = Vec::new();
        while let Some((e, taken)) = s.take(4) {
            if e == 0 {
                seeds.extend(taken.iter().map(|p| p.seed));
            }
        }
        seeds.sort();
        assert_eq!(seeds, vec![0, 3]);
        assert_eq!(s.selections()[1].cells_confirmed, 2);
    }

    #[test]
    fn closing_with_discard_counts_the_waiting_as_skipped() {
        let s = Selector::new(1, 4, WhenFull::Wait);
        s.offer(case(), 0, vec![cell(0)]);
        s.close(true);
        assert!(s.take(1).is_none());
        assert!(!s.offer(case(), 1, vec![cell(0)]));
        assert_eq!(s.selections()[0].skipped, 1);
        assert_eq!(s.cells_lowered(), 1);
    }

    #[test]
    fn cells_split_by_form_and_carry_dtypes_and_constructs() {
        let f = BTreeSet::from([
            Feature::Index {
                form: IndexForm::Int,
                loop_type: LoopType::Unroll,
                in_branch: true,
            },
            Feature::DType(DType::Int32),
            Feature::LiveLoop,
        ]);
        let c = cells(&f);
        assert_eq!(c.len(), 1);
        assert!(c[0].tail && c[0].constructs == 1 && c[0].dtypes != 0);
        assert!(cells(&BTreeSet::from([Feature::LiveLoop])).is_empty());
    }
}
