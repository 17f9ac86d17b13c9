//! ANALYZE: sample a table's rows and compute, per column, what the planner estimates
//! from (PostgreSQL's `pg_statistic`, shown by `pg_stats`).
//!
//! Sampling is PostgreSQL's two stages. With a target of `t` (the largest statistics
//! target of the analyzed columns) ANALYZE wants `300 t` rows: it reads at most `300 t`
//! pages, chosen uniformly at random (Knuth's selection sampling, in block order), and
//! keeps a uniform random sample of at most `300 t` of the live rows on them (reservoir
//! sampling), in physical order. A table of at most `300 t` pages is read whole; one of at
//! most `300 t` live rows is then sampled whole, and every statistic below is exactly
//! PostgreSQL's (`compute_scalar_stats` in its `analyze.c`).
//!
//! Per column, from the `n` sampled rows of an estimated `N`:
//! - `null_frac`: NULLs over `n`; `avg_width`: the average stored size of the others;
//! - `n_distinct`: the distinct values if every one of them was seen more than once (or
//!   the whole table was read), else the Haas–Stokes estimate `n d / (n - f1 + f1 n / N)`
//!   (`d` distinct values, `f1` of them seen once); stored negated as a fraction of the
//!   rows when above a tenth of them (it then scales with the table);
//! - most common values: up to `t` values seen more than once, most frequent first, kept
//!   whole when they are all the values there are, else cut where a value is no longer
//!   significantly more common than the rest would be on average (PostgreSQL's
//!   `analyze_mcv_list`: two standard errors of its hypergeometric count);
//! - histogram: `t + 1` bounds evenly spaced over the sorted values outside the most
//!   common list, when there are at least two such distinct values;
//! - correlation: between the values' sorted order and the rows' physical order.
//!
//! Values wider than [`WIDTH_THRESHOLD`] bytes count toward `null_frac` and `avg_width`
//! only (as PostgreSQL's "too wide" values). Statistics of array elements
//! (`most_common_elems`) are not computed.

use std::cmp::Ordering;

use access::visibility;
use catalog::{ColumnStats, RelStats, TableDesc};
use common::{DataType, PgResult, Value};
use rand::Rng;
use storage::BufferPool;
use storage::page::Page;

/// PostgreSQL's `default_statistics_target`.
pub const DEFAULT_STATISTICS_TARGET: u32 = 100;

/// Rows sampled per unit of statistics target (PostgreSQL's choice, from a bound on the
/// histogram's error: 300 rows per bin).
pub const ROWS_PER_TARGET: u64 = 300;

/// Values wider than this many bytes are left out of the most common values, the
/// histogram and the distinct count (PostgreSQL's `WIDTH_THRESHOLD`).
pub const WIDTH_THRESHOLD: usize = 1024;

/// What one ANALYZE of a table found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalyzeStats {
    /// The table's size in pages.
    pub pages: u64,
    /// Pages read (all of them, or a random sample of a large table).
    pub pages_scanned: u64,
    /// Live and dead row versions on the pages read.
    pub live_rows: u64,
    pub dead_rows: u64,
    /// Live rows in the whole table, extrapolated from the pages read
    /// (PostgreSQL's `reltuples`).
    pub estimated_rows: f64,
    /// Rows in the sample the column statistics were computed from.
    pub sample_rows: u64,
    /// What the catalog keeps of it (`pg_class` and `pg_statistic`).
    pub rel: RelStats,
}

