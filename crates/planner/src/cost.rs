//! What plans are chosen by: the session's planner settings (PostgreSQL's cost units and
//! `enable_*` switches), with the catalog snapshot the statement was bound against, and
//! PostgreSQL's costs of the ways to scan a table (planner rule 6).

use catalog::CatalogSnapshot;

use crate::selectivity::{RelInfo, clamp_rows, conjuncts_selectivity};

/// The planner's settings, as the session has them (`SET`, `pg_settings`): PostgreSQL's
/// cost units and method switches, with PostgreSQL's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannerSettings {
    /// A page read in sequence.
    pub seq_page_cost: f64,
    /// A page read out of sequence.
    pub random_page_cost: f64,
    /// Processing one row.
    pub cpu_tuple_cost: f64,
    /// Processing one index entry.
    pub cpu_index_tuple_cost: f64,
    /// One operator or function call.
    pub cpu_operator_cost: f64,
    /// The data caches' size, in pages.
    pub effective_cache_size: f64,
    pub enable_seqscan: bool,
    pub enable_indexscan: bool,
    pub enable_indexonlyscan: bool,
    pub enable_bitmapscan: bool,
    pub enable_nestloop: bool,
    pub enable_hashjoin: bool,
    pub enable_mergejoin: bool,
    pub enable_hashagg: bool,
    pub enable_sort: bool,
    pub enable_material: bool,
    /// How prepared statements choose between generic and custom plans.
    pub plan_cache_mode: crate::cache::PlanCacheMode,
    /// The memory a sort or hash table may use, in kB (`work_mem`).
    pub work_mem: f64,
    /// `maintenance_work_mem` (kB): what CREATE INDEX's sort holds in memory before it
    /// writes sorted runs to temporary files (read by the executor, not costed).
    pub maintenance_work_mem: f64,
    /// Hash tables may use this multiple of `work_mem`.
    pub hash_mem_multiplier: f64,
    /// The most items explicit JOINs are flattened into (`join_collapse_limit`).
    pub join_collapse_limit: usize,
    /// The most items a nested FROM list is merged into (`from_collapse_limit`).
    pub from_collapse_limit: usize,
    /// Joins of partitioned tables partitioned alike may be done partition by partition
    /// (`enable_partitionwise_join`).
    pub enable_partitionwise_join: bool,
    /// Grouping by a partitioned table's key may be done partition by partition
    /// (`enable_partitionwise_aggregate`).
    pub enable_partitionwise_aggregate: bool,
}

impl Default for PlannerSettings {
    fn default() -> Self {
        PlannerSettings {
            seq_page_cost: 1.0,
            random_page_cost: 4.0,
            cpu_tuple_cost: 0.01,
            cpu_index_tuple_cost: 0.005,
            cpu_operator_cost: 0.0025,
            effective_cache_size: 524288.0,
            enable_seqscan: true,
            enable_indexscan: true,
            enable_indexonlyscan: true,
            enable_bitmapscan: true,
            enable_nestloop: true,
            enable_hashjoin: true,
            enable_mergejoin: true,
            enable_hashagg: true,
            enable_sort: true,
            enable_material: true,
            plan_cache_mode: crate::cache::PlanCacheMode::Auto,
            work_mem: 4096.0,
            maintenance_work_mem: 65536.0,
            hash_mem_multiplier: 2.0,
            join_collapse_limit: 8,
            from_collapse_limit: 8,
            enable_partitionwise_join: false,
            enable_partitionwise_aggregate: false,
        }
    }
}

/// The current size of relations (tables and indexes), in pages: what the planner
/// scales the last ANALYZE's rows per page by, as PostgreSQL reads each relation's size
/// when it plans. The server's answers from the storage manager's cached sizes (no
/// system call).
pub trait RelSizes {
    fn pages(&self, rel: common::ids::RelId) -> u64;
}

/// Sizes for planning without storage (tests, the fuzz targets): every relation as its
/// last ANALYZE left it, or empty.
pub struct NoStorage;

impl RelSizes for NoStorage {
    fn pages(&self, _rel: common::ids::RelId) -> u64 {
        0
    }
}

