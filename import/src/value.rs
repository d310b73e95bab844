//! Static evaluation of the host expressions a kernel's call passes: ints and their arithmetic,
//! dtypes, sequences, and the tensor constructors of PyTorch that make inputs (`torch.randn`,
//! `torch.zeros`, `torch.randint`, `torch.arange` with a start, end and step of either sign,
//! `torch.tensor`, `*_like`, `.to(dtype)`, `.reshape`, `t[:, None]`, `.expand`, ...), int
//! arithmetic on int tensors whose values the file fixes, `torch.cat` (any dim, torch's dtype
//! promotion) and `torch.cumsum`/`.cumsum` (1-D, int) of tensors whose values are known,
//! `int()`/`float()`/`.item()` of a one-value tensor, `len()`, `helion.Config(...)` and
//! `dict(...)` of keywords (what a call's `**config` spreads), and `a if cond else b`.
//!
//! Names resolve to their last binding before the use in the enclosing scopes (a loop variable
//! to the loop's first value), a function's parameter to the argument the first call of that
//! function passes, else to the first value of its `@parametrize`; those first values are
//! noted for the case's header. A call of a function the file defines (a helper, visible from
//! the call as Python sees it) whose body is straight-line (assignments, a docstring,
//! `torch.manual_seed`, one final `return`) is evaluated with its parameters bound to *this*
//! call's arguments, keywords and defaults (a frame, consulted before the first-call rule), so
//! `_offsets([10, 23])` and `_offsets([20])` differ; a helper with a loop, a branch, an
//! in-place change or another statement is a reason naming it and the line. Nothing is
//! executed: an expression outside this reading is a reason, not a guess.

use crate::scan::{Module, ScopeKind};
use rustpython_parser::ast::{self, Ranged};

/// How deep name resolution and expression evaluation may go (a chain of bindings, nested
/// calls): far past any test's setup, and a bound on a file whose names refer to each other.
const MAX_DEPTH: usize = 48;

/// The case-script dtypes, and the ones inputs are narrowed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `torch.float32` (`torch.float`).
    Float32,
    /// `torch.bfloat16`.
    Bfloat16,
    /// `torch.int32` (`torch.int`).
    Int32,
    /// `torch.int64` (`torch.long`): read as int32 (case scripts have no int64; index
    /// tensors' values fit), said in the case's header.
    Int64,
    /// Any other dtype, by name: refused where an input needs it.
    Other(&'static str),
}

impl Dtype {
    /// The case-script spelling, or why there is none.
    pub fn spelling(self) -> Result<&'static str, String> {
        match self {
            Dtype::Float32 => Ok("torch.float32"),
            Dtype::Bfloat16 => Ok("torch.bfloat16"),
            Dtype::Int32 | Dtype::Int64 => Ok("torch.int32"),
            Dtype::Other(name) => Err(format!(
                "dtype torch.{name} is not a case-script dtype (float32, bfloat16, int32)"
            )),
        }
    }

    fn is_int(self) -> bool {
        matches!(self, Dtype::Int32 | Dtype::Int64)
    }

    fn from_attr(name: &str) -> Option<Dtype> {
        Some(match name {
            "float32" | "float" => Dtype::Float32,
            "bfloat16" => Dtype::Bfloat16,
            "int32" | "int" => Dtype::Int32,
            "int64" | "long" => Dtype::Int64,
            "float16" | "half" => Dtype::Other("float16"),
            "float64" | "double" => Dtype::Other("float64"),
            "bool" => Dtype::Other("bool"),
            "int8" => Dtype::Other("int8"),
            "uint8" => Dtype::Other("uint8"),
            "int16" => Dtype::Other("int16"),
            "float8_e4m3fn" => Dtype::Other("float8_e4m3fn"),
            "float8_e5m2" => Dtype::Other("float8_e5m2"),
            _ => return None,
        })
    }
}

/// How an input's values are made.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    /// `torch.randn`.
    Randn,
    /// `torch.rand`.
    Rand,
    /// `torch.ones`.
    Ones,
    /// `torch.zeros`.
    Zeros,
    /// `torch.empty` (poison: a case reading it is invalid).
    Empty,
    /// `torch.full(shape, v)`.
    Full(f64),
    /// `torch.arange(n)`, reshaped.
    Arange,
    /// `torch.arange(start, end, step)` (1-D; `step` non-zero and leading towards `end`, as
    /// torch requires): spelled as the file writes it, a case-script range.
    Range {
        /// First value.
        start: i64,
        /// Bound (excluded).
        end: i64,
        /// Step, of either sign.
        step: i64,
    },
    /// Row-major values the file fixes (`torch.tensor`, and what the importer computes from
    /// fixed values).
    Values(Vec<f64>),
    /// Row-major ints in a range that the file draws (`torch.randint`, `torch.randperm`) and
    /// pallas-diff draws itself, deterministically: spelled as literal values like
    /// [`Fill::Values`]. Not read as host values (`int(t[0])`: a size read off them would be
    /// another than the file's), but `torch.cat` and `torch.cumsum` compute with them (jagged
    /// offsets summed from drawn lengths), into [`Fill::Values`] the case's header notes.
    Drawn(Vec<f64>),
}

/// A tensor the file builds.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorVal {
    /// Shape.
    pub shape: Vec<i64>,
    /// Dtype.
    pub dtype: Dtype,
    /// Values.
    pub fill: Fill,
}

/// A value of the host code.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// An int.
    Int(i64),
    /// A float.
    Float(f64),
    /// A bool.
    Bool(bool),
    /// A string.
    Str(String),
    /// `None`.
    None,
    /// A dtype.
    Dtype(Dtype),
    /// A device (`DEVICE`, `"cuda"`, `x.device`): dropped, every engine runs on its own.
    Device,
    /// A tuple or list.
    Seq(Vec<Val>),
    /// A tensor.
    Tensor(TensorVal),
    /// A `helion.Config(...)` or `dict(...)`: its keys and values in order, which a call's
    /// `**config` passes as keywords.
    Map(Vec<(String, Val)>),
}

/// Where an expression is read: its scope and the byte offset of the use.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At {
    pub scope: usize,
    pub offset: u32,
}

/// A function whose parameter is read: its scope's kind, unpacked, and the scope its `def`
/// (and its decorators) are in.
struct Function<'f> {
    name: &'f str,
    params: &'f [String],
    parametrize: &'f [crate::scan::Parametrized],
    parent: usize,
}

/// One call of a helper function under evaluation: the helper's scope and the values this
/// call gives its parameters (positional, keyword or default). A parameter of a helper resolves
/// through the innermost frame of its scope, so each call reads its own arguments.
struct Frame {
    scope: usize,
    params: Vec<(String, Val)>,
}

/// The static evaluator over one module.
pub(crate) struct Eval<'m> {
    pub module: &'m Module,
    /// Line starts, for reasons naming a line.
    pub lines: &'m crate::Lines,
    /// What a reader of the case must know about the values read: a loop's or a
    /// `@parametrize`'s first value taken for all (each once, in the order read).
    pub notes: std::cell::RefCell<Vec<String>>,
    /// The helper calls being evaluated, innermost last.
    frames: std::cell::RefCell<Vec<Frame>>,
}

type R<T> = Result<T, String>;

fn int_of(c: &ast::Constant) -> Option<i64> {
    match c {
        ast::Constant::Int(i) => i.to_string().parse().ok(),
        _ => None,
    }
}

impl<'m> Eval<'m> {
    /// An evaluator over `module` with no notes and no helper call under way.
    pub fn new(module: &'m Module, lines: &'m crate::Lines) -> Self {
        Eval {
            module,
            lines,
            notes: Default::default(),
            frames: Default::default(),
        }
    }

    fn here(&self, e: &impl Ranged) -> String {
        format!("line {}", self.lines.line_of(u32::from(e.start())))
    }

    fn note(&self, note: String) {
        let mut notes = self.notes.borrow_mut();
        if !notes.contains(&note) {
            notes.push(note);
        }
    }

