//! Btree crash recovery through the simulated file system: power loss drops every write
//! not covered by a completed fsync and may tear one page write; recovery replays the WAL,
//! and the index must then be a valid tree (nbtree rule 5: every atomic step is one
//! mini-transaction) holding exactly the entries of some prefix of the operations run:
//! every acknowledged change, then the unacknowledged ones up to some point, never an entry
//! that was not inserted and never one that was deleted and acknowledged.
//!
//! The workload: unique keys (wide text, so that few fill a page and the tree grows three
//! or four levels with a few hundred entries), random inserts, deletes and bulk deletes, a
//! pool of a few frames that forces write-back, `Wal::commit` at random (acknowledging
//! everything so far), random checkpoints, then a crash and a restart with a fresh
//! `RootCache`, four times per seed. A split whose downlink was lost leaves
//! `BTP_INCOMPLETE_SPLIT`; `check` accepts it, and inserts through the page must finish
//! it (probed after each recovery that finds one). The setup is `create` or a bulk
//! `build`, acknowledged.
//!
//! The entries recovered are matched against the acknowledged set with the changes since
//! applied one at a time (a bulk delete counts as single deletes in key order, the order
//! of its leaf-by-leaf records): some prefix must match exactly.
//!
//! `MYRIAD_FUZZ_SEED=N` replays one seed; `MYRIAD_SIM_SEEDS` runs more (default 12).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use common::ids::ItemPointer;
use common::{PgResult, RelId, Value};
use myriad_access::nbtree::{BTree, RootCache, ScanDirection};
use storage::bufmgr::BufferPool;
use storage::simvfs::{SimRng, SimVfs};
use storage::smgr::Smgr;
use storage::vfs::Vfs;
use storage::xlog::{self, Wal, WalOptions};

const REL: RelId = 16500;
/// Keys are `0..KEYS`; each is in the index at most once at a time.
const KEYS: u64 = 500;
/// Frames in the pool: more than an insert pins at once (tree height + 4, nbtree rule 4),
/// few enough that most pages are written back and read again.
const POOL_PAGES: usize = 14;
/// Operations per round are below this.
const MAX_OPS: u64 = 400;
const ROUNDS: u32 = 4;
/// Heap TID numbers at and above this are probes (see `finish_incomplete_splits`).
const PROBE_TID: u64 = 1 << 36;

/// An index entry: key number and heap TID number.
type Entry = (u64, u64);

fn key_text(k: u64) -> Value {
    // 300 to 1100 bytes: five to twenty-five entries to a page.
    let width = 300 + (k.wrapping_mul(2_654_435_761) % 800) as usize;
    let mut s = format!("{k:06}-");
    while s.len() < width {
        s.push(char::from(b'a' + (k as usize + s.len()) as u8 % 26));
    }
    Value::Text(s)
}

fn key_of(values: &[Value]) -> u64 {
    match values {
        [Value::Text(s)] => {
            let k: u64 = s[..6].parse().expect("a key number");
            assert_eq!(values[0], key_text(k), "key {k} came back changed");
            k
        }
        v => panic!("not a key of this index: {v:?}"),
    }
}

fn tid(n: u64) -> ItemPointer {
    ItemPointer {
        block: (n >> 8) as u32,
        offset: (n & 0xff) as u16 + 1,
    }
}

fn tid_number(t: ItemPointer) -> u64 {
    ((t.block as u64) << 8) | (t.offset as u64 - 1)
}

struct Model {
    /// The entries as of the last acknowledged commit.
    acked: BTreeSet<Entry>,
    /// Changes since, in order: the entry and whether it was inserted (else deleted).
    since_ack: Vec<(Entry, bool)>,
    /// Key -> TID number of the entries the workload believes are in (acked + since_ack).
    live: BTreeMap<u64, u64>,
    next_tid: u64,
}

