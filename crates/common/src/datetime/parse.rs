//! Text input, following PostgreSQL's two passes: `tokenize` splits the string into typed
//! fields (`ParseDateTime`), then `decode_datetime` / `decode_interval` decide what each
//! field means (`DecodeDateTime`, `DecodeInterval`, `DecodeISO8601Interval`).
//!
//! Only DateStyle MDY is implemented (PostgreSQL's default): a leading two-digit field of an
//! all-numeric date is the month. Zone abbreviations are a fixed subset of PostgreSQL's
//! `Default` set (see [`ZONE_ABBREVS`]). Julian-day input (`J2451187`) and the run-together
//! unit forms (`y2001m02d04`) are refused as bad syntax.

use crate::error::{PgError, PgResult, SqlState};

use super::{
    DATETIME_FIELD_OVERFLOW, Date, DateTimeContext, INTERVAL_FIELD_OVERFLOW,
    INVALID_DATETIME_FORMAT, INVALID_TIME_ZONE_DISPLACEMENT_VALUE, Interval, POSTGRES_EPOCH_JDATE,
    SECS_PER_DAY, TimeZone, Timestamp, TimestampTz, Tm, UNIX_EPOCH_JDATE, USECS_PER_DAY,
    USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC, date_to_julian, days_in_month,
    interval_out_of_range, is_valid_date, is_valid_julian, is_valid_timestamp, julian_to_date,
    timestamptz_to_tm, tm_to_local_micros,
};

/// PostgreSQL allows at most this many fields in one value (`MAXDATEFIELDS`).
const FIELDS_MAX: usize = 25;
/// Keywords compare on their first 10 characters (`TOKMAXLEN`): `microseconds` is found
/// as `microsecon`.
const TOKEN_LEN_MAX: usize = 10;
/// Largest numeric zone offset in input, in hours (`MAX_TZDISP_HOUR`).
const TZ_DISPLACEMENT_HOURS_MAX: i32 = 15;

/// Zone abbreviations understood in input, seconds east. A subset of PostgreSQL's
/// `timezone_abbreviations = 'Default'`, fixed-offset entries only.
const ZONE_ABBREVS: &[(&str, i32)] = &[
    ("acdt", 37800),
    ("acst", 34200),
    ("aedt", 39600),
    ("aest", 36000),
    ("akdt", -28800),
    ("akst", -32400),
    ("awst", 28800),
    ("bst", 3600),
    ("cdt", -18000),
    ("cest", 7200),
    ("cet", 3600),
    ("cst", -21600),
    ("edt", -14400),
    ("eest", 10800),
    ("eet", 7200),
    ("est", -18000),
    ("gmt", 0),
    ("hst", -36000),
    ("jst", 32400),
    ("mdt", -21600),
    ("mst", -25200),
    ("nzdt", 46800),
    ("nzst", 43200),
    ("pdt", -25200),
    ("pst", -28800),
    ("ut", 0),
    ("utc", 0),
    ("west", 3600),
    ("wet", 0),
    ("z", 0),
    ("zulu", 0),
];

/// Why input was refused; turned into PostgreSQL's message by [`DtErr::into_pg`].
#[derive(Debug)]
pub(crate) enum DtErr {
    BadFormat,
    FieldOverflow,
    /// A month or day out of range where the DateStyle may be to blame (gets a hint).
    MdFieldOverflow,
    TzDispOverflow,
    UnknownZone(String),
}

impl DtErr {
    fn into_pg(self, text: &str, ty: &str) -> PgError {
        match self {
            DtErr::BadFormat => PgError::new(
                INVALID_DATETIME_FORMAT,
                format!("invalid input syntax for type {ty}: \"{text}\""),
            ),
            DtErr::FieldOverflow if ty == "interval" => PgError::new(
                INTERVAL_FIELD_OVERFLOW,
                format!("interval field value out of range: \"{text}\""),
            ),
            DtErr::FieldOverflow => PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("date/time field value out of range: \"{text}\""),
            ),
            DtErr::MdFieldOverflow => PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("date/time field value out of range: \"{text}\""),
            )
            .with_hint("Perhaps you need a different \"datestyle\" setting."),
            DtErr::TzDispOverflow => PgError::new(
                INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
                format!("time zone displacement out of range: \"{text}\""),
            ),
            DtErr::UnknownZone(name) => PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("time zone \"{name}\" not recognized"),
            ),
        }
    }
}

type DtResult<T> = Result<T, DtErr>;

// ---------------------------------------------------------------------------------------
// Pass 1: fields.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ft {
    /// Digits, possibly with one `.`: a number, a run-together date or time, `yyyy.ddd`.
    Number,
    /// Digits and matching `-`, `/` or `.` separators, or text with separators (a month
    /// name in a date, a zone name such as `america/new_york`).
    Date,
    /// Digits with `:`.
    Time,
    /// Letters only, lowercased.
    Str,
    /// A sign then letters (`-infinity`).
    Special,
    /// A sign then digits: a zone offset, or in an interval a signed number or time.
    Tz,
}

