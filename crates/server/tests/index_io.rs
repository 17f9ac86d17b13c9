//! Lesson L5 over the wire: a point lookup by primary key touches exactly the btree's
//! levels plus one heap page — no metapage read, no page per index or relation that
//! exists. Counted with `myriad_stat_buffers` (buffer hits + reads), not timed.

use myriad_server::{Config, Server};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

async fn one_value(client: &Client, sql: &str) -> String {
    let msgs = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    msgs.into_iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

async fn accesses(client: &Client) -> i64 {
    one_value(client, "SELECT hits + reads FROM myriad_stat_buffers")
        .await
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_lookup_touches_tree_height_plus_one_heap_page() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        synchronous_commit: false,
        ..Config::default()
    };
    let server = Server::start(&config).await.unwrap();
    let addr = server.local_addr();
    let url = format!("host={} port={} user=postgres", addr.ip(), addr.port());
    let (client, conn) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(conn);
    client
        // The buffer counters are the server's: no autovacuum of the new rows may read
        // pages while the lookups are counted.
        .batch_execute(
            "CREATE TABLE t (id int PRIMARY KEY, pad text) WITH (autovacuum_enabled = false)",
        )
        .await
        .unwrap();
    // 20,000 keys: more than one leaf holds, so the tree has a root above its leaves.
    for batch in 0..20 {
        let values: Vec<String> = (0..1000)
            .map(|i| format!("({}, 'row {}')", batch * 1000 + i, batch * 1000 + i))
            .collect();
        client
            .batch_execute(&format!("INSERT INTO t VALUES {}", values.join(",")))
            .await
            .unwrap();
    }
    // An index to ignore: its presence must not cost the lookup anything.
    client
        .batch_execute("CREATE INDEX ON t (pad)")
        .await
        .unwrap();
    assert_eq!(
        one_value(&client, "SELECT pad FROM t WHERE id = 7").await,
        "row 7"
    );
    let before = accesses(&client).await;
    for k in 0..100 {
        let id = k * 197 % 20_000;
        let pad = one_value(&client, &format!("SELECT pad FROM t WHERE id = {id}")).await;
        assert_eq!(pad, format!("row {id}"));
    }
    let per_lookup = (accesses(&client).await - before) as f64 / 100.0;
    // Two btree levels (root, leaf) and the heap page.
    assert_eq!(per_lookup, 3.0, "buffer accesses per primary-key lookup");
    server.shutdown().await.unwrap();
}
