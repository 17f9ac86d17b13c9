//! The commit log is truncated below the oldest id any table still holds unfrozen (txn
//! rule 11): once VACUUM (FREEZE) has read every table whole, the segments of older ids
//! are removed, and every row still reads as it did, before and after a restart. A
//! table holding old ids unfrozen (a plain VACUUM freezes nothing; a table not yet
//! vacuumed is not known) keeps them.

mod common;

use common::{autovacuum_round, connect, exec, value};
use myriad_server::{AUTOVACUUM_FREEZE_MAX_AGE, Config, Server};

fn config(dir: &std::path::Path) -> Config {
    Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.to_path_buf(),
        autovacuum: false,
        ..Config::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vacuum_freeze_lets_the_commit_log_be_truncated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&config(dir.path())).await.expect("start");
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE early (id int, note text)").await;
    exec(
        &c,
        "INSERT INTO early SELECT g, 'n' || g FROM generate_series(1, 100) AS g",
    )
    .await;
    exec(&c, "CREATE TABLE other (id int)").await;
    exec(&c, "INSERT INTO other VALUES (1)").await;
    // Later ids, three segments on: the first segment's ids are old.
    let seg = txn::clog::XIDS_PER_SEGMENT;
    server.database().txns().advance_next_xid(3 * seg + 10);
    exec(&c, "INSERT INTO early VALUES (1000, 'late')").await;
    exec(&c, "CHECKPOINT").await;
    let first = dir.path().join("pg_xact").join(format!("{:016X}", 0));
    assert!(first.exists(), "the first segment is written");

    // A plain VACUUM freezes nothing: the old ids stay, and so does their segment.
    exec(&c, "VACUUM early").await;
    exec(&c, "VACUUM other").await;
    assert!(first.exists());
    // Frozen, one table still holds old ids.
    exec(&c, "VACUUM (FREEZE) early").await;
    assert!(first.exists(), "`other` still holds an old id");
    exec(&c, "VACUUM (FREEZE) other").await;
    assert!(!first.exists(), "no table holds an id of the first segment");
    assert!(server.database().txns().clog().oldest() >= 3 * seg);

    let check = |c: tokio_postgres::Client| async move {
        assert_eq!(
            value(&c, "SELECT count(*) || ' ' || sum(id) FROM early").await,
            format!("101 {}", 5050 + 1000)
        );
        assert_eq!(
            value(&c, "SELECT note FROM early WHERE id = 1000").await,
            "late"
        );
        assert_eq!(value(&c, "SELECT count(*) FROM other").await, "1");
    };
    check(c).await;
    // New changes go on as before.
    let c = connect(&server).await;
    exec(&c, "UPDATE early SET note = 'changed' WHERE id = 7").await;
    exec(&c, "DELETE FROM other").await;
    exec(&c, "INSERT INTO other VALUES (1)").await;
    drop(c);
    server.shutdown().await.expect("shutdown");

    let server = Server::start(&config(dir.path())).await.expect("restart");
    assert!(!first.exists());
    let c = connect(&server).await;
    assert_eq!(
        value(&c, "SELECT note FROM early WHERE id = 7").await,
        "changed"
    );
    check(c).await;
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autovacuum_freezes_tables_holding_old_ids() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&config(dir.path())).await.expect("start");
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE quiet (id int) WITH (autovacuum_enabled = false)",
    )
    .await;
    exec(&c, "INSERT INTO quiet VALUES (1), (2)").await;
    exec(&c, "CREATE TABLE busy (id int)").await;
    exec(&c, "INSERT INTO busy VALUES (1)").await;
    exec(&c, "CHECKPOINT").await;
    let first = dir.path().join("pg_xact").join(format!("{:016X}", 0));
    assert!(first.exists());
    // Few changes, young ids: nothing to do.
    assert_eq!(autovacuum_round(&server).await.vacuumed, 0);
    // Ids grow old: both tables are frozen, the table autovacuum otherwise leaves alone
    // too, and the commit log's first segment goes.
    let txns = server.database().txns();
    txns.advance_next_xid(AUTOVACUUM_FREEZE_MAX_AGE + 1000);
    exec(&c, "INSERT INTO busy VALUES (2)").await;
    let round = autovacuum_round(&server).await;
    assert_eq!((round.vacuumed, round.frozen), (2, 2), "{round:?}");
    assert!(!first.exists());
    assert_eq!(
        value(
            &c,
            "SELECT (SELECT sum(id) FROM quiet) + (SELECT sum(id) FROM busy)"
        )
        .await,
        "6"
    );
    // Frozen, they are young again.
    assert_eq!(autovacuum_round(&server).await.frozen, 0);
    drop(c);
    server.shutdown().await.expect("shutdown");
}
