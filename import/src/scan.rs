//! The module's structure as the importer needs it: its scopes (module, functions, classes),
//! the names each binds (with the expression and where), the calls each makes, the values a
//! test's `@parametrize` decorators give its parameters, and the `@helion.kernel` functions.
//! Read from the parsed AST only; nothing is executed.

use rustpython_ast::Visitor;
use rustpython_parser::ast::{self, Ranged};

/// What a scope is.
#[derive(Clone, Debug)]
pub(crate) enum ScopeKind {
    /// The module.
    Module,
    /// A function (its name, its positional parameters in order, the values its
    /// `@parametrize` decorators give them, and its `def`, which the evaluator reads when the
    /// host code calls it as a helper).
    Function {
        name: String,
        params: Vec<String>,
        parametrize: Vec<Parametrized>,
        def: Box<ast::StmtFunctionDef>,
    },
    /// A class body: its names are not visible to its methods.
    Class,
}

/// One name bound to one expression.
#[derive(Clone, Debug)]
pub(crate) struct Binding {
    pub name: String,
    pub value: ast::Expr,
    /// Where the binding statement starts (byte offset).
    pub at: u32,
    /// The `for` statement (byte offset) whose first iteration this binding stands for: a
    /// loop runs the kernel once per value and the case takes the first, which its header
    /// says.
    pub first_of_loop: Option<u32>,
    /// For a `def`, the function's own scope: a call of the name is a call of that function.
    pub def_scope: Option<usize>,
}

/// One `@parametrize("a, b", [(a0, b0), ...])` decorator of a test function (torch's
/// `common_utils.parametrize`, `pytest.mark.parametrize`): the test runs once per entry; the
/// importer takes the first, which the case's header says.
#[derive(Clone, Debug)]
pub(crate) struct Parametrized {
    /// The parameter names, in the decorator's order.
    pub names: Vec<String>,
    /// The values: a sequence of entries, each a tuple when there are several names.
    pub values: ast::Expr,
    /// Where the decorator starts (byte offset), read in the scope of the `def`.
    pub at: u32,
}

/// The `@parametrize(...)` decorators of a function, those whose names and values it can read
/// (`argnames` a string of comma-separated names or a list of strings; `argvalues` the second
/// argument or the keyword).
fn parametrized(decorators: &[ast::Expr]) -> Vec<Parametrized> {
    let mut out = Vec::new();
    for d in decorators {
        let ast::Expr::Call(c) = d else { continue };
        let is_parametrize = match c.func.as_ref() {
            ast::Expr::Name(n) => n.id.as_str() == "parametrize",
            ast::Expr::Attribute(a) => a.attr.as_str() == "parametrize",
            _ => false,
        };
        if !is_parametrize {
            continue;
        }
        let kw = |name: &str| {
            c.keywords
                .iter()
                .find(|k| k.arg.as_deref() == Some(name))
                .map(|k| &k.value)
        };
        let (Some(names), Some(values)) = (
            c.args
                .first()
                .or_else(|| kw("arg_str"))
                .or_else(|| kw("argnames")),
            c.args
                .get(1)
                .or_else(|| kw("arg_values"))
                .or_else(|| kw("argvalues")),
        ) else {
            continue;
        };
        let string = |e: &ast::Expr| match e {
            ast::Expr::Constant(ast::ExprConstant {
                value: ast::Constant::Str(s),
                ..
            }) => Some(s.clone()),
            _ => None,
        };
        let names: Option<Vec<String>> = match names {
            ast::Expr::List(ast::ExprList { elts, .. })
            | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => elts.iter().map(string).collect(),
            other => string(other).map(|s| {
                s.split(',')
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .collect()
            }),
        };
        let Some(names) = names.filter(|n| !n.is_empty()) else {
            continue;
        };
        out.push(Parametrized {
            names,
            values: values.clone(),
            at: u32::from(d.start()),
        });
    }
    out
}

