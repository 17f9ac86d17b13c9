//! Operators past `work_mem` return what they return in memory (issue 30), for tables
//! proptest makes at random: a sort, a hash aggregate, a hash join, a nested loop's
//! Materialize, a merge join's groups, a DISTINCT and set operations, each run with
//! `work_mem` at its 64kB minimum (they write temporary files) and at 64MB (they do
//! not), the results compared whole. The slt files check the same operators against
//! PostgreSQL 15.

mod common;

use common::{connect, exec, rows};
use proptest::prelude::*;

/// One row: a small key (many rows share it), a text of any length up to 60, a
/// number that may be NULL.
fn row() -> impl Strategy<Value = (i16, String, Option<i32>)> {
    (
        0i16..200,
        "[a-zA-Z0-9 ]{0,60}",
        proptest::option::of(-1000i32..1000),
    )
}

/// The queries compared, each over table `p` (and `few`).
const QUERIES: &[(&str, &str)] = &[
    ("", "SELECT k, t, n FROM p ORDER BY t, k, n"),
    (
        "SET enable_sort = off",
        "SELECT t, k % 7, count(*), sum(n), min(n) FROM p GROUP BY t, k % 7",
    ),
    (
        "SET enable_mergejoin = off; SET enable_nestloop = off",
        "SELECT a.k, count(*), sum(b.n), max(b.t) FROM p a JOIN p b ON a.k = b.k AND a.n < b.n GROUP BY a.k",
    ),
    (
        "SET enable_hashjoin = off; SET enable_mergejoin = off",
        "SELECT x.a, y.t, y.n FROM few x LEFT JOIN p y ON y.k = x.a",
    ),
    (
        "SET enable_hashjoin = off; SET enable_nestloop = off",
        "SELECT x.a, y.k, y.t, y.n FROM few x FULL JOIN p y ON x.a / 50 = y.k / 50",
    ),
    ("SET enable_sort = off", "SELECT DISTINCT t FROM p"),
    (
        "",
        "SELECT t FROM p WHERE k % 2 = 0 EXCEPT SELECT t FROM p WHERE k % 3 = 0",
    ),
    (
        "",
        "SELECT k % 5, t FROM p WHERE n > 0 INTERSECT ALL SELECT k % 5, t FROM p",
    ),
    (
        "",
        "SELECT t, n FROM p EXCEPT ALL SELECT t, n FROM p WHERE k < 100",
    ),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn spilled_results_equal_the_in_memory_ones(
        table in proptest::collection::vec(row(), 3000..5000),
    ) {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(async {
            let (server, _dir) = common::start_without_autovacuum().await;
            let temp = server.database().temp_space().clone();
            let c = connect(&server).await;
            exec(&c, "CREATE TABLE p (k int, t text, n int)").await;
            exec(&c, "CREATE TABLE few (a int)").await;
            exec(&c, "INSERT INTO few VALUES (1), (7), (199), (500)").await;
            for chunk in table.chunks(500) {
                let values: Vec<String> = chunk
                    .iter()
                    .map(|(k, t, n)| {
                        let n = n.map_or("NULL".to_string(), |n| n.to_string());
                        format!("({k}, '{t}', {n})")
                    })
                    .collect();
                exec(&c, &format!("INSERT INTO p VALUES {}", values.join(", "))).await;
            }
            exec(&c, "ANALYZE p").await;
            for (settings, query) in QUERIES {
                let mut results = Vec::new();
                for work_mem in ["64MB", "64kB"] {
                    exec(&c, &format!("RESET ALL; SET work_mem = '{work_mem}'")).await;
                    if !settings.is_empty() {
                        exec(&c, settings).await;
                    }
                    let made = temp.files_created();
                    let mut got = rows(&c, query).await;
                    // Rows in any order but the sort's, whose order is the point.
                    if !query.contains("ORDER BY") {
                        got.sort();
                    }
                    results.push((got, temp.files_created() - made));
                }
                let (in_memory, none) = &results[0];
                let (spilled, files) = &results[1];
                assert_eq!(*none, 0, "{query}: wrote files at 64MB");
                assert!(*files > 0 || in_memory.len() < 50, "{query}: no files at 64kB");
                assert_eq!(spilled, in_memory, "{query}");
            }
            assert_eq!(temp.present(), 0);
        });
    }
}