impl Model {
    fn change(&mut self, e: Entry, inserted: bool) {
        self.since_ack.push((e, inserted));
        if inserted {
            self.live.insert(e.0, e.1);
        } else {
            self.live.remove(&e.0);
        }
    }

    fn acknowledge(&mut self) {
        self.acked = self.live.iter().map(|(k, t)| (*k, *t)).collect();
        self.since_ack.clear();
    }
}

fn open(vfs: &Arc<SimVfs>) -> (BufferPool, Arc<Wal>) {
    let dir = Path::new("/sim/data");
    let vfs: Arc<dyn Vfs> = vfs.clone();
    vfs.create_dir_all(dir).unwrap();
    let smgr = Arc::new(Smgr::new(vfs.clone(), dir).unwrap());
    let mut pool = BufferPool::new(smgr, POOL_PAGES);
    let options = WalOptions {
        segment_size: xlog::MIN_WAL_SEGMENT_SIZE,
        synchronous_commit: true,
    };
    let (wal, _) = xlog::open_and_recover(vfs, dir, &mut pool, options).expect("recovery");
    (pool, wal)
}

fn scan_all(tree: &BTree<'_>, dir: ScanDirection) -> Vec<Entry> {
    tree.scan(Bound::Unbounded, Bound::Unbounded, dir)
        .expect("scan")
        .map(|r| {
            let (values, t) = r.expect("scan");
            (key_of(&values), tid_number(t))
        })
        .collect()
}

/// Check the recovered tree and find the prefix of the changes since the last
/// acknowledgement that it holds; the model continues from there.
fn verify(tree: &BTree<'_>, model: &mut Model, ctx: &str) -> u64 {
    let stats = tree
        .check()
        .unwrap_or_else(|e| panic!("{ctx}: check: {e:?}"));
    let found = scan_all(tree, ScanDirection::Forward);
    let mut backward = scan_all(tree, ScanDirection::Backward);
    backward.reverse();
    assert_eq!(found, backward, "{ctx}: scans in both directions agree");
    assert_eq!(
        stats.entries,
        found.len() as u64,
        "{ctx}: check counts the scan"
    );
    let recovered: BTreeSet<Entry> = found.iter().copied().collect();
    assert_eq!(
        recovered.len(),
        found.len(),
        "{ctx}: an entry came back twice"
    );

    // `state` walks from the acknowledged set through the changes since; `mismatch`
    // counts the entries where it and the recovered set differ.
    let mut mismatch = model.acked.symmetric_difference(&recovered).count();
    let mut matched = (mismatch == 0).then_some(0);
    for (i, (e, inserted)) in model.since_ack.iter().enumerate() {
        if recovered.contains(e) == *inserted {
            mismatch -= 1;
        } else {
            mismatch += 1;
        }
        if mismatch == 0 {
            matched = Some(i + 1);
        }
    }
    if matched.is_none() {
        let changed: BTreeSet<Entry> = model.since_ack.iter().map(|c| c.0).collect();
        let lost: Vec<&Entry> = (model.acked.difference(&recovered))
            .filter(|e| !changed.contains(e))
            .take(5)
            .collect();
        let unexpected: Vec<&Entry> = (recovered.difference(&model.acked))
            .filter(|e| !changed.contains(e))
            .take(5)
            .collect();
        panic!(
            "{ctx}: the recovered index is no prefix of the changes: {} entries, {} acknowledged, \
             {} changes since; acknowledged and lost (some): {lost:?}; present though deleted and \
             acknowledged, or never inserted (some): {unexpected:?}",
            recovered.len(),
            model.acked.len(),
            model.since_ack.len()
        );
    }
    // Every entry is also found by a descent (internal pages route to it).
    for &(k, t) in &found {
        let key = vec![key_text(k)];
        let hits: Vec<Entry> = tree
            .scan(
                Bound::Included(key.clone()),
                Bound::Included(key),
                ScanDirection::Forward,
            )
            .expect("scan")
            .map(|r| r.map(|(v, t)| (key_of(&v), tid_number(t))).expect("scan"))
            .collect();
        assert_eq!(hits, vec![(k, t)], "{ctx}: key {k} by descent");
    }
    model.live = found.iter().copied().collect();
    model.acknowledge();
    stats.incomplete_splits
}

