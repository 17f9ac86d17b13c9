//! The seed's regression (lesson L4), as a test: an index-only scan asks the file
//! system nothing per tuple, page or query about the visibility map, whether it exists
//! (a never-vacuumed table has none) or how long it is. `myriad_stat_fd.probes` counts
//! every open (found or not) and size read of a relation file (smgr rule 1); after the
//! first scan, more scans add none.

mod common;

use common::{connect, exec, start_without_autovacuum, value};

async fn probes(c: &tokio_postgres::Client) -> u64 {
    value(c, "SELECT probes FROM myriad_stat_fd")
        .await
        .parse()
        .expect("a count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_only_scans_probe_no_file_for_the_map() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE w5 (a int PRIMARY KEY)").await;
    exec(
        &c,
        "INSERT INTO w5 SELECT g FROM generate_series(1, 10000) AS g",
    )
    .await;
    exec(&c, "ANALYZE w5").await;
    exec(&c, "SET enable_seqscan = off").await;
    exec(&c, "SET enable_bitmapscan = off").await;
    let scan = "SELECT count(*) FROM w5 WHERE a <= 10000";
    let lines = common::rows(&c, &format!("EXPLAIN (COSTS OFF) {scan}"))
        .await
        .concat();
    assert_eq!(lines[0], "Aggregate", "{lines:?}");
    assert!(
        lines[1].contains("Index Only Scan using w5_pkey"),
        "{lines:?}"
    );
    // Never vacuumed: no map. The first scan may look for it once.
    assert_eq!(value(&c, scan).await, "10000");
    let before = probes(&c).await;
    for _ in 0..3 {
        assert_eq!(value(&c, scan).await, "10000");
    }
    assert_eq!(probes(&c).await, before, "no map: nothing asked again");
    let plan = common::analyzed(&c, scan).await;
    assert!(
        plan.iter().any(|l| l.trim() == "Heap Fetches: 10000"),
        "{plan:?}"
    );

    // Vacuumed: the map exists; still nothing asked per scan once it is known.
    exec(&c, "VACUUM w5").await;
    assert_eq!(value(&c, scan).await, "10000");
    let before = probes(&c).await;
    for _ in 0..3 {
        assert_eq!(value(&c, scan).await, "10000");
    }
    assert_eq!(probes(&c).await, before, "a map: nothing asked again");
    let plan = common::analyzed(&c, scan).await;
    assert!(
        plan.iter().any(|l| l.trim() == "Heap Fetches: 0"),
        "{plan:?}"
    );
}
