//! The write-ahead log: records, segments, group commit, checkpoints and crash recovery.
//!
//! The log is one endless byte stream addressed by [`Lsn`], stored in segment files
//! `pg_wal/<segment number, 16 hex digits>` of a fixed size chosen when the data directory
//! is created. A record never spans two segments (wal rule 1). Each record is
//!
//! ```text
//!   0       4       8               16     17      18         24
//!   | len   | crc   | lsn (its own)  | kind | flags | reserved | payload ... |
//! ```
//!
//! `len` counts the header; `crc` is CRC-32C over `len`, the rest of the header and the
//! payload; `lsn` is the record's own position, so a stale record left in a reused file is
//! never mistaken for a new one (wal rule 2).
//!
//! Writers build a record, [`Wal::insert`] appends it to an in-memory buffer under a short
//! lock and returns its end LSN; [`Wal::flush`] makes everything up to an LSN durable, one
//! flusher at a time, each taking every record buffered so far, so concurrent committers
//! share one fsync (group commit, wal rule 3). Page changes are logged by mini-transactions
//! ([`crate::mtr`]); the buffer pool writes a page only after the WAL is flushed up to the
//! page's LSN (buffer rule 3).
//!
//! [`checkpoint`] writes every dirty page and records a redo point in `pg_control`;
//! [`open_and_recover`] replays the log from the last redo point at startup.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::ids::Lsn;
use common::{PgError, PgResult, RelId, SqlState};
use parking_lot::Mutex;

use crate::bufmgr::BufferPool;
use crate::vfs::{Vfs, VfsFile};

/// The default segment size, as PostgreSQL's.
pub const DEFAULT_WAL_SEGMENT_SIZE: u64 = 16 << 20;
/// The smallest segment size allowed (tests use small segments to cross boundaries).
pub const MIN_WAL_SEGMENT_SIZE: u64 = 64 << 10;
/// Bytes in a record header.
pub const RECORD_HEADER_SIZE: usize = 24;
/// The largest payload one record may carry (it must fit in the smallest segment).
pub const MAX_RECORD_PAYLOAD: usize = MIN_WAL_SEGMENT_SIZE as usize - RECORD_HEADER_SIZE;
/// Buffered WAL beyond this is written out (not synced) by the inserter, so a long
/// statement under `synchronous_commit = off` does not hold it all in memory.
const WAL_BUFFER_WRITE_THRESHOLD: usize = 4 << 20;

const WAL_DIR: &str = "pg_wal";
const CONTROL_FILE: &str = "pg_control";
const CONTROL_MAGIC: u32 = 0x4d59_5243; // "MYRC"
/// The layout of the control file and of WAL records. 2: a record's CRC covers the
/// payload, then the header (it was the header, then the payload).
const CONTROL_VERSION: u32 = 2;

/// What a record describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// The rest of this segment is unused; the log goes on at the next segment.
    Switch = 1,
    /// A checkpoint: payload is the redo LSN (u64).
    Checkpoint = 2,
    /// Page changes of one mini-transaction (`mtr::decode_pages`).
    Pages = 3,
    /// A relation file was created: payload is the relation id (u32).
    SmgrCreate = 4,
    /// A relation file was removed: payload is the relation id (u32).
    SmgrUnlink = 5,
    /// A catalog change, opaque to storage: replayed by the catalog's redo handler.
    Catalog = 6,
    /// A transaction's commit or abort, or a new block of transaction ids: opaque to
    /// storage, replayed by the transaction manager's redo handler.
    Xact = 7,
    /// A relation file was cut short: payload is the relation id and the blocks kept
    /// (u32 each).
    SmgrTruncate = 8,
}

impl RecordKind {
    fn from_u8(b: u8) -> Option<RecordKind> {
        Some(match b {
            1 => RecordKind::Switch,
            2 => RecordKind::Checkpoint,
            3 => RecordKind::Pages,
            4 => RecordKind::SmgrCreate,
            5 => RecordKind::SmgrUnlink,
            6 => RecordKind::Catalog,
            7 => RecordKind::Xact,
            8 => RecordKind::SmgrTruncate,
            _ => return None,
        })
    }
}

/// A record read back from the log.
#[derive(Debug)]
pub struct Record {
    pub lsn: Lsn,
    /// The LSN just past this record: what a page it changed carries as its LSN.
    pub end: Lsn,
    pub kind: RecordKind,
    pub payload: Vec<u8>,
}

/// Why [`Wal::insert`] did not insert.
#[derive(Debug)]
pub enum InsertError {
    /// A checkpoint moved the redo point since the caller decided which pages need a
    /// full image: build the record again with the new redo point.
    RedoMoved,
    Failed(PgError),
}

/// Counters since startup.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    pub records: u64,
    pub bytes: u64,
    /// fsyncs of WAL segment files: fewer than commits when commits share them.
    pub syncs: u64,
    pub checkpoints: u64,
}

struct InsertState {
    /// Records inserted but not yet handed to a flusher; `buf[0]` is at `buf_start`.
    buf: Vec<u8>,
    buf_start: Lsn,
    /// Where the next record goes.
    pos: Lsn,
}

