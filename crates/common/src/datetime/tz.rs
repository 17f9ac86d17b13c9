//! Time zones: the session's `TimeZone` setting and zone names inside timestamp literals.
//!
//! A [`TimeZone`] maps an instant to its UTC offset and resolves a local wall-clock time to
//! an instant. Three kinds, as PostgreSQL has them:
//!
//! - IANA zones (`Europe/Berlin`) read from the system tzdata, `/usr/share/zoneinfo` (the
//!   Debian `tzdata` package), in TZif format (RFC 8536): a table of transitions plus a POSIX
//!   TZ rule (the footer) for instants after the last one. PostgreSQL on Debian reads the
//!   very same files, so offsets agree exactly, LMT included. Names match case-insensitively
//!   and display with the file's own spelling.
//! - POSIX TZ strings (`UTC+3`, `EST5EDT`, `<+0530>-5:30`). POSIX counts offsets west of
//!   Greenwich as positive, so `UTC+3` is three hours *behind* UTC; they display uppercased.
//! - A plain number of hours as a `TimeZone` value (`SET TIME ZONE '5.5'`), SQL sign
//!   convention (east positive), displayed as PostgreSQL's POSIX spelling `<+05:30>-05:30`.
//!
//! Why read tzdata instead of a crate with a bundled database: PostgreSQL on this platform
//! uses the system files, so reading them gives the same answers with no dependency; the
//! cost is a runtime dependency on the `tzdata` package (an unknown name is a clean 22023).
//!
//! Offsets here are seconds *east* of UTC (ISO sign), unlike PostgreSQL's internal west-
//! positive `tz`. Lookups are cached for the process's lifetime (tzdata is not expected to
//! change under a running server), up to `ZONE_CACHE_ENTRIES_MAX` names.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{PgError, PgResult, SqlState};

use super::{
    SECS_PER_DAY, UNIX_EPOCH_JDATE, date_to_julian, days_in_month, julian_dow, julian_to_date,
};

/// Where the system keeps the IANA time zone database.
const ZONEINFO_DIR: &str = "/usr/share/zoneinfo";
/// PostgreSQL refuses longer zone names (`TZ_STRLEN_MAX`).
const TZ_NAME_LEN_MAX: usize = 255;
/// A numeric `TimeZone` setting must be under one week (PostgreSQL's limit).
const NUMERIC_OFFSET_SECS_MAX: f64 = 168.0 * 3600.0;
/// Zone lookups remembered (hits and misses). Names come from users, so the cache stops
/// growing here; later names are simply looked up each time.
const ZONE_CACHE_ENTRIES_MAX: usize = 1024;
/// Rule used by a POSIX string with a DST name but no rule (`FOO3BAR`): US rules, as
/// PostgreSQL's `posixrules` gives on Debian.
const DEFAULT_DST_RULE: &str = ",M3.2.0,M11.1.0";

/// A time zone, cheap to clone.
#[derive(Clone)]
pub struct TimeZone {
    name: Arc<str>,
    rules: Arc<Rules>,
}

enum Rules {
    Fixed(i32),
    Posix(PosixTz),
    Tzif(Tzif),
}

impl fmt::Debug for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimeZone({})", self.name)
    }
}

impl PartialEq for TimeZone {
    fn eq(&self, other: &TimeZone) -> bool {
        self.name == other.name
    }
}

impl TimeZone {
    /// UTC, PostgreSQL's default when nothing is configured.
    pub fn utc() -> TimeZone {
        TimeZone {
            name: "UTC".into(),
            rules: Arc::new(Rules::Fixed(0)),
        }
    }

    /// A zone at a fixed offset east of UTC, named as PostgreSQL names a numeric `TimeZone`
    /// setting (`<+05:30>-05:30`).
    pub fn fixed(offset_east_secs: i32) -> TimeZone {
        let abs = offset_east_secs.unsigned_abs();
        let mut hms = format!("{:02}", abs / 3600);
        if !abs.is_multiple_of(3600) {
            hms.push_str(&format!(":{:02}", abs / 60 % 60));
        }
        if !abs.is_multiple_of(60) {
            hms.push_str(&format!(":{:02}", abs % 60));
        }
        let name = if offset_east_secs < 0 {
            format!("<-{hms}>+{hms}")
        } else {
            format!("<+{hms}>-{hms}")
        };
        TimeZone {
            name: name.into(),
            rules: Arc::new(Rules::Fixed(offset_east_secs)),
        }
    }

