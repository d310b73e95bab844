//! The evaluation plan: a case compiled once into a form that runs fast and repeatedly.
//!
//! Compiling resolves every name to a slot (Python function scope: one namespace for the whole
//! kernel body, so a name bound in one loop iteration is visible in the next), fixes the
//! *effective* block size of every loop dimension (spec §1.1a: Helion raises a block below the
//! TPU minimum of the tensor dim it tiles; [`lang::ir::Case::block_sizes`]), and builds the
//! input tensors once (shared copy-on-write by every run).

use crate::error::{EvalError, EvalErrorKind as K, Res, err};
use crate::ty::Ty;
use lang::ir::blocks::{BlockSource, BlockTable};
use lang::ir::hash::FastMap;
use lang::ir::inputs::InputError;
use lang::ir::scope::HostEnv;
use lang::ir::{
    AllocKind, AllocShape, Arg, AtomicOp, BinOp, Case, CmpOp, Ctor, DType, Expr, ExprKind, Index,
    LoopKind, ParamKind, Span, Stmt, StmtKind, TensorOp, TileAttr, ViewOp,
};
use lang::tensor::Tensor;
use std::sync::Arc;

/// A compiled expression.
#[derive(Clone, Debug)]
pub(crate) struct CExpr {
    pub kind: CK,
    pub span: Span,
}

/// Compiled expression kinds (one per [`ExprKind`]; loads and device subscripts share
/// [`CK::Index`]).
#[derive(Clone, Debug)]
pub(crate) enum CK {
    Name(usize),
    Int(i64),
    Float(f64),
    Size(Box<CExpr>, i64),
    TileAttr(usize, TileAttr),
    Binary(BinOp, Box<CExpr>, Box<CExpr>),
    Compare(CmpOp, Box<CExpr>, Box<CExpr>),
    Index(Box<CExpr>, Vec<CIndex>),
    Arange(Option<Box<CExpr>>, Box<CExpr>, Option<Box<CExpr>>),
    Full(Vec<CExpr>, Option<Box<CExpr>>, Ty),
    Cast(Box<CExpr>, Ty),
    Sum(Box<CExpr>, i64),
    View(Box<CExpr>, CView),
    Permute(Box<CExpr>, Vec<i64>),
    Alloc(AllocKind, CAllocShape, Option<DType>),
    Op(TensorOp, Vec<CExpr>),
}

/// A compiled index entry.
#[derive(Clone, Debug)]
pub(crate) enum CIndex {
    Full,
    NewAxis,
    Int(i64),
    Slice(Option<CExpr>, Option<CExpr>, Option<CExpr>),
    Expr(CExpr),
}

/// A compiled view.
#[derive(Clone, Debug)]
pub(crate) enum CView {
    Reshape(Vec<CExpr>),
    Squeeze(i64),
    Unsqueeze(i64),
    ViewAs(Box<CExpr>),
}

/// A compiled allocation shape.
#[derive(Clone, Debug)]
pub(crate) enum CAllocShape {
    Dims(Vec<CExpr>),
    Like(Box<CExpr>),
}

/// A compiled statement.
#[derive(Clone, Debug)]
pub(crate) struct CStmt {
    pub kind: SK,
    pub span: Span,
}

/// Compiled statement kinds.
#[derive(Clone, Debug)]
pub(crate) enum SK {
    Assign(usize, CExpr),
    AugAssign(usize, BinOp, CExpr),
    Store {
        tensor: CExpr,
        indices: Vec<CIndex>,
        value: CExpr,
    },
    Atomic {
        op: AtomicOp,
        tensor: CExpr,
        indices: Vec<CIndex>,
        expected: Option<CExpr>,
        value: CExpr,
    },
    For(CLoop),
    If(CExpr, Vec<CStmt>, Vec<CStmt>),
    Return(Vec<(CExpr, String)>),
}

/// A compiled `hl.tile`/`hl.grid` loop.
#[derive(Clone, Debug)]
pub(crate) struct CLoop {
    pub kind: LoopKind,
    pub vars: Vec<usize>,
    pub dims: Vec<CDim>,
    pub body: Vec<CStmt>,
}

