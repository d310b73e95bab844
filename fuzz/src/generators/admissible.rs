//! Admissibility, the generator's validator: is a case one the eager reference can evaluate,
//! and one the frontend reads back unchanged from its rendering? (Stronger than the IR rules of
//! `lang::frontend::wellformed`, which every case read from a script or JSON meets: those say a
//! case means something, this says it runs in range on every iteration and round-trips.)
//!
//! [`validate_admissible`] runs the kernel the way eager PyTorch would, but on shapes instead of values: it
//! iterates every grid index and tile with the *effective* block sizes (spec §1.1a), binds tile
//! attributes to concrete ints, and tracks the exact values of small int index tensors
//! (`t.index`, `hl.arange`, `t.index + k`). So it can tell, exactly, whether every index is in
//! range on every iteration, whether shapes line up in arithmetic and stores, whether a name is
//! defined where it is read, and whether an output allocated with `torch.empty` is fully written
//! before it is returned. It also refuses IR forms that do not survive `render` → `parse`
//! unchanged (an `Index::Expr` holding an int literal, a grid with `block_size=`, ...).
//!
//! It is deliberately stricter than PyTorch in a few places, each noted where it is decided:
//! `.view` needs a value the validator can prove contiguous, int32 values must be cast before `.sum`
//! (torch would promote to int64, which cases do not have), an int index beside a tensor index is
//! refused (NumPy and PyTorch place the result dims differently), and names first bound inside a
//! loop or branch are forgotten after it (Helion does not carry them out).
//!
//! The validator is what [`super::fixup`] repairs against, and what the generator's tests hold
//! every generated case to.

use lang::ir::blocks::BlockTable;
use lang::ir::hash::FastMap;
use lang::ir::scope::HostEnv;
use lang::ir::{
    AllocKind, AllocShape, Arg, AtomicOp, BinOp, CASE_VERSION, Case, Ctor, DType, Expr, ExprKind,
    Index, Loop, LoopKind, ParamKind, Stmt, StmtKind, TileAttr, ViewOp,
};
use std::fmt;

/// Which body of a statement a path step descends into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arm {
    /// The kernel body.
    Root,
    /// A loop's body.
    Loop,
    /// An `if`'s then-branch.
    Then,
    /// An `if`'s else-branch.
    Else,
}

/// Where a statement sits: `(arm, index)` steps from the kernel body down, the first step's arm
/// being [`Arm::Root`].
pub type StmtPath = Vec<(Arm, usize)>;

/// What is wrong with a case, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// Module level: inputs, parameters, the call, the config or the case version.
    Module(String),
    /// A statement of the kernel body.
    Stmt {
        /// Where the statement is.
        path: StmtPath,
        /// What is wrong.
        message: String,
    },
    /// An output allocated with `torch.empty` is returned with elements never written.
    UnwrittenEmpty {
        /// The host name of the allocation.
        name: String,
    },
    /// The kernel does not end with one `return` of host tensors.
    Return(String),
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flaw::Module(m) => write!(f, "case: {m}"),
            Flaw::Stmt { path, message } => write!(f, "statement {path:?}: {message}"),
            Flaw::UnwrittenEmpty { name } => {
                write!(
                    f,
                    "`{name}` is allocated with torch.empty and returned partly unwritten"
                )
            }
            Flaw::Return(m) => write!(f, "return: {m}"),
        }
    }
}

/// Most loop-body executions a case may take (cases evaluate in microseconds).
const MAX_STEPS: usize = 20_000;
/// Most elements an input or allocation may have.
const MAX_ELEMS: usize = 1 << 16;

/// Whether `case` is admissible (see the module docs): `Ok`, or the first flaw found.
pub fn validate_admissible(case: &Case) -> Result<(), Flaw> {
    module_rules(case).map_err(Flaw::Module)?;
    return_rule(case).map_err(Flaw::Return)?;
    frontend_rules(case)?;
    let mut run = ShapeRun::new(case).map_err(Flaw::Module)?;
    run.run()
}

