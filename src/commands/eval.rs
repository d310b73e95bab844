//! `pallas-diff eval CASE.py [--json]`: the reference's outputs.

use super::{CliError, Exit, load_case};
use std::path::PathBuf;

/// Arguments of `eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case script (or case JSON).
    case: PathBuf,
    /// Print `{"outputs": [{"name", "dtype", "shape", "data"}]}` (NaN as null), or
    /// `{"invalid": {"kind", "line", "col", "message"}}` when the reference refuses the case.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let case = load_case(&args.case)?;
    let outputs = match oracle::evaluate(&case) {
        Ok(o) => o,
        Err(e) => {
            // The kind by its id, as every report and corpus entry spells it.
            if args.json {
                let invalid = serde_json::json!({
                    "invalid": {
                        "kind": e.kind.id(),
                        "line": e.span.line,
                        "col": e.span.col,
                        "message": e.message,
                    }
                });
                println!("{invalid}");
            } else {
                println!("invalid-case: {} at {}: {}", e.kind, e.span, e.message);
            }
            return Ok(Exit::Ok);
        }
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&outputs.to_json()).map_err(anyhow::Error::from)?
        );
        return Ok(Exit::Ok);
    }
    for o in &outputs.outputs {
        println!("{}", o.summary());
    }
    Ok(Exit::Ok)
}
