//! The free space map's cost does not grow with the table (access rule 10): finding a
//! page with room reads the root and one leaf (two when the first leaf's room lies before
//! the page asked from), for a table of 1,000 pages as for one of 100,000, and finds the
//! first page with enough room after the one asked from.

use std::sync::Arc;

use common::RelId;
use myriad_access::freespace::{self, counters};
use storage::bufmgr::BufferPool;
use storage::xlog::{self, WalOptions};
use storage::{OsVfs, Smgr};

const REL: RelId = 16384;

fn pool(dir: &std::path::Path) -> BufferPool {
    let vfs: Arc<dyn storage::Vfs> = Arc::new(OsVfs);
    let smgr = Arc::new(Smgr::new(vfs.clone(), dir).expect("smgr"));
    let mut pool = BufferPool::new(smgr, 64);
    xlog::open_and_recover(vfs, dir, &mut pool, WalOptions::default()).expect("wal");
    pool.create_relation(REL).expect("create");
    pool
}

/// Map pages one search reads.
fn pages_read(pool: &BufferPool, need: usize, from: u32) -> (Option<u32>, u64) {
    let before = counters::map_pages_read();
    let found = freespace::search(pool, REL, need, from).expect("search");
    (found, counters::map_pages_read() - before)
}

#[test]
fn a_search_reads_a_few_map_pages_whatever_the_table_size() {
    for pages in [1_000u32, 100_000] {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path());
        assert_eq!(pages_read(&pool, 100, 0), (None, 0), "no map yet");
        // Every page nearly full, but for three with room, the last near the end.
        for block in (0..pages).step_by(97) {
            freespace::record(&pool, REL, block, 40).expect("record");
        }
        let roomy = [pages / 3, pages / 2, pages - 2];
        for &block in &roomy {
            freespace::record(&pool, REL, block, 3000).expect("record");
        }
        assert_eq!(
            pages_read(&pool, 2000, 0),
            (Some(roomy[0]), 2),
            "{pages} pages"
        );
        // From just past the first: its leaf, then the next with room.
        let (found, read) = pages_read(&pool, 2000, roomy[0] + 1);
        assert_eq!(found, Some(roomy[1]), "from a page on");
        assert!(read <= 3, "{read} map pages");
        assert_eq!(pages_read(&pool, 2000, roomy[2] + 1).0, None);
        // A page found full is recorded so: the next search skips it.
        freespace::record(&pool, REL, roomy[0], 0).expect("record");
        assert_eq!(pages_read(&pool, 2000, 0), (Some(roomy[1]), 2));
        // Small rows fit the nearly full pages too.
        assert_eq!(pages_read(&pool, 30, 0), (Some(0), 2));
        assert_eq!(pages_read(&pool, 8000, 0).0, None, "no page has that much");
    }
}
