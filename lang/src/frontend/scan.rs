//! The pre-parse depth scan: one linear pass over the raw source that bounds how deep the Python
//! AST of a script can nest, so that `rustpython-parser` is never handed a script whose AST is
//! too deep to drop.
//!
//! Why before parsing: the parser itself is table-driven (LALRPOP) and parses 100,000 chained
//! `+` fine, but the AST it returns is a tree of `Box`es whose `Drop` recurses once per level;
//! measured (debug build, 2 MiB thread): dropping 10,000 chained `.float()` calls or 10,000
//! nested `if` blocks overflows, 100,000 chained `+` overflows. Once the parser has returned
//! such a tree nothing can be done about it, so the scan refuses the source first.
//!
//! The scan is an over-estimate, never an under-estimate, of the AST depth: every AST node on a
//! root-to-leaf path owns a token that the scan counts (an operator character, a keyword, an
//! opening bracket), except a tuple (formed by commas) and the leaf, which it adds per bracket
//! level. Inside one bracket level, comma-separated elements are siblings, so the count restarts
//! at a comma (except after `lambda`, `yield` and `for`, whose node spans the commas). An
//! f-string's body is counted byte by byte (its replacement fields are expressions the parser
//! parses). Statement nesting is counted from the indentation, plus one per `elif` (an `elif`
//! is an `if` nested in the `else` of the previous one). The precise limits
//! ([`super::MAX_EXPR_DEPTH`], [`super::MAX_BLOCK_DEPTH`]) are enforced later, on the parsed
//! kernel and on the IR; the scan's limits are looser ([`SCAN_EXPR_LIMIT`],
//! [`SCAN_BLOCK_LIMIT`]) so that any case within the precise limits passes it.

use super::{MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH};

/// The most the scan lets one logical line's expression nesting count. A valid case-script
/// construct counts at most ~6 per IR level (`hl.load(x, [slice(None, e)])`: `.`, `(`, the
/// argument tuple, `[`, `slice(`, its tuple), so 8 per level keeps every case within
/// [`MAX_EXPR_DEPTH`] clear of it. An AST this deep is far from overflowing anything: on a
/// 2 MiB debug thread the AST of 16,000 chained `+` still drops (10,000 chained calls do not).
pub(crate) const SCAN_EXPR_LIMIT: usize = 8 * MAX_EXPR_DEPTH;

/// The most the scan lets statement nesting count (the kernel's `def` is one level, so a
/// kernel body within [`MAX_BLOCK_DEPTH`] counts at most `MAX_BLOCK_DEPTH + 1`).
pub(crate) const SCAN_BLOCK_LIMIT: usize = 4 * MAX_BLOCK_DEPTH;

/// What the scan found too deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TooDeep {
    /// Operators, calls and brackets nest past [`SCAN_EXPR_LIMIT`].
    Expr,
    /// Blocks (indentation and `elif` chains) nest past [`SCAN_BLOCK_LIMIT`].
    Block,
}

impl TooDeep {
    /// The construct and message of the refusal (the constructs of the precise limits).
    pub(crate) fn describe(self) -> (&'static str, String) {
        match self {
            TooDeep::Expr => (
                "expression nesting",
                format!(
                    "expression nesting deeper than {MAX_EXPR_DEPTH} levels: more than {SCAN_EXPR_LIMIT} operators, calls and brackets are open here (split the expression into several assignments)"
                ),
            ),
            TooDeep::Block => (
                "statement nesting",
                format!(
                    "statement nesting deeper than {MAX_BLOCK_DEPTH} levels: indented blocks and `elif`s nest more than {SCAN_BLOCK_LIMIT} deep here"
                ),
            ),
        }
    }
}

/// Where the scan stopped: the byte offset of the token that went past the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub offset: usize,
    pub what: TooDeep,
}

/// One bracket level of the current logical line (index 0 is the line itself).
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    /// The count of the enclosing levels where this one opened.
    base: usize,
    /// Counted tokens of the current comma-separated element.
    ops: usize,
    /// Counted tokens that span the commas of this level (`lambda`, `yield`, `for`).
    sticky: usize,
    /// The deepest closed bracket level inside the current element.
    child: usize,
    /// The deepest finished element.
    best: usize,
    /// 1 once a comma was seen: a tuple node above the elements.
    comma: usize,
}

impl Frame {
    /// This level's own depth (relative to its base).
    fn depth(&self) -> usize {
        self.best.max(self.sticky + self.ops + self.child) + self.comma
    }

    /// The whole line's count through this level, plus one for the leaf.
    fn total(&self) -> usize {
        self.base + self.depth() + 1
    }
}

