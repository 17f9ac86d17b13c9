//! Tests of the whole btree: against a `BTreeMap` model (also as a property test), under
//! a tiny buffer pool, with concurrent writers and readers, and for the root cache. Every
//! pool has a write-ahead log (over the simulated file system), so each test also runs
//! every step through its mini-transaction; `tests/btree_recovery.rs` crashes it.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use common::ids::ItemPointer;
use common::{PgResult, RelId, SqlState, Value};
use proptest::prelude::*;
use storage::simvfs::SimVfs;
use storage::xlog::{self, MIN_WAL_SEGMENT_SIZE, Wal, WalOptions};
use storage::{BufferPool, Smgr};

use super::page::{BTP_INCOMPLETE_SPLIT, BtPage};
use super::*;

const REL: RelId = 16500;

struct Env {
    pool: BufferPool,
    wal: Arc<Wal>,
    cache: RootCache,
}

impl Env {
    /// A pool of `pages` frames with a WAL of the smallest segments (so that records cross
    /// segment ends), in memory, and the index relation created.
    fn new(pages: usize) -> Env {
        let dir = Path::new("/sim/data");
        let vfs = Arc::new(SimVfs::new());
        let smgr = Arc::new(Smgr::new(vfs.clone(), dir).expect("smgr"));
        let mut pool = BufferPool::new(smgr, pages);
        let options = WalOptions {
            segment_size: MIN_WAL_SEGMENT_SIZE,
            synchronous_commit: true,
        };
        let (wal, _) = xlog::open_and_recover(vfs, dir, &mut pool, options).expect("wal");
        pool.create_relation(REL).expect("create");
        Env {
            pool,
            wal,
            cache: RootCache::new(),
        }
    }

    fn tree(&self) -> BTree<'_> {
        BTree::new(&self.pool, &self.cache, REL)
    }
}

fn tid(n: u32) -> ItemPointer {
    ItemPointer {
        block: n / 100,
        offset: (n % 100) as u16 + 1,
    }
}

/// A wide text key, so that few entries fill a page and trees get tall cheaply.
fn wide(k: u32, width: usize) -> Value {
    let mut s = format!("{k:06}-");
    while s.len() < width {
        s.push(char::from(b'a' + (k as usize + s.len()) as u8 % 26));
    }
    Value::Text(s)
}

/// A model entry ordered as the index orders entries.
#[derive(Clone, Debug)]
struct Entry(Vec<Value>, ItemPointer);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        for (a, b) in self.0.iter().zip(&other.0) {
            let o = a.cmp_nulls_last(b);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.0.len().cmp(&other.0.len()).then(self.1.cmp(&other.1))
    }
}