struct Field {
    ft: Ft,
    text: String,
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn tokenize(input: &str) -> DtResult<Vec<Field>> {
    let s = input.as_bytes();
    let mut i = 0;
    let mut fields = Vec::new();
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    while i < s.len() {
        let c = s[i];
        if is_c_space(c) {
            i += 1;
            continue;
        }
        let mut text = String::new();
        let ft;
        if c.is_ascii_digit() {
            while at(i).is_ascii_digit() {
                text.push(at(i) as char);
                i += 1;
            }
            if at(i) == b':' {
                ft = Ft::Time;
                while at(i).is_ascii_digit() || matches!(at(i), b':' | b'.') {
                    text.push(at(i) as char);
                    i += 1;
                }
            } else if matches!(at(i), b'-' | b'/' | b'.') {
                let delim = at(i);
                text.push(delim as char);
                i += 1;
                if at(i).is_ascii_digit() {
                    let mut kind = if delim == b'.' { Ft::Number } else { Ft::Date };
                    while at(i).is_ascii_digit() {
                        text.push(at(i) as char);
                        i += 1;
                    }
                    // Three fields only when the delimiters match.
                    if at(i) == delim {
                        kind = Ft::Date;
                        while at(i).is_ascii_digit() || at(i) == delim {
                            text.push(at(i) as char);
                            i += 1;
                        }
                    }
                    ft = kind;
                } else {
                    ft = Ft::Date;
                    while at(i).is_ascii_alphanumeric() || at(i) == delim {
                        text.push(at(i).to_ascii_lowercase() as char);
                        i += 1;
                    }
                }
            } else {
                ft = Ft::Number;
            }
        } else if c == b'.' {
            text.push('.');
            i += 1;
            while at(i).is_ascii_digit() {
                text.push(at(i) as char);
                i += 1;
            }
            ft = Ft::Number;
        } else if c.is_ascii_alphabetic() {
            while at(i).is_ascii_alphabetic() {
                text.push(at(i).to_ascii_lowercase() as char);
                i += 1;
            }
            // Letters then a separator, digit or '+' start a date with a text month or a
            // zone name (`gmt+3`, `europe/berlin`), unless the letters are a keyword.
            let is_date = matches!(at(i), b'-' | b'/' | b'.')
                || ((at(i) == b'+' || at(i).is_ascii_digit()) && keyword(&text).is_none());
            if is_date {
                loop {
                    text.push(at(i).to_ascii_lowercase() as char);
                    i += 1;
                    let n = at(i);
                    if !(n.is_ascii_alphanumeric()
                        || matches!(n, b'+' | b'-' | b'/' | b'_' | b'.' | b':'))
                    {
                        break;
                    }
                }
                ft = Ft::Date;
            } else {
                ft = Ft::Str;
            }
        } else if c == b'+' || c == b'-' {
            text.push(c as char);
            i += 1;
            while is_c_space(at(i)) {
                i += 1;
            }
            if at(i).is_ascii_digit() {
                while at(i).is_ascii_digit() || matches!(at(i), b':' | b'.' | b'-') {
                    text.push(at(i) as char);
                    i += 1;
                }
                ft = Ft::Tz;
            } else if at(i).is_ascii_alphabetic() {
                while at(i).is_ascii_alphabetic() {
                    text.push(at(i).to_ascii_lowercase() as char);
                    i += 1;
                }
                ft = Ft::Special;
            } else {
                return Err(DtErr::BadFormat);
            }
        } else if c.is_ascii_punctuation() {
            // Other punctuation only separates fields (`@`, `,`).
            i += 1;
            continue;
        } else {
            return Err(DtErr::BadFormat);
        }
        if fields.len() >= FIELDS_MAX {
            return Err(DtErr::BadFormat);
        }
        fields.push(Field { ft, text });
    }
    Ok(fields)
}

// ---------------------------------------------------------------------------------------
// Keywords.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    Epoch,
    Infinity,
    NegInfinity,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    Allballs,
}

#[derive(Clone, Copy, Debug)]
enum Kw {
    Month(i32),
    Weekday,
    Meridian {
        pm: bool,
    },
    Era {
        bc: bool,
    },
    Special(Special),
    /// `t` between a date and a time (ISO 8601).
    IsoTime,
    /// Noise words (`at`, `on`).
    Ignore,
    /// Unit letters of forms Myriad does not accept (`j2451187`, `y2001m02`).
    Unsupported,
}

fn truncated(word: &str) -> &str {
    &word[..word.len().min(TOKEN_LEN_MAX)]
}

/// PostgreSQL's core date/time keywords (`datetktbl`).
fn keyword(word: &str) -> Option<Kw> {
    let w = truncated(word);
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    for (i, m) in MONTHS.iter().enumerate() {
        if w == *m || w == &m[..3] || (i == 8 && w == "sept") {
            return Some(Kw::Month(i as i32 + 1));
        }
    }
    Some(match w {
        "sun" | "sunday" | "mon" | "monday" | "tue" | "tues" | "tuesday" | "wed" | "weds"
        | "wednesday" | "thu" | "thur" | "thurs" | "thursday" | "fri" | "friday" | "sat"
        | "saturday" => Kw::Weekday,
        "am" => Kw::Meridian { pm: false },
        "pm" => Kw::Meridian { pm: true },
        "ad" => Kw::Era { bc: false },
        "bc" => Kw::Era { bc: true },
        "epoch" => Kw::Special(Special::Epoch),
        "infinity" => Kw::Special(Special::Infinity),
        "-infinity" => Kw::Special(Special::NegInfinity),
        "now" => Kw::Special(Special::Now),
        "today" => Kw::Special(Special::Today),
        "tomorrow" => Kw::Special(Special::Tomorrow),
        "yesterday" => Kw::Special(Special::Yesterday),
        "allballs" => Kw::Special(Special::Allballs),
        "t" => Kw::IsoTime,
        "at" | "on" => Kw::Ignore,
        "d" | "h" | "j" | "jd" | "julian" | "m" | "mm" | "s" | "y" => Kw::Unsupported,
        _ => return None,
    })
}

fn zone_abbrev(word: &str) -> Option<i32> {
    ZONE_ABBREVS
        .iter()
        .find(|(a, _)| *a == word)
        .map(|&(_, off)| off)
}

// ---------------------------------------------------------------------------------------
// Pass 2 for date, timestamp and timestamptz.

const M_YEAR: u32 = 1 << 0;
const M_MONTH: u32 = 1 << 1;
const M_DAY: u32 = 1 << 2;
const M_HOUR: u32 = 1 << 3;
const M_MINUTE: u32 = 1 << 4;
const M_SECOND: u32 = 1 << 5;
const M_TZ: u32 = 1 << 6;
const M_AMPM: u32 = 1 << 7;
const M_ERA: u32 = 1 << 8;
const M_DOW: u32 = 1 << 9;
const M_DOY: u32 = 1 << 10;
const M_DATE: u32 = M_YEAR | M_MONTH | M_DAY;
const M_TIME: u32 = M_HOUR | M_MINUTE | M_SECOND;

/// What the fields said.
enum Decoded {
    /// A date and time; `tz` is the offset (seconds east) when the input gave or implied
    /// one, resolved against the date for zone names.
    Fields {
        tm: Tm,
        tz: Option<i32>,
    },
    Epoch,
    Infinity,
    NegInfinity,
}

struct DtState {
    fmask: u32,
    tm: Tm,
    day_of_year: Option<i32>,
    tz: Option<i32>,
    named_tz: Option<TimeZone>,
    bc: bool,
    meridian: Option<bool>,
    is2digits: bool,
    have_text_month: bool,
    special: Option<Special>,
}

fn parse_i64_prefix(s: &str) -> (Option<i64>, &str) {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = (b[i] - b'0') as i64;
        match v.checked_mul(10).and_then(|v| {
            if neg {
                v.checked_sub(d)
            } else {
                v.checked_add(d)
            }
        }) {
            Some(n) => v = n,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return (Some(0), s);
    }
    (if overflow { None } else { Some(v) }, &s[i..])
}

