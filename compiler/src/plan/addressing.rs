//! Slice addressing of a VMEM dim (Helion's `_slice_addressing`, pallas/backend.py; spec §2.3)
//! and the TPU alignment a non-direct static run must meet (spec §2.7 step 2).

use lang::ir::DType;
use lang::ir::blocks::required_alignment;

/// How a dim of a VMEM value can be sliced at a dynamic or unaligned offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// Any offset: dims before the last two, and the sublane dim of float32 with at most 128
    /// lanes.
    Direct,
    /// Only tile-aligned offsets: the sublane dim otherwise, and the lane dim.
    Aligned,
}

/// The addressing of dim `dim` of a rank-`rank` value of `dtype` whose last dim has
/// `lane_extent` elements (spec §2.3): a dim before the last two is DIRECT; the second-minor
/// (sublane) dim is DIRECT only for float32 with `lane_extent <= 128`, else ALIGNED; the last
/// (lane) dim is ALIGNED.
pub fn slice_addressing(dtype: DType, rank: usize, dim: usize, lane_extent: i64) -> Addressing {
    if dim + 2 < rank {
        Addressing::Direct
    } else if dim + 2 == rank {
        if dtype == DType::Float32 && lane_extent <= 128 {
            Addressing::Direct
        } else {
            Addressing::Aligned
        }
    } else {
        Addressing::Aligned
    }
}

/// Whether a static run `[begin, begin + width)` on dim `dim` of a rank-`rank` value of `dtype`
/// is aligned for a non-DIRECT dim (ff265305, spec §2.7 step 2): both begin and width are
/// multiples of `required_alignment` (lane 128 for rank > 1, `128·32/bitwidth` for rank 1,
/// sublane 8, others 1).
pub fn static_run_aligned(dtype: DType, rank: usize, dim: usize, begin: i64, width: i64) -> bool {
    let align = required_alignment(rank, dim, dtype.bitwidth());
    align > 0 && begin % align == 0 && width % align == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_table() {
        use Addressing::{Aligned, Direct};
        // 3-D: the leading dim is always direct.
        assert_eq!(slice_addressing(DType::Bfloat16, 3, 0, 128), Direct);
        // f32 sublane with 128 lanes is direct; bf16 or wider lanes is not.
        assert_eq!(slice_addressing(DType::Float32, 2, 0, 128), Direct);
        assert_eq!(slice_addressing(DType::Float32, 2, 0, 256), Aligned);
        assert_eq!(slice_addressing(DType::Bfloat16, 2, 0, 128), Aligned);
        assert_eq!(slice_addressing(DType::Int32, 3, 1, 128), Aligned);
        // The lane dim is aligned whatever the dtype; so is a rank-1 value.
        assert_eq!(slice_addressing(DType::Float32, 3, 2, 128), Aligned);
        assert_eq!(slice_addressing(DType::Float32, 1, 0, 8), Aligned);
        // Aligned static runs (ff265305): bf16 lane 128:256 yes, 64:192 no; sublane 2:4 no.
        assert!(static_run_aligned(DType::Bfloat16, 3, 2, 128, 128));
        assert!(!static_run_aligned(DType::Bfloat16, 3, 2, 64, 128));
        assert!(!static_run_aligned(DType::Bfloat16, 3, 1, 2, 2));
        assert!(static_run_aligned(DType::Bfloat16, 3, 1, 8, 8));
        assert!(static_run_aligned(DType::Float32, 1, 0, 128, 256));
        assert!(!static_run_aligned(DType::Bfloat16, 1, 0, 128, 128));
    }
}
