//! PostgreSQL's date/time types: `date`, `timestamp`, `timestamptz` and `interval`, with
//! PostgreSQL 15's text input (DateStyle ISO, MDY), text output (DateStyle ISO, IntervalStyle
//! postgres), binary wire format, arithmetic, comparison and the common functions.
//!
//! # Representation
//!
//! Exactly PostgreSQL's, so the binary wire format is a plain copy of the integer:
//!
//! - [`Date`]: `i32` days since 2000-01-01 (the "PostgreSQL epoch").
//! - [`Timestamp`]: `i64` microseconds since 2000-01-01 00:00:00, wall-clock time with no zone.
//! - [`TimestampTz`]: `i64` microseconds since 2000-01-01 00:00:00 UTC. The zone is not
//!   stored: input is converted to UTC, output is shown in the session's [`TimeZone`].
//! - [`Interval`]: months, days and microseconds kept apart, because a month is not a fixed
//!   number of days and a day is not always 24 hours (DST), so `timestamp + interval` must
//!   apply each part in its own unit.
//!
//! Calendar arithmetic uses the proleptic Gregorian calendar with astronomical year numbers
//! internally (1 BC is year 0, 2 BC is year -1); the text forms use AD/BC.
//!
//! # Invariants
//!
//! - A finite `Date` lies in 4714-11-24 BC ..= 5874897-12-31 AD; `i32::MIN`/`i32::MAX` are
//!   `-infinity`/`infinity`. A finite timestamp lies in 4714-11-24 00:00 BC ..
//!   294277-01-01 00:00 AD (exclusive); `i64::MIN`/`i64::MAX` are the infinities. Every
//!   constructor and every arithmetic result is checked against these ranges and fails with
//!   SQLSTATE 22008 rather than produce a value PostgreSQL could not hold.
//! - Because the infinities are the extreme integers, the derived orderings of `Date`,
//!   `Timestamp` and `TimestampTz` are the SQL orderings.
//! - Interval equality, ordering and hashing use the interval's total span with 30-day months
//!   and 24-hour days (PostgreSQL's `interval_cmp_value`): `'1 mon'` = `'30 days'` =
//!   `'720 hours'`. Two equal intervals may still print differently.
//!
//! # The session
//!
//! Input that names the current time (`now`, `today`, ...) and every conversion that needs a
//! zone take them as arguments ([`DateTimeContext`], [`TimeZone`]) instead of reading a clock
//! or a global: the caller owns the transaction's start time and the `TimeZone` setting, and
//! tests stay deterministic.
//!
//! The SQL layers pass them down as well: the server makes a "session clock"
//! ([`session`]) for each statement, which reaches `Value::parse` and `Value::to_text`
//! inside a [`crate::value::TextContext`], and `now()` through the executor's session.
//!
//! # Layout
//!
//! - [`session`]: the session clock and zone a statement sees.
//! - [`tz`]: time zones (system tzdata TZif files, POSIX TZ strings, fixed offsets).
//! - `parse`: text input (PostgreSQL's `ParseDateTime`/`DecodeDateTime`/`DecodeInterval`).
//! - `format`: text output.
//! - `arith`: operators, casts and functions (`date_trunc`, `extract`, `age`, `justify_*`,
//!   `make_*`).

mod arith;
mod format;
mod parse;
pub mod session;
pub mod tz;

#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::error::{PgError, PgResult, SqlState};

pub use arith::{DateTimeField, ExtractValue};
pub use session::{SessionClock, clock_timestamp};
pub use tz::TimeZone;

/// SQLSTATE 22008: a date/time value or field outside its range.
pub const DATETIME_FIELD_OVERFLOW: SqlState = SqlState("22008");
/// SQLSTATE 22007: text that is not a date/time.
pub const INVALID_DATETIME_FORMAT: SqlState = SqlState("22007");
/// SQLSTATE 22015: an interval field too large.
pub const INTERVAL_FIELD_OVERFLOW: SqlState = SqlState("22015");
/// SQLSTATE 22009: a numeric zone offset beyond ±15:59:59.
pub const INVALID_TIME_ZONE_DISPLACEMENT_VALUE: SqlState = SqlState("22009");

