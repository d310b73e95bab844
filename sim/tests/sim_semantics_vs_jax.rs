//! The executor's semantics decisions, each pinned by a hand-built Pallas module run through
//! both `pallas-sim` and JAX: the TPU interpreter (`pallas-tpu-interpret`), or the generic
//! interpreter (`pallas-interpret`) where the TPU interpreter has a known issue (a Ref reshape).
//! Every probe must give the same outputs bit for bit, or the same error (stage and Python
//! class), and that result must be the one the probe documents. Bit for bit where pallas-sim
//! models this host's XLA:CPU summation order; elsewhere floats are judged by the tolerance
//! policy, and the test says so (`float_order`).
//!
//! The generated cases (`sim_vs_jax.rs`) are well formed and rarely raise; these probes cover
//! what they miss: static and dynamic out-of-range accesses, traced-but-untaken code, poison,
//! dtype and shape errors, promotion, rounding, XLA's summation orders and constant folding.

mod float_order;

use lang::pallas::{
    BinOp, CmpOp, Expr as E, Function, IndexPart as I, Jnp, Launcher, MemorySpace, Operand,
    OperandSource, Output, PaddingFill, PallasModule, Scratch, Stmt as S, Target, print_module,
};
use lang::tensor::{DType, Tensor};
use pallas_diff_sim::{Interpreter, Program, SimError, SimOptions};
use std::sync::{Arc, Mutex};
use tpu_runner::{KernelError, Mode, Pool, RunRequest};

/// What a probe must produce on both engines.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// Outputs (compared bit for bit between the engines).
    Outputs,
    /// An error of this stage and class.
    Error(&'static str, &'static str),
}

struct Probe {
    name: &'static str,
    module: PallasModule,
    inputs: Vec<Tensor>,
    expect: Expect,
    /// Compare against the generic interpreter (the TPU interpreter has a known issue).
    generic: bool,
}

fn n(s: &str) -> E {
    E::name(s)
}

fn int(v: i64) -> E {
    E::Int(v)
}

fn ds(start: E, size: i64) -> I {
    I::Expr(E::ds(start, E::Int(size)))
}

fn pid(axis: usize) -> E {
    E::ProgramId(axis)
}

fn bin(op: BinOp, a: E, b: E) -> E {
    E::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    }
}

fn read(r: &str, idx: Vec<I>) -> E {
    n(r).index(idx)
}

fn store(r: &str, idx: Vec<I>, v: E) -> S {
    S::Store {
        target: n(r),
        index: idx,
        value: v,
    }
}

fn all(r: &str, v: E) -> S {
    store(r, vec![I::Ellipsis], v)
}

fn assign(name: &str, v: E) -> S {
    S::Assign {
        target: Target::Name(name.into()),
        value: v,
    }
}

fn def(name: &str, params: &[&str], body: Vec<S>) -> S {
    S::Def(Function {
        name: name.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        body,
    })
}

fn jnp(j: Jnp) -> E {
    E::Jnp(j)
}

fn sum(x: E, axis: usize) -> E {
    jnp(Jnp::Sum {
        x: Box::new(x),
        axis,
    })
}

