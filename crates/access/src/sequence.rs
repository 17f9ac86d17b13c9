//! Sequences: the state of `CREATE SEQUENCE` counters, on one page each.
//!
//! A sequence's relation has one block, an ordinary slotted page whose item 1 is
//!
//! ```text
//!  0            8          16
//!  +------------+----------+-----------+
//!  | last_value | log_cnt  | is_called |   little-endian; is_called is 0 or 1
//!  |    i64     |   i64    |    u8     |
//!  +------------+----------+-----------+
//! ```
//!
//! as PostgreSQL's sequence tuple (`last_value`, `log_cnt`, `is_called`). `nextval` is not
//! transactional: a value handed out is never handed out again, even if its transaction
//! rolls back.
//!
//! Logging ahead (access rule 8): as PostgreSQL, `nextval` does not write the page for
//! every value. When the values covered by the last logged state run out, it logs (one
//! mini-transaction, its WAL flushed at once) a state [`SEQ_LOG_VALS`] values ahead, then
//! hands out the values up to it from memory ([`Sequences`] keeps each sequence's current
//! state behind a mutex). After a crash the page holds the state logged ahead, so the
//! sequence goes on after every value it may have handed out; up to `SEQ_LOG_VALS` values
//! are skipped, as in PostgreSQL. The flush makes this hold even for a transaction that
//! writes nothing else (PostgreSQL gives such a transaction an id so its commit flushes).

use std::collections::HashMap;
use std::sync::Arc;

use common::{PgError, PgResult, RelId, SqlState};
use parking_lot::Mutex;
use storage::bufmgr::BufferPool;
use storage::mtr::Mtr;
use storage::page::{Page, PageMut};

/// Values logged ahead of the last one handed out (PostgreSQL's `SEQ_LOG_VALS`).
pub const SEQ_LOG_VALS: i64 = 32;

const ITEM_SIZE: usize = 17;

/// What a sequence's page holds, and what `SELECT * FROM seq` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqState {
    /// The last value handed out, or the first to hand out while `!is_called`.
    pub last_value: i64,
    /// Values still covered by the logged state (0 on the page).
    pub log_cnt: i64,
    pub is_called: bool,
}

/// The parameters `nextval` follows (the catalog's sequence options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqBounds {
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cycle: bool,
}

fn encode(s: &SeqState) -> [u8; ITEM_SIZE] {
    let mut b = [0u8; ITEM_SIZE];
    b[0..8].copy_from_slice(&s.last_value.to_le_bytes());
    b[8..16].copy_from_slice(&s.log_cnt.to_le_bytes());
    b[16] = s.is_called as u8;
    b
}

fn corrupt(rel: RelId) -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        format!("bad sequence page in relation {rel}"),
    )
}

fn decode(rel: RelId, b: &[u8]) -> PgResult<SeqState> {
    if b.len() != ITEM_SIZE || b[16] > 1 {
        return Err(corrupt(rel));
    }
    let i64_at = |at: usize| i64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
    Ok(SeqState {
        last_value: i64_at(0),
        log_cnt: i64_at(8),
        is_called: b[16] == 1,
    })
}

/// Make the page of a new sequence (its relation exists and is empty): `start`, not
/// called yet. Logged and flushed.
pub fn init(pool: &BufferPool, rel: RelId, start: i64) -> PgResult<()> {
    let (block, mut buf) = pool.extend(rel)?;
    if block != 0 {
        return Err(corrupt(rel));
    }
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let mut page = PageMut::new(mtr.page(p));
    page.init(0);
    let state = SeqState {
        last_value: start,
        log_cnt: 0,
        is_called: false,
    };
    page.add_item(&encode(&state)).ok_or_else(|| corrupt(rel))?;
    let end = mtr.commit()?;
    flush(pool, end)
}

/// The state on the page (without what a running [`Sequences`] holds in memory).
pub fn read(pool: &BufferPool, rel: RelId) -> PgResult<SeqState> {
    let buf = pool.read_buffer(rel, 0)?;
    let g = buf.read();
    let item = Page::new(&g).get_item(1).ok_or_else(|| corrupt(rel))?;
    decode(rel, item)
}

