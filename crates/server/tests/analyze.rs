//! ANALYZE of a table larger than its sample (issue 27): it reads at most 300 × the
//! statistics target pages, chosen at random, and still estimates the table's rows and
//! column statistics from them. The buffer pool's counters (`myriad_stat_buffers`) count
//! the pages read.

mod common;

use common::{autovacuum_round, connect, exec, start_without_autovacuum, value};
use myriad_server::AutovacuumRound;
use tokio_postgres::Client;

/// Pages the buffer pool handed out (hits and reads) while `sql` ran.
async fn pages_touched(c: &Client, sql: &str) -> i64 {
    let count = "SELECT hits + reads FROM myriad_stat_buffers";
    let before: i64 = value(c, count).await.parse().unwrap();
    exec(c, sql).await;
    let after: i64 = value(c, count).await.parse().unwrap();
    after - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_samples_a_large_table() {
    let (server, _dir) = common::start().await;
    let c = connect(&server).await;
    // About 30 rows per page: some 1,000 pages. No autovacuum to touch pages meanwhile.
    let letters = "abcdefghijklmnopqrstuvwxyz".repeat(12);
    exec(
        &c,
        &format!(
            "CREATE TABLE big (id int, grp int, pad text) WITH (autovacuum_enabled = false);
             INSERT INTO big SELECT i, i % 5, substr('{letters}', 1 + i % 26, 220) \
             FROM generate_series(1, 30000) i"
        ),
    )
    .await;

    // Target 1: 300 pages and 300 rows.
    exec(&c, "SET default_statistics_target = 1").await;
    let touched = pages_touched(&c, "ANALYZE big").await;
    let relpages: i64 = value(&c, "SELECT relpages FROM pg_class WHERE relname = 'big'")
        .await
        .parse()
        .unwrap();
    assert!(relpages > 900, "{relpages} pages");
    assert!((300..=305).contains(&touched), "{touched} pages read");
    // Rows are spread evenly: the estimate from 300 pages is close.
    let reltuples: f64 = value(&c, "SELECT reltuples FROM pg_class WHERE relname = 'big'")
        .await
        .parse()
        .unwrap();
    assert!(
        (reltuples - 30000.0).abs() < 600.0,
        "{reltuples} rows estimated"
    );
    // From a sample of 300 rows: id looks unique, grp has its 5 values.
    assert_eq!(
        value(
            &c,
            "SELECT n_distinct FROM pg_stats WHERE tablename = 'big' AND attname = 'id'"
        )
        .await,
        "-1"
    );
    assert_eq!(
        value(
            &c,
            "SELECT n_distinct FROM pg_stats WHERE tablename = 'big' AND attname = 'grp'"
        )
        .await,
        "5"
    );
    // Two histogram bounds for a target of 1: the sample's smallest and largest id.
    let bounds = value(
        &c,
        "SELECT histogram_bounds FROM pg_stats WHERE tablename = 'big' AND attname = 'id'",
    )
    .await;
    assert_eq!(bounds.matches(',').count(), 1, "{bounds}");

    // The default target (100) reads the whole table: it has fewer than 30,000 pages.
    exec(&c, "RESET default_statistics_target").await;
    let touched = pages_touched(&c, "ANALYZE big").await;
    assert!(
        touched >= relpages && touched <= relpages + 5,
        "{touched} of {relpages}"
    );
    assert_eq!(
        value(&c, "SELECT reltuples FROM pg_class WHERE relname = 'big'").await,
        "30000"
    );
}

/// Autovacuum analyzes a table once its changes since the last ANALYZE pass 50 plus 10%
/// of its rows (PostgreSQL's `autovacuum_analyze_threshold` and `_scale_factor`), and
/// the new statistics show in `pg_stats`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autovacuum_analyzes_tables_that_changed_enough() {
    let (server, _dir) = start_without_autovacuum().await;
    let round = || autovacuum_round(&server);
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE a (id int, tag text)").await;
    exec(
        &c,
        "INSERT INTO a SELECT g, 'x' FROM generate_series(1, 40) AS g",
    )
    .await;
    assert_eq!(
        round().await,
        AutovacuumRound::default(),
        "40 rows are under 50"
    );
    exec(
        &c,
        "INSERT INTO a SELECT g, 'y' FROM generate_series(41, 60) AS g",
    )
    .await;
    assert_eq!(
        round().await,
        AutovacuumRound {
            vacuumed: 0,
            frozen: 0,
            analyzed: 1
        },
        "60 changes pass ANALYZE's threshold; 60 inserted rows are under VACUUM's 1000"
    );
    let mcv = "SELECT most_common_vals FROM pg_stats WHERE tablename = 'a' AND attname = 'tag'";
    assert_eq!(value(&c, mcv).await, "{x,y}");
    // 60 rows: analyzed again past 56 changes, vacuumed past 62.
    exec(&c, "UPDATE a SET tag = 'z' WHERE id <= 57").await;
    assert_eq!(
        round().await,
        AutovacuumRound {
            vacuumed: 0,
            frozen: 0,
            analyzed: 1
        }
    );
    assert_eq!(value(&c, mcv).await, "{z,y}");
    assert_eq!(round().await.analyzed, 0, "nothing changed since");
}
