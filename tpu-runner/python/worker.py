"""pallas-diff JAX/Pallas worker: runs emitted Pallas modules for the Rust pool.

Protocol version 1, JSON lines on stdin/stdout (one request per line, one response per line).
The full description is in ../README.md; the Rust side is src/protocol.rs.

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
requests meant for the worker.
"""

import atexit
import base64
import collections
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import time
import traceback

PROTOCOL_VERSION = 1
# TPU generation the CPU modes pretend to target (the abstract mesh's device kind).
TPU_KIND = os.environ.get("PALLAS_DIFF_TPU_KIND", "TPU v5e")
# Compiled kernels kept per worker (least recently used are dropped past this).
CACHE_SIZE = int(os.environ.get("PALLAS_DIFF_WORKER_CACHE", "64"))
# Longest traceback and message sent (the tail of a traceback, the head of a message).
MAX_TRACEBACK = 16000
MODES = ("pallas-interpret", "pallas-tpu-interpret", "pallas-tpu-lower", "pallas-tpu")
# The scratch directory the Rust side makes for every worker (PALLAS_DIFF_WORK_DIR). This
# worker writes nothing there; it removes it on a clean exit (stdin closed, as when a pool kept
# in a static outlives its last use), and the Rust side removes a killed worker's.
if os.environ.get("PALLAS_DIFF_WORK_DIR"):
    atexit.register(shutil.rmtree, os.environ["PALLAS_DIFF_WORK_DIR"], True)

# --- protocol streams: private copies of fds 0 and 1. User code sees /dev/null as stdin and
# stderr as stdout, at the Python and the C level alike. --------------------------------------
_proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
_requests = os.fdopen(os.dup(0), "rb")
os.dup2(2, 1)
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
sys.stdout = sys.stderr
sys.stdin = open(os.devnull)  # noqa: SIM115


def send(obj):
    _proto.write(json.dumps(obj, separators=(",", ":"), allow_nan=False))
    _proto.write("\n")
    _proto.flush()


# "Class: message", or a bare "Class" line (an `assert` without a message, as the TPU
# interpreter's own write check raises it).
_CAUSE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception))(?::\s|:?$)")


def error_response(req_id, stage, exc_type, message, tb=""):
    if len(tb) > MAX_TRACEBACK:
        tb = "...(truncated)...\n" + tb[-MAX_TRACEBACK:]
    if len(message) > MAX_TRACEBACK:
        message = message[:MAX_TRACEBACK] + "...(truncated)"
    error = {"stage": stage, "type": exc_type, "message": message, "traceback": tb}
    # A Python exception raised inside a JAX callback (the TPU interpreter's bounds checks)
    # reaches us wrapped in a runtime error whose message ends with "IndexError: ...".
    for line in reversed(message.strip().splitlines()):
        m = _CAUSE.match(line.strip())
        if m:
            if m.group(1) != exc_type:
                error["cause"] = m.group(1)
            break
    return {"v": PROTOCOL_VERSION, "id": req_id, "ok": False, "error": error}


class StageError(Exception):
    """An exception raised by user code, tagged with the stage it was raised in."""

    def __init__(self, stage, exc):
        super().__init__(str(exc))
        self.stage = stage
        self.exc = exc
        self.tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class Unavailable(Exception):
    """The requested engine cannot run here (e.g. pallas-tpu without a TPU)."""


class BadRequest(Exception):
    """A request that breaks the protocol (stage `protocol`)."""


# --- JAX import (once) ------------------------------------------------------------------------
try:
    import jax
    import jax.numpy as jnp  # noqa: F401
    import ml_dtypes
    import numpy as np
    from jax.experimental import pallas as pl  # noqa: F401  (warm the import for user modules)
    from jax.experimental.pallas import tpu as pltpu
    from jax._src.mesh import AbstractDevice
except BaseException as e:  # noqa: BLE001
    send(error_response(0, "import", type(e).__name__, str(e), traceback.format_exc()))
    sys.exit(3)

