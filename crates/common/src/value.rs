//! One SQL datum, with PostgreSQL's text input (`int4in`, `float8in`, `boolin`, ...) and
//! text output (`int4out`, `float8out`, ...).
//!
//! A [`Value`] does not carry its declared type: the binder knows every expression's
//! [`DataType`] and the executor only ever combines values of matching types. Character
//! types share one representation except `char(n)` ([`Value::Bpchar`]), whose trailing
//! blanks are insignificant in comparisons and dropped when it turns into text.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::array::Array;

use crate::datetime::{self, Date, Interval, Timestamp, TimestampTz};
use crate::error::{PgError, PgResult, SqlState};
use crate::numeric::Numeric;
use crate::types::DataType;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    /// `text` and `varchar`.
    Text(String),
    /// `char(n)`, stored blank-padded to its declared length.
    Bpchar(String),
    Date(Date),
    Timestamp(Timestamp),
    TimestampTz(TimestampTz),
    Interval(Interval),
    /// `numeric`: equal values compare equal whatever their display scale (`1.0 = 1.00`).
    Numeric(Numeric),
    /// `uuid`: its 16 bytes, compared bytewise (`uuid_cmp`).
    Uuid([u8; 16]),
    /// `bytea`: compared bytewise, a prefix first (`byteacmp`).
    Bytea(Vec<u8>),
    /// `oid`: unsigned, compared as such.
    Oid(u32),
    /// `regclass`, `regtype`, `regnamespace`: an OID that prints as a name.
    Reg(RegKind, u32),
    /// An array of any element type (shared: rows are cloned more than arrays change).
    Array(Arc<Array>),
}

// Rows are vectors of values: keep growth deliberate. `Numeric` (a digit vector, a
// weight, a scale and a sign: 40 bytes) is the largest variant; boxing it would save 8
// bytes per value at the price of a second allocation per numeric.
const _: () = assert!(std::mem::size_of::<Value>() == 40);

/// What an OID of a `reg*` type names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// `regclass`: a relation.
    Class,
    /// `regtype`: a type.
    Type,
    /// `regnamespace`: a schema.
    Namespace,
}

impl RegKind {
    pub fn type_oid(self) -> crate::ids::Oid {
        use crate::types::oids;
        match self {
            RegKind::Class => oids::REGCLASS,
            RegKind::Type => oids::REGTYPE,
            RegKind::Namespace => oids::REGNAMESPACE,
        }
    }

    pub fn type_name(self) -> &'static str {
        match self {
            RegKind::Class => "regclass",
            RegKind::Type => "regtype",
            RegKind::Namespace => "regnamespace",
        }
    }
}

/// The catalog lookups behind the `reg*` types' input and output functions: a name for
/// an OID, and an OID for a name (the text as the user wrote it, which the catalog
/// side parses: a possibly qualified, possibly quoted name, or a type name).
pub trait RegCatalog {
    /// `None` when nothing has that OID (the output then shows the number).
    fn reg_name(&self, kind: RegKind, oid: u32) -> Option<String>;
    /// The object's OID, or PostgreSQL's error for a name that names nothing.
    fn reg_oid(&self, kind: RegKind, name: &str) -> PgResult<u32>;
}

/// What text input and output of values read of the session, as PostgreSQL's type
/// I/O functions read its per-backend globals: the clock and `TimeZone` (date/time input
/// and `timestamptz` output) and the catalog (`reg*` names). Made by the session for each
/// statement and passed down, never kept per thread.
#[derive(Clone)]
pub struct TextContext {
    pub clock: datetime::SessionClock,
    /// `None`: `reg*` output shows numbers and input of a name fails.
    pub catalog: Option<Arc<dyn RegCatalog + Send + Sync>>,
}

impl TextContext {
    /// Outside any session (tests, background work): the wall clock, UTC, no catalog.
    pub fn detached() -> TextContext {
        TextContext {
            clock: datetime::SessionClock::detached(),
            catalog: None,
        }
    }
}

