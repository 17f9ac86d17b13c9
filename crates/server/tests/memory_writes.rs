//! Memory stays bounded while a statement writes many rows (issue 30): an INSERT ...
//! SELECT of 300,000 rows of about 250 bytes (some 75 MB, were they held whole) takes
//! its source's rows a batch at a time, and an UPDATE and a DELETE of them change them a
//! batch at a time; their RETURNING rows, and the rows whose foreign keys are checked
//! at the statement's end, are kept past `work_mem` in temporary files. The process's
//! peak memory (VmHWM) grows by at most 32 MB. The buffer pool is 4 MB here, so what the
//! pool holds cannot hide the bound. A test binary of its own: the peak is the process's.

mod common;

use common::{connect, exec, peak_kb, value};
use myriad_server::{Config, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_writes_go_a_batch_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        buffer_pool_pages: 512,
        autovacuum: false,
        ..Config::default()
    };
    let server = Server::start(&config).await.expect("server starts");
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE src (g int, t text)").await;
    exec(&c, "CREATE TABLE dst (g int, t text)").await;
    // Warm the pool, the WAL and the session up with the same statements, small.
    exec(
        &c,
        "INSERT INTO src SELECT g, repeat('x', 240) || g FROM generate_series(1, 20000) g",
    )
    .await;
    exec(&c, "INSERT INTO dst SELECT * FROM src").await;
    exec(&c, "TRUNCATE src, dst").await;
    let before = peak_kb();
    exec(
        &c,
        "INSERT INTO src SELECT g, repeat('x', 240) || g FROM generate_series(1, 300000) g",
    )
    .await;
    exec(&c, "INSERT INTO dst SELECT * FROM src").await;
    assert_eq!(value(&c, "SELECT count(*) FROM dst").await, "300000");
    assert_eq!(
        value(&c, "SELECT sum(length(t)) FROM dst").await,
        value(&c, "SELECT sum(length(t)) FROM src").await
    );
    exec(&c, "UPDATE dst SET g = g + 1").await;
    assert_eq!(value(&c, "SELECT min(g) FROM dst").await, "2");
    exec(&c, "DELETE FROM src WHERE g % 2 = 0").await;
    assert_eq!(value(&c, "SELECT count(*) FROM src").await, "150000");
    // RETURNING's rows stream from their store, by a simple Query and by an Execute.
    let (n, bytes) = returned(&c, "UPDATE dst SET g = g + 1 RETURNING *", false).await;
    assert_eq!(n, 300000);
    assert!(bytes > 70 << 20, "{bytes} bytes returned");
    let (n, _) = returned(&c, "DELETE FROM dst WHERE g % 3 = 0 RETURNING t", true).await;
    assert_eq!(n, 100000);
    // An INSERT ... SELECT whose foreign key is checked once every row is in (the key's
    // index built within a bound of its own: maintenance_work_mem's default is 64MB).
    exec(&c, "SET maintenance_work_mem = '1MB'").await;
    exec(&c, "ALTER TABLE src ADD PRIMARY KEY (g)").await;
    exec(&c, "CREATE TABLE kid (g int REFERENCES src, t text)").await;
    exec(&c, "INSERT INTO kid SELECT * FROM src").await;
    assert_eq!(value(&c, "SELECT count(*) FROM kid").await, "150000");
    let grown_mb = peak_kb().saturating_sub(before) / 1024;
    assert!(grown_mb <= 32, "peak memory grew by {grown_mb} MB");
}

/// The rows `sql` returns, and their text's bytes, counted and dropped as they come: by
/// a simple Query, or (`extended`) by an Execute with no row limit.
async fn returned(c: &tokio_postgres::Client, sql: &str, extended: bool) -> (usize, usize) {
    use futures::TryStreamExt;
    let (mut rows, mut bytes) = (0, 0);
    if extended {
        let stream = c
            .query_raw(sql, std::iter::empty::<i32>())
            .await
            .expect("query");
        futures::pin_mut!(stream);
        while let Some(row) = stream.try_next().await.expect("rows") {
            rows += 1;
            bytes += row.get::<_, &str>(0).len();
        }
        return (rows, bytes);
    }
    let stream = c.simple_query_raw(sql).await.expect("simple query");
    futures::pin_mut!(stream);
    while let Some(m) = stream.try_next().await.expect("rows") {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            rows += 1;
            bytes += (0..r.len())
                .filter_map(|i| r.get(i))
                .map(str::len)
                .sum::<usize>();
        }
    }
    (rows, bytes)
}
