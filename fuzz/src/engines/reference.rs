//! The reference engine (`oracle`): eager PyTorch semantics from `pallas_diff_oracle`.

use super::{Engine, EngineId, EngineRun, EngineStatus, Job};
use lang::ir::Case;
use lang::ir::inputs::InputError;
use lang::tensor::Tensor;
use std::time::Instant;

/// The reference.
pub struct Reference;

impl Reference {
    /// Runs `case` on its input tensors already made (`case.input_tensors()`, errors included):
    /// [`Engine::run`] without making them again (see [`crate::check::check_case`]). Also
    /// returns what the evaluation tells the comparison's tolerance
    /// ([`crate::compare::RefScale`]; zero when it refused the case): what the comparison's
    /// float32 tolerance scales with.
    pub fn run_with_inputs(
        &self,
        case: &Case,
        inputs: &Result<Vec<Tensor>, InputError>,
    ) -> (EngineRun, crate::compare::RefScale) {
        let r = self.run_tiled(case, inputs, oracle::Tiling::Effective);
        (r.run, r.scale)
    }

    /// [`Reference::run_with_inputs`] tiling loops as `tiling` says, with the departures of
    /// Helion's eager mode from torch the case reached ([`oracle::Divergence`]).
    pub fn run_tiled(
        &self,
        case: &Case,
        inputs: &Result<Vec<Tensor>, InputError>,
        tiling: oracle::Tiling,
    ) -> TiledRun {
        let start = Instant::now();
        let (status, scale, divergences) = match oracle::evaluate_tiled(case, inputs, tiling) {
            Ok(out) => {
                let scale = crate::compare::RefScale::of(&out);
                (
                    EngineStatus::Outputs(out.outputs.into_iter().map(|o| o.tensor).collect()),
                    scale,
                    out.divergences,
                )
            }
            Err(e) => (
                EngineStatus::Invalid {
                    kind: e.kind,
                    span: e.span,
                    message: e.message,
                },
                crate::compare::RefScale::default(),
                Vec::new(),
            ),
        };
        let run = EngineRun {
            engine: self.id(),
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated: None,
            input_sets: None,
        };
        TiledRun {
            run,
            scale,
            divergences,
        }
    }
}

/// A reference run under a [`oracle::Tiling`] ([`Reference::run_tiled`]).
#[derive(Clone, Debug)]
pub struct TiledRun {
    /// The run.
    pub run: EngineRun,
    /// What it tells the comparison's tolerance ([`crate::compare::RefScale`]; zero when it
    /// refused the case).
    pub scale: crate::compare::RefScale,
    /// Where Helion's eager mode departs from the values it computed
    /// ([`oracle::Outputs::divergences`]; empty when it refused the case).
    pub divergences: Vec<oracle::Divergence>,
}

impl Engine for Reference {
    fn id(&self) -> EngineId {
        EngineId::Reference
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        self.run_with_inputs(job.case, &job.case.input_tensors()).0
    }
}
