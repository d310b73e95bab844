//! How the conformance tests judge a float that pallas-sim and JAX computed: bit for bit where
//! pallas-sim models XLA:CPU's summation order on this host with these XLA flags
//! (`tpu_runner::sim_order_holds_here`), else with the campaign's tolerance policy
//! (`fuzz::compare`), after saying once why bit-identity is not claimed here. A module with a
//! `lax.dot_general` is always judged by the tolerance: XLA:CPU picks a dot's order by shape
//! and dtype, and pallas-sim reproduces only one of them (`sim/src/ops/dot.rs`).

use fuzz::compare::Tolerance;
use lang::tensor::Tensor;
use std::sync::OnceLock;

/// Whether this host and these XLA flags give the order pallas-sim models (printed once when
/// not).
pub fn bit_identity() -> bool {
    static HOLDS: OnceLock<bool> = OnceLock::new();
    *HOLDS.get_or_init(|| match tpu_runner::sim_order_holds_here() {
        Ok(()) => true,
        Err(why) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "floats are compared with the tolerance policy, not bit for bit: {why}"
            );
            false
        }
    })
}

/// Whether sim value `p` is acceptable for JAX value `q` of output `jax`: equal bits (or both
/// NaN) where [`bit_identity`] holds, else within the tolerance policy. With the source of the
/// module (`emitted`), an output of a module that computes a `lax.dot_general` is judged by the
/// tolerance policy too: pallas-sim models only one of XLA:CPU's dot orders. A probe that pins
/// that order passes `None`.
pub fn accepts(p: f64, q: f64, jax: &Tensor, emitted: Option<&str>) -> bool {
    if p == q || (p.is_nan() && q.is_nan()) {
        return true;
    }
    let modelled = bit_identity() && !emitted.is_some_and(|s| s.contains("lax.dot_general("));
    !modelled && Tolerance::for_output(jax, 0.0).matches(p, q)
}
