//! The catalog: which tables exist, their columns, types, defaults and keys.
//!
//! Interface: [`Catalog::open`] replays the durable catalog at startup;
//! [`Catalog::snapshot`] hands out the [`CatalogSnapshot`] the calling session sees, an
//! immutable, versioned value that every session shares (no per-session cache to warm up,
//! lesson L2/W7); [`Catalog::create_table`], [`Catalog::drop_table`] and the other changes
//! take the transaction they belong to; [`Catalog::commit`], [`Catalog::abort`],
//! [`Catalog::rollback_to`] and [`Catalog::release`] end them with it.
//!
//! Transactions (DDL is transactional, as in PostgreSQL):
//! - Each transaction's changes build a private snapshot from the committed one, kept by
//!   its top-level transaction id; that transaction sees it (`snapshot(tx)`), no other
//!   does, whatever thread runs it. Whenever
//!   another transaction commits changes, the private snapshot is rebuilt on the new
//!   committed one (its records applied again), so a transaction sees what others
//!   committed, as PostgreSQL's catalog lookups do, and its commit publishes its records
//!   applied to the newest committed catalog.
//! - Any number of transactions change the catalog at once. Records of different
//!   transactions apply in either order because they change different objects: the
//!   server takes PostgreSQL's relation locks before a change (AccessExclusive for DROP
//!   and ALTER, Share for CREATE INDEX, ShareRowExclusive on both tables of a foreign
//!   key), so two transactions change one object only when their locks allow it, and
//!   then only by adding to it (two CREATE INDEX on one table: `CreateIndex` records
//!   add one index each). A new relation's name is claimed, as PostgreSQL's unique index
//!   on `pg_class` names does: a transaction that creates a name another one has claimed
//!   waits for that one to end (through the lock manager, on its transaction id, so waits
//!   time out and deadlocks are found), then fails with 42P07 if it committed the name.
//!   Generated names (`t_pkey`, `t_a_idx1`) skip names others have claimed. OIDs come
//!   from one counter.
//! - Commit logs the changes as one `Committed` record just before the commit record
//!   (in the WAL, cut into pieces that each fit one WAL record, so a transaction may
//!   change any number of objects) and publishes them once the commit is durable, before
//!   the transaction's locks go, so whoever waited on them binds against the new catalog.
//!   Recovery holds the pieces back until it meets the commit record
//!   ([`Catalog::redo_transaction`]): a crash before it leaves the change undone, with
//!   the transaction, however many pieces had reached the disk.
//! - Files are made when an object is created (so the transaction can fill it) and
//!   removed by the caller when the transaction ends: what it created if it rolled back,
//!   what it dropped once it committed ([`RelFile`]). OIDs are logged as taken (a
//!   `NextOid` record) before any file is made for them, so no OID, and no file name, is
//!   handed out twice, even after a crash that lost the transaction.
//! - Savepoints: the state before the first change of each savepoint level is kept;
//!   ROLLBACK TO restores it.
//!
//! Invariants:
//! - A snapshot never changes after it is published; DDL builds the next one from persistent
//!   maps (`imbl`), so publishing costs O(log n) in the number of relations, not O(n).
//!   Versions are never reused, committed or pending. Each relation remembers the
//!   version that last changed it, so a cached plan is checked against the relations it
//!   read ([`Dependencies`]), not against the whole catalog.
//! - Each change is one record, of the objects it changes (a `Batch` when a table comes
//!   or goes with the sequences it owns), so DDL costs O(objects changed) in I/O as well.
//!   With the server's WAL attached, a transaction's records go to the WAL (made durable
//!   by its commit) and `catalog.log` holds the committed state: each checkpoint appends
//!   the changes committed since the last one, and rewrites the file as the live state
//!   once it has doubled ([`Catalog::checkpoint`]); recovery replays the records after
//!   it ([`Catalog::redo`]). Without a WAL (tests), records are appended to
//!   `catalog.log` itself. ANALYZE's statistics are the one change made outside a
//!   transaction ([`Catalog::set_stats`]).
//! - Facts derived from the catalog live in the descriptors (key column sets); runtime facts
//!   about storage (file sizes, open files) live in `storage::smgr`, keyed by `RelId`, and are
//!   invalidated by whoever changes the catalog (`smgr::forget`, `BufferPool::drop_relation`).
//!
//! Locking: the server's relation locks order transactions that change one object; a
//! mutex over the pending changes guards names and private snapshots (taken only while
//! some transaction has pending changes); a mutex inside [`Catalog`] orders publishing
//! against checkpoints; readers only clone an `Arc`.

mod deps;
mod desc;
mod log;
pub mod partition;
pub mod procs;
mod sysviews;

pub use access::nbtree::KeyOrder;
pub use deps::Dependencies;
pub use desc::{
    CheckConstraint, ColumnDesc, ColumnStats, Comment, EXPRESSION_KEY, FkAction, ForeignKey,
    Identity, IndexDesc, IndexExpr, NewCheck, NewForeignKey, NewIndex, NewKey, NewTable, RelStats,
    SequenceDesc, SequenceOptions, TableChange, TableDesc, TableOptions, dropped_column_name,
    nextval_default,
};
pub use log::CatalogLogStats;
pub use sysviews::{INFORMATION_SCHEMA_OID, SystemView};

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use common::ids::FIRST_NORMAL_OID;
use common::{Oid, PgError, PgResult, SqlState};
use parking_lot::{Mutex, RwLock};
use storage::vfs::Vfs;
use txn::{Tx, Xid};

use crate::log::{CatalogLog, Record};
use crate::partition::{PartitionBound, Partitions};

/// One committed version of the catalog, shared by every session.
#[derive(Clone, Default)]
pub struct CatalogSnapshot {
    /// Moved by every DDL (never reused, committed or pending).
    pub version: u64,
    /// For each relation (table or sequence), the version that last changed it: its
    /// descriptor, or what binding a statement on it reads besides (another table's
    /// foreign key referencing it, a sequence it owns). What a cached plan checks
    /// ([`Dependencies`]), so DDL on one relation replans only what reads it.
    changed: imbl::OrdMap<Oid, u64>,
    tables: imbl::OrdMap<String, Arc<TableDesc>>,
    by_oid: imbl::OrdMap<Oid, Arc<TableDesc>>,
    /// Indexes by name, with their table: PostgreSQL keeps tables and indexes in one
    /// namespace, so `CREATE TABLE t_pkey` must see them.
    index_names: imbl::OrdMap<String, (Oid, Oid)>,
    /// Each index's table, by the index's oid.
    index_tables: imbl::OrdMap<Oid, Oid>,
    /// For each table some foreign key references, the tables whose keys reference it
    /// (derived from their descriptors as records apply; not logged).
    referencing: imbl::HashMap<Oid, imbl::Vector<Oid>>,
    /// The partitions among `referencing`'s keys (derived): what a delete through a
    /// parent looks for, so that it need not look at every referenced table.
    referenced_partitions: imbl::OrdSet<Oid>,
    sequences: imbl::HashMap<String, Arc<SequenceDesc>>,
    sequences_by_oid: imbl::HashMap<Oid, Arc<SequenceDesc>>,
    /// For each table owning sequences (SERIAL), those sequences (derived, not logged).
    owned: imbl::HashMap<Oid, imbl::Vector<Oid>>,
    /// What ANALYZE last found of each table analyzed.
    stats: imbl::OrdMap<Oid, RelStats>,
    /// Each partitioned table's partitions, by bound (derived from the partitions'
    /// descriptors as records apply, not logged: partition rule 2).
    partitions: imbl::HashMap<Oid, Partitions>,
    /// Each partitioned table's partition whose DETACH CONCURRENTLY is pending: out of
    /// its parent's directory, still a partition (partition rule 6).
    detaching: imbl::OrdMap<Oid, Oid>,
    next_oid: Oid,
}

/// The bit [`CatalogSnapshot::before_detaches`] sets in the versions of the tables whose
/// directory it changed: no real version has it.
const BEFORE_DETACH_VERSION: u64 = 1 << 63;

impl CatalogSnapshot {
    pub fn table(&self, name: &str) -> Option<&Arc<TableDesc>> {
        self.tables.get(name)
    }

    pub fn table_by_oid(&self, oid: Oid) -> Option<&Arc<TableDesc>> {
        self.by_oid.get(&oid)
    }

    /// Is `name` taken by any relation (table or index)?
    pub fn relation_exists(&self, name: &str) -> bool {
        self.tables.contains_key(name)
            || self.index_names.contains_key(name)
            || self.sequences.contains_key(name)
    }

    pub fn sequence(&self, name: &str) -> Option<&Arc<SequenceDesc>> {
        self.sequences.get(name)
    }

    pub fn sequence_by_oid(&self, oid: Oid) -> Option<&Arc<SequenceDesc>> {
        self.sequences_by_oid.get(&oid)
    }

    /// Every sequence, in no particular order.
    pub fn sequences(&self) -> impl Iterator<Item = &Arc<SequenceDesc>> {
        self.sequences.values()
    }

    /// The sequences table `oid` owns (its SERIAL columns'), dropped with it.
    pub fn owned_sequences(&self, oid: Oid) -> impl Iterator<Item = &Arc<SequenceDesc>> {
        self.owned
            .get(&oid)
            .into_iter()
            .flat_map(|v| v.iter())
            .filter_map(|s| self.sequences_by_oid.get(s))
    }

    /// The name ADD FOREIGN KEY without a name gets: PostgreSQL's `t_a_fkey`, with a
    /// numeric suffix if the table has a constraint of that name.
    pub fn choose_fk_name(&self, table: &TableDesc, new: &NewForeignKey) -> String {
        let base = desc::default_fk_name(&table.name, &table.columns, new);
        unique_constraint_name(table, &base)
    }

    /// The name ADD CHECK without a name gets: PostgreSQL's `t_a_check` or `t_check`,
    /// with a numeric suffix if the table has a constraint of that name.
    pub fn choose_check_name(&self, table: &TableDesc, new: &NewCheck) -> String {
        let base = desc::default_check_name(&table.name, &table.columns, new);
        unique_constraint_name(table, &base)
    }

    /// The index whose oid is `oid`, with its table.
    pub fn index_by_oid(&self, oid: Oid) -> Option<(&Arc<TableDesc>, &IndexDesc)> {
        let t = self.by_oid.get(self.index_tables.get(&oid)?)?;
        let i = t.indexes.iter().find(|i| i.oid == oid)?;
        Some((t, i))
    }

    /// Is `oid` a relation's (table, index or sequence)?
    pub fn relation_oid_exists(&self, oid: Oid) -> bool {
        self.by_oid.contains_key(&oid)
            || self.index_tables.contains_key(&oid)
            || self.sequences_by_oid.contains_key(&oid)
    }

    /// The index called `name`, with its table.
    pub fn index(&self, name: &str) -> Option<(&Arc<TableDesc>, &IndexDesc)> {
        let (table, index) = self.index_names.get(name)?;
        let t = self.by_oid.get(table)?;
        let i = t.indexes.iter().find(|i| i.oid == *index)?;
        Some((t, i))
    }

    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableDesc>> {
        self.by_oid.values()
    }

    /// The partitions of partitioned table `oid`, by bound (`None`: it has none).
    pub fn partitions(&self, oid: Oid) -> Option<&Partitions> {
        self.partitions.get(&oid)
    }

    /// The partition of partitioned table `oid` whose DETACH CONCURRENTLY is pending:
    /// out of [`CatalogSnapshot::partitions`], no row is routed to it or read through
    /// `oid` (partition rule 6). One at most.
    pub fn detach_pending(&self, oid: Oid) -> Option<&Arc<TableDesc>> {
        self.detaching.get(&oid).and_then(|p| self.by_oid.get(p))
    }

    /// Every partition below partitioned table `oid`, at any depth, in bound order, each
    /// partitioned one before its own partitions.
    pub fn descendants(&self, oid: Oid) -> Vec<Arc<TableDesc>> {
        self.descendants_ref(oid).into_iter().cloned().collect()
    }

    /// [`CatalogSnapshot::descendants`], borrowed from the snapshot.
    pub fn descendants_ref(&self, oid: Oid) -> Vec<&Arc<TableDesc>> {
        let mut out = Vec::new();
        let mut stack = vec![oid];
        while let Some(o) = stack.pop() {
            for p in self.partitions(o).map(|s| s.all()).unwrap_or_default() {
                if let Some(t) = self.by_oid.get(&p) {
                    out.push(t);
                    stack.push(p);
                }
            }
        }
        out
    }

    /// What ANALYZE last found of table `oid`; `None` if it never ran.
    pub fn stats(&self, oid: Oid) -> Option<&RelStats> {
        self.stats.get(&oid)
    }

    /// The version that last changed relation `oid` (see `changed`); `None` once it is
    /// gone.
    pub fn changed_at(&self, oid: Oid) -> Option<u64> {
        self.changed.get(&oid).copied()
    }

    /// The foreign keys that reference table `oid`, each with its (referencing) table.
    /// Costs what the references cost: nothing for a table no key references.
    pub fn referencing(&self, oid: Oid) -> impl Iterator<Item = (&Arc<TableDesc>, &ForeignKey)> {
        self.referencing
            .get(&oid)
            .into_iter()
            .flat_map(|v| v.iter())
            .filter_map(|t| self.by_oid.get(t))
            .flat_map(move |t| {
                t.foreign_keys
                    .iter()
                    .filter(move |fk| fk.ref_table == oid)
                    .map(move |fk| (t, fk))
            })
    }

    /// The foreign keys that reference table `oid` or a table it is a partition of (at
    /// any level), each with its table: what depends on a partition's rows, as
    /// PostgreSQL's clones of a key referencing a partitioned table do.
    /// The foreign keys that reference a partition below `oid` (at any depth), each with
    /// that partition and the referencing table: what a delete through `oid` must also
    /// check. O(partitions some key references): usually none.
    pub fn referencing_below(
        &self,
        oid: Oid,
    ) -> Vec<(&Arc<TableDesc>, &Arc<TableDesc>, &ForeignKey)> {
        let mut out = Vec::new();
        for &r in &self.referenced_partitions {
            let Some(referenced) = self.by_oid.get(&r) else {
                continue;
            };
            let mut above = referenced.partition_of.as_ref().map(|o| o.parent);
            while let Some(p) = above {
                if p == oid {
                    out.extend(self.referencing(r).map(|(t, fk)| (referenced, t, fk)));
                    break;
                }
                above = self
                    .by_oid
                    .get(&p)
                    .and_then(|t| t.partition_of.as_ref().map(|o| o.parent));
            }
        }
        out
    }

    pub fn referencing_through_parents(&self, oid: Oid) -> Vec<(&Arc<TableDesc>, &ForeignKey)> {
        let mut out = Vec::new();
        let mut at = self.by_oid.get(&oid);
        while let Some(t) = at {
            out.extend(self.referencing(t.oid));
            at = t
                .partition_of
                .as_ref()
                .and_then(|o| self.by_oid.get(&o.parent));
        }
        out
    }

