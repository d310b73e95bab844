//! The shape run: the kernel run the way eager PyTorch would, but on shapes instead of values.
//! This module owns its state (the names bound so far, the storages, where the run is, how many
//! loop iterations it has taken), the parameters bound to the inputs, the host statements
//! (allocations, aliases, ints) and the return, whose `torch.empty` outputs must be fully
//! written. Device code is in [`super::device`], expressions in [`super::eval`], indexing in
//! [`super::index`].

use super::module_rules::is_identifier;
use super::values::{HostT, MAX_INDEX_INPUT, R, Storage, V, norm_dim};
use super::{Arm, Flaw, MAX_ELEMS, StmtPath};
use lang::ir::blocks::BlockTable;
use lang::ir::hash::FastMap;
use lang::ir::scope::HostEnv;
use lang::ir::{AllocKind, AllocShape, Arg, Case, DType, Expr, ExprKind, Stmt, StmtKind, ViewOp};

/// One run of a case on shapes: see the module docs.
pub(super) struct ShapeRun<'c> {
    pub(super) case: &'c Case,
    pub(super) table: BlockTable,
    pub(super) effective: Vec<i64>,
    pub(super) env: FastMap<String, V>,
    pub(super) host_names: Vec<String>,
    pub(super) storages: Vec<Storage>,
    pub(super) path: StmtPath,
    pub(super) steps: usize,
}

