//! The JSON layout of every file the corpus writes: pretty, but a value that fits on the rest of
//! its line is written on one line, so a case's spans (`{"line": 3, "col": 5}`) and a tensor's
//! values do not take one line per number. Deterministic: the same value prints the same bytes.

use serde_json::Value;

/// Column limit of one line.
pub const WIDTH: usize = 100;

/// Prints `value` with two-space indentation, inlining what fits in [`WIDTH`] columns; ends
/// with a newline.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0, 0);
    out.push('\n');
    out
}

/// Serializes any `Serialize` value with [`to_string`]'s layout.
pub fn to_string_of<T: serde::Serialize>(value: &T) -> Result<String, serde_json::Error> {
    Ok(to_string(&serde_json::to_value(value)?))
}

/// Like [`to_string_of`], with the top-level object's keys in `order` first (in that order),
/// the others after them, sorted: a file reads header first, bulk last.
pub fn to_string_ordered<T: serde::Serialize>(
    value: &T,
    order: &[&str],
) -> Result<String, serde_json::Error> {
    let value = serde_json::to_value(value)?;
    let Value::Object(map) = &value else {
        return Ok(to_string(&value));
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| (order.iter().position(|o| o == k).unwrap_or(order.len()), *k));
    let mut out = String::from("{");
    for (i, k) in keys.iter().enumerate() {
        out.push_str("\n  ");
        let key = format!("{}: ", Value::String((*k).clone()));
        out.push_str(&key);
        write_value(&mut out, &map[*k], 1, 2 + key.len());
        if i + 1 < keys.len() {
            out.push(',');
        }
    }
    out.push_str(if keys.is_empty() { "}\n" } else { "\n}\n" });
    Ok(out)
}

fn compact(value: &Value) -> String {
    // `Value`'s Display is the compact serialization with a space after `:` and `,` added
    // below for readability.
    let mut out = String::new();
    write_compact(&mut out, value);
    out
}

fn write_compact(out: &mut String, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_compact(out, v);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_compact(out, v);
            }
            out.push('}');
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string())
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Writes `value` starting at column `col` (what precedes it on its line).
fn write_value(out: &mut String, value: &Value, depth: usize, col: usize) {
    let flat = compact(value);
    if col + flat.len() <= WIDTH {
        out.push_str(&flat);
        return;
    }
    match value {
        Value::Array(items) if items.iter().all(is_scalar) => {
            // Wrap scalars over as many lines as needed.
            out.push('[');
            let mut line = String::new();
            for (i, v) in items.iter().enumerate() {
                let s = compact(v);
                let sep = if i + 1 < items.len() { "," } else { "" };
                if !line.is_empty() && (depth + 1) * 2 + line.len() + 1 + s.len() + 1 > WIDTH {
                    out.push('\n');
                    indent(out, depth + 1);
                    out.push_str(line.trim_end());
                    line.clear();
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&s);
                line.push_str(sep);
            }
            if !line.is_empty() {
                out.push('\n');
                indent(out, depth + 1);
                out.push_str(&line);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                out.push('\n');
                indent(out, depth + 1);
                write_value(out, v, depth + 1, (depth + 1) * 2);
                if i + 1 < items.len() {
                    out.push(',');
                }
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                out.push('\n');
                indent(out, depth + 1);
                let key = format!("{}: ", Value::String(k.clone()));
                out.push_str(&key);
                write_value(out, v, depth + 1, (depth + 1) * 2 + key.len());
                if i + 1 < map.len() {
                    out.push(',');
                }
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => out.push_str(&flat),
    }
}

fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_inlines_what_fits() {
        let v = serde_json::json!({
            "span": {"line": 3, "col": 5},
            "values": (0..100).collect::<Vec<i32>>(),
            "nested": {"deep": [{"a": "x".repeat(90)}, {"b": null}]},
        });
        let s = to_string(&v);
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
        assert!(s.contains("\"span\": {\"col\": 5, \"line\": 3}"), "{s}");
        assert!(
            s.lines()
                .all(|l| l.len() <= WIDTH + 2 || l.contains("xxxx")),
            "{s}"
        );
        assert!(s.lines().count() < 20, "{s}");
    }
}

/// Serde helpers for floats that may be NaN or infinite (JSON has no literal for them): finite
/// values are numbers, the others the strings `"nan"`, `"inf"`, `"-inf"`.
pub mod float {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Num(f64),
        Text(String),
    }

    fn from_repr<E: Error>(r: Repr) -> Result<f64, E> {
        match r {
            Repr::Num(v) => Ok(v),
            Repr::Text(s) => match s.as_str() {
                "nan" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(E::custom(format!(
                    "`{other}` is not a number (expected a number, \"nan\", \"inf\" or \"-inf\")"
                ))),
            },
        }
    }

    /// The JSON value of one float.
    pub fn value(v: f64) -> serde_json::Value {
        if v.is_nan() {
            "nan".into()
        } else if v.is_infinite() {
            if v > 0.0 { "inf" } else { "-inf" }.into()
        } else if v.fract() == 0.0 && v.abs() < 9.0e15 && !(v == 0.0 && v.is_sign_negative()) {
            // Integral values (int32 tensors, counts) print without a fraction.
            serde_json::Value::Number((v as i64).into())
        } else {
            serde_json::Number::from_f64(v)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null)
        }
    }

    /// Serializes one float.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&value(*v), s)
    }

    /// Deserializes one float.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        from_repr(Repr::deserialize(d)?)
    }

    /// Serde helpers for `Vec<f64>`.
    pub mod vec {
        use super::{Repr, from_repr, value};
        use serde::{Deserialize, Deserializer, Serializer};

        /// Serializes the floats.
        pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
            let values: Vec<serde_json::Value> = v.iter().map(|&x| value(x)).collect();
            serde::Serialize::serialize(&values, s)
        }

        /// Deserializes the floats.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
            Vec::<Repr>::deserialize(d)?
                .into_iter()
                .map(from_repr)
                .collect()
        }
    }

    /// Serde helpers for `Option<f64>`-like error magnitudes stored as floats (∞ allowed).
    pub mod opt {
        use super::{Repr, from_repr, value};
        use serde::{Deserialize, Deserializer, Serializer};

        /// Serializes an optional float.
        pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            serde::Serialize::serialize(&v.map(value), s)
        }

        /// Deserializes an optional float.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            Option::<Repr>::deserialize(d)?.map(from_repr).transpose()
        }
    }
}
