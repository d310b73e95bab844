//! What the frontend decides without running anything: over every statement, whether or not it
//! runs, names are bound before they are read (in program order), tile attributes are of tiles,
//! loads and stores name host tensors, device constructs sit inside device loops; and the IR
//! forms that do not survive render → parse unchanged (an `Index::Expr` holding an int literal,
//! a bare `:` written as a slice, a slice inside an index list, ...).

use super::Arm;
use super::module_rules::is_identifier;
use super::values::R;
use super::{Flaw, StmtPath};
use lang::ir::hash::FastMap;
use lang::ir::{Case, Expr, ExprKind, Index, LoopKind, ParamKind, Stmt, StmtKind};

/// What a name denotes to the frontend (which tells a load from a subscript by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NameKind {
    HostTensor,
    HostInt,
    Tile,
    Grid,
    Device,
}

/// The frontend's rules, over every statement whether or not it runs: names are bound before
/// they are read (in program order), tile attributes are of tiles, loads and stores name host
/// tensors, device constructs sit inside device loops, and every form survives render → parse.
pub(super) fn frontend_rules(case: &Case) -> Result<(), Flaw> {
    let mut names: FastMap<String, NameKind> = case
        .kernel
        .params
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ParamKind::Tensor => NameKind::HostTensor,
                // A host scalar like an int parameter (never generated; seeds may carry one).
                ParamKind::Int | ParamKind::Float | ParamKind::Bool => NameKind::HostInt,
            };
            (p.name.clone(), kind)
        })
        .collect();
    let mut path = Vec::new();
    static_body(&case.kernel.body, 0, Arm::Root, &mut path, &mut names)
}

fn static_body(
    body: &[Stmt],
    depth: usize,
    arm: Arm,
    path: &mut StmtPath,
    names: &mut FastMap<String, NameKind>,
) -> Result<(), Flaw> {
    for (i, stmt) in body.iter().enumerate() {
        path.push((arm, i));
        static_stmt(stmt, depth, path, names)?;
        path.pop();
    }
    Ok(())
}

fn static_stmt(
    stmt: &Stmt,
    depth: usize,
    path: &mut StmtPath,
    names: &mut FastMap<String, NameKind>,
) -> Result<(), Flaw> {
    let here = |m: String| Flaw::Stmt {
        path: path.clone(),
        message: m,
    };
    let device = |what: &str| {
        if depth == 0 {
            Err(format!("{what} outside any device loop"))
        } else {
            Ok(())
        }
    };
    let host_tensor = |names: &FastMap<String, NameKind>, t: &str| {
        if names.get(t) == Some(&NameKind::HostTensor) {
            Ok(())
        } else {
            Err(format!("`{t}` is not a host tensor"))
        }
    };
    match &stmt.kind {
        StmtKind::Assign { target, value } => {
            static_reads(value, depth, names).map_err(here)?;
            let kind = match (depth, &value.kind) {
                (0, ExprKind::Alloc { .. } | ExprKind::View { .. }) => NameKind::HostTensor,
                (
                    0,
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
                    | ExprKind::Op { .. },
                ) => NameKind::HostInt,
                (1.., _) => NameKind::Device,
            };
            names.insert(target.clone(), kind);
        }
        StmtKind::AugAssign { target, value, .. } => (|| {
            device("an augmented assignment")?;
            if !names.contains_key(target) {
                return Err(format!("name `{target}` is not defined"));
            }
            static_reads(value, depth, names)
        })()
        .map_err(here)?,
        StmtKind::Store {
            tensor,
            indices,
            value,
            explicit,
        } => (|| {
            device("a store")?;
            host_tensor(names, tensor)?;
            if *explicit {
                list_indices(indices)?;
            }
            static_indices(indices, depth, names)?;
            static_reads(value, depth, names)
        })()
        .map_err(here)?,
        StmtKind::Atomic {
            tensor,
            indices,
            expected,
            value,
            ..
        } => (|| {
            device("an atomic")?;
            host_tensor(names, tensor)?;
            atomic_indices(indices)?;
            static_indices(indices, depth, names)?;
            if let Some(x) = expected {
                static_reads(x, depth, names)?;
            }
            static_reads(value, depth, names)
        })()
        .map_err(here)?,
        StmtKind::For(lp) => {
            for d in &lp.dims {
                for e in [d.begin.as_ref(), Some(&d.end), d.block_size.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    static_reads(e, depth, names).map_err(here)?;
                }
            }
            let kind = match lp.kind {
                LoopKind::Tile => NameKind::Tile,
                LoopKind::Grid => NameKind::Grid,
            };
            for v in &lp.vars {
                names.insert(v.clone(), kind);
            }
            static_body(&lp.body, depth + 1, Arm::Loop, path, names)?;
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            (|| {
                device("an `if`")?;
                if !matches!(cond.kind, ExprKind::Compare { .. }) {
                    return Err("an `if` condition is one comparison".to_string());
                }
                static_reads(cond, depth, names)
            })()
            .map_err(here)?;
            static_body(then_body, depth, Arm::Then, path, names)?;
            static_body(else_body, depth, Arm::Else, path, names)?;
        }
        StmtKind::Return(values) => {
            if depth > 0 {
                return Err(here("`return` inside a device loop".into()));
            }
            for v in values {
                static_reads(v, depth, names).map_err(here)?;
            }
        }
    }
    Ok(())
}

