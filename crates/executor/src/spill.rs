//! Rows in temporary files (storage temp rules): the runs an external sort writes and
//! merges, and the rows a Materialize keeps past `work_mem` ([`RowStore`]). A row is written self-described, each value with the type it reads back as,
//! so any row a plan makes can go out and come back equal.
//!
//! A run is a sequence of records, each a `u32` length and then the values: a `u16`
//! count, and per value a tag (0 for NULL) and its bytes in the heap's encoding
//! (`access::tuple::encode_value`) for the tag's type. Runs are written through a buffer
//! of [`BLOCK`] bytes and read back through one.

use common::{DataType, PgError, PgResult, Value};
use storage::tempfile::{TempFile, TempSpace};

/// Bytes buffered per run, writing or reading (one page, as PostgreSQL's tapes read).
pub(crate) const BLOCK: usize = 8192;

/// The type `v` is written as, and its tag; `None` for NULL.
fn spill_type(v: &Value) -> Option<(u8, DataType)> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => (1, DataType::Bool),
        Value::Int2(_) => (2, DataType::Int2),
        Value::Int4(_) => (3, DataType::Int4),
        Value::Int8(_) => (4, DataType::Int8),
        Value::Float4(_) => (5, DataType::Float4),
        Value::Float8(_) => (6, DataType::Float8),
        Value::Text(_) => (7, DataType::Text),
        Value::Bpchar(_) => (8, DataType::Bpchar(None)),
        Value::Date(_) => (9, DataType::Date),
        Value::Timestamp(_) => (10, DataType::Timestamp(None)),
        Value::TimestampTz(_) => (11, DataType::TimestampTz(None)),
        Value::Interval(_) => (12, DataType::Interval),
        Value::Numeric(_) => (13, DataType::Numeric(None)),
        Value::Uuid(_) => (14, DataType::Uuid),
        Value::Bytea(_) => (15, DataType::Bytea),
        Value::Oid(_) => (16, DataType::Oid),
        Value::Reg(k, _) => (17 + *k as u8, DataType::Reg(*k)),
        Value::Array(a) => (
            ARRAY_TAG,
            DataType::Array(common::types::ArrayType {
                elem_oid: a.elem,
                typmod: -1,
            }),
        ),
    })
}

/// The tag of an array; its element type's OID follows it.
const ARRAY_TAG: u8 = 30;

fn type_of_tag(tag: u8, bytes: &[u8], pos: &mut usize) -> Option<DataType> {
    use common::value::RegKind;
    Some(match tag {
        1 => DataType::Bool,
        2 => DataType::Int2,
        3 => DataType::Int4,
        4 => DataType::Int8,
        5 => DataType::Float4,
        6 => DataType::Float8,
        7 => DataType::Text,
        8 => DataType::Bpchar(None),
        9 => DataType::Date,
        10 => DataType::Timestamp(None),
        11 => DataType::TimestampTz(None),
        12 => DataType::Interval,
        13 => DataType::Numeric(None),
        14 => DataType::Uuid,
        15 => DataType::Bytea,
        16 => DataType::Oid,
        17 => DataType::Reg(RegKind::Class),
        18 => DataType::Reg(RegKind::Type),
        19 => DataType::Reg(RegKind::Namespace),
        ARRAY_TAG => {
            let oid = u32::from_le_bytes(bytes.get(*pos..*pos + 4)?.try_into().ok()?);
            *pos += 4;
            DataType::Array(common::types::ArrayType {
                elem_oid: oid,
                typmod: -1,
            })
        }
        _ => return None,
    })
}

fn corrupt() -> PgError {
    PgError::new(
        common::SqlState::DATA_CORRUPTED,
        "a temporary file does not read back as it was written",
    )
}

/// Append `values` as one record to `out`: a frame (`storage::tempfile::put_frame`),
/// its length word filled in once the values are encoded in place.
pub(crate) fn put_record(out: &mut Vec<u8>, values: &[&[Value]]) -> PgResult<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let n: usize = values.iter().map(|v| v.len()).sum();
    out.extend_from_slice(&(n as u16).to_le_bytes());
    for v in values.iter().flat_map(|v| v.iter()) {
        match spill_type(v) {
            None => out.push(0),
            Some((tag, ty)) => {
                out.push(tag);
                if let Value::Array(a) = v {
                    out.extend_from_slice(&a.elem.to_le_bytes());
                }
                access::tuple::encode_value(v, &ty, out)?;
            }
        }
    }
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// The values of one record (without its length word).
fn get_record(bytes: &[u8]) -> PgResult<Vec<Value>> {
    let n = u16::from_le_bytes(bytes.get(..2).ok_or_else(corrupt)?.try_into().expect("2"));
    let mut pos = 2;
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let tag = *bytes.get(pos).ok_or_else(corrupt)?;
        pos += 1;
        if tag == 0 {
            out.push(Value::Null);
            continue;
        }
        let ty = type_of_tag(tag, bytes, &mut pos).ok_or_else(corrupt)?;
        out.push(access::tuple::decode_value(bytes, &mut pos, &ty)?);
    }
    Ok(out)
}

