//! The kernel body: statements and expressions of the case-script subset, to IR.
//!
//! The parser tracks what each name denotes (a host tensor, a host int, a tile, a grid index, a
//! device value) because Python spells a host-tensor load and a device subscript the same way:
//! `x[outer, :]` on a host tensor is an `hl.load`, `x_block[1]` on a device value is an
//! `hl.subscript` (Helion's `visit_Subscript` makes the same distinction).
//!
//! The parser is split by concern, one `impl KernelParser` per module: this module holds its
//! state (the name kinds, the loop and nesting depths) and the checks every construct shares;
//! [`stmt`] converts statements, [`expr`] expressions, [`call`] calls (the `hl.*` and `torch.*`
//! constructors and the tensor methods), [`subscript`] index lists.

mod call;
mod expr;
mod ops;
mod sizes;
mod statics;
mod stmt;
mod subscript;

pub(crate) use statics::Known;

use super::FrontendError;
use super::module::{Ctx, dotted};
use super::wellformed::NameKind;
use crate::ir::hash::FastMap;
use crate::ir::{DType, Param, ParamKind};
use rustpython_parser::ast::{self, Ranged};

pub(crate) struct KernelParser<'c, 's> {
    ctx: &'c Ctx<'s>,
    names: FastMap<String, NameKind>,
    /// The static dtype and rank of tensor names ([`statics`]), for `t.dtype`, `t.size()`
    /// and `t.shape`.
    known: FastMap<String, Known>,
    /// The script's module globals the kernel can see (its inputs, the imported modules, the
    /// kernel itself): Helion refuses a device-loop assignment that would rebind one.
    globals: Vec<String>,
    /// The host `assert`s read so far, checked on the inputs once the case is built
    /// ([`HostAssert`]).
    pub asserts: Vec<HostAssert>,
    /// How many statements of the root graph precede the statement being read (at host level).
    root_len: usize,
    /// Whether the next expression node may be a comparison: only an `if` condition or an
    /// `assert` term is (the IR's comparison is a Python truth value; a comparison of tensors
    /// as a value is a boolean mask, which the IR does not have).
    compare_here: bool,
    /// The config's `block_sizes`, for `hl.register_block_size` (set by the caller).
    pub config_sizes: Vec<i64>,
    /// The `block_sizes` entries `hl.register_block_size` calls consumed: each reads as its
    /// int, so the entry leaves the config ([`KernelParser::call_expr`]).
    pub registered: Vec<usize>,
    /// Config-driven block ids registered so far (tile dims without `block_size=` and
    /// `hl.register_block_size` calls, in registration order).
    config_ids: usize,
    /// A single loop variable over a multi-dim `hl.tile` (`for tile in hl.tile([m, n])`): the
    /// tuple of tiles it is in Helion, spelled as one variable per dim (the names given here).
    tile_tuples: FastMap<String, Vec<String>>,
    /// Enclosing device loops.
    depth: usize,
    /// Enclosing loops and branches ([`MAX_BLOCK_DEPTH`](super::MAX_BLOCK_DEPTH)).
    blocks: usize,
    /// Nesting of the expression being converted ([`MAX_EXPR_DEPTH`](super::MAX_EXPR_DEPTH)):
    /// one per IR node, as [`super::wellformed`] counts it, so both readers refuse the same
    /// cases.
    expr_depth: usize,
}

/// A host `assert` of the kernel: Helion runs the host code as Python, so an assertion that
/// fails on the inputs raises before any kernel runs, and one that holds does nothing. Under
/// `static_shapes=True` every operand is known from the inputs, so the frontend decides it
/// once the case is built ([`super::module`]): one that holds is dropped (it does nothing),
/// one that fails or cannot be decided is refused at its position. It never reaches the IR.
pub(crate) struct HostAssert {
    /// Position of the `assert`.
    pub span: crate::ir::Span,
    /// How many statements of the root graph precede it.
    pub at: usize,
    /// The comparisons that must all hold.
    pub comparisons: Vec<crate::ir::Expr>,
    /// Host tensors that must have one shape: `x, y = torch.broadcast_tensors(x, y)` of
    /// tensors of one shape rebinds each to itself (torch returns the tensors' own views),
    /// so it reads as nothing; of other shapes it makes broadcast views of inputs, which a
    /// case script does not model, and is refused at the statement.
    pub same_shape: Vec<String>,
}

/// `torch.float32` / `torch.bfloat16` / `torch.int32`.
pub(crate) fn dtype_of(ctx: &Ctx<'_>, e: &ast::Expr) -> Result<DType, FrontendError> {
    match dotted(e).as_deref() {
        Some("torch.float32") => Ok(DType::Float32),
        Some("torch.bfloat16") => Ok(DType::Bfloat16),
        Some("torch.int32") => Ok(DType::Int32),
        other => Err(ctx.err(
            e,
            "dtype",
            format!(
                "dtype `{}` is not part of a case script (torch.float32, torch.bfloat16, torch.int32)",
                other.unwrap_or("<expression>")
            ),
        )),
    }
}

