//! The catalog at scale, through the server: a transaction may change any number of
//! objects (issue 26; PostgreSQL commits a `pg_restore --single-transaction` of any size),
//! and what it made survives a restart.

mod common;

use common::{connect, exec, rows, tiny_pool_config, value};
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
    one_relations_rows_cost_what_they_return(&c).await;
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

/// Among 10,000 tables, psql's lookups of one relation by oid (`\d many_42`) make that
/// relation's catalog rows only: the scan of pg_class, pg_attribute or pg_index returns
/// (EXPLAIN ANALYZE's actual rows) what the lookup asks for, not one row per relation,
/// and answers as the whole view filtered does.
async fn one_relations_rows_cost_what_they_return(c: &tokio_postgres::Client) {
    let lookups = [
        (
            "SELECT relname, relkind FROM pg_class WHERE oid = 'many_42'::regclass",
            "pg_class_oid_index",
            1,
        ),
        (
            "SELECT relname FROM pg_class WHERE oid = 'many_42_pkey'::regclass",
            "pg_class_oid_index",
            1,
        ),
        (
            "SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'many_42'::regclass AND attnum > 0",
            "pg_attribute_relid_attnum_index",
            2,
        ),
        (
            "SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'many_42'::regclass",
            "pg_index_indrelid_index",
            1,
        ),
        (
            "SELECT conname, contype FROM pg_constraint WHERE conrelid = 'many_42'::regclass",
            "pg_constraint_conrelid_contypid_conname_index",
            1,
        ),
        (
            "SELECT adnum FROM pg_attrdef WHERE adrelid = 'many_42'::regclass",
            "pg_attrdef_adrelid_adnum_index",
            0,
        ),
    ];
    for (sql, index, made) in lookups {
        let plan: Vec<String> = rows(c, &format!("EXPLAIN ANALYZE {sql}"))
            .await
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        let scan = plan
            .iter()
            .find(|l| l.contains(&format!("Index Scan using {index}")))
            .unwrap_or_else(|| panic!("a keyed scan for {sql}: {plan:#?}"));
        assert!(
            scan.contains(&format!("rows={made} loops=1")),
            "{sql}: {scan}"
        );
        // The same answer as the view read whole (the key hidden in an expression).
        let whole = sql
            .replace("WHERE oid =", "WHERE oid::int8 =")
            .replace("WHERE attrelid =", "WHERE attrelid::int8 =")
            .replace("WHERE indrelid =", "WHERE indrelid::int8 =")
            .replace("WHERE conrelid =", "WHERE conrelid::int8 =")
            .replace("WHERE adrelid =", "WHERE adrelid::int8 =");
        assert_eq!(rows(c, sql).await, rows(c, &whole).await, "{sql}");
    }
    // psql's `\d` joins pg_class to itself and to pg_index by the oids it found: each
    // relation is looked up by its oid, none is read whole.
    let joins = [
        "SELECT c.relchecks, c.relkind, am.amname FROM pg_catalog.pg_class c \
         LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid) \
         LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid) WHERE c.oid = 'many_42'::regclass",
        "SELECT c2.relname, i.indisprimary FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, \
         pg_catalog.pg_index i WHERE c.oid = 'many_42'::regclass AND c.oid = i.indrelid \
         AND i.indexrelid = c2.oid ORDER BY i.indisprimary DESC, c2.relname",
    ];
    for sql in joins {
        let plan: Vec<String> = rows(c, &format!("EXPLAIN {sql}"))
            .await
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert!(
            !plan.iter().any(|l| l.contains("Function Scan on pg_class")),
            "{sql}: {plan:#?}"
        );
        let whole = sql.replace("WHERE c.oid =", "WHERE c.oid::int8 =");
        assert_eq!(rows(c, sql).await, rows(c, &whole).await, "{sql}");
    }
    assert_eq!(
        rows(c, joins[1]).await,
        vec![vec!["many_42_pkey".to_string(), "t".to_string()]]
    );
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
