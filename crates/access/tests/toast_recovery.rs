//! TOAST (access rule 12) through crashes, on the simulated file system: power loss drops
//! every write not covered by a completed fsync and may tear one page write; recovery
//! replays the WAL. Afterwards every committed row is read back whole, its large value
//! equal to what was written: no visible row points at a chunk that is missing, and no
//! chunk of a committed value is gone, whether the crash came between a value's chunks
//! and its row, in the middle of a transaction, or after pruning.
//!
//! The workload, per round: transactions insert rows with large values (incompressible,
//! so stored out of line, or repetitive, so compressed inline), update another column
//! (the value's pointer kept), replace the value (its old chunks deleted), delete rows
//! (their chunks deleted), commit (mostly) or roll back; pages of both heaps pruned now
//! and then; checkpoints now and then; a crash, sometimes in the middle of an insert.
//!
//! Also: a chunk changed on its page is an error naming the TOAST relation, never wrong
//! bytes. `MYRIAD_FUZZ_SEED=N` replays one seed; `MYRIAD_SIM_SEEDS` runs more (default 8).

mod simdb;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{DataType, RelId, SqlState, Value};
use myriad_access::heapam::{self, HeapWrite};
use myriad_access::toast::{self, ToastTarget};
use myriad_access::tuple;
use simdb::Db;
use storage::Mtr;
use storage::page::{Page, PageMut};
use storage::simvfs::{SimRng, SimVfs};
use storage::xlog;
use txn::{Isolation, Tx};

const REL: RelId = 16700;
const TOAST: RelId = 16701;
const TABLE_OID: u32 = 16700;
const POOL_PAGES: usize = 12;
const ROUNDS: u32 = 4;
const TYPES: [DataType; 4] = [
    DataType::Int4,
    DataType::Int4,
    DataType::Int4,
    DataType::Text,
];

const TARGET: ToastTarget = ToastTarget {
    rel: Some(TOAST),
    table: TABLE_OID,
};

/// Row `id`'s large value in generation `generation`: odd generations repeat a short
/// pattern (compressed inline), even ones are incompressible (out of line, a few
/// chunks).
fn body(id: i32, generation: i32) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
    if generation % 2 == 1 {
        return format!("{id}-{generation}|").repeat(3000);
    }
    let mut x = (id as u64) << 32 | generation as u64 | 1;
    let len = 9000 + (x % 20000) as usize;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % 64) as usize] as char
        })
        .collect()
}

fn values(id: i32, generation: i32, note: i32) -> Vec<Value> {
    vec![
        Value::Int4(id),
        Value::Int4(generation),
        Value::Int4(note),
        Value::Text(body(id, generation)),
    ]
}

fn encode(db: &Db, row: &[Value], old: Option<(&[u8], &[Value])>, tx: &Tx) -> Vec<u8> {
    let storage = |i: usize| TYPES[i].default_storage();
    toast::encode_row(
        &db.pool,
        TARGET,
        row,
        &TYPES,
        storage,
        old,
        tx.xid().expect("xid"),
        tx.cid(),
    )
    .expect("toast")
}

/// Committed rows: id to (generation, note).
type Model = BTreeMap<i32, (i32, i32)>;

/// Every row a new statement's snapshot sees, decoded whole: (address, tuple, values).
/// The caller ends the statement after its writes.
fn scan(db: &Db, tx: &Tx) -> Vec<(common::ItemPointer, Vec<u8>, Vec<Value>)> {
    let snap = tx.start_statement();
    heapam::HeapScan::visible(&db.pool, REL, &snap, tx)
        .expect("scan")
        .map(|item| {
            let (tid, bytes) = item.expect("row");
            let row = tuple::decode_with(&bytes, &TYPES, &db.pool)
                .unwrap_or_else(|e| panic!("row at {tid:?}: {e:?}"));
            (tid, bytes, row)
        })
        .collect()
}

