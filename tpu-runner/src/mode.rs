//! The engines a worker can run ([`Mode`]) and the Python environment each needs ([`Runtime`]):
//! our emitted modules in two JAX interpreters, the TPU lowering check and a real TPU; and a
//! case's kernel in real Helion (its Pallas backend in interpret mode, its eager mode, and the
//! TPU lowering of the `pallas_call` Helion builds). This module owns their names (kebab-case,
//! as on the wire and the command line).

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
    /// Real Helion's Pallas backend in interpret mode (`HELION_BACKEND=pallas`,
    /// `HELION_PALLAS_INTERPRET=1`, as Helion's own CI runs it) on the case's kernel source.
    HelionPallas,
    /// Real Helion's eager mode (`HELION_INTERPRET=1`): the kernel body run as PyTorch.
    HelionEager,
    /// The `pallas_call` Helion builds for the kernel, lowered for TPU on the CPU via
    /// `jax.export` without running. Produces no outputs.
    HelionTpuLower,
}

/// The Python environment a mode's worker runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// The JAX venv (`python/requirements.txt`, worker `python/worker.py`): runs emitted modules.
    Jax,
    /// The opt-in Helion venv (`python/requirements-helion.txt`, ~6 GB, worker
    /// `python/helion_worker.py`): runs case scripts' kernels through real Helion.
    Helion,
}

impl Runtime {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Jax => "jax",
            Runtime::Helion => "helion",
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Mode {
    /// All modes, in a fixed order.
    pub const ALL: [Mode; 7] = [
        Mode::PallasInterpret,
        Mode::PallasTpuInterpret,
        Mode::PallasTpuLower,
        Mode::PallasTpu,
        Mode::HelionPallas,
        Mode::HelionEager,
        Mode::HelionTpuLower,
    ];

    /// The JAX modes that run on a CPU-only host.
    pub const CPU: [Mode; 3] = [
        Mode::PallasInterpret,
        Mode::PallasTpuInterpret,
        Mode::PallasTpuLower,
    ];

    /// The Helion modes (all run on a CPU-only host).
    pub const HELION: [Mode; 3] = [Mode::HelionPallas, Mode::HelionEager, Mode::HelionTpuLower];

    /// The kebab-case name (`pallas-interpret`, ...), as on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Mode::PallasInterpret => "pallas-interpret",
            Mode::PallasTpuInterpret => "pallas-tpu-interpret",
            Mode::PallasTpuLower => "pallas-tpu-lower",
            Mode::PallasTpu => "pallas-tpu",
            Mode::HelionPallas => "helion-pallas",
            Mode::HelionEager => "helion-eager",
            Mode::HelionTpuLower => "helion-tpu-lower",
        }
    }

    /// Whether a successful run produces output tensors (every mode except the lowering checks).
    pub fn produces_outputs(self) -> bool {
        match self {
            Mode::PallasTpuLower | Mode::HelionTpuLower => false,
            Mode::PallasInterpret
            | Mode::PallasTpuInterpret
            | Mode::PallasTpu
            | Mode::HelionPallas
            | Mode::HelionEager => true,
        }
    }

    /// The environment the mode's worker runs in.
    pub fn runtime(self) -> Runtime {
        match self {
            Mode::PallasInterpret
            | Mode::PallasTpuInterpret
            | Mode::PallasTpuLower
            | Mode::PallasTpu => Runtime::Jax,
            Mode::HelionPallas | Mode::HelionEager | Mode::HelionTpuLower => Runtime::Helion,
        }
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
    "unknown mode `{0}` (expected pallas-interpret, pallas-tpu-interpret, pallas-tpu-lower, pallas-tpu, helion-pallas, helion-eager or helion-tpu-lower)"
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
        for mode in Mode::CPU {
            assert_eq!(mode.runtime(), Runtime::Jax);
        }
        for mode in Mode::HELION {
            assert_eq!(mode.runtime(), Runtime::Helion);
            assert!(mode.name().starts_with("helion-"));
        }
    }
}