impl Default for TextContext {
    fn default() -> TextContext {
        TextContext::detached()
    }
}

impl std::fmt::Debug for TextContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextContext")
            .field("clock", &self.clock)
            .field("catalog", &self.catalog.is_some())
            .finish()
    }
}

/// `regclassout` and friends: the name, or the number when nothing has that OID (`-`
/// for 0).
fn reg_out(kind: RegKind, oid: u32, cx: &TextContext) -> String {
    if oid == 0 {
        return "-".into();
    }
    cx.catalog
        .as_ref()
        .and_then(|c| c.reg_name(kind, oid))
        .unwrap_or_else(|| oid.to_string())
}

/// `regclassin` and friends: a number is taken as the OID itself, `-` is 0, anything
/// else is looked up by name.
fn reg_in(kind: RegKind, text: &str, cx: &TextContext) -> PgResult<u32> {
    let t = text.trim_matches(is_pg_space);
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return parse_oid(t);
    }
    if t == "-" {
        return Ok(0);
    }
    match &cx.catalog {
        Some(c) => c.reg_oid(kind, t),
        None => Err(PgError::internal("no catalog to look up a name in")),
    }
}

/// `oidin`: an unsigned 32-bit number; as in PostgreSQL, a negative one down to -2^31
/// wraps (`'-1'::oid` is 4294967295).
fn parse_oid(text: &str) -> PgResult<u32> {
    let ty = DataType::Oid;
    let v = parse_int(text, &ty)?;
    if (i32::MIN as i64..=u32::MAX as i64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(out_of_range_input(text, &ty))
    }
}

/// PostgreSQL's `uuid_in`: 32 hex digits, either case, optionally in braces, with a
/// hyphen allowed after any group of four digits (not at the end).
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    let (mut i, braces) = match b.first() {
        Some(b'{') => (1, true),
        _ => (0, false),
    };
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 16];
    for (k, byte) in out.iter_mut().enumerate() {
        let hi = hex(*b.get(i)?)?;
        let lo = hex(*b.get(i + 1)?)?;
        *byte = hi << 4 | lo;
        i += 2;
        if b.get(i) == Some(&b'-') && k % 2 == 1 && k < 15 {
            i += 1;
        }
    }
    if braces {
        if b.get(i) != Some(&b'}') {
            return None;
        }
        i += 1;
    }
    (i == b.len()).then_some(out)
}

/// PostgreSQL's `byteain`: `\x` and hex digit pairs (blanks between pairs allowed), or
/// the escape format: `\\` for a backslash, `\ooo` an octal byte, anything else itself.
pub fn parse_bytea(text: &str) -> PgResult<Vec<u8>> {
    let b = text.as_bytes();
    let invalid = || {
        PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type bytea",
        )
    };
    if let Some(hex) = b.strip_prefix(b"\\x") {
        let mut out = Vec::with_capacity(hex.len() / 2);
        let mut i = 0;
        let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        while i < hex.len() {
            if hex[i].is_ascii_whitespace() {
                i += 1;
                continue;
            }
            let hi = digit(hex[i]).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid hexadecimal digit: \"{}\"", hex[i] as char),
                )
            })?;
            let lo = match hex.get(i + 1) {
                Some(&c) => digit(c).ok_or_else(|| {
                    PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid hexadecimal digit: \"{}\"", c as char),
                    )
                })?,
                None => {
                    return Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "invalid hexadecimal data: odd number of digits",
                    ));
                }
            };
            out.push(hi << 4 | lo);
            i += 2;
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if let [d0 @ b'0'..=b'3', d1 @ b'0'..=b'7', d2 @ b'0'..=b'7'] =
            b.get(i + 1..i + 4).unwrap_or_default()
        {
            out.push((d0 - b'0') << 6 | (d1 - b'0') << 3 | (d2 - b'0'));
            i += 4;
        } else {
            return Err(invalid());
        }
    }
    Ok(out)
}

