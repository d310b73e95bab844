//! `jnp.sum` with XLA:CPU's summation order (jax/jaxlib 0.10.2, measured on x86-64 AVX2 by
//! reconstructing the addition tree of each reduction with cancellation probes, then checked
//! with random data; see the module docs of [`crate::sim`]).
//!
//! Integer sums wrap and are order-independent. Float sums (bfloat16 is summed in float32 and
//! rounded once at the end, as `jnp.sum` upcasts it) follow the order XLA:CPU uses:
//! * a reduction whose input has at least 4096 elements is handed to the YNNPACK runtime
//!   (`__ynn_fusion`): reducing non-minor dims, the reduced elements (row-major over the
//!   reduced dims) are added in blocks of 4, the block sums of each group of 16 are added in
//!   order, then the group sums; reducing the minor dim, element `j` goes to lane `j % 16`,
//!   each lane is summed as above, and the 16 lanes are combined by a halving tree;
//! * otherwise XLA's loop emitter: one reduced dim of size ≤ 32 is summed in order from 0; a
//!   larger one is first split by the tree-reduction rewriter into windows of 32 (the padding
//!   centred: `lo = pad / 2`), each summed in order, then the window sums in order;
//! * two reduced dims (XLA merges `sum(sum(x, a), b)` into one reduce): when the outer reduced
//!   dim is a power of two, its rows go to `min(outer, 8)` lanes ([`lanes`]: row `i` added in
//!   order into lane `i % 8`) combined by a halving tree (`p[i] + p[i + n/2]`, recursively);
//!   otherwise all reduced elements are summed in row-major order. (Three reduced dims follow an order
//!   the executor does not reproduce: it sums them in row-major order.)
//! * several reduced dims, one longer than 32: the tree-reduction rewriter turns the reduce
//!   into a `reduce-window` (every reduced dim windowed by `min(d, 32)`, padding centred) and
//!   a `reduce` of the window sums ([`windowed`]; measured after a false finding of the
//!   `differential` fuzz target on a 7x128 slab). Not reproduced (measured, no case reaches
//!   them yet): 32x32 windows (`(64, 64)`), a reduced dim of 31 mod 32, and a kept minor dim
//!   of size > 1 below a windowed reduce (`(8, 64, 8)` over dims `{0, 1}` or `{1, 2}`), nor
//!   YNNPACK's order for two reduced dims above a kept minor dim (`(16, 128, 2)` over
//!   `{0, 1}`, 1 ulp off in 5 of 6 outputs; `(16, 2, 128)` over `{0, 1}` is right).

use super::error::{ErrorKind, SimError, SimResult};
use super::value::{Arr, Cat, MAX_RANK, Shape, wrap_i32};

/// Input size from which XLA:CPU hands a reduction to YNNPACK.
const YNN_MIN_ELEMENTS: usize = 4096;

fn seq(v: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for &x in v {
        acc += x;
    }
    acc
}

fn seq_from_first(v: &[f32]) -> f32 {
    let mut it = v.iter();
    let Some(&first) = it.next() else {
        return 0.0;
    };
    let mut acc = first;
    for &x in it {
        acc += x;
    }
    acc
}

/// YNNPACK's order along one reduced axis.
fn ynn(v: &[f32]) -> f32 {
    let mut total: Option<f32> = None;
    for group in v.chunks(16) {
        let mut g: Option<f32> = None;
        for block in group.chunks(4) {
            let b = seq_from_first(block);
            g = Some(g.map_or(b, |a| a + b));
        }
        let g = g.unwrap_or(0.0);
        total = Some(total.map_or(g, |a| a + g));
    }
    total.unwrap_or(0.0)
}

/// YNNPACK's order along the minor axis: 16 lanes, then a halving tree.
fn ynn_minor(v: &[f32], lane: &mut Vec<f32>) -> f32 {
    let mut lanes = [0.0f32; 16];
    for (l, slot) in lanes.iter_mut().enumerate() {
        lane.clear();
        lane.extend(v.iter().skip(l).step_by(16));
        *slot = ynn(lane);
    }
    halving(&mut lanes)
}

fn halving(p: &mut [f32]) -> f32 {
    let mut n = p.len();
    while n > 1 {
        let h = n / 2;
        for i in 0..h {
            p[i] += p[i + h];
        }
        if n % 2 == 1 {
            p[h] = p[n - 1];
            n = h + 1;
        } else {
            n = h;
        }
    }
    p.first().copied().unwrap_or(0.0)
}

