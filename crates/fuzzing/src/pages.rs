//! The heap and btree access methods on corrupt pages.
//!
//! A page whose checksum is wrong never reaches them (`storage::page::verify` refuses it);
//! these targets feed pages with a *correct* checksum and arbitrary contents, as a bug
//! that wrote a bad page, or a bit flip before the checksum was stamped, would leave them.
//! Readers and writers must answer with an error (DATA_CORRUPTED, or any other), never a
//! panic, a hang or an unbounded allocation. What the calls return is not checked: on a
//! corrupt page any answer but those is acceptable.
//!
//! Each input runs in a fresh environment over the simulated file system
//! (`storage::simvfs`): a buffer pool, a WAL and a transaction manager, so writers log
//! their changes as they do in the server.

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use access::nbtree::{BTree, RootCache, ScanDirection};
use access::{heapam, tuple};
use common::ids::{ItemPointer, OffsetNumber};
use common::limits::BLCKSZ;
use common::{DataType, PgResult, RelId, Value};
use storage::page::{self, Page};
use storage::simvfs::SimVfs;
use storage::xlog::{self, MIN_WAL_SEGMENT_SIZE, WalOptions};
use storage::{BufferPool, Smgr, Vfs};
use txn::{Isolation, Tx, TxnManager};

/// The relation the pages are written to.
const REL: RelId = 16384;
/// Most pages one input makes (the pool holds twice as many, so no pin ever waits).
pub const MAX_PAGES: usize = 8;
/// Most entries a target reads from one scan: a scan over corrupt links may legitimately
/// return many entries before its walk is found to cycle; beyond this the input is only
/// slow, not wrong.
const MAX_SCAN_ENTRIES: usize = 100_000;

/// Pages from a fuzz input. Each page is `hole_start: u16 LE`, `hole_end: u16 LE`, then the
/// page's bytes before the hole and after it: the WAL's full-page image form (`mtr`), so a
/// page of a few tuples is a few hundred bytes, not 8 KiB. The hole is zeros, as are bytes
/// the input runs out of; hole bounds past the page are cut to it. At most [`MAX_PAGES`].
pub fn page_images(mut data: &[u8]) -> Vec<Box<[u8; BLCKSZ]>> {
    let mut pages = Vec::new();
    while !data.is_empty() && pages.len() < MAX_PAGES {
        let mut take = |n: usize| {
            let (head, tail) = data.split_at(n.min(data.len()));
            data = tail;
            head
        };
        let u16_at = |b: &[u8]| match *b {
            [lo, hi] => u16::from_le_bytes([lo, hi]) as usize,
            [lo] => lo as usize,
            _ => 0,
        };
        let hole_start = u16_at(take(2)).min(BLCKSZ);
        let hole_end = u16_at(take(2)).clamp(hole_start, BLCKSZ);
        let mut page = Box::new([0u8; BLCKSZ]);
        let head = take(hole_start);
        page[..head.len()].copy_from_slice(head);
        let tail = take(BLCKSZ - hole_end);
        page[hole_end..hole_end + tail.len()].copy_from_slice(tail);
        pages.push(page);
    }
    pages
}

/// The input form of `page` that [`page_images`] reads back: its hole is
/// `[pd_lower, pd_upper)` where the header makes sense, else there is none.
pub fn page_image(page: &[u8; BLCKSZ]) -> Vec<u8> {
    let p = Page::new(page);
    let (lower, upper) = (p.lower() as usize, p.upper() as usize);
    let (start, end) = if page::SIZE_OF_PAGE_HEADER <= lower && lower <= upper && upper <= BLCKSZ {
        (lower, upper)
    } else {
        (BLCKSZ, BLCKSZ)
    };
    let mut out = Vec::with_capacity(4 + start + BLCKSZ - end);
    out.extend_from_slice(&(start as u16).to_le_bytes());
    out.extend_from_slice(&(end as u16).to_le_bytes());
    out.extend_from_slice(&page[..start]);
    out.extend_from_slice(&page[end..]);
    out
}

/// A buffer pool with a WAL and a transaction manager over a fresh simulated file system.
pub struct Env {
    pub pool: BufferPool,
    pub txns: Arc<TxnManager>,
    /// The session id of the next [`Env::tx`] (each registers with the lock manager).
    next_backend: std::sync::atomic::AtomicU32,
}