fn prefix_cmp(key: &[Value], bound: &[Value]) -> Ordering {
    for (a, b) in key.iter().zip(bound) {
        let o = a.cmp_nulls_last(b);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// What the model says a scan returns.
fn model_scan(
    model: &BTreeMap<Entry, ()>,
    lower: &Bound<Vec<Value>>,
    upper: &Bound<Vec<Value>>,
    dir: ScanDirection,
) -> Vec<Entry> {
    let mut out: Vec<Entry> = model
        .keys()
        .filter(|e| match lower {
            Bound::Unbounded => true,
            Bound::Included(b) => prefix_cmp(&e.0, b) != Ordering::Less,
            Bound::Excluded(b) => prefix_cmp(&e.0, b) == Ordering::Greater,
        })
        .filter(|e| match upper {
            Bound::Unbounded => true,
            Bound::Included(b) => prefix_cmp(&e.0, b) != Ordering::Greater,
            Bound::Excluded(b) => prefix_cmp(&e.0, b) == Ordering::Less,
        })
        .cloned()
        .collect();
    if dir == ScanDirection::Backward {
        out.reverse();
    }
    out
}

fn run_scan(
    tree: &BTree<'_>,
    lower: &Bound<Vec<Value>>,
    upper: &Bound<Vec<Value>>,
    dir: ScanDirection,
) -> PgResult<Vec<Entry>> {
    tree.scan(lower.clone(), upper.clone(), dir)?
        .map(|r| r.map(|(k, t)| Entry(k, t)))
        .collect()
}

fn all(tree: &BTree<'_>, dir: ScanDirection) -> Vec<Entry> {
    run_scan(tree, &Bound::Unbounded, &Bound::Unbounded, dir).expect("scan")
}

fn eq_scan(tree: &BTree<'_>, prefix: Vec<Value>) -> Vec<Entry> {
    run_scan(
        tree,
        &Bound::Included(prefix.clone()),
        &Bound::Included(prefix),
        ScanDirection::Forward,
    )
    .expect("scan")
}

fn assert_matches_model(tree: &BTree<'_>, model: &BTreeMap<Entry, ()>) -> TreeStats {
    let stats = tree.check().expect("invariants");
    assert_eq!(stats.entries as usize, model.len());
    let want: Vec<Entry> = model.keys().cloned().collect();
    assert_eq!(all(tree, ScanDirection::Forward), want);
    let mut back = want;
    back.reverse();
    assert_eq!(all(tree, ScanDirection::Backward), back);
    stats
}

#[test]
fn empty_index_and_small_inserts() {
    let env = Env::new(64);
    let tree = env.tree();
    tree.create(2).expect("create");
    assert_eq!(tree.root_info().unwrap().level, 0);
    assert!(all(&tree, ScanDirection::Forward).is_empty());
    assert!(all(&tree, ScanDirection::Backward).is_empty());
    let mut model = BTreeMap::new();
    for i in [5u32, 3, 9, 1, 7, 3, 5] {
        let key = vec![Value::Int4(i as i32), Value::Text(format!("v{i}"))];
        let t = tid(i * 10 + model.len() as u32);
        tree.insert(&key, t).expect("insert");
        model.insert(Entry(key, t), ());
    }
    assert_matches_model(&tree, &model);
    let threes = eq_scan(&tree, vec![Value::Int4(3)]);
    assert_eq!(threes.len(), 2);
    assert!(threes[0].1 < threes[1].1, "duplicates in heap TID order");
    // The same entry twice is a bug the index reports.
    let again = threes[0].clone();
    let e = tree.insert(&again.0, again.1).expect_err("duplicate entry");
    assert_eq!(e.code, SqlState::INTERNAL_ERROR);
    let e = tree
        .insert(&[Value::Int4(1)], tid(1))
        .expect_err("narrow key");
    assert_eq!(e.code, SqlState::INTERNAL_ERROR);
    let e = tree.create(1).expect_err("already created");
    assert_eq!(e.code, SqlState::INTERNAL_ERROR);
}

#[test]
fn nulls_sort_last_and_match_as_values() {
    let env = Env::new(64);
    let tree = env.tree();
    tree.create(1).expect("create");
    let vals = [Value::Null, Value::Int4(2), Value::Null, Value::Int4(-1)];
    for (i, v) in vals.iter().enumerate() {
        tree.insert(std::slice::from_ref(v), tid(i as u32))
            .expect("insert");
    }
    let got: Vec<Value> = all(&tree, ScanDirection::Forward)
        .into_iter()
        .map(|e| e.0[0].clone())
        .collect();
    assert_eq!(
        got,
        vec![Value::Int4(-1), Value::Int4(2), Value::Null, Value::Null]
    );
    assert_eq!(eq_scan(&tree, vec![Value::Null]).len(), 2);
    // A range up to 10 stops before the NULLs.
    let below = run_scan(
        &tree,
        &Bound::Unbounded,
        &Bound::Included(vec![Value::Int4(10)]),
        ScanDirection::Backward,
    )
    .unwrap();
    assert_eq!(below.len(), 2);
}

#[test]
fn entry_too_big_is_postgres_error() {
    let env = Env::new(16);
    let tree = env.tree();
    tree.create(1).expect("create");
    let ok = "x".repeat(BT_MAX_ITEM_SIZE - 8 - 3);
    tree.insert(&[Value::Text(ok)], tid(1))
        .expect("largest entry fits");
    let e = tree
        .with_name("t_a_idx")
        .insert(&[Value::Text("x".repeat(3000))], tid(2))
        .expect_err("too big");
    assert_eq!(e.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
    assert_eq!(
        e.message,
        "index row size 3016 exceeds btree version 4 maximum 2704 for index \"t_a_idx\""
    );
    // Entries of the largest size still split fine: three per page at most.
    for i in 0..40u32 {
        let mut s = format!("{i:04}");
        s.push_str(&"y".repeat(BT_MAX_ITEM_SIZE - 8 - 3 - 4));
        tree.insert(&[Value::Text(s)], tid(10 + i)).expect("insert");
    }
    let stats = tree.check().expect("check");
    assert_eq!(stats.entries, 41);
    assert!(stats.levels >= 3, "{stats:?}");
}

#[test]
fn splits_and_scans_under_a_tiny_pool() {
    let env = Env::new(16);
    let tree = env.tree();
    tree.create(2).expect("create");
    let mut model = BTreeMap::new();
    // Pseudo-random order, many duplicates of the first column.
    let mut x = 12345u32;
    for i in 0..600u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let k = (x >> 8) % 150;
        let key = vec![
            wide(k, 300 + (k as usize % 5) * 100),
            Value::Int4((x % 7) as i32),
        ];
        tree.insert(&key, tid(i)).expect("insert");
        model.insert(Entry(key, tid(i)), ());
    }
    let stats = assert_matches_model(&tree, &model);
    assert!(stats.levels >= 3, "{stats:?}");
    assert!(env.pool.stats().evictions > 0);
    // Prefix equality, ranges, both directions.
    for k in [0u32, 17, 77, 149, 200] {
        let p = vec![wide(k, 300 + (k as usize % 5) * 100)];
        for dir in [ScanDirection::Forward, ScanDirection::Backward] {
            let b = (Bound::Included(p.clone()), Bound::Included(p.clone()));
            assert_eq!(
                run_scan(&tree, &b.0, &b.1, dir).unwrap(),
                model_scan(&model, &b.0, &b.1, dir)
            );
            let b = (Bound::Excluded(p.clone()), Bound::Unbounded);
            assert_eq!(
                run_scan(&tree, &b.0, &b.1, dir).unwrap(),
                model_scan(&model, &b.0, &b.1, dir)
            );
            let b = (Bound::Unbounded, Bound::Excluded(p.clone()));
            assert_eq!(
                run_scan(&tree, &b.0, &b.1, dir).unwrap(),
                model_scan(&model, &b.0, &b.1, dir)
            );
        }
    }
    // A fresh pool over the same files (everything written back) sees the same tree.
    env.pool.flush_all().expect("flush");
    let pool2 = BufferPool::new(Arc::clone(env.pool.smgr()), 16);
    let cache2 = RootCache::new();
    assert_matches_model(&BTree::new(&pool2, &cache2, REL), &model);
}

#[test]
fn root_cache_reads_the_metapage_once_per_root_change() {
    let env = Env::new(2048);
    let tree = env.tree();
    tree.create(1).expect("create");
    // A second cache, as another server process would have, sees every root change only
    // through the pages.
    let reader_cache = RootCache::new();
    let reader = BTree::new(&env.pool, &reader_cache, REL);
    let mut levels_seen = vec![0];
    let n = 3000u32;
    for i in 0..n {
        let k = (i * 7919) % n;
        tree.insert(&[wide(k, 1000)], tid(k)).expect("insert");
        let found = eq_scan(&reader, vec![wide(k, 1000)]);
        assert_eq!(found.len(), 1, "key {k}");
        let level = tree.root_info().unwrap().level;
        if *levels_seen.last().unwrap() != level {
            levels_seen.push(level);
        }
    }
    let root_changes = levels_seen.len() as u64 - 1;
    assert!(
        root_changes >= 3,
        "the root split {root_changes} times: {levels_seen:?}"
    );
    // The writer's cache learned every new root from the split that made it: the only
    // metapage read was for `create`'s... none at all.
    assert_eq!(env.cache.meta_reads(), 0);
    // The reader read the metapage once at first and once per root change: not once per
    // descent (3000 of them).
    assert_eq!(reader_cache.meta_reads(), 1 + root_changes);
    for k in 0..n {
        assert_eq!(eq_scan(&reader, vec![wide(k, 1000)]).len(), 1);
    }
    assert_eq!(reader_cache.meta_reads(), 1 + root_changes);
    let stats = tree.check().expect("check");
    assert_eq!(stats.levels as u64, 1 + root_changes);

    // DDL: the index is dropped and made again in a new relation file under the same id.
    // Without forget_root the stale root is detected from the page (or its absence);
    // with it the next descent reads the metapage.
    env.pool.drop_relation(REL).expect("drop buffers");
    env.pool.smgr().unlink(REL).expect("unlink");
    env.pool.smgr().forget(REL);
    env.pool.smgr().create(REL).expect("create");
    tree.create(1).expect("create again");
    tree.insert(&[Value::Int4(1)], tid(1)).expect("insert");
    let before = reader_cache.meta_reads();
    assert_eq!(eq_scan(&reader, vec![Value::Int4(1)]).len(), 1);
    assert_eq!(
        reader_cache.meta_reads(),
        before + 1,
        "stale root refreshed once"
    );
    reader_cache.forget_root(REL);
    assert_eq!(eq_scan(&reader, vec![Value::Int4(1)]).len(), 1);
    assert_eq!(reader_cache.meta_reads(), before + 2);
}

#[test]
fn interrupted_splits_are_finished_by_the_next_inserter() {
    let env = Env::new(64);
    let tree = env.tree();
    tree.create(1).expect("create");
    let mut model = BTreeMap::new();
    let add = |tree: &BTree<'_>, k: u32, model: &mut BTreeMap<Entry, ()>| {
        tree.insert(&[wide(k, 700)], tid(k)).expect("insert");
        model.insert(Entry(vec![wide(k, 700)], tid(k)), ());
    };
    // Eight 700-byte entries: one leaf (eleven fit).
    for k in (0..8).map(|k| k * 10) {
        add(&tree, k, &mut model);
    }
    assert_eq!(tree.root_info().unwrap().level, 0);
    // Split the root leaf and stop before the new root exists.
    let left = tree
        .insert_with_interrupted_split(&[wide(5, 700)], tid(5))
        .expect("split");
    model.insert(Entry(vec![wide(5, 700)], tid(5)), ());
    let stats = tree.check().expect("an incomplete split is a valid state");
    assert_eq!(stats.incomplete_splits, 1);
    assert_eq!(stats.levels, 1, "no new root yet");
    // Readers find everything: the right half is reached by its right-link.
    assert_matches_model(&tree, &model);
    // The next insert into that page finishes the split (here: makes the new root).
    add(&tree, 1, &mut model);
    let stats = assert_matches_model(&tree, &model);
    assert_eq!(stats.incomplete_splits, 0);
    assert_eq!(stats.levels, 2);
    {
        let buf = env.pool.read_buffer(REL, left).unwrap();
        let g = buf.read();
        let p = BtPage::open(&g, REL, left).unwrap();
        assert_eq!(p.opaque().flags & BTP_INCOMPLETE_SPLIT, 0);
    }
    // Now interrupt a split of a leaf below the root, and let a descent through another
    // leaf leave it alone while an insert into it finishes it.
    for k in 200..260 {
        add(&tree, k, &mut model);
    }
    tree.insert_with_interrupted_split(&[wide(2015, 700)], tid(2015))
        .expect("split");
    model.insert(Entry(vec![wide(2015, 700)], tid(2015)), ());
    assert_eq!(tree.check().unwrap().incomplete_splits, 1);
    add(&tree, 3, &mut model);
    assert_eq!(
        tree.check().unwrap().incomplete_splits,
        1,
        "another leaf: untouched"
    );
    add(&tree, 2016, &mut model);
    let stats = assert_matches_model(&tree, &model);
    assert_eq!(stats.incomplete_splits, 0);
}

/// nbtree rule 5: every atomic step is one mini-transaction, so one WAL record. An insert
/// is one step plus one per split it causes (the last step puts in the entry, the final
/// downlink or the new root); each split adds a page, and each new root a page and a level.
#[test]
fn each_atomic_step_is_one_wal_record() {
    let env = Env::new(64);
    let tree = env.tree();
    let records = || env.wal.stats().records;
    let shape = |tree: &BTree<'_>| {
        let stats = tree.check().expect("check");
        (stats.pages.iter().sum::<u64>(), stats.levels as u64)
    };
    let before = records();
    tree.create(1).expect("create");
    assert_eq!(records() - before, 1, "create: metapage and root leaf");
    let (mut pages, mut levels) = shape(&tree);
    let mut splits_seen = 0;
    let mut x = 7u32;
    for i in 0..400u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let k = (x >> 8) % 1000;
        let before = records();
        tree.insert(&[wide(k, 700)], tid(i)).expect("insert");
        let (new_pages, new_levels) = shape(&tree);
        let splits = (new_pages - pages) - (new_levels - levels);
        assert_eq!(records() - before, 1 + splits, "insert {i}");
        splits_seen += splits;
        (pages, levels) = (new_pages, new_levels);
    }
    assert!(
        levels >= 3 && splits_seen > 30,
        "{levels} levels, {splits_seen} splits"
    );
    // An interrupted split is one step; the insert that finishes it is two.
    let before = records();
    tree.insert_with_interrupted_split(&[wide(500, 700)], tid(5000))
        .expect("split");
    assert_eq!(records() - before, 1);
    assert_eq!(tree.check().unwrap().incomplete_splits, 1);
    let (pages, levels) = shape(&tree);
    let before = records();
    tree.insert(&[wide(500, 700)], tid(5001)).expect("insert");
    let (new_pages, new_levels) = shape(&tree);
    let splits = (new_pages - pages) - (new_levels - levels);
    assert_eq!(
        records() - before,
        2 + splits,
        "finish the split, then insert"
    );
    assert_eq!(tree.check().unwrap().incomplete_splits, 0);
    // A delete is one step; a bulk delete one per leaf it changes.
    let before = records();
    assert!(tree.delete(&[wide(500, 700)], tid(5001)).unwrap());
    assert_eq!(records() - before, 1);
    let before = records();
    let stats = tree.bulk_delete(|t| t.offset == 1).expect("bulk delete");
    let logged = records() - before;
    assert!(stats.tuples_removed > 0 && stats.pages > stats.tuples_removed);
    assert!(
        1 <= logged && logged <= stats.tuples_removed,
        "{logged} {stats:?}"
    );
    let before = records();
    assert_eq!(
        tree.bulk_delete(|t| t.offset == 1).unwrap().tuples_removed,
        0
    );
    assert_eq!(records() - before, 0, "no leaf changed, nothing logged");
    // A bulk build logs each page once, the metapage last.
    let env = Env::new(16);
    let tree = env.tree();
    let before = env.wal.stats().records;
    let built = tree
        .build(1, (0..700u32).map(|i| (vec![wide(i, 600)], tid(i))))
        .expect("build");
    assert_eq!(env.wal.stats().records - before, built.pages);
}

