//! `pallas-diff import`: a user's Python file (a Helion test module, an example, a production
//! kernel) in, case scripts out, one per `@helion.kernel` it can read and call.
//!
//! This crate owns the *static* reading of such a file: it is parsed with the frontend's Python
//! parser (after the frontend's depth scan, so no file overflows a stack) and never executed.
//! For each kernel it writes a case script with
//! - the kernel as written (its `def` and body, dedented; a docstring blanked, line numbers
//!   kept), under `@helion.kernel(backend="pallas", static_shapes=True, config=...)`, and
//!   `from helion._testing import DEVICE` when the kernel names `DEVICE` (`device=DEVICE`);
//! - a config: the decorator's `config=` (or the first of its `configs=`), else the keywords a
//!   call passes (`code_and_output(k, args, block_sizes=[...])`, `block_size=` read as
//!   `block_sizes`, a `**config` spread from the `helion.Config(...)` or `dict(...)` it
//!   evaluates to), else `block_sizes=[]` where the kernel has no config-driven block (Helion's
//!   default then has nothing to choose), else the user's `--config`, else Helion's own
//!   default block sizes, asked of real Helion through [`HelionDefaults`] when the caller has
//!   the Helion environment (`BoundKernel.config_spec.default_config()`, what
//!   `autotune_effort="none"` runs); without it such a kernel is not imported;
//! - inputs from the shapes and dtypes the file's own calls pass (a direct call, Helion's
//!   `code_and_output(k, args, ...)` and `run_example(k, baseline, args)`), evaluated statically
//!   ([`value`]), or the user's `--shapes`/`--inputs`.
//!
//! Every produced script is parsed by the frontend ([`lang::frontend::parse_case`]); one it
//! refuses is reported as not imported, with the frontend's reason mapped back to the user's
//! file and line. A kernel it cannot read at all (no call, an input it cannot spell) is reported
//! the same way: [`Imported::skipped`], each naming the file's line.

mod scan;
pub mod value;

use rustpython_parser::ast::{self, Ranged};
use scan::{KernelDef, Module, ScopeKind};
use std::cell::RefCell;
use std::collections::BTreeSet;
use value::{At, Dtype, Eval, Fill, TensorVal, Val};

/// Most cases written per kernel (one per call site with distinct inputs).
const MAX_CASES_PER_KERNEL: usize = 3;

/// Most config-driven block ids tried for a placeholder config (Helion's own Pallas tests use
/// at most 4).
const MAX_BLOCK_IDS: usize = 8;

/// A whole-file failure: nothing in the file can be read.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The frontend's depth scan or the Python parser refused the file.
    #[error(transparent)]
    Source(#[from] lang::frontend::FrontendError),
    /// A `--shapes`/`--inputs` entry that is not `NAME=...`.
    #[error("{0}")]
    Option(String),
}

/// What the user gives beside the file.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// `--shapes NAME=AxBxC[:dtype]`: a parameter's input, made with `torch.randn` (floats) or
    /// an arange (ints) of that shape.
    pub shapes: Vec<(String, TensorVal)>,
    /// `--inputs NAME=EXPR`: a parameter's input as a case-script constructor, verbatim.
    pub inputs: Vec<(String, String)>,
    /// `--config 'helion.Config(...)'`: the config of kernels the file gives none.
    pub config: Option<String>,
}