fn verify(db: &Db, model: &Model, ctx: &str) {
    let tx = Tx::new(db.mgr.clone(), 1);
    tx.begin(Isolation::ReadCommitted, false);
    let mut seen = Model::new();
    for (_, _, row) in scan(db, &tx) {
        let [
            Value::Int4(id),
            Value::Int4(generation),
            Value::Int4(note),
            Value::Text(b),
        ] = row.as_slice()
        else {
            panic!("{ctx}: not a row: {row:?}");
        };
        assert!(
            *b == body(*id, *generation),
            "{ctx}: row {id}'s value is not generation {generation}'s"
        );
        assert!(
            seen.insert(*id, (*generation, *note)).is_none(),
            "{ctx}: row {id} seen twice"
        );
    }
    assert_eq!(&seen, model, "{ctx}");
    tx.abort().expect("abort");
}

/// One transaction of a few changes; the model changes only if it commits. `None` if
/// the log refused (a failed fsync).
fn transaction(db: &Db, rng: &mut SimRng, model: &mut Model, next_id: &mut i32) -> Option<()> {
    let tx = Tx::new(db.mgr.clone(), 1);
    tx.begin(Isolation::ReadCommitted, false);
    let mut next = model.clone();
    for _ in 0..=rng.below(3) {
        let xid = tx.xid().expect("xid");
        let rows = scan(db, &tx);
        let pick = (!rows.is_empty()).then(|| &rows[rng.below(rows.len() as u64) as usize]);
        match (rng.below(4), pick) {
            (0, _) | (_, None) => {
                let id = *next_id;
                *next_id += 1;
                let generation = rng.below(4) as i32;
                let t = encode(db, &values(id, generation, 0), None, &tx);
                heapam::heap_insert(&db.pool, REL, &t, xid, tx.cid(), 100).expect("insert");
                next.insert(id, (generation, 0));
            }
            (choice, Some((tid, old_tuple, old))) => {
                let (Value::Int4(id), Value::Int4(generation), Value::Int4(note)) =
                    (&old[0], &old[1], &old[2])
                else {
                    panic!("not a row: {old:?}");
                };
                if choice == 1 {
                    let done = heapam::heap_delete(&db.pool, REL, *tid, xid, &tx).expect("delete");
                    assert!(matches!(done, HeapWrite::Done(_)), "{done:?}");
                    toast::delete_external(&db.pool, old_tuple, &TYPES, None, xid, &tx)
                        .expect("delete chunks");
                    next.remove(id);
                } else {
                    // 2: another column changes, the value is kept; 3: a new value.
                    let generation = generation + i32::from(choice == 3);
                    let row = values(*id, generation, note + 1);
                    let t = encode(db, &row, Some((old_tuple, old)), &tx);
                    let done = heapam::heap_update(&db.pool, REL, *tid, &t, xid, &tx, false, true)
                        .expect("update");
                    assert!(matches!(done, HeapWrite::Done(_)), "{done:?}");
                    toast::delete_external(&db.pool, old_tuple, &TYPES, Some(&t), xid, &tx)
                        .expect("delete chunks");
                    next.insert(*id, (generation, note + 1));
                }
            }
        }
        tx.end_statement();
    }
    if rng.chance(90) {
        tx.commit().ok()?;
        *model = next;
    } else {
        tx.abort().ok()?;
    }
    Some(())
}

