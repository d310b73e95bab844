//! render ∘ parse is the identity: a generated case renders to a script that parses back to the
//! same (span-stripped) case, and rendering that gives the same text.

use crate::generators::{GenConfig, generate};
use arbitrary::Unstructured;
use compiler::frontend::parse_case;
use compiler::render::render_case;

/// Checks one generated case; panics on a violation.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let config: GenConfig = u.arbitrary()?;
    let case = generate(u, &config.normalized())?;
    let text = render_case(&case);
    let back = parse_case(&text, "generated.py")
        .unwrap_or_else(|e| panic!("finding: a rendered case does not parse: {e}\n{text}"));
    assert_eq!(
        back.without_spans(),
        case.without_spans(),
        "finding: parse(render(case)) != case\n{text}"
    );
    assert_eq!(
        render_case(&back),
        text,
        "finding: render is not stable under parse\n{text}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        super::super::test_n_times(200, super::run);
    }
}