/// `byteaout` with `bytea_output = hex`: `\x` and lower-case hex digits.
pub fn format_bytea(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * b.len());
    s.push_str("\\x");
    for byte in b {
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// `uuid_out`: lower-case hex in 8-4-4-4-12 groups.
pub fn format_uuid(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (k, byte) in u.iter().enumerate() {
        if matches!(k, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

impl Value {
    /// Whether two values have the same stored form, not only compare equal (PostgreSQL's
    /// `datumIsEqual`): `1.0` and `1.00`, `0` and `-0` (floats), `'1 mon'` and
    /// `'30 days'` are equal and not identical. What a HOT update asks of an index's
    /// entry, which an index-only scan returns as the row's value (access rule 11).
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float4(a), Value::Float4(b)) => a.to_bits() == b.to_bits(),
            (Value::Float8(a), Value::Float8(b)) => a.to_bits() == b.to_bits(),
            (Value::Numeric(a), Value::Numeric(b)) => a == b && a.scale() == b.scale(),
            (Value::Interval(a), Value::Interval(b)) => {
                (a.months, a.days, a.micros) == (b.months, b.days, b.micros)
            }
            (Value::Array(a), Value::Array(b)) => {
                a.elem == b.elem
                    && a.dims == b.dims
                    && a.items.len() == b.items.len()
                    && a.items.iter().zip(&b.items).all(|(x, y)| x.identical(y))
            }
            _ => self == other,
        }
    }

    /// Whether this is the boolean true (a condition that passes: false and NULL do not).
    #[inline]
    pub fn is_true(&self) -> bool {
        matches!(self, Value::Bool(true))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Integer value of any integer variant.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int2(v) => Some(*v as i64),
            Value::Int4(v) => Some(*v as i64),
            Value::Int8(v) => Some(*v),
            Value::Oid(v) | Value::Reg(_, v) => Some(*v as i64),
            _ => None,
        }
    }

    /// Numeric value of any numeric variant, widened to f64 (a `numeric` beyond the
    /// doubles' range becomes an infinity or zero).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float4(v) => Some(*v as f64),
            Value::Float8(v) => Some(*v),
            Value::Numeric(n) => Some(n.to_f64().unwrap_or_else(|_| {
                if n.abs() < Numeric::from(1i64) {
                    0.0
                } else if n.is_negative() {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            })),
            other => other.as_i64().map(|v| v as f64),
        }
    }

    /// The exact value of an integer or `numeric` variant, as a `numeric`.
    pub fn as_numeric(&self) -> Option<Numeric> {
        match self {
            Value::Numeric(n) => Some(n.clone()),
            other => other.as_i64().map(Numeric::from),
        }
    }

    /// The string of a character value; for `char(n)` without its trailing blanks.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            Value::Bpchar(s) => Some(s.trim_end_matches(' ')),
            _ => None,
        }
    }

    /// The text output function: `None` for NULL. `cx`: the session's zone and catalog.
    pub fn to_text(&self, cx: &TextContext) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => if *b { "t" } else { "f" }.to_string(),
            Value::Int2(v) => v.to_string(),
            Value::Int4(v) => v.to_string(),
            Value::Int8(v) => v.to_string(),
            Value::Float4(v) => format_float(*v as f64, FloatKind::Float4),
            Value::Float8(v) => format_float(*v, FloatKind::Float8),
            Value::Text(s) | Value::Bpchar(s) => s.clone(),
            Value::Date(d) => d.to_string(),
            Value::Timestamp(t) => t.to_string(),
            // Shown in the session's zone (`timestamptz_out` reads the TimeZone setting).
            Value::TimestampTz(t) => t.to_text(&cx.clock.time_zone),
            Value::Interval(i) => i.to_string(),
            Value::Numeric(n) => n.to_string(),
            Value::Uuid(u) => format_uuid(u),
            Value::Bytea(b) => format_bytea(b),
            Value::Oid(o) => o.to_string(),
            Value::Reg(kind, o) => reg_out(*kind, *o, cx),
            Value::Array(a) => a.to_text(cx),
        })
    }

    /// Total order between two non-NULL values of comparable types, as PostgreSQL's btree
    /// comparison functions define it: numbers by value (NaN above everything, equal to
    /// itself), strings bytewise (the C collation), `char(n)` ignoring trailing blanks,
    /// `false < true`. Callers deal with NULL.
    pub fn cmp_non_null(&self, other: &Value) -> Ordering {
        use Value::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            // The derived orders are the SQL ones (infinities are the extreme integers;
            // intervals compare their 30-day-month span): see `datetime`'s invariants.
            (Date(a), Date(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            // A date as the timestamp of its midnight (`date_cmp_timestamp`): the
            // planner compares a date column's statistics with a timestamp constant.
            (Date(d), Timestamp(t)) => date_micros(*d).cmp(&t.0),
            (Timestamp(t), Date(d)) => t.0.cmp(&date_micros(*d)),
            (TimestampTz(a), TimestampTz(b)) => a.cmp(b),
            (Interval(a), Interval(b)) => a.cmp(b),
            // Ignoring display scale; NaN above Infinity (`numeric`'s btree order).
            (Numeric(a), Numeric(b)) => a.cmp(b),
            (Uuid(a), Uuid(b)) => a.cmp(b),
            (Bytea(a), Bytea(b)) => a.cmp(b),
            (Array(a), Array(b)) => a.array_cmp(b),
            (Text(_) | Bpchar(_), Text(_) | Bpchar(_)) => self
                .as_str()
                .unwrap_or("")
                .cmp(other.as_str().unwrap_or("")),
            (Float4(_) | Float8(_), _) | (_, Float4(_) | Float8(_)) => {
                cmp_f64(self.as_f64().unwrap_or(0.0), other.as_f64().unwrap_or(0.0))
            }
            (Numeric(_), _) | (_, Numeric(_)) => match (self.as_numeric(), other.as_numeric()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => self.kind_rank().cmp(&other.kind_rank()),
            },
            _ => match (self.as_i64(), other.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                // Mismatched kinds never reach here from bound expressions; order them by
                // kind so that sorting stays a total order even if they did.
                _ => self.kind_rank().cmp(&other.kind_rank()),
            },
        }
    }

    /// Comparison for sorting and grouping: NULLs equal to each other and greater than
    /// everything (PostgreSQL's default `NULLS LAST` for ascending order).
    pub fn cmp_nulls_last(&self, other: &Value) -> Ordering {
        match (self.is_null(), other.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self.cmp_non_null(other),
        }
    }

    fn kind_rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => 2,
            Value::Float4(_) | Value::Float8(_) => 3,
            Value::Text(_) | Value::Bpchar(_) => 4,
            Value::Date(_) => 5,
            Value::Timestamp(_) => 6,
            Value::TimestampTz(_) => 7,
            Value::Interval(_) => 8,
            Value::Numeric(_) => 9,
            Value::Uuid(_) => 10,
            Value::Bytea(_) => 11,
            Value::Oid(_) | Value::Reg(..) => 12,
            Value::Array(_) => 13,
        }
    }

    /// The type input function: read `text` as a value of type `ty`, applying the type's
    /// length modifier as an assignment would (PostgreSQL's `*in` functions). `cx`: the
    /// session's clock, zone and catalog.
    pub fn parse(text: &str, ty: &DataType, cx: &TextContext) -> PgResult<Value> {
        match ty {
            DataType::Bool => parse_bool(text)
                .map(Value::Bool)
                .ok_or_else(|| invalid_input(text, &DataType::Bool)),
            DataType::Int2 => {
                let v = parse_int(text, ty)?;
                i16::try_from(v)
                    .map(Value::Int2)
                    .map_err(|_| out_of_range_input(text, ty))
            }
            DataType::Int4 => {
                let v = parse_int(text, ty)?;
                i32::try_from(v)
                    .map(Value::Int4)
                    .map_err(|_| out_of_range_input(text, ty))
            }
            DataType::Int8 => parse_int(text, ty).map(Value::Int8),
            DataType::Float4 => {
                let v = parse_float(text, ty)?;
                let f = v as f32;
                if f.is_infinite() && v.is_finite() || (f == 0.0 && v != 0.0) {
                    return Err(PgError::new(
                        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("\"{}\" is out of range for type real", text.trim()),
                    ));
                }
                Ok(Value::Float4(f))
            }
            DataType::Float8 => parse_float(text, ty).map(Value::Float8),
            DataType::Text | DataType::Unknown => Ok(Value::Text(text.to_string())),
            // Any text reads as the one void value, as PostgreSQL's void_in.
            DataType::Void => Ok(Value::Text(String::new())),
            // 'now', 'today' and input without a zone read the session clock and zone.
            DataType::Date => Date::parse(text, &cx.clock.context()).map(Value::Date),
            DataType::Timestamp(p) => Timestamp::parse(text, &cx.clock.context())?
                .with_precision(*p)
                .map(Value::Timestamp),
            DataType::TimestampTz(p) => TimestampTz::parse(text, &cx.clock.context())?
                .with_precision(*p)
                .map(Value::TimestampTz),
            DataType::Interval => Interval::parse(text).map(Value::Interval),
            DataType::Numeric(_) => Numeric::parse_typmod(text, ty.typmod()).map(Value::Numeric),
            DataType::Uuid => parse_uuid(text)
                .map(Value::Uuid)
                .ok_or_else(|| invalid_input(text, &DataType::Uuid)),
            DataType::Bytea => parse_bytea(text).map(Value::Bytea),
            DataType::Varchar(_) | DataType::Bpchar(_) => {
                Value::Text(text.to_string()).coerce_char_length(ty, false)
            }
            DataType::Oid => parse_oid(text).map(Value::Oid),
            DataType::Reg(kind) => reg_in(*kind, text, cx).map(|o| Value::Reg(*kind, o)),
            DataType::Array(a) => {
                crate::array::parse(text, &a.elem(), cx).map(|a| Value::Array(Arc::new(a)))
            }
        }
    }

    /// Apply a character type's length to a string value: `varchar(n)` truncates, `char(n)`
    /// truncates and blank-pads. Too-long input is an error unless the excess is all
    /// blanks or `explicit` is set (an explicit cast truncates silently, as in PostgreSQL).
    pub fn coerce_char_length(self, ty: &DataType, explicit: bool) -> PgResult<Value> {
        let (s, from_bpchar) = match self {
            Value::Null => return Ok(Value::Null),
            Value::Text(s) => (s, false),
            Value::Bpchar(s) => (s, true),
            other => return Ok(other),
        };
        let (limit, pad) = match ty {
            DataType::Varchar(n) => (*n, false),
            DataType::Bpchar(n) => (*n, true),
            DataType::Text if from_bpchar => {
                return Ok(Value::Text(s.trim_end_matches(' ').to_string()));
            }
            DataType::Text => return Ok(Value::Text(s)),
            _ => return Ok(Value::Text(s)),
        };
        let Some(limit) = limit else {
            return Ok(if pad {
                Value::Bpchar(s)
            } else {
                Value::Text(s)
            });
        };
        let limit = limit as usize;
        let mut out = match s.char_indices().nth(limit) {
            None => s,
            Some((cut, _)) => {
                if !explicit && s[cut..].chars().any(|c| c != ' ') {
                    return Err(PgError::new(
                        SqlState::STRING_DATA_RIGHT_TRUNCATION,
                        format!("value too long for type {}", ty.name()),
                    ));
                }
                s[..cut].to_string()
            }
        };
        if pad {
            let have = out.chars().count();
            out.extend(std::iter::repeat_n(' ', limit.saturating_sub(have)));
            Ok(Value::Bpchar(out))
        } else {
            Ok(Value::Text(out))
        }
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

fn invalid_input(text: &str, ty: &DataType) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {}: \"{}\"", ty.name(), text),
    )
}

