//! One worker process: spawns `python worker.py`, sends requests, reads responses with a
//! per-request timeout, and keeps the tail of its stderr. A worker that timed out, died or broke
//! the protocol is marked unhealthy; its owner (the [`Pool`](crate::Pool)) replaces it.
//!
//! It also ships the Python files: the two worker scripts and the protocol module both import
//! (`python/worker_protocol.py`), found in the crate's tree or, for a binary moved elsewhere,
//! written from embedded copies into one directory of the temporary directory.

use crate::error::{KernelError, ProtocolError, RunError};
use crate::mode::Mode;
use crate::mode::Runtime;
use crate::protocol::{
    Availability, HelionConfig, Op, PROTOCOL_VERSION, RunRequest, RunResult, StageSeconds,
    WireKernel, WireRequest, WireResponse, WireTensor, batch_results, default_config_result,
    kernel_error, run_result,
};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The Python files shipped with this crate, by name in `python/` (also embedded, for binaries
/// moved elsewhere): the JAX worker, the Helion worker, and the protocol module both import as
/// a sibling (so the three always travel together).
const PYTHON_FILES: [(&str, &str); 3] = [
    ("worker.py", include_str!("../python/worker.py")),
    (
        "helion_worker.py",
        include_str!("../python/helion_worker.py"),
    ),
    (
        "worker_protocol.py",
        include_str!("../python/worker_protocol.py"),
    ),
];

/// The vector ISA every worker's XLA:CPU is limited to on x86-64 (`--xla_cpu_max_isa`).
///
/// XLA:CPU picks its float reduction order by the host's vector width: a float32 nested sum
/// that pallas-sim reproduces bit for bit on an AVX2 host came out 4 ulps away on an AVX-512
/// host, and `--xla_cpu_max_isa=AVX2` restored the AVX2 order there (measured 2026-12-01,
/// `shared/measurements`). Pinning it makes every JAX result independent of the host's ISA
/// among x86-64 hosts with at least AVX2; pallas-sim models that order. A user's own
/// `XLA_FLAGS` naming `xla_cpu_max_isa` wins (and is reported by `probe`).
pub const PINNED_XLA_CPU_ISA: &str = "AVX2";

/// XLA:CPU options that cut the compile time of an emitted module 2-4x, at the price of
/// another float reduction order: [`XlaCompile::Fast`], the CLI's choice for the engines it
/// runs (they compare with the reference under `fuzz::compare`'s tolerance, which allows any
/// reduction order), never a library pool's default (pallas-sim's conformance with JAX is
/// bit for bit under XLA's defaults).
///
/// Measured 2026-12-01 on 24 generated kernels in one process (2 shared cores, load ~7): XLA
/// compile per kernel `pallas-interpret` 226 ms → 55 ms (CPU per kernel 250 → 120 ms),
/// `pallas-tpu-interpret` 377 → 148 ms (359 → 192 ms). Those 24 kernels' output bytes were the
/// same, but `sim/tests/sim_semantics_vs_jax.rs`'s `jnp.sum` probe came out 1 ulp away
/// (-1.8471112 against pallas-sim's -1.8471110) with the fusion emitters off, and again with
/// opt level 0 alone: pallas-sim models XLA's default order bit for bit, so those two change
/// what JAX computes. `--xla_llvm_disable_expensive_passes=true` alone kept the order and saved
/// nothing measurable. Comparisons with the reference (tolerance-based, `fuzz::compare`) stay
/// valid under them; bit comparisons with pallas-sim do not. A user's `XLA_FLAGS` naming one of
/// these flags wins.
pub const FAST_COMPILE_XLA_FLAGS: [&str; 3] = [
    "--xla_cpu_use_fusion_emitters=false",
    "--xla_backend_optimization_level=0",
    "--xla_llvm_disable_expensive_passes=true",
];

/// How a worker's XLA compiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum XlaCompile {
    /// XLA's defaults (a [`PoolConfig`](crate::PoolConfig)'s default, and the conformance
    /// tests': the order pallas-sim models bit for bit).
    #[default]
    Default,
    /// XLA's defaults plus [`FAST_COMPILE_XLA_FLAGS`]: about half the CPU per new kernel, another
    /// float reduction order (see there). The CLI's default.
    Fast,
}

