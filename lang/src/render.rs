//! The renderer: IR + config + inputs back to a case script that real Helion can run unchanged
//! (with `HELION_PALLAS_INTERPRET=1`), and that [`crate::frontend::parse_case`] reads back to the
//! same IR (parse ∘ render is the identity on span-stripped IR).
//!
//! Rendering is canonical: one spelling per IR form (`.float()` for float32 casts, `.to(dtype)`
//! otherwise; `hl.load`/`hl.store` only where the IR says `explicit`). [`spell_out_inputs`]
//! replaces random and poison constructors by their exact values, for bug reports.

use crate::ir::{
    AllocKind, AllocShape, Arg, BinOp, Case, Ctor, DType, Expr, ExprKind, Index, Input, InputOp,
    Loop, LoopKind, Stmt, StmtKind, TensorOp, ViewOp,
};
use std::fmt::Write;

/// Renders a case as a case script.
pub fn render_case(case: &Case) -> String {
    let mut out = render_kernel(case);
    out.push_str("\n\n");
    if let Some(seed) = case.seed {
        let _ = writeln!(out, "torch.manual_seed({seed})");
    }
    let names = input_names(case);
    for (input, name) in case.inputs.iter().zip(&names) {
        let _ = writeln!(out, "{name} = {}", render_input(input));
    }
    let renamed = |n: &str| {
        case.inputs
            .iter()
            .zip(&names)
            .find(|(i, _)| i.name == n)
            .map_or_else(|| n.to_string(), |(_, r)| r.clone())
    };
    let args = join(case.call.args.iter().map(|a| match a {
        Arg::Input(n) => renamed(n),
        Arg::Int(v) => v.to_string(),
        Arg::Float(v) => float(*v),
        Arg::Bool(b) => if *b { "True" } else { "False" }.to_string(),
    }));
    match &case.call.result {
        Some(r) => {
            let _ = writeln!(out, "{r} = {}({args})", case.kernel.name);
        }
        None => {
            let _ = writeln!(out, "{}({args})", case.kernel.name);
        }
    }
    out
}

/// The names the inputs are rendered under. The inputs of a case script are module globals,
/// and Helion resolves a name the kernel assigns inside a device loop without having bound it
/// to the module global of that name, a host variable: `CannotModifyHostVariableOnDevice` (the
/// frontend refuses such a script). The IR has no such scope (inputs and kernel names are
/// apart), so an input whose name a device loop assigns, and no parameter shadows, is rendered
/// as `<name>_input` (or `<name>_input<k>`, the first name free in the case), so the script
/// means what the IR means. Every other input keeps its name.
pub fn input_names(case: &Case) -> Vec<String> {
    let mut device_assigned = Vec::new();
    let mut taken: Vec<String> = ["torch", "helion", "hl"]
        .into_iter()
        .map(String::from)
        .chain([case.kernel.name.clone()])
        .chain(case.call.result.clone())
        .chain(case.kernel.params.iter().map(|p| p.name.clone()))
        .chain(case.inputs.iter().map(|i| i.name.clone()))
        .collect();
    fn visit(body: &[Stmt], depth: usize, device: &mut Vec<String>, taken: &mut Vec<String>) {
        for st in body {
            match &st.kind {
                StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                    if depth > 0 {
                        device.push(target.clone());
                    }
                    taken.push(target.clone());
                }
                StmtKind::For(lp) => {
                    taken.extend(lp.vars.iter().cloned());
                    visit(&lp.body, depth + 1, device, taken);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    visit(then_body, depth, device, taken);
                    visit(else_body, depth, device, taken);
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
            }
        }
    }
    visit(&case.kernel.body, 0, &mut device_assigned, &mut taken);
    let mut out = Vec::with_capacity(case.inputs.len());
    for input in &case.inputs {
        let clashes = device_assigned.contains(&input.name)
            && !case.kernel.params.iter().any(|p| p.name == input.name);
        if !clashes {
            out.push(input.name.clone());
            continue;
        }
        let fresh = (0..)
            .map(|k| match k {
                0 => format!("{}_input", input.name),
                k => format!("{}_input{k}", input.name),
            })
            .find(|n| !taken.contains(n))
            .expect("finitely many names are taken");
        taken.push(fresh.clone());
        out.push(fresh);
    }
    out
}