fn run_seed(seed: u64) {
    let mut rng = SimRng::new(seed);
    let mut vfs = Arc::new(SimVfs::new());
    let mut model = Model::new();
    let mut next_id = 1;
    {
        let db = open(&vfs);
        db.pool.create_relation(REL).unwrap();
        db.wal.commit().expect("flush");
    }
    for round in 0..=ROUNDS {
        let ctx = format!("seed {seed} round {round}");
        let db = open(&vfs);
        verify(&db, &model, &ctx);
        if round == ROUNDS {
            break;
        }
        for _ in 0..rng.below(25) {
            if rng.chance(85) {
                if transaction(&db, &mut rng, &mut model, &mut next_id).is_none() {
                    break;
                }
            } else {
                for rel in [REL, TOAST] {
                    if db.pool.smgr().exists(rel) {
                        let nblocks = db.pool.smgr().nblocks(rel).expect("nblocks");
                        if nblocks > 0 {
                            simdb::prune(&db, rel, rng.below(u64::from(nblocks)) as u32);
                        }
                    }
                }
            }
            if rng.chance(5) {
                xlog::checkpoint_with(&db.pool, &db.wal, &|| db.mgr.checkpoint())
                    .expect("checkpoint");
            }
        }
        // Sometimes crash between a value's chunks and its row, or after the row.
        if rng.chance(30) {
            let tx = Tx::new(db.mgr.clone(), 2);
            tx.begin(Isolation::ReadCommitted, false);
            let t = encode(&db, &values(next_id, 0, 0), None, &tx);
            if rng.chance(50) {
                let xid = tx.xid().expect("xid");
                let _ = heapam::heap_insert(&db.pool, REL, &t, xid, tx.cid(), 100);
            }
            next_id += 1;
            std::mem::forget(tx);
        }
        vfs = Arc::new(vfs.crash(&mut rng));
    }
}

fn open(vfs: &Arc<SimVfs>) -> Db {
    simdb::open(vfs, POOL_PAGES)
}

#[test]
fn out_of_line_values_survive_a_crash() {
    for seed in storage::simvfs::seeds(8) {
        eprintln!("seed {seed}");
        run_seed(seed);
    }
}

#[test]
fn a_changed_chunk_is_an_error_naming_the_toast_relation() {
    let vfs = Arc::new(SimVfs::new());
    let db = open(&vfs);
    db.pool.create_relation(REL).unwrap();
    let tx = Tx::new(db.mgr.clone(), 1);
    tx.begin(Isolation::ReadCommitted, false);
    let row = values(1, 0, 0);
    let t = encode(&db, &row, None, &tx);
    assert_ne!(
        tuple::header(&t).unwrap().infomask & tuple::HEAP_HASEXTERNAL,
        0,
        "stored out of line"
    );
    // Out of line, the row is small; read whole, it is the value.
    assert!(t.len() < 100, "{} bytes", t.len());
    assert_eq!(tuple::decode_with(&t, &TYPES, &db.pool).unwrap(), row);
    // Without the buffer pool, an out-of-line value is an error, not a guess.
    assert!(tuple::decode(&t, &TYPES).is_err());
    // A column not read is not fetched: with the chunks gone, the other columns read.
    let wanted = [true, true, true, false];
    let cols = tuple::decode_columns(&t, &TYPES, Some(&wanted), Some(&db.pool)).unwrap();
    assert_eq!(cols[..3], row[..3]);

    // One byte of the first chunk's data changed on its page.
    let first_chunk_page = db.pool.smgr().nblocks(TOAST).unwrap() - 1;
    let mut buf = db.pool.read_buffer(TOAST, first_chunk_page).unwrap();
    {
        let mut mtr = Mtr::new(&db.pool);
        let p = mtr.latch(&mut buf);
        let mut page = PageMut::new(mtr.page(p));
        let item = page.item_mut(1).expect("the chunk");
        let last = item.len() - 1;
        item[last] ^= 0x55;
        mtr.commit().unwrap();
    }
    let e = tuple::decode_with(&t, &TYPES, &db.pool).expect_err("corrupt");
    assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    assert!(
        e.message.contains(&format!("in pg_toast_{TABLE_OID}")),
        "{}",
        e.message
    );
    // A chunk gone is a missing chunk.
    {
        let mut mtr = Mtr::new(&db.pool);
        let p = mtr.latch(&mut buf);
        let page = Page::new(mtr.page_ref(p));
        assert!(page.get_item(1).is_some());
        PageMut::new(mtr.page(p)).mark_dead(1);
        mtr.commit().unwrap();
    }
    let e = tuple::decode_with(&t, &TYPES, &db.pool).expect_err("missing");
    assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    assert!(
        e.message
            .starts_with("missing chunk number 0 for toast value ")
            && e.message.ends_with(&format!(" in pg_toast_{TABLE_OID}")),
        "{}",
        e.message
    );
}