impl XlaCompile {
    /// Every option, in the order `--help` lists them.
    pub const ALL: [XlaCompile; 2] = [XlaCompile::Fast, XlaCompile::Default];

    /// The option's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            XlaCompile::Default => "default",
            XlaCompile::Fast => "fast",
        }
    }
}

impl std::fmt::Display for XlaCompile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for XlaCompile {
    type Err = String;

    fn from_str(s: &str) -> Result<XlaCompile, String> {
        XlaCompile::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = XlaCompile::ALL.iter().map(|c| c.name()).collect();
                format!("`{s}` is not an XLA compile option ({})", names.join(", "))
            })
    }
}

/// Whether XLA:CPU in a worker started now, with the default compile options, sums floats in
/// the order pallas-sim models (x86-64 with AVX2, the ISA pinned to [`PINNED_XLA_CPU_ISA`]),
/// or the statement why not. pallas-sim's bit-identity with JAX is claimed only where this
/// holds; elsewhere (aarch64, an x86-64 host without AVX2, `XLA_FLAGS` choosing another ISA
/// or XLA's fast-compile flags) the conformance tests compare floats with the tolerance policy
/// and say so, and campaigns are unaffected (they compare every engine with the reference).
pub fn sim_order_holds_here() -> Result<(), String> {
    sim_order_holds_for(
        std::env::consts::ARCH,
        avx2_here(),
        &worker_xla_flags_for(XlaCompile::Default),
    )
}

#[cfg(target_arch = "x86_64")]
fn avx2_here() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_here() -> bool {
    false
}

/// [`sim_order_holds_here`] for a host of `arch`, with AVX2 or not, whose workers run with
/// `flags`.
fn sim_order_holds_for(arch: &str, avx2: bool, flags: &str) -> Result<(), String> {
    const MODEL: &str =
        "pallas-sim models XLA:CPU's float summation order on x86-64 limited to AVX2";
    if arch != "x86_64" {
        return Err(format!("this host is {arch}; {MODEL}"));
    }
    if !avx2 {
        return Err(format!("this x86-64 host has no AVX2; {MODEL}"));
    }
    for flag in flags.split_whitespace() {
        if let Some(isa) = flag.strip_prefix("--xla_cpu_max_isa=")
            && !isa.eq_ignore_ascii_case(PINNED_XLA_CPU_ISA)
        {
            return Err(format!("XLA_FLAGS chooses {flag}; {MODEL}"));
        }
        let name = flag.split('=').next().unwrap_or(flag);
        if FAST_COMPILE_XLA_FLAGS
            .iter()
            .any(|f| f.split('=').next() == Some(name))
        {
            return Err(format!(
                "XLA_FLAGS has {flag}, which changes XLA:CPU's summation order; {MODEL}"
            ));
        }
    }
    Ok(())
}

/// The `XLA_FLAGS` a worker runs with by default: the caller's, plus the ISA pin on x86-64
/// unless they already choose an ISA.
pub fn worker_xla_flags() -> String {
    worker_xla_flags_for(XlaCompile::Default)
}

/// [`worker_xla_flags`] with the compile options of `compile`.
pub fn worker_xla_flags_for(compile: XlaCompile) -> String {
    xla_flags_with(
        &std::env::var("XLA_FLAGS").unwrap_or_default(),
        cfg!(target_arch = "x86_64"),
        compile,
    )
}

/// [`worker_xla_flags`] for the caller's flags `own` on an x86-64 host or not.
fn xla_flags_with(own: &str, x86_64: bool, compile: XlaCompile) -> String {
    let mut flags: Vec<String> = own.split_whitespace().map(str::to_string).collect();
    if x86_64 && !own.contains("xla_cpu_max_isa") {
        flags.push(format!("--xla_cpu_max_isa={PINNED_XLA_CPU_ISA}"));
    }
    match compile {
        XlaCompile::Fast => {
            for flag in FAST_COMPILE_XLA_FLAGS {
                let name = flag.split('=').next().unwrap_or(flag);
                if !own.contains(name.trim_start_matches('-')) {
                    flags.push(flag.to_string());
                }
            }
        }
        XlaCompile::Default => {}
    }
    flags.join(" ")
}

/// The environment variable naming a worker's scratch directory, which the worker owns
/// ([`Worker`] removes it when the process is gone).
pub const WORK_DIR_ENV: &str = "PALLAS_DIFF_WORK_DIR";

