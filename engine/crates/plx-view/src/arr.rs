//! An array of plain numbers held either in a vector of its own or in a shared [`Bytes`]
//! buffer holding a whole index file read from disk ([`crate::store`]); both read as a slice.
//!
//! Invariant of a shared array: its bytes lie inside the buffer, start at a multiple of the
//! element's alignment, and the buffer lives as long as the array (it holds an [`Arc`] of it).
//! The buffer is the process's own memory (the file is read, not mapped), so nothing done to
//! the file afterwards (rewritten, truncated) changes or invalidates it.

use std::alloc::Layout;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// A zero-initialized byte buffer aligned to 16 bytes (the file's array alignment), owned.
pub struct Bytes {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a plain owned allocation; `&Bytes` only gives shared reads
unsafe impl Send for Bytes {}
unsafe impl Sync for Bytes {}

impl Bytes {
    /// `len` zero bytes, `None` when the allocator cannot give them (a hostile length must not
    /// abort the process).
    pub fn zeroed(len: usize) -> Option<Bytes> {
        if len == 0 {
            return Some(Bytes {
                ptr: NonNull::<u128>::dangling().cast(),
                len,
            });
        }
        let layout = Layout::from_size_align(len, 16).ok()?;
        // SAFETY: the layout's size is nonzero
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Bytes { ptr, len })
    }

    /// The bytes, to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `len` initialized (zeroed) bytes owned by `self`, borrowed mutably once
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `len` initialized bytes owned by `self`
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated in `zeroed` with this layout
            unsafe {
                std::alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.len, 16),
                )
            }
        }
    }
}

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

/// A slice of `T`s, owned or in a shared buffer.
pub struct Arr<T: Plain> {
    inner: Inner<T>,
}

enum Inner<T> {
    Owned(Vec<T>),
    Shared {
        buf: Arc<Bytes>,
        offset: usize,
        len: usize,
    },
}

impl<T: Plain> Arr<T> {
    /// `len` elements at byte `offset` of `buf`, `None` when they do not lie inside it or are
    /// misaligned.
    pub fn shared(buf: &Arc<Bytes>, offset: usize, len: usize) -> Option<Arr<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(bytes)?;
        if end > buf.len() || (buf.as_ptr() as usize + offset) % std::mem::align_of::<T>() != 0 {
            return None;
        }
        Some(Arr {
            inner: Inner::Shared {
                buf: Arc::clone(buf),
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
            // SAFETY: checked in `shared`: in bounds, aligned, and the buffer outlives `self`;
            // every bit pattern is a `T`
            Inner::Shared { buf, offset, len } => unsafe {
                std::slice::from_raw_parts(buf.as_ptr().add(*offset) as *const T, *len)
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
            Inner::Shared { buf, offset, len } => Arr {
                inner: Inner::Shared {
                    buf: Arc::clone(buf),
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
