//! The one printer from the Pallas AST to Python source.
//!
//! Precedence is Python's: an operand is parenthesized exactly when its own precedence is below
//! what its position requires (comparisons never chain: a comparison operand of a comparison is
//! parenthesized). Indentation is four spaces.

use super::{
    BinOp, BlockDim, CmpOp, CopyOp, Expr, Function, IndexPart, Jnp, Launcher, MemorySpace, Operand,
    OperandSource, PaddingFill, PallasModule, Stmt, Target,
};
use crate::tensor::DType;
use std::fmt::Write;

/// The TPU generation `run()` pretends to target off-TPU (the abstract mesh's device kind).
pub const TPU_KIND: &str = "TPU v5e";

/// Prints a module as Python source.
pub fn print_module(m: &PallasModule) -> String {
    let mut p = Printer {
        out: String::with_capacity(4096),
    };
    p.out.push_str("\"\"\"");
    for (i, line) in m.doc.iter().enumerate() {
        if i > 0 {
            p.out.push('\n');
        }
        p.out
            .push_str(&line.replace('\\', "\\\\").replace("\"\"\"", "'''"));
    }
    p.out.push_str("\n\"\"\"\n");
    p.out.push_str(
        "import functools  # noqa: F401\n\
         import jax\n\
         import jax.numpy as jnp\n\
         from jax.experimental import pallas as pl\n\
         from jax.experimental.pallas import tpu as pltpu\n\n\n",
    );
    p.function(&m.kernel, 0);
    p.out.push_str("\n\n");
    p.launcher(&m.launcher);
    p.out.push_str("\n\n");
    p.run_helper();
    p.out
}

struct Printer {
    out: String,
}

// Python precedence levels (higher binds tighter).
const P_TUPLE: u8 = 0;
const P_CMP: u8 = 5;
const P_OR: u8 = 6;
const P_XOR: u8 = 7;
const P_AND: u8 = 8;
const P_ADD: u8 = 10;
const P_MUL: u8 = 11;
const P_UNARY: u8 = 12;
const P_ATOM: u8 = 14;

fn bin_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Add | BinOp::Sub => P_ADD,
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => P_MUL,
        BinOp::BitAnd => P_AND,
        BinOp::BitOr => P_OR,
        BinOp::BitXor => P_XOR,
    }
}

fn bin_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
    }
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
    }
}

fn dtype(d: DType) -> &'static str {
    d.jnp_name()
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Int(v) if *v < 0 => P_UNARY,
        Expr::Float(v) if v.is_sign_negative() && !v.is_nan() => P_UNARY,
        Expr::Binary { op, .. } => bin_prec(*op),
        Expr::Compare { .. } => P_CMP,
        Expr::Neg(_) => P_UNARY,
        Expr::Name(_)
        | Expr::Int(_)
        | Expr::Float(_)
        | Expr::Bool(_)
        | Expr::None
        | Expr::Tuple(_)
        | Expr::Index { .. }
        | Expr::At { .. }
        | Expr::RefReshape { .. }
        | Expr::Astype { .. }
        | Expr::Ds { .. }
        | Expr::MultipleOf { .. }
        | Expr::ProgramId(_)
        | Expr::Jnp(_)
        | Expr::ForiLoop { .. }
        | Expr::Cond { .. }
        | Expr::EmitPipeline { .. } => P_ATOM,
    }
}

fn float_literal(v: f64) -> String {
    if v.is_nan() {
        "jnp.nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "jnp.inf".into()
        } else {
            "-jnp.inf".into()
        }
    } else {
        format!("{v:?}")
    }
}