/// One indentation level.
#[derive(Clone, Copy, Debug)]
struct Level {
    /// Indentation width (tabs to multiples of 8, as Python's tokenizer).
    width: usize,
    /// Statement nesting of the statements at this level.
    base: usize,
    /// `elif`s so far in the `if` chain at this level.
    chain: usize,
}

/// Python keywords that nest (`not`, `lambda`, `if`/`else` of a conditional, `await`, ...);
/// counting every keyword but the three constants is simpler and only over-estimates.
fn is_counted_keyword(word: &[u8]) -> bool {
    matches!(
        word,
        b"and"
            | b"as"
            | b"assert"
            | b"async"
            | b"await"
            | b"break"
            | b"class"
            | b"continue"
            | b"def"
            | b"del"
            | b"elif"
            | b"else"
            | b"except"
            | b"finally"
            | b"for"
            | b"from"
            | b"global"
            | b"if"
            | b"import"
            | b"in"
            | b"is"
            | b"lambda"
            | b"nonlocal"
            | b"not"
            | b"or"
            | b"pass"
            | b"raise"
            | b"return"
            | b"try"
            | b"while"
            | b"with"
            | b"yield"
    )
}

/// Keywords whose node spans the commas after it at the same bracket level.
fn is_sticky_keyword(word: &[u8]) -> bool {
    matches!(word, b"lambda" | b"yield" | b"for")
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Whether `word` is a string prefix (`r`, `b`, `f`, `u`, `rb`, `fr`, ...), and if so whether
/// it makes an f-string.
fn string_prefix(word: &[u8]) -> Option<bool> {
    let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
    match lower.as_slice() {
        b"r" | b"u" | b"b" | b"br" | b"rb" => Some(false),
        b"f" | b"fr" | b"rf" => Some(true),
        _ => None,
    }
}

struct Scanner<'a> {
    src: &'a [u8],
    i: usize,
    frames: Vec<Frame>,
    levels: Vec<Level>,
    /// No token yet on the current logical line.
    line_start: bool,
    /// Indentation width of the current physical line so far, while still in its leading
    /// whitespace.
    width: usize,
    leading: bool,
}

impl<'a> Scanner<'a> {
    fn top(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    fn check(&self, offset: usize) -> Result<(), ScanError> {
        let f = self.frames[self.frames.len() - 1];
        if f.total() > SCAN_EXPR_LIMIT {
            return Err(ScanError {
                offset,
                what: TooDeep::Expr,
            });
        }
        Ok(())
    }

    /// Counts `n` nesting tokens at `offset` in the current element.
    fn count(&mut self, n: usize, offset: usize) -> Result<(), ScanError> {
        let f = self.top();
        f.ops = f.ops.saturating_add(n);
        self.check(offset)
    }

    fn open(&mut self, offset: usize) -> Result<(), ScanError> {
        self.count(1, offset)?;
        let f = self.frames[self.frames.len() - 1];
        self.frames.push(Frame {
            base: f.base + f.comma + f.sticky + f.ops,
            ..Frame::default()
        });
        Ok(())
    }

    fn close(&mut self, offset: usize) -> Result<(), ScanError> {
        // An unbalanced closer is the parser's syntax error to report.
        if self.frames.len() > 1 {
            let d = self.frames.pop().map_or(0, |f| f.depth());
            let f = self.top();
            f.child = f.child.max(d);
            self.check(offset)?;
        }
        Ok(())
    }

    fn comma(&mut self) {
        let f = self.top();
        f.best = f.best.max(f.sticky + f.ops + f.child);
        f.ops = 0;
        f.child = 0;
        f.comma = 1;
    }

    fn end_logical_line(&mut self) {
        self.frames.clear();
        self.frames.push(Frame::default());
        self.line_start = true;
    }

    /// The first token of a logical line at `offset`, which starts with `word` when it is an
    /// identifier or keyword: the statement nesting of the line.
    fn begin_line(&mut self, offset: usize, word: &[u8]) -> Result<(), ScanError> {
        self.line_start = false;
        let width = self.width;
        while self.levels.len() > 1 && self.levels[self.levels.len() - 1].width > width {
            self.levels.pop();
        }
        let parent = self.levels[self.levels.len() - 1];
        if parent.width < width {
            self.levels.push(Level {
                width,
                base: parent.base + parent.chain + 1,
                chain: 0,
            });
        }
        let last = self.levels.len() - 1;
        let level = &mut self.levels[last];
        match word {
            b"elif" => level.chain += 1,
            b"else" | b"except" | b"finally" => {}
            _ => level.chain = 0,
        }
        if level.base + level.chain > SCAN_BLOCK_LIMIT {
            return Err(ScanError {
                offset,
                what: TooDeep::Block,
            });
        }
        Ok(())
    }

    /// Skips a string literal whose opening quote is at `self.i`; returns the count of
    /// non-whitespace bytes in its body.
    fn skip_string(&mut self) -> usize {
        let q = self.src[self.i];
        let triple = self.src.get(self.i + 1) == Some(&q) && self.src.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut body = 0usize;
        while self.i < self.src.len() {
            let b = self.src[self.i];
            if b == b'\\' {
                body += 1;
                self.i += 2;
                continue;
            }
            if b == q {
                if !triple {
                    self.i += 1;
                    return body;
                }
                if self.src.get(self.i + 1) == Some(&q) && self.src.get(self.i + 2) == Some(&q) {
                    self.i += 3;
                    return body;
                }
            }
            if !triple && (b == b'\n' || b == b'\r') {
                // Unterminated: the parser reports it; the newline ends the line as usual.
                return body;
            }
            if !b.is_ascii_whitespace() {
                body += 1;
            }
            self.i += 1;
        }
        self.i = self.src.len();
        body
    }

    /// Skips a number literal starting at `self.i` (a digit, or `.` before a digit).
    fn skip_number(&mut self) {
        let start = self.i;
        let hex_like = self.src[start] == b'0'
            && self
                .src
                .get(start + 1)
                .is_some_and(|b| matches!(b, b'x' | b'X' | b'o' | b'O' | b'b' | b'B'));
        let mut signed = false;
        while self.i < self.src.len() {
            let b = self.src[self.i];
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
                self.i += 1;
                continue;
            }
            // The sign of a decimal exponent (`1e-5`), once.
            let after_e = self.i > start && matches!(self.src[self.i - 1], b'e' | b'E');
            if (b == b'+' || b == b'-') && after_e && !hex_like && !signed {
                signed = true;
                self.i += 1;
                continue;
            }
            break;
        }
    }

