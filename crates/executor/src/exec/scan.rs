//! Sequential and index scans of a table (Seq Scan, Index Scan), and the index bounds
//! evaluated when a scan starts.

#[allow(unused_imports)]
use super::*;

/// A heap scan that decodes the rows the snapshot sees; yields each with its address.
pub struct TableScan<'a> {
    pub(crate) scan: HeapScan<'a>,
    pub(crate) types: Vec<DataType>,
    pub(crate) tx: &'a txn::Tx,
    /// Where values stored out of line are read from (access rule 12).
    pub(crate) pool: &'a storage::BufferPool,
    /// The columns decoded (the plan's `columns`); the others read NULL.
    pub(crate) wanted: Option<planner::ColumnSet>,
    /// The columns whose stored size follows each row's values (`TableDesc::stored_sizes`).
    pub(crate) sizes: Vec<u16>,
}

/// A table's heap tuple as a row of its scan: the `wanted` columns of the tuple's `types`
/// decoded (the others NULL; values out of line read through `pool`), then the stored
/// size of each column of `sizes` (`pg_column_size`: `TableDesc::stored_sizes`, access
/// rule 12).
pub(crate) fn decode_row(
    bytes: &[u8],
    types: &[DataType],
    wanted: Option<&[bool]>,
    pool: &storage::BufferPool,
    sizes: &[u16],
) -> PgResult<Row> {
    // A plan's column set also covers the sizes after the tuple's own columns.
    let wanted = wanted.map(|w| &w[..w.len().min(types.len())]);
    let mut row = access::tuple::decode_columns(bytes, types, wanted, Some(pool))?;
    if !sizes.is_empty() {
        row.extend(access::tuple::column_sizes(bytes, types, sizes)?);
    }
    Ok(row)
}

impl<'a> TableScan<'a> {
    pub fn new(env: Env<'a>, rel: common::RelId, types: Vec<DataType>) -> PgResult<TableScan<'a>> {
        Ok(TableScan {
            scan: HeapScan::visible(env.pool, rel, env.snapshot, env.tx)?,
            types,
            tx: env.tx,
            pool: env.pool,
            wanted: None,
            sizes: Vec::new(),
        })
    }

    /// Decode only the columns `wanted` marks (all when `None`).
    pub fn reading(self, wanted: Option<planner::ColumnSet>) -> TableScan<'a> {
        TableScan { wanted, ..self }
    }

    /// Follow each row's values with the stored size of each of these columns.
    pub fn sizing(self, sizes: &[u16]) -> TableScan<'a> {
        TableScan {
            sizes: sizes.to_vec(),
            ..self
        }
    }

    /// The next row `keep` takes (none at the end), with the count of rows it refused
    /// before it. With
    /// `first` (the columns `keep` reads), each row is decoded first to those columns
    /// alone and in full only if `keep` takes it: a selective filter over a page of many
    /// versions (pgbench's tellers) decodes one column of each.
    pub fn next_kept(
        &mut self,
        first: Option<&[bool]>,
        mut keep: impl FnMut(&Row) -> PgResult<bool>,
    ) -> PgResult<(Option<(ItemPointer, Row)>, u64)> {
        let mut refused = 0;
        loop {
            self.tx.check_for_interrupts()?;
            let Some(r) = self.scan.next_ref() else {
                return Ok((None, refused));
            };
            let (tid, bytes) = r?;
            let wanted = self.wanted.as_deref();
            let row = match first {
                Some(first) => {
                    let part = access::tuple::decode_columns(
                        bytes,
                        &self.types,
                        Some(first),
                        Some(self.pool),
                    )?;
                    if !keep(&part)? {
                        refused += 1;
                        continue;
                    }
                    decode_row(bytes, &self.types, wanted, self.pool, &self.sizes)?
                }
                None => {
                    let row = decode_row(bytes, &self.types, wanted, self.pool, &self.sizes)?;
                    if !keep(&row)? {
                        refused += 1;
                        continue;
                    }
                    row
                }
            };
            return Ok((Some((tid, row)), refused));
        }
    }

    pub fn next_row(&mut self) -> PgResult<Option<(ItemPointer, Row)>> {
        self.tx.check_for_interrupts()?;
        match self.scan.next_ref() {
            None => Ok(None),
            Some(r) => {
                let (tid, bytes) = r?;
                let wanted = self.wanted.as_deref();
                Ok(Some((
                    tid,
                    decode_row(bytes, &self.types, wanted, self.pool, &self.sizes)?,
                )))
            }
        }
    }
}

