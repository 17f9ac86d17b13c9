//! Sequences through restarts: a clean shutdown keeps the exact position (as
//! PostgreSQL: the next value is the one after the last handed out); prepared inserts
//! into a SERIAL table draw from the sequence at every execution; the catalog keeps the
//! SERIAL's sequence and DEFAULT.

mod common;

use myriad_server::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_keep_their_position_across_a_clean_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = common::tiny_pool_config(dir.path());
    {
        let server = Server::start(&config).await.expect("start");
        let c = common::connect(&server).await;
        common::exec(
            &c,
            "create sequence s start 100 increment 10; \
             create table t (id bigserial primary key, v text)",
        )
        .await;
        // A prepared INSERT evaluates the DEFAULT at each execution.
        let insert = c
            .prepare("insert into t (v) values ($1) returning id")
            .await
            .expect("prepare");
        for i in 0..50 {
            let row = c
                .query_one(&insert, &[&format!("v{i}")])
                .await
                .expect("insert");
            assert_eq!(row.get::<_, i64>(0), i + 1);
        }
        assert_eq!(common::value(&c, "select nextval('s')").await, "100");
        assert_eq!(common::value(&c, "select nextval('s')").await, "110");
        drop(c);
        server.shutdown().await.expect("shutdown");
    }
    let server = Server::start(&config).await.expect("restart");
    let c = common::connect(&server).await;
    assert_eq!(common::value(&c, "select nextval('s')").await, "120");
    assert_eq!(
        common::value(&c, "insert into t (v) values ('after') returning id").await,
        "51"
    );
    assert_eq!(common::value(&c, "select count(*) from t").await, "51");
    // The DEFAULT came back with the catalog, and so did the ownership.
    common::exec(&c, "drop table t").await;
    let err = c
        .simple_query("select nextval('t_id_seq')")
        .await
        .expect_err("the sequence went with its table");
    assert_eq!(common::sqlstate(&err), "42P01");
}

/// A restart inside a block gives the sequence new storage: committed, it is what the
/// server comes back with; rolled back, it never happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_a_block_survives_a_restart_of_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = common::tiny_pool_config(dir.path());
    {
        let server = Server::start(&config).await.expect("start");
        let c = common::connect(&server).await;
        common::exec(
            &c,
            "create sequence s; select nextval('s'); \
             begin; alter sequence s restart with 1000; select nextval('s'); commit; \
             begin; alter sequence s restart with 5; select nextval('s'); rollback",
        )
        .await;
        assert_eq!(common::value(&c, "select nextval('s')").await, "1001");
        drop(c);
        server.shutdown().await.expect("shutdown");
    }
    let server = Server::start(&config).await.expect("restart");
    let c = common::connect(&server).await;
    assert_eq!(common::value(&c, "select nextval('s')").await, "1002");
}
