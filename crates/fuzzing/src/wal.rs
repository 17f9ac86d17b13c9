//! Crash recovery on log records that pass the WAL's own checks but whose payloads are
//! arbitrary.
//!
//! A torn or stale record is caught by its CRC and length and ends the log (wal rule 2);
//! what is past those checks is trusted to the decoders of each kind: page changes
//! (`mtr`), relation files (`xlog`), catalog changes (`catalog::Catalog::redo`) and
//! transaction records (`txn::TxnManager::redo`). This target writes records through the
//! real writer ([`storage::Wal::log`], which frames and checksums them), "crashes", and
//! recovers as the server starts ([`open`] mirrors `server::Database::open`). Recovery
//! may fail with an error; it must not panic or hang.

use std::path::Path;
use std::sync::Arc;

use common::PgResult;
use storage::simvfs::SimVfs;
use storage::xlog::{self, MAX_RECORD_PAYLOAD, MIN_WAL_SEGMENT_SIZE, RecordKind, WalOptions};
use storage::{BufferPool, Smgr, Vfs, Wal};

/// The kinds an input's record may have, by its kind byte modulo their number (Switch is
/// the writer's own and never logged by a caller).
const KINDS: [RecordKind; 7] = [
    RecordKind::Checkpoint,
    RecordKind::Pages,
    RecordKind::SmgrCreate,
    RecordKind::SmgrUnlink,
    RecordKind::Catalog,
    RecordKind::Xact,
    RecordKind::SmgrTruncate,
];

/// Most records one input writes.
const MAX_RECORDS: usize = 64;

/// Records from a fuzz input: each is a kind byte (an index into [`KINDS`]), a payload
/// length (u16 LE) and that many payload bytes (fewer if the input ends first). Page
/// changes keep to the first blocks of a relation ([`near_blocks`]).
pub fn records(mut data: &[u8]) -> Vec<(RecordKind, Vec<u8>)> {
    let mut out = Vec::new();
    while let [kind, rest @ ..] = data {
        if out.len() == MAX_RECORDS {
            break;
        }
        let (len, rest) = match rest {
            [lo, hi, rest @ ..] => (u16::from_le_bytes([*lo, *hi]) as usize, rest),
            _ => (0, &[][..]),
        };
        let (payload, rest) = rest.split_at(len.min(rest.len()).min(MAX_RECORD_PAYLOAD));
        let kind = KINDS[*kind as usize % KINDS.len()];
        let payload = match kind {
            RecordKind::Pages => near_blocks(payload),
            RecordKind::Xact => near_xids(payload),
            RecordKind::SmgrTruncate => near_truncation(payload),
            _ => payload.to_vec(),
        };
        out.push((kind, payload));
        data = rest;
    }
    out
}

/// Blocks a page change may name: recovery extends a relation up to any block a record
/// names (as PostgreSQL's does), which on the simulated file system, in memory, makes a
/// block number in the billions an out-of-memory rather than a finding.
const MAX_REDO_BLOCKS: u32 = 64;

/// A Pages payload (`mtr::redo_pages`: u16 count, then per page u32 relation, u32 block,
/// u8 kind and its image or delta) with each block number taken modulo
/// [`MAX_REDO_BLOCKS`]; everything else, well-formed or not, as it was.
fn near_blocks(payload: &[u8]) -> Vec<u8> {
    let mut out = payload.to_vec();
    let u16_at = |b: &[u8], at: usize| {
        b.get(at..at + 2)
            .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize)
    };
    let Some(n) = u16_at(payload, 0) else {
        return out;
    };
    let mut at = 2;
    for _ in 0..n {
        let Some(block) = payload.get(at + 4..at + 8) else {
            break;
        };
        let block = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        out[at + 4..at + 8].copy_from_slice(&(block % MAX_REDO_BLOCKS).to_le_bytes());
        at += 8;
        let Some(&kind) = payload.get(at) else { break };
        at += 1;
        let (Some(a), Some(b)) = (u16_at(payload, at), u16_at(payload, at + 2)) else {
            break;
        };
        at += 4;
        if kind == 2 {
            // A full image: the bytes before the hole [a, b) and after it.
            at += a + common::limits::BLCKSZ.saturating_sub(b);
        } else {
            // A delta: `a` runs of (start, length, bytes); `b` was the first start.
            at -= 2;
            for _ in 0..a {
                let Some(len) = u16_at(payload, at + 2) else {
                    break;
                };
                at += 4 + len;
            }
        }
    }
    out
}

