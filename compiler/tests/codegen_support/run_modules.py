"""Runs emitted pallas-diff modules in JAX (a test driver of compiler/tests/codegen_jax.rs).

Reads a JSON list of jobs from argv[1]: {"name", "path", "inputs": [{"dtype", "shape",
"values"}], "modes": [...]}; writes a JSON list of results to argv[2]: {"name", "mode",
"ok", "outputs": [{"shape", "dtype", "values"}] | "error"}. Modes: pallas-interpret,
pallas-tpu-interpret, pallas-tpu-lower (jax.export for TPU on CPU).
"""
import importlib.util
import json
import math
import sys
import traceback

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax._src.mesh import AbstractDevice
from jax.experimental.pallas import tpu as pltpu

DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "int32": np.int32}
MESH = jax.sharding.AbstractMesh(
    (1,), ("x",), abstract_device=AbstractDevice(device_kind="TPU v5e", num_cores=1, platform="tpu")
)


def interpret_for(mode):
    if mode == "pallas-interpret":
        return True
    if mode == "pallas-tpu-interpret":
        return pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")
    return False


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def clean(v):
    v = float(v)
    return None if math.isnan(v) or math.isinf(v) else v


def main():
    jobs = json.load(open(sys.argv[1]))
    results = []
    for job in jobs:
        arrays = [
            jnp.asarray(
                np.array([math.nan if v is None else v for v in t["values"]], dtype=np.float64)
                .astype(DTYPES[t["dtype"]])
                .reshape(t["shape"])
            )
            for t in job["inputs"]
        ]
        for mode in job["modes"]:
            res = {"name": job["name"], "mode": mode}
            try:
                m = load(job["path"], job["name"])
                with jax.sharding.use_abstract_mesh(MESH):
                    fn = jax.jit(m.make(interpret_for(mode)))
                    if mode == "pallas-tpu-lower":
                        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
                        jax.export.export(fn, platforms=["tpu"])(*specs)
                        res["outputs"] = []
                    else:
                        outs = jax.block_until_ready(fn(*arrays))
                        res["outputs"] = [
                            {"shape": list(o.shape), "dtype": str(o.dtype), "values": [clean(v) for v in np.asarray(o.astype(jnp.float32)).ravel()]}
                            for o in outs
                        ]
                res["ok"] = True
            except BaseException as e:  # noqa: BLE001
                res["ok"] = False
                res["error"] = "%s: %s" % (type(e).__name__, str(e)[:2000])
                res["traceback"] = traceback.format_exc()[-3000:]
                if mode == "pallas-tpu-interpret":
                    pltpu.reset_tpu_interpret_mode_state()
            results.append(res)
    json.dump(results, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