// ---- what the frontend decides without running anything -------------------------------------

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
fn frontend_rules(case: &Case) -> Result<(), Flaw> {
    let mut names: FastMap<String, NameKind> = case
        .kernel
        .params
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ParamKind::Tensor => NameKind::HostTensor,
                ParamKind::Int => NameKind::HostInt,
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
                (0, _) => NameKind::HostInt,
                _ => NameKind::Device,
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
            _ => None,
        };
    });
    bad.map_or(Ok(()), Err)
}

// ---- module level --------------------------------------------------------------------------

const RESERVED: &[&str] = &[
    "torch", "helion", "hl", "None", "True", "False", "and", "as", "assert", "async", "await",
    "break", "class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from",
    "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    "return", "try", "while", "with", "yield", "match", "case", "print", "range", "int",
];

/// Whether `n` is a plain Python identifier the case may bind.
pub(crate) fn is_identifier(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !RESERVED.contains(&n)
}

fn module_rules(case: &Case) -> Result<(), String> {
    if case.version != CASE_VERSION {
        return Err(format!("version {} is not {CASE_VERSION}", case.version));
    }
    let k = &case.kernel;
    if !is_identifier(&k.name) {
        return Err(format!("kernel name `{}` is not an identifier", k.name));
    }
    let mut seen = Vec::new();
    for p in &k.params {
        if !is_identifier(&p.name) || seen.contains(&&p.name) || p.name == k.name {
            return Err(format!("parameter `{}` is not a fresh identifier", p.name));
        }
        seen.push(&p.name);
    }
    let mut inputs_seen = Vec::new();
    for i in &case.inputs {
        if !is_identifier(&i.name) || inputs_seen.contains(&&i.name) || i.name == k.name {
            return Err(format!("input `{}` is not a fresh identifier", i.name));
        }
        if case.call.result.as_deref() == Some(i.name.as_str()) {
            return Err(format!("the call's result rebinds input `{}`", i.name));
        }
        inputs_seen.push(&i.name);
        let (_, shape) = i.dtype_and_shape().map_err(|e| e.to_string())?;
        let ctor_shape = i.ctor.shape();
        if ctor_shape.contains(&0) || shape.contains(&0) {
            return Err(format!("input `{}` has an empty dim", i.name));
        }
        if ctor_shape.iter().product::<usize>() > MAX_ELEMS
            || shape.iter().product::<usize>() > MAX_ELEMS
        {
            return Err(format!("input `{}` is too large", i.name));
        }
        let ctor_dtype = i.ctor_dtype().map_err(|e| e.to_string())?;
        match &i.ctor {
            Ctor::Randn { .. } | Ctor::Rand { .. } => {
                if !ctor_dtype.is_float() {
                    return Err(format!(
                        "input `{}`: random constructors make floats only",
                        i.name
                    ));
                }
            }
            Ctor::Ones { .. } | Ctor::Zeros { .. } | Ctor::Arange { .. } => {}
            Ctor::Full { value, .. } => {
                if !value.is_finite() || (!ctor_dtype.is_float() && value.fract() != 0.0) {
                    return Err(format!(
                        "input `{}`: fill value {value} does not fit its dtype",
                        i.name
                    ));
                }
            }
            Ctor::Tensor {
                shape,
                values,
                float_literals,
            } => {
                if values.len() != shape.iter().product::<usize>() {
                    return Err(format!(
                        "input `{}`: literal has the wrong number of values",
                        i.name
                    ));
                }
                if values
                    .iter()
                    .any(|v| !v.is_finite() || (!float_literals && v.fract() != 0.0))
                {
                    return Err(format!(
                        "input `{}`: literal values do not round-trip",
                        i.name
                    ));
                }
                if values.iter().any(|v| v.abs() > 1e30) {
                    return Err(format!("input `{}`: literal values out of range", i.name));
                }
            }
            Ctor::Empty { .. } => {
                return Err(format!(
                    "input `{}` is torch.empty: reading it is reading poison",
                    i.name
                ));
            }
        }
    }
    if case.seed.is_some_and(|s| s > i64::MAX as u64) {
        return Err("torch.manual_seed out of range".into());
    }
    if case
        .call
        .result
        .as_deref()
        .is_some_and(|r| !is_identifier(r) || r == k.name)
    {
        return Err("the call's result name is not an identifier".into());
    }
    if case.call.args.len() != k.params.len() {
        return Err(format!(
            "the call passes {} arguments for {} parameters",
            case.call.args.len(),
            k.params.len()
        ));
    }
    for (p, a) in k.params.iter().zip(&case.call.args) {
        let ok = match (p.kind, a) {
            (ParamKind::Tensor, Arg::Input(n)) => case.inputs.iter().any(|i| &i.name == n),
            (ParamKind::Int, Arg::Int(v)) => (-(1 << 20)..=(1 << 20)).contains(v),
            (ParamKind::Tensor, Arg::Int(_)) | (ParamKind::Int, Arg::Input(_)) => false,
        };
        if !ok {
            return Err(format!(
                "argument for parameter `{}` does not fit it",
                p.name
            ));
        }
    }
    let c = &case.config;
    let table = BlockTable::of(k);
    if c.block_sizes.len() != table.config_count() {
        return Err(format!(
            "block_sizes has {} entries for {} config-driven block ids",
            c.block_sizes.len(),
            table.config_count()
        ));
    }
    if c.block_sizes.iter().any(|&b| !(1..=4096).contains(&b)) {
        return Err("a block size is not in 1..=4096".into());
    }
    if c.worklist_grouping.is_some_and(|g| !(0..=2).contains(&g)) {
        return Err("pallas_worklist_grouping is not 0, 1 or 2".into());
    }
    if c.load_buffer_count
        .as_ref()
        .is_some_and(|b| b.iter().any(|&x| !(1..=8).contains(&x)))
    {
        return Err("a pallas_load_buffer_count entry is not in 1..=8".into());
    }
    Ok(())
}