    /// The notes gathered so far, leaving none.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.borrow_mut())
    }

    /// The value of `e` read at `at`.
    pub fn eval(&self, e: &ast::Expr, at: At, depth: usize) -> R<Val> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "{}: names refer to each other too deeply",
                self.here(e)
            ));
        }
        let d = depth + 1;
        match e {
            ast::Expr::Constant(c) => Ok(match &c.value {
                ast::Constant::Int(_) => Val::Int(
                    int_of(&c.value)
                        .ok_or_else(|| format!("{}: int out of range", self.here(e)))?,
                ),
                ast::Constant::Float(f) => Val::Float(*f),
                ast::Constant::Bool(b) => Val::Bool(*b),
                ast::Constant::Str(s) => Val::Str(s.clone()),
                ast::Constant::None => Val::None,
                _ => {
                    return Err(format!(
                        "{}: a constant the importer does not read",
                        self.here(e)
                    ));
                }
            }),
            ast::Expr::Name(n) => self.lookup(n.id.as_str(), e, at, d),
            ast::Expr::Tuple(t) => self.seq(&t.elts, at, d),
            ast::Expr::List(l) => self.seq(&l.elts, at, d),
            ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => {
                match self.eval(&u.operand, at, d)? {
                    Val::Int(i) => Ok(Val::Int(-i)),
                    Val::Float(f) => Ok(Val::Float(-f)),
                    _ => Err(format!("{}: `-` of a non-number", self.here(e))),
                }
            }
            ast::Expr::BinOp(b) => {
                let (l, r) = (self.eval(&b.left, at, d)?, self.eval(&b.right, at, d)?);
                if let Val::Tensor(t) = &l {
                    return tensor_arith(&b.op, t, &r).map_err(|why| {
                        format!(
                            "{}: host arithmetic on a tensor the importer does not read ({why})",
                            self.here(e)
                        )
                    });
                }
                arith(&b.op, &l, &r).ok_or_else(|| {
                    format!(
                        "{}: host arithmetic the importer does not read",
                        self.here(e)
                    )
                })
            }
            ast::Expr::Attribute(a) => self.attribute(a, e, at, d),
            ast::Expr::Subscript(s) => {
                let base = self.eval(&s.value, at, d)?;
                if let Val::Tensor(t) = &base
                    && let Some(shape) = unsqueezed(&t.shape, &s.slice)
                {
                    // `t[:, None]`: every element, in order, with unit dims added: the same
                    // values under another shape, which a case spells as a reshape.
                    return Ok(Val::Tensor(TensorVal { shape, ..t.clone() }));
                }
                let index = self.eval(&s.slice, at, d)?;
                match (base, index) {
                    (Val::Seq(v), Val::Int(i)) => {
                        let i = if i < 0 { i + v.len() as i64 } else { i };
                        usize::try_from(i)
                            .ok()
                            .and_then(|i| v.get(i).cloned())
                            .ok_or_else(|| format!("{}: index out of range", self.here(e)))
                    }
                    // `cu[-1]` of a tensor whose values the file fixes: the row it selects, for
                    // host sizes such as `int(cu[-1].item())`.
                    (Val::Tensor(t), Val::Int(i)) if !t.shape.is_empty() => {
                        let rows = t.shape[0];
                        let i = if i < 0 { i + rows } else { i };
                        if !(0..rows).contains(&i) {
                            return Err(format!("{}: index out of range", self.here(e)));
                        }
                        let values = known_values(&t).ok_or_else(|| {
                            format!(
                                "{}: a subscript of a tensor whose values the importer does not know (a view of an input is not a case-script input)",
                                self.here(e)
                            )
                        })?;
                        let row = usize::try_from(t.shape[1..].iter().product::<i64>())
                            .map_err(|_| format!("{}: a negative dimension", self.here(e)))?;
                        let start = i as usize * row;
                        Ok(Val::Tensor(TensorVal {
                            shape: t.shape[1..].to_vec(),
                            dtype: t.dtype,
                            fill: Fill::Values(values[start..start + row].to_vec()),
                        }))
                    }
                    (Val::Tensor(_), _) => Err(format!(
                        "{}: a subscript of a tensor (a view of an input) is not a case-script input",
                        self.here(e)
                    )),
                    _ => Err(format!(
                        "{}: a subscript the importer does not read",
                        self.here(e)
                    )),
                }
            }
            ast::Expr::Call(c) => self.call(c, at, d),
            // `a if cond else b`, as a test picks a config per loop value.
            ast::Expr::IfExp(i) => {
                let test = self.eval(&i.test, at, d)?;
                let truth = truthy(&test).ok_or_else(|| {
                    format!("{}: a condition the importer does not read", self.here(e))
                })?;
                self.eval(if truth { &i.body } else { &i.orelse }, at, d)
            }
            ast::Expr::Compare(c) => {
                let ([op], [right]) = (c.ops.as_slice(), c.comparators.as_slice()) else {
                    return Err(format!("{}: a chained comparison", self.here(e)));
                };
                let (l, r) = (self.eval(&c.left, at, d)?, self.eval(right, at, d)?);
                compare(op, &l, &r).map(Val::Bool).ok_or_else(|| {
                    format!("{}: a comparison the importer does not read", self.here(e))
                })
            }
            _ => Err(format!(
                "{}: an expression the importer does not read",
                self.here(e)
            )),
        }
    }

    fn seq(&self, elts: &[ast::Expr], at: At, d: usize) -> R<Val> {
        let mut out = Vec::new();
        for x in elts {
            if let ast::Expr::Starred(s) = x {
                match self.eval(&s.value, at, d)? {
                    Val::Seq(v) => out.extend(v),
                    _ => return Err(format!("{}: `*` of a non-sequence", self.here(x))),
                }
            } else {
                out.push(self.eval(x, at, d)?);
            }
        }
        Ok(Val::Seq(out))
    }

    /// A name: its last binding before `at` in the scope or an enclosing one (class scopes
    /// skipped), a parameter through the first call of its function, or a module global.
    fn lookup(&self, name: &str, e: &ast::Expr, at: At, d: usize) -> R<Val> {
        if name == "DEVICE" || name == "device" {
            return Ok(Val::Device);
        }
        let mut scope = Some(at.scope);
        let mut first = true;
        while let Some(s) = scope {
            let sc = &self.module.scopes[s];
            let skip = matches!(sc.kind, ScopeKind::Class) && !first;
            if !skip {
                let is_module = matches!(sc.kind, ScopeKind::Module);
                let before = sc
                    .bindings
                    .iter()
                    .rev()
                    .find(|b| b.name == name && (!first || b.at < at.offset));
                // A module global bound after its use is still bound when a function that
                // uses it runs.
                let found = before.or_else(|| {
                    is_module
                        .then(|| sc.bindings.iter().rev().find(|b| b.name == name))
                        .flatten()
                });
                if let Some(b) = found {
                    // A change in place between the binding and the use (`idx[:, 0] = 0`,
                    // `x += 1`) is not followed: the value would be another than the file's.
                    if let Some((_, m)) = sc
                        .mutations
                        .iter()
                        .find(|(n, m)| n == name && *m > b.at && (!first || *m < at.offset))
                    {
                        return Err(format!(
                            "{}: `{name}` is changed in place at line {} after its binding, which the importer does not follow",
                            self.here(e),
                            self.lines.line_of(*m)
                        ));
                    }
                    let v = self.eval(
                        &b.value,
                        At {
                            scope: s,
                            offset: b.at,
                        },
                        d,
                    )?;
                    if let Some(loop_at) = b.first_of_loop {
                        self.note(format!(
                            "`{name}`: the first value of the loop at line {} (the file runs one per value)",
                            self.lines.line_of(loop_at)
                        ));
                    }
                    return Ok(v);
                }
                // A parameter of a helper under evaluation: this call's argument.
                if let Some(v) = self.frame_value(s, name) {
                    return Ok(v);
                }
                if let ScopeKind::Function {
                    name: f,
                    params,
                    parametrize,
                    ..
                } = &sc.kind
                    && let Some(i) = params.iter().position(|p| p == name)
                {
                    let function = Function {
                        name: f,
                        params,
                        parametrize,
                        parent: sc.parent.unwrap_or(0),
                    };
                    return self.parameter(&function, i, name, e, d);
                }
            }
            first = false;
            scope = sc.parent;
        }
        Err(format!(
            "{}: `{name}` is not bound to a value the importer reads",
            self.here(e)
        ))
    }

    /// The value the innermost call of the helper of scope `scope` gives its parameter `name`.
    fn frame_value(&self, scope: usize, name: &str) -> Option<Val> {
        let frames = self.frames.borrow();
        let frame = frames.iter().rev().find(|f| f.scope == scope)?;
        frame
            .params
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, v)| v.clone())
    }

    /// The scope of the function a call of `name` at `at` reaches: the `def` that is the name's
    /// last binding before the use in the scope or an enclosing one (class scopes skipped, as
    /// for [`Eval::lookup`]); `None` where the name is bound to anything else or not at all.
    fn function_at(&self, name: &str, at: At) -> Option<usize> {
        let mut scope = Some(at.scope);
        let mut first = true;
        while let Some(s) = scope {
            let sc = &self.module.scopes[s];
            let skip = matches!(sc.kind, ScopeKind::Class) && !first;
            if !skip {
                let before = sc
                    .bindings
                    .iter()
                    .rev()
                    .find(|b| b.name == name && (!first || b.at < at.offset));
                let found = before.or_else(|| {
                    matches!(sc.kind, ScopeKind::Module)
                        .then(|| sc.bindings.iter().rev().find(|b| b.name == name))
                        .flatten()
                });
                if let Some(b) = found {
                    return b.def_scope;
                }
                if self.frame_value(s, name).is_some()
                    || matches!(&sc.kind, ScopeKind::Function { params, .. } if params.iter().any(|p| p == name))
                {
                    return None;
                }
            }
            first = false;
            scope = sc.parent;
        }
        None
    }

    /// A call of the function of scope `fs`, a helper of the file: its body read with its
    /// parameters bound to this call's arguments (a frame), its `return` value the call's.
    fn helper(&self, fs: usize, c: &ast::ExprCall, e: &ast::Expr, at: At, d: usize) -> R<Val> {
        let ScopeKind::Function { name, def, .. } = &self.module.scopes[fs].kind else {
            unreachable!("a def binding names a function scope");
        };
        if def
            .decorator_list
            .iter()
            .any(crate::scan::is_kernel_decorator)
        {
            return Err(format!(
                "{}: a call of kernel `{name}`: its output is not an input the importer spells",
                self.here(e)
            ));
        }
        if !def.decorator_list.is_empty() {
            return Err(format!(
                "{}: a call of `{name}`, a decorated function, which the importer does not evaluate",
                self.here(e)
            ));
        }
        let ret = self.straight_line(name, def)?;
        let params = self.arguments(fs, name, def, c, e, at, d)?;
        let Some(ret) = ret else {
            return Ok(Val::None);
        };
        self.frames.borrow_mut().push(Frame { scope: fs, params });
        let body_at = At {
            scope: fs,
            offset: u32::from(ret.start()),
        };
        let v = self.eval(ret, body_at, d);
        self.frames.borrow_mut().pop();
        v
    }

    /// The `return` expression of a straight-line helper (assignments, a docstring,
    /// `torch.manual_seed(...)`, then `return EXPR`), or why the importer does not read it:
    /// a branch, a loop or a change in place would make its value another than the bindings
    /// say.
    fn straight_line<'d>(
        &self,
        name: &str,
        def: &'d ast::StmtFunctionDef,
    ) -> R<Option<&'d ast::Expr>> {
        let not_followed = |stmt: &ast::Stmt, what: &str| {
            format!(
                "{}: helper `{name}` has {what}, which the importer does not follow (it reads a helper made of assignments and one final `return`)",
                self.here(stmt)
            )
        };
        let in_place = |stmt: &ast::Stmt, target: &ast::Expr| {
            format!(
                "{}: helper `{name}` changes `{}` in place, which the importer does not follow",
                self.here(stmt),
                crate::scan::base_name(target).unwrap_or_else(|| "a value".into())
            )
        };
        fn check_target(t: &ast::Expr) -> Result<(), &ast::Expr> {
            match t {
                ast::Expr::Name(_) => Ok(()),
                ast::Expr::Tuple(ast::ExprTuple { elts, .. })
                | ast::Expr::List(ast::ExprList { elts, .. }) => {
                    elts.iter().try_for_each(check_target)
                }
                other => Err(other),
            }
        }
        let assigned = |stmt: &ast::Stmt, target: &ast::Expr| -> R<()> {
            check_target(target).map_err(|bad| match bad {
                ast::Expr::Subscript(_) | ast::Expr::Attribute(_) => in_place(stmt, bad),
                _ => not_followed(stmt, "a starred assignment"),
            })
        };
        if def.args.vararg.is_some() || def.args.kwarg.is_some() {
            return Err(format!(
                "{}: helper `{name}` takes `*args`/`**kwargs`, which the importer does not bind",
                self.here(def)
            ));
        }
        let n = def.body.len();
        for (i, stmt) in def.body.iter().enumerate() {
            match stmt {
                ast::Stmt::Expr(x) => match x.value.as_ref() {
                    ast::Expr::Constant(ast::ExprConstant {
                        value: ast::Constant::Str(_),
                        ..
                    }) => {}
                    ast::Expr::Call(call) => match call.func.as_ref() {
                        ast::Expr::Attribute(a)
                            if a.attr.as_str() == "manual_seed"
                                && matches!(a.value.as_ref(), ast::Expr::Name(t) if t.id.as_str() == "torch") =>
                            {}
                        ast::Expr::Attribute(a)
                            if a.attr.as_str().ends_with('_')
                                && !a.attr.as_str().starts_with('_') =>
                        {
                            return Err(in_place(stmt, &a.value));
                        }
                        _ => return Err(not_followed(stmt, "a call statement")),
                    },
                    _ => return Err(not_followed(stmt, "an expression statement")),
                },
                ast::Stmt::Pass(_) => {}
                ast::Stmt::Assign(a) => {
                    for t in &a.targets {
                        assigned(stmt, t)?;
                    }
                }
                ast::Stmt::AnnAssign(a) if a.value.is_some() => assigned(stmt, &a.target)?,
                ast::Stmt::AugAssign(a) => return Err(in_place(stmt, &a.target)),
                ast::Stmt::Return(r) if i + 1 == n => return Ok(r.value.as_deref()),
                ast::Stmt::Return(_) => return Err(not_followed(stmt, "code after a `return`")),
                ast::Stmt::For(_) | ast::Stmt::AsyncFor(_) => {
                    return Err(not_followed(stmt, "a `for` loop"));
                }
                ast::Stmt::While(_) => return Err(not_followed(stmt, "a `while` loop")),
                ast::Stmt::If(_) | ast::Stmt::Match(_) => {
                    return Err(not_followed(stmt, "a branch"));
                }
                ast::Stmt::FunctionDef(_)
                | ast::Stmt::AsyncFunctionDef(_)
                | ast::Stmt::ClassDef(_) => {
                    return Err(not_followed(stmt, "a nested definition"));
                }
                _ => return Err(not_followed(stmt, "a statement")),
            }
        }
        Err(format!(
            "{}: helper `{name}` does not end in `return`, so it gives no value the importer reads",
            self.here(def)
        ))
    }

    /// The values a call gives a helper's parameters: its positional arguments (a `*seq`
    /// expanded) and keywords read where the call is, the defaults the rest take read where
    /// the `def` is.
    #[allow(clippy::too_many_arguments)]
    fn arguments(
        &self,
        fs: usize,
        name: &str,
        def: &ast::StmtFunctionDef,
        c: &ast::ExprCall,
        e: &ast::Expr,
        at: At,
        d: usize,
    ) -> R<Vec<(String, Val)>> {
        let positional = def.args.posonlyargs.len() + def.args.args.len();
        let all: Vec<&ast::ArgWithDefault> = def
            .args
            .posonlyargs
            .iter()
            .chain(&def.args.args)
            .chain(&def.args.kwonlyargs)
            .collect();
        let mut given: Vec<Option<Val>> = vec![None; all.len()];
        let Val::Seq(passed) = self.seq(&c.args, at, d)? else {
            unreachable!("seq returns a sequence");
        };
        if passed.len() > positional {
            return Err(format!(
                "{}: the call passes {} arguments, helper `{name}` takes {positional}",
                self.here(e),
                passed.len()
            ));
        }
        for (slot, v) in given.iter_mut().zip(passed) {
            *slot = Some(v);
        }
        let posonly = def.args.posonlyargs.len();
        for kw in &c.keywords {
            let Some(key) = kw.arg.as_deref() else {
                return Err(format!(
                    "{}: `**` in a call of helper `{name}`, which the importer does not bind",
                    self.here(e)
                ));
            };
            let i = all
                .iter()
                .enumerate()
                .skip(posonly)
                .find(|(_, p)| p.def.arg.as_str() == key)
                .map(|(i, _)| i)
                .ok_or_else(|| {
                    format!(
                        "{}: helper `{name}` has no parameter `{key}` (Python raises)",
                        self.here(e)
                    )
                })?;
            if given[i].is_some() {
                return Err(format!(
                    "{}: helper `{name}` is given `{key}` twice (Python raises)",
                    self.here(e)
                ));
            }
            given[i] = Some(self.eval(&kw.value, at, d)?);
        }
        // Defaults are read where the `def` is, as Python reads them when it runs the `def`.
        let def_at = At {
            scope: self.module.scopes[fs].parent.unwrap_or(0),
            offset: u32::from(def.start()),
        };
        all.iter()
            .zip(given)
            .map(|(p, v)| {
                let pname = p.def.arg.to_string();
                let v = match (v, &p.default) {
                    (Some(v), _) => v,
                    (None, Some(default)) => self.eval(default, def_at, d)?,
                    (None, None) => {
                        return Err(format!(
                            "{}: no argument for parameter `{pname}` of helper `{name}` (Python raises)",
                            self.here(e)
                        ));
                    }
                };
                Ok((pname, v))
            })
            .collect()
    }

    /// Parameter `i` (`name`) of `func`: the argument of the first call
    /// of it in the module that passes it (`f(...)`, or `self.f(...)` for a method, whose
    /// `self` the call does not pass), else the first value its `@parametrize` gives.
    fn parameter(
        &self,
        func: &Function<'_>,
        i: usize,
        name: &str,
        e: &ast::Expr,
        d: usize,
    ) -> R<Val> {
        let Function {
            name: f,
            params,
            parametrize,
            parent,
        } = *func;
        let is_method = params.first().is_some_and(|p| p == "self" || p == "cls");
        for (s, scope) in self.module.scopes.iter().enumerate() {
            for call in &scope.calls {
                let index = match call.func.as_ref() {
                    ast::Expr::Name(n) if n.id.as_str() == f => Some(i),
                    ast::Expr::Attribute(a)
                        if is_method
                            && a.attr.as_str() == f
                            && matches!(a.value.as_ref(), ast::Expr::Name(n) if matches!(n.id.as_str(), "self" | "cls")) =>
                    {
                        i.checked_sub(1)
                    }
                    _ => None,
                };
                let Some(index) = index else { continue };
                let arg = call.args.get(index).or_else(|| {
                    call.keywords
                        .iter()
                        .find(|k| k.arg.as_deref() == Some(name))
                        .map(|k| &k.value)
                });
                if let Some(arg) = arg {
                    let at = At {
                        scope: s,
                        offset: u32::from(call.start()),
                    };
                    return self.eval(arg, at, d);
                }
            }
        }
        for p in parametrize {
            let Some(j) = p.names.iter().position(|n| n == name) else {
                continue;
            };
            // The first entry; with several names, its `j`th element.
            let first = crate::scan::index(&p.values, 0);
            let value = if p.names.len() == 1 {
                first
            } else {
                crate::scan::index(&first, j as u32)
            };
            let at = At {
                scope: parent,
                offset: p.at,
            };
            let v = self.eval(&value, at, d)?;
            self.note(format!(
                "`{name}` of `{f}`: the first of its @parametrize values (line {}; the file runs each)",
                self.lines.line_of(p.at)
            ));
            return Ok(v);
        }
        Err(format!(
            "{}: parameter `{name}` of `{f}` is never passed by a call in the file",
            self.here(e)
        ))
    }

    fn attribute(&self, a: &ast::ExprAttribute, e: &ast::Expr, at: At, d: usize) -> R<Val> {
        let attr = a.attr.as_str();
        if let ast::Expr::Name(n) = a.value.as_ref()
            && n.id.as_str() == "torch"
        {
            return Dtype::from_attr(attr)
                .map(Val::Dtype)
                .ok_or_else(|| format!("{}: `torch.{attr}` is not a dtype", self.here(e)));
        }
        if attr == "device" {
            return Ok(Val::Device);
        }
        match (self.eval(&a.value, at, d)?, attr) {
            (Val::Tensor(t), "shape") => {
                Ok(Val::Seq(t.shape.iter().map(|&x| Val::Int(x)).collect()))
            }
            (Val::Tensor(t), "dtype") => Ok(Val::Dtype(t.dtype)),
            (Val::Tensor(t), "T" | "mT") if t.shape.len() == 2 => Err(format!(
                "{}: `.{attr}` of an input (a non-contiguous view) is not a case-script input",
                self.here(e)
            )),
            _ => Err(format!(
                "{}: attribute `.{attr}` the importer does not read",
                self.here(e)
            )),
        }
    }

    fn call(&self, c: &ast::ExprCall, at: At, d: usize) -> R<Val> {
        let e = &ast::Expr::Call(c.clone());
        let kw = |name: &str| c.keywords.iter().find(|k| k.arg.as_deref() == Some(name));
        let dtype_kw = |default: Dtype| -> R<Dtype> {
            match kw("dtype") {
                None => Ok(default),
                Some(k) => match self.eval(&k.value, at, d)? {
                    Val::Dtype(t) => Ok(t),
                    _ => Err(format!("{}: `dtype=` is not a dtype", self.here(&k.value))),
                },
            }
        };
        match c.func.as_ref() {
            ast::Expr::Attribute(a) if matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "torch") =>
            {
                let f = a.attr.as_str();
                match f {
                    "randn" | "rand" | "ones" | "zeros" | "empty" => {
                        let shape = self.shape_args(&c.args, at, d, e)?;
                        let fill = match f {
                            "randn" => Fill::Randn,
                            "rand" => Fill::Rand,
                            "ones" => Fill::Ones,
                            "zeros" => Fill::Zeros,
                            _ => Fill::Empty,
                        };
                        Ok(tensor(shape, dtype_kw(Dtype::Float32)?, fill))
                    }
                    "full" => {
                        let [shape, value] = c.args.as_slice() else {
                            return Err(format!(
                                "{}: `torch.full` takes (shape, value)",
                                self.here(e)
                            ));
                        };
                        let shape = self.shape_args(std::slice::from_ref(shape), at, d, e)?;
                        let (v, default) = match self.eval(value, at, d)? {
                            Val::Int(i) => (i as f64, Dtype::Int64),
                            Val::Float(f) => (f, Dtype::Float32),
                            _ => {
                                return Err(format!(
                                    "{}: the fill value is not a number",
                                    self.here(value)
                                ));
                            }
                        };
                        Ok(tensor(shape, dtype_kw(default)?, Fill::Full(v)))
                    }
                    "arange" => match c.args.as_slice() {
                        [n] => {
                            let Val::Int(n) = self.eval(n, at, d)? else {
                                return Err(format!(
                                    "{}: `torch.arange` of a non-int",
                                    self.here(e)
                                ));
                            };
                            Ok(tensor(vec![n], dtype_kw(Dtype::Int64)?, Fill::Arange))
                        }
                        [start, end] | [start, end, _] => {
                            let (start, end) = (self.int(start, at, d)?, self.int(end, at, d)?);
                            let step = match c.args.get(2) {
                                Some(s) => self.int(s, at, d)?,
                                None => 1,
                            };
                            // torch's own refusals: the file's call would raise, so there is
                            // no input to take.
                            if step == 0 {
                                return Err(format!(
                                    "{}: `torch.arange` with step 0 (torch raises)",
                                    self.here(e)
                                ));
                            }
                            if (step > 0 && end < start) || (step < 0 && end > start) {
                                return Err(format!(
                                    "{}: `torch.arange({start}, {end}, {step})`: the step leads away from the end (torch raises)",
                                    self.here(e)
                                ));
                            }
                            let n = lang::ir::inputs::range_len(start, end, step);
                            Ok(tensor(
                                vec![i64::try_from(n).unwrap_or(i64::MAX)],
                                dtype_kw(Dtype::Int64)?,
                                Fill::Range { start, end, step },
                            ))
                        }
                        _ => Err(format!(
                            "{}: `torch.arange` takes (n), (start, end) or (start, end, step)",
                            self.here(e)
                        )),
                    },
                    "randint" => {
                        let (lo, hi, shape) = match c.args.as_slice() {
                            [hi, shape] => (None, hi, shape),
                            [lo, hi, shape] => (Some(lo), hi, shape),
                            _ => {
                                return Err(format!(
                                    "{}: `torch.randint` takes ([low,] high, size)",
                                    self.here(e)
                                ));
                            }
                        };
                        let lo = match lo {
                            Some(lo) => self.int(lo, at, d)?,
                            None => 0,
                        };
                        let hi = self.int(hi, at, d)?;
                        let shape = self.shape_args(std::slice::from_ref(shape), at, d, e)?;
                        let n: i64 = shape.iter().product();
                        if hi <= lo || n > 1 << 16 {
                            return Err(format!(
                                "{}: `torch.randint` range or size the importer does not spell",
                                self.here(e)
                            ));
                        }
                        // A fixed pseudo-random walk through the range: the same case every
                        // import, every value of a small range present.
                        let values = (0..n)
                            .map(|i| (lo + (i * 7 + 3) % (hi - lo)) as f64)
                            .collect();
                        Ok(tensor(shape, dtype_kw(Dtype::Int64)?, Fill::Drawn(values)))
                    }
                    "randperm" => {
                        let [n] = c.args.as_slice() else {
                            return Err(format!(
                                "{}: `torch.randperm(n)` takes one argument",
                                self.here(e)
                            ));
                        };
                        let n = self.int(n, at, d)?;
                        if !(0..=1 << 16).contains(&n) {
                            return Err(format!(
                                "{}: `torch.randperm` size out of range",
                                self.here(e)
                            ));
                        }
                        let values = (0..n).rev().map(|i| i as f64).collect();
                        Ok(tensor(
                            vec![n],
                            dtype_kw(Dtype::Int64)?,
                            Fill::Drawn(values),
                        ))
                    }
                    "tensor" => {
                        let [data] = c.args.as_slice() else {
                            return Err(format!(
                                "{}: `torch.tensor(data)` takes one argument",
                                self.here(e)
                            ));
                        };
                        let v = self.eval(data, at, d)?;
                        let (shape, values, any_float) = flatten(&v).ok_or_else(|| {
                            format!(
                                "{}: `torch.tensor` of a ragged or non-numeric list",
                                self.here(e)
                            )
                        })?;
                        let default = if any_float {
                            Dtype::Float32
                        } else {
                            Dtype::Int64
                        };
                        Ok(tensor(shape, dtype_kw(default)?, Fill::Values(values)))
                    }
                    "randn_like" | "rand_like" | "zeros_like" | "ones_like" | "empty_like" => {
                        let [like] = c.args.as_slice() else {
                            return Err(format!("{}: `torch.{f}` takes one tensor", self.here(e)));
                        };
                        let Val::Tensor(t) = self.eval(like, at, d)? else {
                            return Err(format!("{}: `torch.{f}` of a non-tensor", self.here(e)));
                        };
                        let fill = match f {
                            "randn_like" => Fill::Randn,
                            "rand_like" => Fill::Rand,
                            "zeros_like" => Fill::Zeros,
                            "ones_like" => Fill::Ones,
                            _ => Fill::Empty,
                        };
                        Ok(tensor(t.shape, dtype_kw(t.dtype)?, fill))
                    }
                    "cat" | "concat" | "concatenate" => {
                        let (list, dim) = match c.args.as_slice() {
                            [list] => (list, kw("dim").map(|k| &k.value)),
                            [list, dim] => (list, Some(dim)),
                            _ => {
                                return Err(format!(
                                    "{}: `torch.{f}` takes (tensors, dim)",
                                    self.here(e)
                                ));
                            }
                        };
                        let dim = match dim {
                            Some(dim) => self.int(dim, at, d)?,
                            None => 0,
                        };
                        let Val::Seq(items) = self.eval(list, at, d)? else {
                            return Err(format!(
                                "{}: `torch.{f}` of something other than a list of tensors",
                                self.here(e)
                            ));
                        };
                        let tensors = items
                            .into_iter()
                            .map(|v| match v {
                                Val::Tensor(t) => Some(t),
                                _ => None,
                            })
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                format!(
                                    "{}: `torch.{f}` of something other than tensors",
                                    self.here(e)
                                )
                            })?;
                        self.cat(&tensors, dim, e)
                    }
                    "cumsum" => {
                        let (t, dim) = match c.args.as_slice() {
                            [t] => (t, kw("dim").map(|k| &k.value)),
                            [t, dim] => (t, Some(dim)),
                            _ => {
                                return Err(format!(
                                    "{}: `torch.cumsum` takes (tensor, dim)",
                                    self.here(e)
                                ));
                            }
                        };
                        let Val::Tensor(t) = self.eval(t, at, d)? else {
                            return Err(format!(
                                "{}: `torch.cumsum` of a non-tensor",
                                self.here(e)
                            ));
                        };
                        let dim = dim.ok_or_else(|| {
                            format!(
                                "{}: `torch.cumsum` without a dim (torch raises)",
                                self.here(e)
                            )
                        })?;
                        let dim = self.int(dim, at, d)?;
                        let dtype = kw("dtype").map(|_| dtype_kw(Dtype::Int64)).transpose()?;
                        self.cumsum(t, dim, dtype, e)
                    }
                    "Size" => match c.args.as_slice() {
                        [x] => self.eval(x, at, d),
                        _ => Err(format!("{}: `torch.Size` takes one list", self.here(e))),
                    },
                    _ => Err(format!(
                        "{}: `torch.{f}` is not an input constructor the importer reads",
                        self.here(e)
                    )),
                }
            }
            // `helion.Config(k=v, **other)`: a config a helper builds for a call's `**`.
            ast::Expr::Attribute(a)
                if a.attr.as_str() == "Config"
                    && matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "helion") =>
            {
                self.mapping(c, e, at, d)
            }
            ast::Expr::Attribute(a) => self.method(a, c, e, at, d),
            ast::Expr::Name(n)
                if n.id.as_str() == "dict" && self.function_at("dict", at).is_none() =>
            {
                self.mapping(c, e, at, d)
            }
            ast::Expr::Name(n) if matches!(n.id.as_str(), "tuple" | "list") => {
                match c.args.as_slice() {
                    [x] => self.eval(x, at, d),
                    _ => Err(format!("{}: `{}()` takes one sequence", self.here(e), n.id)),
                }
            }
            ast::Expr::Name(n)
                if matches!(n.id.as_str(), "int" | "float")
                    && self.function_at(n.id.as_str(), at).is_none() =>
            {
                let f = n.id.as_str();
                let [x] = c.args.as_slice() else {
                    return Err(format!("{}: `{f}()` takes one number", self.here(e)));
                };
                let v = match self.eval(x, at, d)? {
                    Val::Int(i) => i as f64,
                    Val::Float(v) => v,
                    Val::Bool(b) => f64::from(u8::from(b)),
                    // `int(qo[-1])`: the one value of a tensor the file fixes.
                    Val::Tensor(t) => self.one_value(&t, e, &format!("`{f}()`"))?,
                    _ => return Err(format!("{}: `{f}()` of a non-number", self.here(e))),
                };
                Ok(if f == "int" {
                    if !v.is_finite() {
                        return Err(format!("{}: `int()` of a non-finite float", self.here(e)));
                    }
                    Val::Int(v.trunc() as i64)
                } else {
                    Val::Float(v)
                })
            }
            ast::Expr::Name(n)
                if n.id.as_str() == "len" && self.function_at("len", at).is_none() =>
            {
                let [x] = c.args.as_slice() else {
                    return Err(format!("{}: `len()` takes one argument", self.here(e)));
                };
                match self.eval(x, at, d)? {
                    Val::Seq(v) => Ok(Val::Int(v.len() as i64)),
                    Val::Str(s) => Ok(Val::Int(s.chars().count() as i64)),
                    Val::Tensor(t) if !t.shape.is_empty() => Ok(Val::Int(t.shape[0])),
                    _ => Err(format!(
                        "{}: `len()` of something without a length",
                        self.here(e)
                    )),
                }
            }
            // A helper of the file, read with this call's arguments.
            ast::Expr::Name(n) => match self.function_at(n.id.as_str(), at) {
                Some(fs) => self.helper(fs, c, e, at, d),
                None => Err(format!(
                    "{}: a call of `{}`, which the importer does not evaluate",
                    self.here(e),
                    n.id
                )),
            },
            _ => Err(format!(
                "{}: a call the importer does not evaluate",
                self.here(e)
            )),
        }
    }

    /// `t.to(dtype)`, `t.to(device)`, `.cuda()`, `.contiguous()`, `.reshape(...)`, `.view(...)`,
    /// `.float()`, `.bfloat16()`, `.int()`, `.long()`, `.requires_grad_()`, `.clone()`; and
    /// `x.size()`, `x.size(i)`, `x.numel()`.
    fn method(
        &self,
        a: &ast::ExprAttribute,
        c: &ast::ExprCall,
        e: &ast::Expr,
        at: At,
        d: usize,
    ) -> R<Val> {
        let m = a.attr.as_str();
        let base = self.eval(&a.value, at, d)?;
        let Val::Tensor(mut t) = base else {
            return Err(format!("{}: `.{m}()` of a non-tensor", self.here(e)));
        };
        match m {
            "to" => {
                for x in c.args.iter().chain(
                    c.keywords
                        .iter()
                        .filter(|k| k.arg.as_deref() == Some("dtype"))
                        .map(|k| &k.value),
                ) {
                    match self.eval(x, at, d)? {
                        Val::Dtype(dt) => t.dtype = dt,
                        Val::Device | Val::Str(_) => {}
                        _ => {
                            return Err(format!(
                                "{}: `.to()` of something not a dtype or device",
                                self.here(x)
                            ));
                        }
                    }
                }
                Ok(Val::Tensor(t))
            }
            "cuda" | "cpu" | "contiguous" | "clone" | "requires_grad_" | "detach" => {
                Ok(Val::Tensor(t))
            }
            "float" => Ok(Val::Tensor(TensorVal {
                dtype: Dtype::Float32,
                ..t
            })),
            "bfloat16" => Ok(Val::Tensor(TensorVal {
                dtype: Dtype::Bfloat16,
                ..t
            })),
            "int" => Ok(Val::Tensor(TensorVal {
                dtype: Dtype::Int32,
                ..t
            })),
            "long" => Ok(Val::Tensor(TensorVal {
                dtype: Dtype::Int64,
                ..t
            })),
            "half" => Ok(Val::Tensor(TensorVal {
                dtype: Dtype::Other("float16"),
                ..t
            })),
            "reshape" | "view" => {
                let mut shape = self.shape_args(&c.args, at, d, e)?;
                let n: i64 = t.shape.iter().product();
                if let Some(i) = shape.iter().position(|&x| x == -1) {
                    let rest: i64 = shape.iter().filter(|&&x| x != -1).product();
                    if rest == 0 || n % rest != 0 {
                        return Err(format!(
                            "{}: `.{m}` with -1 that does not divide",
                            self.here(e)
                        ));
                    }
                    shape[i] = n / rest;
                }
                if shape.iter().product::<i64>() != n {
                    return Err(format!("{}: `.{m}` to another element count", self.here(e)));
                }
                t.shape = shape;
                Ok(Val::Tensor(t))
            }
            "size" => match c.args.as_slice() {
                [] => Ok(Val::Seq(t.shape.iter().map(|&x| Val::Int(x)).collect())),
                [i] => {
                    let i = self.int(i, at, d)?;
                    let r = t.shape.len() as i64;
                    let i = if i < 0 { i + r } else { i };
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| t.shape.get(i))
                        .map(|&x| Val::Int(x))
                        .ok_or_else(|| format!("{}: `.size({i})` out of range", self.here(e)))
                }
                _ => Err(format!("{}: `.size` takes at most one dim", self.here(e))),
            },
            "numel" => Ok(Val::Int(t.shape.iter().product())),
            // The one value of a tensor the file fixes, as a host number.
            "item" => {
                let v = self.one_value(&t, e, "`.item()`")?;
                Ok(if t.dtype.is_int() {
                    Val::Int(v as i64)
                } else {
                    Val::Float(v)
                })
            }
            // `t.cumsum(0)`, `t.cumsum(dim=0)`.
            "cumsum" => {
                let kw = |name: &str| c.keywords.iter().find(|k| k.arg.as_deref() == Some(name));
                let dim = c.args.first().or_else(|| kw("dim").map(|k| &k.value));
                let dim = dim.ok_or_else(|| {
                    format!("{}: `.cumsum()` without a dim (torch raises)", self.here(e))
                })?;
                let dim = self.int(dim, at, d)?;
                let dtype = match kw("dtype") {
                    None => None,
                    Some(k) => match self.eval(&k.value, at, d)? {
                        Val::Dtype(t) => Some(t),
                        _ => {
                            return Err(format!(
                                "{}: `dtype=` is not a dtype",
                                self.here(&k.value)
                            ));
                        }
                    },
                };
                self.cumsum(t, dim, dtype, e)
            }
            // A broadcast view; every element is one of the source's, so the input is the
            // broadcast values themselves (`.contiguous()` after it is what tests write).
            "expand" => {
                let sizes = self.shape_args(&c.args, at, d, e)?;
                let shape = broadcast_shape(&t.shape, &sizes).ok_or_else(|| {
                    format!("{}: `.expand` to an incompatible shape", self.here(e))
                })?;
                let fill = match &t.fill {
                    Fill::Ones | Fill::Zeros | Fill::Full(_) => t.fill.clone(),
                    _ if shape.iter().product::<i64>() > MAX_COMPUTED_VALUES => {
                        return Err(format!(
                            "{}: `.expand` to more than {MAX_COMPUTED_VALUES} values",
                            self.here(e)
                        ));
                    }
                    _ => {
                        let values = known_values(&t).ok_or_else(|| {
                            format!(
                                "{}: `.expand` of values the importer does not know (random, uninitialised, or past {MAX_COMPUTED_VALUES}): a case spells values, not a view of them",
                                self.here(e)
                            )
                        })?;
                        Fill::Values(broadcast_values(&t.shape, &values, &shape))
                    }
                };
                Ok(Val::Tensor(TensorVal { shape, fill, ..t }))
            }
            _ => Err(format!(
                "{}: `.{m}()` of a tensor is not an input the importer spells",
                self.here(e)
            )),
        }
    }

    /// The keys of `helion.Config(...)`/`dict(...)` given as keywords, a `**` of another such
    /// value spread in place (a later key replaces an earlier one).
    fn mapping(&self, c: &ast::ExprCall, e: &ast::Expr, at: At, d: usize) -> R<Val> {
        if !c.args.is_empty() {
            return Err(format!(
                "{}: a config or dict built from positional arguments, which the importer does not read",
                self.here(e)
            ));
        }
        let mut out: Vec<(String, Val)> = Vec::new();
        let mut set = |k: String, v: Val| match out.iter_mut().find(|(key, _)| *key == k) {
            Some(entry) => entry.1 = v,
            None => out.push((k, v)),
        };
        for kw in &c.keywords {
            let v = self.eval(&kw.value, at, d)?;
            match (kw.arg.as_deref(), v) {
                (Some(k), v) => set(k.to_string(), v),
                (None, Val::Map(entries)) => entries.into_iter().for_each(|(k, v)| set(k, v)),
                (None, _) => {
                    return Err(format!(
                        "{}: `**` of something other than a config or dict the importer reads",
                        self.here(&kw.value)
                    ));
                }
            }
        }
        Ok(Val::Map(out))
    }

    /// The one value of a tensor whose values the file fixes (`int(qo[-1])`, `.item()`).
    fn one_value(&self, t: &TensorVal, e: &ast::Expr, what: &str) -> R<f64> {
        known_values(t)
            .filter(|v| v.len() == 1)
            .map(|v| v[0])
            .ok_or_else(|| {
                format!(
                    "{}: {what} of a tensor that is not one value the importer knows",
                    self.here(e)
                )
            })
    }

    /// The values `what` (at `e`) computes with: those the file fixes, or pallas-diff's own
    /// draw for a random `torch.randint`/`torch.randperm`, which the case's header notes (the
    /// computed values are fixed, spelled as literals, but not the file's).
    fn computed_values(&self, t: &TensorVal, e: &ast::Expr, what: &str) -> R<Vec<f64>> {
        if let Some(values) = known_values(t) {
            return Ok(values);
        }
        match &t.fill {
            Fill::Drawn(values) if values.len() as i64 <= MAX_COMPUTED_VALUES => {
                self.note(format!(
                    "{}: {what} computes with pallas-diff's own draw in place of the file's random ints; the values, and sizes read off them, are the case's own",
                    self.here(e)
                ));
                Ok(values.clone())
            }
            _ => Err(format!(
                "{}: {what} of values the importer does not know (random floats, uninitialised, or past {MAX_COMPUTED_VALUES})",
                self.here(e)
            )),
        }
    }

    /// `torch.cat(tensors, dim)` of tensors whose values are known: the same shape but along
    /// `dim`, the dtype torch promotes them to, the values concatenated row-major.
    fn cat(&self, tensors: &[TensorVal], dim: i64, e: &ast::Expr) -> R<Val> {
        let Some(first) = tensors.first() else {
            return Err(format!(
                "{}: `torch.cat` of no tensors (torch raises)",
                self.here(e)
            ));
        };
        let rank = first.shape.len();
        if rank == 0 {
            return Err(format!(
                "{}: `torch.cat` of 0-d tensors (torch raises)",
                self.here(e)
            ));
        }
        let k = if dim < 0 { dim + rank as i64 } else { dim };
        let k = usize::try_from(k)
            .ok()
            .filter(|&k| k < rank)
            .ok_or_else(|| format!("{}: `torch.cat` dim {dim} out of range", self.here(e)))?;
        let mut shape = first.shape.clone();
        shape[k] = 0;
        let mut dtype = first.dtype;
        for t in tensors {
            let same =
                t.shape.len() == rank && (0..rank).all(|j| j == k || t.shape[j] == first.shape[j]);
            if !same {
                return Err(format!(
                    "{}: `torch.cat` of shapes {:?} and {:?}, which differ off dim {k} (torch raises)",
                    self.here(e),
                    first.shape,
                    t.shape
                ));
            }
            shape[k] += t.shape[k];
            dtype = promote(dtype, t.dtype).ok_or_else(|| {
                format!(
                    "{}: `torch.cat` of dtypes {dtype:?} and {:?}, whose promotion the importer does not read",
                    self.here(e),
                    t.dtype
                )
            })?;
        }
        if shape.iter().product::<i64>() > MAX_COMPUTED_VALUES {
            return Err(format!(
                "{}: `torch.cat` to more than {MAX_COMPUTED_VALUES} values",
                self.here(e)
            ));
        }
        let values = tensors
            .iter()
            .map(|t| self.computed_values(t, e, "`torch.cat`"))
            .collect::<R<Vec<_>>>()?;
        // Row-major: for each index of the dims before `k`, each tensor's block in turn.
        let outer = usize::try_from(first.shape[..k].iter().product::<i64>()).unwrap_or(0);
        let inner = usize::try_from(first.shape[k + 1..].iter().product::<i64>()).unwrap_or(0);
        let mut out = Vec::new();
        for o in 0..outer {
            for (t, v) in tensors.iter().zip(&values) {
                let block = usize::try_from(t.shape[k]).unwrap_or(0) * inner;
                out.extend_from_slice(&v[o * block..(o + 1) * block]);
            }
        }
        Ok(tensor(shape, dtype, Fill::Values(out)))
    }

    /// `torch.cumsum(t, dim)` of a 1-D int tensor whose values are known: the running sums,
    /// int64 as torch gives for any int input (or `dtype=`).
    fn cumsum(&self, t: TensorVal, dim: i64, dtype: Option<Dtype>, e: &ast::Expr) -> R<Val> {
        if t.shape.len() != 1 || !matches!(dim, 0 | -1) {
            return Err(format!(
                "{}: `cumsum` of a tensor of shape {:?} over dim {dim} (the importer reads a 1-D tensor's)",
                self.here(e),
                t.shape
            ));
        }
        if !t.dtype.is_int() && t.dtype != Dtype::Other("bool") {
            return Err(format!(
                "{}: `cumsum` of a float tensor (its sums round in its dtype, which the importer does not compute)",
                self.here(e)
            ));
        }
        let values = self.computed_values(&t, e, "`cumsum`")?;
        let mut sum = 0i64;
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            sum = sum
                .checked_add(v as i64)
                .ok_or_else(|| format!("{}: `cumsum` overflows", self.here(e)))?;
            out.push(sum as f64);
        }
        Ok(tensor(
            t.shape,
            dtype.unwrap_or(Dtype::Int64),
            Fill::Values(out),
        ))
    }

    fn int(&self, e: &ast::Expr, at: At, d: usize) -> R<i64> {
        match self.eval(e, at, d)? {
            Val::Int(i) => Ok(i),
            _ => Err(format!("{}: not an int", self.here(e))),
        }
    }

    /// A shape given as `(*dims)` or `([dims])`/`(shape_tuple)`.
    fn shape_args(&self, args: &[ast::Expr], at: At, d: usize, e: &ast::Expr) -> R<Vec<i64>> {
        let vals = match self.seq(args, at, d)? {
            Val::Seq(v) => v,
            _ => unreachable!("seq returns a sequence"),
        };
        let vals = match vals.as_slice() {
            [Val::Seq(inner)] => inner.clone(),
            _ => vals,
        };
        let mut shape = Vec::new();
        for v in vals {
            match v {
                Val::Int(i) if i >= -1 => shape.push(i),
                _ => {
                    return Err(format!(
                        "{}: a shape that is not a list of ints",
                        self.here(e)
                    ));
                }
            }
        }
        if shape.iter().product::<i64>().unsigned_abs() > 1 << 24 {
            return Err(format!("{}: a shape past 16M elements", self.here(e)));
        }
        Ok(shape)
    }
}