/// One loop dimension with its effective block size.
#[derive(Clone, Debug)]
pub(crate) struct CDim {
    pub begin: Option<CExpr>,
    pub end: CExpr,
    pub block: LoopBlock,
}

/// How a loop dimension steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopBlock {
    /// By this block size.
    Fixed(i64),
    /// One tile spanning the whole extent (`end - begin`, at least 1): Helion's ref eager mode
    /// for a config-driven `hl.tile` ([`Tiling::HelionEager`]).
    WholeExtent,
}

/// Which block sizes the reference tiles loops with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tiling {
    /// The compiled kernel's: the effective block sizes (config entries and `block_size=`,
    /// raised to the TPU minimum; spec §1.1a). What every engine on our emitted module and
    /// Helion's Pallas backend compute with.
    #[default]
    Effective,
    /// Helion's ref eager mode (`HELION_INTERPRET=1`, engine `helion-eager`): a config-driven
    /// `hl.tile` is one tile of its whole extent, whatever the config says; a fixed
    /// `block_size=` is used as written (no TPU raising); grids step by 1
    /// (`helion/language/loops.py`, the `@_decorators.ref(tile)` implementation, 1.5.1).
    /// Everything else is torch's: where eager mode departs from torch by a rule of its own
    /// (it clamps negative integer-tensor indices), the evaluation computes torch's value and
    /// reports the departure ([`crate::Divergence`]).
    HelionEager,
}

/// A host storage every run starts from.
#[derive(Clone, Debug)]
pub(crate) struct InitStorage {
    pub name: String,
    pub ty: Ty,
    pub data: Arc<ndarray::Array1<f64>>,
    /// False for `torch.empty` inputs (nothing written).
    pub written: bool,
}

/// What a kernel parameter is bound to.
#[derive(Clone, Debug)]
pub(crate) enum ParamInit {
    Tensor {
        slot: usize,
        storage: usize,
        shape: Vec<usize>,
    },
    Int {
        slot: usize,
        value: i64,
    },
    Float {
        slot: usize,
        value: f64,
    },
}

/// A case compiled for evaluation: compile once with [`Plan::compile`], run any number of
/// times with [`Plan::run`].
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) names: Vec<String>,
    pub(crate) params: Vec<ParamInit>,
    pub(crate) storages: Vec<InitStorage>,
    pub(crate) body: Vec<CStmt>,
    pub(crate) kernel_span: Span,
    /// What a kernel that returns nothing outputs: the tensor parameters it writes, as
    /// (index into `params`, name) (`lang::ir::Kernel::written_params`).
    pub(crate) written: Vec<(usize, String)>,
    /// Configured block size per block id (config entry, `block_size=`, 1 for grids).
    pub(crate) configured_blocks: Vec<i64>,
    /// Effective block size per block id (after TPU alignment raising).
    pub(crate) effective_blocks: Vec<i64>,
    /// How loops are tiled (and whether eager mode's departures from torch are recorded).
    pub(crate) tiling: Tiling,
}

impl Plan {
    /// Compiles `case`: binds inputs, resolves names, fixes effective block sizes.
    pub fn compile(case: &Case) -> Result<Plan, EvalError> {
        Plan::compile_with_inputs(case, &case.input_tensors())
    }

    /// [`Plan::compile`] with the case's input tensors already made (`case.input_tensors()`),
    /// for a caller that also hands them to another engine: making them is a fifth of the
    /// reference's time on generated cases (perf, 2026-11-30: `Input::tensor` 4.7% of the
    /// campaign's samples under `Plan::compile`, the same again for the executor's copy).
    pub fn compile_with_inputs(
        case: &Case,
        inputs: &Result<Vec<Tensor>, InputError>,
    ) -> Result<Plan, EvalError> {
        Plan::compile_tiled(case, inputs, Tiling::Effective)
    }