struct FlushState {
    /// The open segment being written, by number.
    segment: Option<(u64, Arc<dyn VfsFile>)>,
    /// Bytes written to files but not yet synced.
    written: Lsn,
}

/// The write-ahead log of one data directory.
pub struct Wal {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    control_path: PathBuf,
    segment_size: u64,
    insert: Mutex<InsertState>,
    flush: Mutex<FlushState>,
    /// Everything before this is durable.
    flushed: AtomicU64,
    /// The redo point of the newest checkpoint: a page whose LSN is below it gets a full
    /// image at its next change (wal rule 4).
    redo: AtomicU64,
    /// A write or fsync of the log failed: nothing more may be written or acknowledged
    /// (wal rule 5).
    broken: AtomicBool,
    /// `synchronous_commit`: when false, [`Wal::commit`] does not wait for the fsync.
    synchronous_commit: AtomicBool,
    checkpoint_lock: Mutex<()>,
    records: AtomicU64,
    bytes: AtomicU64,
    syncs: AtomicU64,
    checkpoints: AtomicU64,
}

/// `pg_control`: where recovery starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Control {
    segment_size: u64,
    checkpoint: Lsn,
    redo: Lsn,
}

impl Control {
    const SIZE: usize = 36;

    fn encode(&self) -> [u8; Control::SIZE] {
        let mut b = [0u8; Control::SIZE];
        b[0..4].copy_from_slice(&CONTROL_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&CONTROL_VERSION.to_le_bytes());
        b[8..16].copy_from_slice(&self.segment_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.checkpoint.to_le_bytes());
        b[24..32].copy_from_slice(&self.redo.to_le_bytes());
        let crc = crc32c::crc32c(&b[..32]);
        b[32..36].copy_from_slice(&crc.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<Control> {
        if b.len() != Control::SIZE {
            return None;
        }
        let u32_at = |i| le_u32(b, i);
        let u64_at = |i| le_u64(b, i);
        if u32_at(0) != CONTROL_MAGIC
            || u32_at(4) != CONTROL_VERSION
            || u32_at(32) != crc32c::crc32c(&b[..32])
        {
            return None;
        }
        Some(Control {
            segment_size: u64_at(8),
            checkpoint: u64_at(16),
            redo: u64_at(24),
        })
    }
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> PgError {
    move |e| PgError::io(what, e)
}

fn corrupt(message: String) -> PgError {
    PgError::new(SqlState::DATA_CORRUPTED, message)
}

impl Wal {
    fn segment_path(&self, segment: u64) -> PathBuf {
        self.dir.join(format!("{segment:016X}"))
    }

    fn segment_of(&self, lsn: Lsn) -> u64 {
        lsn / self.segment_size
    }

    /// The segment size this log was created with.
    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    /// Where the next record will go.
    pub fn insert_lsn(&self) -> Lsn {
        self.insert.lock().pos
    }

    /// Everything before this LSN is durable.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed.load(Ordering::Acquire)
    }

    /// The redo point of the newest checkpoint.
    pub fn redo_lsn(&self) -> Lsn {
        self.redo.load(Ordering::Acquire)
    }

    pub fn set_synchronous_commit(&self, on: bool) {
        self.synchronous_commit.store(on, Ordering::Relaxed);
    }

    pub fn stats(&self) -> WalStats {
        WalStats {
            records: self.records.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
            checkpoints: self.checkpoints.load(Ordering::Relaxed),
        }
    }

    fn check_broken(&self) -> PgResult<()> {
        if self.broken.load(Ordering::Acquire) {
            return Err(PgError::new(
                SqlState::IO_ERROR,
                "the write-ahead log cannot be written after an earlier failure",
            )
            .with_hint("Restart the server: recovery replays the log from the last checkpoint."));
        }
        Ok(())
    }

    /// Append a record; returns its end LSN (what pages it changed must carry). With
    /// `redo_seen`, fails with [`InsertError::RedoMoved`] if a checkpoint started since the
    /// caller read that redo point (the caller's choice of full page images is stale).
    pub fn insert(
        &self,
        kind: RecordKind,
        payload: &[u8],
        redo_seen: Option<Lsn>,
    ) -> Result<Lsn, InsertError> {
        self.check_broken().map_err(InsertError::Failed)?;
        if payload.len() > MAX_RECORD_PAYLOAD {
            return Err(InsertError::Failed(PgError::internal(format!(
                "WAL record of {} bytes exceeds the limit of {MAX_RECORD_PAYLOAD}",
                payload.len()
            ))));
        }
        let len = (RECORD_HEADER_SIZE + payload.len()) as u32;
        // CRC over len + header tail + payload; the payload part is computed unlocked.
        let payload_crc = crc32c::crc32c(payload);
        let end;
        let buffered;
        {
            let mut st = self.insert.lock();
            if let Some(seen) = redo_seen
                && seen != self.redo.load(Ordering::Acquire)
            {
                return Err(InsertError::RedoMoved);
            }
            let room = self.segment_size - st.pos % self.segment_size;
            if (len as u64) > room {
                // wal rule 1: no record spans segments. A Switch record marks the skip
                // when there is room for one; otherwise the reader skips by itself.
                if room >= RECORD_HEADER_SIZE as u64 {
                    let pos = st.pos;
                    append_record(
                        &mut st.buf,
                        pos,
                        RecordKind::Switch,
                        &[],
                        crc32c::crc32c(&[]),
                    );
                }
                let pad = if room >= RECORD_HEADER_SIZE as u64 {
                    room as usize - RECORD_HEADER_SIZE
                } else {
                    room as usize
                };
                let new_len = st.buf.len() + pad;
                st.buf.resize(new_len, 0);
                st.pos += room;
            }
            let pos = st.pos;
            append_record(&mut st.buf, pos, kind, payload, payload_crc);
            st.pos += len as u64;
            end = st.pos;
            buffered = st.buf.len();
        }
        self.records.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
        if buffered > WAL_BUFFER_WRITE_THRESHOLD {
            self.write_out(false).map_err(InsertError::Failed)?;
        }
        Ok(end)
    }

    /// Insert a record that does not depend on the redo point.
    pub fn log(&self, kind: RecordKind, payload: &[u8]) -> PgResult<Lsn> {
        match self.insert(kind, payload, None) {
            Ok(end) => Ok(end),
            Err(InsertError::Failed(e)) => Err(e),
            Err(InsertError::RedoMoved) => unreachable!("no redo point was given"),
        }
    }

    /// Make the log durable up to `lsn` (group commit: wal rule 3).
    pub fn flush(&self, lsn: Lsn) -> PgResult<()> {
        if self.flushed.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        self.check_broken()?;
        let mut fl = self.flush.lock();
        if self.flushed.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        self.write_locked(&mut fl)?;
        self.sync_locked(&mut fl)
    }

    /// Make everything inserted so far durable, unless `synchronous_commit` is off. The
    /// end of a writing statement calls this before the client hears it is done.
    pub fn commit(&self) -> PgResult<()> {
        self.check_broken()?;
        if !self.synchronous_commit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let lsn = self.insert_lsn();
        self.flush(lsn)
    }

    /// Write buffered records to their segment files; with `sync`, fsync them too.
    pub fn write_out(&self, sync: bool) -> PgResult<()> {
        self.check_broken()?;
        let mut fl = self.flush.lock();
        self.write_locked(&mut fl)?;
        if sync {
            self.sync_locked(&mut fl)?;
        }
        Ok(())
    }

    fn fail<T>(&self, e: PgError) -> PgResult<T> {
        // wal rule 5: after a failed write or fsync the state of the file is unknown
        // (of the log's own files, or of data files: smgr rule 7).
        self.broken.store(true, Ordering::Release);
        tracing::error!(error = %e.message, "WAL write failed; refusing further writes");
        Err(e)
    }

    fn write_locked(&self, fl: &mut FlushState) -> PgResult<()> {
        let (buf, start) = {
            let mut st = self.insert.lock();
            let start = st.buf_start;
            st.buf_start = st.pos;
            (std::mem::take(&mut st.buf), start)
        };
        let mut off = 0usize;
        while off < buf.len() {
            let lsn = start + off as u64;
            let segment = self.segment_of(lsn);
            let in_seg = lsn % self.segment_size;
            let n = ((self.segment_size - in_seg) as usize).min(buf.len() - off);
            let file = match &fl.segment {
                Some((s, f)) if *s == segment => f.clone(),
                _ => {
                    // Finish the previous segment before moving on: its bytes must be
                    // durable no later than the new segment's.
                    if fl.segment.is_some() && fl.written > self.flushed.load(Ordering::Acquire) {
                        self.sync_locked(fl)?;
                    }
                    let path = self.segment_path(segment);
                    let created = !self.vfs.exists(&path);
                    let f = match self.vfs.open(&path, true) {
                        Ok(f) => f,
                        Err(e) => {
                            return self.fail(PgError::io(
                                format!("could not open WAL segment \"{}\"", path.display()),
                                e,
                            ));
                        }
                    };
                    // A new segment is written whole with zeros and fsync'd first (wal
                    // rule 3): commits then overwrite allocated blocks, and their
                    // fdatasync need not log the file's growth.
                    if created && let Err(e) = zero_fill(&*f, self.segment_size) {
                        return self.fail(PgError::io(
                            format!("could not fill WAL segment \"{}\"", path.display()),
                            e,
                        ));
                    }
                    if let Err(e) = self.vfs.sync_dir(&self.dir) {
                        return self.fail(PgError::io(
                            format!("could not fsync directory \"{}\"", self.dir.display()),
                            e,
                        ));
                    }
                    fl.segment = Some((segment, f.clone()));
                    f
                }
            };
            if let Err(e) = file.write_all_at(&buf[off..off + n], in_seg) {
                return self.fail(PgError::io(
                    format!(
                        "could not write to WAL segment \"{}\"",
                        self.segment_path(segment).display()
                    ),
                    e,
                ));
            }
            off += n;
            fl.written = lsn + n as u64;
        }
        Ok(())
    }

    fn sync_locked(&self, fl: &mut FlushState) -> PgResult<()> {
        let target = fl.written;
        if target <= self.flushed.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some((segment, f)) = &fl.segment {
            if let Err(e) = f.sync_data() {
                let path = self.segment_path(*segment);
                return self.fail(PgError::io(
                    format!("could not fsync WAL segment \"{}\"", path.display()),
                    e,
                ));
            }
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.flushed.store(target, Ordering::Release);
        Ok(())
    }

    /// Remove segments wholly before `lsn` (they are older than the redo point).
    fn remove_segments_before(&self, lsn: Lsn) -> PgResult<()> {
        let keep_from = self.segment_of(lsn);
        for segment in list_segments(&*self.vfs, &self.dir)? {
            if segment < keep_from {
                let path = self.segment_path(segment);
                self.vfs
                    .remove(&path)
                    .map_err(io_err(format!("could not remove \"{}\"", path.display())))?;
            }
        }
        Ok(())
    }

    fn write_control(&self, c: Control) -> PgResult<()> {
        let tmp = self.control_path.with_extension("tmp");
        let f = self
            .vfs
            .open(&tmp, true)
            .map_err(io_err(format!("could not create \"{}\"", tmp.display())))?;
        let write = || -> std::io::Result<()> {
            f.set_len(0)?;
            f.write_all_at(&c.encode(), 0)?;
            f.sync()
        };
        write().map_err(io_err(format!("could not write \"{}\"", tmp.display())))?;
        self.vfs
            .rename(&tmp, &self.control_path)
            .map_err(io_err(format!("could not rename \"{}\"", tmp.display())))?;
        let parent = self.control_path.parent().unwrap_or(Path::new("."));
        self.vfs
            .sync_dir(parent)
            .map_err(io_err(format!("could not fsync \"{}\"", parent.display())))
    }
}

fn append_record(buf: &mut Vec<u8>, lsn: Lsn, kind: RecordKind, payload: &[u8], payload_crc: u32) {
    let len = (RECORD_HEADER_SIZE + payload.len()) as u32;
    let mut header = [0u8; RECORD_HEADER_SIZE];
    header[0..4].copy_from_slice(&len.to_le_bytes());
    header[8..16].copy_from_slice(&lsn.to_le_bytes());
    header[16] = kind as u8;
    let crc = record_crc(&header, payload_crc);
    header[4..8].copy_from_slice(&crc.to_le_bytes());
    buf.extend_from_slice(&header);
    buf.extend_from_slice(payload);
}

/// CRC-32C over the payload, then the header's length and tail, continued from the
/// payload's own CRC (computed before the insert lock is taken): under the lock only
/// the 20 header bytes are added. (PostgreSQL orders its record CRC the same way;
/// combining a header CRC with the payload's, as version 1 did, cost tens of
/// microseconds per record.)
fn record_crc(header: &[u8; RECORD_HEADER_SIZE], payload_crc: u32) -> u32 {
    crc32c::crc32c_append(
        crc32c::crc32c_append(payload_crc, &header[0..4]),
        &header[8..],
    )
}

/// Little-endian integers read from disk bytes; bytes missing read as 0, which fails
/// the validation every caller does next (a length, a magic number, a CRC).
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn list_segments(vfs: &dyn Vfs, dir: &Path) -> PgResult<Vec<u64>> {
    let names = vfs.list_dir(dir).map_err(io_err(format!(
        "could not read directory \"{}\"",
        dir.display()
    )))?;
    let mut segments: Vec<u64> = names
        .iter()
        .filter(|name| name.len() == 16)
        .filter_map(|name| u64::from_str_radix(name, 16).ok())
        .collect();
    segments.sort_unstable();
    Ok(segments)
}

/// Reads records forward from an LSN until the first invalid one: the end of the log.
pub struct WalReader {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    segment_size: u64,
    pos: Lsn,
    segment: Option<(u64, Vec<u8>)>,
}

impl WalReader {
    pub fn new(wal: &Wal, from: Lsn) -> WalReader {
        WalReader {
            vfs: wal.vfs.clone(),
            dir: wal.dir.clone(),
            segment_size: wal.segment_size,
            pos: from,
            segment: None,
        }
    }

    /// Where the next record would start: after the last one returned.
    pub fn position(&self) -> Lsn {
        self.pos
    }

    /// The bytes of the segment holding `self.pos` (empty if the file is missing).
    fn load_segment(&mut self) -> PgResult<&[u8]> {
        let segment = self.pos / self.segment_size;
        if self.segment.as_ref().map(|(s, _)| *s) != Some(segment) {
            let path = self.dir.join(format!("{segment:016X}"));
            let mut bytes = Vec::new();
            if self.vfs.exists(&path) {
                let f = self
                    .vfs
                    .open(&path, false)
                    .map_err(io_err(format!("could not open \"{}\"", path.display())))?;
                let len = f
                    .len()
                    .map_err(io_err(format!("could not stat \"{}\"", path.display())))?
                    .min(self.segment_size);
                bytes.resize(len as usize, 0);
                let n = f
                    .read_at(&mut bytes, 0)
                    .map_err(io_err(format!("could not read \"{}\"", path.display())))?;
                bytes.truncate(n);
            }
            self.segment = Some((segment, bytes));
        }
        Ok(&self.segment.as_ref().expect("just loaded").1)
    }

    /// The next valid record, or `None` at the end of the log (a missing, zero, torn or
    /// stale record: wal rule 2).
    pub fn next_record(&mut self) -> PgResult<Option<Record>> {
        loop {
            let segment_size = self.segment_size;
            let pos = self.pos;
            let in_seg = (pos % segment_size) as usize;
            if segment_size as usize - in_seg < RECORD_HEADER_SIZE {
                self.pos += segment_size - in_seg as u64;
                continue;
            }
            let bytes = self.load_segment()?;
            let Some(header) = bytes.get(in_seg..in_seg + RECORD_HEADER_SIZE) else {
                return Ok(None);
            };
            let Ok(header) = <[u8; RECORD_HEADER_SIZE]>::try_from(header) else {
                return Ok(None);
            };
            let len = le_u32(&header, 0) as usize;
            let crc = le_u32(&header, 4);
            let lsn = le_u64(&header, 8);
            if len < RECORD_HEADER_SIZE || in_seg + len > segment_size as usize || lsn != pos {
                return Ok(None);
            }
            let Some(payload) = bytes.get(in_seg + RECORD_HEADER_SIZE..in_seg + len) else {
                return Ok(None);
            };
            if record_crc(&header, crc32c::crc32c(payload)) != crc {
                return Ok(None);
            }
            let Some(kind) = RecordKind::from_u8(header[16]) else {
                return Ok(None);
            };
            let payload = payload.to_vec();
            if kind == RecordKind::Switch {
                self.pos += segment_size - in_seg as u64;
                continue;
            }
            self.pos += len as u64;
            return Ok(Some(Record {
                lsn,
                end: self.pos,
                kind,
                payload,
            }));
        }
    }
}

/// Write `size` bytes of zeros over a new segment file and fsync it, so that its blocks
/// are allocated before any record is written there (PostgreSQL's `wal_init_zero`).
fn zero_fill(f: &dyn crate::vfs::VfsFile, size: u64) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let zeros = vec![0u8; CHUNK.min(size) as usize];
    let mut at = 0;
    while at < size {
        let n = (size - at).min(CHUNK) as usize;
        f.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    f.sync()
}

/// How to open the log.
#[derive(Clone, Copy, Debug)]
pub struct WalOptions {
    /// Segment size for a new data directory (an existing one keeps its own).
    pub segment_size: u64,
    pub synchronous_commit: bool,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            segment_size: DEFAULT_WAL_SEGMENT_SIZE,
            synchronous_commit: true,
        }
    }
}

/// What recovery did, for logs and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    pub redo_from: Lsn,
    pub end_of_log: Lsn,
    pub records: u64,
    pub pages_applied: u64,
    pub pages_skipped: u64,
}

