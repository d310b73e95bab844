"""pallas-diff JAX/Pallas worker: runs emitted Pallas modules for the Rust pool.

Protocol version 1, JSON lines on stdin/stdout (one request per line, one response per line).
The full description is in ../README.md; the Rust side is src/protocol.rs. The request loop,
the checks of a request, tensors on the wire and error responses are worker_protocol.py's, which
this worker shares with helion_worker.py; this file owns running emitted modules in JAX.

On start the worker imports JAX once and writes a hello line:
    {"v":1,"id":0,"ok":true,"hello":{...probe fields...}}
or, when JAX cannot be imported,
    {"v":1,"id":0,"ok":false,"error":{"stage":"import",...}}  and exits with status 3.

Requests:
    {"v":1,"id":N,"op":"run","mode":M,"source":"...","inputs":[{"dtype":..,"shape":[..],"data":"<b64>"}]}
    {"v":1,"id":N,"op":"probe"}
    {"v":1,"id":N,"op":"shutdown"}

Nothing user code prints reaches the protocol stream: at start-up file descriptors 0 and 1
are duplicated for the protocol, then fd 1 is pointed at stderr and fd 0 at /dev/null, so
Python prints and C-level writes of the emitted code land on stderr, and it cannot read
requests meant for the worker (worker_protocol.claim_stdio).
"""

import atexit
import collections
import hashlib
import os
import shutil
import time
import traceback

import worker_protocol
from worker_protocol import (
    BadRequest,
    StageError,
    as_tuple,
    bad_request_response,
    decode_kernel,
    dtype_name,
    error_response,
    ok_response,
    stage_error_object,
    stage_error_response,
    worker_bug_response,
)

worker_protocol.claim_stdio()

# Compiled kernels kept per worker (least recently used are dropped past this).
CACHE_SIZE = int(os.environ.get("PALLAS_DIFF_WORKER_CACHE", "64"))
MODES = ("pallas-interpret", "pallas-tpu-interpret", "pallas-tpu-lower", "pallas-tpu")
# The scratch directory the Rust side makes for every worker (PALLAS_DIFF_WORK_DIR). This
# worker writes nothing there; it removes it on a clean exit (stdin closed, as when a pool kept
# in a static outlives its last use), and the Rust side removes a killed worker's.
if os.environ.get("PALLAS_DIFF_WORK_DIR"):
    atexit.register(shutil.rmtree, os.environ["PALLAS_DIFF_WORK_DIR"], True)


class Unavailable(Exception):
    """The requested engine cannot run here (e.g. pallas-tpu without a TPU)."""


# --- JAX import (once) ------------------------------------------------------------------------
try:
    import jax
    import jax.numpy as jnp  # noqa: F401
    import ml_dtypes
    import numpy as np
    from jax.experimental import pallas as pl  # noqa: F401  (warm the import for user modules)
    from jax.experimental.pallas import tpu as pltpu
    # worker_protocol.abstract_tpu_mesh's: a JAX without it fails here, on the protocol.
    from jax._src.mesh import AbstractDevice  # noqa: F401
except BaseException as e:  # noqa: BLE001
    worker_protocol.import_failed(e)

