//! One answer to "what caused this Python exception": the cause key of an exception raised
//! in Helion's (or JAX's) own code, from its class, its first message line with the parts that
//! vary between cases of one cause normalized away, and the innermost frame that raised it. The
//! finding signature of a `helion-crash` and the campaign's generator-health table
//! ([`crate::campaign::stats::Stats::helion_health`]) both key on it.

/// The cause key of an exception: `stage:class: normalized message @ raising frame`.
pub fn cause(stage: tpu_runner::Stage, kind: &str, message: &str, traceback: &str) -> String {
    format!(
        "{stage}:{kind}: {} @ {}",
        normalize_message(message),
        raising_frame(traceback)
    )
}

/// A message's first line with the parts that vary between cases of one cause replaced: file
/// paths (the worker's temporary kernel files) by `<path>`, runs of digits by `N`, quoted text
/// by `'…'` (so Helion's symbol names `u2`, `s0` become `uN`, `sN`), and a run of
/// comma-separated `N`s (a shape's entries, whatever its rank) by one. At most 120 characters
/// before that last step.
pub fn normalize_message(message: &str) -> String {
    let first = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let first: Vec<&str> = first
        .split(' ')
        .map(|w| if w.contains('/') { "<path>" } else { w })
        .collect();
    let first = first.join(" ");
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in first.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
                out.push(q);
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                out.push(c);
                out.push('…');
            }
            d if d.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            c => out.push(c),
        }
        if out.chars().count() >= 120 {
            break;
        }
    }
    // A shape's entries: `(JitTracer(~intN[]), N, N)` and `(JitTracer(~intN[]), N)` are one
    // cause at two ranks (three buckets of one Helion DMA bug in a 30-minute campaign).
    while out.contains("N, N") {
        out = out.replace("N, N", "N");
    }
    out
}

/// The innermost traceback frame inside Helion's (or torch's, or JAX's) own code, as
/// `package/path.py:function`, from a Python traceback; `?` when there is none. Frames of the
/// kernel file and of pallas-diff's worker are skipped: they do not say where Helion broke.
pub fn raising_frame(traceback: &str) -> String {
    // In a chained traceback the first part is the original exception (Helion's InternalError
    // wraps it and is printed after "The above exception was the direct cause ...").
    let original = [
        "The above exception was the direct cause",
        "During handling of the above",
    ]
    .iter()
    .filter_map(|sep| traceback.find(sep))
    .min()
    .map_or(traceback, |i| &traceback[..i]);
    let mut found = None;
    for line in original.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("File \"") else {
            continue;
        };
        let Some((path, tail)) = rest.split_once('"') else {
            continue;
        };
        let function = tail.rsplit(", in ").next().unwrap_or("").trim();
        if let Some(short) = package_path(path) {
            found = Some(format!("{short}:{function}"));
        }
    }
    found.unwrap_or_else(|| "?".to_string())
}

/// The path of a file inside Helion, torch or JAX from its package directory on
/// (`helion/_compiler/x.py`), wherever the package is installed: a venv's `site-packages`, a
/// Helion build's overlay, or a source tree (`~/src/helion/helion/_compiler/x.py`). The
/// innermost package directory on the path wins, so a checkout under a directory named `jax`
/// or `helion` still reads as the package inside it.
fn package_path(path: &str) -> Option<&str> {
    ["helion", "torch", "jax", "jaxlib"]
        .iter()
        .filter_map(|package| path.rfind(&format!("/{package}/")))
        .max()
        .map(|i| &path[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helion_messages_normalize_to_one_cause() {
        let a = "Backend 'pallas' does not support: the selector at /tmp/p-1/r3/k_ab12.py:19 is not an unshifted tile run\nWhile processing:";
        let b = "Backend 'pallas' does not support: the selector at /tmp/p-9/r7/k_ff00.py:23 is not an unshifted tile run";
        assert_eq!(normalize_message(a), normalize_message(b));
        assert_eq!(
            normalize_message("Expected ndim=3, but got ndim=2 (LHS shape: (u2, 2, 128))"),
            "Expected ndim=N, but got ndim=N (LHS shape: (uN))"
        );
        assert_eq!(
            normalize_message("InternalError: 'x' 'y'"),
            "InternalError: '…' '…'"
        );
    }

    #[test]
    fn one_cause_at_several_ranks_normalizes_to_one_message() {
        let rank = |shape: &str| {
            normalize_message(&format!(
                "Shapes must be ND sequences of concrete values of integer type, got (JitTracer(~int32[]), {shape})."
            ))
        };
        assert_eq!(rank("2, 128"), rank("128"));
        assert_eq!(rank("4, 2, 128"), rank("128"));
    }

    #[test]
    fn the_raising_frame_is_the_innermost_one_inside_helion() {
        let tb = "Traceback (most recent call last):\n  File \"/w/helion_worker.py\", line 400, in run\n    k(*args)\n  File \"/v/lib/python3.11/site-packages/helion/_compiler/device_ir.py\", line 12, in lower\n    x\n  File \"/v/lib/python3.11/site-packages/helion/_compiler/indexing_strategy.py\", line 88, in compute_shape\n    assert False\n  File \"/tmp/k_1.py\", line 17, in k\nAssertionError: invalid subscript";
        assert_eq!(
            raising_frame(tb),
            "helion/_compiler/indexing_strategy.py:compute_shape"
        );
        assert_eq!(raising_frame("no frames"), "?");
        let chained = format!(
            "{tb}\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"/v/site-packages/helion/_compiler/type_propagation.py\", line 255, in visit\nInternalError: x"
        );
        assert_eq!(
            raising_frame(&chained),
            "helion/_compiler/indexing_strategy.py:compute_shape"
        );
    }

    #[test]
    fn helion_frames_are_read_wherever_helion_is_installed() {
        let frame = |path: &str| {
            raising_frame(&format!(
                "Traceback (most recent call last):\n  File \"/w/helion_worker.py\", line 4, in run\n  File \"{path}\", line 9, in plan\nAssertionError"
            ))
        };
        for path in [
            "/v/lib/python3.11/site-packages/helion/_compiler/pallas/view_ops.py",
            "/v/builds/1.5.0/site/helion/_compiler/pallas/view_ops.py",
            "/home/dev/helion/helion/_compiler/pallas/view_ops.py",
            "/src/jax/helion/helion/_compiler/pallas/view_ops.py",
        ] {
            assert_eq!(
                frame(path),
                "helion/_compiler/pallas/view_ops.py:plan",
                "{path}"
            );
        }
        // The worker's own file and the kernel's are not Helion's.
        assert_eq!(frame("/tmp/pallas-diff-worker-1/k_2.py"), "?");
    }
}