#[test]
fn unique_inserts_check_live_duplicates() {
    let env = Env::new(32);
    let tree = env.tree();
    tree.create(2).expect("create");
    let key = |a: i32, b: &str| vec![Value::Int4(a), Value::Text(b.into())];
    let live = |_: ItemPointer| Ok(true);
    assert_eq!(
        tree.insert_unique(&key(1, "a"), tid(1), live).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        tree.insert_unique(&key(1, "a"), tid(2), live).unwrap(),
        UniqueInsert::Conflict(tid(1))
    );
    assert_eq!(
        tree.insert_unique(&key(1, "b"), tid(3), live).unwrap(),
        UniqueInsert::Inserted
    );
    // The old version is dead: the new one goes in, and both entries stay.
    let dead_1 = |t: ItemPointer| Ok(t != tid(1));
    assert_eq!(
        tree.insert_unique(&key(1, "a"), tid(4), dead_1).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(eq_scan(&tree, key(1, "a")).len(), 2);
    let mut asked = Vec::new();
    let r = tree
        .insert_unique(&key(1, "a"), tid(5), |t| {
            asked.push(t);
            Ok(t == tid(4))
        })
        .unwrap();
    assert_eq!(r, UniqueInsert::Conflict(tid(4)));
    assert_eq!(asked, vec![tid(1), tid(4)], "asked in heap TID order");
    // NULLs never conflict.
    let null_key = vec![Value::Int4(1), Value::Null];
    for i in 10..13 {
        assert_eq!(
            tree.insert_unique(&null_key, tid(i), live).unwrap(),
            UniqueInsert::Inserted
        );
    }
    // The callback's error is the insert's error, and nothing is inserted.
    let e = tree
        .insert_unique(&key(1, "b"), tid(20), |_| {
            Err(common::PgError::internal("heap says no"))
        })
        .expect_err("callback error");
    assert_eq!(e.message, "heap says no");
    assert_eq!(eq_scan(&tree, key(1, "b")).len(), 1);

    // Many equal keys spanning several pages: the check walks right across them, and the
    // insert lands far to the right of the first page.
    for i in 0..200u32 {
        let k = vec![Value::Int4(7), Value::Text("w".repeat(300))];
        let dead = |_: ItemPointer| Ok(false);
        assert_eq!(
            tree.insert_unique(&k, tid(1000 + i), dead).unwrap(),
            UniqueInsert::Inserted
        );
    }
    let k = vec![Value::Int4(7), Value::Text("w".repeat(300))];
    let mut asked = 0;
    let r = tree
        .insert_unique(&k, tid(5000), |t| {
            asked += 1;
            Ok(t == tid(1199))
        })
        .unwrap();
    assert_eq!(r, UniqueInsert::Conflict(tid(1199)));
    assert_eq!(asked, 200);
    tree.check().expect("check");
}

#[test]
fn concurrent_unique_inserts_admit_one_per_key() {
    let env = Env::new(512);
    let tree = env.tree();
    tree.create(1).expect("create");
    let threads = 4u32;
    let keys = 300u32;
    let winners: Vec<Vec<u32>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let tree = &tree;
                s.spawn(move || {
                    let mut won = Vec::new();
                    for k in 0..keys {
                        let key = [wide(k, 200)];
                        let r = tree
                            .insert_unique(&key, tid(k * 10 + t), |_| Ok(true))
                            .expect("insert");
                        if r == UniqueInsert::Inserted {
                            won.push(k);
                        }
                    }
                    won
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let mut all_won: Vec<u32> = winners.into_iter().flatten().collect();
    all_won.sort_unstable();
    assert_eq!(
        all_won,
        (0..keys).collect::<Vec<_>>(),
        "exactly one insert per key"
    );
    let stats = tree.check().expect("check");
    assert_eq!(stats.entries, keys as u64);
}

#[test]
fn delete_and_bulk_delete() {
    let env = Env::new(16);
    let tree = env.tree();
    tree.create(1).expect("create");
    let mut model = BTreeMap::new();
    for i in 0..400u32 {
        let key = vec![wide(i % 97, 400)];
        tree.insert(&key, tid(i)).expect("insert");
        model.insert(Entry(key, tid(i)), ());
    }
    assert!(tree.delete(&[wide(3, 400)], tid(3)).unwrap());
    assert!(
        !tree.delete(&[wide(3, 400)], tid(3)).unwrap(),
        "already gone"
    );
    assert!(!tree.delete(&[wide(4, 400)], tid(3)).unwrap(), "wrong key");
    model.remove(&Entry(vec![wide(3, 400)], tid(3)));
    assert_matches_model(&tree, &model);
    let pages_before = tree.check().unwrap().pages;
    let stats = tree
        .bulk_delete(|t| t.offset % 3 == 0)
        .expect("bulk delete");
    model.retain(|e, _| e.1.offset % 3 != 0);
    assert_eq!(stats.tuples_remaining as usize, model.len());
    assert_eq!(stats.tuples_removed, 400 - 1 - model.len() as u64);
    assert_eq!(stats.pages, pages_before[0]);
    assert_matches_model(&tree, &model);
    // Empty everything: the pages stay, and take entries again.
    tree.bulk_delete(|_| true).expect("bulk delete");
    model.clear();
    let stats = assert_matches_model(&tree, &model);
    assert_eq!(stats.pages, pages_before);
    for i in 0..400u32 {
        let key = vec![wide(i % 89, 400)];
        tree.insert(&key, tid(i)).expect("insert");
        model.insert(Entry(key, tid(i)), ());
    }
    assert_matches_model(&tree, &model);
}

#[test]
fn bulk_build_matches_model() {
    for (n, width, pool) in [
        (0u32, 8usize, 16usize),
        (1, 8, 16),
        (5000, 8, 64),
        (700, 600, 16),
    ] {
        let env = Env::new(pool);
        let tree = env.tree();
        let mut x = 99u32;
        let entries: Vec<(Vec<Value>, ItemPointer)> = (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let k = (x >> 8) % (n / 2 + 1);
                let second = if k.is_multiple_of(11) {
                    Value::Null
                } else {
                    Value::Int8(k as i64 * 3)
                };
                (vec![wide(k, width), second], tid(i))
            })
            .collect();
        let model: BTreeMap<Entry, ()> = entries
            .iter()
            .map(|(k, t)| (Entry(k.clone(), *t), ()))
            .collect();
        let built = tree.build(2, entries).expect("build");
        assert_eq!(built.entries, n as u64);
        let stats = assert_matches_model(&tree, &model);
        assert_eq!(stats.levels, built.levels);
        assert_eq!(
            stats.pages.iter().sum::<u64>() + 1,
            built.pages,
            "{stats:?} {built:?}"
        );
        if n == 5000 {
            // Leaves filled to the fill factor: 5000 entries of 32 bytes (+4) at 90%.
            let per_page = (8192 * 90 / 100) / 36;
            assert!(
                stats.pages[0] as usize <= 5000 / (per_page - 10) + 1,
                "{stats:?}"
            );
        }
        if n == 700 {
            assert!(stats.levels >= 3, "{stats:?}");
        }
        // A built index takes inserts like any other.
        let mut model = model;
        for i in 0..200u32 {
            let key = vec![wide(i * 13 % 400, width), Value::Int8(i as i64)];
            tree.insert(&key, tid(100_000 + i)).expect("insert");
            model.insert(Entry(key, tid(100_000 + i)), ());
        }
        assert_matches_model(&tree, &model);
    }
    let env = Env::new(16);
    let e = env
        .tree()
        .build(
            1,
            vec![
                (vec![Value::Int4(1)], tid(1)),
                (vec![Value::Int4(1)], tid(1)),
            ],
        )
        .expect_err("duplicate entry");
    assert_eq!(e.code, SqlState::INTERNAL_ERROR);
}

/// A build whose sort outgrows its memory writes sorted runs to temporary files and
/// builds from their merge: the same tree as in memory, the same duplicate check (across
/// runs too), and no file left behind.
#[test]
fn bulk_build_spilling_its_sort_matches_model() {
    let env = Env::new(64);
    let tree = env.tree();
    let n = 6000u32;
    let mut x = 7u32;
    let entries: Vec<(Vec<Value>, ItemPointer)> = (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let k = (x >> 8) % 2500;
            (vec![wide(k, 40), Value::Int8(i64::from(k % 7))], tid(i))
        })
        .collect();
    let model: BTreeMap<Entry, ()> = entries
        .iter()
        .map(|(k, t)| (Entry(k.clone(), *t), ()))
        .collect();
    let temp = env.pool.smgr().temp().clone();
    let before = temp.files_created();
    let spill = SortSpill {
        space: &temp,
        budget: None,
        memory: 16 << 10,
    };
    let built = tree
        .build_spilling(2, entries.into_iter().map(Ok), Some(spill))
        .expect("build");
    assert_eq!(built.entries, u64::from(n));
    assert!(temp.files_created() >= before + 10, "runs written");
    assert_eq!(temp.present(), 0, "runs removed");
    let stats = assert_matches_model(&tree, &model);
    assert_eq!(stats.levels, built.levels);

    // The same entry twice, far apart, in different runs.
    let env = Env::new(16);
    let mut twice: Vec<(Vec<Value>, ItemPointer)> =
        (0..2000u32).map(|i| (vec![wide(i, 40)], tid(i))).collect();
    twice.push((vec![wide(3, 40)], tid(3)));
    let spill = SortSpill {
        space: &temp,
        budget: None,
        memory: 8 << 10,
    };
    let e = env
        .tree()
        .build_spilling(1, twice.into_iter().map(Ok), Some(spill))
        .expect_err("duplicate entry");
    assert_eq!(e.code, SqlState::INTERNAL_ERROR);
    assert_eq!(temp.present(), 0);
}

#[test]
fn corrupt_pages_are_errors_naming_the_block() {
    let env = Env::new(64);
    let tree = env.tree();
    tree.create(1).expect("create");
    for i in 0..300u32 {
        tree.insert(&[wide(i, 200)], tid(i)).expect("insert");
    }
    let leaf = {
        let (block, _) = tree
            .descend(&tuple::ScanKey::MinusInfinity, search::Access::Read)
            .unwrap();
        block
    };
    // Scribble on the leftmost leaf's special space in memory (valid checksum, bad page).
    {
        let mut buf = env.pool.read_buffer(REL, leaf).unwrap();
        let mut g = buf.write();
        let at = common::limits::BLCKSZ - 4;
        g[at] = 0xff;
    }
    let e = all_result(&tree).expect_err("corrupt");
    assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    assert_eq!(
        e.message,
        format!("invalid btree page in block {leaf} of relation base/{REL}")
    );
    assert!(tree.check().is_err());
    assert!(tree.bulk_delete(|_| false).is_err());
}

fn all_result(tree: &BTree<'_>) -> PgResult<Vec<Entry>> {
    run_scan(
        tree,
        &Bound::Unbounded,
        &Bound::Unbounded,
        ScanDirection::Forward,
    )
}

#[test]
fn concurrent_inserts_never_hide_existing_keys_from_scans() {
    // A pool that holds the whole index: this test is about splits under scans.
    let env = Env::new(1024);
    let tree = env.tree();
    let preexisting: Vec<(Vec<Value>, ItemPointer)> = (0..1500u32)
        .map(|i| (vec![wide(i * 2, 120)], tid(i * 2)))
        .collect();
    tree.build(1, preexisting).expect("build");
    let writers = 3u32;
    let per_writer = 800u32;
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..writers {
            let (tree, finished) = (&tree, &finished);
            s.spawn(move || {
                for i in 0..per_writer {
                    let k = (i * writers + w) * 2 + 1; // odd keys, disjoint per writer
                    tree.insert(&[wide(k, 120)], tid(k)).expect("insert");
                }
                finished.fetch_add(1, AtomicOrdering::Relaxed);
            });
        }
        for r in 0..2u32 {
            let (tree, finished) = (&tree, &finished);
            s.spawn(move || {
                let mut rounds = 0u32;
                while finished.load(AtomicOrdering::Relaxed) < writers as usize || rounds < 2 {
                    rounds += 1;
                    let dir = if (rounds + r).is_multiple_of(2) {
                        ScanDirection::Forward
                    } else {
                        ScanDirection::Backward
                    };
                    let mut got: Vec<Entry> = all(tree, dir);
                    if dir == ScanDirection::Backward {
                        got.reverse();
                    }
                    assert!(
                        got.windows(2).all(|w| w[0] < w[1]),
                        "ordered, no duplicates"
                    );
                    let evens: Vec<u32> = got
                        .iter()
                        .map(|e| match &e.0[0] {
                            Value::Text(s) => s[..6].parse::<u32>().expect("key number"),
                            v => panic!("{v:?}"),
                        })
                        .filter(|k| k % 2 == 0)
                        .collect();
                    assert_eq!(evens, (0..1500).map(|i| i * 2).collect::<Vec<_>>());
                    for k in (0..3000).step_by(194) {
                        assert_eq!(eq_scan(tree, vec![wide(k, 120)]).len(), 1, "key {k}");
                    }
                }
            });
        }
    });
    let stats = tree.check().expect("check");
    assert_eq!(stats.entries, 1500 + (writers * per_writer) as u64);
    assert!(stats.levels >= 3, "{stats:?}");
}

