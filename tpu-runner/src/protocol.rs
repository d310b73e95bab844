//! The worker protocol, version [`PROTOCOL_VERSION`]: every wire type of the JSON lines
//! exchanged with the workers (their shared side is `python/worker_protocol.py`), the requests
//! and results the rest of the crate deals in, and the conversion of a response into a
//! [`RunResult`].
//!
//! One request per line on the worker's stdin, one response per line on its stdout. Tensors
//! travel as `{"dtype","shape","data"}` with `data` the base64 of the raw little-endian bytes
//! ([`Tensor::to_le_bytes`]). The worker opens with a hello line (id 0) carrying the same fields
//! as a probe ([`Availability`]), or an `import`-stage error when it cannot import JAX.
//!
//! It depends on [`crate::error`] and [`crate::mode`] only; the process side
//! ([`crate::worker`]) depends on it, never the reverse.

use crate::error::{KernelError, ProtocolError, RunError, Stage};
use crate::mode::Mode;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use lang::tensor::{DType, Tensor};
use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks (`"v"` in every line).
pub const PROTOCOL_VERSION: u32 = 1;

/// A tensor as it travels on the wire.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireTensor {
    /// Element type (`float32`, `bfloat16`, `int32`).
    pub dtype: DType,
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// Base64 of the raw little-endian bytes, row-major.
    pub data: String,
}

impl WireTensor {
    /// Encodes a host tensor.
    pub fn encode(tensor: &Tensor) -> WireTensor {
        WireTensor {
            dtype: tensor.dtype,
            shape: tensor.shape.clone(),
            data: BASE64.encode(tensor.to_le_bytes()),
        }
    }

    /// Decodes into a host tensor, checking the byte length against dtype and shape.
    pub fn decode(&self) -> Result<Tensor, ProtocolError> {
        let bytes = BASE64
            .decode(self.data.as_bytes())
            .map_err(|e| ProtocolError::BadTensor(format!("invalid base64: {e}")))?;
        Tensor::from_le_bytes(self.dtype, self.shape.clone(), &bytes)
            .map_err(|e| ProtocolError::BadTensor(e.to_string()))
    }
}

/// What a request asks for (the `"op"` field and its arguments).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Op<'a> {
    /// Run (or lower) an emitted module on inputs.
    Run {
        /// The engine.
        mode: Mode,
        /// The Python module source; it defines `make(interpret)`.
        source: &'a str,
        /// Inputs in the order `f(*inputs)` takes them (Helion modes: the tensors `call` names).
        inputs: Vec<WireTensor>,
        /// Helion modes: which function of `source` to call, with which arguments.
        #[serde(skip_serializing_if = "Option::is_none")]
        call: Option<&'a KernelCall>,
        /// Helion modes: more input sets (each shaped like `inputs`) the kernel compiled for
        /// `inputs` runs on after them, answered by the response's `set_outputs`; absent when
        /// empty, so a request without them reads as before.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        input_sets: Vec<Vec<WireTensor>>,
    },
    /// Run several emitted modules of one JAX mode in one request; the interpreters compile
    /// them as one jitted function (see the crate README).
    #[serde(rename = "run_batch")]
    RunBatch {
        /// The engine (every kernel's).
        mode: Mode,
        /// The kernels, each answered by one element of the response's `results`.
        kernels: Vec<WireKernel<'a>>,
    },
    /// Helion modes: Helion's default config for `call`'s kernel bound to `inputs` (what
    /// `autotune_effort="none"` runs), answered by the response's `config`; nothing compiles.
    #[serde(rename = "default_config")]
    DefaultConfig {
        /// The Helion mode whose settings the kernel is bound under.
        mode: Mode,
        /// A case script's kernel part.
        source: &'a str,
        /// The tensors `call` names.
        inputs: Vec<WireTensor>,
        /// The kernel and its arguments.
        call: &'a KernelCall,
    },
    /// Report the Python and JAX versions and devices.
    Probe,
    /// Exit after answering.
    Shutdown,
}

