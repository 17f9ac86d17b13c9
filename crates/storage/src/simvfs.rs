//! A simulated file system for crash and fault tests (vfs rule 1).
//!
//! `kill -9` cannot show a missing fsync: the operating system keeps the page cache. This
//! [`Vfs`] keeps, per file, the bytes made durable by the last `sync` and the writes since;
//! [`SimVfs::crash`] returns the file system a machine would find after power loss: every
//! synced byte, plus a random subset of the unsynced writes, one of which may be torn at a
//! 512-byte sector boundary; directory entries created, removed or renamed since the last
//! `sync_dir` survive or not at random. Everything is driven by a seed, so a failing case
//! replays. [`SimVfs::fail_syncs_after`] and [`SimVfs::fail_writes_after`] inject I/O errors.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::Mutex;

use crate::vfs::{Vfs, VfsFile};

const SECTOR: usize = 512;

/// The seeds a simulation test runs: `MYRIAD_FUZZ_SEED=N` replays that one seed;
/// otherwise `MYRIAD_SIM_SEEDS` of them (`default` if unset) from a base taken from the
/// clock, printed so a failing run can be replayed.
pub fn seeds(default: u64) -> Vec<u64> {
    if let Ok(s) = std::env::var("MYRIAD_FUZZ_SEED") {
        return vec![s.trim().parse().expect("MYRIAD_FUZZ_SEED must be a u64")];
    }
    let n: u64 = std::env::var("MYRIAD_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64 % 1_000_000_000)
        .unwrap_or(0);
    eprintln!(
        "seeds {base}..{} (replay one with MYRIAD_FUZZ_SEED)",
        base + n
    );
    (base..base + n).collect()
}

/// A small deterministic generator (splitmix64), so the simulator needs no dependency.
#[derive(Clone, Debug)]
pub struct SimRng(u64);

impl SimRng {
    pub fn new(seed: u64) -> SimRng {
        SimRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[derive(Default)]
struct FileState {
    /// What survives a crash for sure.
    durable: Vec<u8>,
    /// What readers see now.
    current: Vec<u8>,
    /// Writes and truncations since the last sync, in order.
    pending: Vec<Pending>,
}

#[derive(Clone)]
enum Pending {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

fn apply(bytes: &mut Vec<u8>, p: &Pending) {
    match p {
        Pending::Write(off, data) => {
            let end = *off as usize + data.len();
            if bytes.len() < end {
                bytes.resize(end, 0);
            }
            bytes[*off as usize..end].copy_from_slice(data);
        }
        Pending::SetLen(len) => bytes.resize(*len as usize, 0),
    }
}

struct SimFile {
    state: Mutex<FileState>,
    vfs: Arc<Faults>,
}

/// Injected failures: a countdown per kind; at zero the operation fails (and keeps
/// failing), below zero never.
struct Faults {
    syncs_left: AtomicI64,
    writes_left: AtomicI64,
}

impl Faults {
    fn hit(counter: &AtomicI64, what: &str) -> io::Result<()> {
        let left = counter.load(Ordering::Acquire);
        if left < 0 {
            return Ok(());
        }
        if left == 0 {
            return Err(io::Error::other(format!("injected {what} failure")));
        }
        counter.fetch_sub(1, Ordering::AcqRel);
        Ok(())
    }
}

impl VfsFile for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let st = self.state.lock();
        let start = (offset as usize).min(st.current.len());
        let n = buf.len().min(st.current.len() - start);
        buf[..n].copy_from_slice(&st.current[start..start + n]);
        Ok(n)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        Faults::hit(&self.vfs.writes_left, "write")?;
        let mut st = self.state.lock();
        let p = Pending::Write(offset, buf.to_vec());
        apply(&mut st.current, &p);
        st.pending.push(p);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Faults::hit(&self.vfs.syncs_left, "fsync")?;
        let mut st = self.state.lock();
        // The durable bytes become the current ones: replaying the writes since the last
        // sync onto them costs what those writes did, not the file's size.
        let pending = std::mem::take(&mut st.pending);
        for p in &pending {
            apply(&mut st.durable, p);
        }
        debug_assert!(st.durable == st.current);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().current.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.state.lock();
        let p = Pending::SetLen(len);
        apply(&mut st.current, &p);
        st.pending.push(p);
        Ok(())
    }
}

#[derive(Default)]
struct Tree {
    /// Names visible now.
    current: HashMap<PathBuf, Arc<SimFile>>,
    /// Names that survive a crash for sure, per the last `sync_dir` of their directory.
    durable: HashMap<PathBuf, Arc<SimFile>>,
    dirs: std::collections::HashSet<PathBuf>,
}

/// The simulated file system: see the module header.
pub struct SimVfs {
    tree: Mutex<Tree>,
    faults: Arc<Faults>,
}

impl Default for SimVfs {
    fn default() -> Self {
        SimVfs::new()
    }
}

impl SimVfs {
    pub fn new() -> SimVfs {
        SimVfs {
            tree: Mutex::new(Tree::default()),
            faults: Arc::new(Faults {
                syncs_left: AtomicI64::new(-1),
                writes_left: AtomicI64::new(-1),
            }),
        }
    }

    /// From now on, the `n`-th and every later fsync fails (`None`: none fails).
    pub fn fail_syncs_after(&self, n: Option<u64>) {
        self.faults
            .syncs_left
            .store(n.map_or(-1, |n| n as i64), Ordering::Release);
    }

    /// From now on, the `n`-th and every later write fails (`None`: none fails).
    pub fn fail_writes_after(&self, n: Option<u64>) {
        self.faults
            .writes_left
            .store(n.map_or(-1, |n| n as i64), Ordering::Release);
    }

    /// The file system after a power loss now: see the module header. `self` is left as
    /// it was (the crashed process may still hold it; nothing it does reaches the result).
    pub fn crash(&self, rng: &mut SimRng) -> SimVfs {
        let tree = self.tree.lock();
        let mut names: Vec<&PathBuf> = tree.current.keys().chain(tree.durable.keys()).collect();
        names.sort();
        names.dedup();
        let out = SimVfs::new();
        {
            let mut new_tree = out.tree.lock();
            new_tree.dirs = tree.dirs.clone();
            let mut torn_one = false;
            for name in names {
                let cur = tree.current.get(name);
                let dur = tree.durable.get(name);
                // A name whose creation, removal or rename was not synced may go either way.
                let file = match (cur, dur) {
                    (Some(c), Some(d)) if Arc::ptr_eq(c, d) => Some(c),
                    (c, d) => {
                        if rng.chance(50) {
                            c
                        } else {
                            d
                        }
                    }
                };
                let Some(file) = file else { continue };
                let st = file.state.lock();
                let mut bytes = st.durable.clone();
                for p in &st.pending {
                    if !rng.chance(60) {
                        continue;
                    }
                    match p {
                        Pending::Write(off, data)
                            if !torn_one && data.len() > SECTOR && rng.chance(10) =>
                        {
                            // Torn: only some sectors of this write made it.
                            torn_one = true;
                            for (i, sector) in data.chunks(SECTOR).enumerate() {
                                if rng.chance(50) {
                                    let partial =
                                        Pending::Write(off + (i * SECTOR) as u64, sector.to_vec());
                                    apply(&mut bytes, &partial);
                                }
                            }
                        }
                        _ => apply(&mut bytes, p),
                    }
                }
                let f = Arc::new(SimFile {
                    state: Mutex::new(FileState {
                        durable: bytes.clone(),
                        current: bytes,
                        pending: Vec::new(),
                    }),
                    vfs: out.faults.clone(),
                });
                new_tree.current.insert(name.clone(), f.clone());
                new_tree.durable.insert(name.clone(), f);
            }
        }
        out
    }
}

impl Vfs for SimVfs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
        let mut tree = self.tree.lock();
        if let Some(f) = tree.current.get(path) {
            return Ok(f.clone());
        }
        if !create {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} not found", path.display()),
            ));
        }
        let f = Arc::new(SimFile {
            state: Mutex::new(FileState::default()),
            vfs: self.faults.clone(),
        });
        tree.current.insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut tree = self.tree.lock();
        tree.current.remove(path).map(|_| ()).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} not found", path.display()),
            )
        })
    }

    fn exists(&self, path: &Path) -> bool {
        let tree = self.tree.lock();
        tree.current.contains_key(path) || tree.dirs.contains(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut tree = self.tree.lock();
        let mut p = Some(path);
        while let Some(dir) = p {
            tree.dirs.insert(dir.to_path_buf());
            p = dir.parent();
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut tree = self.tree.lock();
        let f = tree.current.remove(from).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} not found", from.display()),
            )
        })?;
        tree.current.insert(to.to_path_buf(), f);
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        Faults::hit(&self.faults.syncs_left, "directory fsync")?;
        let mut tree = self.tree.lock();
        let Tree {
            current, durable, ..
        } = &mut *tree;
        durable.retain(|name, _| name.parent() != Some(path) || current.contains_key(name));
        for (name, f) in current.iter() {
            if name.parent() == Some(path) {
                durable.insert(name.clone(), f.clone());
            }
        }
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let tree = self.tree.lock();
        Ok(tree
            .current
            .keys()
            .filter(|name| name.parent() == Some(path))
            .filter_map(|name| name.file_name()?.to_str().map(str::to_owned))
            .collect())
    }
}
