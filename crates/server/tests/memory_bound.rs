//! Memory stays bounded when work_mem is small (issue 30): a sort, a hash aggregate, a
//! DISTINCT, an EXCEPT, a NOT IN subquery, a hash join and a nested loop's Materialize
//! over 1,000,000 rows each go to temporary files, and the process's peak memory (VmHWM,
//! read from /proc) grows by at most 32 MB over where it stood with the table loaded and
//! read. Without spilling, the sort alone
//! holds well over that. A big result sent to a client that keeps none of it (a simple
//! Query, an Execute with no row limit, a portal fetched 1,000 rows at a time, a cursor
//! FETCHed 1,000 rows at a time and then with FETCH ALL (it keeps what it read for
//! moving back; FETCH ALL's rows go through a store of their own), and COPY TO
//! STDOUT) stays within the same bound: the rows go out in batches as they are made.
//! Held whole, as before, the result alone is about 250 MB. So does a client that stops
//! reading such a result: its session waits with one batch, and the others go on. So
//! does CREATE INDEX over the table with `maintenance_work_mem` at 1MB, its sort in
//! runs on disk. A test binary of its own: the peak is the process's (the client's
//! included).

mod common;

use common::{connect, exec, peak_kb, value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spilling_operators_keep_the_peak_memory_bounded() {
    let (server, _dir) = common::start_without_autovacuum().await;
    let temp = server.database().temp_space().clone();
    let mut c = connect(&server).await;
    exec(&c, "CREATE TABLE big (g int, t text)").await;
    exec(
        &c,
        "INSERT INTO big SELECT g, 'row number ' || ((g::bigint * 7919) % 1000003) FROM generate_series(1, 1000000) g",
    )
    .await;
    exec(&c, "CREATE TABLE few (a int)").await;
    exec(&c, "INSERT INTO few VALUES (1), (2), (3)").await;
    assert_eq!(value(&c, "SELECT count(*) FROM big").await, "1000000");
    let before = peak_kb();
    let made = temp.files_created();
    exec(&c, "SET work_mem = '64kB'").await;
    // A sort, its rows counted above it (the result is not sent).
    assert_eq!(
        value(&c, "SELECT count(*) FROM (SELECT t FROM big ORDER BY t) x").await,
        "1000000"
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
    // A DISTINCT over a million distinct texts, and a set operation of them.
    assert_eq!(
        value(&c, "SELECT count(*) FROM (SELECT DISTINCT t FROM big) x").await,
        "1000000"
    );
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM (SELECT t FROM big EXCEPT SELECT t FROM big WHERE g % 2 = 0) x"
        )
        .await,
        "500000"
    );
    exec(&c, "RESET enable_sort").await;
    // An uncorrelated NOT IN over the table's million texts.
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM few WHERE a::text NOT IN (SELECT t FROM big)"
        )
        .await,
        "3"
    );
    // A hash join of the table with itself.
    exec(&c, "SET enable_mergejoin = off; SET enable_nestloop = off").await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM big a JOIN big b ON a.g = b.g").await,
        "1000000"
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
        "30"
    );
    exec(&c, "RESET work_mem").await;
    let wide = "SELECT g, t, t || t || t || t FROM big";
    assert_eq!(streamed(&mut c, wide).await, [1_000_000; 5]);
    // A client that stops reading holds up only its own query: its session waits to
    // send its next batch, holding one, while the others go on.
    let mut stalled = common::raw::Conn::connect(server.local_addr()).await;
    stalled.send(&common::raw::query(wide)).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM big WHERE g <= 10").await,
        "10"
    );
    drop(stalled);
    // CREATE INDEX's sort past maintenance_work_mem: runs in temporary files, merged
    // as the pages are written.
    exec(&c, "SET maintenance_work_mem = '1MB'").await;
    let before_index = temp.files_created();
    exec(&c, "CREATE INDEX big_t ON big (t)").await;
    assert!(
        temp.files_created() > before_index + 4,
        "the index's sort spilled"
    );
    exec(&c, "SET enable_seqscan = off").await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM big WHERE t > ''").await,
        "1000000"
    );
    exec(&c, "RESET enable_seqscan").await;
    let grown_mb = peak_kb().saturating_sub(before) / 1024;
    assert!(
        temp.files_created() > made + 4,
        "every operator spilled: {} files",
        temp.files_created() - made
    );
    assert_eq!(temp.present(), 0);
    assert!(grown_mb <= 32, "peak memory grew by {grown_mb} MB");
}

/// The rows of `sql`, counted and dropped as they come: by a simple Query, by an Execute
/// with no row limit, by a portal fetched 1,000 rows at a time, by a cursor (FETCH 1000
/// three times, then FETCH ALL), and as
/// the lines of COPY TO STDOUT.
async fn streamed(c: &mut tokio_postgres::Client, sql: &str) -> [usize; 5] {
    use futures::TryStreamExt;
    let mut simple = 0;
    let stream = c.simple_query_raw(sql).await.expect("simple query");
    futures::pin_mut!(stream);
    while let Some(m) = stream.try_next().await.expect("rows") {
        if let tokio_postgres::SimpleQueryMessage::Row(_) = m {
            simple += 1;
        }
    }
    let mut extended = 0;
    let stream = c
        .query_raw(sql, std::iter::empty::<i32>())
        .await
        .expect("query");
    futures::pin_mut!(stream);
    while stream.try_next().await.expect("rows").is_some() {
        extended += 1;
    }
    let mut fetched = 0;
    let tx = c.transaction().await.expect("begin");
    let portal = tx.bind(sql, &[]).await.expect("bind");
    loop {
        let rows = tx.query_portal(&portal, 1000).await.expect("fetch");
        if rows.is_empty() {
            break;
        }
        fetched += rows.len();
    }
    tx.commit().await.expect("commit");
    let mut cursor = 0;
    exec(c, &format!("BEGIN; DECLARE big_cursor CURSOR FOR {sql}")).await;
    for _ in 0..3 {
        let rows = c
            .simple_query("FETCH 1000 FROM big_cursor")
            .await
            .expect("fetch");
        cursor += rows
            .iter()
            .filter(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)))
            .count();
    }
    // The rest in one FETCH ALL, streamed from a store as the cursor moves.
    let stream = c
        .simple_query_raw("FETCH ALL FROM big_cursor")
        .await
        .expect("fetch all");
    futures::pin_mut!(stream);
    while let Some(m) = stream.try_next().await.expect("rows") {
        if let tokio_postgres::SimpleQueryMessage::Row(_) = m {
            cursor += 1;
        }
    }
    exec(c, "COMMIT").await;
    let mut lines = 0;
    let stream = c
        .copy_out(&format!("COPY ({sql}) TO STDOUT"))
        .await
        .expect("copy out");
    futures::pin_mut!(stream);
    while let Some(data) = stream.try_next().await.expect("copy data") {
        lines += data.iter().filter(|&&b| b == b'\n').count();
    }
    [simple, extended, fetched, cursor, lines]
}