    fn remove_sequence(&mut self, oid: Oid) {
        let Some(seq) = self.sequences_by_oid.remove(&oid) else {
            return;
        };
        self.sequences.remove(&seq.name);
        self.changed.remove(&oid);
        if let Some((table, _)) = seq.owned_by {
            self.touch(table);
        }
        if let Some((table, _)) = seq.owned_by
            && let Some(mut v) = self.owned.get(&table).cloned()
        {
            v.retain(|s| *s != oid);
            if v.is_empty() {
                self.owned.remove(&table);
            } else {
                self.owned.insert(table, v);
            }
        }
    }

    /// Relation `oid` changed in this version.
    fn touch(&mut self, oid: Oid) {
        self.changed.insert(oid, self.version);
    }

    /// The tables `t`'s foreign keys reference changed too: a statement writing one of
    /// them binds the keys that reference it.
    fn touch_referenced(&mut self, t: &TableDesc) {
        for fk in &t.foreign_keys {
            self.touch(fk.ref_table);
            // A delete through a parent checks the keys referencing its partitions.
            if let Some(parent) = self
                .by_oid
                .get(&fk.ref_table)
                .and_then(|r| r.partition_of.as_ref())
                .map(|o| o.parent)
            {
                self.touch_ancestors(parent);
            }
        }
    }

    /// A plan of a partitioned table chose its partitions' scans: it depends on them, so
    /// a change to a partition is a change to `parent` and the tables above it
    /// (partition rule 5).
    fn touch_ancestors(&mut self, parent: Oid) {
        let mut next = Some(parent);
        while let Some(p) = next {
            if !self.by_oid.contains_key(&p) {
                break;
            }
            self.touch(p);
            next = self
                .by_oid
                .get(&p)
                .and_then(|t| t.partition_of.as_ref().map(|o| o.parent));
        }
    }

    /// This catalog as a transaction sees it that does not see the commits of the
    /// DETACH CONCURRENTLY first steps `unseen` names (by transaction id): those
    /// partitions back in their parents' directories (partition rule 6). `None` if it
    /// sees them all. The parents and the tables above them count as changed in a
    /// version of their own, the same for every such transaction, so a plan made with
    /// the partition is used only where the partition is seen, and the other way round.
    fn before_detaches(&self, unseen: impl Fn(u64) -> bool) -> Option<CatalogSnapshot> {
        let back: Vec<(Oid, Oid, PartitionBound)> = self
            .detaching
            .iter()
            .filter_map(|(&parent, &part)| {
                let of = self.by_oid.get(&part)?.partition_of.as_ref()?;
                unseen(of.detach_pending?).then(|| (parent, part, of.bound.clone()))
            })
            .collect();
        if back.is_empty() {
            return None;
        }
        let mut s = self.clone();
        for (parent, part, bound) in back {
            let mut set = s.partitions.get(&parent).cloned().unwrap_or_default();
            set.add(part, &bound);
            s.partitions.insert(parent, set);
            s.detaching.remove(&parent);
            let mut next = Some(parent);
            while let Some(p) = next {
                if let Some(v) = s.changed.get(&p).copied() {
                    s.changed.insert(p, v | BEFORE_DETACH_VERSION);
                }
                next = s
                    .by_oid
                    .get(&p)
                    .and_then(|t| t.partition_of.as_ref().map(|o| o.parent));
            }
        }
        Some(s)
    }

    /// Enter partition `t` in its parent's directory (partition rule 2); the parent's
    /// plans change with it.
    fn add_partition(&mut self, t: &TableDesc) {
        if let Some(of) = &t.partition_of {
            if of.detach_pending.is_some() {
                self.detaching.insert(of.parent, t.oid);
                self.touch_ancestors(of.parent);
                return;
            }
            let mut set = self.partitions.get(&of.parent).cloned().unwrap_or_default();
            set.add(t.oid, &of.bound);
            // A DEFAULT partition's constraint is what its siblings leave: a new sibling
            // changes it, so a statement bound on it alone (a write to it) binds again
            // and checks rows against the new one (partition rule 5).
            if let Some(d) = set.default_partition().filter(|&d| d != t.oid) {
                self.touch(d);
            }
            self.partitions.insert(of.parent, set);
            self.touch_ancestors(of.parent);
        }
    }

    fn remove_partition(&mut self, t: &TableDesc) {
        if let Some(of) = &t.partition_of
            && of.detach_pending.is_some()
        {
            if self.detaching.get(&of.parent) == Some(&t.oid) {
                self.detaching.remove(&of.parent);
            }
            self.touch_ancestors(of.parent);
        } else if let Some(of) = &t.partition_of
            && let Some(mut set) = self.partitions.get(&of.parent).cloned()
        {
            set.remove(t.oid, &of.bound);
            if set.is_empty() {
                self.partitions.remove(&of.parent);
            } else {
                self.partitions.insert(of.parent, set);
            }
            self.touch_ancestors(of.parent);
        }
    }

    fn put_table(&mut self, mut t: TableDesc) {
        self.touch(t.oid);
        if let Some(of) = &t.partition_of {
            self.touch_ancestors(of.parent);
            // A partition's columns are its parent's (partition rule 1): one copy for
            // all, whatever made the descriptor (the log read at startup, DDL).
            if let Some(parent) = self.by_oid.get(&of.parent)
                && !Arc::ptr_eq(&parent.columns, &t.columns)
                && parent.columns == t.columns
            {
                t.columns = parent.columns.clone();
            }
        }
        t.index_leading_columns();
        let t = Arc::new(t);
        self.tables.insert(t.name.clone(), t.clone());
        let oid = t.oid;
        self.by_oid.insert(oid, t);
        // It may have become, or stopped being, a partition.
        self.note_referenced_partition(oid);
    }

    /// Record (`add`) or forget the references `t`'s foreign keys make.
    fn note_references(&mut self, t: &TableDesc, add: bool) {
        for fk in &t.foreign_keys {
            let mut v = self
                .referencing
                .get(&fk.ref_table)
                .cloned()
                .unwrap_or_default();
            match (add, v.iter().position(|&x| x == t.oid)) {
                (true, None) => v.push_back(t.oid),
                (false, Some(i)) => {
                    v.remove(i);
                }
                _ => continue,
            }
            if v.is_empty() {
                self.referencing.remove(&fk.ref_table);
            } else {
                self.referencing.insert(fk.ref_table, v);
            }
            self.note_referenced_partition(fk.ref_table);
        }
    }

    /// Keep `referenced_partitions` true of table `oid`.
    fn note_referenced_partition(&mut self, oid: Oid) {
        let partition = self
            .by_oid
            .get(&oid)
            .is_some_and(|t| t.partition_of.is_some());
        if partition && self.referencing.contains_key(&oid) {
            self.referenced_partitions.insert(oid);
        } else {
            self.referenced_partitions.remove(&oid);
        }
    }

    /// Every OID `t` uses: the next one handed out must be above them.
    fn bump_next_oid(&mut self, t: &TableDesc) {
        let last = t
            .indexes
            .iter()
            .map(|i| i.oid)
            .chain(t.foreign_keys.iter().map(|f| f.oid))
            .fold(t.oid, Oid::max);
        self.next_oid = self.next_oid.max(last + 1);
    }

    fn add_index_name(&mut self, table: Oid, i: &IndexDesc) {
        self.index_names.insert(i.name.clone(), (table, i.oid));
        self.index_tables.insert(i.oid, table);
    }

    fn remove_index_name(&mut self, i: &IndexDesc) {
        self.index_names.remove(&i.name);
        self.index_tables.remove(&i.oid);
    }

    /// Apply one change as part of version `self.version` (set by the caller).
    fn apply(&mut self, record: &Record) {
        match record {
            Record::CreateTable(t) => {
                self.bump_next_oid(t);
                for i in &t.indexes {
                    self.add_index_name(t.oid, i);
                }
                self.note_references(t, true);
                self.touch_referenced(t);
                // Idempotent (wal rule 7): a replayed partition replaces itself.
                if let Some(old) = self.by_oid.get(&t.oid).cloned() {
                    self.remove_partition(&old);
                }
                self.put_table(t.clone());
                self.add_partition(t);
            }
            Record::AlterTable(t) => {
                self.bump_next_oid(t);
                // Idempotent: replay may apply a change the saved state already has.
                if let Some(old) = self.by_oid.get(&t.oid).cloned() {
                    for i in &old.indexes {
                        self.remove_index_name(i);
                    }
                    self.note_references(&old, false);
                    self.touch_referenced(&old);
                    self.remove_partition(&old);
                    self.tables.remove(&old.name);
                    for i in &t.indexes {
                        self.add_index_name(t.oid, i);
                    }
                    self.note_references(t, true);
                    self.touch_referenced(t);
                    self.put_table(t.clone());
                    self.add_partition(t);
                }
            }
            Record::NextOid(oid) => self.next_oid = self.next_oid.max(*oid),
            Record::DropTable(oid) => {
                if let Some(t) = self.by_oid.remove(oid) {
                    self.tables.remove(&t.name);
                    for i in &t.indexes {
                        self.remove_index_name(i);
                    }
                    self.note_references(&t, false);
                    self.touch_referenced(&t);
                    self.remove_partition(&t);
                    self.partitions.remove(oid);
                    self.detaching.remove(oid);
                    self.referenced_partitions.remove(oid);
                    self.changed.remove(oid);
                    self.stats.remove(oid);
                }
            }
            Record::SetStats { table, stats } => {
                if self.by_oid.contains_key(table) {
                    self.stats.insert(*table, stats.clone());
                    self.touch(*table);
                }
            }
            Record::CreateIndex { table, index } => {
                self.next_oid = self.next_oid.max(index.oid + 1);
                // Idempotent (replay may apply a record the saved state has: wal rule 7).
                if let Some(t) = self.by_oid.get(table)
                    && index
                        .stored_columns()
                        .all(|c| c < t.columns.len() || IndexDesc::expression(c).is_some())
                    && !t.indexes.iter().any(|i| i.oid == index.oid)
                {
                    let mut t = (**t).clone();
                    t.indexes.push(index.clone());
                    self.add_index_name(t.oid, index);
                    self.put_table(t);
                }
            }
            Record::CreateSequence(seq) => {
                self.next_oid = self.next_oid.max(seq.oid + 1);
                // Idempotent (wal rule 7): a replayed record replaces the saved one.
                self.remove_sequence(seq.oid);
                self.touch(seq.oid);
                let seq = Arc::new(seq.clone());
                if let Some((table, _)) = seq.owned_by {
                    let mut v = self.owned.get(&table).cloned().unwrap_or_default();
                    v.push_back(seq.oid);
                    self.owned.insert(table, v);
                    self.touch(table);
                }
                self.sequences.insert(seq.name.clone(), seq.clone());
                self.sequences_by_oid.insert(seq.oid, seq);
            }
            Record::DropSequence(oid) => self.remove_sequence(*oid),
            Record::Batch(records) | Record::Committed { records, .. } => {
                for r in records {
                    self.apply(r);
                }
            }
            Record::DropIndex { table, index } => {
                if let Some(t) = self.by_oid.get(table) {
                    let mut t = (**t).clone();
                    if let Some(pos) = t.indexes.iter().position(|i| i.oid == *index) {
                        let gone = t.indexes.remove(pos);
                        self.remove_index_name(&gone);
                    }
                    t.comments.retain(|c| c.object != *index);
                    self.put_table(t);
                }
            }
        }
    }
}

/// The descriptors of table `new` and the sequences of its SERIAL columns, with OIDs from
/// `oid` on, on `cur`; generated names avoid `others` (names other transactions claim).
fn table_desc(
    cur: &CatalogSnapshot,
    others: &[String],
    new: &NewTable,
    oid: Oid,
) -> PgResult<(TableDesc, Vec<SequenceDesc>)> {
    if cur.relation_exists(&new.name) {
        return Err(PgError::new(
            SqlState::DUPLICATE_TABLE,
            format!("relation \"{}\" already exists", new.name),
        ));
    }
    let mut taken: Vec<String> = Vec::new();
    let mut indexes = Vec::with_capacity(new.keys.len());
    for (n, k) in new.keys.iter().cloned().enumerate() {
        check_key_types(&new.columns, &k.columns)?;
        let name = match k.name {
            Some(n) => {
                if cur.relation_exists(&n) || taken.contains(&n) || n == new.name {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{n}\" already exists"),
                    ));
                }
                n
            }
            None => {
                let base = desc::default_key_name(&new.name, &new.columns, &k);
                unique_name(cur, &base, &taken, others, &new.name)
            }
        };
        taken.push(name.clone());
        let index_oid = oid + 1 + n as Oid;
        indexes.push(IndexDesc {
            oid: index_oid,
            rel: index_oid,
            name,
            columns: k.columns,
            unique: true,
            primary: k.primary,
            parent: k.parent,
            constraint: true,
            ..IndexDesc::default()
        });
    }
    let mut columns = new.columns.clone();
    let mut sequences = Vec::with_capacity(new.serials.len());
    for &(column, options) in &new.serials {
        let col = columns.get_mut(column).ok_or_else(|| {
            PgError::internal(format!("SERIAL column {column} is not in the table"))
        })?;
        // PostgreSQL's ChooseRelationName(table, column, "seq").
        let base = format!("{}_{}_seq", new.name, col.name);
        let name = unique_name(cur, &base, &taken, others, &new.name);
        taken.push(name.clone());
        col.default = Some(desc::nextval_default(&name));
        let seq_oid = oid + 1 + (indexes.len() + sequences.len()) as Oid;
        sequences.push(SequenceDesc {
            oid: seq_oid,
            rel: seq_oid,
            name,
            options,
            owned_by: Some((oid, column)),
        });
    }
    let mut table = TableDesc {
        oid,
        rel: oid,
        name: new.name.clone(),
        columns: Arc::new(columns),
        indexes,
        options: new.options,
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        comments: Vec::new(),
        index_leads: Vec::new(),
        partition_key: new.partition_key.clone(),
        partition_of: new.partition_of.clone(),
        alias: None,
        // A partitioned table has no storage (partition rule 1).
        toast: (new.partition_key.is_none() && desc::needs_toast(&new.columns)).then_some(
            oid + 1
                + (new.keys.len() + new.serials.len() + new.foreign_keys.len() + new.checks.len())
                    as Oid,
        ),
        stored_sizes: Vec::new(),
    };
    for (n, mut fk) in new.foreign_keys.iter().cloned().enumerate() {
        if fk.ref_table == 0 {
            fk.ref_table = oid;
            fk.ref_index += oid;
        }
        let name = match fk.name.take() {
            Some(n) if table.has_constraint(&n) => {
                return Err(duplicate_constraint(&n, &table.name));
            }
            Some(n) => n,
            None => cur.choose_fk_name(&table, &fk),
        };
        let fk_oid = oid + 1 + (table.indexes.len() + sequences.len() + n) as Oid;
        table.foreign_keys.push(fk.named(fk_oid, name));
    }
    let first_check =
        oid + 1 + (table.indexes.len() + sequences.len() + new.foreign_keys.len()) as Oid;
    for (n, c) in new.checks.iter().enumerate() {
        let name = match &c.name {
            Some(name) if table.checks.iter().any(|x| &x.name == name) => {
                return Err(PgError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("check constraint \"{name}\" already exists"),
                ));
            }
            Some(name) if table.has_constraint(name) => {
                return Err(duplicate_constraint(name, &table.name));
            }
            Some(name) => name.clone(),
            None => cur.choose_check_name(&table, c),
        };
        let check = c.clone().named(first_check + n as Oid, name);
        table.checks.push(check);
    }
    Ok((table, sequences))
}

