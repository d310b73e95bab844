"""pallas-diff Helion worker: runs case-script kernels through real Helion (1.5.1) for the Rust pool.

Protocol version 1, JSON lines on stdin/stdout, framed exactly like worker.py (one request per
line, one response per line). The Rust side is src/protocol.rs. The request loop, the checks of
a request, tensors on the wire and error responses are worker_protocol.py's, which this worker
shares with worker.py; this file owns running case kernels through Helion.

On start the worker imports torch, helion, helion.language and JAX once and writes a hello line:
    {"v":1,"id":0,"ok":true,"hello":{"python","python_executable","jax","jaxlib","devices",
                                     "tpu","tpu_kind","xla_flags","helion","torch"}}
or, when an import fails,
    {"v":1,"id":0,"ok":false,"error":{"stage":"import",...}}  and exits with status 3.

Requests:
    {"v":1,"id":N,"op":"run","mode":M,"source":"<kernel module>","inputs":[T,...],
     "call":{"kernel":"<function name>","args":[{"input":0},{"int":12},...]},
     "input_sets":[[T,...],...]}          ("input_sets" optional)
    {"v":1,"id":N,"op":"default_config","mode":M,"source":...,"inputs":[T,...],"call":{...}}
                                      -> {"v":1,"id":N,"ok":true,"outputs":[],"config":{...}}
      Helion's default config (what autotune_effort="none" runs) for the kernel bound to the
      call's arguments; nothing is compiled. Errors as for run (stages import, trace).
    {"v":1,"id":N,"op":"probe"}       -> {"v":1,"id":N,"ok":true,"probe":{...hello fields...}}
    {"v":1,"id":N,"op":"shutdown"}    -> {"v":1,"id":N,"ok":true}, then exit

A tensor T is {"dtype":"float32|bfloat16|int32","shape":[..],"data":"<base64 of raw
little-endian bytes>"}. `source` is the kernel part of a case script (imports of torch, helion,
helion.language as hl and one @helion.kernel function, no inputs, no call). `call.args` are the
kernel's positional arguments: {"input":i} is inputs[i] as a contiguous torch CPU tensor,
{"int":n} a Python int; {"float":x} a Python float; {"bool":b} a Python bool.

Modes (settings are read by Helion when the @helion.kernel decorator runs, i.e. when the module
is executed, and by the launcher at call time, so the worker sets them per request):
    helion-pallas     HELION_BACKEND=pallas HELION_PALLAS_INTERPRET=1: Helion's Pallas backend in
                      JAX's generic interpreter, as Helion's CI runs it (no abstract mesh).
    helion-eager      HELION_INTERPRET=1: eager PyTorch execution of the kernel body (ref mode).
    helion-tpu-lower  HELION_PALLAS_INTERPRET=0: Helion compiles for a real TPU; the generated
                      host code is called with our own `_launcher=`, which builds the very
                      pallas_call Helion's launcher would build and runs
                      jax.export.export(jax.jit(f), platforms=["tpu"]) on it instead of calling
                      it, inside use_abstract_mesh(AbstractMesh(..., device_kind=TPU_KIND)).

Responses:
    {"v":1,"id":N,"ok":true,"outputs":[T,...],"seconds":s,"cpu_seconds":c,"cached":false,
     "generated":<str|null>,"set_outputs":[{"outputs":[T,...]} | {"error":{...}}, ...]}
      (helion-tpu-lower: "outputs":[] and "lowered":true; no "set_outputs")
`input_sets` are more values for the tensors `call` names, each list shaped like `inputs`: the
kernel compiled for `inputs` (helion-pallas; helion-eager's bound kernel) runs on each of them
after `inputs`, without compiling again, and `set_outputs` answers them one by one, in order (a
set's own failure, stage run, does not fail the request). helion-tpu-lower ignores them (its
lowering does not read values). `cpu_seconds` is the worker's CPU time (all threads) on the
request, what `bench --helion` counts.
    {"v":1,"id":N,"ok":false,"seconds":s,"generated":<str|null>,
     "error":{"stage","type","message","traceback","cause"?,"refusal","line"}}
Stages: import (executing the source, finding the kernel), trace (Helion's bind, config
normalization, planning, codegen and loading the generated module; helion-eager: bind only),
lower (helion-tpu-lower: everything after codegen, i.e. the host code, building the pallas_call,
jax.export), run (calling the compiled kernel or, helion-eager, the kernel body; converting
outputs), protocol (a malformed request).
`refusal` is true exactly for Helion's own errors (helion.exc.Base) other than its
internal-error wrappers: helion.exc.InternalError, and helion.exc.InductorLoweringError
("Error in codegen for node ...", Inductor failing on a node Helion handed it; seen on
`acc = x_block.sum(dim=0); acc = acc + outer.block_size`, a kernel 1.5.1 should lower). `line` is the kernel file's line the error is
about: Helion's error location, else a "<kernel file>:N" in the message, else the innermost
traceback frame in the kernel file (or in Helion's generated module, mapped through its
"# src[file:N]" comments), else null.

Each request writes the source to a fresh file <tmp>/r<counter>/k_<sha256[:16]>.py, imports it
as a fresh module and drops it afterwards, together with the generated modules torch's
PyCodeCache loaded for it, torch.fx's generated code and torch's memo caches (fake-tensor
dispatch, ShapeEnv), so nothing of one case leaks into the next and memory stays flat. Helion's
process-wide VMEM budget cache is reset per request and, for helion-pallas, the "cpu" TPU-info
entry Helion's interpret launcher registers (TPU7x) is registered up front.

Nothing user code prints reaches the protocol stream: fds 0 and 1 are duplicated for the
protocol, then fd 1 is pointed at stderr and fd 0 at /dev/null (worker_protocol.claim_stdio).
"""

