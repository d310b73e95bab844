"""Generates NumPy cross-check fixtures for the oracle (numpy only).

Each fixture is a small indexing/reduction program on a random 3-D input:

    v = x[<index>]            (ints, None, slices with negative and past-extent bounds and
                               steps, at most one strided `hl.arange` index)
    r = v.sum(dim=d)          (optional; bf16 inputs optionally `.float()` first)

with the expected result computed by NumPy under torch's semantics, as the oracle documents
them: ints are applied as selects before the (single) advanced index, which stays in place;
`.sum` sums the value as if it were contiguous, in NumPy's order (pairwise along the innermost
non-trivial axis, sequential otherwise), in float32; bfloat16 is float32 rounded to nearest even
(inputs rounded on creation, a bf16 sum rounded once). Integer sums are exact (int64) and cast
back to int32 by the program. About one program in ten indexes out of range and expects an
IndexError.

Run: python3 oracle/tests/numpy_fixtures/generate.py  (writes fixtures.json next to this file).
"""

import json
import os

import numpy as np

SEED = 20261130
COUNT = 100


def bf16(a):
    """Rounds a float32 array to bfloat16 (nearest even), returned as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = a.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return r.view(np.float32).reshape(a.shape)


def random_input(rng, dtype, shape):
    n = int(np.prod(shape))
    if dtype == "int32":
        return rng.integers(-1000, 1000, size=n).astype(np.int64).reshape(shape)
    mags = 10.0 ** rng.integers(-3, 4, size=n)
    vals = (rng.standard_normal(n) * mags).astype(np.float32).reshape(shape)
    return bf16(vals) if dtype == "bfloat16" else vals


def random_bound(rng, n):
    if rng.random() < 0.2:
        return None
    return int(rng.integers(-n - 3, n + 4))


def random_index(rng, shape, invalid):
    """A list of index entries for a 3-D shape; `invalid` makes one entry out of range."""
    entries = []
    dims = list(range(3))
    used_arange = False
    consumed = 0
    bad_at = int(rng.integers(0, 3)) if invalid else -1
    for d in dims:
        n = shape[d]
        if rng.random() < 0.15:
            entries.append({"kind": "none"})
        if consumed == bad_at:
            if rng.random() < 0.5 or used_arange:
                entries.append({"kind": "int", "v": int(rng.choice([n, n + 2, -n - 1]))})
            else:
                used_arange = True
                entries.append({"kind": "arange", "start": 0, "stop": n + 1, "step": 1})
            consumed += 1
            continue
        r = rng.random()
        if r < 0.3:
            entries.append({"kind": "full"})
        elif r < 0.5:
            entries.append({"kind": "int", "v": int(rng.integers(-n, n))})
        elif r < 0.8 or used_arange:
            step = [None, 1, 2, 3][int(rng.integers(0, 4))]
            if rng.random() < 0.6:
                # mostly non-empty: a start inside the dim (either sign), a stop past it or not
                first = int(rng.integers(0, n))
                start = first - n if rng.random() < 0.4 else first
                stop = first + int(rng.integers(1, n + 4))
                if rng.random() < 0.3:
                    stop -= n
                if rng.random() < 0.2:
                    start = None
            else:
                start, stop = random_bound(rng, n), random_bound(rng, n)
            entries.append({"kind": "slice", "start": start, "stop": stop, "step": step})
        else:
            used_arange = True
            step = int(rng.integers(1, 4))
            length = int(rng.integers(0, 5))
            while length > 1 and (length - 1) * step >= 2 * n:
                length -= 1
            # every value start + k*step (k < length) lies in [-n, n): a valid index
            start = int(rng.integers(-n, n - max(length - 1, 0) * step))
            stop = start + step * length
            entries.append({"kind": "arange", "start": start, "stop": stop, "step": step})
        consumed += 1
    # optionally drop trailing full slices (implicit `:`)
    while entries and entries[-1]["kind"] == "full" and rng.random() < 0.5:
        entries.pop()
    return entries


def apply_index(x, entries):
    """torch semantics: basic entries first (ints select), then the one arange in place."""
    basic = []
    adv_pos = None
    adv_vals = None
    out_dim = 0
    for e in entries:
        k = e["kind"]
        if k == "full":
            basic.append(slice(None))
            out_dim += 1
        elif k == "none":
            basic.append(None)
            out_dim += 1
        elif k == "int":
            basic.append(e["v"])
        elif k == "slice":
            basic.append(slice(e["start"], e["stop"], e["step"]))
            out_dim += 1
        elif k == "arange":
            assert adv_pos is None, "at most one advanced index per program"
            basic.append(slice(None))
            adv_pos = out_dim
            adv_vals = np.arange(e["start"], e["stop"], e["step"], dtype=np.int64)
            out_dim += 1
    consumed = sum(1 for e in entries if e["kind"] != "none")
    if consumed > x.ndim:
        raise IndexError("too many indices")
    v = x[tuple(basic)]
    if adv_pos is not None:
        n = v.shape[adv_pos]
        if np.any(adv_vals >= n) or np.any(adv_vals < -n):
            raise IndexError("index out of range")
        v = np.take(v, adv_vals, axis=adv_pos)
    return v


def make(rng, i):
    dtype = ["float32", "int32", "bfloat16"][i % 3]
    if rng.random() < 0.15:
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(129, 261))]
    else:
        shape = [int(rng.integers(1, 7)), int(rng.integers(1, 6)), int(rng.integers(1, 41))]
    x = random_input(rng, dtype, shape)
    invalid = rng.random() < 0.1
    entries = random_index(rng, shape, invalid)
    prog = {
        "id": i,
        "dtype": dtype,
        "shape": shape,
        "input": [int(v) for v in x.ravel()] if dtype == "int32" else [float(v) for v in x.ravel()],
        "index": entries,
        "via_block": bool(rng.random() < 0.5),
        "sum_dim": None,
        "float_first": False,
    }
    try:
        v = apply_index(x, entries)
    except IndexError:
        prog["expected"] = {"error": "IndexError"}
        return prog
    out_dtype = dtype
    if v.ndim >= 1 and rng.random() < 0.8:
        # half the sums reduce the innermost dim (NumPy's pairwise path when it is long)
        d = v.ndim - 1 if rng.random() < 0.5 else int(rng.integers(0, v.ndim))
        if rng.random() < 0.3:
            d -= v.ndim
        prog["sum_dim"] = d
        c = np.ascontiguousarray(v)
        if dtype == "int32":
            v = c.sum(axis=d, dtype=np.int64)
        else:
            prog["float_first"] = bool(dtype == "bfloat16" and rng.random() < 0.5)
            s = c.astype(np.float32).sum(axis=d, dtype=np.float32)
            if dtype == "bfloat16" and not prog["float_first"]:
                v = bf16(s)
            else:
                v = s
                out_dtype = "float32"
    v = np.asarray(v)
    prog["expected"] = {
        "dtype": out_dtype,
        "shape": list(v.shape),
        "values": [int(t) for t in v.ravel()] if dtype == "int32" else [float(t) for t in v.ravel()],
    }
    return prog


def main():
    rng = np.random.default_rng(SEED)
    fixtures = [make(rng, i) for i in range(COUNT)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures.json")
    with open(path, "w") as f:
        json.dump({"numpy": np.__version__, "seed": SEED, "programs": fixtures}, f, separators=(",", ":"))
        f.write("\n")
    errors = sum(1 for p in fixtures if "error" in p["expected"])
    sums = sum(1 for p in fixtures if p["sum_dim"] is not None)
    print(f"wrote {len(fixtures)} programs ({sums} with a sum, {errors} expecting IndexError) to {path}")


if __name__ == "__main__":
    main()