/// Renders the kernel part of a case script: the imports and the `@helion.kernel` function,
/// without inputs or call (what the Helion engines import; their lines are the case script's).
pub fn render_kernel(case: &Case) -> String {
    let mut out = String::new();
    out.push_str("import torch\nimport helion\nimport helion.language as hl\n\n\n");
    let c = &case.config;
    let mut cfg = vec![format!(
        "block_sizes=[{}]",
        join(c.block_sizes.iter().map(|b| b.to_string()))
    )];
    if let Some(l) = c.loop_type {
        cfg.push(format!("pallas_loop_type=\"{}\"", l.name()));
    }
    if let Some(g) = c.worklist_grouping {
        cfg.push(format!("pallas_worklist_grouping={g}"));
    }
    if let Some(b) = &c.load_buffer_count {
        cfg.push(format!(
            "pallas_load_buffer_count=[{}]",
            join(b.iter().map(|x| x.to_string()))
        ));
    }
    for kept in &c.extra {
        cfg.push(format!("{}={}", kept.key, kept.value.render()));
    }
    out.push_str("@helion.kernel(\n    backend=\"pallas\",\n");
    if !c.settings.iter().any(|s| s.key == "static_shapes") {
        out.push_str("    static_shapes=True,\n");
    }
    for kept in &c.settings {
        let _ = writeln!(out, "    {}={},", kept.key, kept.value.render());
    }
    let _ = writeln!(out, "    config=helion.Config({}),\n)", cfg.join(", "));
    let params = join(case.kernel.params.iter().map(|p| {
        format!(
            "{}: {}",
            p.name,
            match p.kind {
                crate::ir::ParamKind::Tensor => "torch.Tensor",
                crate::ir::ParamKind::Int => "int",
                crate::ir::ParamKind::Float => "float",
                crate::ir::ParamKind::Bool => "bool",
            }
        )
    }));
    let _ = writeln!(out, "def {}({params}):", case.kernel.name);
    render_body(&mut out, &case.kernel.body, 1);
    out
}

/// Renders one kernel body (for reports that show the kernel alone).
pub fn render_body_text(body: &[Stmt], depth: usize) -> String {
    let mut out = String::new();
    render_body(&mut out, body, depth);
    out
}

/// The arguments of `.view` / `.reshape`: the dims, or `()` for a 0-d result (torch refuses
/// `.view()` with no arguments: `TorchOpTracingError` in Helion 1.5.1).
fn view_dims(d: &[Expr]) -> String {
    if d.is_empty() {
        "()".to_string()
    } else {
        join(d.iter().map(expr))
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("    ");
    }
}

fn render_body(out: &mut String, body: &[Stmt], depth: usize) {
    if body.is_empty() {
        indent(out, depth);
        out.push_str("pass\n");
    }
    for stmt in body {
        render_stmt(out, stmt, depth);
    }
}