/// The shape `.expand(sizes)` gives a tensor of `shape` (torch's rules: new leading dims, `-1`
/// keeps a dim, a dim of 1 stretches), or `None` where torch raises.
fn broadcast_shape(shape: &[i64], sizes: &[i64]) -> Option<Vec<i64>> {
    let lead = sizes.len().checked_sub(shape.len())?;
    sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| match i.checked_sub(lead).map(|j| shape[j]) {
            None if s >= 0 => Some(s),
            None => None,
            Some(dim) if s == -1 || s == dim => Some(dim),
            Some(1) if s >= 0 => Some(s),
            Some(_) => None,
        })
        .collect()
}

/// The row-major values of `values` (of `shape`) broadcast to `to`.
fn broadcast_values(shape: &[i64], values: &[f64], to: &[i64]) -> Vec<f64> {
    let lead = to.len() - shape.len();
    // The source's strides, 0 where a dim is broadcast.
    let mut strides = vec![0i64; to.len()];
    let mut acc = 1i64;
    for j in (0..shape.len()).rev() {
        strides[lead + j] = if shape[j] == 1 { 0 } else { acc };
        acc *= shape[j];
    }
    let n: i64 = to.iter().product();
    (0..n)
        .map(|flat| {
            let (mut rest, mut at) = (flat, 0i64);
            for k in (0..to.len()).rev() {
                at += (rest % to[k]) * strides[k];
                rest /= to[k];
            }
            values[at as usize]
        })
        .collect()
}

