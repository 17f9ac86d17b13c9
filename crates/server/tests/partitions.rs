//! Partitioning at scale, through the server (issue 29): thousands of partitions made in
//! one transaction and one statement at a time survive a restart, rows are routed among
//! them, and a query, a generic plan's execution and a new session's first query lock
//! the parent and the partitions they keep only (pg_locks).

mod common;

use common::{connect, exec, rows, tiny_pool_config, value};
use myriad_server::Server;

/// Partitions made in one transaction ...
const IN_ONE: usize = 10_000;
/// ... and one statement (and transaction) at a time.
const ONE_BY_ONE: usize = 1_000;
/// CREATE TABLEs per query string.
const BATCH: usize = 500;

/// The relations `c`'s transaction holds locks on, and the modes (`pg_locks`), for the
/// relations named like `like`.
async fn locked(c: &tokio_postgres::Client, like: &str) -> Vec<Vec<String>> {
    rows(
        c,
        &format!(
            "SELECT relation::regclass::text, mode FROM pg_locks \
             WHERE locktype = 'relation' AND relation::regclass::text LIKE '{like}' ORDER BY 1, 2"
        ),
    )
    .await
}

fn pair(a: &str, b: &str) -> Vec<String> {
    vec![a.to_string(), b.to_string()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_partitions_route_prune_lock_and_survive_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE big (id int NOT NULL, v text) PARTITION BY RANGE (id)",
    )
    .await;
    exec(&c, "BEGIN").await;
    for first in (0..IN_ONE).step_by(BATCH) {
        let sql: String = (first..first + BATCH)
            .map(|i| {
                format!(
                    "CREATE TABLE big_{i} PARTITION OF big FOR VALUES FROM ({}) TO ({});",
                    i * 10,
                    i * 10 + 10
                )
            })
            .collect();
        exec(&c, &sql).await;
    }
    exec(&c, "COMMIT").await;
    exec(&c, "CREATE TABLE h (id int, v text) PARTITION BY HASH (id)").await;
    for i in 0..ONE_BY_ONE {
        exec(
            &c,
            &format!(
                "CREATE TABLE h_{i} PARTITION OF h FOR VALUES WITH (MODULUS {ONE_BY_ONE}, REMAINDER {i})"
            ),
        )
        .await;
    }
    let count =
        "SELECT count(*) FROM pg_inherits WHERE inhparent IN ('big'::regclass, 'h'::regclass)";
    assert_eq!(value(&c, count).await, (IN_ONE + ONE_BY_ONE).to_string());

    // Each row goes to its partition.
    exec(
        &c,
        "INSERT INTO big SELECT g * 7, 'r' || g FROM generate_series(0, 14000) g",
    )
    .await;
    exec(
        &c,
        "INSERT INTO h SELECT g, 'h' || g FROM generate_series(1, 3000) g",
    )
    .await;
    // 41230 and 41237, in 41230..41240.
    assert_eq!(value(&c, "SELECT count(*) FROM big_4123").await, "2");
    assert_eq!(value(&c, "SELECT max(v) FROM big_4123").await, "r5891");
    assert_eq!(value(&c, "SELECT count(*) FROM h").await, "3000");

    // A query on one key scans, and locks, one partition of 10,000.
    let plan = rows(&c, "EXPLAIN (COSTS OFF) SELECT v FROM big WHERE id = 41230").await;
    assert_eq!(plan[0][0], "Seq Scan on big_4123 big", "{plan:?}");
    exec(&c, "BEGIN").await;
    assert_eq!(
        value(&c, "SELECT v FROM big WHERE id = 41230").await,
        "r5890"
    );
    assert_eq!(
        locked(&c, "big%").await,
        vec![
            pair("big", "AccessShareLock"),
            pair("big_4123", "AccessShareLock")
        ]
    );
    exec(&c, "COMMIT").await;

    // A generic plan prunes when it runs, then locks what it kept.
    exec(&c, "SET plan_cache_mode = force_generic_plan").await;
    exec(&c, "PREPARE p(int) AS SELECT v FROM big WHERE id = $1").await;
    exec(&c, "BEGIN").await;
    assert_eq!(value(&c, "EXECUTE p(41230)").await, "r5890");
    assert_eq!(value(&c, "EXECUTE p(7)").await, "r1");
    assert_eq!(
        locked(&c, "big%").await,
        vec![
            pair("big", "AccessShareLock"),
            pair("big_0", "AccessShareLock"),
            pair("big_4123", "AccessShareLock"),
        ]
    );
    exec(&c, "COMMIT").await;

    // The clock prunes as the plan starts too: one partition locked.
    exec(&c, "RESET plan_cache_mode").await;
    exec(&c, "BEGIN").await;
    let recent = "SELECT count(*) FROM big WHERE id >= 99990 + extract(year from now())::int * 0";
    assert_eq!(value(&c, recent).await, "0");
    assert_eq!(
        locked(&c, "big%").await,
        vec![
            pair("big", "AccessShareLock"),
            pair("big_9999", "AccessShareLock")
        ]
    );
    exec(&c, "COMMIT").await;
    drop(c);
    server.shutdown().await.expect("clean shutdown");

    let server = Server::start(&config).await.expect("server restarts");
    let c = connect(&server).await;
    assert_eq!(value(&c, count).await, (IN_ONE + ONE_BY_ONE).to_string());
    // A new session's first query opens and locks the one partition it reads.
    exec(&c, "BEGIN").await;
    assert_eq!(
        value(&c, "SELECT v FROM big WHERE id = 41230").await,
        "r5890"
    );
    assert_eq!(
        locked(&c, "big%").await,
        vec![
            pair("big", "AccessShareLock"),
            pair("big_4123", "AccessShareLock")
        ]
    );
    assert_eq!(value(&c, "SELECT v FROM h WHERE id = 2999").await, "h2999");
    exec(&c, "COMMIT").await;
    exec(&c, "INSERT INTO big VALUES (99995, 'last')").await;
    assert_eq!(
        value(&c, "SELECT v FROM big_9999 WHERE id = 99995").await,
        "last"
    );
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}