/// The tree-reduction rewriter's order for one axis longer than 32.
fn windows32(v: &[f32]) -> f32 {
    let n = v.len();
    let pad = (32 - n % 32) % 32;
    let lo = pad / 2;
    let windows = (n + pad) / 32;
    let mut acc = 0.0f32;
    for w in 0..windows {
        let a = (w * 32).saturating_sub(lo);
        let b = ((w + 1) * 32).saturating_sub(lo).min(n);
        acc += seq(&v[a..b]);
    }
    acc
}

/// `outer` rows (a power of two) of `v.len() / outer` values each, row-major, as XLA:CPU's
/// vectorized loop adds them: XLA emits reductions with `fadd reassoc`, LLVM fully unrolls
/// the inner loop and vectorizes the outer one into 8 lanes of AVX2 (seen in the
/// `ir-with-opt.ll` dump of `jnp.sum` over `(128, 7)`: seven `fadd reassoc <8 x float>` per
/// iteration, then `llvm.vector.reduce.fadd.v8f32`). Row `i` is added in order into lane
/// `i % min(outer, 8)`, then the lanes are combined by a halving tree. Measured bit for bit
/// with random data of mixed magnitudes: `(16, 7)`, `(16, 32)`, `(32, 32)`, `(32, 3)`,
/// `(16, 2)`, `(8, 7)`, `(4, 7)` over both dims, `(16, 5, 2)` over `{0, 1}`, `(2, 16, 5)` over
/// `{1, 2}` (a halving tree over all `outer` rows, the earlier rule, is the same up to 8 rows
/// and wrong from 16).
fn lanes(v: &[f32], outer: usize) -> f32 {
    let vf = outer.clamp(1, 8);
    let inner = (v.len() / outer.max(1)).max(1);
    let mut acc = [0.0f32; 8];
    for (i, row) in v.chunks(inner).enumerate() {
        for &x in row {
            acc[i % vf] += x;
        }
    }
    halving(&mut acc[..vf])
}

/// XLA's loop emitter's order for reduced values laid out row-major over `dims` (no dim
/// longer than 32): two reduced dims of sizes > 1 whose outer one is a power of two in
/// [`lanes`]; anything else in row-major order.
fn loop_order(v: &[f32], dims: &[usize]) -> f32 {
    let mut eff = dims.iter().copied().filter(|&d| d > 1);
    match (eff.next(), eff.next(), eff.next()) {
        (Some(outer), Some(_), None) if outer.is_power_of_two() => lanes(v, outer),
        (None, _, _) | (Some(_), None, _) | (Some(_), Some(_), _) => seq(v),
    }
}

/// One window of the tree-reduction rewriter's `reduce-window`, its values row-major over
/// `ext` (the window's extents, clipped to the array). Measured with random data of mixed
/// magnitudes, bit for bit: when the window has exactly two dims longer than 1, the outer one
/// a power of two, and no reduced dim is padded at the low end, in [`lanes`] (windows `8x32` of `(8, 128)`, `32x7` of `(128, 7)`, `32x3` of `(64, 3)`,
/// `4x32` of `(4, 64)`, `2x32`, `32x2`, `16x32`, `32x5`, `32x9`); otherwise (a padded window,
/// or `7x32` of `(7, 128)`, `4x25` of `(4, 50)`, `2x18x3` of `(2, 100, 3)`) in row-major
/// order.
fn window_sum(v: &[f32], ext: &[usize], padded: bool) -> f32 {
    let mut eff = ext.iter().copied().filter(|&d| d > 1);
    match (padded, eff.next(), eff.next(), eff.next()) {
        (false, Some(outer), Some(_), None) if outer.is_power_of_two() => lanes(v, outer),
        (true, _, _, _)
        | (false, None, _, _)
        | (false, Some(_), None, _)
        | (false, Some(_), Some(_), _) => seq(v),
    }
}

