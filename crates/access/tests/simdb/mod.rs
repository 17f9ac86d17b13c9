//! What the heap's crash tests share: a database on the simulated file system, opened
//! (and recovered from its WAL) as a server opens its own.

use std::path::Path;
use std::sync::Arc;

use storage::bufmgr::BufferPool;
use storage::simvfs::SimVfs;
use storage::smgr::Smgr;
use storage::vfs::Vfs;
use storage::xlog::{self, Wal, WalOptions};
use txn::TxnManager;

pub struct Db {
    pub pool: BufferPool,
    pub wal: Arc<Wal>,
    pub mgr: Arc<TxnManager>,
}

/// Open the database on `vfs` with a pool of `pool_pages` frames, replaying its WAL
/// (transaction records to the transaction manager), every commit fsync'd.
pub fn open(vfs: &Arc<SimVfs>, pool_pages: usize) -> Db {
    let dir = Path::new("/sim/data");
    let vfs: Arc<dyn Vfs> = vfs.clone();
    vfs.create_dir_all(dir).unwrap();
    let smgr = Arc::new(Smgr::new(vfs.clone(), dir).unwrap());
    let mut pool = BufferPool::new(smgr, pool_pages);
    let mgr = Arc::new(TxnManager::open(vfs.clone(), dir).expect("txns"));
    let options = WalOptions {
        segment_size: xlog::MIN_WAL_SEGMENT_SIZE,
        synchronous_commit: true,
    };
    let (wal, _) = xlog::open_and_recover_with(
        vfs,
        dir,
        &mut pool,
        options,
        &mut |r| match r.kind {
            xlog::RecordKind::Xact => mgr.redo(r),
            _ => Ok(()),
        },
        &|| mgr.checkpoint(),
    )
    .expect("recovery");
    mgr.attach_wal(wal.clone());
    Db { pool, wal, mgr }
}

/// Prune page `block` of `rel` as an update or VACUUM does, logged if it changed.
#[allow(dead_code)] // not every crash test prunes
pub fn prune(db: &Db, rel: common::RelId, block: u32) {
    let mut buf = db.pool.read_buffer(rel, block).expect("page");
    let mut mtr = storage::Mtr::new(&db.pool);
    let p = mtr.latch(&mut buf);
    let horizon = db.mgr.oldest_xmin();
    if myriad_access::heapam::prune(mtr.page(p), block, &db.mgr, horizon)
        .expect("prune")
        .changed
    {
        mtr.commit().expect("commit");
    }
}
