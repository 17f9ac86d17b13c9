//! TOAST through SQL (access rule 12): a 1 MB value is stored out of line, so its row
//! adds at most a page to the table; a query that does not read the column reads none
//! of the TOAST relation's pages; an UPDATE of another column keeps the value's pointer
//! and writes far less than the value to the WAL; VACUUM gives the chunks of deleted
//! values back; large repetitive values are compressed inline.

mod common;

use common::{connect, exec, start_without_autovacuum, value};

/// `n` bytes no compressor shrinks: printable, from a xorshift generator.
fn incompressible(n: usize, seed: u64) -> String {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (b'!' + (x % 90) as u8) as char
        })
        .collect()
}

async fn number(c: &tokio_postgres::Client, sql: &str) -> i64 {
    value(c, sql)
        .await
        .parse()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Pages of table `t`'s TOAST relation asked of the buffer pool so far.
async fn toast_pages(c: &tokio_postgres::Client, t: &str) -> i64 {
    exec(c, "SELECT pg_stat_force_next_flush()").await;
    number(
        c,
        &format!(
            "SELECT toast_blks_read + toast_blks_hit FROM pg_statio_user_tables \
             WHERE relname = '{t}'"
        ),
    )
    .await
}

const MB: usize = 1 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_value_lives_out_of_line() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE docs (id int PRIMARY KEY, note text, body text)",
    )
    .await;
    let big = incompressible(MB, 7);
    c.execute("INSERT INTO docs VALUES (1, 'first', $1)", &[&big])
        .await
        .expect("insert");
    // The row is small: its value is a pointer.
    assert!(number(&c, "SELECT pg_relation_size('docs')").await <= 8192);
    let table = number(&c, "SELECT pg_table_size('docs')").await;
    assert!(
        table > MB as i64,
        "pg_table_size counts the TOAST relation: {table}"
    );
    // It reads back whole.
    let back: String = c
        .query_one("SELECT body FROM docs WHERE id = 1", &[])
        .await
        .expect("select")
        .get(0);
    assert!(back == big, "the value read back differs");

    // A query that does not read the column reads no TOAST page; one that does, reads
    // them all.
    let before = toast_pages(&c, "docs").await;
    assert_eq!(value(&c, "SELECT id FROM docs").await, "1");
    assert_eq!(
        value(&c, "SELECT note FROM docs WHERE id = 1").await,
        "first"
    );
    assert_eq!(toast_pages(&c, "docs").await, before);
    assert_eq!(number(&c, "SELECT length(body) FROM docs").await, MB as i64);
    let read = toast_pages(&c, "docs").await - before;
    assert!(read >= (MB / 8192) as i64, "{read} TOAST pages read");
    // ANALYZE counts a value too wide for statistics by its stored size, unread (a
    // sample of such rows would not fit memory).
    let before = toast_pages(&c, "docs").await;
    exec(&c, "ANALYZE docs").await;
    assert_eq!(toast_pages(&c, "docs").await, before);
    assert_eq!(
        value(
            &c,
            "SELECT null_frac || ' ' || (avg_width < 100) FROM pg_stats \
             WHERE tablename = 'docs' AND attname = 'body'"
        )
        .await,
        "0 true"
    );

    // An UPDATE of another column keeps the pointer: far less than the value is logged.
    let wal = server.database().wal().clone();
    let start = wal.insert_lsn();
    exec(&c, "UPDATE docs SET note = 'second' WHERE id = 1").await;
    let logged = wal.insert_lsn() - start;
    assert!(
        logged < 64 * 1024,
        "{logged} bytes of WAL for a small update"
    );
    assert_eq!(
        value(&c, "SELECT note || length(body) FROM docs").await,
        format!("second{MB}")
    );
    // A new value is logged whole.
    let start = wal.insert_lsn();
    exec(&c, "UPDATE docs SET body = body || 'x' WHERE id = 1").await;
    let logged = wal.insert_lsn() - start;
    assert!(logged > MB as u64, "{logged} bytes of WAL for a new value");
    let back: String = c
        .query_one("SELECT body FROM docs", &[])
        .await
        .expect("select")
        .get(0);
    assert!(back.len() == MB + 1 && back.starts_with(&big) && back.ends_with('x'));

    // Both values' chunks are there (the first for snapshots that still see it); deleted
    // and vacuumed, they go, and the TOAST relation is cut back.
    let toast = number(
        &c,
        "SELECT pg_table_size('docs') - pg_relation_size('docs')",
    )
    .await;
    assert!(toast > 2 * MB as i64, "{toast}");
    exec(&c, "DELETE FROM docs").await;
    exec(&c, "VACUUM docs").await;
    let toast = number(
        &c,
        "SELECT pg_table_size('docs') - pg_relation_size('docs')",
    )
    .await;
    assert!(toast < 64 * 1024, "{toast} bytes left after VACUUM");
    let other = incompressible(MB, 11);
    c.execute("INSERT INTO docs VALUES (2, 'third', $1)", &[&other])
        .await
        .expect("insert");
    let back: String = c
        .query_one("SELECT body FROM docs WHERE id = 2", &[])
        .await
        .expect("select")
        .get(0);
    assert!(back == other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repetitive_values_are_compressed_inline() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE logs (id int, line text, data bytea)").await;
    // 100 rows of 170 kB each, compressed to under a kilobyte: a few pages, and no TOAST
    // page.
    exec(
        &c,
        "INSERT INTO logs SELECT g, repeat('line ' || g, 20000), \
         repeat('x', 50000)::bytea FROM generate_series(1, 100) AS g",
    )
    .await;
    assert!(number(&c, "SELECT pg_relation_size('logs')").await <= 16 * 8192);
    let before = toast_pages(&c, "logs").await;
    assert_eq!(
        value(
            &c,
            "SELECT count(*) FROM logs WHERE line = repeat('line ' || id, 20000) \
             AND length(data) = 50000"
        )
        .await,
        "100"
    );
    assert_eq!(
        toast_pages(&c, "logs").await,
        before,
        "no value went out of line"
    );
}
