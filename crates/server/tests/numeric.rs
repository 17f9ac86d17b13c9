//! `numeric` columns through a restart: values keep their display scale, the column
//! keeps its typmod (the catalog stores it), and an index over numerics, grown past a
//! tiny buffer pool, still answers ranges in numeric order.

mod common;

use myriad_server::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numeric_tables_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = common::tiny_pool_config(dir.path());
    let query = "select id, p, x from nt where x >= -1.5 and x < 100 order by x, id";
    let before;
    {
        let server = Server::start(&config).await.expect("start");
        let c = common::connect(&server).await;
        common::exec(
            &c,
            "create table nt (id int primary key, p numeric(12,4), x numeric); \
             create index nt_x on nt (x)",
        )
        .await;
        for i in 0..500 {
            // x runs through negatives, fractions with trailing zeros and large values.
            common::exec(
                &c,
                &format!(
                    "insert into nt values ({i}, {i} / 7.0, ({i} - 250) * 0.50 * power(10.0, {i} % 3))"
                ),
            )
            .await;
        }
        common::exec(
            &c,
            "insert into nt values (1000, 'NaN', 'NaN'), (1001, NULL, 1.0)",
        )
        .await;
        before = common::rows(&c, query).await;
        drop(c);
        server.shutdown().await.expect("shutdown");
    }
    let server = Server::start(&config).await.expect("restart");
    let c = common::connect(&server).await;
    let after = common::rows(&c, query).await;
    assert_eq!(before, after);
    // Expected values from PostgreSQL 15, the same statements.
    assert_eq!(before.len(), 76);
    assert_eq!(after[0], ["249", "35.5714", "-0.500000000000000000"]);
    let ones: Vec<&Vec<String>> = after.iter().filter(|r| r[2].starts_with("1.0")).collect();
    assert_eq!(ones.len(), 2, "{ones:?}");
    assert_eq!(ones[0], &["252", "36.0000", "1.000000000000000000"]);
    assert_eq!(ones[1], &["1001", "NULL", "1.0"]);
    // The typmod survived: still rounded to 4 places, still limited to 8 digits before.
    common::exec(&c, "insert into nt values (2000, 1.23456, 0)").await;
    assert_eq!(
        common::value(&c, "select p from nt where id = 2000").await,
        "1.2346"
    );
    let e = c
        .simple_query("insert into nt values (2001, 123456789, 0)")
        .await
        .expect_err("overflow");
    assert_eq!(common::sqlstate(&e), "22003");
    let row = c
        .query_one(
            "select p, x, sum(id::int8) from nt where id = 0 group by p, x",
            &[],
        )
        .await
        .expect("typed");
    let names: Vec<&str> = row.columns().iter().map(|c| c.type_().name()).collect();
    assert_eq!(names, ["numeric", "numeric", "numeric"]);
    assert_eq!(common::value(&c, "select max(x) from nt").await, "NaN");
    server.shutdown().await.expect("shutdown");
}
