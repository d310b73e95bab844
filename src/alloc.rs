//! The binary's global allocator: mimalloc, called the way its natural size classes allow.
//!
//! The `mimalloc` crate's `MiMalloc` sends every request through mimalloc's `*_aligned` entry
//! points. In mimalloc v3 a request whose rounded size is not a power of two takes the
//! over-allocating aligned-generic path there: `mi_theap_malloc_aligned` and
//! `mi_theap_malloc_zero_aligned_at_{generic,overalloc}` were 5.4% of an in-process campaign's
//! instructions (callgrind, `fuzz --engines oracle,pallas-sim --cases 2000 --seed 0`).
//! mimalloc's plain `mi_malloc` already returns blocks aligned to `MI_MAX_ALIGN_SIZE` (16)
//! when the size is a multiple of the alignment (its bins are multiples of 8, 16-grained above
//! 16, and a page's first block is 16-aligned), so such layouts take the plain entry points;
//! every other layout keeps the aligned ones.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// mimalloc's `MI_MAX_ALIGN_SIZE`: the alignment its plain allocation guarantees.
const NATURAL_ALIGN: usize = 16;

/// mimalloc as the global allocator (see the module docs).
pub struct MiMalloc;

/// Whether a block of `size` bytes from mimalloc's plain API is aligned to `align`.
///
/// `align` is a power of two (`Layout` guarantees it), so the multiple test is a mask:
/// `is_multiple_of` compiled to a `div` on every allocation (~1,900 per checked case, callgrind).
fn natural(size: usize, align: usize) -> bool {
    align <= NATURAL_ALIGN && size & (align - 1) == 0
}

// SAFETY: every pointer handed out comes from mimalloc with at least the layout's size and
// alignment (plain calls only where `natural` holds, see the module docs), and `dealloc` and
// `realloc` only receive pointers this allocator returned, which `mi_free` and `mi_realloc*`
// accept whichever entry point made them.
unsafe impl GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain FFI allocation calls; see the impl's comment.
        unsafe {
            if natural(layout.size(), layout.align()) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if natural(layout.size(), layout.align()) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (GlobalAlloc's contract).
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; the new block keeps its alignment.
        unsafe {
            if natural(new_size, layout.align()) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_has_its_layouts_alignment() {
        // Sizes around mimalloc's bins and its small/large boundary, every alignment up to a
        // page: the plain path must still honour the alignment, the aligned one the rest.
        let a = MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [
                1, 7, 8, 12, 16, 24, 40, 48, 56, 72, 100, 1000, 1024, 8192, 70_000,
            ] {
                let size = size.max(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero layout; each block is written, checked and freed once.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size} align {align}");
                    p.write_bytes(0xAB, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc {size} align {align}");
                    assert_eq!(*q.add(size - 1), 0xAB);
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "alloc_zeroed {size} align {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
