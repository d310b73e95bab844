//! Module level of a case script: imports, the decorated kernel and its config, the inputs,
//! `torch.manual_seed`, and the call.

use super::kernel::{KernelParser, dtype_of};
use super::wellformed;
use super::{FrontendError, scan};
use crate::ir::{
    Arg, CASE_VERSION, Call, Case, Config, Ctor, Input, InputOp, LoopType, Param, ParamKind, Span,
};
use rustpython_parser::ast::{self, Ranged};
use rustpython_parser::source_code::RandomLocator;
use rustpython_parser::text_size::TextSize;

/// Shared state of one parse: the path for messages and the offset→line:col locator.
pub(crate) struct Ctx<'s> {
    pub path: String,
    locator: std::cell::RefCell<RandomLocator<'s>>,
}

impl<'s> Ctx<'s> {
    pub fn span_at(&self, offset: TextSize) -> Span {
        let loc = self.locator.borrow_mut().locate(offset);
        Span::new(loc.row.get(), loc.column.get())
    }

    pub fn span(&self, node: &impl Ranged) -> Span {
        self.span_at(node.start())
    }

    /// An input error at `node` about `construct`.
    pub fn err(
        &self,
        node: &impl Ranged,
        construct: &str,
        message: impl Into<String>,
    ) -> FrontendError {
        FrontendError {
            path: self.path.clone(),
            span: self.span(node),
            construct: construct.to_string(),
            message: message.into(),
        }
    }
}

/// The Python name of a statement kind, for messages (`while`, `try`, `import`, ...). Named per
/// variant rather than from the `Debug` form: formatting a whole statement recurses over all of
/// it.
pub(crate) fn stmt_construct(stmt: &ast::Stmt) -> String {
    let name = match stmt {
        ast::Stmt::While(_) => "while",
        ast::Stmt::With(_) => "with",
        ast::Stmt::Try(_) | ast::Stmt::TryStar(_) => "try",
        ast::Stmt::ClassDef(_) => "class",
        ast::Stmt::FunctionDef(_) => "def",
        ast::Stmt::Return(_) => "return",
        ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_) => "import",
        ast::Stmt::Assert(_) => "assert",
        ast::Stmt::Raise(_) => "raise",
        ast::Stmt::Delete(_) => "del",
        ast::Stmt::Global(_) => "global",
        ast::Stmt::Nonlocal(_) => "nonlocal",
        ast::Stmt::Break(_) => "break",
        ast::Stmt::Continue(_) => "continue",
        ast::Stmt::Match(_) => "match",
        ast::Stmt::AnnAssign(_) => "annotated assignment",
        ast::Stmt::AsyncFunctionDef(_) => "asyncfunctiondef",
        ast::Stmt::Assign(_) => "assign",
        ast::Stmt::TypeAlias(_) => "typealias",
        ast::Stmt::AugAssign(_) => "augassign",
        ast::Stmt::For(_) => "for",
        ast::Stmt::AsyncFor(_) => "asyncfor",
        ast::Stmt::If(_) => "if",
        ast::Stmt::AsyncWith(_) => "asyncwith",
        ast::Stmt::Expr(_) => "expr",
        ast::Stmt::Pass(_) => "pass",
    };
    name.into()
}

/// The dotted name of an attribute chain (`helion.language`), if it is one.
pub(crate) fn dotted(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Name(n) => Some(n.id.to_string()),
        ast::Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}

/// The pre-parse depth scan's verdict as a [`FrontendError`].
fn scan_depth(ctx: &Ctx<'_>, source: &str) -> Result<(), FrontendError> {
    scan::scan(source).map_err(|e| {
        let (construct, message) = e.what.describe();
        let at = u32::try_from(e.offset).unwrap_or(u32::MAX);
        FrontendError {
            path: ctx.path.clone(),
            span: ctx.span_at(TextSize::from(at)),
            construct: construct.into(),
            message,
        }
    })
}

/// [`super::check_source_depth`].
pub(crate) fn check_depth(source: &str, path: &str) -> Result<(), FrontendError> {
    if u32::try_from(source.len()).is_err() {
        return Err(FrontendError {
            path: path.to_string(),
            span: Span::new(1, 1),
            construct: "file".into(),
            message: "the file is 4 GiB or larger: the parser's offsets are 32-bit".into(),
        });
    }
    let ctx = Ctx {
        path: path.to_string(),
        locator: RandomLocator::new(source).into(),
    };
    scan_depth(&ctx, source)
}

