//! Helpers shared by the integration tests that run an in-process server and talk to it
//! over the wire with `tokio_postgres`. (Each test file is its own crate and uses some.)

#![allow(dead_code)]

use myriad_server::{Config, Server};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// A server on a fresh data directory and a free port; keep the directory alive.
pub async fn start() -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    (Server::start(&config).await.expect("server starts"), dir)
}

/// The connection string for `server`.
pub fn url(server: &Server) -> String {
    let addr = server.local_addr();
    format!(
        "host={} port={} user=postgres dbname=postgres",
        addr.ip(),
        addr.port()
    )
}

pub async fn connect(server: &Server) -> Client {
    let (client, connection) = tokio_postgres::connect(&url(server), NoTls)
        .await
        .expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Runs `sql` (one or more statements), panicking on an error.
pub async fn exec(c: &Client, sql: &str) {
    c.batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The first column of the first row a query returns.
pub async fn value(c: &Client, sql: &str) -> String {
    let rows = c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

/// The SQLSTATE of a server error, or the client error's text.
pub fn sqlstate(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.code().code().to_string())
        .unwrap_or_else(|| e.to_string())
}