fn render_stmt(out: &mut String, stmt: &Stmt, depth: usize) {
    indent(out, depth);
    match &stmt.kind {
        StmtKind::Assign { target, value } => {
            let _ = writeln!(out, "{target} = {}", expr(value));
        }
        StmtKind::AugAssign { target, op, value } => {
            let _ = writeln!(out, "{target} {}= {}", op.symbol(), expr(value));
        }
        StmtKind::Store {
            tensor,
            indices,
            value,
            explicit,
        } => {
            if *explicit {
                let _ = writeln!(
                    out,
                    "hl.store({tensor}, [{}], {})",
                    index_list(indices),
                    expr(value)
                );
            } else {
                let _ = writeln!(
                    out,
                    "{tensor}[{}] = {}",
                    subscript_indices(indices),
                    expr(value)
                );
            }
        }
        StmtKind::Atomic {
            op,
            tensor,
            indices,
            expected,
            value,
        } => {
            let extra = expected
                .as_ref()
                .map(|x| format!("{}, ", expr(x)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "hl.{}({tensor}, [{}], {extra}{})",
                op.name(),
                index_list(indices),
                expr(value)
            );
        }
        StmtKind::For(lp) => {
            let _ = writeln!(out, "for {} in {}:", lp.vars.join(", "), loop_iter(lp));
            render_body(out, &lp.body, depth + 1);
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            let _ = writeln!(out, "if {}:", expr(cond));
            render_body(out, then_body, depth + 1);
            if !else_body.is_empty() {
                indent(out, depth);
                out.push_str("else:\n");
                render_body(out, else_body, depth + 1);
            }
        }
        StmtKind::Return(values) => {
            let _ = writeln!(out, "return {}", join(values.iter().map(expr)));
        }
    }
}

fn loop_iter(lp: &Loop) -> String {
    let f = match lp.kind {
        LoopKind::Tile => "hl.tile",
        LoopKind::Grid => "hl.grid",
    };
    let has_begin = lp.dims.iter().any(|d| d.begin.is_some());
    let mut args = if lp.list_form {
        let mut a = Vec::new();
        if has_begin {
            a.push(format!(
                "[{}]",
                join(
                    lp.dims
                        .iter()
                        .map(|d| d.begin.as_ref().map_or("0".to_string(), expr))
                )
            ));
        }
        a.push(format!("[{}]", join(lp.dims.iter().map(|d| expr(&d.end)))));
        a
    } else {
        let d = &lp.dims[0];
        let mut a = Vec::new();
        if let Some(b) = &d.begin {
            a.push(expr(b));
        }
        a.push(expr(&d.end));
        a
    };
    if lp.dims.iter().any(|d| d.block_size.is_some()) {
        if lp.list_form {
            args.push(format!(
                "block_size=[{}]",
                join(
                    lp.dims
                        .iter()
                        .map(|d| d.block_size.as_ref().map_or("None".to_string(), expr))
                )
            ));
        } else if let Some(b) = &lp.dims[0].block_size {
            args.push(format!("block_size={}", expr(b)));
        }
    }
    format!("{f}({})", args.join(", "))
}

/// An `hl.load`/`hl.store`/atomic index list: a Python list, where `:` is spelled
/// `slice(None)` and `a:b:s` is `slice(a, b, s)`.
fn index_list(indices: &[Index]) -> String {
    let opt = |e: &Option<Expr>| e.as_ref().map_or("None".to_string(), expr);
    join(indices.iter().map(|i| match i {
        Index::Full => "slice(None)".to_string(),
        Index::Slice { start, stop, step } => match step {
            None => format!("slice({}, {})", opt(start), opt(stop)),
            Some(_) => format!("slice({}, {}, {})", opt(start), opt(stop), opt(step)),
        },
        Index::NewAxis | Index::Int(_) | Index::Expr(_) => index(i),
    }))
}

fn subscript_indices(indices: &[Index]) -> String {
    join(indices.iter().map(index))
}

fn index(i: &Index) -> String {
    match i {
        Index::Full => ":".into(),
        Index::NewAxis => "None".into(),
        Index::Int(k) => k.to_string(),
        Index::Slice { start, stop, step } => {
            let part = |e: &Option<Expr>| e.as_ref().map(expr).unwrap_or_default();
            let mut s = format!("{}:{}", part(start), part(stop));
            if step.is_some() {
                s = format!("{s}:{}", part(step));
            }
            // Space the colon around binary bounds, as PEP 8 asks: `x[live - 3 : live]`.
            let complex = [start, stop]
                .into_iter()
                .flatten()
                .any(|e| matches!(e.kind, ExprKind::Binary { .. }));
            if complex && step.is_none() {
                s = format!("{} : {}", part(start), part(stop));
            }
            s
        }
        Index::Expr(e) => expr(e),
    }
}

/// Binding strength for parenthesization: higher binds tighter (Python's order: comparisons,
/// `|`, `&`, `+ -`, `* / // %`, unary minus, postfix).
fn prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Compare { .. }
        | ExprKind::Op {
            op: TensorOp::Cmp(_),
            ..
        } => 10,
        ExprKind::Op {
            op: TensorOp::Or, ..
        } => 12,
        ExprKind::Op {
            op: TensorOp::And, ..
        } => 14,
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub,
            ..
        } => 20,
        ExprKind::Binary {
            op: BinOp::Mul | BinOp::Div | BinOp::FloorDiv,
            ..
        }
        | ExprKind::Op {
            op: TensorOp::Mod, ..
        } => 30,
        ExprKind::Int(v) if *v < 0 => 40,
        ExprKind::Float(v) if *v < 0.0 || (*v == 0.0 && v.is_sign_negative()) => 40,
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Load { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Sum { .. }
        | ExprKind::View { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => 50,
    }
}

