//! CREATE INDEX and the indexes of ALTER TABLE ADD PRIMARY KEY / UNIQUE and of a new
//! table: each built in one sorted pass over the table, its unique checks made on the
//! versions it reads (row-by-row index maintenance is `crate::index`'s).

use access::heapam;
use access::visibility::{self, Liveness};
use catalog::{IndexDesc, NewIndex, NewKey, TableDesc};
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::BoundIndexExprs;

use crate::ExecContext;
use crate::index::{btree, entry_of, entry_with, key_text};
use crate::sortkey::RowKey;
/// The entries a new index over `probe.columns` gets: one per HOT chain (access rule
/// 11), pointing at its root and holding the newest version's values, for each row
/// version that is no chain member (readers check versions against their snapshots).
/// `not_null` refuses a NULL in a version that is live or may yet be (23502, ADD
/// PRIMARY KEY's SET NOT NULL). A unique index's keys are checked once it is built
/// ([`check_unique`]).
fn index_entries(
    cx: &ExecContext,
    table: &TableDesc,
    probe: &IndexDesc,
    bound: Option<&BoundIndexExprs>,
    not_null: bool,
) -> PgResult<Entries> {
    let types = table.column_types();
    let mut entries = Entries::new(cx);
    // A sequential scan of the table, counted as PostgreSQL counts its index build's.
    let mut read = 0;
    let mut scan = heapam::HeapScan::new(cx.pool, table.rel)?;
    let mut page = PageChains::default();
    let mgr = cx.tx.manager();
    let horizon = mgr.oldest_xmin();
    while let Some(item) = scan.next() {
        cx.tx.check_for_interrupts()?;
        let (tid, bytes) = item?;
        if page.block != Some(tid.block) {
            page.flush(&mut entries)?;
            let copy = scan
                .page()
                .ok_or_else(|| PgError::internal("a tuple without its page"))?;
            page.roots = heapam::hot_roots(copy, tid.block);
            page.block = Some(tid.block);
        }
        let h = access::tuple::header(&bytes)?;
        if visibility::aborted_insert(&h, cx.tx)? {
            continue;
        }
        read += 1;
        // An older version of a HOT chain: whether some snapshot may still see it.
        let seen = h.infomask & access::tuple::HEAP_HOT_UPDATED == 0
            || !visibility::dead_to_all(&h, mgr, horizon)?;
        let row = access::tuple::decode_with(&bytes, &types, cx.pool)?;
        // A partial index holds the versions its condition is true for.
        let entry = match bound {
            Some(b) => entry_with(cx, probe, b, &row)?,
            None => Some(entry_of(&row, probe)),
        };
        let Some(entry) = entry else {
            page.member(tid, None, seen);
            continue;
        };
        let key = &entry[..probe.columns.len()];
        let dead = (probe.unique || not_null) && visibility::liveness(&h, cx.tx)? == Liveness::Dead;
        entries.dead |= dead;
        if not_null
            && !dead
            && let Some(k) = key.iter().position(Value::is_null)
        {
            let column = &table.columns[probe.columns[k]].name;
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "column \"{column}\" of relation \"{}\" contains null values",
                    table.name
                ),
            ));
        }
        page.member(tid, Some(entry), seen);
    }
    page.flush(&mut entries)?;
    entries.broken_chains = page.broken;
    cx.tx.counted().scan(table.oid, read, 0);
    Ok(entries)
}

/// The HOT chains of the page an index build is reading (access rule 11): by root, the
/// newest version read of each and its entry (`None`: a partial index's condition is
/// false for it), and the entries of the older versions some snapshot may still see.
/// Only the newest is indexed, as PostgreSQL's build does. The older versions are
/// those of updates that changed no indexed column, so their entries are the newest's,
/// unless this index's columns changed before it existed: such a chain is broken for
/// it, and the snapshots that may see its older versions must not use the index
/// (`check_xmin`, PostgreSQL's `indcheckxmin`; planner rule 20).
#[derive(Default)]
struct PageChains {
    block: Option<u32>,
    /// Each line pointer's chain root and place in it (`heapam::hot_roots`).
    roots: Vec<(u16, usize)>,
    chains: std::collections::BTreeMap<u16, Chain>,
    /// A chain read so far is broken for the index.
    broken: bool,
}

