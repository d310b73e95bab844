//! Name resolution: the Pallas AST rewritten with every name pre-resolved to a slot, following
//! Python's scoping (a name assigned anywhere in a function is local to it; other names are
//! read from the innermost enclosing function that binds them). Every function's locals get
//! their own slots in one flat array: nested functions run only while their definer is active
//! and never recurse, so a slot per (function, name) is exactly Python's frames.

use lang::ir::hash::FastMap;
use lang::pallas::{
    BinOp, CmpOp, CopyOp, Expr, Function, IndexPart, Jnp, PallasModule, Stmt, Target,
};
use lang::tensor::DType;

/// A slot index.
pub(crate) type Slot = u32;

/// A resolved function.
#[derive(Debug)]
pub(crate) struct RFunc {
    /// Its Python name.
    pub name: String,
    /// Parameter slots.
    pub params: Vec<Slot>,
    /// Every local slot (reset to unbound on each call).
    pub locals: Vec<Slot>,
    /// The body.
    pub body: Vec<RStmt>,
}

/// A resolved statement.
#[derive(Debug)]
pub(crate) enum RStmt {
    /// `target = value`.
    Assign(RTarget, RExpr),
    /// `target[index] = value`.
    Store {
        /// The Ref.
        target: RExpr,
        /// Index parts.
        index: Vec<RIndex>,
        /// Value.
        value: RExpr,
    },
    /// `for var in range(start, stop[, step])`.
    For {
        /// Loop variable.
        var: Slot,
        /// Start.
        start: RExpr,
        /// Stop.
        stop: RExpr,
        /// Step.
        step: Option<RExpr>,
        /// Body.
        body: Vec<RStmt>,
    },
    /// `def`: binds function `func` to `slot`.
    Def {
        /// Where the name lives.
        slot: Slot,
        /// Index into [`Resolved::funcs`].
        func: usize,
    },
    /// `return [value]`.
    Return(Option<RExpr>),
    /// An expression statement.
    Expr(RExpr),
    /// `@pl.when(pred)` on `def`: binds `slot` to `None`, calls `func` if `pred` holds.
    When {
        /// The condition.
        pred: RExpr,
        /// Where the decorated name lives.
        slot: Slot,
        /// Index into [`Resolved::funcs`].
        func: usize,
    },
    /// `pltpu.make_async_copy(src, dst, sem).<op>()`.
    AsyncCopy {
        /// Source Ref.
        src: RExpr,
        /// Destination Ref.
        dst: RExpr,
        /// Semaphore Ref.
        sem: RExpr,
        /// Start or wait.
        op: CopyOp,
    },
}

/// A resolved assignment target.
#[derive(Debug)]
pub(crate) enum RTarget {
    /// One name.
    Name(Slot),
    /// Tuple unpacking.
    Tuple(Vec<Slot>),
}

/// A resolved index part.
#[derive(Debug)]
pub(crate) enum RIndex {
    /// `:`.
    Full,
    /// `None`.
    NewAxis,
    /// `...`.
    Ellipsis,
    /// A static int.
    Int(i64),
    /// A static slice.
    Slice(Option<i64>, Option<i64>),
    /// A dynamic entry.
    Expr(RExpr),
}

/// A resolved `jnp` call.
#[derive(Debug)]
pub(crate) enum RJnp {
    /// `jnp.clip`.
    Clip(Box<RExpr>, Box<RExpr>, Box<RExpr>),
    /// `jnp.minimum`.
    Minimum(Box<RExpr>, Box<RExpr>),
    /// `jnp.maximum`.
    Maximum(Box<RExpr>, Box<RExpr>),
    /// `jnp.arange`.
    Arange(Box<RExpr>, Box<RExpr>, DType),
    /// `jnp.zeros`.
    Zeros(Vec<RExpr>, DType),
    /// `jnp.full`.
    Full(Vec<RExpr>, Box<RExpr>, DType),
    /// `jnp.sum(x, axis)`.
    Sum(Box<RExpr>, usize),
    /// `jnp.reshape`.
    Reshape(Box<RExpr>, Vec<i64>),
    /// `jnp.transpose`.
    Transpose(Box<RExpr>, Vec<usize>),
    /// `jnp.broadcast_to`.
    BroadcastTo(Box<RExpr>, Vec<i64>),
    /// `jnp.where`.
    Where(Box<RExpr>, Box<RExpr>, Box<RExpr>),
    /// `jax.lax.dynamic_slice_in_dim(x, start, size, axis)`.
    DynamicSliceInDim(Box<RExpr>, Box<RExpr>, i64, usize),
    /// `jax.lax.dot_general(lhs, rhs, ...)`.
    DotGeneral(Box<RExpr>, Box<RExpr>, crate::ops::DotDims),
    /// `jax.nn.one_hot(x, n, dtype)`.
    OneHot(Box<RExpr>, i64, DType),
}

