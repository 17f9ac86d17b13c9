//! Running out of file descriptors (issue 30): client sockets, relation files, WAL
//! segments and temporary files share the process's `RLIMIT_NOFILE`. With the soft limit
//! lowered to just above what the process holds, new connections wait or fail, a query
//! that needs a file it cannot open gets PostgreSQL's 53000 with the system's message
//! (`could not create file "base/16388": Too many open files`), and nothing crashes or
//! is lost: the
//! session that was open goes on, and once descriptors are free again every table reads
//! back whole. A test binary of its own: the limit is the process's.

mod common;

use std::time::Duration;

use common::{connect, exec, url, value};

fn nofile() -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
    (r.rlim_cur, r.rlim_max)
}

fn set_soft_nofile(soft: u64) {
    let (_, hard) = nofile();
    let r = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct it is given.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) }, 0);
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_file_descriptors_fails_only_what_needs_one() {
    let (server, _dir) = common::start_without_autovacuum().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE fd_t (g int, t text)").await;
    exec(
        &c,
        "INSERT INTO fd_t SELECT g, 'row ' || g FROM generate_series(1, 20000) g",
    )
    .await;
    exec(&c, "CREATE INDEX fd_t_g ON fd_t (g)").await;
    let (soft, _) = nofile();
    set_soft_nofile(open_fds() + 6);

    // More clients until the descriptors run out: a connection then waits in the listen
    // backlog, or its client cannot open a socket.
    let mut extra = Vec::new();
    for _ in 0..40 {
        let attempt = tokio::time::timeout(
            Duration::from_millis(500),
            tokio_postgres::connect(&url(&server), tokio_postgres::NoTls),
        )
        .await;
        match attempt {
            Ok(Ok((client, conn))) => {
                tokio::spawn(conn);
                extra.push(client);
            }
            _ => break,
        }
    }
    // The open session: each statement works or fails with the server's error; none
    // ends the connection.
    let mut failed = 0;
    for sql in [
        "SELECT count(*) FROM fd_t",
        "SET work_mem = '64kB'",
        "SELECT count(*) FROM (SELECT t FROM fd_t ORDER BY t) x",
        "CREATE TABLE fd_u (a int)",
        "CREATE TABLE fd_v (a int PRIMARY KEY)",
        "SELECT count(*) FROM fd_t WHERE g = 77",
    ] {
        if let Err(e) = c.simple_query(sql).await {
            let Some(db) = e.as_db_error() else {
                panic!("{sql}: not a server error: {e}");
            };
            // PostgreSQL's code for running out of descriptors, and the system's words.
            assert_eq!(db.code().code(), "53000", "{sql}: {}", db.message());
            assert!(
                db.message().ends_with(": Too many open files"),
                "{sql}: {}",
                db.message()
            );
            failed += 1;
        }
    }
    set_soft_nofile(soft);
    drop(extra);

    // Nothing is lost, and the server serves new sessions again.
    let fresh = connect(&server).await;
    assert_eq!(value(&fresh, "SELECT count(*) FROM fd_t").await, "20000");
    assert_eq!(
        value(&fresh, "SELECT sum(g) FROM fd_t WHERE g <= 100").await,
        "5050"
    );
    assert_eq!(
        value(&c, "SELECT count(*) FROM fd_t WHERE g = 77").await,
        "1"
    );
    exec(&fresh, "CREATE TABLE IF NOT EXISTS fd_u (a int)").await;
    exec(&fresh, "INSERT INTO fd_u VALUES (1)").await;
    assert_eq!(value(&c, "SELECT count(*) FROM fd_u").await, "1");
    assert!(failed > 0, "the limit left every statement its files");
}