/// The newest version of a chain read so far (its place, entry, and whether a
/// snapshot may see it), and the entries of the older ones a snapshot may see.
#[derive(Default)]
struct Chain {
    newest: Option<(usize, Option<Vec<Value>>, bool)>,
    older: Vec<Option<Vec<Value>>>,
}

impl PageChains {
    /// A version read at `tid`; `seen`: some snapshot may see it. One that is no chain
    /// member (an orphan pruning will remove) is not indexed.
    fn member(&mut self, tid: ItemPointer, entry: Option<Vec<Value>>, seen: bool) {
        let Some(&(root, depth)) = self.roots.get(tid.offset as usize) else {
            return;
        };
        if root == 0 {
            return;
        }
        let chain = self.chains.entry(root).or_default();
        let older = match &mut chain.newest {
            Some(newest) if newest.0 < depth => std::mem::replace(newest, (depth, entry, seen)),
            Some(_) => (depth, entry, seen),
            None => {
                chain.newest = Some((depth, entry, seen));
                return;
            }
        };
        // Only what a snapshot may see matters: a version dead to all is never read.
        if older.2 {
            chain.older.push(older.1);
        }
    }

    /// Keep the page's entries, one per chain, at its root.
    fn flush(&mut self, entries: &mut Entries) -> PgResult<()> {
        let Some(block) = self.block else {
            return Ok(());
        };
        for (root, chain) in std::mem::take(&mut self.chains) {
            let Some((_, newest, _)) = chain.newest else {
                continue;
            };
            self.broken |= chain.older.iter().any(|e| !same_entry(e, &newest));
            if let Some(entry) = newest {
                entries.push(
                    entry,
                    ItemPointer {
                        block,
                        offset: root,
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// Whether two entries (or their absence) are alike, stored as they are.
fn same_entry(a: &Option<Vec<Value>>, b: &Option<Vec<Value>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.identical(y)),
        _ => false,
    }
}

/// A new unique index's check: the keys of versions that are live or may yet be must
/// differ (23505 naming the index). Made on the built index, whose entries come in key
/// order, so it holds one key at a time however big the table: equal under the btree's
/// order, not bytewise (1.0 and 1.00, '1 mon' and '30 days' are duplicates); keys with a
/// NULL never conflict. Only the versions of a key met more than once are looked up in
/// the heap, and only when the scan met a dead version (`dead`).
fn check_unique(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    dead: bool,
) -> PgResult<()> {
    let n = index.columns.len();
    let live = |tid: ItemPointer| -> PgResult<bool> {
        if !dead {
            return Ok(true);
        }
        Ok(crate::index::chain_liveness(cx, table, tid)? != Liveness::Dead)
    };
    // The key met last, its first version, whether that one is live (once a second
    // version of the key asks), and the live versions of the key counted.
    let mut group: Option<(RowKey, ItemPointer, Option<bool>)> = None;
    let mut lives = 0;
    let scan = btree(cx, index).scan(
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        access::nbtree::ScanDirection::Forward,
    )?;
    for item in scan {
        cx.tx.check_for_interrupts()?;
        let (mut entry, tid) = item?;
        entry.truncate(n);
        if entry.iter().any(Value::is_null) {
            group = None;
            continue;
        }
        let key = RowKey(entry);
        match &mut group {
            Some((k, first, first_live)) if *k == key => {
                if first_live.is_none() {
                    let l = live(*first)?;
                    *first_live = Some(l);
                    lives += usize::from(l);
                }
                lives += usize::from(live(tid)?);
                if lives > 1 {
                    return Err(PgError::new(
                        SqlState::UNIQUE_VIOLATION,
                        format!("could not create unique index \"{}\"", index.name),
                    )
                    .with_detail(format!(
                        "{} is duplicated.",
                        key_text(cx.session, table, index, &key.0)
                    )));
                }
            }
            _ => {
                group = Some((key, tid, None));
                lives = 0;
            }
        }
    }
    Ok(())
}

/// CREATE INDEX: read the table, check uniqueness, then record the index in the catalog,
/// create its file and bulk-build it (one sorted pass, not row-by-row inserts).
pub(crate) fn create_index(
    cx: &ExecContext,
    table: &TableDesc,
    new: NewIndex,
    bound: &BoundIndexExprs,
) -> PgResult<()> {
    let name = match &new.name {
        Some(n) => n.clone(),
        None => cx.catalog.choose_index_name(cx.tx, table, &new),
    };
    if table.partition_key.is_some() {
        // A partitioned index: no storage of its own, one index on each partition
        // (their columns are its table's: partition rule 1), named after the partition.
        let parent = cx.catalog.create_index(
            cx.tx,
            table.oid,
            NewIndex {
                name: Some(name),
                ..new.clone()
            },
            |_| Ok(()),
        )?;
        for p in partitions_of(cx, table) {
            let child = NewIndex {
                name: None,
                parent: Some(parent.oid),
                ..new.clone()
            };
            create_index(cx, &p, child, bound)?;
        }
        return Ok(());
    }
    let probe = IndexDesc {
        check_xmin: 0,
        oid: 0,
        rel: 0,
        name: name.clone(),
        columns: new.columns.clone(),
        unique: new.unique,
        primary: false,
        constraint: false,
        order: new.order,
        include: new.include.clone(),
        predicate: new.predicate.clone(),
        exprs: new.exprs.clone(),
        parent: new.parent,
    };
    let entries = index_entries(cx, table, &probe, Some(bound), false)?;
    let check_xmin = entries.check_xmin(cx)?;
    cx.catalog.create_index(
        cx.tx,
        table.oid,
        NewIndex {
            name: Some(name),
            check_xmin,
            ..new
        },
        |index| build_index(cx, table, index, entries),
    )?;
    Ok(())
}

/// ALTER TABLE ADD PRIMARY KEY | UNIQUE: as CREATE UNIQUE INDEX, and a primary key's
/// columns must hold no NULL (they become NOT NULL with it, in one catalog change).
pub(crate) fn add_key(cx: &ExecContext, table: &TableDesc, key: NewKey) -> PgResult<()> {
    let name = match &key.name {
        Some(n) => n.clone(),
        None => cx.catalog.choose_key_name(cx.tx, table, &key),
    };
    if table.partition_key.is_some() {
        // As CREATE INDEX on a partitioned table: the key's index has no storage, each
        // partition gets its own key, and each is unique across the partitions because
        // it holds the partition key (checked when bound).
        let parent = cx.catalog.add_key(
            cx.tx,
            table.oid,
            NewKey {
                name: Some(name),
                ..key.clone()
            },
            |_| Ok(()),
        )?;
        for p in partitions_of(cx, table) {
            let child = NewKey {
                name: None,
                parent: Some(parent.oid),
                ..key.clone()
            };
            add_key(cx, &p, child)?;
        }
        return Ok(());
    }
    let probe = IndexDesc {
        oid: 0,
        rel: 0,
        name: name.clone(),
        columns: key.columns.clone(),
        unique: true,
        primary: key.primary,
        constraint: true,
        ..IndexDesc::default()
    };
    let entries = index_entries(cx, table, &probe, None, key.primary)?;
    let check_xmin = entries.check_xmin(cx)?;
    cx.catalog.add_key(
        cx.tx,
        table.oid,
        NewKey {
            name: Some(name),
            check_xmin,
            ..key
        },
        |index| build_index(cx, table, index, entries),
    )?;
    Ok(())
}

/// The partitions directly below partitioned table `table`, in bound order, as the
/// catalog stands now in this transaction (the caller locks them with it).
fn partitions_of(cx: &ExecContext, table: &TableDesc) -> Vec<std::sync::Arc<TableDesc>> {
    let now = cx.catalog.snapshot(cx.tx);
    now.partitions(table.oid)
        .map(|p| p.all())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|oid| now.table_by_oid(oid).cloned())
        .collect()
}

/// The indexes a new partition of `parent` gets besides its keys (which come with it
/// in its `CREATE TABLE`): one for each of the parent's other indexes.
pub(crate) fn inherit_indexes(
    cx: &ExecContext,
    parent: &TableDesc,
    partition: &TableDesc,
) -> PgResult<()> {
    let plain: Vec<&IndexDesc> = parent.indexes.iter().filter(|i| !i.constraint).collect();
    if plain.is_empty() {
        return Ok(());
    }
    let bound = sql::binder::bind_index_exprs(&cx.session.catalog, parent, cx.session.info)?;
    for index in plain {
        let exprs = bound
            .iter()
            .find(|b| b.index == index.oid)
            .cloned()
            .unwrap_or(BoundIndexExprs {
                index: 0,
                predicate: None,
                keys: Vec::new(),
            });
        let new = NewIndex {
            check_xmin: 0,
            parent: Some(index.oid),
            name: None,
            columns: index.columns.clone(),
            unique: index.unique,
            order: index.order,
            include: index.include.clone(),
            predicate: index.predicate.clone(),
            exprs: index.exprs.clone(),
        };
        create_index(cx, partition, new, &exprs)?;
    }
    Ok(())
}

/// An index's entries as the table's scan made them, in memory up to half of
/// `maintenance_work_mem` and the rest in a temporary file; the build's sort may hold
/// the other half before it writes sorted runs.
struct Entries {
    store: crate::spill::RowStore,
    /// Half of `maintenance_work_mem`, in bytes.
    memory: usize,
    /// Some entry is of a dead version (looked at for unique indexes and primary keys).
    dead: bool,
    /// Some HOT chain is broken for the index ([`PageChains`]).
    broken_chains: bool,
}

impl Entries {
    fn new(cx: &ExecContext) -> Entries {
        let memory = (cx.session.settings.planner().maintenance_work_mem * 1024.0 / 2.0) as usize;
        Entries {
            store: crate::spill::RowStore::new(
                memory,
                cx.pool.smgr().temp().clone(),
                Some(cx.session.temp.clone()),
            ),
            memory,
            dead: false,
            broken_chains: false,
        }
    }

    /// The index's `check_xmin`: this transaction's id where a HOT chain is broken for
    /// it (snapshots that old may see versions it does not hold), else 0.
    fn check_xmin(&self, cx: &ExecContext) -> PgResult<u64> {
        Ok(if self.broken_chains { cx.tx.xid()? } else { 0 })
    }

    /// Keep `entry` for the heap tuple at `tid` (its address after its values).
    fn push(&mut self, mut entry: Vec<Value>, tid: ItemPointer) -> PgResult<()> {
        entry.push(Value::Int8(
            (i64::from(tid.block) << 16) | i64::from(tid.offset),
        ));
        let bytes = crate::env::row_bytes(&entry);
        self.store.push(entry, bytes)
    }

    /// The entries in the order they were kept.
    fn drain(self) -> impl Iterator<Item = PgResult<(Vec<Value>, ItemPointer)>> {
        self.store.drain().map(|row| {
            let mut row = row?;
            let Some(Value::Int8(at)) = row.pop() else {
                return Err(PgError::internal("an index entry without its address"));
            };
            let tid = ItemPointer {
                block: (at >> 16) as u32,
                offset: (at & 0xffff) as u16,
            };
            Ok((row, tid))
        })
    }
}

fn build_index(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    entries: Entries,
) -> PgResult<()> {
    let dead = entries.dead;
    cx.pool.create_relation(index.rel)?;
    let spill = access::nbtree::SortSpill {
        space: cx.pool.smgr().temp(),
        budget: Some(cx.session.temp),
        memory: entries.memory,
    };
    btree(cx, index).build_spilling(
        index.columns.len() + index.include.len(),
        entries.drain(),
        Some(spill),
    )?;
    if index.unique {
        check_unique(cx, table, index, dead)?;
    }
    Ok(())
}

/// Create a new table's file and the (empty) btrees of its constraint indexes. Their WAL
/// records precede the catalog's, which is flushed: all are durable together.
pub(crate) fn create_table_storage(cx: &ExecContext, table: &TableDesc) -> PgResult<()> {
    cx.pool.create_relation(table.rel)?;
    for index in &table.indexes {
        cx.pool.create_relation(index.rel)?;
        btree(cx, index).create(index.columns.len() + index.include.len())?;
    }
    Ok(())
}