pub(crate) fn parse_module(source: &str, path: &str) -> Result<Case, FrontendError> {
    use rustpython_parser::Parse;
    if u32::try_from(source.len()).is_err() {
        return Err(FrontendError {
            path: path.to_string(),
            span: Span::new(1, 1),
            construct: "file".into(),
            message: "the file is 4 GiB or larger: the parser's offsets are 32-bit".into(),
        });
    }
    let ctx = Ctx {
        path: path.to_string(),
        locator: RandomLocator::new(source).into(),
    };
    // Before the parser: an AST too deep to drop must never be built (see `scan`).
    scan_depth(&ctx, source)?;
    let suite = ast::Suite::parse(source, path).map_err(|e| FrontendError {
        path: path.to_string(),
        span: ctx.span_at(e.offset),
        construct: "syntax".into(),
        message: format!("Python syntax error: {}", e.error),
    })?;

    let mut kernel_def: Option<&ast::StmtFunctionDef> = None;
    let mut inputs: Vec<Input> = Vec::new();
    let mut seed = None;
    let mut call: Option<Call> = None;
    let mut device_imported = false;
    for stmt in &suite {
        match stmt {
            ast::Stmt::Import(imp) => {
                for alias in &imp.names {
                    let name = alias.name.to_string();
                    let asname = alias.asname.as_ref().map(|a| a.to_string());
                    let ok = matches!(
                        (name.as_str(), asname.as_deref()),
                        ("torch", None) | ("helion", None) | ("helion.language", Some("hl"))
                    );
                    if !ok {
                        return Err(ctx.err(
                            alias,
                            "import",
                            format!(
                                "`import {name}{}` is not part of a case script (allowed: `import torch`, `import helion`, `import helion.language as hl`)",
                                asname.map(|a| format!(" as {a}")).unwrap_or_default()
                            ),
                        ));
                    }
                }
            }
            // Helion's tests allocate with `device=DEVICE` from `helion._testing`.
            ast::Stmt::ImportFrom(f)
                if f.module.as_deref() == Some("helion._testing")
                    && f.level.is_none_or(|l| l.to_u32() == 0)
                    && matches!(f.names.as_slice(), [a] if a.name.as_str() == "DEVICE" && a.asname.is_none()) =>
            {
                device_imported = true;
            }
            ast::Stmt::ImportFrom(_) => {
                return Err(ctx.err(
                    stmt,
                    "import",
                    "`from ... import` is not part of a case script (allowed: `import torch`, `import helion`, `import helion.language as hl`, `from helion._testing import DEVICE`)",
                ));
            }
            ast::Stmt::FunctionDef(f) => {
                if kernel_def.is_some() {
                    return Err(ctx.err(stmt, "def", format!("second function `{}`: a case script has exactly one @helion.kernel function", f.name)));
                }
                kernel_def = Some(f);
            }
            ast::Stmt::Expr(e) => match &*e.value {
                ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_)) => {}
                ast::Expr::Call(c) if dotted(&c.func).as_deref() == Some("torch.manual_seed") => {
                    no_keywords(&ctx, c, "torch.manual_seed")?;
                    let [arg] = c.args.as_slice() else {
                        return Err(ctx.err(
                            stmt,
                            "torch.manual_seed",
                            "torch.manual_seed takes one int",
                        ));
                    };
                    let v = int_literal(&ctx, arg, "torch.manual_seed")?;
                    seed = Some(u64::try_from(v).map_err(|_| {
                        ctx.err(
                            arg,
                            "torch.manual_seed",
                            format!("torch.manual_seed({v}): the seed must be a non-negative int"),
                        )
                    })?);
                }
                ast::Expr::Call(c) => {
                    if call.is_some() {
                        return Err(ctx.err(
                            stmt,
                            "call",
                            "a case script calls its kernel exactly once",
                        ));
                    }
                    call = Some(parse_call(&ctx, c, None, kernel_def)?);
                }
                _ => {
                    return Err(ctx.err(
                        stmt,
                        "expression",
                        "a bare expression is not part of a case script",
                    ));
                }
            },
            ast::Stmt::Assign(a) => {
                let [ast::Expr::Name(target)] = a.targets.as_slice() else {
                    return Err(ctx.err(
                        stmt,
                        "assignment",
                        "module-level assignments bind one name",
                    ));
                };
                let is_kernel_call = matches!(&*a.value, ast::Expr::Call(c)
                    if kernel_def.is_some_and(|k| dotted(&c.func).as_deref() == Some(k.name.as_str())));
                if is_kernel_call {
                    let ast::Expr::Call(c) = &*a.value else {
                        unreachable!("checked above")
                    };
                    if call.is_some() {
                        return Err(ctx.err(
                            stmt,
                            "call",
                            "a case script calls its kernel exactly once",
                        ));
                    }
                    call = Some(parse_call(
                        &ctx,
                        c,
                        Some(target.id.to_string()),
                        kernel_def,
                    )?);
                } else {
                    if inputs.iter().any(|i| i.name == target.id.as_str()) {
                        return Err(ctx.err(
                            stmt,
                            "assignment",
                            format!("input `{}` is defined twice", target.id),
                        ));
                    }
                    let devices = InputDevices {
                        imported: device_imported,
                        inputs: &inputs,
                    };
                    let input =
                        parse_input(&ctx, target.id.as_str(), &a.value, ctx.span(stmt), &devices)?;
                    inputs.push(input);
                }
            }
            ast::Stmt::Pass(_) => {}
            other => {
                let construct = stmt_construct(other);
                return Err(ctx.err(
                    other,
                    &construct,
                    format!(
                        "`{construct}` statements are not part of a case script at module level"
                    ),
                ));
            }
        }
    }

    let Some(def) = kernel_def else {
        return Err(FrontendError {
            path: path.to_string(),
            span: Span::new(1, 1),
            construct: "@helion.kernel".into(),
            message: "no @helion.kernel function: a case script has exactly one".into(),
        });
    };
    let (config, block_sizes_at) = parse_decorator(&ctx, def)?;
    let mut params = Vec::new();
    for arg in def.args.posonlyargs.iter().chain(&def.args.args) {
        let ann = arg.def.annotation.as_deref().map(dotted);
        // An unannotated parameter takes its kind from the argument the call passes (an input
        // is a tensor, an int literal an int), as Helion types it from the value; it renders
        // annotated.
        let position = params.len();
        let from_call = match call.as_ref().and_then(|c| c.args.get(position)) {
            Some(Arg::Input(_)) => Some(ParamKind::Tensor),
            Some(Arg::Int(_)) => Some(ParamKind::Int),
            Some(Arg::Float(_)) => Some(ParamKind::Float),
            Some(Arg::Bool(_)) => Some(ParamKind::Bool),
            None => None,
        };
        let kind = match (ann.as_ref().map(|a| a.as_deref()), from_call) {
            (Some(Some("torch.Tensor")), _) => ParamKind::Tensor,
            (Some(Some("int")), _) => ParamKind::Int,
            (Some(Some("float")), _) => ParamKind::Float,
            (Some(Some("bool")), _) => ParamKind::Bool,
            (None, Some(kind)) => kind,
            _ => {
                return Err(ctx.err(
                    &arg.def,
                    "parameter",
                    format!(
                        "parameter `{}` must be annotated `torch.Tensor`, `int`, `float` or `bool`, or unannotated and passed an input, an int literal, a float literal, `True` or `False`",
                        arg.def.arg
                    ),
                ));
            }
        };
        if arg.default.is_some() {
            return Err(ctx.err(
                &arg.def,
                "parameter",
                format!(
                    "parameter `{}` has a default value; case-script parameters have none",
                    arg.def.arg
                ),
            ));
        }
        params.push(Param {
            name: arg.def.arg.to_string(),
            kind,
            span: ctx.span(&arg.def),
        });
    }
    if def.args.vararg.is_some() || def.args.kwarg.is_some() || !def.args.kwonlyargs.is_empty() {
        return Err(ctx.err(
            def,
            "parameter",
            "kernel parameters are positional: no *args, **kwargs or keyword-only parameters",
        ));
    }
    // What the body may ask of a parameter (`x.dtype`, `x.size()`): the dtype and rank of the
    // input the call passes (an input that fails to build leaves them unknown; the
    // well-formedness check reports it).
    let mut known = crate::ir::hash::FastMap::default();
    if let Some(call) = &call {
        for (p, a) in params.iter().zip(&call.args) {
            if let (ParamKind::Tensor, Arg::Input(n)) = (p.kind, a)
                && let Some(Ok((dtype, shape))) = inputs
                    .iter()
                    .find(|i| &i.name == n)
                    .map(Input::dtype_and_shape)
            {
                known.insert(
                    p.name.clone(),
                    crate::frontend::kernel::Known {
                        dtype: Some(dtype),
                        rank: Some(shape.len()),
                    },
                );
            }
        }
    }
    // The module globals the kernel sees: the imports, the kernel, the inputs.
    let globals = ["torch", "helion", "hl", def.name.as_str()]
        .into_iter()
        .chain(device_imported.then_some("DEVICE"))
        .map(String::from)
        .chain(inputs.iter().map(|i| i.name.clone()))
        .collect();
    let mut parser = KernelParser::new(&ctx, &params, known, globals);
    parser.config_sizes = config.block_sizes.clone();
    let body = parser.parse_body(&def.body)?;
    let asserts = std::mem::take(&mut parser.asserts);
    // The entries `hl.register_block_size` read leave the config (each reads as its int).
    let mut config = config;
    config.block_sizes = config
        .block_sizes
        .iter()
        .enumerate()
        .filter(|(i, _)| !parser.registered.contains(i))
        .map(|(_, &b)| b)
        .collect();
    let kernel = crate::ir::Kernel {
        name: def.name.to_string(),
        params,
        body,
        span: ctx.span(def),
    };

    let Some(call) = call else {
        return Err(ctx.err(
            def,
            "call",
            format!(
                "the script never calls `{}`: a case script ends with one call of its kernel",
                def.name
            ),
        ));
    };
    let case = Case {
        version: CASE_VERSION,
        kernel,
        config,
        inputs,
        seed,
        call,
    };
    // The rules on the IR, shared with the JSON reader; the config has no span of its own, so
    // its violations are reported at `block_sizes=`.
    wellformed::check(&case).map_err(|v| FrontendError {
        path: path.to_string(),
        span: v.span.unwrap_or(block_sizes_at),
        construct: v.construct,
        message: v.message,
    })?;
    check_asserts(&ctx, &case, &asserts)?;
    Ok(case)
}