#[test]
fn scans_hold_no_pin_between_calls() {
    // One frame: a scan that kept a pin between calls would leave none for the insert.
    let env = Env::new(1);
    let tree = env.tree();
    tree.build(
        1,
        (0..50u32).map(|i| (vec![Value::Int4(i as i32 * 2)], tid(i))),
    )
    .expect("build");
    for dir in [ScanDirection::Forward, ScanDirection::Backward] {
        let mut scan = tree
            .scan(Bound::Unbounded, Bound::Unbounded, dir)
            .expect("scan");
        let first = scan.next().expect("an entry").expect("ok");
        tree.insert(&[Value::Int4(1001)], tid(1000 + first.1.offset as u32))
            .expect("insert while the scan is paused");
        assert!(scan.count() >= 49);
    }
    // Three levels through one frame, too.
    let env = Env::new(1);
    let tree = env.tree();
    tree.build(1, (0..300u32).map(|i| (vec![wide(i, 600)], tid(i))))
        .expect("build");
    assert!(tree.check().expect("check").levels >= 3);
    assert_eq!(all(&tree, ScanDirection::Backward).len(), 300);
}

/// nbtree rule 8, step by step: a scan paused after its first page while the pages it
/// has yet to read (and the one it read) split under it.
#[test]
fn paused_scans_survive_splits_around_them() {
    for dir in [ScanDirection::Forward, ScanDirection::Backward] {
        let env = Env::new(64);
        let tree = env.tree();
        // Even keys, 700 bytes wide: eleven to a leaf, 90% full after the build.
        let evens: Vec<u32> = (0..60).map(|i| i * 4).collect();
        tree.build(1, evens.iter().map(|k| (vec![wide(*k, 700)], tid(*k))))
            .expect("build");
        let mut scan = tree
            .scan(Bound::Unbounded, Bound::Unbounded, dir)
            .expect("scan");
        let mut got = vec![scan.next().expect("entry").expect("ok")];
        // Split every leaf: odd keys between all the even ones, twice over.
        for k in (0..240u32).filter(|k| k % 4 != 0) {
            tree.insert(&[wide(k, 700)], tid(k)).expect("insert");
        }
        got.extend(scan.map(|r| r.expect("scan")));
        let keys: Vec<u32> = got
            .iter()
            .map(|(v, _)| match &v[0] {
                Value::Text(s) => s[..6].parse().expect("number"),
                v => panic!("{v:?}"),
            })
            .collect();
        let ordered = match dir {
            ScanDirection::Forward => keys.windows(2).all(|w| w[0] < w[1]),
            ScanDirection::Backward => keys.windows(2).all(|w| w[0] > w[1]),
        };
        assert!(ordered, "{dir:?}: {keys:?}");
        let mut seen: Vec<u32> = keys.iter().copied().filter(|k| k % 4 == 0).collect();
        seen.sort_unstable();
        assert_eq!(seen, evens, "{dir:?}: every entry present throughout, once");
        assert!(tree.check().expect("check").pages[0] > 10);
    }
}