/// The dtype `torch.cat` gives two dtypes (torch's promotion among those the importer reads:
/// the wider int, a float over an int, float32 over bfloat16); `None` for any other pair.
fn promote(a: Dtype, b: Dtype) -> Option<Dtype> {
    use Dtype::*;
    let float = |t: Dtype| matches!(t, Float32 | Bfloat16);
    let int = |t: Dtype| t.is_int() || t == Other("bool");
    Some(match (a, b) {
        _ if a == b => a,
        (Int32, Int64) | (Int64, Int32) => Int64,
        (Other("bool"), i) | (i, Other("bool")) if i.is_int() => i,
        (Float32, Bfloat16) | (Bfloat16, Float32) => Float32,
        (f, i) | (i, f) if float(f) && int(i) => f,
        _ => return None,
    })
}

fn tensor(shape: Vec<i64>, dtype: Dtype, fill: Fill) -> Val {
    Val::Tensor(TensorVal { shape, dtype, fill })
}

fn arith(op: &ast::Operator, l: &Val, r: &Val) -> Option<Val> {
    match (l, r) {
        (Val::Int(a), Val::Int(b)) => Some(Val::Int(match op {
            ast::Operator::Add => a.checked_add(*b)?,
            ast::Operator::Sub => a.checked_sub(*b)?,
            ast::Operator::Mult => a.checked_mul(*b)?,
            ast::Operator::FloorDiv => a.checked_div_euclid(*b)?,
            ast::Operator::Mod => a.checked_rem_euclid(*b)?,
            ast::Operator::Pow => a.checked_pow(u32::try_from(*b).ok()?)?,
            ast::Operator::LShift => a.checked_shl(u32::try_from(*b).ok()?)?,
            _ => return None,
        })),
        (Val::Seq(a), Val::Seq(b)) if matches!(op, ast::Operator::Add) => {
            Some(Val::Seq(a.iter().chain(b).cloned().collect()))
        }
        _ => {
            let f = |v: &Val| match v {
                Val::Int(i) => Some(*i as f64),
                Val::Float(f) => Some(*f),
                _ => None,
            };
            let (a, b) = (f(l)?, f(r)?);
            Some(Val::Float(match op {
                ast::Operator::Add => a + b,
                ast::Operator::Sub => a - b,
                ast::Operator::Mult => a * b,
                ast::Operator::Div => a / b,
                _ => return None,
            }))
        }
    }
}