/// What one planning reads: the catalog snapshot the statement was bound against (its
/// tables' statistics), the relations' current sizes and the session's planner settings.
#[derive(Clone, Copy)]
pub struct PlanContext<'a> {
    pub catalog: &'a CatalogSnapshot,
    pub sizes: &'a dyn RelSizes,
    pub settings: &'a PlannerSettings,
    /// What each subquery of the statement costs to run, once it is planned: what a
    /// condition running it costs ([`qual_cost`]). `None` costs subqueries nothing.
    pub subplans: Option<&'a SubplanCosts>,
    /// The xmin of the snapshot the statement runs with (`u64::MAX`: no snapshot older
    /// than any index): an index with a `check_xmin` at or above it is not used
    /// ([`PlanContext::index_usable`]).
    pub snapshot_xmin: u64,
}

impl PlanContext<'_> {
    /// Whether the statement may read through `index`: not one built over HOT chains
    /// whose older versions its snapshot may see and the index does not hold
    /// (`IndexDesc::check_xmin`, PostgreSQL's `indcheckxmin`; planner rule 20).
    pub fn index_usable(&self, index: &catalog::IndexDesc) -> bool {
        index.check_xmin == 0 || index.check_xmin < self.snapshot_xmin
    }
}

/// The estimate of each planned subquery's plan, by its query.
#[derive(Clone, Debug, Default)]
pub struct SubplanCosts {
    pub(crate) costs: Vec<(
        std::sync::Arc<sql::bound::LogicalPlan>,
        crate::estimate::Estimate,
    )>,
}

impl SubplanCosts {
    fn get(
        &self,
        query: &std::sync::Arc<sql::bound::LogicalPlan>,
    ) -> Option<&crate::estimate::Estimate> {
        self.costs
            .iter()
            .find(|(q, _)| std::sync::Arc::ptr_eq(q, query))
            .map(|(_, e)| e)
    }
}

/// What a plan switched off costs extra (PostgreSQL's `disable_cost`): it is still made
/// when nothing else can be.
pub const DISABLE_COST: f64 = 1.0e10;

/// A path's estimated cost, in PostgreSQL's units: to its first row, to its last, and
/// the rows it returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
}

/// The cost of evaluating `quals` on a row (`cost_qual_eval`): one `cpu_operator_cost`
/// per operator and function call, half the elements of an IN list; AND, OR, NOT,
/// columns and constants cost nothing; a subquery what PostgreSQL's `cost_subplan`
/// charges (below). (startup, per row).
pub fn qual_cost(cx: &PlanContext<'_>, quals: &[&sql::bound::Expr]) -> (f64, f64) {
    use sql::bound::{BinaryOp, ExprKind, SubLinkKind};
    let op = cx.settings.cpu_operator_cost;
    let mut startup = 0.0;
    let mut per_tuple = 0.0;
    for q in quals {
        q.walk(&mut |e| {
            if let ExprKind::SubLink(link) = &e.kind {
                let Some(sub) = cx.subplans.and_then(|s| s.get(&link.query)) else {
                    return;
                };
                if link.args.is_empty() {
                    // Run once for the statement; a hashed one then probes its set.
                    startup += sub.total;
                    if crate::subplans::hashed_subplan(link) {
                        per_tuple += op;
                    }
                } else {
                    // Run again for each row: to its first row for EXISTS, half its
                    // rows for ANY / ALL, all of them otherwise.
                    let rest = sub.total - sub.startup;
                    per_tuple += sub.startup
                        + match link.kind {
                            SubLinkKind::Exists => rest / sub.rows.max(1.0),
                            SubLinkKind::Quantified { .. } => 0.5 * rest,
                            _ => rest,
                        };
                }
                return;
            }
            per_tuple += match &e.kind {
                ExprKind::Binary(BinaryOp::And | BinaryOp::Or, ..) => 0.0,
                ExprKind::Binary(..)
                | ExprKind::Neg(_)
                | ExprKind::Like { .. }
                | ExprKind::IsDistinctFrom { .. }
                | ExprKind::NullIf(..)
                | ExprKind::Func(..) => op,
                ExprKind::Cast { expr, .. } if expr.ty != e.ty => op,
                ExprKind::InList { list, .. } => op * list.len() as f64 * 0.5,
                _ => 0.0,
            };
        });
    }
    (startup, per_tuple)
}

