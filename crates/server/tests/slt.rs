//! Runs the sqllogictest suites (`tests/slt`, verified against PostgreSQL, and
//! `tests/slt-myriad`, Myriad-only) against an in-process server, under two buffer pool
//! sizes: a roomy one and a tiny one that forces eviction on every suite.

use std::path::{Path, PathBuf};

use myriad_server::{Config, Server};

fn suite_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let spec = testkit::slt_files(&root.join("slt"));
    assert!(
        !spec.is_empty(),
        "no .slt files found in {}",
        root.join("slt").display()
    );
    let mut files = spec;
    files.extend(testkit::slt_files(&root.join("slt-myriad")));
    files
}

async fn run_suites(buffer_pool_pages: usize) {
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        buffer_pool_pages,
        // No autovacuum round while the suite runs: plans follow statistics, and an
        // ANALYZE by autovacuum in the middle of a file would make its EXPLAINs (and the
        // WAL counters of stat_views.slt) depend on timing; the files ANALYZE where they
        // need statistics. scripts/pg-slt's cluster has PostgreSQL's 1 min naptime, which
        // its run of the suite (well under a minute) never reaches either; Myriad's debug
        // build takes longer than that.
        autovacuum_naptime_ms: 3_600_000,
        ..Config::default()
    };
    let server = Server::start(&config).await.expect("server starts");
    let url = format!(
        "host={} port={} user=postgres dbname=postgres",
        server.local_addr().ip(),
        server.local_addr().port()
    );
    let result = testkit::run_files(&url, &suite_files()).await;
    server.shutdown().await.expect("clean shutdown");
    if let Err(report) = result {
        panic!("sqllogictest failures with buffer_pool_pages = {buffer_pool_pages}:\n{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slt_default_pool() {
    run_suites(2048).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slt_tiny_pool() {
    run_suites(16).await;
}
