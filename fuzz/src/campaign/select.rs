//! Which lowered, in-process-agreeing cases each JAX engine confirms when it cannot confirm them
//! all: novelty first. This module owns the confirmation cells and the per-engine queues.
//!
//! A *cell* ([`ConfirmCell`]) is one index form × loop type × tail × input dtype × construct
//! (or none). A case is in every cell its features combine: each narrowing subscript form it
//! contains, with each of its input dtypes and each of its constructs. Cells are single values
//! on purpose: with the constructs as one bit set per case (512 combinations) a two-minute
//! campaign had 7,827 cells and could confirm ~630 cases per engine, so 78% of the cells never
//! reached JAX; as single values a case covers several cells at once and every cell is
//! reachable (the measurement is in docs/measurements.md, issue 19 item 3).
//!
//! Each JAX engine has its own bounded queue; a case waiting in it is ranked by what it would
//! add for that engine ([`Rank`]): first a case with a coverage-table cell (form × loop type ×
//! tail) the engine has not confirmed yet, then a case with unconfirmed cells, the one whose
//! rarest unconfirmed cell has the fewest lowered cases so far first, then the one with the
//! most unconfirmed cells, oldest first within a rank. A full queue drops a case for a better
//! one (the dropped one is counted as skipped), both ranked by what they add beyond the other
//! waiting cases: a case is worth only the cells no other waiting case would confirm, so the
//! only waiting case of an unconfirmed cell is never dropped for one whose cells already wait
//! in other cases. (Ranked alone, a case of an unconfirmed coverage-table cell displaced the
//! only case of a cell lowered once in the campaign, which then never reached that engine:
//! `--seed 82`, issue 19 item 3.) In the default two-minute campaign JAX confirms ~0.4% of
//! the agreeing cases, so which ones matters more than how many: in arrival order most cells
//! never reached JAX.

use crate::check::PreparedCase;
use crate::generators::{Feature, IndexForm};
use lang::ir::LoopType;
use lang::tensor::DType;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The construct of a cell: one of the generator features that change how a narrowing
/// subscript lowers or what its result feeds, or none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Construct {
    /// None of the others.
    Plain,
    /// `hl.tile(live)` over the live extent.
    LiveLoop,
    /// A nested tile loop over a static extent.
    StaticInnerLoop,
    /// An `if` on the live extent.
    LiveBranch,
    /// A store to a loaded tensor.
    DirectWrite,
    /// A store or atomic through a host alias of a loaded tensor.
    AliasWrite,
    /// An atomic to a loaded tensor.
    AtomicWrite,
    /// A tile loop whose extent the block does not divide.
    NonDividingExtent,
    /// `.permute` of a device value.
    Permute,
    /// A view of a device value (any kind).
    View,
}

impl Construct {
    /// The name in summaries (the generator feature's).
    pub fn name(self) -> &'static str {
        match self {
            Construct::Plain => "plain",
            Construct::LiveLoop => "live-loop",
            Construct::StaticInnerLoop => "static-inner-loop",
            Construct::LiveBranch => "live-branch",
            Construct::DirectWrite => "direct-write",
            Construct::AliasWrite => "alias-write",
            Construct::AtomicWrite => "atomic-write",
            Construct::NonDividingExtent => "non-dividing-extent",
            Construct::Permute => "permute",
            Construct::View => "view",
        }
    }

    /// The construct a feature is, if it is one.
    fn of(f: &Feature) -> Option<Construct> {
        Some(match f {
            Feature::LiveLoop => Construct::LiveLoop,
            Feature::StaticInnerLoop => Construct::StaticInnerLoop,
            Feature::LiveBranch => Construct::LiveBranch,
            Feature::DirectWrite => Construct::DirectWrite,
            Feature::AliasWrite => Construct::AliasWrite,
            Feature::AtomicWrite => Construct::AtomicWrite,
            Feature::NonDividingExtent => Construct::NonDividingExtent,
            Feature::Permute => Construct::Permute,
            Feature::View(_) => Construct::View,
            // The other features split no cell: they are the cell's other coordinates (index
            // form, loop type, dtype) or describe inputs and shapes, which the coverage table
            // and the Helion reach table count.
            _ => return None,
        })
    }
}

