//! The case-JSON reader: the IR's JSON form (`parse --json`, a finding's `case.json`) in, a
//! [`Case`] out, through the same well-formedness check as a case script
//! ([`super::wellformed`]).
//!
//! serde_json reports where its own errors are (line and column); for a rule the check finds
//! broken, [`locate`] walks the text to the value the check names by its JSON path, so every
//! error names the file, line and column of the JSON. serde_json refuses JSON nested deeper than
//! 128 levels (its recursion limit), which bounds how deep a case JSON can nest before anything
//! recurses over it: an expression level is 3 JSON levels, a block 4.

use super::FrontendError;
use super::wellformed::{self, Seg};
use crate::ir::{Case, Span};

/// serde_json's recursion limit (`serde_json::Deserializer`'s `remaining_depth`, 128 in 1.0).
const SERDE_JSON_DEPTH_LIMIT: usize = 128;

/// Reads a case JSON; `path` names the file in errors.
pub(crate) fn load_case_json(text: &str, path: &str) -> Result<Case, FrontendError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let case: Case = serde_json::from_str(text).map_err(|e| serde_error(&e, path))?;
    wellformed::check(&case).map_err(|v| {
        let offset = locate(text, &v.path).unwrap_or(0);
        let recorded = match v.span {
            Some(s) if s.line > 0 => format!(" (recorded span {s})"),
            Some(_) | None => String::new(),
        };
        FrontendError {
            path: path.to_string(),
            span: span_at(text, offset),
            construct: v.construct,
            message: format!("{}{recorded}", v.message),
        }
    })?;
    Ok(case)
}

fn serde_error(e: &serde_json::Error, path: &str) -> FrontendError {
    // serde_json's Display appends " at line L column C"; the span says that already.
    let full = e.to_string();
    let what = match full.rfind(" at line ") {
        Some(k) => &full[..k],
        None => &full,
    };
    let (construct, message) = if what.starts_with("recursion limit exceeded") {
        (
            "json nesting",
            format!(
                "the JSON nests deeper than {SERDE_JSON_DEPTH_LIMIT} levels (serde_json's recursion limit); no case this build reads is that deep"
            ),
        )
    } else {
        ("json", format!("not a case JSON file: {what}"))
    };
    FrontendError {
        path: path.to_string(),
        // serde_json's line is 1-based; its column is 0 at a line's start (end of input).
        span: Span::new(
            u32::try_from(e.line()).unwrap_or(u32::MAX),
            u32::try_from(e.column().max(1)).unwrap_or(u32::MAX),
        ),
        construct: construct.into(),
        message,
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn span_at(text: &str, offset: usize) -> Span {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |k| k + 1);
    let col = before[line_start..].chars().count() + 1;
    Span::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

/// A cursor over JSON text that serde_json has already accepted (so it is well-formed).
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skips a string at the cursor (on its opening quote); its raw contents.
    fn string(&mut self) -> &[u8] {
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    let raw = &self.s[start..self.i];
                    self.i += 1;
                    return raw;
                }
                _ => self.i += 1,
            }
        }
        &self.s[start..]
    }

    /// Skips one value at the cursor, iteratively.
    fn skip_value(&mut self) {
        let mut depth = 0usize;
        loop {
            self.ws();
            match self.peek() {
                None => return,
                Some(b'"') => {
                    self.string();
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.i += 1;
                    continue;
                }
                Some(b'}' | b']') => {
                    depth = depth.saturating_sub(1);
                    self.i += 1;
                }
                Some(b',' | b':') if depth > 0 => {
                    self.i += 1;
                    continue;
                }
                Some(_) => {
                    while self.i < self.s.len()
                        && !matches!(
                            self.s[self.i],
                            b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                        )
                    {
                        self.i += 1;
                    }
                }
            }
            if depth == 0 {
                return;
            }
        }
    }

    /// Moves into the member `key` of the object at the cursor.
    fn member(&mut self, key: &str) -> Option<()> {
        self.ws();
        if self.peek() != Some(b'{') {
            return None;
        }
        self.i += 1;
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return None;
            }
            let raw = self.string();
            // Keys of the IR's JSON are plain ASCII; an escaped key is decoded to compare.
            let matches = if raw.contains(&b'\\') {
                let quoted = format!("\"{}\"", String::from_utf8_lossy(raw));
                serde_json::from_str::<String>(&quoted).is_ok_and(|k| k == key)
            } else {
                raw == key.as_bytes()
            };
            self.ws();
            if self.peek() != Some(b':') {
                return None;
            }
            self.i += 1;
            self.ws();
            if matches {
                return Some(());
            }
            self.skip_value();
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                _ => return None,
            }
        }
    }

    /// Moves into element `n` of the array at the cursor.
    fn element(&mut self, n: usize) -> Option<()> {
        self.ws();
        if self.peek() != Some(b'[') {
            return None;
        }
        self.i += 1;
        for _ in 0..n {
            self.ws();
            if self.peek() == Some(b']') {
                return None;
            }
            self.skip_value();
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                _ => return None,
            }
        }
        self.ws();
        (self.peek() != Some(b']')).then_some(())
    }
}

/// The byte offset of the value at `path` in `text`, or of the deepest prefix of it found.
pub(crate) fn locate(text: &str, path: &[Seg]) -> Option<usize> {
    let mut c = Cursor {
        s: text.as_bytes(),
        i: 0,
    };
    c.ws();
    let mut found = c.i;
    for seg in path {
        let ok = match seg {
            Seg::Key(k) => c.member(k),
            Seg::Index(n) => c.element(*n),
        };
        if ok.is_none() {
            break;
        }
        c.ws();
        found = c.i;
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_walks_keys_and_indices() {
        let text =
            "{\n  \"a\": [1, {\"b\": \"x,]}\"}, {\"c\": [true, {\"d\": 7}]}],\n  \"e\": 2\n}";
        let at = |p: &[Seg]| span_at(text, locate(text, p).unwrap());
        assert_eq!(at(&[Seg::Key("e")]), Span::new(3, 8));
        assert_eq!(
            at(&[Seg::Key("a"), Seg::Index(1), Seg::Key("b")]),
            Span::new(2, 18)
        );
        let d = [
            Seg::Key("a"),
            Seg::Index(2),
            Seg::Key("c"),
            Seg::Index(1),
            Seg::Key("d"),
        ];
        assert_eq!(at(&d), Span::new(2, 46));
        // A path that leaves the text stops at the deepest value found.
        assert_eq!(at(&[Seg::Key("a"), Seg::Index(9)]), Span::new(2, 8));
    }

    #[test]
    fn span_counts_characters() {
        assert_eq!(span_at("é\n  x", 5), Span::new(2, 3));
        assert_eq!(span_at("ab", 0), Span::new(1, 1));
    }
}
