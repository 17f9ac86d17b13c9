//! A cursor reading `SELECT *` of a 2,000,000-row table keeps the process's peak memory
//! (VmHWM) within 32 MB of where it stood with the table loaded and read (issue 30):
//! FETCH 1000 at a time, then FETCH ALL of the rest, each batch streamed as it is made.
//! Held whole, the rows are about 200 MB. A test binary of its own: the peak is the
//! process's (the client's included).

mod common;

use common::{connect, exec, peak_kb, value};
use futures::TryStreamExt;

/// The rows `sql` returns, counted and dropped as they come.
async fn count_rows(c: &tokio_postgres::Client, sql: &str) -> usize {
    let stream = c.simple_query_raw(sql).await.expect("query");
    futures::pin_mut!(stream);
    let mut n = 0;
    while let Some(m) = stream.try_next().await.expect("rows") {
        if let tokio_postgres::SimpleQueryMessage::Row(_) = m {
            n += 1;
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_over_two_million_rows_stays_within_32_mb() {
    let (server, _dir) = common::start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE big (g int, t text)").await;
    exec(
        &c,
        "INSERT INTO big SELECT g, 'row number ' || g FROM generate_series(1, 2000000) g",
    )
    .await;
    assert_eq!(value(&c, "SELECT count(*) FROM big").await, "2000000");
    let before = peak_kb();
    exec(&c, "BEGIN; DECLARE all_rows CURSOR FOR SELECT * FROM big").await;
    let mut read = 0;
    for _ in 0..100 {
        read += count_rows(&c, "FETCH 1000 FROM all_rows").await;
    }
    read += count_rows(&c, "FETCH ALL FROM all_rows").await;
    exec(&c, "COMMIT").await;
    assert_eq!(read, 2_000_000);
    let grown_mb = peak_kb().saturating_sub(before) / 1024;
    assert!(grown_mb <= 32, "peak memory grew by {grown_mb} MB");
}