    /// Reads a value of the `TimeZone` setting (`check_timezone`): a number of hours (SQL
    /// sign, fractions allowed), an IANA name, or a POSIX TZ string.
    pub fn parse(value: &str) -> PgResult<TimeZone> {
        let invalid = || {
            PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"TimeZone\": \"{value}\""),
            )
        };
        if let Some(hours) = parse_c_double(value) {
            let secs = (hours * 3600.0).trunc();
            if secs.abs() >= NUMERIC_OFFSET_SECS_MAX || secs.is_nan() {
                return Err(invalid().with_detail("UTC timezone offset is out of range."));
            }
            return Ok(TimeZone::fixed(secs as i32));
        }
        TimeZone::lookup(value).ok_or_else(invalid)
    }

    /// Finds a zone by name as a timestamp literal names it (`pg_tzset`): a tzdata file
    /// (case-insensitive) or else a POSIX TZ string. `None` when neither.
    pub fn lookup(name: &str) -> Option<TimeZone> {
        if name.is_empty() || name.len() > TZ_NAME_LEN_MAX {
            return None;
        }
        let key = name.to_ascii_uppercase();
        static CACHE: OnceLock<Mutex<HashMap<String, Option<TimeZone>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return hit.clone();
        }
        let found = if key == "GMT" {
            Some(TimeZone {
                name: "GMT".into(),
                rules: Arc::new(Rules::Fixed(0)),
            })
        } else {
            load_tzif_file(name).or_else(|| {
                if key.starts_with(':') {
                    return None;
                }
                let posix = PosixTz::parse(&key)?;
                Some(TimeZone {
                    name: key.as_str().into(),
                    rules: Arc::new(Rules::Posix(posix)),
                })
            })
        };
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() < ZONE_CACHE_ENTRIES_MAX {
            cache.insert(key, found.clone());
        }
        found
    }

    /// The name `SHOW TimeZone` prints.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// UTC offset in seconds east at an instant given as Unix seconds.
    pub fn offset_at_unix(&self, unix_secs: i64) -> i32 {
        match &*self.rules {
            Rules::Fixed(off) => *off,
            Rules::Posix(p) => p.offset_at(unix_secs),
            Rules::Tzif(t) => t.offset_at(unix_secs),
        }
    }

    /// UTC offset in seconds east for a local wall-clock time (Unix seconds as if the local
    /// time were UTC), resolving DST as PostgreSQL does (`DetermineTimeZoneOffset`): a time
    /// in a spring-forward gap takes the offset from before the transition (so 02:30 becomes
    /// 03:30 DST), and an ambiguous time in a fall-back overlap takes the offset from after
    /// it (standard time).
    pub fn offset_for_local(&self, local_secs: i64) -> i32 {
        if let Rules::Fixed(off) = &*self.rules {
            return *off;
        }
        // Zone offsets are under a day and transitions at least two days apart (PostgreSQL
        // assumes the same), so at most one transition can matter: the first after
        // local - 1 day. One after local + 1 day is later than either reading of the local
        // time and cannot change the answer.
        let lo = local_secs - SECS_PER_DAY;
        let hi = local_secs + SECS_PER_DAY;
        let before = self.offset_at_unix(lo);
        if self.offset_at_unix(hi) == before {
            return before;
        }
        // The first second at which the offset differs from `before`.
        let (mut a, mut b) = (lo, hi);
        while b - a > 1 {
            let mid = a + (b - a) / 2;
            if self.offset_at_unix(mid) == before {
                a = mid;
            } else {
                b = mid;
            }
        }
        let boundary = b;
        let after = self.offset_at_unix(boundary);
        let before_utc = local_secs - before as i64;
        let after_utc = local_secs - after as i64;
        if before_utc < boundary && after_utc < boundary {
            before
        } else if before_utc > boundary && after_utc >= boundary {
            after
        } else if before_utc > after_utc {
            before
        } else {
            after
        }
    }
}

/// `strtod` over the whole string (leading white space allowed, nothing after): the test
/// for a numeric `TimeZone` value.
fn parse_c_double(s: &str) -> Option<f64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let ok = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && body.as_bytes()[0] != b'e'
        && body.bytes().any(|b| b.is_ascii_digit());
    if !ok {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Finds `name` under the zoneinfo directory, matching each path component without regard
/// to case, and loads it if it is a TZif file. The zone's name is the file's own spelling.
fn load_tzif_file(name: &str) -> Option<TimeZone> {
    let mut path = PathBuf::from(ZONEINFO_DIR);
    let mut canonical: Vec<String> = Vec::new();
    for part in name.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return None;
        }
        let entry = std::fs::read_dir(&path).ok()?.flatten().find_map(|e| {
            let fname = e.file_name().into_string().ok()?;
            fname.eq_ignore_ascii_case(part).then_some(fname)
        })?;
        path.push(&entry);
        canonical.push(entry);
    }
    let bytes = std::fs::read(&path).ok()?;
    let tzif = Tzif::parse(&bytes)?;
    Some(TimeZone {
        name: canonical.join("/").into(),
        rules: Arc::new(Rules::Tzif(tzif)),
    })
}

