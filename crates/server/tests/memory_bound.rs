//! Memory stays bounded when work_mem is small (issue 30): a sort, a hash aggregate, a
//! hash join and a nested loop's Materialize over 400,000 rows each go to temporary
//! files, and the process's peak memory (VmHWM, read from /proc) grows by at most 32 MB
//! over where it stood with the table loaded and read. Without spilling, the sort alone
//! holds well over that. A test binary of its own: the peak is the process's.

mod common;

use common::{connect, exec, value};

/// The process's peak resident memory, in kB (`VmHWM` in /proc/self/status).
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spilling_operators_keep_the_peak_memory_bounded() {
    let (server, _dir) = common::start_without_autovacuum().await;
    let temp = server.database().temp_space().clone();
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE big (g int, t text)").await;
    exec(
        &c,
        "INSERT INTO big SELECT g, 'row number ' || ((g::bigint * 7919) % 400009) FROM generate_series(1, 400000) g",
    )
    .await;
    exec(&c, "CREATE TABLE few (a int)").await;
    exec(&c, "INSERT INTO few VALUES (1), (2), (3)").await;
    assert_eq!(value(&c, "SELECT count(*) FROM big").await, "400000");
    let before = peak_kb();
    let made = temp.files_created();
    exec(&c, "SET work_mem = '64kB'").await;
    // A sort, its rows counted above it (the result is not sent).
    assert_eq!(
        value(&c, "SELECT count(*) FROM (SELECT t FROM big ORDER BY t) x").await,
        "400000"
    );
    // A hash aggregate with 100,000 groups.
    exec(&c, "SET enable_sort = off").await;
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM (SELECT g % 100000, count(*) FROM big GROUP BY 1) x"
        )
        .await,
        "100000"
    );
    exec(&c, "RESET enable_sort").await;
    // A hash join of the table with itself.
    exec(&c, "SET enable_mergejoin = off; SET enable_nestloop = off").await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM big a JOIN big b ON a.g = b.g").await,
        "400000"
    );
    exec(&c, "RESET enable_mergejoin; RESET enable_nestloop").await;
    // A nested loop over the table kept by a Materialize.
    exec(&c, "SET enable_hashjoin = off; SET enable_mergejoin = off").await;
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM few x LEFT JOIN big y ON y.g % 100000 = x.a"
        )
        .await,
        "12"
    );
    let grown_mb = peak_kb().saturating_sub(before) / 1024;
    assert!(
        temp.files_created() > made + 4,
        "every operator spilled: {} files",
        temp.files_created() - made
    );
    assert_eq!(temp.present(), 0);
    assert!(grown_mb <= 32, "peak memory grew by {grown_mb} MB");
}