impl ImportOptions {
    /// Parses one `--shapes` entry, `NAME=AxBxC` or `NAME=AxBxC:dtype` (`float32`, `bfloat16`,
    /// `int32`; float32 by default).
    pub fn parse_shape(entry: &str) -> Result<(String, TensorVal), ImportError> {
        let bad = || ImportError::Option(format!("--shapes {entry}: expected NAME=AxBxC[:dtype]"));
        let (name, rest) = entry.split_once('=').ok_or_else(bad)?;
        let (dims, dtype) = match rest.split_once(':') {
            Some((d, t)) => (d, t),
            None => (rest, "float32"),
        };
        let shape = dims
            .split('x')
            .map(|d| d.trim().parse::<i64>().ok().filter(|&d| d >= 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let dtype = match dtype {
            "float32" => Dtype::Float32,
            "bfloat16" => Dtype::Bfloat16,
            "int32" => Dtype::Int32,
            _ => return Err(bad()),
        };
        let fill = if dtype == Dtype::Int32 {
            Fill::Arange
        } else {
            Fill::Randn
        };
        Ok((name.trim().to_string(), TensorVal { shape, dtype, fill }))
    }

    /// Parses one `--inputs` entry, `NAME=EXPR`.
    pub fn parse_input(entry: &str) -> Result<(String, String), ImportError> {
        let (name, expr) = entry
            .split_once('=')
            .ok_or_else(|| ImportError::Option(format!("--inputs {entry}: expected NAME=EXPR")))?;
        Ok((name.trim().to_string(), expr.trim().to_string()))
    }
}

/// Helion's default block sizes for a kernel, asked of real Helion (the caller's Helion
/// worker): the importer is static and never runs Python itself.
pub trait HelionDefaults {
    /// The `block_sizes` of Helion's default config for the kernel of case script `script`
    /// (whose own `block_sizes` are placeholders) bound to its inputs, and the Helion build
    /// that chose them (`helion 1.5.1`). `Err` is why Helion gave none (one line).
    fn block_sizes(&mut self, script: &str) -> Result<(Vec<i64>, String), String>;
}

/// One case script written from a kernel.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportedCase {
    /// The case's file name without `.py` (`<module>__<kernel>`, the enclosing function
    /// between them for a kernel defined in one, `_2`... for further calls).
    pub name: String,
    /// The kernel's name.
    pub kernel: String,
    /// The `def`'s line in the user's file.
    pub line: u32,
    /// Where the config came from.
    pub config_from: String,
    /// Where the inputs came from.
    pub inputs_from: String,
    /// The case script.
    pub script: String,
}

/// A kernel the importer could not turn into a case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Skipped {
    /// The kernel's name.
    pub kernel: String,
    /// The line the reason is about in the user's file (the `def`'s when nothing better).
    pub line: u32,
    /// Why.
    pub reason: String,
}

/// What one file gave.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Imported {
    /// Cases, in the file's order.
    pub cases: Vec<ImportedCase>,
    /// Kernels not imported, in the file's order.
    pub skipped: Vec<Skipped>,
}

/// Line starts of a text, for offsets → 1-based lines.
pub(crate) struct Lines {
    starts: Vec<u32>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Lines { starts }
    }

    /// The 1-based line of byte `offset`.
    pub fn line_of(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

/// Imports every kernel of `source` (the file at `path`, named so in reasons and headers);
/// a kernel whose block sizes only Helion's default would choose is not imported.
pub fn import_source(
    source: &str,
    path: &str,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    import_source_with(source, path, options, None)
}

/// [`import_source`], asking `defaults` (real Helion) for the block sizes of kernels that
/// leave them to Helion's default config.
pub fn import_source_with(
    source: &str,
    path: &str,
    options: &ImportOptions,
    defaults: Option<&mut dyn HelionDefaults>,
) -> Result<Imported, ImportError> {
    use rustpython_parser::Parse;
    lang::frontend::check_source_depth(source, path)?;
    let suite = ast::Suite::parse(source, path).map_err(|e| {
        let lines = Lines::new(source);
        lang::frontend::FrontendError {
            path: path.to_string(),
            span: lang::ir::Span::new(lines.line_of(u32::from(e.offset)), 1),
            construct: "syntax".into(),
            message: format!("Python syntax error: {}", e.error),
        }
    })?;
    let module = scan::scan(&suite);
    let lines = Lines::new(source);
    let stem = std::path::Path::new(path)
        .file_stem()
        .map_or("module".to_string(), |s| s.to_string_lossy().into_owned());
    let importer = Importer {
        source,
        path,
        stem: &stem,
        module: &module,
        lines: &lines,
        options,
        defaults: RefCell::new(defaults),
    };
    let mut out = Imported::default();
    for k in &module.kernels {
        importer.kernel(k, &mut out);
    }
    Ok(out)
}

struct Importer<'a, 'h> {
    source: &'a str,
    path: &'a str,
    stem: &'a str,
    module: &'a Module,
    lines: &'a Lines,
    options: &'a ImportOptions,
    defaults: RefCell<Option<&'h mut dyn HelionDefaults>>,
}

/// A kernel's config as the file (or the user) gives it.
enum Chosen {
    /// Complete: the `helion.Config(...)` source and where it came from.
    Given(String, String),
    /// Keys without `block_sizes` for a kernel with `driven` config-driven blocks: Helion's
    /// default block sizes complete it.
    Default {
        keys: Vec<String>,
        from: String,
        driven: usize,
    },
}

/// What a case script is made of besides its config.
struct Draft<'d> {
    name: &'d str,
    def_line: u32,
    site_line: u32,
    inputs_from: String,
    notes: Vec<String>,
    inputs: Vec<String>,
    call_args: Vec<String>,
    body: &'d str,
    /// The kernel names `DEVICE` (Helion's tests allocate with `device=DEVICE`): the script
    /// imports it as the tests do, the one form of it the frontend accepts.
    uses_device: bool,
}