/// Mixed concurrent load for manual runs (`cargo test --release -p myriad-access stress --
/// --ignored`; `NBTREE_STRESS_ROUNDS`, `NBTREE_STRESS_POOL` to vary): inserters, unique
/// inserters, deleters, a bulk deleter and scanners in both directions at once. Entries
/// with keys divisible by 5 are never deleted and every scan must see all of them, in order.
#[test]
#[ignore]
fn stress_mixed_concurrent_load() {
    let rounds: u32 =
        std::env::var("NBTREE_STRESS_ROUNDS").map_or(3000, |v| v.parse().expect("number"));
    let pool: usize =
        std::env::var("NBTREE_STRESS_POOL").map_or(4096, |v| v.parse().expect("number"));
    let env = Env::new(pool);
    let tree = env.tree();
    let stable: Vec<u32> = (0..rounds).map(|i| i * 5).collect();
    tree.build(
        2,
        stable
            .iter()
            .map(|k| (vec![wide(*k, 150), Value::Int4(0)], tid(*k))),
    )
    .expect("build");
    let finished = AtomicUsize::new(0);
    let workers = 4usize;
    std::thread::scope(|s| {
        for w in 0..workers as u32 {
            let (tree, finished) = (&tree, &finished);
            s.spawn(move || {
                let mut x = 7 + w;
                for i in 0..rounds {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    let k = (x >> 4) % (rounds * 5);
                    let k = if k.is_multiple_of(5) { k + 1 } else { k };
                    let key = vec![
                        wide(k, 100 + (k as usize % 7) * 60),
                        Value::Int4(w as i32 + 1),
                    ];
                    let t = tid(1_000_000 + i * 8 + w);
                    match w {
                        0 | 1 => tree.insert(&key, t).expect("insert"),
                        2 => {
                            tree.insert_unique(&key, t, |_| Ok(i % 3 == 0))
                                .expect("unique");
                        }
                        _ => {
                            tree.insert(&key, t).expect("insert");
                            if i % 2 == 0 {
                                assert!(tree.delete(&key, t).expect("delete"));
                            }
                        }
                    }
                    if w == 0 && i % 500 == 0 {
                        tree.bulk_delete(|t| t.block >= 10_000 && t.offset % 4 == 1)
                            .expect("bulk");
                    }
                }
                finished.fetch_add(1, AtomicOrdering::Relaxed);
            });
        }
        for r in 0..2u32 {
            let (tree, finished, stable) = (&tree, &finished, &stable);
            s.spawn(move || {
                let mut round = 0u32;
                while finished.load(AtomicOrdering::Relaxed) < workers {
                    round += 1;
                    let dir = if (round + r).is_multiple_of(2) {
                        ScanDirection::Forward
                    } else {
                        ScanDirection::Backward
                    };
                    let mut got = all(tree, dir);
                    if dir == ScanDirection::Backward {
                        got.reverse();
                    }
                    assert!(
                        got.windows(2).all(|w| w[0] < w[1]),
                        "ordered, no duplicates"
                    );
                    let seen: Vec<u32> = got
                        .iter()
                        .filter(|e| e.0[1] == Value::Int4(0))
                        .map(|e| match &e.0[0] {
                            Value::Text(s) => s[..6].parse().expect("number"),
                            v => panic!("{v:?}"),
                        })
                        .collect();
                    assert!(
                        &seen == stable,
                        "{} stable entries seen of {}",
                        seen.len(),
                        stable.len()
                    );
                }
            });
        }
    });
    tree.check().expect("check");
}

