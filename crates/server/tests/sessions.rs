//! Session state is passed explicitly, not kept per OS thread (issue 26): two sessions'
//! statements run interleaved on this one test thread, and each sees its own settings,
//! its own time zone, its own `currval` memory and its own uncommitted DDL.

use std::sync::Arc;

use myriad_server::session::Session;
use myriad_server::{Config, Database};
use wire::Session as _;

/// Run `sql` in `s`; the text of every row of its last statement that returned rows, or
/// the SQLSTATE and message of its first error.
/// A database without autovacuum in a fresh directory (keep the directory alive).
fn database() -> (Arc<Database>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        autovacuum: false,
        ..Config::default()
    };
    (Arc::new(Database::open(&config).unwrap()), dir)
}

fn run(s: &mut Session, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let mut rows = Vec::new();
    for outcome in s.execute_all(sql) {
        let done = outcome
            .result
            .map_err(|e| format!("{}: {}", e.code.0, e.message))?;
        if done.columns.is_some() {
            rows = done
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| v.to_text(&done.text).unwrap_or_else(|| "NULL".into()))
                        .collect()
                })
                .collect();
        }
    }
    Ok(rows)
}

fn one(s: &mut Session, sql: &str) -> String {
    let rows = run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows[0][0].clone()
}

#[test]
fn two_sessions_interleaved_on_one_thread_keep_their_own_state() {
    let (db, _dir) = database();
    let (mut a, mut b) = (Session::new(db.clone()), Session::new(db.clone()));

    run(&mut a, "SET TIME ZONE 'America/New_York'").unwrap();
    run(&mut b, "SET TIME ZONE 'Asia/Tokyo'").unwrap();
    run(&mut a, "SET statement_timeout = '5s'").unwrap();
    run(
        &mut a,
        "BEGIN; CREATE TABLE only_a (x int); CREATE SEQUENCE seq_a",
    )
    .unwrap();
    run(&mut b, "BEGIN; CREATE TABLE only_b (x int)").unwrap();

    // Settings and the zone values are shown in.
    let noon = "SELECT '2024-01-01 12:00:00+00'::timestamptz";
    assert_eq!(one(&mut a, noon), "2024-01-01 07:00:00-05");
    assert_eq!(one(&mut b, noon), "2024-01-01 21:00:00+09");
    assert_eq!(one(&mut a, "SHOW statement_timeout"), "5s");
    assert_eq!(one(&mut b, "SHOW statement_timeout"), "0");
    assert_eq!(
        one(&mut b, "SELECT current_setting('TimeZone')"),
        "Asia/Tokyo"
    );

    // Each transaction's uncommitted DDL, through binding and the system views.
    let mine = "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class \
                WHERE relname IN ('only_a', 'only_b', 'seq_a')";
    assert_eq!(one(&mut a, mine), "only_a,seq_a");
    assert_eq!(one(&mut b, mine), "only_b");
    assert_eq!(one(&mut a, "SELECT count(*) FROM only_a"), "0");
    let e = run(&mut b, "SELECT count(*) FROM only_a").unwrap_err();
    assert!(e.starts_with("42P01"), "{e}");
    run(&mut b, "ROLLBACK").unwrap();

    // `currval` memory is the session's own.
    assert_eq!(one(&mut a, "SELECT nextval('seq_a')"), "1");
    assert_eq!(one(&mut a, "SELECT currval('seq_a')"), "1");
    run(&mut a, "COMMIT").unwrap();
    let e = run(&mut b, "SELECT currval('seq_a')").unwrap_err();
    assert!(e.starts_with("55000"), "{e}");
    assert_eq!(one(&mut b, mine), "only_a,seq_a");
}

/// A query string of many queries runs them one after another (each a portal that ends
/// within its first batch), not one inside the other: this test thread's small stack
/// would overflow long before 20,000 nested calls.
#[test]
fn many_queries_in_one_string_run_in_turn() {
    let (db, _dir) = database();
    let mut s = Session::new(db);
    let sql = "SELECT 1;".repeat(20_000);
    let outcomes = s.execute_all(&sql);
    assert_eq!(outcomes.len(), 20_000);
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}
