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
mod stmt;
mod subscript;

use super::FrontendError;
use super::module::{Ctx, dotted};
use super::wellformed::NameKind;
use crate::ir::hash::FastMap;
use crate::ir::{DType, Param, ParamKind};
use rustpython_parser::ast::{self, Ranged};

pub(crate) struct KernelParser<'c, 's> {
    ctx: &'c Ctx<'s>,
    names: FastMap<String, NameKind>,
    /// Enclosing device loops.
    depth: usize,
    /// Enclosing loops and branches ([`MAX_BLOCK_DEPTH`](super::MAX_BLOCK_DEPTH)).
    blocks: usize,
    /// Nesting of the expression being converted ([`MAX_EXPR_DEPTH`](super::MAX_EXPR_DEPTH)):
    /// one per IR node, as [`super::wellformed`] counts it, so both readers refuse the same
    /// cases.
    expr_depth: usize,
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
    pub fn new(ctx: &'c Ctx<'s>, params: &[Param]) -> Self {
        let names = params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    match p.kind {
                        ParamKind::Tensor => NameKind::HostTensor,
                        ParamKind::Int => NameKind::HostInt,
                    },
                )
            })
            .collect();
        KernelParser {
            ctx,
            names,
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

    fn host_tensor_name(&self, e: &ast::Expr, construct: &str) -> Result<String, FrontendError> {
        match e {
            ast::Expr::Name(n) if self.names.get(n.id.as_str()) == Some(&NameKind::HostTensor) => Ok(n.id.to_string()),
            _ => Err(self.err(e, construct, format!("a {construct} writes a host tensor (a kernel parameter or a host allocation) by name"))),
        }
    }
}
