//! Runtime values of the executor: JAX element categories with their promotion lattice,
//! inline shapes, arrays (concrete or traced), Ref views and Python values.

use super::error::{ErrorKind, SimError, SimResult};
use lang::tensor::DType;
use std::rc::Rc;

/// The largest rank a value or view may have.
pub(crate) const MAX_RANK: usize = 8;

/// An element category: a dtype plus JAX's weak-type flag for the scalar kinds that take part
/// in promotion (`bool < int* < int32 < float* < bfloat16 < float32`, where `*` is weak). On
/// this subset JAX's promotion lattice is a chain, so promotion is `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Cat {
    /// `bool`.
    Bool,
    /// A weakly typed int (a Python int that entered JAX): stored as int32.
    WeakInt,
    /// `int32`.
    I32,
    /// A weakly typed float (a Python float that entered JAX): stored as float32.
    WeakFloat,
    /// `bfloat16`.
    Bf16,
    /// `float32`.
    F32,
}

impl Cat {
    /// The category of a dtype (never weak).
    pub fn of(d: DType) -> Cat {
        match d {
            DType::Float32 => Cat::F32,
            DType::Bfloat16 => Cat::Bf16,
            DType::Int32 => Cat::I32,
        }
    }

    /// The dtype values of this category are stored as (`bool` has none).
    pub fn dtype(self) -> Option<DType> {
        match self {
            Cat::Bool => None,
            Cat::WeakInt | Cat::I32 => Some(DType::Int32),
            Cat::WeakFloat | Cat::F32 => Some(DType::Float32),
            Cat::Bf16 => Some(DType::Bfloat16),
        }
    }

    /// JAX's name of the dtype, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Cat::Bool => "bool",
            Cat::WeakInt => "int32 (weak)",
            Cat::I32 => "int32",
            Cat::WeakFloat => "float32 (weak)",
            Cat::Bf16 => "bfloat16",
            Cat::F32 => "float32",
        }
    }

    /// Promotion of two categories.
    pub fn join(self, other: Cat) -> Cat {
        self.max(other)
    }

    /// Whether the category is floating point.
    pub fn is_float(self) -> bool {
        matches!(self, Cat::WeakFloat | Cat::Bf16 | Cat::F32)
    }

    /// Whether the category is an integer (not bool).
    pub fn is_int(self) -> bool {
        matches!(self, Cat::WeakInt | Cat::I32)
    }

    /// The inexact category `true_divide` computes in (ints and bools become float32).
    pub fn inexact(self) -> Cat {
        match self {
            Cat::Bool | Cat::I32 => Cat::F32,
            Cat::WeakInt => Cat::WeakFloat,
            Cat::WeakFloat | Cat::Bf16 | Cat::F32 => self,
        }
    }

    /// Rounds an exact result to this category: round-to-nearest-even for floats
    /// ([`DType::round`]), two's-complement wrap for ints, `!= 0` for bool.
    #[inline]
    pub fn round(self, v: f64) -> f64 {
        match self {
            Cat::Bool => f64::from(u8::from(v != 0.0)),
            Cat::WeakInt | Cat::I32 => wrap_i32(v),
            Cat::WeakFloat | Cat::F32 => f64::from(v as f32),
            Cat::Bf16 => round_bf16(v),
        }
    }

    /// The value uninitialized memory holds (`uninitialized_memory="nan"`): NaN for floats,
    /// `INT_MAX` (TPU interpreter) or `INT_MIN` (generic interpreter) for int32.
    pub fn poison(self, int_max: bool) -> f64 {
        match self {
            Cat::Bool => 1.0,
            Cat::WeakInt | Cat::I32 => {
                if int_max {
                    f64::from(i32::MAX)
                } else {
                    f64::from(i32::MIN)
                }
            }
            Cat::WeakFloat | Cat::F32 | Cat::Bf16 => f64::NAN,
        }
    }
}

/// Round-to-nearest-even to bfloat16: a bit trick on the float32 bits when `v` is a float32
/// (every value the executor rounds is, but int32 values beyond 2^24), else [`DType::round`].
#[inline]
pub(crate) fn round_bf16(v: f64) -> f64 {
    let f = v as f32;
    if f64::from(f) != v || f.is_nan() {
        return DType::Bfloat16.round(v);
    }
    let bits = f.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
    f64::from(f32::from_bits(rounded))
}

