//! Harness failures on real processes: a killed worker, a module that kills its worker, a hang
//! past the timeout, a worker that answers garbage, a Python without JAX, failed provisioning.
//! None of them may panic, and the pool must keep working afterwards.

mod common;

use common::*;
use lang::tensor::DType;
use pallas_diff_tpu_runner::{
    Mode, Pool, PoolConfig, ProtocolError, ProvisionError, ProvisionOptions, RunError,
    provision_with,
};
use std::process::Command;
use std::time::{Duration, Instant};

fn one_worker_pool(timeout: Duration) -> Pool {
    let config = PoolConfig::new(python())
        .with_workers(1)
        .with_timeout(timeout);
    Pool::new(config).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_pool_works(pool: &Pool) {
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    let result = pool
        .run(&request(Mode::PallasInterpret, ADD_ONE, vec![x]))
        .unwrap();
    assert_eq!(result.outputs().expect("add_one runs")[0].values[7], 8.0);
}

#[test]
fn worker_killed_mid_request_is_replaced_and_the_request_retried() {
    let pool = one_worker_pool(Duration::from_secs(60));
    let pid = pool.worker_pids()[0];
    let source = add_one_after("time.sleep(2.0)", "killed mid-request");
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    let result = std::thread::scope(|s| {
        let run = s.spawn(|| pool.run(&request(Mode::PallasInterpret, &source, vec![x.clone()])));
        std::thread::sleep(Duration::from_millis(700));
        kill_9(pid);
        run.join().unwrap()
    });
    let result = result.expect("the retry on a fresh worker succeeds");
    assert_eq!(result.outputs().unwrap()[0].values[0], 1.0);
    let new_pid = pool.worker_pids()[0];
    assert_ne!(new_pid, pid, "the killed worker was replaced");
}

#[test]
fn module_that_kills_its_worker_twice_is_an_engine_crash() {
    let pool = one_worker_pool(Duration::from_secs(60));
    let source = add_one_after(
        "print('about to die', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
        "self kill",
    );
    let x = tensor(DType::Float32, &[8, 128], |_| 0.0);
    let err = pool
        .run(&request(Mode::PallasTpuInterpret, &source, vec![x]))
        .unwrap_err();
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
    assert_eq!(err.to_string().lines().count(), 1, "{err}");
    assert_pool_works(&pool);
}

#[test]
fn hang_past_the_timeout_is_a_timeout_and_the_pool_recovers() {
    let pool = one_worker_pool(Duration::from_secs(2));
    let pid = pool.worker_pids()[0];
    let source = add_one_after("time.sleep(60)", "hang");
    let x = tensor(DType::Float32, &[8, 128], |_| 0.0);
    let start = Instant::now();
    let err = pool
        .run(&request(Mode::PallasInterpret, &source, vec![x]))
        .unwrap_err();
    assert!(
        matches!(err, RunError::Timeout { timeout } if timeout == Duration::from_secs(2)),
        "{err:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_pool_works(&pool);
    assert_ne!(pool.worker_pids()[0], pid, "the hung worker was replaced");
}

/// A stand-in worker: says hello properly, then answers every request with `answer`.
fn fake_worker(dir: &tempfile::TempDir, name: &str, answer: &str) -> std::path::PathBuf {
    let script = format!(
        r#"import json, sys
print(json.dumps({{"v": 1, "id": 0, "ok": True, "hello": {{"python": "3", "jax": "fake", "devices": [], "tpu": False}}}}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    print({answer}, flush=True)
"#
    );
    let path = dir.path().join(name);
    std::fs::write(&path, script).unwrap();
    path
}

#[test]
fn malformed_responses_are_typed_protocol_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("garbage.py", r#""this is not json {""#),
        (
            "wrong_id.py",
            r#"json.dumps({"v": 1, "id": 999, "ok": True, "outputs": []})"#,
        ),
        (
            "wrong_version.py",
            r#"json.dumps({"v": 2, "id": req["id"], "ok": True})"#,
        ),
        (
            "bad_tensor.py",
            r#"json.dumps({"v": 1, "id": req["id"], "ok": True, "outputs": [{"dtype": "int32", "shape": [2], "data": "AAAA"}]})"#,
        ),
        (
            "no_outputs.py",
            r#"json.dumps({"v": 1, "id": req["id"], "ok": True})"#,
        ),
    ];
    let x = tensor(DType::Float32, &[2], |_| 0.0);
    for (name, answer) in cases {
        let script = fake_worker(&dir, name, answer);
        let config = PoolConfig::new("python3")
            .with_workers(1)
            .with_worker_script(script);
        let pool = Pool::new(config).unwrap_or_else(|e| panic!("{name}: {e}"));
        for _ in 0..2 {
            let err = pool
                .run(&request(Mode::PallasInterpret, "", vec![x.clone()]))
                .unwrap_err();
            let RunError::Protocol(p) = &err else {
                panic!("{name}: expected a protocol error, got {err:?}")
            };
            let ok = match name {
                "garbage.py" => {
                    matches!(p, ProtocolError::Malformed { line, .. } if line.contains("not json"))
                }
                "wrong_id.py" => matches!(
                    p,
                    ProtocolError::WrongId {
                        expected: _,
                        got: Some(999)
                    }
                ),
                "wrong_version.py" => matches!(p, ProtocolError::Version { got: 2, .. }),
                "bad_tensor.py" => matches!(p, ProtocolError::BadTensor(_)),
                _ => matches!(p, ProtocolError::Malformed { .. }),
            };
            assert!(ok, "{name}: {p:?}");
        }
    }
    // Garbage instead of the hello line fails the pool's start, typed as well.
    let script = dir.path().join("bad_hello.py");
    std::fs::write(
        &script,
        "print('hello?', flush=True)\nimport time\ntime.sleep(5)\n",
    )
    .unwrap();
    let err = Pool::new(
        PoolConfig::new("python3")
            .with_workers(1)
            .with_worker_script(script),
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError::Protocol(ProtocolError::Malformed { .. })),
        "{err:?}"
    );
}

#[test]
fn python_without_jax_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("nojax");
    let status = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 runs");
    assert!(status.success());
    let python = pallas_diff_tpu_runner::provision::venv_python(&venv);
    let err = Pool::new(PoolConfig::new(&python).with_workers(2)).unwrap_err();
    assert!(
        matches!(&err, RunError::JaxUnavailable { kind, .. } if kind == "ModuleNotFoundError"),
        "{err:?}"
    );
    let text = err.to_string();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("cannot import JAX") && text.contains("No module named 'jax'"),
        "{text}"
    );

    let err = pallas_diff_tpu_runner::probe(&python).unwrap_err();
    assert!(matches!(err, RunError::JaxUnavailable { .. }), "{err:?}");

    let missing = dir.path().join("no-such-python");
    let err = Pool::new(PoolConfig::new(&missing).with_workers(1)).unwrap_err();
    assert!(matches!(err, RunError::Spawn { .. }), "{err:?}");
}

#[test]
fn impossible_provisioning_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let options = ProvisionOptions {
        runtime: pallas_diff_tpu_runner::Runtime::Jax,
        venv: dir.path().join("venv-a"),
        base_python: dir.path().join("no-python3").into_os_string(),
        jax_version: None,
        helion_version: None,
        verbose: false,
    };
    let err = provision_with(&options).unwrap_err();
    assert!(matches!(err, ProvisionError::NoPython { .. }), "{err:?}");
    let text = err.to_string();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("PALLAS_DIFF_PYTHON"), "{text}");

    // pip cannot install a JAX that does not exist (offline, pip fails the same way).
    let options = ProvisionOptions {
        runtime: pallas_diff_tpu_runner::Runtime::Jax,
        venv: dir.path().join("venv-b"),
        base_python: "python3".into(),
        jax_version: Some("0.0.0.1".into()),
        helion_version: None,
        verbose: false,
    };
    let err = provision_with(&options).unwrap_err();
    let ProvisionError::CommandFailed { command, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(command.contains("pip install"), "{command}");
    assert_eq!(err.to_string().lines().count(), 1, "{err}");
}
