//! Server CPU time from `/proc/PID/stat`, and the harness's signal flag.
//!
//! CPU per transaction is the steadier figure on a shared machine (DESIGN.md §4): the
//! utime+stime of a server's processes, read before and after a run, divided by the
//! transactions the run completed. A server's processes are its root process (Myriad, the
//! ceiling, or PostgreSQL's postmaster) and the root's live children (PostgreSQL's backends
//! and background processes). Children that exited during the run are in the root's
//! cutime+cstime once reaped, so a backend counts whether it lives to the second reading
//! or not. Between its exit and its reaping, though, a child is a zombie whose stat shows
//! zero times: its CPU is nowhere. So PostgreSQL is read only when quiet (no zombie child,
//! no client backend: [`crate::servers::Server::cpu_ticks`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// The fields of `/proc/PID/stat` that the harness uses. Times are in clock ticks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    /// R, S, D, Z (zombie: exited, not yet reaped; its times read as zero), ...
    pub state: char,
    pub ppid: u32,
    pub utime: u64,
    pub stime: u64,
    /// Time of reaped children (waited for by this process).
    pub cutime: u64,
    pub cstime: u64,
}

impl ProcStat {
    /// Own time plus reaped children's time.
    pub fn total_ticks(&self) -> u64 {
        self.utime + self.stime + self.cutime + self.cstime
    }
}

/// Parses one `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
/// itself hold spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    // After the name: field 3 (state) is index 0, so field N is index N - 3.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { rest.get(n - 3)?.parse().ok() };
    Some(ProcStat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: field(4)? as u32,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16)?,
        cstime: field(17)?,
    })
}

pub fn read_stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// A process's command line, arguments joined by spaces (PostgreSQL backends show their
/// state there: "postgres: postgres postgres 127.0.0.1(40312) idle").
pub fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw)
        .replace('\0', " ")
        .trim()
        .to_string()
}

/// Live (or not yet reaped) direct children of `pid`.
pub fn children(pid: u32) -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read_stat)
        .filter(|s| s.ppid == pid)
        .collect()
}

/// CPU ticks used so far by `root` and its children (see the module docs), or `None` when
/// `root` is gone.
pub fn tree_cpu_ticks(root: u32) -> Option<u64> {
    let own = read_stat(root)?.total_ticks();
    Some(
        own + children(root)
            .iter()
            .map(ProcStat::total_ticks)
            .sum::<u64>(),
    )
}

/// Clock ticks per second, the unit of `/proc/PID/stat` times.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as u64 } else { 100 }
}

/// Parses a CPU list as `taskset -c` takes it: "0", "0,2", "0-3".
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("bad CPU list {list:?}: expected e.g. 0 or 0,1 or 0-3");
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let n: usize = part.parse().map_err(|_| bad())?;
                (n, n)
            }
        };
        if lo > hi || hi >= libc::CPU_SETSIZE as usize {
            return Err(bad());
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Restricts this process (and so every child it starts afterwards) to `cpus`.
pub fn pin_to_cpus(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; the CPU_* helpers stay within it (checked bounds).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "could not pin to CPUs {cpus:?}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Turns SIGINT, SIGTERM and SIGHUP into a flag that every wait loop polls, so that the
/// harness unwinds normally and its Drop guards stop the servers.
pub fn install_signal_flag() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sends `signal` to a process; errors (already gone) are ignored.
pub fn send_signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// Sends `signal` to a whole process group (servers run in their own group).
pub fn send_signal_group(pgid: u32, signal: libc::c_int) {
    // SAFETY: as above.
    unsafe {
        libc::killpg(pgid as libc::pid_t, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line() {
        let line = "4242 (postgres) S 4200 4200 4200 0 -1 4194560 300 0 0 0 17 5 23 11 20 0 1 0 \
                    12345 200000000 5000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(
            s,
            ProcStat {
                pid: 4242,
                state: 'S',
                ppid: 4200,
                utime: 17,
                stime: 5,
                cutime: 23,
                cstime: 11
            }
        );
        assert_eq!(s.total_ticks(), 56);
    }

    #[test]
    fn a_name_with_spaces_and_parentheses_does_not_shift_fields() {
        let line = "7 (a (weird) name) R 1 7 7 0 -1 0 0 0 0 0 3 4 5 6 20 0 1 0 1 1 1";
        let s = parse_stat(line).unwrap();
        assert_eq!(
            (s.pid, s.ppid, s.utime, s.stime, s.cutime, s.cstime),
            (7, 1, 3, 4, 5, 6)
        );
    }

    #[test]
    fn truncated_lines_are_rejected() {
        assert_eq!(parse_stat("7 (x) R 1 7"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn parses_cpu_lists() {
        assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
        assert_eq!(parse_cpu_list("2,0-1,1"), Ok(vec![0, 1, 2]));
        assert!(parse_cpu_list("1-0").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        let s = read_stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(tree_cpu_ticks(me).is_some());
        assert!(clock_ticks_per_sec() > 0);
    }
}