/// An operand of a postfix form (`.method()`, `[...]`): parenthesized unless atomic.
pub(crate) fn postfix(e: &Expr) -> String {
    if prec(e) >= 50 {
        expr(e)
    } else {
        format!("({})", expr(e))
    }
}

fn float(v: f64) -> String {
    if !v.is_finite() {
        let name = crate::ir::float_json::non_finite_name(v);
        return format!("float(\"{name}\")");
    }
    // `{:?}` is Rust's shortest round-trip form ("1.0", "0.1", "1e-7"), which Python parses to
    // the same double.
    format!("{v:?}")
}

/// `lhs <symbol> rhs` for a left-associative operator of `e`'s precedence.
pub(crate) fn infix(e: &Expr, symbol: &str, lhs: &Expr, rhs: &Expr) -> String {
    let p = prec(e);
    let l = if prec(lhs) < p {
        format!("({})", expr(lhs))
    } else {
        expr(lhs)
    };
    let r = if prec(rhs) <= p && prec(rhs) < 40 {
        format!("({})", expr(rhs))
    } else {
        expr(rhs)
    };
    format!("{l} {symbol} {r}")
}

/// `lhs <cmp> rhs`, each side parenthesized when it is a comparison (never a chain).
pub(crate) fn compare(symbol: &str, lhs: &Expr, rhs: &Expr) -> String {
    let side = |x: &Expr| {
        if prec(x) <= 10 {
            format!("({})", expr(x))
        } else {
            expr(x)
        }
    };
    format!("{} {symbol} {}", side(lhs), side(rhs))
}