/// ANALYZE one table: sample its pages and rows, count live and dead row versions, and
/// compute statistics for each column whose target (`targets[i]`, by column position; 0
/// for none, as for a dropped column) is not 0, in transaction `tx` (its own inserts
/// count as rows, as PostgreSQL counts them; its checks for interrupts stop it). Reads
/// copies of the pages; takes no latch while deciding.
pub fn analyze_table(
    pool: &BufferPool,
    tx: &txn::Tx,
    table: &TableDesc,
    targets: &[u32],
) -> PgResult<AnalyzeStats> {
    let targrows = sample_size(targets);
    let (mut stats, rows) = sample_rows(pool, tx, table, targrows, targets_any(targets))?;
    stats.sample_rows = rows.len() as u64;
    let relpages = u32::try_from(stats.pages).unwrap_or(u32::MAX);
    stats.rel = RelStats {
        reltuples: stats.estimated_rows,
        relpages,
        // As PostgreSQL's ANALYZE, from the visibility map (one map page per 32,672
        // heap pages).
        relallvisible: access::visibilitymap::count(pool, table.rel, relpages)?.0,
        // ANALYZE reads no tuple's ids: the caller keeps what VACUUM found.
        frozen_xid: 0,
        columns: columns_of(table, targets, &rows, stats.estimated_rows).into(),
    };
    Ok(stats)
}

/// ANALYZE of partitioned table `parent`: statistics of the parent as a whole, from a
/// sample of its leaf partitions' rows, each giving its share of the sample by its
/// pages (PostgreSQL's `acquire_inherited_sample_rows`). A partitioned table has no
/// pages of its own: `relpages` 0, `reltuples` its partitions' rows.
pub fn analyze_partitioned(
    pool: &BufferPool,
    tx: &txn::Tx,
    parent: &TableDesc,
    leaves: &[std::sync::Arc<TableDesc>],
    targets: &[u32],
) -> PgResult<AnalyzeStats> {
    let targrows = sample_size(targets);
    let pages: Vec<u64> = leaves
        .iter()
        .map(|l| pool.smgr().nblocks(l.rel).map(u64::from))
        .collect::<PgResult<_>>()?;
    let total_pages: u64 = pages.iter().sum();
    let mut stats = AnalyzeStats::default();
    let mut rows = Vec::new();
    for (leaf, &n) in leaves.iter().zip(&pages) {
        if n == 0 {
            continue;
        }
        let share = ((targrows as f64 * n as f64 / total_pages as f64).round() as u64).max(1);
        let (s, r) = sample_rows(pool, tx, leaf, share, targets_any(targets))?;
        stats.pages += s.pages;
        stats.pages_scanned += s.pages_scanned;
        stats.live_rows += s.live_rows;
        stats.dead_rows += s.dead_rows;
        stats.estimated_rows += s.estimated_rows;
        rows.extend(r);
    }
    stats.sample_rows = rows.len() as u64;
    stats.rel = RelStats {
        reltuples: stats.estimated_rows,
        relpages: 0,
        relallvisible: 0,
        frozen_xid: 0,
        columns: columns_of(parent, targets, &rows, stats.estimated_rows).into(),
    };
    Ok(stats)
}

/// A sampled row, with its address, and its values too wide to read: (column, the
/// bytes it takes in the tuple), each NULL in the row.
type SampledRow = (common::ItemPointer, access::tuple::Sampled);

/// Rows to sample for the largest of `targets` (the default target's when none is set:
/// pages are still sampled, and rows counted).
fn sample_size(targets: &[u32]) -> u64 {
    let max_target = targets.iter().copied().max().unwrap_or(0);
    ROWS_PER_TARGET
        * u64::from(if max_target == 0 {
            DEFAULT_STATISTICS_TARGET
        } else {
            max_target
        })
}

fn targets_any(targets: &[u32]) -> bool {
    targets.iter().any(|&t| t > 0)
}

/// Each analyzed column's statistics over the sample `rows`.
fn columns_of(
    table: &TableDesc,
    targets: &[u32],
    rows: &[SampledRow],
    estimated_rows: f64,
) -> Vec<ColumnStats> {
    let mut columns = Vec::new();
    if rows.is_empty() {
        return columns;
    }
    for (i, (col, &target)) in table.columns.iter().zip(targets).enumerate() {
        if target == 0 || col.dropped {
            continue;
        }
        let is_wide = |wide: &[(usize, usize)]| wide.iter().any(|&(c, _)| c == i);
        let values = rows
            .iter()
            .filter(|(_, (_, wide))| !is_wide(wide))
            .map(|(_, (r, _))| r.get(i).unwrap_or(&Value::Null));
        let wide: Vec<usize> = rows
            .iter()
            .flat_map(|(_, (_, wide))| wide.iter().filter(|&&(c, _)| c == i).map(|&(_, w)| w))
            .collect();
        columns.push(column_stats(
            (i + 1) as u16,
            &col.ty,
            target,
            values,
            &wide,
            estimated_rows,
        ));
    }
    columns
}