/// Bytes of stderr kept per worker.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// Path of `python/worker.py`: the crate's own file when present, else the embedded copy
/// written once to the temporary directory (next to the protocol module it imports).
pub fn worker_script() -> PathBuf {
    script_path("worker.py")
}

/// Path of `python/helion_worker.py`, found the same way as [`worker_script`].
pub fn helion_worker_script() -> PathBuf {
    script_path("helion_worker.py")
}

/// The worker script for `runtime`.
pub fn worker_script_for(runtime: Runtime) -> PathBuf {
    match runtime {
        Runtime::Jax => worker_script(),
        Runtime::Helion => helion_worker_script(),
    }
}

fn script_path(name: &str) -> PathBuf {
    let in_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
    if PYTHON_FILES.iter().all(|(f, _)| in_tree.join(f).is_file()) {
        return in_tree.join(name);
    }
    embedded_python_dir().join(name)
}

/// The directory the embedded [`PYTHON_FILES`] are written to: named by the hash of all of
/// them, so a worker imports the protocol module of its own build, and other builds' files
/// stay apart. A missing file (a temp cleaner removes files, not always their directory) is
/// written again; each write lands by rename, so a concurrent reader never sees half a file.
/// A failure to write shows as the worker's failure to start.
fn embedded_python_dir() -> PathBuf {
    let all: String = PYTHON_FILES
        .iter()
        .flat_map(|(name, source)| [*name, "\0", *source, "\0"])
        .collect();
    let dir = std::env::temp_dir().join(format!(
        "pallas-diff-python-{:016x}",
        crate::provision::fnv1a(&all)
    ));
    for (name, source) in PYTHON_FILES {
        let path = dir.join(name);
        if !path.is_file() {
            let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
            if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&tmp, source).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
    }
    dir
}

/// The last [`STDERR_TAIL_BYTES`] of a worker's stderr, filled by a reader thread.
#[derive(Default)]
struct StderrTail {
    bytes: Mutex<VecDeque<u8>>,
    closed: AtomicBool,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        bytes.extend(chunk);
        let excess = bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        bytes.drain(..excess);
    }

    fn text(&self) -> String {
        let bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = bytes.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).into_owned()
    }
}

/// A running `worker.py`.
pub struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Arc<StderrTail>,
    stderr_thread: Option<JoinHandle<()>>,
    next_id: u64,
    healthy: bool,
    hello: Availability,
    /// The worker's scratch directory (`PALLAS_DIFF_WORK_DIR`: the Helion worker's case
    /// scripts and torch inductor's cache). The worker is killed, never asked to exit, so its
    /// own cleanup never runs; this removes the directory once the process is gone (fields
    /// drop after [`Drop::drop`] has killed and reaped it). Before, every killed Helion worker
    /// left a `pallas-diff-helion-*` directory in the temp dir (96 of them after a day here).
    _scratch: tempfile::TempDir,
}

impl Worker {
    /// Starts `python -u script` and waits up to `startup_timeout` for its hello line.
    ///
    /// A Python that cannot import JAX gives [`RunError::JaxUnavailable`].
    pub fn spawn(
        python: &Path,
        script: &Path,
        startup_timeout: Duration,
    ) -> Result<Worker, RunError> {
        Worker::spawn_with_flags(python, script, startup_timeout, &worker_xla_flags(), None)
    }

