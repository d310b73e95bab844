"""pallas-diff worker protocol, version 1: what worker.py and helion_worker.py share.

This module owns the wire side of both workers: the protocol streams, the request loop with
its version check and the `probe` and `shutdown` ops, error responses, the checks of a
request's kernel and tensors, the tensor encoding, and the environment fields of the hello
line. Each worker adds its own ops and turns wire tensors into its own arrays (numpy for JAX,
torch for Helion). The full description is in ../README.md; the Rust side is src/protocol.rs.

Importing it imports neither JAX nor torch (its JAX helpers import JAX when called, once the
worker has), so a worker can report a failed import of its environment on the protocol. The
Rust side ships it next to the workers (src/worker.rs), and a worker imports it as a
sibling module.
"""

import base64
import json
import os
import platform
import re
import sys
import traceback

PROTOCOL_VERSION = 1
# TPU generation the CPU modes pretend to target (the abstract mesh's device kind).
TPU_KIND = os.environ.get("PALLAS_DIFF_TPU_KIND", "TPU v5e")
# Longest traceback and message sent (the tail of a traceback, the head of a message).
MAX_TRACEBACK = 16000
# The element types the protocol carries, with their sizes in bytes.
ITEMSIZE = {"float32": 4, "bfloat16": 2, "int32": 4}

# The protocol streams, set by claim_stdio().
_proto = None
_requests = None


def claim_stdio():
    """Makes private copies of fds 0 and 1 for the protocol, and shows user code /dev/null as
    stdin and stderr as stdout, at the Python and the C level alike: nothing the emitted code or
    Helion prints reaches the protocol stream, and nothing can read requests meant for the
    worker. Called first, before the worker imports anything that may print."""
    global _proto, _requests
    _proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    _requests = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)  # noqa: SIM115


def send(obj):
    _proto.write(json.dumps(obj, separators=(",", ":"), allow_nan=False))
    _proto.write("\n")
    _proto.flush()


class BadRequest(Exception):
    """A request that breaks the protocol (stage `protocol`)."""


class StageError(Exception):
    """An exception raised by user code (or Helion), tagged with the stage it was raised in."""

    def __init__(self, stage, exc):
        super().__init__(str(exc))
        self.stage = stage
        self.exc = exc
        self.tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


# --- responses --------------------------------------------------------------------------------
def ok_response(req_id, **body):
    """A successful response; `body`'s fields follow `ok` in the order given."""
    resp = {"v": PROTOCOL_VERSION, "id": req_id, "ok": True}
    resp.update(body)
    return resp


# "Class: message", or a bare "Class" line (an `assert` without a message, as the TPU
# interpreter's own write check raises it).
_CAUSE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception))(?::\s|:?$)")


def error_object(stage, exc_type, message, tb="", extra=None):
    """The `error` object of a failed response (or of one kernel of a `run_batch`)."""
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
    if extra:
        error.update(extra)
    return error


def error_response(req_id, stage, exc_type, message, tb="", extra=None):
    """A failed response."""
    return _failed(req_id, error_object(stage, exc_type, message, tb, extra))


def _failed(req_id, error):
    return {"v": PROTOCOL_VERSION, "id": req_id, "ok": False, "error": error}


def stage_error_object(e, extra=None):
    """The `error` object of a kernel that raised StageError `e`."""
    return error_object(e.stage, type(e.exc).__name__, str(e.exc), e.tb, extra)


def stage_error_response(req_id, e, extra=None):
    """The response to a request whose kernel raised StageError `e`."""
    return _failed(req_id, stage_error_object(e, extra))


def bad_request_response(req_id, e):
    return error_response(req_id, "protocol", "BadRequest", str(e))


def worker_bug_response(req_id, e):
    """The response to a request that hit a bug in the worker (called in the `except` clause,
    for its traceback): reported as a protocol error, and the worker keeps serving."""
    return error_response(req_id, "protocol", type(e).__name__, str(e), traceback.format_exc())


def import_failed(e):
    """Reports a failed import of the worker's environment as its hello line and exits with
    status 3 (called in the `except` clause, for its traceback)."""
    send(error_response(0, "import", type(e).__name__, str(e), traceback.format_exc()))
    sys.exit(3)