/// Two's-complement wrap of an integral value to int32.
#[inline]
pub(crate) fn wrap_i32(v: f64) -> f64 {
    if (-2147483648.0..=2147483647.0).contains(&v) {
        v
    } else if v.is_finite() {
        f64::from(v as i64 as i32)
    } else {
        0.0
    }
}

/// A shape held inline (no allocation). Dims past the rank are always 0.
#[derive(Clone, Copy, Eq)]
pub(crate) struct Shape {
    n: u8,
    d: [usize; MAX_RANK],
}

impl PartialEq for Shape {
    /// The derived comparison (the rank, then all `MAX_RANK` dims: the unused ones are 0 in
    /// both) as an inline loop over the rank instead of a `memcmp` call per comparison.
    fn eq(&self, other: &Shape) -> bool {
        self.n == other.n && self.dims().iter().zip(other.dims()).all(|(a, b)| a == b)
    }
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.dims())
    }
}

impl Shape {
    /// The shape `()`.
    pub const SCALAR: Shape = Shape {
        n: 0,
        d: [0; MAX_RANK],
    };

    /// A shape from dims.
    pub fn new(dims: &[usize]) -> SimResult<Shape> {
        if dims.len() > MAX_RANK {
            return Err(SimError::unsupported(format!(
                "a value of rank {} (the executor holds at most {MAX_RANK} dims)",
                dims.len()
            )));
        }
        let mut s = Shape::SCALAR;
        s.n = dims.len() as u8;
        s.d[..dims.len()].copy_from_slice(dims);
        Ok(s)
    }

    /// A shape from signed dims (a negative dim is a ValueError, as in JAX).
    pub fn from_i64(dims: &[i64]) -> SimResult<Shape> {
        let mut v = [0usize; MAX_RANK];
        if dims.len() > MAX_RANK {
            return Shape::new(&[0; MAX_RANK + 1]);
        }
        for (slot, &d) in v.iter_mut().zip(dims) {
            *slot = usize::try_from(d).map_err(|_| {
                SimError::trace(
                    ErrorKind::ValueError,
                    format!("negative dimensions are not allowed: {dims:?}"),
                )
            })?;
        }
        Shape::new(&v[..dims.len()])
    }

    /// The dims.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        &self.d[..self.n as usize]
    }

    /// The rank.
    #[inline]
    pub fn rank(&self) -> usize {
        self.n as usize
    }

    /// The number of elements.
    #[inline]
    pub fn numel(&self) -> usize {
        self.dims().iter().product()
    }

    /// Appends a dim.
    pub fn push(&mut self, d: usize) -> SimResult<()> {
        if self.rank() == MAX_RANK {
            return Err(SimError::unsupported(format!(
                "a value of rank {} (the executor holds at most {MAX_RANK} dims)",
                MAX_RANK + 1
            )));
        }
        self.d[self.rank()] = d;
        self.n += 1;
        Ok(())
    }

    /// Row-major strides.
    pub fn strides(&self) -> [usize; MAX_RANK] {
        let mut s = [0usize; MAX_RANK];
        let mut acc = 1;
        for k in (0..self.rank()).rev() {
            s[k] = acc;
            acc *= self.d[k];
        }
        s
    }
}

/// Array storage recycled through a per-thread pool: an executor run allocates an array per
/// operation, and most are the same few sizes, so a dropped buffer is kept for the next one
/// instead of going back to `malloc`.
#[derive(Debug)]
pub(crate) struct Buf(Vec<f64>);

/// How many free buffers a thread keeps.
const POOL_SIZE: usize = 48;

/// The smallest capacity worth keeping in the pool.
const MIN_POOLED: usize = 8;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Vec<f64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty vector with room for `n` values, from the pool when one fits.
pub(crate) fn pool_vec(n: usize) -> Vec<f64> {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter().rposition(|v| v.capacity() >= n) {
            Some(k) => p.swap_remove(k),
            // At least the smallest size the pool keeps, so that small arrays recycle too.
            None => Vec::with_capacity(n.max(MIN_POOLED)),
        }
    })
}

impl Drop for Buf {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() < MIN_POOLED {
            return;
        }
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < POOL_SIZE {
                let mut v = v;
                v.clear();
                p.push(v);
            }
        });
    }
}

impl std::ops::Deref for Buf {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.0
    }
}