/// One confirmation cell: what a JAX engine should see at least once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfirmCell {
    /// The subscript's index form.
    pub form: IndexForm,
    /// The case's loop type.
    pub loop_type: LoopType,
    /// Whether the subscript sits in an `if` branch (the tail position).
    pub tail: bool,
    /// One input dtype of the case.
    pub dtype: DType,
    /// One construct of the case, or [`Construct::Plain`] when it has none.
    pub construct: Construct,
}

impl ConfirmCell {
    /// The coverage table's cell this one refines (index form × loop type × tail; dtype and
    /// construct cleared).
    pub fn coarse(self) -> ConfirmCell {
        ConfirmCell {
            dtype: DType::Float32,
            construct: Construct::Plain,
            ..self
        }
    }
}

impl std::fmt::Display for ConfirmCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}/{}",
            self.form,
            self.loop_type.name(),
            if self.tail { "tail" } else { "no-tail" },
            self.dtype.name(),
            self.construct.name()
        )
    }
}

/// The cells of a case with these features (none when it has no narrowing subscript).
pub fn cells(features: &BTreeSet<Feature>) -> Vec<ConfirmCell> {
    let dtypes: Vec<DType> = features
        .iter()
        .filter_map(|f| match f {
            Feature::DType(d) => Some(*d),
            _ => None,
        })
        .collect();
    let mut constructs: Vec<Construct> = features.iter().filter_map(Construct::of).collect();
    constructs.dedup();
    if constructs.is_empty() {
        constructs.push(Construct::Plain);
    }
    let mut out = Vec::new();
    for f in features {
        let Feature::Index {
            form,
            loop_type,
            in_branch,
        } = f
        else {
            continue;
        };
        for &dtype in &dtypes {
            for &construct in &constructs {
                out.push(ConfirmCell {
                    form: *form,
                    loop_type: *loop_type,
                    tail: *in_branch,
                    dtype,
                    construct,
                });
            }
        }
    }
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
    /// Lowered cases seen so far in its rarest cell the engine has not confirmed (in tier 2,
    /// its rarest cell): a cell seen once may never be offered again, so it goes before cells
    /// more cases will bring.
    rarity: u64,
    /// How many of its cells the engine has not confirmed, the most first (a greedy cover:
    /// each confirmation closes as many cells as it can).
    missing: std::cmp::Reverse<usize>,
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
    /// The seed kernel it is a mutant of, if any (`campaign::draw`).
    pub origin: Option<String>,
    /// Its cells.
    pub cells: Vec<ConfirmCell>,
    /// Their coverage-table cells ([`ConfirmCell::coarse`]), each once.
    coarse: Vec<ConfirmCell>,
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

/// What the cases waiting in one queue would confirm: per cell, how many of them are in it.
#[derive(Default)]
struct Cover {
    cells: HashMap<ConfirmCell, u64>,
    coarse: HashMap<ConfirmCell, u64>,
}

impl Cover {
    fn of(waiting: &[Arc<Pending>]) -> Cover {
        let mut cover = Cover::default();
        for p in waiting {
            for c in &p.cells {
                *cover.cells.entry(*c).or_default() += 1;
            }
            for c in &p.coarse {
                *cover.coarse.entry(*c).or_default() += 1;
            }
        }
        cover
    }
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
    /// What confirming `p` would add for `engine`, given what it has confirmed.
    fn rank(&self, engine: usize, p: &Pending) -> Rank {
        let q = &self.engines[engine];
        let has = |m: &HashMap<ConfirmCell, u64>, c: &ConfirmCell| m.get(c).is_some_and(|&n| n > 0);
        self.rank_given(p, |c| has(&q.confirmed, c), |c| has(&q.confirmed_coarse, c))
    }

    /// What keeping `p` in the engine's full queue adds beyond the other waiting cases
    /// (`cover`, which counts `p` when `waiting`): cells they would confirm count as confirmed.
    /// A case whose every unconfirmed cell waits in another case ranks last (tier 2), so it
    /// is what the queue drops first, and a new one like it displaces nothing.
    fn worth(&self, engine: usize, p: &Pending, cover: &Cover, waiting: bool) -> Rank {
        let q = &self.engines[engine];
        let own = u64::from(waiting);
        let has = |confirmed: &HashMap<ConfirmCell, u64>,
                   others: &HashMap<ConfirmCell, u64>,
                   c: &ConfirmCell| {
            confirmed.get(c).is_some_and(|&n| n > 0) || others.get(c).is_some_and(|&n| n > own)
        };
        self.rank_given(
            p,
            |c| has(&q.confirmed, &cover.cells, c),
            |c| has(&q.confirmed_coarse, &cover.coarse, c),
        )
    }

    /// The rank of `p` when the engine has the cells `has` says and the coverage-table cells
    /// `has_coarse` says.
    fn rank_given(
        &self,
        p: &Pending,
        has: impl Fn(&ConfirmCell) -> bool,
        has_coarse: impl Fn(&ConfirmCell) -> bool,
    ) -> Rank {
        let missing = p.cells.iter().filter(|c| !has(c)).count();
        let tier = if p.coarse.iter().any(|c| !has_coarse(c)) {
            0
        } else if missing > 0 {
            1
        } else {
            2
        };
        let lowered = |c: &ConfirmCell| self.lowered.get(c).copied().unwrap_or(0);
        let rarity = if missing > 0 {
            p.cells.iter().filter(|c| !has(c)).map(lowered).min()
        } else {
            p.cells.iter().map(lowered).min()
        }
        .unwrap_or(u64::MAX);
        Rank {
            tier,
            rarity,
            missing: std::cmp::Reverse(missing),
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
    /// Cells with a lowered case but none confirmed, in cell order.
    pub cells_missing: Vec<ConfirmCell>,
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
        self.offer_from(prepared, seed, None, cells)
    }

    /// [`Selector::offer`] of a case with its seed kernel (`origin`), which a finding its
    /// confirmation files names.
    pub fn offer_from(
        &self,
        prepared: PreparedCase<'static>,
        seed: u64,
        origin: Option<String>,
        cells: Vec<ConfirmCell>,
    ) -> bool {
        let mut st = self.lock();
        // A case a producer finished after the close is past the budget: its cells are not
        // counted as lowered-but-unconfirmed.
        if st.closed {
            return false;
        }
        for c in &cells {
            *st.lowered.entry(*c).or_default() += 1;
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        let mut coarse: Vec<ConfirmCell> = cells.iter().map(|c| c.coarse()).collect();
        coarse.sort();
        coarse.dedup();
        let pending = Arc::new(Pending {
            prepared,
            seed,
            origin,
            cells,
            coarse,
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
                        // Both sides ranked by what they add beyond the rest of the queue:
                        // ranked alone, a case of an unconfirmed coverage-table cell other
                        // cases already brought displaced the only case of a rare cell.
                        // A case with nothing left to confirm for this engine displaces
                        // nothing; past the first seconds most offers are such, and this
                        // skips counting the queue's cells for them (under the lock).
                        if st.rank(e, &pending).tier == 2 {
                            st.engines[e].skipped += 1;
                            break;
                        }
                        let cover = Cover::of(&st.engines[e].waiting);
                        let new = st.worth(e, &pending, &cover, false);
                        let worst = st.engines[e]
                            .waiting
                            .iter()
                            .enumerate()
                            .map(|(i, p)| (st.worth(e, p, &cover, true), i))
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
                    Some(((best.tier, best.rarity, best.missing, done, best.seq), e))
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
        Self::uncount(&mut st.engines[engine], taken);
        st.engines[engine].skipped += taken.len() as u64;
    }

    fn uncount(q: &mut EngineQueue, taken: &[Arc<Pending>]) {
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
    }

    /// The time budget is spent: no more offers, and of what waits each engine keeps, best
    /// first, the cases that add a cell the engine has not confirmed and no case kept before
    /// covers, at most `keep` of them (the rest count as skipped), so a rare cell first seen
    /// in the last seconds still reaches JAX, at the cost of a few more batches per engine.
    /// (Keeping the best `keep` cases alone left one cell per engine unconfirmed once the
    /// in-process loop drew ~2.9k cases a second: the last `keep` cases could share cells.) `taken`, a batch a confirmer took for an engine
    /// and found past the budget, goes back to its queue first and competes with the rest.
    /// Returns whether the selector was already closed, in which case `taken` was not given
    /// back: it came from what a previous close kept, and runs.
    pub fn close_keeping_new(&self, taken: Option<(usize, &[Arc<Pending>])>, keep: usize) -> bool {
        let mut st = self.lock();
        if st.closed {
            return true;
        }
        st.closed = true;
        if let Some((e, batch)) = taken {
            Self::uncount(&mut st.engines[e], batch);
            st.engines[e].waiting.extend(batch.iter().cloned());
        }
        for e in 0..st.engines.len() {
            let mut ranked: Vec<(Rank, Arc<Pending>)> = st.engines[e]
                .waiting
                .iter()
                .map(|p| (st.rank(e, p), Arc::clone(p)))
                .collect();
            ranked.sort_by_key(|a| a.0);
            let q = &mut st.engines[e];
            q.waiting.clear();
            let mut covered: HashSet<ConfirmCell> = HashSet::new();
            for (rank, p) in ranked {
                let unconfirmed = |c: &&ConfirmCell| q.confirmed.get(*c).copied().unwrap_or(0) == 0;
                let adds = p
                    .cells
                    .iter()
                    .filter(unconfirmed)
                    .any(|c| !covered.contains(c));
                if rank.tier < 2 && adds && q.waiting.len() < keep {
                    covered.extend(p.cells.iter().filter(unconfirmed).copied());
                    q.waiting.push(p);
                } else {
                    q.skipped += 1;
                }
            }
        }
        drop(st);
        self.ready.notify_all();
        self.room.notify_all();
        false
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
                cells_missing: {
                    let mut m: Vec<ConfirmCell> = st
                        .lowered
                        .keys()
                        .filter(|c| q.confirmed.get(c).copied().unwrap_or(0) == 0)
                        .copied()
                        .collect();
                    m.sort();
                    m
                },
                skipped: q.skipped + q.waiting.len() as u64,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cell `n` of one coverage-table cell: the construct tells them apart.
    fn cell(n: usize) -> ConfirmCell {
        const CONSTRUCTS: [Construct; 8] = [
            Construct::Plain,
            Construct::LiveLoop,
            Construct::StaticInnerLoop,
            Construct::LiveBranch,
            Construct::DirectWrite,
            Construct::AliasWrite,
            Construct::AtomicWrite,
            Construct::NonDividingExtent,
        ];
        ConfirmCell {
            form: IndexForm::Int,
            loop_type: LoopType::Unroll,
            tail: false,
            dtype: DType::Float32,
            construct: CONSTRUCTS[n],
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
    fn a_full_queue_keeps_the_only_case_of_a_cell_over_one_whose_cells_already_wait() {
        let s = Selector::new(1, 2, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(0)]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 0);
        let mut tail = cell(0);
        tail.tail = true;
        // Seed 1 is the only case of cell 1 (its coverage-table cell is confirmed); seed 2
        // opens a new coverage-table cell.
        s.offer(case(), 1, vec![cell(1)]);
        s.offer(case(), 2, vec![tail]);
        // Ranked alone seed 3 (a new coverage-table cell) beats seed 1, but seed 2 already
        // waits with all it would add: dropping seed 1 would lose cell 1 for nothing.
        s.offer(case(), 3, vec![tail]);
        s.close(false);
        let mut seeds = BTreeSet::new();
        while let Some((_, taken)) = s.take(4) {
            seeds.extend(taken.iter().map(|p| p.seed));
        }
        assert_eq!(seeds, BTreeSet::from([1, 2]));
        let sel = &s.selections()[0];
        assert_eq!(sel.cells_missing, Vec::<ConfirmCell>::new());
        assert_eq!(sel.skipped, 1);
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
    fn a_case_is_in_one_cell_per_form_dtype_and_construct() {
        let int_in_branch = Feature::Index {
            form: IndexForm::Int,
            loop_type: LoopType::Unroll,
            in_branch: true,
        };
        let f = BTreeSet::from([
            int_in_branch,
            Feature::Index {
                form: IndexForm::StaticSlice,
                loop_type: LoopType::Unroll,
                in_branch: false,
            },
            Feature::DType(DType::Int32),
            Feature::DType(DType::Float32),
            Feature::LiveLoop,
            Feature::View(crate::generators::ViewKind::Squeeze),
            Feature::View(crate::generators::ViewKind::Unsqueeze),
            Feature::NonZeroBegin,
        ]);
        let c = cells(&f);
        // 2 forms x 2 dtypes x 2 constructs (the views are one; the begin splits nothing).
        assert_eq!(c.len(), 8);
        assert!(c.iter().all(|c| c.construct != Construct::Plain));
        assert_eq!(c.iter().filter(|c| c.tail).count(), 4);
        let plain = cells(&BTreeSet::from([
            int_in_branch,
            Feature::DType(DType::Bfloat16),
        ]));
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].construct, Construct::Plain);
        assert!(cells(&BTreeSet::from([Feature::LiveLoop])).is_empty());
    }

    #[test]
    fn among_cases_of_new_cells_the_rarest_goes_first_then_the_one_with_the_most() {
        let s = Selector::new(1, 16, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(0)]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 0);
        s.offer(case(), 1, vec![cell(1), cell(2), cell(3)]);
        s.offer(case(), 2, vec![cell(1), cell(2), cell(3)]);
        s.offer(case(), 3, vec![cell(4)]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 3, "cell 4 was seen once");
        assert_eq!(
            s.take(1).unwrap().1[0].seed,
            1,
            "three new cells, the older"
        );
        // Cells 5 and 6 seen twice each: the case with both goes first.
        s.offer(case(), 4, vec![cell(5)]);
        s.offer(case(), 5, vec![cell(5), cell(6)]);
        s.offer(case(), 6, vec![cell(6)]);
        assert_eq!(s.take(1).unwrap().1[0].seed, 5);
        s.offer(case(), 7, vec![cell(7)]);
        let sel = &s.selections()[0];
        assert_eq!(sel.cells_confirmed, 7);
        assert_eq!(sel.cells_missing, vec![cell(7)]);
        assert_eq!(
            sel.cells_missing[0].to_string(),
            "int/unroll/no-tail/float32/non-dividing-extent"
        );
    }

    #[test]
    fn closing_at_the_time_budget_keeps_a_batch_of_cases_with_unconfirmed_cells() {
        let s = Selector::new(1, 8, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(0)]);
        let (e, first) = s.take(1).unwrap();
        for seed in 1..4 {
            s.offer(case(), seed, vec![cell(0)]);
        }
        s.offer(case(), 4, vec![cell(1)]);
        s.offer(case(), 5, vec![cell(2)]);
        // A confirmer finds its batch past the budget: it goes back and competes.
        assert!(!s.close_keeping_new(Some((e, &first)), 2));
        let (_, kept) = s.take(8).unwrap();
        let seeds: BTreeSet<u64> = kept.iter().map(|p| p.seed).collect();
        // Every case has a cell the engine lacks now (cell 0 went back); the rarest go first.
        assert_eq!(
            seeds,
            BTreeSet::from([4, 5]),
            "the two best with a new cell"
        );
        assert!(s.take(8).is_none());
        assert_eq!(s.selections()[0].skipped, 4);
        // A later close finds it closed: that confirmer's batch is one of the kept, and runs.
        assert!(s.close_keeping_new(Some((e, &kept)), 2));
        assert_eq!(s.selections()[0].cells_missing, vec![cell(0)]);
    }

    #[test]
    fn closing_keeps_only_cases_that_add_an_uncovered_cell() {
        let s = Selector::new(1, 16, WhenFull::Drop);
        s.offer(case(), 0, vec![cell(1), cell(2)]);
        s.offer(case(), 1, vec![cell(1)]);
        s.offer(case(), 2, vec![cell(2)]);
        s.offer(case(), 3, vec![cell(3)]);
        assert!(!s.close_keeping_new(None, 8));
        let (_, kept) = s.take(16).unwrap();
        let seeds: BTreeSet<u64> = kept.iter().map(|p| p.seed).collect();
        // Seeds 1 and 2 add nothing once seed 0 is kept.
        assert_eq!(seeds, BTreeSet::from([0, 3]));
        assert_eq!(s.selections()[0].skipped, 2);
    }
}
