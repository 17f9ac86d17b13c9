//! The catalog: which tables exist, their columns, types, defaults and keys.
//!
//! Interface: [`Catalog::open`] replays the durable catalog at startup;
//! [`Catalog::snapshot`] hands out the current committed [`CatalogSnapshot`], an immutable,
//! versioned value that every session shares (no per-session cache to warm up, lesson L2/W7);
//! [`Catalog::create_table`] and [`Catalog::drop_table`] change it.
//!
//! Invariants:
//! - A snapshot never changes after it is published; DDL builds the next one from persistent
//!   maps (`imbl`), so publishing costs O(log n) in the number of relations, not O(n).
//! - Each change is one record, of the objects it changes (a `Batch` when a table comes
//!   or goes with the sequences it owns), so DDL costs O(objects changed) in I/O as well. With the server's WAL attached, records go to the WAL (flushed before
//!   the change is published) and `catalog.log` holds the state saved at each checkpoint;
//!   recovery replays the records after it ([`Catalog::redo`]). Without a WAL (tests),
//!   records are appended to `catalog.log` itself.
//! - Facts derived from the catalog live in the descriptors (key column sets); runtime facts
//!   about storage (file sizes, open files) live in `storage::smgr`, keyed by `RelId`, and are
//!   invalidated by whoever changes the catalog (`smgr::forget`, `BufferPool::drop_relation`).
//!
//! Locking: DDL is serialised by one mutex inside [`Catalog`]; readers only clone an `Arc`.

mod desc;
mod log;
mod sysviews;

pub use desc::{
    ColumnDesc, FkAction, ForeignKey, Identity, IndexDesc, NewForeignKey, NewIndex, NewKey,
    NewTable, SequenceDesc, SequenceOptions, TableDesc, TableOptions, nextval_default,
};
pub use sysviews::{INFORMATION_SCHEMA_OID, SystemView};

use std::path::Path;
use std::sync::Arc;

use common::ids::FIRST_NORMAL_OID;
use common::{Oid, PgError, PgResult, SqlState};
use parking_lot::{Mutex, RwLock};
use storage::vfs::Vfs;

use crate::log::{CatalogLog, Record};

