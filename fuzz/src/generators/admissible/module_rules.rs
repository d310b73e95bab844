//! The module-level rules: the case version, identifiers, inputs (constructors that make their
//! shape and dtype, sizes within bounds, no `torch.empty` poison), the call against the
//! parameters, the config's ranges, and the one `return` that ends the kernel body.

use super::MAX_ELEMS;
use lang::ir::blocks::BlockTable;
use lang::ir::{Arg, CASE_VERSION, Case, Ctor, ParamKind, StmtKind};

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

pub(super) fn module_rules(case: &Case) -> Result<(), String> {
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
        // No rows is a boundary shape (every loop over them runs no tile); an empty inner dim
        // is not one the generator draws.
        if ctor_shape.iter().skip(1).any(|&d| d == 0) || shape.iter().skip(1).any(|&d| d == 0) {
            return Err(format!("input `{}` has an empty inner dim", i.name));
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
            Ctor::Ones { .. }
            | Ctor::Zeros { .. }
            | Ctor::Arange { .. }
            | Ctor::Range { .. }
            | Ctor::Eye { .. }
            | Ctor::Randint { .. } => {}
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
            (ParamKind::Float, Arg::Float(v)) => v.is_finite(),
            (ParamKind::Bool, Arg::Bool(_)) => true,
            (ParamKind::Tensor, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_))
            | (ParamKind::Int, Arg::Input(_) | Arg::Float(_) | Arg::Bool(_))
            | (ParamKind::Float, Arg::Input(_) | Arg::Int(_) | Arg::Bool(_))
            | (ParamKind::Bool, Arg::Input(_) | Arg::Int(_) | Arg::Float(_)) => false,
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

pub(super) fn return_rule(case: &Case) -> Result<(), String> {
    let body = &case.kernel.body;
    let returns = body
        .iter()
        .filter(|s| matches!(s.kind, StmtKind::Return(_)))
        .count();
    match body.last().map(|s| &s.kind) {
        Some(StmtKind::Return(values)) if returns == 1 && !values.is_empty() => Ok(()),
        // A kernel that writes its tensor arguments and returns nothing (as production decode
        // kernels update their state caches): its outputs are the tensors it wrote.
        _ if returns == 0 && !case.kernel.written_params().is_empty() => Ok(()),
        _ => Err(
            "the kernel body must end with its one `return` of host tensors, or return nothing and write a tensor argument"
                .into(),
        ),
    }
}
