//! Harness failures of the Helion worker on real processes, as `faults.rs` checks them for the
//! JAX worker: a worker killed mid-request is replaced and the request retried, a case script
//! that kills its worker twice is an engine crash, a hang past the timeout is a timeout, and
//! the pool keeps working after each. They need the Helion environment (~6 GB, `pallas-diff
//! provision --helion`) and skip, saying why, without it.

mod common;

use common::{kill_9, tensor};
use lang::tensor::DType;
use pallas_diff_tpu_runner::{
    CallArg, KernelCall, Mode, Pool, PoolConfig, RunError, RunRequest, Runtime,
    helion_python_if_present,
};
use std::time::{Duration, Instant};

/// Helion 1.5.1 lowers and runs this; `twice(x)` is `2 * x`.
const TWICE: &str = r#"import os, signal, time
import torch
import helion
import helion.language as hl

# BEFORE


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def twice(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = x[tile, :] * 2.0
    return out
"#;

/// A one-worker Helion pool with `timeout`, or `None` (after saying why) without the Helion
/// environment.
fn helion_pool(timeout: Duration) -> Option<Pool> {
    match helion_python_if_present() {
        Ok(python) => Some(
            Pool::new(
                PoolConfig::for_runtime(Runtime::Helion, python)
                    .with_workers(1)
                    .with_timeout(timeout),
            )
            .unwrap_or_else(|e| panic!("the Helion worker does not start: {e}")),
        ),
        Err(why) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skip helion_faults: {why}");
            None
        }
    }
}

/// The request that runs `twice` with `before` as module-level statements run when the worker
/// loads the case script (`tag` makes the source distinct, defeating the worker's cache).
fn twice_after(before: &str, tag: &str) -> RunRequest {
    RunRequest {
        mode: Mode::HelionPallas,
        source: TWICE.replace("# BEFORE", &format!("# {tag}\n{before}")),
        inputs: vec![tensor(DType::Float32, &[16, 128], |i| i as f64)],
        call: Some(KernelCall {
            kernel: "twice".into(),
            args: vec![CallArg::Input(0)],
        }),
        input_sets: Vec::new(),
    }
}

fn assert_pool_works(pool: &Pool) {
    let result = pool.run(&twice_after("", "plain")).expect("twice runs");
    let outputs = result.outcome.expect("Helion lowers twice");
    assert_eq!(outputs[0].values[7], 14.0);
}

#[test]
fn a_helion_worker_killed_mid_request_is_replaced_and_the_request_retried() {
    let Some(pool) = helion_pool(Duration::from_secs(120)) else {
        return;
    };
    let pid = pool.worker_pids()[0];
    let request = twice_after("time.sleep(4.0)", "killed mid-request");
    let result = std::thread::scope(|s| {
        let run = s.spawn(|| pool.run(&request));
        std::thread::sleep(Duration::from_millis(1500));
        kill_9(pid);
        run.join().unwrap()
    });
    let result = result.expect("the retry on a fresh worker succeeds");
    assert_eq!(result.outcome.expect("lowered")[0].values[3], 6.0);
    assert_ne!(pool.worker_pids()[0], pid, "the killed worker was replaced");
}

#[test]
fn a_case_script_that_kills_its_helion_worker_twice_is_an_engine_crash() {
    let Some(pool) = helion_pool(Duration::from_secs(120)) else {
        return;
    };
    let request = twice_after(
        "print('about to die', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
        "self kill",
    );
    let err = pool.run(&request).unwrap_err();
    match &err {
        RunError::EngineCrash {
            status,
            stderr_tail,
        } => {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.and_then(|s| s.signal()), Some(9), "{err}");
            assert!(stderr_tail.contains("about to die"), "{stderr_tail:?}");
        }
        other => panic!("expected EngineCrash, got {other:?}"),
    }
    assert_pool_works(&pool);
}

#[test]
fn a_helion_hang_past_the_timeout_is_a_timeout_and_the_pool_recovers() {
    // 30 s: a plain Helion run of `twice` (trace, codegen, interpret) takes a few seconds here.
    let timeout = Duration::from_secs(30);
    let Some(pool) = helion_pool(timeout) else {
        return;
    };
    let pid = pool.worker_pids()[0];
    let start = Instant::now();
    let err = pool
        .run(&twice_after("time.sleep(600)", "hang"))
        .unwrap_err();
    assert!(
        matches!(err, RunError::Timeout { timeout: t } if t == timeout),
        "{err:?}"
    );
    // Killed at the timeout, not left to finish its sleep.
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "{:?}",
        start.elapsed()
    );
    assert_pool_works(&pool);
    assert_ne!(pool.worker_pids()[0], pid, "the hung worker was replaced");
}

#[test]
fn a_killed_helion_worker_leaves_no_scratch_directory() {
    let Some(pool) = helion_pool(Duration::from_secs(120)) else {
        return;
    };
    // Each worker that loads the script notes its scratch directory, then dies; the pool
    // retries once on a fresh worker, so two directories are noted.
    let side = tempfile::tempdir().unwrap();
    let note = side.path().join("work-dirs");
    let before = format!(
        "open({:?}, 'a').write(os.environ['PALLAS_DIFF_WORK_DIR'] + '\\n'); \
         os.kill(os.getpid(), signal.SIGKILL)",
        note.display().to_string()
    );
    let err = pool.run(&twice_after(&before, "scratch")).unwrap_err();
    assert!(matches!(err, RunError::EngineCrash { .. }), "{err}");
    let noted = std::fs::read_to_string(&note).expect("the script ran");
    let dirs: Vec<&str> = noted.lines().collect();
    assert_eq!(dirs.len(), 2, "{noted}");
    for dir in dirs {
        assert!(
            !std::path::Path::new(dir).exists(),
            "{dir} outlived its killed worker"
        );
    }
    // The replacement worker has a directory of its own while it lives.
    assert_pool_works(&pool);
}