import atexit
import hashlib
import importlib.util
import inspect
import json
import linecache
import os
import re
import shutil
import sys
import tempfile
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
    ok_response,
    stage_error_response,
    worker_bug_response,
)

worker_protocol.claim_stdio()

MODES = ("helion-pallas", "helion-eager", "helion-tpu-lower")
# Environment each mode runs under (set before the module executes, kept during the call).
# (Helion reads these in Settings(), i.e. when @helion.kernel runs, and the launcher reads
# HELION_PALLAS_INTERPRET at call time when the generated code does not pass _pallas_interpret.)
_COMMON_ENV = {"HELION_BACKEND": "pallas", "HELION_PRINT_OUTPUT_CODE": "0", "HELION_FORCE_AUTOTUNE": "0"}
MODE_ENV = {
    "helion-pallas": dict(_COMMON_ENV, HELION_PALLAS_INTERPRET="1", HELION_INTERPRET="0"),
    "helion-eager": dict(_COMMON_ENV, HELION_PALLAS_INTERPRET="0", HELION_INTERPRET="1"),
    "helion-tpu-lower": dict(_COMMON_ENV, HELION_PALLAS_INTERPRET="0", HELION_INTERPRET="0"),
}

# Per-worker scratch: kernel files and torch inductor's code cache (Helion's generated modules),
# so the worker can delete what each request wrote without touching anyone else's files. The
# Rust side makes it and removes it after killing the worker (PALLAS_DIFF_WORK_DIR); run by
# hand, the worker makes its own and removes it on a clean exit.
WORK_DIR = os.environ.get("PALLAS_DIFF_WORK_DIR") or tempfile.mkdtemp(prefix="pallas-diff-helion-")
atexit.register(shutil.rmtree, WORK_DIR, True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(WORK_DIR, "inductor")
os.environ.pop("TRITON_INTERPRET", None)  # HELION_INTERPRET=1 refuses to run next to it


# --- imports (once) ---------------------------------------------------------------------------
try:
    import torch
    import helion
    import helion.language  # noqa: F401
    import helion.exc as helion_exc
    from helion.runtime.kernel import Kernel as HelionKernel
    try:
        from helion.runtime.pallas import launcher as helion_launcher
    except ImportError:
        # Helion before 1.5.0 (a build under test, tpu-runner/src/builds.rs) kept the
        # Pallas launcher's helpers in helion.runtime itself.
        import helion.runtime as helion_launcher
    from helion._compiler import compile_environment as helion_compile_env
    from helion._compiler import source_location as helion_source_location
    from torch._inductor.codecache import PyCodeCache
    from torch.fx import graph_module as torch_fx_graph_module
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    import jax
    import jaxlib  # noqa: F401  (probe reports it; a broken one fails here, on the protocol)
    from jax.experimental import pallas as pl  # noqa: F401  (warm the import for Helion)
    from jax.experimental.pallas import tpu as pltpu  # noqa: F401
    # worker_protocol.abstract_tpu_mesh's: a JAX without it fails here, on the protocol.
    from jax._src.mesh import AbstractDevice  # noqa: F401
except BaseException as e:  # noqa: BLE001
    worker_protocol.import_failed(e)

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "int32": torch.int32}
TORCH_DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
# Raw views used to move bytes in and out (numpy has no bfloat16).
RAW_VIEW = {torch.float32: torch.float32, torch.bfloat16: torch.int16, torch.int32: torch.int32}

