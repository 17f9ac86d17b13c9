//! Space VACUUM gives back is used again (access rule 10): after half the rows of a table
//! are deleted and vacuumed, as many new rows go into the room they left, not onto new
//! pages; each insert looks at a constant number of heap pages for room (the last page,
//! then the page the free space map names), for a table twice as big as well.

mod common;

use access::freespace::counters;
use common::{connect, exec, start_without_autovacuum, value};

async fn pages(c: &tokio_postgres::Client, table: &str) -> u64 {
    value(c, &format!("SELECT pg_relation_size('{table}') / 8192"))
        .await
        .parse()
        .expect("pages")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vacuumed_space_is_used_again_at_a_constant_cost_per_insert() {
    let (server, _dir) = start_without_autovacuum().await;
    let c = connect(&server).await;
    let mut per_insert = Vec::new();
    for (table, rows) in [("small", 10_000u64), ("big", 20_000)] {
        exec(&c, &format!("CREATE TABLE {table} (id int, pad text)")).await;
        let fill = format!(
            "INSERT INTO {table} SELECT g, repeat('x', 200) FROM generate_series(1, {rows}) AS g"
        );
        exec(&c, &fill).await;
        let before = pages(&c, table).await;
        exec(&c, &format!("DELETE FROM {table} WHERE id % 2 = 0")).await;
        exec(&c, &format!("VACUUM {table}")).await;
        let examined = counters::heap_pages_examined();
        let refill = format!(
            "INSERT INTO {table} SELECT g, repeat('y', 200) FROM generate_series(1, {}) AS g",
            rows / 2
        );
        exec(&c, &refill).await;
        let examined = counters::heap_pages_examined() - examined;
        let after = pages(&c, table).await;
        assert!(
            after <= before + 1,
            "{table}: {before} pages grew to {after}"
        );
        assert_eq!(
            value(&c, &format!("SELECT count(*) FROM {table}")).await,
            rows.to_string()
        );
        per_insert.push(examined as f64 / (rows / 2) as f64);
    }
    eprintln!("heap pages examined per insert: {per_insert:?}");
    // The last page, then the one the map names; now and then a page that filled.
    for (n, table) in per_insert.iter().zip(["small", "big"]) {
        assert!(*n <= 2.2, "{table}: {n} heap pages examined per insert");
    }
    assert!(
        (per_insert[1] - per_insert[0]).abs() < 0.2,
        "twice the table, the same cost per insert: {per_insert:?}"
    );
}