fn out_of_range_input(text: &str, ty: &DataType) -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value \"{}\" is out of range for type {}", text, ty.name()),
    )
}

/// PostgreSQL's whitespace for type input (`scanner_isspace`).
fn is_pg_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn parse_int(text: &str, ty: &DataType) -> PgResult<i64> {
    let t = text.trim_matches(is_pg_space);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid_input(text, ty));
    }
    let mut v: i64 = 0;
    for b in digits.bytes() {
        let d = (b - b'0') as i64;
        v = v
            .checked_mul(10)
            .and_then(|v| {
                if neg {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            })
            .ok_or_else(|| out_of_range_input(text, ty))?;
    }
    Ok(v)
}

fn parse_float(text: &str, ty: &DataType) -> PgResult<f64> {
    let t = text.trim_matches(is_pg_space);
    let lower = t.to_ascii_lowercase();
    let special = match lower.as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "infinity" | "+infinity" | "inf" | "+inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    };
    if let Some(v) = special {
        return Ok(v);
    }
    // Rust's parser accepts exactly the decimal forms strtod does, plus words handled above;
    // reject its extra spellings ("infinity" inside other text never reaches here).
    let valid_chars = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    match t.parse::<f64>() {
        Ok(v) if valid_chars && !t.is_empty() => {
            if v.is_infinite() {
                Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("\"{}\" is out of range for type {}", t, ty.name()),
                ))
            } else {
                Ok(v)
            }
        }
        _ => Err(invalid_input(text, ty)),
    }
}

