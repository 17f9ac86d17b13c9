//! `lockbench`: the cost of relation locks as a query takes them (issue 4, DESIGN.md L2).
//!
//! T threads, each a session, repeatedly take AccessShare on the same R relations and then
//! release everything, as a query over R tables or partitions does; meanwhile one more
//! session takes and releases AccessExclusive on one of those relations every 10 ms (DDL),
//! so strong locks, fast-path transfers and queueing are part of the picture. Each point
//! runs for a fixed time and reports the CPU time per lock (process CPU time over locks
//! taken: fair when threads outnumber cores) and the locks per second per thread.
//!
//! Two lock managers: `myriad` (the fast path with no slot limit) and `slots16`, the same
//! manager with the fast path limited to 16 relations per session, as PostgreSQL's, so
//! locks beyond the 16th go through the shared table.
//!
//! Machines here are shared and noisy, so each point runs `REPEATS` times, the two
//! variants alternating point by point, and the report shows medians.
//!
//! Usage: `cargo run --release -p myriad-bench --bin lockbench [-- MS_PER_POINT [REPEATS]]`
//! (defaults 500 and 3). Prints a markdown report on stdout, progress on stderr;
//! `docs/bench/lockbench.md` keeps one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use txn::lock::{LockConfig, LockManager, LockMode, LockTag, WaitPolicy};

const THREADS: [usize; 5] = [1, 2, 4, 8, 16];
const RELATIONS: [u32; 4] = [1, 16, 64, 1000];
/// How often the DDL session takes its AccessExclusive lock.
const DDL_INTERVAL: Duration = Duration::from_millis(10);
/// The first relation oid used (PostgreSQL's first user oid).
const FIRST_OID: u32 = 16384;
const DDL_PID: u32 = 1_000_000;

struct Variant {
    name: &'static str,
    fast_path_relations_max: Option<usize>,
}

const VARIANTS: [Variant; 2] = [
    Variant {
        name: "myriad",
        fast_path_relations_max: None,
    },
    Variant {
        name: "slots16",
        fast_path_relations_max: Some(16),
    },
];

struct Point {
    variant: &'static str,
    threads: usize,
    relations: u32,
    locks: u64,
    elapsed: Duration,
    cpu: Duration,
    ddl_locks: u64,
    /// Total time the DDL session spent in `lock` (announcing, moving fast-path entries,
    /// waiting for the readers).
    ddl_wait: Duration,
}

impl Point {
    fn cpu_ns_per_lock(&self) -> f64 {
        self.cpu.as_nanos() as f64 / self.locks as f64
    }
    fn locks_per_s_per_thread(&self) -> f64 {
        self.locks as f64 / self.elapsed.as_secs_f64() / self.threads as f64
    }
    fn locks_per_s(&self) -> f64 {
        self.locks as f64 / self.elapsed.as_secs_f64()
    }
    fn ddl_wait_ms(&self) -> f64 {
        self.ddl_wait.as_secs_f64() * 1e3 / self.ddl_locks.max(1) as f64
    }
}