fn write(pool: &BufferPool, rel: RelId, state: &SeqState) -> PgResult<()> {
    let mut buf = pool.read_buffer(rel, 0)?;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let mut page = PageMut::new(mtr.page(p));
    let item = page
        .item_mut(1)
        .filter(|i| i.len() == ITEM_SIZE)
        .ok_or_else(|| corrupt(rel))?;
    item.copy_from_slice(&encode(state));
    let end = mtr.commit()?;
    flush(pool, end)
}

fn flush(pool: &BufferPool, end: common::ids::Lsn) -> PgResult<()> {
    match pool.wal() {
        Some(wal) if end > 0 => wal.flush(end),
        _ => Ok(()),
    }
}

/// Why `nextval` could not go on: the bound it reached (PostgreSQL's 2200H).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    Max(i64),
    Min(i64),
}

/// The value after `v`, or where the sequence ends.
fn step(v: i64, b: &SeqBounds) -> Result<i64, Exhausted> {
    if b.increment > 0 {
        match v.checked_add(b.increment).filter(|n| *n <= b.max) {
            Some(n) => Ok(n),
            None if b.cycle => Ok(b.min),
            None => Err(Exhausted::Max(b.max)),
        }
    } else {
        match v.checked_add(b.increment).filter(|n| *n >= b.min) {
            Some(n) => Ok(n),
            None if b.cycle => Ok(b.max),
            None => Err(Exhausted::Min(b.min)),
        }
    }
}

/// The running state of every sequence used since startup, each behind its own mutex
/// (PostgreSQL's buffer lock on the sequence page): `nextval` on one sequence never
/// waits for another.
#[derive(Default)]
pub struct Sequences {
    states: Mutex<HashMap<RelId, Arc<Mutex<Option<SeqState>>>>>,
}

impl Sequences {
    pub fn new() -> Sequences {
        Sequences::default()
    }

    fn entry(&self, rel: RelId) -> Arc<Mutex<Option<SeqState>>> {
        self.states.lock().entry(rel).or_default().clone()
    }

    /// The next value of sequence `rel` (`nextval`).
    pub fn nextval(
        &self,
        pool: &BufferPool,
        rel: RelId,
        bounds: &SeqBounds,
    ) -> PgResult<Result<i64, Exhausted>> {
        let entry = self.entry(rel);
        let mut guard = entry.lock();
        let mut st = match *guard {
            Some(s) => s,
            // Nothing past the page's state is logged: log ahead before handing out more.
            None => SeqState {
                log_cnt: 0,
                ..read(pool, rel)?
            },
        };
        let value = if st.is_called {
            match step(st.last_value, bounds) {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            }
        } else {
            st.last_value
        };
        if st.log_cnt <= 0 {
            // Log a state SEQ_LOG_VALS values on, or at the bound: a wrap of a CYCLE
            // sequence logs again from there.
            let no_wrap = SeqBounds {
                cycle: false,
                ..*bounds
            };
            let mut ahead = value;
            let mut covered = 0;
            while covered < SEQ_LOG_VALS {
                let Ok(n) = step(ahead, &no_wrap) else {
                    break;
                };
                ahead = n;
                covered += 1;
            }
            write(
                pool,
                rel,
                &SeqState {
                    last_value: ahead,
                    log_cnt: 0,
                    is_called: true,
                },
            )?;
            st.log_cnt = covered + 1;
        }
        st.last_value = value;
        st.is_called = true;
        st.log_cnt -= 1;
        *guard = Some(st);
        Ok(Ok(value))
    }

    /// Set sequence `rel` to `value` (`setval`): the next `nextval` returns the value after
    /// it, or `value` itself if `!is_called`. Logged at once.
    pub fn setval(
        &self,
        pool: &BufferPool,
        rel: RelId,
        value: i64,
        is_called: bool,
    ) -> PgResult<()> {
        let entry = self.entry(rel);
        let mut guard = entry.lock();
        let st = SeqState {
            last_value: value,
            log_cnt: 0,
            is_called,
        };
        write(pool, rel, &st)?;
        *guard = Some(st);
        Ok(())
    }

    /// The state `SELECT * FROM seq` shows: the running one if the sequence was used.
    pub fn state(&self, pool: &BufferPool, rel: RelId) -> PgResult<SeqState> {
        let entry = self.entry(rel);
        let guard = entry.lock();
        match *guard {
            Some(s) => Ok(s),
            None => read(pool, rel),
        }
    }