/// Evaluate an index scan's bound: `None` when no row can be in range (a NULL key, or
/// an equality key outside the column's type). A key may be of a wider integer type than
/// its smallint or integer column (`int4_col = $1::bigint`, as sysbench binds): its value
/// is narrowed to the column's type here, at run time, so that a plan made with the
/// parameter in place keeps the index. A last key value beyond the column's range on the
/// side this bound limits (`a > 10^10` as a lower bound) admits no row; on the other side
/// (`a > -10^10`) it limits nothing and the bound is the equality prefix before it.
pub(crate) fn bound_values(
    env: &Env,
    b: &Bound<Vec<Expr>>,
    upper: bool,
    table: &catalog::TableDesc,
    index: &catalog::IndexDesc,
) -> PgResult<Option<Bound<Vec<Value>>>> {
    let (exprs, included) = match b {
        Bound::Unbounded => return Ok(Some(Bound::Unbounded)),
        Bound::Included(k) => (k, true),
        Bound::Excluded(k) => (k, false),
    };
    let mut key = Vec::with_capacity(exprs.len());
    for (i, e) in exprs.iter().enumerate() {
        // IS NOT NULL's bound is the key NULL itself (where the column's NULLs start).
        if planner::is_null_key(e) {
            key.push(Value::Null);
            continue;
        }
        let v = env.eval(e, &[])?;
        if v.is_null() {
            return Ok(None);
        }
        // An expression key is bounded by values of its own type (the planner's match).
        let ty = match table.columns.get(index.columns[i]) {
            Some(c) => c.ty.without_typmod(),
            None => e.ty,
        };
        match narrow_key(v, e.ty, ty) {
            Ok(v) => key.push(v),
            // Past the end the bound moves toward: nothing is in range.
            Err(above) if above != upper => return Ok(None),
            // Past the other end, as the range condition: no limit at all.
            Err(_) if i + 1 == exprs.len() => {
                return Ok(Some(if key.is_empty() {
                    Bound::Unbounded
                } else {
                    Bound::Included(key)
                }));
            }
            // An equality no value of the column meets.
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(if included {
        Bound::Included(key)
    } else {
        Bound::Excluded(key)
    }))
}

/// A key value of type `from` as a value of its index column's type `to`: the same value
/// unless `from` is a wider integer type (the planner's `widened_integer_column`), which
/// is narrowed; `Err(true)` if it is above `to`'s range, `Err(false)` if below.
pub(crate) fn narrow_key(v: Value, from: DataType, to: DataType) -> Result<Value, bool> {
    if from == to || !matches!(from, DataType::Int4 | DataType::Int8) {
        return Ok(v);
    }
    let Some(n) = v.as_i64() else {
        return Ok(v);
    };
    let (min, max) = match to {
        DataType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        DataType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => return Ok(v),
    };
    if n > max {
        return Err(true);
    }
    if n < min {
        return Err(false);
    }
    Ok(match to {
        DataType::Int2 => Value::Int2(n as i16),
        _ => Value::Int4(n as i32),
    })
}

pub(crate) struct IndexScanOp<'a> {
    pub(crate) env: Env<'a>,
    /// The table's storage and oid.
    pub(crate) rel: (common::RelId, common::Oid),
    pub(crate) types: Vec<DataType>,
    pub(crate) scan: Option<BTreeScan<'a>>,
    pub(crate) filter: Option<&'a Expr>,
    pub(crate) removed: u64,
    /// The columns decoded (the plan's `columns`); the others read NULL.
    pub(crate) wanted: Option<&'a [bool]>,
    /// The columns whose stored size follows each row's values (`TableDesc::stored_sizes`).
    pub(crate) sizes: &'a [u16],
    /// The index, with the entries it returned and the live rows they led to, counted
    /// for `pg_stat_user_indexes` when the scan ends (txn rule 10).
    pub(crate) counted: (common::Oid, u64, u64),
    /// An index-only scan's state (planner rule 20).
    pub(crate) only: Option<IndexOnly<'a>>,
}