impl Env {
    pub fn new() -> PgResult<Env> {
        let vfs: Arc<dyn Vfs> = Arc::new(SimVfs::new());
        let dir = Path::new("/fuzz");
        vfs.create_dir_all(dir)
            .map_err(|e| common::PgError::io("create the data directory", e))?;
        let smgr = Arc::new(Smgr::new(vfs.clone(), dir)?);
        let mut pool = BufferPool::new(smgr, 2 * MAX_PAGES);
        let txns = Arc::new(TxnManager::open(vfs.clone(), dir)?);
        let options = WalOptions {
            segment_size: MIN_WAL_SEGMENT_SIZE,
            synchronous_commit: false,
        };
        let (wal, _) = xlog::open_and_recover_with(
            vfs,
            dir,
            &mut pool,
            options,
            &mut |r| txns.redo(r),
            &|| txns.checkpoint(),
        )?;
        txns.attach_wal(wal);
        Ok(Env {
            pool,
            txns,
            next_backend: std::sync::atomic::AtomicU32::new(1),
        })
    }

    /// Relation [`REL`] holding `pages`, each with the checksum its block needs.
    pub fn write_relation(&self, pages: &mut [Box<[u8; BLCKSZ]>]) -> PgResult<()> {
        self.pool.create_relation(REL)?;
        for page in pages {
            let block = self.pool.smgr().extend(REL)?;
            page::set_checksum(page, block);
            self.pool.smgr().write_block(REL, block, page)?;
        }
        Ok(())
    }

    /// A transaction in progress, in a session of its own.
    pub fn tx(&self) -> Tx {
        let backend = self
            .next_backend
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tx = Tx::new(self.txns.clone(), backend);
        tx.begin(Isolation::ReadCommitted, false);
        tx
    }
}

/// The row types heap tuples are decoded with: a narrow table, one column of every type,
/// and pgbench's accounts.
fn heap_schemas() -> [Vec<DataType>; 3] {
    let array = |oid| DataType::from_oid(oid, -1).and_then(|t| t.array());
    let every: Vec<DataType> = [
        DataType::Bool,
        DataType::Int2,
        DataType::Int4,
        DataType::Int8,
        DataType::Float4,
        DataType::Float8,
        DataType::Text,
        DataType::Varchar(Some(10)),
        DataType::Bpchar(Some(3)),
        DataType::Date,
        DataType::Timestamp(None),
        DataType::TimestampTz(None),
        DataType::Interval,
        DataType::Numeric(None),
        DataType::Uuid,
        DataType::Bytea,
        DataType::Oid,
        DataType::Reg(common::value::RegKind::Class),
    ]
    .into_iter()
    .chain(array(common::types::oids::INT4))
    .chain(array(common::types::oids::TEXT))
    .chain(array(common::types::oids::NUMERIC))
    .collect();
    [
        vec![DataType::Int4, DataType::Text],
        every,
        vec![
            DataType::Int4,
            DataType::Int4,
            DataType::Int4,
            DataType::Bpchar(Some(84)),
        ],
    ]
}

/// Target `heap_page`: `data` is a heap relation's pages ([`page_images`]). Read as the
/// executor reads heaps: a sequential scan of every version, each decoded with several
/// row types; a scan of the versions a snapshot sees (visibility against the commit log);
/// a fetch of each item pointer; then writes: delete, lock and update of the first
/// versions found, and pruning of every page. Asserts: no panic, no hang.
pub fn heap_page(data: &[u8]) {
    let mut pages = page_images(data);
    if pages.is_empty() {
        return;
    }
    let env = Env::new().expect("a fuzzing environment");
    env.write_relation(&mut pages).expect("write the pages");
    let pool = &env.pool;
    let schemas = heap_schemas();
    let mut tids = Vec::new();
    if let Ok(scan) = heapam::HeapScan::new(pool, REL) {
        for item in scan.take(MAX_SCAN_ENTRIES) {
            let Ok((tid, bytes)) = item else { break };
            for types in &schemas {
                let _ = tuple::decode_at(&bytes, types, REL, tid, Some(pool));
            }
            let _ = tuple::ctid(&bytes);
            tids.push(tid);
        }
    }
    // Item pointers the scan did not return: past the last line pointer, and offset 0.
    tids.push(ItemPointer {
        block: 0,
        offset: 0,
    });
    tids.push(ItemPointer {
        block: 0,
        offset: OffsetNumber::MAX,
    });
    let tx = env.tx();
    let snapshot = tx.start_statement();
    if let Ok(scan) = heapam::HeapScan::visible(pool, REL, &snapshot, &tx) {
        for item in scan.take(MAX_SCAN_ENTRIES) {
            if item.is_err() {
                break;
            }
        }
    }
    for &tid in &tids {
        let _ = heapam::heap_fetch_visible(pool, REL, tid, &snapshot, &tx);
        let _ = heapam::heap_hot_fetch(pool, REL, tid, &snapshot, &tx);
    }
    heap_writes(&env, &tx, &tids);
    for block in 0..pages.len() as u32 {
        if let Ok(buf) = pool.read_buffer(REL, block) {
            let mut copy = Box::new([0u8; BLCKSZ]);
            copy.copy_from_slice(&buf.read()[..]);
            let _ = heapam::hot_roots(&copy, block);
            let _ = heapam::prune_page(&mut copy, block, &tx);
        }
    }
    let _ = tx.abort();
}