/// The tree-reduction rewriter's order for several reduced dims (`dims`, sizes > 1, the
/// values row-major over them), one longer than 32. The rewriter (seen in the optimized HLO:
/// `jnp.sum(jnp.sum(x, 0), 0)` of `(7, 128, 2, 1)` becomes a `reduce-window` of window
/// `7x32x1x1` into `f32[1,4,2,1]`, then a `reduce` over dims `{0, 1}`) windows every reduced
/// dim by `min(d, 32)`, padding each centred (`lo = pad / 2`, as [`windows32`]); each window
/// is summed by [`window_sum`], then the grid of window sums (row-major) by [`loop_order`].
fn windowed(v: &[f32], dims: &[usize], win: &mut Vec<f32>) -> f32 {
    let k = dims.len();
    let mut size = [1usize; MAX_RANK];
    let mut count = [1usize; MAX_RANK];
    let mut lo = [0usize; MAX_RANK];
    for (d, &n) in dims.iter().enumerate() {
        size[d] = n.min(32);
        count[d] = n.div_ceil(size[d]);
        lo[d] = (count[d] * size[d] - n) / 2;
    }
    // A low pad of 0 with a high pad of 1 (a dim of 31 mod 32) vectorizes some other way
    // (measured: `(4, 95)`, `(63, 8)`, `(32, 63)` match neither order), not modelled.
    let padded = lo[..k].iter().any(|&l| l > 0);
    let mut row_stride = [1usize; MAX_RANK];
    for d in (0..k.saturating_sub(1)).rev() {
        row_stride[d] = row_stride[d + 1] * dims[d + 1];
    }
    let n_windows: usize = count[..k].iter().product();
    let mut parts = Vec::with_capacity(n_windows);
    let mut g = [0usize; MAX_RANK];
    for _ in 0..n_windows {
        let mut start = [0usize; MAX_RANK];
        let mut ext = [1usize; MAX_RANK];
        for d in 0..k {
            let a = (g[d] * size[d]).saturating_sub(lo[d]);
            let b = ((g[d] + 1) * size[d]).saturating_sub(lo[d]).min(dims[d]);
            start[d] = a;
            ext[d] = b - a;
        }
        win.clear();
        let mut i = [0usize; MAX_RANK];
        let n_in: usize = ext[..k].iter().product();
        for _ in 0..n_in {
            let off: usize = (0..k).map(|d| (start[d] + i[d]) * row_stride[d]).sum();
            win.push(v[off]);
            next_index(&mut i[..k], &ext[..k]);
        }
        parts.push(window_sum(win, &ext[..k], padded));
        next_index(&mut g[..k], &count[..k]);
    }
    loop_order(&parts, &count[..k])
}

/// Advances a row-major multi-index over `dims` (wrapping to zeros after the last).
pub(crate) fn next_index(idx: &mut [usize], dims: &[usize]) {
    let mut d = idx.len();
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        if idx[d] < dims[d] {
            return;
        }
        idx[d] = 0;
    }
}

/// How one output element's reduced values are combined.
#[derive(Clone, Copy)]
enum Order {
    Seq,
    Windows32,
    /// Several reduced dims (these sizes, all > 1), one longer than 32: [`windowed`].
    Windows {
        dims: Shape,
    },
    Ynn,
    YnnMinor,
    /// [`lanes`] over `outer` rows.
    Lanes {
        outer: usize,
    },
}

/// The order for reducing `axes` of `shape`. Reduced dims of size 1 are ignored (XLA removes
/// them), and a dim is minor when every dim after it has size 1.
fn order(shape: Shape, axes: &[usize]) -> Order {
    let dims = shape.dims();
    let mut eff = [0usize; MAX_RANK];
    let mut k = 0;
    for &a in axes {
        if dims[a] > 1 {
            eff[k] = a;
            k += 1;
        }
    }
    let axes = &eff[..k];
    let n: usize = axes.iter().map(|&a| dims[a]).product();
    if shape.numel() >= YNN_MIN_ELEMENTS {
        if let [a] = axes
            && dims[a + 1..].iter().all(|&d| d == 1)
        {
            return Order::YnnMinor;
        }
        return Order::Ynn;
    }
    if axes.len() >= 2
        && axes.iter().any(|&a| dims[a] > 32)
        && let Ok(dims) = Shape::new(&axes.iter().map(|&a| dims[a]).collect::<Vec<_>>())
    {
        return Order::Windows { dims };
    }
    match axes {
        [_] if n > 32 => Order::Windows32,
        [a, _] if shape.dims()[*a] >= 2 && shape.dims()[*a].is_power_of_two() => Order::Lanes {
            outer: shape.dims()[*a],
        },
        _ => Order::Seq,
    }
}