/// A nested loop into a partitioned table by its key looks each outer value up in the
/// one partition it routes to, through that partition's index, and locks only the
/// partitions it reached (PostgreSQL's run-time pruning by a nested loop's parameter,
/// without its locks on every partition).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_loop_outer_values_prune_and_lock_only_what_they_reach() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let c = connect(&server).await;
    let mut ddl = String::from("CREATE TABLE pk (id int, v text) PARTITION BY RANGE (id);");
    for i in 0..100 {
        ddl.push_str(&format!(
            "CREATE TABLE pk_{i} PARTITION OF pk FOR VALUES FROM ({}) TO ({});",
            i * 100,
            i * 100 + 100
        ));
    }
    exec(&c, &ddl).await;
    exec(
        &c,
        "INSERT INTO pk SELECT g, 'v' || g FROM generate_series(0, 9999) g;
         CREATE INDEX ON pk (id);
         CREATE TABLE outer_keys (id int);
         INSERT INTO outer_keys VALUES (150), (7777), (20000);
         ANALYZE pk; ANALYZE outer_keys",
    )
    .await;
    let join = "SELECT o.id, p.v FROM outer_keys o JOIN pk p ON p.id = o.id ORDER BY 1";
    let plan = rows(&c, &format!("EXPLAIN (COSTS OFF) {join}")).await;
    let plan: Vec<&str> = plan.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(plan[2], "  ->  Nested Loop", "{plan:?}");
    assert_eq!(
        plan[6], "                    Index Cond: (id = o.id)",
        "{plan:?}"
    );
    exec(&c, "BEGIN").await;
    assert_eq!(
        rows(&c, join).await,
        vec![pair("150", "v150"), pair("7777", "v7777")]
    );
    assert_eq!(
        locked(&c, "pk%").await,
        vec![
            pair("pk", "AccessShareLock"),
            pair("pk_1", "AccessShareLock"),
            pair("pk_77", "AccessShareLock"),
        ]
    );
    exec(&c, "COMMIT").await;
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}

/// DETACH PARTITION CONCURRENTLY interrupted between its two transactions (here by
/// `statement_timeout`, while a reader of the parent holds it up) leaves the partition
/// pending detach, out of its parent's directory, through a restart; FINALIZE then
/// finishes it (partition rule 6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_concurrent_detach_stays_pending_until_finalize() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = tiny_pool_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let reader = connect(&server).await;
    let c = connect(&server).await;
    exec(&c, "CREATE TABLE dp (a int) PARTITION BY RANGE (a)").await;
    exec(
        &c,
        "CREATE TABLE dp1 PARTITION OF dp FOR VALUES FROM (0) TO (10)",
    )
    .await;
    exec(
        &c,
        "CREATE TABLE dp2 PARTITION OF dp FOR VALUES FROM (10) TO (20)",
    )
    .await;
    exec(&c, "INSERT INTO dp VALUES (1), (11)").await;
    exec(&reader, "BEGIN").await;
    assert_eq!(value(&reader, "SELECT count(*) FROM dp").await, "2");
    exec(&c, "SET statement_timeout = '200ms'").await;
    let err = c
        .batch_execute("ALTER TABLE dp DETACH PARTITION dp2 CONCURRENTLY")
        .await
        .expect_err("the reader holds the second step up");
    assert_eq!(common::sqlstate(&err), "57014");
    exec(&c, "RESET statement_timeout").await;
    exec(&reader, "COMMIT").await;
    let pending = "SELECT inhrelid::regclass::text, inhdetachpending::text FROM pg_inherits \
                   WHERE inhparent = 'dp'::regclass ORDER BY 1";
    let both = vec![pair("dp1", "false"), pair("dp2", "true")];
    assert_eq!(rows(&c, pending).await, both);
    assert_eq!(value(&c, "SELECT count(*) FROM dp").await, "1");
    drop((c, reader));
    server.shutdown().await.expect("clean shutdown");

    let server = Server::start(&config).await.expect("server restarts");
    let c = connect(&server).await;
    assert_eq!(rows(&c, pending).await, both);
    assert_eq!(value(&c, "SELECT count(*) FROM dp").await, "1");
    let err = c
        .batch_execute("ALTER TABLE dp DETACH PARTITION dp2")
        .await
        .expect_err("plain DETACH of a pending partition");
    assert_eq!(common::sqlstate(&err), "55000");
    exec(&c, "ALTER TABLE dp DETACH PARTITION dp2 FINALIZE").await;
    assert_eq!(rows(&c, pending).await, vec![pair("dp1", "false")]);
    assert_eq!(value(&c, "SELECT count(*) FROM dp2").await, "1");
    drop(c);
    server.shutdown().await.expect("clean shutdown");
}