/// Python's truth of a host value (`None` for values whose truth the importer does not know).
fn truthy(v: &Val) -> Option<bool> {
    Some(match v {
        Val::Bool(b) => *b,
        Val::Int(i) => *i != 0,
        Val::Float(f) => *f != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::None => false,
        Val::Seq(items) => !items.is_empty(),
        // A tensor's truth is its one element's, a dtype's and a device's always true: not
        // how a test picks a value.
        Val::Dtype(_) | Val::Device | Val::Tensor(_) | Val::Map(_) => return None,
    })
}

/// `l op r` for numbers, strings, bools and `None` (`==`, `!=`, `is`, `is not` on any two of
/// them; orderings on numbers).
fn compare(op: &ast::CmpOp, l: &Val, r: &Val) -> Option<bool> {
    let num = |v: &Val| match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        Val::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    };
    let equal = || -> Option<bool> {
        match (l, r) {
            (Val::Str(a), Val::Str(b)) => Some(a == b),
            (Val::None, Val::None) => Some(true),
            (Val::None, Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::Str(_))
            | (Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::Str(_), Val::None) => Some(false),
            (Val::Str(_), Val::Int(_) | Val::Float(_) | Val::Bool(_))
            | (Val::Int(_) | Val::Float(_) | Val::Bool(_), Val::Str(_)) => Some(false),
            (Val::Dtype(a), Val::Dtype(b)) => Some(a == b),
            _ => Some(num(l)? == num(r)?),
        }
    };
    match op {
        ast::CmpOp::Eq => equal(),
        ast::CmpOp::NotEq => equal().map(|e| !e),
        // Identity of the values a test compares so (`None`, bools, small ints, interned
        // strings) is their equality.
        ast::CmpOp::Is => equal(),
        ast::CmpOp::IsNot => equal().map(|e| !e),
        ast::CmpOp::Lt => Some(num(l)? < num(r)?),
        ast::CmpOp::LtE => Some(num(l)? <= num(r)?),
        ast::CmpOp::Gt => Some(num(l)? > num(r)?),
        ast::CmpOp::GtE => Some(num(l)? >= num(r)?),
        ast::CmpOp::In | ast::CmpOp::NotIn => None,
    }
}