/// One kernel of a `run_batch` request.
#[derive(Clone, Debug, Serialize)]
pub struct WireKernel<'a> {
    /// The Python module source; it defines `make(interpret)`.
    pub source: &'a str,
    /// Inputs in the order `f(*inputs)` takes them.
    pub inputs: Vec<WireTensor>,
}

/// Worker-side seconds of a request per stage: `trace` (executing the module, `make`, tracing),
/// `lower` (to StableHLO; the TPU export for `pallas-tpu-lower`), `compile` (XLA) and `run`
/// (the call and encoding its outputs). Absent stages (a cached kernel, a Helion worker) are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageSeconds {
    /// Module execution, `make` and tracing.
    #[serde(default)]
    pub trace: f64,
    /// Lowering to StableHLO (or the TPU export).
    #[serde(default)]
    pub lower: f64,
    /// XLA compilation.
    #[serde(default)]
    pub compile: f64,
    /// The call, waiting for the outputs and encoding them.
    #[serde(default)]
    pub run: f64,
}

impl StageSeconds {
    /// Their sum.
    pub fn total(&self) -> f64 {
        self.trace + self.lower + self.compile + self.run
    }

    /// Adds `other` stage by stage.
    pub fn add(&mut self, other: &StageSeconds) {
        self.trace += other.trace;
        self.lower += other.lower;
        self.compile += other.compile;
        self.run += other.run;
    }
}

/// One element of a `run_batch` response's `results`: the body of a `run` response.
#[derive(Clone, Debug, Deserialize)]
pub struct WireResult {
    /// Whether this kernel succeeded.
    pub ok: bool,
    /// Its outputs.
    #[serde(default)]
    pub outputs: Option<Vec<WireTensor>>,
    /// Whether a compiled executable was reused.
    #[serde(default)]
    pub cached: Option<bool>,
    /// Set by a successful `pallas-tpu-lower` run.
    #[serde(default)]
    pub lowered: Option<bool>,
    /// Whether the kernel ran in the batch's one compiled function (false: on its own).
    #[serde(default)]
    pub batched: Option<bool>,
    /// Its failure.
    #[serde(default)]
    pub error: Option<WireError>,
}

/// One request line.
#[derive(Clone, Debug, Serialize)]
pub struct WireRequest<'a> {
    /// Protocol version ([`PROTOCOL_VERSION`]).
    pub v: u32,
    /// Request id, echoed by the response (ids start at 1; 0 is the hello line).
    pub id: u64,
    /// The operation.
    #[serde(flatten)]
    pub op: Op<'a>,
}

/// The `"error"` object of a failed response.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct WireError {
    /// `import`, `trace`, `lower`, `run` (kernel outcomes) or `protocol` (a bad request).
    pub stage: String,
    /// Python exception class name (or `EngineUnavailable`).
    #[serde(rename = "type")]
    pub kind: String,
    /// `str(exception)`.
    pub message: String,
    /// Formatted Python traceback (may be empty).
    #[serde(default)]
    pub traceback: String,
    /// The exception class named on the last `XxxError: ...` line of the message when it differs
    /// from `type` (an exception raised inside a JAX callback arrives wrapped).
    #[serde(default)]
    pub cause: Option<String>,
    /// Helion modes: whether the exception is a documented Helion refusal.
    #[serde(default)]
    pub refusal: Option<bool>,
    /// Helion modes: the kernel-file line the error names.
    #[serde(default)]
    pub line: Option<u32>,
}

