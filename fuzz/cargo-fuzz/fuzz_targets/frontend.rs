//! Fuzz target for the case-script frontend: `parse_case` never panics on any UTF-8 input, and
//! every case it accepts renders (`render_case`) to a script that parses back to the same
//! span-stripped case. A panic here is a finding.

#![no_main]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use libfuzzer_sys::fuzz_target;
use pallas_diff_compiler::frontend::parse_case;
use pallas_diff_compiler::render::render_case;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(case) = parse_case(source, "fuzz.py") else {
        return;
    };
    let rendered = render_case(&case);
    match parse_case(&rendered, "rendered.py") {
        Ok(back) => assert!(
            back.without_spans() == case.without_spans(),
            "render changed the case:\n{rendered}"
        ),
        Err(e) => panic!("the rendered case does not parse: {e}\n{rendered}"),
    }
});