fn return_rule(case: &Case) -> Result<(), String> {
    let body = &case.kernel.body;
    let returns = body
        .iter()
        .filter(|s| matches!(s.kind, StmtKind::Return(_)))
        .count();
    match body.last().map(|s| &s.kind) {
        Some(StmtKind::Return(values)) if returns == 1 && !values.is_empty() => Ok(()),
        _ => Err("the kernel body must end with its one `return` of host tensors".into()),
    }
}

// ---- values --------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct HostT {
    shape: Vec<usize>,
    dtype: DType,
    storage: usize,
}

#[derive(Clone, Copy, Debug)]
struct TileV {
    begin: i64,
    end: i64,
    block: i64,
    count: i64,
}

#[derive(Clone, Debug)]
struct TV {
    shape: Vec<usize>,
    dtype: DType,
    /// Exact values of a rank-1 int tensor (index tensors).
    ints: Option<Vec<i64>>,
    contiguous: bool,
}

#[derive(Clone, Debug)]
enum V {
    Host(HostT),
    Int(i64),
    Float,
    Tile(TileV),
    T(TV),
}

impl V {
    fn what(&self) -> &'static str {
        match self {
            V::Host(_) => "a host tensor",
            V::Int(_) => "an int",
            V::Float => "a float",
            V::Tile(_) => "a tile",
            V::T(_) => "a device tensor",
        }
    }
}

type R<T> = Result<T, String>;

/// What a storage is: whether it is an input of `torch.empty`-like poison, an empty allocation
/// with its written elements, or ordinary.
#[derive(Clone, Debug)]
enum Storage {
    Plain,
    /// `torch.empty` allocation: which elements have been written (row-major over `shape`).
    Empty {
        shape: Vec<usize>,
        written: Vec<bool>,
        aliased: bool,
    },
}

struct ShapeRun<'c> {
    case: &'c Case,
    table: BlockTable,
    effective: Vec<i64>,
    env: FastMap<String, V>,
    host_names: Vec<String>,
    storages: Vec<Storage>,
    path: StmtPath,
    steps: usize,
}

/// Right-aligned broadcast of two shapes.
fn broadcast(a: &[usize], b: &[usize]) -> R<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(format!("shapes {a:?} and {b:?} do not broadcast")),
        };
    }
    Ok(out)
}