/// One response line; which optional fields are present depends on the request.
#[derive(Clone, Debug, Deserialize)]
pub struct WireResponse {
    /// Protocol version.
    pub v: u32,
    /// The request id answered (`null` when the worker could not parse the request).
    pub id: Option<u64>,
    /// Whether the request succeeded.
    pub ok: bool,
    /// Outputs of a successful run (empty for `pallas-tpu-lower`).
    #[serde(default)]
    pub outputs: Option<Vec<WireTensor>>,
    /// Worker-side seconds spent on the request.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// Whether a compiled executable was reused.
    #[serde(default)]
    pub cached: Option<bool>,
    /// Set by a successful `pallas-tpu-lower` run.
    #[serde(default)]
    pub lowered: Option<bool>,
    /// Helion modes: the Pallas module Helion generated for the kernel (when it got that far).
    #[serde(default)]
    pub generated: Option<String>,
    /// The failure of a `ok: false` response.
    #[serde(default)]
    pub error: Option<WireError>,
    /// Answer to a probe.
    #[serde(default)]
    pub probe: Option<Availability>,
    /// The hello line's content (same fields as a probe).
    #[serde(default)]
    pub hello: Option<Availability>,
    /// Seconds per stage (JAX workers).
    #[serde(default)]
    pub stages: Option<StageSeconds>,
    /// A `run_batch` response: one result per kernel, in request order.
    #[serde(default)]
    pub results: Option<Vec<WireResult>>,
    /// A `run_batch` response: whether the batch failed as a whole and its kernels were run
    /// again one by one.
    #[serde(default)]
    pub split: Option<bool>,
    /// A `run` request with `input_sets`: one result per set, in order (absent otherwise).
    #[serde(default)]
    pub set_outputs: Option<Vec<WireSetResult>>,
    /// Worker CPU seconds (all its threads) spent on the request, when it reports them.
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// A `default_config` response: Helion's `Config.to_json()` object.
    #[serde(default)]
    pub config: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What the kernel did on one extra input set of a `run` request: its outputs or its error.
#[derive(Clone, Debug, Deserialize)]
pub struct WireSetResult {
    /// The outputs, when the run on this set succeeded.
    #[serde(default)]
    pub outputs: Option<Vec<WireTensor>>,
    /// Its failure (stage `run`).
    #[serde(default)]
    pub error: Option<WireError>,
}

/// The worker's report on its environment (the hello line and the `probe` op).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// Python version, e.g. `3.11.7`.
    pub python: String,
    /// `sys.executable` of the worker.
    #[serde(default)]
    pub python_executable: String,
    /// `jax.__version__`.
    #[serde(rename = "jax")]
    pub jax_version: String,
    /// `jaxlib.__version__`.
    #[serde(rename = "jaxlib", default)]
    pub jaxlib_version: String,
    /// `jax.devices()`, each as `str(device)`.
    pub devices: Vec<String>,
    /// Whether `jax.devices()` includes a TPU.
    pub tpu: bool,
    /// The TPU generation the CPU modes target (`PALLAS_DIFF_TPU_KIND`, default
    /// [`DEFAULT_TPU_KIND`](crate::DEFAULT_TPU_KIND)).
    #[serde(default)]
    pub tpu_kind: String,
    /// The worker's `XLA_FLAGS` (the ISA pin of [`PINNED_XLA_CPU_ISA`](crate::PINNED_XLA_CPU_ISA)
    /// on x86-64, plus the user's own).
    #[serde(default)]
    pub xla_flags: String,
    /// Helion workers: `helion.__version__`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion: Option<String>,
    /// Helion workers: `torch.__version__`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
    /// Helion workers: the directory of the `helion` package the worker imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion_path: Option<String>,
    /// Helion workers started on a chosen build ([`crate::builds`]): which one, as checked
    /// against the worker's `helion.__version__`. Set by the pool, not sent by the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion_build: Option<crate::builds::BuildIdentity>,
    /// Modes this worker's environment cannot run, by name, each with the reason (Helion
    /// workers: `helion-tpu-lower` on a build whose launcher lacks the helpers it calls).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unavailable: std::collections::BTreeMap<String, String>,
}

impl Availability {
    /// Why `mode` cannot run on this worker's environment, when it says so.
    pub fn mode_unavailable(&self, mode: crate::Mode) -> Option<&str> {
        self.unavailable.get(mode.name()).map(String::as_str)
    }
}

/// A request to run one emitted module, or (Helion modes) one case's kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRequest {
    /// The engine.
    pub mode: Mode,
    /// JAX modes: a Python module defining `make(interpret)` (see the crate README). Helion
    /// modes: a case script's kernel part (imports and the `@helion.kernel` function).
    pub source: String,
    /// JAX modes: inputs in the order the module's `f(*inputs)` takes them. Helion modes: the
    /// tensors [`RunRequest::call`] refers to.
    pub inputs: Vec<Tensor>,
    /// Helion modes: the kernel to call and its arguments; `None` for the JAX modes.
    pub call: Option<KernelCall>,
    /// Helion modes that produce outputs: more input sets, each shaped like
    /// [`RunRequest::inputs`], that the kernel compiled once for `inputs` also runs on (their
    /// results: [`RunResult::set_outcomes`]). Empty: only `inputs`.
    pub input_sets: Vec<Vec<Tensor>>,
}

