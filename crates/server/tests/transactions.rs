//! Concurrent sessions: readers never wait for writers, writers of different rows run in
//! parallel, writers of one row wait for each other and then behave as PostgreSQL's READ
//! COMMITTED and REPEATABLE READ do; many transfers keep the total.
//!
//! "Blocks" is checked by giving a statement that should block a moment (`BLOCK_WAIT`) and
//! seeing that it has not finished; that can only pass wrongly on a machine too slow to
//! finish a point update in that time, never fail wrongly. The statements that should not
//! block are awaited without a deadline: if one blocked, the test would hang and the test
//! runner's timeout reports it.

use std::time::Duration;

mod common;

use common::{autovacuum_round, connect, exec, sqlstate, start, start_without_autovacuum, value};
use tokio_postgres::SimpleQueryMessage;

const BLOCK_WAIT: Duration = Duration::from_millis(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_do_not_wait_for_writers_and_writers_of_other_rows_do_not_wait() {
    let (server, _dir) = start().await;
    let a = connect(&server).await;
    let b = connect(&server).await;
    exec(&a, "CREATE TABLE t (id int PRIMARY KEY, v int)").await;
    exec(&a, "INSERT INTO t VALUES (1, 0), (2, 0)").await;
    exec(
        &a,
        "BEGIN; INSERT INTO t VALUES (3, 0); UPDATE t SET v = 1 WHERE id = 1",
    )
    .await;
    // Dirty reads never happen: b sees the committed state, at once.
    assert_eq!(value(&b, "SELECT count(*) FROM t").await, "2");
    assert_eq!(value(&b, "SELECT v FROM t WHERE id = 1").await, "0");
    // Another row is free.
    exec(&b, "UPDATE t SET v = 2 WHERE id = 2").await;
    exec(&a, "COMMIT").await;
    assert_eq!(value(&b, "SELECT sum(v) FROM t").await, "3");
    assert_eq!(value(&b, "SELECT count(*) FROM t").await, "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_committed_rechecks_the_newest_version_no_lost_update() {
    let (server, _dir) = start().await;
    let a = connect(&server).await;
    let b = connect(&server).await;
    exec(&a, "CREATE TABLE c (id int PRIMARY KEY, n int)").await;
    exec(&a, "INSERT INTO c VALUES (1, 0), (2, 100)").await;
    exec(&a, "BEGIN; UPDATE c SET n = n + 1 WHERE id = 1").await;
    let blocked = tokio::spawn(async move {
        // Waits for a; then increments a's version, not the one it first saw.
        exec(&b, "UPDATE c SET n = n + 10 WHERE id = 1").await;
        // The WHERE clause is re-checked on the newest version: a moved n past 5.
        let r = b
            .simple_query("UPDATE c SET n = n * 1000 WHERE n < 5")
            .await
            .expect("update");
        (b, r)
    });
    tokio::time::sleep(BLOCK_WAIT).await;
    assert!(!blocked.is_finished(), "b waits for a's row");
    exec(&a, "UPDATE c SET n = n + 5 WHERE id = 1; COMMIT").await;
    let (b, _) = blocked.await.expect("b");
    assert_eq!(value(&b, "SELECT n FROM c WHERE id = 1").await, "16");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_committed_skips_a_row_deleted_or_moved_out_meanwhile() {
    let (server, _dir) = start().await;
    let a = connect(&server).await;
    let b = connect(&server).await;
    exec(&a, "CREATE TABLE d (id int PRIMARY KEY, k int)").await;
    exec(&a, "INSERT INTO d VALUES (1, 1), (2, 1)").await;
    exec(
        &a,
        "BEGIN; DELETE FROM d WHERE id = 1; UPDATE d SET k = 2 WHERE id = 2",
    )
    .await;
    let blocked = tokio::spawn(async move {
        let r = b.simple_query("UPDATE d SET k = 9 WHERE k = 1").await;
        let n = r.map(|msgs| {
            msgs.iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::CommandComplete(n) => Some(*n),
                    _ => None,
                })
                .expect("command complete")
        });
        (b, n)
    });
    tokio::time::sleep(BLOCK_WAIT).await;
    assert!(!blocked.is_finished(), "b waits for a");
    exec(&a, "COMMIT").await;
    let (b, n) = blocked.await.expect("b");
    assert_eq!(
        n.expect("update"),
        0,
        "one row is gone, the other no longer matches"
    );
    assert_eq!(value(&b, "SELECT k FROM d WHERE id = 2").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeatable_read_fails_on_a_concurrent_update_and_keeps_its_snapshot() {
    let (server, _dir) = start().await;
    let a = connect(&server).await;
    let b = connect(&server).await;
    exec(&a, "CREATE TABLE r (id int PRIMARY KEY, n int)").await;
    exec(&a, "INSERT INTO r VALUES (1, 0), (2, 0)").await;
    exec(&b, "BEGIN ISOLATION LEVEL REPEATABLE READ").await;
    assert_eq!(value(&b, "SELECT sum(n) FROM r").await, "0");
    exec(&a, "UPDATE r SET n = 1 WHERE id = 2").await;
    // Non-repeatable read does not happen under REPEATABLE READ.
    assert_eq!(value(&b, "SELECT sum(n) FROM r").await, "0");
    exec(&a, "BEGIN; UPDATE r SET n = 5 WHERE id = 1").await;
    let blocked = tokio::spawn(async move {
        let e = b.batch_execute("UPDATE r SET n = n + 1 WHERE id = 1").await;
        (b, e)
    });
    tokio::time::sleep(BLOCK_WAIT).await;
    assert!(!blocked.is_finished(), "b waits for a");
    exec(&a, "COMMIT").await;
    let (b, e) = blocked.await.expect("b");
    assert_eq!(sqlstate(&e.expect_err("40001")), "40001");
    let e = b.batch_execute("SELECT 1").await.expect_err("aborted");
    assert_eq!(sqlstate(&e), "25P02");
    exec(&b, "ROLLBACK").await;
    // Updating a row nobody touched since the snapshot is fine; so is one a rolled back
    // transaction touched.
    exec(&a, "BEGIN; UPDATE r SET n = 7 WHERE id = 2").await;
    exec(&b, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1").await;
    let waiting = tokio::spawn(async move {
        let e = b.batch_execute("UPDATE r SET n = n + 1 WHERE id = 2").await;
        (b, e)
    });
    tokio::time::sleep(BLOCK_WAIT).await;
    exec(&a, "ROLLBACK").await;
    let (b, e) = waiting.await.expect("b");
    e.expect("the blocker rolled back");
    exec(&b, "COMMIT").await;
    assert_eq!(value(&a, "SELECT n FROM r WHERE id = 2").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unique_check_waits_for_the_inserter() {
    let (server, _dir) = start().await;
    let a = connect(&server).await;
    let b = connect(&server).await;
    exec(&a, "CREATE TABLE u (id int PRIMARY KEY)").await;
    exec(&a, "BEGIN; INSERT INTO u VALUES (1)").await;
    let b = {
        let blocked = tokio::spawn(async move {
            let e = b.batch_execute("INSERT INTO u VALUES (1)").await;
            (b, e)
        });
        tokio::time::sleep(BLOCK_WAIT).await;
        assert!(!blocked.is_finished(), "b waits: a may still roll back");
        exec(&a, "ROLLBACK").await;
        let (b, e) = blocked.await.expect("b");
        e.expect("a rolled back: the key is free");
        b
    };
    exec(&a, "BEGIN; DELETE FROM u WHERE id = 1").await;
    let blocked = tokio::spawn(async move {
        let e = b.batch_execute("INSERT INTO u VALUES (1)").await;
        (b, e)
    });
    tokio::time::sleep(BLOCK_WAIT).await;
    assert!(!blocked.is_finished(), "b waits: a's delete may roll back");
    exec(&a, "ROLLBACK").await;
    let (_b, e) = blocked.await.expect("b");
    assert_eq!(sqlstate(&e.expect_err("the delete rolled back")), "23505");
}

/// Many clients move money between accounts, some transactions rolled back on purpose;
/// every snapshot sees the same total, and so does the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfers_keep_the_total() {
    const ACCOUNTS: i64 = 20;
    const CLIENTS: usize = 6;
    const TRANSFERS: usize = 150;
    let (server, _dir) = start().await;
    let setup = connect(&server).await;
    exec(
        &setup,
        "CREATE TABLE bank (id int PRIMARY KEY, balance int)",
    )
    .await;
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, 1000)")).collect();
    exec(
        &setup,
        &format!("INSERT INTO bank VALUES {}", values.join(", ")),
    )
    .await;
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let c = connect(&server).await;
        tasks.push(tokio::spawn(async move {
            let mut seed = client as u64 * 7919 + 17;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for i in 0..TRANSFERS {
                let from = (next() % ACCOUNTS as u64) as i64;
                let to = (from + 1 + (next() % (ACCOUNTS as u64 - 1)) as i64) % ACCOUNTS;
                let amount = next() % 50;
                let end = if i % 7 == 0 { "ROLLBACK" } else { "COMMIT" };
                // Lock in id order, as an application avoiding deadlocks would.
                let (first, second, d1, d2) = if from < to {
                    (from, to, -(amount as i64), amount as i64)
                } else {
                    (to, from, amount as i64, -(amount as i64))
                };
                exec(
                    &c,
                    &format!(
                        "BEGIN; UPDATE bank SET balance = balance + {d1} WHERE id = {first}; \
                         UPDATE bank SET balance = balance + {d2} WHERE id = {second}; {end}"
                    ),
                )
                .await;
                if i % 10 == 0 {
                    assert_eq!(
                        value(&c, "SELECT sum(balance) FROM bank").await,
                        (ACCOUNTS * 1000).to_string()
                    );
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
    }
    assert_eq!(
        value(&setup, "SELECT sum(balance) FROM bank").await,
        (ACCOUNTS * 1000).to_string()
    );
    assert_eq!(
        value(&setup, "SELECT count(*) FROM bank").await,
        ACCOUNTS.to_string()
    );
}

/// Foreign keys under concurrency: children inserted (FOR KEY SHARE on their parent),
/// parents updated without changing the key (which neither waits for a child's insert nor
/// makes one wait), children and parents deleted, parents inserted again, and
/// transactions doing two of these rolled back, all at once. Afterwards every child has
/// its parent, and every committed parent update is counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_keys_hold_under_concurrent_updates_and_deletes() {
    const PARENTS: u64 = 8;
    const CLIENTS: usize = 6;
    const OPS: usize = 150;
    let (server, _dir) = start().await;
    let setup = connect(&server).await;
    exec(
        &setup,
        "CREATE TABLE parent (id int PRIMARY KEY, n int); \
         CREATE TABLE child (id int PRIMARY KEY, pid int REFERENCES parent)",
    )
    .await;
    let values: Vec<String> = (0..PARENTS).map(|i| format!("({i}, 0)")).collect();
    exec(
        &setup,
        &format!("INSERT INTO parent VALUES {}", values.join(", ")),
    )
    .await;
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let c = connect(&server).await;
        tasks.push(tokio::spawn(async move {
            let mut seed = client as u64 * 104_729 + 3;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            // Committed increments of parent.n, and the n of the parents deleted.
            let (mut updates, mut removed) = (0i64, 0i64);
            for i in 0..OPS {
                let k = next() % PARENTS;
                let child = client * 100_000 + i;
                let result = match next() % 8 {
                    0..=2 => c
                        .execute(&format!("INSERT INTO child VALUES ({child}, {k})"), &[])
                        .await
                        .map(drop),
                    3 | 4 => c
                        .execute(&format!("UPDATE parent SET n = n + 1 WHERE id = {k}"), &[])
                        .await
                        .map(|n| updates += n as i64),
                    5 => c
                        .execute(&format!("DELETE FROM child WHERE pid = {k}"), &[])
                        .await
                        .map(drop),
                    6 if next() % 2 == 0 => c
                        .query(
                            &format!("DELETE FROM parent WHERE id = {k} RETURNING n"),
                            &[],
                        )
                        .await
                        .map(|rows| {
                            removed += rows
                                .iter()
                                .map(|r| i64::from(r.get::<_, i32>(0)))
                                .sum::<i64>()
                        }),
                    6 => c
                        .execute(&format!("INSERT INTO parent VALUES ({k}, 0)"), &[])
                        .await
                        .map(drop),
                    _ => {
                        let sql = format!(
                            "BEGIN; INSERT INTO child VALUES ({child}, {k}); \
                             UPDATE parent SET n = n + 1 WHERE id = {k}; ROLLBACK"
                        );
                        let r = c.batch_execute(&sql).await;
                        if r.is_err() {
                            exec(&c, "ROLLBACK").await;
                        }
                        r
                    }
                };
                if let Err(e) = result {
                    let code = sqlstate(&e);
                    // A missing or referenced parent, a parent already there, a deadlock.
                    assert!(
                        ["23503", "23505", "40P01"].contains(&code.as_str()),
                        "client {client} op {i}: {e}"
                    );
                }
            }
            (updates, removed)
        }));
    }
    let (mut updates, mut removed) = (0, 0);
    for t in tasks {
        let (u, r) = t.await.expect("client");
        updates += u;
        removed += r;
    }
    assert_eq!(
        value(
            &setup,
            "SELECT count(*) FROM child c LEFT JOIN parent p ON p.id = c.pid WHERE p.id IS NULL"
        )
        .await,
        "0",
        "children without a parent"
    );
    let kept: i64 = value(&setup, "SELECT coalesce(sum(n), 0) FROM parent")
        .await
        .parse()
        .expect("a sum");
    assert_eq!(kept + removed, updates, "parent updates lost or doubled");
}

/// Bytes of every relation file (heap and index pages; files grow as pages are added).
/// `base/pgsql_tmp`, the temporary files' directory, is no relation.
fn relation_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir.join("base"))
        .expect("base")
        .map(|e| e.expect("entry").metadata().expect("metadata"))
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The size of the relation file created first (a table's heap, before its indexes;
/// a fork such as `16384_vm` is not its main file).
fn first_relation_bytes(dir: &std::path::Path) -> u64 {
    let mut files: Vec<(u64, u64)> = std::fs::read_dir(dir.join("base"))
        .expect("base")
        .map(|e| e.expect("entry"))
        .filter(|e| e.file_name() != "pgsql_tmp")
        .filter_map(|e| {
            let oid = e.file_name().to_string_lossy().parse().ok()?;
            Some((oid, e.metadata().expect("metadata").len()))
        })
        .collect();
    files.sort();
    files[0].1
}

/// VACUUM gives back the space of versions nobody can see: a table updated over and over
/// stays the same size when vacuumed. Without VACUUM, pruning keeps its heap from
/// growing (its index entries wait for VACUUM: no HOT yet); an open snapshot holds
/// everything it can see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vacuum_and_pruning_keep_an_updated_table_from_growing() {
    const ROUNDS: usize = 30;
    let (server, dir) = start().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE v (id int PRIMARY KEY, n int, pad text)").await;
    let rows: Vec<String> = (0..300).map(|i| format!("({i}, 0, 'padding')")).collect();
    exec(&c, &format!("INSERT INTO v VALUES {}", rows.join(", "))).await;
    exec(&c, "UPDATE v SET n = n + 1").await;
    exec(&c, "VACUUM v").await;
    let start_size = relation_bytes(dir.path());
    for _ in 0..ROUNDS {
        exec(&c, "UPDATE v SET n = n + 1").await;
        exec(&c, "VACUUM v").await;
    }
    let vacuumed = relation_bytes(dir.path());
    assert!(
        vacuumed <= start_size * 2,
        "vacuumed: {start_size} -> {vacuumed} bytes"
    );
    // Without VACUUM, pruning alone reuses the heap space of versions no snapshot can see.
    let heap_vacuumed = first_relation_bytes(dir.path());
    for _ in 0..ROUNDS {
        exec(&c, "UPDATE v SET n = n + 1").await;
    }
    let heap_pruned = first_relation_bytes(dir.path());
    assert!(
        heap_pruned <= heap_vacuumed * 2,
        "pruning keeps the heap small: {heap_vacuumed} -> {heap_pruned} bytes"
    );
    assert_eq!(
        value(&c, "SELECT sum(n) FROM v").await,
        (300 * (1 + 2 * ROUNDS)).to_string()
    );
    assert_eq!(value(&c, "SELECT count(*) FROM v WHERE id = 7").await, "1");
    // An open snapshot keeps what it can see: neither pruning nor VACUUM takes it, and
    // the versions pile up until it ends.
    let reader = connect(&server).await;
    exec(&reader, "BEGIN ISOLATION LEVEL REPEATABLE READ").await;
    let before = value(&reader, "SELECT sum(n) FROM v").await;
    for _ in 0..ROUNDS {
        exec(&c, "UPDATE v SET n = n + 1").await;
    }
    exec(&c, "VACUUM v").await;
    let heap_held = first_relation_bytes(dir.path());
    assert!(
        heap_held > heap_pruned * 3,
        "an open snapshot holds the versions: {heap_pruned} -> {heap_held} bytes"
    );
    assert_eq!(value(&reader, "SELECT sum(n) FROM v").await, before);
    exec(&reader, "COMMIT").await;
    exec(&c, "UPDATE v SET n = 0").await;
    assert_eq!(value(&c, "SELECT sum(n) FROM v").await, "0");
    let e = c
        .batch_execute("BEGIN; VACUUM v")
        .await
        .expect_err("not in a block");
    assert_eq!(sqlstate(&e), "25001");
}

/// Autovacuum's triggers, PostgreSQL's: a table is vacuumed once its dead rows pass
/// 50 + 20% of its size, or the rows inserted since its last VACUUM pass 1000 + 20%,
/// and not again until it changes again; vacuumed that way, the table stays small.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autovacuum_vacuums_tables_that_changed_enough() {
    let (server, dir) = start_without_autovacuum().await;
    let round = || async { autovacuum_round(&server).await.vacuumed };
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE a (id int PRIMARY KEY, n int)").await;
    exec(&c, "CREATE TABLE quiet (id int)").await;
    exec(&c, "INSERT INTO quiet VALUES (1)").await;
    let rows: Vec<String> = (0..200).map(|i| format!("({i}, 0)")).collect();
    exec(&c, &format!("INSERT INTO a VALUES {}", rows.join(", "))).await;
    assert_eq!(
        round().await,
        0,
        "200 inserted rows are under 1000, none dead"
    );
    exec(&c, "UPDATE a SET n = 1 WHERE id < 60").await;
    assert_eq!(round().await, 0, "60 dead rows are under 50 + 20% of 200");
    exec(&c, "UPDATE a SET n = 2 WHERE id < 60").await;
    assert_eq!(round().await, 1, "120 dead rows are over 90");
    assert_eq!(round().await, 0, "nothing changed since");
    let start_size = relation_bytes(dir.path());
    for _ in 0..30 {
        exec(&c, "UPDATE a SET n = n + 1").await;
        round().await;
    }
    let size = relation_bytes(dir.path());
    assert!(size <= start_size * 2, "{start_size} -> {size} bytes");
    assert_eq!(
        value(&c, "SELECT sum(n) FROM a").await,
        (120 + 200 * 30).to_string()
    );
    // WITH (autovacuum_enabled = false) keeps autovacuum away; ANALYZE's estimate of
    // the table's size sets the threshold.
    exec(
        &c,
        "CREATE TABLE off (id int) WITH (autovacuum_enabled = false)",
    )
    .await;
    exec(
        &c,
        "INSERT INTO off SELECT g FROM generate_series(1, 500) AS g",
    )
    .await;
    assert_eq!(round().await, 0, "autovacuum_enabled = false");
    exec(&c, "CREATE TABLE big (id int)").await;
    exec(
        &c,
        "INSERT INTO big SELECT g FROM generate_series(1, 1000) AS g",
    )
    .await;
    // The round ANALYZEs it too: 1000 rows make the thresholds 1200 and 250.
    assert_eq!(round().await, 0, "1000 inserted rows are not over 1000");
    exec(
        &c,
        "INSERT INTO big SELECT g FROM generate_series(1001, 1201) AS g",
    )
    .await;
    assert_eq!(round().await, 1, "1201 inserted rows are over 1200");
    exec(&c, "DELETE FROM big WHERE id <= 200").await;
    assert_eq!(round().await, 0, "200 dead rows are under 50 + 20% of 1201");
    exec(&c, "ANALYZE big").await;
    exec(&c, "DELETE FROM big WHERE id <= 260").await;
    assert_eq!(
        round().await,
        1,
        "ANALYZE counted 1001 rows: 260 dead rows are over 250.2"
    );
}