/// `jnp.sum` over `axes` (sorted, distinct) of `a`.
pub(crate) fn sum(a: &Arr, axes: &[usize]) -> SimResult<Arr> {
    let r = a.shape.rank();
    if let Some(&bad) = axes.iter().find(|&&x| x >= r) {
        return Err(SimError::trace(
            ErrorKind::ValueError,
            format!("axis {bad} is out of bounds for array of dimension {r}"),
        ));
    }
    let cat = match a.cat {
        Cat::Bool => Cat::I32,
        other => other,
    };
    let mut kept = Shape::SCALAR;
    let mut kept_axes = [0usize; MAX_RANK];
    for k in 0..r {
        if !axes.contains(&k) {
            kept_axes[kept.rank()] = k;
            kept.push(a.shape.dims()[k])?;
        }
    }
    let Some(va) = a.vals() else {
        return Ok(Arr::traced(cat, kept));
    };
    let ord = order(a.shape, axes);
    if let [ax] = axes
        && (cat.is_int() || matches!(ord, Order::Seq))
    {
        return Ok(sum_one_axis(va, a.shape, *ax, cat, kept));
    }
    if matches!(ord, Order::Seq) && !cat.is_int() {
        // Several reduced dims in order: contiguous when the reduced dims are adjacent.
        let adjacent = axes.windows(2).all(|w| w[1] == w[0] + 1);
        if adjacent && let (Some(&first), Some(&last)) = (axes.first(), axes.last()) {
            let dims = a.shape.dims();
            let outer: usize = dims[..first].iter().product();
            let n: usize = dims[first..=last].iter().product();
            let inner: usize = dims[last + 1..].iter().product();
            let merged = Shape::new(&[outer, n, inner])?;
            return Ok(sum_one_axis(va, merged, 1, cat, kept));
        }
    }
    let st = a.shape.strides();
    // Offsets of the reduced elements (row-major over the reduced dims) relative to an
    // output element's base.
    let mut red_off: Vec<usize> = vec![0];
    for &ax in axes {
        let d = a.shape.dims()[ax];
        let mut next = Vec::with_capacity(red_off.len() * d);
        for &o in &red_off {
            for i in 0..d {
                next.push(o + i * st[ax]);
            }
        }
        red_off = next;
    }
    let n_out = kept.numel();
    let mut out = super::value::pool_vec(n_out);
    let mut idx = [0usize; MAX_RANK];
    let mut buf: Vec<f32> = Vec::with_capacity(red_off.len());
    let mut lane: Vec<f32> = Vec::new();
    for _ in 0..n_out {
        let mut base = 0usize;
        for k in 0..kept.rank() {
            base += idx[k] * st[kept_axes[k]];
        }
        let v = if cat.is_int() {
            let s: i64 = red_off.iter().map(|&o| va[base + o] as i64).sum();
            wrap_i32(s as f64)
        } else {
            buf.clear();
            buf.extend(red_off.iter().map(|&o| va[base + o] as f32));
            let s = match ord {
                Order::Seq => seq(&buf),
                Order::Windows32 => windows32(&buf),
                Order::Ynn => ynn(&buf),
                Order::YnnMinor => ynn_minor(&buf, &mut lane),
                Order::Windows { dims } => windowed(&buf, dims.dims(), &mut lane),
                Order::Lanes { outer } => lanes(&buf, outer),
            };
            cat.round(f64::from(s))
        };
        out.push(v);
        let mut k = kept.rank();
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            if idx[k] < kept.dims()[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(Arr::new(cat, kept, out))
}

/// A sum over one axis in order (int sums in any order: they are exact), as `(outer, n,
/// inner)` loops accumulating whole inner rows.
fn sum_one_axis(va: &[f64], shape: Shape, axis: usize, cat: Cat, kept: Shape) -> Arr {
    let dims = shape.dims();
    let outer: usize = dims[..axis].iter().product();
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    if cat.is_int() {
        let mut acc = vec![0i64; outer * inner];
        for o in 0..outer {
            let dst = &mut acc[o * inner..(o + 1) * inner];
            for i in 0..n {
                let src = &va[(o * n + i) * inner..(o * n + i + 1) * inner];
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d += x as i64;
                }
            }
        }
        return Arr::collect(cat, kept, acc.into_iter().map(|s| wrap_i32(s as f64)));
    }
    let mut acc = vec![0.0f32; outer * inner];
    for o in 0..outer {
        let dst = &mut acc[o * inner..(o + 1) * inner];
        for i in 0..n {
            let src = &va[(o * n + i) * inner..(o * n + i + 1) * inner];
            for (d, &x) in dst.iter_mut().zip(src) {
                *d += x as f32;
            }
        }
    }
    if matches!(cat, Cat::F32 | Cat::WeakFloat) {
        // A float32 sum is its own rounding: `cat.round(f64::from(s)) == f64::from(s)`.
        return Arr::collect(cat, kept, acc.into_iter().map(f64::from));
    }
    Arr::collect(cat, kept, acc.into_iter().map(|s| cat.round(f64::from(s))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_centred() {
        // 33 elements: 15 zeros of padding, then x[0..17] in the first window.
        let v: Vec<f32> = (0..33).map(|i| i as f32).collect();
        assert_eq!(windows32(&v), (0..33).sum::<i32>() as f32);
    }

    /// `jnp.sum(jnp.sum(x, 0), 0)` of a float32 `shape` of zeros but for `sets`, through
    /// [`sum`] (XLA merges the nested sums into one reduce over dims `{0, 1}`).
    fn sum01(shape: [usize; 2], sets: &[([usize; 2], f32)]) -> f64 {
        let mut v = vec![0.0f64; shape[0] * shape[1]];
        for &([i, j], x) in sets {
            v[i * shape[1] + j] = f64::from(x);
        }
        let a = Arr::new(Cat::F32, Shape::new(&shape).expect("rank 2"), v);
        let s = sum(&a, &[0, 1]).expect("sum");
        s.item().expect("a scalar")
    }

    /// Cancellation probes on two reduced dims, one longer than 32; each expected value is
    /// what `jax.jit(lambda x: jnp.sum(jnp.sum(x, axis=0), axis=0))` gives on XLA:CPU (jax
    /// 0.10.2, x86-64 AVX2), and each differs from a row-major sum of all elements.
    #[test]
    fn two_reduced_dims_longer_than_32_follow_the_reduce_window() {
        let big = 2f32.powi(24);
        // (7, 128): windows of 7x32, each row-major; `big + 1` never meets column 32.
        assert_eq!(
            sum01([7, 128], &[([0, 0], big), ([0, 32], 1.0), ([6, 31], -big)]),
            1.0
        );
        // (8, 128): a 8x32 window is 8 lanes (one per row) and a halving tree, so `1` (row
        // 1) is lost to `big` (row 0), then window 1 cancels `big`.
        assert_eq!(
            sum01([8, 128], &[([0, 0], big), ([0, 32], -big), ([1, 0], 1.0)]),
            0.0
        );
        // (128, 7): a 32x7 window puts row `i` in lane `i % 8`: rows 0 and 8 cancel first.
        assert_eq!(
            sum01([128, 7], &[([0, 0], big), ([1, 0], 1.0), ([8, 0], -big)]),
            1.0
        );
        // (4, 50): a padded window (4x25) is summed row-major: `big + 1` rounds to `big`.
        assert_eq!(
            sum01([4, 50], &[([0, 7], big), ([1, 7], 1.0), ([2, 7], -big)]),
            0.0
        );
    }

    /// Two reduced dims up to 32, the outer a power of two above 8: rows share 8 lanes, so row
    /// 8 is added onto row 0's lane element by element (XLA:CPU gives 0; a halving tree over
    /// 16 row sums would give `big + (1 - big) = 1`).
    #[test]
    fn sixteen_rows_share_eight_lanes() {
        let big = 2f32.powi(24);
        assert_eq!(
            sum01([16, 7], &[([0, 0], big), ([8, 0], 1.0), ([8, 1], -big)]),
            0.0
        );
    }

    #[test]
    fn halving_tree_pairs_i_with_i_plus_half() {
        let big = 2f32.powi(24);
        // (big + 1) + (-big + 1): each pair rounds; ((a0 + a2) + (a1 + a3)).
        let mut p = [big, 1.0, -big, 1.0];
        assert_eq!(halving(&mut p), 2.0);
        assert_eq!(seq(&[big, 1.0, -big, 1.0]), 1.0);
    }
}
