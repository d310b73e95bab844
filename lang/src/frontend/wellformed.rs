//! Well-formedness of a case on the IR: the rules a [`Case`] must satisfy whatever it was read
//! from. Both readers run [`check`] on what they produce — the case-script frontend after its
//! AST-to-IR conversion, the case-JSON reader after deserialization — so a JSON file cannot
//! carry a case that no script could (a call without its arguments, `block_sizes: [0]`, an
//! unbound name, an over-deep expression) past the frontend into the compiler and reference.
//!
//! The rules that need only the IR live here once: the format version, identifiers, the scope
//! of names (what each name denotes: a host tensor, a host int, a tile, a grid index, a device
//! value, exactly as [`super::kernel`] tracks them), which constructs are device-only or
//! host-only, the canonical IR forms the frontend produces (an int index is [`Index::Int`],
//! a bare `:` is [`Index::Full`]), the depth limits ([`super::MAX_EXPR_DEPTH`],
//! [`super::MAX_BLOCK_DEPTH`]), the call against the parameters, the inputs, and the config's
//! block sizes. The script frontend checks the same scope rules again while it converts
//! (it needs the name kinds to tell a load from a subscript, and reports at AST nodes); running
//! this check after it means a script it accepts can never be refused here, and the `frontend`
//! fuzz target (JSON in, render, parse back) finds a rule that this check lacks.
//!
//! The check recurses over the IR but stops at the depth limits, so it never recurses deeper
//! than they allow, whatever its input.

use super::{MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH};
use crate::ir::blocks::BlockTable;
use crate::ir::hash::FastMap;
use crate::ir::{
    AllocKind, AllocShape, Arg, AtomicOp, BinOp, CASE_VERSION, Case, Ctor, Expr, ExprKind, Index,
    Input, InputOp, Loop, LoopKind, ParamKind, Span, Stmt, StmtKind, ViewOp,
};
use rustpython_parser::{Mode, Tok, lexer};

/// What a name denotes in the kernel body (Helion's `visit_Subscript` distinction between a
/// host-tensor load and a device subscript rests on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameKind {
    HostTensor,
    HostInt,
    Tile,
    GridIndex,
    Device,
}

/// The kind of a name assigned `value` inside `device_loops` enclosing device loops: device
/// values inside loops, host tensors for host allocations and views, host ints otherwise.
pub(crate) fn assigned_kind(device_loops: usize, value: &ExprKind) -> NameKind {
    if device_loops > 0 {
        return NameKind::Device;
    }
    match value {
        ExprKind::Alloc { .. } | ExprKind::View { .. } => NameKind::HostTensor,
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
        | ExprKind::Permute { .. } => NameKind::HostInt,
    }
}

/// The construct and message of an expression nested past [`MAX_EXPR_DEPTH`].
pub(crate) fn expr_too_deep() -> (&'static str, String) {
    (
        "expression nesting",
        format!(
            "expression nesting deeper than {MAX_EXPR_DEPTH} levels (split the expression into several assignments)"
        ),
    )
}

/// The construct and message of blocks nested past [`MAX_BLOCK_DEPTH`].
pub(crate) fn blocks_too_deep() -> (&'static str, String) {
    (
        "statement nesting",
        format!(
            "statement nesting deeper than {MAX_BLOCK_DEPTH} levels (hl.tile/hl.grid loops and if/elif/else blocks)"
        ),
    )
}

/// The message of a name used before it is bound.
pub(crate) fn unbound(name: &str) -> String {
    format!("name `{name}` is not defined")
}

/// One step of the JSON path to a value: an object key (the serde name) or an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(&'static str),
    Index(usize),
}

/// A broken rule: where (the JSON path of the value, and the span of the nearest node that has
/// one; `None` for the config, which has none), the construct, and why.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Violation {
    pub path: Vec<Seg>,
    pub span: Option<Span>,
    pub construct: String,
    pub message: String,
}

type R<T = ()> = Result<T, Violation>;

/// Checks every rule on `case`; the first broken one.
pub(crate) fn check(case: &Case) -> R {
    let mut c = Checker {
        path: Vec::new(),
        names: FastMap::default(),
        device: 0,
        blocks: 0,
    };
    c.case(case)
}

