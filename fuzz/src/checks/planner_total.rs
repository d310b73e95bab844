//! The compiler is total: on every generated (and mutated) case it returns a verdict without
//! panicking, every rejection names a rule whose class matches the rule table and points at a
//! real source line, and a lowered verdict comes with a module or a declared codegen gap.

use crate::generators::{GenConfig, fixup, generate};
use arbitrary::Unstructured;
use compiler::compile::{CodegenOptions, Compiled, NotModelled, Refused, compile};
use lang::frontend::parse_case;
use lang::render::render_case;

/// Checks one generated case (re-parsed, so spans are real); panics on a violation.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let config: GenConfig = u.arbitrary()?;
    let mut case = generate(u, &config.normalized())?;
    // Mutate a little (as the reducer and hand edits do), then make it well-formed again.
    if u.arbitrary::<bool>()? {
        case.config
            .block_sizes
            .iter_mut()
            .for_each(|b| *b = (*b / 2).max(1));
        fixup(&mut case);
    }
    let text = render_case(&case);
    let Ok(case) = parse_case(&text, "generated.py") else {
        return Ok(());
    };
    let lines = text.lines().count() as u32;
    let compiled = compile(&case, &CodegenOptions::default());
    match &compiled {
        Compiled::Rejected(Refused { rejection: r, .. }) => {
            assert_eq!(
                r.class(),
                r.rule.class(),
                "finding: rejection class disagrees with the rule table: {r}"
            );
            assert!(
                !r.message.contains('{'),
                "finding: unfilled message placeholder: {r}"
            );
            assert!(
                r.span.line >= 1 && r.span.line <= lines,
                "finding: rejection without a source line: {r}\n{text}"
            );
        }
        Compiled::Lowered(_) => assert!(
            compiled
                .source()
                .is_some_and(|src| src.contains("def make(")),
            "finding: emitted module has no make()"
        ),
        Compiled::Gap(NotModelled { gap: g, .. }) => {
            assert!(!g.construct.is_empty(), "finding: unnamed codegen gap")
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        super::super::test_n_times(200, super::run);
    }
}