/// The elements of an array: concrete values, or none while tracing.
#[derive(Clone, Debug)]
pub(crate) enum Data {
    /// A traced value: only its type is known.
    Traced,
    /// A concrete 0-d value.
    Scalar(f64),
    /// Concrete row-major values.
    Vals(Rc<Buf>),
}

/// A JAX array: category, shape and (unless traced) values, each exactly representable in the
/// category.
///
/// Two fields model what XLA's algebraic simplifier does to float32 additions of compile-time
/// constants (`(X + C1) + C2 → X + (C1 + C2)`, `A - C → A + (-C)`, measured): `konst` marks a
/// compile-time constant broadcast scalar (built from literals only), `lazy` keeps `(X, C)`
/// for a value XLA computes as `X + C` with a folded constant `C`, so that a later `+ C2` is
/// computed as `X + fold(C + C2)`. `data` always holds the value as XLA computes it.
#[derive(Clone, Debug)]
pub(crate) struct Arr {
    /// Element category.
    pub cat: Cat,
    /// Shape.
    pub shape: Shape,
    /// Values.
    pub data: Data,
    /// A compile-time constant whose elements are all equal.
    pub konst: bool,
    /// `(X, C)` when XLA computes this float32 value as `X + C` (C a folded scalar constant).
    pub lazy: Option<Rc<(Arr, f64)>>,
}

impl Arr {
    /// A concrete array from values (already rounded to `cat`).
    pub fn new(cat: Cat, shape: Shape, vals: Vec<f64>) -> Arr {
        debug_assert_eq!(vals.len(), shape.numel());
        let data = if shape.rank() == 0 {
            Data::Scalar(vals[0])
        } else {
            Data::Vals(Rc::new(Buf(vals)))
        };
        Arr {
            cat,
            shape,
            data,
            konst: false,
            lazy: None,
        }
    }

    /// A concrete array from an exact-size iterator of values (one allocation).
    pub fn collect(cat: Cat, shape: Shape, vals: impl Iterator<Item = f64>) -> Arr {
        let data = if shape.rank() == 0 {
            let mut vals = vals;
            Data::Scalar(vals.next().unwrap_or(0.0))
        } else {
            let mut v = pool_vec(shape.numel());
            v.extend(vals);
            Data::Vals(Rc::new(Buf(v)))
        };
        Arr {
            cat,
            shape,
            data,
            konst: false,
            lazy: None,
        }
    }

    /// A concrete array holding a copy of `vals`.
    pub fn copied(cat: Cat, shape: Shape, vals: &[f64]) -> Arr {
        if shape.rank() == 0 {
            return Arr::scalar(cat, vals.first().copied().unwrap_or(0.0));
        }
        let mut v = pool_vec(vals.len());
        v.extend_from_slice(vals);
        Arr::new(cat, shape, v)
    }

    /// A compile-time constant 0-d array (a Python scalar entering JAX).
    pub fn konst(cat: Cat, v: f64) -> Arr {
        Arr {
            konst: true,
            ..Arr::scalar(cat, v)
        }
    }

    /// The same array, no longer a constant nor lazily folded (a loop or branch parameter).
    pub fn opaque(&self) -> Arr {
        Arr {
            cat: self.cat,
            shape: self.shape,
            data: self.data.clone(),
            konst: false,
            lazy: None,
        }
    }

    /// A concrete 0-d array.
    pub fn scalar(cat: Cat, v: f64) -> Arr {
        Arr {
            cat,
            shape: Shape::SCALAR,
            data: Data::Scalar(v),
            konst: false,
            lazy: None,
        }
    }

    /// A traced array of a type.
    pub fn traced(cat: Cat, shape: Shape) -> Arr {
        Arr {
            cat,
            shape,
            data: Data::Traced,
            konst: false,
            lazy: None,
        }
    }

    /// The values; `None` while tracing.
    #[inline]
    pub fn vals(&self) -> Option<&[f64]> {
        match &self.data {
            Data::Traced => None,
            Data::Scalar(v) => Some(std::slice::from_ref(v)),
            Data::Vals(v) => Some(v),
        }
    }

    /// The single value of a concrete 0-d (or one-element) array.
    pub fn item(&self) -> Option<f64> {
        match &self.data {
            Data::Scalar(v) => Some(*v),
            Data::Vals(v) if v.len() == 1 => Some(v[0]),
            Data::Vals(_) | Data::Traced => None,
        }
    }