#[derive(Clone, Debug)]
enum Op {
    Insert {
        k: u32,
        second: Option<i32>,
        tid: u32,
    },
    Delete {
        pick: usize,
    },
    DeleteMissing {
        k: u32,
        tid: u32,
    },
    Scan {
        lower: Option<(u32, bool, bool)>,
        upper: Option<(u32, bool, bool)>,
        backward: bool,
    },
    BulkDelete {
        modulus: u16,
    },
}

fn key_of(k: u32, second: Option<i32>) -> Vec<Value> {
    vec![
        wide(k, 250 + (k as usize * 37) % 600),
        second.map_or(Value::Null, Value::Int4),
    ]
}

fn bound_of(b: Option<(u32, bool, bool)>) -> Bound<Vec<Value>> {
    match b {
        None => Bound::Unbounded,
        // (key, inclusive, both columns)
        Some((k, incl, both)) => {
            let mut v = key_of(k, Some((k % 5) as i32));
            if !both {
                v.truncate(1);
            }
            if incl {
                Bound::Included(v)
            } else {
                Bound::Excluded(v)
            }
        }
    }
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let k = 0u32..120;
    let bound = proptest::option::of((0u32..120, any::<bool>(), any::<bool>()));
    prop_oneof![
        200 => (k.clone(), proptest::option::weighted(0.9, 0i32..5), 0u32..100_000)
            .prop_map(|(k, second, tid)| Op::Insert { k, second, tid }),
        30 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        10 => (k, 0u32..100_000).prop_map(|(k, tid)| Op::DeleteMissing { k, tid }),
        30 => (bound.clone(), bound, any::<bool>())
            .prop_map(|(lower, upper, backward)| Op::Scan { lower, upper, backward }),
        1 => (2u16..6).prop_map(|modulus| Op::BulkDelete { modulus }),
    ]
}

