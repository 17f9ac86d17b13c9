//! Operators, casts and functions on the date/time types, with PostgreSQL 15's results and
//! errors.
//!
//! - Adding an interval applies months first (clamping the day to the month's end: Jan 31 +
//!   1 month = Feb 29 in 2024), then days, then microseconds. For `timestamptz` the month
//!   and day steps happen on the local time of the session zone and the offset is
//!   re-resolved afterwards, so `+ '1 day'` across a DST change keeps the wall-clock time
//!   while `+ '24 hours'` does not.
//! - Infinite values pass through interval arithmetic unchanged; subtracting them is an
//!   error.
//! - `extract` returns PostgreSQL 15's `numeric`, as an [`ExtractValue`]: an exact decimal
//!   (an `i128` mantissa and a scale) that prints as PostgreSQL prints the numeric, or
//!   ±Infinity. `date_part` is the same value as `f64` ([`ExtractValue::to_f64`]).

use std::fmt;

use crate::error::{PgError, PgResult, SqlState};

use super::{
    DATETIME_FIELD_OVERFLOW, DAYS_PER_MONTH, Date, Interval, POSTGRES_EPOCH_JDATE, SECS_PER_DAY,
    TIMESTAMP_END_JULIAN, TimeZone, Timestamp, TimestampTz, Tm, UNIX_EPOCH_JDATE,
    UNIX_EPOCH_OFFSET_USECS, USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC,
    date_out_of_range, date_to_julian, days_in_month, interval_out_of_range, is_valid_date,
    is_valid_julian, is_valid_timestamp, julian_dow, julian_to_date, micros_to_tm,
    timestamp_out_of_range, timestamptz_to_tm, tm_to_local_micros, tm_to_micros, tm_to_timestamptz,
};

// ---------------------------------------------------------------------------------------
// Fields for extract / date_part / date_trunc.

/// A field name of `extract`, `date_part` and `date_trunc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateTimeField {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
    // The rest are not "units" to PostgreSQL: `date_trunc` calls them unrecognized.
    Epoch,
    Julian,
    Dow,
    IsoDow,
    Doy,
    IsoYear,
}

use DateTimeField as F;

impl DateTimeField {
    /// Reads a field name as PostgreSQL does: case-insensitive, abbreviations and plurals
    /// accepted (`mon`, `hrs`, `qtr`), compared on the first 10 characters.
    pub fn parse(name: &str) -> Option<DateTimeField> {
        let lower = name.to_ascii_lowercase();
        let w = &lower[..lower.len().min(10)];
        Some(match w {
            "us" | "usec" | "usecs" | "usecond" | "useconds" | "microsecon" => F::Microseconds,
            "ms" | "msec" | "msecs" | "msecond" | "mseconds" | "millisecon" => F::Milliseconds,
            "s" | "sec" | "secs" | "second" | "seconds" => F::Second,
            "m" | "min" | "mins" | "minute" | "minutes" => F::Minute,
            "h" | "hr" | "hrs" | "hour" | "hours" => F::Hour,
            "d" | "day" | "days" => F::Day,
            "w" | "week" | "weeks" => F::Week,
            "mon" | "mons" | "month" | "months" => F::Month,
            "qtr" | "quarter" => F::Quarter,
            "y" | "yr" | "yrs" | "year" | "years" => F::Year,
            "dec" | "decs" | "decade" | "decades" => F::Decade,
            "c" | "cent" | "century" | "centuries" => F::Century,
            "mil" | "mils" | "millennia" | "millennium" => F::Millennium,
            "timezone" => F::Timezone,
            "timezone_h" => F::TimezoneHour,
            "timezone_m" => F::TimezoneMinute,
            "epoch" => F::Epoch,
            "j" | "jd" | "julian" => F::Julian,
            "dow" => F::Dow,
            "isodow" => F::IsoDow,
            "doy" => F::Doy,
            "isoyear" => F::IsoYear,
            _ => return None,
        })
    }

    fn is_unit(self) -> bool {
        !matches!(
            self,
            F::Epoch | F::Julian | F::Dow | F::IsoDow | F::Doy | F::IsoYear
        )
    }
}

fn unit_not_recognized(name: &str, ty: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!(
            "unit \"{}\" not recognized for type {ty}",
            name.to_ascii_lowercase()
        ),
    )
}

fn unit_not_supported(name: &str, ty: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!(
            "unit \"{}\" not supported for type {ty}",
            name.to_ascii_lowercase()
        ),
    )
}

const TY_DATE: &str = "date";
const TY_TIMESTAMP: &str = "timestamp without time zone";
const TY_TIMESTAMPTZ: &str = "timestamp with time zone";
const TY_INTERVAL: &str = "interval";

/// A result of `extract`: PostgreSQL 15 returns `numeric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtractValue {
    /// `mantissa / 10^scale`, printed with exactly `scale` decimals.
    Decimal {
        mantissa: i128,
        scale: u32,
    },
    Infinity,
    NegInfinity,
}

impl ExtractValue {
    fn int(v: i64) -> ExtractValue {
        ExtractValue::Decimal {
            mantissa: v as i128,
            scale: 0,
        }
    }

    /// The value as `date_part` returns it (`float8`).
    pub fn to_f64(self) -> f64 {
        match self {
            ExtractValue::Decimal { mantissa, scale } => mantissa as f64 / 10f64.powi(scale as i32),
            ExtractValue::Infinity => f64::INFINITY,
            ExtractValue::NegInfinity => f64::NEG_INFINITY,
        }
    }
}

