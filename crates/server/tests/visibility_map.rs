//! The visibility map through SQL (access rule 9): VACUUM marks the pages whose rows are
//! all visible to everyone, skips them the next time (but for the last page, which it
//! reads to see whether the table ends in empty pages), and reads again only the pages a
//! change cleared; VACUUM (FREEZE) marks them all-frozen. Pages read are counted by
//! `pg_statio_user_tables` (the session's VACUUM counts its own).

mod common;

use common::{connect, exec, start_without_autovacuum, value};

/// Heap pages the table has asked of the buffer pool so far.
async fn heap_pages(c: &tokio_postgres::Client) -> u64 {
    value(
        c,
        "SELECT heap_blks_read + heap_blks_hit FROM pg_statio_user_tables WHERE relname = 'vm'",
    )
    .await
    .parse()
    .expect("a count")
}

/// Heap pages `sql` reads.
async fn pages_read_by(c: &tokio_postgres::Client, sql: &str) -> u64 {
    let before = heap_pages(c).await;
    exec(c, sql).await;
    heap_pages(c).await - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vacuum_skips_the_pages_the_map_says_are_all_visible() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE vm (id int PRIMARY KEY, pad text)").await;
    exec(
        &c,
        "INSERT INTO vm SELECT g, repeat('x', 200) FROM generate_series(1, 2000) AS g",
    )
    .await;
    let pages: u64 = value(&c, "SELECT pg_relation_size('vm') / 8192")
        .await
        .parse()
        .expect("pages");
    assert!(pages > 50, "{pages} pages");
    let first = pages_read_by(&c, "VACUUM vm").await;
    assert!(first >= pages, "the first VACUUM reads every page: {first}");
    // All-visible: skipped, but for the last page, read to see whether it is empty
    // (PostgreSQL's VACUUM reads it too).
    assert_eq!(
        pages_read_by(&c, "VACUUM vm").await,
        1,
        "all-visible: skipped"
    );
    let live = "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'vm'";
    assert_eq!(
        value(&c, live).await,
        "2000",
        "the rows of skipped pages are kept"
    );

    // A change clears its page's bit: the next VACUUM reads that page alone (and
    // removes the old version, then marks the page again).
    exec(&c, "UPDATE vm SET pad = 'y' WHERE id = 1000").await;
    let after_update = pages_read_by(&c, "VACUUM vm").await;
    assert!(
        (1..=5).contains(&after_update),
        "one changed page: {after_update}"
    );
    exec(&c, "INSERT INTO vm VALUES (5000, 'new')").await;
    let after_insert = pages_read_by(&c, "VACUUM vm").await;
    assert!(
        (1..=3).contains(&after_insert),
        "one page inserted into: {after_insert}"
    );
    assert_eq!(pages_read_by(&c, "VACUUM vm").await, 1);
    // The rows of the pages skipped are estimated from the density the last count found,
    // as PostgreSQL's `vac_estimate_reltuples` does: near, not exact.
    for sql in [live, "SELECT reltuples FROM pg_class WHERE relname = 'vm'"] {
        let n: f64 = value(&c, sql).await.parse().expect("a number");
        assert!((n - 2001.0).abs() < 2001.0 * 0.02, "{sql}: {n}");
    }

    // FREEZE reads the pages that are not all-frozen, then skips them too; a plain
    // VACUUM skips all-frozen pages, which are all-visible.
    let freeze = pages_read_by(&c, "VACUUM (FREEZE) vm").await;
    assert!(freeze >= pages, "FREEZE reads what is not frozen: {freeze}");
    assert_eq!(pages_read_by(&c, "VACUUM (FREEZE) vm").await, 1);
    assert_eq!(pages_read_by(&c, "VACUUM vm").await, 1);
    assert_eq!(value(&c, "SELECT count(*) FROM vm").await, "2001");

    // A rolled-back change cleared its page too (its version is on it).
    exec(&c, "BEGIN").await;
    exec(&c, "DELETE FROM vm WHERE id = 7").await;
    exec(&c, "ROLLBACK").await;
    let after_rollback = pages_read_by(&c, "VACUUM vm").await;
    // Its page read and marked again, and the last page looked at.
    assert!((1..=3).contains(&after_rollback), "{after_rollback}");
    assert_eq!(value(&c, "SELECT count(*) FROM vm").await, "2001");
}

/// DROP TABLE takes the map with it; a table whose map is gone claims nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_goes_with_its_table() {
    let (server, dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE vm (id int)").await;
    exec(
        &c,
        "INSERT INTO vm SELECT g FROM generate_series(1, 100) AS g",
    )
    .await;
    exec(&c, "VACUUM vm").await;
    let maps = || {
        std::fs::read_dir(dir.path().join("base"))
            .expect("base")
            .filter(|e| {
                e.as_ref()
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .ends_with("_vm")
            })
            .count()
    };
    assert_eq!(maps(), 1);
    exec(&c, "DROP TABLE vm").await;
    assert_eq!(maps(), 0);
}

/// VACUUM cuts the empty pages at the end of a table, when it can lock the table without
/// waiting; the pages the table grows into again claim nothing in the visibility map.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vacuum_truncates_empty_pages_at_the_end() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    let size = "SELECT pg_relation_size('vm') / 8192";
    exec(&c, "CREATE TABLE vm (id int PRIMARY KEY, pad text)").await;
    exec(
        &c,
        "INSERT INTO vm SELECT g, repeat('x', 200) FROM generate_series(1, 10000) AS g",
    )
    .await;
    let full: u64 = value(&c, size).await.parse().expect("pages");
    exec(&c, "DELETE FROM vm WHERE id > 2000").await;

    // Another session reading the table holds a lock VACUUM does not wait for: the
    // dead rows go, the pages stay.
    let reader = connect(&server).await;
    exec(&reader, "BEGIN").await;
    exec(&reader, "SELECT count(*) FROM vm").await;
    exec(&c, "VACUUM vm").await;
    assert_eq!(value(&c, size).await.parse::<u64>().expect("pages"), full);
    exec(&reader, "COMMIT").await;

    exec(&c, "VACUUM vm").await;
    let cut: u64 = value(&c, size).await.parse().expect("pages");
    assert!(cut * 4 < full, "{full} pages cut to {cut}");
    assert_eq!(
        value(&c, "SELECT relpages FROM pg_class WHERE relname = 'vm'").await,
        cut.to_string()
    );
    assert_eq!(value(&c, "SELECT count(*) FROM vm").await, "2000");

    // Grown again: the new pages are not all-visible, whatever the map said of the
    // pages of those numbers before the cut.
    exec(
        &c,
        "INSERT INTO vm SELECT g, repeat('y', 200) FROM generate_series(20001, 28000) AS g",
    )
    .await;
    exec(&c, "SET enable_seqscan = off").await;
    exec(&c, "SET enable_bitmapscan = off").await;
    let lines = common::analyzed(&c, "SELECT count(*) FROM vm WHERE id > 20000").await;
    assert!(
        lines.iter().any(|l| l.trim() == "Heap Fetches: 8000"),
        "{lines:?}"
    );
    assert_eq!(
        value(&c, "SELECT count(*) FROM vm WHERE id > 20000").await,
        "8000"
    );
}
