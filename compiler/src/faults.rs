//! Named faults: the historical defects of the upstream change (spec §4) and two upstream issues
//! (research anchors §D.1), each reintroduced as a real alternative code path in the validator,
//! planner or codegen. A fuzzer that finds nothing proves nothing until we know what it would
//! have found: `pallas-diff hunt` measures how fast each fault is detected from scratch.
//!
//! Off by default and free when off: [`FaultSet`] is a bit set carried in
//! `CodegenOptions::faults`, and each fault's code path is behind one bit test. Enabled with
//! `--inject NAME[,NAME]` (or `all`) on every subcommand that compiles.

use std::fmt;

macro_rules! faults {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $summary:literal; )*) => {
        /// One injectable fault.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Fault { $( $(#[$doc])* $variant ),* }

        impl Fault {
            /// Every fault, in table order.
            pub const ALL: &'static [Fault] = &[ $( Fault::$variant ),* ];

            /// The CLI name, e.g. `d12-tail-clamped-before-mask`.
            pub fn name(self) -> &'static str {
                match self { $( Fault::$variant => $name ),* }
            }

            /// What the fault does, and which historical defect it is.
            pub fn summary(self) -> &'static str {
                match self { $( Fault::$variant => $summary ),* }
            }
        }
    };
}

faults! {
    /// Spec §4 D1 (ae968125).
    D1ReadAfterWrite = "d1-read-after-write",
        "R-MUT skipped: a loaded tensor that is also stored to stays a lazy Ref, so reads issued after the store see the new data";
    /// Spec §4 D2 (ae968125).
    D2TileCountWithoutBegin = "d2-tile-count-without-begin",
        "tile.count computed as cdiv(end - 0, block): the loop's begin is dropped";
    /// Spec §4 D5 (a652fcf9).
    D5SlicePastExtent = "d5-slice-past-extent",
        "a bounded static slice past the block's extent is not refused but lowered on the value, where Python clips it while the traced shape does not";
    /// Spec §4 D8 (69b44459).
    D8NegativeSliceBound = "d8-negative-slice-bound",
        "a negative slice start is not refused at trace time but lowered on the value, where Python wraps it while the traced shape does not";
    /// Spec §4 D9 (69b44459).
    D9OffsetRunUnmasked = "d9-offset-run-unmasked",
        "t.index + 0 is recognized as a tile run but lowered without its tail mask";
    /// Spec §4 D10 (69b44459).
    D10NamedRunLosesStart = "d10-named-run-loses-start",
        "a tail run bound to a name before its branch loses its start: the read begins at row 0";
    /// Spec §4 D11 (69b44459).
    D11UnmaskedGather = "d11-unmasked-gather",
        "an unrecognized rank-1 index (t.index + k) is lowered as an unmasked, unshifted tile read instead of being refused";
    /// Spec §4 D12 (761bbc4c).
    D12TailClampedBeforeMask = "d12-tail-clamped-before-mask",
        "a masked tile run's start is clamped backward into the block before masking (dynamic_slice semantics), so the mask zeroes the wrong row";
    /// Spec §4 D13 (761bbc4c).
    D13StridedIotaContiguous = "d13-strided-iota-contiguous",
        "a strided hl.arange index is read as a contiguous run of the same length";
    /// Spec §4 D14 (761bbc4c).
    D14MaskOnInputAxis = "d14-mask-on-input-axis",
        "a tile run with None ahead of it is accepted and its mask broadcast on the input axis instead of the output axis";
    /// helion PR #2006.
    Issue2006DroppedIndexOffset = "issue-2006-dropped-index-offset",
        "t.index + k with k != 0 is lowered as t.index: the offset is dropped";
    /// helion PR #2214.
    Issue2214StaleTailRows = "issue-2214-stale-tail-rows",
        "the range mask of a partial tile's ordinary load is dropped, so rows past the tile's end leak into tail tiles";
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of enabled faults (empty by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultSet(u32);

/// A fault name that is not in the table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown fault `{0}` (known: all, {known})", known = Fault::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownFault(pub String);

impl FaultSet {
    /// No faults: the merged upstream lowering.
    pub const NONE: FaultSet = FaultSet(0);

    /// One fault.
    pub fn only(f: Fault) -> FaultSet {
        FaultSet(1 << f as u32)
    }

    /// Whether `f` is enabled.
    #[inline]
    pub fn has(self, f: Fault) -> bool {
        self.0 & (1 << f as u32) != 0
    }

    /// Whether no fault is enabled.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The enabled faults, in table order.
    pub fn iter(self) -> impl Iterator<Item = Fault> {
        Fault::ALL.iter().copied().filter(move |&f| self.has(f))
    }

    /// Parses `all`, or a comma-separated list of names (a unique prefix such as `d12` works).
    pub fn parse(s: &str) -> Result<FaultSet, UnknownFault> {
        let mut set = FaultSet::NONE;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "all" {
                for &f in Fault::ALL {
                    set.0 |= 1 << f as u32;
                }
                continue;
            }
            let exact = Fault::ALL.iter().find(|f| f.name() == part);
            let prefixed: Vec<&Fault> = Fault::ALL
                .iter()
                .filter(|f| f.name().starts_with(&format!("{part}-")))
                .collect();
            let f = match (exact, prefixed.as_slice()) {
                (Some(f), _) => *f,
                (None, [f]) => **f,
                _ => return Err(UnknownFault(part.to_string())),
            };
            set.0 |= 1 << f as u32;
        }
        Ok(set)
    }
}

impl fmt::Display for FaultSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Fault::name).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_prefixes_and_all() {
        let s = FaultSet::parse("d12,issue-2006,d1-read-after-write").unwrap();
        assert!(s.has(Fault::D12TailClampedBeforeMask) && s.has(Fault::D1ReadAfterWrite));
        assert!(
            s.has(Fault::Issue2006DroppedIndexOffset) && !s.has(Fault::D2TileCountWithoutBegin)
        );
        assert_eq!(
            FaultSet::parse("all").unwrap().iter().count(),
            Fault::ALL.len()
        );
        assert!(FaultSet::parse("d3").is_err());
        assert!(FaultSet::parse("").unwrap().is_empty());
        assert_eq!(FaultSet::parse(&s.to_string()).unwrap(), s);
    }
}