/// Open the log of `data_dir` (creating it for a new data directory), replay it into
/// `pool` from the last checkpoint, and end with a checkpoint. `pool` must not have a
/// WAL attached yet; this attaches it. Returns the log and what recovery did.
pub fn open_and_recover(
    vfs: Arc<dyn Vfs>,
    data_dir: &Path,
    pool: &mut BufferPool,
    options: WalOptions,
) -> PgResult<(Arc<Wal>, RecoveryStats)> {
    open_and_recover_with(vfs, data_dir, pool, options, &mut |_| Ok(()), &|| Ok(()))
}

/// [`open_and_recover`] for a server with upper layers: `redo` replays the records storage
/// does not know (`Catalog`, `Xact`), in log order; `at_checkpoint` runs in the final checkpoint
/// as in [`checkpoint_with`]. This is how a lower layer reaches the catalog without
/// calling up (DESIGN.md §2: redo handlers registered at startup).
pub fn open_and_recover_with(
    vfs: Arc<dyn Vfs>,
    data_dir: &Path,
    pool: &mut BufferPool,
    options: WalOptions,
    redo: &mut dyn FnMut(&Record) -> PgResult<()>,
    at_checkpoint: &dyn Fn() -> PgResult<()>,
) -> PgResult<(Arc<Wal>, RecoveryStats)> {
    let dir = data_dir.join(WAL_DIR);
    let control_path = data_dir.join(CONTROL_FILE);
    vfs.create_dir_all(&dir).map_err(io_err(format!(
        "could not create directory \"{}\"",
        dir.display()
    )))?;
    let control = if vfs.exists(&control_path) {
        let f = vfs.open(&control_path, false).map_err(io_err(format!(
            "could not open \"{}\"",
            control_path.display()
        )))?;
        let mut b = vec![0u8; Control::SIZE + 1];
        let n = f.read_at(&mut b, 0).map_err(io_err(format!(
            "could not read \"{}\"",
            control_path.display()
        )))?;
        let version = le_u32(&b[..n], 4);
        if n == Control::SIZE && le_u32(&b, 0) == CONTROL_MAGIC && version != CONTROL_VERSION {
            return Err(PgError::fatal(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "database files are incompatible with server",
            )
            .with_detail(format!(
                "The data directory was initialized with control version {version}, but this server uses version {CONTROL_VERSION}."
            ))
            .with_hint("Create a new data directory."));
        }
        Some(Control::decode(&b[..n]).ok_or_else(|| {
            corrupt(format!(
                "control file \"{}\" is corrupt",
                control_path.display()
            ))
        })?)
    } else {
        None
    };
    let segment_size = control.map_or(options.segment_size, |c| c.segment_size);
    if segment_size < MIN_WAL_SEGMENT_SIZE || !segment_size.is_power_of_two() {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "WAL segment size {segment_size} must be a power of two of at least {MIN_WAL_SEGMENT_SIZE}"
            ),
        ));
    }
    let wal = Arc::new(Wal {
        vfs: vfs.clone(),
        dir,
        control_path,
        segment_size,
        insert: Mutex::new(InsertState {
            buf: Vec::new(),
            buf_start: 0,
            pos: 0,
        }),
        flush: Mutex::new(FlushState {
            segment: None,
            written: 0,
        }),
        flushed: AtomicU64::new(0),
        redo: AtomicU64::new(0),
        broken: AtomicBool::new(false),
        synchronous_commit: AtomicBool::new(options.synchronous_commit),
        checkpoint_lock: Mutex::new(()),
        records: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        syncs: AtomicU64::new(0),
        checkpoints: AtomicU64::new(0),
    });

    let mut stats = RecoveryStats::default();
    let start = match control {
        None => segment_size, // a new log starts at segment 1: LSN 0 means "never logged"
        Some(c) => {
            // Pass 1: find the end of the valid log.
            stats.redo_from = c.redo;
            let mut reader = WalReader::new(&wal, c.redo);
            let mut saw_checkpoint = false;
            while let Some(r) = reader.next_record()? {
                saw_checkpoint |= r.lsn == c.checkpoint && r.kind == RecordKind::Checkpoint;
            }
            if !saw_checkpoint {
                return Err(corrupt(format!(
                    "could not locate a valid checkpoint record at {}",
                    fmt_lsn(c.checkpoint)
                )));
            }
            stats.end_of_log = reader.position();
            // wal rule 2: new records start in a fresh segment, and later segments (bytes
            // a crash left past the end) are removed, so nothing stale follows the end.
            let next_segment = (reader.position() / segment_size + 1) * segment_size;
            for segment in list_segments(&*vfs, &wal.dir)? {
                if segment >= next_segment / segment_size {
                    let path = wal.segment_path(segment);
                    vfs.remove(&path)
                        .map_err(io_err(format!("could not remove \"{}\"", path.display())))?;
                }
            }
            vfs.sync_dir(&wal.dir).map_err(io_err(format!(
                "could not fsync directory \"{}\"",
                wal.dir.display()
            )))?;
            next_segment
        }
    };
    {
        let mut st = wal.insert.lock();
        st.pos = start;
        st.buf_start = start;
    }
    wal.flushed.store(start, Ordering::Release);
    wal.flush.lock().written = start;

    pool.attach_wal(wal.clone());
    if let Some(c) = control {
        // Pass 2: replay.
        let mut reader = WalReader::new(&wal, c.redo);
        while let Some(r) = reader.next_record()? {
            stats.records += 1;
            if matches!(r.kind, RecordKind::Catalog | RecordKind::Xact) {
                redo(&r)?;
            } else {
                redo_record(pool, &r, &mut stats)?;
            }
        }
        tracing::info!(
            redo_from = %fmt_lsn(stats.redo_from),
            end = %fmt_lsn(stats.end_of_log),
            records = stats.records,
            "recovery replayed the write-ahead log"
        );
    }
    checkpoint_with(pool, &wal, at_checkpoint)?;
    Ok((wal, stats))
}

