//! The workers' shared protocol module (`python/worker_protocol.py`) on its own: an echo worker
//! built on it, run on any `python3` (the module imports neither JAX nor torch), answered
//! through the Rust side's [`Worker`]. Its request loop, tensor codec and error responses are
//! checked against `src/protocol.rs` without provisioning anything.

use lang::tensor::{DType, Tensor};
use pallas_diff_tpu_runner::{
    Mode, ProtocolError, RunError, RunRequest, Stage, Worker, worker_script,
};
use std::path::PathBuf;
use std::time::Duration;

/// A worker whose `run` returns its inputs, raises a kernel error for a source `raise <message>`
/// and refuses the source `bad` as a bad request; it prints at start, which must reach stderr,
/// not the protocol.
fn echo_worker(dir: &tempfile::TempDir) -> PathBuf {
    let python_dir = worker_script().parent().unwrap().to_path_buf();
    let script = format!(
        r#"import sys
sys.path.insert(0, {python_dir:?})
import worker_protocol as wp

wp.claim_stdio()
print("echo worker: this goes to stderr")


def run(req_id, req):
    wp.check_mode(req.get("mode"), ("pallas-interpret",))
    source, tensors = wp.decode_kernel(req, wp.decode_tensor)
    if source == "bad":
        raise wp.BadRequest("told to refuse")
    if source.startswith("raise "):
        try:
            raise RuntimeError(source[len("raise "):])
        except RuntimeError as e:
            return wp.stage_error_response(req_id, wp.StageError("trace", e))
    return wp.ok_response(req_id, outputs=[wp.encode_tensor(*t) for t in tensors], cached=False)


wp.serve(lambda: {{"python": "3", "jax": "none", "devices": [], "tpu": False}}, {{"run": run}})
"#,
        python_dir = python_dir.display().to_string()
    );
    let path = dir.path().join("echo_worker.py");
    std::fs::write(&path, script).unwrap();
    path
}

fn spawn(dir: &tempfile::TempDir) -> Worker {
    Worker::spawn(
        "python3".as_ref(),
        &echo_worker(dir),
        Duration::from_secs(30),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn tensors_round_trip_through_the_shared_codec() {
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn(&dir);
    assert_eq!(worker.hello().jax_version, "none");
    let inputs: Vec<Tensor> = DType::ALL
        .into_iter()
        .map(|d| Tensor::new(d, vec![2, 3], vec![1.0, -3.0, 65536.0, 0.5, -0.0, 7.0]))
        .chain([Tensor::new(DType::Float32, vec![0, 4], vec![])])
        .collect();
    let request = RunRequest::module(Mode::PallasInterpret, "echo", inputs.clone());
    let result = worker.run(&request, Duration::from_secs(30)).unwrap();
    assert_eq!(result.outputs().expect("echo succeeds"), inputs.as_slice());
    assert!(!result.cached && !result.lowered);
}

#[test]
fn errors_are_kernel_outcomes_or_refusals_and_the_worker_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn(&dir);
    let timeout = Duration::from_secs(30);

    // A wrapped exception: the class on the message's last `XxxError:` line is the cause.
    let source = "raise callback failed\nIndexError: index 9 is out of bounds";
    let request = RunRequest::module(Mode::PallasInterpret, source, vec![]);
    let result = worker.run(&request, timeout).unwrap();
    let err = result.kernel_error().expect("a kernel error");
    assert_eq!(
        (err.stage, err.kind.as_str(), err.cause.as_deref()),
        (Stage::Trace, "RuntimeError", Some("IndexError"))
    );
    assert!(err.traceback.contains("RuntimeError"), "{}", err.traceback);

    for (mode, source, says) in [
        (Mode::PallasInterpret, "bad", "told to refuse"),
        (
            Mode::PallasTpuLower,
            "echo",
            "unknown mode 'pallas-tpu-lower'",
        ),
    ] {
        let request = RunRequest::module(mode, source, vec![]);
        match worker.run(&request, timeout) {
            Err(RunError::Protocol(ProtocolError::Rejected { kind, message })) => {
                assert_eq!(kind, "BadRequest");
                assert!(message.contains(says), "{message}");
            }
            other => panic!("{source}: expected a rejection, got {other:?}"),
        }
        assert!(worker.is_healthy());
    }

    let probe = worker.probe(timeout).unwrap();
    assert_eq!(&probe, worker.hello());
    assert!(
        worker
            .stderr_tail()
            .contains("echo worker: this goes to stderr"),
        "{}",
        worker.stderr_tail()
    );
}