/// A host tensor's shape as `[16, 256]`, or `unknown` when the inputs do not give it.
fn shape_text(shape: Option<&Vec<usize>>) -> String {
    shape.map_or_else(|| "unknown".into(), |s| format!("{s:?}"))
}

/// Decides the kernel's host `assert`s on the inputs ([`super::kernel::HostAssert`]): each
/// comparison is evaluated by the host environment of the root statements before it.
fn check_asserts(
    ctx: &Ctx<'_>,
    case: &Case,
    asserts: &[super::kernel::HostAssert],
) -> Result<(), FrontendError> {
    for a in asserts {
        let mut prefix = case.clone();
        prefix.kernel.body.truncate(a.at);
        let env = crate::ir::scope::HostEnv::of(&prefix);
        let shapes: Vec<(&String, Option<&Vec<usize>>)> = a
            .same_shape
            .iter()
            .map(|n| (n, env.tensors.get(n).map(|t| &t.shape)))
            .collect();
        if let Some(((n0, s0), (n, s))) = shapes
            .first()
            .and_then(|first| shapes.iter().find(|x| x.1 != first.1).map(|x| (first, x)))
        {
            return Err(FrontendError {
                path: ctx.path.clone(),
                span: a.span,
                construct: "torch.broadcast_tensors".into(),
                message: format!(
                    "torch.broadcast_tensors of tensors of other shapes (`{n0}` {}, `{n}` {}) makes broadcast views of inputs, which a case script does not model",
                    shape_text(*s0),
                    shape_text(*s)
                ),
            });
        }
        for c in &a.comparisons {
            let crate::ir::ExprKind::Compare { op, lhs, rhs } = &c.kind else {
                unreachable!("assert terms are comparisons")
            };
            let err = |message: String| FrontendError {
                path: ctx.path.clone(),
                span: a.span,
                construct: "assert".into(),
                message,
            };
            match (env.eval_int(lhs), env.eval_int(rhs)) {
                (Some(l), Some(r)) if op.eval(l, r) => {}
                (Some(l), Some(r)) => {
                    return Err(err(format!(
                        "the assertion fails on the inputs ({l} {} {r} is false): Helion's host code raises AssertionError before any kernel runs",
                        op.symbol()
                    )));
                }
                _ => {
                    return Err(err(
                        "an `assert` of a case script compares host ints known from the inputs (sizes, int parameters, arithmetic of them)".into(),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The config and the position of its `block_sizes=` keyword.
fn parse_decorator(
    ctx: &Ctx<'_>,
    def: &ast::StmtFunctionDef,
) -> Result<(Config, Span), FrontendError> {
    let [deco] = def.decorator_list.as_slice() else {
        return Err(ctx.err(
            def,
            "@helion.kernel",
            format!(
                "`{}` needs exactly one decorator, @helion.kernel(...)",
                def.name
            ),
        ));
    };
    let ast::Expr::Call(call) = deco else {
        return Err(ctx.err(deco, "@helion.kernel", "the decorator must be a call: @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(...))"));
    };
    if dotted(&call.func).as_deref() != Some("helion.kernel") {
        return Err(ctx.err(
            deco,
            "decorator",
            "the kernel's decorator must be @helion.kernel(...)",
        ));
    }
    if !call.args.is_empty() {
        return Err(ctx.err(
            deco,
            "@helion.kernel",
            "@helion.kernel takes keyword arguments only",
        ));
    }
    let mut config = None;
    let mut settings = Vec::new();
    for kw in &call.keywords {
        let Some(name) = kw.arg.as_ref().map(|a| a.to_string()) else {
            return Err(ctx.err(
                kw,
                "@helion.kernel",
                "**kwargs are not part of a case script",
            ));
        };
        match name.as_str() {
            // Absent, the backend is HELION_BACKEND's, which a case script runs under
            // (`HELION_BACKEND=pallas python case.py`, as every engine runs it).
            "backend" => {
                if str_literal(&kw.value).as_deref() != Some("pallas") {
                    return Err(ctx.err(&kw.value, "backend", "backend must be \"pallas\""));
                }
            }
            // True is Helion 1.5.1's default (HELION_STATIC_SHAPES unset), so it is not kept.
            "static_shapes" if matches!(&kw.value, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Bool(true))) =>
                {}
            "config" => config = Some(parse_config(ctx, &kw.value)?),
            other => settings.push(setting(
                ctx,
                kw,
                other,
                crate::ir::settings::Place::Decorator,
                &settings,
            )?),
        }
    }
    let (mut config, at) = config.ok_or_else(|| {
        ctx.err(
            deco,
            "config",
            "@helion.kernel needs config=helion.Config(block_sizes=[...], ...)",
        )
    })?;
    config.settings = settings;
    Ok((config, at))
}

/// A kept key (`crate::ir::settings`) of the decorator or the config, or the refusal of one
/// that is not kept (or given twice).
fn setting(
    ctx: &Ctx<'_>,
    kw: &ast::Keyword,
    name: &str,
    place: crate::ir::settings::Place,
    seen: &[crate::ir::settings::Setting],
) -> Result<crate::ir::settings::Setting, FrontendError> {
    let what = match place {
        crate::ir::settings::Place::Config => "config key",
        crate::ir::settings::Place::Decorator => "decorator keyword",
    };
    let value = py_literal(&kw.value).ok_or_else(|| {
        ctx.err(
            &kw.value,
            name,
            format!(
                "{what} `{name}` takes a literal (True/False, a number, a string or a list of them)"
            ),
        )
    })?;
    if seen.iter().any(|s| s.key == name) {
        return Err(ctx.err(kw, name, format!("{what} `{name}` is given twice")));
    }
    crate::ir::settings::check(place, name, &value)
        .map_err(|m| ctx.err(kw, name, format!("{what} {m}")))?;
    Ok(crate::ir::settings::Setting {
        key: name.to_string(),
        value,
    })
}

/// A Python literal: True/False, a number (possibly negated), a string, a dotted name, or a
/// list or tuple of those.
fn py_literal(e: &ast::Expr) -> Option<crate::ir::settings::PyLiteral> {
    use crate::ir::settings::PyLiteral;
    if let Some((v, is_float)) = literal_number(e) {
        return Some(if is_float {
            PyLiteral::Float(v)
        } else {
            PyLiteral::Int(literal_int(e)?)
        });
    }
    match e {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Bool(b) => Some(PyLiteral::Bool(*b)),
            ast::Constant::Str(s) => Some(PyLiteral::Str(s.clone())),
            _ => None,
        },
        ast::Expr::List(ast::ExprList { elts, .. })
        | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => elts
            .iter()
            .map(py_literal)
            .collect::<Option<Vec<_>>>()
            .map(PyLiteral::List),
        ast::Expr::Attribute(_) => dotted(e).map(PyLiteral::Name),
        _ => None,
    }
}

fn parse_config(ctx: &Ctx<'_>, e: &ast::Expr) -> Result<(Config, Span), FrontendError> {
    let ast::Expr::Call(call) = e else {
        return Err(ctx.err(e, "config", "config must be helion.Config(...)"));
    };
    if dotted(&call.func).as_deref() != Some("helion.Config") || !call.args.is_empty() {
        return Err(ctx.err(
            e,
            "config",
            "config must be helion.Config(...) with keyword arguments",
        ));
    }
    let mut config = Config::default();
    let mut block_sizes_at = None;
    for kw in &call.keywords {
        let Some(name) = kw.arg.as_ref().map(|a| a.to_string()) else {
            return Err(ctx.err(
                kw,
                "helion.Config",
                "**kwargs are not part of a case script",
            ));
        };
        match name.as_str() {
            "block_sizes" => {
                config.block_sizes = int_list(ctx, &kw.value, "block_sizes")?;
                block_sizes_at = Some(ctx.span(kw));
            }
            "pallas_loop_type" => {
                let s = str_literal(&kw.value).unwrap_or_default();
                config.loop_type = Some(LoopType::from_name(&s).ok_or_else(|| {
                    ctx.err(&kw.value, "pallas_loop_type", format!("pallas_loop_type {s:?} is not one of \"unroll\", \"fori_loop\", \"emit_pipeline\""))
                })?);
            }
            "pallas_worklist_grouping" => {
                let g = int_literal(ctx, &kw.value, "pallas_worklist_grouping")?;
                if !(0..=2).contains(&g) {
                    return Err(ctx.err(
                        &kw.value,
                        "pallas_worklist_grouping",
                        format!("pallas_worklist_grouping must be 0, 1 or 2, got {g}"),
                    ));
                }
                config.worklist_grouping = Some(g);
            }
            // None is Helion's default, as if absent.
            "pallas_load_buffer_count" if matches!(&kw.value, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::None)) =>
                {}
            "pallas_load_buffer_count" => {
                config.load_buffer_count =
                    Some(int_list(ctx, &kw.value, "pallas_load_buffer_count")?);
            }
            other => {
                let kept = setting(
                    ctx,
                    kw,
                    other,
                    crate::ir::settings::Place::Config,
                    &config.extra,
                )?;
                config.extra.push(kept);
            }
        }
    }
    // Absent, `block_sizes` is empty: a kernel that registers config-driven block ids is then
    // refused by the well-formedness check (Helion would pick default sizes, which a case
    // states).
    Ok((config, block_sizes_at.unwrap_or_else(|| ctx.span(e))))
}

/// Refuses every keyword of `c` (one the subset does not model is never dropped).
fn no_keywords(ctx: &Ctx<'_>, c: &ast::ExprCall, func: &str) -> Result<(), FrontendError> {
    match c.keywords.first() {
        None => Ok(()),
        Some(kw) => match kw.arg.as_ref().map(|a| a.as_str()) {
            Some(name) => Err(ctx.err(
                kw,
                name,
                format!("keyword `{name}` of {func} is not part of a case script"),
            )),
            None => Err(ctx.err(kw, "**", "**kwargs are not part of a case script")),
        },
    }
}

fn str_literal(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// An int literal, possibly negated.
pub(crate) fn int_literal(
    ctx: &Ctx<'_>,
    e: &ast::Expr,
    construct: &str,
) -> Result<i64, FrontendError> {
    literal_int(e)
        .ok_or_else(|| ctx.err(e, construct, format!("{construct} expects an int literal")))
}

/// The literal under a run of unary minus signs, and how many there are. Iterative: a script
/// may hold a long run (the depth scan bounds it, this does not need it to).
fn negations(e: &ast::Expr) -> (&ast::Expr, usize) {
    let mut cur = e;
    let mut n = 0usize;
    while let ast::Expr::UnaryOp(u) = cur {
        if !matches!(u.op, ast::UnaryOp::USub) {
            break;
        }
        n += 1;
        cur = &u.operand;
    }
    (cur, n)
}

/// An int literal (possibly negated) as i64, without error context.
pub(crate) fn literal_int(e: &ast::Expr) -> Option<i64> {
    let (lit, n) = negations(e);
    let ast::Expr::Constant(c) = lit else {
        return None;
    };
    let ast::Constant::Int(i) = &c.value else {
        return None;
    };
    let text = i.to_string();
    if n % 2 == 0 {
        return text.parse().ok();
    }
    // Odd: the negation of the literal, exact down to i64::MIN + 1 (a negated literal that
    // overflows i64 stays refused, as it always was).
    text.parse::<i64>().ok().and_then(i64::checked_neg)
}

/// A float or int literal (possibly negated) as f64, and whether it was written as a float.
pub(crate) fn literal_number(e: &ast::Expr) -> Option<(f64, bool)> {
    let (lit, n) = negations(e);
    let ast::Expr::Constant(c) = lit else {
        return None;
    };
    let (v, is_float) = match &c.value {
        ast::Constant::Int(i) => (i.to_string().parse::<i64>().ok()? as f64, false),
        // An overflowing literal (`1e999`) is infinite: not a number a case can hold.
        ast::Constant::Float(f) => (f.is_finite().then_some(*f)?, true),
        _ => return None,
    };
    Some((if n % 2 == 0 { v } else { -v }, is_float))
}

fn int_list(ctx: &Ctx<'_>, e: &ast::Expr, construct: &str) -> Result<Vec<i64>, FrontendError> {
    let elts = match e {
        ast::Expr::List(l) => &l.elts,
        ast::Expr::Tuple(t) => &t.elts,
        _ => {
            return Err(ctx.err(
                e,
                construct,
                format!("{construct} must be a list of int literals"),
            ));
        }
    };
    elts.iter()
        .map(|x| int_literal(ctx, x, construct))
        .collect()
}

/// Shape arguments: `f(2, 3)`, `f([2, 3])` or `f((2, 3))`.
fn shape_args(
    ctx: &Ctx<'_>,
    args: &[ast::Expr],
    construct: &str,
) -> Result<Vec<usize>, FrontendError> {
    let dims: Vec<i64> = match args {
        [ast::Expr::List(_) | ast::Expr::Tuple(_)] => int_list(ctx, &args[0], construct)?,
        _ => args
            .iter()
            .map(|a| int_literal(ctx, a, construct))
            .collect::<Result<_, _>>()?,
    };
    dims.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                ctx.err(
                    &args[0],
                    construct,
                    format!("{construct}: negative dim {d}"),
                )
            })
        })
        .collect()
}

/// The devices an input's constructor may name in `device=`: every engine makes the inputs on
/// its own device, so the keyword is dropped, and only in the forms Helion's tests write.
struct InputDevices<'a> {
    /// `from helion._testing import DEVICE` came before.
    imported: bool,
    /// The inputs defined before (`device=x.device`).
    inputs: &'a [Input],
}