/// User plus system CPU time of this process, all threads.
fn process_cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn run_point(variant: &Variant, threads: usize, relations: u32, run_for: Duration) -> Point {
    let mgr = LockManager::new(LockConfig {
        fast_path_relations_max: variant.fast_path_relations_max,
        ..LockConfig::default()
    });
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(std::sync::Barrier::new(threads + 1));
    let locks = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (mgr, stop, started, locks) = (
                Arc::clone(&mgr),
                Arc::clone(&stop),
                Arc::clone(&started),
                Arc::clone(&locks),
            );
            thread::spawn(move || {
                let mut session = mgr.register(t as u32 + 1);
                // One warm-up query, so the session's tables have grown.
                for r in 0..relations {
                    let tag = LockTag::Relation(FIRST_OID + r);
                    session
                        .lock(tag, LockMode::AccessShare, WaitPolicy::BLOCK)
                        .unwrap();
                }
                session.release_all();
                started.wait();
                let mut taken = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for r in 0..relations {
                        let tag = LockTag::Relation(FIRST_OID + r);
                        session
                            .lock(tag, LockMode::AccessShare, WaitPolicy::BLOCK)
                            .unwrap();
                    }
                    session.release_all();
                    taken += u64::from(relations);
                }
                locks.fetch_add(taken, Ordering::Relaxed);
            })
        })
        .collect();
    let ddl = {
        let (mgr, stop) = (Arc::clone(&mgr), Arc::clone(&stop));
        thread::spawn(move || {
            let mut session = mgr.register(DDL_PID);
            let (mut taken, mut waited) = (0u64, Duration::ZERO);
            while !stop.load(Ordering::Relaxed) {
                thread::sleep(DDL_INTERVAL);
                let tag = LockTag::Relation(FIRST_OID + (taken % u64::from(relations)) as u32);
                let asked = Instant::now();
                session
                    .lock(tag, LockMode::AccessExclusive, WaitPolicy::BLOCK)
                    .unwrap();
                waited += asked.elapsed();
                session.release_all();
                taken += 1;
            }
            (taken, waited)
        })
    };
    started.wait();
    let (t0, cpu0) = (Instant::now(), process_cpu_time());
    thread::sleep(run_for);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let (elapsed, cpu) = (t0.elapsed(), process_cpu_time() - cpu0);
    let (ddl_locks, ddl_wait) = ddl.join().unwrap();
    Point {
        variant: variant.name,
        threads,
        relations,
        locks: locks.load(Ordering::Relaxed),
        elapsed,
        cpu,
        ddl_locks,
        ddl_wait,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The medians of one point over its repeats.
struct Summary {
    cpu_ns_per_lock: f64,
    locks_per_s_per_thread: f64,
    locks_per_s: f64,
    ddl_locks: f64,
    ddl_wait_ms: f64,
}

fn summarize(points: &[Point], variant: &str, threads: usize, relations: u32) -> Summary {
    let runs: Vec<&Point> = points
        .iter()
        .filter(|p| p.variant == variant && p.threads == threads && p.relations == relations)
        .collect();
    assert!(!runs.is_empty(), "every point ran");
    let of = |f: fn(&Point) -> f64| median(runs.iter().map(|p| f(p)).collect());
    Summary {
        cpu_ns_per_lock: of(Point::cpu_ns_per_lock),
        locks_per_s_per_thread: of(Point::locks_per_s_per_thread),
        locks_per_s: of(Point::locks_per_s),
        ddl_locks: of(|p| p.ddl_locks as f64),
        ddl_wait_ms: of(Point::ddl_wait_ms),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i).map_or(default, |a| {
            a.parse().unwrap_or_else(|_| {
                eprintln!("usage: lockbench [MS_PER_POINT [REPEATS]]");
                std::process::exit(2);
            })
        })
    };
    let (ms, repeats) = (arg(0, 500), arg(1, 3).max(1));
    let run_for = Duration::from_millis(ms);
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let mut points = Vec::new();
    for repeat in 0..repeats {
        for relations in RELATIONS {
            for threads in THREADS {
                for variant in &VARIANTS {
                    let p = run_point(variant, threads, relations, run_for);
                    eprintln!(
                        "#{repeat} {:8} T={:2} R={:4}: {:7.1} ns/lock, {:6.2} M locks/s/thread",
                        p.variant,
                        p.threads,
                        p.relations,
                        p.cpu_ns_per_lock(),
                        p.locks_per_s_per_thread() / 1e6
                    );
                    points.push(p);
                }
            }
        }
    }

    println!("# lockbench\n");
    println!(
        "{cores} CPUs available; {ms} ms per point, median of {repeats} runs; one DDL session \
         takes AccessExclusive on one of the R relations every {} ms.\n",
        DDL_INTERVAL.as_millis()
    );
    let table = |title: &str, value: &dyn Fn(&Summary) -> String| {
        println!("## {title}\n");
        for variant in &VARIANTS {
            println!("{}:\n", variant.name);
            print!("| R \\ T |");
            for t in THREADS {
                print!(" {t} |");
            }
            println!();
            println!("|---|{}", "---:|".repeat(THREADS.len()));
            for r in RELATIONS {
                print!("| {r} |");
                for t in THREADS {
                    print!(" {} |", value(&summarize(&points, variant.name, t, r)));
                }
                println!();
            }
            println!();
        }
    };
    table(
        "CPU ns per lock (take and release), by relations per query (rows) and threads",
        &|s| format!("{:.0}", s.cpu_ns_per_lock),
    );
    table(
        "Million locks per second per thread, by relations per query (rows) and threads",
        &|s| format!("{:.2}", s.locks_per_s_per_thread / 1e6),
    );
    println!("## Every point (medians)\n");
    println!(
        "| variant | threads | relations | CPU ns/lock | M locks/s per thread | M locks/s total | \
         DDL locks | DDL wait ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for variant in &VARIANTS {
        for r in RELATIONS {
            for t in THREADS {
                let s = summarize(&points, variant.name, t, r);
                println!(
                    "| {} | {t} | {r} | {:.1} | {:.2} | {:.2} | {:.0} | {:.2} |",
                    variant.name,
                    s.cpu_ns_per_lock,
                    s.locks_per_s_per_thread / 1e6,
                    s.locks_per_s / 1e6,
                    s.ddl_locks,
                    s.ddl_wait_ms
                );
            }
        }
    }
}
