//! The executor's typed errors: what the module raised, with the stage JAX would raise it in
//! and the Python exception class, plus the executor's own refusals.

use std::fmt;

/// The stage of a module's life in which a [`SimError`] is raised (the worker's stages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimStage {
    /// The module itself is malformed (a call with the wrong number of inputs, a launcher
    /// that does not fit the kernel).
    Import,
    /// Tracing the kernel: static shape, dtype and index errors, raised before anything runs
    /// (JAX traces every branch of a `cond` and every loop body, taken or not).
    Trace,
    /// Running: out-of-range dynamic reads and writes.
    Run,
}

impl SimStage {
    /// The worker's name of the stage (`import`, `trace`, `run`).
    pub fn name(self) -> &'static str {
        match self {
            SimStage::Import => "import",
            SimStage::Trace => "trace",
            SimStage::Run => "run",
        }
    }
}

impl fmt::Display for SimStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The class of a [`SimError`]: the Python exception JAX raises for it, or
/// [`ErrorKind::Unsupported`] for a construct the executor does not model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `IndexError`: an out-of-range dynamic read (TPU interpreter), or indexing a value
    /// with too many indices.
    IndexError,
    /// `ValueError`: a static out-of-range `pl.ds` (trace), a dynamic write entirely out of
    /// range (TPU interpreter), a shape that does not fit.
    ValueError,
    /// `TypeError`: operand types that do not fit (branch or carry types, a traced value
    /// where Python needs an int).
    TypeError,
    /// `AttributeError`: a method a Python value does not have (`(3).astype(...)`).
    AttributeError,
    /// `NameError`: a name bound nowhere.
    NameError,
    /// `UnboundLocalError`: a local read before it is assigned.
    UnboundLocalError,
    /// `ConcretizationTypeError`: a traced value where JAX needs a concrete one
    /// (`jnp.arange` bounds, shapes).
    ConcretizationTypeError,
    /// `OverflowError`: a Python int that does not fit int32 entering JAX.
    OverflowError,
    /// `ZeroDivisionError`: Python int or float division by zero.
    ZeroDivisionError,
    /// `AssertionError`: the TPU interpreter's internal assertion on a write that is partially
    /// out of range (`assert in_bounds_shape == value.shape` in `swap_buffer_content`).
    AssertionError,
    /// A construct the executor does not model (not a JAX error: a gap of the executor).
    Unsupported,
    /// The run executed more statements than [`SimOptions::max_steps`](super::SimOptions)
    /// allows (not a JAX error: the executor's time limit).
    StepLimit,
}

impl ErrorKind {
    /// The Python class name (`Unsupported` for the executor's own gap).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::IndexError => "IndexError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::AttributeError => "AttributeError",
            ErrorKind::NameError => "NameError",
            ErrorKind::UnboundLocalError => "UnboundLocalError",
            ErrorKind::ConcretizationTypeError => "ConcretizationTypeError",
            ErrorKind::OverflowError => "OverflowError",
            ErrorKind::ZeroDivisionError => "ZeroDivisionError",
            ErrorKind::AssertionError => "AssertionError",
            ErrorKind::Unsupported => "Unsupported",
            ErrorKind::StepLimit => "StepLimit",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error of the executor: the module raised (as JAX would), or the executor met a
/// construct it does not model ([`ErrorKind::Unsupported`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{stage} {kind}: {message}")]
pub struct SimError {
    /// Where it was raised.
    pub stage: SimStage,
    /// What was raised.
    pub kind: ErrorKind,
    /// The message (for out-of-range accesses: the range and the buffer's shape).
    pub message: String,
    /// The kernel-body functions active when it was raised, outermost first.
    pub context: Vec<String>,
}

pub(crate) type SimResult<T> = Result<T, SimError>;

impl SimError {
    pub(crate) fn new(stage: SimStage, kind: ErrorKind, message: impl Into<String>) -> SimError {
        SimError {
            stage,
            kind,
            message: message.into(),
            context: Vec::new(),
        }
    }

    /// A trace-time error.
    pub(crate) fn trace(kind: ErrorKind, message: impl Into<String>) -> SimError {
        SimError::new(SimStage::Trace, kind, message)
    }

    /// A construct the executor does not model (reported at trace time).
    pub(crate) fn unsupported(message: impl Into<String>) -> SimError {
        SimError::new(SimStage::Trace, ErrorKind::Unsupported, message)
    }

    /// Whether the executor refused a construct (rather than the module raising).
    pub fn is_unsupported(&self) -> bool {
        self.kind == ErrorKind::Unsupported
    }
}
