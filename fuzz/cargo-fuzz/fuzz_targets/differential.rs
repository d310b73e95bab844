//! Fuzz target `differential`: the check `pallas_diff_fuzz::checks::differential::run` on libFuzzer's bytes
//! (it generates a case from them and panics on a finding). A panic here is a finding.

#![no_main]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};

fuzz_target!(|data: &[u8]| {
    // An `arbitrary` error means the bytes ran out: not a finding.
    let _ = pallas_diff_fuzz::checks::differential::run(&mut Unstructured::new(data));
});