/// The shape of `t[index]` when `index` only adds unit dims (`t[:, None]`, `t[None]`,
/// `t[None, :, None]`): full slices `:` over leading dims (the rest implied) and `None`s.
fn unsqueezed(shape: &[i64], index: &ast::Expr) -> Option<Vec<i64>> {
    let entries: Vec<&ast::Expr> = match index {
        ast::Expr::Tuple(t) => t.elts.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    let mut dims = shape.iter();
    for entry in entries {
        match entry {
            ast::Expr::Slice(s) if s.lower.is_none() && s.upper.is_none() && s.step.is_none() => {
                out.push(*dims.next()?);
            }
            ast::Expr::Constant(c) if matches!(c.value, ast::Constant::None) => out.push(1),
            _ => return None,
        }
    }
    out.extend(dims);
    Some(out)
}

/// Most values the importer computes for a tensor (a case spells at most 4096 literal values;
/// past this bound the work would be spent on an input that cannot be written).
const MAX_COMPUTED_VALUES: i64 = 1 << 16;

/// The values of a tensor whose values the file fixes (an arange, a range, literal values
/// and what the importer computed from them, a constant fill: `torch.zeros`, `torch.ones`,
/// `torch.full`); `None` for random draws and `torch.empty`, and past [`MAX_COMPUTED_VALUES`].
fn known_values(t: &TensorVal) -> Option<Vec<f64>> {
    let n = t.shape.iter().product::<i64>();
    if n > MAX_COMPUTED_VALUES {
        return None;
    }
    let n = usize::try_from(n).ok()?;
    Some(match &t.fill {
        Fill::Arange => (0..n).map(|i| i as f64).collect(),
        Fill::Range { start, step, .. } => lang::ir::inputs::range_values(*start, *step, n),
        Fill::Values(v) => v.clone(),
        Fill::Ones => vec![1.0; n],
        Fill::Zeros => vec![0.0; n],
        Fill::Full(v) => vec![*v; n],
        Fill::Randn | Fill::Rand | Fill::Empty | Fill::Drawn(_) => return None,
    })
}

/// Python's (and torch's) floor modulo and floor division of ints: the remainder takes the
/// divisor's sign. `None` for a zero divisor (torch raises on an int tensor).
fn floor_div_mod(a: i64, b: i64) -> Option<(i64, i64)> {
    let r = a.checked_rem(b)?;
    let r = if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    };
    Some(((a - r) / b, r))
}