    fn run(&mut self) -> Result<(), ScanError> {
        while self.i < self.src.len() {
            let b = self.src[self.i];
            let at = self.i;
            if self.leading {
                match b {
                    b' ' => {
                        self.width += 1;
                        self.i += 1;
                        continue;
                    }
                    b'\t' => {
                        self.width = (self.width / 8 + 1) * 8;
                        self.i += 1;
                        continue;
                    }
                    b'\x0c' => {
                        self.width = 0;
                        self.i += 1;
                        continue;
                    }
                    _ => self.leading = false,
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.i += 1;
                    if b == b'\r' && self.src.get(self.i) == Some(&b'\n') {
                        self.i += 1;
                    }
                    if self.frames.len() == 1 {
                        self.end_logical_line();
                    }
                    self.width = 0;
                    self.leading = true;
                }
                b' ' | b'\t' | b'\x0c' => self.i += 1,
                b'#' => {
                    while self.i < self.src.len() && !matches!(self.src[self.i], b'\n' | b'\r') {
                        self.i += 1;
                    }
                }
                b'\\' if matches!(self.src.get(self.i + 1), Some(b'\n' | b'\r')) => {
                    // A line continuation: the logical line goes on.
                    self.i += 2;
                    if b'\r' == self.src[self.i - 1] && self.src.get(self.i) == Some(&b'\n') {
                        self.i += 1;
                    }
                }
                _ => {
                    let word_end = if is_ident_start(b) {
                        let mut j = self.i;
                        while j < self.src.len() && is_ident_continue(self.src[j]) {
                            j += 1;
                        }
                        j
                    } else {
                        self.i
                    };
                    let word = &self.src[self.i..word_end];
                    if self.line_start {
                        self.begin_line(at, word)?;
                    }
                    self.token(at, word_end)?;
                }
            }
        }
        Ok(())
    }

    /// One token starting at `at` (an identifier or keyword ends at `word_end`).
    fn token(&mut self, at: usize, word_end: usize) -> Result<(), ScanError> {
        let b = self.src[at];
        if word_end > at {
            let word = &self.src[at..word_end];
            let next = self.src.get(word_end).copied();
            if matches!(next, Some(b'\'' | b'"'))
                && let Some(is_f) = string_prefix(word)
            {
                self.i = word_end;
                let body = self.skip_string();
                if is_f {
                    self.count(body, at)?;
                }
                return Ok(());
            }
            self.i = word_end;
            if is_counted_keyword(word) {
                if is_sticky_keyword(word) {
                    let f = self.top();
                    f.sticky = f.sticky.saturating_add(1);
                    return self.check(at);
                }
                return self.count(1, at);
            }
            return Ok(());
        }
        match b {
            b'\'' | b'"' => {
                self.skip_string();
                Ok(())
            }
            b'0'..=b'9' => {
                self.skip_number();
                Ok(())
            }
            b'.' if self.src.get(at + 1).is_some_and(u8::is_ascii_digit) => {
                self.skip_number();
                Ok(())
            }
            b'(' | b'[' | b'{' => {
                self.i += 1;
                self.open(at)
            }
            b')' | b']' | b'}' => {
                self.i += 1;
                self.close(at)
            }
            b',' => {
                self.i += 1;
                self.comma();
                Ok(())
            }
            b';' => {
                // Statements on one line are siblings.
                self.i += 1;
                if self.frames.len() == 1 {
                    self.frames[0] = Frame::default();
                }
                Ok(())
            }
            _ => {
                // An operator character (or a stray one the parser will refuse): one level at
                // most, so each character counts (`- - -x` is three levels).
                self.i += 1;
                self.count(1, at)
            }
        }
    }
}