/// `base`, or `base1`, `base2`, ... : the first that no index or constraint of `table`
/// has.
fn unique_constraint_name(table: &TableDesc, base: &str) -> String {
    let taken = |n: &str| table.indexes.iter().any(|i| i.name == n) || table.has_constraint(n);
    let mut name = base.to_string();
    let mut n = 0;
    while taken(&name) {
        n += 1;
        name = format!("{base}{n}");
    }
    name
}

fn duplicate_constraint(name: &str, table: &str) -> PgError {
    PgError::new(
        SqlState::DUPLICATE_OBJECT,
        format!("constraint \"{name}\" for relation \"{table}\" already exists"),
    )
}

/// `base`, or `base1`, `base2`, ... : the first that no relation (nor `taken`, nor
/// `others`, nor `also`) uses, as PostgreSQL's `ChooseRelationName`.
fn unique_name(
    cur: &CatalogSnapshot,
    base: &str,
    taken: &[String],
    others: &[String],
    also: &str,
) -> String {
    let mut name = base.to_string();
    let mut n = 0;
    while cur.relation_exists(&name)
        || taken.contains(&name)
        || others.contains(&name)
        || name == also
    {
        n += 1;
        name = format!("{base}{n}");
    }
    name
}

/// Myriad's btrees store scalar values only: an index over (or including) an array column
/// is refused.
fn check_key_types(columns: &[ColumnDesc], keys: &[usize]) -> PgResult<()> {
    for &k in keys {
        if let Some(c) = columns.get(k)
            && matches!(c.ty, common::DataType::Array(_))
        {
            return Err(PgError::unsupported(format!(
                "an index over array column \"{}\"",
                c.name
            )));
        }
    }
    Ok(())
}

fn lookup_failed(oid: Oid) -> PgError {
    PgError::internal(format!("cache lookup failed for relation {oid}"))
}

/// The name a new index gets: `given`, which no relation may have, else `choose()`.
fn relation_name(
    cur: &CatalogSnapshot,
    given: Option<String>,
    choose: impl FnOnce() -> String,
) -> PgResult<String> {
    match given {
        Some(n) if cur.relation_exists(&n) => Err(PgError::new(
            SqlState::DUPLICATE_TABLE,
            format!("relation \"{n}\" already exists"),
        )),
        Some(n) => Ok(n),
        None => Ok(choose()),
    }
}

/// The kind of a relation whose storage a transaction's catalog change leaves to remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    Table,
    /// A btree: its cached root goes with its file.
    Index,
    /// A sequence: its running state goes with its file.
    Sequence,
}

/// One relation's storage to remove when a transaction ends: what it created, if it
/// rolls back; what it dropped, once it has committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelFile {
    pub rel: common::RelId,
    pub kind: RelKind,
}

fn corrupt_wal_record() -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        "invalid catalog record in the WAL",
    )
}

/// The files of `table`, its indexes and `sequences` (the ones it owns).
fn table_files<'a>(
    table: &TableDesc,
    sequences: impl IntoIterator<Item = &'a SequenceDesc>,
) -> Vec<RelFile> {
    let file = |rel, kind| RelFile { rel, kind };
    // A partitioned table has no storage, nor have its indexes (partition rule 1).
    let own = table.partition_key.is_none();
    let indexes = if own { &table.indexes[..] } else { &[] };
    own.then_some(table.rel)
        .into_iter()
        .chain(table.toast.filter(|_| own))
        .map(|rel| file(rel, RelKind::Table))
        .chain(indexes.iter().map(|i| file(i.rel, RelKind::Index)))
        .chain(
            sequences
                .into_iter()
                .map(|s| file(s.rel, RelKind::Sequence)),
        )
        .collect()
}

/// A transaction's catalog changes, seen by its own statements alone until it commits.
struct Pending {
    /// The transaction's top-level id: its commit record commits the changes.
    xid: Xid,
    /// The level ([`Tx::depth`]) of its first change: rolling back to that level undoes
    /// every change.
    first_depth: usize,
    /// The committed snapshot `snapshot` was built on ...
    base: Arc<CatalogSnapshot>,
    /// ... and that snapshot with `records` applied: rebuilt on the newest committed one
    /// whenever another transaction has committed changes since ([`Catalog::rebased`]).
    snapshot: Arc<CatalogSnapshot>,
    records: Vec<Record>,
    /// Storage of what it created (removed if it rolls back) ...
    created: Vec<RelFile>,
    /// ... and of what it dropped (removed once it commits).
    dropped: Vec<RelFile>,
    /// The names of the relations it creates: claimed, so that no other transaction
    /// creates one until this one ends (module doc, "Transactions").
    names: Vec<String>,
    /// Its commit is publishing the changes: its names stay claimed until they are
    /// published.
    committing: bool,
    /// The state before the first change of each savepoint level above `first_depth`,
    /// levels increasing: what ROLLBACK TO restores.
    marks: Vec<Mark>,
}

struct Mark {
    depth: usize,
    records: usize,
    created: usize,
    dropped: usize,
    names: usize,
}

impl Pending {
    /// Push a savepoint mark if this is the first change at level `depth`.
    fn mark(&mut self, depth: usize) {
        if depth > self.first_depth && self.marks.last().is_none_or(|m| m.depth < depth) {
            self.marks.push(Mark {
                depth,
                records: self.records.len(),
                created: self.created.len(),
                dropped: self.dropped.len(),
                names: self.names.len(),
            });
        }
    }
}

/// Why a transaction could not claim a relation name.
enum Busy {
    /// The name exists now (another transaction committed it since the change looked).
    Exists,
    /// Another transaction has claimed it.
    Claimed {
        xid: Xid,
        committing: bool,
        name: String,
    },
}

/// Recovery: a transaction's logged changes, held back until its commit record.
enum Waiting {
    /// A whole `Committed` record (old logs).
    Records(Vec<Record>),
    /// The pieces of its `Committed` record read so far, joined ([`log::encode_pieces`]).
    Pieces { next: u32, bytes: Vec<u8> },
}

/// The OID counter, shared by every transaction.
struct OidCounter {
    /// The next OID to hand out.
    next: Oid,
    /// The bound logged as a `NextOid` record: no OID below it is handed out again, even
    /// by a restart after a crash that lost the transaction using it.
    logged: Oid,
}

/// The catalog of one data directory.
pub struct Catalog {
    /// The committed catalog.
    current: RwLock<Arc<CatalogSnapshot>>,
    /// The uncommitted changes of each transaction that has some, by its top-level
    /// transaction id.
    pending: Mutex<HashMap<Xid, Pending>>,
    /// How many transactions have pending changes: while none does, [`Catalog::snapshot`]
    /// takes no lock.
    pending_count: AtomicUsize,
    /// The last version handed to a snapshot, committed or pending: versions are never
    /// reused, so a plan cached for one never matches another.
    versions: AtomicU64,
    oids: Mutex<OidCounter>,
    /// Recovery: transactions' changes whose commit record has not been replayed yet.
    redo_waiting: Mutex<HashMap<Xid, Waiting>>,
    /// Recovery: the pieces of a table's statistics read so far (next piece, bytes).
    redo_stats_waiting: Mutex<HashMap<Oid, (u32, Vec<u8>)>>,
    /// Where changes are logged once storage is up (`attach_wal`).
    wal: RwLock<Option<Arc<storage::xlog::Wal>>>,
    /// Serialises publishing and checkpoints, and owns the log's append position.
    log: Mutex<CatalogLog>,
}

impl Catalog {
    /// Open (or create) the catalog in `data_dir`, replaying its log.
    pub fn open(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<Catalog> {
        let (mut log, records) = CatalogLog::open(vfs, data_dir)?;
        let mut snap = CatalogSnapshot {
            next_oid: FIRST_NORMAL_OID,
            ..Default::default()
        };
        for r in &records {
            snap.apply(r);
        }
        log.saved_next_oid = snap.next_oid;
        Ok(Catalog {
            versions: AtomicU64::new(snap.version),
            oids: Mutex::new(OidCounter {
                next: snap.next_oid,
                logged: snap.next_oid,
            }),
            current: RwLock::new(Arc::new(snap)),
            pending: Mutex::new(HashMap::new()),
            pending_count: AtomicUsize::new(0),
            redo_waiting: Mutex::new(Default::default()),
            redo_stats_waiting: Mutex::new(Default::default()),
            wal: RwLock::new(None),
            log: Mutex::new(log),
        })
    }

    /// The catalog as transaction `tx` sees it: the committed one, with `tx`'s own
    /// uncommitted changes if it has any. Cheap: one `Arc` clone (and, while some
    /// transaction has pending changes, a short lock).
    pub fn snapshot(&self, tx: &Tx) -> Arc<CatalogSnapshot> {
        let snap = self.uncorrected_snapshot(tx);
        // Partition rule 6: a transaction whose snapshot predates a DETACH CONCURRENTLY's
        // first step still reads the partition through its parent.
        if !snap.detaching.is_empty()
            && let Some(seen) = tx.transaction_snapshot()
            && let Some(older) = snap.before_detaches(|xid| seen.in_progress(xid))
        {
            return Arc::new(older);
        }
        snap
    }

    fn uncorrected_snapshot(&self, tx: &Tx) -> Arc<CatalogSnapshot> {
        if self.pending_count.load(Ordering::Acquire) != 0
            && let Some(xid) = tx.top_xid()
        {
            let mut pending = self.pending.lock();
            if let Some(p) = pending.get_mut(&xid) {
                return self.rebased(p).clone();
            }
        }
        self.published()
    }

    /// The committed catalog: what work outside any transaction sees (background work,
    /// checkpoints).
    pub fn committed(&self) -> Arc<CatalogSnapshot> {
        self.published()
    }

    /// The committed catalog, whoever asks.
    fn published(&self) -> Arc<CatalogSnapshot> {
        self.current.read().clone()
    }

    /// Forget `xid`'s pending changes (under `pending`'s lock).
    fn remove_pending(&self, pending: &mut HashMap<Xid, Pending>, xid: Xid) -> Option<Pending> {
        let p = pending.remove(&xid)?;
        self.pending_count.fetch_sub(1, Ordering::AcqRel);
        Some(p)
    }

    fn next_version(&self) -> u64 {
        self.versions.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `base` with `records` applied, as a new version.
    fn with_changes(&self, base: &CatalogSnapshot, records: &[Record]) -> CatalogSnapshot {
        let mut s = base.clone();
        s.version = self.next_version();
        for r in records {
            s.apply(r);
        }
        s
    }

    /// `p`'s snapshot, rebuilt first on the committed catalog if that has changed since:
    /// a transaction sees what others commit meanwhile, as PostgreSQL's catalog lookups
    /// do. Its changes still apply, because it holds locks on what they change.
    fn rebased<'p>(&self, p: &'p mut Pending) -> &'p Arc<CatalogSnapshot> {
        let cur = self.published();
        if !Arc::ptr_eq(&cur, &p.base) {
            p.snapshot = Arc::new(self.with_changes(&cur, &p.records));
            p.base = cur;
        }
        &p.snapshot
    }

    /// The snapshot `tx`'s next change starts from: its pending changes on the newest
    /// committed catalog, made now if it has none.
    fn ddl_base(&self, tx: &Tx) -> PgResult<Arc<CatalogSnapshot>> {
        tx.xid()?;
        let xid = tx
            .top_xid()
            .ok_or_else(|| PgError::internal("a catalog change without a transaction id"))?;
        let mut pending = self.pending.lock();
        let p = pending.entry(xid).or_insert_with(|| {
            self.pending_count.fetch_add(1, Ordering::AcqRel);
            let base = self.published();
            Pending {
                xid,
                first_depth: tx.depth(),
                snapshot: base.clone(),
                base,
                records: Vec::new(),
                created: Vec::new(),
                dropped: Vec::new(),
                names: Vec::new(),
                committing: false,
                marks: Vec::new(),
            }
        });
        Ok(self.rebased(p).clone())
    }

    /// `tx`'s pending changes, with a savepoint mark pushed if this is the first change
    /// of its current level. Only after [`Catalog::ddl_base`].
    fn with_pending<R>(&self, tx: &Tx, f: impl FnOnce(&mut Pending) -> R) -> PgResult<R> {
        let mut pending = self.pending.lock();
        let p = tx
            .top_xid()
            .and_then(|xid| pending.get_mut(&xid))
            .ok_or_else(|| PgError::internal("a catalog change outside its transaction"))?;
        p.mark(tx.depth());
        Ok(f(p))
    }

    /// Run `build` on the snapshot `tx`'s change starts from and claim the relation
    /// names it returns, as PostgreSQL's unique index on `pg_class` names does: a name
    /// another transaction has claimed is waited for (its lock on its transaction id),
    /// and `build` runs again on what that transaction left, failing with 42P07 if it
    /// committed the name. `build` also gets the names others have claimed, for
    /// generated names to avoid.
    fn claiming<R>(
        &self,
        tx: &Tx,
        mut build: impl FnMut(&CatalogSnapshot, &[String]) -> PgResult<(Vec<String>, R)>,
    ) -> PgResult<R> {
        loop {
            let cur = self.ddl_base(tx)?;
            let others = self.claimed_by_others(tx);
            let (names, out) = build(&cur, &others)?;
            match self.try_claim(tx, names) {
                Ok(()) => return Ok(out),
                Err(Busy::Exists) => {}
                Err(Busy::Claimed {
                    xid,
                    name,
                    committing,
                }) => {
                    tx.wait_for_xid(xid, false, &format!("relation \"{name}\""))?;
                    if committing {
                        // Its claim goes a moment after its locks.
                        std::thread::yield_now();
                        continue;
                    }
                    // It has ended. Its changes are gone, and with them its claim,
                    // unless it ended without `commit` or `abort`.
                    let mut pending = self.pending.lock();
                    if pending.get(&xid).is_some_and(|p| !p.committing) {
                        self.remove_pending(&mut pending, xid);
                    }
                }
            }
        }
    }