/// One committed version of the catalog, shared by every session.
#[derive(Clone, Default)]
pub struct CatalogSnapshot {
    /// Incremented by every DDL; plans and caches remember the version they were built for.
    pub version: u64,
    tables: imbl::HashMap<String, Arc<TableDesc>>,
    by_oid: imbl::HashMap<Oid, Arc<TableDesc>>,
    /// Indexes by name, with their table: PostgreSQL keeps tables and indexes in one
    /// namespace, so `CREATE TABLE t_pkey` must see them.
    index_names: imbl::HashMap<String, (Oid, Oid)>,
    /// Each index's table, by the index's oid.
    index_tables: imbl::HashMap<Oid, Oid>,
    /// For each table some foreign key references, the tables whose keys reference it
    /// (derived from their descriptors as records apply; not logged).
    referencing: imbl::HashMap<Oid, imbl::Vector<Oid>>,
    sequences: imbl::HashMap<String, Arc<SequenceDesc>>,
    sequences_by_oid: imbl::HashMap<Oid, Arc<SequenceDesc>>,
    /// For each table owning sequences (SERIAL), those sequences (derived, not logged).
    owned: imbl::HashMap<Oid, imbl::Vector<Oid>>,
    next_oid: Oid,
}

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

    /// The name CREATE INDEX without a name gets: PostgreSQL's `t_a_idx`, with a numeric
    /// suffix if taken.
    pub fn choose_index_name(&self, table: &TableDesc, new: &NewIndex) -> String {
        let base = desc::default_index_name(&table.name, &table.columns, new);
        unique_name(self, &base, &[], "")
    }

    /// The name ADD PRIMARY KEY / UNIQUE without a name gets (`t_pkey`, `t_a_key`).
    pub fn choose_key_name(&self, table: &TableDesc, key: &NewKey) -> String {
        let base = desc::default_key_name(&table.name, &table.columns, key);
        unique_name(self, &base, &[], "")
    }

    /// The name ADD FOREIGN KEY without a name gets: PostgreSQL's `t_a_fkey`, with a
    /// numeric suffix if the table has a constraint of that name.
    pub fn choose_fk_name(&self, table: &TableDesc, new: &NewForeignKey) -> String {
        let base = desc::default_fk_name(&table.name, &table.columns, new);
        let taken = |n: &str| {
            table.indexes.iter().any(|i| i.name == n)
                || table.foreign_keys.iter().any(|f| f.name == n)
        };
        let mut name = base.clone();
        let mut n = 0;
        while taken(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        name
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

    fn remove_sequence(&mut self, oid: Oid) {
        let Some(seq) = self.sequences_by_oid.remove(&oid) else {
            return;
        };
        self.sequences.remove(&seq.name);
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

    fn put_table(&mut self, t: TableDesc) {
        let t = Arc::new(t);
        self.tables.insert(t.name.clone(), t.clone());
        self.by_oid.insert(t.oid, t);
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

    fn apply(&mut self, record: &Record) {
        self.version += 1;
        match record {
            Record::CreateTable(t) => {
                self.bump_next_oid(t);
                for i in &t.indexes {
                    self.add_index_name(t.oid, i);
                }
                self.note_references(t, true);
                self.put_table(t.clone());
            }
            Record::AlterTable(t) => {
                self.bump_next_oid(t);
                // Idempotent: replay may apply a change the saved state already has.
                if let Some(old) = self.by_oid.get(&t.oid).cloned() {
                    for i in &old.indexes {
                        self.remove_index_name(i);
                    }
                    self.note_references(&old, false);
                    self.tables.remove(&old.name);
                    for i in &t.indexes {
                        self.add_index_name(t.oid, i);
                    }
                    self.note_references(t, true);
                    self.put_table(t.clone());
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
                }
            }
            Record::CreateIndex { table, index } => {
                self.next_oid = self.next_oid.max(index.oid + 1);
                // Idempotent (replay may apply a record the saved state has: wal rule 7).
                if let Some(t) = self.by_oid.get(table)
                    && index.columns.iter().all(|&c| c < t.columns.len())
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
                let seq = Arc::new(seq.clone());
                if let Some((table, _)) = seq.owned_by {
                    let mut v = self.owned.get(&table).cloned().unwrap_or_default();
                    v.push_back(seq.oid);
                    self.owned.insert(table, v);
                }
                self.sequences.insert(seq.name.clone(), seq.clone());
                self.sequences_by_oid.insert(seq.oid, seq);
            }
            Record::DropSequence(oid) => self.remove_sequence(*oid),
            Record::Batch(records) => {
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
                    self.put_table(t);
                }
            }
        }
    }
}

/// `base`, or `base1`, `base2`, ... : the first that no relation (nor `taken`, nor
/// `also`) uses, as PostgreSQL's `ChooseRelationName`.
fn unique_name(cur: &CatalogSnapshot, base: &str, taken: &[String], also: &str) -> String {
    let mut name = base.to_string();
    let mut n = 0;
    while cur.relation_exists(&name) || taken.contains(&name) || name == also {
        n += 1;
        name = format!("{base}{n}");
    }
    name
}

/// Myriad's btrees order scalar keys only: an index over an array column is refused.
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

/// The catalog of one data directory.
pub struct Catalog {
    current: RwLock<Arc<CatalogSnapshot>>,
    /// Where changes are logged once storage is up (`attach_wal`).
    wal: RwLock<Option<Arc<storage::xlog::Wal>>>,
    /// Serialises DDL and owns the log's append position.
    log: Mutex<CatalogLog>,
}

impl Catalog {
    /// Open (or create) the catalog in `data_dir`, replaying its log.
    pub fn open(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<Catalog> {
        let (log, records) = CatalogLog::open(vfs, data_dir)?;
        let mut snap = CatalogSnapshot {
            next_oid: FIRST_NORMAL_OID,
            ..Default::default()
        };
        for r in &records {
            snap.apply(r);
        }
        Ok(Catalog {
            current: RwLock::new(Arc::new(snap)),
            wal: RwLock::new(None),
            log: Mutex::new(log),
        })
    }

    /// The current committed catalog. Cheap: one `Arc` clone.
    pub fn snapshot(&self) -> Arc<CatalogSnapshot> {
        self.current.read().clone()
    }

    /// Create a table: check its name, give it an OID and storage id, make it durable,
    /// publish it. Key constraints without a name get PostgreSQL's generated names
    /// (`t_pkey`, `t_a_b_key`), made unique with a numeric suffix as PostgreSQL does.
    ///
    /// `make_storage` runs before the catalog record is written, under the DDL lock: it
    /// creates the table's files and makes them durable, so the catalog never names a
    /// relation whose storage a crash could lose (a crash in between leaves an orphan file).
    pub fn create_table(
        &self,
        new: NewTable,
        make_storage: impl FnOnce(&TableDesc, &[SequenceDesc]) -> PgResult<()>,
    ) -> PgResult<Arc<TableDesc>> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        if cur.relation_exists(&new.name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", new.name),
            ));
        }
        let oid = cur.next_oid;
        let mut taken: Vec<String> = Vec::new();
        let mut indexes = Vec::with_capacity(new.keys.len());
        for (n, k) in new.keys.into_iter().enumerate() {
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
                    unique_name(&cur, &base, &taken, &new.name)
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
                constraint: true,
            });
        }
        let mut columns = new.columns;
        let mut sequences = Vec::with_capacity(new.serials.len());
        for (column, options) in new.serials {
            let col = columns.get_mut(column).ok_or_else(|| {
                PgError::internal(format!("SERIAL column {column} is not in the table"))
            })?;
            // PostgreSQL's ChooseRelationName(table, column, "seq").
            let base = format!("{}_{}_seq", new.name, col.name);
            let name = unique_name(&cur, &base, &taken, &new.name);
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
            name: new.name,
            columns,
            indexes,
            options: new.options,
            foreign_keys: Vec::new(),
        };
        for (n, mut fk) in new.foreign_keys.into_iter().enumerate() {
            if fk.ref_table == 0 {
                fk.ref_table = oid;
                fk.ref_index += oid;
            }
            let name = match fk.name.take() {
                Some(n)
                    if table.indexes.iter().any(|i| i.name == n)
                        || table.foreign_keys.iter().any(|f| f.name == n) =>
                {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!(
                            "constraint \"{n}\" for relation \"{}\" already exists",
                            table.name
                        ),
                    ));
                }
                Some(n) => n,
                None => cur.choose_fk_name(&table, &fk),
            };
            let fk_oid = oid + 1 + (table.indexes.len() + sequences.len() + n) as Oid;
            table.foreign_keys.push(fk.named(fk_oid, name));
        }
        make_storage(&table, &sequences)?;
        let record = if sequences.is_empty() {
            Record::CreateTable(table)
        } else {
            let mut records: Vec<Record> =
                sequences.into_iter().map(Record::CreateSequence).collect();
            records.push(Record::CreateTable(table));
            Record::Batch(records)
        };
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(self
            .snapshot()
            .table_by_oid(oid)
            .cloned()
            .expect("table just published"))
    }

    /// Drop a table, and the sequences it owns, from the catalog in one change. Returns
    /// them: their storage is the caller's to remove.
    pub fn drop_table(&self, oid: Oid) -> PgResult<(Arc<TableDesc>, Vec<Arc<SequenceDesc>>)> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
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
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok((table, owned))
    }

    /// Create a sequence (CREATE SEQUENCE): check its name, give it an OID and storage
    /// id; `make_storage` makes its page before the record is written (see
    /// [`Catalog::create_table`]).
    pub fn create_sequence(
        &self,
        name: String,
        options: SequenceOptions,
        owned_by: Option<(Oid, usize)>,
        make_storage: impl FnOnce(&SequenceDesc) -> PgResult<()>,
    ) -> PgResult<Arc<SequenceDesc>> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let name = relation_name(&cur, Some(name), String::new)?;
        let oid = cur.next_oid;
        let seq = SequenceDesc {
            oid,
            rel: oid,
            name,
            options,
            owned_by,
        };
        make_storage(&seq)?;
        let record = Record::CreateSequence(seq);
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        self.snapshot()
            .sequence_by_oid(oid)
            .cloned()
            .ok_or_else(|| lookup_failed(oid))
    }

    /// Change a sequence's options and owner (ALTER SEQUENCE): its whole new descriptor as
    /// one record.
    pub fn alter_sequence(
        &self,
        oid: Oid,
        options: SequenceOptions,
        owned_by: Option<(Oid, usize)>,
    ) -> PgResult<()> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let mut seq = (**cur.sequence_by_oid(oid).ok_or_else(|| lookup_failed(oid))?).clone();
        seq.options = options;
        seq.owned_by = owned_by;
        let record = Record::CreateSequence(seq);
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(())
    }

    /// Drop a sequence (its storage is the caller's to remove), and in the same change
    /// the column DEFAULTs that use it (`DROP SEQUENCE ... CASCADE`), given as (table,
    /// column).
    pub fn drop_sequence(&self, oid: Oid, defaults: &[(Oid, usize)]) -> PgResult<()> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let mut records = Vec::with_capacity(defaults.len() + 1);
        for &(table, column) in defaults {
            let mut t = (**cur
                .table_by_oid(table)
                .ok_or_else(|| lookup_failed(table))?)
            .clone();
            if let Some(c) = t.columns.get_mut(column) {
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
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(())
    }

    /// Add an index to a table: check or choose its name, give it an OID and storage id,
    /// make it durable, publish it. Returns the index; its storage is the caller's to build.
    /// `make_storage` builds the index before the catalog record is written (see
    /// [`Catalog::create_table`]).
    pub fn create_index(
        &self,
        table: Oid,
        new: NewIndex,
        make_storage: impl FnOnce(&IndexDesc) -> PgResult<()>,
    ) -> PgResult<IndexDesc> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let t = cur
            .table_by_oid(table)
            .ok_or_else(|| lookup_failed(table))?;
        check_key_types(&t.columns, &new.columns)?;
        let name = relation_name(&cur, new.name.clone(), || cur.choose_index_name(t, &new))?;
        let oid = cur.next_oid;
        let index = IndexDesc {
            oid,
            rel: oid,
            name,
            columns: new.columns,
            unique: new.unique,
            primary: false,
            constraint: false,
        };
        make_storage(&index)?;
        let record = Record::CreateIndex {
            table,
            index: index.clone(),
        };
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(index)
    }

    /// Remove an index from its table (its storage is the caller's to remove).
    pub fn drop_index(&self, table: Oid, index: Oid) -> PgResult<()> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let record = Record::DropIndex { table, index };
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(())
    }

    /// Change table `table`'s descriptor with `edit` (given the current snapshot) and make
    /// the new descriptor one durable record (ALTER TABLE), under the DDL lock.
    fn alter_table<R>(
        &self,
        table: Oid,
        edit: impl FnOnce(&CatalogSnapshot, &mut TableDesc) -> PgResult<R>,
    ) -> PgResult<R> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let mut t = (**cur
            .table_by_oid(table)
            .ok_or_else(|| lookup_failed(table))?)
        .clone();
        let out = edit(&cur, &mut t)?;
        let record = Record::AlterTable(t);
        self.log_change(&mut log, &record)?;
        self.publish(&cur, &record);
        Ok(out)
    }

    /// Add a PRIMARY KEY or UNIQUE constraint to a table: its index (name checked or
    /// chosen), and for a primary key NOT NULL on its columns, in one durable change.
    /// `make_storage` builds the index before the record is written (see
    /// [`Catalog::create_table`]); the caller has checked the rows.
    pub fn add_key(
        &self,
        table: Oid,
        key: NewKey,
        make_storage: impl FnOnce(&IndexDesc) -> PgResult<()>,
    ) -> PgResult<IndexDesc> {
        self.alter_table(table, |cur, t| {
            check_key_types(&t.columns, &key.columns)?;
            let name = relation_name(cur, key.name.clone(), || cur.choose_key_name(t, &key))?;
            let oid = cur.next_oid;
            let index = IndexDesc {
                oid,
                rel: oid,
                name,
                columns: key.columns,
                unique: true,
                primary: key.primary,
                constraint: true,
            };
            if key.primary {
                for &c in &index.columns {
                    t.columns[c].not_null = true;
                }
            }
            // Constraint indexes come first (`TableDesc::indexes`).
            let at = t.indexes.iter().take_while(|i| i.constraint).count();
            t.indexes.insert(at, index.clone());
            make_storage(&index)?;
            Ok(index)
        })
    }

    /// Add a FOREIGN KEY constraint to a table (the caller has checked both tables and
    /// the existing rows, holding locks that keep them as they were).
    pub fn add_foreign_key(&self, table: Oid, new: NewForeignKey) -> PgResult<ForeignKey> {
        self.alter_table(table, |cur, t| {
            let name = match new.name.clone() {
                Some(n) => {
                    if t.indexes.iter().any(|i| i.constraint && i.name == n)
                        || t.foreign_keys.iter().any(|f| f.name == n)
                    {
                        return Err(PgError::new(
                            SqlState::DUPLICATE_OBJECT,
                            format!(
                                "constraint \"{n}\" for relation \"{}\" already exists",
                                t.name
                            ),
                        ));
                    }
                    n
                }
                None => cur.choose_fk_name(t, &new),
            };
            let fk = new.named(cur.next_oid, name);
            t.foreign_keys.push(fk.clone());
            Ok(fk)
        })
    }

    /// Remove foreign key `fk` from `table` (ALTER TABLE DROP CONSTRAINT, DROP CASCADE).
    pub fn drop_foreign_key(&self, table: Oid, fk: Oid) -> PgResult<()> {
        self.alter_table(table, |_, t| {
            t.foreign_keys.retain(|f| f.oid != fk);
            Ok(())
        })
    }

    /// Rewrite the log as one record per live table, plus the OID counter so that OIDs are
    /// never reused (called at clean shutdown).
    ///
    /// With a WAL attached this is the catalog's checkpoint (storage wal rule 7): the
    /// state written covers every change logged before the checkpoint's redo point,
    /// because changes are logged and published under the same lock taken here.
    pub fn compact(&self) -> PgResult<()> {
        let mut log = self.log.lock();
        let cur = self.snapshot();
        let mut tables: Vec<&Arc<TableDesc>> = cur.tables().collect();
        tables.sort_by_key(|t| t.oid);
        let mut sequences: Vec<&Arc<SequenceDesc>> = cur.sequences().collect();
        sequences.sort_by_key(|s| s.oid);
        let records = std::iter::once(Record::NextOid(cur.next_oid))
            .chain(
                tables
                    .into_iter()
                    .map(|t| Record::CreateTable((**t).clone())),
            )
            .chain(
                sequences
                    .into_iter()
                    .map(|s| Record::CreateSequence((**s).clone())),
            );
        log.rewrite(records)
    }

    /// From now on, log changes as WAL records (flushed before the change is published)
    /// instead of appending them to `catalog.log`, which becomes the state saved at each
    /// checkpoint ([`Catalog::compact`]).
    pub fn attach_wal(&self, wal: Arc<storage::xlog::Wal>) {
        *self.wal.write() = Some(wal);
    }

    /// Replay one logged change (crash recovery; idempotent).
    pub fn redo(&self, payload: &[u8]) -> PgResult<()> {
        let record = log::decode(payload).ok_or_else(|| {
            PgError::new(
                SqlState::DATA_CORRUPTED,
                "invalid catalog record in the WAL",
            )
        })?;
        let _log = self.log.lock();
        let cur = self.snapshot();
        self.publish(&cur, &record);
        Ok(())
    }

    /// Make one change durable: a WAL record, flushed, or without a WAL an fsync'd
    /// append to `catalog.log`. Called with the DDL lock held.
    fn log_change(&self, log: &mut CatalogLog, record: &Record) -> PgResult<()> {
        match self.wal.read().as_ref() {
            Some(wal) => {
                let mut payload = Vec::new();
                log::encode(record, &mut payload);
                let end = wal.log(storage::xlog::RecordKind::Catalog, &payload)?;
                wal.flush(end)
            }
            None => log.append(record),
        }
    }

    fn publish(&self, cur: &CatalogSnapshot, record: &Record) {
        let mut next = cur.clone();
        next.apply(record);
        *self.current.write() = Arc::new(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::DataType;
    use storage::vfs::OsVfs;

    fn col(name: &str, ty: DataType) -> ColumnDesc {
        ColumnDesc {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
            identity: None,
        }
    }

    impl Catalog {
        fn create_table_ok(&self, new: NewTable) -> PgResult<Arc<TableDesc>> {
            self.create_table(new, |_, _| Ok(()))
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
                name: None,
                columns: vec![0],
                primary: true,
            }],
            options: TableOptions::default(),
            serials: vec![],
            foreign_keys: vec![],
        }
    }

    #[test]
    fn create_drop_survive_reopen_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        {
            let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
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
        let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
        let snap = cat.snapshot();
        assert!(snap.table("t").is_none());
        let u = snap.table("u").unwrap().clone();
        assert_eq!(u.columns[1].ty, DataType::Varchar(Some(10)));
        cat.compact().unwrap();
        drop(cat);
        let cat = Catalog::open(vfs, dir.path()).unwrap();
        let snap = cat.snapshot();
        assert_eq!(snap.table("u").map(|t| t.oid), Some(u.oid));
        // OIDs are never reused, even after the dropped table's record is compacted away.
        let v = cat.create_table_ok(new_table("v")).unwrap();
        assert!(v.oid > u.oid);
    }

    #[test]
    fn keys_and_foreign_keys_survive_reopen_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        let refs = |cat: &Catalog, p: Oid| -> Vec<(String, String)> {
            let snap = cat.snapshot();
            snap.referencing(p)
                .map(|(t, fk)| (t.name.clone(), fk.name.clone()))
                .collect()
        };
        let (p, c) = {
            let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
            let mut parent = new_table("p");
            parent.keys.clear();
            let p = cat.create_table_ok(parent).unwrap();
            let c = cat.create_table_ok(new_table("c")).unwrap();
            let key = NewKey {
                name: None,
                columns: vec![0],
                primary: true,
            };
            let index = cat.add_key(p.oid, key, |_| Ok(())).unwrap();
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
        let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
        assert_eq!(refs(&cat, p), [("c".into(), "c_id_fkey".into())]);
        cat.compact().unwrap();
        drop(cat);
        let cat = Catalog::open(vfs, dir.path()).unwrap();
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
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        let seq_names = |cat: &Catalog| -> Vec<String> {
            let snap = cat.snapshot();
            let mut v: Vec<String> = snap.sequences().map(|s| s.name.clone()).collect();
            v.sort();
            v
        };
        let (t, s) = {
            let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
            let opts = SequenceOptions::defaults(DataType::Int4, 1);
            let s = cat
                .create_sequence(
                    "s".into(),
                    SequenceOptions { start: 7, ..opts },
                    None,
                    |_| Ok(()),
                )
                .unwrap();
            let e = cat
                .create_sequence("s".into(), opts, None, |_| Ok(()))
                .unwrap_err();
            assert_eq!(e.code, SqlState::DUPLICATE_TABLE);
            // A relation named like the SERIAL's sequence pushes it to a suffix.
            cat.create_sequence("t_id_seq".into(), opts, None, |_| Ok(()))
                .unwrap();
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
        let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
        assert_eq!(seq_names(&cat), ["s", "t_id_seq", "t_id_seq1"]);
        cat.compact().unwrap();
        drop(cat);
        let cat = Catalog::open(vfs.clone(), dir.path()).unwrap();
        assert_eq!(seq_names(&cat), ["s", "t_id_seq", "t_id_seq1"]);
        let snap = cat.snapshot();
        assert_eq!(snap.sequence_by_oid(s).unwrap().options.start, 7);
        assert_eq!(snap.owned_sequences(t).count(), 1);
        // Dropping the table drops the sequence it owns, in the same record.
        let (_, owned) = cat.drop_table(t).unwrap();
        assert_eq!(owned.len(), 1);
        cat.drop_sequence(s, &[]).unwrap();
        drop(cat);
        let cat = Catalog::open(vfs, dir.path()).unwrap();
        assert_eq!(seq_names(&cat), ["t_id_seq"]);
        assert_eq!(
            super::nextval_default("Odd'Name"),
            "nextval('\"Odd''Name\"'::regclass)"
        );
    }
}
