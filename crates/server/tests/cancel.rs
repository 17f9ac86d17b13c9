//! Interrupting sessions (issue 30): a CancelRequest with the session's key, and
//! `pg_cancel_backend`, stop its running statement with 57014 and leave it usable; a
//! wrong key does nothing; `pg_terminate_backend` ends a session, idle or busy, with
//! FATAL 57P01; past `max_connections` a client gets 53300 and the others go on. Lock
//! waits make the statements wait as long as the test needs, so nothing depends on time.

mod common;

use std::time::Duration;

use common::{connect, exec, rows, sqlstate, value};
use myriad_server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::NoTls;

/// Waits until session `pid` waits for a lock (`pg_locks`), as seen by `observer`.
async fn await_lock_wait(observer: &tokio_postgres::Client, pid: &str) {
    for _ in 0..2000 {
        let waiting = value(
            observer,
            &format!("SELECT count(*) FROM pg_locks WHERE pid = {pid} AND NOT granted"),
        )
        .await;
        if waiting != "0" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("session {pid} never waited for a lock");
}

/// Sends a CancelRequest for `pid` with `key` on a connection of its own and waits for
/// the server to close it (it has handled the request by then).
/// Wait until session `pid` runs a statement (`pg_stat_activity.state` is active).
async fn await_active(observer: &tokio_postgres::Client, pid: &str) {
    let sql =
        format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid} AND state = 'active'");
    while value(observer, &sql).await != "1" {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn send_cancel(server: &Server, pid: i32, key: i32) {
    let mut s = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let mut packet = Vec::with_capacity(16);
    packet.extend_from_slice(&16i32.to_be_bytes());
    packet.extend_from_slice(&80_877_102i32.to_be_bytes());
    packet.extend_from_slice(&pid.to_be_bytes());
    packet.extend_from_slice(&key.to_be_bytes());
    s.write_all(&packet).await.expect("send");
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.expect("closed");
    assert!(rest.is_empty(), "no reply to a cancel request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_requests_stop_the_statement_and_the_session_goes_on() {
    let (server, _dir) = common::start().await;
    let holder = connect(&server).await;
    let observer = connect(&server).await;
    let waiter = connect(&server).await;
    exec(&holder, "CREATE TABLE t (a int)").await;
    let pid = value(&waiter, "SELECT pg_backend_pid()").await;
    exec(&holder, "BEGIN; LOCK TABLE t").await;

    // A wrong key does nothing: the statement goes on waiting, then completes.
    let waiter = std::sync::Arc::new(waiter);
    let w = waiter.clone();
    let running = tokio::spawn(async move { w.batch_execute("INSERT INTO t VALUES (1)").await });
    await_lock_wait(&observer, &pid).await;
    send_cancel(&server, pid.parse().expect("pid"), 12345).await;
    send_cancel(&server, 999_999, 12345).await;
    await_lock_wait(&observer, &pid).await;
    exec(&holder, "COMMIT").await;
    running.await.expect("join").expect("not canceled");

    // The right key (the client's own cancel, from BackendKeyData) stops it with 57014.
    exec(&holder, "BEGIN; LOCK TABLE t").await;
    let w = waiter.clone();
    let running = tokio::spawn(async move { w.batch_execute("INSERT INTO t VALUES (2)").await });
    await_lock_wait(&observer, &pid).await;
    waiter
        .cancel_token()
        .cancel_query(NoTls)
        .await
        .expect("cancel sent");
    let e = running.await.expect("join").expect_err("canceled");
    assert_eq!(sqlstate(&e), "57014");
    assert_eq!(
        e.as_db_error().map(|d| d.message()),
        Some("canceling statement due to user request")
    );

    // So does pg_cancel_backend, from another session.
    let w = waiter.clone();
    let running = tokio::spawn(async move { w.batch_execute("INSERT INTO t VALUES (3)").await });
    await_lock_wait(&observer, &pid).await;
    assert_eq!(
        value(&observer, &format!("SELECT pg_cancel_backend({pid})")).await,
        "t"
    );
    let e = running.await.expect("join").expect_err("canceled");
    assert_eq!(sqlstate(&e), "57014");
    exec(&holder, "COMMIT").await;

    // A cancel that finds the session idle does nothing to its next statement.
    assert_eq!(
        value(&observer, &format!("SELECT pg_cancel_backend({pid})")).await,
        "t"
    );
    assert_eq!(value(&waiter, "SELECT count(*) FROM t").await, "1");
    // No such session: false.
    assert_eq!(
        value(&observer, "SELECT pg_cancel_backend(999999)").await,
        "f"
    );

    // A long statement that waits for nothing is stopped too (its loops look).
    exec(&holder, "CREATE TABLE big (a int)").await;
    exec(&holder, "INSERT INTO big SELECT generate_series(1, 10)").await;
    let w = waiter.clone();
    let running = tokio::spawn(async move {
        w.batch_execute(
            "SELECT count(*) FROM big a, big b, big c, big d, big e, big f, big g, big h, big i",
        )
        .await
    });
    await_active(&observer, &pid).await;
    waiter
        .cancel_token()
        .cancel_query(NoTls)
        .await
        .expect("cancel sent");
    let e = running.await.expect("join").expect_err("canceled");
    assert_eq!(sqlstate(&e), "57014");
    assert_eq!(value(&waiter, "SELECT 1").await, "1");

    // pg_sleep looks as it waits.
    let w = waiter.clone();
    let running = tokio::spawn(async move { w.batch_execute("SELECT pg_sleep(60)").await });
    await_active(&observer, &pid).await;
    assert_eq!(
        value(&observer, &format!("SELECT pg_cancel_backend({pid})")).await,
        "t"
    );
    let e = running.await.expect("join").expect_err("canceled");
    assert_eq!(sqlstate(&e), "57014");
    assert_eq!(value(&waiter, "SELECT 1").await, "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_terminate_backend_ends_idle_and_busy_sessions() {
    let (server, _dir) = common::start().await;
    let admin = connect(&server).await;
    exec(&admin, "CREATE TABLE t (a int)").await;

    // An idle session ends at once; the call waits for it to go when given a timeout.
    let (idle, connection) = tokio_postgres::connect(&common::url(&server), NoTls)
        .await
        .expect("connect");
    let idle_connection = tokio::spawn(connection);
    let pid = value(&idle, "SELECT pg_backend_pid()").await;
    assert_eq!(
        value(&admin, &format!("SELECT pg_terminate_backend({pid}, 5000)")).await,
        "t"
    );
    let ended = idle_connection.await.expect("join");
    let e = ended.expect_err("the server ended the connection");
    assert_eq!(sqlstate(&e), "57P01");
    assert!(idle.is_closed());

    // A session waiting for a lock ends with FATAL 57P01, and its lock wait with it.
    let busy = connect(&server).await;
    let pid = value(&busy, "SELECT pg_backend_pid()").await;
    exec(&admin, "BEGIN; LOCK TABLE t").await;
    let running = tokio::spawn(async move { busy.batch_execute("SELECT * FROM t").await });
    await_lock_wait(&admin, &pid).await;
    let observer = connect(&server).await;
    assert_eq!(
        value(
            &observer,
            &format!("SELECT pg_terminate_backend({pid}, 5000)")
        )
        .await,
        "t"
    );
    let e = running.await.expect("join").expect_err("ended");
    assert_eq!(sqlstate(&e), "57P01");
    assert_eq!(
        e.as_db_error().map(|d| d.message()),
        Some("terminating connection due to administrator command")
    );
    exec(&admin, "COMMIT").await;
    assert_eq!(
        rows(
            &admin,
            &format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}")
        )
        .await,
        vec![vec!["0".to_string()]]
    );
    let e = admin
        .batch_execute("SELECT pg_terminate_backend(1, -1)")
        .await
        .expect_err("negative timeout");
    assert_eq!(sqlstate(&e), "22023");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_max_connections_clients_are_refused_and_the_others_go_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        max_connections: 3,
        ..Config::default()
    };
    let server = Server::start(&config).await.expect("server starts");
    let first = connect(&server).await;
    let _second = connect(&server).await;
    let third = connect(&server).await;
    assert_eq!(value(&first, "SHOW max_connections").await, "3");
    // Many in a row, each refused on its own, the sessions there serving on.
    for _ in 0..10_000 {
        let e = tokio_postgres::connect(&common::url(&server), NoTls)
            .await
            .err()
            .expect("refused");
        assert_eq!(sqlstate(&e), "53300");
        assert_eq!(
            e.as_db_error().map(|d| d.message()),
            Some("sorry, too many clients already")
        );
    }
    assert_eq!(value(&first, "SELECT 1").await, "1");
    let e = first
        .batch_execute("SET max_connections = 10")
        .await
        .expect_err("fixed at start");
    assert_eq!(sqlstate(&e), "55P02");
    // One goes; the next client gets its place.
    drop(third);
    let mut admitted = None;
    for _ in 0..400 {
        if let Ok((c, connection)) = tokio_postgres::connect(&common::url(&server), NoTls).await {
            tokio::spawn(connection);
            admitted = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let admitted = admitted.expect("a place came free");
    assert_eq!(value(&admitted, "SELECT 1").await, "1");
}

/// CREATE INDEX, VACUUM and ANALYZE look for interrupts as they read the table: a
/// statement timeout (the check a cancel shares) stops each, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_commands_check_for_interrupts() {
    let (server, _dir) = common::start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE m (a int, b text)").await;
    exec(
        &c,
        "INSERT INTO m SELECT g, 'row ' || g FROM generate_series(1, 200000) g",
    )
    .await;
    exec(&c, "DELETE FROM m WHERE a % 2 = 0").await;
    for sql in ["CREATE INDEX m_a ON m (a)", "VACUUM m", "ANALYZE m"] {
        exec(&c, "SET statement_timeout = 1").await;
        let e = c.batch_execute(sql).await.expect_err(sql);
        assert_eq!(sqlstate(&e), "57014", "{sql}");
        exec(&c, "RESET statement_timeout").await;
        c.batch_execute(sql).await.expect(sql);
    }
    assert_eq!(value(&c, "SELECT count(*) FROM m WHERE a = 3").await, "1");
}
