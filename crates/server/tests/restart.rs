//! Data and catalog survive a clean shutdown and restart, under a buffer pool small enough
//! that most pages are evicted (written) long before the shutdown's flush.

use std::collections::BTreeMap;
use std::path::Path;

use myriad_server::{Config, Server};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

const POOL_PAGES: usize = 16;
const ROWS: i64 = 3000;
const BATCH: i64 = 250;

async fn start(dir: &Path) -> Server {
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.to_path_buf(),
        buffer_pool_pages: POOL_PAGES,
        ..Config::default()
    };
    Server::start(&config).await.expect("server starts")
}

async fn connect(server: &Server) -> Client {
    let addr = server.local_addr();
    let url = format!(
        "host={} port={} user=postgres dbname=postgres",
        addr.ip(),
        addr.port()
    );
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Runs one query; returns its column names and rows (NULL as `None`).
async fn query(client: &Client, sql: &str) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut columns = Vec::new();
    let mut rows = Vec::new();
    for m in messages {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                columns = cols.iter().map(|c| c.name().to_owned()).collect();
            }
            SimpleQueryMessage::Row(row) => {
                rows.push(
                    (0..row.len())
                        .map(|i| row.get(i).map(str::to_owned))
                        .collect(),
                );
            }
            _ => {}
        }
    }
    (columns, rows)
}

/// Runs a statement that must fail; returns its SQLSTATE.
async fn sqlstate_of(client: &Client, sql: &str) -> String {
    match client.simple_query(sql).await {
        Ok(_) => panic!("{sql}: succeeded, expected an error"),
        Err(e) => e
            .code()
            .unwrap_or_else(|| panic!("{sql}: client-side error {e}"))
            .code()
            .to_owned(),
    }
}

/// One `items` row: (name, qty, note).
type Item = (String, Option<i64>, Option<String>);

fn initial_item(id: i64) -> Item {
    // ~120 bytes per row: 3000 rows fill a few dozen pages, well over POOL_PAGES.
    let name = format!("item-{id:05}-{}", "x".repeat(100 + (id % 13) as usize));
    let qty = if id % 11 == 0 { None } else { Some(id * 3) };
    let note = if id % 4 == 0 {
        None
    } else {
        Some(format!("n{}", id % 1000))
    };
    (name, qty, note)
}