// ---------------------------------------------------------------------------------------
// TZif (RFC 8536).

struct Tzif {
    /// Transition instants, Unix seconds, ascending.
    transitions: Vec<i64>,
    /// Index into `offsets` for each transition.
    kinds: Vec<u8>,
    /// UTC offsets (seconds east) of the local time types.
    offsets: Vec<i32>,
    /// Rule for instants after the last transition.
    footer: Option<PosixTz>,
}

impl Tzif {
    fn parse(data: &[u8]) -> Option<Tzif> {
        let header = |at: usize| -> Option<[usize; 6]> {
            if data.get(at..at + 4)? != b"TZif" {
                return None;
            }
            let mut counts = [0usize; 6];
            for (i, c) in counts.iter_mut().enumerate() {
                let o = at + 20 + 4 * i;
                *c = u32::from_be_bytes(data.get(o..o + 4)?.try_into().ok()?) as usize;
            }
            Some(counts)
        };
        let version = *data.get(4)?;
        let mut counts = header(0)?;
        let mut at = 44;
        let mut time_size = 4;
        let block_len = |c: &[usize; 6], ts: usize| {
            let [isut, isstd, leap, time, typ, chars] = *c;
            time * ts + time + typ * 6 + chars + leap * (ts + 4) + isstd + isut
        };
        if version >= b'2' {
            at += block_len(&counts, 4);
            counts = header(at)?;
            at += 44;
            time_size = 8;
        }
        let body_end = at + block_len(&counts, time_size);
        let [_, _, _, timecnt, typecnt, _] = counts;
        let mut transitions = Vec::with_capacity(timecnt);
        for i in 0..timecnt {
            let o = at + i * time_size;
            let b = data.get(o..o + time_size)?;
            transitions.push(if time_size == 8 {
                i64::from_be_bytes(b.try_into().ok()?)
            } else {
                i32::from_be_bytes(b.try_into().ok()?) as i64
            });
        }
        at += timecnt * time_size;
        let kinds = data.get(at..at + timecnt)?.to_vec();
        at += timecnt;
        let mut offsets = Vec::with_capacity(typecnt);
        for i in 0..typecnt {
            let o = at + i * 6;
            offsets.push(i32::from_be_bytes(data.get(o..o + 4)?.try_into().ok()?));
        }
        if offsets.is_empty() || kinds.iter().any(|&k| k as usize >= offsets.len()) {
            return None;
        }
        let mut footer = None;
        if version >= b'2'
            && let Some(rest) = data.get(body_end..)
        {
            let text = std::str::from_utf8(rest).ok()?;
            let line = text.strip_prefix('\n').and_then(|t| t.split('\n').next());
            footer = line.filter(|l| !l.is_empty()).and_then(PosixTz::parse);
        }
        Some(Tzif {
            transitions,
            kinds,
            offsets,
            footer,
        })
    }

    fn offset_at(&self, t: i64) -> i32 {
        let n = self.transitions.partition_point(|&x| x <= t);
        if n == 0 {
            return self.offsets[0];
        }
        if n == self.transitions.len()
            && let Some(f) = &self.footer
        {
            return f.offset_at(t);
        }
        self.offsets[self.kinds[n - 1] as usize]
    }
}

// ---------------------------------------------------------------------------------------
// POSIX TZ strings: `STDoffset[DST[offset][,start[/time],end[/time]]]`.

struct PosixTz {
    /// Standard offset, seconds east.
    std_offset: i32,
    dst: Option<PosixDst>,
}

struct PosixDst {
    offset: i32,
    start: PosixRule,
    end: PosixRule,
}

#[derive(Clone, Copy)]
struct PosixRule {
    day: RuleDay,
    /// Local time of day of the change, seconds (may be negative or past 24h).
    time: i32,
}

