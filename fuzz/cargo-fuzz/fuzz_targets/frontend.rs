//! Fuzz target for the case readers: `load_case_text` never panics or overflows its stack on
//! any UTF-8 input, a case script or (when the input starts with `{`) a case JSON, and every
//! case it accepts renders (`render_case`) to a script that parses back to the same
//! span-stripped case and reads back from its own JSON
//! (`pallas_diff_fuzz::checks::frontend_roundtrip::check_text`). A panic here is a finding.

#![no_main]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use libfuzzer_sys::fuzz_target;
use pallas_diff_fuzz::checks::frontend_roundtrip::check_text;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check_text(text);
});