/// Renders an expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => float(*v),
        ExprKind::Size { value, dim } => format!("{}.size({dim})", postfix(value)),
        ExprKind::TileAttr { tile, attr } => format!("{tile}.{}", attr.name()),
        ExprKind::Binary { op, lhs, rhs } => infix(e, op.symbol(), lhs, rhs),
        ExprKind::Compare { op, lhs, rhs } => compare(op.symbol(), lhs, rhs),
        ExprKind::Op { op, args } => crate::render_ops::op(e, op, args),
        ExprKind::Load {
            tensor,
            indices,
            explicit,
        } => {
            if *explicit {
                format!("hl.load({tensor}, [{}])", index_list(indices))
            } else {
                format!("{tensor}[{}]", subscript_indices(indices))
            }
        }
        ExprKind::Subscript { value, indices } => {
            format!("{}[{}]", postfix(value), subscript_indices(indices))
        }
        ExprKind::Arange { start, end, step } => {
            let mut args = Vec::new();
            if let Some(s) = start {
                args.push(expr(s));
            }
            args.push(expr(end));
            if let Some(s) = step {
                if start.is_none() {
                    args.insert(0, "0".into());
                }
                args.push(expr(s));
            }
            format!("hl.arange({})", args.join(", "))
        }
        ExprKind::Zeros { shape, dtype } => {
            format!(
                "hl.zeros([{}], dtype={})",
                join(shape.iter().map(expr)),
                dtype.torch_name()
            )
        }
        ExprKind::Full {
            shape,
            value,
            dtype,
        } => format!(
            "hl.full([{}], {}, dtype={})",
            join(shape.iter().map(expr)),
            expr(value),
            dtype.torch_name()
        ),
        ExprKind::Cast { value, dtype } => match dtype {
            DType::Float32 => format!("{}.float()", postfix(value)),
            DType::Bfloat16 | DType::Int32 => {
                format!("{}.to({})", postfix(value), dtype.torch_name())
            }
        },
        ExprKind::Sum { value, dim } => format!("{}.sum(dim={dim})", postfix(value)),
        ExprKind::View { value, op } => match op {
            ViewOp::Reshape(d) => format!("{}.reshape({})", postfix(value), view_dims(d)),
            ViewOp::View(d) => format!("{}.view({})", postfix(value), view_dims(d)),
            ViewOp::Squeeze(d) => format!("{}.squeeze({d})", postfix(value)),
            ViewOp::Unsqueeze(d) => format!("{}.unsqueeze({d})", postfix(value)),
            ViewOp::ViewAs(o) => format!("{}.view_as({})", postfix(value), expr(o)),
        },
        ExprKind::Permute { value, dims } => {
            format!(
                "{}.permute({})",
                postfix(value),
                join(dims.iter().map(|d| d.to_string()))
            )
        }
        ExprKind::Alloc { kind, shape, dtype } => {
            let dt = dtype
                .map(|d| format!(", dtype={}", d.torch_name()))
                .unwrap_or_default();
            match (kind, shape) {
                (AllocKind::Empty, AllocShape::Dims(d)) => {
                    format!("torch.empty([{}]{dt})", join(d.iter().map(expr)))
                }
                (AllocKind::Zeros, AllocShape::Dims(d)) => {
                    format!("torch.zeros([{}]{dt})", join(d.iter().map(expr)))
                }
                (AllocKind::Empty, AllocShape::Like(t)) => {
                    format!("torch.empty_like({}{dt})", expr(t))
                }
                (AllocKind::Zeros, AllocShape::Like(t)) => {
                    format!("torch.zeros_like({}{dt})", expr(t))
                }
            }
        }
    }
}

fn dims(shape: &[usize]) -> String {
    join(shape.iter().map(|d| d.to_string()))
}

