//! The root cache: each index's root block, level and key column count, in memory, so a
//! descent starts at the root and not at the metapage (lesson L5; README "nbtree rule 6").
//!
//! Interface: [`RootCache::get`] on every descent; the btree stores what it reads from a
//! metapage and the roots it creates; [`RootCache::forget_root`] is called by DDL
//! that replaces or removes an index's storage (DROP, TRUNCATE, REINDEX).
//!
//! The cache is only a hint: a descent checks the cached root page (it must carry
//! `BTP_ROOT` and the cached level) and reads the metapage when it does not. It is
//! sharded by relation so that concurrent descents of different indexes do not share a
//! lock's cache line, and each shard is a `parking_lot` reader-writer lock: a descent
//! takes one shared lock for one hash lookup.
//!
//! [`RootCache::meta_reads`] counts metapage reads made to find a root, so tests (and
//! later a statistics view) can see that the metapage is read once per root change, not
//! once per descent.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use common::RelId;
use common::ids::BlockNumber;
use parking_lot::RwLock;

/// Number of shards of the root cache (a power of two; 16 is plenty for the core counts
/// Myriad runs on, as for the buffer mapping table).
pub const ROOT_CACHE_SHARDS: usize = 16;

/// What a descent needs to start: the root and its level, and the key width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootInfo {
    /// The root page.
    pub root: BlockNumber,
    /// Its level: the tree's height less one (0 when the root is a leaf).
    pub level: u32,
    /// Key columns of the index.
    pub natts: u16,
}

/// Hashes a relation id by one multiplication: ids are small dense integers, and the
/// descent's lookup should not pay for SipHash.
#[derive(Default)]
struct RelIdHasher(u64);

impl Hasher for RelIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | *b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type RootMap = HashMap<RelId, RootInfo, BuildHasherDefault<RelIdHasher>>;

/// Padded so neighbouring shards' locks do not share a cache line.
#[repr(align(64))]
#[derive(Default)]
struct Shard {
    map: RwLock<RootMap>,
}

/// Cached btree roots, keyed by index relation: see the module header. One per server
/// (beside its buffer pool), shared by every session.
pub struct RootCache {
    shards: Box<[Shard]>,
    meta_reads: AtomicU64,
}

impl Default for RootCache {
    fn default() -> Self {
        RootCache::new()
    }
}

impl RootCache {
    pub fn new() -> RootCache {
        RootCache {
            shards: (0..ROOT_CACHE_SHARDS).map(|_| Shard::default()).collect(),
            meta_reads: AtomicU64::new(0),
        }
    }

    fn shard(&self, rel: RelId) -> &Shard {
        // Middle bits pick the shard; the map inside uses the low (bucket) and top (tag) ones.
        let h = (rel as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.shards[(h >> 32) as usize % ROOT_CACHE_SHARDS]
    }

    /// The cached root of `rel`, if any. One shared lock, one hash lookup.
    pub fn get(&self, rel: RelId) -> Option<RootInfo> {
        self.shard(rel).map.read().get(&rel).copied()
    }

    /// Remember `info`, just read from `rel`'s metapage, which is the truth at the time
    /// it was read. Returns it.
    ///
    /// It replaces whatever is cached, even a higher root: that may be newer (a slower
    /// reader of an older metapage then puts an old root back, which the next descent
    /// finds stale and refreshes), or a leftover of the index's storage before DDL that
    /// did not call `forget_root`, which must not stick.
    pub(crate) fn store(&self, rel: RelId, info: RootInfo) -> RootInfo {
        self.shard(rel).map.write().insert(rel, info);
        info
    }

    /// Remember a root just created, unless a higher one is cached: by the time its
    /// creator gets here, the new root may have split again and a newer one been cached.
    /// Returns what is cached now.
    pub(crate) fn store_created(&self, rel: RelId, info: RootInfo) -> RootInfo {
        let mut map = self.shard(rel).map.write();
        let entry = map.entry(rel).or_insert(info);
        if info.level >= entry.level {
            *entry = info;
        }
        *entry
    }

    /// Forget `rel`'s root: for DDL that gives an index new storage or removes it (the
    /// catalog calls this when such DDL commits). The next descent reads the metapage.
    pub fn forget_root(&self, rel: RelId) {
        self.shard(rel).map.write().remove(&rel);
    }

    pub(crate) fn count_meta_read(&self) {
        self.meta_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// Metapage reads made to find a root, since the cache was created.
    pub fn meta_reads(&self) -> u64 {
        self.meta_reads.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_roots_only_grow_metapage_reads_replace() {
        let c = RootCache::new();
        assert_eq!(c.get(5), None);
        let r1 = RootInfo {
            root: 1,
            level: 0,
            natts: 1,
        };
        let r2 = RootInfo {
            root: 7,
            level: 1,
            natts: 1,
        };
        assert_eq!(c.store_created(5, r1), r1);
        assert_eq!(c.store_created(5, r2), r2);
        assert_eq!(
            c.store_created(5, r1),
            r2,
            "an older root does not replace a newer one"
        );
        assert_eq!(c.get(5), Some(r2));
        assert_eq!(c.get(6), None);
        assert_eq!(c.store(5, r1), r1, "the metapage is the truth");
        assert_eq!(c.get(5), Some(r1));
        c.forget_root(5);
        assert_eq!(c.get(5), None);
    }
}