fn promote(a: DType, b: DType) -> DType {
    match (a, b) {
        (DType::Float32, _) | (_, DType::Float32) => DType::Float32,
        (DType::Bfloat16, _) | (_, DType::Bfloat16) => DType::Bfloat16,
        (DType::Int32, DType::Int32) => DType::Int32,
    }
}

fn norm_dim(d: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let n = if d < 0 { d + r } else { d };
    if (0..r).contains(&n) {
        Ok(n as usize)
    } else {
        Err(format!("dim {d} out of range for rank {rank}"))
    }
}

fn int_op(op: BinOp, a: i64, b: i64) -> R<i64> {
    let v = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::FloorDiv => {
            if b == 0 {
                return Err("floor division by zero".into());
            }
            Some(a.div_euclid(b) - i64::from(b < 0 && a.rem_euclid(b) != 0))
        }
        BinOp::Div => None,
    };
    v.filter(|v| v.abs() < 1 << 40)
        .ok_or_else(|| "int arithmetic out of range".to_string())
}

/// Whether a value is contiguous after basic and advanced indexing with `entries` (the rule the
/// generator follows too): a tensor index makes a copy; otherwise only narrowing the first dim,
/// without a step, keeps a contiguous value contiguous.
pub(crate) fn contiguous_after(
    entries: &[Index],
    base: bool,
    is_tensor_index: &dyn Fn(&Expr) -> bool,
) -> bool {
    let mut dim = 0;
    let mut ok = base;
    for e in entries {
        match e {
            Index::NewAxis => {}
            Index::Full => dim += 1,
            Index::Int(_) => {
                ok &= dim == 0;
                dim += 1;
            }
            Index::Slice { step, .. } => {
                ok &= dim == 0 && step.is_none();
                dim += 1;
            }
            Index::Expr(x) => {
                if is_tensor_index(x) {
                    return true;
                }
                ok &= dim == 0;
                dim += 1;
            }
        }
    }
    ok
}