/// One case of the property test; records the tallest tree it made.
fn model_case(ops: Vec<Op>, max_levels: &Cell<u32>) -> Result<(), TestCaseError> {
    let env = Env::new(16);
    let tree = env.tree();
    tree.create(2).expect("create");
    let mut model: BTreeMap<Entry, ()> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Insert { k, second, tid: t } => {
                let e = Entry(key_of(k, second), tid(t));
                let r = tree.insert(&e.0, e.1);
                match model.entry(e) {
                    std::collections::btree_map::Entry::Occupied(_) => prop_assert!(r.is_err()),
                    std::collections::btree_map::Entry::Vacant(v) => {
                        r.expect("insert");
                        v.insert(());
                    }
                }
            }
            Op::Delete { pick } => {
                if let Some(e) = model.keys().nth(pick % model.len().max(1)).cloned() {
                    prop_assert!(tree.delete(&e.0, e.1).expect("delete"));
                    model.remove(&e);
                }
            }
            Op::DeleteMissing { k, tid: t } => {
                let e = Entry(key_of(k, Some(9)), tid(t));
                prop_assert!(!tree.delete(&e.0, e.1).expect("delete"));
            }
            Op::Scan {
                lower,
                upper,
                backward,
            } => {
                let (lower, upper) = (bound_of(lower), bound_of(upper));
                let dir = if backward {
                    ScanDirection::Backward
                } else {
                    ScanDirection::Forward
                };
                let got = run_scan(&tree, &lower, &upper, dir).expect("scan");
                prop_assert_eq!(got, model_scan(&model, &lower, &upper, dir));
            }
            Op::BulkDelete { modulus } => {
                let stats = tree
                    .bulk_delete(|t| t.offset % modulus == 0)
                    .expect("bulk delete");
                model.retain(|e, _| e.1.offset % modulus != 0);
                prop_assert_eq!(stats.tuples_remaining as usize, model.len());
            }
        }
        max_levels.set(
            max_levels
                .get()
                .max(tree.root_info().expect("root").level + 1),
        );
    }
    assert_matches_model(&tree, &model);
    Ok(())
}

/// Random inserts, deletes and scans (both directions) against a `BTreeMap`, through a
/// 16-page pool, on keys wide enough that a few hundred entries make a three-level tree.
#[test]
fn model_check_property() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let max_levels = Cell::new(0);
    let ops = proptest::collection::vec(op_strategy(), 350..500);
    if let Err(e) = runner.run(&ops, |ops| model_case(ops, &max_levels)) {
        panic!("{e}");
    }
    assert!(
        max_levels.get() >= 3,
        "trees reached {} levels",
        max_levels.get()
    );
}

fn num(t: &str) -> Value {
    Value::Numeric(common::numeric::Numeric::parse(t).expect("numeric literal"))
}

/// Numeric keys are compared as numbers from their stored bytes: 2 < 10, -1 < 0, equal
/// values of different scales are one key (for scans and for uniqueness), NaN is above
/// Infinity; enough of them (wide ones too) to split pages, so pivots and suffix
/// truncation see numerics as well.
#[test]
fn numeric_keys_in_numeric_order() {
    let env = Env::new(64);
    let tree = env.tree();
    tree.create(2).expect("create");
    let mut model = BTreeMap::new();
    let specials = [
        "10",
        "2",
        "-1",
        "0",
        "-0.5",
        "1.0",
        "1.00",
        "NaN",
        "Infinity",
        "-Infinity",
        "1e100",
        "-1e-100",
        "9999.9999",
        "10000",
    ];
    let mut n = 0u32;
    let mut add = |key: Vec<Value>| {
        let t = tid(n);
        n += 1;
        tree.insert(&key, t).expect("insert");
        model.insert(Entry(key, t), ());
    };
    for s in specials {
        add(vec![num(s), Value::Int4(-1)]);
    }
    for i in 0..600u32 {
        // Many digits, so that a few hundred keys span several leaves.
        let sign = if i % 3 == 0 { "-" } else { "" };
        let s = format!("{sign}{}.{i:0>80}", i * 7919 % 1000);
        add(vec![num(&s), Value::Int4(i as i32)]);
    }
    let stats = assert_matches_model(&tree, &model);
    assert!(stats.levels > 1, "the keys split pages");
    let specials_in_order: Vec<String> = all(&tree, ScanDirection::Forward)
        .iter()
        .filter(|e| e.0[1] == Value::Int4(-1))
        .map(|e| {
            e.0[0]
                .to_text(&common::value::TextContext::detached())
                .unwrap()
        })
        .collect();
    assert_eq!(
        specials_in_order,
        [
            "-Infinity",
            "-1",
            "-0.5",
            &format!("-0.{}1", "0".repeat(99)),
            "0",
            "1.0",
            "1.00",
            "2",
            "10",
            "9999.9999",
            "10000",
            &format!("1{}", "0".repeat(100)),
            "Infinity",
            "NaN",
        ]
    );
    // 1 finds both 1.0 and 1.00; a range in numeric order.
    assert_eq!(eq_scan(&tree, vec![num("1")]).len(), 2);
    let between = run_scan(
        &tree,
        &Bound::Included(vec![num("-1")]),
        &Bound::Excluded(vec![num("10")]),
        ScanDirection::Forward,
    )
    .unwrap();
    let want = model_scan(
        &model,
        &Bound::Included(vec![num("-1")]),
        &Bound::Excluded(vec![num("10")]),
        ScanDirection::Forward,
    );
    assert_eq!(between, want);
    assert_eq!(eq_scan(&tree, vec![num("NaN")]).len(), 1);
    // Uniqueness is by value: 1.000 conflicts with 1.0.
    let unique = Env::new(32);
    let ut = unique.tree();
    ut.create(1).expect("create");
    let live = |_: ItemPointer| Ok(true);
    assert_eq!(
        ut.insert_unique(&[num("1.0")], tid(1), live).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        ut.insert_unique(&[num("1.000")], tid(2), live).unwrap(),
        UniqueInsert::Conflict(tid(1))
    );
    assert_eq!(
        ut.insert_unique(&[num("NaN")], tid(3), live).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        ut.insert_unique(&[num("NaN")], tid(4), live).unwrap(),
        UniqueInsert::Conflict(tid(3))
    );
    // Scanned keys keep their display scale.
    assert_eq!(
        all(&ut, ScanDirection::Forward)[0].0[0]
            .to_text(&common::value::TextContext::detached())
            .unwrap(),
        "1.0"
    );
}