    /// [`Worker::spawn`] with these `XLA_FLAGS` (e.g. [`worker_xla_flags_for`]).
    ///
    /// `overlay` (a Helion build's directory, [`crate::builds`]) goes first on the worker's
    /// `PYTHONPATH`, so its packages shadow the venv's.
    pub fn spawn_with_flags(
        python: &Path,
        script: &Path,
        startup_timeout: Duration,
        xla_flags: &str,
        overlay: Option<&Path>,
    ) -> Result<Worker, RunError> {
        let scratch = tempfile::Builder::new()
            .prefix("pallas-diff-worker-")
            .tempdir()
            .map_err(|source| RunError::Spawn {
                program: python.display().to_string(),
                source,
            })?;
        let mut command = Command::new(python);
        if let Some(dir) = overlay {
            let mut paths = vec![dir.to_path_buf()];
            paths.extend(
                std::env::var_os("PYTHONPATH")
                    .iter()
                    .flat_map(std::env::split_paths),
            );
            let joined = std::env::join_paths(paths).map_err(|e| RunError::Spawn {
                program: python.display().to_string(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
            })?;
            command.env("PYTHONPATH", joined);
        }
        let mut child = command
            .arg("-u")
            .arg(script)
            .env(WORK_DIR_ENV, scratch.path())
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            // The workers import `worker_protocol` from their own directory, which Python puts
            // first on `sys.path` unless told to leave it out.
            .env_remove("PYTHONSAFEPATH")
            .env("XLA_FLAGS", xla_flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| RunError::Spawn {
                program: python.display().to_string(),
                source,
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");

        let (tx, lines) = mpsc::channel();
        thread::Builder::new()
            .name("pallas-diff-worker-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = Vec::new();
                    match reader.read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(RunError::Io)?;
        let tail = Arc::new(StderrTail::default());
        let tail_writer = Arc::clone(&tail);
        let stderr_thread = thread::Builder::new()
            .name("pallas-diff-worker-stderr".into())
            .spawn(move || {
                let mut stderr = stderr;
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail_writer.push(&buf[..n]);
                }
                tail_writer.closed.store(true, Ordering::SeqCst);
            })
            .map_err(RunError::Io)?;

        let mut worker = Worker {
            child,
            stdin,
            lines,
            stderr: tail,
            stderr_thread: Some(stderr_thread),
            next_id: 1,
            healthy: true,
            hello: Availability::default(),
            _scratch: scratch,
        };
        let hello = match worker.receive(0, startup_timeout) {
            Ok(resp) => resp,
            Err(RunError::Timeout { timeout }) => {
                return Err(RunError::StartupTimeout {
                    timeout,
                    stderr_tail: worker.stderr_tail(),
                });
            }
            Err(e) => return Err(e),
        };
        if !hello.ok {
            let error = hello.error.ok_or_else(|| ProtocolError::Malformed {
                reason: "failed hello without an error object".into(),
                line: String::new(),
            })?;
            return Err(RunError::JaxUnavailable {
                python: python.display().to_string(),
                kind: error.kind,
                message: error.message,
            });
        }
        worker.hello = hello.hello.ok_or_else(|| ProtocolError::Malformed {
            reason: "the first line is not a hello".into(),
            line: String::new(),
        })?;
        Ok(worker)
    }

    /// The process id (tests kill it to simulate a crash).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the worker reported when it started.
    pub fn hello(&self) -> &Availability {
        &self.hello
    }

    /// Whether the worker can take another request (false after a timeout, a crash or a
    /// protocol violation).
    pub fn is_healthy(&self) -> bool {
        self.healthy
    }

    /// The last ~4 KB of the worker's stderr (what the emitted code printed goes there too).
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Runs one module (or, on a Helion worker, one kernel); waits at most `timeout` for the
    /// answer.
    pub fn run(&mut self, request: &RunRequest, timeout: Duration) -> Result<RunResult, RunError> {
        let op = Op::Run {
            mode: request.mode,
            source: &request.source,
            inputs: request.inputs.iter().map(WireTensor::encode).collect(),
            call: request.call.as_ref(),
            input_sets: request
                .input_sets
                .iter()
                .map(|set| set.iter().map(WireTensor::encode).collect())
                .collect(),
        };
        let resp = self.call(op, timeout)?;
        run_result(request.mode, resp)
    }

    /// Runs several emitted modules of one JAX `mode` in one request (`run_batch`); waits at
    /// most `timeout` for the answer. Returns one result per request, the batch's stages, and
    /// whether the worker split the batch after it failed as a whole.
    pub fn run_batch(
        &mut self,
        mode: Mode,
        requests: &[RunRequest],
        timeout: Duration,
    ) -> Result<(Vec<RunResult>, StageSeconds, bool), RunError> {
        let op = Op::RunBatch {
            mode,
            kernels: requests
                .iter()
                .map(|r| WireKernel {
                    source: &r.source,
                    inputs: r.inputs.iter().map(WireTensor::encode).collect(),
                })
                .collect(),
        };
        let resp = self.call(op, timeout)?;
        batch_results(mode, requests.len(), resp)
    }

    /// Asks a Helion worker for Helion's default config of `request`'s kernel bound to its
    /// inputs (`request.call` is required; `input_sets` are ignored). The inner `Err` is the
    /// kernel's own failure (it did not import or bind).
    pub fn default_config(
        &mut self,
        request: &RunRequest,
        timeout: Duration,
    ) -> Result<Result<HelionConfig, KernelError>, RunError> {
        let call = request
            .call
            .as_ref()
            .ok_or_else(|| ProtocolError::Malformed {
                reason: "a default_config request needs the kernel's call".into(),
                line: String::new(),
            })?;
        let op = Op::DefaultConfig {
            mode: request.mode,
            source: &request.source,
            inputs: request.inputs.iter().map(WireTensor::encode).collect(),
            call,
        };
        let resp = self.call(op, timeout)?;
        default_config_result(resp)
    }

    /// Asks the worker for its Python, JAX and devices.
    pub fn probe(&mut self, timeout: Duration) -> Result<Availability, RunError> {
        let resp = self.call(Op::Probe, timeout)?;
        if !resp.ok {
            let error = resp.error.ok_or_else(|| ProtocolError::Malformed {
                reason: "failed probe without an error object".into(),
                line: String::new(),
            })?;
            return Err(match kernel_error(error) {
                Ok(k) => ProtocolError::Rejected {
                    kind: k.kind,
                    message: k.message,
                },
                Err(p) => p,
            }
            .into());
        }
        resp.probe.ok_or_else(|| {
            ProtocolError::Malformed {
                reason: "probe response without probe".into(),
                line: String::new(),
            }
            .into()
        })
    }

    /// Sends one request and waits for its response.
    fn call(&mut self, op: Op<'_>, timeout: Duration) -> Result<WireResponse, RunError> {
        if !self.healthy {
            return Err(self.crashed());
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut line = serde_json::to_vec(&WireRequest {
            v: PROTOCOL_VERSION,
            id,
            op,
        })
        .map_err(|e| RunError::Io(e.into()))?;
        line.push(b'\n');
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(self.crashed());
        };
        if let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            return Err(match e.kind() {
                std::io::ErrorKind::BrokenPipe => self.crashed(),
                _ => {
                    self.healthy = false;
                    RunError::Io(e)
                }
            });
        }
        self.receive(id, timeout)
    }

    /// Reads the response to request `id`.
    fn receive(&mut self, id: u64, timeout: Duration) -> Result<WireResponse, RunError> {
        let deadline = Instant::now() + timeout;
        let line = match self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                self.healthy = false;
                self.kill();
                return Err(RunError::Timeout { timeout });
            }
            Err(RecvTimeoutError::Disconnected) => return Err(self.crashed()),
        };
        let resp = match serde_json::from_slice::<WireResponse>(&line) {
            Ok(resp) => resp,
            Err(e) => {
                self.healthy = false;
                self.kill();
                let text = String::from_utf8_lossy(&line);
                return Err(ProtocolError::Malformed {
                    reason: e.to_string(),
                    line: text.trim_end().chars().take(200).collect(),
                }
                .into());
            }
        };
        if resp.v != PROTOCOL_VERSION {
            self.healthy = false;
            self.kill();
            return Err(ProtocolError::Version {
                got: resp.v,
                expected: PROTOCOL_VERSION,
            }
            .into());
        }
        if resp.id != Some(id) {
            // A worker that could not parse our request answers with id null and stays usable;
            // any other id means the stream is out of step.
            if resp.id.is_some() || resp.ok {
                self.healthy = false;
                self.kill();
                return Err(ProtocolError::WrongId {
                    expected: id,
                    got: resp.id,
                }
                .into());
            }
        }
        Ok(resp)
    }

