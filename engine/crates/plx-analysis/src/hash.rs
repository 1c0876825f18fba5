//! A fast multiplicative hasher for small integer keys on hot paths (trace rebuild, tree merge).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash-style hasher: one multiply per word, and a finalizer that folds the high bits into
/// the low ones. Not DoS-resistant, but no key set degrades it to one bucket: a multiply only
/// carries bits upward, so keys differing only in their high half (a deep call-path chain:
/// parent node << 32 | the same region) would otherwise share the low bits the table indexes
/// by, and inserting a chain of n nodes took n² probes.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }
    #[inline]
    fn finish(&self) -> u64 {
        let h = (self.0 ^ (self.0 >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
}

/// A HashMap with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The key of a child: (parent node or `u32::MAX` for a root, region).
#[inline]
pub fn child_key(parent: Option<u32>, region: u32) -> u64 {
    ((parent.unwrap_or(u32::MAX) as u64) << 32) | region as u64
}
