//! The engines a module can run on ([`Mode`]): two interpreters, the TPU lowering check, and a
//! real TPU. This module owns their names (kebab-case, as on the wire and the command line).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the worker runs an emitted module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `interpret=True`: JAX's generic Pallas interpreter (what Helion's CI uses). Dynamic
    /// out-of-range accesses are silently clamped.
    PallasInterpret,
    /// `interpret=pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")`:
    /// the TPU interpreter, strict: out-of-range reads raise, padding and unwritten memory read
    /// as NaN.
    PallasTpuInterpret,
    /// `interpret=False` lowered to Mosaic for TPU on the CPU via `jax.export` without running:
    /// catches kernels that interpret fine but cannot run on a TPU. Produces no outputs.
    PallasTpuLower,
    /// `interpret=False` on a real TPU; reports `EngineUnavailable` where there is none.
    PallasTpu,
}

impl Mode {
    /// All modes, in a fixed order.
    pub const ALL: [Mode; 4] = [
        Mode::PallasInterpret,
        Mode::PallasTpuInterpret,
        Mode::PallasTpuLower,
        Mode::PallasTpu,
    ];

    /// The modes that run on a CPU-only host.
    pub const CPU: [Mode; 3] = [
        Mode::PallasInterpret,
        Mode::PallasTpuInterpret,
        Mode::PallasTpuLower,
    ];

    /// The kebab-case name (`pallas-interpret`, ...), as on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Mode::PallasInterpret => "pallas-interpret",
            Mode::PallasTpuInterpret => "pallas-tpu-interpret",
            Mode::PallasTpuLower => "pallas-tpu-lower",
            Mode::PallasTpu => "pallas-tpu",
        }
    }

    /// Whether a successful run produces output tensors (every mode except the lowering check).
    pub fn produces_outputs(self) -> bool {
        self != Mode::PallasTpuLower
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode name that is not one of [`Mode::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown mode `{0}` (expected pallas-interpret, pallas-tpu-interpret, pallas-tpu-lower or pallas-tpu)"
)]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_display_and_serde() {
        for mode in Mode::ALL {
            assert_eq!(mode.to_string().parse::<Mode>().unwrap(), mode);
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.name()));
            assert_eq!(serde_json::from_str::<Mode>(&json).unwrap(), mode);
        }
        assert!("pallas".parse::<Mode>().is_err());
    }
}
