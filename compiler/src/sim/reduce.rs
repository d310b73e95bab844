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
//!   dim is a power of two, the inner dim is summed in order per outer index and the outer
//!   partial sums are combined by a halving tree (`p[i] + p[i + n/2]`, recursively); otherwise
//!   all reduced elements are summed in row-major order. (Three reduced dims follow an order
//!   the executor does not reproduce: it sums them in row-major order.)

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

/// How one output element's reduced values are combined.
#[derive(Clone, Copy)]
enum Order {
    Seq,
    Windows32,
    Ynn,
    YnnMinor,
    /// Halving tree over `outer` partial sums of `inner` elements each.
    Halving {
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
    match axes {
        [_] if n > 32 => Order::Windows32,
        [a, _] if shape.dims()[*a] >= 2 && shape.dims()[*a].is_power_of_two() => Order::Halving {
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
                Order::Halving { outer } => {
                    let inner = buf.len() / outer;
                    let mut parts: Vec<f32> = buf.chunks(inner.max(1)).map(seq).collect();
                    halving(&mut parts)
                }
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

    #[test]
    fn halving_tree_pairs_i_with_i_plus_half() {
        let big = 2f32.powi(24);
        // (big + 1) + (-big + 1): each pair rounds; ((a0 + a2) + (a1 + a3)).
        let mut p = [big, 1.0, -big, 1.0];
        assert_eq!(halving(&mut p), 2.0);
        assert_eq!(seq(&[big, 1.0, -big, 1.0]), 1.0);
    }
}