impl InputDevices<'_> {
    /// Checks a `device=` value of `func`: `DEVICE` (imported), a device string literal
    /// (`"cpu"`, `"cuda"`, `"cuda:0"`, `"xla"`, `"tpu"`), or `x.device` of an earlier input.
    fn check(&self, ctx: &Ctx<'_>, value: &ast::Expr, func: &str) -> Result<(), FrontendError> {
        let ok = match value {
            ast::Expr::Name(n) => n.id.as_str() == "DEVICE" && self.imported,
            ast::Expr::Constant(c) => match &c.value {
                ast::Constant::Str(s) => {
                    let kind = s.split(':').next().unwrap_or("");
                    matches!(kind, "cpu" | "cuda" | "xla" | "tpu")
                }
                _ => false,
            },
            ast::Expr::Attribute(a) if a.attr.as_str() == "device" => matches!(
                &*a.value,
                ast::Expr::Name(n) if self.inputs.iter().any(|i| i.name == n.id.as_str())
            ),
            _ => false,
        };
        if ok {
            return Ok(());
        }
        Err(ctx.err(
            value,
            "device",
            format!(
                "device= of {func} is `DEVICE` (after `from helion._testing import DEVICE`), a device string (\"cpu\", \"cuda\", \"xla\", \"tpu\") or `x.device` of an earlier input: every engine makes the inputs on its own device"
            ),
        ))
    }
}