/// `strtoint`: a leading integer that must fit in `i32`, and the rest of the string.
fn parse_int_prefix(s: &str) -> DtResult<(i32, &str)> {
    let (v, rest) = parse_i64_prefix(s);
    let v = v
        .and_then(|v| i32::try_from(v).ok())
        .ok_or(DtErr::FieldOverflow)?;
    Ok((v, rest))
}

/// `.ddd` to a fraction (`strtod` on the rest, which must be all digits).
fn parse_fraction(s: &str) -> DtResult<f64> {
    debug_assert!(s.starts_with('.'));
    if s.len() == 1 {
        return Ok(0.0);
    }
    if !s[1..].bytes().all(|b| b.is_ascii_digit()) {
        return Err(DtErr::BadFormat);
    }
    format!("0{s}").parse::<f64>().map_err(|_| DtErr::BadFormat)
}

fn parse_fractional_second(s: &str) -> DtResult<i32> {
    Ok((parse_fraction(s)? * 1_000_000.0).round_ties_even() as i32)
}

/// `hh:mm[:ss[.f]]`, or `mm:ss.f` (a fraction right after the second number).
fn decode_time(s: &str, tm: &mut Tm) -> DtResult<()> {
    let (h, rest) = parse_int_prefix(s)?;
    let rest = rest.strip_prefix(':').ok_or(DtErr::BadFormat)?;
    let (m, rest) = parse_int_prefix(rest)?;
    let (mut hour, mut min, mut sec, mut usec) = (h, m, 0, 0);
    if rest.is_empty() {
    } else if rest.starts_with('.') {
        usec = parse_fractional_second(rest)?;
        sec = min;
        min = hour;
        hour = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s, r) = parse_int_prefix(r)?;
        sec = s;
        if r.starts_with('.') {
            usec = parse_fractional_second(r)?;
        } else if !r.is_empty() {
            return Err(DtErr::BadFormat);
        }
    } else {
        return Err(DtErr::BadFormat);
    }
    if hour < 0
        || !(0..60).contains(&min)
        || !(0..=60).contains(&sec)
        || !(0..=1_000_000).contains(&usec)
    {
        return Err(DtErr::FieldOverflow);
    }
    tm.hour = hour;
    tm.min = min;
    tm.sec = sec;
    tm.usec = usec;
    Ok(())
}

/// A numeric zone offset `+hh`, `+hh:mm[:ss]` or `+hhmm`: seconds east.
fn decode_timezone(s: &str) -> DtResult<i32> {
    let neg = match s.as_bytes().first() {
        Some(b'-') => true,
        Some(b'+') => false,
        _ => return Err(DtErr::BadFormat),
    };
    let (mut hr, rest) = parse_int_prefix(&s[1..])?;
    let (mut min, mut sec) = (0, 0);
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(':') {
        let (m, r) = parse_int_prefix(r)?;
        min = m;
        rest = r;
        if let Some(r) = rest.strip_prefix(':') {
            let (s2, r) = parse_int_prefix(r)?;
            sec = s2;
            rest = r;
        }
    } else if rest.is_empty() && s.len() > 3 {
        min = hr % 100;
        hr /= 100;
    }
    if !(0..=TZ_DISPLACEMENT_HOURS_MAX).contains(&hr)
        || !(0..60).contains(&min)
        || !(0..60).contains(&sec)
    {
        return Err(DtErr::TzDispOverflow);
    }
    if !rest.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let off = (hr * 60 + min) * 60 + sec;
    Ok(if neg { -off } else { off })
}

impl DtState {
    /// A lone number: which field it is depends on what came before (`DecodeNumber`).
    fn decode_number(&mut self, s: &str, have_text_month: bool) -> DtResult<u32> {
        let (val, rest) = parse_int_prefix(s)?;
        if s.is_empty() || !s.as_bytes()[0].is_ascii_digit() && s.as_bytes()[0] != b'.' {
            return Err(DtErr::BadFormat);
        }
        if rest.starts_with('.') {
            // More than two digits before the point: a run-together date or time.
            if s.len() - rest.len() > 2 {
                return self.decode_number_field(s, self.fmask | M_DATE);
            }
            self.tm.usec = parse_fractional_second(rest)?;
        } else if !rest.is_empty() {
            return Err(DtErr::BadFormat);
        }
        let flen = s.len();
        if flen == 3 && self.fmask & M_DATE == M_YEAR && (1..=366).contains(&val) {
            self.day_of_year = Some(val);
            return Ok(M_DOY | M_MONTH | M_DAY);
        }
        let tmask = match self.fmask & M_DATE {
            0 => {
                if flen >= 3 {
                    self.tm.year = val as i64;
                    M_YEAR
                } else {
                    self.tm.mon = val;
                    M_MONTH
                }
            }
            M_YEAR => {
                self.tm.mon = val;
                M_MONTH
            }
            M_MONTH => {
                if have_text_month && (flen >= 3 || val > 31) {
                    self.tm.year = val as i64;
                    M_YEAR
                } else {
                    self.tm.mday = val;
                    M_DAY
                }
            }
            x if x == M_YEAR | M_MONTH => {
                if have_text_month && flen >= 3 && self.is2digits {
                    // DD-MON-YYYY: the first number was the day after all.
                    self.tm.mday = self.tm.year as i32;
                    self.tm.year = val as i64;
                    self.is2digits = false;
                    M_DAY
                } else {
                    self.tm.mday = val;
                    M_DAY
                }
            }
            M_DAY => {
                self.tm.mon = val;
                M_MONTH
            }
            x if x == M_MONTH | M_DAY => {
                self.tm.year = val as i64;
                M_YEAR
            }
            M_DATE => return self.decode_number_field(s, self.fmask),
            _ => return Err(DtErr::BadFormat),
        };
        if tmask == M_YEAR {
            self.is2digits = flen <= 2;
        }
        Ok(tmask)
    }

    /// Run-together digits: `yyyymmdd`, `yymmdd`, `hhmmss`, `hhmm`, with a fraction for
    /// times (`DecodeNumberField`).
    fn decode_number_field(&mut self, s: &str, fmask: u32) -> DtResult<u32> {
        let mut digits = s;
        if let Some(p) = s.find('.') {
            let frac = &s[p..];
            if !frac[1..].bytes().all(|b| b.is_ascii_digit()) {
                return Err(DtErr::BadFormat);
            }
            self.tm.usec = parse_fractional_second(frac)?;
            digits = &s[..p];
        } else if fmask & M_DATE != M_DATE && digits.len() >= 6 {
            let n = digits.len();
            let num =
                |a: usize, b: usize| digits[a..b].parse::<i64>().map_err(|_| DtErr::BadFormat);
            self.tm.mday = num(n - 2, n)? as i32;
            self.tm.mon = num(n - 4, n - 2)? as i32;
            self.tm.year = num(0, n - 4)?;
            if n - 4 == 2 {
                self.is2digits = true;
            }
            return Ok(M_DATE);
        }
        if fmask & M_TIME != M_TIME {
            let num =
                |a: usize, b: usize| digits[a..b].parse::<i32>().map_err(|_| DtErr::BadFormat);
            if digits.len() == 6 {
                self.tm.hour = num(0, 2)?;
                self.tm.min = num(2, 4)?;
                self.tm.sec = num(4, 6)?;
                return Ok(M_TIME);
            } else if digits.len() == 4 {
                self.tm.hour = num(0, 2)?;
                self.tm.min = num(2, 4)?;
                self.tm.sec = 0;
                return Ok(M_TIME);
            }
        }
        Err(DtErr::BadFormat)
    }