impl RunRequest {
    /// A request for a JAX mode: run emitted module `source` on `inputs`.
    pub fn module(mode: Mode, source: impl Into<String>, inputs: Vec<Tensor>) -> RunRequest {
        RunRequest {
            mode,
            source: source.into(),
            inputs,
            call: None,
            input_sets: Vec::new(),
        }
    }
}

/// Which kernel of a Helion request's source to call, and its positional arguments.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCall {
    /// The `@helion.kernel` function's name.
    pub kernel: String,
    /// Positional arguments in order.
    pub args: Vec<CallArg>,
}

/// One positional argument of a [`KernelCall`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallArg {
    /// `inputs[i]` of the request, as a torch CPU tensor (`{"input": i}` on the wire).
    Input(usize),
    /// A Python int (`{"int": n}`).
    Int(i64),
    /// A finite Python float (`{"float": x}`).
    Float(f64),
    /// A Python bool (`{"bool": b}`).
    Bool(bool),
}

/// What one engine did with one module: outputs, or a kernel error. Not a harness failure.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The outputs (empty for `pallas-tpu-lower`), or the module's error.
    pub outcome: Result<Vec<Tensor>, KernelError>,
    /// Seconds the worker spent on the request (import, trace, compile and run).
    pub seconds: f64,
    /// Whether the worker reused an executable compiled for this source, mode and input types.
    pub cached: bool,
    /// Whether the module was lowered for TPU (a successful `pallas-tpu-lower` or
    /// `helion-tpu-lower` run).
    pub lowered: bool,
    /// Helion modes: the Pallas module Helion generated, when it got that far.
    pub generated: Option<String>,
    /// Worker seconds per stage; for a kernel compiled in a batch, its share of the batch's.
    pub stages: StageSeconds,
    /// Whether the kernel was compiled in one function with the other kernels of a batch.
    pub batched: bool,
    /// One outcome per extra input set of the request ([`RunRequest::input_sets`]), in order:
    /// empty when it had none or the run failed before they ran.
    pub set_outcomes: Vec<Result<Vec<Tensor>, KernelError>>,
    /// Worker CPU seconds spent on the request, when the worker reports them (Helion worker).
    pub cpu_seconds: Option<f64>,
}

/// What [`Pool::run_batch`](crate::Pool::run_batch) did with several kernels of one mode.
#[derive(Debug)]
pub struct BatchResult {
    /// One result per request, in order: an engine outcome, or a harness failure of that
    /// kernel alone (a batch that timed out or crashed is re-run kernel by kernel).
    pub results: Vec<Result<RunResult, RunError>>,
    /// Worker seconds per stage over the whole batch, re-runs included.
    pub stages: StageSeconds,
    /// Whether the batch failed as a whole and was split into single-kernel runs.
    pub split: bool,
}

impl RunResult {
    /// The outputs when the run succeeded.
    pub fn outputs(&self) -> Option<&[Tensor]> {
        self.outcome.as_deref().ok()
    }

    /// The kernel error when the run failed.
    pub fn kernel_error(&self) -> Option<&KernelError> {
        self.outcome.as_ref().err()
    }
}

/// Helion's default config for a kernel: its keys and values as Helion's `Config.to_json()`
/// writes them (`block_sizes`, `pallas_loop_type`, ...).
pub type HelionConfig = serde_json::Map<String, serde_json::Value>;

/// Interprets the response to a `default_config` request: the config, or the kernel's error.
pub(crate) fn default_config_result(
    resp: WireResponse,
) -> Result<Result<HelionConfig, KernelError>, RunError> {
    if !resp.ok {
        let error = resp.error.ok_or_else(|| ProtocolError::Malformed {
            reason: "ok is false but there is no error object".into(),
            line: String::new(),
        })?;
        return Ok(Err(kernel_error(error)?));
    }
    resp.config.map(Ok).ok_or_else(|| {
        ProtocolError::Malformed {
            reason: "default_config response without config".into(),
            line: String::new(),
        }
        .into()
    })
}