# --- requests ---------------------------------------------------------------------------------
def check_mode(mode, modes):
    if mode not in modes:
        raise BadRequest("unknown mode %r (expected one of %s)" % (mode, ", ".join(modes)))


def decode_kernel(k, decode_input):
    """The (source, inputs) of one kernel of a request (`run`, or an element of `run_batch`),
    each input a wire tensor passed through `decode_input`."""
    source = k.get("source")
    if not isinstance(source, str):
        raise BadRequest("source is not a string")
    inputs = k.get("inputs", [])
    if not isinstance(inputs, list):
        raise BadRequest("inputs is not a list")
    return source, [decode_input(t) for t in inputs]


# --- tensors on the wire ----------------------------------------------------------------------
def decode_tensor(t):
    """The (dtype name, shape, raw little-endian bytes) of a wire tensor, checked."""
    if not isinstance(t, dict):
        raise BadRequest("input is not an object")
    name = t.get("dtype")
    if name not in ITEMSIZE:
        raise BadRequest("unknown dtype %r" % (name,))
    shape = t.get("shape")
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise BadRequest("bad shape %r" % (shape,))
    data = t.get("data", "")
    if not isinstance(data, str):
        raise BadRequest("data is not a string")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as e:
        raise BadRequest("data is not base64: %s" % e)
    n = 1
    for d in shape:
        n *= d
    if len(raw) != n * ITEMSIZE[name]:
        raise BadRequest("%s%r needs %d bytes, got %d" % (name, shape, n * ITEMSIZE[name], len(raw)))
    return name, shape, raw


def encode_tensor(name, shape, data):
    """A wire tensor of dtype `name` from its raw little-endian bytes."""
    return {"dtype": name, "shape": list(shape), "data": base64.b64encode(data).decode("ascii")}


def dtype_name(names, dtype):
    """The wire name of an output's `dtype` (`names` maps the worker's dtypes to wire names)."""
    name = names.get(dtype)
    if name is None:
        raise TypeError("kernel output has dtype %s; the protocol carries float32, bfloat16, int32" % dtype)
    return name


def as_tuple(out):
    """A kernel's result as a tuple of outputs (a single array is accepted too)."""
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


# --- the environment --------------------------------------------------------------------------
def probe_fields():
    """The hello line's and `probe`'s fields both workers report (once JAX is imported)."""
    import jax
    import jaxlib

    try:
        devices = [str(d) for d in jax.devices()]
    except RuntimeError as e:
        devices = ["<jax.devices() failed: %s>" % e]
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


def tpu_devices():
    import jax

    try:
        return [d for d in jax.devices() if d.platform == "tpu"]
    except RuntimeError:
        return []


def abstract_tpu_mesh():
    """The abstract mesh the CPU modes run in: `pltpu.emit_pipeline` and some lowering rules
    ask for the TPU's properties."""
    import jax
    from jax._src.mesh import AbstractDevice

    dev = AbstractDevice(device_kind=TPU_KIND, num_cores=1, platform="tpu")
    return jax.sharding.AbstractMesh((1,), ("x",), abstract_device=dev)


# --- the request loop -------------------------------------------------------------------------
def serve(probe_info, handlers):
    """Sends the hello line, then answers requests until `shutdown` or the end of stdin.

    `probe_info()` gives the hello line's and `probe`'s fields; `handlers` maps the worker's
    own ops to `handler(req_id, req) -> response`. A malformed request is answered with a
    `protocol`-stage error and the worker goes on."""
    send(ok_response(0, hello=probe_info()))
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
            # An op that is not a string (a list, say) is not hashable: no handler's.
            handler = handlers.get(op) if isinstance(op, str) else None
            if handler is not None:
                resp = handler(req_id, req)
            elif op == "probe":
                resp = ok_response(req_id, probe=probe_info())
            elif op == "shutdown":
                send(ok_response(req_id))
                return
            else:
                raise BadRequest("unknown op %r" % (op,))
        except (BadRequest, ValueError) as e:
            resp = error_response(req_id, "protocol", type(e).__name__, str(e))
        try:
            send(resp)
        except ValueError as e:  # a value JSON cannot carry (NaN, say) in a field
            send(error_response(req_id, "protocol", type(e).__name__, str(e)))
