//! Acceptance: real client drivers against an in-process Myriad, unmodified: psycopg 3
//! (`tests/clients/psycopg_types.py`), node-postgres (`tests/clients/node_pg.js`) and
//! pgjdbc (`tests/clients/Jdbc.java`, run as a single-file source program), small scripts with typed parameters and results that also pass against PostgreSQL 15.
//! The drivers live under `target/clients/` (`scripts/client-deps` installs them;
//! `scripts/test` and `.ci/run` run it first).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} did not start ({e}): run scripts/client-deps"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    assert!(text.trim_end().ends_with("ok"), "{what}:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psycopg_node_postgres_and_pgjdbc_work_unmodified() {
    let (server, _dir) = common::start().await;
    let port = server.local_addr().port().to_string();
    let repo = repo();
    let clients = repo.join("target/clients");
    let scripts = repo.join("tests/clients");

    let mut py = Command::new(clients.join("venv/bin/python"));
    py.arg(scripts.join("psycopg_types.py")).arg(&port);
    let mut node = Command::new("node");
    node.arg(scripts.join("node_pg.js"))
        .arg(&port)
        .env("NODE_PATH", clients.join("node/node_modules"));
    let mut java = Command::new("java");
    java.arg("-cp")
        .arg(clients.join("jdbc/postgresql-42.7.7.jar"))
        .arg(scripts.join("Jdbc.java"))
        .arg(&port);
    // Blocking child processes: off the runtime's threads, which serve the server.
    tokio::task::spawn_blocking(move || {
        check(py, "psycopg 3 (tests/clients/psycopg_types.py)");
        check(node, "node-postgres (tests/clients/node_pg.js)");
        check(java, "pgjdbc (tests/clients/Jdbc.java)");
    })
    .await
    .expect("join");
}
