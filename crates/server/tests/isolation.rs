//! Runs the multi-session isolation specs (`tests/isolation`, whose expected output is
//! PostgreSQL 15's) against an in-process server: dirty reads, lost updates, write skew,
//! serialization failures, deadlocks, DDL waiting for readers, NOWAIT / SKIP LOCKED and
//! lock timeouts, each with real concurrent sessions.

use std::path::Path;

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolation_specs_match_postgres() {
    let specs = testkit::isolation::spec_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/isolation"),
    );
    assert!(specs.len() >= 9, "isolation specs not found");
    let (server, _dir) = common::start().await;
    let result = testkit::isolation::run_specs(&common::url(&server), &specs).await;
    server.shutdown().await.expect("clean shutdown");
    if let Err(report) = result {
        panic!("isolation specs failed:\n{report}");
    }
}

/// Myriad's own specs (`tests/isolation-myriad`): behaviour that differs from
/// PostgreSQL 15's on purpose, each spec saying why; their expected output is Myriad's,
/// reviewed (`isolation --bless` against a Myriad server). PostgreSQL does not run them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn myriad_own_isolation_specs() {
    let specs = testkit::isolation::spec_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/isolation-myriad"),
    );
    assert!(!specs.is_empty(), "Myriad's own isolation specs not found");
    let (server, _dir) = common::start().await;
    let result = testkit::isolation::run_specs(&common::url(&server), &specs).await;
    server.shutdown().await.expect("clean shutdown");
    if let Err(report) = result {
        panic!("isolation specs failed:\n{report}");
    }
}