impl fmt::Display for ExtractValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ExtractValue::Infinity => f.write_str("Infinity"),
            ExtractValue::NegInfinity => f.write_str("-Infinity"),
            ExtractValue::Decimal { mantissa, scale } => {
                let sign = if mantissa < 0 { "-" } else { "" };
                let digits = mantissa.unsigned_abs().to_string();
                if scale == 0 {
                    return write!(f, "{sign}{digits}");
                }
                let scale = scale as usize;
                let padded = format!("{digits:0>width$}", width = scale + 1);
                let (int, frac) = padded.split_at(padded.len() - scale);
                write!(f, "{sign}{int}.{frac}")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Calendar helpers.

/// ISO 8601 week number of a date.
fn iso_week(year: i64, mon: i32, mday: i32) -> i32 {
    let (_, week) = iso_year_week(year, mon, mday);
    week
}

/// Julian day of the Monday starting ISO week 1 of `year`.
fn iso_week1_monday(year: i64) -> i64 {
    let jan4 = date_to_julian(year, 1, 4);
    // Days from the Monday on or before January 4 (`dow` of January 3 with Sunday = 0).
    jan4 - julian_dow(jan4 - 1) as i64
}

/// (ISO year, ISO week) of a date.
fn iso_year_week(year: i64, mon: i32, mday: i32) -> (i64, i32) {
    let jd = date_to_julian(year, mon, mday);
    let mut iso_year = year;
    let mut start = iso_week1_monday(year);
    if jd < start {
        iso_year = year - 1;
        start = iso_week1_monday(iso_year);
    }
    let mut week = (jd - start) / 7 + 1;
    if week >= 52 {
        let next = iso_week1_monday(year + 1);
        if jd >= next {
            iso_year = year + 1;
            week = (jd - next) / 7 + 1;
        }
    }
    (iso_year, week as i32)
}

fn tm_julian(tm: &Tm) -> i64 {
    date_to_julian(tm.year, tm.mon, tm.mday)
}

fn set_julian(tm: &mut Tm, jd: i64) {
    let (y, m, d) = julian_to_date(jd);
    tm.year = y;
    tm.mon = m;
    tm.mday = d;
}

/// Adds months to the fields, clamping the day to the new month's length.
fn add_months_to_tm(tm: &mut Tm, months: i32) {
    let total = tm.year * 12 + (tm.mon as i64 - 1) + months as i64;
    tm.year = total.div_euclid(12);
    tm.mon = (total.rem_euclid(12) + 1) as i32;
    tm.mday = tm.mday.min(days_in_month(tm.year, tm.mon));
}

// ---------------------------------------------------------------------------------------
// date.

impl Date {
    /// `make_date(year, month, day)`: negative years are BC; year 0 does not exist.
    pub fn make(year: i32, month: i32, day: i32) -> PgResult<Date> {
        let astro = if year < 0 {
            year as i64 + 1
        } else {
            year as i64
        };
        let field_err = || {
            PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("date field value out of range: {year}-{month:02}-{day:02}"),
            )
        };
        if year == 0 || !(1..=12).contains(&month) || day < 1 || day > days_in_month(astro, month) {
            return Err(field_err());
        }
        let range_err = || {
            PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("date out of range: {year}-{month:02}-{day:02}"),
            )
        };
        if !is_valid_julian(astro, month) {
            return Err(range_err());
        }
        let days = date_to_julian(astro, month, day) - POSTGRES_EPOCH_JDATE;
        if !is_valid_date(days) {
            return Err(range_err());
        }
        Ok(Date(days as i32))
    }

    /// `date + integer`.
    pub fn add_days(self, days: i32) -> PgResult<Date> {
        if !self.is_finite() {
            return Ok(self);
        }
        let d = self.0 as i64 + days as i64;
        if !is_valid_date(d) {
            return Err(date_out_of_range());
        }
        Ok(Date(d as i32))
    }

    /// `date - integer`.
    pub fn sub_days(self, days: i32) -> PgResult<Date> {
        self.add_days_i64(-(days as i64))
    }

    fn add_days_i64(self, days: i64) -> PgResult<Date> {
        if !self.is_finite() {
            return Ok(self);
        }
        let d = self.0 as i64 + days;
        if !is_valid_date(d) {
            return Err(date_out_of_range());
        }
        Ok(Date(d as i32))
    }

    /// `date - date`: days between.
    pub fn days_since(self, other: Date) -> PgResult<i32> {
        if !self.is_finite() || !other.is_finite() {
            return Err(PgError::new(
                DATETIME_FIELD_OVERFLOW,
                "cannot subtract infinite dates",
            ));
        }
        Ok(self.0 - other.0)
    }

    /// `date::timestamp`: midnight of the day.
    pub fn to_timestamp(self) -> PgResult<Timestamp> {
        match self {
            Date::INFINITY => Ok(Timestamp::INFINITY),
            Date::NEG_INFINITY => Ok(Timestamp::NEG_INFINITY),
            d if d.0 as i64 >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE => Err(PgError::new(
                DATETIME_FIELD_OVERFLOW,
                "date out of range for timestamp",
            )),
            d => Ok(Timestamp(d.0 as i64 * USECS_PER_DAY)),
        }
    }

    /// `date::timestamptz`: local midnight of the day in `zone`.
    pub fn to_timestamptz(self, zone: &TimeZone) -> PgResult<TimestampTz> {
        match self {
            Date::INFINITY => Ok(TimestampTz::INFINITY),
            Date::NEG_INFINITY => Ok(TimestampTz::NEG_INFINITY),
            d => {
                let err =
                    || PgError::new(DATETIME_FIELD_OVERFLOW, "date out of range for timestamp");
                if d.0 as i64 >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE {
                    return Err(err());
                }
                let tm = micros_to_tm(d.0 as i64 * USECS_PER_DAY);
                tm_to_timestamptz(&tm, zone)
                    .map(TimestampTz)
                    .ok_or_else(err)
            }
        }
    }

    /// `date + interval` (a timestamp).
    pub fn add_interval(self, span: &Interval) -> PgResult<Timestamp> {
        self.to_timestamp()?.add_interval(span)
    }

    /// `date - interval` (a timestamp).
    pub fn sub_interval(self, span: &Interval) -> PgResult<Timestamp> {
        self.to_timestamp()?.sub_interval(span)
    }

    /// `extract(field from date)` (PostgreSQL 15's `extract_date`): integers; time fields
    /// are not supported.
    pub fn extract(self, field_name: &str) -> PgResult<Option<ExtractValue>> {
        let field = DateTimeField::parse(field_name)
            .ok_or_else(|| unit_not_recognized(field_name, TY_DATE))?;
        if !self.is_finite() {
            return match field {
                F::Day | F::Month | F::Quarter | F::Week | F::Dow | F::IsoDow | F::Doy => Ok(None),
                F::Year
                | F::Decade
                | F::Century
                | F::Millennium
                | F::Julian
                | F::IsoYear
                | F::Epoch => Ok(Some(if self == Date::NEG_INFINITY {
                    ExtractValue::NegInfinity
                } else {
                    ExtractValue::Infinity
                })),
                _ => Err(unit_not_supported(field_name, TY_DATE)),
            };
        }
        let tm = super::date_to_tm(self.0);
        let v = match field {
            F::Epoch => (self.0 as i64 + POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY,
            F::Julian => tm_julian(&tm),
            F::Day
            | F::Month
            | F::Quarter
            | F::Week
            | F::Year
            | F::Decade
            | F::Century
            | F::Millennium
            | F::IsoYear
            | F::Dow
            | F::IsoDow
            | F::Doy => match date_field(&tm, field) {
                Some(v) => v,
                None => return Err(unit_not_supported(field_name, TY_DATE)),
            },
            _ => return Err(unit_not_supported(field_name, TY_DATE)),
        };
        Ok(Some(ExtractValue::int(v)))
    }
}