/// One scope.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub parent: Option<usize>,
    pub kind: ScopeKind,
    pub bindings: Vec<Binding>,
    /// The calls made directly in this scope (not in nested functions or classes).
    pub calls: Vec<ast::ExprCall>,
    /// Names changed in place here, and where (byte offset of the statement): `x[i] = v`,
    /// `x += v`, `x.attr = v`, `x.fill_(v)` (a torch in-place method, ending in `_`). A value
    /// read through its binding would miss the change.
    pub mutations: Vec<(String, u32)>,
}

/// One `@helion.kernel` function.
#[derive(Clone, Debug)]
pub(crate) struct KernelDef {
    pub def: ast::StmtFunctionDef,
    /// The `@helion.kernel(...)` decorator.
    pub decorator: ast::Expr,
    /// The scope the `def` is in.
    pub scope: usize,
}

/// The module's scopes (index 0 is the module) and kernels, in source order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Module {
    pub scopes: Vec<Scope>,
    pub kernels: Vec<KernelDef>,
}

/// Whether `deco` is `helion.kernel`, `helion.kernel(...)` or (after `from helion import
/// kernel`) `kernel`/`kernel(...)`.
pub(crate) fn is_kernel_decorator(deco: &ast::Expr) -> bool {
    let func = match deco {
        ast::Expr::Call(c) => c.func.as_ref(),
        other => other,
    };
    match func {
        ast::Expr::Attribute(a) => {
            a.attr.as_str() == "kernel"
                && matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "helion")
        }
        ast::Expr::Name(n) => n.id.as_str() == "kernel",
        _ => false,
    }
}

/// The module's structure.
pub(crate) fn scan(suite: &[ast::Stmt]) -> Module {
    let mut m = Module::default();
    m.scopes.push(Scope {
        parent: None,
        kind: ScopeKind::Module,
        bindings: Vec::new(),
        calls: Vec::new(),
        mutations: Vec::new(),
    });
    walk_body(&mut m, 0, suite);
    m
}

/// The calls of one statement, not descending into nested functions, lambdas' bodies
/// included, or classes (their calls belong to their own scopes).
#[derive(Default)]
struct Calls(Vec<ast::ExprCall>);

impl Visitor for Calls {
    fn visit_expr_call(&mut self, node: ast::ExprCall) {
        self.0.push(node.clone());
        self.generic_visit_expr_call(node);
    }
    fn visit_stmt_function_def(&mut self, _: ast::StmtFunctionDef) {}
    fn visit_stmt_async_function_def(&mut self, _: ast::StmtAsyncFunctionDef) {}
    fn visit_stmt_class_def(&mut self, _: ast::StmtClassDef) {}
}

fn walk_body(m: &mut Module, scope: usize, body: &[ast::Stmt]) {
    for stmt in body {
        let mut calls = Calls::default();
        calls.visit_stmt(stmt.clone());
        m.scopes[scope].calls.extend(calls.0);
        walk_stmt(m, scope, stmt);
    }
}

