//! Text output with DateStyle ISO and IntervalStyle postgres (`EncodeDateOnly`,
//! `EncodeDateTime`, `EncodeInterval`). Fractional seconds print without trailing zeros; BC
//! years print as positive years with a ` BC` suffix (year 0 is `0001 BC`).

use std::fmt::{self, Write};

use super::{
    Date, Interval, TimeZone, Timestamp, TimestampTz, Tm, USECS_PER_HOUR, USECS_PER_MINUTE,
    USECS_PER_SEC, micros_to_tm, timestamptz_to_tm,
};

fn write_date(out: &mut String, tm: &Tm) {
    let year = if tm.year <= 0 {
        -(tm.year - 1)
    } else {
        tm.year
    };
    let _ = write!(out, "{year:04}-{:02}-{:02}", tm.mon, tm.mday);
}

/// `.ffffff` with trailing zeros dropped; nothing for a whole second.
fn write_fraction(out: &mut String, usec: i64) {
    if usec != 0 {
        let digits = format!("{:06}", usec.unsigned_abs());
        let _ = write!(out, ".{}", digits.trim_end_matches('0'));
    }
}

fn write_time(out: &mut String, tm: &Tm) {
    let _ = write!(out, "{:02}:{:02}:{:02}", tm.hour, tm.min, tm.sec);
    write_fraction(out, tm.usec as i64);
}

/// A UTC offset as PostgreSQL prints it: `+HH`, `+HH:MM` or `+HH:MM:SS`.
pub(crate) fn write_offset(out: &mut String, east_secs: i32) {
    let sign = if east_secs >= 0 { '+' } else { '-' };
    let abs = east_secs.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    let _ = if s != 0 {
        write!(out, "{sign}{h:02}:{m:02}:{s:02}")
    } else if m != 0 {
        write!(out, "{sign}{h:02}:{m:02}")
    } else {
        write!(out, "{sign}{h:02}")
    };
}

fn bc_suffix(out: &mut String, tm: &Tm) {
    if tm.year <= 0 {
        out.push_str(" BC");
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Date::INFINITY => f.write_str("infinity"),
            Date::NEG_INFINITY => f.write_str("-infinity"),
            d => {
                let tm = super::date_to_tm(d.0);
                let mut out = String::new();
                write_date(&mut out, &tm);
                bc_suffix(&mut out, &tm);
                f.write_str(&out)
            }
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Timestamp::INFINITY => f.write_str("infinity"),
            Timestamp::NEG_INFINITY => f.write_str("-infinity"),
            t => {
                let tm = micros_to_tm(t.0);
                let mut out = String::new();
                write_date(&mut out, &tm);
                out.push(' ');
                write_time(&mut out, &tm);
                bc_suffix(&mut out, &tm);
                f.write_str(&out)
            }
        }
    }
}

impl TimestampTz {
    /// `timestamptz_out`: local time in `zone` followed by its UTC offset then.
    pub fn to_text(self, zone: &TimeZone) -> String {
        match self {
            TimestampTz::INFINITY => "infinity".into(),
            TimestampTz::NEG_INFINITY => "-infinity".into(),
            t => {
                let (tm, off) = timestamptz_to_tm(t.0, zone);
                let mut out = String::new();
                write_date(&mut out, &tm);
                out.push(' ');
                write_time(&mut out, &tm);
                write_offset(&mut out, off);
                bc_suffix(&mut out, &tm);
                out
            }
        }
    }
}

impl fmt::Display for Interval {
    /// IntervalStyle postgres: `1 year 2 mons 3 days 04:05:06.5`. A unit after a negative
    /// one carries an explicit `+` so the sign of each part is unambiguous
    /// (`-1 days +02:00:00`); the time part appears when nonzero or when nothing else does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let mut is_zero = true;
        let mut is_before = false;
        let years = self.months / 12;
        let mons = self.months % 12;
        for (value, unit) in [(years, "year"), (mons, "mon"), (self.days, "day")] {
            if value == 0 {
                continue;
            }
            let _ = write!(
                out,
                "{}{}{} {}{}",
                if is_zero { "" } else { " " },
                if is_before && value > 0 { "+" } else { "" },
                value,
                unit,
                if value != 1 { "s" } else { "" }
            );
            is_before = value < 0;
            is_zero = false;
        }
        let t = self.micros;
        if is_zero || t != 0 {
            let hour = t / USECS_PER_HOUR;
            let min = (t % USECS_PER_HOUR) / USECS_PER_MINUTE;
            let sec = (t % USECS_PER_MINUTE) / USECS_PER_SEC;
            let usec = t % USECS_PER_SEC;
            let minus = t < 0;
            let _ = write!(
                out,
                "{}{}{:02}:{:02}:{:02}",
                if is_zero { "" } else { " " },
                if minus {
                    "-"
                } else if is_before {
                    "+"
                } else {
                    ""
                },
                hour.unsigned_abs(),
                min.unsigned_abs(),
                sec.unsigned_abs()
            );
            write_fraction(&mut out, usec);
        }
        f.write_str(&out)
    }
}
