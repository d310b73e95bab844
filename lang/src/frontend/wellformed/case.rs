//! What surrounds the kernel: the format version, the call against the parameters, the inputs
//! (names, constructors, method chains), the seed, and the config (its block sizes against the
//! kernel's config-driven block ids).

use super::{Checker, R, Seg, expr_too_deep, key};
use crate::frontend::MAX_EXPR_DEPTH;
use crate::ir::blocks::BlockTable;
use crate::ir::{Arg, CASE_VERSION, Case, Ctor, Input, InputOp, ParamKind, Span};

impl Checker {
    pub(super) fn case(&mut self, case: &Case) -> R {
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
                        // A float parameter passed an int literal is a float in Python too;
                        // the renderer keeps the literal as written.
                        (ParamKind::Float, Arg::Float(v)) => v.is_finite(),
                        (ParamKind::Bool, Arg::Bool(_)) => true,
                        (ParamKind::Float, Arg::Int(_))
                        | (ParamKind::Tensor | ParamKind::Int | ParamKind::Bool, Arg::Float(_))
                        | (ParamKind::Tensor | ParamKind::Bool, Arg::Int(_))
                        | (ParamKind::Tensor | ParamKind::Int | ParamKind::Float, Arg::Bool(_))
                        | (ParamKind::Int | ParamKind::Float | ParamKind::Bool, Arg::Input(_)) => {
                            false
                        }
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
                                ParamKind::Float => "a finite float literal",
                                ParamKind::Bool => "`True` or `False`",
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
            | Ctor::Eye { .. }
            | Ctor::Arange { .. } => Ok(()),
            Ctor::Range { start, end, step } => self.at(key("range"), |c| {
                // torch's own refusals, with its words: a zero step, and a step whose sign leads
                // away from `end` (an empty range, `end == start`, is valid for either sign).
                if *step == 0 {
                    return Err(c.fail(span, "torch.arange", format!("torch.arange({start}, {end}, {step}): step must be nonzero")));
                }
                if (*step > 0 && end < start) || (*step < 0 && end > start) {
                    return Err(c.fail(
                        span,
                        "torch.arange",
                        format!("torch.arange({start}, {end}, {step}): upper bound and larger bound inconsistent with step sign (a range counts up with step > 0 to end >= start, down with step < 0 to end <= start)"),
                    ));
                }
                int32_bounds(c, span, "torch.arange", &[*start, *end])
            }),
            Ctor::Randint { low, high, .. } => self.at(key("randint"), |c| {
                if high <= low {
                    return Err(c.fail(
                        span,
                        "torch.randint",
                        format!("torch.randint({low}, {high}, ...): the range is empty (high <= low)"),
                    ));
                }
                int32_bounds(c, span, "torch.randint", &[*low, *high])
            }),
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
        use crate::ir::settings::{Place, check};
        for (field, place, list) in [
            ("extra", Place::Config, &config.extra),
            ("settings", Place::Decorator, &config.settings),
        ] {
            for (i, s) in list.iter().enumerate() {
                let twice = list[..i].iter().any(|t| t.key == s.key);
                let verdict = if twice {
                    Err(format!("`{}` is given twice", s.key))
                } else {
                    check(place, &s.key, &s.value)
                };
                if let Err(m) = verdict {
                    return self.at_path(&[key(field), Seg::Index(i)], |c| {
                        Err(c.fail(None, &s.key, m))
                    });
                }
            }
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

/// Bounds of an int constructor must be int32 values: the case's int inputs are int32, and a
/// bound past them would make values the dtype cannot hold.
fn int32_bounds(c: &Checker, span: Option<Span>, construct: &str, bounds: &[i64]) -> R {
    match bounds.iter().find(|&&b| i32::try_from(b).is_err()) {
        Some(b) => Err(c.fail(
            span,
            construct,
            format!("{construct}: bound {b} is not an int32 value"),
        )),
        None => Ok(()),
    }
}