/// Records the bindings of `stmt` in `scope` and opens the scopes of its functions and classes;
/// descends into compound statements (their bodies bind in the same scope).
fn walk_stmt(m: &mut Module, scope: usize, stmt: &ast::Stmt) {
    let at = u32::from(stmt.start());
    match stmt {
        ast::Stmt::FunctionDef(f) => {
            let params = f
                .args
                .posonlyargs
                .iter()
                .chain(&f.args.args)
                .map(|a| a.def.arg.to_string())
                .collect();
            if let Some(deco) = f.decorator_list.iter().find(|d| is_kernel_decorator(d)) {
                m.kernels.push(KernelDef {
                    def: f.clone(),
                    decorator: deco.clone(),
                    scope,
                });
            }
            let inner = open(
                m,
                scope,
                ScopeKind::Function {
                    name: f.name.to_string(),
                    params,
                    parametrize: parametrized(&f.decorator_list),
                    def: Box::new(f.clone()),
                },
            );
            bind(
                m,
                scope,
                &f.name,
                &ast::Expr::Constant(none_at(f.range)),
                at,
                None,
            );
            if let Some(b) = m.scopes[scope].bindings.last_mut() {
                b.def_scope = Some(inner);
            }
            walk_calls_only(m, inner, &f.body);
        }
        ast::Stmt::ClassDef(c) => {
            let inner = open(m, scope, ScopeKind::Class);
            walk_calls_only(m, inner, &c.body);
        }
        ast::Stmt::Assign(a) => {
            for target in &a.targets {
                bind_target(m, scope, target, &a.value, at);
                mutate_target(m, scope, target, at, false);
            }
        }
        ast::Stmt::AugAssign(a) => mutate_target(m, scope, &a.target, at, true),
        ast::Stmt::Expr(e) => {
            // `x.fill_(0)`, `x.copy_(y)`: torch's in-place methods end in `_`.
            if let ast::Expr::Call(c) = e.value.as_ref()
                && let ast::Expr::Attribute(a) = c.func.as_ref()
                && a.attr.as_str().ends_with('_')
                && !a.attr.as_str().starts_with('_')
                && let Some(name) = base_name(&a.value)
            {
                m.scopes[scope].mutations.push((name, at));
            }
        }
        ast::Stmt::AnnAssign(a) => {
            if let Some(value) = &a.value {
                bind_target(m, scope, &a.target, value, at);
            }
        }
        ast::Stmt::For(f) => {
            // A loop binds its first element: the shapes the file runs first (`for n in
            // [7, 128]:`, `for loop_type, counts in cases:`), read as `iter[0]` where the
            // sequence is not a literal (the evaluator reads it if it knows the sequence).
            let first = match f.iter.as_ref() {
                ast::Expr::List(ast::ExprList { elts, .. })
                | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => elts.first().cloned(),
                other => Some(index(other, 0)),
            };
            if let Some(first) = first {
                bind_target_with(m, scope, &f.target, &first, at, Some(at));
            }
            walk_nested(m, scope, &f.body);
            walk_nested(m, scope, &f.orelse);
        }
        ast::Stmt::If(s) => {
            walk_nested(m, scope, &s.body);
            walk_nested(m, scope, &s.orelse);
        }
        ast::Stmt::While(s) => {
            walk_nested(m, scope, &s.body);
            walk_nested(m, scope, &s.orelse);
        }
        ast::Stmt::With(s) => walk_nested(m, scope, &s.body),
        ast::Stmt::Try(s) => {
            walk_nested(m, scope, &s.body);
            walk_nested(m, scope, &s.orelse);
            walk_nested(m, scope, &s.finalbody);
        }
        // Statements that bind nothing the importer reads (imports bind modules and helpers
        // whose values it never needs; async and match forms are not how kernels are called).
        ast::Stmt::AsyncFunctionDef(_)
        | ast::Stmt::Return(_)
        | ast::Stmt::Delete(_)
        | ast::Stmt::TypeAlias(_)
        | ast::Stmt::AsyncFor(_)
        | ast::Stmt::AsyncWith(_)
        | ast::Stmt::Match(_)
        | ast::Stmt::Raise(_)
        | ast::Stmt::TryStar(_)
        | ast::Stmt::Assert(_)
        | ast::Stmt::Import(_)
        | ast::Stmt::ImportFrom(_)
        | ast::Stmt::Global(_)
        | ast::Stmt::Nonlocal(_)
        | ast::Stmt::Pass(_)
        | ast::Stmt::Break(_)
        | ast::Stmt::Continue(_) => {}
    }
}

/// A nested body's bindings and scopes (its calls were collected with its statement's).
fn walk_nested(m: &mut Module, scope: usize, body: &[ast::Stmt]) {
    for stmt in body {
        walk_stmt(m, scope, stmt);
    }
}

/// A new scope's calls and bindings.
fn walk_calls_only(m: &mut Module, scope: usize, body: &[ast::Stmt]) {
    walk_body(m, scope, body);
}

fn open(m: &mut Module, parent: usize, kind: ScopeKind) -> usize {
    m.scopes.push(Scope {
        parent: Some(parent),
        kind,
        bindings: Vec::new(),
        calls: Vec::new(),
        mutations: Vec::new(),
    });
    m.scopes.len() - 1
}

fn none_at(range: rustpython_parser::text_size::TextRange) -> ast::ExprConstant {
    ast::ExprConstant {
        range,
        value: ast::Constant::None,
        kind: None,
    }
}