impl<'c> ShapeRun<'c> {
    fn new(case: &'c Case) -> R<ShapeRun<'c>> {
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
                Arg::Input(n) => {
                    let input = case
                        .inputs
                        .iter()
                        .find(|i| &i.name == n)
                        .ok_or("missing input")?;
                    let (dtype, shape) = input.dtype_and_shape().map_err(|e| e.to_string())?;
                    let next = c.storages.len();
                    let storage = *storage_of.entry(n.as_str()).or_insert(next);
                    if storage == next {
                        c.storages.push(Storage::Plain);
                    }
                    V::Host(HostT {
                        shape,
                        dtype,
                        storage,
                    })
                }
            };
            c.env.insert(p.name.clone(), v);
            c.host_names.push(p.name.clone());
        }
        Ok(c)
    }

    fn flaw(&self, message: String) -> Flaw {
        Flaw::Stmt {
            path: self.path.clone(),
            message,
        }
    }

    fn run(&mut self) -> Result<(), Flaw> {
        let body = &self.case.kernel.body;
        for (i, stmt) in body.iter().enumerate() {
            self.path = vec![(Arm::Root, i)];
            self.host_stmt(stmt)?;
        }
        let Some(StmtKind::Return(values)) = body.last().map(|s| &s.kind) else {
            return Err(Flaw::Return("missing return".into()));
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

    // ---- host statements --------------------------------------------------------------------

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
                }))
            }
            _ => match self.eval(e)? {
                V::Int(v) => Ok(V::Int(v)),
                other => Err(format!(
                    "a host assignment binds an int, an allocation or a view, not {}",
                    other.what()
                )),
            },
        }
    }

    fn reshape_dims(&mut self, dims: &[Expr], numel: usize) -> R<Vec<usize>> {
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

    // ---- loops and device statements ----------------------------------------------------------

    fn run_loop(&mut self, lp: &Loop) -> Result<(), Flaw> {
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
                        (end - begin + block - 1) / block
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
    fn read_host(&mut self, tensor: &str, indices: &[Index]) -> R<()> {
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

    // ---- expressions ----------------------------------------------------------------------

    fn syntax(&self, e: &Expr) -> R<()> {
        syntax(e)
    }

    fn syntax_indices(&self, indices: &[Index]) -> R<()> {
        syntax_indices(indices)?;
        let mut r = Ok(());
        lang::ir::walk::each_index_expr(indices, &mut |x| {
            if r.is_ok() {
                r = syntax(x);
            }
        });
        r
    }

    fn eval(&mut self, e: &Expr) -> R<V> {
        match &e.kind {
            ExprKind::Name(n) => self
                .env
                .get(n)
                .cloned()
                .ok_or_else(|| format!("name `{n}` is not defined")),
            ExprKind::Int(v) => Ok(V::Int(*v)),
            ExprKind::Float(_) => Ok(V::Float),
            ExprKind::Size { value, dim } => {
                let shape = match self.eval(value)? {
                    V::Host(h) => h.shape,
                    V::T(t) => t.shape,
                    other => return Err(format!(".size of {}", other.what())),
                };
                Ok(V::Int(shape[norm_dim(*dim, shape.len())?] as i64))
            }
            ExprKind::TileAttr { tile, attr } => {
                let Some(V::Tile(t)) = self.env.get(tile).cloned() else {
                    return Err(format!("`{tile}` is not a tile"));
                };
                Ok(match attr {
                    TileAttr::Begin => V::Int(t.begin),
                    TileAttr::End => V::Int(t.end),
                    TileAttr::Count => V::Int(t.count),
                    TileAttr::BlockSize => V::Int(t.block),
                    TileAttr::Id => V::Int(t.begin.div_euclid(t.block)),
                    TileAttr::Index => V::T(TV {
                        shape: vec![(t.end - t.begin) as usize],
                        dtype: DType::Int32,
                        ints: Some((t.begin..t.end).collect()),
                        contiguous: true,
                    }),
                })
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.eval(lhs)?, self.eval(rhs)?);
                self.binary(*op, a, b)
            }
            ExprKind::Compare { .. } => Err("a comparison outside an `if` condition".into()),
            ExprKind::Load {
                tensor, indices, ..
            } => {
                let Some(V::Host(h)) = self.env.get(tensor).cloned() else {
                    return Err(format!("load from `{tensor}`, which is not a host tensor"));
                };
                if self.path.len() < 2 {
                    return Err("a load outside any device loop".into());
                }
                let (shape, _, _) = self.index(&h.shape, indices, true)?;
                self.read_host(tensor, indices)?;
                // A load makes a new value: contiguous whatever its indices.
                Ok(V::T(TV {
                    shape,
                    dtype: h.dtype,
                    ints: None,
                    contiguous: true,
                }))
            }
            ExprKind::Subscript { value, indices } => {
                if let ExprKind::Name(n) = &value.kind
                    && self.host_names.contains(n)
                    && matches!(self.env.get(n), Some(V::Host(_)))
                {
                    return Err(format!("a subscript of host tensor `{n}` is a load"));
                }
                let V::T(t) = self.eval(value)? else {
                    return Err("a subscript of something that is not a device tensor".into());
                };
                let (shape, sel, contiguous) = self.index(&t.shape, indices, false)?;
                let ints = match (&t.ints, sel.as_slice()) {
                    (Some(vals), [one]) if shape.len() == 1 => {
                        Some(one.iter().map(|&i| vals[i]).collect())
                    }
                    _ => None,
                };
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints,
                    contiguous,
                }))
            }
            ExprKind::Arange { start, end, step } => {
                let mut int_of = |x: &Expr| match self.eval(x)? {
                    V::Int(v) => Ok(v),
                    other => Err(format!("hl.arange bound is {}", other.what())),
                };
                let a = match start {
                    Some(s) => int_of(s)?,
                    None => 0,
                };
                let b = int_of(end)?;
                let s = match step {
                    Some(s) => int_of(s)?,
                    None => 1,
                };
                if s <= 0 || b < a || b - a > 4096 {
                    return Err(format!(
                        "hl.arange({a}, {b}, {s}) is not a small positive range"
                    ));
                }
                let vals: Vec<i64> = (a..b.max(a)).step_by(s as usize).collect();
                Ok(V::T(TV {
                    shape: vec![vals.len()],
                    dtype: DType::Int32,
                    ints: Some(vals),
                    contiguous: true,
                }))
            }
            ExprKind::Zeros { shape, dtype } | ExprKind::Full { shape, dtype, .. } => {
                if let ExprKind::Full { value, .. } = &e.kind {
                    match self.eval(value)? {
                        V::Int(_) | V::Float => {}
                        other => return Err(format!("hl.full's value is {}", other.what())),
                    }
                }
                let dims = shape
                    .iter()
                    .map(|d| match self.eval(d)? {
                        V::Int(v) if (0..=4096).contains(&v) => Ok(v as usize),
                        other => Err(format!("a dim of hl.zeros/hl.full is {}", other.what())),
                    })
                    .collect::<R<Vec<_>>>()?;
                if dims.iter().product::<usize>() > MAX_ELEMS {
                    return Err("device allocation too large".into());
                }
                Ok(V::T(TV {
                    shape: dims,
                    dtype: *dtype,
                    ints: None,
                    contiguous: true,
                }))
            }
            ExprKind::Cast { value, dtype } => match self.eval(value)? {
                V::T(t) => {
                    let ints = if *dtype == DType::Int32 && t.dtype == DType::Int32 {
                        t.ints
                    } else {
                        None
                    };
                    Ok(V::T(TV {
                        dtype: *dtype,
                        ints,
                        ..t
                    }))
                }
                other => Err(format!("a cast of {}", other.what())),
            },
            ExprKind::Sum { value, dim } => match self.eval(value)? {
                V::T(t) => {
                    if t.dtype == DType::Int32 {
                        return Err(
                            "`.sum` of int32 (torch makes int64, which cases lack): cast first"
                                .into(),
                        );
                    }
                    let d = norm_dim(*dim, t.shape.len())?;
                    let mut shape = t.shape;
                    shape.remove(d);
                    Ok(V::T(TV {
                        shape,
                        dtype: t.dtype,
                        ints: None,
                        contiguous: true,
                    }))
                }
                other => Err(format!("`.sum` of {}", other.what())),
            },
            ExprKind::View { value, op } => {
                let V::T(t) = self.eval(value)? else {
                    return Err("a view on device is a view of a device tensor".into());
                };
                let numel: usize = t.shape.iter().product();
                let (shape, contiguous) = match op {
                    ViewOp::Reshape(d) => (self.reshape_dims(d, numel)?, t.contiguous),
                    ViewOp::View(d) => {
                        if !t.contiguous {
                            return Err("`.view` of a value that may not be contiguous".into());
                        }
                        (self.reshape_dims(d, numel)?, true)
                    }
                    ViewOp::Squeeze(d) => {
                        let mut s = t.shape.clone();
                        let d = norm_dim(*d, s.len())?;
                        if s[d] == 1 {
                            s.remove(d);
                        }
                        (s, t.contiguous)
                    }
                    ViewOp::Unsqueeze(d) => {
                        let mut s = t.shape.clone();
                        let d = norm_dim(*d, s.len() + 1)?;
                        s.insert(d, 1);
                        (s, t.contiguous)
                    }
                    ViewOp::ViewAs(o) => {
                        let shape = match self.eval(o)? {
                            V::T(o) => o.shape,
                            V::Host(h) => h.shape,
                            other => return Err(format!("view_as of {}", other.what())),
                        };
                        if !t.contiguous || shape.iter().product::<usize>() != numel {
                            return Err("`.view_as` of an incompatible value".into());
                        }
                        (shape, true)
                    }
                };
                let ints = if shape.len() == 1 { t.ints } else { None };
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints,
                    contiguous,
                }))
            }
            ExprKind::Permute { value, dims } => {
                let V::T(t) = self.eval(value)? else {
                    return Err("`.permute` of something that is not a device tensor".into());
                };
                let r = t.shape.len();
                let perm = dims
                    .iter()
                    .map(|&d| norm_dim(d, r))
                    .collect::<R<Vec<_>>>()?;
                let mut seen = vec![false; r];
                if perm.len() != r || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
                    return Err(format!("{dims:?} is not a permutation of {r} dims"));
                }
                let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
                let shape = perm.iter().map(|&p| t.shape[p]).collect();
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints: None,
                    contiguous: t.contiguous && identity,
                }))
            }
            ExprKind::Alloc { .. } => Err("host allocations belong before the device loops".into()),
        }
    }

    fn binary(&mut self, op: BinOp, a: V, b: V) -> R<V> {
        let scalar_dtype = |v: &V| match v {
            V::Int(_) => Some(false),
            V::Float => Some(true),
            _ => None,
        };
        match (a, b) {
            (V::Int(x), V::Int(y)) => match op {
                BinOp::Div => {
                    if y == 0 {
                        Err("division by zero".into())
                    } else {
                        Ok(V::Float)
                    }
                }
                _ => int_op(op, x, y).map(V::Int),
            },
            (V::Int(_) | V::Float, V::Int(_) | V::Float) => Ok(V::Float),
            (V::T(t), s) if scalar_dtype(&s).is_some() => self.tensor_scalar(op, t, s, true),
            (s, V::T(t)) if scalar_dtype(&s).is_some() => self.tensor_scalar(op, t, s, false),
            (V::T(x), V::T(y)) => {
                let shape = broadcast(&x.shape, &y.shape)?;
                let mut dtype = promote(x.dtype, y.dtype);
                if op == BinOp::Div && dtype == DType::Int32 {
                    dtype = DType::Float32;
                }
                Ok(V::T(TV {
                    shape,
                    dtype,
                    ints: None,
                    contiguous: true,
                }))
            }
            (a, b) => Err(format!(
                "`{}` of {} and {}",
                op.symbol(),
                a.what(),
                b.what()
            )),
        }
    }

    /// `t <op> s` (`tensor_left`) or `s <op> t`, keeping exact values of index tensors.
    fn tensor_scalar(&mut self, op: BinOp, t: TV, s: V, tensor_left: bool) -> R<V> {
        let is_float = matches!(s, V::Float);
        if op == BinOp::FloorDiv && tensor_left && matches!(s, V::Int(0)) {
            return Err("floor division by zero".into());
        }
        let dtype = match (t.dtype, is_float, op) {
            (DType::Int32, true, _) | (DType::Int32, _, BinOp::Div) => DType::Float32,
            (d, _, _) => d,
        };
        let ints = match (&t.ints, &s, dtype) {
            (Some(vals), V::Int(k), DType::Int32) => vals
                .iter()
                .map(|&v| {
                    if tensor_left {
                        int_op(op, v, *k)
                    } else {
                        int_op(op, *k, v)
                    }
                })
                .collect::<R<Vec<_>>>()
                .ok(),
            _ => None,
        };
        Ok(V::T(TV {
            shape: t.shape,
            dtype,
            ints,
            contiguous: true,
        }))
    }

    /// Shapes through indexing: the result shape, the selected indices per base dim, and whether
    /// the result is contiguous. Tiles index host tensors only (`x[tile, :]`).
    fn index(
        &mut self,
        base: &[usize],
        entries: &[Index],
        tiles: bool,
    ) -> R<(Vec<usize>, Vec<Vec<usize>>, bool)> {
        let mut out = Vec::new();
        let mut sel: Vec<Vec<usize>> = Vec::new();
        let mut dim = 0;
        let mut advanced = 0;
        let mut ints = 0;
        let mut tensor_exprs: Vec<*const Expr> = Vec::new();
        for entry in entries {
            if !matches!(entry, Index::NewAxis) && dim >= base.len() {
                return Err(format!("too many indices for a rank-{} value", base.len()));
            }
            let d = base.get(dim).copied().unwrap_or(0);
            let in_range = |k: i64| -> R<usize> {
                if k < -(d as i64) || k >= d as i64 {
                    Err(format!("index {k} out of range for a dim of {d}"))
                } else {
                    Ok(if k < 0 {
                        (k + d as i64) as usize
                    } else {
                        k as usize
                    })
                }
            };
            match entry {
                Index::NewAxis => out.push(1),
                Index::Full => {
                    out.push(d);
                    sel.push((0..d).collect());
                    dim += 1;
                }
                Index::Int(k) => {
                    sel.push(vec![in_range(*k)?]);
                    ints += 1;
                    dim += 1;
                }
                Index::Slice { start, stop, step } => {
                    let mut bound = |x: &Option<Expr>| -> R<Option<i64>> {
                        match x {
                            None => Ok(None),
                            Some(x) => match self.eval(x)? {
                                V::Int(v) => Ok(Some(v)),
                                other => Err(format!("a slice bound is {}", other.what())),
                            },
                        }
                    };
                    let (a, b, s) = (bound(start)?, bound(stop)?, bound(step)?.unwrap_or(1));
                    if s <= 0 {
                        return Err("slice step must be positive".into());
                    }
                    let di = d as i64;
                    let norm = |v: i64| if v < 0 { (v + di).max(0) } else { v.min(di) };
                    let (lo, hi) = (a.map_or(0, norm), b.map_or(di, norm));
                    let picked: Vec<usize> = (lo..hi.max(lo))
                        .step_by(s as usize)
                        .map(|v| v as usize)
                        .collect();
                    out.push(picked.len());
                    sel.push(picked);
                    dim += 1;
                }
                Index::Expr(x) => match self.eval(x)? {
                    V::Int(k) => {
                        sel.push(vec![in_range(k)?]);
                        ints += 1;
                        dim += 1;
                    }
                    V::Tile(t) if tiles => {
                        if t.end > d as i64 {
                            return Err(format!(
                                "tile {}..{} reaches past a dim of {d}",
                                t.begin, t.end
                            ));
                        }
                        let picked: Vec<usize> = (t.begin as usize..t.end as usize).collect();
                        out.push(picked.len());
                        sel.push(picked);
                        dim += 1;
                    }
                    V::T(t) if t.shape.len() == 1 && !t.dtype.is_float() => {
                        let Some(vals) = t.ints else {
                            return Err("a tensor index whose values are not known".into());
                        };
                        let picked = vals.iter().map(|&k| in_range(k)).collect::<R<Vec<_>>>()?;
                        out.push(picked.len());
                        sel.push(picked);
                        advanced += 1;
                        tensor_exprs.push(x as *const Expr);
                        dim += 1;
                    }
                    other => return Err(format!("an index that is {}", other.what())),
                },
            }
        }
        for &d in &base[dim.min(base.len())..] {
            out.push(d);
            sel.push((0..d).collect());
        }
        if advanced > 1 {
            return Err("more than one tensor index".into());
        }
        if advanced == 1 && ints > 0 {
            return Err("an int index beside a tensor index".into());
        }
        let contiguous = contiguous_after(entries, true, &|x| {
            tensor_exprs.contains(&(x as *const Expr))
        });
        Ok((out, sel, contiguous))
    }
}

