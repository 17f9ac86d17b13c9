//! What planning a query that cannot prune costs per partition (issue 29): the bytes
//! the planner allocates, counted by this test binary's own allocator, grow by at most
//! 256 per partition the query reads, for a scan with a condition on another column
//! and for a join (W3's shape); so do the bytes estimating the plan's cost allocates
//! (a generic plan's choice, EXPLAIN).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{connect, exec, tiny_pool_config};
use myriad_server::Server;

/// Counts the bytes this thread allocates while `COUNTING` is set.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: a thread's locals may be gone while it ends.
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                let _ = BYTES.try_with(|b| b.set(b.get() + layout.size() as u64));
            }
        });
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = COUNTING.try_with(|on| {
            if on.get() && new_size > layout.size() {
                let grown = (new_size - layout.size()) as u64;
                let _ = BYTES.try_with(|b| b.set(b.get() + grown));
            }
        });
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Partitions of the smaller and the larger table.
const SMALL: usize = 200;
const LARGE: usize = 1_200;
/// The most bytes planning may allocate per partition read.
const PER_PARTITION: u64 = 256;

/// Bytes allocated on this thread by `f`.
fn allocated<R>(f: impl FnOnce() -> R) -> (u64, R) {
    BYTES.with(|b| b.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (BYTES.with(|b| b.get()), r)
}

/// The bytes planning `sql` allocates, and estimating its plan's cost (as the choice
/// of a generic plan does).
fn planning_bytes(catalog: &catalog::CatalogSnapshot, sql: &str) -> (u64, u64) {
    let session = ::common::session::SessionInfo::detached();
    let mut commands = sql::parser::parse(sql).expect("parses");
    let sql::parser::Command::Sql(stmt) = commands.remove(0) else {
        panic!("not a query: {sql}");
    };
    let settings = planner::PlannerSettings::default();
    let cx = planner::PlanContext {
        snapshot_xmin: u64::MAX,
        catalog,
        sizes: &planner::NoStorage,
        settings: &settings,
        subplans: None,
    };
    // Bound first: what is measured is the planner's part.
    let bound = sql::binder::Binder::new(catalog, sql, &session)
        .bind(&stmt)
        .expect("binds");
    // Once unmeasured, so what is made once per process (lazy statics) is not counted.
    let _ = planner::plan(&cx, bound.clone()).expect("plans");
    let (planning, planned) = allocated(|| planner::plan(&cx, bound).expect("plans"));
    let (estimating, _) = allocated(|| {
        if let planner::PlannedStatement::Query { plan, .. } = &planned {
            let _ = planner::estimate::Estimator::new(cx).estimate(plan);
        }
    });
    eprintln!("{sql}: planning {planning}, estimating {estimating}");
    drop(planned);
    (planning, estimating)
}

/// Before partitions' sequential scans were held as their descriptors
/// (`Plan::PartitionScans`), planning took about 1,100 bytes per partition here, and
/// the estimate 950 more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_allocates_at_most_256_bytes_per_unpruned_partition() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE branches (bid int PRIMARY KEY, name text)").await;
    exec(&c, "INSERT INTO branches VALUES (1, 'one'), (2, 'two')").await;
    for (name, n) in [("small", SMALL), ("large", LARGE)] {
        exec(
            &c,
            &format!(
                "CREATE TABLE {name} (aid int, bid int, abalance int) PARTITION BY HASH (aid)"
            ),
        )
        .await;
        let sql: String = (0..n)
            .map(|i| {
                format!(
                    "CREATE TABLE {name}_{i} PARTITION OF {name} \
                     FOR VALUES WITH (MODULUS {n}, REMAINDER {i});"
                )
            })
            .collect();
        exec(&c, &sql).await;
        exec(
            &c,
            &format!("INSERT INTO {name} SELECT g, g % 2 + 1, 0 FROM generate_series(1, 2000) g"),
        )
        .await;
        exec(&c, &format!("ANALYZE {name}")).await;
    }
    let catalog = server.database().committed_catalog();
    eprintln!(
        "size of a plan node: {} bytes",
        std::mem::size_of::<planner::Plan>()
    );
    for query in [
        "SELECT * FROM {t} WHERE abalance = 5",
        "SELECT b.name, sum(a.abalance) FROM {t} a JOIN branches b ON a.bid = b.bid GROUP BY b.name",
    ] {
        let small = planning_bytes(&catalog, &query.replace("{t}", "small"));
        let large = planning_bytes(&catalog, &query.replace("{t}", "large"));
        for (what, small, large) in [
            ("planning", small.0, large.0),
            ("estimating", small.1, large.1),
        ] {
            let per = large.saturating_sub(small) / (LARGE - SMALL) as u64;
            assert!(
                per <= PER_PARTITION,
                "{query}: {what} {per} bytes per partition ({small} at {SMALL}, {large} at {LARGE})"
            );
        }
    }
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}