DTYPES = {
    "float32": np.dtype(np.float32),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int32": np.dtype(np.int32),
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


ABSTRACT_MESH = worker_protocol.abstract_tpu_mesh()


def interpret_for(mode):
    if mode == "pallas-interpret":
        return True
    if mode == "pallas-tpu-interpret":
        return pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")
    return False


def decode_input(t):
    name, shape, raw = worker_protocol.decode_tensor(t)
    return np.frombuffer(raw, dtype=DTYPES[name]).reshape(shape)  # wire and hosts are little-endian


def encode_output(x):
    a = np.asarray(x)
    name = dtype_name(DTYPE_NAMES, a.dtype)
    return worker_protocol.encode_tensor(name, a.shape, np.ascontiguousarray(a).tobytes())


class Entry:
    """One (source, mode): the executed module, its function, and compiled executables."""

    def __init__(self, fn):
        self.fn = fn
        self.jitted = jax.jit(fn)
        self.compiled = {}  # input signature -> compiled executable (or True once lowered)


CACHE = collections.OrderedDict()


def load_module(source, key):
    namespace = {"__name__": "pallas_diff_case_" + key[:12], "__file__": "<pallas-diff case %s>" % key[:12]}
    code = compile(source, namespace["__file__"], "exec")
    exec(code, namespace)
    make = namespace.get("make")
    if not callable(make):
        raise AttributeError("the module defines no make(interpret) function")
    return make


def check_mode(mode):
    worker_protocol.check_mode(mode, MODES)
    if mode == "pallas-tpu" and not worker_protocol.tpu_devices():
        raise Unavailable(
            "no TPU device: jax.devices() = %s (pallas-tpu needs a TPU host; "
            "use pallas-tpu-lower to check the Mosaic lowering on CPU)" % worker_protocol.probe_fields()["devices"]
        )


class Stages:
    """Seconds spent per stage of a request: `trace` (executing the module, `make`, tracing to a
    jaxpr), `lower` (to StableHLO; for pallas-tpu-lower the TPU export), `compile` (XLA) and
    `run` (the call, waiting for and encoding the outputs)."""

    NAMES = ("trace", "lower", "compile", "run")

    def __init__(self):
        self.seconds = dict.fromkeys(self.NAMES, 0.0)

    def timed(self, name, stage, f, *args):
        """Calls f(*args), adding its time to `name`; an exception becomes a StageError of
        protocol stage `stage`."""
        start = time.perf_counter()
        try:
            return f(*args)
        except BaseException as e:  # noqa: BLE001
            raise StageError(stage, e)
        finally:
            self.seconds[name] += time.perf_counter() - start

    def add(self, other):
        for k, v in other.seconds.items():
            self.seconds[k] += v


def entry_for(source, mode, stages):
    """The cached Entry of (source, mode), executing the module and calling `make` if new."""
    key = hashlib.sha256(source.encode("utf-8")).hexdigest()
    entry = CACHE.get((key, mode))
    if entry is not None:
        CACHE.move_to_end((key, mode))
        return entry
    make = stages.timed("trace", "import", load_module, source, key)
    fn = stages.timed("trace", "trace", make, interpret_for(mode))
    entry = Entry(fn)
    CACHE[(key, mode)] = entry
    while len(CACHE) > CACHE_SIZE:
        CACHE.popitem(last=False)
    return entry


def encode_outputs(outs):
    outs = as_tuple(outs)
    jax.block_until_ready(outs)
    return [encode_output(o) for o in outs]


def run_one(mode, source, arrays, stages):
    """One kernel on its own: its response body, or a StageError."""
    entry = entry_for(source, mode, stages)
    signature = tuple((a.dtype.str, a.shape) for a in arrays)
    compiled = entry.compiled.get(signature)
    cached = compiled is not None
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]

    if mode == "pallas-tpu-lower":
        if not cached:
            stages.timed("trace", "trace", entry.jitted.trace, *specs)
            export = jax.export.export(entry.jitted, platforms=["tpu"])
            stages.timed("lower", "lower", export, *specs)
            entry.compiled[signature] = True
        return {"outputs": [], "lowered": True, "cached": cached}

    if not cached:
        traced = stages.timed("trace", "trace", entry.jitted.trace, *specs)
        # A StableHLO lowering error has always been reported as stage `trace` (it was one
        # `jitted.lower` call); only its time is told apart.
        lowered = stages.timed("lower", "trace", traced.lower)
        compiled = stages.timed("compile", "run", lowered.compile)
        entry.compiled[signature] = compiled
    encoded = stages.timed("run", "run", lambda: encode_outputs(compiled(*arrays)))
    return {"outputs": encoded, "cached": cached}


def run_request(req):
    mode = req.get("mode")
    check_mode(mode)
    source, arrays = decode_kernel(req, decode_input)
    stages = Stages()
    body = run_one(mode, source, arrays, stages)
    body["stages"] = stages.seconds
    return body


# Modes whose kernels a `run_batch` compiles together. The lowering check and a real TPU run
# their kernels one by one inside the request (nothing measured says batching pays there).
BATCHED_MODES = ("pallas-interpret", "pallas-tpu-interpret")


def combined(fns, arities):
    """One function running every kernel of a batch: its inputs are the kernels' inputs in
    order, its result a tuple with one tuple of outputs per kernel."""

    def f(*flat):
        outs = []
        at = 0
        for fn, n in zip(fns, arities):
            outs.append(as_tuple(fn(*flat[at : at + n])))
            at += n
        return tuple(outs)

    return f


