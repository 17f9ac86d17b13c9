//! What the work of every table and index counted since startup: PostgreSQL's
//! cumulative statistics for relations, read by `pg_stat_user_tables`,
//! `pg_statio_user_tables`, `pg_stat_user_indexes` and autovacuum (txn rule 10).
//!
//! A transaction counts into its own [`Pending`] (no shared write per row, page or
//! scan); the counts reach the shared [`RelStats`] once, when the transaction ends,
//! where whether it committed decides what its writes leave: rows it inserted are
//! live if it committed and dead if it did not, rows it updated or deleted are dead
//! once it committed. A savepoint rolled back counts as an aborted transaction.

use std::collections::HashMap;
use std::time::SystemTime;

use common::{Oid, RelId};
use parking_lot::Mutex;
use storage::bufmgr::usage::RelUsage;

/// One relation's counts (a table's or an index's: PostgreSQL's `PgStat_StatTabEntry`,
/// which both use).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RelCounts {
    /// Scans started: sequential scans of a table, scans of an index.
    pub numscans: u64,
    /// Rows a table's sequential scans returned; entries an index's scans returned.
    pub tuples_returned: u64,
    /// Live rows fetched from the table through an index (counted on the index), or
    /// through a bitmap of addresses (counted on the table).
    pub tuples_fetched: u64,
    /// Rows written, whether or not their transaction committed.
    pub tuples_inserted: u64,
    pub tuples_updated: u64,
    pub tuples_deleted: u64,
    /// Updates that added no index entries (heap-only tuples).
    pub tuples_hot_updated: u64,
    /// Live and dead row versions: set by VACUUM and ANALYZE, moved by commits since.
    pub live_tuples: i64,
    pub dead_tuples: i64,
    /// Rows inserted, updated or deleted by committed transactions since the last
    /// ANALYZE (autovacuum's analyze trigger).
    pub mod_since_analyze: u64,
    /// Rows inserted since the last VACUUM (autovacuum's insert trigger).
    pub ins_since_vacuum: u64,
    pub last_vacuum: Option<SystemTime>,
    pub last_autovacuum: Option<SystemTime>,
    pub last_analyze: Option<SystemTime>,
    pub last_autoanalyze: Option<SystemTime>,
    pub vacuum_count: u64,
    pub autovacuum_count: u64,
    pub analyze_count: u64,
    pub autoanalyze_count: u64,
}

/// What one transaction level wrote to a table.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Writes {
    inserted: u64,
    updated: u64,
    deleted: u64,
    /// TRUNCATE emptied the table in this level: a commit leaves only what came after.
    truncated: bool,
    /// The versions TRUNCATE left dead (Myriad's TRUNCATE deletes the rows, which
    /// VACUUM then reclaims; PostgreSQL's swaps in an empty file).
    removed: u64,
}

/// One transaction level's writes, per table.
pub(crate) type LevelWrites = Vec<(Oid, Writes)>;