fn rel_of(r: &Record) -> PgResult<RelId> {
    let b: [u8; 4] = r
        .payload
        .as_slice()
        .try_into()
        .map_err(|_| corrupt(format!("bad relation record at {}", fmt_lsn(r.lsn))))?;
    Ok(u32::from_le_bytes(b))
}

fn truncation_of(r: &Record) -> PgResult<(RelId, common::ids::BlockNumber)> {
    let p = r.payload.as_slice();
    if p.len() != 8 {
        return Err(corrupt(format!(
            "bad truncation record at {}",
            fmt_lsn(r.lsn)
        )));
    }
    let word = |i: usize| u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]);
    Ok((word(0), word(4)))
}

fn redo_record(pool: &BufferPool, r: &Record, stats: &mut RecoveryStats) -> PgResult<()> {
    match r.kind {
        RecordKind::Switch | RecordKind::Checkpoint => Ok(()),
        RecordKind::SmgrCreate => {
            let rel = rel_of(r)?;
            if !pool.smgr().exists(rel) {
                pool.smgr().create(rel)?;
            }
            Ok(())
        }
        RecordKind::SmgrUnlink => {
            let rel = rel_of(r)?;
            if pool.smgr().exists(rel) {
                pool.drop_relation(rel)?;
                pool.smgr().unlink(rel)?;
            }
            Ok(())
        }
        RecordKind::SmgrTruncate => {
            let (rel, nblocks) = truncation_of(r)?;
            if pool.smgr().exists(rel) {
                pool.drop_blocks_from(rel, nblocks)?;
                pool.smgr().truncate(rel, nblocks)?;
            }
            Ok(())
        }
        RecordKind::Pages => crate::mtr::redo_pages(pool, r, stats),
        RecordKind::Catalog | RecordKind::Xact => Ok(()),
    }
}

