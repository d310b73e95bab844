//! Well-formedness of a case on the IR: the rules a [`Case`] must satisfy whatever it was read
//! from. Both readers run [`check`] on what they produce — the case-script frontend after its
//! AST-to-IR conversion, the case-JSON reader after deserialization — so a JSON file cannot
//! carry a case that no script could (a call without its arguments, `block_sizes: [0]`, an
//! unbound name, an over-deep expression) past the frontend into the compiler and reference.
//!
//! The rules that need only the IR live here once: the format version, identifiers, the scope
//! of names (what each name denotes: a host tensor, a host int, a tile, a grid index, a device
//! value, exactly as [`super::kernel`] tracks them), which constructs are device-only or
//! host-only, the canonical IR forms the frontend produces (an int index is
//! [`Index::Int`](crate::ir::Index::Int), a bare `:` is [`Index::Full`](crate::ir::Index::Full)),
//! the depth limits ([`super::MAX_EXPR_DEPTH`], [`super::MAX_BLOCK_DEPTH`]), the call against
//! the parameters, the inputs, and the config's block sizes. The script frontend checks the
//! same scope rules again while it converts (it needs the name kinds to tell a load from a
//! subscript, and reports at AST nodes); running this check after it means a script it accepts
//! can never be refused here, and the `frontend` fuzz target (JSON in, render, parse back) finds
//! a rule that this check lacks.
//!
//! The check recurses over the IR but stops at the depth limits, so it never recurses deeper
//! than they allow, whatever its input.
//!
//! The checker is split by concern, one `impl Checker` per module: this module holds the
//! shared vocabulary (name kinds, depth-limit messages, violations and their JSON paths) and the
//! checks every part uses (identifiers, ints, host-only and device-only placement); [`case`]
//! checks what surrounds the kernel (version, call, inputs, seed, config), [`body`] the kernel's
//! parameters and statements, [`expr`] expressions and index lists.

mod body;
mod case;
mod expr;

use super::{MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH};
use crate::ir::hash::FastMap;
use crate::ir::{Case, ExprKind, Span};
use rustpython_parser::{Mode, Tok, lexer};

/// Where a `bool` parameter may appear, and the error elsewhere.
pub(crate) const BOOL_PARAM_USE: &str =
    "a `bool` parameter is read only as a whole `if` condition (`if flag:`)";

/// The error of an `if` condition of another form than [`is_condition`]'s.
pub(crate) const CONDITION_FORMS: &str = "an `if` condition is one comparison of device scalars (e.g. `if live >= 3:`) or a `bool` parameter (`if flag:`), either under one `not`";

/// Whether `cond` is an `if` condition of the language: one comparison, or a `bool` parameter
/// by name (Helion branches on it with `lax.cond`).
pub(crate) fn is_condition(cond: &crate::ir::Expr, names: &FastMap<String, NameKind>) -> bool {
    match &cond.kind {
        ExprKind::Compare { .. } => true,
        ExprKind::Name(n) => names.get(n) == Some(&NameKind::HostBool),
        _ => false,
    }
}

/// What a name denotes in the kernel body (Helion's `visit_Subscript` distinction between a
/// host-tensor load and a device subscript rests on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameKind {
    HostTensor,
    HostInt,
    /// A `float` parameter: a Python float in device arithmetic and conditions.
    HostFloat,
    /// A `bool` parameter: a condition of `if`, nothing else.
    HostBool,
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
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. } => NameKind::HostInt,
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