    /// Collects the exit status and stderr of a worker whose stdout closed or stdin broke.
    fn crashed(&mut self) -> RunError {
        self.healthy = false;
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    self.kill();
                    break self.child.try_wait().ok().flatten();
                }
            }
        };
        // Let the stderr reader drain what the process wrote before dying (bounded: a
        // grandchild may hold the pipe open).
        let deadline = Instant::now() + Duration::from_millis(500);
        while !self.stderr.closed.load(Ordering::SeqCst) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        RunError::WorkerCrashed {
            status,
            stderr_tail: self.stderr_tail(),
        }
    }

    /// Kills the process and reaps it.
    fn kill(&mut self) -> Option<ExitStatus> {
        self.stdin = None;
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Killing is immediate and safe: the worker keeps no state worth flushing.
        self.kill();
        if let Some(handle) = self.stderr_thread.take()
            && self.stderr.closed.load(Ordering::SeqCst)
        {
            let _ = handle.join();
        }
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("pid", &self.child.id())
            .field("healthy", &self.healthy)
            .field("next_id", &self.next_id)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{
        FAST_COMPILE_XLA_FLAGS, PYTHON_FILES, Worker, XlaCompile, embedded_python_dir,
        sim_order_holds_for, xla_flags_with,
    };
    use crate::error::RunError;
    use std::time::Duration;

    /// What an installed binary runs: the embedded copies, written to the temporary directory,
    /// whose workers must find their protocol module there. On a Python without JAX (a bare
    /// venv) a worker that imported it answers with the protocol's import-failure hello.
    #[test]
    fn embedded_workers_import_their_protocol_module() {
        let dir = embedded_python_dir();
        for (name, source) in PYTHON_FILES {
            assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), source);
        }
        let scratch = tempfile::tempdir().unwrap();
        let venv = scratch.path().join("bare");
        let status = std::process::Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .expect("python3 runs");
        assert!(status.success());
        let python = crate::provision::venv_python(&venv);
        for (script, missing) in [("worker.py", "jax"), ("helion_worker.py", "torch")] {
            let err = Worker::spawn(&python, &dir.join(script), Duration::from_secs(60))
                .expect_err("a bare venv has no JAX");
            assert!(
                matches!(&err, RunError::JaxUnavailable { kind, message, .. }
                    if kind == "ModuleNotFoundError" && message.contains(&format!("'{missing}'"))),
                "{script}: {err:?}"
            );
        }
    }

    #[test]
    fn xla_compile_options_round_trip_their_names_and_refuse_others() {
        for c in XlaCompile::ALL {
            assert_eq!(c.name().parse::<XlaCompile>(), Ok(c));
        }
        let err = "quick".parse::<XlaCompile>().unwrap_err();
        assert!(
            err.contains("`quick`") && err.contains("fast, default"),
            "{err}"
        );
    }

    #[test]
    fn workers_pin_the_vector_isa_unless_the_user_chose_one() {
        let d = XlaCompile::Default;
        assert_eq!(xla_flags_with("", true, d), "--xla_cpu_max_isa=AVX2");
        // The pin is what makes an AVX-512 host sum in the modelled order.
        assert_eq!(
            sim_order_holds_for("x86_64", true, &xla_flags_with("", true, d)),
            Ok(())
        );
        for (arch, avx2, flags) in [
            ("aarch64", false, ""),
            ("x86_64", false, "--xla_cpu_max_isa=AVX2"),
            ("x86_64", true, "--xla_cpu_max_isa=AVX512"),
            (
                "x86_64",
                true,
                "--xla_cpu_max_isa=AVX2 --xla_backend_optimization_level=0",
            ),
        ] {
            let why = sim_order_holds_for(arch, avx2, flags).expect_err(flags);
            assert!(why.contains("pallas-sim models"), "{why}");
        }
        assert_eq!(
            xla_flags_with("--xla_dump_to=/tmp/d", true, d),
            "--xla_dump_to=/tmp/d --xla_cpu_max_isa=AVX2"
        );
        assert_eq!(
            xla_flags_with("--xla_cpu_max_isa=SSE4_2", true, d),
            "--xla_cpu_max_isa=SSE4_2"
        );
        // Other architectures have no such order to pin; the flags pass through.
        assert_eq!(
            xla_flags_with("--xla_dump_to=/d", false, d),
            "--xla_dump_to=/d"
        );
    }

    #[test]
    fn fast_compile_flags_are_added_unless_the_user_set_them() {
        let fast = xla_flags_with("", true, XlaCompile::Fast);
        assert_eq!(
            fast,
            format!(
                "--xla_cpu_max_isa=AVX2 {}",
                FAST_COMPILE_XLA_FLAGS.join(" ")
            )
        );
        let own = xla_flags_with(
            "--xla_backend_optimization_level=2",
            false,
            XlaCompile::Fast,
        );
        assert_eq!(
            own,
            "--xla_backend_optimization_level=2 --xla_cpu_use_fusion_emitters=false \
             --xla_llvm_disable_expensive_passes=true"
        );
    }
}
