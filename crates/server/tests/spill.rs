//! Sorts past `work_mem` go to temporary files (issue 30, storage temp rules): EXPLAIN
//! ANALYZE says so, the files are gone when the query ends (done, failed or canceled),
//! and a restart empties the directory of what a crash would leave.

mod common;

use common::{analyzed, connect, exec, rows, sqlstate, tiny_pool_config};
use myriad_server::Server;

/// `query`'s HashAggregate wrote files: EXPLAIN ANALYZE shows its batches and disk
/// use, and the files are gone once it ends.
async fn hash_aggregate_spills(
    c: &tokio_postgres::Client,
    temp: &storage::tempfile::TempSpace,
    query: &str,
) {
    let made = temp.files_created();
    let plan = analyzed(c, query).await;
    assert!(
        plan.iter()
            .any(|l| l.contains("Batches: ") && l.contains("Disk Usage: ")),
        "{query}: {plan:?}"
    );
    assert!(temp.files_created() > made, "{query}");
    assert_eq!(temp.present(), 0, "{query}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sort_spills_and_its_files_go_with_the_query() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let temp = server.database().temp_space().clone();
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE s (g int, t text)").await;
    exec(
        &c,
        "INSERT INTO s SELECT g, ((g * 7919) % 20011)::text FROM generate_series(1, 20000) g",
    )
    .await;
    exec(&c, "SET work_mem = '64kB'").await;
    let stats = "SELECT temp_files, temp_bytes, xact_commit FROM pg_stat_database \
                 WHERE datname = current_database()";
    let counted = |r: Vec<Vec<String>>| -> Vec<u64> {
        r[0].iter().map(|v| v.parse().expect("a count")).collect()
    };
    let before = counted(rows(&c, stats).await);
    let plan = analyzed(&c, "SELECT * FROM s ORDER BY t").await;
    assert!(
        plan.iter()
            .any(|l| l.contains("Sort Method: external merge  Disk: ")),
        "{plan:?}"
    );
    let made = temp.files_created();
    assert!(made > 2, "runs written: {made}");
    assert!(temp.bytes_written() > 64 * 1024);
    assert_eq!(temp.present(), 0, "the runs went with the query");
    // pg_stat_database counts them, as PostgreSQL does (and the transactions).
    let after = counted(rows(&c, stats).await);
    assert!(after[0] >= before[0] + made, "{before:?} {after:?}");
    assert!(after[1] >= before[1] + 64 * 1024, "{before:?} {after:?}");
    assert!(after[2] > before[2], "{before:?} {after:?}");

    // A query that fails while its sort's runs exist leaves none behind.
    let e = c
        .batch_execute("SELECT t, 1 / (g - 20000) FROM s ORDER BY t")
        .await
        .expect_err("division by zero");
    assert_eq!(sqlstate(&e), "22012");
    assert!(temp.files_created() > made);
    assert_eq!(temp.present(), 0);

    // A nested loop's Materialize keeps what work_mem cannot hold in a file too.
    exec(&c, "CREATE TABLE few (a int)").await;
    exec(&c, "INSERT INTO few VALUES (1), (2), (3)").await;
    exec(&c, "SET enable_hashjoin = off; SET enable_mergejoin = off").await;
    let made = temp.files_created();
    let joined = "SELECT count(*), sum(x.a * y.g) FROM few x LEFT JOIN s y ON y.g % 1000 = x.a";
    assert_eq!(rows(&c, joined).await, vec![vec!["60", "1140280"]]);
    assert_eq!(temp.files_created(), made + 1);
    assert_eq!(temp.present(), 0);
    exec(&c, "RESET enable_hashjoin; RESET enable_mergejoin").await;

    // So does a hash aggregate past its memory, for the groups it cannot hold.
    exec(&c, "SET enable_sort = off").await;
    hash_aggregate_spills(&c, &temp, "SELECT g % 5000, count(*) FROM s GROUP BY 1").await;
    // A bitmap past work_mem keeps pages, not addresses: EXPLAIN says how many.
    exec(&c, "CREATE INDEX s_g ON s (g)").await;
    exec(&c, "SET enable_seqscan = off; SET enable_indexscan = off").await;
    let plan = analyzed(&c, "SELECT count(*) FROM s WHERE g < 15000").await;
    assert!(
        plan.iter()
            .any(|l| l.contains("Heap Blocks: ") && l.contains(" lossy=")),
        "{plan:?}"
    );
    assert_eq!(
        rows(&c, "SELECT count(*) FROM s WHERE g < 15000").await,
        vec![vec!["14999"]]
    );
    exec(&c, "RESET enable_seqscan; RESET enable_indexscan").await;
    // A DISTINCT's HashAggregate too.
    hash_aggregate_spills(&c, &temp, "SELECT DISTINCT t FROM s").await;
    exec(&c, "RESET enable_sort").await;

    // And a hash join, in batches.
    exec(&c, "SET enable_mergejoin = off; SET enable_nestloop = off").await;
    let made = temp.files_created();
    let plan = analyzed(&c, "SELECT count(*) FROM s a JOIN s b ON a.g = b.g").await;
    // Batches doubled from 8 until the first fits the memory.
    let batches: Vec<usize> = plan
        .iter()
        .filter_map(|l| l.split("Batches: ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(batches.first().is_some_and(|&n| n > 8), "{plan:?}");
    assert_eq!(
        rows(&c, "SELECT count(*) FROM s a JOIN s b ON a.g = b.g").await,
        vec![vec!["20000"]]
    );
    assert!(temp.files_created() > made);
    assert_eq!(temp.present(), 0);
    exec(&c, "RESET enable_mergejoin; RESET enable_nestloop").await;

    // In memory, nothing is written.
    exec(&c, "RESET work_mem").await;
    let made = temp.files_created();
    let plan = analyzed(&c, "SELECT * FROM s ORDER BY t").await;
    assert!(
        plan.iter().any(|l| l.contains("Sort Method: quicksort")),
        "{plan:?}"
    );
    assert_eq!(temp.files_created(), made);
    drop(c);
    server.shutdown().await.expect("clean shutdown");

    // What a crash leaves in the directory goes at the next start.
    let tmp_dir = dir.path().join("base").join("pgsql_tmp");
    std::fs::write(tmp_dir.join("pgsql_tmp7"), b"left by a crash").expect("write");
    let server = Server::start(&config).await.expect("server restarts");
    assert_eq!(server.database().temp_space().present(), 0);
    server.shutdown().await.expect("clean shutdown");
}