fn shape_tuple(shape: &[i64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Printer {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    fn function(&mut self, f: &Function, depth: usize) {
        self.indent(depth);
        let _ = writeln!(self.out, "def {}({}):", f.name, f.params.join(", "));
        self.body(&f.body, depth + 1);
    }

    fn body(&mut self, body: &[Stmt], depth: usize) {
        if body.is_empty() {
            self.indent(depth);
            self.out.push_str("pass\n");
        }
        for (i, s) in body.iter().enumerate() {
            // A blank line around nested definitions, as a formatter would put them.
            let def = |s: &Stmt| matches!(s, Stmt::Def(_) | Stmt::When { .. });
            if i > 0 && (def(s) || def(&body[i - 1])) {
                self.out.push('\n');
            }
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::Assign { target, value } => {
                self.indent(depth);
                match target {
                    Target::Name(n) => self.out.push_str(n),
                    Target::Tuple(names) => {
                        self.out.push('(');
                        self.out.push_str(&names.join(", "));
                        if names.len() == 1 {
                            self.out.push(',');
                        }
                        self.out.push(')');
                    }
                }
                self.out.push_str(" = ");
                self.expr(value, P_TUPLE);
                self.out.push('\n');
            }
            Stmt::Store {
                target,
                index,
                value,
            } => {
                self.indent(depth);
                self.expr(target, P_ATOM);
                self.index(index);
                self.out.push_str(" = ");
                self.expr(value, P_TUPLE);
                self.out.push('\n');
            }
            Stmt::For {
                var,
                start,
                stop,
                step,
                body,
            } => {
                self.indent(depth);
                let _ = write!(self.out, "for {var} in range(");
                self.expr(start, P_TUPLE + 1);
                self.out.push_str(", ");
                self.expr(stop, P_TUPLE + 1);
                if let Some(step) = step {
                    self.out.push_str(", ");
                    self.expr(step, P_TUPLE + 1);
                }
                self.out.push_str("):\n");
                self.body(body, depth + 1);
            }
            Stmt::Def(f) => self.function(f, depth),
            Stmt::Return(v) => {
                self.indent(depth);
                match v {
                    None => self.out.push_str("return\n"),
                    Some(v) => {
                        self.out.push_str("return ");
                        self.expr(v, P_TUPLE);
                        self.out.push('\n');
                    }
                }
            }
            Stmt::Expr(e) => {
                self.indent(depth);
                self.expr(e, P_TUPLE);
                self.out.push('\n');
            }
            Stmt::When { pred, body } => {
                self.indent(depth);
                self.out.push_str("@pl.when(");
                self.expr(pred, P_TUPLE + 1);
                self.out.push_str(")\n");
                self.function(body, depth);
            }
            Stmt::AsyncCopy { src, dst, sem, op } => {
                self.indent(depth);
                self.out.push_str("pltpu.make_async_copy(");
                self.args(&[src, dst, sem]);
                self.out.push_str(match op {
                    CopyOp::Start => ").start()\n",
                    CopyOp::Wait => ").wait()\n",
                });
            }
        }
    }

    fn args(&mut self, args: &[&Expr]) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(a, P_TUPLE + 1);
        }
    }

    fn shape_exprs(&mut self, shape: &[Expr]) {
        self.out.push('(');
        for (i, d) in shape.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(d, P_TUPLE + 1);
        }
        if shape.len() == 1 {
            self.out.push(',');
        }
        self.out.push(')');
    }

    fn index(&mut self, parts: &[IndexPart]) {
        self.out.push('[');
        if parts.is_empty() {
            self.out.push_str("()");
        }
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match p {
                IndexPart::Full => self.out.push(':'),
                IndexPart::NewAxis => self.out.push_str("None"),
                IndexPart::Ellipsis => self.out.push_str("..."),
                IndexPart::Int(v) => {
                    let _ = write!(self.out, "{v}");
                }
                IndexPart::Slice { start, stop } => {
                    if let Some(s) = start {
                        let _ = write!(self.out, "{s}");
                    }
                    self.out.push(':');
                    if let Some(s) = stop {
                        let _ = write!(self.out, "{s}");
                    }
                }
                IndexPart::Expr(e) => self.expr(e, P_TUPLE + 1),
            }
        }
        self.out.push(']');
    }

    fn expr(&mut self, e: &Expr, min: u8) {
        let paren = prec(e) < min;
        if paren {
            self.out.push('(');
        }
        self.expr_inner(e);
        if paren {
            self.out.push(')');
        }
    }

    fn expr_inner(&mut self, e: &Expr) {
        match e {
            Expr::Name(n) => self.out.push_str(n),
            Expr::Int(v) => {
                let _ = write!(self.out, "{v}");
            }
            Expr::Float(v) => {
                let s = float_literal(*v);
                self.out.push_str(&s);
            }
            Expr::Bool(b) => self.out.push_str(if *b { "True" } else { "False" }),
            Expr::None => self.out.push_str("None"),
            Expr::Tuple(items) => {
                self.out.push('(');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(x, P_TUPLE + 1);
                }
                if items.len() == 1 {
                    self.out.push(',');
                }
                self.out.push(')');
            }
            Expr::Binary { op, lhs, rhs } => {
                let p = bin_prec(*op);
                self.expr(lhs, p);
                let _ = write!(self.out, " {} ", bin_symbol(*op));
                self.expr(rhs, p + 1);
            }
            Expr::Compare { op, lhs, rhs } => {
                self.expr(lhs, P_CMP + 1);
                let _ = write!(self.out, " {} ", cmp_symbol(*op));
                self.expr(rhs, P_CMP + 1);
            }
            Expr::Neg(v) => {
                self.out.push('-');
                self.expr(v, P_UNARY);
            }
            Expr::Index { base, index } => {
                self.expr(base, P_ATOM);
                self.index(index);
            }
            Expr::At { base, index } => {
                self.expr(base, P_ATOM);
                self.out.push_str(".at");
                self.index(index);
            }
            Expr::RefReshape { base, shape } => {
                self.expr(base, P_ATOM);
                let _ = write!(self.out, ".reshape({})", shape_tuple(shape));
            }
            Expr::Astype { value, dtype: d } => {
                self.expr(value, P_ATOM);
                let _ = write!(self.out, ".astype({})", dtype(*d));
            }
            Expr::Ds { start, size } => {
                self.out.push_str("pl.ds(");
                self.args(&[start, size]);
                self.out.push(')');
            }
            Expr::MultipleOf { value, multiple } => {
                self.out.push_str("pl.multiple_of(");
                self.args(&[value, multiple]);
                self.out.push(')');
            }
            Expr::ProgramId(axis) => {
                let _ = write!(self.out, "pl.program_id({axis})");
            }
            Expr::Jnp(j) => self.jnp(j),
            Expr::ForiLoop {
                lower,
                upper,
                body,
                init,
            } => {
                self.out.push_str("jax.lax.fori_loop(");
                self.args(&[lower, upper, &Expr::Name(body.clone()), init]);
                self.out.push(')');
            }
            Expr::Cond {
                pred,
                then_fn,
                else_fn,
                operands,
            } => {
                self.out.push_str("jax.lax.cond(");
                self.expr(pred, P_TUPLE + 1);
                let _ = write!(self.out, ", {then_fn}, {else_fn}");
                for o in operands {
                    self.out.push_str(", ");
                    self.expr(o, P_TUPLE + 1);
                }
                self.out.push(')');
            }
            Expr::EmitPipeline { body, grid } => {
                let _ = write!(self.out, "pltpu.emit_pipeline({body}, grid=");
                self.shape_exprs(grid);
                self.out.push_str(", _explicit_indices=True)()");
            }
        }
    }

    fn jnp(&mut self, j: &Jnp) {
        match j {
            Jnp::Clip { x, lo, hi } => {
                self.out.push_str("jnp.clip(");
                self.args(&[x, lo, hi]);
                self.out.push(')');
            }
            Jnp::Minimum(a, b) => {
                self.out.push_str("jnp.minimum(");
                self.args(&[a, b]);
                self.out.push(')');
            }
            Jnp::Maximum(a, b) => {
                self.out.push_str("jnp.maximum(");
                self.args(&[a, b]);
                self.out.push(')');
            }
            Jnp::Arange {
                start,
                stop,
                dtype: d,
            } => {
                self.out.push_str("jnp.arange(");
                self.args(&[start, stop]);
                let _ = write!(self.out, ", dtype={})", dtype(*d));
            }
            Jnp::Zeros { shape, dtype: d } => {
                self.out.push_str("jnp.zeros(");
                self.shape_exprs(shape);
                let _ = write!(self.out, ", {})", dtype(*d));
            }
            Jnp::Full {
                shape,
                value,
                dtype: d,
            } => {
                self.out.push_str("jnp.full(");
                self.shape_exprs(shape);
                self.out.push_str(", ");
                self.expr(value, P_TUPLE + 1);
                let _ = write!(self.out, ", {})", dtype(*d));
            }
            Jnp::Sum { x, axis } => {
                self.out.push_str("jnp.sum(");
                self.expr(x, P_TUPLE + 1);
                let _ = write!(self.out, ", axis={axis})");
            }
            Jnp::Reshape { x, shape } => {
                self.out.push_str("jnp.reshape(");
                self.expr(x, P_TUPLE + 1);
                let _ = write!(self.out, ", {})", shape_tuple(shape));
            }
            Jnp::Transpose { x, axes } => {
                self.out.push_str("jnp.transpose(");
                self.expr(x, P_TUPLE + 1);
                let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
                let _ = write!(self.out, ", {})", shape_tuple(&axes));
            }
            Jnp::DynamicSliceInDim {
                x,
                start,
                size,
                axis,
            } => {
                self.out.push_str("jax.lax.dynamic_slice_in_dim(");
                self.args(&[x, start]);
                let _ = write!(self.out, ", {size}, axis={axis})");
            }
            Jnp::BroadcastTo { x, shape } => {
                self.out.push_str("jnp.broadcast_to(");
                self.expr(x, P_TUPLE + 1);
                let _ = write!(self.out, ", {})", shape_tuple(shape));
            }
            Jnp::Where { cond, a, b } => {
                self.out.push_str("jnp.where(");
                self.args(&[cond, a, b]);
                self.out.push(')');
            }
            Jnp::DotGeneral {
                lhs,
                rhs,
                contract: (cl, cr),
                batched,
                preferred_f32,
                highest,
            } => {
                self.out.push_str("jax.lax.dot_general(");
                self.args(&[lhs, rhs]);
                let batch = if *batched { "((0,), (0,))" } else { "((), ())" };
                let _ = write!(
                    self.out,
                    ", dimension_numbers=((({cl},), ({cr},)), {batch}), precision={}{})",
                    if *highest {
                        "jax.lax.Precision.HIGHEST"
                    } else {
                        "'default'"
                    },
                    if *preferred_f32 {
                        ", preferred_element_type=jnp.float32"
                    } else {
                        ""
                    }
                );
            }
            Jnp::OneHot { x, n, dtype: d } => {
                self.out.push_str("jax.nn.one_hot(");
                self.expr(x, P_TUPLE + 1);
                let _ = write!(self.out, ", {n}, dtype={})", dtype(*d));
            }
        }
    }

    fn launcher(&mut self, l: &Launcher) {
        let fill = |d: DType| -> String {
            match (l.padding, d) {
                (PaddingFill::Zero, _) => "0".into(),
                (PaddingFill::Poison, DType::Float32 | DType::Bfloat16) => "jnp.nan".into(),
                (PaddingFill::Poison, DType::Int32) => i32::MAX.to_string(),
            }
        };
        self.out.push_str("def make(interpret):\n");
        let _ = writeln!(
            self.out,
            "    \"\"\"Returns `f(*inputs) -> tuple` running `{}` under `interpret` (True, \
             `pltpu.InterpretParams(...)`, or False).\"\"\"\n",
            l.kernel
        );
        let _ = writeln!(self.out, "    def f({}):", l.params.join(", "));
        let mut operand_names = Vec::with_capacity(l.operands.len());
        for (i, op) in l.operands.iter().enumerate() {
            let padded = op.padded_shape();
            match &op.source {
                OperandSource::Param(k) | OperandSource::HbmParam(k) => {
                    let name = l
                        .params
                        .get(*k)
                        .cloned()
                        .unwrap_or_else(|| format!("_arg{k}"));
                    if op.pad_after.iter().all(|&p| p == 0) {
                        operand_names.push(name);
                    } else {
                        let widths: Vec<String> =
                            op.pad_after.iter().map(|p| format!("(0, {p})")).collect();
                        let widths = if widths.len() == 1 {
                            format!("({},)", widths[0])
                        } else {
                            format!("({})", widths.join(", "))
                        };
                        let padded_name = format!("_operand_{i}");
                        let _ = writeln!(
                            self.out,
                            "        {padded_name} = jnp.pad({name}, {widths}, constant_values={})",
                            fill(op.dtype)
                        );
                        operand_names.push(padded_name);
                    }
                }
                OperandSource::Zeros => {
                    let name = format!("_operand_{i}");
                    let _ = writeln!(
                        self.out,
                        "        {name} = jnp.zeros({}, {})",
                        shape_tuple(&padded),
                        dtype(op.dtype)
                    );
                    operand_names.push(name);
                }
            }
        }
        self.out.push_str("        outs = pl.pallas_call(\n");
        let _ = writeln!(self.out, "            {},", l.kernel);
        let _ = writeln!(self.out, "            grid={},", shape_tuple(&l.grid));
        let spec = "pl.BlockSpec(memory_space=pltpu.VMEM)";
        let specs = |n: usize| vec![spec; n].join(", ");
        let in_specs: Vec<String> = l
            .operands
            .iter()
            .map(|o| match o.source {
                OperandSource::Param(_) | OperandSource::Zeros if o.is_blocked() => block_spec(o),
                OperandSource::Param(_) | OperandSource::Zeros => spec.to_string(),
                OperandSource::HbmParam(_) => "pl.BlockSpec(memory_space=pl.ANY)".to_string(),
            })
            .collect();
        let _ = writeln!(self.out, "            in_specs=[{}],", in_specs.join(", "));
        let _ = writeln!(
            self.out,
            "            out_specs=[{}],",
            specs(l.outputs.len())
        );
        let shapes: Vec<String> = l
            .outputs
            .iter()
            .map(|o| {
                format!(
                    "jax.ShapeDtypeStruct({}, {})",
                    shape_tuple(&o.padded_shape()),
                    dtype(o.dtype)
                )
            })
            .collect();
        let _ = writeln!(self.out, "            out_shape=[{}],", shapes.join(", "));
        if !l.scratch.is_empty() {
            let scratch: Vec<String> = l
                .scratch
                .iter()
                .map(|s| match s.space {
                    MemorySpace::Vmem => {
                        format!("pltpu.VMEM({}, {})", shape_tuple(&s.shape), dtype(s.dtype))
                    }
                    MemorySpace::Smem => {
                        format!("pltpu.SMEM({}, {})", shape_tuple(&s.shape), dtype(s.dtype))
                    }
                    MemorySpace::DmaSemaphore => {
                        format!("pltpu.SemaphoreType.DMA({})", shape_tuple(&s.shape))
                    }
                })
                .collect();
            let _ = writeln!(
                self.out,
                "            scratch_shapes=[{}],",
                scratch.join(", ")
            );
        }
        let aliases: Vec<String> = l
            .outputs
            .iter()
            .enumerate()
            .filter_map(|(o, out)| out.aliases.map(|i| format!("{i}: {o}")))
            .collect();
        if !aliases.is_empty() {
            let _ = writeln!(
                self.out,
                "            input_output_aliases={{{}}},",
                aliases.join(", ")
            );
        }
        self.out.push_str("            interpret=interpret,\n");
        let _ = writeln!(self.out, "        )({})", operand_names.join(", "));
        let returns: Vec<String> = l
            .returns
            .iter()
            .map(|&k| {
                let Some(o) = l.outputs.get(k) else {
                    return format!("outs[{k}]");
                };
                if o.pad_after.iter().all(|&p| p == 0) {
                    format!("outs[{k}]")
                } else {
                    let parts: Vec<String> = o
                        .shape
                        .iter()
                        .zip(&o.pad_after)
                        .map(|(s, p)| {
                            if *p == 0 {
                                ":".to_string()
                            } else {
                                format!(":{s}")
                            }
                        })
                        .collect();
                    format!("outs[{k}][{}]", parts.join(", "))
                }
            })
            .collect();
        match returns.len() {
            1 => {
                let _ = writeln!(self.out, "        return ({},)", returns[0]);
            }
            _ => {
                let _ = writeln!(self.out, "        return ({})", returns.join(", "));
            }
        }
        self.out.push_str("\n    return f\n");
    }

    fn run_helper(&mut self) {
        let _ = write!(
            self.out,
            "def run(*inputs, mode=\"pallas-tpu-interpret\"):\n\
             \x20   \"\"\"Runs the kernel on `inputs` in a worker mode (a convenience for by-hand use).\"\"\"\n\
             \x20   if mode == \"pallas-tpu\":\n\
             \x20       return jax.jit(make(False))(*inputs)\n\
             \x20   from jax._src.mesh import AbstractDevice\n\
             \n\
             \x20   interpret = {{\n\
             \x20       \"pallas-interpret\": True,\n\
             \x20       \"pallas-tpu-interpret\": pltpu.InterpretParams(\n\
             \x20           out_of_bounds_reads=\"raise\", uninitialized_memory=\"nan\"\n\
             \x20       ),\n\
             \x20   }}[mode]\n\
             \x20   device = AbstractDevice(device_kind=\"{TPU_KIND}\", num_cores=1, platform=\"tpu\")\n\
             \x20   mesh = jax.sharding.AbstractMesh((1,), (\"x\",), abstract_device=device)\n\
             \x20   with jax.sharding.use_abstract_mesh(mesh):\n\
             \x20       return jax.jit(make(interpret))(*inputs)\n"
        );
    }
}