/// `a` against `b` column by column in `order` (the model of [`KeyOrder`]), then TID.
fn ordered_cmp(order: KeyOrder, a: &Entry, b: &Entry) -> Ordering {
    ordered_prefix_cmp(order, &a.0, &b.0).then(a.1.cmp(&b.1))
}

fn ordered_prefix_cmp(order: KeyOrder, key: &[Value], bound: &[Value]) -> Ordering {
    for (i, (x, y)) in key.iter().zip(bound).enumerate() {
        let (desc, nulls_first) = order.column(i);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) if desc => x.cmp_non_null(y).reverse(),
            (false, false) => x.cmp_non_null(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// DESC and NULLS FIRST columns: inserted one by one (splitting a three-level tree) or
/// built in bulk, an index in each order returns its entries in that order both ways,
/// passes the invariant check, and bounds a range scan in that order.
#[test]
fn descending_and_nulls_first_columns_order_the_tree() {
    let orders = [
        (false, false, false, false),
        (true, true, false, false),
        (true, false, false, true),
        (false, true, true, true),
        (false, false, true, false),
    ];
    for (d0, n0, d1, n1) in orders {
        let mut order = KeyOrder::default();
        order.set(0, d0, n0);
        order.set(1, d1, n1);
        let mut x = 7u32;
        let entries: Vec<Entry> = (0..1500u32)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let k = (x >> 8) % 300;
                let first = if k.is_multiple_of(17) {
                    Value::Null
                } else {
                    wide(k, 600)
                };
                let second = if k.is_multiple_of(3) {
                    Value::Null
                } else {
                    Value::Int4((x >> 4) as i32 % 7 - 3)
                };
                Entry(vec![first, second], tid(i))
            })
            .collect();
        let mut want = entries.clone();
        want.sort_by(|a, b| ordered_cmp(order, a, b));
        let mut back = want.clone();
        back.reverse();
        for bulk in [false, true] {
            let env = Env::new(32);
            let tree = env.tree().with_order(order);
            if bulk {
                tree.build(2, entries.iter().map(|e| (e.0.clone(), e.1)))
                    .expect("build");
            } else {
                tree.create(2).expect("create");
                for e in &entries {
                    tree.insert(&e.0, e.1).expect("insert");
                }
            }
            let stats = tree.check().expect("invariants");
            assert!(stats.levels >= 3, "{stats:?}");
            assert_eq!(all(&tree, ScanDirection::Forward), want, "{order:?}");
            assert_eq!(all(&tree, ScanDirection::Backward), back, "{order:?}");
            // A range in index order: from key 100 (inclusive) to key 200 (exclusive),
            // on the first column alone and on both.
            for both in [false, true] {
                let mut lo = vec![wide(100, 600), Value::Int4(0)];
                let mut hi = vec![wide(200, 600), Value::Int4(1)];
                if !both {
                    lo.truncate(1);
                    hi.truncate(1);
                }
                let (lo, hi) = if d0 { (hi, lo) } else { (lo, hi) };
                let got = run_scan(
                    &tree,
                    &Bound::Included(lo.clone()),
                    &Bound::Excluded(hi.clone()),
                    ScanDirection::Forward,
                )
                .expect("scan");
                let expect: Vec<Entry> = want
                    .iter()
                    .filter(|e| {
                        ordered_prefix_cmp(order, &e.0, &lo) != Ordering::Less
                            && ordered_prefix_cmp(order, &e.0, &hi) == Ordering::Less
                    })
                    .cloned()
                    .collect();
                assert!(!expect.is_empty());
                assert_eq!(got, expect, "{order:?} both={both}");
            }
            // Every entry is found again by its exact position (delete), NULLs included.
            for e in entries.iter().step_by(7) {
                assert!(tree.delete(&e.0, e.1).expect("delete"), "{e:?}");
            }
            tree.check().expect("invariants after deletes");
        }
    }
}

/// INCLUDE columns ride along: a unique index compares its key columns only, so entries
/// that differ in an included value still conflict, and an included NULL does not make
/// a key NULL.
#[test]
fn unique_inserts_ignore_included_columns() {
    let env = Env::new(16);
    let tree = env.tree().with_included(1);
    tree.create(2).expect("create");
    let live = |_| Ok(true);
    let entry = |k: i32, inc: Option<&str>| {
        vec![
            Value::Int4(k),
            inc.map_or(Value::Null, |s| Value::Text(s.into())),
        ]
    };
    assert_eq!(
        tree.insert_unique(&entry(1, Some("x")), tid(1), live)
            .unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        tree.insert_unique(&entry(1, Some("y")), tid(2), live)
            .unwrap(),
        UniqueInsert::Conflict(tid(1))
    );
    assert_eq!(
        tree.insert_unique(&entry(1, None), tid(3), live).unwrap(),
        UniqueInsert::Conflict(tid(1))
    );
    assert_eq!(
        tree.insert_unique(&entry(2, None), tid(4), live).unwrap(),
        UniqueInsert::Inserted
    );
    let keys: Vec<Vec<Value>> = all(&tree, ScanDirection::Forward)
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(keys, vec![entry(1, Some("x")), entry(2, None)]);
}
