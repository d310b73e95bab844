//! Why a case cannot be evaluated: every refusal of the reference is an [`EvalError`] with the
//! source [`Span`] of the construct that failed and a stable [`EvalErrorKind`].
//!
//! An `EvalError` means *the case is invalid* (what eager PyTorch would raise, or what the
//! reference refuses to guess, such as reading `torch.empty` memory): the harness reports it as
//! `invalid-case`, never as a finding.

use lang::ir::Span;
use std::fmt;

/// What went wrong, as a closed set with stable ids (`EvalErrorKind::id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvalErrorKind {
    /// A read of memory that was allocated with `torch.empty` (or passed as a `torch.empty`
    /// input) and never written.
    ReadUninitialized,
    /// A returned tensor holds elements that were never written.
    UninitializedOutput,
    /// Shapes that do not broadcast, a store whose value does not fit the indexed region, a
    /// reshape that changes the element count.
    ShapeMismatch,
    /// An int or tensor index outside its dimension, or too many indices (`IndexError`).
    IndexOutOfRange,
    /// Integer division or modulo by zero (`ZeroDivisionError`), or Python float division by
    /// zero.
    DivisionByZero,
    /// A name read on a path where it was never bound (`UnboundLocalError`).
    UnboundName,
    /// The kernel returns nothing, or returns something that is not a tensor.
    NoReturn,
    /// The evaluation exceeded its budget of loop iterations or element operations.
    Budget,
    /// A value of the wrong kind: a float index, a bitwise atomic on a float tensor, a tile used
    /// as a number, an `if` on a multi-element tensor (`TypeError`/`RuntimeError`).
    TypeError,
    /// An argument outside its domain: a slice or arange step of zero, a dim out of range for
    /// `.sum`/`.squeeze`/`.permute`, a negative size.
    InvalidArgument,
    /// An integer result that leaves its type (Python ints beyond i64, int64 beyond 2^53, a
    /// Python int that does not fit an int32 tensor), or a float-to-int cast of NaN, an infinity
    /// or an out-of-range value (undefined in torch).
    Overflow,
    /// A block size that is missing or not positive.
    InvalidBlockSize,
    /// The inputs or the call do not fit the kernel (an input's constructor chain is invalid, an
    /// argument of the wrong kind).
    InvalidInput,
    /// An in-place update (`+=`) of a tensor another live name aliases: eager PyTorch would
    /// write through the alias, the compiled kernel would not. (A subscript of a host tensor
    /// is a load, a fresh value, as in both of Helion's modes: `DTensor::alias`.)
    AliasedInPlace,
}

impl EvalErrorKind {
    /// All kinds, in declaration order.
    pub const ALL: [EvalErrorKind; 14] = [
        EvalErrorKind::ReadUninitialized,
        EvalErrorKind::UninitializedOutput,
        EvalErrorKind::ShapeMismatch,
        EvalErrorKind::IndexOutOfRange,
        EvalErrorKind::DivisionByZero,
        EvalErrorKind::UnboundName,
        EvalErrorKind::NoReturn,
        EvalErrorKind::Budget,
        EvalErrorKind::TypeError,
        EvalErrorKind::InvalidArgument,
        EvalErrorKind::Overflow,
        EvalErrorKind::InvalidBlockSize,
        EvalErrorKind::InvalidInput,
        EvalErrorKind::AliasedInPlace,
    ];

    /// The stable kebab-case id, e.g. `read-uninitialized`.
    pub fn id(self) -> &'static str {
        match self {
            EvalErrorKind::ReadUninitialized => "read-uninitialized",
            EvalErrorKind::UninitializedOutput => "uninitialized-output",
            EvalErrorKind::ShapeMismatch => "shape-mismatch",
            EvalErrorKind::IndexOutOfRange => "index-out-of-range",
            EvalErrorKind::DivisionByZero => "division-by-zero",
            EvalErrorKind::UnboundName => "unbound-name",
            EvalErrorKind::NoReturn => "no-return",
            EvalErrorKind::Budget => "budget",
            EvalErrorKind::TypeError => "type-error",
            EvalErrorKind::InvalidArgument => "invalid-argument",
            EvalErrorKind::Overflow => "overflow",
            EvalErrorKind::InvalidBlockSize => "invalid-block-size",
            EvalErrorKind::InvalidInput => "invalid-input",
            EvalErrorKind::AliasedInPlace => "aliased-in-place",
        }
    }
}

impl EvalErrorKind {
    /// The kind named `name`: its id, or the variant name that finding directories and corpus
    /// entries written before the ids were used everywhere still carry (`IndexOutOfRange`).
    pub fn from_name(name: &str) -> Option<EvalErrorKind> {
        EvalErrorKind::ALL
            .into_iter()
            .find(|k| k.id() == name || format!("{k:?}") == name)
    }
}

impl serde::Serialize for EvalErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> serde::Deserialize<'de> for EvalErrorKind {
    /// Its id, or the variant name older files carry ([`EvalErrorKind::from_name`]).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EvalErrorKind, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        EvalErrorKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("`{name}` is not a reference error kind"))
        })
    }
}

impl fmt::Display for EvalErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A case the reference cannot evaluate: its kind, where, and a message naming the values
/// involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{span}: {kind}: {message}")]
pub struct EvalError {
    /// What went wrong.
    pub kind: EvalErrorKind,
    /// The construct that failed (0:0 when the case has no source position for it).
    pub span: Span,
    /// A human-readable explanation.
    pub message: String,
}

impl EvalError {
    /// An error of `kind` at `span`.
    pub fn new(kind: EvalErrorKind, span: Span, message: impl Into<String>) -> EvalError {
        EvalError {
            kind,
            span,
            message: message.into(),
        }
    }

    /// The JSON form `{"kind", "line", "col", "message"}` for machine-readable reports.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind.id(),
            "line": self.span.line,
            "col": self.span.col,
            "message": self.message,
        })
    }
}

/// Shorthand used throughout the crate.
pub(crate) type Res<T> = Result<T, EvalError>;

/// Builds an [`EvalError`]: `err(Kind, span, format_args)`.
pub(crate) fn err<T>(kind: EvalErrorKind, span: Span, message: impl Into<String>) -> Res<T> {
    Err(EvalError::new(kind, span, message))
}