/// A resolved expression.
#[derive(Debug)]
pub(crate) enum RExpr {
    /// A name read from a slot; `local` says whether it is local to the reading function.
    Load {
        /// The slot.
        slot: Slot,
        /// Local to the reading function (an unbound read is `UnboundLocalError`).
        local: bool,
    },
    /// A name bound in no enclosing function (`NameError` when evaluated).
    Unresolved(String),
    /// Int literal.
    Int(i64),
    /// Float literal.
    Float(f64),
    /// Bool literal.
    Bool(bool),
    /// `None`.
    None,
    /// Tuple.
    Tuple(Vec<RExpr>),
    /// Arithmetic.
    Binary(BinOp, Box<RExpr>, Box<RExpr>),
    /// Comparison.
    Compare(CmpOp, Box<RExpr>, Box<RExpr>),
    /// Negation.
    Neg(Box<RExpr>),
    /// `base[index]`.
    Index(Box<RExpr>, Vec<RIndex>),
    /// `base.at[index]`.
    At(Box<RExpr>, Vec<RIndex>),
    /// `base.reshape(shape)`.
    RefReshape(Box<RExpr>, Vec<i64>),
    /// `.astype`.
    Astype(Box<RExpr>, DType),
    /// `pl.ds`.
    Ds(Box<RExpr>, Box<RExpr>),
    /// `pl.multiple_of`.
    MultipleOf(Box<RExpr>, Box<RExpr>),
    /// `pl.program_id`.
    ProgramId(usize),
    /// A `jnp` call.
    Jnp(RJnp),
    /// `jax.lax.fori_loop`.
    ForiLoop {
        /// Lower bound.
        lower: Box<RExpr>,
        /// Upper bound.
        upper: Box<RExpr>,
        /// The body function (a name read).
        body: Box<RExpr>,
        /// Initial carry.
        init: Box<RExpr>,
    },
    /// `jax.lax.cond`.
    Cond {
        /// Predicate.
        pred: Box<RExpr>,
        /// Then function (a name read).
        then_fn: Box<RExpr>,
        /// Else function (a name read).
        else_fn: Box<RExpr>,
        /// Operands.
        operands: Vec<RExpr>,
    },
    /// `pltpu.emit_pipeline(body, grid=...)()`.
    EmitPipeline {
        /// The body function (a name read).
        body: Box<RExpr>,
        /// Grid.
        grid: Vec<RExpr>,
    },
}

/// A resolved module body.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// Every function; index 0 is the kernel.
    pub funcs: Vec<RFunc>,
    /// The names of the slots, end to end (for messages; one allocation, not one per slot).
    names: String,
    /// Where each slot's name ends in `names`.
    name_ends: Vec<u32>,
}

impl Resolved {
    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.name_ends.len()
    }

    /// The name of a slot.
    pub fn slot_name(&self, slot: Slot) -> &str {
        let k = slot as usize;
        let start = if k == 0 {
            0
        } else {
            self.name_ends[k - 1] as usize
        };
        &self.names[start..self.name_ends[k] as usize]
    }
}

struct Resolver<'m> {
    funcs: Vec<RFunc>,
    names: String,
    name_ends: Vec<u32>,
    /// Per name, the innermost function binding it: (depth, slot).
    bound: FastMap<&'m str, (usize, Slot)>,
    /// What each binding of the functions being resolved replaced in `bound`, innermost
    /// last, restored when its function is done (a flat undo log: no vector per name).
    shadowed: Vec<(&'m str, Option<(usize, Slot)>)>,
    /// Depth of the function being resolved (the kernel is 0).
    depth: usize,
}

/// Resolves the kernel of a module.
pub(crate) fn resolve(module: &PallasModule) -> Resolved {
    // Sized for a generated module up front (growing them was 8% of name resolution).
    let mut r = Resolver {
        funcs: Vec::with_capacity(8),
        names: String::with_capacity(512),
        name_ends: Vec::with_capacity(64),
        bound: FastMap::with_capacity_and_hasher(64, Default::default()),
        shadowed: Vec::with_capacity(64),
        depth: 0,
    };
    r.function(&module.kernel);
    Resolved {
        funcs: r.funcs,
        names: r.names,
        name_ends: r.name_ends,
    }
}

