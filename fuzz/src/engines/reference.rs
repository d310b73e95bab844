//! The reference engine (`oracle`): eager PyTorch semantics from `pallas_diff_oracle`.

use super::{Engine, EngineRun, EngineStatus, Job};
use std::time::Instant;

/// The reference.
pub struct Reference;

impl Engine for Reference {
    fn name(&self) -> &str {
        "oracle"
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let status = match oracle::evaluate(job.case) {
            Ok(out) => EngineStatus::Outputs(out.outputs.into_iter().map(|o| o.tensor).collect()),
            Err(e) => EngineStatus::Invalid {
                kind: format!("{:?}", e.kind),
                span: e.span,
                message: e.message,
            },
        };
        EngineRun {
            engine: self.name().to_string(),
            status,
            seconds: start.elapsed().as_secs_f64(),
        }
    }
}