pub(crate) const USECS_PER_SEC: i64 = 1_000_000;
pub(crate) const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
pub(crate) const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
pub(crate) const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
pub(crate) const SECS_PER_DAY: i64 = 86_400;
/// Interval arithmetic treats a month as 30 days (PostgreSQL's `DAYS_PER_MONTH`).
pub(crate) const DAYS_PER_MONTH: i32 = 30;

/// Julian day number of 2000-01-01, the zero of `Date` and the timestamps.
pub(crate) const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
/// Julian day number of 1970-01-01, the zero of Unix time.
pub(crate) const UNIX_EPOCH_JDATE: i64 = 2_440_588;
/// First Julian day after the last valid date (5874898-01-01).
pub(crate) const DATE_END_JULIAN: i64 = 2_147_483_494;
/// First Julian day after the last valid timestamp (294277-01-01).
pub(crate) const TIMESTAMP_END_JULIAN: i64 = 109_203_528;
/// Smallest finite timestamp: Julian day 0 (4714-11-24 BC) at midnight.
pub(crate) const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// First timestamp past the range: 294277-01-01 00:00:00.
pub(crate) const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// Microseconds from the PostgreSQL epoch back to the Unix epoch.
pub(crate) const UNIX_EPOCH_OFFSET_USECS: i64 =
    (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

/// The calendar day: days since 2000-01-01; `i32::MIN`/`i32::MAX` are `-infinity`/`infinity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i32);

/// Wall-clock date and time without zone: microseconds since 2000-01-01 00:00:00.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

/// An instant: microseconds since 2000-01-01 00:00:00 UTC, shown in the session's zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimestampTz(pub i64);

/// A span of time in three independent units (see the module doc for why).
#[derive(Clone, Copy, Debug, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

/// What text input needs from the session: the transaction's start time (for `now`,
/// `today`, `tomorrow`, `yesterday`) and the `TimeZone` setting (for input without a zone and
/// for the day boundaries of `today`).
#[derive(Clone, Debug)]
pub struct DateTimeContext {
    pub now: TimestampTz,
    pub time_zone: TimeZone,
}

impl DateTimeContext {
    pub fn new(now: TimestampTz, time_zone: TimeZone) -> DateTimeContext {
        DateTimeContext { now, time_zone }
    }
}

/// Broken-down civil time (PostgreSQL's `struct pg_tm` plus `fsec`). `year` is astronomical.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tm {
    pub year: i64,
    pub mon: i32,
    pub mday: i32,
    pub hour: i32,
    pub min: i32,
    pub sec: i32,
    /// Microseconds within the second.
    pub usec: i32,
}

// ---------------------------------------------------------------------------------------
// Calendar.

