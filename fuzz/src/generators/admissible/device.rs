//! Device code in the shape run: loops (every grid index and tile, with the effective block
//! sizes, within the step budget), device statements (assignments, augmented assignments,
//! branches taken on the concrete ints), and the stores and atomics whose regions must be in
//! range, broadcast-compatible and, for `torch.empty` allocations, written before they are read.

use super::module_rules::is_identifier;
use super::run::ShapeRun;
use super::static_rules::{atomic_indices, list_indices};
use super::values::{R, Storage, TV, TileV, V, broadcast, mark};
use super::{Arm, Flaw, MAX_STEPS};
use lang::ir::arith::ceil_div;
use lang::ir::{AtomicOp, BinOp, DType, Expr, ExprKind, Index, Loop, LoopKind, Stmt, StmtKind};

impl ShapeRun<'_> {
    pub(super) fn run_loop(&mut self, lp: &Loop) -> Result<(), Flaw> {
        if lp.dims.is_empty() || lp.vars.len() != lp.dims.len() {
            return Err(self.flaw("a loop has one variable per dim".into()));
        }
        if !lp.list_form && lp.dims.len() > 1 {
            return Err(self.flaw("a multi-dim loop is written in list form".into()));
        }
        if lp.list_form
            && lp.dims.iter().any(|d| d.begin.is_some())
            && lp.dims.iter().any(|d| d.begin.is_none())
        {
            return Err(self.flaw("a list-form loop gives every begin or none".into()));
        }
        for v in &lp.vars {
            if !is_identifier(v)
                || self.host_names.contains(v)
                || lp.vars.iter().filter(|x| *x == v).count() > 1
            {
                return Err(self.flaw(format!("loop variable `{v}` is not a fresh identifier")));
            }
            if matches!(self.env.get(v), Some(V::T(_) | V::Int(_) | V::Float)) {
                return Err(self.flaw(format!("loop variable `{v}` rebinds a device value")));
            }
        }
        let ids: Vec<usize> = self.table.loop_ids(lp).to_vec();
        if ids.len() != lp.dims.len() {
            return Err(self.flaw("internal: loop has no block ids".into()));
        }
        // Each dim's sequence of values.
        let mut per_dim: Vec<Vec<V>> = Vec::new();
        for (dim, &bid) in lp.dims.iter().zip(&ids) {
            let mut bound = |e: Option<&Expr>, what: &str| -> Result<i64, Flaw> {
                let Some(e) = e else { return Ok(0) };
                self.syntax(e).map_err(|m| self.flaw(m))?;
                match self.eval(e).map_err(|m| self.flaw(m))? {
                    V::Int(v) => Ok(v),
                    other => Err(self.flaw(format!("loop {what} is {}", other.what()))),
                }
            };
            let begin = bound(dim.begin.as_ref(), "begin")?;
            let end = bound(Some(&dim.end), "end")?;
            if let Some(b) = &dim.block_size {
                if lp.kind == LoopKind::Grid {
                    return Err(self.flaw("hl.grid takes no block_size".into()));
                }
                match self.eval(b).map_err(|m| self.flaw(m))? {
                    V::Int(v) if v >= 1 => {}
                    _ => return Err(self.flaw("block_size is not a positive int".into())),
                }
            }
            if begin < 0 || end - begin > 4096 {
                return Err(self.flaw(format!("loop bounds {begin}..{end} out of range")));
            }
            let values = match lp.kind {
                LoopKind::Grid => (begin..end.max(begin)).map(V::Int).collect(),
                LoopKind::Tile => {
                    let block = self.effective[bid];
                    let count = if end > begin {
                        ceil_div(end - begin, block).unwrap_or(0)
                    } else {
                        0
                    };
                    (0..count)
                        .map(|k| {
                            let b = begin + k * block;
                            V::Tile(TileV {
                                begin: b,
                                end: (b + block).min(end),
                                block,
                                count,
                            })
                        })
                        .collect()
                }
            };
            per_dim.push(values);
        }
        let before: Vec<String> = self.env.keys().cloned().collect();
        let mut idx = vec![0usize; per_dim.len()];
        if per_dim.iter().all(|v| !v.is_empty()) {
            'iterations: loop {
                self.steps += 1;
                if self.steps > MAX_STEPS {
                    return Err(self.flaw("the case takes too many loop iterations".into()));
                }
                for (k, var) in lp.vars.iter().enumerate() {
                    self.env.insert(var.clone(), per_dim[k][idx[k]].clone());
                }
                self.device_body(&lp.body, Arm::Loop)?;
                let mut k = per_dim.len();
                loop {
                    if k == 0 {
                        break 'iterations;
                    }
                    k -= 1;
                    idx[k] += 1;
                    if idx[k] < per_dim[k].len() {
                        break;
                    }
                    idx[k] = 0;
                }
            }
        }
        self.env.retain(|k, _| before.contains(k));
        Ok(())
    }

    fn device_body(&mut self, body: &[Stmt], arm: Arm) -> Result<(), Flaw> {
        for (i, stmt) in body.iter().enumerate() {
            self.path.push((arm, i));
            self.device_stmt(stmt)?;
            self.path.pop();
        }
        Ok(())
    }

    fn device_stmt(&mut self, stmt: &Stmt) -> Result<(), Flaw> {
        let r: R<()> = match &stmt.kind {
            StmtKind::Assign { target, value } => (|| {
                self.bindable(target)?;
                self.syntax(value)?;
                let v = self.eval(value)?;
                match v {
                    V::T(_) | V::Int(_) | V::Float => {
                        self.env.insert(target.clone(), v);
                        Ok(())
                    }
                    other => Err(format!(
                        "a device assignment binds a value, not {}",
                        other.what()
                    )),
                }
            })(),
            StmtKind::AugAssign { target, op, value } => (|| {
                if !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
                    return Err("augmented assignment is +=, -= or *=".to_string());
                }
                self.bindable(target)?;
                self.syntax(value)?;
                let cur = self
                    .env
                    .get(target)
                    .cloned()
                    .ok_or_else(|| format!("name `{target}` is not defined"))?;
                let rhs = self.eval(value)?;
                let v = self.binary(*op, cur.clone(), rhs)?;
                // In place on a tensor: the result keeps the target's shape, and an int tensor
                // cannot take a float result.
                if let (V::T(t), V::T(r)) = (&cur, &v) {
                    if r.shape != t.shape {
                        return Err(format!(
                            "`{target}` of shape {:?} updated in place to {:?}",
                            t.shape, r.shape
                        ));
                    }
                    if !t.dtype.is_float() && r.dtype.is_float() {
                        return Err(format!("int32 `{target}` updated in place with a float"));
                    }
                }
                let v = match (cur, v) {
                    (V::T(t), V::T(r)) => V::T(TV {
                        dtype: t.dtype,
                        ..r
                    }),
                    (_, v) => v,
                };
                self.env.insert(target.clone(), v);
                Ok(())
            })(),
            StmtKind::Store {
                tensor,
                indices,
                value,
                explicit,
            } => (|| {
                self.syntax_indices(indices)?;
                if *explicit {
                    list_indices(indices)?;
                }
                self.syntax(value)?;
                let v = self.eval(value)?;
                self.write(tensor, indices, v, None)
            })(),
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => (|| {
                self.syntax_indices(indices)?;
                atomic_indices(indices)?;
                self.syntax(value)?;
                let host_dtype = self.host_dtype(tensor)?;
                match op {
                    AtomicOp::And | AtomicOp::Or | AtomicOp::Xor if host_dtype.is_float() => {
                        return Err(format!("hl.{} on a float tensor", op.name()));
                    }
                    AtomicOp::Add
                    | AtomicOp::And
                    | AtomicOp::Cas
                    | AtomicOp::Max
                    | AtomicOp::Min
                    | AtomicOp::Or
                    | AtomicOp::Xchg
                    | AtomicOp::Xor => {}
                }
                if (*op == AtomicOp::Cas) != expected.is_some() {
                    return Err("hl.atomic_cas (and only it) takes an expected value".into());
                }
                let v = self.eval(value)?;
                let x = match expected {
                    Some(x) => {
                        self.syntax(x)?;
                        Some(self.eval(x)?)
                    }
                    None => None,
                };
                // An atomic reads the target: its region must be initialized.
                self.read_host(tensor, indices)?;
                self.write(tensor, indices, v, x)
            })(),
            StmtKind::For(lp) => return self.run_loop(lp),
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let taken = (|| {
                    self.syntax(cond)?;
                    let ExprKind::Compare { op, lhs, rhs } = &cond.kind else {
                        return Err("an `if` condition is one comparison".to_string());
                    };
                    match (self.eval(lhs)?, self.eval(rhs)?) {
                        (V::Int(a), V::Int(b)) => Ok(op.eval(a, b)),
                        (a, b) => Err(format!("`if` compares {} with {}", a.what(), b.what())),
                    }
                })()
                .map_err(|m| self.flaw(m))?;
                let before: Vec<String> = self.env.keys().cloned().collect();
                if taken {
                    self.device_body(then_body, Arm::Then)?;
                } else {
                    self.device_body(else_body, Arm::Else)?;
                }
                self.env.retain(|k, _| before.contains(k));
                return Ok(());
            }
            StmtKind::Return(_) => Err("`return` inside a device loop".into()),
        };
        r.map_err(|m| self.flaw(m))
    }

    fn bindable(&self, target: &str) -> R<()> {
        if !is_identifier(target) {
            return Err(format!("`{target}` is not an identifier"));
        }
        if self.host_names.iter().any(|h| h == target) {
            return Err(format!(
                "`{target}` is a host name: device code cannot rebind it"
            ));
        }
        if matches!(self.env.get(target), Some(V::Tile(_))) {
            return Err(format!(
                "`{target}` is a tile: device code cannot rebind it"
            ));
        }
        Ok(())
    }

    fn host_dtype(&self, tensor: &str) -> R<DType> {
        match self.env.get(tensor) {
            Some(V::Host(h)) => Ok(h.dtype),
            _ => Err(format!("`{tensor}` is not a host tensor")),
        }
    }

    /// A store or atomic: the value (and CAS's expected value) broadcasts to the region.
    fn write(&mut self, tensor: &str, indices: &[Index], v: V, expected: Option<V>) -> R<()> {
        let Some(V::Host(h)) = self.env.get(tensor).cloned() else {
            return Err(format!("`{tensor}` is not a host tensor"));
        };
        if !self.host_names.iter().any(|n| n == tensor) {
            return Err(format!("`{tensor}` is not a host tensor"));
        }
        let (shape, sel, _) = self.index(&h.shape, indices, true)?;
        for val in std::iter::once(&v).chain(expected.as_ref()) {
            match val {
                V::T(t) => {
                    if t.shape.len() > shape.len() || broadcast(&t.shape, &shape)? != shape {
                        return Err(format!(
                            "a value of shape {:?} is stored into {shape:?}",
                            t.shape
                        ));
                    }
                }
                V::Int(_) | V::Float => {}
                other => return Err(format!("{} is stored", other.what())),
            }
        }
        if let Storage::Empty {
            shape: full,
            written,
            aliased,
        } = &mut self.storages[h.storage]
        {
            if *aliased || *full != h.shape {
                return Err("a torch.empty allocation written through an alias".into());
            }
            mark(full, &sel, written, true);
        }
        Ok(())
    }

    /// Refuses reading a `torch.empty` region not written yet.
    pub(super) fn read_host(&mut self, tensor: &str, indices: &[Index]) -> R<()> {
        let Some(V::Host(h)) = self.env.get(tensor).cloned() else {
            return Err(format!("`{tensor}` is not a host tensor"));
        };
        match &self.storages[h.storage] {
            Storage::Plain => return Ok(()),
            Storage::Empty { shape, aliased, .. } => {
                if *aliased || *shape != h.shape {
                    return Err("a torch.empty allocation read through an alias".into());
                }
            }
        }
        let (_, sel, _) = self.index(&h.shape, indices, true)?;
        if let Storage::Empty { shape, written, .. } = &mut self.storages[h.storage]
            && !mark(shape, &sel, written, false)
        {
            return Err(format!(
                "`{tensor}` is read before it is written (torch.empty)"
            ));
        }
        Ok(())
    }
}
