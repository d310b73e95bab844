//! Verdicts where our model differed from Helion 1.5.1 in a 5,000-case Helion campaign
//! (issue 39): a refusal by Helion's codegen after a construct our codegen does not model
//! (finding 0006), and the `-1` of a reshape that is one block's symbol, which a second
//! reshape cannot make concrete (finding 0088). Every case script here was run through helion==1.5.1 (`pallas-diff check
//! --engines oracle,helion-pallas`), and each assertion states its verdict by our rule id.

use lang::frontend::parse_case;
use pallas_diff_compiler::compile::{CodegenOptions, Compiled, NotModelled, Refused, compile};
use pallas_diff_compiler::verdict::{Rejection, Rule};

/// A case script: `config` is the inside of `helion.Config(...)`, `body` the kernel body
/// (indented by 4), whose first line is line 8.
fn script(config: &str, params: &str, body: &str, inputs: &str, call: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config({config}))\n\
         def k({params}):\n{body}\n\n\n{inputs}\nk({call})\n"
    )
}

fn compiled(src: &str) -> Compiled {
    let case = parse_case(src, "k.py").unwrap_or_else(|e| panic!("{e}\n{src}"));
    compile(&case, &CodegenOptions::default())
}

#[track_caller]
fn rejection(src: &str) -> Rejection {
    match compiled(src) {
        Compiled::Rejected(Refused { rejection, .. }) => rejection,
        Compiled::Lowered(_) => panic!("lowered:\n{src}"),
        Compiled::Gap(NotModelled { gap, .. }) => panic!("{gap}:\n{src}"),
    }
}

#[track_caller]
fn gap_construct(src: &str) -> String {
    match compiled(src) {
        Compiled::Gap(NotModelled { gap, .. }) => gap.construct,
        Compiled::Lowered(_) => panic!("lowered:\n{src}"),
        Compiled::Rejected(Refused { rejection, .. }) => panic!("rejected {rejection}:\n{src}"),
    }
}

/// S3 (`x` is `[8, 2, 128]`, one grid step, an outer tile of 4) with `inner` at 12 spaces
/// after the outer tile's line 11.
fn s3(loop_type: &str, inner: &str) -> String {
    script(
        &format!("block_sizes=[], pallas_loop_type=\"{loop_type}\""),
        "x: torch.Tensor",
        &format!(
            "    out = torch.zeros([1, 2, 128], dtype=torch.float32)\n\
             \x20   for request in hl.grid(1):\n\
             \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
             \x20       for outer in hl.tile(x.size(0), block_size=4):\n\
             \x20           x_block = x[outer, :, :]\n\
             {inner}\n\
             \x20       out[request, :, :] = acc\n\
             \x20   return out"
        ),
        "x = torch.ones(8, 2, 128)",
        "x",
    )
}

#[test]
fn unroll_refuses_a_later_loop_after_a_construct_the_codegen_does_not_model() {
    // Finding 0006: `torch.rsqrt` (line 13) is a codegen gap, but Helion emits it and then
    // refuses the nested loop over `live - 3` (line 15), which is no enclosing tile's end.
    let inner = |bound: &str| {
        format!(
            "            acc = torch.rsqrt(acc + 1.0)\n\
             \x20           live = outer.end - outer.begin\n\
             \x20           for local in hl.tile({bound}, block_size=1):\n\
             \x20               acc = acc + x_block[0, :, :] * local.begin"
        )
    };
    let r = rejection(&s3("unroll", &inner("live - 3")));
    assert_eq!(r.rule, Rule::ConfigUnrollDynamicBounds, "{r}");
    assert_eq!(r.span.line, 15, "{r}");
    // The gap stays when no later loop is refused: under fori_loop, or when the loop's
    // bounds are static or an enclosing tile's own (`_codegen_dynamic_unroll`).
    assert_eq!(
        gap_construct(&s3("fori_loop", &inner("live - 3"))),
        "torch.rsqrt"
    );
    assert_eq!(gap_construct(&s3("unroll", &inner("2"))), "torch.rsqrt");
    assert_eq!(
        gap_construct(&s3("unroll", &inner("outer.begin, outer.end"))),
        "torch.rsqrt"
    );

    // Helion's `test_bmm_nonzero_k_begin` pattern: a tile used as a value (line 10, a gap)
    // before a loop over `int` arguments (line 11), which are runtime scalars (D-1.5.1-14).
    let bmm = |loop_type: &str| {
        script(
            &format!("block_sizes=[8, 8], pallas_loop_type=\"{loop_type}\""),
            "a: torch.Tensor, b: torch.Tensor, k_begin: int, k_end: int",
            "    out = torch.zeros([16, 128], dtype=torch.float32)\n\
             \x20   for tm in hl.tile(a.size(0)):\n\
             \x20       acc = hl.zeros([tm, 128], dtype=torch.float32)\n\
             \x20       for tk in hl.tile(k_begin, k_end):\n\
             \x20           acc = acc + a[tm, tk].sum(dim=1)[:, None] * b[tk, :].sum(dim=0)[None, :]\n\
             \x20       out[tm, :] = acc\n\
             \x20   return out",
            "a = torch.ones(16, 32)\nb = torch.ones(32, 128)",
            "a, b, 8, 32",
        )
    };
    let r = rejection(&bmm("unroll"));
    assert_eq!(r.rule, Rule::ConfigUnrollDynamicBounds, "{r}");
    assert_eq!(r.span.line, 11, "{r}");
    assert_eq!(
        gap_construct(&bmm("fori_loop")),
        "the tile `tm` used as a value"
    );
}

#[test]
fn a_reshape_minus_one_that_is_one_block_symbol_stays_that_symbol() {
    // Finding 0088: the `-1` of `[u, 2, 16].reshape(-1, 2, 16)` is `u` itself, so its
    // `.reshape(-1, 16)` has `2*u` rows, which Helion 1.5.1 cannot make concrete for a config:
    // `view.no-concrete-shape` on line 13, as for `x_block.reshape(-1, 16)` directly.
    let case = |view: &str, rows: usize| {
        script(
            "block_sizes=[], pallas_loop_type=\"fori_loop\"",
            "x: torch.Tensor",
            &format!(
                "    out = torch.zeros([1, 16], dtype=torch.float32)\n\
                 \x20   for request in hl.grid(1):\n\
                 \x20       acc = hl.zeros([16], dtype=torch.float32)\n\
                 \x20       for outer in hl.tile(x.size(0), block_size=4):\n\
                 \x20           x_block = x[outer, :, :]\n\
                 \x20           flat = {view}\n\
                 \x20           for local in hl.tile({rows}, block_size=2):\n\
                 \x20               acc = acc + flat[local.index, :].sum(dim=0)\n\
                 \x20       out[request, :] = acc\n\
                 \x20   return out"
            ),
            "x = torch.ones(8, 2, 16)",
            "x",
        )
    };
    for view in [
        "x_block.reshape(-1, 2, 16).reshape(-1, 16)",
        "x_block.reshape(-1, 16)",
    ] {
        let r = rejection(&case(view, 8));
        assert_eq!(r.rule, Rule::ViewNoConcreteShape, "{view}: {r}");
        assert_eq!(r.span.line, 13, "{view}: {r}");
    }
    // The first reshape alone keeps `u` rows, a concrete shape: it lowers.
    let single = case("x_block.reshape(-1, 2, 16)[:, 0, :]", 4);
    assert!(
        matches!(compiled(&single), Compiled::Lowered(_)),
        "{}",
        pallas_diff_compiler::compile::verdict_line(&compiled(&single))
    );
}