# The abstract mesh helion-tpu-lower runs in.
ABSTRACT_MESH = worker_protocol.abstract_tpu_mesh()


def _dist_version(name, fallback):
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:  # noqa: BLE001
        return fallback


def _helion_version():
    """The version of the Helion that was imported, as the metadata beside it says (an overlay's
    dist-info, the venv's), not the first `helion` distribution on sys.path: a source tree put
    first on PYTHONPATH has none, and read the venv's 1.5.1. "unknown" then (the Rust side
    reads a source tree's version from the tree itself)."""
    from importlib import metadata

    site = os.path.dirname(HELION_PATH)
    for dist in metadata.distributions(path=[site]):
        if (dist.metadata["Name"] or "").lower() == "helion":
            return dist.version
    return getattr(helion, "__version__", None) or "unknown"


# Where the imported helion package lives (the Rust side checks a build's overlay shadowed the
# venv's Helion).
HELION_PATH = os.path.dirname(os.path.abspath(helion.__file__))
HELION_VERSION = _helion_version()
TORCH_VERSION = _dist_version("torch", torch.__version__)


def probe_info():
    info = dict(worker_protocol.probe_fields(), helion=HELION_VERSION, torch=TORCH_VERSION, helion_path=HELION_PATH)
    # Modes this Helion build cannot run, with the reason (the Rust side reports the engine
    # unavailable instead of filing its TypeError as a finding).
    why = tpu_lower_unsupported()
    info["unavailable"] = {"helion-tpu-lower": why} if why else {}
    return info


# --- tensors on the wire ----------------------------------------------------------------------
def decode_input(t):
    name, shape, raw = worker_protocol.decode_tensor(t)
    dtype = TORCH_DTYPES[name]
    if not raw:
        return torch.empty(shape, dtype=dtype)
    # bytearray: a private, writable copy (kernels may write their inputs); wire and hosts
    # are little-endian.
    flat = torch.frombuffer(bytearray(raw), dtype=RAW_VIEW[dtype])
    return flat.view(dtype).reshape(shape).contiguous()


def encode_output(x):
    if not isinstance(x, torch.Tensor):
        raise TypeError("kernel returned %s, not a tensor" % type(x).__name__)
    name = dtype_name(TORCH_DTYPE_NAMES, x.dtype)
    t = x.detach().to("cpu").contiguous()
    data = t.view(RAW_VIEW[t.dtype]).numpy().tobytes() if t.numel() else b""
    return worker_protocol.encode_tensor(name, t.shape, data)


# --- request validation -----------------------------------------------------------------------
def parse_call(req, n_inputs):
    call = req.get("call")
    if not isinstance(call, dict):
        raise BadRequest("call is not an object")
    name = call.get("kernel")
    if not isinstance(name, str) or not name.isidentifier():
        raise BadRequest("call.kernel is not a function name: %r" % (name,))
    args = call.get("args", [])
    if not isinstance(args, list):
        raise BadRequest("call.args is not a list")
    spec = []
    for a in args:
        if isinstance(a, dict) and len(a) == 1 and "input" in a:
            i = a["input"]
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n_inputs:
                raise BadRequest("call arg %r names no input (there are %d)" % (a, n_inputs))
            spec.append(("input", i))
        elif isinstance(a, dict) and len(a) == 1 and "int" in a:
            n = a["int"]
            if not isinstance(n, int) or isinstance(n, bool):
                raise BadRequest("call arg %r is not an int" % (a,))
            spec.append(("int", n))
        elif isinstance(a, dict) and len(a) == 1 and "float" in a:
            x = a["float"]
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                raise BadRequest("call arg %r is not a float" % (a,))
            spec.append(("float", float(x)))
        elif isinstance(a, dict) and len(a) == 1 and "bool" in a:
            b = a["bool"]
            if not isinstance(b, bool):
                raise BadRequest("call arg %r is not a bool" % (a,))
            spec.append(("bool", b))
        else:
            raise BadRequest("bad call arg %r (expected {\"input\": i}, {\"int\": n}, {\"float\": x} or {\"bool\": b})" % (a,))
    return name, spec


# --- per-request isolation --------------------------------------------------------------------
_counter = [0]


