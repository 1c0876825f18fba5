//! An array of plain numbers held either in memory or in a read-only mapping of the on-disk
//! index ([`crate::store`]); both read as a slice.
//!
//! Invariant of a mapped array: its bytes lie inside the mapping, start at a multiple of the
//! element's alignment, and the mapping lives as long as the array (it holds an [`Arc`] of it).
//! The index file is replaced by rename, never rewritten in place, so the mapped bytes do not
//! change under a reader.

use std::ops::Deref;
use std::sync::Arc;

use memmap2::Mmap;

/// Element types whose every bit pattern is a value (integers, floats), stored little-endian.
///
/// # Safety
/// Implementors must be plain data without padding or invalid bit patterns.
pub unsafe trait Plain: Copy + Default + 'static {}
unsafe impl Plain for i64 {}
unsafe impl Plain for u64 {}
unsafe impl Plain for u32 {}
unsafe impl Plain for i128 {}
unsafe impl Plain for f64 {}

/// A slice of `T`s, owned or mapped.
pub struct Arr<T: Plain> {
    inner: Inner<T>,
}

enum Inner<T> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<Mmap>,
        offset: usize,
        len: usize,
    },
}

impl<T: Plain> Arr<T> {
    /// `len` elements at byte `offset` of `map`, `None` when they do not lie inside it or are
    /// misaligned.
    pub fn mapped(map: &Arc<Mmap>, offset: usize, len: usize) -> Option<Arr<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(bytes)?;
        if end > map.len() || (map.as_ptr() as usize + offset) % std::mem::align_of::<T>() != 0 {
            return None;
        }
        Some(Arr {
            inner: Inner::Mapped {
                map: Arc::clone(map),
                offset,
                len,
            },
        })
    }

    /// Its bytes (little-endian elements), for writing.
    pub fn bytes(&self) -> &[u8] {
        let s: &[T] = self;
        // SAFETY: `T` is plain data, so its bytes are initialized and any length is valid
        unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
    }
}

impl<T: Plain> Deref for Arr<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Owned(v) => v,
            // SAFETY: checked in `mapped`: in bounds, aligned, and the map outlives `self`;
            // every bit pattern is a `T`
            Inner::Mapped { map, offset, len } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().add(*offset) as *const T, *len)
            },
        }
    }
}

impl<T: Plain> From<Vec<T>> for Arr<T> {
    fn from(v: Vec<T>) -> Self {
        Arr {
            inner: Inner::Owned(v),
        }
    }
}

impl<T: Plain> Default for Arr<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Plain> Clone for Arr<T> {
    fn clone(&self) -> Self {
        match &self.inner {
            Inner::Owned(v) => v.clone().into(),
            Inner::Mapped { map, offset, len } => Arr {
                inner: Inner::Mapped {
                    map: Arc::clone(map),
                    offset: *offset,
                    len: *len,
                },
            },
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for Arr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s: &[T] = self;
        write!(f, "Arr({} elements)", s.len())
    }
}

impl<T: Plain + PartialEq> PartialEq for Arr<T> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}