    /// A date field with separators (`DecodeDate`): text months first, then numbers.
    fn decode_date(&mut self, s: &str) -> DtResult<u32> {
        let mut parts: Vec<&str> = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && !b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            if i == b.len() {
                return Err(DtErr::BadFormat);
            }
            let start = i;
            if b[i].is_ascii_digit() {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            } else {
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            parts.push(&s[start..i]);
            // One separator (or junk character) ends the part.
            if i < b.len() {
                i += 1;
            }
            if parts.len() >= FIELDS_MAX {
                break;
            }
        }
        let mut dmask = 0;
        let mut have_text_month = false;
        let mut numeric = Vec::new();
        for p in parts {
            if p.as_bytes()[0].is_ascii_alphabetic() {
                match keyword(p) {
                    Some(Kw::Ignore) => continue,
                    Some(Kw::Month(m)) => {
                        if (self.fmask | dmask) & M_MONTH != 0 {
                            return Err(DtErr::BadFormat);
                        }
                        self.tm.mon = m;
                        have_text_month = true;
                        dmask |= M_MONTH;
                    }
                    _ => return Err(DtErr::BadFormat),
                }
            } else {
                numeric.push(p);
            }
        }
        let saved = self.fmask;
        self.fmask |= dmask;
        for p in numeric {
            let m = self.decode_number(p, have_text_month)?;
            if self.fmask & m != 0 {
                return Err(DtErr::BadFormat);
            }
            self.fmask |= m;
            dmask |= m;
        }
        self.fmask = saved;
        // Fields seen before the date (a time, a weekday) count against it: PostgreSQL
        // accepts them only after the date.
        if (saved | dmask) & !(M_DOY | M_TZ) != M_DATE {
            return Err(DtErr::BadFormat);
        }
        Ok(dmask)
    }

    /// Year/month/day checks once all fields are in (`ValidateDate`).
    fn validate_date(&mut self) -> DtResult<()> {
        if self.fmask & M_YEAR != 0 {
            if self.bc {
                if self.tm.year <= 0 {
                    return Err(DtErr::FieldOverflow);
                }
                self.tm.year = -(self.tm.year - 1);
            } else if self.is2digits {
                if self.tm.year < 70 {
                    self.tm.year += 2000;
                } else if self.tm.year < 100 {
                    self.tm.year += 1900;
                }
            } else if self.tm.year <= 0 {
                return Err(DtErr::FieldOverflow);
            }
        }
        if let Some(doy) = self.day_of_year {
            let (y, m, d) = julian_to_date(date_to_julian(self.tm.year, 1, 1) + doy as i64 - 1);
            self.tm.year = y;
            self.tm.mon = m;
            self.tm.mday = d;
        }
        if self.fmask & M_MONTH != 0 && !(1..=12).contains(&self.tm.mon) {
            return Err(DtErr::MdFieldOverflow);
        }
        if self.fmask & M_DAY != 0 && !(1..=31).contains(&self.tm.mday) {
            return Err(DtErr::MdFieldOverflow);
        }
        if self.fmask & M_DATE == M_DATE && self.tm.mday > days_in_month(self.tm.year, self.tm.mon)
        {
            return Err(DtErr::FieldOverflow);
        }
        Ok(())
    }
}

/// Offset (seconds east) of `zone` at the local time in `tm` (`DetermineTimeZoneOffset`).
pub(crate) fn zone_offset_for_tm(tm: &Tm, zone: &TimeZone) -> i32 {
    if !is_valid_julian(tm.year, tm.mon) {
        return 0;
    }
    let days = date_to_julian(tm.year, tm.mon, tm.mday) - UNIX_EPOCH_JDATE;
    let secs = days * SECS_PER_DAY + tm.hour as i64 * 3600 + tm.min as i64 * 60 + tm.sec as i64;
    zone.offset_for_local(secs)
}