/// PostgreSQL's `parse_bool`, shared by `boolin`, settings and storage parameters:
/// true/false, yes/no, on/off, 1/0, and unique prefixes of the words (`t`, `of`).
pub fn parse_bool(text: &str) -> Option<bool> {
    let t = text.trim_matches(is_pg_space).to_ascii_lowercase();
    let matches_prefix = |word: &str, min: usize| t.len() >= min && word.starts_with(t.as_str());
    if matches_prefix("true", 1) || matches_prefix("yes", 1) || t == "on" || t == "1" {
        Some(true)
    } else if matches_prefix("false", 1)
        || matches_prefix("no", 1)
        || matches_prefix("off", 2)
        || t == "0"
    {
        Some(false)
    } else {
        None
    }
}

#[derive(Clone, Copy)]
enum FloatKind {
    Float4,
    Float8,
}

/// `float8out` / `float4out` with PostgreSQL 12+'s default `extra_float_digits = 1`: the
/// shortest string that reads back to the same value, in exponent form when the decimal
/// exponent is below -4 or at least the type's precision (15 digits for float8, 6 for float4).
fn format_float(v: f64, kind: FloatKind) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` prints the shortest round-trip digits: "-1.2345e-7".
    let sci = match kind {
        FloatKind::Float4 => format!("{:e}", v as f32),
        FloatKind::Float8 => format!("{v:e}"),
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let precision = match kind {
        FloatKind::Float4 => 6,
        FloatKind::Float8 => 15,
    };
    if exp < -4 || exp >= precision {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    } else if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        format!("{sign}0.{zeros}{digits}")
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
        } else {
            format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
        }
    }
}

/// `d`'s midnight as a timestamp's microseconds; past the timestamp range, beyond
/// every timestamp on its side.
fn date_micros(d: crate::datetime::Date) -> i64 {
    match d.to_timestamp() {
        Ok(t) => t.0,
        Err(_) if d.0 < 0 => i64::MIN,
        Err(_) => i64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> TextContext {
        TextContext::detached()
    }

    fn f8(v: f64) -> String {
        Value::Float8(v).to_text(&cx()).unwrap()
    }

    #[test]
    fn float_output_matches_postgres() {
        assert_eq!(f8(1.5), "1.5");
        assert_eq!(f8(100.0), "100");
        assert_eq!(f8(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(f8(1e15), "1e+15");
        assert_eq!(f8(123456789012345.0), "123456789012345");
        assert_eq!(f8(0.0001), "0.0001");
        assert_eq!(f8(0.00001), "1e-05");
        assert_eq!(f8(-2.5e-10), "-2.5e-10");
        assert_eq!(f8(f64::INFINITY), "Infinity");
        assert_eq!(f8(-0.0), "-0");
        assert_eq!(
            Value::Float4(1234567.0).to_text(&cx()).unwrap(),
            "1.234567e+06"
        );
        assert_eq!(Value::Float4(0.1).to_text(&cx()).unwrap(), "0.1");
    }

    #[test]
    fn int_input_errors() {
        assert_eq!(
            Value::parse(" 42 ", &DataType::Int4, &cx()),
            Ok(Value::Int4(42))
        );
        assert_eq!(
            Value::parse("-32768", &DataType::Int2, &cx()),
            Ok(Value::Int2(-32768))
        );
        let e = Value::parse("abc", &DataType::Int4, &cx()).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION);
        assert_eq!(e.message, "invalid input syntax for type integer: \"abc\"");
        let e = Value::parse("3000000000", &DataType::Int4, &cx()).unwrap_err();
        assert_eq!(e.code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        assert_eq!(
            e.message,
            "value \"3000000000\" is out of range for type integer"
        );
        assert!(Value::parse("-9223372036854775808", &DataType::Int8, &cx()).is_ok());
    }

    #[test]
    fn bool_input() {
        for t in ["t", "TRUE", "yes", "on", "1", " tr "] {
            assert_eq!(
                Value::parse(t, &DataType::Bool, &cx()),
                Ok(Value::Bool(true)),
                "{t}"
            );
        }
        for t in ["f", "false", "no", "off", "0"] {
            assert_eq!(
                Value::parse(t, &DataType::Bool, &cx()),
                Ok(Value::Bool(false)),
                "{t}"
            );
        }
        assert!(Value::parse("o", &DataType::Bool, &cx()).is_err());
        assert!(Value::parse("maybe", &DataType::Bool, &cx()).is_err());
    }

    #[test]
    fn char_lengths() {
        let v = Value::parse("ab", &DataType::Bpchar(Some(4)), &cx()).unwrap();
        assert_eq!(v, Value::Bpchar("ab  ".into()));
        assert_eq!(v.as_str(), Some("ab"));
        let e = Value::parse("abcde", &DataType::Varchar(Some(3)), &cx()).unwrap_err();
        assert_eq!(e.code, SqlState::STRING_DATA_RIGHT_TRUNCATION);
        assert_eq!(e.message, "value too long for type character varying(3)");
        assert_eq!(
            Value::parse("abc   ", &DataType::Varchar(Some(3)), &cx()),
            Ok(Value::Text("abc".into()))
        );
        assert_eq!(
            Value::Text("abcde".into()).coerce_char_length(&DataType::Varchar(Some(3)), true),
            Ok(Value::Text("abc".into()))
        );
    }

    #[test]
    fn datetime_text_round_trip_in_the_session_zone() {
        use crate::datetime::{SessionClock, TimeZone, TimestampTz};
        let v = Value::parse(
            "2024-02-29 13:45:07.5+00",
            &DataType::TimestampTz(None),
            &cx(),
        )
        .unwrap();
        // Outside a session: UTC.
        assert_eq!(v.to_text(&cx()).unwrap(), "2024-02-29 13:45:07.5+00");
        let east = TextContext {
            clock: SessionClock {
                transaction_start: TimestampTz(0),
                statement_start: TimestampTz(0),
                time_zone: TimeZone::fixed(-5 * 3600),
            },
            catalog: None,
        };
        assert_eq!(v.to_text(&east).unwrap(), "2024-02-29 08:45:07.5-05");
        // Two sessions' contexts side by side on one thread: each its own zone.
        assert_eq!(v.to_text(&cx()).unwrap(), "2024-02-29 13:45:07.5+00");
        // Input without a zone is read in the session's zone; 'today' from its clock.
        let local =
            Value::parse("2024-02-29 08:45:07.5", &DataType::TimestampTz(None), &east).unwrap();
        assert_eq!(local, v);
        assert_eq!(
            Value::parse("today", &DataType::Date, &east)
                .unwrap()
                .to_text(&east)
                .unwrap(),
            "1999-12-31"
        );
        for (text, ty) in [
            ("2024-02-29", DataType::Date),
            ("2024-02-29 00:00:01", DataType::Timestamp(None)),
            ("1 year 2 mons -3 days +04:05:06", DataType::Interval),
        ] {
            assert_eq!(
                Value::parse(text, &ty, &cx())
                    .unwrap()
                    .to_text(&cx())
                    .unwrap(),
                text
            );
        }
        let e = Value::parse("2024-02-30", &DataType::Date, &cx()).unwrap_err();
        assert_eq!(e.code, crate::datetime::DATETIME_FIELD_OVERFLOW);
    }

    #[test]
    fn datetime_ordering() {
        let iv = |t: &str| Value::parse(t, &DataType::Interval, &cx()).unwrap();
        assert_eq!(iv("1 mon").cmp_non_null(&iv("30 days")), Ordering::Equal);
        assert_eq!(iv("25 hours").cmp_non_null(&iv("1 day")), Ordering::Greater);
        let d = |t: &str| Value::parse(t, &DataType::Date, &cx()).unwrap();
        assert_eq!(
            d("-infinity").cmp_non_null(&d("4713-01-01 BC")),
            Ordering::Less
        );
        assert_eq!(
            d("2024-01-02").cmp_non_null(&d("2024-01-01")),
            Ordering::Greater
        );
    }

    #[test]
    fn numeric_values() {
        let num = |t: &str| Value::parse(t, &DataType::Numeric(None), &cx()).unwrap();
        // Equal whatever the scale; printed with the scale it has.
        assert_eq!(num("1.0"), num("1.00"));
        assert_eq!(num("1.0").cmp_non_null(&num("1.00")), Ordering::Equal);
        assert_eq!(num("1.50").to_text(&cx()).unwrap(), "1.50");
        // Numeric order, NaN above Infinity, and against integers by value.
        assert_eq!(num("2").cmp_non_null(&num("10")), Ordering::Less);
        assert_eq!(num("-1").cmp_non_null(&num("0")), Ordering::Less);
        assert_eq!(num("NaN").cmp_non_null(&num("Infinity")), Ordering::Greater);
        assert_eq!(num("2.5").cmp_non_null(&Value::Int4(2)), Ordering::Greater);
        assert_eq!(Value::Int8(3).cmp_non_null(&num("3.000")), Ordering::Equal);
        // A typmod rounds on input; its violations are PostgreSQL's errors.
        let t = DataType::Numeric(Some((5, 2)));
        assert_eq!(
            Value::parse("1.005", &t, &cx())
                .unwrap()
                .to_text(&cx())
                .unwrap(),
            "1.01"
        );
        let e = Value::parse("1000", &t, &cx()).unwrap_err();
        assert_eq!(e.code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        assert_eq!(e.message, "numeric field overflow");
        let e = Value::parse("1.2.3", &DataType::Numeric(None), &cx()).unwrap_err();
        assert_eq!(
            e.message,
            "invalid input syntax for type numeric: \"1.2.3\""
        );
        assert_eq!(num("1e400").as_f64(), Some(f64::INFINITY));
        assert_eq!(num("-1e-400").as_f64(), Some(0.0));
        assert_eq!(num("0.25").as_f64(), Some(0.25));
    }

    #[test]
    fn ordering() {
        assert_eq!(
            Value::Bpchar("a  ".into()).cmp_non_null(&Value::Text("a".into())),
            Ordering::Equal
        );
        assert_eq!(
            Value::Float8(f64::NAN).cmp_non_null(&Value::Float8(f64::INFINITY)),
            Ordering::Greater
        );
        assert_eq!(
            Value::Null.cmp_nulls_last(&Value::Int4(1)),
            Ordering::Greater
        );
        assert_eq!(
            Value::Int2(3).cmp_non_null(&Value::Int8(2)),
            Ordering::Greater
        );
    }
}