/// How far a call got before it failed (its reason is the kernel's when it got furthest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Inputs,
    Config,
    Frontend,
}

/// One call of a kernel: its arguments and the config keywords it passes.
struct CallSite<'c> {
    args: Vec<ast::Expr>,
    config: Vec<&'c ast::Keyword>,
    at: At,
}

impl Importer<'_, '_> {
    fn line(&self, node: &impl Ranged) -> u32 {
        self.lines.line_of(u32::from(node.start()))
    }

    fn eval(&self) -> Eval<'_> {
        Eval::new(self.module, self.lines)
    }

    fn kernel(&self, k: &KernelDef, out: &mut Imported) {
        let name = k.def.name.to_string();
        let def_offset = self.def_offset(k);
        let def_line = self.lines.line_of(def_offset);
        let skip = |line: u32, reason: String, out: &mut Imported| {
            out.skipped.push(Skipped {
                kernel: name.clone(),
                line,
                reason,
            });
        };
        let params: Vec<String> = k
            .def
            .args
            .posonlyargs
            .iter()
            .chain(&k.def.args.args)
            .map(|a| a.def.arg.to_string())
            .collect();
        if k.def.args.vararg.is_some() || k.def.args.kwarg.is_some() {
            return skip(def_line, "`*args`/`**kwargs` parameters".into(), out);
        }
        let calls = self.call_sites(k, &name);
        let user_covers_all = params.iter().all(|p| self.user_input(p).is_some());
        if calls.is_empty() && !user_covers_all {
            return skip(
                def_line,
                format!(
                    "no call of `{name}` in the file (direct, `code_and_output` or `run_example`) \
                     to take inputs from; give them with --shapes/--inputs"
                ),
                out,
            );
        }
        let body = match self.kernel_text(k, def_offset) {
            Ok(b) => b,
            Err(reason) => return skip(def_line, reason, out),
        };
        let sites: Vec<Option<&CallSite>> = if calls.is_empty() {
            vec![None]
        } else {
            calls.iter().map(Some).collect()
        };
        let mut written = BTreeSet::new();
        let mut last_reason = None;
        for site in sites {
            if written.len() >= MAX_CASES_PER_KERNEL {
                break;
            }
            let case = self.case(k, &name, &params, site, &body, def_line);
            match case {
                Ok((script, config_from, inputs_from)) => {
                    if !written.insert(script.clone()) {
                        continue;
                    }
                    let mut case_name = self.case_name(k, &name);
                    if written.len() > 1 {
                        case_name = format!("{case_name}_{}", written.len());
                    }
                    out.cases.push(ImportedCase {
                        name: case_name,
                        kernel: name.clone(),
                        line: def_line,
                        config_from,
                        inputs_from,
                        script,
                    });
                }
                // The reason of the call that got furthest (its inputs read, then its config,
                // then the frontend) says most about the kernel.
                Err((stage, line, reason)) => {
                    if last_reason.as_ref().is_none_or(|(s, _, _)| stage > *s) {
                        last_reason = Some((stage, line, reason));
                    }
                }
            }
        }
        if written.is_empty() {
            let (_, line, reason) =
                last_reason.unwrap_or((Stage::Inputs, def_line, "no case".into()));
            skip(line, reason, out);
        }
    }

    /// `<module>__<kernel>`, or `<module>__<function>__<kernel>` in a function.
    fn case_name(&self, k: &KernelDef, name: &str) -> String {
        match &self.module.scopes[k.scope].kind {
            ScopeKind::Function { name: f, .. } => format!("{}__{f}__{name}", self.stem),
            ScopeKind::Module | ScopeKind::Class => format!("{}__{name}", self.stem),
        }
    }

    /// Where `def` is (a decorated function's range starts at its first decorator).
    fn def_offset(&self, k: &KernelDef) -> u32 {
        let start = u32::from(k.def.start()) as usize;
        let needle = format!("def {}", k.def.name);
        self.source[start..]
            .find(&needle)
            .map_or(start, |i| start + i) as u32
    }

    /// The kernel's `def` through its last line, dedented, its docstring's lines blank.
    fn kernel_text(&self, k: &KernelDef, def_offset: u32) -> Result<String, String> {
        let first = self.lines.line_of(def_offset) as usize;
        let last = self.lines.line_of(u32::from(k.def.end()).saturating_sub(1)) as usize;
        let all: Vec<&str> = self.source.lines().collect();
        let indent: String = all[first - 1]
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        let doc = match k.def.body.first() {
            Some(ast::Stmt::Expr(e)) if matches!(&*e.value, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_))) => {
                Some((
                    self.line(e) as usize,
                    self.lines.line_of(u32::from(e.end()).saturating_sub(1)) as usize,
                ))
            }
            _ => None,
        };
        let mut text = String::new();
        for (i, line) in all[first - 1..last].iter().enumerate() {
            let n = first + i;
            if doc.is_some_and(|(a, b)| (a..=b).contains(&n)) {
                text.push('\n');
                continue;
            }
            let stripped = line
                .strip_prefix(indent.as_str())
                .unwrap_or(line.trim_start());
            text.push_str(stripped);
            text.push('\n');
        }
        if k.def.body.len() == usize::from(doc.is_some()) {
            return Err("the kernel has no statement but its docstring".into());
        }
        Ok(text)
    }

    fn user_input(&self, param: &str) -> Option<Result<String, String>> {
        if let Some((_, e)) = self.options.inputs.iter().rev().find(|(p, _)| p == param) {
            return Some(Ok(e.clone()));
        }
        self.options
            .shapes
            .iter()
            .rev()
            .find(|(p, _)| p == param)
            .map(|(_, t)| t.spelling(&mut Vec::new(), param))
    }

    /// Every call of kernel `k` in the file: direct, through `code_and_output(k, args, **cfg)`
    /// or `run_example(k, baseline, args)`. A kernel defined in a function is called from that
    /// function (or a function nested in it).
    fn call_sites<'m>(&'m self, k: &KernelDef, name: &str) -> Vec<CallSite<'m>> {
        let mut out = Vec::new();
        for (s, scope) in self.module.scopes.iter().enumerate() {
            if k.scope != 0 && !self.within(s, k.scope) {
                continue;
            }
            for call in &scope.calls {
                let at = At {
                    scope: s,
                    offset: u32::from(call.start()),
                };
                let is_k = |e: &ast::Expr| matches!(e, ast::Expr::Name(n) if n.id.as_str() == name);
                let callee = match call.func.as_ref() {
                    ast::Expr::Name(n) => n.id.as_str(),
                    ast::Expr::Attribute(a) => a.attr.as_str(),
                    _ => continue,
                };
                if is_k(&call.func) {
                    out.push(CallSite {
                        args: call.args.clone(),
                        config: Vec::new(),
                        at,
                    });
                    continue;
                }
                let (args_expr, config) = match (callee, call.args.first()) {
                    ("code_and_output", Some(f)) if is_k(f) => {
                        (call.args.get(1), call.keywords.iter().collect())
                    }
                    ("run_example", Some(f)) if is_k(f) => (
                        call.args.get(2).or_else(|| {
                            call.keywords
                                .iter()
                                .find(|kw| kw.arg.as_deref() == Some("args"))
                                .map(|kw| &kw.value)
                        }),
                        Vec::new(),
                    ),
                    _ => continue,
                };
                let Some(args_expr) = args_expr else { continue };
                let args = match args_expr {
                    ast::Expr::Tuple(t) => t.elts.clone(),
                    ast::Expr::List(l) => l.elts.clone(),
                    other => vec![ast::Expr::Starred(ast::ExprStarred {
                        range: other.range(),
                        value: Box::new(other.clone()),
                        ctx: ast::ExprContext::Load,
                    })],
                };
                out.push(CallSite { args, config, at });
            }
        }
        out
    }

    fn within(&self, mut s: usize, ancestor: usize) -> bool {
        loop {
            if s == ancestor {
                return true;
            }
            match self.module.scopes[s].parent {
                Some(p) => s = p,
                None => return false,
            }
        }
    }

    /// One case script for kernel `k` from one call (or the user's inputs alone), validated by
    /// the frontend; the error is a line of the user's file and a reason.
    fn case(
        &self,
        k: &KernelDef,
        name: &str,
        params: &[String],
        site: Option<&CallSite>,
        body: &str,
        def_line: u32,
    ) -> Result<(String, String, String), (Stage, u32, String)> {
        let ev = self.eval();
        let site_line = site.map_or(def_line, |s| self.lines.line_of(s.at.offset));
        let at_site = |reason: String| (Stage::Inputs, site_line, reason);
        // The call's argument values (a starred sequence expanded).
        let mut args = Vec::new();
        if let Some(site) = site {
            for a in &site.args {
                match a {
                    ast::Expr::Starred(s) => {
                        match ev.eval(&s.value, site.at, 0).map_err(at_site)? {
                            Val::Seq(v) => args.extend(v.into_iter().map(Ok)),
                            _ => {
                                return Err(at_site(
                                    "the call's arguments are not a sequence".into(),
                                ));
                            }
                        }
                    }
                    other => args.push(ev.eval(other, site.at, 0)),
                }
            }
            if args.len() > params.len() {
                return Err(at_site(format!(
                    "the call passes {} arguments, `{name}` takes {}",
                    args.len(),
                    params.len()
                )));
            }
        }
        let mut notes = Vec::new();
        let mut inputs = Vec::new();
        let mut call_args = Vec::new();
        let mut from_user = false;
        for (i, p) in params.iter().enumerate() {
            if let Some(given) = self.user_input(p) {
                let spelled = given.map_err(at_site)?;
                inputs.push(format!("{p} = {spelled}"));
                call_args.push(p.clone());
                from_user = true;
                continue;
            }
            let Some(v) = args.get(i) else {
                return Err(at_site(format!("no argument for parameter `{p}`")));
            };
            match v.clone().map_err(at_site)? {
                Val::Tensor(t) => {
                    let spelled = t.spelling(&mut notes, p).map_err(at_site)?;
                    inputs.push(format!("{p} = {spelled}"));
                    call_args.push(p.clone());
                }
                Val::Int(n) => call_args.push(n.to_string()),
                // A float literal in its shortest round-trip spelling (`1.0`, `0.1`).
                Val::Float(f) if f.is_finite() => call_args.push(format!("{f:?}")),
                Val::Bool(b) => call_args.push(if b { "True" } else { "False" }.into()),
                other => {
                    return Err(at_site(format!(
                        "argument `{p}` is {}, not a tensor, an int, a finite float or a bool (case scripts take those)",
                        kind(&other)
                    )));
                }
            }
        }
        let chosen = self
            .config(k, site, &ev)
            .map_err(|(l, r)| (Stage::Config, l.unwrap_or(def_line), r))?;
        // How the values were read (a loop's or a `@parametrize`'s first value), before what
        // the inputs' spelling says.
        let mut notes = {
            let mut read = ev.take_notes();
            read.append(&mut notes);
            read
        };
        notes.dedup();
        let inputs_from = match (site, from_user) {
            (Some(_), false) => format!("the call at {}:{site_line}", self.path),
            (Some(_), true) => {
                format!("the call at {}:{site_line} and the command line", self.path)
            }
            (None, _) => "the command line".to_string(),
        };
        let draft = Draft {
            name,
            def_line,
            site_line,
            inputs_from,
            notes,
            inputs,
            call_args,
            body,
            uses_device: names_device(&k.def.body),
        };
        let (config, config_from) = match chosen {
            Chosen::Given(config, from) => (config, from),
            Chosen::Default { keys, from, driven } => {
                self.default_config(&draft, keys, from, driven)?
            }
        };
        let script = self.script(&draft, &config, &config_from)?;
        Ok((script, config_from, draft.inputs_from))
    }

    /// Completes a config without `block_sizes` with Helion's default block sizes, asked of
    /// [`HelionDefaults`] on a script whose sizes are placeholders (binding a kernel reads no
    /// config); without one the kernel is not imported.
    fn default_config(
        &self,
        draft: &Draft<'_>,
        keys: Vec<String>,
        from: String,
        driven: usize,
    ) -> Result<(String, String), (Stage, u32, String)> {
        let mut guard = self.defaults.borrow_mut();
        let Some(defaults) = guard.as_mut() else {
            return Err((
                Stage::Config,
                draft.def_line,
                format!(
                    "{from}, and the kernel has config-driven blocks: their sizes would be \
                     Helion's defaults, which this import does not ask real Helion for; give a \
                     config with --config"
                ),
            ));
        };
        let spell = |sizes: &[i64]| {
            let list: Vec<String> = sizes.iter().map(i64::to_string).collect();
            let mut all = vec![format!("block_sizes=[{}]", list.join(", "))];
            all.extend(keys.iter().cloned());
            format!("helion.Config({})", all.join(", "))
        };
        // The frontend's block table decides how many sizes the kernel takes (a 2-D `hl.tile`
        // registers two); `driven` is this importer's syntactic estimate, tried first.
        let placeholder_for = |n: usize| {
            self.script(
                draft,
                &spell(&vec![1; n]),
                "placeholders (Helion's default is asked for)",
            )
        };
        let placeholder = match placeholder_for(driven) {
            Ok(script) => script,
            Err(first) => (0..=MAX_BLOCK_IDS)
                .filter(|&n| n != driven)
                .find_map(|n| placeholder_for(n).ok())
                .ok_or(first)?,
        };
        let (sizes, build) = defaults.block_sizes(&placeholder).map_err(|why| {
            (
                Stage::Config,
                draft.def_line,
                format!("{from}, and Helion gave no default block sizes: {why}"),
            )
        })?;
        Ok((
            spell(&sizes),
            format!("{from}; block sizes: {build}'s default config"),
        ))
    }

    /// The case script of `draft` under `config`, validated by the frontend; a refusal is mapped
    /// back to the user's file.
    fn script(
        &self,
        draft: &Draft<'_>,
        config: &str,
        config_from: &str,
    ) -> Result<String, (Stage, u32, String)> {
        let Draft {
            name,
            def_line,
            site_line,
            body,
            ..
        } = *draft;
        let mut script = format!(
            "# Imported by `pallas-diff import` from {}:{def_line} (kernel `{name}`).\n\
             # config: {config_from}; inputs: {}.\n",
            self.path, draft.inputs_from
        );
        for n in &draft.notes {
            script.push_str(&format!("# {n}\n"));
        }
        script.push_str("import torch\nimport helion\nimport helion.language as hl\n");
        if draft.uses_device {
            script.push_str("from helion._testing import DEVICE\n");
        }
        script.push_str("\n\n@helion.kernel(\n    backend=\"pallas\",\n    static_shapes=True,\n");
        script.push_str(&format!("    config={config},\n)\n"));
        let kernel_first_line = script.lines().count() as u32 + 1;
        script.push_str(body);
        script.push_str("\n\ntorch.manual_seed(0)\n");
        for i in &draft.inputs {
            script.push_str(i);
            script.push('\n');
        }
        script.push_str(&format!("{name}({})\n", draft.call_args.join(", ")));
        lang::frontend::parse_case(&script, self.path).map_err(|e| {
            let kernel_lines = body.lines().count() as u32;
            if (kernel_first_line..kernel_first_line + kernel_lines).contains(&e.span.line) {
                let line = def_line + (e.span.line - kernel_first_line);
                (
                    Stage::Frontend,
                    line,
                    format!("the frontend refuses `{}`: {}", e.construct, e.message),
                )
            } else {
                (
                    Stage::Frontend,
                    site_line,
                    format!(
                        "the frontend refuses the case's `{}` (case line {}:{}): {}",
                        e.construct, e.span.line, e.span.col, e.message
                    ),
                )
            }
        })?;
        Ok(script)
    }

    /// The kernel's config: the decorator's, the call's keywords, `block_sizes=[]` when no
    /// block is config-driven, or the user's.
    fn config(
        &self,
        k: &KernelDef,
        site: Option<&CallSite>,
        ev: &Eval<'_>,
    ) -> Result<Chosen, (Option<u32>, String)> {
        let deco_at = At {
            scope: k.scope,
            offset: u32::from(k.decorator.start()),
        };
        let deco_kw = |kw: &str| match &k.decorator {
            ast::Expr::Call(c) => c
                .keywords
                .iter()
                .find(|x| x.arg.as_deref() == Some(kw))
                .map(|x| &x.value),
            _ => None,
        };
        let config_call =
            |e: &ast::Expr, at: At, what: &str| -> Result<Chosen, (Option<u32>, String)> {
                let ast::Expr::Call(c) = e else {
                    return Err((
                        Some(self.line(e)),
                        format!("{what} is not a `helion.Config(...)`"),
                    ));
                };
                let keys = self.config_keys(c.keywords.iter(), at, ev)?;
                Ok(complete(
                    k,
                    keys,
                    format!("{what} ({}:{})", self.path, self.line(e)),
                ))
            };
        if let Some(e) = deco_kw("config") {
            return config_call(e, deco_at, "the decorator's config");
        }
        if let Some(
            ast::Expr::List(ast::ExprList { elts, .. })
            | ast::Expr::Tuple(ast::ExprTuple { elts, .. }),
        ) = deco_kw("configs")
            && let Some(first) = elts.first()
        {
            return config_call(first, deco_at, "the first of the decorator's configs");
        }
        if let Some(site) = site
            && !site.config.is_empty()
        {
            let keys = self.config_keys(site.config.iter().copied(), site.at, ev)?;
            let line = self.lines.line_of(site.at.offset);
            return Ok(complete(
                k,
                keys,
                format!("the keywords of the call at {}:{line}", self.path),
            ));
        }
        if let Some(c) = &self.options.config {
            return Ok(Chosen::Given(c.clone(), "the command line".into()));
        }
        let driven = config_driven_tiles(&k.def.body);
        if driven == 0 {
            return Ok(Chosen::Given(
                "helion.Config(block_sizes=[])".into(),
                "none in the file; every block is fixed, so Helion's default is `block_sizes=[]`"
                    .into(),
            ));
        }
        Ok(Chosen::Default {
            keys: Vec::new(),
            from: "no config in the file (decorator `config=`/`configs=` or a call's keywords)"
                .into(),
            driven,
        })
    }

    /// The `k=v` entries of a `helion.Config` from keywords, each value evaluated
    /// (`block_size=` read as `block_sizes`); a `**config` spreads the keys of the
    /// `helion.Config(...)` or `dict(...)` it evaluates to (`**_worklist_config([16])`, a helper
    /// of the file).
    fn config_keys<'k>(
        &self,
        keywords: impl Iterator<Item = &'k ast::Keyword>,
        at: At,
        ev: &Eval<'_>,
    ) -> Result<Vec<String>, (Option<u32>, String)> {
        let mut entries: Vec<(String, Val, u32)> = Vec::new();
        for kw in keywords {
            let line = self.line(kw);
            let v = ev.eval(&kw.value, at, 0).map_err(|r| (Some(line), r))?;
            match (kw.arg.as_deref(), v) {
                (Some(key), v) => entries.push((key.to_string(), v, line)),
                (None, Val::Map(map)) => {
                    entries.extend(map.into_iter().map(|(k, v)| (k, v, line)));
                }
                (None, _) => {
                    return Err((
                        Some(line),
                        "`**` of something other than a `helion.Config(...)` or dict the importer reads"
                            .into(),
                    ));
                }
            }
        }
        let mut parts = Vec::new();
        for (key, v, line) in entries {
            let (key, v) = match (key.as_str(), v) {
                ("block_size", Val::Int(b)) => ("block_sizes", Val::Seq(vec![Val::Int(b)])),
                ("block_size", v) => ("block_sizes", v),
                (_, v) => (key.as_str(), v),
            };
            let spelled = python(&v).ok_or_else(|| {
                (
                    Some(line),
                    format!("config key `{key}`: a value the importer does not spell"),
                )
            })?;
            parts.push(format!("{key}={spelled}"));
        }
        Ok(parts)
    }
}

