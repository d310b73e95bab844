//! `pallas-diff emit CASE.py [--json]`: the emitted Pallas module, or the rejection.

use super::{CliError, Exit, load_case};
use compiler::compile::{CodegenOptions, Compiled, NotModelled, Refused, compile};
use std::path::PathBuf;

/// Arguments of `emit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case script (or case JSON).
    case: PathBuf,
    /// Print `{"verdict": ..., "block_sizes": ..., "source": ...}` as JSON.
    #[arg(long)]
    json: bool,
    /// Pad resident inputs with NaN / INT_MAX and mask with `jnp.where` (see compiler docs).
    #[arg(long)]
    poison_padding: bool,
    /// Inject named faults (historical defects, `all` for every one; see `pallas-diff hunt`).
    #[arg(long, value_parser = compiler::faults::FaultSet::parse, default_value = "")]
    inject: compiler::faults::FaultSet,
    /// Lower these planner decisions by their plain path: a materialized run read as the whole
    /// Ref and then sliced as a value, a materialized Ref view as a value reshape (for example
    /// `run=tile.mask,ref-view=reshape`). A finding that goes away shows which decisions it needs.
    #[arg(long, value_parser = compiler::decisions::PlainSet::parse, default_value = "")]
    plain: compiler::decisions::PlainSet,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let case = load_case(&args.case)?;
    let options = CodegenOptions {
        poison_padding: args.poison_padding,
        faults: args.inject,
        plain: args.plain,
    };
    let compiled = compile(&case, &options);
    if args.json {
        let json = serde_json::json!({
            "verdict": compiled.verdict(),
            "block_sizes": {
                "configured": compiled.block_sizes().configured,
                "effective": compiled.block_sizes().effective,
            },
            "gap": compiled.gap().map(|g| format!("{} at {}", g.construct, g.span)),
            "source": compiled.source(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&json).map_err(anyhow::Error::from)?
        );
        return Ok(Exit::Ok);
    }
    match &compiled {
        Compiled::Lowered(_) => print!("{}", compiled.source().unwrap_or_default()),
        Compiled::Rejected(Refused { rejection: r, .. }) => println!("rejected: {r}"),
        Compiled::Gap(NotModelled { gap: g, .. }) => println!(
            "unsupported: pallas-diff's codegen does not model {} at {}",
            g.construct, g.span
        ),
    }
    Ok(Exit::Ok)
}