/// `t op k` for an int tensor whose values the file fixes and an int `k` (`torch.arange(n) %
/// 53`, `idx * 2 + 1`): its values computed as torch does, the dtype kept. Float tensors and
/// random values are left out: their arithmetic rounds in the tensor's dtype, and a case cannot
/// spell arithmetic on pallas-diff's own draws.
fn tensor_arith(op: &ast::Operator, t: &TensorVal, k: &Val) -> Result<Val, String> {
    let Val::Int(k) = *k else {
        return Err("a tensor combined with something other than an int".into());
    };
    if !t.dtype.is_int() {
        return Err("arithmetic on a float tensor".into());
    }
    let values = known_values(t).ok_or(
        "arithmetic on values the importer does not know: random, uninitialised or too many",
    )?;
    let f = |a: i64| -> Option<i64> {
        match op {
            ast::Operator::Add => a.checked_add(k),
            ast::Operator::Sub => a.checked_sub(k),
            ast::Operator::Mult => a.checked_mul(k),
            ast::Operator::FloorDiv => floor_div_mod(a, k).map(|(q, _)| q),
            ast::Operator::Mod => floor_div_mod(a, k).map(|(_, r)| r),
            _ => None,
        }
    };
    let values = values
        .iter()
        .map(|&v| f(v as i64).map(|x| x as f64))
        .collect::<Option<Vec<_>>>()
        .ok_or("an operator other than + - * // %, or a zero divisor")?;
    Ok(Val::Tensor(TensorVal {
        shape: t.shape.clone(),
        dtype: t.dtype,
        fill: Fill::Values(values),
    }))
}

