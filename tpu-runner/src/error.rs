//! Error types. Harness failures ([`RunError`], [`ProtocolError`]) are kept apart from engine
//! outcomes ([`KernelError`]): a kernel that raises is a result to compare, a worker that dies
//! or answers garbage is a fault of the harness or the environment.
//!
//! It depends on [`crate::mode`] only: the protocol and the worker build these errors, so they
//! sit below both.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// The stage of a module's life in which it failed; serialized as its wire name
/// ([`Stage::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Executing the module source (syntax errors, missing names, import failures).
    Import,
    /// Calling `make(interpret)` and tracing `jax.jit(f)` (static shape and index errors).
    Trace,
    /// `jax.export` for TPU (`pallas-tpu-lower` only): Mosaic refused the kernel.
    Lower,
    /// Compiling and executing (out-of-range reads in the TPU interpreter, a missing TPU).
    Run,
}

impl Stage {
    /// The wire name (`import`, `trace`, `lower`, `run`).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Import => "import",
            Stage::Trace => "trace",
            Stage::Lower => "lower",
            Stage::Run => "run",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A module that raised: an engine outcome, not a harness failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{stage} error {kind}: {}", first_line(.message))]
pub struct KernelError {
    /// Where it failed.
    pub stage: Stage,
    /// Python exception class (e.g. `NotImplementedError`), or `EngineUnavailable`.
    pub kind: String,
    /// `str(exception)`.
    pub message: String,
    /// Python traceback (may be empty).
    pub traceback: String,
    /// For an exception wrapped by JAX (a callback error), the inner class, e.g. `IndexError`.
    pub cause: Option<String>,
    /// Helion modes only: whether the exception is one of Helion's documented refusals (a
    /// `helion.exc` error other than its `InternalError` wrapper), as opposed to an exception
    /// raised from inside Helion. `None` for the JAX modes.
    pub refusal: Option<bool>,
    /// Helion modes only: the line of the kernel's source file the error is about (Helion's
    /// own location, else the innermost traceback frame in the kernel file), when known.
    pub line: Option<u32>,
}

impl KernelError {
    /// Whether the mode cannot run on this host (`pallas-tpu` without a TPU): kind
    /// [`ENGINE_UNAVAILABLE`].
    pub fn is_engine_unavailable(&self) -> bool {
        self.kind == ENGINE_UNAVAILABLE
    }

    /// Whether `kind` or `cause` is the given exception class.
    pub fn is(&self, class: &str) -> bool {
        self.kind == class || self.cause.as_deref() == Some(class)
    }
}

/// `KernelError::kind` of a mode that cannot run here (`pallas-tpu` without a TPU).
pub const ENGINE_UNAVAILABLE: &str = "EngineUnavailable";

/// The worker broke the protocol, or refused a request as malformed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProtocolError {
    /// A line that is not a valid response.
    #[error("malformed worker response ({reason}): {line:?}")]
    Malformed {
        /// What is wrong with it.
        reason: String,
        /// The line (cut to 200 characters).
        line: String,
    },
    /// A response to another request.
    #[error("worker answered request {got:?} while request {expected} was pending")]
    WrongId {
        /// The pending request.
        expected: u64,
        /// The id in the response.
        got: Option<u64>,
    },
    /// A response of another protocol version.
    #[error("worker speaks protocol version {got}, this runner speaks {expected}")]
    Version {
        /// The version in the response.
        got: u32,
        /// The version this runner speaks ([`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION)).
        expected: u32,
    },
    /// The worker judged the request malformed (error stage `protocol`).
    #[error("worker rejected the request ({kind}): {message}")]
    Rejected {
        /// Exception class.
        kind: String,
        /// Message.
        message: String,
    },
    /// An output tensor that does not decode.
    #[error("bad output tensor: {0}")]
    BadTensor(String),
}

/// A harness failure: the request produced no engine outcome.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No response within the per-request timeout; the worker was killed (and is replaced).
    #[error("no response within {timeout:?}: the worker was killed and will be replaced")]
    Timeout {
        /// The timeout that expired.
        timeout: Duration,
    },
    /// One worker process died (end of its stdout, or its exit) while serving a request.
    #[error("worker process died ({}){}", show_status(.status), show_tail(.stderr_tail))]
    WorkerCrashed {
        /// Exit status, when it could be collected.
        status: Option<ExitStatus>,
        /// The last ~4 KB of the worker's stderr.
        stderr_tail: String,
    },
    /// The request crashed its worker, and the replacement worker too (the pool retries once).
    #[error("the engine's worker crashed twice on this request ({}){}", show_status(.status), show_tail(.stderr_tail))]
    EngineCrash {
        /// Exit status of the second worker.
        status: Option<ExitStatus>,
        /// The last ~4 KB of the second worker's stderr.
        stderr_tail: String,
    },
    /// The worker broke the protocol.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The interpreter could not be started at all.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The interpreter started but cannot import JAX (its hello line was an import error).
    #[error(
        "{python} cannot import JAX ({kind}: {}); let provision() create the venv or set PALLAS_DIFF_PYTHON to a Python with jax",
        first_line(.message)
    )]
    JaxUnavailable {
        /// The interpreter.
        python: String,
        /// Exception class, e.g. `ModuleNotFoundError`.
        kind: String,
        /// Its message.
        message: String,
    },
    /// A Helion worker started on a build imported another Helion version.
    #[error(
        "the Helion build `{build}` should import helion {expected}, but the worker imported helion {reported}: its overlay does not shadow the environment's Helion"
    )]
    WrongBuild {
        /// The build's id.
        build: String,
        /// Its recorded version.
        expected: String,
        /// `helion.__version__` in the worker.
        reported: String,
    },
    /// The worker did not send its hello line in time.
    #[error("worker did not start within {timeout:?}{}", show_tail(.stderr_tail))]
    StartupTimeout {
        /// The start-up timeout.
        timeout: Duration,
        /// The last ~4 KB of the worker's stderr.
        stderr_tail: String,
    },
    /// A request for a mode whose worker runs in another environment (a Helion mode sent to the
    /// JAX pool, or the reverse): a harness bug.
    #[error("mode {mode} runs in the {} environment, not in this {runtime} pool", .mode.runtime())]
    WrongRuntime {
        /// The requested mode.
        mode: crate::mode::Mode,
        /// The pool's environment.
        runtime: crate::mode::Runtime,
    },
    /// Writing to the worker failed for another reason than its death.
    #[error("i/o error talking to the worker: {0}")]
    Io(#[from] std::io::Error),
}

fn first_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

fn show_status(status: &Option<ExitStatus>) -> String {
    match status {
        Some(s) => s.to_string(),
        None => "exit status unknown".into(),
    }
}

fn show_tail(tail: &str) -> String {
    match tail.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        Some(last) => format!("; last stderr line: {last}"),
        None => String::new(),
    }
}