/// The calendar fields shared by dates and timestamps; `None` for other fields.
fn date_field(tm: &Tm, field: DateTimeField) -> Option<i64> {
    let y = tm.year;
    Some(match field {
        F::Day => tm.mday as i64,
        F::Month => tm.mon as i64,
        F::Quarter => ((tm.mon - 1) / 3 + 1) as i64,
        F::Week => iso_week(y, tm.mon, tm.mday) as i64,
        // There is no year 0: 1 BC is -1.
        F::Year => {
            if y > 0 {
                y
            } else {
                y - 1
            }
        }
        F::Decade => {
            if y >= 0 {
                y / 10
            } else {
                -((8 - (y - 1)) / 10)
            }
        }
        F::Century => {
            if y > 0 {
                (y + 99) / 100
            } else {
                -((99 - (y - 1)) / 100)
            }
        }
        F::Millennium => {
            if y > 0 {
                (y + 999) / 1000
            } else {
                -((999 - (y - 1)) / 1000)
            }
        }
        F::IsoYear => {
            let (iy, _) = iso_year_week(y, tm.mon, tm.mday);
            if iy <= 0 { iy - 1 } else { iy }
        }
        F::Dow => julian_dow(tm_julian(tm)) as i64,
        F::IsoDow => match julian_dow(tm_julian(tm)) {
            0 => 7,
            d => d as i64,
        },
        F::Doy => tm_julian(tm) - date_to_julian(y, 1, 1) + 1,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// timestamp and timestamptz, sharing the field-level work.

/// Adds an interval to a timestamp given as local fields; `resolve` turns the changed
/// fields back into an instant (identity for `timestamp`, the zone for `timestamptz`).
fn add_interval_generic(
    t: i64,
    span: &Interval,
    to_tm: &dyn Fn(i64) -> Tm,
    from_tm: &dyn Fn(&Tm) -> Option<i64>,
) -> PgResult<i64> {
    let mut t = t;
    if span.months != 0 {
        let mut tm = to_tm(t);
        add_months_to_tm(&mut tm, span.months);
        t = from_tm(&tm).ok_or_else(timestamp_out_of_range)?;
    }
    if span.days != 0 {
        let mut tm = to_tm(t);
        let jd = tm_julian(&tm) + span.days as i64;
        set_julian(&mut tm, jd);
        t = from_tm(&tm).ok_or_else(timestamp_out_of_range)?;
    }
    let t = t
        .checked_add(span.micros)
        .ok_or_else(timestamp_out_of_range)?;
    if !is_valid_timestamp(t) {
        return Err(timestamp_out_of_range());
    }
    Ok(t)
}

fn negate(span: &Interval) -> PgResult<Interval> {
    span.checked_neg()
}

/// `timestamp - timestamp`: the microseconds between, with whole days split out
/// (`justify_hours`), as PostgreSQL: `'2024-03-01' - '2024-01-01'` is `60 days`.
fn timestamp_diff(a: i64, b: i64) -> PgResult<Interval> {
    if a == i64::MIN || a == i64::MAX || b == i64::MIN || b == i64::MAX {
        return Err(PgError::new(
            DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let micros = a.checked_sub(b).ok_or_else(interval_out_of_range)?;
    Interval {
        months: 0,
        days: 0,
        micros,
    }
    .justify_hours()
}

fn trunc_tm(tm: &mut Tm, field: DateTimeField) {
    if field == F::Week {
        let (iy, week) = iso_year_week(tm.year, tm.mon, tm.mday);
        set_julian(tm, iso_week1_monday(iy) + (week as i64 - 1) * 7);
        tm.hour = 0;
        tm.min = 0;
        tm.sec = 0;
        tm.usec = 0;
        return;
    }
    let y = tm.year;
    // Each field clears itself and every smaller one (PostgreSQL's fall-through switch).
    let rank = |f: DateTimeField| match f {
        F::Millennium => 9,
        F::Century => 8,
        F::Decade => 7,
        F::Year => 6,
        F::Quarter => 5,
        F::Month => 4,
        F::Day => 3,
        F::Hour => 2,
        F::Minute => 1,
        F::Second => 0,
        _ => -1,
    };
    let r = rank(field);
    match field {
        F::Millennium => {
            tm.year = if y > 0 {
                ((y + 999) / 1000) * 1000 - 999
            } else {
                -((999 - (y - 1)) / 1000) * 1000 + 1
            };
        }
        F::Century => {
            tm.year = if y > 0 {
                ((y + 99) / 100) * 100 - 99
            } else {
                -((99 - (y - 1)) / 100) * 100 + 1
            };
        }
        F::Decade => {
            tm.year = if y > 0 {
                (y / 10) * 10
            } else {
                -((8 - (y - 1)) / 10) * 10
            };
        }
        _ => {}
    }
    if r >= 6 {
        tm.mon = 1;
    }
    if r >= 5 {
        tm.mon = 3 * ((tm.mon - 1) / 3) + 1;
    }
    if r >= 4 {
        tm.mday = 1;
    }
    if r >= 3 {
        tm.hour = 0;
    }
    if r >= 2 {
        tm.min = 0;
    }
    if r >= 1 {
        tm.sec = 0;
    }
    if r >= 0 {
        tm.usec = 0;
    }
    if field == F::Milliseconds {
        tm.usec = (tm.usec / 1000) * 1000;
    }
}

/// Which fields `date_trunc` accepts, with PostgreSQL's two different refusals.
fn check_trunc_field(name: &str, ty: &str) -> PgResult<DateTimeField> {
    match DateTimeField::parse(name) {
        Some(F::Timezone | F::TimezoneHour | F::TimezoneMinute) => {
            Err(unit_not_supported(name, ty))
        }
        Some(f) if f.is_unit() => Ok(f),
        _ => Err(unit_not_recognized(name, ty)),
    }
}

/// `extract` fields of a finite timestamp's local fields; `tz_east` only for timestamptz.
fn extract_tm(
    tm: &Tm,
    field: DateTimeField,
    epoch_micros: i128,
    tz_east: Option<i32>,
) -> Option<ExtractValue> {
    let sec_usec = tm.sec as i128 * 1_000_000 + tm.usec as i128;
    Some(match field {
        F::Microseconds => ExtractValue::Decimal {
            mantissa: sec_usec,
            scale: 0,
        },
        F::Milliseconds => ExtractValue::Decimal {
            mantissa: sec_usec,
            scale: 3,
        },
        F::Second => ExtractValue::Decimal {
            mantissa: sec_usec,
            scale: 6,
        },
        F::Minute => ExtractValue::int(tm.min as i64),
        F::Hour => ExtractValue::int(tm.hour as i64),
        F::Epoch => ExtractValue::Decimal {
            mantissa: epoch_micros,
            scale: 6,
        },
        F::Julian => julian_numeric(tm),
        F::Timezone => ExtractValue::int(tz_east? as i64),
        F::TimezoneHour => ExtractValue::int((tz_east? / 3600) as i64),
        F::TimezoneMinute => ExtractValue::int((tz_east? / 60 % 60) as i64),
        f => ExtractValue::int(date_field(tm, f)?),
    })
}

/// `extract(julian from timestamp)`: the Julian day plus the fraction of the day, computed
/// as PostgreSQL's numeric division does, so the printed scale matches (at least 16
/// significant digits: `2460341.50000000000000000000`).
fn julian_numeric(tm: &Tm) -> ExtractValue {
    let day_usec: i128 = ((tm.hour as i128 * 60 + tm.min as i128) * 60 + tm.sec as i128)
        * 1_000_000
        + tm.usec as i128;
    const DIVISOR: i128 = 86_400_000_000;
    // Base-10000 weight and leading digit of each operand, as numeric stores them.
    let weight_first = |v: i128| -> (i32, i128) {
        if v == 0 {
            return (0, 0);
        }
        let mut w = 0;
        let mut x = v;
        while x >= 10_000 {
            x /= 10_000;
            w += 1;
        }
        (w, x)
    };
    let (w1, f1) = weight_first(day_usec);
    let (w2, f2) = weight_first(DIVISOR);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let scale = (16 - qweight * 4).max(0) as u32;
    let num = day_usec * 10i128.pow(scale);
    let mut q = num / DIVISOR;
    if (num % DIVISOR) * 2 >= DIVISOR {
        q += 1;
    }
    ExtractValue::Decimal {
        mantissa: tm_julian(tm) as i128 * 10i128.pow(scale) + q,
        scale,
    }
}

/// What `extract` gives for an infinite timestamp: ±Infinity for fields that grow with
/// time, NULL for the others.
fn extract_infinite(
    field_name: &str,
    field: DateTimeField,
    negative: bool,
    ty: &str,
) -> PgResult<Option<ExtractValue>> {
    match field {
        F::Year | F::Decade | F::Century | F::Millennium | F::Julian | F::IsoYear | F::Epoch => {
            Ok(Some(if negative {
                ExtractValue::NegInfinity
            } else {
                ExtractValue::Infinity
            }))
        }
        F::Timezone | F::TimezoneHour | F::TimezoneMinute if ty == TY_TIMESTAMP => {
            Err(unit_not_supported(field_name, ty))
        }
        _ => Ok(None),
    }
}

impl Timestamp {
    /// `timestamp + interval`.
    pub fn add_interval(self, span: &Interval) -> PgResult<Timestamp> {
        if !self.is_finite() {
            return Ok(self);
        }
        add_interval_generic(self.0, span, &micros_to_tm, &|tm| tm_to_micros(tm)).map(Timestamp)
    }

    /// `timestamp - interval`.
    pub fn sub_interval(self, span: &Interval) -> PgResult<Timestamp> {
        self.add_interval(&negate(span)?)
    }

    /// `timestamp - timestamp`.
    pub fn sub_timestamp(self, other: Timestamp) -> PgResult<Interval> {
        timestamp_diff(self.0, other.0)
    }

    /// `timestamp::date`.
    pub fn to_date(self) -> PgResult<Date> {
        match self {
            Timestamp::INFINITY => Ok(Date::INFINITY),
            Timestamp::NEG_INFINITY => Ok(Date::NEG_INFINITY),
            t => Ok(Date(t.0.div_euclid(USECS_PER_DAY) as i32)),
        }
    }

    /// `timestamp::timestamptz`, and `timestamp AT TIME ZONE zone`: the wall-clock time
    /// read in `zone`.
    pub fn to_timestamptz(self, zone: &TimeZone) -> PgResult<TimestampTz> {
        if !self.is_finite() {
            return Ok(TimestampTz(self.0));
        }
        tm_to_timestamptz(&micros_to_tm(self.0), zone)
            .map(TimestampTz)
            .ok_or_else(timestamp_out_of_range)
    }

    /// `date_trunc(field, timestamp)`.
    pub fn trunc(self, field_name: &str) -> PgResult<Timestamp> {
        if !self.is_finite() {
            return Ok(self);
        }
        let field = check_trunc_field(field_name, TY_TIMESTAMP)?;
        let mut tm = micros_to_tm(self.0);
        trunc_tm(&mut tm, field);
        tm_to_micros(&tm)
            .map(Timestamp)
            .ok_or_else(timestamp_out_of_range)
    }

    /// `extract(field from timestamp)`; `None` is SQL NULL.
    pub fn extract(self, field_name: &str) -> PgResult<Option<ExtractValue>> {
        let field = DateTimeField::parse(field_name)
            .ok_or_else(|| unit_not_recognized(field_name, TY_TIMESTAMP))?;
        if !self.is_finite() {
            return extract_infinite(
                field_name,
                field,
                self == Timestamp::NEG_INFINITY,
                TY_TIMESTAMP,
            );
        }
        let epoch = self.0 as i128 + UNIX_EPOCH_OFFSET_USECS as i128;
        extract_tm(&micros_to_tm(self.0), field, epoch, None)
            .map(Some)
            .ok_or_else(|| unit_not_supported(field_name, TY_TIMESTAMP))
    }

    /// `age(self, other)`: the difference in years, months and days of the calendar
    /// fields ("symbolic"), borrowing days from the month of the earlier argument.
    pub fn age(self, other: Timestamp) -> PgResult<Interval> {
        if !self.is_finite() || !other.is_finite() {
            return Err(timestamp_out_of_range());
        }
        age_fields(
            self.0,
            other.0,
            &micros_to_tm(self.0),
            &micros_to_tm(other.0),
        )
    }

    /// `make_timestamp(year, month, mday, hour, min, sec)`: negative years are BC.
    pub fn make(
        year: i32,
        month: i32,
        mday: i32,
        hour: i32,
        min: i32,
        sec: f64,
    ) -> PgResult<Timestamp> {
        make_timestamp_micros(year, month, mday, hour, min, sec).map(Timestamp)
    }
}

impl TimestampTz {
    fn local(self, zone: &TimeZone) -> Tm {
        timestamptz_to_tm(self.0, zone).0
    }

    /// `timestamptz + interval`, months and days stepped in `zone`'s local time.
    pub fn add_interval(self, span: &Interval, zone: &TimeZone) -> PgResult<TimestampTz> {
        if !self.is_finite() {
            return Ok(self);
        }
        add_interval_generic(self.0, span, &|t| timestamptz_to_tm(t, zone).0, &|tm| {
            tm_to_timestamptz(tm, zone)
        })
        .map(TimestampTz)
    }

    /// `timestamptz - interval`.
    pub fn sub_interval(self, span: &Interval, zone: &TimeZone) -> PgResult<TimestampTz> {
        self.add_interval(&negate(span)?, zone)
    }

    /// `timestamptz - timestamptz`.
    pub fn sub_timestamptz(self, other: TimestampTz) -> PgResult<Interval> {
        timestamp_diff(self.0, other.0)
    }

    /// `timestamptz::date`: the local date in `zone`.
    pub fn to_date(self, zone: &TimeZone) -> PgResult<Date> {
        match self {
            TimestampTz::INFINITY => Ok(Date::INFINITY),
            TimestampTz::NEG_INFINITY => Ok(Date::NEG_INFINITY),
            t => {
                let tm = t.local(zone);
                Ok(Date((tm_julian(&tm) - POSTGRES_EPOCH_JDATE) as i32))
            }
        }
    }

    /// `timestamptz::timestamp`, and `timestamptz AT TIME ZONE zone`: the local time.
    pub fn to_timestamp(self, zone: &TimeZone) -> PgResult<Timestamp> {
        if !self.is_finite() {
            return Ok(Timestamp(self.0));
        }
        tm_to_micros(&self.local(zone))
            .map(Timestamp)
            .ok_or_else(timestamp_out_of_range)
    }

    /// `date_trunc(field, timestamptz[, zone])`: truncates the local time in `zone`; for a
    /// day or longer the offset is re-resolved for the truncated time.
    pub fn trunc(self, field_name: &str, zone: &TimeZone) -> PgResult<TimestampTz> {
        if !self.is_finite() {
            return Ok(self);
        }
        let field = check_trunc_field(field_name, TY_TIMESTAMPTZ)?;
        let (mut tm, off) = timestamptz_to_tm(self.0, zone);
        trunc_tm(&mut tm, field);
        let redo_zone = matches!(
            field,
            F::Week
                | F::Day
                | F::Month
                | F::Quarter
                | F::Year
                | F::Decade
                | F::Century
                | F::Millennium
        );
        let t = if redo_zone {
            tm_to_timestamptz(&tm, zone)
        } else {
            tm_to_local_micros(&tm)
                .and_then(|t| t.checked_sub(off as i64 * USECS_PER_SEC))
                .filter(|&t| is_valid_timestamp(t))
        };
        t.map(TimestampTz).ok_or_else(timestamp_out_of_range)
    }

    /// `extract(field from timestamptz)`: fields of the local time in `zone`; `timezone`
    /// is the offset in seconds east.
    pub fn extract(self, field_name: &str, zone: &TimeZone) -> PgResult<Option<ExtractValue>> {
        let field = DateTimeField::parse(field_name)
            .ok_or_else(|| unit_not_recognized(field_name, TY_TIMESTAMPTZ))?;
        if !self.is_finite() {
            return extract_infinite(
                field_name,
                field,
                self == TimestampTz::NEG_INFINITY,
                TY_TIMESTAMPTZ,
            );
        }
        let (tm, off) = timestamptz_to_tm(self.0, zone);
        let epoch = self.0 as i128 + UNIX_EPOCH_OFFSET_USECS as i128;
        extract_tm(&tm, field, epoch, Some(off))
            .map(Some)
            .ok_or_else(|| unit_not_supported(field_name, TY_TIMESTAMPTZ))
    }

    /// `age(self, other)` on local fields in `zone`.
    pub fn age(self, other: TimestampTz, zone: &TimeZone) -> PgResult<Interval> {
        if !self.is_finite() || !other.is_finite() {
            return Err(timestamp_out_of_range());
        }
        age_fields(self.0, other.0, &self.local(zone), &other.local(zone))
    }

    /// `make_timestamptz(year, month, mday, hour, min, sec)` read in `zone`.
    pub fn make(
        year: i32,
        month: i32,
        mday: i32,
        hour: i32,
        min: i32,
        sec: f64,
        zone: &TimeZone,
    ) -> PgResult<TimestampTz> {
        Timestamp::make(year, month, mday, hour, min, sec)?.to_timestamptz(zone)
    }
}

fn age_fields(t1: i64, t2: i64, tm1: &Tm, tm2: &Tm) -> PgResult<Interval> {
    let mut usec = tm1.usec as i64 - tm2.usec as i64;
    let mut sec = tm1.sec - tm2.sec;
    let mut min = tm1.min - tm2.min;
    let mut hour = tm1.hour - tm2.hour;
    let mut mday = tm1.mday - tm2.mday;
    let mut mon = tm1.mon - tm2.mon;
    let mut year = tm1.year - tm2.year;
    let flip = t1 < t2;
    if flip {
        (usec, sec, min, hour, mday, mon, year) = (-usec, -sec, -min, -hour, -mday, -mon, -year);
    }
    while usec < 0 {
        usec += USECS_PER_SEC;
        sec -= 1;
    }
    while sec < 0 {
        sec += 60;
        min -= 1;
    }
    while min < 0 {
        min += 60;
        hour -= 1;
    }
    while hour < 0 {
        hour += 24;
        mday -= 1;
    }
    // Borrow a month's days from the month of the earlier timestamp's counterpart, as
    // PostgreSQL does.
    let borrow = if flip { tm1 } else { tm2 };
    while mday < 0 {
        mday += days_in_month(borrow.year, borrow.mon);
        mon -= 1;
    }
    while mon < 0 {
        mon += 12;
        year -= 1;
    }
    if flip {
        (usec, sec, min, hour, mday, mon, year) = (-usec, -sec, -min, -hour, -mday, -mon, -year);
    }
    let months = year.checked_mul(12).and_then(|m| m.checked_add(mon as i64));
    let months = months
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(interval_out_of_range)?;
    let micros = ((hour as i64 * 60 + min as i64) * 60 + sec as i64) * USECS_PER_SEC + usec;
    Ok(Interval {
        months,
        days: mday,
        micros,
    })
}

/// C's `%g` for the seconds in `make_timestamp`'s messages (six significant digits,
/// trailing zeros dropped), padded to two characters like `%02g`.
fn format_g(v: f64) -> String {
    let s = if v == 0.0 {
        "0".to_string()
    } else {
        let exp = v.abs().log10().floor() as i32;
        let decimals = (5 - exp).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if s.len() < 2 { format!("0{s}") } else { s }
}

fn make_timestamp_micros(
    year: i32,
    month: i32,
    mday: i32,
    hour: i32,
    min: i32,
    sec: f64,
) -> PgResult<i64> {
    let astro = if year < 0 {
        year as i64 + 1
    } else {
        year as i64
    };
    if year == 0 || !(1..=12).contains(&month) || mday < 1 || mday > days_in_month(astro, month) {
        return Err(PgError::new(
            DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {year}-{month:02}-{mday:02}"),
        ));
    }
    if !is_valid_julian(astro, month) {
        return Err(PgError::new(
            DATETIME_FIELD_OVERFLOW,
            format!("date out of range: {year}-{month:02}-{mday:02}"),
        ));
    }
    let sec_usec = (sec * USECS_PER_SEC as f64).round_ties_even();
    let time_overflows = !(0..=24).contains(&hour)
        || !(0..60).contains(&min)
        || sec.is_nan()
        || !(0.0..=60.0 * USECS_PER_SEC as f64).contains(&sec_usec)
        || ((hour as i64 * 60 + min as i64) * 60 * USECS_PER_SEC) as f64 + sec_usec
            > USECS_PER_DAY as f64;
    if time_overflows {
        return Err(PgError::new(
            DATETIME_FIELD_OVERFLOW,
            format!(
                "time field value out of range: {hour}:{min:02}:{}",
                format_g(sec)
            ),
        ));
    }
    let days = date_to_julian(astro, month, mday) - POSTGRES_EPOCH_JDATE;
    let time = (hour as i64 * 60 + min as i64) * 60 * USECS_PER_SEC + sec_usec as i64;
    let t = days * USECS_PER_DAY + time;
    if !is_valid_timestamp(t) {
        return Err(PgError::new(
            DATETIME_FIELD_OVERFLOW,
            format!(
                "timestamp out of range: {year}-{month:02}-{mday:02} {hour}:{min:02}:{}",
                format_g(sec)
            ),
        ));
    }
    Ok(t)
}

// ---------------------------------------------------------------------------------------
// interval.

/// PostgreSQL's `TSROUND`: rounds to microsecond precision to absorb float noise.
fn ts_round(v: f64) -> f64 {
    (v * 1_000_000.0).round_ties_even() / 1_000_000.0
}

fn f64_to_i32(v: f64) -> PgResult<i32> {
    if v.is_nan() || !(i32::MIN as f64..=i32::MAX as f64).contains(&v) {
        return Err(interval_out_of_range());
    }
    Ok(v as i32)
}

impl Interval {
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`.
    pub fn make(
        years: i32,
        months: i32,
        weeks: i32,
        days: i32,
        hours: i32,
        mins: i32,
        secs: f64,
    ) -> PgResult<Interval> {
        if secs.is_nan() || secs.is_infinite() {
            return Err(interval_out_of_range());
        }
        let m = years.checked_mul(12).and_then(|y| y.checked_add(months));
        let d = weeks.checked_mul(7).and_then(|w| w.checked_add(days));
        let s = (secs * USECS_PER_SEC as f64).round_ties_even();
        if !(-9.223372036854775e18..9.223372036854775e18).contains(&s) {
            return Err(interval_out_of_range());
        }
        let micros = (hours as i64)
            .checked_mul(USECS_PER_HOUR)
            .and_then(|h| h.checked_add(mins as i64 * USECS_PER_MINUTE))
            .and_then(|t| t.checked_add(s as i64));
        match (m, d, micros) {
            (Some(months), Some(days), Some(micros)) => Ok(Interval {
                months,
                days,
                micros,
            }),
            _ => Err(interval_out_of_range()),
        }
    }

    /// `interval + interval`, field by field.
    pub fn checked_add(&self, other: &Interval) -> PgResult<Interval> {
        match (
            self.months.checked_add(other.months),
            self.days.checked_add(other.days),
            self.micros.checked_add(other.micros),
        ) {
            (Some(months), Some(days), Some(micros)) => Ok(Interval {
                months,
                days,
                micros,
            }),
            _ => Err(interval_out_of_range()),
        }
    }

    /// `interval - interval`.
    pub fn checked_sub(&self, other: &Interval) -> PgResult<Interval> {
        self.checked_add(&other.checked_neg()?)
    }

    /// `-interval`.
    pub fn checked_neg(&self) -> PgResult<Interval> {
        match (
            self.months.checked_neg(),
            self.days.checked_neg(),
            self.micros.checked_neg(),
        ) {
            (Some(months), Some(days), Some(micros)) => Ok(Interval {
                months,
                days,
                micros,
            }),
            _ => Err(interval_out_of_range()),
        }
    }

    /// `interval * float8`: each field is multiplied; fractional months spill into days
    /// (30 per month) and fractional days into time (24 hours per day), never upwards.
    pub fn mul_f64(&self, factor: f64) -> PgResult<Interval> {
        let months_f = self.months as f64 * factor;
        let months = f64_to_i32(months_f)?;
        let days_f = self.days as f64 * factor;
        let days = f64_to_i32(days_f)?;
        self.spill(months, days, months_f, days_f, self.micros as f64 * factor)
    }

    /// `interval / float8`.
    pub fn div_f64(&self, divisor: f64) -> PgResult<Interval> {
        if divisor == 0.0 {
            return Err(PgError::division_by_zero());
        }
        let months_f = self.months as f64 / divisor;
        let months = f64_to_i32(months_f)?;
        let days_f = self.days as f64 / divisor;
        let days = f64_to_i32(days_f)?;
        self.spill(months, days, months_f, days_f, self.micros as f64 / divisor)
    }

    fn spill(
        &self,
        months: i32,
        days: i32,
        months_f: f64,
        days_f: f64,
        micros_f: f64,
    ) -> PgResult<Interval> {
        let month_rem_days = ts_round((months_f - months as f64) * DAYS_PER_MONTH as f64);
        let mut sec_rem = ts_round(
            (days_f - days as f64 + month_rem_days - month_rem_days.trunc()) * SECS_PER_DAY as f64,
        );
        let mut days = days as i64;
        if sec_rem.abs() >= SECS_PER_DAY as f64 {
            let whole = (sec_rem / SECS_PER_DAY as f64).trunc();
            days += whole as i64;
            sec_rem -= whole * SECS_PER_DAY as f64;
        }
        days += month_rem_days.trunc() as i64;
        let days = i32::try_from(days).map_err(|_| interval_out_of_range())?;
        let micros = (micros_f + sec_rem * USECS_PER_SEC as f64).round_ties_even();
        if micros.is_nan() || !(-9.223372036854775e18..9.223372036854775e18).contains(&micros) {
            return Err(interval_out_of_range());
        }
        Ok(Interval {
            months,
            days,
            micros: micros as i64,
        })
    }

    /// `justify_hours`: whole 24-hour spans of the time move into days, and days and time
    /// end up with the same sign.
    pub fn justify_hours(&self) -> PgResult<Interval> {
        let mut r = *self;
        let whole = r.micros / USECS_PER_DAY;
        r.micros -= whole * USECS_PER_DAY;
        r.days = i32::try_from(r.days as i64 + whole).map_err(|_| interval_out_of_range())?;
        if r.days > 0 && r.micros < 0 {
            r.micros += USECS_PER_DAY;
            r.days -= 1;
        } else if r.days < 0 && r.micros > 0 {
            r.micros -= USECS_PER_DAY;
            r.days += 1;
        }
        Ok(r)
    }

    /// `justify_days`: whole 30-day spans move into months, with matching signs.
    pub fn justify_days(&self) -> PgResult<Interval> {
        let mut r = *self;
        let whole = r.days / DAYS_PER_MONTH;
        r.days -= whole * DAYS_PER_MONTH;
        r.months = r
            .months
            .checked_add(whole)
            .ok_or_else(interval_out_of_range)?;
        if r.months > 0 && r.days < 0 {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && r.days > 0 {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        Ok(r)
    }

    /// `justify_interval`: both of the above, with all three fields given one sign.
    pub fn justify_interval(&self) -> PgResult<Interval> {
        let mut r = *self;
        let whole_days = r.micros / USECS_PER_DAY;
        r.micros -= whole_days * USECS_PER_DAY;
        r.days = i32::try_from(r.days as i64 + whole_days).map_err(|_| interval_out_of_range())?;
        let whole_months = r.days / DAYS_PER_MONTH;
        r.days -= whole_months * DAYS_PER_MONTH;
        r.months = r
            .months
            .checked_add(whole_months)
            .ok_or_else(interval_out_of_range)?;
        if r.months > 0 && (r.days < 0 || (r.days == 0 && r.micros < 0)) {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && (r.days > 0 || (r.days == 0 && r.micros > 0)) {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        if r.days > 0 && r.micros < 0 {
            r.micros += USECS_PER_DAY;
            r.days -= 1;
        } else if r.days < 0 && r.micros > 0 {
            r.micros -= USECS_PER_DAY;
            r.days += 1;
        }
        Ok(r)
    }

    /// `extract(field from interval)`: `year` is whole years of the months, `month` the
    /// rest, `epoch` the total seconds with a year as 365.25 days and a month as 30.
    pub fn extract(&self, field_name: &str) -> PgResult<Option<ExtractValue>> {
        let field = DateTimeField::parse(field_name)
            .ok_or_else(|| unit_not_recognized(field_name, TY_INTERVAL))?;
        let years = (self.months / 12) as i64;
        let mons = (self.months % 12) as i64;
        let t = self.micros;
        let sec_usec = (t % USECS_PER_MINUTE) as i128;
        Ok(Some(match field {
            F::Microseconds => ExtractValue::Decimal {
                mantissa: sec_usec,
                scale: 0,
            },
            F::Milliseconds => ExtractValue::Decimal {
                mantissa: sec_usec,
                scale: 3,
            },
            F::Second => ExtractValue::Decimal {
                mantissa: sec_usec,
                scale: 6,
            },
            F::Minute => ExtractValue::int((t % USECS_PER_HOUR) / USECS_PER_MINUTE),
            F::Hour => ExtractValue::int(t / USECS_PER_HOUR),
            F::Day => ExtractValue::int(self.days as i64),
            F::Month => ExtractValue::int(mons),
            F::Quarter => ExtractValue::int(mons / 3 + 1),
            F::Year => ExtractValue::int(years),
            F::Decade => ExtractValue::int(years / 10),
            F::Century => ExtractValue::int(years / 100),
            F::Millennium => ExtractValue::int(years / 1000),
            F::Epoch => {
                // 365.25 days per year, 30 per month, as PostgreSQL.
                let secs = 31_557_600i128 * years as i128
                    + (DAYS_PER_MONTH as i128 * SECS_PER_DAY as i128) * mons as i128
                    + SECS_PER_DAY as i128 * self.days as i128;
                ExtractValue::Decimal {
                    mantissa: secs * 1_000_000 + t as i128,
                    scale: 6,
                }
            }
            _ => return Err(unit_not_supported(field_name, TY_INTERVAL)),
        }))
    }
}

// ---------------------------------------------------------------------------------------
// to_timestamp(double precision).

impl TimestampTz {
    /// `to_timestamp(seconds)`: the instant `seconds` after 1970-01-01 00:00 UTC
    /// (`float8_timestamptz`); the infinities map to the infinite timestamps.
    pub fn from_unix_seconds(seconds: f64) -> PgResult<TimestampTz> {
        if seconds.is_nan() {
            return Err(PgError::new(
                DATETIME_FIELD_OVERFLOW,
                "timestamp cannot be NaN",
            ));
        }
        if seconds.is_infinite() {
            return Ok(if seconds > 0.0 {
                TimestampTz::INFINITY
            } else {
                TimestampTz::NEG_INFINITY
            });
        }
        let out_of_range = || {
            PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("timestamp out of range: \"{}\"", format_c_g(seconds)),
            )
        };
        let min = (SECS_PER_DAY * -UNIX_EPOCH_JDATE) as f64;
        let end = (SECS_PER_DAY * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE)) as f64;
        if !(min..end).contains(&seconds) {
            return Err(out_of_range());
        }
        let since_pg_epoch = seconds - (UNIX_EPOCH_OFFSET_USECS / USECS_PER_SEC) as f64;
        let micros = (since_pg_epoch * USECS_PER_SEC as f64).round_ties_even() as i64;
        if !is_valid_timestamp(micros) {
            return Err(out_of_range());
        }
        Ok(TimestampTz(micros))
    }
}

/// C's `%g`: six significant digits, exponent form below 1e-4 or from 1e6, trailing zeros
/// dropped.
fn format_c_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{:.5e}", v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let m = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
