//! HOT chains and their pruning survive crashes (access rule 11), through the simulated
//! file system: power loss drops every write not covered by a completed fsync and may
//! tear one page write; recovery replays the WAL. Afterwards every row committed is
//! found through its index entries (a model index: each row's roots, kept as a real
//! index's entries are, for the transactions that committed), exactly once, with its
//! last committed value: no chain is cut, no redirect points at the wrong tuple, and no
//! pruned line pointer is reached.
//!
//! The workload, per round: transactions update rows HOT where the new version fits
//! (else as a new root with its own entry), delete a few, commit (mostly) or roll back;
//! pages are pruned now and then (often just before the crash), index fetches and
//! sequential scans prune crowded pages on their own; checkpoints now and then; then a crash, possibly in the
//! middle of a transaction, and a restart.
//!
//! `MYRIAD_FUZZ_SEED=N` replays one seed; `MYRIAD_SIM_SEEDS` runs more (default 12).

mod simdb;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::ids::ItemPointer;
use common::{DataType, RelId, Value};
use myriad_access::heapam::{self, HeapWrite};
use myriad_access::tuple;
use simdb::Db;
use storage::simvfs::{SimRng, SimVfs};
use storage::xlog;
use txn::{Isolation, Tx};

const REL: RelId = 16600;
const POOL_PAGES: usize = 6;
const ROUNDS: u32 = 4;
const ROWS: i32 = 40;
const TYPES: [DataType; 3] = [DataType::Int4, DataType::Int4, DataType::Text];

fn open(vfs: &Arc<SimVfs>) -> Db {
    simdb::open(vfs, POOL_PAGES)
}

/// Row `id` with value `v`, `width` bytes of padding.
fn row(id: i32, v: i32, width: usize) -> Vec<u8> {
    tuple::encode(
        &[
            Value::Int4(id),
            Value::Int4(v),
            Value::Text("x".repeat(width)),
        ],
        &TYPES,
    )
    .expect("encode")
}

fn decode(bytes: &[u8]) -> (i32, i32) {
    match tuple::decode(bytes, &TYPES).expect("decode").as_slice() {
        [Value::Int4(id), Value::Int4(v), _] => (*id, *v),
        other => panic!("not a row: {other:?}"),
    }
}

/// The model: each row's index entries (roots, as a real index keeps them until
/// VACUUM) and its last committed value (`None`: deleted).
#[derive(Clone, Default)]
struct Model {
    entries: BTreeMap<i32, Vec<ItemPointer>>,
    value: BTreeMap<i32, Option<i32>>,
}

/// The version of row `id` a fresh snapshot sees through its entries, with its
/// address; panics if two are seen.
fn find(db: &Db, tx: &Tx, model: &Model, id: i32, ctx: &str) -> Option<(ItemPointer, i32)> {
    let snap = tx.start_statement();
    let mut seen = None;
    for &root in model.entries.get(&id).into_iter().flatten() {
        if let Some((at, bytes)) =
            heapam::heap_hot_fetch(&db.pool, REL, root, &snap, tx).expect("fetch")
        {
            let (got, v) = decode(&bytes);
            assert_eq!(got, id, "{ctx}: entry {root:?} of row {id} found row {got}");
            assert!(
                seen.is_none(),
                "{ctx}: row {id} seen twice: {seen:?} and {at:?}"
            );
            seen = Some((at, v));
        }
    }
    seen
}

fn verify(db: &Db, model: &Model, ctx: &str) {
    let tx = Tx::new(db.mgr.clone(), 1);
    tx.begin(Isolation::ReadCommitted, false);
    for (&id, &v) in &model.value {
        let found = find(db, &tx, model, id, ctx).map(|(_, v)| v);
        assert_eq!(found, v, "{ctx}: row {id}");
    }
    // A sequential scan sees the same rows.
    let snap = tx.start_statement();
    let mut scanned: BTreeMap<i32, i32> = BTreeMap::new();
    for item in heapam::HeapScan::visible(&db.pool, REL, &snap, &tx).expect("scan") {
        let (id, v) = decode(&item.expect("row").1);
        assert!(
            scanned.insert(id, v).is_none(),
            "{ctx}: row {id} scanned twice"
        );
    }
    let expected: BTreeMap<i32, i32> = model
        .value
        .iter()
        .filter_map(|(&id, &v)| Some((id, v?)))
        .collect();
    assert_eq!(scanned, expected, "{ctx}: the scan's rows");
    tx.abort().expect("abort");
}

