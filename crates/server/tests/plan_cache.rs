//! Plans invalidated per relation (issue 26): a prepared statement's cached plan is made
//! again only when a relation its binding read has changed (DDL on it, or new statistics
//! from ANALYZE), not after DDL or ANALYZE anywhere.
//! `Database::plans_made` counts the plans; each check runs the statement once and looks
//! at how many plans that took. A generic plan is made when an execution first needs it. The invalidation tests run the generic plan
//! (`plan_cache_mode = force_generic_plan`); `auto`'s choice between it and custom plans
//! is tested last.

mod common;

use common::{connect, exec, sqlstate};
use myriad_server::Server;
use tokio_postgres::{Client, Statement};

/// Plans made by running `stmt` once with `id` (it must succeed).
async fn plans_to_run(server: &Server, c: &Client, stmt: &Statement, id: i32) -> u64 {
    let before = server.database().plans_made();
    c.query(stmt, &[&id])
        .await
        .expect("prepared statement runs");
    server.database().plans_made() - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ddl_on_another_relation_keeps_the_plan() {
    let (server, _dir) = common::start().await;
    let c = connect(&server).await;
    exec(&c, "SET plan_cache_mode = force_generic_plan").await;
    exec(
        &c,
        "CREATE TABLE a (id int PRIMARY KEY, v int);
         CREATE TABLE b (id int PRIMARY KEY, w int);
         INSERT INTO a VALUES (1, 10), (2, 20); INSERT INTO b VALUES (1, 1)",
    )
    .await;
    let on_a = c.prepare("SELECT v FROM a WHERE id = $1").await.unwrap();
    assert_eq!(
        plans_to_run(&server, &c, &on_a, 1).await,
        1,
        "the generic plan is made when first run"
    );
    assert_eq!(plans_to_run(&server, &c, &on_a, 1).await, 0, "then reused");

    // DDL on b, on a new table, a key from a new table to b, ANALYZE of b: a's plan
    // stays.
    for ddl in [
        "CREATE INDEX b_w ON b (w)",
        "ALTER TABLE b ADD COLUMN x text",
        "DROP INDEX b_w",
        "CREATE TABLE c (id int, b_id int REFERENCES b)",
        "BEGIN; CREATE TABLE d (id int); ROLLBACK",
        "DROP TABLE c",
        "ANALYZE b",
    ] {
        exec(&c, ddl).await;
        assert_eq!(plans_to_run(&server, &c, &on_a, 2).await, 0, "after {ddl}");
    }
    // Another session's uncommitted DDL on b changes nothing either.
    let other = connect(&server).await;
    exec(&other, "BEGIN; ALTER TABLE b ADD COLUMN y int").await;
    assert_eq!(plans_to_run(&server, &c, &on_a, 2).await, 0);
    exec(&other, "ROLLBACK").await;

    // New statistics or DDL on a itself: planned again, once, and then reused.
    for ddl in [
        "ANALYZE a",
        "CREATE INDEX a_v ON a (v)",
        "ALTER TABLE a ADD COLUMN z int",
        "COMMENT ON TABLE a IS 'described'",
    ] {
        exec(&c, ddl).await;
        assert_eq!(plans_to_run(&server, &c, &on_a, 1).await, 1, "after {ddl}");
        assert_eq!(
            plans_to_run(&server, &c, &on_a, 1).await,
            0,
            "again after {ddl}"
        );
    }
    drop((c, other));
    server.shutdown().await.unwrap();
}

/// What a statement binds besides its own table's descriptor counts too: a DELETE binds
/// the keys that reference its table, so a key added to another table replans it (and
/// is enforced); a sequence a DEFAULT reads replans an INSERT when it changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_binding_reads_of_other_relations_replans_it() {
    let (server, _dir) = common::start().await;
    let c = connect(&server).await;
    exec(&c, "SET plan_cache_mode = force_generic_plan").await;
    exec(
        &c,
        "CREATE TABLE p (id int PRIMARY KEY);
         INSERT INTO p VALUES (1), (2), (3);
         CREATE TABLE child (id int, p_id int);
         INSERT INTO child VALUES (1, 1)",
    )
    .await;
    let delete = c.prepare("DELETE FROM p WHERE id = $1").await.unwrap();
    assert_eq!(plans_to_run(&server, &c, &delete, 3).await, 1);
    assert_eq!(plans_to_run(&server, &c, &delete, 3).await, 0);
    exec(&c, "ALTER TABLE child ADD FOREIGN KEY (p_id) REFERENCES p").await;
    let e = c.query(&delete, &[&1i32]).await.unwrap_err();
    assert_eq!(sqlstate(&e), "23503", "{e}");
    // Dropping the key frees the row again.
    exec(&c, "ALTER TABLE child DROP CONSTRAINT child_p_id_fkey").await;
    assert_eq!(plans_to_run(&server, &c, &delete, 1).await, 1);

    exec(
        &c,
        "CREATE SEQUENCE s START 100; CREATE TABLE n (id int DEFAULT nextval('s'), k int)",
    )
    .await;
    let insert = c
        .prepare("INSERT INTO n (k) VALUES ($1) RETURNING id")
        .await
        .unwrap();
    let id = |rows: Vec<tokio_postgres::Row>| rows[0].get::<_, i32>(0);
    assert_eq!(id(c.query(&insert, &[&1i32]).await.unwrap()), 100);
    exec(&c, "CREATE SEQUENCE unrelated").await;
    assert_eq!(plans_to_run(&server, &c, &insert, 2).await, 0);
    exec(&c, "ALTER SEQUENCE s RESTART WITH 500").await;
    let before = server.database().plans_made();
    assert_eq!(id(c.query(&insert, &[&3i32]).await.unwrap()), 500);
    assert_eq!(server.database().plans_made() - before, 1);
    drop(c);
    server.shutdown().await.unwrap();
}