/// Sample about `targrows` rows of `table` (none unless `want_rows`) from a sample of its
/// pages, counting its live and dead row versions there.
fn sample_rows(
    pool: &BufferPool,
    tx: &txn::Tx,
    table: &TableDesc,
    targrows: u64,
    want_rows: bool,
) -> PgResult<(AnalyzeStats, Vec<SampledRow>)> {
    let nblocks = pool.smgr().nblocks(table.rel)? as u64;
    let (mgr, mine) = (tx.manager(), |x| tx.is_mine(x));
    let mut rng = rand::rng();
    let blocks = sample_blocks(nblocks, targrows, &mut rng);
    let mut stats = AnalyzeStats {
        pages: nblocks,
        pages_scanned: blocks.len() as u64,
        ..Default::default()
    };
    let types: Vec<DataType> = table.columns.iter().map(|c| c.ty).collect();
    let mut reservoir = Reservoir::new(targrows as usize);
    let mut copy = Box::new([0u8; common::limits::BLCKSZ]);
    for &block in &blocks {
        // A clock read per page is nothing beside the page's work.
        tx.check_statement_timeout()?;
        copy.copy_from_slice(&pool.read_buffer(table.rel, block)?.read()[..]);
        let page = Page::new(&copy);
        if page.is_new() {
            continue;
        }
        for off in 1..=page.max_offset() {
            let Some(item) = page.get_item(off) else {
                continue;
            };
            // PostgreSQL's acquire_sample_rows: this transaction's own inserts are rows
            // (and its own deletes are not); another's insert in progress is not yet
            // a row, another's delete in progress still is.
            let live = match visibility::census(&access::tuple::header(item)?, mgr)? {
                visibility::Census::Live => Some(true),
                visibility::Census::Dead => Some(false),
                visibility::Census::InsertInProgress { xmin, deleter } => {
                    mine(xmin).then(|| !deleter.is_some_and(mine))
                }
                visibility::Census::DeleteInProgress(xmax) => Some(!mine(xmax)),
            };
            match live {
                Some(true) => {
                    stats.live_rows += 1;
                    if want_rows && let Some(slot) = reservoir.offer(&mut rng) {
                        let tid = common::ItemPointer { block, offset: off };
                        // Values too wide for statistics are not read (access rule 12).
                        let row = access::tuple::decode_sample(item, &types, pool, WIDTH_THRESHOLD)
                            .map_err(|e| {
                                let place = format!(
                                    "tuple ({},{}) of relation {}",
                                    tid.block,
                                    tid.offset,
                                    storage::smgr::relpath(table.rel)
                                );
                                let detail = e
                                    .detail
                                    .clone()
                                    .map_or(place.clone(), |d| format!("{place}: {d}"));
                                e.with_detail(detail)
                            })?;
                        reservoir.put(slot, (tid, row));
                    }
                }
                Some(false) => stats.dead_rows += 1,
                None => {}
            }
        }
    }
    stats.estimated_rows = if blocks.is_empty() {
        0.0
    } else {
        (stats.live_rows as f64 / blocks.len() as f64 * nblocks as f64 + 0.5).floor()
    };
    Ok((stats, reservoir.into_rows()))
}

/// `k` of the blocks `0..n` (all if `n <= k`), each set of `k` equally likely, in
/// increasing order: Knuth's Algorithm S (selection sampling), one pass.
fn sample_blocks(n: u64, k: u64, rng: &mut impl Rng) -> Vec<u32> {
    if n <= k {
        return (0..n as u32).collect();
    }
    let mut out = Vec::with_capacity(k as usize);
    let mut needed = k;
    for b in 0..n {
        if needed == 0 {
            break;
        }
        // Take block b with probability needed / (blocks left).
        if rng.random_range(0..n - b) < needed {
            out.push(b as u32);
            needed -= 1;
        }
    }
    out
}

