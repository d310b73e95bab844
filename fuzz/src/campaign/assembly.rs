//! Campaign assembly: which engines play which role, and how large their worker pools are.
//! `pallas-diff fuzz` and `pallas-diff hunt` both assemble their campaigns here, so a Helion
//! engine, a JAX engine or an in-process one does the same job in either.

use crate::engines::EngineId;

/// Seconds a worker may spend on one request before the run is a `timeout` outcome and the
/// worker is replaced: generous next to a kernel's usual fraction of a second (issue 19's
/// per-stage split), so only a hung worker reaches it, and short enough that one does not
/// stall a nightly job.
pub const WORKER_TIMEOUT_S: u64 = 120;

/// Workers per Python environment on a machine with `cores` cores: two at most. A JAX worker
/// holds ~300 MB and a Helion one ~1 GB, and on the 2-core class of machine more workers only
/// queue (measured: two JAX workers on 2 cores ~9-10 kernels/s together, shared/measurements).
pub fn workers(cores: usize) -> usize {
    cores.clamp(1, 2)
}

/// The roles of a campaign's engines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// Checked on every case: the in-process engines, and Helion's (Helion's verdict is
    /// compared on every case the compiler did not crash on, refused ones included).
    pub every_case: Vec<EngineId>,
    /// Confirm lowered cases that agree in-process: the JAX engines on our emitted module.
    pub confirm: Vec<EngineId>,
    /// Re-run a new in-process finding before it is filed, so an executor bug is not filed as
    /// a miscompile: the confirming engines that produce outputs (`pallas-tpu-lower` only
    /// lowers and cannot reproduce a value mismatch).
    pub cross_check: Vec<EngineId>,
}

impl Roles {
    /// The roles of `engines` (in the order given).
    pub fn of(engines: &[EngineId]) -> Roles {
        let (every_case, confirm): (Vec<EngineId>, Vec<EngineId>) = engines
            .iter()
            .copied()
            .partition(|e| e.is_in_process() || e.is_helion());
        let cross_check = confirm
            .iter()
            .copied()
            .filter(|e| match e {
                EngineId::Worker(m) => m.produces_outputs(),
                EngineId::Reference | EngineId::PallasSim => false,
            })
            .collect();
        Roles {
            every_case,
            confirm,
            cross_check,
        }
    }

    /// Threads feeding the confirming engines: one per worker, none without them.
    pub fn confirm_threads(&self, cores: usize) -> usize {
        if self.confirm.is_empty() {
            0
        } else {
            workers(cores)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpu_runner::Mode;

    #[test]
    fn helion_checks_every_case_and_jax_confirms() {
        let all: Vec<EngineId> = EngineId::ALL.to_vec();
        let r = Roles::of(&all);
        assert_eq!(
            r.every_case,
            vec![
                EngineId::Reference,
                EngineId::PallasSim,
                EngineId::Worker(Mode::HelionPallas),
                EngineId::Worker(Mode::HelionEager),
                EngineId::Worker(Mode::HelionTpuLower),
            ]
        );
        assert_eq!(
            r.confirm,
            vec![
                EngineId::Worker(Mode::PallasInterpret),
                EngineId::Worker(Mode::PallasTpuInterpret),
                EngineId::Worker(Mode::PallasTpuLower),
                EngineId::Worker(Mode::PallasTpu),
            ]
        );
        assert!(
            !r.cross_check
                .contains(&EngineId::Worker(Mode::PallasTpuLower))
        );
        assert!(
            r.cross_check
                .contains(&EngineId::Worker(Mode::PallasTpuInterpret))
        );
        assert_eq!(r.confirm_threads(16), 2);
        assert_eq!(Roles::of(&[EngineId::PallasSim]).confirm_threads(16), 0);
        assert_eq!(workers(1), 1);
    }
}