fn parse_input(
    ctx: &Ctx<'_>,
    name: &str,
    value: &ast::Expr,
    span: Span,
    devices: &InputDevices<'_>,
) -> Result<Input, FrontendError> {
    // Peel the method chain: ctor(...).reshape(...).expand(...)...
    let mut chain = Vec::new();
    let mut cur = value;
    loop {
        let ast::Expr::Call(call) = cur else {
            return Err(ctx.err(cur, "input", format!("input `{name}` must be a torch constructor call (torch.randn, torch.rand, torch.randint, torch.ones, torch.zeros, torch.full, torch.arange, torch.eye, torch.tensor, torch.empty)")));
        };
        if let ast::Expr::Attribute(attr) = &*call.func
            && dotted(&attr.value).as_deref() != Some("torch")
        {
            {
                let method = attr.attr.to_string();
                no_keywords(ctx, call, &format!(".{method}"))?;
                let op = match method.as_str() {
                    "reshape" => InputOp::Reshape(int_args(ctx, &call.args, "reshape")?),
                    "expand" => InputOp::Expand(int_args(ctx, &call.args, "expand")?),
                    "contiguous" => InputOp::Contiguous,
                    "to" => {
                        let [arg] = call.args.as_slice() else {
                            return Err(ctx.err(cur, ".to", ".to takes one dtype"));
                        };
                        InputOp::To(dtype_of(ctx, arg)?)
                    }
                    other => return Err(ctx.err(cur, other, format!("`.{other}()` is not part of an input's chain (allowed: .reshape, .expand, .contiguous, .to)"))),
                };
                chain.push(op);
                cur = &attr.value;
                continue;
            }
        }
        chain.reverse();
        let func = dotted(&call.func).unwrap_or_default();
        let mut dtype = None;
        for kw in &call.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("dtype") => dtype = Some(dtype_of(ctx, &kw.value)?),
                Some("device") => devices.check(ctx, &kw.value, &func)?,
                Some(other) => {
                    return Err(ctx.err(
                        kw,
                        other,
                        format!(
                            "keyword `{other}` of {func} is not part of a case script (only dtype= and device=)"
                        ),
                    ));
                }
                None => return Err(ctx.err(kw, "**", "**kwargs are not part of a case script")),
            }
        }
        let ctor = match func.as_str() {
            "torch.randn" => Ctor::Randn { shape: shape_args(ctx, &call.args, "torch.randn")? },
            "torch.rand" => Ctor::Rand { shape: shape_args(ctx, &call.args, "torch.rand")? },
            "torch.ones" => Ctor::Ones { shape: shape_args(ctx, &call.args, "torch.ones")? },
            "torch.zeros" => Ctor::Zeros { shape: shape_args(ctx, &call.args, "torch.zeros")? },
            "torch.empty" => Ctor::Empty { shape: shape_args(ctx, &call.args, "torch.empty")? },
            "torch.full" => {
                let [shape, v] = call.args.as_slice() else {
                    return Err(ctx.err(cur, "torch.full", "torch.full takes a shape list and a value"));
                };
                let (value, _) = literal_number(v).ok_or_else(|| ctx.err(v, "torch.full", "torch.full's value must be a number literal"))?;
                Ctor::Full { shape: shape_args(ctx, std::slice::from_ref(shape), "torch.full")?, value }
            }
            "torch.arange" => match call.args.as_slice() {
                [n] => {
                    let n = int_literal(ctx, n, "torch.arange")?;
                    Ctor::Arange { n: usize::try_from(n).map_err(|_| ctx.err(cur, "torch.arange", "negative length"))? }
                }
                [start, end] | [start, end, _] => {
                    let step = match call.args.get(2) {
                        Some(s) => int_literal(ctx, s, "torch.arange")?,
                        None => 1,
                    };
                    Ctor::Range {
                        start: int_literal(ctx, start, "torch.arange")?,
                        end: int_literal(ctx, end, "torch.arange")?,
                        step,
                    }
                }
                _ => return Err(ctx.err(cur, "torch.arange", "torch.arange in a case script takes int literals: torch.arange(n), torch.arange(start, end) or torch.arange(start, end, step), with dtype=")),
            },
            "torch.eye" => {
                let dims = shape_args(ctx, &call.args, "torch.eye")?;
                match dims.as_slice() {
                    [n] => Ctor::Eye { n: *n, m: *n },
                    [n, m] => Ctor::Eye { n: *n, m: *m },
                    _ => return Err(ctx.err(cur, "torch.eye", "torch.eye takes one or two sizes: torch.eye(n) or torch.eye(n, m)")),
                }
            }
            "torch.randint" => {
                let (low, high, size) = match call.args.as_slice() {
                    [high, size] => (0, int_literal(ctx, high, "torch.randint")?, size),
                    [low, high, size] => (
                        int_literal(ctx, low, "torch.randint")?,
                        int_literal(ctx, high, "torch.randint")?,
                        size,
                    ),
                    _ => return Err(ctx.err(cur, "torch.randint", "torch.randint takes torch.randint(high, size) or torch.randint(low, high, size), with a size tuple")),
                };
                if !matches!(size, ast::Expr::List(_) | ast::Expr::Tuple(_)) {
                    return Err(ctx.err(size, "torch.randint", "torch.randint's size is a tuple or list of ints"));
                }
                Ctor::Randint { low, high, shape: shape_args(ctx, std::slice::from_ref(size), "torch.randint")? }
            }
            "torch.tensor" => {
                let [lit] = call.args.as_slice() else {
                    return Err(ctx.err(cur, "torch.tensor", "torch.tensor takes one nested list"));
                };
                let mut shape = Vec::new();
                let mut values = Vec::new();
                let mut any_float = false;
                nested_list(ctx, lit, 0, &mut shape, &mut values, &mut any_float)?;
                Ctor::Tensor { shape, values, float_literals: any_float }
            }
            other => return Err(ctx.err(cur, if other.is_empty() { "call" } else { other }, format!("`{other}` is not an input constructor of a case script (torch.randn, torch.rand, torch.randint, torch.ones, torch.zeros, torch.full, torch.arange, torch.eye, torch.tensor, torch.empty)"))),
        };
        return Ok(Input {
            name: name.to_string(),
            ctor,
            dtype,
            chain,
            span,
        });
    }
}