    /// The name of a new index on `table` over `columns`, claimed for `tx`: `given`, or
    /// `base` made unique.
    fn claim_index_name(
        &self,
        tx: &Tx,
        table: Oid,
        given: Option<&str>,
        columns: &[usize],
        base: impl Fn(&TableDesc) -> String,
    ) -> PgResult<String> {
        self.claiming(tx, |cur, others| {
            let t = cur
                .table_by_oid(table)
                .ok_or_else(|| lookup_failed(table))?;
            check_key_types(&t.columns, columns)?;
            let name = relation_name(cur, given.map(str::to_string), || {
                unique_name(cur, &base(t), &[], others, "")
            })?;
            Ok((vec![name.clone()], name))
        })
    }

    /// The names of relations transactions other than `tx` create.
    fn claimed_by_others(&self, tx: &Tx) -> Vec<String> {
        let own = tx.top_xid();
        let pending = self.pending.lock();
        pending
            .iter()
            .filter(|(k, _)| Some(**k) != own)
            .flat_map(|(_, p)| p.names.iter().cloned())
            .collect()
    }

    /// The name CREATE INDEX without a name gets: PostgreSQL's `t_a_idx`, with a numeric
    /// suffix if a relation has it or another transaction creates one of that name.
    pub fn choose_index_name(&self, tx: &Tx, table: &TableDesc, new: &NewIndex) -> String {
        let base = desc::default_index_name(&table.name, &table.columns, new);
        self.unclaimed_name(tx, &base)
    }

    /// The name ADD PRIMARY KEY / UNIQUE without a name gets (`t_pkey`, `t_a_key`), as
    /// [`Catalog::choose_index_name`].
    pub fn choose_key_name(&self, tx: &Tx, table: &TableDesc, key: &NewKey) -> String {
        let base = desc::default_key_name(&table.name, &table.columns, key);
        self.unclaimed_name(tx, &base)
    }

    /// `base`, with a numeric suffix if a relation `tx` sees has it or another
    /// transaction creates one of that name.
    fn unclaimed_name(&self, tx: &Tx, base: &str) -> String {
        let others = self.claimed_by_others(tx);
        unique_name(&self.snapshot(tx), base, &[], &others, "")
    }

    /// Claim `names` for `tx`, unless one exists now or another transaction has it.
    fn try_claim(&self, tx: &Tx, names: Vec<String>) -> Result<(), Busy> {
        let own = tx.top_xid();
        let mut pending = self.pending.lock();
        for (k, p) in pending.iter() {
            if Some(*k) == own {
                continue;
            }
            if let Some(n) = names.iter().find(|n| p.names.contains(n)) {
                return Err(Busy::Claimed {
                    xid: p.xid,
                    committing: p.committing,
                    name: n.clone(),
                });
            }
        }
        let Some(p) = own.and_then(|xid| pending.get_mut(&xid)) else {
            return Err(Busy::Exists);
        };
        // Published since the change looked (its claim gone with its commit)?
        let now = self.rebased(p);
        if names.iter().any(|n| now.relation_exists(n)) {
            return Err(Busy::Exists);
        }
        p.mark(tx.depth());
        p.names.extend(names);
        Ok(())
    }

    /// Take `n` consecutive OIDs, logged as taken (a `NextOid` record) before any file is
    /// made for them.
    fn take_oids(&self, n: u32) -> PgResult<Oid> {
        let mut c = self.oids.lock();
        let first = c.next;
        // OIDs name relation files too, whose ids keep their top bits for forks.
        let next = first
            .checked_add(n)
            .filter(|&next| next <= common::ids::MAX_RELID)
            .ok_or_else(|| PgError::internal("OID counter wraparound"))?;
        if next > c.logged {
            if let Some(wal) = self.wal.read().as_ref() {
                let mut payload = Vec::new();
                log::encode(&Record::NextOid(next), &mut payload);
                // Not flushed: it precedes the files' creation records in the log.
                wal.log(storage::xlog::RecordKind::Catalog, &payload)?;
            }
            c.logged = next;
        }
        c.next = next;
        Ok(first)
    }

    /// Before `tx` creates storage for new objects: `files` are removed if it rolls back.
    fn ddl_files(&self, tx: &Tx, files: &[RelFile]) -> PgResult<()> {
        self.with_pending(tx, |p| p.created.extend_from_slice(files))
    }

    /// Apply one change to `tx`'s pending catalog; `dropped` is storage to remove once
    /// it commits. Returns the new pending snapshot.
    fn ddl_apply(
        &self,
        tx: &Tx,
        record: Record,
        dropped: Vec<RelFile>,
    ) -> PgResult<Arc<CatalogSnapshot>> {
        self.with_pending(tx, |p| {
            let cur = self.rebased(p).clone();
            p.snapshot = Arc::new(self.with_changes(&cur, std::slice::from_ref(&record)));
            p.records.push(record);
            p.dropped.extend(dropped);
            p.snapshot.clone()
        })
    }

    /// Take the pending changes of transaction `xid` away.
    fn take_pending(&self, xid: Option<Xid>) -> Option<Pending> {
        let xid = xid?;
        if self.pending_count.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.remove_pending(&mut self.pending.lock(), xid)
    }

    /// Commit `tx`, with its catalog changes if it made any: they are logged as one
    /// record just before its commit record (recovery applies them on meeting that), and
    /// published once the commit is durable, before its locks go, so whoever waited on
    /// them binds against the new catalog. Returns the commit's outcome and the storage
    /// now to remove: what it dropped, or if the commit failed, what it created.
    pub fn commit(&self, tx: &Tx) -> (PgResult<()>, Vec<RelFile>) {
        let records = {
            let mut pending = self.pending.lock();
            match tx.top_xid().and_then(|xid| pending.get_mut(&xid)) {
                Some(p) if !p.records.is_empty() => {
                    p.committing = true;
                    std::mem::take(&mut p.records)
                }
                // Its changes failed before they were made (or were rolled back to a
                // savepoint): files made for them go.
                Some(_) => {
                    drop(pending);
                    let created = self.abort(tx);
                    return (tx.commit(), created);
                }
                None => {
                    drop(pending);
                    return (tx.commit(), Vec::new());
                }
            }
        };
        let xid = tx.top_xid();
        let record = Record::Committed {
            xid: xid.unwrap_or_default(),
            records,
        };
        let mut log = self.log.lock();
        // Checkpoints (`compact`) wait on `log`: the state they save either lacks both
        // records or has the change.
        let res = match self.log_change(&mut log, &record) {
            Err(e) => {
                let _ = tx.abort();
                Err(e)
            }
            Ok(()) => {
                let Record::Committed { records, .. } = &record else {
                    unreachable!("made above")
                };
                // On the newest committed catalog: other transactions' changes
                // committed since are to objects this one does not change (it holds
                // their locks, or their names), so both sets apply.
                tx.commit_with(|| {
                    let cur = self.published();
                    *self.current.write() = Arc::new(self.with_changes(&cur, records));
                })
            }
        };
        if let (Ok(()), Record::Committed { records, .. }) = (&res, record)
            && self.wal.read().is_some()
        {
            // In the WAL only: the next checkpoint saves it in `catalog.log`.
            log.unsaved.push(Record::Batch(records));
        }
        drop(log);
        let p = self.take_pending(xid);
        let (created, dropped) = p.map(|p| (p.created, p.dropped)).unwrap_or_default();
        match res {
            Ok(()) => (Ok(()), dropped),
            Err(e) => (Err(e), created),
        }
    }

    /// `tx` rolls back: its catalog changes are thrown away. Call before the transaction
    /// itself aborts (its locks keep others out meanwhile). Returns the storage of what
    /// it created, now to remove.
    pub fn abort(&self, tx: &Tx) -> Vec<RelFile> {
        self.take_pending(tx.top_xid())
            .map(|p| p.created)
            .unwrap_or_default()
    }

    /// ROLLBACK TO a savepoint at `level` ([`Tx::savepoint_level`]): the changes made
    /// from that level on are undone. Call before the transaction rolls back. Returns
    /// the storage of what those changes created, now to remove.
    pub fn rollback_to(&self, tx: &Tx, level: usize) -> Vec<RelFile> {
        if self.pending_count.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let mut pending = self.pending.lock();
        let Some(p) = tx.top_xid().and_then(|xid| pending.get_mut(&xid)) else {
            return Vec::new();
        };
        if level <= p.first_depth {
            drop(pending);
            return self.abort(tx);
        }
        let Some(i) = p.marks.iter().position(|m| m.depth >= level) else {
            return Vec::new();
        };
        let Some(mark) = p.marks.drain(i..).next() else {
            return Vec::new();
        };
        p.records.truncate(mark.records);
        p.dropped.truncate(mark.dropped);
        p.names.truncate(mark.names);
        p.snapshot = Arc::new(self.with_changes(&p.base, &p.records));
        p.created.split_off(mark.created)
    }

    /// RELEASE of savepoints: what levels above `level` changed now belongs to `level`.
    pub fn release(&self, tx: &Tx, level: usize) {
        if self.pending_count.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut pending = self.pending.lock();
        let Some(p) = tx.top_xid().and_then(|xid| pending.get_mut(&xid)) else {
            return;
        };
        p.first_depth = p.first_depth.min(level);
        if let Some(i) = p.marks.iter().position(|m| m.depth > level) {
            // The first mark above keeps the state before them all, as `level`'s own
            // mark, unless `level` has one already (or is where the changes began).
            let keep = level > p.first_depth && (i == 0 || p.marks[i - 1].depth < level);
            if keep {
                p.marks[i].depth = level;
                p.marks.truncate(i + 1);
            } else {
                p.marks.truncate(i);
            }
        }
    }

    /// Create a table: check its name, give it an OID and storage id, make it durable,
    /// publish it. Key constraints without a name get PostgreSQL's generated names
    /// (`t_pkey`, `t_a_b_key`), made unique with a numeric suffix as PostgreSQL does.
    ///
    /// `make_storage` creates the table's files before the change is applied; they are
    /// removed if the transaction rolls back.
    pub fn create_table(
        &self,
        tx: &Tx,
        new: NewTable,
        make_storage: impl FnOnce(&TableDesc, &[SequenceDesc]) -> PgResult<()>,
    ) -> PgResult<Arc<TableDesc>> {
        // The table, its keys, sequences and constraints, then its TOAST relation if it
        // needs one.
        let toast = new.partition_key.is_none() && desc::needs_toast(&new.columns);
        let oid = self.take_oids(
            (1 + usize::from(toast)
                + new.keys.len()
                + new.serials.len()
                + new.foreign_keys.len()
                + new.checks.len()) as Oid,
        )?;
        let (table, sequences) = self.claiming(tx, |cur, others| {
            let (table, sequences) = table_desc(cur, others, &new, oid)?;
            let names = std::iter::once(&table.name)
                .chain(table.indexes.iter().map(|i| &i.name))
                .chain(sequences.iter().map(|s| &s.name))
                .cloned()
                .collect();
            Ok((names, (table, sequences)))
        })?;
        self.ddl_files(tx, &table_files(&table, &sequences))?;
        make_storage(&table, &sequences)?;
        let record = if sequences.is_empty() {
            Record::CreateTable(table)
        } else {
            let mut records: Vec<Record> =
                sequences.into_iter().map(Record::CreateSequence).collect();
            records.push(Record::CreateTable(table));
            Record::Batch(records)
        };
        let now = self.ddl_apply(tx, record, Vec::new())?;
        now.table_by_oid(oid)
            .cloned()
            .ok_or_else(|| lookup_failed(oid))
    }