def run_batch_request(req, stages):
    """The results of a `run_batch`: one response body per kernel (`ok` and `outputs`, or `ok`
    false and `error`). The kernels are compiled as ONE jitted function (XLA's compile cost per
    kernel falls with the batch: 1.3x kernels/s at 8 kernels, 1.6x at 32, measured 2026-12-01);
    when anything about that fails, every kernel is run again on its own, so each failure is
    the failure of one kernel, with its own stage."""
    mode = req.get("mode")
    check_mode(mode)
    kernels = req.get("kernels")
    if not isinstance(kernels, list):
        raise BadRequest("kernels is not a list")
    decoded = [decode_kernel(k, decode_input) for k in kernels]
    results = [None] * len(decoded)

    def single(i):
        source, arrays = decoded[i]
        try:
            body = run_one(mode, source, arrays, stages)
            body["ok"] = True
        except StageError as e:
            if mode == "pallas-tpu-interpret":
                reset_interpreter()
            body = {"ok": False, "error": stage_error_object(e)}
        body["batched"] = False
        results[i] = body

    if mode not in BATCHED_MODES or len(decoded) < 2:
        for i in range(len(decoded)):
            single(i)
        return results, False

    # Import and `make` per kernel: a kernel failing there is reported on its own and left out.
    fns, members = [], []
    for i, (source, _) in enumerate(decoded):
        try:
            fns.append(entry_for(source, mode, stages).fn)
            members.append(i)
        except StageError:
            single(i)
    arrays = [a for i in members for a in decoded[i][1]]
    try:
        jitted = jax.jit(combined(fns, [len(decoded[i][1]) for i in members]))
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
        traced = stages.timed("trace", "trace", jitted.trace, *specs)
        lowered = stages.timed("lower", "trace", traced.lower)
        compiled = stages.timed("compile", "run", lowered.compile)

        def call():
            outs = compiled(*arrays)
            jax.block_until_ready(outs)
            return [[encode_output(o) for o in group] for group in outs]

        groups = stages.timed("run", "run", call)
    except StageError:
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        for i in members:
            single(i)
        return results, True
    for i, outputs in zip(members, groups):
        results[i] = {"ok": True, "outputs": outputs, "cached": False, "batched": True}
    return results, False


def handle_run(req_id, req):
    mode = req.get("mode")
    start = time.perf_counter()
    try:
        if mode == "pallas-tpu":
            body = run_request(req)
        else:
            with jax.sharding.use_abstract_mesh(ABSTRACT_MESH):
                body = run_request(req)
        resp = ok_response(req_id, **body)
    except StageError as e:
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = stage_error_response(req_id, e)
    except Unavailable as e:
        resp = error_response(req_id, "run", "EngineUnavailable", str(e))
    except BadRequest as e:
        resp = bad_request_response(req_id, e)
    except Exception as e:  # noqa: BLE001  (a worker bug: report it and keep serving)
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = worker_bug_response(req_id, e)
    resp["seconds"] = time.perf_counter() - start
    return resp


def handle_batch(req_id, req):
    mode = req.get("mode")
    start = time.perf_counter()
    stages = Stages()
    try:
        if mode == "pallas-tpu":
            results, split = run_batch_request(req, stages)
        else:
            with jax.sharding.use_abstract_mesh(ABSTRACT_MESH):
                results, split = run_batch_request(req, stages)
        resp = ok_response(req_id, results=results, split=split)
    except Unavailable as e:
        resp = error_response(req_id, "run", "EngineUnavailable", str(e))
    except BadRequest as e:
        resp = bad_request_response(req_id, e)
    except Exception as e:  # noqa: BLE001  (a worker bug: report it and keep serving)
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = worker_bug_response(req_id, e)
    resp["seconds"] = time.perf_counter() - start
    resp["stages"] = stages.seconds
    return resp


def reset_interpreter():
    try:
        pltpu.reset_tpu_interpret_mode_state()
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def main():
    worker_protocol.serve(worker_protocol.probe_fields, {"run": handle_run, "run_batch": handle_batch})


if __name__ == "__main__":
    main()