pub(crate) fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(crate) fn days_in_month(year: i64, mon: i32) -> i32 {
    const DAYS: [i32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if mon == 2 && is_leap(year) {
        29
    } else {
        DAYS[(mon - 1) as usize]
    }
}

/// Julian day number of a proleptic Gregorian date (any year; `mon` 1..=12).
pub(crate) fn date_to_julian(year: i64, mon: i32, mday: i32) -> i64 {
    // Shift the year to start in March so the leap day is the last day of the year; then a
    // 400-year era has a fixed length and the day of the era follows from the month table.
    let y = if mon <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = mon as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + mday as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe + 1_721_120
}

/// Inverse of [`date_to_julian`].
pub(crate) fn julian_to_date(jd: i64) -> (i64, i32, i32) {
    let z = jd - 1_721_120;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let mday = (doy - (153 * mp + 2) / 5 + 1) as i32;
    let mon = if mp < 10 { mp + 3 } else { mp - 9 } as i32;
    let year = yoe + era * 400 + if mon <= 2 { 1 } else { 0 };
    (year, mon, mday)
}

/// PostgreSQL's coarse range check before a date is converted (`IS_VALID_JULIAN`): year and
/// month only; the exact check follows on the day number.
pub(crate) fn is_valid_julian(year: i64, mon: i32) -> bool {
    (year > -4713 || (year == -4713 && mon >= 11))
        && (year < 5_874_898 || (year == 5_874_898 && mon < 6))
}

pub(crate) fn is_valid_date(days: i64) -> bool {
    (-POSTGRES_EPOCH_JDATE..DATE_END_JULIAN - POSTGRES_EPOCH_JDATE).contains(&days)
}

pub(crate) fn is_valid_timestamp(t: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

/// Day of week, 0 = Sunday.
pub(crate) fn julian_dow(jd: i64) -> i32 {
    (jd + 1).rem_euclid(7) as i32
}

/// Splits microseconds since the epoch into fields (`timestamp2tm` without a zone).
pub(crate) fn micros_to_tm(t: i64) -> Tm {
    let days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    let (year, mon, mday) = julian_to_date(days + POSTGRES_EPOCH_JDATE);
    let secs = time / USECS_PER_SEC;
    Tm {
        year,
        mon,
        mday,
        hour: (secs / 3600) as i32,
        min: (secs / 60 % 60) as i32,
        sec: (secs % 60) as i32,
        usec: (time % USECS_PER_SEC) as i32,
    }
}

/// Joins fields into microseconds since the epoch (`tm2timestamp` without a zone); `None`
/// when the result is outside the timestamp range.
pub(crate) fn tm_to_micros(tm: &Tm) -> Option<i64> {
    if !is_valid_julian(tm.year, tm.mon) {
        return None;
    }
    let days = date_to_julian(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    let time = ((tm.hour as i64 * 60 + tm.min as i64) * 60 + tm.sec as i64) * USECS_PER_SEC
        + tm.usec as i64;
    let t = days.checked_mul(USECS_PER_DAY)?.checked_add(time)?;
    is_valid_timestamp(t).then_some(t)
}

// ---------------------------------------------------------------------------------------
// Errors, with PostgreSQL's wording.

pub(crate) fn timestamp_out_of_range() -> PgError {
    PgError::new(DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

pub(crate) fn date_out_of_range() -> PgError {
    PgError::new(DATETIME_FIELD_OVERFLOW, "date out of range")
}

pub(crate) fn interval_out_of_range() -> PgError {
    PgError::new(DATETIME_FIELD_OVERFLOW, "interval out of range")
}

// ---------------------------------------------------------------------------------------
// The types' basic operations.

impl Date {
    pub const NEG_INFINITY: Date = Date(i32::MIN);
    pub const INFINITY: Date = Date(i32::MAX);

    pub fn is_finite(self) -> bool {
        self.0 != i32::MIN && self.0 != i32::MAX
    }

    /// The date of a (year, month, day) with astronomical year numbering (0 = 1 BC);
    /// `None` for an impossible day or a date outside the range. For SQL's `make_date`,
    /// with its BC convention and messages, see [`Date::make`].
    pub fn from_ymd(year: i32, mon: u32, mday: u32) -> Option<Date> {
        let (year, mon, mday) = (year as i64, mon as i32, mday as i32);
        if !(1..=12).contains(&mon) || mday < 1 || mday > days_in_month(year, mon) {
            return None;
        }
        if !is_valid_julian(year, mon) {
            return None;
        }
        let days = date_to_julian(year, mon, mday) - POSTGRES_EPOCH_JDATE;
        is_valid_date(days).then_some(Date(days as i32))
    }

    /// (astronomical year, month, day) of a finite date.
    pub fn to_ymd(self) -> (i32, u32, u32) {
        debug_assert!(self.is_finite(), "to_ymd on an infinite date");
        let (y, m, d) = julian_to_date(self.0 as i64 + POSTGRES_EPOCH_JDATE);
        (y as i32, m as u32, d as u32)
    }

    /// Binary wire format: big-endian int32 days.
    pub fn to_binary(self) -> [u8; 4] {
        self.0.to_be_bytes()
    }

    /// Reads the binary wire format. Like PostgreSQL's `date_recv`, a value outside the range
    /// (other than the infinities) is refused.
    pub fn from_binary(bytes: &[u8]) -> PgResult<Date> {
        let raw: [u8; 4] = bytes.try_into().map_err(|_| bad_binary("date"))?;
        let d = Date(i32::from_be_bytes(raw));
        if d.is_finite() && !is_valid_date(d.0 as i64) {
            return Err(date_out_of_range());
        }
        Ok(d)
    }
}

impl Timestamp {
    pub const NEG_INFINITY: Timestamp = Timestamp(i64::MIN);
    pub const INFINITY: Timestamp = Timestamp(i64::MAX);

    pub fn is_finite(self) -> bool {
        self.0 != i64::MIN && self.0 != i64::MAX
    }

    /// Binary wire format: big-endian int64 microseconds.
    pub fn to_binary(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }

    /// Reads the binary wire format; out-of-range values are refused (`timestamp_recv`).
    pub fn from_binary(bytes: &[u8]) -> PgResult<Timestamp> {
        Ok(Timestamp(recv_timestamp(bytes, "timestamp")?))
    }
}

impl TimestampTz {
    pub const NEG_INFINITY: TimestampTz = TimestampTz(i64::MIN);
    pub const INFINITY: TimestampTz = TimestampTz(i64::MAX);

    pub fn is_finite(self) -> bool {
        self.0 != i64::MIN && self.0 != i64::MAX
    }

    /// The instant of a Unix time in microseconds (what a clock gives), for building the
    /// transaction start time.
    pub fn from_unix_micros(micros: i64) -> TimestampTz {
        TimestampTz(micros - UNIX_EPOCH_OFFSET_USECS)
    }

    pub fn to_binary(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }

    pub fn from_binary(bytes: &[u8]) -> PgResult<TimestampTz> {
        Ok(TimestampTz(recv_timestamp(
            bytes,
            "timestamp with time zone",
        )?))
    }
}

impl Timestamp {
    /// The value rounded to `precision` fractional digits of a second, as stored in a
    /// `timestamp(p)` (PostgreSQL's `AdjustTimestampForTypmod`).
    pub fn with_precision(self, precision: Option<u8>) -> PgResult<Timestamp> {
        round_timestamp(self.0, precision).map(Timestamp)
    }
}

impl TimestampTz {
    /// As [`Timestamp::with_precision`], for `timestamptz(p)`.
    pub fn with_precision(self, precision: Option<u8>) -> PgResult<TimestampTz> {
        round_timestamp(self.0, precision).map(TimestampTz)
    }
}

/// Rounds microseconds `t` to `precision` digits, half away from the 2000-01-01 epoch
/// (as PostgreSQL, whose integer arithmetic rounds the magnitude); the infinities stay.
fn round_timestamp(t: i64, precision: Option<u8>) -> PgResult<i64> {
    let Some(p) = precision.filter(|p| *p < crate::types::MAX_TIMESTAMP_PRECISION) else {
        return Ok(t);
    };
    if t == i64::MIN || t == i64::MAX {
        return Ok(t);
    }
    let scale = 10i64.pow(u32::from(crate::types::MAX_TIMESTAMP_PRECISION - p));
    let half = scale / 2;
    let rounded = if t >= 0 {
        (t + half) / scale * scale
    } else {
        -((-t + half) / scale * scale)
    };
    if !is_valid_timestamp(rounded) {
        return Err(timestamp_out_of_range());
    }
    Ok(rounded)
}

fn recv_timestamp(bytes: &[u8], ty: &str) -> PgResult<i64> {
    let raw: [u8; 8] = bytes.try_into().map_err(|_| bad_binary(ty))?;
    let t = i64::from_be_bytes(raw);
    if t != i64::MIN && t != i64::MAX && !is_valid_timestamp(t) {
        return Err(timestamp_out_of_range());
    }
    Ok(t)
}

fn bad_binary(ty: &str) -> PgError {
    PgError::new(
        SqlState::PROTOCOL_VIOLATION,
        format!("incorrect binary data format for type {ty}"),
    )
}

impl Interval {
    pub const ZERO: Interval = Interval {
        months: 0,
        days: 0,
        micros: 0,
    };

    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    /// The span that comparison, equality and hashing use: microseconds with 30-day months
    /// and 24-hour days. It needs 128 bits: `i32::MAX` months alone is ~5.6e18 µs.
    pub fn cmp_value(&self) -> i128 {
        (self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128) * USECS_PER_DAY as i128
            + self.micros as i128
    }

    /// Binary wire format: int64 microseconds, int32 days, int32 months, big-endian.
    pub fn to_binary(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.micros.to_be_bytes());
        out[8..12].copy_from_slice(&self.days.to_be_bytes());
        out[12..].copy_from_slice(&self.months.to_be_bytes());
        out
    }

    pub fn from_binary(bytes: &[u8]) -> PgResult<Interval> {
        if bytes.len() != 16 {
            return Err(bad_binary("interval"));
        }
        let micros = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
        let days = i32::from_be_bytes(bytes[8..12].try_into().expect("4 bytes"));
        let months = i32::from_be_bytes(bytes[12..].try_into().expect("4 bytes"));
        Ok(Interval {
            months,
            days,
            micros,
        })
    }
}

impl PartialEq for Interval {
    fn eq(&self, other: &Interval) -> bool {
        self.cmp_value() == other.cmp_value()
    }
}

impl Eq for Interval {}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Interval) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Interval {
    fn cmp(&self, other: &Interval) -> Ordering {
        self.cmp_value().cmp(&other.cmp_value())
    }
}

impl Hash for Interval {
    /// Hashes the comparison span so that equal intervals (`'1 day'`, `'24 hours'`) hash
    /// alike, as `interval_hash` does.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.cmp_value().hash(state);
    }
}

/// Joins fields into microseconds of local time, checking only the coarse year range and
/// 64-bit overflow (`tm2timestamp` before its final range check, which the caller does after
/// applying a zone offset).
pub(crate) fn tm_to_local_micros(tm: &Tm) -> Option<i64> {
    if !is_valid_julian(tm.year, tm.mon) {
        return None;
    }
    let days = date_to_julian(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    let time = ((tm.hour as i64 * 60 + tm.min as i64) * 60 + tm.sec as i64) * USECS_PER_SEC
        + tm.usec as i64;
    days.checked_mul(USECS_PER_DAY)?.checked_add(time)
}

/// Local fields of an instant in `zone`, and the zone's offset (seconds east) then.
pub(crate) fn timestamptz_to_tm(t: i64, zone: &TimeZone) -> (Tm, i32) {
    let unix_secs = t.div_euclid(USECS_PER_SEC) + UNIX_EPOCH_OFFSET_USECS / USECS_PER_SEC;
    let off = zone.offset_at_unix(unix_secs);
    (
        micros_to_tm(t.saturating_add(off as i64 * USECS_PER_SEC)),
        off,
    )
}

/// The instant of local fields in `zone`, resolving DST gaps and overlaps as PostgreSQL.
pub(crate) fn tm_to_timestamptz(tm: &Tm, zone: &TimeZone) -> Option<i64> {
    let off = parse::zone_offset_for_tm(tm, zone);
    tm_to_local_micros(tm)?
        .checked_sub(off as i64 * USECS_PER_SEC)
        .filter(|&t| is_valid_timestamp(t))
}

/// Fields of a finite date (time fields zero).
pub(crate) fn date_to_tm(days: i32) -> Tm {
    let (year, mon, mday) = julian_to_date(days as i64 + POSTGRES_EPOCH_JDATE);
    Tm {
        year,
        mon,
        mday,
        ..Tm::default()
    }
}