/// A nested list of numbers: its shape, row-major values and whether any was a float.
fn flatten(v: &Val) -> Option<(Vec<i64>, Vec<f64>, bool)> {
    match v {
        Val::Int(i) => Some((vec![], vec![*i as f64], false)),
        Val::Float(f) => Some((vec![], vec![*f], true)),
        Val::Bool(b) => Some((vec![], vec![f64::from(u8::from(*b))], false)),
        Val::Seq(items) => {
            let mut shape = None;
            let (mut values, mut any_float) = (Vec::new(), false);
            for item in items {
                let (s, v, f) = flatten(item)?;
                if shape.get_or_insert_with(|| s.clone()) != &s {
                    return None;
                }
                values.extend(v);
                any_float |= f;
            }
            let mut full = vec![items.len() as i64];
            full.extend(shape.unwrap_or_default());
            Some((full, values, any_float))
        }
        _ => None,
    }
}

impl TensorVal {
    /// The case-script constructor of this tensor, with the notes a reader needs (a narrowed
    /// dtype, values pallas-diff drew itself).
    pub fn spelling(&self, notes: &mut Vec<String>, name: &str) -> R<String> {
        let dt = self.dtype.spelling()?;
        if self.dtype == Dtype::Int64 {
            notes.push(format!(
                "`{name}`: int64 in the file, int32 here (case scripts have no int64)"
            ));
        }
        if self.shape.iter().any(|&d| d < 0) {
            return Err(format!("`{name}`: a negative dimension"));
        }
        let dims = self
            .shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let n: i64 = self.shape.iter().product();
        let reshape = |s: String| {
            if self.shape.len() == 1 {
                s
            } else {
                format!("{s}.reshape({dims})")
            }
        };
        Ok(match &self.fill {
            Fill::Randn if self.dtype.is_int() => {
                return Err(format!("`{name}`: `torch.randn` of an int dtype"));
            }
            Fill::Randn => format!("torch.randn({dims}, dtype={dt})"),
            Fill::Rand => format!("torch.rand({dims}, dtype={dt})"),
            Fill::Ones => format!("torch.ones({dims}, dtype={dt})"),
            Fill::Zeros => format!("torch.zeros({dims}, dtype={dt})"),
            Fill::Empty => format!("torch.empty({dims}, dtype={dt})"),
            Fill::Full(v) => format!(
                "torch.full([{dims}], {}, dtype={dt})",
                number(*v, self.dtype)
            ),
            Fill::Arange => reshape(format!("torch.arange({n}, dtype={dt})")),
            Fill::Range {
                start,
                end,
                step: 1,
            } => reshape(format!("torch.arange({start}, {end}, dtype={dt})")),
            Fill::Range { start, end, step } => {
                reshape(format!("torch.arange({start}, {end}, {step}, dtype={dt})"))
            }
            Fill::Values(values) | Fill::Drawn(values) => {
                if values.len() > 4096 {
                    return Err(format!(
                        "`{name}`: {} literal values (at most 4096 are spelled)",
                        values.len()
                    ));
                }
                let list = values
                    .iter()
                    .map(|&v| number(v, self.dtype))
                    .collect::<Vec<_>>()
                    .join(", ");
                reshape(format!("torch.tensor([{list}], dtype={dt})"))
            }
        })
    }
}

fn number(v: f64, dtype: Dtype) -> String {
    if dtype.is_int() {
        format!("{}", v as i64)
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}