fn static_indices(indices: &[Index], depth: usize, names: &FastMap<String, NameKind>) -> R<()> {
    syntax_indices(indices)?;
    let mut r = Ok(());
    lang::ir::walk::each_index_expr(indices, &mut |x| {
        if r.is_ok() {
            r = static_reads(x, depth, names);
        }
    });
    r
}

/// The frontend's view of one expression (and the forms that do not survive render → parse).
fn static_reads(e: &Expr, depth: usize, names: &FastMap<String, NameKind>) -> R<()> {
    syntax(e)?;
    let mut bad: Option<String> = None;
    lang::ir::walk::each_expr(e, &mut |x| {
        if bad.is_some() {
            return;
        }
        let kind_of = |n: &str| names.get(n).copied();
        bad = match &x.kind {
            ExprKind::Name(n) if kind_of(n).is_none() => Some(format!("name `{n}` is not defined")),
            ExprKind::TileAttr { tile, .. } if kind_of(tile) != Some(NameKind::Tile) => {
                Some(format!("`{tile}` is not a tile"))
            }
            ExprKind::Load { tensor, .. } if kind_of(tensor) != Some(NameKind::HostTensor) => {
                Some(format!("load from `{tensor}`, which is not a host tensor"))
            }
            ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
                if depth == 0 =>
            {
                Some("a device expression outside any device loop".into())
            }
            ExprKind::Subscript { value, .. } if matches!(&value.kind, ExprKind::Name(n) if kind_of(n) == Some(NameKind::HostTensor)) => {
                Some("a subscript of a host tensor is a load".into())
            }
            ExprKind::Alloc { .. } if depth > 0 => {
                Some("a host allocation inside a device loop".into())
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
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => None,
        };
    });
    bad.map_or(Ok(()), Err)
}

/// IR forms that do not survive render → parse unchanged, and literals Python cannot spell.
pub(super) fn syntax(e: &Expr) -> R<()> {
    let mut bad = None;
    lang::ir::walk::each_expr(e, &mut |x| {
        if bad.is_some() {
            return;
        }
        bad = match &x.kind {
            ExprKind::Float(v) if !v.is_finite() => Some("a non-finite float literal".to_string()),
            ExprKind::Int(v) if v.abs() > 1 << 40 => {
                Some("an int literal out of range".to_string())
            }
            ExprKind::Arange {
                start: None,
                step: Some(_),
                ..
            } => Some("hl.arange with a step spells its start".to_string()),
            ExprKind::Load {
                indices,
                explicit: true,
                ..
            } => syntax_indices(indices)
                .and_then(|_| list_indices(indices))
                .err(),
            ExprKind::Subscript { indices, .. } | ExprKind::Load { indices, .. } => {
                syntax_indices(indices).err()
            }
            ExprKind::Name(n) if !is_identifier(n) => Some(format!("`{n}` is not an identifier")),
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => None,
        };
    });
    bad.map_or(Ok(()), Err)
}

pub(super) fn syntax_indices(indices: &[Index]) -> R<()> {
    for i in indices {
        match i {
            Index::Expr(Expr {
                kind: ExprKind::Int(_),
                ..
            }) => {
                return Err("an int index is written Index::Int".into());
            }
            Index::Slice {
                start: None,
                stop: None,
                step: None,
            } => {
                return Err("a bare `:` is written Index::Full".into());
            }
            Index::Full | Index::NewAxis | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => {
            }
        }
    }
    Ok(())
}

/// An index list (`hl.load`, `hl.store`, atomics) holds no `:` or slice: Python has no slice
/// syntax inside a list literal, so the rendering would not parse.
pub(super) fn list_indices(indices: &[Index]) -> R<()> {
    if indices
        .iter()
        .any(|i| matches!(i, Index::Full | Index::Slice { .. }))
    {
        return Err("an index list cannot hold `:` or a slice".into());
    }
    Ok(())
}

/// An atomic's index list may hold `slice(None)` (it has no subscript form to write `:` in),
/// but no other slice.
pub(super) fn atomic_indices(indices: &[Index]) -> R<()> {
    if indices.iter().any(|i| matches!(i, Index::Slice { .. })) {
        return Err("an atomic's index list cannot hold a slice other than `slice(None)`".into());
    }
    Ok(())
}