/// Names a function body assigns (not inside nested functions), in order, with repeats.
fn locals_of<'m>(body: &'m [Stmt], out: &mut Vec<&'m str>) {
    for s in body {
        match s {
            Stmt::Assign { target, .. } => match target {
                Target::Name(n) => out.push(n),
                Target::Tuple(ns) => out.extend(ns.iter().map(String::as_str)),
            },
            Stmt::For { var, body, .. } => {
                out.push(var);
                locals_of(body, out);
            }
            Stmt::Def(f) | Stmt::When { body: f, .. } => out.push(&f.name),
            Stmt::Store { .. } | Stmt::Return(_) | Stmt::Expr(_) | Stmt::AsyncCopy { .. } => {}
        }
    }
}

impl<'m> Resolver<'m> {
    /// Resolves `f` and returns its index.
    fn function(&mut self, f: &'m Function) -> usize {
        let index = self.funcs.len();
        self.funcs.push(RFunc {
            name: f.name.clone(),
            params: Vec::new(),
            locals: Vec::new(),
            body: Vec::new(),
        });
        self.depth += 1;
        let depth = self.depth;
        // Room for the usual count of names (about one per statement) without regrowing.
        let mut names: Vec<&'m str> = Vec::with_capacity(f.params.len() + 2 * f.body.len());
        names.extend(f.params.iter().map(String::as_str));
        locals_of(&f.body, &mut names);
        let mut locals = Vec::with_capacity(names.len());
        let undo_from = self.shadowed.len();
        for &n in &names {
            if self.bound.get(n).is_some_and(|&(d, _)| d == depth) {
                continue;
            }
            let slot = self.name_ends.len() as Slot;
            let old = self.bound.insert(n, (depth, slot));
            self.names.push_str(n);
            self.name_ends.push(self.names.len() as u32);
            self.shadowed.push((n, old));
            locals.push(slot);
        }
        let params = f.params.iter().map(|p| self.local(p)).collect();
        let body = self.body(&f.body);
        while self.shadowed.len() > undo_from {
            let Some((n, old)) = self.shadowed.pop() else {
                break;
            };
            match old {
                Some(b) => self.bound.insert(n, b),
                None => self.bound.remove(n),
            };
        }
        self.depth -= 1;
        let rf = &mut self.funcs[index];
        rf.params = params;
        rf.locals = locals;
        rf.body = body;
        index
    }

    fn body(&mut self, body: &'m [Stmt]) -> Vec<RStmt> {
        body.iter().map(|s| self.stmt(s)).collect()
    }

    fn local(&self, name: &str) -> Slot {
        // Every assigned name was collected as a local of the current function.
        self.bound.get(name).map_or(0, |&(_, slot)| slot)
    }

    fn stmt(&mut self, s: &'m Stmt) -> RStmt {
        match s {
            Stmt::Assign { target, value } => {
                let v = self.expr(value);
                let t = match target {
                    Target::Name(n) => RTarget::Name(self.local(n)),
                    Target::Tuple(ns) => RTarget::Tuple(ns.iter().map(|n| self.local(n)).collect()),
                };
                RStmt::Assign(t, v)
            }
            Stmt::Store {
                target,
                index,
                value,
            } => RStmt::Store {
                target: self.expr(target),
                index: self.index(index),
                value: self.expr(value),
            },
            Stmt::For {
                var,
                start,
                stop,
                step,
                body,
            } => RStmt::For {
                var: self.local(var),
                start: self.expr(start),
                stop: self.expr(stop),
                step: step.as_ref().map(|e| self.expr(e)),
                body: self.body(body),
            },
            Stmt::Def(f) => {
                let slot = self.local(&f.name);
                let func = self.function(f);
                RStmt::Def { slot, func }
            }
            Stmt::Return(v) => RStmt::Return(v.as_ref().map(|e| self.expr(e))),
            Stmt::Expr(e) => RStmt::Expr(self.expr(e)),
            Stmt::When { pred, body } => {
                let pred = self.expr(pred);
                let slot = self.local(&body.name);
                let func = self.function(body);
                RStmt::When { pred, slot, func }
            }
            Stmt::AsyncCopy { src, dst, sem, op } => RStmt::AsyncCopy {
                src: self.expr(src),
                dst: self.expr(dst),
                sem: self.expr(sem),
                op: *op,
            },
        }
    }

    fn index(&mut self, parts: &[IndexPart]) -> Vec<RIndex> {
        parts
            .iter()
            .map(|p| match p {
                IndexPart::Full => RIndex::Full,
                IndexPart::NewAxis => RIndex::NewAxis,
                IndexPart::Ellipsis => RIndex::Ellipsis,
                IndexPart::Int(v) => RIndex::Int(*v),
                IndexPart::Slice { start, stop } => RIndex::Slice(*start, *stop),
                IndexPart::Expr(e) => RIndex::Expr(self.expr(e)),
            })
            .collect()
    }

    fn name(&self, n: &str) -> RExpr {
        match self.bound.get(n) {
            Some(&(depth, slot)) => RExpr::Load {
                slot,
                local: depth == self.depth,
            },
            None => RExpr::Unresolved(n.to_string()),
        }
    }