/// Interprets the response to a `run` request.
pub(crate) fn run_result(mode: Mode, resp: WireResponse) -> Result<RunResult, RunError> {
    let seconds = resp.seconds.unwrap_or(0.0);
    let cached = resp.cached.unwrap_or(false);
    let generated = resp.generated.clone();
    let stages = resp.stages.unwrap_or_default();
    let cpu_seconds = resp.cpu_seconds;
    if !resp.ok {
        let error = resp.error.ok_or_else(|| ProtocolError::Malformed {
            reason: "ok is false but there is no error object".into(),
            line: String::new(),
        })?;
        let kernel = kernel_error(error)?;
        return Ok(RunResult {
            outcome: Err(kernel),
            seconds,
            cached,
            lowered: false,
            generated,
            stages,
            batched: false,
            set_outcomes: Vec::new(),
            cpu_seconds,
        });
    }
    let set_outcomes = resp
        .set_outputs
        .unwrap_or_default()
        .into_iter()
        .map(set_outcome)
        .collect::<Result<Vec<_>, _>>()?;
    let lowered = resp.lowered.unwrap_or(false);
    let outputs = resp
        .outputs
        .ok_or_else(|| ProtocolError::Malformed {
            reason: "ok response without outputs".into(),
            line: String::new(),
        })?
        .iter()
        .map(WireTensor::decode)
        .collect::<Result<Vec<_>, _>>()?;
    if !mode.produces_outputs() && !lowered {
        return Err(ProtocolError::Malformed {
            reason: format!("{mode} response without \"lowered\": true"),
            line: String::new(),
        }
        .into());
    }
    Ok(RunResult {
        outcome: Ok(outputs),
        seconds,
        cached,
        lowered,
        generated,
        stages,
        batched: false,
        set_outcomes,
        cpu_seconds,
    })
}

/// One extra input set's result: outputs, or the kernel's error on it.
fn set_outcome(r: WireSetResult) -> Result<Result<Vec<Tensor>, KernelError>, RunError> {
    match (r.outputs, r.error) {
        (_, Some(error)) => Ok(Err(kernel_error(error)?)),
        (Some(outputs), None) => Ok(Ok(outputs
            .iter()
            .map(WireTensor::decode)
            .collect::<Result<Vec<_>, _>>()?)),
        (None, None) => Err(ProtocolError::Malformed {
            reason: "an input set's result has neither outputs nor an error".into(),
            line: String::new(),
        }
        .into()),
    }
}