/// `plan_cache_mode`: `auto` (the default) plans the first five executions with their
/// values, then runs the generic plan, cheaper than their average once their planning is
/// counted (PostgreSQL's rule); `force_custom_plan` plans every execution;
/// `force_generic_plan` none. A statement without parameters runs its generic plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_cache_mode_chooses_custom_or_generic_plans() {
    let (server, _dir) = common::start().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE m (id int PRIMARY KEY, v int);
         INSERT INTO m SELECT g, g FROM generate_series(1, 100) AS g",
    )
    .await;
    let stmt = c.prepare("SELECT v FROM m WHERE id = $1").await.unwrap();
    let mut made = Vec::new();
    for id in 1..=8 {
        made.push(plans_to_run(&server, &c, &stmt, id).await);
    }
    assert_eq!(
        made,
        [1, 1, 1, 1, 1, 1, 0, 0],
        "five custom plans, then the generic one, made when first needed"
    );

    exec(&c, "SET plan_cache_mode = force_custom_plan").await;
    let stmt = c.prepare("SELECT v FROM m WHERE id = $1").await.unwrap();
    for id in 1..=7 {
        assert_eq!(plans_to_run(&server, &c, &stmt, id).await, 1);
    }
    // Without parameters there is nothing to plan with: the generic plan, made once.
    let no_params = c.prepare("SELECT count(*) FROM m").await.unwrap();
    let mut made = Vec::new();
    for _ in 0..3 {
        let before = server.database().plans_made();
        c.query(&no_params, &[]).await.unwrap();
        made.push(server.database().plans_made() - before);
    }
    assert_eq!(made, [1, 0, 0]);

    exec(&c, "SET plan_cache_mode = force_generic_plan").await;
    let stmt = c.prepare("SELECT v FROM m WHERE id = $1").await.unwrap();
    let mut made = Vec::new();
    for id in 1..=7 {
        made.push(plans_to_run(&server, &c, &stmt, id).await);
    }
    assert_eq!(made, [1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        common::value(&c, "SHOW plan_cache_mode").await,
        "force_generic_plan"
    );
}