impl<'c> ShapeRun<'c> {
    pub(super) fn new(case: &'c Case) -> R<ShapeRun<'c>> {
        let host = HostEnv::of(case);
        let sizes = case.block_sizes(|e| host.eval_int(e));
        let table = BlockTable::of(&case.kernel);
        if let Some(bad) = sizes.effective.iter().position(|&b| b < 1) {
            return Err(format!("block id {bad} has no positive block size"));
        }
        let mut c = ShapeRun {
            case,
            table,
            effective: sizes.effective,
            env: FastMap::default(),
            host_names: Vec::new(),
            storages: Vec::new(),
            path: Vec::new(),
            steps: 0,
        };
        let mut storage_of: FastMap<&str, usize> = FastMap::default();
        for (p, a) in case.kernel.params.iter().zip(&case.call.args) {
            let v = match a {
                Arg::Int(v) => V::Int(*v),
                Arg::Float(_) => V::Float,
                // Python's bool is an int; the language reads one only as a condition.
                Arg::Bool(b) => V::Int(i64::from(*b)),
                Arg::Input(n) => {
                    let input = case
                        .inputs
                        .iter()
                        .find(|i| &i.name == n)
                        .ok_or("missing input")?;
                    let (dtype, shape) = input.dtype_and_shape().map_err(|e| e.to_string())?;
                    let ints =
                        if dtype == DType::Int32 && shape.len() == 1 && shape[0] <= MAX_INDEX_INPUT
                        {
                            let k = case.inputs.iter().position(|i| &i.name == n).unwrap_or(0);
                            let t = input
                                .tensor(case.seed.unwrap_or(0), k)
                                .map_err(|e| e.to_string())?;
                            Some(std::rc::Rc::new(
                                t.values.iter().map(|&v| v as i64).collect(),
                            ))
                        } else {
                            None
                        };
                    let next = c.storages.len();
                    let storage = *storage_of.entry(n.as_str()).or_insert(next);
                    if storage == next {
                        c.storages.push(Storage::Plain);
                    }
                    V::Host(HostT {
                        shape,
                        dtype,
                        storage,
                        ints,
                    })
                }
            };
            c.env.insert(p.name.clone(), v);
            c.host_names.push(p.name.clone());
        }
        Ok(c)
    }

    pub(super) fn flaw(&self, message: String) -> Flaw {
        Flaw::Stmt {
            path: self.path.clone(),
            message,
        }
    }

    pub(super) fn run(&mut self) -> Result<(), Flaw> {
        let body = &self.case.kernel.body;
        for (i, stmt) in body.iter().enumerate() {
            self.path = vec![(Arm::Root, i)];
            self.host_stmt(stmt)?;
        }
        let values = match body.last().map(|s| &s.kind) {
            Some(StmtKind::Return(values)) => values.as_slice(),
            // A kernel that returns nothing: its outputs are the tensor arguments it writes
            // (`module_rules::return_rule` requires one), inputs that are never poison.
            _ if !self.case.kernel.written_params().is_empty() => &[],
            _ => return Err(Flaw::Return("missing return".into())),
        };
        for v in values {
            let ExprKind::Name(n) = &v.kind else {
                return Err(Flaw::Return("return values are host tensor names".into()));
            };
            let Some(V::Host(h)) = self.env.get(n) else {
                return Err(Flaw::Return(format!("`{n}` is not a host tensor")));
            };
            if let Storage::Empty { written, .. } = &self.storages[h.storage]
                && written.iter().any(|w| !w)
            {
                return Err(Flaw::UnwrittenEmpty { name: n.clone() });
            }
        }
        Ok(())
    }

    fn host_stmt(&mut self, stmt: &Stmt) -> Result<(), Flaw> {
        match &stmt.kind {
            StmtKind::Assign { target, value } => {
                if !is_identifier(target) || self.env.contains_key(target) {
                    return Err(self.flaw(format!("host name `{target}` is not fresh")));
                }
                let v = self.host_value(value).map_err(|m| self.flaw(m))?;
                self.env.insert(target.clone(), v);
                self.host_names.push(target.clone());
                Ok(())
            }
            StmtKind::For(lp) => self.run_loop(lp),
            StmtKind::Return(_) => Ok(()),
            StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::If { .. } => {
                Err(self.flaw("host code is assignments, device loops and the return".into()))
            }
        }
    }

    /// A host assignment's value: an int expression, an allocation, or a view of a host tensor
    /// (an alias sharing its storage).
    fn host_value(&mut self, e: &Expr) -> R<V> {
        self.syntax(e)?;
        match &e.kind {
            ExprKind::Alloc { kind, shape, dtype } => {
                let mut like_dtype = DType::Float32;
                let dims = match shape {
                    AllocShape::Dims(d) => d
                        .iter()
                        .map(|x| match self.eval(x)? {
                            V::Int(v) if (1..=4096).contains(&v) => Ok(v as usize),
                            other => Err(format!("allocation dim is {}", other.what())),
                        })
                        .collect::<R<Vec<_>>>()?,
                    AllocShape::Like(t) => match self.eval(t)? {
                        V::Host(h) => {
                            like_dtype = h.dtype;
                            h.shape
                        }
                        other => return Err(format!("`_like` of {}", other.what())),
                    },
                };
                let dtype = dtype.unwrap_or(like_dtype);
                let n: usize = dims.iter().product();
                if n > MAX_ELEMS {
                    return Err("allocation too large".into());
                }
                let storage = self.storages.len();
                self.storages.push(match kind {
                    AllocKind::Zeros => Storage::Plain,
                    AllocKind::Empty => Storage::Empty {
                        shape: dims.clone(),
                        written: vec![false; n],
                        aliased: false,
                    },
                });
                Ok(V::Host(HostT {
                    shape: dims,
                    dtype,
                    storage,
                    ints: None,
                }))
            }
            ExprKind::View { value, op } => {
                let V::Host(base) = self.eval(value)? else {
                    return Err("a host view is a view of a host tensor".into());
                };
                let numel: usize = base.shape.iter().product();
                let shape = match op {
                    ViewOp::ViewAs(o) => match self.eval(o)? {
                        V::Host(h) => h.shape,
                        V::T(t) => t.shape,
                        other => return Err(format!("view_as of {}", other.what())),
                    },
                    ViewOp::Reshape(d) | ViewOp::View(d) => self.reshape_dims(d, numel)?,
                    ViewOp::Squeeze(d) => {
                        let mut s = base.shape.clone();
                        let d = norm_dim(*d, s.len())?;
                        if s[d] == 1 {
                            s.remove(d);
                        }
                        s
                    }
                    ViewOp::Unsqueeze(d) => {
                        let mut s = base.shape.clone();
                        let d = norm_dim(*d, s.len() + 1)?;
                        s.insert(d, 1);
                        s
                    }
                };
                if shape.iter().product::<usize>() != numel {
                    return Err(format!("view of {:?} as {shape:?}", base.shape));
                }
                if let Storage::Empty { aliased, .. } = &mut self.storages[base.storage] {
                    *aliased = true;
                }
                Ok(V::Host(HostT {
                    shape,
                    dtype: base.dtype,
                    storage: base.storage,
                    ints: None,
                }))
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. } => match self.eval(e)? {
                V::Int(v) => Ok(V::Int(v)),
                other => Err(format!(
                    "a host assignment binds an int, an allocation or a view, not {}",
                    other.what()
                )),
            },
        }
    }

    pub(super) fn reshape_dims(&mut self, dims: &[Expr], numel: usize) -> R<Vec<usize>> {
        let mut vals = Vec::new();
        for d in dims {
            match self.eval(d)? {
                V::Int(v) if v >= -1 => vals.push(v),
                other => return Err(format!("reshape dim is {}", other.what())),
            }
        }
        if vals.iter().filter(|&&v| v == -1).count() > 1 {
            return Err("more than one -1 in a reshape".into());
        }
        let known: usize = vals
            .iter()
            .filter(|&&v| v != -1)
            .map(|&v| v as usize)
            .product();
        let out: Vec<usize> = vals
            .iter()
            .map(|&v| {
                if v == -1 {
                    numel.checked_div(known).unwrap_or(0)
                } else {
                    v as usize
                }
            })
            .collect();
        if out.iter().product::<usize>() != numel {
            return Err(format!("cannot reshape {numel} elements to {vals:?}"));
        }
        Ok(out)
    }
}