/// `pl.BlockSpec(block_shape, index_map, memory_space=pltpu.VMEM)` of a grid-tiled operand
/// (D-1.5.1-19): the index map is Helion's launcher's, `jnp.minimum(jnp.int32(g[axis]), last)`
/// on a tiled dim and `jnp.int32(0)` elsewhere.
fn block_spec(o: &Operand) -> String {
    let padded = o.padded_shape();
    let index: Vec<String> = padded
        .iter()
        .zip(&o.block)
        .map(|(&dim, b)| match *b {
            BlockDim::Tiled { axis: Some(a), .. } => {
                format!("jnp.minimum(jnp.int32(g[{a}]), {})", b.last_block(dim))
            }
            BlockDim::Whole | BlockDim::Tiled { axis: None, .. } => "jnp.int32(0)".to_string(),
        })
        .collect();
    let index = if index.len() == 1 {
        format!("({},)", index[0])
    } else {
        format!("({})", index.join(", "))
    };
    format!(
        "pl.BlockSpec({}, lambda *g: {index}, memory_space=pltpu.VMEM)",
        shape_tuple(&o.block_shape())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Expr) -> String {
        let mut p = Printer { out: String::new() };
        p.expr(e, P_TUPLE);
        p.out
    }

    #[test]
    fn precedence_parenthesizes_only_where_needed() {
        let a = Expr::name("a");
        let b = Expr::name("b");
        let c = Expr::name("c");
        let sum = Expr::Binary {
            op: BinOp::Add,
            lhs: Box::new(a.clone()),
            rhs: Box::new(b.clone()),
        };
        let prod = Expr::Binary {
            op: BinOp::Mul,
            lhs: Box::new(sum.clone()),
            rhs: Box::new(c.clone()),
        };
        assert_eq!(show(&prod), "(a + b) * c");
        let diff = Expr::Binary {
            op: BinOp::Sub,
            lhs: Box::new(a.clone()),
            rhs: Box::new(sum.clone()),
        };
        assert_eq!(show(&diff), "a - (a + b)");
        let left = Expr::Binary {
            op: BinOp::Sub,
            lhs: Box::new(sum.clone()),
            rhs: Box::new(c),
        };
        assert_eq!(show(&left), "a + b - c");
        assert_eq!(
            show(&sum.clone().astype(DType::Bfloat16)),
            "(a + b).astype(jnp.bfloat16)"
        );
        let cmp = sum.compare(CmpOp::Lt, b);
        assert_eq!(show(&cmp), "a + b < b");
        assert_eq!(
            show(&Expr::Int(-3).astype(DType::Float32)),
            "(-3).astype(jnp.float32)"
        );
    }

    #[test]
    fn index_parts_print_as_python() {
        let e = Expr::name("x").at(vec![
            IndexPart::Expr(Expr::ds(
                Expr::multiple_of(Expr::name("offset_0"), Expr::name("_BLOCK_SIZE_0")),
                Expr::name("_BLOCK_SIZE_0"),
            )),
            IndexPart::Full,
            IndexPart::Full,
        ]);
        assert_eq!(
            show(&e),
            "x.at[pl.ds(pl.multiple_of(offset_0, _BLOCK_SIZE_0), _BLOCK_SIZE_0), :, :]"
        );
        let v = Expr::name("v").index(vec![
            IndexPart::Full,
            IndexPart::Slice {
                start: Some(64),
                stop: Some(192),
            },
            IndexPart::NewAxis,
            IndexPart::Int(0),
        ]);
        assert_eq!(show(&v), "v[:, 64:192, None, 0]");
        assert_eq!(
            show(&Expr::name("x").index(vec![IndexPart::Ellipsis])),
            "x[...]"
        );
        assert_eq!(show(&Expr::Float(f64::NAN)), "jnp.nan");
        assert_eq!(show(&Expr::Float(0.5)), "0.5");
        assert_eq!(show(&Expr::Tuple(vec![Expr::name("a")])), "(a,)");
    }
}