/// A module whose kernel takes inputs `x0..`, outputs `o0..` and scratch `s0..`.
fn module(
    ins: &[(DType, &[i64])],
    outs: &[(DType, &[i64])],
    scratch: &[(MemorySpace, DType, &[i64])],
    grid: &[i64],
    body: Vec<S>,
) -> PallasModule {
    let names = |p: &str, k: usize| (0..k).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
    let mut params = names("x", ins.len());
    params.extend(names("o", outs.len()));
    params.extend(names("s", scratch.len()));
    PallasModule {
        doc: vec!["pallas-sim semantics probe".into()],
        kernel: Function {
            name: "_probe".into(),
            params,
            body,
        },
        launcher: Launcher {
            kernel: "_probe".into(),
            params: names("x", ins.len()),
            grid: grid.to_vec(),
            operands: ins
                .iter()
                .enumerate()
                .map(|(k, (d, s))| Operand {
                    source: OperandSource::Param(k),
                    dtype: *d,
                    shape: s.to_vec(),
                    pad_after: vec![0; s.len()],
                    block: vec![lang::pallas::BlockDim::Whole; s.len()],
                })
                .collect(),
            outputs: outs
                .iter()
                .map(|(d, s)| Output {
                    dtype: *d,
                    shape: s.to_vec(),
                    pad_after: vec![0; s.len()],
                    aliases: None,
                })
                .collect(),
            scratch: scratch
                .iter()
                .map(|(m, d, s)| Scratch {
                    space: *m,
                    shape: s.to_vec(),
                    dtype: *d,
                })
                .collect(),
            returns: (0..outs.len()).collect(),
            padding: PaddingFill::Zero,
        },
    }
}

/// Deterministic values of roughly unit magnitude with full mantissas.
fn noise(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let len: usize = shape.iter().product();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let values = (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            match dtype {
                DType::Int32 => ((u - 0.5) * 100.0).round(),
                DType::Float32 | DType::Bfloat16 => (u - 0.5) * 6.0,
            }
        })
        .collect();
    Tensor::new(dtype, shape.to_vec(), values)
}

/// `x[r, c] = 8 r + c` on a 6×8 float32 array.
fn rows() -> Tensor {
    Tensor::new(DType::Float32, vec![6, 8], (0..48).map(f64::from).collect())
}

const ROWS: (DType, &[i64]) = (DType::Float32, &[6, 8]);

