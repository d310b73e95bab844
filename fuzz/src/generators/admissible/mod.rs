//! Admissibility, the generator's validator: is a case one the eager reference can evaluate,
//! and one the frontend reads back unchanged from its rendering? (Stronger than the IR rules of
//! `lang::frontend::wellformed`, which every case read from a script or JSON meets: those say a
//! case means something, this says it runs in range on every iteration and round-trips.)
//!
//! [`validate_admissible`] runs the kernel the way eager PyTorch would, but on shapes instead of
//! values: it iterates every grid index and tile with the *effective* block sizes (spec §1.1a),
//! binds tile attributes to concrete ints, and tracks the exact values of small int index
//! tensors (`t.index`, `hl.arange`, `t.index + k`). So it can tell, exactly, whether every index is in
//! range on every iteration, whether shapes line up in arithmetic and stores, whether a name is
//! defined where it is read, and whether an output allocated with `torch.empty` is fully written
//! before it is returned. It also refuses IR forms that do not survive `render` → `parse`
//! unchanged (an `Index::Expr` holding an int literal, a grid with `block_size=`, ...).
//!
//! It is deliberately stricter than PyTorch in a few places, each noted where it is decided:
//! `.view` needs a value the validator can prove contiguous, int32 values must be cast before
//! `.sum` (torch would promote to int64, which cases do not have), an int index beside a tensor
//! index is refused (NumPy and PyTorch place the result dims differently), and names first bound
//! inside a loop or branch are forgotten after it (Helion does not carry them out).
//!
//! The validator is what [`fixup`](fn@super::fixup) repairs against, and what the generator's tests hold
//! every generated case to.

//!
//! Layout: this module owns the verdict ([`validate_admissible`], [`Flaw`] and where a flaw
//! sits) and the run's limits; `module_rules` the module-level rules; `static_rules` what the
//! frontend decides without running anything; `values` the abstract values; `run` the shape
//! run's state and host code, `device` its device code, `eval` its expressions and `index` its
//! indexing.

mod device;
mod eval;
mod index;
mod module_rules;
mod ops;
mod run;
mod static_rules;
mod values;

pub(crate) use module_rules::is_identifier;
pub(crate) use values::contiguous_after;

use lang::ir::Case;
use module_rules::{module_rules, return_rule};
use run::ShapeRun;
use static_rules::frontend_rules;

/// Which body of a statement a path step descends into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arm {
    /// The kernel body.
    Root,
    /// A loop's body.
    Loop,
    /// An `if`'s then-branch.
    Then,
    /// An `if`'s else-branch.
    Else,
}

/// Where a statement sits: `(arm, index)` steps from the kernel body down, the first step's arm
/// being [`Arm::Root`].
pub type StmtPath = Vec<(Arm, usize)>;

/// What is wrong with a case, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Flaw {
    /// Module level: inputs, parameters, the call, the config or the case version.
    #[error("case: {0}")]
    Module(String),
    /// A statement of the kernel body.
    #[error("statement {path:?}: {message}")]
    Stmt {
        /// Where the statement is.
        path: StmtPath,
        /// What is wrong.
        message: String,
    },
    /// An output allocated with `torch.empty` is returned with elements never written.
    #[error("`{name}` is allocated with torch.empty and returned partly unwritten")]
    UnwrittenEmpty {
        /// The host name of the allocation.
        name: String,
    },
    /// The kernel does not end with one `return` of host tensors.
    #[error("return: {0}")]
    Return(String),
}

/// Most loop-body executions a case may take (cases evaluate in microseconds).
const MAX_STEPS: usize = 20_000;
/// Most elements an input or allocation may have.
const MAX_ELEMS: usize = 1 << 16;

/// Whether `case` is admissible (see the module docs): `Ok`, or the first flaw found.
pub fn validate_admissible(case: &Case) -> Result<(), Flaw> {
    module_rules(case).map_err(Flaw::Module)?;
    return_rule(case).map_err(Flaw::Return)?;
    frontend_rules(case)?;
    let mut run = ShapeRun::new(case).map_err(Flaw::Module)?;
    run.run()
}