class Case:
    """The files, module and generated modules of one request; `close()` forgets them all."""

    def __init__(self, source):
        _counter[0] += 1
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        self.dir = os.path.join(WORK_DIR, "r%d" % _counter[0])
        os.makedirs(self.dir)
        self.path = os.path.join(self.dir, "k_%s.py" % digest[:16])
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(source)
        self.module_name = "pallas_diff_helion_case_%d_%s" % (_counter[0], digest[:12])
        self.module = None
        self.pycode_start = len(PyCodeCache.modules)
        self.fx_start = len(_fx_eval_cache())

    def load(self):
        spec = importlib.util.spec_from_file_location(self.module_name, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.module_name] = module
        self.module = module
        spec.loader.exec_module(module)
        return module

    def new_generated_paths(self):
        return [getattr(m, "__file__", None) for m in PyCodeCache.modules[self.pycode_start :]]

    def close(self):
        # Generated modules loaded while serving this request (torch's PyCodeCache keeps them
        # forever, in memory, in sys.modules and on disk).
        new = PyCodeCache.modules[self.pycode_start :]
        del PyCodeCache.modules[self.pycode_start :]
        for mod in new:
            path = getattr(mod, "__file__", None)
            if path is not None:
                if PyCodeCache.modules_no_attr.get(path) is mod:
                    del PyCodeCache.modules_no_attr[path]
                PyCodeCache.linemaps.pop(path, None)
                linecache.cache.pop(path, None)
                try:
                    os.remove(path)
                except OSError:
                    pass
            if sys.modules.get(mod.__name__) is mod:
                del sys.modules[mod.__name__]
        # Code torch.fx generated for Helion's graphs ("<eval_with_key>.N", kept forever).
        fx_cache = _fx_eval_cache()
        for key in list(fx_cache)[self.fx_start :]:
            del fx_cache[key]
            linecache.cache.pop(key, None)
        if self.module is not None:
            for value in list(vars(self.module).values()):
                if isinstance(value, HelionKernel):
                    try:
                        value.reset()
                    except Exception:  # noqa: BLE001
                        traceback.print_exc()
        if sys.modules.get(self.module_name) is self.module:
            del sys.modules[self.module_name]
        self.module = None
        linecache.cache.pop(self.path, None)
        shutil.rmtree(self.dir, ignore_errors=True)


def _fx_eval_cache():
    loader = getattr(torch_fx_graph_module, "_loader", None)
    cache = getattr(loader, "eval_cache", None)
    return cache if isinstance(cache, dict) else {}


def reset_process_state(mode):
    """Start every request from the same Helion/JAX state, whatever ran before."""
    # Helion caches the VMEM budget process-wide on first use; which mode asked first would
    # otherwise decide it for every later kernel.
    helion_launcher._CACHED_VMEM_LIMIT_BYTES = None
    if mode == "helion-pallas":
        # Helion's interpret launcher registers TPU7x info as the "cpu" TPU kind on its first
        # launch; do it up front so compile-time queries see the same as a warm CI process.
        helion_launcher._ensure_cpu_tpu_info()
    # A Helion context left active by an exception would poison the next bind.
    if getattr(helion_compile_env.tls, "env", None) is not None:
        print("helion_worker: clearing a leaked CompileEnvironment", file=sys.stderr)
        helion_compile_env.tls.env = None
    if getattr(helion_source_location.tls, "locations", None):
        print("helion_worker: clearing leaked source locations", file=sys.stderr)
        helion_source_location.tls.locations = []


def reset_torch_caches():
    """Drop torch's process-global caches Helion's tracing fills (one entry per op and symbolic
    signature: they grow without bound, and torch warns that a warm fake-tensor cache can make a
    compile that failed cold succeed on retry)."""
    try:
        torch._dynamo.reset()  # clears FakeTensorMode's dispatch cache among others
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    # ShapeEnv's methods are memoized per class, keyed by the ShapeEnv itself (some without a
    # size bound): every case's ShapeEnv, with its fake-tensor cache, would stay alive.
    for value in list(vars(ShapeEnv).values()):
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            try:
                clear()
            except Exception:  # noqa: BLE001
                traceback.print_exc()


class EnvVars:
    """Set environment variables for the duration of a request."""

    def __init__(self, values):
        self.values = values
        self.saved = {}

    def __enter__(self):
        for k, v in self.values.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *args):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *args):
        return False


# --- helion-tpu-lower: our launcher --------------------------------------------------------------
def _spec_of(t):
    return helion_launcher._jax_placeholder_for_tensor(t)


# The launcher helpers TpuLowerLauncher calls: private to Helion, present with these
# signatures since Helion 1.5.0 (1.2.0 and 1.4.0 have no `_pallas_torch_placeholder` and no
# `placeholder_fn=`, and their helion-tpu-lower runs failed with lower:TypeError).
_TPU_LOWER_HELPERS = (
    "_jax_placeholder_for_tensor",
    "_pallas_check_dtypes",
    "_pallas_torch_placeholder",
    "_pallas_compile_jit_fn",
    "_pallas_compile_compact_jit_fn",
    "_pallas_output_only_descriptors",
    "_pallas_padded_output_dims_by_arg",
    "_pallas_collect_outputs",
    "_pallas_apply_ds_padding",
)


