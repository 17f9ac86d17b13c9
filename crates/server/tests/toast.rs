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

/// `pg_column_size` of a table's column is what its scan read (compressed, or out of
/// line, as stored), through each kind of scan, a join and an aggregate; of any other
/// value, its size stored inline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_column_size_is_the_stored_size() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE docs (id int PRIMARY KEY, note text, body text, n int8)",
    )
    .await;
    let big = incompressible(MB, 11);
    c.execute("INSERT INTO docs VALUES (1, 'abc', $1, NULL)", &[&big])
        .await
        .expect("insert");
    exec(
        &c,
        "INSERT INTO docs VALUES (2, NULL, repeat('x', 1000000), 5), (3, 'de', 'short', 6)",
    )
    .await;
    let sizes = "SELECT id, pg_column_size(note), pg_column_size(body), \
                 pg_column_size(docs.n), octet_length(body) FROM docs";
    // Out of line: the value's bytes in the TOAST relation; compressed inline: far
    // less than the value; plain inline: the value and its 4-byte length word.
    let expect = vec![
        format!("1|7|{MB}||{MB}"),
        "2||COMPRESSED|8|1000000".to_string(),
        "3|6|9|8|5".to_string(),
    ];
    let rows = |q: String| {
        let c = &c;
        async move {
            c.query(&q, &[])
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"))
                .iter()
                .map(|r| {
                    (0..r.len())
                        .map(|i| {
                            r.get::<_, Option<i32>>(i)
                                .map_or(String::new(), |v| v.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect::<Vec<_>>()
        }
    };
    let check = |got: Vec<String>, how: &str| {
        assert_eq!(got.len(), 3, "{how}: {got:?}");
        for (g, e) in got.iter().zip(&expect) {
            match e.split('|').nth(2) {
                Some("COMPRESSED") => {
                    let size: i64 = g.split('|').nth(2).unwrap().parse().unwrap();
                    assert!(size > 0 && size < 20_000, "{how}: compressed to {size}");
                }
                _ => assert_eq!(g, e, "{how}"),
            }
        }
    };
    check(
        rows(format!("{sizes} ORDER BY id")).await,
        "sequential scan",
    );
    exec(&c, "SET enable_seqscan = off").await;
    exec(&c, "SET enable_bitmapscan = off").await;
    let plan = |q: String| {
        let c = &c;
        async move {
            let rows = c
                .query(&format!("EXPLAIN {q}"), &[])
                .await
                .expect("explain");
            rows.iter()
                .map(|r| r.get::<_, String>(0))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    let q = format!("{sizes} WHERE id > 0 ORDER BY id");
    assert!(plan(q.clone()).await.contains("Index Scan"));
    check(rows(q.clone()).await, "index scan");
    exec(&c, "RESET enable_bitmapscan").await;
    exec(&c, "SET enable_indexscan = off").await;
    assert!(plan(q.clone()).await.contains("Bitmap Heap Scan"));
    check(rows(q).await, "bitmap scan");
    exec(&c, "RESET enable_seqscan").await;
    exec(&c, "RESET enable_indexscan").await;
    // In a filter, a join (qualified by an alias), an aggregate.
    assert_eq!(
        value(
            &c,
            "SELECT id FROM docs WHERE pg_column_size(body) > 100000"
        )
        .await,
        "1"
    );
    assert_eq!(
        value(
            &c,
            "SELECT d.id FROM docs d JOIN docs e ON e.id = d.id \
             WHERE pg_column_size(d.body) < pg_column_size(e.note) + 4"
        )
        .await,
        "3"
    );
    assert_eq!(
        number(&c, "SELECT max(pg_column_size(body)) FROM docs").await,
        MB as i64
    );
    // Spelled in capitals, as PostgreSQL folds it.
    assert_eq!(
        number(&c, "SELECT PG_COLUMN_SIZE(body) FROM docs WHERE id = 1").await,
        MB as i64
    );
    // Outside an aggregate of a grouped query: the grouped value's size.
    assert_eq!(
        value(
            &c,
            "SELECT pg_column_size(n) || ' ' || max(pg_column_size(body)) FROM docs \
             WHERE n IS NOT NULL GROUP BY n ORDER BY n LIMIT 1"
        )
        .await
        .split(' ')
        .next(),
        Some("8")
    );
    // Not read from a table: its size stored inline.
    assert_eq!(
        value(
            &c,
            "SELECT pg_column_size(1::int8) || ' ' || pg_column_size('abcd'::text) || ' ' \
             || pg_column_size(body || '') FROM docs WHERE id = 3"
        )
        .await,
        "8 8 9"
    );
    assert_eq!(
        value(&c, "SELECT pg_column_size(NULL::text) IS NULL").await,
        "t"
    );
}