/// An index-only scan: rows made from the index's entries, the heap read only for
/// entries on pages the visibility map does not say are all-visible (access rule 9).
pub(crate) struct IndexOnly<'a> {
    /// The table column each value of an entry is (key, then INCLUDE columns);
    /// `usize::MAX` for an expression's value, which no column is.
    stored: Vec<usize>,
    width: usize,
    map: access::visibilitymap::Reader<'a>,
    /// Entries whose heap tuple was read (EXPLAIN ANALYZE's `Heap Fetches`).
    pub(crate) heap_fetches: u64,
}

impl<'a> IndexOnly<'a> {
    pub(crate) fn new(
        env: Env<'a>,
        table: &catalog::TableDesc,
        index: &catalog::IndexDesc,
    ) -> IndexOnly<'a> {
        let width = table.columns.len();
        IndexOnly {
            stored: index
                .stored_columns()
                .map(|c| if c < width { c } else { usize::MAX })
                .collect(),
            width,
            map: access::visibilitymap::Reader::new(env.pool, table.rel),
            heap_fetches: 0,
        }
    }

    /// The row an entry stands for, if the scan's snapshot sees it: its stored columns
    /// from the entry, the others NULL; and the address of the version seen, where the
    /// page was read (else the entry's).
    fn row(
        &mut self,
        env: &Env,
        rel: common::RelId,
        values: Vec<Value>,
        tid: ItemPointer,
    ) -> PgResult<Option<(Row, ItemPointer)>> {
        let mut at = tid;
        let all_visible = self.map.get(tid.block)? & access::visibilitymap::ALL_VISIBLE != 0;
        // A statement that writes the row needs its version's own address: the entry
        // names its HOT chain's root (access rule 11).
        if !all_visible || env.emit_tid {
            self.heap_fetches += u64::from(!all_visible);
            let seen = heapam::heap_hot_search(env.pool, rel, tid, env.tx, |at, _, h| {
                Ok(access::visibility::visible(h, env.snapshot, env.tx)?.then_some(at))
            })?;
            match seen {
                Some(t) => at = t,
                None => return Ok(None),
            }
        }
        let mut row = vec![Value::Null; self.width];
        for (v, &c) in values.into_iter().zip(&self.stored) {
            if let Some(slot) = row.get_mut(c) {
                *slot = v;
            }
        }
        Ok(Some((row, at)))
    }
}

impl Drop for IndexScanOp<'_> {
    fn drop(&mut self) {
        if self.scan.is_some() {
            let (index, read, fetched) = self.counted;
            self.env.tx.counted().scan(index, read, fetched);
        }
    }
}