/// A uniform random sample of at most `cap` of the rows offered (Algorithm R), given
/// back in physical order.
struct Reservoir {
    cap: usize,
    seen: u64,
    rows: Vec<SampledRow>,
    /// Some row replaced an earlier one: the rows are no longer in physical order.
    replaced: bool,
}

impl Reservoir {
    fn new(cap: usize) -> Reservoir {
        Reservoir {
            cap,
            seen: 0,
            rows: Vec::new(),
            replaced: false,
        }
    }

    /// Offer the next row: the slot it goes to, if it is kept (decode it only then).
    fn offer(&mut self, rng: &mut impl Rng) -> Option<usize> {
        self.seen += 1;
        if self.rows.len() < self.cap {
            return Some(self.rows.len());
        }
        let r = rng.random_range(0..self.seen);
        (r < self.cap as u64).then_some(r as usize)
    }

    fn put(&mut self, slot: usize, row: SampledRow) {
        if slot == self.rows.len() {
            self.rows.push(row);
        } else {
            self.rows[slot] = row;
            self.replaced = true;
        }
    }

    fn into_rows(mut self) -> Vec<SampledRow> {
        if self.replaced {
            self.rows.sort_by_key(|(tid, _)| (tid.block, tid.offset));
        }
        self.rows
    }
}

/// Bytes `v` takes stored in a row as PostgreSQL stores it: a fixed-width type's length;
/// a variable-width value's data with a 1-byte length word when that makes at most 127
/// bytes, else a 4-byte one (PostgreSQL's short varlena headers). A value stored
/// compressed or out of line and too wide to read counts its stored bytes instead
/// (`decode_sample`).
fn stored_width(v: &Value, ty: &DataType) -> usize {
    let typlen = ty.typlen();
    if typlen > 0 {
        return typlen as usize;
    }
    varlena(data_size(v))
}

fn varlena(data: usize) -> usize {
    if data < 127 { data + 1 } else { data + 4 }
}

/// A variable-width value's bytes without its length word, in PostgreSQL's form.
fn data_size(v: &Value) -> usize {
    match v {
        Value::Text(s) | Value::Bpchar(s) => s.len(),
        Value::Bytea(b) => b.len(),
        Value::Numeric(n) => n.pg_data_size(),
        Value::Array(a) => {
            // Header: length word, dimensions, data offset and element type, then each
            // dimension's length and lower bound, then a null bitmap if any; padded to 8.
            let has_null = a.items.iter().any(Value::is_null);
            let mut size = 16 + 8 * a.dims.len();
            if has_null {
                size += a.items.len().div_ceil(8);
            }
            size = size.next_multiple_of(8);
            for item in a.items.iter().filter(|v| !v.is_null()) {
                let (len, align) = element_size(item);
                size = size.next_multiple_of(align) + len;
            }
            size - 4
        }
        _ => 0,
    }
}

/// An array element's size and alignment (elements keep 4-byte length words).
fn element_size(v: &Value) -> (usize, usize) {
    match v {
        Value::Bool(_) => (1, 1),
        Value::Int2(_) => (2, 2),
        Value::Int4(_) | Value::Float4(_) | Value::Date(_) | Value::Oid(_) | Value::Reg(..) => {
            (4, 4)
        }
        Value::Int8(_) | Value::Float8(_) | Value::Timestamp(_) | Value::TimestampTz(_) => (8, 8),
        Value::Interval(_) => (16, 8),
        Value::Uuid(_) => (16, 1),
        Value::Null => (0, 1),
        other => (data_size(other) + 4, 4),
    }
}