fn nested(values: &[f64], shape: &[usize], as_float: bool) -> String {
    match shape {
        [] => {
            let v = values.first().copied().unwrap_or(0.0);
            if as_float {
                float(v)
            } else {
                (v as i64).to_string()
            }
        }
        [n, rest @ ..] => {
            let stride: usize = rest.iter().product();
            let parts: Vec<String> = (0..*n)
                .map(|i| nested(&values[i * stride..(i + 1) * stride], rest, as_float))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// Renders an input's constructor chain.
pub fn render_input(input: &Input) -> String {
    let dt = input
        .dtype
        .map(|d| format!(", dtype={}", d.torch_name()))
        .unwrap_or_default();
    let dt_only = input
        .dtype
        .map(|d| format!("dtype={}", d.torch_name()))
        .unwrap_or_default();
    let mut s = match &input.ctor {
        Ctor::Randn { shape } => format!("torch.randn({}{dt})", dims(shape)),
        Ctor::Rand { shape } => format!("torch.rand({}{dt})", dims(shape)),
        Ctor::Ones { shape } => format!("torch.ones({}{dt})", dims(shape)),
        Ctor::Zeros { shape } => format!("torch.zeros({}{dt})", dims(shape)),
        Ctor::Empty { shape } => format!("torch.empty({}{dt})", dims(shape)),
        Ctor::Full { shape, value } => {
            format!("torch.full([{}], {}{dt})", dims(shape), float(*value))
        }
        Ctor::Arange { n } => format!("torch.arange({n}{dt})"),
        Ctor::Range {
            start,
            end,
            step: 1,
        } => format!("torch.arange({start}, {end}{dt})"),
        Ctor::Range { start, end, step } => format!("torch.arange({start}, {end}, {step}{dt})"),
        Ctor::Eye { n, m } if n == m => format!("torch.eye({n}{dt})"),
        Ctor::Eye { n, m } => format!("torch.eye({n}, {m}{dt})"),
        Ctor::Randint { low, high, shape } => {
            // The size is a tuple: `(4,)` for one dim, `()` for none.
            let size = match shape.as_slice() {
                [d] => format!("({d},)"),
                _ => format!("({})", dims(shape)),
            };
            format!("torch.randint({low}, {high}, {size}{dt})")
        }
        Ctor::Tensor {
            shape,
            values,
            float_literals,
        } => {
            let sep = if dt_only.is_empty() {
                String::new()
            } else {
                format!(", {dt_only}")
            };
            format!(
                "torch.tensor({}{sep})",
                nested(values, shape, *float_literals)
            )
        }
    };
    if matches!(input.ctor, Ctor::Randn { ref shape } | Ctor::Rand { ref shape } | Ctor::Ones { ref shape } | Ctor::Zeros { ref shape } | Ctor::Empty { ref shape } if shape.is_empty())
    {
        // `torch.randn()` with no dims is a 0-d tensor; keep the list form explicit.
        s = s.replacen("()", "([])", 1);
    }
    for op in &input.chain {
        match op {
            InputOp::Reshape(d) => {
                let _ = write!(s, ".reshape({})", join(d.iter().map(|x| x.to_string())));
            }
            InputOp::Expand(d) => {
                let _ = write!(s, ".expand({})", join(d.iter().map(|x| x.to_string())));
            }
            InputOp::Contiguous => s.push_str(".contiguous()"),
            InputOp::To(d) => {
                let _ = write!(s, ".to({})", d.torch_name());
            }
        }
    }
    s
}

/// A copy of `case` whose inputs are spelled out exactly: random and poison constructors become
/// `torch.arange(...).reshape(...)` where the values are `0..n`, else `torch.tensor([...])`.
/// Inputs that are already exact (ones, zeros, full, arange, eye, tensor) stay as written.
pub fn spell_out_inputs(case: &Case) -> Result<Case, crate::ir::inputs::InputError> {
    let mut out = case.clone();
    let tensors = case.input_tensors()?;
    for (input, t) in out.inputs.iter_mut().zip(tensors) {
        match input.ctor {
            Ctor::Randn { .. } | Ctor::Rand { .. } | Ctor::Randint { .. } => {}
            Ctor::Ones { .. }
            | Ctor::Zeros { .. }
            | Ctor::Full { .. }
            | Ctor::Arange { .. }
            | Ctor::Range { .. }
            | Ctor::Eye { .. }
            | Ctor::Tensor { .. }
            | Ctor::Empty { .. } => continue,
        }
        let n = t.values.len();
        let is_arange = t.values.iter().enumerate().all(|(i, &v)| v == i as f64);
        input.dtype = Some(t.dtype);
        if is_arange {
            input.ctor = Ctor::Arange { n };
            input.chain = if t.shape.len() == 1 {
                vec![]
            } else {
                vec![InputOp::Reshape(
                    t.shape.iter().map(|&d| d as i64).collect(),
                )]
            };
        } else {
            input.ctor = Ctor::Tensor {
                shape: t.shape.clone(),
                values: t.values.clone(),
                float_literals: t.dtype.is_float(),
            };
            input.chain = vec![];
        }
    }
    Ok(out)
}