fn entry<T: Default>(v: &mut Vec<(Oid, T)>, rel: Oid) -> &mut T {
    let i = match v.iter().position(|(o, _)| *o == rel) {
        Some(i) => i,
        None => {
            v.push((rel, T::default()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

/// What a transaction's writes and reads changed of each relation's counts, kept by the
/// transaction until it ends. A transaction touches few relations: a short list,
/// searched in order.
#[derive(Debug, Default)]
pub struct Pending {
    rels: Vec<(Oid, Delta)>,
    /// Pages each relation file asked of the buffer pool (`bufmgr::usage`).
    blocks: Vec<(RelId, RelUsage)>,
}

/// A change to one relation's counts.
#[derive(Clone, Copy, Debug, Default)]
struct Delta {
    numscans: u64,
    tuples_returned: u64,
    tuples_fetched: u64,
    tuples_inserted: u64,
    tuples_updated: u64,
    tuples_deleted: u64,
    tuples_hot_updated: u64,
    live: i64,
    dead: i64,
    changed: u64,
    /// A committed TRUNCATE: live and dead start from zero.
    truncated: bool,
}

impl Pending {
    fn delta(&mut self, rel: Oid) -> &mut Delta {
        entry(&mut self.rels, rel)
    }

    pub fn is_empty(&self) -> bool {
        self.rels.is_empty() && self.blocks.is_empty()
    }

    /// A scan of `rel` started and returned `returned` rows (a table's sequential
    /// scan) or entries (an index's), of which `fetched` were live rows of the table
    /// read through an index.
    pub fn scan(&mut self, rel: Oid, returned: u64, fetched: u64) {
        let d = self.delta(rel);
        d.numscans += 1;
        d.tuples_returned += returned;
        d.tuples_fetched += fetched;
    }

    /// Live rows of table `rel` fetched through a bitmap of addresses.
    pub fn fetched(&mut self, rel: Oid, rows: u64) {
        if rows > 0 {
            self.delta(rel).tuples_fetched += rows;
        }
    }

    /// The pages relation file `rel` asked of the buffer pool, as the transaction's
    /// thread counted them.
    pub(crate) fn blocks(&mut self, rel: RelId, used: RelUsage) {
        self.blocks.push((rel, used));
    }

    /// An update of table `rel` that added no index entries.
    pub(crate) fn hot_update(&mut self, rel: Oid) {
        self.delta(rel).tuples_hot_updated += 1;
    }

    /// A transaction level's writes end: committed (with its transaction) or not.
    pub(crate) fn end_level(&mut self, writes: LevelWrites, committed: bool) {
        for (rel, w) in writes {
            let d = self.delta(rel);
            d.tuples_inserted += w.inserted;
            d.tuples_updated += w.updated;
            d.tuples_deleted += w.deleted;
            if committed {
                if w.truncated {
                    d.truncated = true;
                    d.live = 0;
                    d.dead = w.removed as i64;
                }
                d.live += w.inserted as i64 - w.deleted as i64;
                d.dead += (w.updated + w.deleted) as i64;
                d.changed += w.inserted + w.updated + w.deleted;
            } else {
                // What it inserted (and the new versions of what it updated) is dead;
                // what it deleted lives on.
                d.dead += (w.inserted + w.updated) as i64;
            }
        }
    }
}

/// Count a write of table `rel` in a transaction level's list.
pub(crate) fn count_write(level: &mut LevelWrites, rel: Oid, what: Write) {
    let w = entry(level, rel);
    match what {
        Write::Insert => w.inserted += 1,
        Write::Update => w.updated += 1,
        Write::Delete => w.deleted += 1,
        Write::Truncate { removed } => {
            // PostgreSQL forgets the level's writes too: the rows are gone.
            *w = Writes {
                truncated: true,
                removed,
                ..Writes::default()
            };
        }
    }
}

/// Merge a released savepoint's writes into its parent level's.
pub(crate) fn merge_level(into: &mut LevelWrites, from: LevelWrites) {
    for (rel, w) in from {
        let p = entry(into, rel);
        if w.truncated {
            *p = Writes {
                truncated: true,
                removed: w.removed,
                ..Writes::default()
            };
        }
        p.inserted += w.inserted;
        p.updated += w.updated;
        p.deleted += w.deleted;
    }
}

/// A kind of row write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Insert,
    Update,
    Delete,
    /// TRUNCATE: every row goes; `removed` versions are left dead for VACUUM (not
    /// counted as deleted, as PostgreSQL does not count them).
    Truncate {
        removed: u64,
    },
}

/// Hashes a relation's OID or file number (a `u32`) by one multiplication: keys are
/// small integers, chosen by the server, not by clients.
#[derive(Clone, Copy, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (u64::from(n) ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The shared counts of every relation used since startup. One mutex, taken once per
/// transaction that counted anything and by readers of the views; at a few hundred
/// nanoseconds per transaction it is not contended at today's rates (sharding by OID is
/// the fix if it shows in a profile).
#[derive(Default)]
pub struct RelStats {
    shared: Mutex<Shared>,
}

#[derive(Default)]
struct Shared {
    rels: IdMap<Oid, RelCounts>,
    /// Pages asked of the buffer pool and found there, per relation file (what
    /// `pg_statio_user_tables` reads; a table rewritten into a new file starts over).
    blocks: IdMap<RelId, BlockCounts>,
}

/// Pages of one relation file asked of the buffer pool, and those found there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCounts {
    pub fetched: u64,
    pub hit: u64,
}

impl RelStats {
    /// Add a transaction's counts, leaving `pending` empty (its lists keep their room).
    pub fn flush(&self, pending: &mut Pending) {
        if pending.is_empty() {
            return;
        }
        let mut shared = self.shared.lock();
        for (rel, u) in pending.blocks.drain(..) {
            let b = shared.blocks.entry(rel).or_default();
            b.fetched += u.hits + u.reads;
            b.hit += u.hits;
        }
        for (rel, d) in pending.rels.drain(..) {
            let c = shared.rels.entry(rel).or_default();
            c.numscans += d.numscans;
            c.tuples_returned += d.tuples_returned;
            c.tuples_fetched += d.tuples_fetched;
            c.tuples_inserted += d.tuples_inserted;
            c.tuples_updated += d.tuples_updated;
            c.tuples_deleted += d.tuples_deleted;
            c.tuples_hot_updated += d.tuples_hot_updated;
            if d.truncated {
                c.live_tuples = 0;
                c.dead_tuples = 0;
                c.ins_since_vacuum = 0;
            }
            c.live_tuples = (c.live_tuples + d.live).max(0);
            c.dead_tuples = (c.dead_tuples + d.dead).max(0);
            c.mod_since_analyze += d.changed;
            c.ins_since_vacuum += d.tuples_inserted;
        }
    }

    /// One relation's counts (zero if it was never used).
    pub fn get(&self, rel: Oid) -> RelCounts {
        self.shared
            .lock()
            .rels
            .get(&rel)
            .copied()
            .unwrap_or_default()
    }

    /// Every relation's counts at once (what a scan of a view reads).
    pub fn all(&self) -> HashMap<Oid, RelCounts> {
        self.shared
            .lock()
            .rels
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// Every relation file's page counts at once.
    pub fn all_blocks(&self) -> HashMap<RelId, BlockCounts> {
        self.shared
            .lock()
            .blocks
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// VACUUM of `rel` ended at `at` finding `live` live and `dead` dead versions it
    /// could not remove yet; `inserted_before`: `ins_since_vacuum` as it began, what
    /// this VACUUM saw (rows inserted meanwhile stay counted).
    pub fn report_vacuum(
        &self,
        rel: Oid,
        auto: bool,
        at: SystemTime,
        (live, dead): (u64, u64),
        inserted_before: u64,
    ) {
        let mut shared = self.shared.lock();
        let c = shared.rels.entry(rel).or_default();
        c.live_tuples = i64::try_from(live).unwrap_or(i64::MAX);
        c.dead_tuples = i64::try_from(dead).unwrap_or(i64::MAX);
        c.ins_since_vacuum = c.ins_since_vacuum.saturating_sub(inserted_before);
        if auto {
            c.last_autovacuum = Some(at);
            c.autovacuum_count += 1;
        } else {
            c.last_vacuum = Some(at);
            c.vacuum_count += 1;
        }
    }

    /// ANALYZE of `rel` ended at `at`, estimating `live` live and `dead` dead rows;
    /// `changed_before`: `mod_since_analyze` as it began.
    pub fn report_analyze(
        &self,
        rel: Oid,
        auto: bool,
        at: SystemTime,
        (live, dead): (f64, f64),
        changed_before: u64,
    ) {
        let mut shared = self.shared.lock();
        let c = shared.rels.entry(rel).or_default();
        c.live_tuples = live.max(0.0).round() as i64;
        c.dead_tuples = dead.max(0.0).round() as i64;
        c.mod_since_analyze = c.mod_since_analyze.saturating_sub(changed_before);
        if auto {
            c.last_autoanalyze = Some(at);
            c.autoanalyze_count += 1;
        } else {
            c.last_analyze = Some(at);
            c.analyze_count += 1;
        }
    }

    /// Forget every relation's counts (`pg_stat_reset()`).
    pub fn reset(&self) {
        let mut shared = self.shared.lock();
        shared.rels.clear();
        shared.blocks.clear();
    }

    /// Forget one relation's counts (`pg_stat_reset_single_table_counters`), and its
    /// file's `file`.
    pub fn reset_one(&self, rel: Oid, file: RelId) {
        let mut shared = self.shared.lock();
        shared.rels.remove(&rel);
        shared.blocks.remove(&file);
    }

    /// Forget the relations `keep` says are gone (dropped tables and indexes), and
    /// the files `keep_file` says are.
    pub fn retain(&self, keep: impl Fn(Oid) -> bool, keep_file: impl Fn(RelId) -> bool) {
        let mut shared = self.shared.lock();
        shared.rels.retain(|rel, _| keep(*rel));
        shared.blocks.retain(|file, _| keep_file(*file));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(writes: &[(Oid, Write)]) -> LevelWrites {
        let mut l = LevelWrites::new();
        for &(rel, w) in writes {
            count_write(&mut l, rel, w);
        }
        l
    }

    #[test]
    fn commits_make_inserts_live_and_updates_dead() {
        let stats = RelStats::default();
        let mut p = Pending::default();
        p.end_level(
            level(&[(1, Write::Insert), (1, Write::Insert), (1, Write::Update)]),
            true,
        );
        stats.flush(&mut p);
        let c = stats.get(1);
        assert_eq!((c.tuples_inserted, c.tuples_updated), (2, 1));
        assert_eq!((c.live_tuples, c.dead_tuples), (2, 1));
        assert_eq!((c.mod_since_analyze, c.ins_since_vacuum), (3, 2));
    }

    #[test]
    fn aborts_count_attempts_and_leave_their_rows_dead() {
        let stats = RelStats::default();
        let mut p = Pending::default();
        p.end_level(
            level(&[(1, Write::Insert), (1, Write::Delete), (1, Write::Update)]),
            false,
        );
        stats.flush(&mut p);
        let c = stats.get(1);
        assert_eq!(
            (c.tuples_inserted, c.tuples_deleted, c.tuples_updated),
            (1, 1, 1)
        );
        assert_eq!((c.live_tuples, c.dead_tuples), (0, 2));
        assert_eq!(c.mod_since_analyze, 0, "an abort changes nothing");
    }

    #[test]
    fn truncate_forgets_what_came_before() {
        let stats = RelStats::default();
        let mut p = Pending::default();
        p.end_level(level(&[(1, Write::Insert), (1, Write::Insert)]), true);
        stats.flush(&mut p);
        let mut p = Pending::default();
        p.end_level(
            level(&[
                (1, Write::Delete),
                (1, Write::Truncate { removed: 2 }),
                (1, Write::Insert),
            ]),
            true,
        );
        stats.flush(&mut p);
        let c = stats.get(1);
        assert_eq!((c.live_tuples, c.dead_tuples, c.tuples_inserted), (1, 2, 3));
        assert_eq!(c.tuples_deleted, 0, "TRUNCATE deletes nothing, as counted");
    }

    #[test]
    fn a_released_savepoint_commits_with_its_parent() {
        let mut top = level(&[(1, Write::Insert)]);
        merge_level(&mut top, level(&[(1, Write::Insert), (2, Write::Delete)]));
        let stats = RelStats::default();
        let mut p = Pending::default();
        p.end_level(top, true);
        stats.flush(&mut p);
        assert_eq!(stats.get(1).live_tuples, 2);
        assert_eq!(stats.get(2).dead_tuples, 1);
    }

    #[test]
    fn vacuum_and_analyze_set_the_estimates_and_keep_later_changes() {
        let stats = RelStats::default();
        let mut p = Pending::default();
        p.end_level(level(&[(1, Write::Insert), (1, Write::Delete)]), true);
        stats.flush(&mut p);
        let before = stats.get(1);
        // A row inserted while VACUUM ran stays counted.
        let mut p = Pending::default();
        p.end_level(level(&[(1, Write::Insert)]), true);
        stats.flush(&mut p);
        let at = SystemTime::now();
        stats.report_vacuum(1, true, at, (5, 0), before.ins_since_vacuum);
        stats.report_analyze(1, false, at, (5.0, 0.0), before.mod_since_analyze);
        let c = stats.get(1);
        assert_eq!((c.live_tuples, c.dead_tuples), (5, 0));
        assert_eq!((c.ins_since_vacuum, c.mod_since_analyze), (1, 1));
        assert_eq!((c.autovacuum_count, c.vacuum_count), (1, 0));
        assert_eq!((c.analyze_count, c.last_analyze), (1, Some(at)));
    }
}