/// A sequential scan of `rel` checking `quals` on each row (`cost_seqscan`), which keep
/// `rows` of them.
pub fn seq_scan(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    quals: &[&sql::bound::Expr],
    rows: f64,
) -> Cost {
    let s = cx.settings;
    let (qual_startup, qual_per_tuple) = qual_cost(cx, quals);
    let mut startup = qual_startup;
    if !s.enable_seqscan {
        startup += DISABLE_COST;
    }
    let run = s.seq_page_cost * rel.pages + (s.cpu_tuple_cost + qual_per_tuple) * rel.tuples;
    Cost {
        startup,
        total: startup + run,
        rows,
    }
}

/// A btree index scan of `rel` through `index`: `bound` are the conditions its key range
/// comes from (equalities on its leading columns, then a range on the next), `rest` the
/// conditions checked on each row it fetches (`cost_index` with PostgreSQL's
/// `btcostestimate`: the index pages and entries read, the descent, and the heap pages
/// fetched, fewer and in order the more the column's order follows the table's). All
/// the conditions together keep `rows`.
pub fn index_scan(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    index: &catalog::IndexDesc,
    bound: &[&sql::bound::Expr],
    full_key_equal: bool,
    rest: &[&sql::bound::Expr],
    rows: f64,
) -> Cost {
    index_path(cx, rel, index, (bound, full_key_equal), rest, rows, false)
}

/// As [`index_scan`], for an index-only scan (planner rule 19): the heap pages it reads
/// are those not all-visible, `1 - allvisfrac` of them (PostgreSQL's `cost_index` with
/// `indexonly`); `enable_indexscan` off disables it as it does index scans.
pub fn index_only_scan(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    index: &catalog::IndexDesc,
    bound: &[&sql::bound::Expr],
    full_key_equal: bool,
    rest: &[&sql::bound::Expr],
    rows: f64,
) -> Cost {
    index_path(cx, rel, index, (bound, full_key_equal), rest, rows, true)
}

fn index_path(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    index: &catalog::IndexDesc,
    (bound, full_key_equal): (&[&sql::bound::Expr], bool),
    rest: &[&sql::bound::Expr],
    rows: f64,
    only: bool,
) -> Cost {
    let s = cx.settings;
    // The pages an index-only scan still reads from the heap: those not all-visible.
    let heap_share = |pages: f64| {
        if only {
            (pages * (1.0 - rel.allvisfrac())).ceil()
        } else {
            pages
        }
    };
    let IndexAccess {
        startup: index_startup,
        total: index_total,
        selectivity: index_sel,
        pages: index_pages,
    } = index_access(cx, rel, index, bound, full_key_equal);
    // The leading column's correlation with the table's order.
    let mut correlation = index
        .columns
        .first()
        .and_then(|&c| {
            let col = rel.table.columns.get(c)?;
            rel.stats?.column(c as u16 + 1, &col.ty)?.correlation
        })
        .map_or(0.0, f64::from);
    if index.columns.len() > 1 {
        correlation *= 0.75;
    }

    let mut startup = index_startup;
    let mut run = index_total - index_startup;
    let tuples_fetched = clamp_rows(index_sel * rel.tuples);
    let total_pages = rel.pages + index_pages;
    let max_pages = heap_share(pages_fetched(cx, tuples_fetched, rel.pages, total_pages));
    let max_io = max_pages * s.random_page_cost;
    // Perfectly correlated: the matching fraction of the pages, one random read then in
    // sequence.
    let min_pages = heap_share((index_sel * rel.pages).ceil());
    let min_io = if min_pages > 0.0 {
        s.random_page_cost + (min_pages - 1.0).max(0.0) * s.seq_page_cost
    } else {
        0.0
    };
    let csquared = correlation * correlation;
    run += max_io + csquared * (min_io - max_io);
    let (qual_startup, qual_per_tuple) = qual_cost(cx, rest);
    startup += qual_startup;
    run += (s.cpu_tuple_cost + qual_per_tuple) * tuples_fetched;
    // As PostgreSQL's: `enable_indexscan` off disables index-only scans too;
    // `enable_indexonlyscan` off makes none (`indexonly::choose_statement`).
    if !s.enable_indexscan {
        startup += DISABLE_COST;
    }
    Cost {
        startup,
        total: startup + run,
        rows,
    }
}