/// A crash between a split and its downlink leaves `BTP_INCOMPLETE_SPLIT` (nbtree rule 5);
/// an insert through the page must finish it. Insert a probe next to every entry (each
/// lands on the entry's leaf, through every level above it), check that no split is left
/// incomplete, then delete the probes and acknowledge.
fn finish_incomplete_splits(tree: &BTree<'_>, wal: &Wal, model: &Model, ctx: &str) {
    let keys: Vec<u64> = model.live.keys().copied().collect();
    for &k in &keys {
        tree.insert(&[key_text(k)], tid(PROBE_TID + k))
            .expect("probe insert");
    }
    let stats = tree.check().expect("check after probes");
    assert_eq!(
        stats.incomplete_splits, 0,
        "{ctx}: inserts left a split unfinished"
    );
    for &k in &keys {
        assert!(
            tree.delete(&[key_text(k)], tid(PROBE_TID + k))
                .expect("probe delete")
        );
    }
    wal.commit().expect("commit");
}

/// A random key that is (`live`) or is not in the index, if a few tries find one.
fn pick(rng: &mut SimRng, model: &Model, live: bool) -> Option<u64> {
    (0..8)
        .map(|_| rng.below(KEYS))
        .find(|k| model.live.contains_key(k) == live)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert,
    Delete,
    BulkDelete,
}

/// One operation of the workload; `Err` only from an injected I/O failure.
fn operate(tree: &BTree<'_>, rng: &mut SimRng, model: &mut Model) -> PgResult<Op> {
    let dice = rng.below(100);
    if dice < 65 {
        if let Some(k) = pick(rng, model, false) {
            let t = model.next_tid;
            model.next_tid += 1;
            // Recorded first: a failed insert may still have reached the log.
            model.change((k, t), true);
            tree.insert(&[key_text(k)], tid(t))?;
        }
        Ok(Op::Insert)
    } else if dice < 97 {
        if let Some(k) = pick(rng, model, true) {
            let t = model.live[&k];
            model.change((k, t), false);
            assert!(tree.delete(&[key_text(k)], tid(t))?, "key {k} to delete");
        }
        Ok(Op::Delete)
    } else {
        // Bulk delete: its records go leaf by leaf, left to right, so in key order.
        let salt = rng.next_u64();
        let dead = move |t: u64| (t ^ salt).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61 == 0;
        let doomed: Vec<Entry> = model
            .live
            .iter()
            .filter(|(_, t)| dead(**t))
            .map(|(k, t)| (*k, *t))
            .collect();
        for e in &doomed {
            model.change(*e, false);
        }
        let stats = tree.bulk_delete(|t| dead(tid_number(t)))?;
        assert_eq!(stats.tuples_removed, doomed.len() as u64);
        Ok(Op::BulkDelete)
    }
}

#[derive(Default)]
struct Outcome {
    incomplete_splits: u64,
    crashes_inside_an_operation: u64,
    max_levels: u32,
}