fn int_args(ctx: &Ctx<'_>, args: &[ast::Expr], construct: &str) -> Result<Vec<i64>, FrontendError> {
    match args {
        [ast::Expr::List(_) | ast::Expr::Tuple(_)] => int_list(ctx, &args[0], construct),
        _ => args
            .iter()
            .map(|a| int_literal(ctx, a, construct))
            .collect(),
    }
}

fn nested_list(
    ctx: &Ctx<'_>,
    e: &ast::Expr,
    depth: usize,
    shape: &mut Vec<usize>,
    values: &mut Vec<f64>,
    any_float: &mut bool,
) -> Result<(), FrontendError> {
    let ragged = || ctx.err(e, "torch.tensor", "torch.tensor's nested list is ragged");
    match e {
        ast::Expr::List(ast::ExprList { elts, .. })
        | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            // A list where a number was seen at this depth (or a shallower one) is ragged.
            if !values.is_empty() && shape.len() <= depth {
                return Err(ragged());
            }
            if shape.len() == depth {
                shape.push(elts.len());
            } else if shape.get(depth) != Some(&elts.len()) {
                return Err(ragged());
            }
            for x in elts {
                nested_list(ctx, x, depth + 1, shape, values, any_float)?;
            }
            Ok(())
        }
        _ => {
            // Numbers all sit at the depth of the first one, which ends the shape.
            if shape.len() != depth {
                return Err(ragged());
            }
            let (v, is_float) = literal_number(e).ok_or_else(|| {
                ctx.err(
                    e,
                    "torch.tensor",
                    "torch.tensor holds finite number literals only",
                )
            })?;
            *any_float |= is_float;
            values.push(v);
            Ok(())
        }
    }
}