fn bind(
    m: &mut Module,
    scope: usize,
    name: &str,
    value: &ast::Expr,
    at: u32,
    first_of_loop: Option<u32>,
) {
    m.scopes[scope].bindings.push(Binding {
        name: name.to_string(),
        value: value.clone(),
        at,
        first_of_loop,
        def_scope: None,
    });
}

/// `value[i]`, a synthetic subscript spanning `value`.
pub(crate) fn index(value: &ast::Expr, i: u32) -> ast::Expr {
    ast::Expr::Subscript(ast::ExprSubscript {
        range: value.range(),
        value: Box::new(value.clone()),
        slice: Box::new(ast::Expr::Constant(ast::ExprConstant {
            range: value.range(),
            value: ast::Constant::Int(i.into()),
            kind: None,
        })),
        ctx: ast::ExprContext::Load,
    })
}

/// The name under a chain of subscripts and attributes (`x` of `x[0].a[1]`).
pub(crate) fn base_name(e: &ast::Expr) -> Option<String> {
    let mut cur = e;
    loop {
        match cur {
            ast::Expr::Name(n) => return Some(n.id.to_string()),
            ast::Expr::Subscript(s) => cur = &s.value,
            ast::Expr::Attribute(a) => cur = &a.value,
            _ => return None,
        }
    }
}

/// Records the in-place change a target makes (`x[i] = v`, `x.a = v`, and `x += v` where
/// `augmented`); a plain name target of `=` rebinds instead, and tuple targets recurse.
fn mutate_target(m: &mut Module, scope: usize, target: &ast::Expr, at: u32, augmented: bool) {
    match target {
        ast::Expr::Subscript(_) | ast::Expr::Attribute(_) => {
            if let Some(name) = base_name(target) {
                m.scopes[scope].mutations.push((name, at));
            }
        }
        ast::Expr::Tuple(ast::ExprTuple { elts, .. })
        | ast::Expr::List(ast::ExprList { elts, .. }) => {
            for t in elts {
                mutate_target(m, scope, t, at, augmented);
            }
        }
        ast::Expr::Starred(s) => mutate_target(m, scope, &s.value, at, augmented),
        // A name is rebound by `=` (a binding); by `+=` it is changed, as torch changes a
        // tensor in place.
        ast::Expr::Name(n) if augmented => {
            m.scopes[scope].mutations.push((n.id.to_string(), at));
        }
        ast::Expr::Name(_) => {}
        _ => {}
    }
}

/// `a = e`, and `a, b = e1, e2` element by element (a tuple target with any other value binds
/// each name to `value[i]`, which the evaluator reads when `value` is a sequence it knows).
fn bind_target(m: &mut Module, scope: usize, target: &ast::Expr, value: &ast::Expr, at: u32) {
    bind_target_with(m, scope, target, value, at, None);
}

/// [`bind_target`], the bindings standing for the first iteration of the loop at
/// `first_of_loop` when there is one.
fn bind_target_with(
    m: &mut Module,
    scope: usize,
    target: &ast::Expr,
    value: &ast::Expr,
    at: u32,
    first_of_loop: Option<u32>,
) {
    match target {
        ast::Expr::Name(n) => bind(m, scope, n.id.as_str(), value, at, first_of_loop),
        ast::Expr::Tuple(ast::ExprTuple { elts, .. })
        | ast::Expr::List(ast::ExprList { elts, .. }) => {
            if let ast::Expr::Tuple(ast::ExprTuple { elts: values, .. })
            | ast::Expr::List(ast::ExprList { elts: values, .. }) = value
                && values.len() == elts.len()
            {
                for (t, v) in elts.iter().zip(values) {
                    bind_target_with(m, scope, t, v, at, first_of_loop);
                }
                return;
            }
            for (i, t) in elts.iter().enumerate() {
                bind_target_with(m, scope, t, &index(value, i as u32), at, first_of_loop);
            }
        }
        // Attributes, subscripts and starred targets bind nothing the importer reads.
        _ => {}
    }
}