    /// Drop a table, and the sequences it owns, from the catalog in one change; their
    /// storage goes when the transaction commits.
    pub fn drop_table(&self, tx: &Tx, oid: Oid) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let table = cur
            .table_by_oid(oid)
            .cloned()
            .ok_or_else(|| lookup_failed(oid))?;
        let owned: Vec<Arc<SequenceDesc>> = cur.owned_sequences(oid).cloned().collect();
        let record = if owned.is_empty() {
            Record::DropTable(oid)
        } else {
            let mut records: Vec<Record> =
                owned.iter().map(|s| Record::DropSequence(s.oid)).collect();
            records.push(Record::DropTable(oid));
            Record::Batch(records)
        };
        let files = table_files(&table, owned.iter().map(|s| &**s));
        self.ddl_apply(tx, record, files)?;
        Ok(())
    }

    /// Create a sequence (CREATE SEQUENCE): check its name, give it an OID and storage
    /// id; `make_storage` makes its page before the change is applied (see
    /// [`Catalog::create_table`]).
    pub fn create_sequence(
        &self,
        tx: &Tx,
        name: String,
        options: SequenceOptions,
        owned_by: Option<(Oid, usize)>,
        make_storage: impl FnOnce(&SequenceDesc) -> PgResult<()>,
    ) -> PgResult<Arc<SequenceDesc>> {
        let oid = self.take_oids(1)?;
        let name = self.claiming(tx, |cur, _| {
            let name = relation_name(cur, Some(name.clone()), String::new)?;
            Ok((vec![name.clone()], name))
        })?;
        let seq = SequenceDesc {
            oid,
            rel: oid,
            name,
            options,
            owned_by,
        };
        let file = RelFile {
            rel: seq.rel,
            kind: RelKind::Sequence,
        };
        self.ddl_files(tx, &[file])?;
        make_storage(&seq)?;
        self.ddl_apply(tx, Record::CreateSequence(seq), Vec::new())?
            .sequence_by_oid(oid)
            .cloned()
            .ok_or_else(|| lookup_failed(oid))
    }

    /// Change a sequence's options and owner (ALTER SEQUENCE): its whole new descriptor as
    /// one record.
    pub fn alter_sequence(
        &self,
        tx: &Tx,
        oid: Oid,
        options: SequenceOptions,
        owned_by: Option<(Oid, usize)>,
    ) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let mut seq = (**cur.sequence_by_oid(oid).ok_or_else(|| lookup_failed(oid))?).clone();
        seq.options = options;
        seq.owned_by = owned_by;
        self.ddl_apply(tx, Record::CreateSequence(seq), Vec::new())?;
        Ok(())
    }

    /// Give sequence `oid` new storage, made by `make_storage` in its state after a
    /// restart (ALTER SEQUENCE ... RESTART, TRUNCATE ... RESTART IDENTITY), as
    /// PostgreSQL gives it a new relfilenode: the transaction's own calls use the new
    /// file, every other session the old one until the transaction commits (they wait
    /// for its lock on the sequence first); the old file goes at commit, the new one at
    /// a rollback.
    pub fn renew_sequence(
        &self,
        tx: &Tx,
        oid: Oid,
        make_storage: impl FnOnce(&SequenceDesc) -> PgResult<()>,
    ) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let old = cur.sequence_by_oid(oid).ok_or_else(|| lookup_failed(oid))?;
        let rel = self.take_oids(1)?;
        let seq = SequenceDesc {
            rel,
            ..(**old).clone()
        };
        let file = |rel| RelFile {
            rel,
            kind: RelKind::Sequence,
        };
        self.ddl_files(tx, &[file(rel)])?;
        make_storage(&seq)?;
        self.ddl_apply(tx, Record::CreateSequence(seq), vec![file(old.rel)])?;
        Ok(())
    }

    /// Drop a sequence (its storage goes when the transaction commits), and in the same
    /// change the column DEFAULTs that use it (`DROP SEQUENCE ... CASCADE`), given as
    /// (table, column).
    pub fn drop_sequence(&self, tx: &Tx, oid: Oid, defaults: &[(Oid, usize)]) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let seq = cur.sequence_by_oid(oid).ok_or_else(|| lookup_failed(oid))?;
        let file = RelFile {
            rel: seq.rel,
            kind: RelKind::Sequence,
        };
        let mut records = Vec::with_capacity(defaults.len() + 1);
        for &(table, column) in defaults {
            let mut t = (**cur
                .table_by_oid(table)
                .ok_or_else(|| lookup_failed(table))?)
            .clone();
            if let Some(c) = Arc::make_mut(&mut t.columns).get_mut(column) {
                c.default = None;
            }
            records.push(Record::AlterTable(t));
        }
        records.push(Record::DropSequence(oid));
        let record = if records.len() == 1 {
            records.pop().expect("one record")
        } else {
            Record::Batch(records)
        };
        self.ddl_apply(tx, record, vec![file])?;
        Ok(())
    }

    /// Add an index to a table: check or choose its name, give it an OID and storage id.
    /// `make_storage` builds the index before the change is applied (see
    /// [`Catalog::create_table`]).
    pub fn create_index(
        &self,
        tx: &Tx,
        table: Oid,
        new: NewIndex,
        make_storage: impl FnOnce(&IndexDesc) -> PgResult<()>,
    ) -> PgResult<IndexDesc> {
        let oid = self.take_oids(1)?;
        // INCLUDE columns are stored as keys are: no arrays either.
        let stored: Vec<usize> = new.columns.iter().chain(&new.include).copied().collect();
        let name = self.claim_index_name(tx, table, new.name.as_deref(), &stored, |t| {
            desc::default_index_name(&t.name, &t.columns, &new)
        })?;
        let index = IndexDesc {
            oid,
            rel: oid,
            name,
            columns: new.columns,
            unique: new.unique,
            primary: false,
            constraint: false,
            order: new.order,
            include: new.include,
            predicate: new.predicate,
            exprs: new.exprs,
            parent: new.parent,
            check_xmin: new.check_xmin,
        };
        // A partitioned table's index has no storage (partition rule 1).
        if !self.is_partitioned(tx, table)? {
            let file = RelFile {
                rel: index.rel,
                kind: RelKind::Index,
            };
            self.ddl_files(tx, &[file])?;
            make_storage(&index)?;
        }
        let record = Record::CreateIndex {
            table,
            index: index.clone(),
        };
        self.ddl_apply(tx, record, Vec::new())?;
        Ok(index)
    }

    /// Remove an index from its table (its storage goes when the transaction commits).
    pub fn drop_index(&self, tx: &Tx, table: Oid, index: Oid) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let (t, i) = cur
            .index_by_oid(index)
            .ok_or_else(|| lookup_failed(index))?;
        // A partitioned table's index has no storage (partition rule 1).
        let files = match t.partition_key {
            Some(_) => Vec::new(),
            None => vec![RelFile {
                rel: i.rel,
                kind: RelKind::Index,
            }],
        };
        self.ddl_apply(tx, Record::DropIndex { table, index }, files)?;
        Ok(())
    }

    /// Make table `table` a partition (`of`: ATTACH PARTITION) or no longer one (`None`:
    /// DETACH PARTITION), its indexes belonging to the partitioned indexes
    /// `index_parents` says (an index and its new parent index, or none), in one change.
    /// The caller holds AccessExclusive on the table and its parent (partition rule 5).
    pub fn set_partition_of(
        &self,
        tx: &Tx,
        table: Oid,
        of: Option<crate::partition::PartitionOf>,
        index_parents: &[(Oid, Option<Oid>)],
    ) -> PgResult<()> {
        self.alter_table(tx, table, |_, t| {
            t.partition_of = of;
            for i in &mut t.indexes {
                if let Some((_, p)) = index_parents.iter().find(|(x, _)| *x == i.oid) {
                    i.parent = *p;
                }
            }
            Ok(())
        })
    }

    /// Mark partition `table`'s DETACH CONCURRENTLY pending (partition rule 6). The
    /// caller holds ShareUpdateExclusive on the table and its parent.
    pub fn mark_detach_pending(&self, tx: &Tx, table: Oid) -> PgResult<()> {
        let xid = tx.xid()?;
        self.alter_table(tx, table, |_, t| match &mut t.partition_of {
            Some(of) => {
                of.detach_pending = Some(xid);
                Ok(())
            }
            None => Err(PgError::internal("DETACH of a table that is no partition")),
        })
    }

    /// Whether table `table`, as transaction `tx` sees it, is partitioned.
    fn is_partitioned(&self, tx: &Tx, table: Oid) -> PgResult<bool> {
        let cur = self.ddl_base(tx)?;
        let t = cur
            .table_by_oid(table)
            .ok_or_else(|| lookup_failed(table))?;
        Ok(t.partition_key.is_some())
    }

    /// Change table `table`'s descriptor with `edit` (given the snapshot the change
    /// starts from) and make the new descriptor one record (ALTER TABLE).
    fn alter_table<R>(
        &self,
        tx: &Tx,
        table: Oid,
        edit: impl FnOnce(&CatalogSnapshot, &mut TableDesc) -> PgResult<R>,
    ) -> PgResult<R> {
        let cur = self.ddl_base(tx)?;
        let mut t = (**cur
            .table_by_oid(table)
            .ok_or_else(|| lookup_failed(table))?)
        .clone();
        let out = edit(&cur, &mut t)?;
        self.ddl_apply(tx, Record::AlterTable(t), Vec::new())?;
        Ok(out)
    }

    /// Add a PRIMARY KEY or UNIQUE constraint to a table: its index (name checked or
    /// chosen), and for a primary key NOT NULL on its columns, in one durable change.
    /// `make_storage` builds the index before the change is applied (see
    /// [`Catalog::create_table`]); the caller has checked the rows.
    pub fn add_key(
        &self,
        tx: &Tx,
        table: Oid,
        key: NewKey,
        make_storage: impl FnOnce(&IndexDesc) -> PgResult<()>,
    ) -> PgResult<IndexDesc> {
        let oid = self.take_oids(1)?;
        let name = self.claim_index_name(tx, table, key.name.as_deref(), &key.columns, |t| {
            desc::default_key_name(&t.name, &t.columns, &key)
        })?;
        self.alter_table(tx, table, |_, t| {
            let index = IndexDesc {
                oid,
                rel: oid,
                name,
                columns: key.columns,
                unique: true,
                primary: key.primary,
                constraint: true,
                parent: key.parent,
                check_xmin: key.check_xmin,
                ..IndexDesc::default()
            };
            if key.primary {
                for &c in &index.columns {
                    Arc::make_mut(&mut t.columns)[c].not_null = true;
                }
            }
            // Constraint indexes come first (`TableDesc::indexes`).
            let at = t.indexes.iter().take_while(|i| i.constraint).count();
            t.indexes.insert(at, index.clone());
            // A partitioned table's index has no storage (partition rule 1).
            if t.partition_key.is_none() {
                let file = RelFile {
                    rel: index.rel,
                    kind: RelKind::Index,
                };
                self.ddl_files(tx, &[file])?;
                make_storage(&index)?;
            }
            Ok(index)
        })
    }

    /// Add a column at the end of `table` (ALTER TABLE ADD COLUMN); returns the table's
    /// new descriptor. Rows stored before it read NULL for it (access tuple rules).
    pub fn add_column(&self, tx: &Tx, table: Oid, column: ColumnDesc) -> PgResult<Arc<TableDesc>> {
        // The first column whose values may need storing out of line brings the table its
        // TOAST relation (access rule 12).
        let cur = self.ddl_base(tx)?;
        let toast = match cur.table_by_oid(table) {
            Some(t)
                if t.toast.is_none()
                    && t.partition_key.is_none()
                    && desc::needs_toast(t.columns.iter().chain([&column])) =>
            {
                let rel = self.take_oids(1)?;
                self.ddl_files(
                    tx,
                    &[RelFile {
                        rel,
                        kind: RelKind::Table,
                    }],
                )?;
                Some(rel)
            }
            _ => None,
        };
        self.alter_table(tx, table, |_, t| {
            if toast.is_some() {
                t.toast = toast;
            }
            if t.columns.iter().any(|c| c.name == column.name) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!(
                        "column \"{}\" of relation \"{}\" already exists",
                        column.name, t.name
                    ),
                ));
            }
            if t.columns.len() >= common::limits::MAX_COLUMNS {
                return Err(PgError::new(
                    SqlState::TOO_MANY_COLUMNS,
                    format!(
                        "tables can have at most {} columns",
                        common::limits::MAX_COLUMNS
                    ),
                ));
            }
            Arc::make_mut(&mut t.columns).push(column);
            Ok(())
        })?;
        self.snapshot(tx)
            .table_by_oid(table)
            .cloned()
            .ok_or_else(|| lookup_failed(table))
    }

    /// ALTER TABLE DROP COLUMN: the column becomes a dropped slot
    /// ([`ColumnDesc::dropped`]), and the table's indexes, CHECK constraints and foreign
    /// keys that use it go with it, as PostgreSQL drops them, and so do the sequences it
    /// owns (SERIAL, identity); their storage goes when the transaction commits. The
    /// caller has dropped the foreign keys of other tables that reference the column.
    pub fn drop_column(&self, tx: &Tx, table: Oid, column: usize) -> PgResult<()> {
        let cur = self.ddl_base(tx)?;
        let mut t = (**cur
            .table_by_oid(table)
            .ok_or_else(|| lookup_failed(table))?)
        .clone();
        let Some(c) = Arc::make_mut(&mut t.columns)
            .get_mut(column)
            .filter(|c| !c.dropped)
        else {
            return Err(PgError::internal(format!(
                "no column {column} to drop in table {table}"
            )));
        };
        *c = ColumnDesc {
            name: desc::dropped_column_name(column + 1),
            ty: c.ty,
            not_null: false,
            default: None,
            identity: None,
            dropped: true,
            stat_target: None,
            storage: c.storage,
        };
        let mut files = Vec::new();
        t.indexes.retain(|i| {
            let uses = i.reads(column);
            if uses {
                files.push(RelFile {
                    rel: i.rel,
                    kind: RelKind::Index,
                });
            }
            !uses
        });
        t.checks.retain(|k| !k.columns.contains(&column));
        t.foreign_keys.retain(|f| !f.columns.contains(&column));
        let attnum = column as i32 + 1;
        let indexes: Vec<Oid> = t.indexes.iter().map(|i| i.oid).collect();
        t.comments.retain(|c| {
            let table_or_column = c.object == table && c.sub != attnum;
            table_or_column || indexes.contains(&c.object)
        });
        let mut records = Vec::new();
        for s in cur.owned_sequences(table) {
            if s.owned_by == Some((table, column)) {
                records.push(Record::DropSequence(s.oid));
                files.push(RelFile {
                    rel: s.rel,
                    kind: RelKind::Sequence,
                });
            }
        }
        let record = if records.is_empty() {
            Record::AlterTable(t)
        } else {
            records.push(Record::AlterTable(t));
            Record::Batch(records)
        };
        self.ddl_apply(tx, record, files)?;
        Ok(())
    }

    /// Change `table`'s descriptor (the caller has checked the change against it and the
    /// rows). A new name is claimed as a created relation's is (42P07 if it is taken).
    pub fn change_table(&self, tx: &Tx, table: Oid, change: TableChange) -> PgResult<()> {
        if let TableChange::Rename(name) | TableChange::RenameIndex { name, .. } = &change {
            self.claiming(tx, |cur, _| {
                let name = relation_name(cur, Some(name.clone()), String::new)?;
                Ok((vec![name], ()))
            })?;
        }
        fn column(t: &mut TableDesc, i: usize) -> PgResult<&mut ColumnDesc> {
            let oid = t.oid;
            Arc::make_mut(&mut t.columns)
                .get_mut(i)
                .ok_or_else(|| PgError::internal(format!("no column {i} in table {oid}")))
        }
        self.alter_table(tx, table, |_, t| {
            match change {
                TableChange::Default { column: i, default } => column(t, i)?.default = default,
                TableChange::NotNull {
                    column: i,
                    not_null,
                } => column(t, i)?.not_null = not_null,
                TableChange::StatTarget { column: i, target } => column(t, i)?.stat_target = target,
                TableChange::Storage { column: i, storage } => column(t, i)?.storage = storage,
                TableChange::RenameColumn {
                    column: i,
                    name,
                    checks,
                    index_exprs,
                } => {
                    column(t, i)?.name = name;
                    for (oid, text) in checks {
                        if let Some(c) = t.checks.iter_mut().find(|c| c.oid == oid) {
                            c.expr = text;
                        } else if let Some(x) = t.indexes.iter_mut().find(|x| x.oid == oid) {
                            x.predicate = Some(text);
                        }
                    }
                    for (oid, k, text) in index_exprs {
                        if let Some(e) = t
                            .indexes
                            .iter_mut()
                            .find(|x| x.oid == oid)
                            .and_then(|x| x.exprs.get_mut(k))
                        {
                            e.text = text;
                        }
                    }
                }
                TableChange::Rename(name) => t.name = name,
                TableChange::RenameIndex { index, name } => {
                    let oid = t.oid;
                    t.indexes
                        .iter_mut()
                        .find(|i| i.oid == index)
                        .ok_or_else(|| {
                            PgError::internal(format!("no index {index} in table {oid}"))
                        })?
                        .name = name;
                }
            }
            Ok(())
        })
    }

    /// Add a FOREIGN KEY constraint to a table (the caller has checked both tables and
    /// the existing rows, holding locks that keep them as they were).
    pub fn add_foreign_key(&self, tx: &Tx, table: Oid, new: NewForeignKey) -> PgResult<ForeignKey> {
        let oid = self.take_oids(1)?;
        self.alter_table(tx, table, |cur, t| {
            let name = match new.name.clone() {
                Some(n) if t.has_constraint(&n) => return Err(duplicate_constraint(&n, &t.name)),
                Some(n) => n,
                None => cur.choose_fk_name(t, &new),
            };
            let fk = new.named(oid, name);
            t.foreign_keys.push(fk.clone());
            Ok(fk)
        })
    }

    /// Add a CHECK constraint to a table (ALTER TABLE ADD CHECK; the caller has checked
    /// the existing rows unless it is NOT VALID).
    pub fn add_check(&self, tx: &Tx, table: Oid, new: NewCheck) -> PgResult<CheckConstraint> {
        let oid = self.take_oids(1)?;
        self.alter_table(tx, table, |cur, t| {
            let name = match new.name.clone() {
                Some(n) if t.has_constraint(&n) => return Err(duplicate_constraint(&n, &t.name)),
                Some(n) => n,
                None => cur.choose_check_name(t, &new),
            };
            let check = new.named(oid, name);
            t.checks.push(check.clone());
            Ok(check)
        })
    }

    /// COMMENT ON table `table` (`object` == `table`, `sub` 0), one of its columns (`sub`
    /// its attnum) or one of its indexes (`object`): set, or with None removed.
    pub fn set_comment(
        &self,
        tx: &Tx,
        table: Oid,
        object: Oid,
        sub: i32,
        text: Option<String>,
    ) -> PgResult<()> {
        self.alter_table(tx, table, |_, t| {
            t.comments.retain(|c| (c.object, c.sub) != (object, sub));
            if let Some(text) = text {
                t.comments.push(Comment { object, sub, text });
            }
            Ok(())
        })
    }

    /// Remove CHECK constraint `check` from `table` (ALTER TABLE DROP CONSTRAINT).
    pub fn drop_check(&self, tx: &Tx, table: Oid, check: Oid) -> PgResult<()> {
        self.alter_table(tx, table, |_, t| {
            t.checks.retain(|c| c.oid != check);
            Ok(())
        })
    }

    /// Remove foreign key `fk` from `table` (ALTER TABLE DROP CONSTRAINT, DROP CASCADE).
    pub fn drop_foreign_key(&self, tx: &Tx, table: Oid, fk: Oid) -> PgResult<()> {
        self.alter_table(tx, table, |_, t| {
            t.foreign_keys.retain(|f| f.oid != fk);
            Ok(())
        })
    }

    /// The catalog's part of a checkpoint (storage wal rule 7): `catalog.log` is made to
    /// hold every change committed before the checkpoint's redo point, because changes
    /// are logged and published under the same lock taken here. It appends the changes
    /// committed since the last checkpoint (nothing when there were none), or, if there
    /// were some and the log has grown to about twice the live state, rewrites it ([`Catalog::compact`]):
    /// O(changes) amortized, never O(relations) for a catalog that did not change. It
    /// saves committed changes only, and the OID bound, which covers pending ones.
    pub fn checkpoint(&self) -> PgResult<()> {
        let mut log = self.log.lock();
        let next_oid = self.next_oid_bound(&self.published());
        if !log.has_changes(next_oid) {
            return Ok(());
        }
        if log.wants_compaction() {
            return self.compact_locked(&mut log);
        }
        log.save_changes(next_oid)
    }

    /// What checkpoints have written to `catalog.log` since startup.
    pub fn log_stats(&self) -> CatalogLogStats {
        self.log.lock().stats
    }

    /// No OID below this has been handed out, committed or not.
    fn next_oid_bound(&self, cur: &CatalogSnapshot) -> Oid {
        let c = self.oids.lock();
        cur.next_oid.max(c.next).max(c.logged)
    }

    /// Rewrite the log as one record per live table and sequence, plus the OID counter
    /// so that OIDs are never reused: a checkpoint that compacts.
    pub fn compact(&self) -> PgResult<()> {
        self.compact_locked(&mut self.log.lock())
    }

    fn compact_locked(&self, log: &mut CatalogLog) -> PgResult<()> {
        let cur = self.published();
        let next_oid = self.next_oid_bound(&cur);
        let mut tables: Vec<&Arc<TableDesc>> = cur.tables().collect();
        tables.sort_by_key(|t| t.oid);
        let mut sequences: Vec<&Arc<SequenceDesc>> = cur.sequences().collect();
        sequences.sort_by_key(|s| s.oid);
        let mut stats: Vec<(Oid, &RelStats)> = cur.stats.iter().map(|(o, s)| (*o, s)).collect();
        stats.sort_by_key(|(o, _)| *o);
        let records = std::iter::once(Record::NextOid(next_oid))
            .chain(
                tables
                    .into_iter()
                    .map(|t| Record::CreateTable((**t).clone())),
            )
            .chain(
                sequences
                    .into_iter()
                    .map(|s| Record::CreateSequence((**s).clone())),
            )
            .chain(stats.into_iter().map(|(table, stats)| Record::SetStats {
                table,
                stats: stats.clone(),
            }));
        log.rewrite(records)?;
        log.saved_next_oid = next_oid;
        Ok(())
    }

    /// Record what ANALYZE found of `table`, at once and outside any transaction (as
    /// PostgreSQL updates `pg_class.reltuples` in place): logged (not flushed: statistics
    /// are advice, and a crash that loses them loses nothing else) and published as a new
    /// version in which the table counts as changed, so plans that read it are made
    /// again ([`Dependencies`]) and plans of other tables are not.
    pub fn set_stats(&self, table: Oid, stats: RelStats) -> PgResult<()> {
        self.publish_stats(table, stats)
    }

    /// [`Catalog::set_stats`] by `tx`: for a table `tx` created and has not committed,
    /// the statistics join its pending changes (seen by its own statements, committed
    /// with the table, gone if it rolls back), as PostgreSQL's `pg_statistic` rows
    /// would; for any other table they are published at once.
    pub fn set_stats_by(&self, tx: &Tx, table: Oid, stats: RelStats) -> PgResult<()> {
        if self.published().table_by_oid(table).is_some() {
            return self.publish_stats(table, stats);
        }
        self.ddl_base(tx)?;
        self.ddl_apply(tx, Record::SetStats { table, stats }, Vec::new())?;
        Ok(())
    }

    fn publish_stats(&self, table: Oid, stats: RelStats) -> PgResult<()> {
        let record = Record::SetStats { table, stats };
        let mut log = self.log.lock();
        match self.wal.read().as_ref() {
            Some(wal) => {
                let mut payload = Vec::new();
                log::encode(&record, &mut payload);
                // A wide table's most common values and histograms may pass a WAL
                // record's limit: they go in pieces, applied at the last.
                let pieces =
                    log::encode_stats_pieces(table, payload, storage::xlog::MAX_RECORD_PAYLOAD);
                for piece in pieces {
                    wal.log(storage::xlog::RecordKind::Catalog, &piece)?;
                }
            }
            None => log.append(&record)?,
        }
        let cur = self.published();
        self.publish(&cur, &record);
        if self.wal.read().is_some() {
            log.unsaved.push(record);
        }
        Ok(())
    }

    /// From now on, log changes as WAL records (flushed before the change is published)
    /// instead of appending them to `catalog.log`, which becomes the state saved at each
    /// checkpoint ([`Catalog::compact`]).
    pub fn attach_wal(&self, wal: Arc<storage::xlog::Wal>) {
        // Recovery is over: changes whose commit never came never happened.
        self.redo_waiting.lock().clear();
        self.redo_stats_waiting.lock().clear();
        let mut c = self.oids.lock();
        c.next = c.next.max(self.published().next_oid);
        c.logged = c.next;
        *self.wal.write() = Some(wal);
    }

    /// Replay one logged change (crash recovery; idempotent). A transaction's changes
    /// (whole, or a piece of them) wait for its commit record ([`Catalog::redo_transaction`]).
    pub fn redo(&self, payload: &[u8]) -> PgResult<()> {
        if let Some((xid, piece, share)) = log::decode_piece(payload) {
            let mut waiting = self.redo_waiting.lock();
            match waiting.get_mut(&xid) {
                Some(Waiting::Pieces { next, bytes }) if *next == piece => {
                    bytes.extend_from_slice(share);
                    *next += 1;
                }
                // A first piece starts the record over (a commit that failed to log all
                // of its pieces left the others; that transaction never committed).
                _ if piece == 0 => {
                    waiting.insert(
                        xid,
                        Waiting::Pieces {
                            next: 1,
                            bytes: share.to_vec(),
                        },
                    );
                }
                _ => return Err(corrupt_wal_record()),
            }
            return Ok(());
        }
        if let Some((table, piece, last, share)) = log::decode_stats_piece(payload) {
            let mut waiting = self.redo_stats_waiting.lock();
            let bytes = match waiting.remove(&table) {
                Some((next, mut bytes)) if next == piece => {
                    bytes.extend_from_slice(share);
                    bytes
                }
                // A first piece starts over: the pieces of an earlier ANALYZE whose last
                // piece never reached the log are dropped (statistics are advice).
                _ if piece == 0 => share.to_vec(),
                _ => return Err(corrupt_wal_record()),
            };
            if !last {
                waiting.insert(table, (piece + 1, bytes));
                return Ok(());
            }
            drop(waiting);
            let record = log::decode(&bytes)
                .filter(|r| matches!(r, Record::SetStats { table: t, .. } if *t == table))
                .ok_or_else(corrupt_wal_record)?;
            let mut log = self.log.lock();
            let cur = self.published();
            self.publish(&cur, &record);
            log.unsaved.push(record);
            return Ok(());
        }
        let record = log::decode(payload).ok_or_else(corrupt_wal_record)?;
        if let Record::Committed { xid, records } = record {
            self.redo_waiting
                .lock()
                .insert(xid, Waiting::Records(records));
            return Ok(());
        }
        let mut log = self.log.lock();
        let cur = self.published();
        self.publish(&cur, &record);
        log.unsaved.push(record);
        Ok(())
    }

    /// Recovery replayed a transaction record (`RecordKind::Xact`): if it commits
    /// transactions whose changes were logged, those changes apply.
    pub fn redo_transaction(&self, payload: &[u8]) -> PgResult<()> {
        let Some(xids) = txn::manager::committed_xids(payload) else {
            return Ok(());
        };
        let mut waiting = self.redo_waiting.lock();
        if waiting.is_empty() {
            return Ok(());
        }
        for x in &xids {
            let records = match waiting.remove(x) {
                None => continue,
                Some(Waiting::Records(records)) => records,
                Some(Waiting::Pieces { bytes, .. }) => match log::decode(&bytes) {
                    Some(Record::Committed { xid, records }) if xid == *x => records,
                    _ => return Err(corrupt_wal_record()),
                },
            };
            let mut log = self.log.lock();
            let cur = self.published();
            let batch = Record::Batch(records);
            self.publish(&cur, &batch);
            log.unsaved.push(batch);
        }
        Ok(())
    }

    /// Log a transaction's changes: WAL records (one per piece of at most a record's
    /// payload, so changes of any size commit), made durable by the flush of the commit
    /// record that follows them, or without a WAL (tests) an fsync'd append to
    /// `catalog.log`. Called under `log`.
    fn log_change(&self, log: &mut CatalogLog, record: &Record) -> PgResult<()> {
        match (self.wal.read().as_ref(), record) {
            (Some(wal), Record::Committed { xid, .. }) => {
                let mut payload = Vec::new();
                log::encode(record, &mut payload);
                let pieces = log::encode_pieces(*xid, &payload, storage::xlog::MAX_RECORD_PAYLOAD);
                for piece in pieces {
                    wal.log(storage::xlog::RecordKind::Catalog, &piece)?;
                }
                Ok(())
            }
            (Some(wal), _) => {
                let mut payload = Vec::new();
                log::encode(record, &mut payload);
                wal.log(storage::xlog::RecordKind::Catalog, &payload)?;
                Ok(())
            }
            (None, Record::Committed { records, .. }) => {
                log.append(&Record::Batch(records.clone()))
            }
            (None, r) => log.append(r),
        }
    }

    /// Publish `cur` with `record` applied (recovery).
    fn publish(&self, cur: &CatalogSnapshot, record: &Record) {
        let mut next = cur.clone();
        next.version = self.next_version();
        next.apply(record);
        *self.current.write() = Arc::new(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::{DataType, Value};
    use storage::vfs::OsVfs;

    fn col(name: &str, ty: DataType) -> ColumnDesc {
        ColumnDesc::new(name, ty)
    }

    /// A catalog over a real WAL and transaction manager, recovered as the server does;
    /// each change below runs in a transaction of its own, committed if it worked.
    struct Db {
        cat: Catalog,
        mgr: Arc<txn::TxnManager>,
        tx: Tx,
        _wal: Arc<storage::xlog::Wal>,
        _pool: storage::bufmgr::BufferPool,
    }

    impl Db {
        fn open(dir: &Path) -> Db {
            Db::open_on(
                Arc::new(OsVfs),
                dir,
                storage::xlog::DEFAULT_WAL_SEGMENT_SIZE,
            )
        }

        fn open_on(vfs: Arc<dyn Vfs>, dir: &Path, segment_size: u64) -> Db {
            vfs.create_dir_all(dir).unwrap();
            let smgr = Arc::new(storage::smgr::Smgr::new(vfs.clone(), dir).unwrap());
            let mut pool = storage::bufmgr::BufferPool::new(smgr, 16);
            let cat = Catalog::open(vfs.clone(), dir).unwrap();
            let mgr = Arc::new(txn::TxnManager::open(vfs.clone(), dir).unwrap());
            let (wal, _) = storage::xlog::open_and_recover_with(
                vfs,
                dir,
                &mut pool,
                storage::xlog::WalOptions {
                    segment_size,
                    synchronous_commit: true,
                },
                &mut |r| match r.kind {
                    storage::xlog::RecordKind::Xact => {
                        mgr.redo(r)?;
                        cat.redo_transaction(&r.payload)
                    }
                    _ => cat.redo(&r.payload),
                },
                &|| {
                    cat.checkpoint()?;
                    mgr.checkpoint()
                },
            )
            .unwrap();
            cat.attach_wal(wal.clone());
            mgr.attach_wal(wal.clone());
            let tx = Tx::new(mgr.clone(), 1);
            Db {
                cat,
                mgr,
                tx,
                _wal: wal,
                _pool: pool,
            }
        }

        /// Run `f` in a transaction: committed if it worked, else rolled back.
        fn run<R>(&self, f: impl FnOnce(&Catalog, &Tx) -> PgResult<R>) -> PgResult<R> {
            self.tx.begin(txn::Isolation::ReadCommitted, false);
            match f(&self.cat, &self.tx) {
                Ok(r) => {
                    let (res, _) = self.cat.commit(&self.tx);
                    res.map(|()| r)
                }
                Err(e) => {
                    self.cat.abort(&self.tx);
                    self.tx.abort()?;
                    Err(e)
                }
            }
        }

        fn create_table_ok(&self, new: NewTable) -> PgResult<Arc<TableDesc>> {
            self.run(|c, tx| c.create_table(tx, new, |_, _| Ok(())))
        }

        fn drop_table(&self, oid: Oid) -> PgResult<()> {
            self.run(|c, tx| c.drop_table(tx, oid))
        }

        fn add_key(&self, table: Oid, key: NewKey) -> PgResult<IndexDesc> {
            self.run(|c, tx| c.add_key(tx, table, key, |_| Ok(())))
        }

        fn add_foreign_key(&self, table: Oid, fk: NewForeignKey) -> PgResult<ForeignKey> {
            self.run(|c, tx| c.add_foreign_key(tx, table, fk))
        }

        fn drop_foreign_key(&self, table: Oid, fk: Oid) -> PgResult<()> {
            self.run(|c, tx| c.drop_foreign_key(tx, table, fk))
        }

        fn create_sequence(
            &self,
            name: &str,
            options: SequenceOptions,
        ) -> PgResult<Arc<SequenceDesc>> {
            self.run(|c, tx| c.create_sequence(tx, name.into(), options, None, |_| Ok(())))
        }

        fn drop_sequence(&self, oid: Oid) -> PgResult<()> {
            self.run(|c, tx| c.drop_sequence(tx, oid, &[]))
        }

        fn snapshot(&self) -> Arc<CatalogSnapshot> {
            self.cat.snapshot(&self.tx)
        }

        /// Create table `name` in the transaction open on `self.tx`.
        fn create_in_tx(&self, name: &str) -> Arc<TableDesc> {
            self.cat
                .create_table(&self.tx, new_table(name), |_, _| Ok(()))
                .unwrap()
        }

        fn compact(&self) -> PgResult<()> {
            self.cat.compact()
        }
    }

    fn new_table(name: &str) -> NewTable {
        NewTable {
            name: name.into(),
            columns: vec![
                col("id", DataType::Int4),
                col("name", DataType::Varchar(Some(10))),
            ],
            keys: vec![NewKey {
                check_xmin: 0,
                parent: None,
                name: None,
                columns: vec![0],
                primary: true,
            }],
            options: TableOptions::default(),
            serials: vec![],
            foreign_keys: vec![],
            checks: vec![],
            partition_key: None,
            partition_of: None,
        }
    }

    fn check(name: Option<&str>, columns: Vec<usize>) -> NewCheck {
        NewCheck {
            name: name.map(str::to_string),
            expr: "true".into(),
            columns,
            validated: true,
        }
    }

    #[test]
    fn checks_are_named_like_postgres_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let t = {
            let cat = Db::open(dir.path());
            let mut new = new_table("t");
            new.checks = vec![
                check(None, vec![0]),
                check(Some("own"), vec![0, 1]),
                check(None, vec![0]),
                check(None, vec![0, 1]),
            ];
            let t = cat.create_table_ok(new).unwrap();
            let names: Vec<&str> = t.checks.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["t_id_check", "own", "t_id_check1", "t_check"]);
            let mut dup = new_table("u");
            dup.checks = vec![check(Some("x"), vec![]), check(Some("x"), vec![])];
            let e = cat.create_table_ok(dup).unwrap_err();
            assert_eq!(e.message, "check constraint \"x\" already exists");
            let added = cat
                .run(|c, tx| c.add_check(tx, t.oid, check(None, vec![1])))
                .unwrap();
            assert_eq!(added.name, "t_name_check");
            let e = cat
                .run(|c, tx| c.add_check(tx, t.oid, check(Some("t_pkey"), vec![])))
                .unwrap_err();
            assert_eq!(e.code, SqlState::DUPLICATE_OBJECT);
            let own = t.checks[1].oid;
            cat.run(|c, tx| c.drop_check(tx, t.oid, own)).unwrap();
            t
        };
        let cat = Db::open(dir.path());
        let snap = cat.snapshot();
        let now = snap.table_by_oid(t.oid).unwrap();
        let names: Vec<&str> = now.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["t_id_check", "t_id_check1", "t_check", "t_name_check"]
        );
        assert_eq!(now.checks[2].columns, [0, 1]);
    }

    #[test]
    fn create_drop_survive_reopen_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        {
            let cat = Db::open(dir.path());
            let t = cat.create_table_ok(new_table("t")).unwrap();
            assert_eq!(t.indexes[0].name, "t_pkey");
            let u = cat.create_table_ok(new_table("u")).unwrap();
            assert!(u.oid > t.oid);
            let e = cat.create_table_ok(new_table("t")).unwrap_err();
            assert_eq!(e.code, SqlState::DUPLICATE_TABLE);
            let e = cat.create_table_ok(new_table("t_pkey")).unwrap_err();
            assert_eq!(e.message, "relation \"t_pkey\" already exists");
            cat.drop_table(t.oid).unwrap();
        }
        let cat = Db::open(dir.path());
        let snap = cat.snapshot();
        assert!(snap.table("t").is_none());
        let u = snap.table("u").unwrap().clone();
        assert_eq!(u.columns[1].ty, DataType::Varchar(Some(10)));
        cat.compact().unwrap();
        drop(cat);
        let cat = Db::open(dir.path());
        let snap = cat.snapshot();
        assert_eq!(snap.table("u").map(|t| t.oid), Some(u.oid));
        // OIDs are never reused, even after the dropped table's record is compacted away.
        let v = cat.create_table_ok(new_table("v")).unwrap();
        assert!(v.oid > u.oid);
    }

    #[test]
    fn keys_and_foreign_keys_survive_reopen_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let refs = |cat: &Db, p: Oid| -> Vec<(String, String)> {
            let snap = cat.snapshot();
            snap.referencing(p)
                .map(|(t, fk)| (t.name.clone(), fk.name.clone()))
                .collect()
        };
        let (p, c) = {
            let cat = Db::open(dir.path());
            let mut parent = new_table("p");
            parent.keys.clear();
            let p = cat.create_table_ok(parent).unwrap();
            let c = cat.create_table_ok(new_table("c")).unwrap();
            let key = NewKey {
                check_xmin: 0,
                parent: None,
                name: None,
                columns: vec![0],
                primary: true,
            };
            let index = cat.add_key(p.oid, key).unwrap();
            assert_eq!(index.name, "p_pkey");
            let snap = cat.snapshot();
            let p_now = snap.table_by_oid(p.oid).unwrap();
            assert!(
                p_now.columns[0].not_null,
                "a primary key makes its column NOT NULL"
            );
            let fk = NewForeignKey {
                name: None,
                columns: vec![0],
                ref_table: p.oid,
                ref_columns: vec![0],
                ref_index: index.oid,
                on_delete: FkAction::NoAction,
                on_update: FkAction::Restrict,
                match_full: false,
            };
            let made = cat.add_foreign_key(c.oid, fk.clone()).unwrap();
            assert_eq!(made.name, "c_id_fkey");
            let e = cat
                .add_foreign_key(
                    c.oid,
                    NewForeignKey {
                        name: Some("c_id_fkey".into()),
                        ..fk
                    },
                )
                .unwrap_err();
            assert_eq!(e.code, SqlState::DUPLICATE_OBJECT);
            assert_eq!(refs(&cat, p.oid), [("c".into(), "c_id_fkey".into())]);
            (p.oid, c.oid)
        };
        let cat = Db::open(dir.path());
        assert_eq!(refs(&cat, p), [("c".into(), "c_id_fkey".into())]);
        cat.compact().unwrap();
        drop(cat);
        let cat = Db::open(dir.path());
        assert_eq!(refs(&cat, p), [("c".into(), "c_id_fkey".into())]);
        let snap = cat.snapshot();
        let fk = snap.table_by_oid(c).unwrap().foreign_keys[0].oid;
        // OIDs stay unique across the key, the constraint and what comes next.
        let next = cat.create_table_ok(new_table("d")).unwrap();
        assert!(next.oid > fk);
        cat.drop_foreign_key(c, fk).unwrap();
        assert!(refs(&cat, p).is_empty());
        cat.drop_table(c).unwrap();
        assert!(refs(&cat, p).is_empty());
    }

    #[test]
    fn sequences_and_serials_survive_reopen_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let seq_names = |cat: &Db| -> Vec<String> {
            let snap = cat.snapshot();
            let mut v: Vec<String> = snap.sequences().map(|s| s.name.clone()).collect();
            v.sort();
            v
        };
        let (t, s) = {
            let cat = Db::open(dir.path());
            let opts = SequenceOptions::defaults(DataType::Int4, 1);
            let s = cat
                .create_sequence("s", SequenceOptions { start: 7, ..opts })
                .unwrap();
            let e = cat.create_sequence("s", opts).unwrap_err();
            assert_eq!(e.code, SqlState::DUPLICATE_TABLE);
            // A relation named like the SERIAL's sequence pushes it to a suffix.
            cat.create_sequence("t_id_seq", opts).unwrap();
            let mut new = new_table("t");
            new.serials = vec![(0, opts)];
            let t = cat.create_table_ok(new).unwrap();
            assert_eq!(
                t.columns[0].default.as_deref(),
                Some("nextval('t_id_seq1'::regclass)")
            );
            let snap = cat.snapshot();
            let owned: Vec<&str> = snap
                .owned_sequences(t.oid)
                .map(|s| s.name.as_str())
                .collect();
            assert_eq!(owned, ["t_id_seq1"]);
            assert!(snap.relation_exists("t_id_seq1"));
            (t.oid, s.oid)
        };
        let cat = Db::open(dir.path());
        assert_eq!(seq_names(&cat), ["s", "t_id_seq", "t_id_seq1"]);
        cat.compact().unwrap();
        drop(cat);
        let cat = Db::open(dir.path());
        assert_eq!(seq_names(&cat), ["s", "t_id_seq", "t_id_seq1"]);
        let snap = cat.snapshot();
        assert_eq!(snap.sequence_by_oid(s).unwrap().options.start, 7);
        assert_eq!(snap.owned_sequences(t).count(), 1);
        // Dropping the table drops the sequence it owns, in the same record.
        let files = cat
            .run(|c, tx| {
                c.drop_table(tx, t)?;
                let (res, files) = c.commit(tx);
                tx.begin(txn::Isolation::ReadCommitted, false);
                res.map(|()| files)
            })
            .unwrap();
        let kinds: Vec<RelKind> = files.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [RelKind::Table, RelKind::Index, RelKind::Sequence]);
        cat.drop_sequence(s).unwrap();
        drop(cat);
        let cat = Db::open(dir.path());
        assert_eq!(seq_names(&cat), ["t_id_seq"]);
        assert_eq!(
            super::nextval_default("Odd'Name"),
            "nextval('\"Odd''Name\"'::regclass)"
        );
    }

    /// What another session sees: the committed catalog.
    fn seen_elsewhere(cat: &Catalog) -> Arc<CatalogSnapshot> {
        cat.committed()
    }

    /// Issue 26: uncommitted DDL belongs to its transaction, not to the thread it runs
    /// on. Two transactions on one thread, their statements interleaved, each see their
    /// own new table and not the other's.
    #[test]
    fn two_transactions_on_one_thread_see_their_own_changes() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path());
        let other = Tx::new(db.mgr.clone(), 2);
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        other.begin(txn::Isolation::ReadCommitted, false);
        db.create_in_tx("mine");
        db.cat
            .create_table(&other, new_table("theirs"), |_, _| Ok(()))
            .unwrap();
        let (mine, theirs) = (db.cat.snapshot(&db.tx), db.cat.snapshot(&other));
        assert!(mine.table("mine").is_some() && mine.table("theirs").is_none());
        assert!(theirs.table("theirs").is_some() && theirs.table("mine").is_none());
        db.cat.abort(&other);
        other.abort().unwrap();
        db.cat.commit(&db.tx).0.unwrap();
        let now = db.cat.committed();
        assert!(now.table("mine").is_some() && now.table("theirs").is_none());
        assert!(db.cat.snapshot(&other).table("mine").is_some());
    }

    #[test]
    fn changes_are_the_transactions_own_until_it_commits() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path());
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        let t = db.create_in_tx("t");
        assert!(db.snapshot().table("t").is_some());
        assert!(seen_elsewhere(&db.cat).table("t").is_none());
        // Another transaction changes the catalog meanwhile. A table of its own is made
        // at once; the name the first one creates is waited for (here: NOWAIT).
        std::thread::scope(|s| {
            s.spawn(|| {
                let other = Tx::new(db.mgr.clone(), 2);
                other.begin(txn::Isolation::ReadCommitted, false);
                other.set_wait_policy(txn::lock::WaitPolicy::NOWAIT);
                db.cat
                    .create_table(&other, new_table("u"), |_, _| Ok(()))
                    .unwrap();
                let e = db
                    .cat
                    .create_table(&other, new_table("t"), |_, _| Ok(()))
                    .unwrap_err();
                assert_eq!(e.code, SqlState::LOCK_NOT_AVAILABLE);
                let (res, _) = db.cat.commit(&other);
                res.unwrap();
            })
            .join()
            .unwrap()
        });
        // The first sees what the other committed since its first change, and its own.
        let snap = db.snapshot();
        assert!(snap.table("t").is_some() && snap.table("u").is_some());
        let (res, files) = db.cat.commit(&db.tx);
        res.unwrap();
        assert!(files.is_empty(), "a commit of creations removes nothing");
        let seen = seen_elsewhere(&db.cat);
        assert_eq!(seen.table("t").map(|t| t.oid), Some(t.oid));
        assert!(seen.table("u").is_some_and(|u| u.oid != t.oid));
    }

    /// Transaction 2 creates table `name` while the one of `db` has created it: it waits,
    /// and gets what the first transaction's end leaves (`commit` or not).
    fn create_while_another_does(db: &Db, name: &str, commit: bool) -> PgResult<()> {
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        db.create_in_tx(name);
        let (cat, mgr) = (&db.cat, &db.mgr);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let other = Tx::new(mgr.clone(), 2);
                other.begin(txn::Isolation::ReadCommitted, false);
                let res = cat.create_table(&other, new_table(name), |_, _| Ok(()));
                match res {
                    Ok(_) => cat.commit(&other).0,
                    Err(e) => {
                        cat.abort(&other);
                        other.abort().unwrap();
                        Err(e)
                    }
                }
            });
            // Whether it waits yet or not, the outcome is the same.
            std::thread::sleep(std::time::Duration::from_millis(50));
            if commit {
                db.cat.commit(&db.tx).0.unwrap();
            } else {
                db.cat.abort(&db.tx);
                db.tx.abort().unwrap();
            }
            waiter.join().unwrap()
        })
    }

    #[test]
    fn a_name_another_transaction_creates_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path());
        let e = create_while_another_does(&db, "t", true).unwrap_err();
        assert_eq!(e.code, SqlState::DUPLICATE_TABLE);
        assert_eq!(e.message, "relation \"t\" already exists");
        create_while_another_does(&db, "u", false).unwrap();
        let snap = db.snapshot();
        assert!(snap.table("t").is_some() && snap.table("u").is_some());
        // Two transactions index one table at once (CREATE INDEX takes Share, which
        // does not conflict with itself): the second's generated name avoids the one
        // the first claims, and both indexes are there once both commit.
        let t = snap.table("t").unwrap().clone();
        let by_name = NewIndex {
            name: None,
            columns: vec![1],
            unique: false,
            ..NewIndex::default()
        };
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        let first = db
            .cat
            .create_index(&db.tx, t.oid, by_name.clone(), |_| Ok(()))
            .unwrap();
        assert_eq!(first.name, "t_name_idx");
        let second = std::thread::scope(|s| {
            s.spawn(|| {
                let other = Tx::new(db.mgr.clone(), 2);
                other.begin(txn::Isolation::ReadCommitted, false);
                let name = db.cat.choose_index_name(&other, &t, &by_name);
                let i = db
                    .cat
                    .create_index(&other, t.oid, by_name.clone(), |_| Ok(()))
                    .unwrap();
                db.cat.commit(&other).0.unwrap();
                (name, i.name)
            })
            .join()
            .unwrap()
        });
        assert_eq!(second, ("t_name_idx1".into(), "t_name_idx1".into()));
        db.cat.commit(&db.tx).0.unwrap();
        let names: Vec<String> = seen_elsewhere(&db.cat).table("t").unwrap().indexes[1..]
            .iter()
            .map(|i| i.name.clone())
            .collect();
        assert_eq!(names, ["t_name_idx1", "t_name_idx"]);
    }

    #[test]
    fn many_transactions_change_the_catalog_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut want: Vec<String> = Vec::new();
        {
            let db = Db::open(dir.path());
            let (cat, mgr) = (&db.cat, &db.mgr);
            std::thread::scope(|s| {
                for n in 0..4u32 {
                    s.spawn(move || {
                        let tx = Tx::new(mgr.clone(), 10 + n);
                        for i in 0..20 {
                            tx.begin(txn::Isolation::ReadCommitted, false);
                            let name = format!("t{n}_{i}");
                            cat.create_table(&tx, new_table(&name), |_, _| Ok(()))
                                .unwrap();
                            // Every other one also makes a table it then rolls back to
                            // a savepoint before, or drops the previous one.
                            tx.savepoint("s");
                            cat.create_table(&tx, new_table(&format!("{name}x")), |_, _| Ok(()))
                                .unwrap();
                            cat.rollback_to(&tx, tx.savepoint_level("s").unwrap());
                            tx.rollback_to("s").unwrap();
                            if i % 2 == 1 {
                                let prev = cat
                                    .snapshot(&tx)
                                    .table(&format!("t{n}_{}", i - 1))
                                    .unwrap()
                                    .oid;
                                cat.drop_table(&tx, prev).unwrap();
                            }
                            cat.commit(&tx).0.unwrap();
                        }
                    });
                }
            });
            for n in 0..4 {
                for i in (1..20).step_by(2) {
                    want.push(format!("t{n}_{i}"));
                }
            }
            want.sort();
            let mut names: Vec<String> = db.snapshot().tables().map(|t| t.name.clone()).collect();
            names.sort();
            assert_eq!(names, want);
            let oids: std::collections::HashSet<Oid> = db
                .snapshot()
                .tables()
                .flat_map(|t| std::iter::once(t.oid).chain(t.indexes.iter().map(|i| i.oid)))
                .collect();
            assert_eq!(oids.len(), want.len() * 2, "no OID is handed out twice");
        }
        // Recovery replays the changes in commit order to the same catalog.
        let db = Db::open(dir.path());
        let mut names: Vec<String> = db.snapshot().tables().map(|t| t.name.clone()).collect();
        names.sort();
        assert_eq!(names, want);
    }

    #[test]
    fn rollback_forgets_changes_and_returns_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path());
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        let t = db.create_in_tx("t");
        let files = db.cat.abort(&db.tx);
        db.tx.abort().unwrap();
        assert_eq!(
            files,
            [
                RelFile {
                    rel: t.rel,
                    kind: RelKind::Table
                },
                RelFile {
                    rel: t.indexes[0].rel,
                    kind: RelKind::Index
                }
            ]
        );
        assert!(db.snapshot().table("t").is_none());
        // The OIDs it used are not handed out again.
        let again = db.create_table_ok(new_table("t")).unwrap();
        assert!(again.oid > t.indexes[0].oid);
        // Dropping in a transaction that rolls back leaves the table.
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        db.cat.drop_table(&db.tx, again.oid).unwrap();
        assert!(db.snapshot().table("t").is_none());
        assert!(db.cat.abort(&db.tx).is_empty());
        db.tx.abort().unwrap();
        assert!(db.snapshot().table("t").is_some());
    }

    #[test]
    fn rollback_to_a_savepoint_undoes_what_came_after_it() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Db::open(dir.path());
            let (cat, tx) = (&db.cat, &db.tx);
            tx.begin(txn::Isolation::ReadCommitted, false);
            cat.create_table(tx, new_table("a"), |_, _| Ok(())).unwrap();
            tx.savepoint("s");
            let b = cat.create_table(tx, new_table("b"), |_, _| Ok(())).unwrap();
            tx.savepoint("s2");
            cat.create_table(tx, new_table("b2"), |_, _| Ok(()))
                .unwrap();
            tx.release("s2").unwrap();
            cat.release(tx, tx.depth());
            let files = cat.rollback_to(tx, tx.savepoint_level("s").unwrap());
            tx.rollback_to("s").unwrap();
            assert_eq!(files.len(), 4, "b and b2, with their keys: {files:?}");
            assert_eq!(files[0].rel, b.rel);
            let snap = db.snapshot();
            assert!(snap.table("a").is_some() && snap.table("b").is_none());
            assert!(snap.table("b2").is_none());
            cat.create_table(tx, new_table("c"), |_, _| Ok(())).unwrap();
            tx.release("s").unwrap();
            cat.release(tx, tx.depth());
            let (res, _) = cat.commit(tx);
            res.unwrap();
        }
        let db = Db::open(dir.path());
        let snap = db.snapshot();
        let mut names: Vec<&str> = snap.tables().map(|t| t.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["a", "c"]);
        // A savepoint taken before the first change: rolling back to it ends them all.
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        db.tx.savepoint("s");
        db.create_in_tx("d");
        let files = db.cat.rollback_to(&db.tx, 2);
        db.tx.rollback_to("s").unwrap();
        assert_eq!(files.len(), 2);
        assert!(db.snapshot().table("d").is_none());
        // Its changes went with it; the next change starts afresh.
        db.create_in_tx("e");
        db.cat.commit(&db.tx).0.unwrap();
        let snap = seen_elsewhere(&db.cat);
        assert!(snap.table("d").is_none() && snap.table("e").is_some());
    }

    /// `vfs` as if the machine had lost power with the log written up to `cut`: later
    /// segments gone, the rest of `cut`'s segment zeroed.
    fn cut_wal(vfs: &dyn Vfs, dir: &Path, segment_size: u64, cut: u64) {
        let wal_dir = dir.join("pg_wal");
        for name in vfs.list_dir(&wal_dir).unwrap() {
            let Ok(segment) = u64::from_str_radix(&name, 16) else {
                continue;
            };
            let path = wal_dir.join(&name);
            if segment > cut / segment_size {
                vfs.remove(&path).unwrap();
            } else if segment == cut / segment_size {
                let f = vfs.open(&path, false).unwrap();
                let from = cut % segment_size;
                let len = f.len().unwrap();
                if len > from {
                    f.write_all_at(&vec![0; (len - from) as usize], from)
                        .unwrap();
                    f.sync().unwrap();
                }
            }
        }
    }

    /// Issue 26: a transaction's catalog changes are not limited by the size of one WAL
    /// record. 10,000 tables made in one transaction commit, over the WAL's smallest
    /// segments; restart finds them all; a crash at the start or in the middle of any
    /// of the commit's records (its pieces, then the commit record) finds none of them.
    #[test]
    fn ten_thousand_tables_commit_at_once_and_a_crash_keeps_all_or_none() {
        use storage::simvfs::{SimRng, SimVfs};
        use storage::xlog::{MIN_WAL_SEGMENT_SIZE, WalReader};
        const TABLES: usize = 10_000;
        let dir = Path::new("/sim/data");
        let sim = Arc::new(SimVfs::new());
        let records = {
            let db = Db::open_on(sim.clone(), dir, MIN_WAL_SEGMENT_SIZE);
            db.tx.begin(txn::Isolation::ReadCommitted, false);
            for i in 0..TABLES {
                db.create_in_tx(&format!("table_with_a_longer_name_{i}"));
            }
            let start = db._wal.insert_lsn();
            db.cat.commit(&db.tx).0.unwrap();
            let mut reader = WalReader::new(&db._wal, start);
            let mut records = Vec::new();
            while let Some(r) = reader.next_record().unwrap() {
                records.push((r.lsn, r.end));
            }
            records
        };
        // Pieces over many segments, then the commit record.
        assert!(records.len() > 20, "{} records", records.len());
        let mut rng = SimRng::new(26);
        let image: Arc<dyn Vfs> = Arc::new(sim.crash(&mut rng));
        for _ in 0..2 {
            let db = Db::open_on(image.clone(), dir, MIN_WAL_SEGMENT_SIZE);
            assert_eq!(db.snapshot().tables().count(), TABLES);
            assert!(
                db.snapshot()
                    .table("table_with_a_longer_name_9999")
                    .is_some()
            );
        }
        for (lsn, end) in records {
            for cut in [lsn, lsn + (end - lsn) / 2] {
                let image = Arc::new(sim.crash(&mut rng));
                cut_wal(&*image, dir, MIN_WAL_SEGMENT_SIZE, cut);
                let db = Db::open_on(image, dir, MIN_WAL_SEGMENT_SIZE);
                assert_eq!(db.snapshot().tables().count(), 0, "log cut at {cut}");
            }
        }
    }

    /// Issue 26: a checkpoint's catalog work follows what changed since the last one.
    /// At 10,000 relations a checkpoint after no change writes nothing, one after a
    /// CREATE TABLE writes that table alone (unless the log has doubled since it was
    /// last compacted); growth is bounded by compaction; every state survives a restart.
    #[test]
    fn checkpoints_write_only_what_changed() {
        use storage::simvfs::SimVfs;
        const TABLES: usize = 10_000;
        let dir = Path::new("/sim/data");
        let sim: Arc<dyn Vfs> = Arc::new(SimVfs::new());
        let segment = storage::xlog::DEFAULT_WAL_SEGMENT_SIZE;
        let db = Db::open_on(sim.clone(), dir, segment);
        db.tx.begin(txn::Isolation::ReadCommitted, false);
        for i in 0..TABLES {
            db.create_in_tx(&format!("t{i}"));
        }
        db.cat.commit(&db.tx).0.unwrap();
        let written = |db: &Db| db.cat.log_stats().checkpoint_bytes;
        db.cat.checkpoint().unwrap();
        let after_create = written(&db);
        assert!(after_create > 0);
        for _ in 0..3 {
            db.cat.checkpoint().unwrap();
            assert_eq!(written(&db), after_create, "nothing changed");
        }
        // The first change after the log doubled compacts it ...
        db.create_table_ok(new_table("compacting")).unwrap();
        db.cat.checkpoint().unwrap();
        assert_eq!(db.cat.log_stats().compactions, 1);
        // ... the next is appended.
        let before = written(&db);
        db.create_table_ok(new_table("one_more")).unwrap();
        db.cat.checkpoint().unwrap();
        let one_table = written(&db) - before;
        assert!(
            one_table > 0 && one_table < 1024,
            "{one_table} bytes for one table"
        );
        drop(db);
        let db = Db::open_on(sim.clone(), dir, segment);
        assert_eq!(db.snapshot().tables().count(), TABLES + 2);

        // Changes that leave the catalog as it was: the log grows by them, until a
        // checkpoint compacts it back to the live state.
        let live = db.cat.log.lock().end;
        let mut compacted = false;
        for i in 0..5_000 {
            let t = db.create_table_ok(new_table("churn")).unwrap();
            db.drop_table(t.oid).unwrap();
            db.cat.checkpoint().unwrap();
            let log = db.cat.log.lock();
            assert!(log.end <= 2 * live + 70 * 1024, "log of {} bytes", log.end);
            if log.stats.compactions > 0 {
                compacted = true;
                break;
            }
            assert!(i < 4_999, "never compacted");
        }
        assert!(compacted);
        drop(db);
        let db = Db::open_on(sim, dir, segment);
        let snap = db.snapshot();
        assert_eq!(snap.tables().count(), TABLES + 2);
        assert!(snap.table("churn").is_none() && snap.table("one_more").is_some());
    }

    /// ANALYZE's statistics are published at once, outside any transaction, move only
    /// their table's version, and survive a checkpoint and a crash (WAL replay), also
    /// when they are too large for one WAL record.
    #[test]
    fn statistics_publish_at_once_and_survive_restart() {
        let dir = tempfile::tempdir().unwrap();
        // 100 most common values of 1000 bytes each: logged in pieces.
        let wide = ColumnStats {
            attnum: 1,
            ty: DataType::Text,
            null_frac: 0.25,
            avg_width: 1001,
            n_distinct: -0.5,
            mcv: (0..100)
                .map(|i| (Value::Text(format!("{i:01000}")), 0.0075))
                .collect(),
            histogram: vec![Value::Text("a".into()), Value::Text("b".into())],
            correlation: Some(-0.125),
        };
        let stats = RelStats {
            reltuples: 60.0,
            relpages: 3,
            relallvisible: 2,
            frozen_xid: 1 << 40,
            columns: vec![wide].into(),
        };
        {
            let mut payload = Vec::new();
            log::encode(
                &Record::SetStats {
                    table: 1,
                    stats: stats.clone(),
                },
                &mut payload,
            );
            assert!(payload.len() > storage::xlog::MAX_RECORD_PAYLOAD);
        }
        {
            let db = Db::open(dir.path());
            let a = db.create_table_ok(new_table("a")).unwrap();
            let b = db.create_table_ok(new_table("b")).unwrap();
            let before = db.cat.committed();
            db.cat.set_stats(a.oid, stats.clone()).unwrap();
            let after = db.cat.committed();
            assert_eq!(after.stats(a.oid), Some(&stats));
            assert_ne!(after.changed_at(a.oid), before.changed_at(a.oid));
            assert_eq!(after.changed_at(b.oid), before.changed_at(b.oid));
            db._wal.flush(db._wal.insert_lsn()).unwrap();
        }
        // Reopened without a checkpoint: replayed from the WAL, then saved by the
        // recovery's checkpoint, then read back from catalog.log.
        for _ in 0..2 {
            let db = Db::open(dir.path());
            let snap = db.snapshot();
            let a = snap.table("a").unwrap().oid;
            assert_eq!(snap.stats(a), Some(&stats));
            db.compact().unwrap();
        }
        let db = Db::open(dir.path());
        let a = db.snapshot().table("a").unwrap().oid;
        db.drop_table(a).unwrap();
        assert!(db.snapshot().stats(a).is_none());
    }

    #[test]
    fn changes_without_their_commit_record_are_not_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let oid = {
            let db = Db::open(dir.path());
            db.tx.begin(txn::Isolation::ReadCommitted, false);
            let t = db.create_in_tx("t");
            // The change is logged, then the server dies before the commit record.
            let p = db.cat.take_pending(db.tx.top_xid()).unwrap();
            let record = Record::Committed {
                xid: p.xid,
                records: p.records,
            };
            db.cat.log_change(&mut db.cat.log.lock(), &record).unwrap();
            db._wal.flush(db._wal.insert_lsn()).unwrap();
            std::mem::forget(db.tx);
            t.oid
        };
        let db = Db::open(dir.path());
        assert!(db.snapshot().table("t").is_none());
        // Its OIDs stay used (their files may exist).
        let t = db.create_table_ok(new_table("t")).unwrap();
        assert!(t.oid > oid);
    }
}