    /// [`Plan::compile_with_inputs`] tiling loops as `tiling` says.
    pub fn compile_tiled(
        case: &Case,
        inputs: &Result<Vec<Tensor>, InputError>,
        tiling: Tiling,
    ) -> Result<Plan, EvalError> {
        let host = HostEnv::of(case);
        let table = BlockTable::of(&case.kernel);
        let sizes = case.block_sizes_with(&table, &host, |e| host.eval_int(e));
        let mut c = Compiler {
            slots: FastMap::default(),
            names: Vec::new(),
            table: &table,
            configured: &sizes.configured,
            eff: &sizes.effective,
            tiling,
        };
        let (params, storages) = c.bind_params(case, inputs)?;
        let body = c.block(&case.kernel.body)?;
        Ok(Plan {
            names: c.names,
            params,
            storages,
            body,
            kernel_span: case.kernel.span,
            written: case
                .kernel
                .written_params()
                .into_iter()
                .map(|i| (i, case.kernel.params[i].name.clone()))
                .collect(),
            configured_blocks: sizes.configured,
            effective_blocks: sizes.effective,
            tiling,
        })
    }

    /// The effective block size of every block id (spec §1.1a), the sizes the evaluation uses.
    pub fn effective_block_sizes(&self) -> &[i64] {
        &self.effective_blocks
    }

    /// The configured block size of every block id (config entry, `block_size=`, 1 for grids),
    /// to report next to the effective ones.
    pub fn configured_block_sizes(&self) -> &[i64] {
        &self.configured_blocks
    }
}

struct Compiler<'a> {
    slots: FastMap<String, usize>,
    names: Vec<String>,
    table: &'a BlockTable,
    configured: &'a [i64],
    eff: &'a [i64],
    tiling: Tiling,
}