fn decode_datetime(text: &str, ctx: &DateTimeContext) -> DtResult<Decoded> {
    let fields = tokenize(text)?;
    let mut st = DtState {
        fmask: 0,
        tm: Tm {
            year: 0,
            mon: 0,
            mday: 0,
            ..Tm::default()
        },
        day_of_year: None,
        tz: None,
        named_tz: None,
        bc: false,
        meridian: None,
        is2digits: false,
        have_text_month: false,
        special: None,
    };
    let mut iso_time_next = false;
    let current_local = || timestamptz_to_tm(ctx.now.0, &ctx.time_zone);
    for (i, f) in fields.iter().enumerate() {
        let mut tmask;
        match f.ft {
            Ft::Date => {
                let date_done = st.fmask & M_DATE == M_DATE;
                if iso_time_next || (date_done && f.text.as_bytes()[0].is_ascii_digit()) {
                    // A run-together time with a trailing zone (`hhmmss-zz`).
                    iso_time_next = false;
                    let split = f.text[1..]
                        .find(['+', '-'])
                        .map(|p| p + 1)
                        .ok_or(DtErr::BadFormat)?;
                    let (time, zone) = f.text.split_at(split);
                    st.tz = Some(decode_timezone(zone)?);
                    tmask = if time.contains(':') {
                        decode_time(time, &mut st.tm)?;
                        M_TIME
                    } else {
                        st.decode_number_field(time, st.fmask | M_DATE)?
                    };
                    tmask |= M_TZ;
                } else if date_done {
                    let zone = TimeZone::lookup(&f.text)
                        .ok_or_else(|| DtErr::UnknownZone(f.text.clone()))?;
                    st.named_tz = Some(zone);
                    tmask = M_TZ;
                } else {
                    tmask = st.decode_date(&f.text)?;
                    st.have_text_month |=
                        st.tm.mon != 0 && f.text.bytes().any(|b| b.is_ascii_alphabetic());
                }
            }
            Ft::Time => {
                iso_time_next = false;
                decode_time(&f.text, &mut st.tm)?;
                if st.tm.hour > 24
                    || (st.tm.hour == 24 && (st.tm.min > 0 || st.tm.sec > 0 || st.tm.usec > 0))
                {
                    return Err(DtErr::FieldOverflow);
                }
                tmask = M_TIME;
            }
            Ft::Tz => {
                st.tz = Some(decode_timezone(&f.text)?);
                tmask = M_TZ;
            }
            Ft::Number => {
                if iso_time_next {
                    iso_time_next = false;
                    tmask = st.decode_number_field(&f.text, st.fmask | M_DATE)?;
                    if tmask != M_TIME {
                        return Err(DtErr::BadFormat);
                    }
                } else {
                    let has_point = f.text.contains('.');
                    let int_len = f.text.find('.').unwrap_or(f.text.len());
                    if has_point && st.fmask & M_DATE == 0 {
                        tmask = st.decode_date(&f.text)?;
                    } else if (has_point && int_len > 2)
                        || (f.text.len() >= 6 && (st.fmask & M_DATE == 0 || st.fmask & M_TIME == 0))
                    {
                        tmask = st.decode_number_field(&f.text, st.fmask)?;
                    } else {
                        let htm = st.have_text_month;
                        tmask = st.decode_number(&f.text, htm)?;
                    }
                }
            }
            Ft::Str | Ft::Special => {
                if let Some(off) = zone_abbrev(&f.text) {
                    st.tz = Some(off);
                    tmask = M_TZ;
                } else {
                    match keyword(&f.text) {
                        Some(Kw::Ignore) => continue,
                        Some(Kw::Weekday) => tmask = M_DOW,
                        Some(Kw::Month(m)) => {
                            tmask = M_MONTH;
                            if st.fmask & M_MONTH != 0
                                && !st.have_text_month
                                && st.fmask & M_DAY == 0
                                && (1..=31).contains(&st.tm.mon)
                            {
                                st.tm.mday = st.tm.mon;
                                tmask = M_DAY;
                            }
                            st.have_text_month = true;
                            st.tm.mon = m;
                        }
                        Some(Kw::Meridian { pm }) => {
                            st.meridian = Some(pm);
                            tmask = M_AMPM;
                        }
                        Some(Kw::Era { bc }) => {
                            st.bc = bc;
                            tmask = M_ERA;
                        }
                        Some(Kw::IsoTime) => {
                            tmask = 0;
                            let next_ok = fields
                                .get(i + 1)
                                .is_some_and(|n| matches!(n.ft, Ft::Number | Ft::Time | Ft::Date));
                            if st.fmask & M_DATE != M_DATE || !next_ok {
                                return Err(DtErr::BadFormat);
                            }
                            iso_time_next = true;
                        }
                        Some(Kw::Special(sp)) => {
                            tmask = M_DATE | M_TIME | M_TZ;
                            match sp {
                                Special::Now => {
                                    let (tm, off) = current_local();
                                    st.tm = tm;
                                    st.tz = Some(off);
                                }
                                Special::Today | Special::Tomorrow | Special::Yesterday => {
                                    tmask = M_DATE;
                                    let (tm, _) = current_local();
                                    let shift = match sp {
                                        Special::Tomorrow => 1,
                                        Special::Yesterday => -1,
                                        _ => 0,
                                    };
                                    let (y, m, d) = julian_to_date(
                                        date_to_julian(tm.year, tm.mon, tm.mday) + shift,
                                    );
                                    st.tm.year = y;
                                    st.tm.mon = m;
                                    st.tm.mday = d;
                                }
                                Special::Allballs => {
                                    tmask = M_TIME | M_TZ;
                                    st.tm.hour = 0;
                                    st.tm.min = 0;
                                    st.tm.sec = 0;
                                    st.tm.usec = 0;
                                    st.tz = Some(0);
                                }
                                _ => st.special = Some(sp),
                            }
                        }
                        Some(Kw::Unsupported) => return Err(DtErr::BadFormat),
                        None => {
                            // Last resort: an all-letters zone name (`Japan`, `UTC`).
                            if f.ft != Ft::Str {
                                return Err(DtErr::BadFormat);
                            }
                            st.named_tz = Some(TimeZone::lookup(&f.text).ok_or(DtErr::BadFormat)?);
                            tmask = M_TZ;
                        }
                    }
                }
            }
        }
        if tmask & st.fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        st.fmask |= tmask;
    }
    match st.special {
        Some(Special::Epoch) => return Ok(Decoded::Epoch),
        Some(Special::Infinity) => return Ok(Decoded::Infinity),
        Some(Special::NegInfinity) => return Ok(Decoded::NegInfinity),
        _ => {}
    }
    st.validate_date()?;
    if let Some(pm) = st.meridian {
        if st.tm.hour > 12 {
            return Err(DtErr::FieldOverflow);
        }
        if !pm && st.tm.hour == 12 {
            st.tm.hour = 0;
        } else if pm && st.tm.hour != 12 {
            st.tm.hour += 12;
        }
    }
    if st.fmask & M_DATE != M_DATE {
        return Err(DtErr::BadFormat);
    }
    let tz = match (&st.named_tz, st.tz) {
        (Some(zone), _) => Some(zone_offset_for_tm(&st.tm, zone)),
        (None, tz) => tz,
    };
    Ok(Decoded::Fields { tm: st.tm, tz })
}

// ---------------------------------------------------------------------------------------
// Text input of the three datetime types.

