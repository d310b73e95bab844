//! `pallas-diff import FILE.py [--out DIR] [--shapes ...] [--inputs ...] [--config ...]`: the
//! `@helion.kernel`s of a user's Python file as case scripts (the `import` crate reads the file
//! statically, never running it), each written to `DIR/<name>.py`; every kernel it could not
//! import listed with `file:line` and the reason. Exit 2 when none imports.
//!
//! A kernel whose block sizes the file leaves to Helion's default config gets them from real
//! Helion when the Helion environment is here (a Helion worker on the selected
//! `--helion-build`, started only when such a kernel comes up); without it the kernel is listed
//! as not imported, with that reason. The user's file itself never runs.

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
    /// Never ask real Helion for default block sizes (a kernel that leaves them to Helion is
    /// then not imported).
    #[arg(long)]
    no_helion: bool,
}

/// Helion's default block sizes, asked of one Helion worker started on first use.
struct WorkerDefaults {
    /// The pool, or why there is none (asked once).
    pool: Option<Result<tpu_runner::Pool, String>>,
}

impl WorkerDefaults {
    fn pool(&mut self) -> Result<&tpu_runner::Pool, String> {
        self.pool
            .get_or_insert_with(|| {
                let python = tpu_runner::helion_python_if_present()?;
                let build = super::builds::selected().map_err(|e| e.to_string())?;
                eprintln!(
                    "pallas-diff: asking Helion ({}) for default block sizes",
                    build.id()
                );
                let config =
                    tpu_runner::PoolConfig::for_runtime(tpu_runner::Runtime::Helion, python)
                        .with_helion_build(Some(build))
                        .with_workers(1)
                        .with_timeout(std::time::Duration::from_secs(120));
                tpu_runner::Pool::new(config)
                    .map_err(|e| format!("cannot start a Helion worker: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl import::HelionDefaults for WorkerDefaults {
    fn block_sizes(&mut self, script: &str) -> Result<(Vec<i64>, String), String> {
        let case =
            lang::frontend::parse_case(script, "<imported case>").map_err(|e| e.to_string())?;
        let inputs = case.kernel_tensor_args().map_err(|e| e.to_string())?;
        let job = fuzz::engines::Job {
            case: &case,
            inputs: &inputs,
            emitted: None,
            module: None,
        };
        let request = fuzz::engines::helion::request(tpu_runner::Mode::HelionPallas, &job)
            .ok_or("a call argument names no input")?;
        let pool = self.pool()?;
        let build = pool
            .availability()
            .helion
            .as_ref()
            .map_or_else(|| "helion".to_string(), |v| format!("helion {v}"));
        let config = pool
            .default_config(&request)
            .map_err(|e| e.to_string())?
            .map_err(|k| format!("Helion did not bind the kernel: {k}"))?;
        let sizes = config
            .get("block_sizes")
            .and_then(|v| v.as_array())
            .and_then(|a| a.iter().map(|x| x.as_i64()).collect::<Option<Vec<_>>>())
            .ok_or_else(|| format!("its default config has no int block_sizes: {config:?}"))?;
        Ok((sizes, build))
    }
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
    let mut defaults = WorkerDefaults { pool: None };
    let defaults: Option<&mut dyn import::HelionDefaults> = if args.no_helion {
        None
    } else {
        Some(&mut defaults)
    };
    let imported = import::import_source_with(&source, &path, &options, defaults)
        .map_err(|e| CliError::Input(e.into()))?;
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