/// Interprets the response to a `run_batch` request of `n` kernels: one result per kernel, each
/// with an even share of the batch's seconds and stages among the kernels that ran batched (a
/// kernel re-run on its own is given the batch's seconds divided by `n`).
pub(crate) fn batch_results(
    mode: Mode,
    n: usize,
    resp: WireResponse,
) -> Result<(Vec<RunResult>, StageSeconds, bool), RunError> {
    if !resp.ok {
        let error = resp.error.ok_or_else(|| ProtocolError::Malformed {
            reason: "ok is false but there is no error object".into(),
            line: String::new(),
        })?;
        // A whole-batch error is every kernel's (e.g. pallas-tpu without a TPU).
        let kernel = kernel_error(error)?;
        let result = RunResult {
            outcome: Err(kernel),
            seconds: resp.seconds.unwrap_or(0.0) / n.max(1) as f64,
            cached: false,
            lowered: false,
            generated: None,
            stages: StageSeconds::default(),
            batched: false,
            set_outcomes: Vec::new(),
            cpu_seconds: None,
        };
        return Ok((vec![result; n], resp.stages.unwrap_or_default(), false));
    }
    let results = resp.results.ok_or_else(|| ProtocolError::Malformed {
        reason: "run_batch response without results".into(),
        line: String::new(),
    })?;
    if results.len() != n {
        return Err(ProtocolError::Malformed {
            reason: format!("{} results for {n} kernels", results.len()),
            line: String::new(),
        }
        .into());
    }
    let stages = resp.stages.unwrap_or_default();
    let share = 1.0 / n.max(1) as f64;
    let mut each = stages;
    for s in [
        &mut each.trace,
        &mut each.lower,
        &mut each.compile,
        &mut each.run,
    ] {
        *s *= share;
    }
    let seconds = resp.seconds.unwrap_or(0.0) * share;
    let out = results
        .into_iter()
        .map(|r| {
            let batched = r.batched.unwrap_or(false);
            let wire = WireResponse {
                v: PROTOCOL_VERSION,
                id: None,
                ok: r.ok,
                outputs: r.outputs,
                seconds: Some(seconds),
                cached: r.cached,
                lowered: r.lowered,
                generated: None,
                error: r.error,
                probe: None,
                hello: None,
                stages: Some(each),
                results: None,
                split: None,
                set_outputs: None,
                cpu_seconds: None,
                config: None,
            };
            run_result(mode, wire).map(|mut result| {
                result.batched = batched;
                result
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((out, stages, resp.split.unwrap_or(false)))
}

/// Splits a wire error into a kernel outcome or a protocol failure (stage `protocol`).
pub(crate) fn kernel_error(error: WireError) -> Result<KernelError, ProtocolError> {
    let stage = match error.stage.as_str() {
        "import" => Stage::Import,
        "trace" => Stage::Trace,
        "lower" => Stage::Lower,
        "run" => Stage::Run,
        "protocol" => {
            return Err(ProtocolError::Rejected {
                kind: error.kind,
                message: error.message,
            });
        }
        other => {
            return Err(ProtocolError::Malformed {
                reason: format!("unknown error stage `{other}`"),
                line: String::new(),
            });
        }
    };
    Ok(KernelError {
        stage,
        kind: error.kind,
        message: error.message,
        traceback: error.traceback,
        cause: error.cause,
        refusal: error.refusal,
        line: error.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_line_has_the_documented_shape() {
        let x = Tensor::new(DType::Float32, vec![2], vec![1.0, -2.0]);
        let req = WireRequest {
            v: PROTOCOL_VERSION,
            id: 7,
            op: Op::Run {
                mode: Mode::PallasTpuInterpret,
                source: "def make(i): ...",
                inputs: vec![WireTensor::encode(&x)],
                call: None,
                input_sets: Vec::new(),
            },
        };
        let line = serde_json::to_string(&req).unwrap();
        assert_eq!(
            line,
            r#"{"v":1,"id":7,"op":"run","mode":"pallas-tpu-interpret","source":"def make(i): ...","inputs":[{"dtype":"float32","shape":[2],"data":"AACAPwAAAMA="}]}"#
        );
        let call = KernelCall {
            kernel: "k".into(),
            args: vec![CallArg::Input(0), CallArg::Int(12)],
        };
        let helion = WireRequest {
            v: PROTOCOL_VERSION,
            id: 9,
            op: Op::Run {
                mode: Mode::HelionPallas,
                source: "def k(x, n): ...",
                inputs: vec![WireTensor::encode(&x)],
                call: Some(&call),
                input_sets: vec![vec![WireTensor::encode(&x)]],
            },
        };
        assert_eq!(
            serde_json::to_string(&helion).unwrap(),
            r#"{"v":1,"id":9,"op":"run","mode":"helion-pallas","source":"def k(x, n): ...","inputs":[{"dtype":"float32","shape":[2],"data":"AACAPwAAAMA="}],"call":{"kernel":"k","args":[{"input":0},{"int":12}]},"input_sets":[[{"dtype":"float32","shape":[2],"data":"AACAPwAAAMA="}]]}"#
        );
        let default_config = WireRequest {
            v: PROTOCOL_VERSION,
            id: 10,
            op: Op::DefaultConfig {
                mode: Mode::HelionPallas,
                source: "def k(x, n): ...",
                inputs: vec![WireTensor::encode(&x)],
                call: &call,
            },
        };
        assert_eq!(
            serde_json::to_string(&default_config).unwrap(),
            r#"{"v":1,"id":10,"op":"default_config","mode":"helion-pallas","source":"def k(x, n): ...","inputs":[{"dtype":"float32","shape":[2],"data":"AACAPwAAAMA="}],"call":{"kernel":"k","args":[{"input":0},{"int":12}]}}"#
        );
        let answer: WireResponse = serde_json::from_str(
            r#"{"v":1,"id":10,"ok":true,"outputs":[],"config":{"block_sizes":[32],"pallas_loop_type":"unroll"}}"#,
        )
        .unwrap();
        let config = default_config_result(answer).unwrap().unwrap();
        assert_eq!(config["block_sizes"], serde_json::json!([32]));
        let refused: WireResponse = serde_json::from_str(
            r#"{"v":1,"id":10,"ok":false,"error":{"stage":"trace","type":"RankMismatch","message":"m"}}"#,
        )
        .unwrap();
        assert_eq!(
            default_config_result(refused).unwrap().unwrap_err().kind,
            "RankMismatch"
        );
        let probe = WireRequest {
            v: 1,
            id: 8,
            op: Op::Probe,
        };
        assert_eq!(
            serde_json::to_string(&probe).unwrap(),
            r#"{"v":1,"id":8,"op":"probe"}"#
        );
    }

    #[test]
    fn set_outputs_read_as_one_outcome_per_set() {
        let line = r#"{"v":1,"id":3,"ok":true,"outputs":[],"cpu_seconds":0.25,"set_outputs":[{"outputs":[{"dtype":"float32","shape":[2],"data":"AACAPwAAAMA="}]},{"error":{"stage":"run","type":"ValueError","message":"bad"}}]}"#;
        let resp: WireResponse = serde_json::from_str(line).unwrap();
        let result = run_result(Mode::HelionPallas, resp).unwrap();
        assert_eq!(result.cpu_seconds, Some(0.25));
        assert_eq!(result.set_outcomes.len(), 2);
        assert_eq!(
            result.set_outcomes[0].as_ref().unwrap()[0].values,
            vec![1.0, -2.0]
        );
        let e = result.set_outcomes[1].as_ref().unwrap_err();
        assert_eq!((e.stage, e.kind.as_str()), (Stage::Run, "ValueError"));
        // A response without them (an older worker) has none.
        let line = r#"{"v":1,"id":3,"ok":true,"outputs":[]}"#;
        let resp: WireResponse = serde_json::from_str(line).unwrap();
        assert!(
            run_result(Mode::HelionPallas, resp)
                .unwrap()
                .set_outcomes
                .is_empty()
        );
    }

    #[test]
    fn wire_tensors_round_trip_and_check_length() {
        for dtype in DType::ALL {
            let t = Tensor::new(dtype, vec![3], vec![1.0, -3.0, 65536.0]);
            assert_eq!(WireTensor::encode(&t).decode().unwrap(), t);
        }
        let bad = WireTensor {
            dtype: DType::Int32,
            shape: vec![2],
            data: "AAAA".into(),
        };
        assert!(matches!(bad.decode(), Err(ProtocolError::BadTensor(_))));
    }

    #[test]
    fn error_responses_split_into_kernel_errors_and_protocol_errors() {
        let line = r#"{"v":1,"id":3,"ok":false,"seconds":0.5,"error":{"stage":"lower","type":"NotImplementedError","message":"dynamic_slice","traceback":"tb"}}"#;
        let resp: WireResponse = serde_json::from_str(line).unwrap();
        let result = run_result(Mode::PallasTpuLower, resp).unwrap();
        let err = result.kernel_error().unwrap();
        assert_eq!(
            (err.stage, err.kind.as_str()),
            (Stage::Lower, "NotImplementedError")
        );

        let line = r#"{"v":1,"id":3,"ok":false,"error":{"stage":"protocol","type":"BadRequest","message":"unknown dtype"}}"#;
        let resp: WireResponse = serde_json::from_str(line).unwrap();
        assert!(matches!(
            run_result(Mode::PallasInterpret, resp),
            Err(RunError::Protocol(ProtocolError::Rejected { .. }))
        ));
    }
}