impl Compiler<'_> {
    fn slot(&mut self, name: &str) -> usize {
        if let Some(&s) = self.slots.get(name) {
            return s;
        }
        let s = self.names.len();
        self.names.push(name.to_string());
        self.slots.insert(name.to_string(), s);
        s
    }

    fn bind_params(
        &mut self,
        case: &Case,
        inputs: &Result<Vec<Tensor>, InputError>,
    ) -> Res<(Vec<ParamInit>, Vec<InitStorage>)> {
        let kspan = case.kernel.span;
        if case.kernel.params.len() != case.call.args.len() {
            return err(
                K::InvalidInput,
                case.call.span,
                format!(
                    "the kernel takes {} arguments, the call passes {}",
                    case.kernel.params.len(),
                    case.call.args.len()
                ),
            );
        }
        let tensors = inputs.as_ref().map_err(|e| {
            let span = case
                .inputs
                .iter()
                .find(|i| i.name == e.input)
                .map_or(kspan, |i| i.span);
            EvalError::new(K::InvalidInput, span, e.to_string())
        })?;
        let mut params = Vec::new();
        let mut storages: Vec<InitStorage> = Vec::new();
        let mut storage_of_input: FastMap<&str, usize> = FastMap::default();
        for (param, arg) in case.kernel.params.iter().zip(&case.call.args) {
            let slot = self.slot(&param.name);
            match (param.kind, arg) {
                (ParamKind::Tensor, Arg::Input(name)) => {
                    let Some(pos) = case.inputs.iter().position(|i| &i.name == name) else {
                        return err(
                            K::InvalidInput,
                            case.call.span,
                            format!("no input named `{name}`"),
                        );
                    };
                    let t = &tensors[pos];
                    let storage = *storage_of_input.entry(name.as_str()).or_insert_with(|| {
                        storages.push(InitStorage {
                            name: param.name.clone(),
                            ty: Ty::of(t.dtype),
                            data: Arc::new(ndarray::Array1::from(t.values.clone())),
                            written: match case.inputs[pos].ctor {
                                Ctor::Empty { .. } => false,
                                Ctor::Randn { .. }
                                | Ctor::Rand { .. }
                                | Ctor::Ones { .. }
                                | Ctor::Zeros { .. }
                                | Ctor::Full { .. }
                                | Ctor::Arange { .. }
                                | Ctor::Range { .. }
                                | Ctor::Eye { .. }
                                | Ctor::Randint { .. }
                                | Ctor::Tensor { .. } => true,
                            },
                        });
                        storages.len() - 1
                    });
                    params.push(ParamInit::Tensor {
                        slot,
                        storage,
                        shape: t.shape.clone(),
                    });
                }
                (ParamKind::Int, Arg::Int(v)) => params.push(ParamInit::Int { slot, value: *v }),
                (ParamKind::Float, Arg::Float(v)) => {
                    params.push(ParamInit::Float { slot, value: *v })
                }
                // Python's bool is an int (`True == 1`), and the language reads a bool
                // parameter only as a condition, where its truth is the int's.
                (ParamKind::Bool, Arg::Bool(b)) => params.push(ParamInit::Int {
                    slot,
                    value: i64::from(*b),
                }),
                (ParamKind::Tensor, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_))
                | (ParamKind::Int, Arg::Input(_) | Arg::Float(_) | Arg::Bool(_))
                | (ParamKind::Float, Arg::Input(_) | Arg::Int(_) | Arg::Bool(_))
                | (ParamKind::Bool, Arg::Input(_) | Arg::Int(_) | Arg::Float(_)) => {
                    return err(
                        K::InvalidInput,
                        param.span,
                        format!(
                            "parameter `{}` gets an argument of the wrong kind",
                            param.name
                        ),
                    );
                }
            }
        }
        Ok((params, storages))
    }

    fn block(&mut self, body: &[Stmt]) -> Res<Vec<CStmt>> {
        body.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Res<CStmt> {
        let kind = match &s.kind {
            StmtKind::Assign { target, value } => {
                let v = self.expr(value)?;
                SK::Assign(self.slot(target), v)
            }
            StmtKind::AugAssign { target, op, value } => {
                let v = self.expr(value)?;
                SK::AugAssign(self.slot(target), *op, v)
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                ..
            } => SK::Store {
                tensor: CExpr {
                    kind: CK::Name(self.slot(tensor)),
                    span: s.span,
                },
                indices: self.indices(indices)?,
                value: self.expr(value)?,
            },
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => SK::Atomic {
                op: *op,
                tensor: CExpr {
                    kind: CK::Name(self.slot(tensor)),
                    span: s.span,
                },
                indices: self.indices(indices)?,
                expected: expected.as_ref().map(|e| self.expr(e)).transpose()?,
                value: self.expr(value)?,
            },
            StmtKind::For(lp) => {
                let ids = self.table.loop_ids(lp).to_vec();
                if ids.len() != lp.dims.len() {
                    return err(
                        K::InvalidBlockSize,
                        s.span,
                        "the loop has no registered block ids",
                    );
                }
                let mut dims = Vec::new();
                for (d, id) in lp.dims.iter().zip(ids) {
                    let block = match lp.kind {
                        LoopKind::Grid => 1,
                        // A missing or non-positive configured size is an invalid config even
                        // where alignment raising would hide it.
                        LoopKind::Tile => match self.configured.get(id) {
                            Some(&c) if c > 0 => self.eff.get(id).copied().unwrap_or(0),
                            _ => 0,
                        },
                    };
                    if block <= 0 {
                        return err(
                            K::InvalidBlockSize,
                            s.span,
                            format!(
                                "block id {id} has no positive block size (config or block_size=)"
                            ),
                        );
                    }
                    let block = match (self.tiling, lp.kind, &self.table.blocks[id].source) {
                        (Tiling::HelionEager, LoopKind::Tile, BlockSource::Config(_)) => {
                            LoopBlock::WholeExtent
                        }
                        (Tiling::HelionEager, LoopKind::Tile, BlockSource::Fixed(_)) => {
                            LoopBlock::Fixed(self.configured.get(id).copied().unwrap_or(block))
                        }
                        (Tiling::Effective, _, _)
                        | (Tiling::HelionEager, LoopKind::Grid, _)
                        | (Tiling::HelionEager, LoopKind::Tile, BlockSource::Grid) => {
                            LoopBlock::Fixed(block)
                        }
                    };
                    dims.push(CDim {
                        begin: d.begin.as_ref().map(|b| self.expr(b)).transpose()?,
                        end: self.expr(&d.end)?,
                        block,
                    });
                }
                let vars = lp.vars.iter().map(|v| self.slot(v)).collect();
                SK::For(CLoop {
                    kind: lp.kind,
                    vars,
                    dims,
                    body: self.block(&lp.body)?,
                })
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => SK::If(
                self.expr(cond)?,
                self.block(then_body)?,
                self.block(else_body)?,
            ),
            StmtKind::Return(values) => SK::Return(
                values
                    .iter()
                    .map(|v| {
                        let name = if let ExprKind::Name(n) = &v.kind {
                            n.clone()
                        } else {
                            lang::render::expr(v)
                        };
                        Ok((self.expr(v)?, name))
                    })
                    .collect::<Res<_>>()?,
            ),
        };
        Ok(CStmt { kind, span: s.span })
    }

    fn indices(&mut self, ixs: &[Index]) -> Res<Vec<CIndex>> {
        ixs.iter()
            .map(|ix| {
                Ok(match ix {
                    Index::Full => CIndex::Full,
                    Index::NewAxis => CIndex::NewAxis,
                    Index::Int(i) => CIndex::Int(*i),
                    Index::Slice { start, stop, step } => CIndex::Slice(
                        start.as_ref().map(|e| self.expr(e)).transpose()?,
                        stop.as_ref().map(|e| self.expr(e)).transpose()?,
                        step.as_ref().map(|e| self.expr(e)).transpose()?,
                    ),
                    Index::Expr(e) => CIndex::Expr(self.expr(e)?),
                })
            })
            .collect()
    }

    fn boxed(&mut self, e: &Expr) -> Res<Box<CExpr>> {
        Ok(Box::new(self.expr(e)?))
    }

    fn exprs(&mut self, es: &[Expr]) -> Res<Vec<CExpr>> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &Expr) -> Res<CExpr> {
        let kind = match &e.kind {
            ExprKind::Name(n) => CK::Name(self.slot(n)),
            ExprKind::Int(v) => CK::Int(*v),
            ExprKind::Float(v) => CK::Float(*v),
            ExprKind::Size { value, dim } => CK::Size(self.boxed(value)?, *dim),
            ExprKind::TileAttr { tile, attr } => CK::TileAttr(self.slot(tile), *attr),
            ExprKind::Binary { op, lhs, rhs } => {
                CK::Binary(*op, self.boxed(lhs)?, self.boxed(rhs)?)
            }
            ExprKind::Compare { op, lhs, rhs } => {
                CK::Compare(*op, self.boxed(lhs)?, self.boxed(rhs)?)
            }
            ExprKind::Load {
                tensor, indices, ..
            } => CK::Index(
                Box::new(CExpr {
                    kind: CK::Name(self.slot(tensor)),
                    span: e.span,
                }),
                self.indices(indices)?,
            ),
            ExprKind::Subscript { value, indices } => {
                CK::Index(self.boxed(value)?, self.indices(indices)?)
            }
            ExprKind::Arange { start, end, step } => CK::Arange(
                start.as_deref().map(|s| self.boxed(s)).transpose()?,
                self.boxed(end)?,
                step.as_deref().map(|s| self.boxed(s)).transpose()?,
            ),
            ExprKind::Zeros { shape, dtype } => CK::Full(self.exprs(shape)?, None, Ty::of(*dtype)),
            ExprKind::Full {
                shape,
                value,
                dtype,
            } => CK::Full(self.exprs(shape)?, Some(self.boxed(value)?), Ty::of(*dtype)),
            ExprKind::Cast { value, dtype } => CK::Cast(self.boxed(value)?, Ty::of(*dtype)),
            ExprKind::Sum { value, dim } => CK::Sum(self.boxed(value)?, *dim),
            ExprKind::View { value, op } => {
                let v = self.boxed(value)?;
                let op = match op {
                    ViewOp::Reshape(d) | ViewOp::View(d) => CView::Reshape(self.exprs(d)?),
                    ViewOp::Squeeze(d) => CView::Squeeze(*d),
                    ViewOp::Unsqueeze(d) => CView::Unsqueeze(*d),
                    ViewOp::ViewAs(o) => CView::ViewAs(self.boxed(o)?),
                };
                CK::View(v, op)
            }
            ExprKind::Permute { value, dims } => CK::Permute(self.boxed(value)?, dims.clone()),
            ExprKind::Op { op, args } => CK::Op(op.clone(), self.exprs(args)?),
            ExprKind::Alloc { kind, shape, dtype } => {
                let shape = match shape {
                    AllocShape::Dims(d) => CAllocShape::Dims(self.exprs(d)?),
                    AllocShape::Like(t) => CAllocShape::Like(self.boxed(t)?),
                };
                CK::Alloc(*kind, shape, *dtype)
            }
        };
        Ok(CExpr { kind, span: e.span })
    }
}