impl Date {
    /// `date_in`: any date/time PostgreSQL accepts; a time or zone in the text is ignored.
    pub fn parse(text: &str, ctx: &DateTimeContext) -> PgResult<Date> {
        const TY: &str = "date";
        let decoded = decode_datetime(text, ctx).map_err(|e| e.into_pg(text, TY))?;
        let out_of_range = || {
            PgError::new(
                DATETIME_FIELD_OVERFLOW,
                format!("date out of range: \"{text}\""),
            )
        };
        match decoded {
            Decoded::Epoch => Ok(Date(
                (super::UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) as i32,
            )),
            Decoded::Infinity => Ok(Date::INFINITY),
            Decoded::NegInfinity => Ok(Date::NEG_INFINITY),
            Decoded::Fields { tm, .. } => {
                if !is_valid_julian(tm.year, tm.mon) {
                    return Err(out_of_range());
                }
                let days = date_to_julian(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
                if !is_valid_date(days) {
                    return Err(out_of_range());
                }
                Ok(Date(days as i32))
            }
        }
    }
}

impl Timestamp {
    /// `timestamp_in`: a zone in the text is ignored.
    pub fn parse(text: &str, ctx: &DateTimeContext) -> PgResult<Timestamp> {
        const TY: &str = "timestamp";
        let decoded = decode_datetime(text, ctx).map_err(|e| e.into_pg(text, TY))?;
        match decoded {
            Decoded::Epoch => Ok(Timestamp(-super::UNIX_EPOCH_OFFSET_USECS)),
            Decoded::Infinity => Ok(Timestamp::INFINITY),
            Decoded::NegInfinity => Ok(Timestamp::NEG_INFINITY),
            Decoded::Fields { tm, .. } => tm_to_local_micros(&tm)
                .filter(|&t| is_valid_timestamp(t))
                .map(Timestamp)
                .ok_or_else(|| timestamp_input_out_of_range(text)),
        }
    }
}

impl TimestampTz {
    /// `timestamptz_in`: text without a zone is local time in the session's zone.
    pub fn parse(text: &str, ctx: &DateTimeContext) -> PgResult<TimestampTz> {
        const TY: &str = "timestamp with time zone";
        let decoded = decode_datetime(text, ctx).map_err(|e| e.into_pg(text, TY))?;
        match decoded {
            Decoded::Epoch => Ok(TimestampTz(-super::UNIX_EPOCH_OFFSET_USECS)),
            Decoded::Infinity => Ok(TimestampTz::INFINITY),
            Decoded::NegInfinity => Ok(TimestampTz::NEG_INFINITY),
            Decoded::Fields { tm, tz } => {
                let off = tz.unwrap_or_else(|| zone_offset_for_tm(&tm, &ctx.time_zone));
                tm_to_local_micros(&tm)
                    .and_then(|t| t.checked_sub(off as i64 * USECS_PER_SEC))
                    .filter(|&t| is_valid_timestamp(t))
                    .map(TimestampTz)
                    .ok_or_else(|| timestamp_input_out_of_range(text))
            }
        }
    }
}

fn timestamp_input_out_of_range(text: &str) -> PgError {
    PgError::new(
        DATETIME_FIELD_OVERFLOW,
        format!("timestamp out of range: \"{text}\""),
    )
}

// ---------------------------------------------------------------------------------------
// Interval input.

/// Interval fields while decoding (`struct pg_itm_in`).
#[derive(Default)]
struct ItmIn {
    years: i32,
    months: i32,
    days: i32,
    usec: i64,
}

impl ItmIn {
    fn add_usec(&mut self, val: i64, frac: f64, scale: i64) -> DtResult<()> {
        let p = val.checked_mul(scale).ok_or(DtErr::FieldOverflow)?;
        self.usec = self.usec.checked_add(p).ok_or(DtErr::FieldOverflow)?;
        self.add_frac_usec(frac, scale)
    }

