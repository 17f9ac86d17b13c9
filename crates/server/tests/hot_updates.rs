//! HOT updates (access rule 11): 100,000 updates of a column no index holds add no
//! index entries, so the table's indexes stay the size they were, and the table keeps
//! its pages (pruning gives each page's dead versions back at once); an update of an
//! indexed column still adds entries.

mod common;

use common::{connect, exec, start_without_autovacuum, value};

async fn size(c: &tokio_postgres::Client, rel: &str) -> u64 {
    value(c, &format!("SELECT pg_relation_size('{rel}')"))
        .await
        .parse()
        .expect("size")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_of_an_unindexed_column_leave_the_indexes_as_they_were() {
    // Autovacuum off: the space comes back through pruning alone.
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE hot (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 50)",
    )
    .await;
    exec(&c, "CREATE INDEX hot_pad ON hot (pad)").await;
    exec(
        &c,
        "INSERT INTO hot SELECT g, 0, 'p' || g FROM generate_series(1, 100) AS g",
    )
    .await;
    let rels = ["hot_pkey", "hot_pad", "hot"];
    let mut before = Vec::new();
    for r in rels {
        before.push(size(&c, r).await);
    }
    // 100,000 updates: every row, 1,000 times, each statement its own transaction.
    for _ in 0..1000 {
        exec(&c, "UPDATE hot SET v = v + 1").await;
    }
    for (r, b) in rels.iter().zip(&before) {
        assert_eq!(size(&c, r).await, *b, "{r} changed size");
    }
    exec(&c, "SELECT pg_stat_force_next_flush()").await;
    let hot: u64 = value(
        &c,
        "SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'hot'",
    )
    .await
    .parse()
    .expect("count");
    // A few of the first updates find no room on their page (PostgreSQL 15 makes 99,993
    // of them HOT in the same run).
    assert!(hot >= 99_900, "{hot} of 100,000 updates were HOT");
    exec(&c, "SET enable_seqscan = off").await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM hot WHERE id > 0 AND v = 1000").await,
        "100"
    );
    assert_eq!(
        value(&c, "SELECT count(*) FROM hot WHERE pad > '' AND v = 1000").await,
        "100"
    );
    // An update of an indexed column adds an entry to that index (and, a new version
    // off the chain, to the others).
    exec(&c, "UPDATE hot SET pad = pad || 'x'").await;
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM hot WHERE pad LIKE '%x' AND pad > ''"
        )
        .await,
        "100"
    );
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM hot WHERE pad NOT LIKE '%x' AND pad > ''"
        )
        .await,
        "0"
    );
}

/// A reader that prunes a crowded page whose HOT chains collapse (no dead version left
/// behind a stub) marks it all-visible, as VACUUM would: an index-only scan then reads
/// no heap tuple (access rules 9 and 11). PostgreSQL 15's pruning leaves that to VACUUM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_marks_a_page_whose_chains_collapsed_all_visible() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    let heap_fetches = |lines: Vec<String>| {
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix("Heap Fetches: ").map(str::to_owned))
            .expect("an index-only scan")
    };
    for table in ["by_scan", "by_index"] {
        exec(
            &c,
            &format!("CREATE TABLE {table} (id int PRIMARY KEY, v int, pad text)"),
        )
        .await;
        // 70 rows: one page, under a tenth of it free.
        exec(
            &c,
            &format!(
                "INSERT INTO {table} SELECT g, 0, repeat('x', 60) FROM generate_series(1, 70) AS g"
            ),
        )
        .await;
        exec(&c, &format!("VACUUM {table}")).await;
        assert_eq!(size(&c, table).await, 8192);
        // HOT updates of one row, each its own transaction: the page's mark goes.
        for _ in 0..5 {
            exec(&c, &format!("UPDATE {table} SET v = v + 1 WHERE id = 1")).await;
        }
    }
    // A sequential scan meets the crowded page and prunes it: row 1's chain collapses
    // into a redirect to its newest version, and nothing on the page is dead.
    assert_eq!(
        value(&c, "SELECT sum(v) FROM by_scan WHERE v >= 0").await,
        "5"
    );
    exec(&c, "SET enable_seqscan = off").await;
    exec(&c, "SET enable_bitmapscan = off").await;
    let ios = "SELECT id FROM by_scan WHERE id <= 70";
    assert_eq!(heap_fetches(common::analyzed(&c, ios).await), "0");
    // An index-only scan's first heap fetch, of row 1's chain, prunes the page the same
    // way: the other 69 rows need none.
    let ios = "SELECT id FROM by_index WHERE id <= 70";
    assert_eq!(heap_fetches(common::analyzed(&c, ios).await), "1");
    assert_eq!(heap_fetches(common::analyzed(&c, ios).await), "0");
    assert_eq!(
        value(&c, "SELECT count(*) FROM by_index WHERE id <= 70").await,
        "70"
    );
}
