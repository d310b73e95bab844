//! `pallas-diff import FILE.py [--out DIR] [--shapes ...] [--inputs ...] [--config ...]`: the
//! `@helion.kernel`s of a user's Python file as case scripts (the `import` crate reads the file
//! statically, never running it), each written to `DIR/<name>.py`; every kernel it could not
//! import listed with `file:line` and the reason. Exit 2 when none imports.

use super::{CliError, Exit, read_file};
use anyhow::Context;
use std::path::PathBuf;

/// Arguments of `import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Python file (a test module, an example, a production kernel). Read, never executed.
    file: PathBuf,
    /// Where to write the case scripts (created if missing).
    #[arg(long, default_value = "imported")]
    out: PathBuf,
    /// A parameter's input by shape, `NAME=AxBxC[:float32|bfloat16|int32]` (float inputs
    /// `torch.randn`, int inputs an arange); wins over the shapes the file's calls use.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// A parameter's input as a case-script constructor, `NAME=EXPR`
    /// (`x=torch.randn(9, 128, dtype=torch.bfloat16)`); wins over --shapes and the file's calls.
    #[arg(long)]
    inputs: Vec<String>,
    /// The config of kernels the file gives none (`helion.Config(block_sizes=[8])`).
    #[arg(long)]
    config: Option<String>,
    /// Print the result as JSON (cases without their scripts, and the kernels not imported).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let source = read_file(&args.file)?;
    let mut options = import::ImportOptions {
        config: args.config.clone(),
        ..Default::default()
    };
    for s in &args.shapes {
        options
            .shapes
            .push(import::ImportOptions::parse_shape(s).map_err(|e| CliError::Input(e.into()))?);
    }
    for s in &args.inputs {
        options
            .inputs
            .push(import::ImportOptions::parse_input(s).map_err(|e| CliError::Input(e.into()))?);
    }
    let path = args.file.display().to_string();
    let imported =
        import::import_source(&source, &path, &options).map_err(|e| CliError::Input(e.into()))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create '{}'", args.out.display()))
        .map_err(CliError::Input)?;
    for case in &imported.cases {
        let file = args.out.join(format!("{}.py", case.name));
        finding::fsio::write_atomic(&file, case.script.as_bytes())
            .with_context(|| format!("cannot write '{}'", file.display()))?;
    }
    if args.json {
        let json = serde_json::json!({
            "file": path,
            "out": args.out,
            "imported": imported.cases.iter().map(|c| serde_json::json!({
                "name": c.name, "kernel": c.kernel, "line": c.line,
                "config_from": c.config_from, "inputs_from": c.inputs_from,
            })).collect::<Vec<_>>(),
            "not_imported": imported.skipped,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&json).map_err(anyhow::Error::from)?
        );
    } else {
        for c in &imported.cases {
            println!(
                "imported {path}:{} {} -> {}",
                c.line,
                c.kernel,
                args.out.join(format!("{}.py", c.name)).display()
            );
        }
        for s in &imported.skipped {
            println!("not imported {path}:{} {}: {}", s.line, s.kernel, s.reason);
        }
        println!(
            "{} case(s) from {} kernel(s); {} kernel(s) not imported",
            imported.cases.len(),
            imported
                .cases
                .iter()
                .map(|c| &c.kernel)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            imported.skipped.len()
        );
    }
    if imported.cases.is_empty() {
        eprintln!("error: no kernel of {path} imported");
        return Ok(Exit::InvalidInput);
    }
    Ok(Exit::Ok)
}