fn sql_opt_int(v: Option<i64>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

fn sql_opt_text(v: &Option<String>) -> String {
    v.as_ref().map_or("NULL".into(), |v| format!("'{v}'"))
}

/// The model after the inserts, the UPDATE and the DELETE the test runs.
fn expected_items() -> BTreeMap<i64, Item> {
    let mut m = BTreeMap::new();
    for id in 1..=ROWS {
        m.insert(id, initial_item(id));
    }
    // UPDATE items SET qty = qty + 1, note = 'upd' WHERE id % 7 = 0
    for (id, item) in m.iter_mut() {
        if id % 7 == 0 {
            item.1 = item.1.map(|q| q + 1);
            item.2 = Some("upd".into());
        }
    }
    // DELETE FROM items WHERE id % 5 = 2
    m.retain(|id, _| id % 5 != 2);
    m
}

fn expected_pairs() -> Vec<(i64, i64, String)> {
    let mut v = Vec::new();
    for a in 0..30 {
        for b in 0..20 {
            if (a + b) % 9 != 0 {
                v.push((a, b, format!("p{a}:{b}")));
            }
        }
    }
    v
}

async fn verify_items(client: &Client) {
    let (columns, rows) = query(client, "SELECT * FROM items ORDER BY id").await;
    assert_eq!(columns, ["id", "name", "qty", "note"], "items columns");
    let expected = expected_items();
    assert_eq!(rows.len(), expected.len(), "items row count");
    for (row, (id, (name, qty, note))) in rows.iter().zip(expected.iter()) {
        let want = vec![
            Some(id.to_string()),
            Some(name.clone()),
            qty.map(|q| q.to_string()),
            note.clone(),
        ];
        assert_eq!(row, &want, "items row id {id}");
    }
    // The PRIMARY KEY is still enforced, NOT NULL too, and varchar(10)'s length.
    assert_eq!(
        sqlstate_of(client, "INSERT INTO items (id, name) VALUES (1, 'dup')").await,
        "23505"
    );
    assert_eq!(
        sqlstate_of(client, "INSERT INTO items (id, name) VALUES (NULL, 'n')").await,
        "23502"
    );
    assert_eq!(
        sqlstate_of(client, "INSERT INTO items (id) VALUES (999999)").await,
        "23502"
    );
    assert_eq!(
        sqlstate_of(
            client,
            "INSERT INTO items (id, name, note) VALUES (999999, 'n', 'much too long')"
        )
        .await,
        "22001"
    );
    assert_eq!(
        sqlstate_of(
            client,
            "INSERT INTO items (id, name, qty) VALUES (999999, 'n', 'abc')"
        )
        .await,
        "22P02"
    );
    // The DEFAULT survives: qty defaults to 0 (the row goes away again).
    client
        .batch_execute("INSERT INTO items (id, name) VALUES (999999, 'd')")
        .await
        .expect("insert with default");
    let (_, rows) = query(client, "SELECT qty, note FROM items WHERE id = 999999").await;
    assert_eq!(rows, [[Some("0".to_owned()), None]], "DEFAULT of items.qty");
    client
        .batch_execute("DELETE FROM items WHERE id = 999999")
        .await
        .expect("delete the default row");
}

async fn verify_pairs(client: &Client) {
    let (columns, rows) = query(client, "SELECT * FROM pairs ORDER BY a, b").await;
    assert_eq!(columns, ["a", "b", "c"], "pairs columns");
    let want: Vec<Vec<Option<String>>> = expected_pairs()
        .into_iter()
        .map(|(a, b, c)| vec![Some(a.to_string()), Some(b.to_string()), Some(c)])
        .collect();
    assert_eq!(rows, want, "pairs rows");
    assert_eq!(
        sqlstate_of(client, "INSERT INTO pairs VALUES (1, 1, 'dup')").await,
        "23505"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_and_catalog_survive_restarts() {
    let dir = tempfile::tempdir().expect("temp data dir");

    // --- First life: create, fill, update, delete.
    let server = start(dir.path()).await;
    let client = connect(&server).await;
    client
        .batch_execute(
            "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, qty int DEFAULT 0, note varchar(10));
             CREATE TABLE pairs (a int, b int, c text, PRIMARY KEY (a, b))",
        )
        .await
        .expect("create tables");
    for start_id in (1..=ROWS).step_by(BATCH as usize) {
        let values: Vec<String> = (start_id..start_id + BATCH)
            .map(|id| {
                let (name, qty, note) = initial_item(id);
                format!(
                    "({id}, '{name}', {}, {})",
                    sql_opt_int(qty),
                    sql_opt_text(&note)
                )
            })
            .collect();
        let sql = format!("INSERT INTO items VALUES {}", values.join(", "));
        client.batch_execute(&sql).await.expect("insert items");
    }
    let pairs: Vec<String> = expected_pairs()
        .into_iter()
        .map(|(a, b, c)| format!("({a}, {b}, '{c}')"))
        .collect();
    client
        .batch_execute(&format!("INSERT INTO pairs VALUES {}", pairs.join(", ")))
        .await
        .expect("insert pairs");
    // Rows the model drops: inserted, then deleted.
    client
        .batch_execute("INSERT INTO pairs VALUES (0, 0, 'gone'), (9, 0, 'gone'), (29, 7, 'gone')")
        .await
        .expect("insert doomed pairs");
    client
        .batch_execute("UPDATE items SET qty = qty + 1, note = 'upd' WHERE id % 7 = 0")
        .await
        .expect("update");
    client
        .batch_execute("DELETE FROM items WHERE id % 5 = 2")
        .await
        .expect("delete");
    client
        .batch_execute("DELETE FROM pairs WHERE c = 'gone'")
        .await
        .expect("delete pairs");
    // Sanity before the restart, so a failure after it is the restart's.
    verify_items(&client).await;
    verify_pairs(&client).await;
    drop(client);
    server.shutdown().await.expect("first shutdown");

    // --- Second life: everything is back; drop one table.
    let server = start(dir.path()).await;
    let client = connect(&server).await;
    verify_items(&client).await;
    verify_pairs(&client).await;
    client
        .batch_execute("DROP TABLE pairs")
        .await
        .expect("drop pairs");
    assert_eq!(sqlstate_of(&client, "SELECT * FROM pairs").await, "42P01");
    drop(client);
    server.shutdown().await.expect("second shutdown");

    // --- Third life: the dropped table stays dropped, the other is intact, DDL works.
    let server = start(dir.path()).await;
    let client = connect(&server).await;
    assert_eq!(sqlstate_of(&client, "SELECT * FROM pairs").await, "42P01");
    verify_items(&client).await;
    client
        .batch_execute(
            "CREATE TABLE pairs (x text PRIMARY KEY, y float8);
             CREATE TABLE fresh (k int PRIMARY KEY, v text);
             INSERT INTO pairs VALUES ('a', 1.5), ('b', NULL);
             INSERT INTO fresh VALUES (1, 'one'), (2, 'two')",
        )
        .await
        .expect("create new tables");
    let (columns, rows) = query(&client, "SELECT * FROM pairs ORDER BY x").await;
    assert_eq!(columns, ["x", "y"]);
    assert_eq!(
        rows,
        [
            [Some("a".to_owned()), Some("1.5".to_owned())],
            [Some("b".to_owned()), None]
        ]
    );
    let (_, rows) = query(&client, "SELECT k, v FROM fresh ORDER BY k").await;
    assert_eq!(
        rows,
        [
            [Some("1".to_owned()), Some("one".to_owned())],
            [Some("2".to_owned()), Some("two".to_owned())]
        ]
    );
    assert_eq!(
        sqlstate_of(&client, "INSERT INTO fresh VALUES (2, 'again')").await,
        "23505"
    );
    // A dropped column keeps its place in the rows stored before and after the drop.
    client
        .batch_execute(
            "ALTER TABLE fresh ADD COLUMN w int DEFAULT 5;
             ALTER TABLE fresh DROP COLUMN v;
             INSERT INTO fresh VALUES (3, 6);
             COMMENT ON COLUMN fresh.w IS 'kept'",
        )
        .await
        .expect("drop a column");
    drop(client);
    server.shutdown().await.expect("third shutdown");

    // --- Fourth life: the tables created after a restart persist too.
    let server = start(dir.path()).await;
    let client = connect(&server).await;
    verify_items(&client).await;
    let (_, rows) = query(&client, "SELECT count(*) FROM pairs").await;
    assert_eq!(rows, [[Some("2".to_owned())]]);
    let (columns, rows) = query(&client, "SELECT * FROM fresh ORDER BY k").await;
    assert_eq!(columns, ["k", "w"]);
    let want: Vec<Vec<Option<String>>> = [(1, 5), (2, 5), (3, 6)]
        .iter()
        .map(|(k, w)| vec![Some(k.to_string()), Some(w.to_string())])
        .collect();
    assert_eq!(rows, want);
    let (_, rows) = query(
        &client,
        "SELECT attname FROM pg_attribute WHERE attrelid = 'fresh'::regclass AND attisdropped",
    )
    .await;
    assert_eq!(rows, [[Some("........pg.dropped.2........".to_owned())]]);
    let (_, rows) = query(&client, "SELECT col_description('fresh'::regclass, 3)").await;
    assert_eq!(rows, [[Some("kept".to_owned())]]);
    drop(client);
    server.shutdown().await.expect("fourth shutdown");
}