/// What reading an index's entries between bounds costs, without the heap
/// (`btcostestimate`): its startup and total, the fraction of entries the bounds
/// select, and the index's pages.
pub(crate) struct IndexAccess {
    pub(crate) startup: f64,
    pub(crate) total: f64,
    pub(crate) selectivity: f64,
    pub(crate) pages: f64,
}

pub(crate) fn index_access(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    index: &catalog::IndexDesc,
    bound: &[&sql::bound::Expr],
    full_key_equal: bool,
) -> IndexAccess {
    let s = cx.settings;
    // A partial index holds only its predicate's rows: the entries read are those its
    // predicate and the bounds both select (PostgreSQL's add_predicate_to_index_quals).
    let predicate = crate::predicate::predicate_conjuncts(cx, rel.table, index);
    let index_sel = if predicate.is_empty() {
        conjuncts_selectivity(rel, bound)
    } else {
        let mut all: Vec<&sql::bound::Expr> = bound.to_vec();
        all.extend(predicate.iter().filter(|p| !bound.contains(p)));
        conjuncts_selectivity(rel, &all)
    };
    // Index entries read (a non-partial index has the table's rows).
    let index_tuples_total = rel.tuples;
    let mut num_index_tuples = if index.unique && full_key_equal {
        1.0
    } else {
        (index_sel * rel.tuples).round_ties_even()
    };
    if num_index_tuples > index_tuples_total {
        num_index_tuples = index_tuples_total;
    }
    if num_index_tuples < 1.0 {
        num_index_tuples = 1.0;
    }
    let index_pages = (cx.sizes.pages(index.rel).max(1)) as f64;
    let num_index_pages = if index_pages > 1.0 && index_tuples_total > 1.0 {
        (num_index_tuples * index_pages / index_tuples_total).ceil()
    } else {
        1.0
    };
    let qual_op_cost = s.cpu_operator_cost * bound.len() as f64;
    let mut index_startup = 0.0;
    let mut index_total = num_index_pages * s.random_page_cost
        + num_index_tuples * (s.cpu_index_tuple_cost + qual_op_cost);
    // Descending the tree: a comparison per level of a binary search over the entries,
    // and a page's worth of work per level.
    if index_tuples_total > 1.0 {
        let descent = (index_tuples_total.ln() / 2f64.ln()).ceil() * s.cpu_operator_cost;
        index_startup += descent;
        index_total += descent;
    }
    let height = tree_height(index_pages);
    let descent = (height + 1.0) * 50.0 * s.cpu_operator_cost;
    index_startup += descent;
    index_total += descent;
    IndexAccess {
        startup: index_startup,
        total: index_total,
        selectivity: index_sel,
        pages: index_pages,
    }
}

/// One index's part of a bitmap (`cost_bitmap_tree_node` over an index path): reading
/// its entries, plus a little per entry for building the bitmap, so that a bitmap never
/// looks as cheap as a plain index scan for one row. (cost, selectivity); `rows` are the
/// table's rows under all its conditions (the index path's rows).
pub(crate) fn bitmap_index(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    index: &catalog::IndexDesc,
    bound: &[&sql::bound::Expr],
    full_key_equal: bool,
    rows: f64,
) -> (f64, f64) {
    let a = index_access(cx, rel, index, bound, full_key_equal);
    (
        a.total + 0.1 * cx.settings.cpu_operator_cost * rows,
        a.selectivity,
    )
}