/// A truncation's payload (u32 relation, u32 blocks kept) with the blocks kept taken
/// modulo [`MAX_REDO_BLOCKS`], as a page change's blocks are; anything else as it was.
fn near_truncation(payload: &[u8]) -> Vec<u8> {
    let mut out = payload.to_vec();
    if let Some(b) = out.get_mut(4..8) {
        let blocks = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) % MAX_REDO_BLOCKS;
        b.copy_from_slice(&blocks.to_le_bytes());
    }
    out
}

/// Transaction ids a transaction record may name, below the last few: the commit log
/// keeps a page per 32,768 ids (and a file per 32 pages), which recovery writes out, so an
/// id in the billions makes an input cost megabytes of zeros rather than find anything.
/// The very largest ids are kept (an id with no successor is a corrupt record).
const MAX_REDO_XIDS: u64 = 4 * txn::clog::XIDS_PER_PAGE;

/// A transaction record's payload (`txn::manager`: kind byte, then 8-byte ids) with each
/// id below `u64::MAX - 64` taken modulo [`MAX_REDO_XIDS`]; anything else as it was.
fn near_xids(payload: &[u8]) -> Vec<u8> {
    let mut out = payload.to_vec();
    if out.len() > 1 {
        for c in out[1..].chunks_exact_mut(8) {
            let xid = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            if xid < u64::MAX - 64 {
                c.copy_from_slice(&(xid % MAX_REDO_XIDS).to_le_bytes());
            }
        }
    }
    out
}

/// The input form of `records`, which [`records`] reads back.
pub fn encode_records<'a>(records: impl IntoIterator<Item = (RecordKind, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (kind, payload) in records {
        let k = KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        out.push(k as u8);
        out.extend_from_slice(&(payload.len().min(u16::MAX as usize) as u16).to_le_bytes());
        out.extend_from_slice(&payload[..payload.len().min(u16::MAX as usize)]);
    }
    out
}

/// A data directory opened as the server opens one: the catalog, the transaction manager
/// and the buffer pool, with the log replayed into them.
struct Opened {
    _catalog: catalog::Catalog,
    _txns: Arc<txn::TxnManager>,
    _pool: BufferPool,
    wal: Arc<Wal>,
}

fn open(vfs: &Arc<SimVfs>) -> PgResult<Opened> {
    let dir = Path::new("/fuzz");
    let vfs: Arc<dyn Vfs> = vfs.clone();
    vfs.create_dir_all(dir)
        .map_err(|e| common::PgError::io("create the data directory", e))?;
    let catalog = catalog::Catalog::open(vfs.clone(), dir)?;
    let txns = Arc::new(txn::TxnManager::open(vfs.clone(), dir)?);
    let mut pool = BufferPool::new(Arc::new(Smgr::new(vfs.clone(), dir)?), 16);
    let options = WalOptions {
        segment_size: MIN_WAL_SEGMENT_SIZE,
        synchronous_commit: true,
    };
    let (wal, _) = xlog::open_and_recover_with(
        vfs,
        dir,
        &mut pool,
        options,
        &mut |r| match r.kind {
            RecordKind::Xact => {
                txns.redo(r)?;
                catalog.redo_transaction(&r.payload)
            }
            _ => catalog.redo(&r.payload),
        },
        &|| {
            catalog.compact()?;
            txns.checkpoint()
        },
    )?;
    catalog.attach_wal(wal.clone());
    txns.attach_wal(wal.clone());
    Ok(Opened {
        _catalog: catalog,
        _txns: txns,
        _pool: pool,
        wal,
    })
}

/// Target `wal_record`: `data` is a list of log records ([`records`]). They are logged
/// and flushed after a fresh data directory's first checkpoint, the process "dies"
/// (nothing else is written), and the directory is opened again, which replays them.
/// Asserts: no panic, no hang (errors are expected).
pub fn wal_record(data: &[u8]) {
    let records = records(data);
    if records.is_empty() {
        return;
    }
    let vfs = Arc::new(SimVfs::new());
    {
        let db = open(&vfs).expect("a fresh data directory");
        let mut end = 0;
        for (kind, payload) in &records {
            match db.wal.log(*kind, payload) {
                Ok(lsn) => end = lsn,
                Err(_) => break,
            }
        }
        db.wal.flush(end).expect("flush the log");
    }
    let _ = open(&vfs);
}