/// PostgreSQL's statistics of one column from the sampled rows' `values` (in physical
/// order) and the widths of its values too wide to have been read (`wide`: stored
/// compressed or out of line), of an estimated `total_rows` (see the module header).
pub fn column_stats<'a>(
    attnum: u16,
    ty: &DataType,
    target: u32,
    values: impl Iterator<Item = &'a Value>,
    wide: &[usize],
    total_rows: f64,
) -> ColumnStats {
    let fixed_width = ty.typlen() > 0;
    let mut sorted: Vec<(&Value, usize)> = Vec::new();
    let mut null_cnt = 0usize;
    // Too wide ones not read count as those read: not null, of their stored width.
    let mut too_wide = wide.len();
    let mut total_width = wide.iter().sum::<usize>() as f64;
    let mut sample_rows = wide.len();
    let mut nonnull_cnt = wide.len();
    for v in values {
        sample_rows += 1;
        if v.is_null() {
            null_cnt += 1;
            continue;
        }
        nonnull_cnt += 1;
        if !fixed_width {
            total_width += stored_width(v, ty) as f64;
            if data_size(v) > WIDTH_THRESHOLD {
                too_wide += 1;
                continue;
            }
        }
        // Its place among the values looked at (NULLs and too wide ones left out): the
        // order the correlation compares the sorted order with.
        sorted.push((v, sorted.len()));
    }
    let n = sample_rows as f64;
    let mut s = ColumnStats {
        attnum,
        ty: *ty,
        null_frac: 0.0,
        avg_width: 0,
        n_distinct: 0.0,
        mcv: Vec::new(),
        histogram: Vec::new(),
        correlation: None,
    };
    if sorted.is_empty() {
        // Only NULLs (or only values too wide to look at).
        s.null_frac = (null_cnt as f64 / n.max(1.0)) as f32;
        s.avg_width = if nonnull_cnt > 0 {
            (total_width / nonnull_cnt as f64) as i32
        } else if fixed_width {
            ty.typlen() as i32
        } else {
            0
        };
        s.n_distinct = if nonnull_cnt > 0 {
            // Too wide to compare: assume they are all different.
            (-(1.0 - f64::from(s.null_frac))) as f32
        } else {
            0.0
        };
        return s;
    }

    // Sort by value, ties by position in the sample (which the correlation relies on).
    sorted.sort_by(|a, b| match a.0.cmp_non_null(b.0) {
        Ordering::Equal => a.1.cmp(&b.1),
        o => o,
    });
    let values_cnt = sorted.len();
    let num_mcv_max = target as usize;
    // Runs of equal values: (count, index of the first in `sorted`), and the most
    // frequent runs of more than one value, most frequent first (earlier runs first among
    // equals).
    let mut ndistinct = 0usize;
    let mut nmultiple = 0usize;
    let mut track: Vec<(usize, usize)> = Vec::new();
    let mut corr_xysum = 0f64;
    let mut i = 0;
    while i < values_cnt {
        let mut j = i + 1;
        while j < values_cnt && sorted[j].0.cmp_non_null(sorted[i].0) == Ordering::Equal {
            j += 1;
        }
        for (k, item) in sorted.iter().enumerate().take(j).skip(i) {
            corr_xysum += k as f64 * item.1 as f64;
        }
        ndistinct += 1;
        let dups = j - i;
        if dups > 1 {
            nmultiple += 1;
            if track.len() < num_mcv_max || track.last().is_some_and(|t| dups > t.0) {
                let at = track.iter().position(|t| dups > t.0).unwrap_or(track.len());
                track.insert(at, (dups, i));
                track.truncate(num_mcv_max);
            }
        }
        i = j;
    }

    s.null_frac = (null_cnt as f64 / n) as f32;
    s.avg_width = if fixed_width {
        ty.typlen() as i32
    } else {
        (total_width / nonnull_cnt as f64) as i32
    };
    let null_frac = f64::from(s.null_frac);
    s.n_distinct = if nmultiple == 0 {
        // Every value seen once: assume the column is unique.
        (-(1.0 - null_frac)) as f32
    } else if too_wide == 0 && nmultiple == ndistinct {
        // Every value seen more than once: assume these are all there are.
        ndistinct as f32
    } else {
        let f1 = (ndistinct - nmultiple + too_wide) as f64;
        let d = f1 + nmultiple as f64;
        let nn = (sample_rows - null_cnt) as f64;
        let big_n = total_rows * (1.0 - null_frac);
        let mut est = if big_n > 0.0 {
            (nn * d) / ((nn - f1) + f1 * nn / big_n)
        } else {
            0.0
        };
        est = est.max(d).min(big_n);
        (est + 0.5).floor() as f32
    };
    if f64::from(s.n_distinct) > 0.1 * total_rows {
        s.n_distinct = (-(f64::from(s.n_distinct) / total_rows)) as f32;
    }

    let num_mcv = if track.len() == ndistinct
        && too_wide == 0
        && s.n_distinct > 0.0
        && track.len() <= num_mcv_max
    {
        track.len()
    } else {
        let counts: Vec<usize> = track.iter().map(|t| t.0).collect();
        keep_mcvs(
            &counts,
            f64::from(s.n_distinct),
            null_frac,
            sample_rows,
            total_rows,
        )
    };
    track.truncate(num_mcv);
    s.mcv = track
        .iter()
        .map(|&(count, first)| {
            (
                sorted[first].0.clone(),
                (count as f64 / sample_rows as f64) as f32,
            )
        })
        .collect();

    let num_bins = target as usize;
    let mut num_hist = ndistinct - num_mcv;
    if num_hist > num_bins {
        num_hist = num_bins + 1;
    }
    if num_hist >= 2 {
        // The values outside the most common list, in order.
        let mut in_mcv = track.clone();
        in_mcv.sort_by_key(|t| t.1);
        let mut rest: Vec<&Value> = Vec::with_capacity(values_cnt);
        let mut at = 0;
        for (count, first) in in_mcv {
            rest.extend(sorted[at..first].iter().map(|x| x.0));
            at = first + count;
        }
        rest.extend(sorted[at..].iter().map(|x| x.0));
        let nvals = rest.len();
        // Bound i is rest[i (nvals - 1) / (num_hist - 1)], without overflow.
        let delta = (nvals - 1) / (num_hist - 1);
        let deltafrac = (nvals - 1) % (num_hist - 1);
        let (mut pos, mut posfrac) = (0usize, 0usize);
        for _ in 0..num_hist {
            s.histogram.push(rest[pos].clone());
            pos += delta;
            posfrac += deltafrac;
            if posfrac >= num_hist - 1 {
                pos += 1;
                posfrac -= num_hist - 1;
            }
        }
    }

    if values_cnt > 1 {
        // x and y both run over 0..values_cnt: their sums and sums of squares are known.
        let c = values_cnt as f64;
        let xsum = (c - 1.0) * c / 2.0;
        let x2sum = (c - 1.0) * c * (2.0 * c - 1.0) / 6.0;
        s.correlation = Some(((c * corr_xysum - xsum * xsum) / (c * x2sum - xsum * xsum)) as f32);
    }
    s
}