fn probes() -> Vec<Probe> {
    use DType::{Bfloat16 as BF16, Float32 as F32, Int32 as I32};
    let full = I::Full;
    let mut p = Vec::new();
    let two_rows: &[(DType, &[i64])] = &[(F32, &[2, 8])];
    let one_row: &[(DType, &[i64])] = &[(F32, &[1, 8])];
    p.push(Probe {
        name: "a dynamic out-of-range read raises at run time",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![all(
                "o0",
                read(
                    "x0",
                    vec![ds(bin(BinOp::Add, pid(0), int(5)), 2), full.clone()],
                ),
            )],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("run", "IndexError"),
        generic: false,
    });
    p.push(Probe {
        name: "a dynamic write entirely out of range raises ValueError at run time",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![store(
                "o0",
                vec![ds(bin(BinOp::Add, pid(0), int(2)), 2), full.clone()],
                read("x0", vec![ds(int(0), 2), full.clone()]),
            )],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("run", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "a dynamic write partially out of range trips the interpreter's assertion",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![store(
                "o0",
                vec![ds(bin(BinOp::Add, pid(0), int(1)), 2), full.clone()],
                read("x0", vec![ds(int(0), 2), full.clone()]),
            )],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("run", "AssertionError"),
        generic: false,
    });
    p.push(Probe {
        name: "a static out-of-range pl.ds raises at trace time",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![all("o0", read("x0", vec![ds(int(5), 2), full.clone()]))],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "a static start of 0 is never checked at trace time",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![all(
                "o0",
                read("x0", vec![ds(int(0), 7), full.clone()]).index(vec![I::Slice {
                    start: Some(0),
                    stop: Some(2),
                }]),
            )],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("run", "IndexError"),
        generic: false,
    });
    p.push(Probe {
        name: "an untaken cond branch is still traced",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![
                def(
                    "_t",
                    &[],
                    vec![all("o0", read("x0", vec![ds(int(7), 2), full.clone()]))],
                ),
                def(
                    "_e",
                    &[],
                    vec![all("o0", read("x0", vec![ds(int(0), 2), full.clone()]))],
                ),
                S::Expr(E::Cond {
                    pred: Box::new(pid(0).compare(CmpOp::Gt, int(5))),
                    then_fn: "_t".into(),
                    else_fn: "_e".into(),
                    operands: vec![],
                }),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "a zero-trip fori_loop body is still traced",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![
                all("o0", read("x0", vec![ds(int(0), 2), full.clone()])),
                def(
                    "_b",
                    &["_j", "_"],
                    vec![all("o0", read("x0", vec![ds(int(7), 2), full.clone()]))],
                ),
                S::Expr(E::ForiLoop {
                    lower: Box::new(int(0)),
                    upper: Box::new(pid(0)),
                    body: "_b".into(),
                    init: Box::new(E::None),
                }),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "a dynamic read past its view but inside the buffer reads the buffer",
        module: module(
            &[ROWS],
            one_row,
            &[],
            &[1],
            vec![
                assign(
                    "v",
                    n("x0").at(vec![ds(bin(BinOp::Add, pid(0), int(1)), 2), full.clone()]),
                ),
                all(
                    "o0",
                    read(
                        "v",
                        vec![ds(bin(BinOp::Add, pid(0), int(2)), 1), full.clone()],
                    ),
                ),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Outputs,
        generic: false,
    });
    // A grid with no steps runs no kernel step, so no output block is copied back: an aliased
    // output keeps its operand (what the lowering of `hl.tile(0)` with a `zeros_like` output
    // launches; a generated case showed pallas-sim returning NaN there while JAX returned the
    // zeros).
    let mut empty_grid = module(
        &[ROWS],
        &[ROWS],
        &[],
        &[0],
        vec![all("o0", read("x0", vec![I::Ellipsis]))],
    );
    empty_grid.launcher.outputs[0].aliases = Some(0);
    p.push(Probe {
        name: "a grid with no steps leaves an aliased output as its operand",
        module: empty_grid,
        inputs: vec![rows()],
        expect: Expect::Outputs,
        generic: false,
    });
    p.push(Probe {
        name: "uninitialized scratch reads as NaN and INT_MAX",
        module: module(
            &[ROWS],
            &[(F32, &[2, 8]), (I32, &[2, 8])],
            &[
                (MemorySpace::Vmem, F32, &[2, 8]),
                (MemorySpace::Vmem, I32, &[2, 8]),
            ],
            &[1],
            vec![
                all("o0", read("s0", vec![I::Ellipsis])),
                all("o1", read("s1", vec![I::Ellipsis])),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Outputs,
        generic: false,
    });
    p.push(Probe {
        name: "astype on a Python int is an AttributeError",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![
                assign("k", int(3)),
                all(
                    "o0",
                    jnp(Jnp::Full {
                        shape: vec![int(2), int(8)],
                        value: Box::new(n("k").astype(F32)),
                        dtype: F32,
                    }),
                ),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "AttributeError"),
        generic: false,
    });
    p.push(Probe {
        name: "storing another dtype is a ValueError",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![all(
                "o0",
                read("x0", vec![ds(int(0), 2), full.clone()]).astype(BF16),
            )],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "storing another shape is a ValueError",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![all("o0", read("x0", vec![ds(int(0), 1), full.clone()]))],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "ValueError"),
        generic: false,
    });
    p.push(Probe {
        name: "a fori_loop carry that changes dtype is a TypeError",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![
                def(
                    "_b",
                    &["_j", "c"],
                    vec![S::Return(Some(n("c").astype(BF16)))],
                ),
                assign(
                    "r",
                    E::ForiLoop {
                        lower: Box::new(int(0)),
                        upper: Box::new(int(2)),
                        body: "_b".into(),
                        init: Box::new(read("x0", vec![ds(int(0), 2), full.clone()])),
                    },
                ),
                all("o0", n("r").astype(F32)),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "TypeError"),
        generic: false,
    });
    p.push(Probe {
        name: "cond branches of different shapes are a TypeError",
        module: module(
            &[ROWS],
            two_rows,
            &[],
            &[1],
            vec![
                def(
                    "_t",
                    &[],
                    vec![S::Return(Some(read(
                        "x0",
                        vec![ds(int(0), 2), full.clone()],
                    )))],
                ),
                def(
                    "_e",
                    &[],
                    vec![S::Return(Some(read(
                        "x0",
                        vec![ds(int(0), 1), full.clone()],
                    )))],
                ),
                assign(
                    "r",
                    E::Cond {
                        pred: Box::new(pid(0).compare(CmpOp::Eq, int(0))),
                        then_fn: "_t".into(),
                        else_fn: "_e".into(),
                        operands: vec![],
                    },
                ),
                all("o0", n("r")),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Error("trace", "TypeError"),
        generic: false,
    });
    p.push(Probe {
        name: "a read through a Ref reshape is row-major (generic interpreter)",
        module: module(
            &[ROWS],
            &[(F32, &[2, 8]), (F32, &[1, 2, 8])],
            &[],
            &[2],
            vec![
                assign(
                    "v",
                    E::RefReshape {
                        base: Box::new(
                            n("x0").at(vec![ds(bin(BinOp::Mul, pid(0), int(2)), 4), full.clone()]),
                        ),
                        shape: vec![2, 2, 8],
                    },
                ),
                all(
                    "o0",
                    read("v", vec![ds(int(1), 1), full.clone(), full.clone()]).index(vec![
                        I::Int(0),
                        full.clone(),
                        full.clone(),
                    ]),
                ),
                all(
                    "o1",
                    read("v", vec![ds(pid(0), 1), full.clone(), full.clone()]),
                ),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Outputs,
        generic: true,
    });
    // Arithmetic: bf16 chains round per op; f32 constants fold; int32 wraps; floor division.
    let b = |x: E, y: E| bin(BinOp::Add, x, y);
    p.push(Probe {
        name: "bf16 rounds per op, f32 constants fold, int32 wraps and floors",
        module: module(
            &[(BF16, &[2, 128]), (F32, &[2, 128]), (I32, &[2, 128])],
            &[
                (BF16, &[2, 128]),
                (F32, &[2, 128]),
                (I32, &[2, 128]),
                (I32, &[2, 128]),
                (I32, &[2, 128]),
                (F32, &[2, 128]),
            ],
            &[],
            &[1],
            vec![
                assign("a", read("x0", vec![I::Ellipsis])),
                all(
                    "o0",
                    bin(
                        BinOp::Mul,
                        b(bin(BinOp::Mul, n("a"), n("a")), n("a")),
                        E::Float(3.0),
                    ),
                ),
                assign("f", read("x1", vec![I::Ellipsis])),
                all(
                    "o1",
                    bin(
                        BinOp::Sub,
                        b(b(b(n("f"), int(1)), E::Float(0.1)), n("f")),
                        E::Float(0.7),
                    ),
                ),
                assign("k", read("x2", vec![I::Ellipsis])),
                all("o2", bin(BinOp::FloorDiv, n("k"), int(-7))),
                all("o3", bin(BinOp::Mod, n("k"), int(-7))),
                all("o4", bin(BinOp::Mul, n("k"), int(2147483647))),
                all("o5", bin(BinOp::Div, n("k"), int(3))),
            ],
        ),
        inputs: vec![
            noise(BF16, &[2, 128], 1),
            noise(F32, &[2, 128], 2),
            noise(I32, &[2, 128], 3),
        ],
        expect: Expect::Outputs,
        generic: false,
    });
    // Summation orders: loop (<= 32), windows of 32 (> 32), YNNPACK (>= 4096 elements),
    // merged nested sums (halving for power-of-two outer dims, in order otherwise).
    p.push(Probe {
        name: "jnp.sum follows XLA:CPU's orders",
        module: module(
            &[
                (F32, &[16, 2, 128]),
                (F32, &[4, 2, 128]),
                (F32, &[3, 2, 128]),
                (F32, &[2, 48]),
            ],
            &[
                (F32, &[2, 128]),
                (F32, &[16, 2]),
                (F32, &[128]),
                (F32, &[128]),
                (F32, &[128]),
                (F32, &[2]),
                (F32, &[2, 128]),
            ],
            &[],
            &[1],
            vec![
                assign("big", read("x0", vec![I::Ellipsis])),
                all("o0", sum(n("big"), 0)),
                all("o1", sum(n("big"), 2)),
                all("o2", sum(sum(n("big"), 0), 0)),
                all("o3", sum(sum(read("x1", vec![I::Ellipsis]), 0), 0)),
                all("o4", sum(sum(read("x2", vec![I::Ellipsis]), 0), 0)),
                all("o5", sum(read("x3", vec![I::Ellipsis]), 1)),
                all("o6", sum(read("x2", vec![I::Ellipsis]), 0)),
            ],
        ),
        inputs: vec![
            noise(F32, &[16, 2, 128], 4),
            noise(F32, &[4, 2, 128], 5),
            noise(F32, &[3, 2, 128], 6),
            noise(F32, &[2, 48], 7),
        ],
        expect: Expect::Outputs,
        generic: false,
    });
    let special = Tensor::new(
        F32,
        vec![1, 8],
        vec![f64::NAN, 3e9, -3e9, 1.7, -1.7, 0.5, f64::INFINITY, -0.0],
    );
    let clip = |x: E| {
        jnp(Jnp::Clip {
            x: Box::new(x),
            lo: Box::new(E::Float(0.0)),
            hi: Box::new(E::Float(1.0)),
        })
    };
    p.push(Probe {
        name: "float to int saturates (NaN to 0); clip and minimum propagate NaN",
        module: module(
            &[(F32, &[1, 8])],
            &[(I32, &[1, 8]), (F32, &[1, 8]), (F32, &[1, 8])],
            &[],
            &[1],
            vec![
                assign("v", read("x0", vec![I::Ellipsis])),
                all("o0", n("v").astype(I32)),
                all("o1", clip(n("v"))),
                all(
                    "o2",
                    jnp(Jnp::Minimum(Box::new(n("v")), Box::new(E::Float(2.0)))),
                ),
            ],
        ),
        inputs: vec![special],
        expect: Expect::Outputs,
        generic: false,
    });
    p.push(Probe {
        name: "the grid runs row-major and emit_pipeline over a traced grid",
        module: module(
            &[ROWS],
            &[(I32, &[2, 3]), (F32, &[2, 8])],
            &[(MemorySpace::Smem, I32, &[1])],
            &[2, 3],
            vec![
                store(
                    "o0",
                    vec![ds(pid(0), 1), ds(pid(1), 1)],
                    jnp(Jnp::Full {
                        shape: vec![int(1), int(1)],
                        value: Box::new(b(bin(BinOp::Mul, pid(0), int(10)), pid(1))),
                        dtype: I32,
                    }),
                ),
                store("s0", vec![I::Int(0)], b(pid(1), int(0))),
                def(
                    "_p",
                    &["_i"],
                    vec![store(
                        "o1",
                        vec![ds(pid(0), 1), full.clone()],
                        read(
                            "x0",
                            vec![
                                ds(
                                    b(n("_i").index(vec![I::Int(0)]), read("s0", vec![I::Int(0)])),
                                    1,
                                ),
                                full.clone(),
                            ],
                        ),
                    )],
                ),
                S::Expr(E::EmitPipeline {
                    body: "_p".into(),
                    grid: vec![b(pid(1), int(1))],
                }),
            ],
        ),
        inputs: vec![rows()],
        expect: Expect::Outputs,
        generic: false,
    });
    // `lax.dot_general` as Helion emits a matrix product (`sim/src/ops/dot.rs`): float32
    // factors with at least 17 columns, or one row, are summed from k = 0 with one FMA per
    // term, bit for bit; a batch dim shares that order.
    let dot = |a: E, b: E, batched: bool| {
        jnp(Jnp::DotGeneral {
            lhs: Box::new(a),
            rhs: Box::new(b),
            contract: if batched { (2, 1) } else { (1, 0) },
            batched,
            preferred_f32: false,
            highest: false,
        })
    };
    // (lhs shape, rhs shape, result shape, batched, what both engines must give)
    type DotCase = (&'static [i64], &'static [i64], &'static [i64], bool, Expect);
    let f32_dots: [DotCase; 5] = [
        (&[8, 32], &[32, 128], &[8, 128], false, Expect::Outputs),
        (&[1, 128], &[128, 8], &[1, 8], false, Expect::Outputs),
        (&[8, 128], &[128, 32], &[8, 32], false, Expect::Outputs),
        (
            &[2, 8, 16],
            &[2, 16, 128],
            &[2, 8, 128],
            true,
            Expect::Outputs,
        ),
        // Mismatched contracted dims.
        (
            &[8, 16],
            &[8, 128],
            &[8, 128],
            false,
            Expect::Error("trace", "TypeError"),
        ),
    ];
    for (seed, (a, b, o, batched, expect)) in (11..).zip(f32_dots) {
        let usize_dims = |d: &[i64]| d.iter().map(|&n| n as usize).collect::<Vec<_>>();
        p.push(Probe {
            name: match (batched, &expect) {
                (_, Expect::Error(..)) => {
                    "lax.dot_general of mismatched contracted dims is a TypeError at trace"
                }
                (true, Expect::Outputs) => {
                    "a batched lax.dot_general sums each batch in the same order"
                }
                (false, Expect::Outputs) => {
                    "lax.dot_general of float32 factors sums from k = 0 with one FMA per term"
                }
            },
            module: module(
                &[(F32, a), (F32, b)],
                &[(F32, o)],
                &[],
                &[1],
                vec![all(
                    "o0",
                    dot(
                        read("x0", vec![I::Ellipsis]),
                        read("x1", vec![I::Ellipsis]),
                        batched,
                    ),
                )],
            ),
            inputs: vec![
                noise(F32, &usize_dims(a), 2 * seed),
                noise(F32, &usize_dims(b), 2 * seed + 1),
            ],
            expect,
            generic: false,
        });
    }
    // A one-hot gather as Helion's `emit_gather` writes it: an index outside the table
    // (7, -1) gathers zeros; a float32 table with `Precision.HIGHEST`, a bfloat16 one with
    // the default; the table contracted along dim 1.
    let idx = Tensor::new(I32, vec![5], vec![1.0, 0.0, 2.0, 7.0, -1.0]);
    for (dtype, highest) in [(F32, true), (BF16, false)] {
        p.push(Probe {
            name: "a one-hot gather: jax.nn.one_hot contracted with a table's dim",
            module: module(
                &[(I32, &[5]), (dtype, &[4, 3])],
                &[(dtype, &[5, 4])],
                &[],
                &[1],
                vec![all(
                    "o0",
                    jnp(Jnp::DotGeneral {
                        lhs: Box::new(jnp(Jnp::OneHot {
                            x: Box::new(read("x0", vec![I::Ellipsis])),
                            n: 3,
                            dtype,
                        })),
                        rhs: Box::new(read("x1", vec![I::Ellipsis])),
                        contract: (1, 1),
                        batched: false,
                        preferred_f32: true,
                        highest,
                    })
                    .astype(dtype),
                )],
            ),
            inputs: vec![idx.clone(), noise(dtype, &[4, 3], 17)],
            expect: Expect::Outputs,
            generic: false,
        });
    }
    p
}

/// The Python class JAX raised: the worker's `cause` (the exception inside a callback error),
/// else the class named on the message's last line (the worker misses a bare
/// `AssertionError:`), else the outer kind.
fn jax_class(e: &KernelError) -> String {
    if let Some(c) = &e.cause {
        return c.clone();
    }
    let last = e.message.trim().lines().last().unwrap_or("").trim();
    let name = last.split(':').next().unwrap_or("");
    if !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (name.ends_with("Error") || name.ends_with("Exception"))
    {
        return name.to_string();
    }
    e.kind.clone()
}

fn sim_result(m: &PallasModule, inputs: &[Tensor], generic: bool) -> Result<Vec<Tensor>, SimError> {
    let options = SimOptions {
        interpreter: if generic {
            Interpreter::Generic
        } else {
            Interpreter::Tpu
        },
        ..SimOptions::default()
    };
    Program::new(m).and_then(|p| p.run(inputs, &options))
}

fn same_bits(a: &[Tensor], b: &[Tensor]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} vs {} outputs", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        if x.shape != y.shape || x.dtype != y.dtype {
            return Err(format!("output {k}: {:?} vs {:?}", x.shape, y.shape));
        }
        for (i, (&p, &q)) in x.values.iter().zip(&y.values).enumerate() {
            if !float_order::accepts(p, q, y, None) {
                return Err(format!("output {k} element {i}: sim {p} jax {q}"));
            }
        }
    }
    Ok(())
}

#[test]
fn sim_semantics_match_jax() {
    let probes = probes();
    let python = tpu_runner::provision().expect("provision JAX (needs PyPI on first run)");
    let pool = Arc::new(
        Pool::new(tpu_runner::PoolConfig::new(python).with_workers(2)).expect("start JAX workers"),
    );
    let failures = Mutex::new(Vec::<String>::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut k = next.lock().unwrap();
                        *k += 1;
                        *k - 1
                    };
                    let Some(p) = probes.get(i) else { break };
                    let fail = |m: String| failures.lock().unwrap().push(format!("{}: {m}", p.name));
                    let source = print_module(&p.module);
                    let run = |mode| {
                        pool.run(&RunRequest {
                            mode,
                            source: source.clone(),
                            inputs: p.inputs.clone(),
                            call: None,
                            input_sets: Vec::new(),
                        })
                    };
                    let mode = if p.generic {
                        // The TPU interpreter cannot read through a Ref reshape (known issue).
                        match run(Mode::PallasTpuInterpret).map(|r| r.outcome) {
                            Ok(Err(e)) if e.message.contains("ReshapeTransform") || e.traceback.contains("ReshapeTransform") => {}
                            other => fail(format!("expected the TPU interpreter's reshape issue, got {other:?}")),
                        }
                        Mode::PallasInterpret
                    } else {
                        Mode::PallasTpuInterpret
                    };
                    let jax = match run(mode) {
                        Ok(r) => r.outcome,
                        Err(e) => {
                            fail(format!("worker failure: {e}"));
                            continue;
                        }
                    };
                    let sim = sim_result(&p.module, &p.inputs, p.generic);
                    match (&sim, &jax, &p.expect) {
                        (Ok(a), Ok(b), Expect::Outputs) => {
                            if let Err(d) = same_bits(a, b) {
                                fail(d);
                            }
                        }
                        (Err(a), Err(b), Expect::Error(stage, class)) => {
                            let got = (a.stage.name(), a.kind.name().to_string());
                            let want = (b.stage.name(), jax_class(b));
                            if got != want || got != (*stage, class.to_string()) {
                                fail(format!(
                                    "sim {got:?}, jax {want:?}, expected ({stage}, {class})\n  sim: {a}\n  jax: {}",
                                    b.message.lines().last().unwrap_or("")
                                ));
                            }
                        }
                        _ => fail(format!(
                            "sim {:?}, jax {:?}, expected {:?}",
                            sim.as_ref().map(|_| "outputs").map_err(|e| e.to_string()),
                            jax.as_ref().map(|_| "outputs").map_err(|e| format!("{} {}", e.stage, jax_class(e))),
                            p.expect
                        )),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    println!("{} probes, {} failed", probes.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