/// Writers on the first few versions: what DELETE, SELECT FOR UPDATE and UPDATE do to a
/// row they found.
fn heap_writes(env: &Env, tx: &Tx, tids: &[ItemPointer]) {
    let Ok(xid) = tx.xid() else { return };
    let new_row = tuple::encode(
        &[Value::Int4(7), Value::Text("fuzz".into())],
        &[DataType::Int4, DataType::Text],
    )
    .expect("encode a row");
    for (i, &tid) in tids.iter().take(6).enumerate() {
        let pool = &env.pool;
        let _ = match i % 3 {
            0 => heapam::heap_delete(pool, REL, tid, xid, tx),
            1 => heapam::heap_lock(pool, REL, tid, xid, tx, common::RowLockMode::Share),
            _ => heapam::heap_update(
                pool,
                REL,
                tid,
                &new_row,
                xid,
                tx,
                i.is_multiple_of(2),
                i % 4 == 2,
            ),
        };
    }
}

/// Target `btree_page`: `data` is a btree index's pages ([`page_images`]), block 0 its
/// metapage. Read as queries and VACUUM read indexes: the structural check (amcheck),
/// full scans both ways, bounded scans and an exact delete with keys of the width and
/// kind the tree's metapage and first entries suggest; then an insert (descent, splits,
/// finishing incomplete splits) and a bulk delete. Asserts: no panic, no hang.
pub fn btree_page(data: &[u8]) {
    let mut pages = page_images(data);
    if pages.is_empty() {
        return;
    }
    let env = Env::new().expect("a fuzzing environment");
    env.write_relation(&mut pages).expect("write the pages");
    let cache = RootCache::new();
    let tree = BTree::new(&env.pool, &cache, REL).with_name("fuzz_idx");
    let _ = tree.check();
    let mut first: Option<(Vec<Value>, ItemPointer)> = None;
    for direction in [ScanDirection::Forward, ScanDirection::Backward] {
        if let Ok(scan) = tree.scan(Bound::Unbounded, Bound::Unbounded, direction) {
            for entry in scan.take(MAX_SCAN_ENTRIES) {
                let Ok(entry) = entry else { break };
                first.get_or_insert(entry);
            }
        }
    }
    let natts = match tree.root_info() {
        Ok(info) => (info.natts as usize).min(access::nbtree::INDEX_MAX_KEYS),
        Err(_) => return,
    };
    // Keys like the tree's own entries where it has one, else integers.
    let (key, tid) = first.unwrap_or_else(|| {
        (
            vec![Value::Int4(42); natts],
            ItemPointer {
                block: 0,
                offset: 1,
            },
        )
    });
    let mut keys = vec![key.clone(), vec![Value::Int4(42); natts]];
    keys.push(vec![Value::Text("fuzz".into()); natts]);
    for k in &keys {
        let prefix = k[..k.len().min(1)].to_vec();
        if let Ok(scan) = tree.scan(
            Bound::Included(prefix.clone()),
            Bound::Included(prefix.clone()),
            ScanDirection::Forward,
        ) {
            scan.take(MAX_SCAN_ENTRIES).for_each(drop);
        }
        if let Ok(scan) = tree.scan(
            Bound::Excluded(prefix.clone()),
            Bound::Unbounded,
            ScanDirection::Backward,
        ) {
            scan.take(MAX_SCAN_ENTRIES).for_each(drop);
        }
    }
    let _ = tree.delete(&key, tid);
    for k in &keys {
        if k.len() == natts {
            let _ = tree.insert(
                k,
                ItemPointer {
                    block: 1,
                    offset: 2,
                },
            );
        }
    }
    let mut n = 0u32;
    let _ = tree.bulk_delete(|_| {
        n += 1;
        n.is_multiple_of(2)
    });
    let _ = tree.check();
}