impl<'c, 's> KernelParser<'c, 's> {
    /// A parser for the body of a kernel with `params`, whose tensor parameters have the
    /// facts `known` (from the inputs the call passes), in a script whose module globals are
    /// `globals`.
    pub fn new(
        ctx: &'c Ctx<'s>,
        params: &[Param],
        known: FastMap<String, Known>,
        globals: Vec<String>,
    ) -> Self {
        let names = params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    match p.kind {
                        ParamKind::Tensor => NameKind::HostTensor,
                        ParamKind::Int => NameKind::HostInt,
                        ParamKind::Float => NameKind::HostFloat,
                        ParamKind::Bool => NameKind::HostBool,
                    },
                )
            })
            .collect();
        KernelParser {
            ctx,
            names,
            known,
            globals,
            asserts: Vec::new(),
            root_len: 0,
            compare_here: false,
            config_sizes: Vec::new(),
            registered: Vec::new(),
            config_ids: 0,
            tile_tuples: FastMap::default(),
            depth: 0,
            blocks: 0,
            expr_depth: 0,
        }
    }

    fn err(
        &self,
        node: &impl Ranged,
        construct: &str,
        message: impl Into<String>,
    ) -> FrontendError {
        self.ctx.err(node, construct, message)
    }

    fn require_device(&self, node: &impl Ranged, construct: &str) -> Result<(), FrontendError> {
        if self.depth == 0 {
            return Err(self.err(node, construct, format!("{construct} outside any hl.tile/hl.grid loop is host code, which a case script does not have")));
        }
        Ok(())
    }

    /// The rank of a device value when it is known statically: [`statics::known`]'s, or that of
    /// a subscript of a tensor of known rank whose indices each have a known rank (a tile
    /// variable or `t.index` one dim, an int, a grid index or another tile attribute none,
    /// `:` or a slice one, `None` one added).
    fn rank_of_value(&self, e: &crate::ir::Expr) -> Option<usize> {
        use crate::ir::{ExprKind, Index, TileAttr};
        if let Some(r) = self.known_of(e).rank {
            return Some(r);
        }
        let (base, indices) = match &e.kind {
            ExprKind::Load {
                tensor, indices, ..
            } => (self.known.get(tensor)?.rank?, indices),
            ExprKind::Subscript { value, indices } => (self.rank_of_value(value)?, indices),
            _ => return None,
        };
        let mut consumed = 0;
        let mut rank = 0;
        for ix in indices {
            let (c, r) = match ix {
                Index::Full | Index::Slice { .. } => (1, 1),
                Index::NewAxis => (0, 1),
                Index::Int(_) => (1, 0),
                Index::Expr(x) => match &x.kind {
                    ExprKind::Name(n) => match self.names.get(n.as_str())? {
                        NameKind::Tile => (1, 1),
                        NameKind::GridIndex | NameKind::HostInt => (1, 0),
                        NameKind::HostFloat
                        | NameKind::HostBool
                        | NameKind::HostTensor
                        | NameKind::Device => {
                            return None;
                        }
                    },
                    ExprKind::Int(_) => (1, 0),
                    ExprKind::TileAttr { attr, .. } => match attr {
                        TileAttr::Index => (1, 1),
                        TileAttr::Begin
                        | TileAttr::End
                        | TileAttr::Count
                        | TileAttr::BlockSize
                        | TileAttr::Id => (1, 0),
                    },
                    _ => return None,
                },
            };
            consumed += c;
            rank += r;
        }
        (consumed <= base).then_some(rank + base - consumed)
    }

    /// The shape of a subscript of a host tensor of known rank as `hl.zeros` dims, when each
    /// index is a tile variable (its dim), an int or a grid index (no dim) or `:` (the
    /// tensor's size); dims past the indices are the tensor's sizes.
    fn shape_of_load(&self, e: &crate::ir::Expr) -> Option<Vec<crate::ir::Expr>> {
        use crate::ir::{Expr, ExprKind, Index};
        let ExprKind::Load {
            tensor, indices, ..
        } = &e.kind
        else {
            return None;
        };
        let rank = self.known.get(tensor)?.rank?;
        let size = |dim: usize| {
            Expr::new(
                ExprKind::Size {
                    value: Box::new(Expr::new(ExprKind::Name(tensor.clone()), e.span)),
                    dim: dim as i64,
                },
                e.span,
            )
        };
        let mut shape = Vec::new();
        let mut dim = 0;
        for ix in indices {
            match ix {
                Index::Full => shape.push(size(dim)),
                Index::Int(_) => {}
                Index::Expr(x) => match &x.kind {
                    ExprKind::Name(n) => match self.names.get(n.as_str())? {
                        NameKind::Tile => shape.push(x.clone()),
                        NameKind::GridIndex | NameKind::HostInt => {}
                        NameKind::HostFloat
                        | NameKind::HostBool
                        | NameKind::HostTensor
                        | NameKind::Device => {
                            return None;
                        }
                    },
                    ExprKind::Int(_) => {}
                    _ => return None,
                },
                Index::NewAxis | Index::Slice { .. } => return None,
            }
            dim += 1;
        }
        if dim > rank {
            return None;
        }
        shape.extend((dim..rank).map(size));
        Some(shape)
    }

    /// The static facts about `e` ([`statics::known`]).
    fn known_of(&self, e: &crate::ir::Expr) -> Known {
        statics::known(e, &|n: &str| self.known.get(n).copied().unwrap_or_default())
    }

    /// A dtype argument: `torch.float32` (and the other literals of [`dtype_of`]), or the
    /// `.dtype` of a tensor name whose dtype is known statically (`out.dtype`), which is
    /// desugared to its literal.
    fn dtype_arg(&self, e: &ast::Expr) -> Result<DType, FrontendError> {
        // `torch.promote_types(a, b)` of two dtypes: torch's promotion, decided here since
        // both are static (the dtype Helion traces is the same one).
        if let ast::Expr::Call(c) = e
            && dotted(&c.func).as_deref() == Some("torch.promote_types")
        {
            let ([a, b], []) = (c.args.as_slice(), c.keywords.as_slice()) else {
                return Err(self.err(
                    e,
                    "torch.promote_types",
                    "torch.promote_types takes two dtypes",
                ));
            };
            return Ok(crate::ir::types::promote(
                self.dtype_arg(a)?,
                self.dtype_arg(b)?,
            ));
        }
        let ast::Expr::Attribute(a) = e else {
            return dtype_of(self.ctx, e);
        };
        if a.attr.as_str() != "dtype" {
            return dtype_of(self.ctx, e);
        }
        let ast::Expr::Name(n) = &*a.value else {
            return Err(self.err(
                e,
                ".dtype",
                "`.dtype` is read off a tensor name (`out.dtype`); bind the tensor to a name first",
            ));
        };
        match self.names.get(n.id.as_str()) {
            None => return Err(self.err(&*a.value, "name", super::wellformed::unbound(&n.id))),
            Some(NameKind::HostTensor | NameKind::Device) => {}
            Some(
                NameKind::HostInt
                | NameKind::HostFloat
                | NameKind::HostBool
                | NameKind::Tile
                | NameKind::GridIndex,
            ) => {
                return Err(self.err(
                    e,
                    ".dtype",
                    format!("`{}` is not a tensor: it has no `.dtype`", n.id),
                ));
            }
        }
        self.known
            .get(n.id.as_str())
            .and_then(|k| k.dtype)
            .ok_or_else(|| self.err(e, ".dtype", format!("the dtype of `{}` is not known statically (its value is not a parameter, an allocation, a load, hl.zeros/hl.full, a cast or a view of one): write the dtype, e.g. torch.float32", n.id)))
    }

    /// The rank of the tensor name `e` for `t.size()`/`t.shape` as a whole, when known.
    fn rank_of(&self, e: &ast::Expr, construct: &str) -> Result<(String, usize), FrontendError> {
        let ast::Expr::Name(n) = e else {
            return Err(self.err(
                e,
                construct,
                format!("{construct} of an expression: bind the tensor to a name first"),
            ));
        };
        match self.names.get(n.id.as_str()) {
            None => return Err(self.err(e, "name", super::wellformed::unbound(&n.id))),
            Some(NameKind::HostTensor | NameKind::Device) => {}
            Some(
                NameKind::HostInt
                | NameKind::HostFloat
                | NameKind::HostBool
                | NameKind::Tile
                | NameKind::GridIndex,
            ) => {
                return Err(self.err(e, construct, format!("`{}` is not a tensor", n.id)));
            }
        }
        let rank = self.known.get(n.id.as_str()).and_then(|k| k.rank).ok_or_else(|| {
            self.err(e, construct, format!("the rank of `{}` is not known statically (it is known for parameters, allocations, hl.zeros/hl.full and their casts and views): use `{}.size(i)` per dim", n.id, n.id))
        })?;
        Ok((n.id.to_string(), rank))
    }

    fn host_tensor_name(&self, e: &ast::Expr, construct: &str) -> Result<String, FrontendError> {
        match e {
            ast::Expr::Name(n) if self.names.get(n.id.as_str()) == Some(&NameKind::HostTensor) => Ok(n.id.to_string()),
            _ => Err(self.err(e, construct, format!("a {construct} writes a host tensor (a kernel parameter or a host allocation) by name"))),
        }
    }
}