/// A run being written: records buffered, a block at a time, into a temporary file.
pub(crate) struct RunWriter {
    file: TempFile,
    buf: Vec<u8>,
}

impl RunWriter {
    pub(crate) fn new(
        space: &std::sync::Arc<TempSpace>,
        budget: Option<&std::sync::Arc<storage::tempfile::TempBudget>>,
    ) -> PgResult<RunWriter> {
        Ok(RunWriter {
            file: space.create(budget)?,
            buf: Vec::with_capacity(BLOCK * 2),
        })
    }

    /// Append `row` to the run in `slot`, made at its first row.
    pub(crate) fn push_to(
        slot: &mut Option<RunWriter>,
        space: &std::sync::Arc<TempSpace>,
        budget: Option<&std::sync::Arc<storage::tempfile::TempBudget>>,
        row: &[Value],
    ) -> PgResult<()> {
        let w = match slot {
            Some(w) => w,
            None => slot.insert(RunWriter::new(space, budget)?),
        };
        w.push(&[row])
    }

    pub(crate) fn push(&mut self, values: &[&[Value]]) -> PgResult<()> {
        put_record(&mut self.buf, values)?;
        if self.buf.len() >= BLOCK {
            self.file.append(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// The run, for reading.
    pub(crate) fn finish(mut self) -> PgResult<RunReader> {
        if !self.buf.is_empty() {
            self.file.append(&self.buf)?;
        }
        Ok(RunReader {
            file: self.file,
            cursor: Cursor::default(),
        })
    }
}

/// A run being read back, a block at a time; its file goes when it drops.
pub(crate) struct RunReader {
    file: TempFile,
    cursor: Cursor,
}

impl RunReader {
    /// Bytes the run takes on disk.
    pub(crate) fn bytes(&self) -> u64 {
        self.file.len()
    }

    /// The next record's values, `None` at the end of the run.
    pub(crate) fn next(&mut self) -> PgResult<Option<Vec<Value>>> {
        self.cursor.next(&self.file)
    }
}

/// A place in a file of records, and the block read ahead from there: the file's
/// frames (`storage::tempfile::FrameReader`, [`BLOCK`] bytes at a time), each decoded.
struct Cursor(storage::tempfile::FrameReader);

impl Default for Cursor {
    fn default() -> Cursor {
        Cursor::at(0)
    }
}

impl Cursor {
    /// A cursor whose first record starts at `offset`.
    fn at(offset: u64) -> Cursor {
        Cursor(storage::tempfile::FrameReader::new(BLOCK, offset))
    }

    /// The next record's values from `file`, `None` at its end.
    fn next(&mut self, file: &TempFile) -> PgResult<Option<Vec<Value>>> {
        self.0.next(file)?.map(get_record).transpose()
    }
}

/// Rows kept in order and read again from the start as often as needed: in memory up to
/// `limit` bytes (`work_mem`), the rest in a temporary file (a Materialize's store,
/// PostgreSQL's tuplestore). One reader at a time, passes from the first row.
pub(crate) struct RowStore {
    memory: Vec<Vec<Value>>,
    bytes: usize,
    limit: usize,
    space: std::sync::Arc<TempSpace>,
    budget: Option<std::sync::Arc<storage::tempfile::TempBudget>>,
    /// The rows after `memory`'s, once they outgrew it.
    file: Option<TempFile>,
    /// Records not yet written to `file`.
    pending: Vec<u8>,
    spilled: usize,
    /// The reader of the file, and the spilled row it gives next.
    cursor: Cursor,
    next_spilled: usize,
    /// Where every [`CHECKPOINT`]th spilled row starts in the file: a read of an
    /// earlier row (a cursor moving back) starts from the one before it, not from the
    /// file's start.
    checkpoints: Vec<u64>,
    /// Spilled rows read from the file so far (what a backward read costs, in tests).
    records_read: u64,
}

/// The spilled rows between two of a [`RowStore`]'s remembered file offsets.
const CHECKPOINT: usize = 128;

impl RowStore {
    pub(crate) fn new(
        limit: usize,
        space: std::sync::Arc<TempSpace>,
        budget: Option<std::sync::Arc<storage::tempfile::TempBudget>>,
    ) -> RowStore {
        RowStore {
            memory: Vec::new(),
            bytes: 0,
            limit,
            space,
            budget,
            file: None,
            pending: Vec::new(),
            spilled: 0,
            cursor: Cursor::default(),
            next_spilled: 0,
            checkpoints: Vec::new(),
            records_read: 0,
        }
    }

    /// Keep no row (a file of spilled rows goes), ready to be filled again.
    pub(crate) fn clear(&mut self) {
        self.memory.clear();
        self.bytes = 0;
        self.file = None;
        self.pending.clear();
        self.spilled = 0;
        self.cursor = Cursor::default();
        self.next_spilled = 0;
        self.checkpoints.clear();
    }

    /// Rows kept.
    pub(crate) fn len(&self) -> usize {
        self.memory.len() + self.spilled
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep `row` after the others.
    pub(crate) fn push(&mut self, row: Vec<Value>, bytes: usize) -> PgResult<()> {
        if self.file.is_none() && (self.bytes + bytes <= self.limit || self.memory.is_empty()) {
            self.bytes += bytes;
            self.memory.push(row);
            return Ok(());
        }
        if self.file.is_none() {
            self.file = Some(self.space.create(self.budget.as_ref())?);
        }
        if self.spilled.is_multiple_of(CHECKPOINT) {
            let flushed = self.file.as_ref().map_or(0, TempFile::len);
            self.checkpoints.push(flushed + self.pending.len() as u64);
        }
        put_record(&mut self.pending, &[&row])?;
        self.spilled += 1;
        if self.pending.len() >= BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> PgResult<()> {
        if let Some(f) = &mut self.file
            && !self.pending.is_empty()
        {
            f.append(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Rows kept in memory (the first ones).
    pub(crate) fn memory_len(&self) -> usize {
        self.memory.len()
    }

    /// Row `i`, one of those kept in memory.
    pub(crate) fn in_memory(&self, i: usize) -> &Vec<Value> {
        &self.memory[i]
    }

    /// Some rows went to the file.
    pub(crate) fn spilled_any(&self) -> bool {
        self.spilled > 0
    }

    /// The rows kept in memory, the store given up (all of them unless
    /// [`RowStore::spilled_any`]).
    pub(crate) fn into_memory(self) -> Vec<Vec<Value>> {
        self.memory
    }

    /// Every row in order, once, the store given up: the rows in memory are moved out
    /// (an index build's entries, `commands::index`), the rest read from the file.
    pub(crate) fn drain(mut self) -> impl Iterator<Item = PgResult<Vec<Value>>> {
        let memory = std::mem::take(&mut self.memory);
        let spilled = self.spilled;
        // With the memory rows gone, spilled row k is row k.
        memory
            .into_iter()
            .map(Ok)
            .chain((0..spilled).map(move |k| self.spilled(k)?.ok_or_else(corrupt)))
    }

    /// Row `i`, wherever it is: a spilled row before the last one read (a scrollable
    /// cursor moving back) is read from the checkpoint before it, at most
    /// [`CHECKPOINT`] rows back.
    pub(crate) fn get(&mut self, i: usize) -> PgResult<Option<Vec<Value>>> {
        if i < self.memory.len() {
            return Ok(Some(self.memory[i].clone()));
        }
        let k = i - self.memory.len();
        if k >= self.spilled {
            return Ok(None);
        }
        if k < self.next_spilled {
            let c = k / CHECKPOINT;
            self.next_spilled = c * CHECKPOINT;
            self.cursor = Cursor::at(*self.checkpoints.get(c).ok_or_else(corrupt)?);
        }
        while self.next_spilled < k {
            self.spilled(self.memory.len() + self.next_spilled)?;
        }
        self.spilled(i)
    }

    /// `f` over row `i`, if there is one: a row in memory is lent, not copied (a merge
    /// join's group, read again for each left row of its key).
    pub(crate) fn with_row<R>(
        &mut self,
        i: usize,
        f: impl FnOnce(&[Value]) -> R,
    ) -> PgResult<Option<R>> {
        if i < self.memory.len() {
            return Ok(Some(f(&self.memory[i])));
        }
        Ok(self.get(i)?.map(|row| f(&row)))
    }

    /// Row `i`, past those in memory: read from the file, in order (a pass that starts
    /// again from the first spilled row rereads the file from its start).
    pub(crate) fn spilled(&mut self, i: usize) -> PgResult<Option<Vec<Value>>> {
        let Some(k) = i
            .checked_sub(self.memory.len())
            .filter(|&k| k < self.spilled)
        else {
            return Ok(None);
        };
        if k != self.next_spilled {
            if k != 0 {
                return Err(PgError::internal("a row store read out of order"));
            }
            self.next_spilled = 0;
            self.cursor = Cursor::default();
        }
        self.flush()?;
        let file = self.file.as_ref().ok_or_else(corrupt)?;
        let row = self.cursor.next(file)?.ok_or_else(corrupt)?;
        self.next_spilled += 1;
        self.records_read += 1;
        Ok(Some(row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_every_kind_read_back_equal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space = std::sync::Arc::new(
            TempSpace::open(std::sync::Arc::new(storage::vfs::OsVfs), dir.path()).expect("space"),
        );
        let rows: Vec<Vec<Value>> = vec![
            vec![
                Value::Null,
                Value::Bool(true),
                Value::Int2(-3),
                Value::Int4(7),
                Value::Int8(1 << 40),
                Value::Float4(1.5),
                Value::Float8(-0.25),
                Value::Text("héllo".into()),
                Value::Bpchar("ab  ".into()),
            ],
            vec![
                Value::Numeric("12.3400".parse().expect("numeric")),
                Value::Uuid([7; 16]),
                Value::Bytea(vec![0, 1, 2]),
                Value::Oid(4_000_000_000),
                Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                    common::types::oids::INT4,
                    vec![Value::Int4(1), Value::Null, Value::Int4(3)],
                ))),
            ],
            vec![Value::Text("x".repeat(3 * BLOCK))],
        ];
        let mut w = RunWriter::new(&space, None).expect("run");
        for _ in 0..500 {
            for r in &rows {
                w.push(&[r.as_slice()]).expect("push");
            }
        }
        let mut r = w.finish().expect("finish");
        assert_eq!(space.present(), 1);
        for _ in 0..500 {
            for want in &rows {
                assert_eq!(r.next().expect("read").as_ref(), Some(want));
            }
        }
        assert_eq!(r.next().expect("end"), None);
        drop(r);
        assert_eq!(space.present(), 0, "a run's file goes with it");
    }

    #[test]
    fn a_row_store_keeps_what_memory_cannot_and_reads_it_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space = std::sync::Arc::new(
            TempSpace::open(std::sync::Arc::new(storage::vfs::OsVfs), dir.path()).expect("space"),
        );
        let row = |i: i32| vec![Value::Int4(i), Value::Text(format!("row {i}"))];
        let mut store = RowStore::new(1000, space.clone(), None);
        let read = |store: &mut RowStore, i: usize| -> Vec<Value> {
            if i < store.memory_len() {
                store.in_memory(i).clone()
            } else {
                store.spilled(i).expect("read").expect("there")
            }
        };
        // A first pass that stops early, then passes that read on as rows are added.
        for i in 0..300 {
            store.push(row(i), 100).expect("push");
        }
        assert_eq!(store.memory_len(), 10);
        assert_eq!(space.present(), 1);
        for i in 0..150 {
            assert_eq!(read(&mut store, i), row(i as i32));
        }
        for pass in 0..3 {
            for i in 0..store.len() {
                assert_eq!(read(&mut store, i), row(i as i32), "pass {pass}");
            }
            store.push(row(300 + pass), 100).expect("push");
        }
        assert_eq!(store.len(), 303);
        drop(store);
        assert_eq!(space.present(), 0);
    }

    /// A file system with room for `room` bytes of writes, then ENOSPC.
    struct NearlyFull {
        room: std::sync::Arc<std::sync::atomic::AtomicI64>,
    }

    struct NearlyFullFile {
        inner: std::sync::Arc<dyn storage::vfs::VfsFile>,
        room: std::sync::Arc<std::sync::atomic::AtomicI64>,
    }

    impl storage::vfs::Vfs for NearlyFull {
        fn open(
            &self,
            path: &std::path::Path,
            create: bool,
        ) -> std::io::Result<std::sync::Arc<dyn storage::vfs::VfsFile>> {
            Ok(std::sync::Arc::new(NearlyFullFile {
                inner: storage::vfs::OsVfs.open(path, create)?,
                room: self.room.clone(),
            }))
        }
        fn remove(&self, path: &std::path::Path) -> std::io::Result<()> {
            storage::vfs::OsVfs.remove(path)
        }
        fn exists(&self, path: &std::path::Path) -> bool {
            storage::vfs::OsVfs.exists(path)
        }
        fn create_dir_all(&self, path: &std::path::Path) -> std::io::Result<()> {
            storage::vfs::OsVfs.create_dir_all(path)
        }
        fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
            storage::vfs::OsVfs.rename(from, to)
        }
        fn sync_dir(&self, path: &std::path::Path) -> std::io::Result<()> {
            storage::vfs::OsVfs.sync_dir(path)
        }
        fn list_dir(&self, path: &std::path::Path) -> std::io::Result<Vec<String>> {
            storage::vfs::OsVfs.list_dir(path)
        }
    }

    impl storage::vfs::VfsFile for NearlyFullFile {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
            self.inner.read_at(buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
            let left = self
                .room
                .fetch_sub(buf.len() as i64, std::sync::atomic::Ordering::AcqRel);
            if left < buf.len() as i64 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.inner.write_all_at(buf, offset)
        }
        fn sync(&self) -> std::io::Result<()> {
            self.inner.sync()
        }
        fn len(&self) -> std::io::Result<u64> {
            self.inner.len()
        }
        fn set_len(&self, len: u64) -> std::io::Result<()> {
            self.inner.set_len(len)
        }
    }

    /// A store that needs more disk than there is fails with 53100 (disk full), as
    /// PostgreSQL's temporary files do, and leaves no file behind.
    #[test]
    fn a_full_disk_is_53100_and_the_files_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs = NearlyFull {
            room: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(64 << 10)),
        };
        let space = std::sync::Arc::new(
            TempSpace::open(std::sync::Arc::new(vfs), dir.path()).expect("space"),
        );
        let mut store = RowStore::new(1000, space.clone(), None);
        let mut failed = None;
        for i in 0..100_000 {
            let row = vec![Value::Int4(i), Value::Text("x".repeat(100))];
            if let Err(e) = store.push(row, 150).and_then(|_| store.get(0).map(|_| ())) {
                failed = Some(e);
                break;
            }
        }
        let e = failed.expect("the disk filled up");
        assert_eq!(e.code, common::SqlState::DISK_FULL, "{e:?}");
        assert!(
            e.message.contains("No space left on device"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("os error"), "{}", e.message);
        drop(store);
        assert_eq!(space.present(), 0);
    }

    #[test]
    fn a_cleared_row_store_is_empty_and_fills_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space = std::sync::Arc::new(
            TempSpace::open(std::sync::Arc::new(storage::vfs::OsVfs), dir.path()).expect("space"),
        );
        let mut store = RowStore::new(1000, space.clone(), None);
        for i in 0..500 {
            store.push(vec![Value::Int4(i)], 100).expect("push");
        }
        assert_eq!(space.present(), 1);
        store.clear();
        assert_eq!((store.len(), space.present()), (0, 0));
        for i in 0..300 {
            store.push(vec![Value::Int4(-i)], 100).expect("push");
        }
        let back: Vec<_> = (0..300).map(|i| store.get(i).expect("read")).collect();
        let want: Vec<_> = (0..300).map(|i| Some(vec![Value::Int4(-i)])).collect();
        assert_eq!(back, want);
        assert_eq!(store.get(300).expect("end"), None);
    }

    #[test]
    fn a_row_store_reads_spilled_rows_backward_and_at_random() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space = std::sync::Arc::new(
            TempSpace::open(std::sync::Arc::new(storage::vfs::OsVfs), dir.path()).expect("space"),
        );
        let row = |i: usize| vec![Value::Int8(i as i64), Value::Text("x".repeat(i % 50))];
        let mut store = RowStore::new(1000, space, None);
        for i in 0..2000 {
            store.push(row(i), 100).expect("push");
        }
        // Backward from the end, as a scrollable cursor moving back reads them: each
        // from the checkpoint before it, not from the file's start.
        for i in (0..2000).rev() {
            assert_eq!(store.get(i).expect("read"), Some(row(i)), "row {i}");
        }
        assert!(
            store.records_read <= 2000 * CHECKPOINT as u64,
            "{} records read",
            store.records_read
        );
        // Jumps both ways, across checkpoints and onto them.
        for i in [1999, 5, 1500, 128 + 10, 138, 137, 1024 + 128, 1023, 2000] {
            let want = (i < 2000).then(|| row(i));
            assert_eq!(store.get(i).expect("read"), want, "row {i}");
        }
    }
}
