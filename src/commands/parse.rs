//! `pallas-diff parse CASE.py [--json]`.

use super::{CliError, Exit, load_case};
use lang::ir::blocks::{BlockSource, BlockTable};
use std::path::PathBuf;

/// Arguments of `parse`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case script.
    case: PathBuf,
    /// Print the IR as JSON instead of a summary.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let case = load_case(&args.case)?;
    let trace = compiler::validate::validate(&case);
    if args.json {
        let json = serde_json::to_string_pretty(&case).map_err(anyhow::Error::from)?;
        println!("{json}");
        return Ok(Exit::Ok);
    }
    let host = lang::ir::scope::HostEnv::of(&case);
    let sizes = case.block_sizes(|e| host.eval_int(e));
    let table = BlockTable::of(&case.kernel);
    println!(
        "kernel {}({})",
        case.kernel.name,
        case.kernel
            .params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "config loop_type={} worklist_grouping={} block_sizes={:?}",
        case.effective_loop_type().name(),
        case.config.worklist_grouping.unwrap_or(0),
        case.config.block_sizes
    );
    println!("block ids:");
    for b in &table.blocks {
        let source = match &b.source {
            BlockSource::Grid => "grid".to_string(),
            BlockSource::Fixed(e) => format!("block_size={}", lang::render::expr(e)),
            BlockSource::Config(k) => format!("config block_sizes[{k}]"),
        };
        println!(
            "  {} {:<10} depth {} {:<24} size {} (effective {})",
            b.id, b.var, b.depth, source, sizes.configured[b.id], sizes.effective[b.id]
        );
    }
    println!("inputs:");
    for input in &case.inputs {
        let (dtype, shape) = input
            .dtype_and_shape()
            .map_err(|e| CliError::Input(e.into()))?;
        println!(
            "  {} {dtype} {shape:?} = {}",
            input.name,
            lang::render::render_input(input)
        );
    }
    let mut stmts = 0;
    lang::ir::walk::each_stmt(&case.kernel.body, &mut |_| stmts += 1);
    println!("statements: {stmts}");
    match trace {
        None => println!("trace: ok"),
        Some(r) => println!("trace: rejected: {r}"),
    }
    Ok(Exit::Ok)
}