/// One transaction of a few updates and deletes; the model changes only if it commits.
/// Returns the count of HOT updates it made, `None` if the log refused (a failed fsync).
fn transaction(db: &Db, rng: &mut SimRng, model: &mut Model) -> Option<u64> {
    let tx = Tx::new(db.mgr.clone(), 1);
    tx.begin(Isolation::ReadCommitted, false);
    let mut next = model.clone();
    let mut hot = 0;
    for _ in 0..=rng.below(4) {
        let xid = tx.xid().expect("xid");
        if rng.chance(10) {
            // A sequential scan, which prunes crowded pages it meets.
            let snap = tx.start_statement();
            for item in heapam::HeapScan::visible(&db.pool, REL, &snap, &tx).expect("scan") {
                item.expect("row");
            }
        }
        let id = 1 + rng.below(ROWS as u64) as i32;
        let Some((at, v)) = find(db, &tx, &next, id, "transaction") else {
            continue;
        };
        if rng.chance(5) {
            let done = heapam::heap_delete(&db.pool, REL, at, xid, &tx).expect("delete");
            assert!(matches!(done, HeapWrite::Done(_)), "{done:?}");
            next.value.insert(id, None);
        } else {
            let width = rng.below(300) as usize;
            let new = row(id, v + 1, width);
            let done = heapam::heap_update(&db.pool, REL, at, &new, xid, &tx, false, true)
                .expect("update");
            let HeapWrite::Done(new_tid) = done else {
                panic!("update: {done:?}");
            };
            if new_tid.block == at.block {
                hot += 1;
            } else {
                // Not HOT: the new version is a root of its own, with its own entry.
                next.entries.entry(id).or_default().push(new_tid);
            }
            next.value.insert(id, Some(v + 1));
        }
        tx.end_statement();
    }
    if rng.chance(90) {
        tx.commit().ok()?;
        *model = next;
    } else {
        tx.abort().ok()?;
    }
    Some(hot)
}

fn run_seed(seed: u64) -> u64 {
    let mut rng = SimRng::new(seed);
    let mut vfs = Arc::new(SimVfs::new());
    let mut model = Model::default();
    let mut hot = 0;
    {
        let db = open(&vfs);
        db.pool.create_relation(REL).unwrap();
        let tx = Tx::new(db.mgr.clone(), 1);
        tx.begin(Isolation::ReadCommitted, false);
        let xid = tx.xid().expect("xid");
        for id in 1..=ROWS {
            let tid = heapam::heap_insert(&db.pool, REL, &row(id, 0, 100), xid, tx.cid(), 50)
                .expect("insert");
            model.entries.insert(id, vec![tid]);
            model.value.insert(id, Some(0));
        }
        tx.commit().expect("commit");
    }
    for round in 0..=ROUNDS {
        let ctx = format!("seed {seed} round {round}");
        let db = open(&vfs);
        verify(&db, &model, &ctx);
        if round == ROUNDS {
            break;
        }
        for _ in 0..rng.below(80) {
            if rng.chance(85) {
                match transaction(&db, &mut rng, &mut model) {
                    Some(n) => hot += n,
                    None => break,
                }
            } else {
                let nblocks = db.pool.smgr().nblocks(REL).expect("nblocks");
                simdb::prune(&db, REL, rng.below(u64::from(nblocks)) as u32);
            }
            if rng.chance(5) {
                xlog::checkpoint_with(&db.pool, &db.wal, &|| db.mgr.checkpoint())
                    .expect("checkpoint");
            }
        }
        // Often every page pruned and made durable just before the crash: the chains
        // must come back pruned or not, never cut.
        if rng.chance(50) {
            let nblocks = db.pool.smgr().nblocks(REL).expect("nblocks");
            for block in 0..nblocks {
                simdb::prune(&db, REL, block);
            }
            db.wal.commit().expect("flush");
        }
        // Sometimes crash in the middle of a transaction, its updates half written.
        if rng.chance(30) {
            let tx = Tx::new(db.mgr.clone(), 2);
            tx.begin(Isolation::ReadCommitted, false);
            let xid = tx.xid().expect("xid");
            let id = 1 + rng.below(ROWS as u64) as i32;
            if let Some((at, v)) = find(&db, &tx, &model, id, "crashing") {
                let new = row(id, v + 100, 10);
                let _ = heapam::heap_update(&db.pool, REL, at, &new, xid, &tx, false, true);
            }
            std::mem::forget(tx);
        }
        vfs = Arc::new(vfs.crash(&mut rng));
    }
    hot
}

#[test]
fn hot_chains_and_their_pruning_survive_a_crash() {
    let mut hot = 0;
    for seed in storage::simvfs::seeds(12) {
        eprintln!("seed {seed}");
        hot += run_seed(seed);
    }
    eprintln!("HOT updates committed or not: {hot}");
    // The test means something only if updates were HOT.
    assert!(hot > 100, "only {hot} updates were HOT");
}
