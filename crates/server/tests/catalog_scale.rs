//! The catalog at scale, through the server: a transaction may change any number of
//! objects (issue 26; PostgreSQL commits a `pg_restore --single-transaction` of any size),
//! and what it made survives a restart.

mod common;

use common::{connect, exec, tiny_pool_config, value};
use myriad_server::Server;

/// Tables made in one transaction: 800 used to fail at COMMIT (its catalog changes were
/// one WAL record, limited to 64 KiB).
const TABLES: usize = 10_000;
/// CREATE TABLEs per query string.
const BATCH: usize = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tables_in_one_transaction_commit_and_survive_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let c = connect(&server).await;
    exec(&c, "BEGIN").await;
    for first in (0..TABLES).step_by(BATCH) {
        let sql: String = (first..first + BATCH)
            .map(|i| format!("CREATE TABLE many_{i} (id int PRIMARY KEY, v text);"))
            .collect();
        exec(&c, &sql).await;
    }
    exec(&c, "COMMIT").await;
    let count = "SELECT count(*) FROM pg_class WHERE relname LIKE 'many\\_%' AND relkind = 'r'";
    assert_eq!(value(&c, count).await, TABLES.to_string());
    exec(&c, "INSERT INTO many_9999 VALUES (1, 'last')").await;
    drop(c);
    server.shutdown().await.expect("clean shutdown");

    let server = Server::start(&config).await.expect("server restarts");
    let c = connect(&server).await;
    assert_eq!(value(&c, count).await, TABLES.to_string());
    assert_eq!(
        value(&c, "SELECT v FROM many_9999 WHERE id = 1").await,
        "last"
    );
    exec(&c, "INSERT INTO many_0 VALUES (1, 'first')").await;
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}

/// CHECKPOINT checkpoints: the WAL's checkpoint count goes up and the redo point moves
/// past everything logged before the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoint_command_moves_the_redo_point() {
    let (server, _dir) = common::start().await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE t (a int); INSERT INTO t VALUES (1)").await;
    let wal = server.database().wal().clone();
    let (checkpoints, logged) = (wal.stats().checkpoints, wal.insert_lsn());
    exec(&c, "CHECKPOINT").await;
    assert!(wal.stats().checkpoints > checkpoints);
    assert!(wal.redo_lsn() >= logged);
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}