#[derive(Clone, Copy)]
enum RuleDay {
    /// `Jn`: day 1..=365, February 29 never counted.
    JulianNoLeap(i32),
    /// `n`: day 0..=365, February 29 counted.
    Zero(i32),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    MonthWeekDay(i32, i32, i32),
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn number(&mut self, max: i32) -> Option<i32> {
        let start = self.at;
        let mut v: i32 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            v = v.checked_mul(10)?.checked_add((c - b'0') as i32)?;
            self.at += 1;
        }
        (self.at > start && v <= max).then_some(v)
    }

    fn zone_name(&mut self) -> Option<()> {
        if self.eat(b'<') {
            let start = self.at;
            while self.peek()? != b'>' {
                self.at += 1;
            }
            let len = self.at - start;
            self.at += 1;
            (len >= 3).then_some(())
        } else {
            let start = self.at;
            while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.at += 1;
            }
            (self.at - start >= 3).then_some(())
        }
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, POSIX sign (as written).
    fn hms(&mut self, max_hours: i32) -> Option<i32> {
        let neg = if self.eat(b'-') {
            true
        } else {
            self.eat(b'+');
            false
        };
        let mut secs = self.number(max_hours)? * 3600;
        if self.eat(b':') {
            secs += self.number(59)? * 60;
            if self.eat(b':') {
                secs += self.number(59)?;
            }
        }
        Some(if neg { -secs } else { secs })
    }

    fn rule(&mut self) -> Option<PosixRule> {
        let day = if self.eat(b'J') {
            RuleDay::JulianNoLeap(self.number(365).filter(|&n| n >= 1)?)
        } else if self.eat(b'M') {
            let m = self.number(12).filter(|&m| m >= 1)?;
            self.eat(b'.').then_some(())?;
            let w = self.number(5).filter(|&w| w >= 1)?;
            self.eat(b'.').then_some(())?;
            RuleDay::MonthWeekDay(m, w, self.number(6)?)
        } else {
            RuleDay::Zero(self.number(365)?)
        };
        let time = if self.eat(b'/') {
            self.hms(167)?
        } else {
            2 * 3600
        };
        Some(PosixRule { day, time })
    }
}

impl PosixTz {
    fn parse(text: &str) -> Option<PosixTz> {
        let mut c = Cursor {
            s: text.as_bytes(),
            at: 0,
        };
        c.zone_name()?;
        let std_offset = -c.hms(24)?;
        if c.peek().is_none() {
            return Some(PosixTz {
                std_offset,
                dst: None,
            });
        }
        c.zone_name()?;
        let dst_offset = match c.peek() {
            Some(b',') | None => std_offset + 3600,
            _ => -c.hms(24)?,
        };
        let rules_text;
        let mut r = if c.peek().is_none() {
            rules_text = DEFAULT_DST_RULE;
            Cursor {
                s: rules_text.as_bytes(),
                at: 0,
            }
        } else {
            c
        };
        r.eat(b',').then_some(())?;
        let start = r.rule()?;
        r.eat(b',').then_some(())?;
        let end = r.rule()?;
        if r.peek().is_some() {
            return None;
        }
        Some(PosixTz {
            std_offset,
            dst: Some(PosixDst {
                offset: dst_offset,
                start,
                end,
            }),
        })
    }

    fn offset_at(&self, t: i64) -> i32 {
        let Some(dst) = &self.dst else {
            return self.std_offset;
        };
        let local_days = (t + self.std_offset as i64).div_euclid(SECS_PER_DAY);
        let (year, _, _) = julian_to_date(local_days + UNIX_EPOCH_JDATE);
        // DST starts at its local time in standard time and ends at its local time in DST.
        let start = rule_local_secs(year, dst.start) - self.std_offset as i64;
        let end = rule_local_secs(year, dst.end) - dst.offset as i64;
        let in_dst = if start < end {
            start <= t && t < end
        } else {
            !(end <= t && t < start)
        };
        if in_dst { dst.offset } else { self.std_offset }
    }
}

/// The local time (Unix seconds as if local were UTC) at which a rule fires in `year`.
fn rule_local_secs(year: i64, rule: PosixRule) -> i64 {
    let jan1 = date_to_julian(year, 1, 1);
    let jd = match rule.day {
        RuleDay::JulianNoLeap(n) => {
            let leap_shift = if super::is_leap(year) && n >= 60 {
                1
            } else {
                0
            };
            jan1 + n as i64 - 1 + leap_shift
        }
        RuleDay::Zero(n) => jan1 + n as i64,
        RuleDay::MonthWeekDay(m, w, d) => {
            let first = date_to_julian(year, m, 1);
            let first_dow = julian_dow(first);
            let mut mday = 1 + (d - first_dow).rem_euclid(7) + 7 * (w - 1);
            while mday > days_in_month(year, m) {
                mday -= 7;
            }
            first + mday as i64 - 1
        }
    };
    (jd - UNIX_EPOCH_JDATE) * SECS_PER_DAY + rule.time as i64
}
