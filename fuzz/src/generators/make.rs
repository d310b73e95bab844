//! Short constructors for IR nodes without source positions (spans are 0:0 until a case is
//! rendered and parsed back), so the generator and `fixup` read like the scripts they build.

use lang::ir::{
    BinOp, CmpOp, DType, Expr, ExprKind, Index, Loop, LoopDim, LoopKind, Span, Stmt, StmtKind,
    TileAttr, ViewOp,
};

pub(crate) fn ex(kind: ExprKind) -> Expr {
    Expr::new(kind, Span::default())
}

pub(crate) fn st(kind: StmtKind) -> Stmt {
    Stmt::new(kind, Span::default())
}

pub(crate) fn name(n: &str) -> Expr {
    ex(ExprKind::Name(n.to_string()))
}

pub(crate) fn int(v: i64) -> Expr {
    ex(ExprKind::Int(v))
}

pub(crate) fn float(v: f64) -> Expr {
    ex(ExprKind::Float(v))
}

pub(crate) fn attr(tile: &str, a: TileAttr) -> Expr {
    ex(ExprKind::TileAttr {
        tile: tile.to_string(),
        attr: a,
    })
}

pub(crate) fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    ex(ExprKind::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    })
}

pub(crate) fn add(lhs: Expr, rhs: Expr) -> Expr {
    bin(BinOp::Add, lhs, rhs)
}

pub(crate) fn sub(lhs: Expr, rhs: Expr) -> Expr {
    bin(BinOp::Sub, lhs, rhs)
}

pub(crate) fn cmp(op: CmpOp, lhs: Expr, rhs: Expr) -> Expr {
    ex(ExprKind::Compare {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    })
}

pub(crate) fn size(tensor: &str, dim: i64) -> Expr {
    ex(ExprKind::Size {
        value: Box::new(name(tensor)),
        dim,
    })
}

pub(crate) fn load(tensor: &str, indices: Vec<Index>, explicit: bool) -> Expr {
    ex(ExprKind::Load {
        tensor: tensor.to_string(),
        indices,
        explicit,
    })
}

pub(crate) fn subscript(value: Expr, indices: Vec<Index>) -> Expr {
    ex(ExprKind::Subscript {
        value: Box::new(value),
        indices,
    })
}

pub(crate) fn arange(start: Option<Expr>, end: Expr, step: Option<Expr>) -> Expr {
    ex(ExprKind::Arange {
        start: start.map(Box::new),
        end: Box::new(end),
        step: step.map(Box::new),
    })
}

pub(crate) fn cast(value: Expr, dtype: DType) -> Expr {
    ex(ExprKind::Cast {
        value: Box::new(value),
        dtype,
    })
}

pub(crate) fn sum(value: Expr, dim: i64) -> Expr {
    ex(ExprKind::Sum {
        value: Box::new(value),
        dim,
    })
}

pub(crate) fn view(value: Expr, op: ViewOp) -> Expr {
    ex(ExprKind::View {
        value: Box::new(value),
        op,
    })
}

pub(crate) fn permute(value: Expr, dims: Vec<i64>) -> Expr {
    ex(ExprKind::Permute {
        value: Box::new(value),
        dims,
    })
}

pub(crate) fn op(op: lang::ir::TensorOp, args: Vec<Expr>) -> Expr {
    ex(ExprKind::Op { op, args })
}

pub(crate) fn ints(dims: &[usize]) -> Vec<Expr> {
    dims.iter().map(|&d| int(d as i64)).collect()
}

pub(crate) fn assign(target: &str, value: Expr) -> Stmt {
    st(StmtKind::Assign {
        target: target.to_string(),
        value,
    })
}

pub(crate) fn tile_loop(
    var: &str,
    begin: Option<Expr>,
    end: Expr,
    block: Option<Expr>,
    body: Vec<Stmt>,
) -> Stmt {
    st(StmtKind::For(Loop {
        kind: LoopKind::Tile,
        vars: vec![var.to_string()],
        dims: vec![LoopDim {
            begin,
            end,
            block_size: block,
        }],
        list_form: false,
        body,
    }))
}

pub(crate) fn grid_loop(var: &str, end: Expr, body: Vec<Stmt>) -> Stmt {
    st(StmtKind::For(Loop {
        kind: LoopKind::Grid,
        vars: vec![var.to_string()],
        dims: vec![LoopDim {
            begin: None,
            end,
            block_size: None,
        }],
        list_form: false,
        body,
    }))
}

pub(crate) fn if_(cond: Expr, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
    st(StmtKind::If {
        cond,
        then_body,
        else_body,
    })
}

/// `Index::Expr` of an expression.
pub(crate) fn ix(e: Expr) -> Index {
    Index::Expr(e)
}