DTYPES = {
    "float32": np.dtype(np.float32),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int32": np.dtype(np.int32),
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


def abstract_tpu_mesh():
    dev = AbstractDevice(device_kind=TPU_KIND, num_cores=1, platform="tpu")
    return jax.sharding.AbstractMesh((1,), ("x",), abstract_device=dev)


ABSTRACT_MESH = abstract_tpu_mesh()


def tpu_devices():
    try:
        return [d for d in jax.devices() if d.platform == "tpu"]
    except RuntimeError:
        return []


def probe_info():
    try:
        devices = [str(d) for d in jax.devices()]
    except RuntimeError as e:
        devices = ["<jax.devices() failed: %s>" % e]
    import jaxlib

    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "jax": jax.__version__,
        "jaxlib": getattr(jaxlib, "__version__", "unknown"),
        "devices": devices,
        "tpu": bool(tpu_devices()),
        "tpu_kind": TPU_KIND,
        # The Rust side pins XLA:CPU's vector ISA here (worker.rs, PINNED_XLA_CPU_ISA): results
        # must not depend on the host's vector width.
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def interpret_for(mode):
    if mode == "pallas-interpret":
        return True
    if mode == "pallas-tpu-interpret":
        return pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")
    return False


def decode_input(t):
    if not isinstance(t, dict):
        raise BadRequest("input is not an object")
    name = t.get("dtype")
    if name not in DTYPES:
        raise BadRequest("unknown dtype %r" % (name,))
    shape = t.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise BadRequest("bad shape %r" % (shape,))
    raw = base64.b64decode(t.get("data", ""), validate=True)
    dt = DTYPES[name]
    n = 1
    for d in shape:
        n *= d
    if len(raw) != n * dt.itemsize:
        raise BadRequest("%s%r needs %d bytes, got %d" % (name, shape, n * dt.itemsize, len(raw)))
    return np.frombuffer(raw, dtype=dt).reshape(shape)  # wire and hosts are little-endian


def encode_output(x):
    a = np.asarray(x)
    name = DTYPE_NAMES.get(a.dtype)
    if name is None:
        raise TypeError("kernel output has dtype %s; the protocol carries float32, bfloat16, int32" % a.dtype)
    data = np.ascontiguousarray(a).tobytes()
    return {"dtype": name, "shape": list(a.shape), "data": base64.b64encode(data).decode("ascii")}


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


def as_tuple(out):
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def check_mode(mode):
    if mode not in MODES:
        raise BadRequest("unknown mode %r (expected one of %s)" % (mode, ", ".join(MODES)))
    if mode == "pallas-tpu" and not tpu_devices():
        raise Unavailable(
            "no TPU device: jax.devices() = %s (pallas-tpu needs a TPU host; "
            "use pallas-tpu-lower to check the Mosaic lowering on CPU)" % probe_info()["devices"]
        )


def decode_kernel(k):
    """The (source, arrays) of one kernel of a request (`run`, or an element of `run_batch`)."""
    source = k.get("source")
    if not isinstance(source, str):
        raise BadRequest("source is not a string")
    inputs = k.get("inputs", [])
    if not isinstance(inputs, list):
        raise BadRequest("inputs is not a list")
    return source, [decode_input(t) for t in inputs]


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
    source, arrays = decode_kernel(req)
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
    decoded = [decode_kernel(k) for k in kernels]
    results = [None] * len(decoded)

    def single(i):
        source, arrays = decoded[i]
        try:
            body = run_one(mode, source, arrays, stages)
            body["ok"] = True
        except StageError as e:
            if mode == "pallas-tpu-interpret":
                reset_interpreter()
            body = error_response(None, e.stage, type(e.exc).__name__, str(e.exc), e.tb)
            del body["v"], body["id"]
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
        resp = {"v": PROTOCOL_VERSION, "id": req_id, "ok": True}
        resp.update(body)
    except StageError as e:
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = error_response(req_id, e.stage, type(e.exc).__name__, str(e.exc), e.tb)
    except Unavailable as e:
        resp = error_response(req_id, "run", "EngineUnavailable", str(e))
    except BadRequest as e:
        resp = error_response(req_id, "protocol", "BadRequest", str(e))
    except Exception as e:  # noqa: BLE001  (a worker bug: report it and keep serving)
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = error_response(req_id, "protocol", type(e).__name__, str(e), traceback.format_exc())
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
        resp = {"v": PROTOCOL_VERSION, "id": req_id, "ok": True, "results": results, "split": split}
    except Unavailable as e:
        resp = error_response(req_id, "run", "EngineUnavailable", str(e))
    except BadRequest as e:
        resp = error_response(req_id, "protocol", "BadRequest", str(e))
    except Exception as e:  # noqa: BLE001  (a worker bug: report it and keep serving)
        if mode == "pallas-tpu-interpret":
            reset_interpreter()
        resp = error_response(req_id, "protocol", type(e).__name__, str(e), traceback.format_exc())
    resp["seconds"] = time.perf_counter() - start
    resp["stages"] = stages.seconds
    return resp


def reset_interpreter():
    try:
        pltpu.reset_tpu_interpret_mode_state()
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def main():
    send({"v": PROTOCOL_VERSION, "id": 0, "ok": True, "hello": probe_info()})
    for line in _requests:
        line = line.strip()
        if not line:
            continue
        req_id = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise BadRequest("request is not a JSON object")
            req_id = req.get("id")
            if req.get("v") != PROTOCOL_VERSION:
                raise BadRequest("protocol version %r, this worker speaks %d" % (req.get("v"), PROTOCOL_VERSION))
            op = req.get("op")
            if op == "run":
                resp = handle_run(req_id, req)
            elif op == "run_batch":
                resp = handle_batch(req_id, req)
            elif op == "probe":
                resp = {"v": PROTOCOL_VERSION, "id": req_id, "ok": True, "probe": probe_info()}
            elif op == "shutdown":
                send({"v": PROTOCOL_VERSION, "id": req_id, "ok": True})
                return
            else:
                raise BadRequest("unknown op %r" % (op,))
        except (BadRequest, ValueError) as e:
            resp = error_response(req_id, "protocol", type(e).__name__, str(e))
        try:
            send(resp)
        except ValueError as e:  # e.g. NaN in "seconds" cannot happen; non-JSON data in a field
            send(error_response(req_id, "protocol", type(e).__name__, str(e)))


if __name__ == "__main__":
    main()
