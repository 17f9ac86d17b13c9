//! Acceptance: the real `sysbench` 1.0 (Debian's package, which `.ci/run` installs) with
//! its pgsql driver against an in-process Myriad, unmodified: `prepare` (CREATE TABLE with
//! a SERIAL key, multi-row INSERT, CREATE INDEX), `oltp_read_write` with 4 threads for
//! 10 s (server-side prepared statements, BEGIN/COMMIT), the other OLTP scripts briefly,
//! then `cleanup`. A run must end without a fatal error. sysbench retries what it calls
//! ignored errors (deadlocks, duplicate keys of its delete-then-insert): PostgreSQL 15
//! has them too under the same load, so they are allowed.
//!
//! Nothing here measures speed (bench/ does); a run only has to finish cleanly.

mod common;

use std::process::Command;

use common::{connect, start, value};
use myriad_server::Server;

const TABLE_SIZE: &str = "10000";

fn sysbench(server: &Server, script: &str, args: &[&str]) -> String {
    let addr = server.local_addr();
    let out = Command::new("sysbench")
        .arg(script)
        .args([
            "--db-driver=pgsql",
            "--pgsql-user=postgres",
            "--pgsql-db=postgres",
        ])
        .arg(format!("--pgsql-host={}", addr.ip()))
        .arg(format!("--pgsql-port={}", addr.port()))
        .args(["--tables=1", &format!("--table-size={TABLE_SIZE}")])
        .args(args)
        .output()
        .expect("sysbench runs (apt-get install sysbench)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "sysbench {script} {args:?} failed:\n{text}"
    );
    assert!(
        !text.contains("FATAL") && !text.contains("error:"),
        "sysbench {script} {args:?}:\n{text}"
    );
    text
}

/// The number after `transactions:` in a run's report.
fn transactions(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("transactions:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sysbench_prepares_runs_and_cleans_up() {
    let (server, _dir) = start().await;
    let server = std::sync::Arc::new(server);
    let s = server.clone();
    tokio::task::spawn_blocking(move || sysbench(&s, "oltp_read_write", &["prepare"]))
        .await
        .expect("join");
    let c = connect(&server).await;
    assert_eq!(value(&c, "SELECT count(*) FROM sbtest1").await, TABLE_SIZE);
    // The SERIAL key's sequence handed out 1..TABLE_SIZE.
    assert_eq!(value(&c, "SELECT max(id) FROM sbtest1").await, TABLE_SIZE);
    for (script, seconds) in [
        ("oltp_read_write", "10"),
        ("oltp_point_select", "3"),
        ("oltp_read_only", "3"),
        ("oltp_write_only", "3"),
        ("oltp_insert", "3"),
    ] {
        for mode in ["auto", "disable"] {
            let s = server.clone();
            let text = tokio::task::spawn_blocking(move || {
                sysbench(
                    &s,
                    script,
                    &[
                        "--threads=4",
                        &format!("--time={seconds}"),
                        &format!("--db-ps-mode={mode}"),
                        "run",
                    ],
                )
            })
            .await
            .expect("join");
            assert!(
                transactions(&text) > 0,
                "{script} --db-ps-mode={mode} ran nothing:\n{text}"
            );
        }
        if script == "oltp_write_only" {
            // Each transaction deletes a row and inserts it again under its id: the
            // table keeps its size and its keys stay unique.
            assert_eq!(value(&c, "SELECT count(*) FROM sbtest1").await, TABLE_SIZE);
            assert_eq!(
                value(&c, "SELECT count(DISTINCT id) FROM sbtest1").await,
                TABLE_SIZE
            );
        }
    }
    // oltp_insert took its ids from the sequence, past the prepared rows.
    let max: i64 = value(&c, "SELECT max(id) FROM sbtest1")
        .await
        .parse()
        .unwrap();
    assert!(max > TABLE_SIZE.parse::<i64>().unwrap());
    let s = server.clone();
    tokio::task::spawn_blocking(move || sysbench(&s, "oltp_read_write", &["cleanup"]))
        .await
        .expect("join");
    let e = c
        .simple_query("SELECT 1 FROM sbtest1")
        .await
        .expect_err("cleanup drops the table");
    assert_eq!(common::sqlstate(&e), "42P01");
}