/// IR forms that do not survive render → parse unchanged, and literals Python cannot spell.
fn syntax(e: &Expr) -> R<()> {
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
            _ => None,
        };
    });
    bad.map_or(Ok(()), Err)
}

fn syntax_indices(indices: &[Index]) -> R<()> {
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
fn list_indices(indices: &[Index]) -> R<()> {
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
fn atomic_indices(indices: &[Index]) -> R<()> {
    if indices.iter().any(|i| matches!(i, Index::Slice { .. })) {
        return Err("an atomic's index list cannot hold a slice other than `slice(None)`".into());
    }
    Ok(())
}

/// Marks (`set`) or tests (`!set`: all written?) the elements `sel` picks in a row-major bitmap.
fn mark(shape: &[usize], sel: &[Vec<usize>], bits: &mut [bool], set: bool) -> bool {
    if sel.len() != shape.len() || sel.iter().any(|s| s.is_empty()) {
        return true;
    }
    let mut idx = vec![0usize; sel.len()];
    loop {
        let mut flat = 0;
        for (k, &i) in idx.iter().enumerate() {
            flat = flat * shape[k] + sel[k][i];
        }
        if set {
            bits[flat] = true;
        } else if !bits[flat] {
            return false;
        }
        let mut k = sel.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < sel[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