/// A BitmapOr of parts, each (cost, selectivity) (`cost_bitmap_or_node`): their costs
/// added, their selectivities too (at most 1).
pub(crate) fn bitmap_or(parts: &[(f64, f64)]) -> (f64, f64) {
    let cost = parts.iter().map(|p| p.0).sum();
    let selec: f64 = parts.iter().map(|p| p.1).sum();
    (cost, selec.min(1.0))
}

/// A BitmapAnd of parts (`cost_bitmap_and_node`): their costs added, their
/// selectivities multiplied.
pub(crate) fn bitmap_and(parts: &[(f64, f64)]) -> (f64, f64) {
    let cost = parts.iter().map(|p| p.0).sum();
    let selec = parts.iter().map(|p| p.1).product();
    (cost, selec)
}

/// A bitmap heap scan (`cost_bitmap_heap_scan`) over a bitmap of `bitmap` (cost,
/// selectivity): the bitmap is built first, then the pages it names are read in order,
/// at a cost per page between a random and a sequential read by how many of the table's
/// pages they are, and each row fetched is checked against `quals` (all the table's
/// conditions), which keep `rows`.
pub(crate) fn bitmap_heap_scan(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    bitmap: (f64, f64),
    quals: &[&sql::bound::Expr],
    rows: f64,
) -> Cost {
    let s = cx.settings;
    let (index_cost, selectivity) = bitmap;
    let mut startup = index_cost;
    let t = if rel.pages > 1.0 { rel.pages } else { 1.0 };
    let tuples_fetched = clamp_rows(selectivity * rel.tuples);
    let mut pages = pages_fetched(cx, tuples_fetched, rel.pages, rel.pages);
    pages = if pages >= t { t } else { pages.ceil() };
    let cost_per_page = if pages >= 2.0 {
        s.random_page_cost - (s.random_page_cost - s.seq_page_cost) * (pages / t).sqrt()
    } else {
        s.random_page_cost
    };
    let mut run = pages * cost_per_page;
    let (qual_startup, qual_per_tuple) = qual_cost(cx, quals);
    startup += qual_startup;
    run += (s.cpu_tuple_cost + qual_per_tuple) * tuples_fetched;
    if !s.enable_bitmapscan {
        startup += DISABLE_COST;
    }
    Cost {
        startup,
        total: startup + run,
        rows,
    }
}

/// A btree's height (levels above the leaves) from its size: 0 for a root leaf (the
/// metapage and one page), then a level per few hundred-fold of leaves (PostgreSQL reads
/// its fast root's level from the metapage).
pub(crate) fn tree_height(pages: f64) -> f64 {
    // Block 0 is the metapage.
    let mut leaves = (pages - 1.0).max(1.0);
    let mut height = 0.0;
    while leaves > 1.0 {
        leaves = (leaves / 256.0).ceil();
        height += 1.0;
    }
    height
}

/// Heap pages read to fetch `tuples` rows by index order from a table of `table_pages`
/// pages, with the caches holding `effective_cache_size` pages shared by `total_pages`
/// of the query's relations (Mackert and Lohman's formula, PostgreSQL's
/// `index_pages_fetched`).
fn pages_fetched(cx: &PlanContext<'_>, tuples: f64, table_pages: f64, total_pages: f64) -> f64 {
    let t = table_pages.max(1.0);
    let total = total_pages.max(1.0);
    let mut b = cx.settings.effective_cache_size * t / total;
    b = if b <= 1.0 { 1.0 } else { b.ceil() };
    let n = tuples;
    if t <= b {
        let f = (2.0 * t * n) / (2.0 * t + n);
        if f >= t { t } else { f.ceil() }
    } else {
        let lim = (2.0 * t * b) / (2.0 * t - b);
        let f = if n <= lim {
            (2.0 * t * n) / (2.0 * t + n)
        } else {
            b + (n - lim) * (t - b) / t
        };
        f.ceil()
    }
}