/// How many of the most common values (`counts`, most common first) to keep: drop the
/// least common while it is not significantly more common than a value outside the list
/// would be on average (PostgreSQL's `analyze_mcv_list`). All of them when the whole
/// table was sampled.
fn keep_mcvs(
    counts: &[usize],
    n_distinct: f64,
    null_frac: f64,
    sample_rows: usize,
    total_rows: f64,
) -> usize {
    let mut num_mcv = counts.len();
    let n = sample_rows as f64;
    if n == total_rows || total_rows <= 1.0 {
        return num_mcv;
    }
    let ndistinct_table = if n_distinct < 0.0 {
        -n_distinct * total_rows
    } else {
        n_distinct
    };
    // Rows in all but the last (least common) value of the list.
    let mut sumcount: f64 = counts[..num_mcv.saturating_sub(1)]
        .iter()
        .map(|&c| c as f64)
        .sum();
    while num_mcv > 0 {
        // The selectivity the last value would get outside the list (as eqsel estimates).
        let mut selec = (1.0 - sumcount / n - null_frac).clamp(0.0, 1.0);
        let other_distinct = ndistinct_table - (num_mcv - 1) as f64;
        if other_distinct > 1.0 {
            selec /= other_distinct;
        }
        // Its count is a hypergeometric sample of a population of about K such rows.
        let big_n = total_rows;
        let count = counts[num_mcv - 1] as f64;
        let k = big_n * count / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        let stddev = variance.sqrt();
        if count > selec * n + 2.0 * stddev + 0.5 {
            break;
        }
        num_mcv -= 1;
        if num_mcv == 0 {
            break;
        }
        sumcount -= counts[num_mcv - 1] as f64;
    }
    num_mcv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[Option<i32>]) -> Vec<Value> {
        v.iter()
            .map(|x| x.map_or(Value::Null, Value::Int4))
            .collect()
    }

    #[test]
    fn a_unique_column_has_a_histogram_and_no_common_values() {
        let values = ints(&(1..=1000).map(Some).collect::<Vec<_>>());
        let s = column_stats(1, &DataType::Int4, 100, values.iter(), &[], 1000.0);
        assert_eq!(s.null_frac, 0.0);
        assert_eq!(s.avg_width, 4);
        assert_eq!(s.n_distinct, -1.0);
        assert!(s.mcv.is_empty());
        assert_eq!(s.histogram.len(), 101);
        assert_eq!(s.histogram[0], Value::Int4(1));
        assert_eq!(s.histogram[50], Value::Int4(500));
        assert_eq!(s.histogram[100], Value::Int4(1000));
        assert_eq!(s.correlation, Some(1.0));
    }

    #[test]
    fn few_repeated_values_are_all_common_and_counted() {
        // 0..4 repeated, reversed physical order; a quarter NULL.
        let mut v: Vec<Option<i32>> = (0..300).map(|i| Some(4 - i % 5)).collect();
        v.extend([None; 100]);
        let values = ints(&v);
        let s = column_stats(2, &DataType::Int4, 100, values.iter(), &[], 400.0);
        assert_eq!(s.null_frac, 0.25);
        assert_eq!(s.n_distinct, 5.0);
        assert_eq!(s.mcv.len(), 5);
        assert!(s.mcv.iter().all(|(_, f)| *f == 0.15));
        // Equal counts: in value order.
        assert_eq!(s.mcv[0].0, Value::Int4(0));
        assert!(s.histogram.is_empty());
    }

    #[test]
    fn a_target_limits_the_lists_and_only_nulls_give_zero_distinct() {
        let values = ints(&(0..1000).map(|i| Some(i % 50)).collect::<Vec<_>>());
        let s = column_stats(1, &DataType::Int4, 10, values.iter(), &[], 1000.0);
        assert_eq!(s.mcv.len(), 10);
        assert_eq!(s.histogram.len(), 11);
        let nulls = ints(&[None, None]);
        let s = column_stats(1, &DataType::Text, 100, nulls.iter(), &[], 2.0);
        assert_eq!((s.null_frac, s.avg_width, s.n_distinct), (1.0, 0, 0.0));
        assert_eq!(s.correlation, None);
    }

    #[test]
    fn widths_are_postgresql_stored_sizes() {
        let t = |s: &str| stored_width(&Value::Text(s.into()), &DataType::Text);
        assert_eq!(t("abc"), 4);
        assert_eq!(t(&"x".repeat(126)), 127);
        assert_eq!(t(&"x".repeat(127)), 131);
        let n = |s: &str| {
            let v = Value::Numeric(s.parse().unwrap());
            stored_width(&v, &DataType::Numeric(None))
        };
        assert_eq!(n("0"), 3);
        assert_eq!(n("1"), 5);
        assert_eq!(n("12345.5"), 9);
    }

    #[test]
    fn selection_sampling_picks_k_distinct_blocks_in_order() {
        let mut rng = rand::rng();
        let b = sample_blocks(10_000, 300, &mut rng);
        assert_eq!(b.len(), 300);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample_blocks(5, 300, &mut rng), vec![0, 1, 2, 3, 4]);
    }
}
