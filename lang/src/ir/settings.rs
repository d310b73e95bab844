//! Keys a case script passes to Helion that our model does not read: keys of `helion.Config`
//! beyond the four the lowering model reads (`pallas_pre_broadcast`, ...) and keywords of the
//! `@helion.kernel` decorator beyond `backend` and `config` (Helion settings: `static_shapes`,
//! `print_output_code`, ...). They are kept as the script wrote them, rendered back and passed to
//! Helion, so every Helion engine runs the file's kernel; [`Config::unmodelled`] names the one
//! our model cannot honour (the case is then `unsupported` for our engines), and every other key
//! is refused by the frontend, never dropped.

use super::Config;
use serde::{Deserialize, Serialize};

/// A Python literal a setting holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PyLiteral {
    /// `True` / `False`.
    Bool(bool),
    /// An int literal.
    Int(i64),
    /// A finite float literal.
    Float(f64),
    /// A string literal.
    Str(String),
    /// A dotted name under `helion.exc` (a warning class of `ignore_warnings`).
    Name(String),
    /// A list of literals.
    List(Vec<PyLiteral>),
}

impl PyLiteral {
    /// The Python spelling.
    pub fn render(&self) -> String {
        match self {
            PyLiteral::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            PyLiteral::Int(i) => i.to_string(),
            PyLiteral::Float(f) => format!("{f:?}"),
            PyLiteral::Str(s) => format!("{s:?}"),
            PyLiteral::Name(n) => n.clone(),
            PyLiteral::List(l) => format!(
                "[{}]",
                l.iter()
                    .map(PyLiteral::render)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// One key and its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// The keyword.
    pub key: String,
    /// Its value as written.
    pub value: PyLiteral,
}

/// What a key's value may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Str,
    Number,
    /// A list of `helion.exc.*` names.
    Warnings,
}

/// The `helion.Config` keys kept beside the four the model reads.
const CONFIG_KEYS: [(&str, Kind); 2] = [
    ("pallas_pre_broadcast", Kind::Bool),
    ("pallas_indirect_access_mode", Kind::Str),
];

/// The decorator keywords kept beside `backend` and `config`.
const DECORATOR_KEYS: [(&str, Kind); 5] = [
    ("static_shapes", Kind::Bool),
    ("print_output_code", Kind::Bool),
    ("autotune_effort", Kind::Str),
    ("ignore_warnings", Kind::Warnings),
    ("pallas_topk_recall_target", Kind::Number),
];

/// Where a setting is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A keyword of `helion.Config(...)`.
    Config,
    /// A keyword of `@helion.kernel(...)`.
    Decorator,
}

impl Place {
    fn keys(self) -> &'static [(&'static str, Kind)] {
        match self {
            Place::Config => &CONFIG_KEYS,
            Place::Decorator => &DECORATOR_KEYS,
        }
    }

    /// The keys this place keeps, for messages.
    pub fn key_names(self) -> String {
        self.keys()
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether `key` is kept at `place` with `value`: `Ok(())`, or why not (for the frontend's and
/// the JSON reader's messages).
pub fn check(place: Place, key: &str, value: &PyLiteral) -> Result<(), String> {
    let Some((_, kind)) = place.keys().iter().find(|(k, _)| *k == key) else {
        return Err(format!(
            "`{key}` is not part of a case script (kept beside the keys the model reads: {})",
            place.key_names()
        ));
    };
    let ok = match kind {
        Kind::Bool => matches!(value, PyLiteral::Bool(_)),
        // A word (`one_hot`, `quick`): rendered inside double quotes as it is.
        Kind::Str => matches!(value, PyLiteral::Str(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')),
        Kind::Number => matches!(value, PyLiteral::Int(_) | PyLiteral::Float(_)),
        Kind::Warnings => match value {
            PyLiteral::List(l) => l.iter().all(|w| {
                matches!(w, PyLiteral::Name(n) if n.strip_prefix("helion.exc.").is_some_and(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_') && !c.starts_with(|ch: char| ch.is_ascii_digit())))
            }),
            _ => false,
        },
    };
    if ok {
        Ok(())
    } else {
        let want = match kind {
            Kind::Bool => "True or False",
            Kind::Str => "a string literal of letters, digits and `_`",
            Kind::Number => "a number literal",
            Kind::Warnings => "a list of helion.exc warning classes",
        };
        Err(format!("`{key}` takes {want}, got `{}`", value.render()))
    }
}

impl Config {
    /// The kept key our model of the lowering cannot honour, if any: the case is then a gap of
    /// our engines (`unsupported`), still fully checked against Helion. `static_shapes=False`
    /// makes Helion trace symbolic sizes (the model specializes every size);
    /// `pallas_pre_broadcast=True` changes the scratch shapes of loop-carried state
    /// (`_apply_pre_broadcast_transform` in Helion 1.5.1's `tracing_ops.py`); an indirect access
    /// mode other than Helion's default `one_hot` lowers gathers by DMA.
    pub fn unmodelled(&self) -> Option<String> {
        let find = |list: &[Setting], key: &str| {
            list.iter().find(|s| s.key == key).map(|s| s.value.clone())
        };
        if find(&self.settings, "static_shapes") == Some(PyLiteral::Bool(false)) {
            return Some("static_shapes=False (the model specializes every size)".into());
        }
        if find(&self.extra, "pallas_pre_broadcast") == Some(PyLiteral::Bool(true)) {
            return Some("pallas_pre_broadcast=True (pre-broadcast loop-carried scratch)".into());
        }
        match find(&self.extra, "pallas_indirect_access_mode") {
            Some(PyLiteral::Str(m)) if m != "one_hot" => Some(format!(
                "pallas_indirect_access_mode={m:?} (the model lowers gathers as one_hot)"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_keys_check_their_values() {
        assert!(
            check(
                Place::Config,
                "pallas_pre_broadcast",
                &PyLiteral::Bool(true)
            )
            .is_ok()
        );
        assert!(check(Place::Config, "pallas_pre_broadcast", &PyLiteral::Int(1)).is_err());
        assert!(check(Place::Config, "static_shapes", &PyLiteral::Bool(true)).is_err());
        let w = PyLiteral::List(vec![PyLiteral::Name(
            "helion.exc.TensorOperationInWrapper".into(),
        )]);
        assert!(check(Place::Decorator, "ignore_warnings", &w).is_ok());
        let bad = PyLiteral::List(vec![PyLiteral::Name("os.system".into())]);
        assert!(check(Place::Decorator, "ignore_warnings", &bad).is_err());
        assert_eq!(w.render(), "[helion.exc.TensorOperationInWrapper]");
        assert_eq!(PyLiteral::Str("dma".into()).render(), "\"dma\"");
    }

    #[test]
    fn unmodelled_names_the_keys_the_model_cannot_honour() {
        let mut c = Config::default();
        assert_eq!(c.unmodelled(), None);
        c.extra.push(Setting {
            key: "pallas_pre_broadcast".into(),
            value: PyLiteral::Bool(false),
        });
        assert_eq!(c.unmodelled(), None);
        c.settings.push(Setting {
            key: "static_shapes".into(),
            value: PyLiteral::Bool(false),
        });
        assert!(c.unmodelled().unwrap().starts_with("static_shapes=False"));
    }
}