    fn bx(&mut self, e: &Expr) -> Box<RExpr> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &Expr) -> RExpr {
        match e {
            Expr::Name(n) => self.name(n),
            Expr::Int(v) => RExpr::Int(*v),
            Expr::Float(v) => RExpr::Float(*v),
            Expr::Bool(b) => RExpr::Bool(*b),
            Expr::None => RExpr::None,
            Expr::Tuple(items) => RExpr::Tuple(items.iter().map(|x| self.expr(x)).collect()),
            Expr::Binary { op, lhs, rhs } => RExpr::Binary(*op, self.bx(lhs), self.bx(rhs)),
            Expr::Compare { op, lhs, rhs } => RExpr::Compare(*op, self.bx(lhs), self.bx(rhs)),
            Expr::Neg(v) => RExpr::Neg(self.bx(v)),
            Expr::Index { base, index } => RExpr::Index(self.bx(base), self.index(index)),
            Expr::At { base, index } => RExpr::At(self.bx(base), self.index(index)),
            Expr::RefReshape { base, shape } => RExpr::RefReshape(self.bx(base), shape.clone()),
            Expr::Astype { value, dtype } => RExpr::Astype(self.bx(value), *dtype),
            Expr::Ds { start, size } => RExpr::Ds(self.bx(start), self.bx(size)),
            Expr::MultipleOf { value, multiple } => {
                RExpr::MultipleOf(self.bx(value), self.bx(multiple))
            }
            Expr::ProgramId(axis) => RExpr::ProgramId(*axis),
            Expr::Jnp(j) => RExpr::Jnp(self.jnp(j)),
            Expr::ForiLoop {
                lower,
                upper,
                body,
                init,
            } => RExpr::ForiLoop {
                lower: self.bx(lower),
                upper: self.bx(upper),
                body: Box::new(self.name(body)),
                init: self.bx(init),
            },
            Expr::Cond {
                pred,
                then_fn,
                else_fn,
                operands,
            } => RExpr::Cond {
                pred: self.bx(pred),
                then_fn: Box::new(self.name(then_fn)),
                else_fn: Box::new(self.name(else_fn)),
                operands: operands.iter().map(|o| self.expr(o)).collect(),
            },
            Expr::EmitPipeline { body, grid } => RExpr::EmitPipeline {
                body: Box::new(self.name(body)),
                grid: grid.iter().map(|g| self.expr(g)).collect(),
            },
        }
    }

    fn jnp(&mut self, j: &Jnp) -> RJnp {
        match j {
            Jnp::Clip { x, lo, hi } => RJnp::Clip(self.bx(x), self.bx(lo), self.bx(hi)),
            Jnp::Minimum(a, b) => RJnp::Minimum(self.bx(a), self.bx(b)),
            Jnp::Maximum(a, b) => RJnp::Maximum(self.bx(a), self.bx(b)),
            Jnp::Arange { start, stop, dtype } => {
                RJnp::Arange(self.bx(start), self.bx(stop), *dtype)
            }
            Jnp::Zeros { shape, dtype } => {
                RJnp::Zeros(shape.iter().map(|d| self.expr(d)).collect(), *dtype)
            }
            Jnp::Full {
                shape,
                value,
                dtype,
            } => RJnp::Full(
                shape.iter().map(|d| self.expr(d)).collect(),
                self.bx(value),
                *dtype,
            ),
            Jnp::Sum { x, axis } => RJnp::Sum(self.bx(x), *axis),
            Jnp::Reshape { x, shape } => RJnp::Reshape(self.bx(x), shape.clone()),
            Jnp::Transpose { x, axes } => RJnp::Transpose(self.bx(x), axes.clone()),
            Jnp::BroadcastTo { x, shape } => RJnp::BroadcastTo(self.bx(x), shape.clone()),
            Jnp::Where { cond, a, b } => RJnp::Where(self.bx(cond), self.bx(a), self.bx(b)),
            Jnp::DynamicSliceInDim {
                x,
                start,
                size,
                axis,
            } => RJnp::DynamicSliceInDim(self.bx(x), self.bx(start), *size, *axis),
            Jnp::DotGeneral {
                lhs,
                rhs,
                contract,
                batched,
                preferred_f32,
                highest: _,
            } => RJnp::DotGeneral(
                self.bx(lhs),
                self.bx(rhs),
                crate::ops::DotDims {
                    contract: *contract,
                    batched: *batched,
                    preferred_f32: *preferred_f32,
                },
            ),
            Jnp::OneHot { x, n, dtype } => RJnp::OneHot(self.bx(x), *n, *dtype),
        }
    }
}
