//! The frontend: a case in, a [`Case`] out. A case is read from a case script (Python source,
//! see `shared/spec/case-script.md`), using a real Python parser (`rustpython-parser`), never a
//! hand-written one, or from its JSON form (the IR as serde writes it, `parse --json`);
//! [`load_case_text`] tells them apart by content.
//!
//! The frontend decides *whether a file is a case*: the imports, the one decorated kernel, the
//! config keys, the inputs, the call, and the kernel-body subset. Everything outside case-script
//! v1 is a [`FrontendError`] naming the file, line, column and construct. Both formats go through
//! one well-formedness check on the IR (`wellformed`): the call against the parameters,
//! the config's block sizes, the inputs, the scope of names, the version and the depth limits,
//! so a JSON file cannot carry a case that no script could. Whether Helion accepts the kernel
//! is not its question: trace-time refusals are verdicts (`compiler::validate`).
//!
//! It also owns *input safety*: no file makes it (or any pass after it) panic or overflow its
//! stack. The IR is a tree and every later pass recurses over it, so the frontend refuses trees
//! deeper than [`MAX_EXPR_DEPTH`] and [`MAX_BLOCK_DEPTH`]; a script is scanned for depth before
//! the parser sees it (`scan`), because the parser's own AST drops recursively.

mod error;
mod json;
mod kernel;
mod module;
mod scan;
mod wellformed;

pub use error::FrontendError;

use crate::ir::Case;

/// The deepest one expression may nest: IR nodes on the longest root-to-leaf path of one of a
/// statement's expressions (a statement's own expression is level 1; an index inside a load is
/// one level below the load).
///
/// Every pass after the frontend recurses once per level (validate, tracing, the planner, the
/// lowering, the printer, the Pallas executor, the reference, render, serde, `Drop`). Measured
/// (2026-12-01, x86-64, rustc 1.95, every pass run alone on a thread with the given stack, the
/// depth bisected until it overflowed), the deepest expression the tightest pass — the Pallas
/// executor (`pallas-sim`) — survives on a 2 MiB thread, the stack of a spawned std or rayon
/// thread where campaigns run cases, with the worst chain found (alternating
/// `.unsqueeze(0).squeeze(0)` views; `+` chains, casts, loads in indices and slices cost less):
///
/// * release (the CLI, campaigns): 448 levels at the least (14x this limit), ~600 inside
///   [`MAX_BLOCK_DEPTH`] blocks in a later build (inlining moves it);
/// * debug (tests, `cargo run`): 54 levels (1.7x), 47 inside [`MAX_BLOCK_DEPTH`] blocks
///   (1.45x). Tracing, planning and lowering survive ~165, the reference ~150, the frontend
///   ~87, render ~370, `Drop` ~1600.
///
/// The 8 MiB main thread has four times that. `compiler/tests/frontend_depth.rs` compiles,
/// prints, executes and renders a case at both limits on a 2 MiB debug thread, so a pass
/// whose frames grow past the margin fails there first. No corpus case nests deeper than 8.
pub const MAX_EXPR_DEPTH: usize = 32;

/// The deepest loops and branches may nest: `hl.tile`/`hl.grid` loops and `if` blocks (an
/// `elif` is an `if` inside the previous `else`, so each counts). A block costs the passes
/// about what an expression level costs (measured as for [`MAX_EXPR_DEPTH`]: 57 nested `if`s
/// exhaust the debug executor's 2 MiB, ~430 the release one's). No corpus case nests deeper
/// than 4; the fuzz generator nests at most three loops and their branches.
pub const MAX_BLOCK_DEPTH: usize = 8;

/// The two formats a case file comes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseFormat {
    /// A case script (Python).
    Script,
    /// The IR's JSON form.
    Json,
}

/// The format of a case file: JSON when its first non-whitespace character is `{` (a case
/// script never starts so) or its path ends in `.json`, else a case script.
pub fn case_format(text: &str, path: &str) -> CaseFormat {
    let first = text
        .trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .as_bytes()
        .first();
    if first == Some(&b'{') || path.ends_with(".json") {
        CaseFormat::Json
    } else {
        CaseFormat::Script
    }
}

/// Reads a case file's text, a case script or a case JSON ([`case_format`]). `path` names the
/// file in errors (and a `.json` ending makes it JSON even if its text is not).
pub fn load_case_text(text: &str, path: &str) -> Result<Case, FrontendError> {
    match case_format(text, path) {
        CaseFormat::Script => parse_case(text, path),
        CaseFormat::Json => json::load_case_json(text, path),
    }
}

/// Parses a case script. `path` is only used in error messages.
pub fn parse_case(source: &str, path: &str) -> Result<Case, FrontendError> {
    module::parse_module(source, path)
}

/// Whether `source` is shallow enough to hand to the Python parser (the pre-parse depth scan,
/// see `scan`): any Python file read with `rustpython-parser` outside the frontend (`pallas-diff
/// import` reads a user's whole module) goes through it first, so no file overflows a stack.
pub fn check_source_depth(source: &str, path: &str) -> Result<(), FrontendError> {
    module::check_depth(source, path)
}