/// A config's keys from `from`, completed where that is known without Helion
/// (`block_sizes=[]` when every block is fixed), else left to Helion's default block sizes.
fn complete(k: &KernelDef, mut keys: Vec<String>, from: String) -> Chosen {
    if keys.iter().any(|kv| kv.starts_with("block_sizes=")) {
        return Chosen::Given(format!("helion.Config({})", keys.join(", ")), from);
    }
    let driven = config_driven_tiles(&k.def.body);
    if driven == 0 {
        keys.insert(0, "block_sizes=[]".into());
        return Chosen::Given(format!("helion.Config({})", keys.join(", ")), from);
    }
    Chosen::Default {
        keys,
        from: format!("{from} gives no block_sizes"),
        driven,
    }
}

/// `hl.tile(...)` loops without `block_size=` in a kernel body (each takes config entries),
/// plus `hl.register_block_size` calls.
fn config_driven_tiles(body: &[ast::Stmt]) -> usize {
    use rustpython_ast::Visitor;
    #[derive(Default)]
    struct Tiles(usize);
    impl Visitor for Tiles {
        fn visit_expr_call(&mut self, node: ast::ExprCall) {
            if let ast::Expr::Attribute(a) = node.func.as_ref()
                && matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "hl")
            {
                let fixed = node
                    .keywords
                    .iter()
                    .any(|k| k.arg.as_deref() == Some("block_size"));
                match a.attr.as_str() {
                    "tile" if !fixed => self.0 += 1,
                    "register_block_size" => self.0 += 1,
                    _ => {}
                }
            }
            self.generic_visit_expr_call(node);
        }
    }
    let mut t = Tiles::default();
    for s in body {
        t.visit_stmt(s.clone());
    }
    t.0
}