/// Does `new` beat `old`, a path considered before it, as PostgreSQL's `add_path` decides
/// between two paths of one table with no useful order: clearly cheaper in total (by more
/// than 1%), or as cheap within 1% and clearly cheaper to start; on a tie the older path
/// stays.
pub fn beats(new: &Cost, old: &Cost) -> bool {
    const FUZZ: f64 = 1.01;
    if new.total > old.total * FUZZ {
        return false;
    }
    if old.total > new.total * FUZZ {
        return true;
    }
    if new.startup > old.startup * FUZZ {
        return false;
    }
    if old.startup > new.startup * FUZZ {
        return true;
    }
    // Fuzzily equal: the older path stays unless the new one is strictly better.
    new.total * (1.0 + 1e-10) < old.total
}

/// `x` rounded up to a multiple of 8 (PostgreSQL's MAXALIGN on 64-bit machines).
fn maxalign(x: f64) -> f64 {
    (x / 8.0).ceil() * 8.0
}

/// Bytes `tuples` rows of `width` take as heap tuples (`relation_byte_size`).
pub fn relation_byte_size(tuples: f64, width: i64) -> f64 {
    tuples * (maxalign(width as f64) + 24.0)
}

/// Pages `tuples` rows of `width` fill (`page_size`).
pub fn page_size(tuples: f64, width: i64) -> f64 {
    (relation_byte_size(tuples, width) / 8192.0).ceil()
}

/// The memory a hash table may use, in bytes (`get_hash_memory_limit`).
pub fn hash_memory_limit(cx: &PlanContext<'_>) -> f64 {
    cx.settings.work_mem * 1024.0 * cx.settings.hash_mem_multiplier
}

/// The buckets and batches of a hash table for `ntuples` rows of `width`
/// (`ExecChooseHashTableSize` with skew buckets, one process): a power-of-two number of
/// buckets, one per row, at least 1,024; more than one batch when the rows and bucket
/// pointers outgrow the hash memory.
pub fn hash_table_size(cx: &PlanContext<'_>, ntuples: f64, width: i64) -> (f64, f64) {
    let ntuples = if ntuples <= 0.0 { 1000.0 } else { ntuples };
    // HashJoinTupleData, the minimal tuple header, the data.
    let tupsize = 16.0 + 16.0 + maxalign(width as f64);
    let inner_rel_bytes = ntuples * tupsize;
    let mut hash_table_bytes = hash_memory_limit(cx).floor();
    // The skew table's share: 2% of the memory, at a bucket pointer array, a bucket
    // number and a bucket header per most common value.
    let bytes_per_mcv = tupsize + 8.0 * 8.0 + 4.0 + 16.0;
    let skew_mcvs = ((hash_table_bytes / bytes_per_mcv).floor() * 2.0 / 100.0).floor();
    if skew_mcvs > 0.0 {
        hash_table_bytes -= skew_mcvs * bytes_per_mcv;
    }
    let prev_power2 = |x: f64| {
        if x < 1.0 {
            0.0
        } else {
            2f64.powi(x.log2().floor() as i32)
        }
    };
    let next_power2 = |x: f64| {
        if x <= 1.0 {
            1.0
        } else {
            2f64.powi(x.log2().ceil() as i32)
        }
    };
    // MaxAllocSize / sizeof(pointer), and INT_MAX / 2 + 1.
    let max_alloc_pointers = ((1u64 << 30) - 1) as f64 / 8.0;
    let max_pointers = prev_power2(
        (hash_table_bytes / 8.0)
            .floor()
            .min(max_alloc_pointers)
            .floor(),
    )
    .min(1_073_741_824.0);
    let mut nbuckets = next_power2(ntuples.ceil().min(max_pointers).max(1024.0));
    let mut nbatch = 1.0;
    let bucket_bytes = 8.0 * nbuckets;
    if inner_rel_bytes + bucket_bytes > hash_table_bytes {
        let bucket_size = tupsize + 8.0;
        let sbuckets = if hash_table_bytes <= bucket_size {
            1.0
        } else {
            next_power2((hash_table_bytes / bucket_size).floor())
        };
        nbuckets = next_power2(sbuckets.min(max_pointers));
        let bucket_bytes = nbuckets * 8.0;
        let dbatch = (inner_rel_bytes / (hash_table_bytes - bucket_bytes))
            .ceil()
            .min(max_pointers);
        nbatch = next_power2(dbatch.max(2.0));
    }
    (nbuckets, nbatch)
}