    /// Write each used sequence's running state to its page (a clean shutdown, before
    /// its checkpoint), so that a restart goes on from the last value handed out rather
    /// than from the state logged ahead, as PostgreSQL does after a clean shutdown.
    pub fn save(&self, pool: &BufferPool) -> PgResult<()> {
        let entries: Vec<(RelId, Arc<Mutex<Option<SeqState>>>)> = self
            .states
            .lock()
            .iter()
            .map(|(r, e)| (*r, e.clone()))
            .collect();
        for (rel, entry) in entries {
            let mut guard = entry.lock();
            if let Some(st) = guard.as_mut() {
                st.log_cnt = 0;
                write(pool, rel, st)?;
            }
        }
        Ok(())
    }

    /// After ALTER SEQUENCE: the next `nextval` logs ahead again, under the new options
    /// (the values the old log covered were counted with the old increment).
    pub fn reset_log(&self, rel: RelId) {
        if let Some(entry) = self.states.lock().get(&rel)
            && let Some(st) = entry.lock().as_mut()
        {
            st.log_cnt = 0;
        }
    }

    /// Forget a dropped sequence.
    pub fn forget(&self, rel: RelId) {
        self.states.lock().remove(&rel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::smgr::Smgr;
    use storage::vfs::OsVfs;

    fn pool(dir: &std::path::Path) -> BufferPool {
        let smgr = Arc::new(Smgr::new(Arc::new(OsVfs), dir).unwrap());
        BufferPool::new(smgr, 8)
    }

    const UP: SeqBounds = SeqBounds {
        increment: 1,
        min: 1,
        max: i64::MAX,
        cycle: false,
    };

    #[test]
    fn values_follow_start_and_increment_and_log_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool(dir.path());
        pool.create_relation(20).unwrap();
        init(&pool, 20, 5).unwrap();
        let seqs = Sequences::new();
        let b = SeqBounds { increment: 3, ..UP };
        let got: Vec<i64> = (0..4)
            .map(|_| seqs.nextval(&pool, 20, &b).unwrap().unwrap())
            .collect();
        assert_eq!(got, [5, 8, 11, 14]);
        // The page is ahead of what was handed out: after a crash the sequence goes on
        // after it.
        let on_page = read(&pool, 20).unwrap();
        assert!(on_page.is_called);
        assert_eq!(on_page.last_value, 5 + 3 * SEQ_LOG_VALS);
        // The running state is what SELECT shows.
        assert_eq!(seqs.state(&pool, 20).unwrap().last_value, 14);
        // A clean shutdown saves it: the next life goes on right after 14, and logs
        // ahead again before handing anything out.
        seqs.save(&pool).unwrap();
        let next_life = Sequences::new();
        assert_eq!(next_life.nextval(&pool, 20, &b).unwrap(), Ok(17));
        assert_eq!(read(&pool, 20).unwrap().last_value, 17 + 3 * SEQ_LOG_VALS);
    }

    #[test]
    fn bounds_stop_or_cycle() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool(dir.path());
        pool.create_relation(21).unwrap();
        init(&pool, 21, 1).unwrap();
        let seqs = Sequences::new();
        let b = SeqBounds { max: 3, ..UP };
        let got: Vec<_> = (0..4)
            .map(|_| seqs.nextval(&pool, 21, &b).unwrap())
            .collect();
        assert_eq!(got, [Ok(1), Ok(2), Ok(3), Err(Exhausted::Max(3))]);
        let cyc = SeqBounds { cycle: true, ..b };
        assert_eq!(seqs.nextval(&pool, 21, &cyc).unwrap(), Ok(1));
        seqs.setval(&pool, 21, 2, false).unwrap();
        assert_eq!(seqs.nextval(&pool, 21, &b).unwrap(), Ok(2));
        let down = SeqBounds {
            increment: -2,
            min: -3,
            max: 2,
            cycle: true,
        };
        let got: Vec<_> = (0..4)
            .map(|_| seqs.nextval(&pool, 21, &down).unwrap())
            .collect();
        assert_eq!(got, [Ok(0), Ok(-2), Ok(2), Ok(0)]);
    }
}
