//! Calls in expressions: `hl.arange`, `hl.zeros`, `hl.full`, `hl.load`, the host allocations
//! (`torch.empty`, `torch.zeros` and their `_like` forms), `dtype=` keywords, and the tensor
//! methods (`.size`, `.float`, `.to`, `.sum`, the views, `.permute`).

use super::KernelParser;
use crate::frontend::FrontendError;
use crate::frontend::module::{dotted, literal_int};
use crate::frontend::wellformed::NameKind;
use crate::ir::{AllocKind, AllocShape, DType, Expr, ExprKind, ViewOp};
use rustpython_parser::ast;

impl KernelParser<'_, '_> {
    pub(super) fn call_expr(&mut self, c: &ast::ExprCall) -> Result<ExprKind, FrontendError> {
        let func = dotted(&c.func);
        match func.as_deref() {
            Some(f) if super::ops::is_op_function(f) => return self.op_call(c, f),
            Some("float") => return Ok(ExprKind::Float(self.float_call(c)?)),
            Some("hl.specialize") => {
                // Under `static_shapes=True` every size and int argument is already a
                // compile-time constant when Helion traces the kernel: specializing one changes
                // nothing, so `hl.specialize(v)` reads as `v`.
                if self.depth > 0 {
                    return Err(self.err(
                        c,
                        "hl.specialize",
                        "hl.specialize is host code: call it outside the hl.tile/hl.grid loops",
                    ));
                }
                self.no_keywords(c, "hl.specialize")?;
                let [v] = c.args.as_slice() else {
                    return Err(self.err(
                        c,
                        "hl.specialize",
                        "hl.specialize takes one host int (`hl.specialize(x.size(0))`)",
                    ));
                };
                let value = self.expr(v)?;
                if !self.is_host_int(&value) {
                    return Err(self.err(v, "hl.specialize", "hl.specialize of a case script takes a host int (a size, an int parameter, or arithmetic of them)"));
                }
                return Ok(value.kind);
            }
            Some(f @ ("min" | "max")) => {
                // Python's `min(a, b)`/`max(a, b)` of scalar ints: a data-dependent loop's
                // bound (`hl.tile(start, min(end, tile.end))`). Of more operands, an iterable
                // or keywords, it is another function.
                self.no_keywords(c, f)?;
                let [a, b] = c.args.as_slice() else {
                    return Err(self.err(
                        c,
                        &format!("{f}(...)"),
                        format!("`{f}` of a case script takes two scalar ints"),
                    ));
                };
                let op = if f == "min" {
                    crate::ir::TensorOp::IntMin
                } else {
                    crate::ir::TensorOp::IntMax
                };
                return Ok(ExprKind::Op {
                    op,
                    args: vec![self.expr(a)?, self.expr(b)?],
                });
            }
            Some(f @ ("torch.add" | "torch.sub" | "torch.mul")) => {
                // `torch.add(a, b, alpha=k)` is `a + b * k` in torch (and `torch.sub` is
                // `a - b * k`): desugared to the IR's arithmetic, which the renderer writes.
                self.require_device(c, f)?;
                let [a, b] = c.args.as_slice() else {
                    return Err(self.err(c, f, format!("{f} takes two operands")));
                };
                let mut alpha: Option<&ast::Expr> = None;
                for kw in &c.keywords {
                    match kw.arg.as_ref().map(|a| a.as_str()) {
                        Some("alpha") if f != "torch.mul" && alpha.is_none() => {
                            alpha = Some(&kw.value)
                        }
                        Some(_) | None => return Err(self.unmodelled_keyword(kw, f)),
                    }
                }
                let lhs = self.expr(a)?;
                let mut rhs = self.expr(b)?;
                if let Some(k) = alpha {
                    let span = rhs.span;
                    rhs = Expr::new(
                        ExprKind::Binary {
                            op: crate::ir::BinOp::Mul,
                            lhs: Box::new(rhs),
                            rhs: Box::new(self.expr(k)?),
                        },
                        span,
                    );
                }
                let op = match f {
                    "torch.add" => crate::ir::BinOp::Add,
                    "torch.sub" => crate::ir::BinOp::Sub,
                    _ => crate::ir::BinOp::Mul,
                };
                return Ok(ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                });
            }
            Some("hl.register_block_size") => {
                // Helion registers a config-driven block id here and reads its size from the
                // config's `block_sizes` (the next entry in registration order). The config is
                // static, so the call reads as that int: a tile with `block_size=` the result
                // is a tile of that fixed size, and the entry leaves `block_sizes`.
                if self.depth > 0 {
                    return Err(self.err(c, "hl.register_block_size", "hl.register_block_size is host code: call it outside the hl.tile/hl.grid loops"));
                }
                self.no_keywords(c, "hl.register_block_size")?;
                if c.args.is_empty() || c.args.len() > 2 {
                    return Err(self.err(
                        c,
                        "hl.register_block_size",
                        "hl.register_block_size takes (max) or (min, max) host ints",
                    ));
                }
                for a in &c.args {
                    let bound = self.expr(a)?;
                    if !self.is_host_int(&bound) {
                        return Err(self.err(a, "hl.register_block_size", "the bounds of hl.register_block_size are host ints (a size, an int parameter, or arithmetic of them)"));
                    }
                }
                let index = self.config_ids;
                let Some(&size) = self.config_sizes.get(index) else {
                    return Err(self.err(c, "hl.register_block_size", format!("hl.register_block_size registers config-driven block id {index}, but block_sizes has {} entries", self.config_sizes.len())));
                };
                self.config_ids += 1;
                self.registered.push(index);
                return Ok(ExprKind::Int(size));
            }
            Some("hl.arange") => {
                self.dtype_kw(c, "hl.arange", false, false)
                    .and_then(|d| match d {
                        None => Ok(()),
                        Some(_) => Err(self.err(
                            c,
                            "hl.arange",
                            "hl.arange uses the index dtype; dtype= is not part of a case script",
                        )),
                    })?;
                let mut args = c
                    .args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter();
                return match (args.next(), args.next(), args.next(), args.next()) {
                    (Some(end), None, None, None) => Ok(ExprKind::Arange {
                        start: None,
                        end: Box::new(end),
                        step: None,
                    }),
                    (Some(s), Some(end), None, None) => Ok(ExprKind::Arange {
                        start: Some(Box::new(s)),
                        end: Box::new(end),
                        step: None,
                    }),
                    (Some(s), Some(end), Some(st), None) => Ok(ExprKind::Arange {
                        start: Some(Box::new(s)),
                        end: Box::new(end),
                        step: Some(Box::new(st)),
                    }),
                    _ => Err(self.err(
                        c,
                        "hl.arange",
                        "hl.arange takes (end), (start, end) or (start, end, step)",
                    )),
                };
            }
            Some(f @ ("hl.zeros" | "hl.full")) => {
                self.require_device(c, f)?;
                let dtype = self.dtype_kw(c, f, true, false)?.unwrap_or(DType::Float32);
                return match (f, c.args.as_slice()) {
                    ("hl.zeros", [shape]) => Ok(ExprKind::Zeros {
                        shape: self.expr_list(shape, f)?,
                        dtype,
                    }),
                    ("hl.full", [shape, v]) => Ok(ExprKind::Full {
                        shape: self.expr_list(shape, f)?,
                        value: Box::new(self.expr(v)?),
                        dtype,
                    }),
                    _ => Err(self.err(
                        c,
                        f,
                        format!(
                            "{f} takes a shape list{}",
                            if f == "hl.full" { " and a value" } else { "" }
                        ),
                    )),
                };
            }
            Some("hl.load") => {
                self.require_device(c, "hl.load")?;
                self.no_keywords(c, "hl.load")?;
                let [t, idx] = c.args.as_slice() else {
                    return Err(self.err(c, "hl.load", "hl.load takes (tensor, [indices]); an extra mask is not part of a case script"));
                };
                let tensor = self.host_tensor_name(t, "hl.load")?;
                return Ok(ExprKind::Load {
                    tensor,
                    indices: self.index_list(idx)?,
                    explicit: true,
                });
            }
            Some("torch.zeros_like") if self.depth > 0 => {
                // Inside a device loop Helion makes a device block of the operand's shape:
                // `hl.zeros(shape, dtype)`, with the shape read off a subscript of a host
                // tensor (a tile is its dim, an int drops one, `:` is the tensor's size).
                let f = "torch.zeros_like";
                let [t] = c.args.as_slice() else {
                    return Err(self.err(c, f, format!("{f} takes one tensor")));
                };
                let like = self.expr(t)?;
                let shape = self.shape_of_load(&like).ok_or_else(|| {
                    self.err(t, f, format!("{f} inside a device loop takes a subscript of a host tensor by tiles, ints, grid indices and `:` (its shape is then known): use hl.zeros([...]) otherwise"))
                })?;
                let dtype = match self.dtype_kw(c, f, false, true)? {
                    Some(d) => d,
                    None => self.known_of(&like).dtype.ok_or_else(|| {
                        self.err(t, f, format!("the dtype of the operand of {f} is not known statically: pass dtype="))
                    })?,
                };
                return Ok(ExprKind::Zeros { shape, dtype });
            }
            Some(f @ ("torch.empty" | "torch.zeros" | "torch.empty_like" | "torch.zeros_like")) => {
                if self.depth > 0 {
                    return Err(self.err(
                        c,
                        f,
                        format!(
                            "{f} allocates on the host: call it outside the hl.tile/hl.grid loops"
                        ),
                    ));
                }
                let kind = if f.contains("empty") {
                    AllocKind::Empty
                } else {
                    AllocKind::Zeros
                };
                let dtype = self.dtype_kw(c, f, false, true)?;
                let shape = if f.ends_with("_like") {
                    let [t] = c.args.as_slice() else {
                        return Err(self.err(c, f, format!("{f} takes one tensor")));
                    };
                    AllocShape::Like(Box::new(self.expr(t)?))
                } else {
                    AllocShape::Dims(self.dims_args(&c.args, f)?)
                };
                return Ok(ExprKind::Alloc { kind, shape, dtype });
            }
            _ => {}
        }
        let ast::Expr::Attribute(attr) = &*c.func else {
            let name = func.unwrap_or_else(|| "call".into());
            return Err(self.err(
                c,
                &name,
                format!("`{name}(...)` is not part of a case script"),
            ));
        };
        let method = attr.attr.to_string();
        if super::ops::is_op_method(&method) || (method == "sum" && !Self::plain_sum(c)) {
            return self.op_method(c, &attr.value, &method);
        }
        if let Some(module) =
            dotted(&attr.value).filter(|m| m == "torch" || m == "hl" || m == "helion")
        {
            return Err(self.err(
                c,
                &format!("{module}.{method}"),
                format!("`{module}.{method}` is not part of a case script"),
            ));
        }
        if let m @ ("new_empty" | "new_zeros") = method.as_str() {
            // `t.new_empty(shape)` is `torch.empty(shape, dtype=t.dtype)` (torch's `new_*`
            // take the tensor's dtype and device; the device is every engine's own).
            let f = format!(".{m}");
            if self.depth > 0 && m == "new_empty" {
                return Err(self.err(c, &f, format!("{f} inside a device loop is a block of undefined values: use hl.zeros or allocate on the host")));
            }
            let like = self.expr(&attr.value)?;
            let dtype = match self.dtype_kw(c, &f, false, true)? {
                Some(d) => d,
                None => self.known_of(&like).dtype.ok_or_else(|| {
                    self.err(&*attr.value, &f, format!("the dtype of the tensor {f} is called on is not known statically: pass dtype="))
                })?,
            };
            // Inside a device loop Helion makes a device block: `hl.zeros(shape, dtype)`.
            if self.depth > 0 {
                return Ok(ExprKind::Zeros {
                    shape: self.dims_args(&c.args, &f)?,
                    dtype,
                });
            }
            let kind = if m == "new_empty" {
                AllocKind::Empty
            } else {
                AllocKind::Zeros
            };
            return Ok(ExprKind::Alloc {
                kind,
                shape: AllocShape::Dims(self.dims_args(&c.args, &f)?),
                dtype: Some(dtype),
            });
        }
        let value = Box::new(self.expr(&attr.value)?);
        if !c.keywords.is_empty() && !matches!(method.as_str(), "sum") {
            return Err(self.err(
                c,
                &format!(".{method}"),
                format!("keyword arguments of `.{method}` are not part of a case script"),
            ));
        }
        let int_arg = |this: &Self, construct: &str| -> Result<i64, FrontendError> {
            match c.args.as_slice() {
                [a] => literal_int(a).ok_or_else(|| {
                    this.err(a, construct, format!("{construct} takes an int literal"))
                }),
                _ => Err(this.err(c, construct, format!("{construct} takes one int literal"))),
            }
        };
        Ok(match method.as_str() {
            "size" if c.args.is_empty() => {
                return Err(self.err(c, ".size", "`.size()` is a list of sizes: index it (`x.size()[0]`, or `x.size(0)`), unpack it (`m, n = x.size()`) or pass it where a list of sizes is expected"));
            }
            "size" => ExprKind::Size {
                value,
                dim: int_arg(self, ".size")?,
            },
            "float" if c.args.is_empty() => ExprKind::Cast {
                value,
                dtype: DType::Float32,
            },
            "to" => {
                let [d] = c.args.as_slice() else {
                    return Err(self.err(c, ".to", ".to takes one dtype"));
                };
                ExprKind::Cast {
                    value,
                    dtype: self.dtype_arg(d)?,
                }
            }
            "sum" => {
                let dim = match (c.args.as_slice(), c.keywords.as_slice()) {
                    ([a], []) => literal_int(a),
                    ([], [kw]) if kw.arg.as_ref().map(|a| a.as_str()) == Some("dim") => {
                        literal_int(&kw.value)
                    }
                    _ => None,
                };
                let dim = dim.ok_or_else(|| self.err(c, ".sum", "`.sum` takes one int dim (`.sum(dim=0)`); full reductions and keepdim are not part of a case script"))?;
                ExprKind::Sum { value, dim }
            }
            "reshape" | "view" => {
                // torch refuses `.view()` and `.reshape()` with no arguments (Helion 1.5.1:
                // TorchOpTracingError); a 0-d shape is `()`.
                if c.args.is_empty() {
                    return Err(self.err(
                        c,
                        &format!(".{method}"),
                        format!("`.{method}` takes the new shape (`()` for a 0-d result)"),
                    ));
                }
                let dims = self.dims_args(&c.args, &format!(".{method}"))?;
                ExprKind::View {
                    value,
                    op: if method == "view" {
                        ViewOp::View(dims)
                    } else {
                        ViewOp::Reshape(dims)
                    },
                }
            }
            "squeeze" => ExprKind::View {
                value,
                op: ViewOp::Squeeze(int_arg(self, ".squeeze")?),
            },
            "unsqueeze" => ExprKind::View {
                value,
                op: ViewOp::Unsqueeze(int_arg(self, ".unsqueeze")?),
            },
            "view_as" => {
                let [o] = c.args.as_slice() else {
                    return Err(self.err(c, ".view_as", ".view_as takes one tensor"));
                };
                ExprKind::View {
                    value,
                    op: ViewOp::ViewAs(Box::new(self.expr(o)?)),
                }
            }
            "permute" => {
                let dims = match c.args.as_slice() {
                    [one @ (ast::Expr::List(_) | ast::Expr::Tuple(_))] => match one {
                        ast::Expr::List(ast::ExprList { elts, .. })
                        | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => {
                            elts.iter().map(literal_int).collect::<Option<Vec<_>>>()
                        }
                        _ => None,
                    },
                    args => args.iter().map(literal_int).collect::<Option<Vec<_>>>(),
                };
                ExprKind::Permute {
                    value,
                    dims: dims
                        .ok_or_else(|| self.err(c, ".permute", ".permute takes int literals"))?,
                }
            }
            other => {
                return Err(self.err(
                    c,
                    &format!(".{other}"),
                    format!("method `.{other}()` is not part of a case script"),
                ));
            }
        })
    }

    /// Whether `.sum(...)` is the version-1 form, one int dim (`.sum(0)`, `.sum(dim=0)`).
    fn plain_sum(c: &ast::ExprCall) -> bool {
        match (c.args.as_slice(), c.keywords.as_slice()) {
            ([a], []) => literal_int(a).is_some(),
            ([], [kw]) => {
                kw.arg.as_ref().map(|a| a.as_str()) == Some("dim")
                    && literal_int(&kw.value).is_some()
            }
            _ => false,
        }
    }

    /// Whether `e` is a host int: an int literal, a size, a host-int name, or `+ - * //` of
    /// them.
    fn is_host_int(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Size { .. } => true,
            ExprKind::Name(n) => self.names.get(n.as_str()) == Some(&NameKind::HostInt),
            ExprKind::Binary { op, lhs, rhs } => {
                !matches!(op, crate::ir::BinOp::Div)
                    && self.is_host_int(lhs)
                    && self.is_host_int(rhs)
            }
            ExprKind::Float(_)
            | ExprKind::TileAttr { .. }
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
            | ExprKind::Alloc { .. } => false,
        }
    }

    /// Refuses every keyword of `c`: a keyword the subset does not model is never dropped
    /// (`hl.load(..., extra_mask=m)` read without its mask would be another kernel).
    pub(super) fn no_keywords(&self, c: &ast::ExprCall, func: &str) -> Result<(), FrontendError> {
        match c.keywords.first() {
            None => Ok(()),
            Some(kw) => Err(self.unmodelled_keyword(kw, func)),
        }
    }

    /// The refusal of a keyword argument of `func` the subset does not model (or of a
    /// `**kwargs`), at the keyword.
    pub(super) fn unmodelled_keyword(&self, kw: &ast::Keyword, func: &str) -> FrontendError {
        match kw.arg.as_ref().map(|a| a.as_str()) {
            Some(name) => self.err(
                kw,
                name,
                format!("keyword `{name}` of {func} is not part of a case script: it is not modelled, and dropping it would check another kernel than the file's"),
            ),
            None => self.err(kw, "**", "**kwargs are not part of a case script"),
        }
    }

    /// The `dtype=` keyword of `c` (and, where `device_ok`, a `device=t.device` keyword, which
    /// names the device of a tensor: every engine runs the case on its own device, so it means
    /// nothing to the IR and is dropped; any other `device=` is refused).
    fn dtype_kw(
        &mut self,
        c: &ast::ExprCall,
        func: &str,
        required: bool,
        device_ok: bool,
    ) -> Result<Option<DType>, FrontendError> {
        let mut dtype = None;
        for kw in &c.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("dtype") => dtype = Some(self.dtype_arg(&kw.value)?),
                Some("device") if device_ok => self.device_of_tensor(&kw.value, func)?,
                Some(other) => {
                    return Err(self.err(
                        kw,
                        other,
                        format!("keyword `{other}` of {func} is not part of a case script"),
                    ));
                }
                None => return Err(self.err(kw, "**", "**kwargs are not part of a case script")),
            }
        }
        if required && dtype.is_none() {
            return Err(self.err(c, func, format!("{func} needs dtype=")));
        }
        Ok(dtype)
    }

    /// `device=t.device`: accepted only as the device of a tensor name, and dropped (see
    /// [`Self::dtype_kw`]).
    fn device_of_tensor(&self, v: &ast::Expr, func: &str) -> Result<(), FrontendError> {
        match v {
            // `from helion._testing import DEVICE` (Helion's tests' device), not rebound.
            ast::Expr::Name(n)
                if n.id.as_str() == "DEVICE"
                    && self.globals.iter().any(|g| g == "DEVICE")
                    && !self.names.contains_key("DEVICE") =>
            {
                Ok(())
            }
            ast::Expr::Attribute(a) if a.attr.as_str() == "device" => match &*a.value {
                ast::Expr::Name(n) => match self.names.get(n.id.as_str()) {
                    Some(NameKind::HostTensor) => Ok(()),
                    Some(NameKind::HostInt | NameKind::HostFloat | NameKind::HostBool | NameKind::Tile | NameKind::GridIndex | NameKind::Device) => Err(self.err(v, "device", format!("device= of {func} is the `.device` of a host tensor; `{}` is not one", n.id))),
                    None => Err(self.err(&*a.value, "name", crate::frontend::wellformed::unbound(&n.id))),
                },
                other => Err(self.err(other, "device", format!("device= of {func} is the `.device` of a tensor name (`device=x.device`)"))),
            },
            other => Err(self.err(other, "device", format!("device= of {func} is accepted only as a tensor's device (`device=x.device`): every engine runs the case on its own device"))),
        }
    }

    fn expr_list(&mut self, e: &ast::Expr, construct: &str) -> Result<Vec<Expr>, FrontendError> {
        self.size_entries(e, construct)
    }

    fn dims_args(
        &mut self,
        args: &[ast::Expr],
        construct: &str,
    ) -> Result<Vec<Expr>, FrontendError> {
        match args {
            [one @ (ast::Expr::List(_) | ast::Expr::Tuple(_))] => self.expr_list(one, construct),
            [one] => match self.size_list(one)? {
                Some(sizes) => Ok(sizes),
                None => Ok(vec![self.expr(one)?]),
            },
            _ => self.splice(args),
        }
    }
}

impl KernelParser<'_, '_> {
    /// `float("-inf")`, `float("nan")`, `float("1.5")`: Python's `float` of a string literal,
    /// the spelling Helion kernels use for non-finite constants (an online softmax's running
    /// max, a pad fill). A float of anything else is refused.
    pub(super) fn float_call(&mut self, c: &ast::ExprCall) -> Result<f64, FrontendError> {
        let text = match (c.args.as_slice(), c.keywords.is_empty()) {
            ([ast::Expr::Constant(k)], true) => match &k.value {
                ast::Constant::Str(s) => Some(s.as_str()),
                _ => None,
            },
            _ => None,
        };
        let Some(text) = text else {
            return Err(self.err(
                c,
                "float",
                "`float(...)` of a case script takes one string literal (`float(\"-inf\")`)",
            ));
        };
        crate::ir::float_json::parse_non_finite(text)
            .or_else(|| text.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
            .ok_or_else(|| {
                self.err(
                    c,
                    "float",
                    format!("`float({text:?})` is not a float Python reads"),
                )
            })
    }
}