    /// Adds `frac * scale` microseconds, rounding half away from zero.
    fn add_frac_usec(&mut self, frac: f64, scale: i64) -> DtResult<()> {
        if frac == 0.0 {
            return Ok(());
        }
        let f = frac * scale as f64;
        let mut usec = f as i64;
        let rest = f - usec as f64;
        if rest > 0.5 {
            usec += 1;
        } else if rest < -0.5 {
            usec -= 1;
        }
        self.usec = self.usec.checked_add(usec).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    /// Whole days go to `days`, the rest of the fraction spills into microseconds.
    fn add_frac_days(&mut self, frac: f64, scale: i32) -> DtResult<()> {
        if frac == 0.0 {
            return Ok(());
        }
        let f = frac * scale as f64;
        let extra = f as i32;
        self.days = self.days.checked_add(extra).ok_or(DtErr::FieldOverflow)?;
        self.add_frac_usec(f - extra as f64, USECS_PER_DAY)
    }

    /// Fractional years become whole months (rounded); the rest is dropped, as PostgreSQL.
    fn add_frac_years(&mut self, frac: f64, scale: i32) -> DtResult<()> {
        let extra = (frac * scale as f64 * 12.0).round_ties_even() as i32;
        self.months = self.months.checked_add(extra).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_days(&mut self, val: i64, scale: i32) -> DtResult<()> {
        let v = i32::try_from(val).map_err(|_| DtErr::FieldOverflow)?;
        let d = v.checked_mul(scale).ok_or(DtErr::FieldOverflow)?;
        self.days = self.days.checked_add(d).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_months(&mut self, val: i64) -> DtResult<()> {
        let v = i32::try_from(val).map_err(|_| DtErr::FieldOverflow)?;
        self.months = self.months.checked_add(v).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_years(&mut self, val: i64, scale: i32) -> DtResult<()> {
        let v = i32::try_from(val).map_err(|_| DtErr::FieldOverflow)?;
        let y = v.checked_mul(scale).ok_or(DtErr::FieldOverflow)?;
        self.years = self.years.checked_add(y).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn to_interval(&self) -> Option<Interval> {
        let months = self.years as i64 * 12 + self.months as i64;
        Some(Interval {
            months: i32::try_from(months).ok()?,
            days: self.days,
            micros: self.usec,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

/// Interval unit words (`deltatktbl`), `None` for anything else.
fn interval_unit(word: &str) -> Option<Unit> {
    Some(match truncated(word) {
        "us" | "usec" | "usecs" | "usecond" | "useconds" | "microsecon" => Unit::Microsecond,
        "ms" | "msec" | "msecs" | "msecond" | "mseconds" | "millisecon" => Unit::Millisecond,
        "s" | "sec" | "secs" | "second" | "seconds" => Unit::Second,
        "m" | "min" | "mins" | "minute" | "minutes" => Unit::Minute,
        "h" | "hr" | "hrs" | "hour" | "hours" => Unit::Hour,
        "d" | "day" | "days" => Unit::Day,
        "w" | "week" | "weeks" => Unit::Week,
        "mon" | "mons" | "month" | "months" => Unit::Month,
        "y" | "yr" | "yrs" | "year" | "years" => Unit::Year,
        "dec" | "decs" | "decade" | "decades" => Unit::Decade,
        "c" | "cent" | "century" | "centuries" => Unit::Century,
        "mil" | "mils" | "millennia" | "millennium" => Unit::Millennium,
        _ => return None,
    })
}

/// `hh:mm[:ss[.f]]` or `mm:ss.f` of an interval, in microseconds (hours unbounded).
fn decode_interval_time(s: &str) -> DtResult<i64> {
    let (h, rest) = parse_i64_prefix(s);
    let h = h.ok_or(DtErr::FieldOverflow)?;
    let rest = rest.strip_prefix(':').ok_or(DtErr::BadFormat)?;
    let (m, rest) = parse_int_prefix(rest)?;
    let (mut hour, mut min, mut sec, mut usec) = (h, m as i64, 0i64, 0i64);
    if rest.is_empty() {
    } else if rest.starts_with('.') {
        usec = parse_fractional_second(rest)? as i64;
        sec = min;
        min = hour;
        hour = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s2, r) = parse_int_prefix(r)?;
        sec = s2 as i64;
        if r.starts_with('.') {
            usec = parse_fractional_second(r)? as i64;
        } else if !r.is_empty() {
            return Err(DtErr::BadFormat);
        }
    } else {
        return Err(DtErr::BadFormat);
    }
    if hour < 0
        || !(0..60).contains(&min)
        || !(0..60).contains(&sec)
        || !(0..=1_000_000).contains(&usec)
    {
        return Err(DtErr::FieldOverflow);
    }
    hour.checked_mul(USECS_PER_HOUR)
        .and_then(|t| t.checked_add(min * USECS_PER_MINUTE + sec * USECS_PER_SEC + usec))
        .ok_or(DtErr::FieldOverflow)
}

const IM_USEC: u32 = 1 << 0;
const IM_MSEC: u32 = 1 << 1;
const IM_SECOND: u32 = 1 << 2;
const IM_MINUTE: u32 = 1 << 3;
const IM_HOUR: u32 = 1 << 4;
const IM_DAY: u32 = 1 << 5;
const IM_WEEK: u32 = 1 << 6;
const IM_MONTH: u32 = 1 << 7;
const IM_YEAR: u32 = 1 << 8;
const IM_DECADE: u32 = 1 << 9;
const IM_CENTURY: u32 = 1 << 10;
const IM_MILLENNIUM: u32 = 1 << 11;
const IM_ALL_SECS: u32 = IM_USEC | IM_MSEC | IM_SECOND;
const IM_TIME: u32 = IM_HOUR | IM_MINUTE | IM_ALL_SECS;

fn decode_interval(text: &str) -> DtResult<ItmIn> {
    let fields = tokenize(text)?;
    let mut itm = ItmIn::default();
    let mut fmask = 0u32;
    let mut unit: Option<Unit> = None;
    let mut ago = false;
    // Right to left, so a unit word is seen before its number.
    for f in fields.iter().rev() {
        let tmask;
        match f.ft {
            Ft::Time => {
                itm.usec = itm
                    .usec
                    .checked_add(decode_interval_time(&f.text)?)
                    .ok_or(DtErr::FieldOverflow)?;
                tmask = IM_TIME;
                unit = Some(Unit::Day);
            }
            Ft::Tz if f.text[1..].contains(':') => {
                let mut t = decode_interval_time(&f.text[1..])?;
                if f.text.starts_with('-') {
                    t = -t;
                }
                itm.usec = itm.usec.checked_add(t).ok_or(DtErr::FieldOverflow)?;
                tmask = IM_TIME;
                // '1 +02:03' means a day and a time.
                unit = Some(Unit::Day);
            }
            Ft::Tz | Ft::Date | Ft::Number => {
                let u = *unit.get_or_insert(Unit::Second);
                let (val, rest) = parse_i64_prefix(&f.text);
                let mut val = val.ok_or(DtErr::FieldOverflow)?;
                let negative = f.text.starts_with('-');
                let mut u = u;
                let frac;
                if let Some(r) = rest.strip_prefix('-') {
                    // SQL standard "years-months".
                    let (v2, r) = parse_int_prefix(r)?;
                    if !(0..12).contains(&v2) {
                        return Err(DtErr::FieldOverflow);
                    }
                    if !r.is_empty() {
                        return Err(DtErr::BadFormat);
                    }
                    let v2 = if negative { -v2 } else { v2 };
                    u = Unit::Month;
                    unit = Some(Unit::Month);
                    val = val
                        .checked_mul(12)
                        .and_then(|v| v.checked_add(v2 as i64))
                        .ok_or(DtErr::FieldOverflow)?;
                    frac = 0.0;
                } else if rest.starts_with('.') {
                    let fr = parse_fraction(rest)?;
                    frac = if negative { -fr } else { fr };
                } else if rest.is_empty() {
                    frac = 0.0;
                } else {
                    return Err(DtErr::BadFormat);
                }
                tmask = match u {
                    Unit::Microsecond => {
                        itm.add_usec(val, frac, 1)?;
                        IM_USEC
                    }
                    Unit::Millisecond => {
                        itm.add_usec(val, frac, 1000)?;
                        IM_MSEC
                    }
                    Unit::Second => {
                        itm.add_usec(val, frac, USECS_PER_SEC)?;
                        if frac == 0.0 { IM_SECOND } else { IM_ALL_SECS }
                    }
                    Unit::Minute => {
                        itm.add_usec(val, frac, USECS_PER_MINUTE)?;
                        IM_MINUTE
                    }
                    Unit::Hour => {
                        itm.add_usec(val, frac, USECS_PER_HOUR)?;
                        IM_HOUR
                    }
                    Unit::Day => {
                        itm.add_days(val, 1)?;
                        itm.add_frac_usec(frac, USECS_PER_DAY)?;
                        IM_DAY
                    }
                    Unit::Week => {
                        itm.add_days(val, 7)?;
                        itm.add_frac_days(frac, 7)?;
                        IM_WEEK
                    }
                    Unit::Month => {
                        itm.add_months(val)?;
                        itm.add_frac_days(frac, super::DAYS_PER_MONTH)?;
                        IM_MONTH
                    }
                    Unit::Year => {
                        itm.add_years(val, 1)?;
                        itm.add_frac_years(frac, 1)?;
                        IM_YEAR
                    }
                    Unit::Decade => {
                        itm.add_years(val, 10)?;
                        itm.add_frac_years(frac, 10)?;
                        IM_DECADE
                    }
                    Unit::Century => {
                        itm.add_years(val, 100)?;
                        itm.add_frac_years(frac, 100)?;
                        IM_CENTURY
                    }
                    Unit::Millennium => {
                        itm.add_years(val, 1000)?;
                        itm.add_frac_years(frac, 1000)?;
                        IM_MILLENNIUM
                    }
                };
            }
            Ft::Str | Ft::Special => {
                if f.text == "ago" {
                    ago = true;
                    continue;
                }
                unit = Some(interval_unit(&f.text).ok_or(DtErr::BadFormat)?);
                continue;
            }
        }
        if tmask & fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= tmask;
    }
    if fmask == 0 {
        return Err(DtErr::BadFormat);
    }
    if ago {
        itm.usec = itm.usec.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.days = itm.days.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.months = itm.months.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.years = itm.years.checked_neg().ok_or(DtErr::FieldOverflow)?;
    }
    Ok(itm)
}

/// A number in an ISO 8601 interval: `[-]digits[.digits]`, read like `strtod`; returns the
/// integral and fractional parts and the rest of the string.
fn iso_number(s: &str) -> DtResult<(i64, f64, &str)> {
    let b = s.as_bytes();
    if !matches!(b.first(), Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'.') {
        return Err(DtErr::BadFormat);
    }
    let mut i = 0;
    if b[0] == b'-' || b[0] == b'+' {
        i = 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == digits_start || &s[digits_start..i] == "." {
        return Err(DtErr::BadFormat);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let v: f64 = s[..i].parse().map_err(|_| DtErr::BadFormat)?;
    if !(-9.223372036854775e18..=9.223372036854775e18).contains(&v) {
        return Err(DtErr::FieldOverflow);
    }
    let ip = v.trunc();
    Ok((ip as i64, v - ip, &s[i..]))
}

/// Digits before the point of an ISO number (for the basic `PYYYYMMDD` forms).
fn iso_integer_width(s: &str) -> usize {
    let s = s.strip_prefix('-').unwrap_or(s);
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn decode_iso8601_interval(text: &str) -> DtResult<ItmIn> {
    let mut itm = ItmIn::default();
    // A bare "P" is not an interval.
    if text.len() < 2 {
        return Err(DtErr::BadFormat);
    }
    let mut s = text.strip_prefix('P').ok_or(DtErr::BadFormat)?;
    let mut datepart = true;
    let mut havefield = false;
    while !s.is_empty() {
        if let Some(r) = s.strip_prefix('T') {
            datepart = false;
            havefield = false;
            s = r;
            continue;
        }
        let fieldstart = s;
        let (val, frac, rest) = iso_number(s)?;
        let unit = rest.bytes().next();
        if unit.is_some_and(|u| !u.is_ascii()) {
            return Err(DtErr::BadFormat);
        }
        s = if unit.is_some() { &rest[1..] } else { rest };
        if datepart {
            match unit {
                Some(b'Y') => {
                    itm.add_years(val, 1)?;
                    itm.add_frac_years(frac, 1)?;
                }
                Some(b'M') => {
                    itm.add_months(val)?;
                    itm.add_frac_days(frac, super::DAYS_PER_MONTH)?;
                }
                Some(b'W') => {
                    itm.add_days(val, 7)?;
                    itm.add_frac_days(frac, 7)?;
                }
                Some(b'D') => {
                    itm.add_days(val, 1)?;
                    itm.add_frac_usec(frac, USECS_PER_DAY)?;
                }
                Some(b'T') | None | Some(b'-') => {
                    if unit != Some(b'-') && iso_integer_width(fieldstart) == 8 && !havefield {
                        // PYYYYMMDD
                        itm.add_years(val / 10000, 1)?;
                        itm.add_months((val / 100) % 100)?;
                        itm.add_days(val % 100, 1)?;
                        itm.add_frac_usec(frac, USECS_PER_DAY)?;
                        if unit.is_none() {
                            return Ok(itm);
                        }
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    // PYYYY-MM-DD
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    itm.add_years(val, 1)?;
                    itm.add_frac_years(frac, 1)?;
                    match unit {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            continue;
                        }
                        _ => {}
                    }
                    let (val, frac, rest) = iso_number(s)?;
                    itm.add_months(val)?;
                    itm.add_frac_days(frac, super::DAYS_PER_MONTH)?;
                    s = rest;
                    if s.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = s.strip_prefix('T') {
                        s = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    s = s.strip_prefix('-').ok_or(DtErr::BadFormat)?;
                    let (val, frac, rest) = iso_number(s)?;
                    itm.add_days(val, 1)?;
                    itm.add_frac_usec(frac, USECS_PER_DAY)?;
                    s = rest;
                    if s.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = s.strip_prefix('T') {
                        s = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    return Err(DtErr::BadFormat);
                }
                _ => return Err(DtErr::BadFormat),
            }
        } else {
            match unit {
                Some(b'H') => itm.add_usec(val, frac, USECS_PER_HOUR)?,
                Some(b'M') => itm.add_usec(val, frac, USECS_PER_MINUTE)?,
                Some(b'S') => itm.add_usec(val, frac, USECS_PER_SEC)?,
                None | Some(b':') => {
                    if unit.is_none() && iso_integer_width(fieldstart) == 6 && !havefield {
                        // PThhmmss
                        itm.add_usec(val / 10000, 0.0, USECS_PER_HOUR)?;
                        itm.add_usec((val / 100) % 100, 0.0, USECS_PER_MINUTE)?;
                        itm.add_usec(val % 100, frac, USECS_PER_SEC)?;
                        return Ok(itm);
                    }
                    // PThh:mm:ss
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    itm.add_usec(val, frac, USECS_PER_HOUR)?;
                    if unit.is_none() {
                        return Ok(itm);
                    }
                    let (val, frac, rest) = iso_number(s)?;
                    itm.add_usec(val, frac, USECS_PER_MINUTE)?;
                    s = rest;
                    if s.is_empty() {
                        return Ok(itm);
                    }
                    s = s.strip_prefix(':').ok_or(DtErr::BadFormat)?;
                    let (val, frac, rest) = iso_number(s)?;
                    itm.add_usec(val, frac, USECS_PER_SEC)?;
                    if rest.is_empty() {
                        return Ok(itm);
                    }
                    return Err(DtErr::BadFormat);
                }
                _ => return Err(DtErr::BadFormat),
            }
        }
        havefield = true;
    }
    Ok(itm)
}

impl Interval {
    /// `interval_in` with IntervalStyle postgres and no typmod: PostgreSQL's verbose form
    /// (`1 year 2 mons -3 days 04:05:06.5`, `@ 1 day ago`), SQL standard forms (`1-2`,
    /// `1 2:03:04`), ISO 8601 (`P1Y2M3DT4H5M6S`, `P0001-02-03T04:05:06`). A number without
    /// unit is seconds; fractions of a unit spill into the smaller units (`1.5 days` is
    /// `1 day 12:00:00`, `1.5 months` is `1 mon 15 days`, fractional years stop at months).
    pub fn parse(text: &str) -> PgResult<Interval> {
        const TY: &str = "interval";
        let result = match decode_interval(text) {
            Err(DtErr::BadFormat) => decode_iso8601_interval(text),
            other => other,
        };
        match result {
            // The fields fit but years and months together overflow.
            Ok(itm) => itm.to_interval().ok_or_else(interval_out_of_range),
            Err(e) => Err(e.into_pg(text, TY)),
        }
    }
}