fn parse_call(
    ctx: &Ctx<'_>,
    c: &ast::ExprCall,
    result: Option<String>,
    kernel: Option<&ast::StmtFunctionDef>,
) -> Result<Call, FrontendError> {
    let func = dotted(&c.func).unwrap_or_default();
    match kernel {
        Some(k) if k.name.as_str() == func => {}
        _ => return Err(ctx.err(c, "call", format!("`{func}(...)` is not a call of the case's kernel (define the @helion.kernel function first, then call it once)"))),
    }
    if !c.keywords.is_empty() {
        return Err(ctx.err(
            c,
            "call",
            "the kernel call passes positional arguments only",
        ));
    }
    let args = c
        .args
        .iter()
        .map(|a| match a {
            ast::Expr::Name(n) => Ok(Arg::Input(n.id.to_string())),
            ast::Expr::Constant(ast::ExprConstant {
                value: ast::Constant::Bool(b),
                ..
            }) => Ok(Arg::Bool(*b)),
            _ => match literal_number(a) {
                Some((v, false)) => Ok(Arg::Int(v as i64)),
                Some((v, true)) => Ok(Arg::Float(v)),
                None => Err(ctx.err(
                    a,
                    "call",
                    "kernel arguments are input names, int literals, finite float literals, `True` or `False`",
                )),
            },
        })
        .collect::<Result<_, _>>()?;
    Ok(Call {
        args,
        result,
        span: ctx.span(c),
    })
}
