//! Relation locks as SQL sees them: `pg_locks` and `pg_stat_activity` while a session
//! waits, the timeouts that end waits and sessions, and a session's locks going with it.
//! (The isolation specs, `tests/isolation`, check lock conflicts against PostgreSQL.)

use std::time::Duration;

mod common;

use common::{connect, exec, sqlstate, start};
use tokio_postgres::{Client, SimpleQueryMessage};

/// Every row of a query, each as its text columns joined by `|` (NULL as `<null>`).
async fn rows(c: &Client, sql: &str) -> Vec<String> {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("<null>").to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

/// Polls until `sql` returns `want` (a waiter shows up in the views a moment after it
/// starts waiting); panics after 10 s.
async fn eventually(c: &Client, sql: &str, want: &[&str]) {
    for _ in 0..1000 {
        if rows(c, sql).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "{sql}: never returned {want:?}, last {:?}",
        rows(c, sql).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_session_shows_in_pg_locks_and_pg_stat_activity() {
    let (server, _dir) = start().await;
    let holder = connect(&server).await;
    let waiter = connect(&server).await;
    let observer = connect(&server).await;
    exec(&holder, "CREATE TABLE t (a int PRIMARY KEY)").await;
    let holder_pid = rows(&holder, "SELECT pg_backend_pid()").await.remove(0);
    let waiter_pid = rows(&waiter, "SELECT pg_backend_pid()").await.remove(0);
    assert_ne!(holder_pid, waiter_pid);
    exec(&holder, "BEGIN; SELECT * FROM t").await;
    // A weak lock on the fast path.
    assert_eq!(
        rows(
            &observer,
            &format!(
                "SELECT locktype, mode, granted, fastpath FROM pg_locks WHERE pid = {holder_pid}"
            )
        )
        .await,
        ["relation|AccessShareLock|t|t"]
    );
    let drop = tokio::spawn(async move { waiter.batch_execute("DROP TABLE t").await });
    eventually(
        &observer,
        &format!("SELECT mode, granted FROM pg_locks WHERE pid = {waiter_pid}"),
        &["AccessExclusiveLock|f"],
    )
    .await;
    // The strong locker moved the holder's lock off the fast path.
    assert_eq!(
        rows(
            &observer,
            &format!("SELECT mode, fastpath FROM pg_locks WHERE pid = {holder_pid}")
        )
        .await,
        ["AccessShareLock|f"]
    );
    assert_eq!(
        rows(
            &observer,
            &format!(
                "SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity \
                 WHERE pid IN ({holder_pid}, {waiter_pid}) ORDER BY pid"
            )
        )
        .await,
        [
            "idle in transaction|Client|ClientRead|BEGIN; SELECT * FROM t",
            "active|Lock|relation|DROP TABLE t",
        ]
    );
    exec(&holder, "COMMIT").await;
    drop.await
        .expect("join")
        .expect("DROP TABLE after the reader");
    assert_eq!(
        rows(&observer, "SELECT count(*) FROM pg_locks WHERE NOT granted").await,
        ["0"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_end_waits_statements_and_idle_sessions() {
    let (server, _dir) = start().await;
    let holder = connect(&server).await;
    let other = connect(&server).await;
    exec(&holder, "CREATE TABLE t (a int PRIMARY KEY)").await;
    exec(&holder, "INSERT INTO t VALUES (1), (2), (3)").await;
    exec(&holder, "CREATE TABLE big (a int)").await;
    exec(
        &holder,
        "INSERT INTO big VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)",
    )
    .await;
    exec(&holder, "BEGIN; LOCK TABLE t IN SHARE MODE").await;
    // statement_timeout ends a lock wait too (57014), lock_timeout with 55P03.
    let e = other
        .batch_execute("SET statement_timeout = '50ms'; INSERT INTO t VALUES (4)")
        .await
        .expect_err("times out");
    assert_eq!(sqlstate(&e), "57014");
    exec(&other, "RESET statement_timeout; SET lock_timeout = 50").await;
    let e = other
        .batch_execute("DELETE FROM t")
        .await
        .expect_err("times out");
    assert_eq!(sqlstate(&e), "55P03");
    assert_eq!(
        e.as_db_error().map(|d| d.message()),
        Some("canceling statement due to lock timeout")
    );
    // A long query, not waiting for anything, is canceled by statement_timeout.
    let e = other
        .batch_execute(
            "SET statement_timeout = 100; \
             SELECT count(*) FROM big a, big b, big c, big d, big e, big f, big g",
        )
        .await
        .expect_err("canceled");
    assert_eq!(sqlstate(&e), "57014");
    // Planning counts too: an EXPLAIN (which runs nothing) of a join of 1,000 tables
    // takes longer to bind and plan than a 1 ms statement_timeout allows (tens of
    // milliseconds here). Without the limit it plans.
    let from: Vec<String> = (0..1000).map(|i| format!("t t{i}")).collect();
    let explain = format!("EXPLAIN SELECT 1 FROM {}", from.join(", "));
    let e = other
        .batch_execute(&format!("SET statement_timeout = 1; {explain}"))
        .await
        .expect_err("canceled while planning");
    assert_eq!(sqlstate(&e), "57014");
    assert_eq!(
        e.as_db_error().map(|d| d.message()),
        Some("canceling statement due to statement timeout")
    );
    other
        .batch_execute(&format!("RESET statement_timeout; {explain}"))
        .await
        .expect("plans without the limit");
    // The holder sits idle in its block past idle_in_transaction_session_timeout: the
    // server ends the session, and its lock goes with it.
    exec(&holder, "SET idle_in_transaction_session_timeout = 100").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    holder
        .batch_execute("SELECT 1")
        .await
        .expect_err("the session was ended");
    exec(&other, "RESET ALL; BEGIN; LOCK TABLE t NOWAIT; COMMIT").await;
}

/// A transaction creating a name another one has created, uncommitted, waits for it (on
/// its transaction id, as in PostgreSQL), then fails if it committed the name, or goes
/// on if it rolled back. Deliberately unlike PostgreSQL, the failure is 42P07 "relation
/// already exists": PostgreSQL reports the duplicate key in its own catalog index
/// (23505, `pg_type_typname_nsp_index` or `pg_class_relname_nsp_index`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_a_name_another_transaction_creates_waits_for_it() {
    let (server, _dir) = start().await;
    let holder = connect(&server).await;
    let observer = connect(&server).await;
    for (commit, create) in [
        (true, "CREATE TABLE n (a int)"),
        (false, "CREATE SEQUENCE n"),
    ] {
        let waiter = connect(&server).await;
        let waiter_pid = rows(&waiter, "SELECT pg_backend_pid()").await.remove(0);
        exec(&holder, "BEGIN").await;
        exec(&holder, create).await;
        let create = tokio::spawn(async move {
            let r = waiter.batch_execute("CREATE TABLE n (b text)").await;
            (waiter, r)
        });
        eventually(
            &observer,
            &format!(
                "SELECT locktype, mode FROM pg_locks WHERE pid = {waiter_pid} AND NOT granted"
            ),
            &["transactionid|ShareLock"],
        )
        .await;
        exec(&holder, if commit { "COMMIT" } else { "ROLLBACK" }).await;
        let (waiter, r) = create.await.expect("join");
        if commit {
            let e = r.expect_err("the name is taken");
            assert_eq!(sqlstate(&e), "42P07");
            let message = e.as_db_error().map(|d| d.message().to_string());
            assert_eq!(message.as_deref(), Some("relation \"n\" already exists"));
            exec(&waiter, "DROP TABLE n").await;
        } else {
            r.expect("the name is free again");
            assert_eq!(
                rows(
                    &observer,
                    "SELECT relkind FROM pg_class WHERE relname = 'n'"
                )
                .await,
                ["r"]
            );
        }
    }
}