/// Whether a kernel body reads the name `DEVICE` (`from helion._testing import DEVICE` in the
/// user's file, so the case script must import it too or the frontend refuses it).
fn names_device(body: &[ast::Stmt]) -> bool {
    use rustpython_ast::Visitor;
    #[derive(Default)]
    struct Device(bool);
    impl Visitor for Device {
        fn visit_expr_name(&mut self, node: ast::ExprName) {
            self.0 |= node.id.as_str() == "DEVICE";
        }
        // The visitor stops at keywords by default; `device=DEVICE` is one.
        fn visit_keyword(&mut self, node: ast::Keyword) {
            self.visit_expr(node.value);
        }
    }
    let mut v = Device::default();
    for s in body {
        v.visit_stmt(s.clone());
    }
    v.0
}

fn kind(v: &Val) -> &'static str {
    match v {
        Val::Int(_) => "an int",
        Val::Float(_) => "a float",
        Val::Bool(_) => "a bool",
        Val::Str(_) => "a string",
        Val::None => "None",
        Val::Dtype(_) => "a dtype",
        Val::Device => "a device",
        Val::Seq(_) => "a tuple or list",
        Val::Tensor(_) => "a tensor",
        Val::Map(_) => "a config or dict",
    }
}

/// A config value as Python source.
fn python(v: &Val) -> Option<String> {
    Some(match v {
        Val::Int(i) => i.to_string(),
        Val::Float(f) => format!("{f:?}"),
        Val::Bool(b) => if *b { "True" } else { "False" }.into(),
        Val::Str(s) => format!("{s:?}"),
        Val::None => "None".into(),
        Val::Seq(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Val::Dtype(_) | Val::Device | Val::Tensor(_) | Val::Map(_) => return None,
    })
}