fn run_seed(seed: u64, fail_syncs: bool) -> Outcome {
    let mut rng = SimRng::new(seed);
    let mut vfs = Arc::new(SimVfs::new());
    let mut model = Model {
        acked: BTreeSet::new(),
        since_ack: Vec::new(),
        live: BTreeMap::new(),
        next_tid: 0,
    };
    let mut outcome = Outcome::default();
    {
        let (pool, wal) = open(&vfs);
        let cache = RootCache::new();
        let tree = BTree::new(&pool, &cache, REL);
        pool.create_relation(REL).unwrap();
        if rng.chance(50) {
            tree.create(1).expect("create");
        } else {
            let n = rng.below(KEYS / 2);
            let keys: Vec<u64> = (0..KEYS).filter(|_| rng.below(KEYS) < n).collect();
            for &k in &keys {
                model.live.insert(k, model.next_tid);
                model.next_tid += 1;
            }
            let entries: Vec<(Vec<Value>, ItemPointer)> = model
                .live
                .iter()
                .map(|(k, t)| (vec![key_text(*k)], tid(*t)))
                .collect();
            tree.build(1, entries).expect("build");
        }
        wal.commit().unwrap();
        // The file's directory entry, made durable by the process that created it. Without
        // this, the restart below (no crash in between) finds the file, so its Smgr never
        // syncs `base/`, and its checkpoint moves the redo point past the SmgrCreate
        // record: a power loss later can lose the file for good (storage, smgr rule 4).
        pool.smgr().sync_all().unwrap();
        model.acknowledge();
    }
    for round in 0..=ROUNDS {
        let ctx = format!("seed {seed} round {round}");
        let (pool, wal) = open(&vfs);
        let cache = RootCache::new();
        let tree = BTree::new(&pool, &cache, REL);
        let incomplete = verify(&tree, &mut model, &ctx);
        outcome.max_levels = outcome.max_levels.max(tree.root_info().unwrap().level + 1);
        if incomplete > 0 {
            outcome.incomplete_splits += incomplete;
            finish_incomplete_splits(&tree, &wal, &model, &ctx);
        }
        if round == ROUNDS {
            break;
        }
        let ops = rng.below(MAX_OPS);
        let fail_at = fail_syncs.then(|| rng.below(ops.max(1)));
        for op in 0..ops {
            if fail_at == Some(op) {
                vfs.fail_syncs_after(Some(rng.below(3)));
            }
            let start = wal.insert_lsn();
            let kind = match operate(&tree, &mut rng, &mut model) {
                Ok(kind) => kind,
                Err(e) => {
                    assert!(fail_syncs, "{ctx} op {op}: {e:?}");
                    break; // the log refuses more (wal rule 5); nothing more is acknowledged
                }
            };
            // An eviction flushed the log halfway through this operation (between two of
            // its steps): crashing now ends the durable log inside it, as a crash between
            // a split and its downlink would. Bulk deletes, long and often flushed halfway,
            // get a smaller share.
            let flushed = wal.flushed_lsn();
            let percent = if kind == Op::BulkDelete { 20 } else { 100 };
            if start < flushed && flushed < wal.insert_lsn() && rng.chance(percent) {
                outcome.crashes_inside_an_operation += 1;
                break;
            }
            if rng.chance(30) {
                match wal.commit() {
                    Ok(()) => model.acknowledge(),
                    Err(e) => {
                        assert!(fail_syncs, "{ctx} op {op}: {e:?}");
                        break;
                    }
                }
            }
            if rng.chance(3)
                && let Err(e) = xlog::checkpoint(&pool, &wal)
            {
                assert!(fail_syncs, "{ctx} op {op}: {e:?}");
                break;
            }
        }
        vfs = Arc::new(vfs.crash(&mut rng));
    }
    outcome
}

fn run_all(fail_syncs: bool) {
    let mut total = Outcome::default();
    for seed in storage::simvfs::seeds(12) {
        eprintln!("seed {seed}");
        let outcome = run_seed(seed, fail_syncs);
        total.incomplete_splits += outcome.incomplete_splits;
        total.crashes_inside_an_operation += outcome.crashes_inside_an_operation;
        total.max_levels = total.max_levels.max(outcome.max_levels);
    }
    eprintln!(
        "crashes inside an operation: {}; incomplete splits found after crashes: {}; \
         tallest tree: {} levels",
        total.crashes_inside_an_operation, total.incomplete_splits, total.max_levels
    );
}

#[test]
fn power_loss_keeps_acknowledged_entries_and_a_valid_tree() {
    run_all(false);
}

#[test]
fn failed_fsync_refuses_changes_and_recovery_keeps_acknowledged_entries() {
    run_all(true);
}