/// Write every dirty page and record a redo point, so recovery starts from here and older
/// segments can go (wal rule 4). One at a time; concurrent writers go on meanwhile.
pub fn checkpoint(pool: &BufferPool, wal: &Wal) -> PgResult<()> {
    checkpoint_with(pool, wal, &|| Ok(()))
}

/// A checkpoint that also lets the upper layers save their state: `at_checkpoint` runs
/// after the redo point is set and the pages are written, before the checkpoint record.
/// What it saves must cover every record before the redo point; records after it are
/// replayed over it, so their redo must be idempotent (wal rule 7).
pub fn checkpoint_with(
    pool: &BufferPool,
    wal: &Wal,
    at_checkpoint: &dyn Fn() -> PgResult<()>,
) -> PgResult<()> {
    let _one = wal.checkpoint_lock.lock();
    // The redo point is taken under the insert lock, so every record after it sees the
    // new value (and a record built against the old one is rebuilt: RedoMoved).
    let redo = {
        let st = wal.insert.lock();
        wal.redo.store(st.pos, Ordering::Release);
        st.pos
    };
    let flushed = pool.flush_all();
    // smgr rule 7: once a data fsync failed, no later success can be trusted; the redo
    // point must not move past changes that may be lost. Refuse writes until a restart
    // replays them from the log.
    if pool.smgr().fsync_failed() {
        let e = flushed.err().unwrap_or_else(|| {
            PgError::new(SqlState::IO_ERROR, "an earlier fsync of a data file failed")
        });
        return wal.fail(e);
    }
    flushed?;
    at_checkpoint()?;
    let end = wal.log(RecordKind::Checkpoint, &redo.to_le_bytes())?;
    wal.flush(end)?;
    let checkpoint_lsn = end - (RECORD_HEADER_SIZE as u64 + 8);
    wal.write_control(Control {
        segment_size: wal.segment_size,
        checkpoint: checkpoint_lsn,
        redo,
    })?;
    wal.remove_segments_before(redo)?;
    wal.checkpoints.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// An LSN as PostgreSQL prints one: `high/low` in hex.
pub fn fmt_lsn(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smgr::Smgr;
    use crate::vfs::OsVfs;

    fn open(dir: &Path, seg: u64) -> (BufferPool, Arc<Wal>) {
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        let smgr = Arc::new(Smgr::new(vfs.clone(), dir).unwrap());
        let mut pool = BufferPool::new(smgr, 16);
        let (wal, _) = open_and_recover(
            vfs,
            dir,
            &mut pool,
            WalOptions {
                segment_size: seg,
                synchronous_commit: true,
            },
        )
        .unwrap();
        (pool, wal)
    }

    fn read_all(wal: &Wal, from: Lsn) -> Vec<Record> {
        let mut r = WalReader::new(wal, from);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push(rec);
        }
        out
    }

    #[test]
    fn records_round_trip_across_segments() {
        let dir = tempfile::tempdir().unwrap();
        let (_pool, wal) = open(dir.path(), MIN_WAL_SEGMENT_SIZE);
        let start = wal.insert_lsn();
        let mut payloads = Vec::new();
        for i in 0..200u32 {
            // Sizes that do not divide the segment, so records meet its end.
            let p = vec![(i % 251) as u8; 1000 + (i as usize * 37) % 3000];
            wal.log(RecordKind::SmgrCreate, &p).unwrap();
            payloads.push(p);
            if i % 17 == 0 {
                wal.commit().unwrap();
            }
        }
        wal.commit().unwrap();
        assert!(wal.insert_lsn() - start > 4 * MIN_WAL_SEGMENT_SIZE);
        let recs: Vec<_> = read_all(&wal, start)
            .into_iter()
            .filter(|r| r.kind == RecordKind::SmgrCreate)
            .collect();
        assert_eq!(recs.len(), payloads.len());
        for (r, p) in recs.iter().zip(&payloads) {
            assert_eq!(&r.payload, p);
            assert_eq!(
                r.lsn / MIN_WAL_SEGMENT_SIZE,
                (r.end - 1) / MIN_WAL_SEGMENT_SIZE
            );
        }
    }

    #[test]
    fn segment_ends_too_small_for_a_header_are_skipped() {
        let seg = MIN_WAL_SEGMENT_SIZE;
        for room in [0u64, 1, 10, 23, 24, 25, 100] {
            let dir = tempfile::tempdir().unwrap();
            let (_pool, wal) = open(dir.path(), seg);
            let start = wal.insert_lsn();
            // A record that leaves exactly `room` bytes in the segment, then two more.
            let first = seg - start % seg - room - RECORD_HEADER_SIZE as u64;
            wal.log(RecordKind::SmgrCreate, &vec![1; first as usize])
                .unwrap();
            assert_eq!((seg - wal.insert_lsn() % seg) % seg, room);
            wal.log(RecordKind::SmgrCreate, &[2; 50]).unwrap();
            wal.log(RecordKind::SmgrCreate, &[3; 50]).unwrap();
            wal.commit().unwrap();
            let payloads: Vec<u8> = read_all(&wal, start).iter().map(|r| r.payload[0]).collect();
            assert_eq!(payloads, vec![1, 2, 3], "room {room}");
        }
    }

    #[test]
    fn a_torn_or_stale_tail_ends_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let (_pool, wal) = open(dir.path(), MIN_WAL_SEGMENT_SIZE);
        let start = wal.insert_lsn();
        let a = wal.log(RecordKind::SmgrCreate, &[1; 100]).unwrap();
        let b = wal.log(RecordKind::SmgrCreate, &[2; 100]).unwrap();
        wal.log(RecordKind::SmgrCreate, &[3; 100]).unwrap();
        wal.commit().unwrap();
        assert_eq!(read_all(&wal, start).len(), 3);
        // Flip a byte in the second record's payload: the log ends after the first.
        let seg = wal.segment_path(wal.segment_of(start));
        let f = OsVfs.open(&seg, false).unwrap();
        let off = (a % MIN_WAL_SEGMENT_SIZE) + RECORD_HEADER_SIZE as u64 + 5;
        f.write_all_at(&[9], off).unwrap();
        let recs = read_all(&wal, start);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].end, a);
        // A record copied to the wrong place (stale) is rejected by its own LSN.
        let mut rec3 = vec![0u8; RECORD_HEADER_SIZE + 100];
        f.read_at(&mut rec3, b % MIN_WAL_SEGMENT_SIZE).unwrap();
        f.write_all_at(&rec3, a % MIN_WAL_SEGMENT_SIZE).unwrap();
        assert!(read_all(&wal, a).is_empty());
    }

    #[test]
    fn commits_share_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let (_pool, wal) = open(dir.path(), MIN_WAL_SEGMENT_SIZE);
        // Ten sessions log a record each, then all commit: the first commit's fsync covers
        // every record buffered so far, so the other nine find their LSN flushed.
        let before = wal.stats().syncs;
        let ends: Vec<Lsn> = (0..10u8)
            .map(|t| wal.log(RecordKind::SmgrCreate, &[t; 64]).unwrap())
            .collect();
        for end in &ends {
            wal.flush(*end).unwrap();
        }
        assert_eq!(wal.stats().syncs - before, 1, "one fsync for ten commits");
        assert_eq!(wal.flushed_lsn(), wal.insert_lsn());
        // Concurrent committers: everything ends up flushed, never more fsyncs than commits.
        let before = wal.stats().syncs;
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let wal = &wal;
                s.spawn(move || {
                    for _ in 0..50 {
                        wal.log(RecordKind::SmgrCreate, &[t; 64]).unwrap();
                        wal.commit().unwrap();
                    }
                });
            }
        });
        assert_eq!(wal.flushed_lsn(), wal.insert_lsn());
        assert!(wal.stats().syncs - before <= 400);
    }

    #[test]
    fn control_file_round_trip_and_corruption() {
        let c = Control {
            segment_size: 1 << 20,
            checkpoint: 123,
            redo: 100,
        };
        let mut b = c.encode();
        assert_eq!(Control::decode(&b), Some(c));
        b[17] ^= 1;
        assert_eq!(Control::decode(&b), None);
    }

    #[test]
    fn restart_starts_a_fresh_segment_and_removes_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let end = {
            let (pool, wal) = open(dir.path(), MIN_WAL_SEGMENT_SIZE);
            for _ in 0..100 {
                wal.log(RecordKind::SmgrCreate, &[7; 2000]).unwrap();
            }
            wal.commit().unwrap();
            checkpoint(&pool, &wal).unwrap();
            wal.insert_lsn()
        };
        let (_pool, wal) = open(dir.path(), DEFAULT_WAL_SEGMENT_SIZE);
        assert_eq!(
            wal.segment_size(),
            MIN_WAL_SEGMENT_SIZE,
            "kept from pg_control"
        );
        assert!(wal.insert_lsn() > end);
        assert_eq!(
            wal.insert_lsn() % MIN_WAL_SEGMENT_SIZE,
            RECORD_HEADER_SIZE as u64 + 8
        );
        let segments = list_segments(&OsVfs, &wal.dir).unwrap();
        assert!(segments.len() <= 2, "old segments removed: {segments:?}");
    }
}