def tpu_lower_unsupported():
    """Why this Helion build cannot run helion-tpu-lower, or None."""
    name = getattr(helion_launcher, "__name__", "helion.runtime")
    missing = [h for h in _TPU_LOWER_HELPERS if not callable(getattr(helion_launcher, h, None))]
    if missing:
        return (
            "this Helion build's Pallas launcher (%s) has no %s, which helion-tpu-lower's launcher"
            " calls (Helion 1.5.0 or later has them)" % (name, ", ".join(missing))
        )
    for h in ("_pallas_compile_jit_fn", "_pallas_compile_compact_jit_fn"):
        if "placeholder_fn" not in inspect.signature(getattr(helion_launcher, h)).parameters:
            return "%s.%s takes no placeholder_fn=, which helion-tpu-lower's launcher passes" % (name, h)
    return None


def _accepted(fn, **kw):
    """`kw` without the keywords `fn` does not take whose value is unset (None or False):
    Helion's main branch dropped `_use_low_level_scheduler` and
    `_grid_scalar_prefetch_arg_indices` from `_pallas_compile_jit_fn`, and its generated code
    never sets them. A set one `fn` does not take stays, and fails loudly."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in kw.items() if k in params or v not in (None, False)}


class TpuLowerLauncher:
    """Stands in for helion.runtime.default_pallas_launcher (the generated host code's `_launcher`).

    It builds the pallas_call exactly as default_pallas_launcher's cache-miss path does for a
    real TPU (`_pallas_compile_jit_fn` / `_pallas_compile_compact_jit_fn`, interpret=False),
    exports it for TPU instead of calling it, and returns zero-filled results shaped like the
    real launcher's so the host code can go on (a kernel may launch more than once).
    """

    def __init__(self):
        self.launches = 0

    def __call__(self, pallas_kernel, grid, *args, **kw):
        L = helion_launcher
        output_indices = kw.get("_output_indices") or []
        if kw.get("_collective_id") is not None or kw.get("_uses_remote_copy"):
            raise NotImplementedError("helion-tpu-lower does not lower distributed kernels")
        spec_args = args
        orig_output_tensors = {}
        ds_pad_dims = kw.get("_ds_pad_dims")
        if ds_pad_dims:
            spec_args, orig_output_tensors = L._pallas_apply_ds_padding(args, output_indices, ds_pad_dims)
        L._pallas_check_dtypes(spec_args)
        placeholder = lambda a: L._pallas_torch_placeholder(a, interpret=False)  # noqa: E731
        build_worklist = kw.get("_compact_build_worklist")
        if build_worklist is not None:
            result = L._pallas_compile_compact_jit_fn(
                pallas_kernel,
                spec_args,
                _output_indices=output_indices,
                _inplace_indices=kw.get("_inplace_indices"),
                _block_spec_info=kw.get("_block_spec_info"),
                _scratch_shapes=kw.get("_scratch_shapes"),
                _smem_arg_indices=kw.get("_smem_arg_indices"),
                _hbm_arg_indices=kw.get("_hbm_arg_indices"),
                build_worklist=build_worklist,
                offset_arg_indices=kw.get("_compact_offset_arg_indices") or [],
                metadata_fields=kw.get("_compact_metadata_fields") or [],
                owner_ref_pos=kw.get("_compact_owner_ref_pos", 0),
                num_scalar_prefetch=kw.get("_compact_num_scalar_prefetch", 0),
                aligned_arg_indices=kw.get("_compact_aligned_arg_indices") or [],
                tile_start_ref_pos=kw.get("_compact_tile_start_ref_pos", 1),
                compact_block=kw.get("_compact_block", 1),
                ordered_aligned_arg_indices=kw.get("_compact_ordered_aligned_arg_indices") or [],
                range_start_ref_pos=kw.get("_compact_range_start_ref_pos", -1),
                ordered_window=kw.get("_compact_ordered_window", 0),
                interpret=False,
                placeholder_fn=placeholder,
            )
        else:
            result = L._pallas_compile_jit_fn(
                pallas_kernel,
                grid,
                spec_args,
                **_accepted(
                    L._pallas_compile_jit_fn,
                    _output_indices=output_indices,
                    _inplace_indices=kw.get("_inplace_indices"),
                    _block_spec_info=kw.get("_block_spec_info"),
                    _smem_arg_indices=kw.get("_smem_arg_indices"),
                    _scratch_shapes=kw.get("_scratch_shapes"),
                    _hbm_arg_indices=kw.get("_hbm_arg_indices"),
                    _matmul_dot_general=kw.get("_matmul_dot_general"),
                    _collective_id=None,
                    _use_low_level_scheduler=bool(kw.get("_use_low_level_scheduler", False)),
                    _grid_scalar_prefetch_arg_indices=kw.get("_grid_scalar_prefetch_arg_indices"),
                    interpret=False,
                    placeholder_fn=placeholder,
                ),
            )
        specs = [_spec_of(spec_args[i]) for i in result.tensor_arg_indices]
        jax.export.export(jax.jit(result.jit_fn), platforms=["tpu"])(*specs)
        self.launches += 1
        # What default_pallas_launcher would return, with zeros for the data.
        results = tuple(torch.zeros(tuple(spec_args[i].shape), dtype=spec_args[i].dtype) for i in output_indices)
        descriptors = L._pallas_output_only_descriptors(output_indices, result.arg_to_tensor_pos)
        padded = L._pallas_padded_output_dims_by_arg(ds_pad_dims, set(output_indices)) if ds_pad_dims else {}
        inplace_padded = [i for i in padded if i in result.arg_to_tensor_pos]
        if not descriptors and not orig_output_tensors:
            return None
        return L._pallas_collect_outputs(
            results, spec_args, descriptors, orig_output_tensors or None, padded, inplace_padded
        )


# --- running one case -------------------------------------------------------------------------
class CaseError(Exception):
    """A StageError plus what is known about the case when it failed."""

    def __init__(self, stage_error, generated):
        super().__init__(str(stage_error))
        self.stage_error = stage_error
        self.generated = generated


class NoConfig(Exception):
    """The kernel names no single config (Helion would autotune; pallas-diff does not)."""


def _implicit_config(bound):
    config = bound._implicit_config()
    if config is None:
        raise NoConfig("the kernel has no single config=; Helion would autotune, pallas-diff does not")
    return config


def run_outputs(fn, args):
    """Calls a compiled (or bound) kernel and encodes its outputs (`outputs_of`)."""
    return [encode_output(o) for o in outputs_of(fn(*args), args)]


def run_sets(fn, input_sets, arg_spec):
    """The kernel `fn` (compiled once) on each extra input set: one result per set."""
    results = []
    with JittedInterpretLaunches():
        for tensors in input_sets:
            args = tuple(tensors[v] if kind == "input" else v for kind, v in arg_spec)
            try:
                results.append({"outputs": run_outputs(fn, args)})
            except BaseException as e:  # noqa: BLE001
                results.append({"error": worker_protocol.stage_error_object(StageError("run", e))})
    return results


class JittedInterpretLaunches:
    """While active, Helion's interpret-mode launches run the `pl.kernel` function Helion built
    for them under `jax.jit`, traced and compiled once per launch site.

    Helion's interpret launcher (`_PallasInterpretCallable`) calls that function eagerly, and
    JAX then lowers the whole Pallas interpreter again on every call (a fresh closure each
    time, so its jit cache never hits): measured ~80-95 ms of CPU per run of a 64-element kernel,
    nearly a compile. Under `jax.jit` of the same function the same interpreter is lowered once
    and later runs take ~0.3-1 ms. Only the extra input sets run this way: the case's own inputs
    run exactly as Helion runs them. A Helion without that class (an older build) runs the
    extra sets eagerly, as it runs everything.
    """

    def __enter__(self):
        self.cls = getattr(helion_launcher, "_PallasInterpretCallable", None)
        if self.cls is None or "__call__" not in self.cls.__dict__:
            self.cls = None
            return self
        self.saved = self.cls.__dict__["__call__"]
        saved = self.saved

        def call(obj, *input_tensors):
            if not callable(getattr(obj, "_jit_fn", None)):
                return saved(obj, *input_tensors)  # not the launcher this was written for
            jitted = obj.__dict__.get("_pallas_diff_jitted")
            if jitted is None:
                jitted = jax.jit(obj._jit_fn)
                obj._pallas_diff_jitted = jitted
            eager = obj._jit_fn
            obj._jit_fn = jitted
            try:
                return saved(obj, *input_tensors)
            finally:
                obj._jit_fn = eager

        self.cls.__call__ = call
        return self

    def __exit__(self, *args):
        if self.cls is not None:
            self.cls.__call__ = self.saved
        return False


def load_kernel(case, kernel_name):
    """Executes the case's source and returns its @helion.kernel function `kernel_name`."""
    try:
        module = case.load()
    except BaseException as e:  # noqa: BLE001
        raise CaseError(StageError("import", e), None)
    kernel = getattr(module, kernel_name, None)
    if not isinstance(kernel, HelionKernel):
        e = AttributeError(
            "the module defines no @helion.kernel function %r (found %s)"
            % (kernel_name, type(kernel).__name__ if kernel is not None else "nothing")
        )
        raise CaseError(StageError("import", e), None)
    return kernel


def run_case(case, mode, inputs, kernel_name, arg_spec, input_sets=()):
    generated = None
    kernel = load_kernel(case, kernel_name)
    args = tuple(inputs[v] if kind == "input" else v for kind, v in arg_spec)

    if mode == "helion-eager":
        try:
            bound = kernel.bind(args)
        except BaseException as e:  # noqa: BLE001
            raise CaseError(StageError("trace", e), None)
        try:
            outputs = run_outputs(bound, args)
        except BaseException as e:  # noqa: BLE001
            raise CaseError(StageError("run", e), None)
        return {"outputs": outputs, "generated": None, "set_outputs": run_sets(bound, input_sets, arg_spec)}

    try:
        bound = kernel.bind(args)
        config = _implicit_config(bound)
        compiled = bound.compile_config(config, allow_print=False)
    except BaseException as e:  # noqa: BLE001
        raise CaseError(StageError("trace", e), None)
    generated = read_generated(bound)

    if mode == "helion-tpu-lower":
        launcher = TpuLowerLauncher()
        try:
            compiled(*args, _launcher=launcher)
        except BaseException as e:  # noqa: BLE001
            raise CaseError(StageError("lower", e), generated)
        return {"outputs": [], "lowered": True, "generated": generated}

    try:
        encoded = run_outputs(compiled, args)
    except BaseException as e:  # noqa: BLE001
        raise CaseError(StageError("run", e), generated)
    return {"outputs": encoded, "generated": generated, "set_outputs": run_sets(compiled, input_sets, arg_spec)}


def outputs_of(result, args):
    """A kernel's outputs: what it returned or, when it returns nothing, its tensor arguments
    after the call (a kernel that writes its arguments in place; the Rust side keeps the ones
    the kernel writes, lang's `Kernel::written_params`)."""
    if result is None:
        return tuple(a for a in args if isinstance(a, torch.Tensor))
    return as_tuple(result)


def read_generated(bound):
    """The generated module's text, as compile_config wrote it (no second codegen)."""
    try:
        # compile_config ran once on this fresh BoundKernel: one entry, keyed by the normalized
        # config (which need not equal the decorator's).
        paths = [p for p in bound._cache_path_map.values() if p]
        if paths:
            with open(paths[-1], encoding="utf-8") as f:
                return f.read()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    return None


# --- error classification ---------------------------------------------------------------------
_SRC_COMMENT = re.compile(r"#\s*src\[([^\]:]+):(\d+)(?:-\d+)?\]")


def is_refusal(exc):
    internal = (helion_exc.InternalError, helion_exc.InductorLoweringError)
    return isinstance(exc, helion_exc.Base) and not isinstance(exc, internal)


def error_line(exc, case):
    """The kernel file's line an exception is about, or None."""
    if isinstance(exc, SyntaxError) and exc.filename == case.path and isinstance(exc.lineno, int):
        return exc.lineno
    loc = getattr(exc, "location", None)
    if loc and getattr(loc, "filename", None) == case.path and isinstance(getattr(loc, "lineno", None), int):
        return loc.lineno
    message = str(exc)
    for pat in (re.escape(case.path) + r"\"?(?::|, line )(\d+)", re.escape(os.path.basename(case.path)) + r":(\d+)"):
        m = re.search(pat, message)
        if m:
            return int(m.group(1))
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause.__traceback__ is not None:
        frames = frames + traceback.extract_tb(cause.__traceback__)
    generated = set(p for p in case.new_generated_paths() if p)
    base = os.path.basename(case.path)
    for fr in reversed(frames):
        if fr.filename == case.path:
            return fr.lineno
        if fr.filename in generated and fr.lineno:
            line = _src_line_above(fr.filename, fr.lineno, base)
            if line is not None:
                return line
    return None


def _src_line_above(path, lineno, base):
    """The user line of the nearest "# src[<base>:N]" comment at or above a generated line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for i in range(min(lineno, len(lines)) - 1, -1, -1):
        m = _SRC_COMMENT.search(lines[i])
        if m and m.group(1) == base:
            return int(m.group(2))
        if lines[i].startswith("def "):
            break
    return None


def case_error_response(req_id, err, case):
    se = err.stage_error
    exc = se.exc
    resp = stage_error_response(req_id, se, extra={"refusal": is_refusal(exc), "line": error_line(exc, case)})
    e = resp["error"]
    if "cause" not in e and isinstance(exc, helion_exc.Base) and exc.__cause__ is not None:
        name = type(exc.__cause__).__name__
        if name != e["type"]:
            e["cause"] = name
    resp["generated"] = err.generated
    return resp


def parse_input_sets(req, tensors):
    """The request's extra input sets (decoded), each checked to match `inputs` in dtype and shape."""
    sets = req.get("input_sets", [])
    if not isinstance(sets, list) or not all(isinstance(s, list) for s in sets):
        raise BadRequest("input_sets is not a list of tensor lists")
    decoded = []
    for n, wire in enumerate(sets):
        if len(wire) != len(tensors):
            raise BadRequest("input set %d has %d tensors, inputs has %d" % (n, len(wire), len(tensors)))
        one = [decode_input(t) for t in wire]
        for i, (a, b) in enumerate(zip(one, tensors)):
            if a.dtype != b.dtype or a.shape != b.shape:
                raise BadRequest("input set %d: tensor %d is not shaped like inputs[%d]" % (n, i, i))
        decoded.append(one)
    return decoded


def case_request(req_id, req, work):
    """The frame of a request about one case kernel (run, default_config): the mode, source and
    call checked, the case loaded fresh, `work(mode, case, tensors, kernel_name, arg_spec)`'s
    response, or the error response of its failure; the case and the caches it filled dropped
    afterwards, and the request's wall and CPU seconds added."""
    start = time.perf_counter()
    cpu_start = time.process_time()
    mode = req.get("mode")
    case = None
    try:
        worker_protocol.check_mode(mode, MODES)
        source, tensors = decode_kernel(req, decode_input)
        kernel_name, arg_spec = parse_call(req, len(tensors))
        reset_process_state(mode)
        case = Case(source)
        resp = work(mode, case, tensors, kernel_name, arg_spec)
    except CaseError as e:
        resp = case_error_response(req_id, e, case)
    except BadRequest as e:
        resp = bad_request_response(req_id, e)
    except Exception as e:  # noqa: BLE001  (a worker bug: report it and keep serving)
        resp = worker_bug_response(req_id, e)
    finally:
        if case is not None:
            try:
                case.close()
            except Exception:  # noqa: BLE001
                traceback.print_exc()
        helion_launcher._CACHED_VMEM_LIMIT_BYTES = None
        reset_torch_caches()
    resp["seconds"] = time.perf_counter() - start
    resp["cpu_seconds"] = time.process_time() - cpu_start
    return resp


def handle_run(req_id, req):
    def work(mode, case, tensors, kernel_name, arg_spec):
        input_sets = parse_input_sets(req, tensors)
        mesh = jax.sharding.use_abstract_mesh(ABSTRACT_MESH) if mode == "helion-tpu-lower" else _NullContext()
        with EnvVars(MODE_ENV[mode]), mesh:
            body = run_case(case, mode, tensors, kernel_name, arg_spec, input_sets)
        resp = ok_response(req_id, outputs=body["outputs"], cached=False)
        if body.get("lowered"):
            resp["lowered"] = True
        if input_sets and "set_outputs" in body:
            resp["set_outputs"] = body["set_outputs"]
        resp["generated"] = body["generated"]
        return resp

    return case_request(req_id, req, work)


def handle_default_config(req_id, req):
    """Helion's default config for the kernel bound to the request's arguments: the config
    `autotune_effort="none"` runs (`BoundKernel.config_spec.default_config()`), in the mode's
    settings (the Pallas backend's config spec has Pallas keys). Nothing is compiled."""

    def work(mode, case, tensors, kernel_name, arg_spec):
        with EnvVars(MODE_ENV[mode]):
            kernel = load_kernel(case, kernel_name)
            args = tuple(tensors[v] if kind == "input" else v for kind, v in arg_spec)
            try:
                config = kernel.bind(args).config_spec.default_config()
            except BaseException as e:  # noqa: BLE001
                raise CaseError(StageError("trace", e), None)
        # Config.to_json is Helion's own serialization (lists, ints, strings, bools, None).
        return ok_response(req_id, outputs=[], config=json.loads(config.to_json()))

    return case_request(req_id, req, work)


def main():
    try:
        worker_protocol.serve(probe_info, {"run": handle_run, "default_config": handle_default_config})
    finally:
        shutil.rmtree(WORK_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