impl Operator for IndexScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let Some(scan) = self.scan.as_mut() else {
            return Ok(None);
        };
        for entry in scan.by_ref() {
            let (values, tid) = entry?;
            let env = self.env;
            env.tx.check_for_interrupts()?;
            self.counted.1 += 1;
            let row = match self.only.as_mut() {
                Some(only) => {
                    let fetches = only.heap_fetches;
                    let Some((mut row, at)) = only.row(&env, self.rel.0, values, tid)? else {
                        continue;
                    };
                    // A row read from the heap counts as fetched (PostgreSQL's).
                    self.counted.2 += only.heap_fetches - fetches;
                    if env.emit_tid {
                        crate::exec::lock_rows::push_address(&mut row, at, self.rel.1);
                    }
                    row
                }
                None => {
                    let shape = (&self.types[..], self.wanted, self.sizes);
                    let Some(row) = fetch_row(&env, self.rel, tid, true, shape)? else {
                        continue;
                    };
                    self.counted.2 += 1;
                    row
                }
            };
            match self.filter {
                Some(f) if !env.eval(f, &row)?.is_true() => self.removed += 1,
                _ => return Ok(Some(row)),
            }
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }

    fn heap_fetches(&self) -> Option<u64> {
        self.only.as_ref().map(|o| o.heap_fetches)
    }
}

/// The row version the statement's snapshot sees at `tid` of `rel`: with `chain`, the
/// one of the HOT chain an index entry's `tid` leads to (access rule 11), else the tuple
/// at `tid` itself (a lossy bitmap page's offsets, each read on its own). Decoded (the
/// `wanted` columns of the tuple's `types`; the others NULL; then the stored `sizes`:
/// [`decode_row`]), its own address after it where the statement needs it (UPDATE,
/// DELETE, FOR UPDATE). What index and bitmap heap scans return for an address.
pub(crate) fn fetch_row(
    env: &Env,
    (rel, oid): (common::RelId, common::Oid),
    tid: ItemPointer,
    chain: bool,
    (types, wanted, sizes): (&[DataType], Option<&[bool]>, &[u16]),
) -> PgResult<Option<Row>> {
    let found = if chain {
        heapam::heap_hot_fetch(env.pool, rel, tid, env.snapshot, env.tx)?
    } else {
        heapam::heap_fetch_visible(env.pool, rel, tid, env.snapshot, env.tx)?.map(|b| (tid, b))
    };
    let Some((tid, bytes)) = found else {
        return Ok(None);
    };
    let mut row = decode_row(&bytes, types, wanted, env.pool, sizes)?;
    if env.emit_tid {
        crate::exec::lock_rows::push_address(&mut row, tid, oid);
    }
    Ok(Some(row))
}

pub(crate) struct SeqScanOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) scan: TableScan<'a>,
    pub(crate) filter: Option<&'a Expr>,
    /// The table's oid, when each row's address is wanted (`Env::emit_tid`).
    pub(crate) emit_tid: Option<common::Oid>,
    pub(crate) removed: u64,
    /// Columns only the filter reads: NULL once a row has passed it.
    pub(crate) dropped: Vec<usize>,
    /// The columns the filter reads, where the scan decodes more: each row is decoded to
    /// these first ([`TableScan::next_kept`]).
    pub(crate) filter_first: Option<Vec<bool>>,
    /// The table, with the rows the scan returned, counted for `pg_stat_user_tables`
    /// when the scan ends (txn rule 10).
    pub(crate) counted: (common::Oid, u64),
}

impl Drop for SeqScanOp<'_> {
    fn drop(&mut self) {
        let (table, read) = self.counted;
        self.env.tx.counted().scan(table, read, 0);
    }
}

impl Operator for SeqScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let (env, filter) = (self.env, self.filter);
        let keep = |row: &Row| match filter {
            Some(f) => Ok(env.eval(f, row)?.is_true()),
            None => Ok(true),
        };
        let (found, refused) = self.scan.next_kept(self.filter_first.as_deref(), keep)?;
        self.counted.1 += refused;
        self.removed += refused;
        let Some((tid, mut row)) = found else {
            return Ok(None);
        };
        self.counted.1 += 1;
        for &i in &self.dropped {
            row[i] = Value::Null;
        }
        if let Some(oid) = self.emit_tid {
            crate::exec::lock_rows::push_address(&mut row, tid, oid);
        }
        Ok(Some(row))
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}