/// Python's hard keywords: not names.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `s` is a Python identifier and not a keyword: what the script frontend can bind.
/// ASCII names are checked here; any other is lexed by the parser's own lexer, so a Unicode
/// name a script may use (`str.isidentifier`, NFKC-normalized) is exactly what passes.
fn is_identifier(s: &str) -> bool {
    if s.is_ascii() {
        let mut bytes = s.bytes();
        return bytes
            .next()
            .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
            && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
            && !KEYWORDS.contains(&s);
    }
    let mut tokens = lexer::lex(s, Mode::Expression);
    let named = matches!(tokens.next(), Some(Ok((Tok::Name { name }, range)))
        if name == s && usize::from(range.start()) == 0);
    named && tokens.all(|t| matches!(t, Ok((Tok::Newline | Tok::EndOfFile, _))))
}

struct Checker {
    path: Vec<Seg>,
    names: FastMap<String, NameKind>,
    /// Enclosing device loops.
    device: usize,
    /// Enclosing loops and branches.
    blocks: usize,
}

fn key(k: &'static str) -> Seg {
    Seg::Key(k)
}

impl Checker {
    fn fail(&self, span: Option<Span>, construct: &str, message: impl Into<String>) -> Violation {
        Violation {
            path: self.path.clone(),
            span,
            construct: construct.to_string(),
            message: message.into(),
        }
    }

    /// A violation at `segs` below the current path.
    fn fail_at(
        &self,
        segs: &[Seg],
        span: Option<Span>,
        construct: &str,
        message: impl Into<String>,
    ) -> Violation {
        let mut v = self.fail(span, construct, message);
        v.path.extend_from_slice(segs);
        v
    }

    /// Runs `f` one step down the JSON path.
    fn at<T>(&mut self, seg: Seg, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.path.push(seg);
        let r = f(self);
        self.path.pop();
        r
    }

    /// Runs `f` down a path of several steps.
    fn at_path<T>(&mut self, segs: &[Seg], f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let n = self.path.len();
        self.path.extend_from_slice(segs);
        let r = f(self);
        self.path.truncate(n);
        r
    }

    fn ident(&self, name: &str, span: Option<Span>, construct: &str) -> R {
        if is_identifier(name) {
            return Ok(());
        }
        Err(self.fail(
            span,
            construct,
            format!("{name:?} is not a Python identifier"),
        ))
    }

    /// An int that a script can spell: a case script writes `-9223372036854775808` as a unary
    /// minus on a literal that does not fit an i64, which the frontend refuses.
    fn int(&self, v: i64, span: Option<Span>) -> R {
        if v == i64::MIN {
            return Err(self.fail(span, "int", "int literal out of range"));
        }
        Ok(())
    }

    fn ints(&mut self, field: &'static str, vs: &[i64], span: Option<Span>) -> R {
        self.at(key(field), |c| {
            for (i, &v) in vs.iter().enumerate() {
                c.at(Seg::Index(i), |c| c.int(v, span))?;
            }
            Ok(())
        })
    }

    fn case(&mut self, case: &Case) -> R {
        if case.version != CASE_VERSION {
            return Err(self.fail_at(
                &[key("version")],
                None,
                "version",
                format!(
                    "case format version {} is not supported (this build reads {CASE_VERSION})",
                    case.version
                ),
            ));
        }
        self.at(key("kernel"), |c| c.kernel(case))?;
        self.at(key("call"), |c| c.call(case))?;
        self.at(key("inputs"), |c| c.inputs(case))?;
        if let Some(seed) = case.seed
            && i64::try_from(seed).is_err()
        {
            return Err(self.fail_at(
                &[key("seed")],
                None,
                "torch.manual_seed",
                format!("torch.manual_seed({seed}): the seed must fit an int64"),
            ));
        }
        self.at(key("config"), |c| c.config(case))
    }

    fn kernel(&mut self, case: &Case) -> R {
        let k = &case.kernel;
        self.at(key("name"), |c| c.ident(&k.name, Some(k.span), "def"))?;
        self.at(key("params"), |c| {
            for (i, p) in k.params.iter().enumerate() {
                c.at(Seg::Index(i), |c| {
                    c.at(key("name"), |c| c.ident(&p.name, Some(p.span), "parameter"))?;
                    if c.names.contains_key(&p.name) {
                        return Err(c.fail(
                            Some(p.span),
                            "parameter",
                            format!("duplicate parameter `{}`", p.name),
                        ));
                    }
                    let kind = match p.kind {
                        ParamKind::Tensor => NameKind::HostTensor,
                        ParamKind::Int => NameKind::HostInt,
                    };
                    c.names.insert(p.name.clone(), kind);
                    Ok(())
                })?;
            }
            Ok(())
        })?;
        self.at(key("body"), |c| c.body(&k.body))
    }