    /// The same values under another shape with as many elements.
    pub fn with_shape(&self, shape: Shape) -> Arr {
        let data = match (&self.data, shape.rank()) {
            (Data::Traced, _) => Data::Traced,
            (Data::Scalar(v), 0) => Data::Scalar(*v),
            (Data::Scalar(v), _) => Data::Vals(Rc::new(Buf(vec![*v]))),
            (Data::Vals(v), 0) => Data::Scalar(v[0]),
            (Data::Vals(v), _) => Data::Vals(v.clone()),
        };
        Arr {
            cat: self.cat,
            shape,
            data,
            konst: self.konst,
            lazy: None,
        }
    }
}

/// The start of a `pl.ds` window or an integer index: a Python int (static at trace time) or
/// a traced int (its value known only when running).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntVal {
    /// A Python int.
    Static(i64),
    /// A traced int32 (value `None` while tracing).
    Traced(Option<i64>),
}

impl IntVal {
    /// The value, when known.
    pub fn value(self) -> Option<i64> {
        match self {
            IntVal::Static(v) => Some(v),
            IntVal::Traced(v) => v,
        }
    }
}

/// A runtime value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// A name not bound yet.
    Unbound,
    /// Python `None`.
    None,
    /// A Python int.
    Int(i64),
    /// A Python float.
    Float(f64),
    /// A Python bool.
    Bool(bool),
    /// A JAX array.
    Arr(Arr),
    /// A Ref (possibly transformed).
    Ref(Rc<View>),
    /// `pl.ds(start, size)`.
    Ds {
        /// Start.
        start: IntVal,
        /// Static size.
        size: i64,
    },
    /// A Python tuple.
    Tuple(Rc<[Value]>),
    /// A function defined in the module.
    Func(usize),
}

impl Value {
    /// A name for messages (Python's type names).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Unbound => "unbound",
            Value::None => "NoneType",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Arr(_) => "Array",
            Value::Ref(_) => "Ref",
            Value::Ds { .. } => "Slice",
            Value::Tuple(_) => "tuple",
            Value::Func(_) => "function",
        }
    }
}

/// What a Ref view is a window of.
#[derive(Clone, Debug)]
pub(crate) enum Base {
    /// A kernel buffer (operand, output or scratch).
    Buffer(usize),
    /// A Ref reshape of another view (`x_block.reshape((...))`): its elements in row-major
    /// order, seen under a new shape.
    Reshape(Rc<View>),
}

/// A Ref view: a window of a base. Each dim of the base has a start; the view's visible dims
/// map to base dims in order; base dims without a visible dim were indexed by an integer
/// (their start is the index). Starts are not checked when the view is made (the TPU
/// interpreter checks the composed range against the buffer on each access).
#[derive(Clone, Debug)]
pub(crate) struct View {
    /// The base.
    pub base: Base,
    /// The base's shape.
    pub base_shape: Shape,
    /// Element category (the buffer's dtype).
    pub cat: Cat,
    /// Start per base dim (0 while tracing a traced start).
    pub start: [i64; MAX_RANK],
    /// Visible dims: (base dim, size).
    pub dims: [(u8, usize); MAX_RANK],
    /// Number of visible dims.
    pub rank: u8,
}

impl View {
    /// The whole of a buffer.
    pub fn whole(buf: usize, cat: Cat, shape: Shape) -> View {
        let mut dims = [(0u8, 0usize); MAX_RANK];
        for (k, &d) in shape.dims().iter().enumerate() {
            dims[k] = (k as u8, d);
        }
        View {
            base: Base::Buffer(buf),
            base_shape: shape,
            cat,
            start: [0; MAX_RANK],
            dims,
            rank: shape.rank() as u8,
        }
    }

    /// The visible shape.
    pub fn shape(&self) -> Shape {
        let mut s = Shape::SCALAR;
        s.n = self.rank;
        for k in 0..self.rank as usize {
            s.d[k] = self.dims[k].1;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_bit_trick_is_dtype_round() {
        // Every float32 bit pattern with a stride that visits all exponents and mantissa tails.
        let mut bits: u32 = 0;
        while let Some(next) = bits.checked_add(7919) {
            let v = f64::from(f32::from_bits(bits));
            let (a, b) = (round_bf16(v), DType::Bfloat16.round(v));
            assert!(
                a == b || (a.is_nan() && b.is_nan()),
                "{bits:#x}: {a} vs {b}"
            );
            bits = next;
        }
    }
}
