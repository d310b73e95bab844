//! Unit tests of the planner's internals: the selector normalizer (spec §2.6) on every index
//! form, and first-failure-wins recording (spec §2.8).

use super::*;
use crate::verdict::Rule;
use lang::frontend::parse_case;
use lang::ir::sym::Sym;
use lang::render;

fn case_with(body: &str, x: &str) -> Case {
    let src = format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[], pallas_loop_type=\"fori_loop\"))\n\
         def kernel(x: torch.Tensor) -> torch.Tensor:\n\
         \x20   out = torch.zeros([1, 2, 128], dtype=torch.float32)\n\
         \x20   for request in hl.grid(1):\n\
         \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
         \x20       for outer in hl.tile(x.size(0), block_size=4):\n\
         \x20           x_block = x[outer, :, :]\n\
         \x20           live = outer.end - outer.begin\n\
         {body}\n\
         \x20       out[request, :, :] = acc\n\
         \x20   return out\n\n{x}\nkernel(x)\n"
    );
    parse_case(&src, "<unit>").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// Normalizes the subscript rendered `text` in `case`.
fn normalized(case: &Case, text: &str) -> Result<Selector, Rejection> {
    let types = lang::ir::types::infer(case).expect("types");
    let planner = Planner::new(case, &types);
    let sub = planner
        .links
        .subscripts
        .iter()
        .copied()
        .find(|e| render::expr(e) == text)
        .unwrap_or_else(|| panic!("no subscript `{text}`"));
    planner.normalize(sub).map(|n| n.selector)
}

const X8: &str = "x = torch.ones(8, 2, 128)";

#[test]
fn normalizer_static_forms() {
    let c = case_with(
        "            acc = acc + x_block[1].float() + x_block[:, 0:1, :].float().sum(dim=0)",
        X8,
    );
    let s = normalized(&c, "x_block[1]").unwrap();
    assert_eq!(
        (
            s.kind,
            s.logical_dim,
            s.begin.clone(),
            s.width,
            s.squeeze,
            s.mask
        ),
        (
            SelectorKind::Static,
            0,
            SelectorBegin::Static(1),
            1,
            true,
            false
        )
    );
    let s = normalized(&c, "x_block[:, 0:1, :]").unwrap();
    assert_eq!(
        (s.kind, s.logical_dim, s.begin.clone(), s.width, s.squeeze),
        (SelectorKind::Static, 1, SelectorBegin::Static(0), 1, false)
    );
}

#[test]
fn normalizer_tile_forms() {
    let c = case_with(
        "            for local in hl.tile(live, block_size=1):\n\
         \x20               acc = acc + x_block[local.begin, :, :].float()\n\
         \x20           for inner in hl.tile(4, block_size=2):\n\
         \x20               acc = acc + x_block[inner.index + 0, :, :].float().sum(dim=0)",
        X8,
    );
    let s = normalized(&c, "x_block[local.begin, :, :]").unwrap();
    assert_eq!(
        (s.kind, s.local_block, s.outer_block, s.width),
        (SelectorKind::Tile, Some(2), Some(1), 1)
    );
    assert_eq!(
        s.begin,
        SelectorBegin::Symbolic(Affine::sym(Sym::TileBegin(2)))
    );
    assert!(s.squeeze && !s.mask);
    let s = normalized(&c, "x_block[inner.index + 0, :, :]").unwrap();
    assert_eq!(
        (s.kind, s.local_block, s.outer_block, s.width),
        (SelectorKind::Tile, Some(3), None, 2)
    );
    assert!(!s.squeeze && s.mask);
}

#[test]
fn normalizer_tail_forms_and_refusals() {
    let c = case_with(
        "            picked = hl.arange(live - 2, live)\n\
         \x20           if live >= 2:\n\
         \x20               acc = acc + x_block[picked, :, :].float().sum(dim=0) + x_block[live - 2 : live, :, :].float().sum(dim=0)\n\
         \x20               acc = acc + x_block[None, 0, :].float().sum(dim=0)\n\
         \x20           acc = acc + x_block[live - 2 : live, :, :].float().sum(dim=0)",
        X8,
    );
    let start = Affine::live_extent(1).sub(&Affine::constant(2));
    let s = normalized(&c, "x_block[picked, :, :]").unwrap();
    assert_eq!(
        (s.kind, s.width, s.outer_block, s.squeeze, s.mask),
        (SelectorKind::Tail, 2, Some(1), false, false)
    );
    assert_eq!(s.begin, SelectorBegin::Symbolic(start.clone()));
    // The same slice text appears inside and outside the `if`.
    let types = lang::ir::types::infer(&c).unwrap();
    let planner = Planner::new(&c, &types);
    let both: Vec<_> = planner
        .links
        .subscripts
        .iter()
        .copied()
        .filter(|e| render::expr(e) == "x_block[live - 2 : live, :, :]")
        .collect();
    assert_eq!(both.len(), 2);
    assert_eq!(
        planner.normalize(both[0]).unwrap().selector.kind,
        SelectorKind::Tail
    );
    assert_eq!(
        planner.normalize(both[1]).unwrap_err().rule,
        Rule::SelectorTailOutsideConditional
    );
    assert_eq!(
        normalized(&c, "x_block[None, 0, :]").unwrap_err().rule,
        Rule::SelectorAddsDimension
    );
}

#[test]
fn first_failure_wins() {
    // 9 rows, block 4: the root is guarded; the inner loop's static end does not discharge it.
    // `rows[:, 0, :]` (a planned user: its dim is not the guarded one) first gets "masked selection ..." (recorded at the masked boundary), then the
    // boundary raises "may contain padding", recorded on everything reachable from the root:
    // `rows[:, 0, :]` keeps its first (local) failure; `rows` itself gets the padding one.
    let c = case_with(
        "            for local in hl.tile(4, block_size=2):\n\
         \x20               rows = x_block[local.index, :, :]\n\
         \x20               acc = acc + rows[:, 0, :].float().sum(dim=0)",
        "x = torch.ones(9, 2, 128)",
    );
    let types = lang::ir::types::infer(&c).unwrap();
    let mut planner = Planner::new(&c, &types);
    planner.plan_roots();
    let find = |t: &str| {
        planner
            .links
            .subscripts
            .iter()
            .copied()
            .find(|e| render::expr(e) == t)
            .unwrap()
    };
    let (rows, first) = (find("x_block[local.index, :, :]"), find("rows[:, 0, :]"));
    assert_eq!(
        planner.first_failure(first).unwrap().rule,
        Rule::ChainMaskedFeedsNarrowing
    );
    assert_eq!(
        planner.first_failure(rows).unwrap().rule,
        Rule::ChainPaddingAtBoundary
    );
    assert!(
        planner.resident.is_empty(),
        "the root's scratch annotations were discarded"
    );
    // The first failing subscript in program order is reported.
    assert_eq!(
        planner.complete().unwrap_err().rule,
        Rule::ChainPaddingAtBoundary
    );
}

#[test]
fn lines_keep_duplicates_and_at_most_three() {
    let s = |l| Span::new(l, 1);
    assert_eq!(
        lines(&[s(3), s(3), s(5), s(7), s(9)]),
        "line 3, line 3, line 5"
    );
    assert_eq!(at(s(12)), "line 12");
}