    fn body(&mut self, body: &[Stmt]) -> R {
        for (i, s) in body.iter().enumerate() {
            self.at(Seg::Index(i), |c| c.stmt(s))?;
        }
        Ok(())
    }

    fn require_device(&self, span: Span, construct: &str) -> R {
        if self.device == 0 {
            return Err(self.fail(
                Some(span),
                construct,
                format!("{construct} outside any hl.tile/hl.grid loop is host code, which a case script does not have"),
            ));
        }
        Ok(())
    }

    fn host_tensor(&mut self, tensor: &str, span: Span, construct: &str, what: &str) -> R {
        self.at(key("tensor"), |c| {
            if c.names.get(tensor) == Some(&NameKind::HostTensor) {
                return Ok(());
            }
            Err(c.fail(
                Some(span),
                construct,
                format!("a {construct} {what} a host tensor (a kernel parameter or a host allocation) by name; `{tensor}` is not one"),
            ))
        })
    }

    /// Enters one more loop or branch at `span`.
    fn enter_block(&mut self, span: Span) -> R {
        self.blocks += 1;
        if self.blocks > MAX_BLOCK_DEPTH {
            let (construct, message) = blocks_too_deep();
            return Err(self.fail(Some(span), construct, message));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> R {
        let span = s.span;
        self.at(key("kind"), |c| match &s.kind {
            StmtKind::Assign { target, value } => c.at(key("assign"), |c| {
                c.at(key("target"), |c| c.ident(target, Some(span), "assignment"))?;
                c.at(key("value"), |c| c.expr(value, 1))?;
                let kind = assigned_kind(c.device, &value.kind);
                c.names.insert(target.clone(), kind);
                Ok(())
            }),
            StmtKind::AugAssign { target, op, value } => c.at(key("aug-assign"), |c| {
                if !c.names.contains_key(target) {
                    return c.at(key("target"), |c| Err(c.fail(Some(span), "name", unbound(target))));
                }
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul => {}
                    BinOp::Div | BinOp::FloorDiv => {
                        return c.at(key("op"), |c| {
                            Err(c.fail(
                                Some(span),
                                "augmented assignment",
                                "only `+=`, `-=` and `*=` are part of a case script",
                            ))
                        });
                    }
                }
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::Store {
                tensor,
                indices,
                value,
                explicit,
            } => c.at(key("store"), |c| {
                let construct = if *explicit { "hl.store" } else { "subscript store" };
                c.require_device(span, construct)?;
                c.host_tensor(tensor, span, construct, "writes")?;
                c.at(key("indices"), |c| c.indices(indices, 1, span))?;
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => c.at(key("atomic"), |c| {
                let func = format!("hl.{}", op.name());
                c.require_device(span, &func)?;
                let cas = matches!(op, AtomicOp::Cas);
                if cas != expected.is_some() {
                    let message = if cas {
                        "hl.atomic_cas takes (tensor, [indices], expected, value)".to_string()
                    } else {
                        format!("{func} takes (tensor, [indices], value)")
                    };
                    return c.at(key("expected"), |c| Err(c.fail(Some(span), &func, message)));
                }
                c.host_tensor(tensor, span, &func, "writes")?;
                c.at(key("indices"), |c| c.indices(indices, 1, span))?;
                if let Some(x) = expected {
                    c.at(key("expected"), |c| c.expr(x, 1))?;
                }
                c.at(key("value"), |c| c.expr(value, 1))
            }),
            StmtKind::For(lp) => c.at(key("for"), |c| {
                c.enter_block(span)?;
                c.for_loop(lp, span)?;
                c.blocks -= 1;
                Ok(())
            }),
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => c.at(key("if"), |c| {
                c.enter_block(span)?;
                c.require_device(span, "if")?;
                c.at(key("cond"), |c| {
                    c.expr(cond, 1)?;
                    if !matches!(cond.kind, ExprKind::Compare { .. }) {
                        return Err(c.fail(Some(cond.span), "if", "an `if` condition is one comparison of device scalars (e.g. `if live >= 3:`)"));
                    }
                    Ok(())
                })?;
                c.at(key("then_body"), |c| c.body(then_body))?;
                c.at(key("else_body"), |c| c.body(else_body))?;
                c.blocks -= 1;
                Ok(())
            }),
            StmtKind::Return(values) => c.at(key("return"), |c| {
                if c.device > 0 {
                    return Err(c.fail(
                        Some(span),
                        "return",
                        "`return` inside a device loop is not part of a case script",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    c.at(Seg::Index(i), |c| c.expr(v, 1))?;
                }
                Ok(())
            }),
        })
    }

    fn for_loop(&mut self, lp: &Loop, span: Span) -> R {
        let fname = match lp.kind {
            LoopKind::Tile => "hl.tile",
            LoopKind::Grid => "hl.grid",
        };
        if lp.dims.is_empty() {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    fname,
                    format!("{fname}([]) has no dimension to iterate"),
                ))
            });
        }
        let begins = lp.dims.iter().filter(|d| d.begin.is_some()).count();
        let bounds_ok = if lp.list_form {
            begins == 0 || begins == lp.dims.len()
        } else {
            lp.dims.len() == 1
        };
        if !bounds_ok {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    fname,
                    format!("{fname} takes (end), (begin, end), or lists of them"),
                ))
            });
        }
        if lp.kind == LoopKind::Grid && lp.dims.iter().any(|d| d.block_size.is_some()) {
            return self.at(key("dims"), |c| {
                Err(c.fail(
                    Some(span),
                    "block_size",
                    "keyword `block_size` of hl.grid is not part of a case script",
                ))
            });
        }
        if lp.vars.len() != lp.dims.len() {
            return self.at(key("vars"), |c| {
                Err(c.fail(
                    Some(span),
                    "for",
                    format!(
                        "{} loop variables for a {}-dimensional {fname}",
                        lp.vars.len(),
                        lp.dims.len()
                    ),
                ))
            });
        }
        self.at(key("vars"), |c| {
            for (i, v) in lp.vars.iter().enumerate() {
                c.at(Seg::Index(i), |c| c.ident(v, Some(span), "for"))?;
            }
            Ok(())
        })?;
        self.at(key("dims"), |c| {
            for (i, d) in lp.dims.iter().enumerate() {
                c.at(Seg::Index(i), |c| {
                    if let Some(b) = &d.block_size {
                        c.at(key("block_size"), |c| c.expr(b, 1))?;
                    }
                    if let Some(b) = &d.begin {
                        c.at(key("begin"), |c| c.expr(b, 1))?;
                    }
                    c.at(key("end"), |c| c.expr(&d.end, 1))
                })?;
            }
            Ok(())
        })?;
        let kind = match lp.kind {
            LoopKind::Tile => NameKind::Tile,
            LoopKind::Grid => NameKind::GridIndex,
        };
        for v in &lp.vars {
            self.names.insert(v.clone(), kind);
        }
        self.device += 1;
        self.at(key("body"), |c| c.body(&lp.body))?;
        self.device -= 1;
        Ok(())
    }

    fn indices(&mut self, indices: &[Index], depth: usize, span: Span) -> R {
        for (i, index) in indices.iter().enumerate() {
            self.at(Seg::Index(i), |c| match index {
                Index::Full | Index::NewAxis => Ok(()),
                Index::Int(k) => c.at(key("int"), |c| c.int(*k, Some(span))),
                Index::Slice { start, stop, step } => c.at(key("slice"), |c| {
                    if start.is_none() && stop.is_none() && step.is_none() {
                        return Err(c.fail(
                            Some(span),
                            "slice",
                            "a slice without bounds or step is the index `full` (`:`)",
                        ));
                    }
                    for (field, b) in [("start", start), ("stop", stop), ("step", step)] {
                        if let Some(b) = b {
                            c.at(key(field), |c| c.expr(b, depth))?;
                        }
                    }
                    Ok(())
                }),
                Index::Expr(e) => c.at(key("expr"), |c| {
                    if let ExprKind::Int(_) = e.kind {
                        return Err(c.fail(
                            Some(e.span),
                            "int",
                            "an int literal index is the index `int`, not an `expr`",
                        ));
                    }
                    c.expr(e, depth)
                }),
            })?;
        }
        Ok(())
    }

    fn exprs(&mut self, field: &'static str, es: &[Expr], depth: usize) -> R {
        self.at(key(field), |c| {
            for (i, e) in es.iter().enumerate() {
                c.at(Seg::Index(i), |c| c.expr(e, depth))?;
            }
            Ok(())
        })
    }

    /// `e` at nesting `depth` (a statement's own expressions are at 1).
    fn expr(&mut self, e: &Expr, depth: usize) -> R {
        let span = Some(e.span);
        if depth > MAX_EXPR_DEPTH {
            let (construct, message) = expr_too_deep();
            return Err(self.fail(span, construct, message));
        }
        let sub = depth + 1;
        self.at(key("kind"), |c| match &e.kind {
            ExprKind::Name(n) => c.at(key("name"), |c| {
                if !c.names.contains_key(n) {
                    return Err(c.fail(span, "name", unbound(n)));
                }
                Ok(())
            }),
            ExprKind::Int(v) => c.at(key("int"), |c| c.int(*v, span)),
            ExprKind::Float(f) => c.at(key("float"), |c| {
                if !f.is_finite() {
                    return Err(c.fail(span, "float", "float literal out of range (it overflows to inf)"));
                }
                Ok(())
            }),
            ExprKind::Size { value, dim } => c.at(key("size"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("dim"), |c| c.int(*dim, span))
            }),
            ExprKind::TileAttr { tile, attr } => c.at(key("tile-attr"), |c| {
                if c.names.get(tile) != Some(&NameKind::Tile) {
                    let a = attr.name();
                    return c.at(key("tile"), |c| {
                        Err(c.fail(span, &format!(".{a}"), format!("attribute `.{a}` is not part of a case script (tile attributes .begin .end .index .count .block_size .id on hl.tile variables); `{tile}` is not an hl.tile variable")))
                    });
                }
                Ok(())
            }),
            ExprKind::Binary { lhs, rhs, .. } => c.at(key("binary"), |c| {
                c.at(key("lhs"), |c| c.expr(lhs, sub))?;
                c.at(key("rhs"), |c| c.expr(rhs, sub))
            }),
            ExprKind::Compare { lhs, rhs, .. } => c.at(key("compare"), |c| {
                c.at(key("lhs"), |c| c.expr(lhs, sub))?;
                c.at(key("rhs"), |c| c.expr(rhs, sub))
            }),
            ExprKind::Load {
                tensor,
                indices,
                explicit,
            } => c.at(key("load"), |c| {
                let construct = if *explicit { "hl.load" } else { "a host-tensor subscript" };
                c.require_device(e.span, construct)?;
                c.host_tensor(tensor, e.span, if *explicit { "hl.load" } else { "load" }, "reads")?;
                c.at(key("indices"), |c| c.indices(indices, sub, e.span))
            }),
            ExprKind::Subscript { value, indices } => c.at(key("subscript"), |c| {
                c.require_device(e.span, "a subscript")?;
                if let ExprKind::Name(n) = &value.kind
                    && c.names.get(n) == Some(&NameKind::HostTensor)
                {
                    return c.at(key("value"), |c| {
                        Err(c.fail(
                            span,
                            "subscript",
                            format!("a subscript of the host tensor `{n}` is a load, not a device subscript"),
                        ))
                    });
                }
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("indices"), |c| c.indices(indices, sub, e.span))
            }),
            ExprKind::Arange { start, end, step } => c.at(key("arange"), |c| {
                if let Some(s) = start {
                    c.at(key("start"), |c| c.expr(s, sub))?;
                }
                c.at(key("end"), |c| c.expr(end, sub))?;
                if let Some(s) = step {
                    c.at(key("step"), |c| c.expr(s, sub))?;
                }
                Ok(())
            }),
            ExprKind::Zeros { shape, .. } => c.at(key("zeros"), |c| {
                c.require_device(e.span, "hl.zeros")?;
                c.exprs("shape", shape, sub)
            }),
            ExprKind::Full { shape, value, .. } => c.at(key("full"), |c| {
                c.require_device(e.span, "hl.full")?;
                c.exprs("shape", shape, sub)?;
                c.at(key("value"), |c| c.expr(value, sub))
            }),
            ExprKind::Cast { value, .. } => {
                c.at_path(&[key("cast"), key("value")], |c| c.expr(value, sub))
            }
            ExprKind::Sum { value, dim } => c.at(key("sum"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("dim"), |c| c.int(*dim, span))
            }),
            ExprKind::View { value, op } => c.at(key("view"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.at(key("op"), |c| match op {
                    ViewOp::Reshape(dims) => c.exprs("reshape", dims, sub),
                    ViewOp::View(dims) => c.exprs("view", dims, sub),
                    ViewOp::Squeeze(d) => c.at(key("squeeze"), |c| c.int(*d, span)),
                    ViewOp::Unsqueeze(d) => c.at(key("unsqueeze"), |c| c.int(*d, span)),
                    ViewOp::ViewAs(other) => c.at(key("view-as"), |c| c.expr(other, sub)),
                })
            }),
            ExprKind::Permute { value, dims } => c.at(key("permute"), |c| {
                c.at(key("value"), |c| c.expr(value, sub))?;
                c.ints("dims", dims, span)
            }),
            ExprKind::Alloc { kind, shape, .. } => c.at(key("alloc"), |c| {
                if c.device > 0 {
                    let f = match (kind, shape) {
                        (AllocKind::Empty, AllocShape::Dims(_)) => "torch.empty",
                        (AllocKind::Zeros, AllocShape::Dims(_)) => "torch.zeros",
                        (AllocKind::Empty, AllocShape::Like(_)) => "torch.empty_like",
                        (AllocKind::Zeros, AllocShape::Like(_)) => "torch.zeros_like",
                    };
                    return Err(c.fail(
                        span,
                        f,
                        format!("{f} allocates on the host: call it outside the hl.tile/hl.grid loops"),
                    ));
                }
                c.at(key("shape"), |c| match shape {
                    AllocShape::Dims(dims) => c.exprs("dims", dims, sub),
                    AllocShape::Like(t) => c.at(key("like"), |c| c.expr(t, sub)),
                })
            }),
        })
    }

    fn call(&mut self, case: &Case) -> R {
        let call = &case.call;
        let kernel = &case.kernel;
        let span = Some(call.span);
        if let Some(r) = &call.result {
            self.at(key("result"), |c| c.ident(r, span, "call"))?;
        }
        if call.args.len() != kernel.params.len() {
            return self.at(key("args"), |c| {
                Err(c.fail(
                    span,
                    "call",
                    format!(
                        "`{}` takes {} arguments but the call passes {}",
                        kernel.name,
                        kernel.params.len(),
                        call.args.len()
                    ),
                ))
            });
        }
        self.at(key("args"), |c| {
            for (i, (p, a)) in kernel.params.iter().zip(&call.args).enumerate() {
                c.at(Seg::Index(i), |c| {
                    let ok = match (p.kind, a) {
                        (ParamKind::Tensor, Arg::Input(name)) => {
                            case.inputs.iter().any(|i| &i.name == name)
                        }
                        (ParamKind::Int, Arg::Int(v)) => {
                            c.at(key("int"), |c| c.int(*v, span))?;
                            true
                        }
                        (ParamKind::Tensor, Arg::Int(_)) | (ParamKind::Int, Arg::Input(_)) => false,
                    };
                    if ok {
                        return Ok(());
                    }
                    Err(c.fail(
                        span,
                        "call",
                        format!(
                            "argument for parameter `{}` must be {}",
                            p.name,
                            match p.kind {
                                ParamKind::Tensor => "a module-level input tensor",
                                ParamKind::Int => "an int literal",
                            }
                        ),
                    ))
                })?;
            }
            Ok(())
        })
    }

    fn inputs(&mut self, case: &Case) -> R {
        for (i, input) in case.inputs.iter().enumerate() {
            self.at(Seg::Index(i), |c| {
                let span = Some(input.span);
                c.at(key("name"), |c| c.ident(&input.name, span, "assignment"))?;
                if case.inputs[..i].iter().any(|o| o.name == input.name) {
                    return c.at(key("name"), |c| {
                        Err(c.fail(
                            span,
                            "assignment",
                            format!("input `{}` is defined twice", input.name),
                        ))
                    });
                }
                c.at(key("ctor"), |c| c.ctor(input))?;
                c.at(key("chain"), |c| {
                    for (k, op) in input.chain.iter().enumerate() {
                        c.at(Seg::Index(k), |c| match op {
                            InputOp::Reshape(dims) => c.ints("reshape", dims, span),
                            InputOp::Expand(dims) => c.ints("expand", dims, span),
                            InputOp::Contiguous | InputOp::To(_) => Ok(()),
                        })?;
                    }
                    Ok(())
                })?;
                input
                    .dtype_and_shape()
                    .map(|_| ())
                    .map_err(|e| c.fail(span, "input", e.to_string()))
            })?;
        }
        Ok(())
    }

    fn ctor(&mut self, input: &Input) -> R {
        let span = Some(input.span);
        match &input.ctor {
            Ctor::Randn { .. }
            | Ctor::Rand { .. }
            | Ctor::Ones { .. }
            | Ctor::Zeros { .. }
            | Ctor::Empty { .. }
            | Ctor::Arange { .. } => Ok(()),
            Ctor::Full { value, .. } => self.at_path(&[key("full"), key("value")], |c| {
                if !value.is_finite() {
                    return Err(c.fail(
                        span,
                        "torch.full",
                        "torch.full's value must be a number literal",
                    ));
                }
                Ok(())
            }),
            Ctor::Tensor {
                shape,
                values,
                float_literals,
            } => self.at(key("tensor"), |c| {
                // A nested list of rank r is an expression r + 1 levels deep.
                if shape.len() >= MAX_EXPR_DEPTH {
                    let (construct, message) = expr_too_deep();
                    return c.at(key("shape"), |c| Err(c.fail(span, construct, message)));
                }
                // A zero-length list has no elements to give the dims after it.
                if let Some(z) = shape.iter().position(|&d| d == 0)
                    && z + 1 < shape.len()
                {
                    return c.at(key("shape"), |c| {
                        Err(c.fail(
                            span,
                            "torch.tensor",
                            format!("shape {shape:?} is not the shape of a nested list (no dim follows a zero-length one)"),
                        ))
                    });
                }
                let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
                if numel != Some(values.len()) {
                    return c.at(key("values"), |c| {
                        Err(c.fail(
                            span,
                            "torch.tensor",
                            format!(
                                "torch.tensor of shape {shape:?} holds {} values",
                                values.len()
                            ),
                        ))
                    });
                }
                c.at(key("values"), |c| {
                    for (k, v) in values.iter().enumerate() {
                        // Int literals (no float literal anywhere) are integers an i64 holds.
                        let ok = v.is_finite()
                            && (*float_literals
                                || (v.fract() == 0.0 && v.abs() < 9.223_372_036_854_775e18));
                        if !ok {
                            return c.at(Seg::Index(k), |c| {
                                Err(c.fail(
                                    span,
                                    "torch.tensor",
                                    if *float_literals {
                                        "torch.tensor holds finite number literals only"
                                    } else {
                                        "torch.tensor without float literals holds int literals only"
                                    },
                                ))
                            });
                        }
                    }
                    Ok(())
                })
            }),
        }
    }

    fn config(&mut self, case: &Case) -> R {
        let config = &case.config;
        self.ints("block_sizes", &config.block_sizes, None)?;
        if let Some(counts) = &config.load_buffer_count {
            self.ints("load_buffer_count", counts, None)?;
        }
        if let Some(g) = config.worklist_grouping
            && !(0..=2).contains(&g)
        {
            return self.at(key("worklist_grouping"), |c| {
                Err(c.fail(
                    None,
                    "pallas_worklist_grouping",
                    format!("pallas_worklist_grouping must be 0, 1 or 2, got {g}"),
                ))
            });
        }
        let wanted = BlockTable::of(&case.kernel).config_count();
        let got = config.block_sizes.len();
        if wanted != got {
            return self.at(key("block_sizes"), |c| {
                Err(c.fail(
                    None,
                    "block_sizes",
                    format!(
                        "block_sizes has {got} {} but the kernel registers {wanted} config-driven block {} (one per `hl.tile` without `block_size=`, in registration order)",
                        if got == 1 { "entry" } else { "entries" },
                        if wanted == 1 { "id" } else { "ids" },
                    ),
                ))
            });
        }
        if let Some(k) = config.block_sizes.iter().position(|&b| b < 1) {
            let bad = config.block_sizes[k];
            return self.at_path(&[key("block_sizes"), Seg::Index(k)], |c| {
                Err(c.fail(
                    None,
                    "block_sizes",
                    format!("block size {bad} is not a positive int"),
                ))
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::is_identifier;

    #[test]
    fn identifiers() {
        for ok in [
            "x", "_x1", "x_block", "héllo", "match", "case", "type", "_", "ñ_2",
        ] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in [
            "", "1x", "x y", "for", "None", "a.b", "x-1", "é é", " é", "é(",
        ] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
