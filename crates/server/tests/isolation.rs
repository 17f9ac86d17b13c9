//! Runs the multi-session isolation specs (`tests/isolation`, whose expected output is
//! PostgreSQL 15's) against an in-process server: dirty reads, lost updates, write skew,
//! serialization failures, deadlocks, DDL waiting for readers, NOWAIT / SKIP LOCKED and
//! lock timeouts, each with real concurrent sessions.

use std::path::Path;

use myriad_server::{Config, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolation_specs_match_postgres() {
    let specs = testkit::isolation::spec_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/isolation"),
    );
    assert!(specs.len() >= 9, "isolation specs not found");
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let server = Server::start(&config).await.expect("server starts");
    let url = format!(
        "host={} port={} user=postgres dbname=postgres",
        server.local_addr().ip(),
        server.local_addr().port()
    );
    let result = testkit::isolation::run_specs(&url, &specs).await;
    server.shutdown().await.expect("clean shutdown");
    if let Err(report) = result {
        panic!("isolation specs failed:\n{report}");
    }
}
