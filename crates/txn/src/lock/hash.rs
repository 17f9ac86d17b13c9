//! Hashing for the lock tables: a multiplicative hasher for the small fixed-size keys the
//! lock manager uses (std's SipHash costs more than the rest of a fast-path lock), and the
//! partition functions.

use std::hash::{Hash, Hasher};

use super::tag::LockTag;

pub(crate) use common::hash::{FxBuild, FxHasher};

/// The shared-table partition of `tag`, in `0..partitions` (a power of two). The Fx hash
/// is remixed first: hashbrown reads a hash's top bits too, and the partition index must
/// not be those same bits, or every key in a partition would share them.
#[inline]
pub(crate) fn partition_of(tag: &LockTag, partitions_log2: u32) -> usize {
    let mut h = FxHasher::default();
    tag.hash(&mut h);
    let x = h.finish();
    let x = (x ^ (x >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (x >> (64 - partitions_log2)) as usize
}

/// The strong-lock counter of relation `rel`, in `0..partitions` (a power of two):
/// Fibonacci hashing, so consecutive oids spread over all counters.
#[inline]
pub(crate) fn strong_partition_of(rel: u32, partitions_log2: u32) -> usize {
    ((rel as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - partitions_log2)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_oids_spread_over_partitions() {
        let mut seen = [0u32; 64];
        for rel in 16384..16384 + 64 * 16 {
            seen[partition_of(&LockTag::Relation(rel), 6)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
        let mut strong = [0u32; 1024];
        for rel in 16384..16384 + 1024 {
            strong[strong_partition_of(rel, 10)] += 1;
        }
        assert!(strong.iter().filter(|&&n| n > 0).count() > 512);
    }
}