/// Scans `source`; `Err` at the first token past a limit.
pub(crate) fn scan(source: &str) -> Result<(), ScanError> {
    let mut s = Scanner {
        src: source.as_bytes(),
        i: 0,
        frames: vec![Frame::default()],
        levels: vec![Level {
            width: 0,
            base: 0,
            chain: 0,
        }],
        line_start: true,
        width: 0,
        leading: true,
    };
    s.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(src: &str) -> Option<TooDeep> {
        scan(src).err().map(|e| e.what)
    }

    #[test]
    fn shallow_code_passes() {
        assert_eq!(deep("a = x[g] + 1.0 * y.float()\n"), None);
        assert_eq!(deep("t = torch.tensor([[1.0, -2.0], [3.0, -4.0]])\n"), None);
        assert_eq!(
            deep(&format!("t = torch.tensor([{}])\n", "-1.0, ".repeat(5000))),
            None
        );
        assert_eq!(deep("s = 'a ((((((((( string'  # (((((((\n"), None);
        assert_eq!(deep(&format!("s = \"{}\"\n", "(".repeat(10_000))), None);
    }

    #[test]
    fn long_chains_and_brackets_are_refused() {
        let plus = format!("a = x{}\n", " + x".repeat(10_000));
        assert_eq!(deep(&plus), Some(TooDeep::Expr));
        let parens = format!("a = {}x{}\n", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(deep(&parens), Some(TooDeep::Expr));
        let neg = format!("a = {}1\n", "-".repeat(10_000));
        assert_eq!(deep(&neg), Some(TooDeep::Expr));
        let lambdas = format!("a = {}x\n", "lambda a, b: ".repeat(10_000));
        assert_eq!(deep(&lambdas), Some(TooDeep::Expr));
        let fstring = format!("a = f\"{{{}}}\"\n", "x + ".repeat(10_000));
        assert_eq!(deep(&fstring), Some(TooDeep::Expr));
        let nots = format!("a = {}x\n", "not ".repeat(10_000));
        assert_eq!(deep(&nots), Some(TooDeep::Expr));
    }

    #[test]
    fn a_chain_of_continued_lines_is_one_expression() {
        let src = format!("a = (x\n{})\n", "    + x\n".repeat(10_000));
        assert_eq!(deep(&src), Some(TooDeep::Expr));
        let src = format!("a = x \\\n{}\n", "    + x \\\n".repeat(10_000));
        assert_eq!(deep(&src), Some(TooDeep::Expr));
    }

    #[test]
    fn many_short_statements_pass() {
        assert_eq!(deep(&"a = x + x + x\n".repeat(10_000)), None);
        assert_eq!(deep(&"a = x + x; b = y + y\n".repeat(10_000)), None);
    }

    #[test]
    fn nested_blocks_and_elif_chains_are_refused() {
        let mut ifs = String::new();
        for i in 0..100 {
            ifs.push_str(&format!("{}if a:\n", " ".repeat(i)));
        }
        ifs.push_str(&format!("{}pass\n", " ".repeat(100)));
        assert_eq!(deep(&ifs), Some(TooDeep::Block));
        let elifs = format!("if a:\n    pass\n{}", "elif b:\n    pass\n".repeat(100));
        assert_eq!(deep(&elifs), Some(TooDeep::Block));
        let siblings = "if a:\n    pass\n".repeat(10_000);
        assert_eq!(deep(&siblings), None);
    }

    #[test]
    fn offsets_point_at_the_token_past_the_limit() {
        let src = format!("a = {}1\n", "-".repeat(1000));
        let e = scan(&src).unwrap_err();
        // `a = ` is 4 bytes; `=` counts one and the leaf one, so the count passes the limit at
        // minus number SCAN_EXPR_LIMIT - 1 (offset 4 + SCAN_EXPR_LIMIT - 2).
        assert_eq!(e.offset, 4 + SCAN_EXPR_LIMIT - 2);
    }
}
