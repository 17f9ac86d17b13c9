//! PostgreSQL's binary format for values (`typsend` / `typreceive`), for Bind parameters
//! and DataRow columns a client asks for in binary.
//!
//! Every integer and float is big-endian; `bool` is one byte; the character types are
//! their UTF-8 bytes. A parameter's bytes are checked as PostgreSQL checks them: too few
//! is 08P01 `insufficient data left in message`, too many is 22P03 `incorrect binary
//! data format in bind parameter N`, and text must be valid UTF-8 (22021). The date/time
//! types are their integers (`date` int32 days, the timestamps int64 microseconds, both
//! from 2000-01-01; `interval` int64 microseconds, int32 days, int32 months), checked
//! against their ranges as `date_recv` and `timestamp_recv` check them. `numeric` is
//! `numeric_send`'s base-10000 form (int16 ndigits, weight, sign, dscale, then the
//! digits), checked as `numeric_recv` checks it: 22P03 for a bad sign, scale or digit.

use bytes::{BufMut, BytesMut};
use common::datetime::{Date, Interval, Timestamp, TimestampTz};
use common::numeric::Numeric;
use common::{DataType, PgError, PgResult, SqlState, Value};

/// Append `v` as a DataRow column: its length (-1 for NULL), then its bytes.
pub fn put_value(v: &Value, buf: &mut BytesMut) {
    match v {
        Value::Null => buf.put_i32(-1),
        Value::Bool(b) => {
            buf.put_i32(1);
            buf.put_u8(*b as u8);
        }
        Value::Int2(i) => {
            buf.put_i32(2);
            buf.put_i16(*i);
        }
        Value::Int4(i) => {
            buf.put_i32(4);
            buf.put_i32(*i);
        }
        Value::Int8(i) => {
            buf.put_i32(8);
            buf.put_i64(*i);
        }
        Value::Float4(f) => {
            buf.put_i32(4);
            buf.put_f32(*f);
        }
        Value::Float8(f) => {
            buf.put_i32(8);
            buf.put_f64(*f);
        }
        Value::Text(s) | Value::Bpchar(s) => {
            buf.put_i32(s.len() as i32);
            buf.put_slice(s.as_bytes());
        }
        Value::Date(d) => {
            buf.put_i32(4);
            buf.put_slice(&d.to_binary());
        }
        Value::Timestamp(t) => {
            buf.put_i32(8);
            buf.put_slice(&t.to_binary());
        }
        Value::TimestampTz(t) => {
            buf.put_i32(8);
            buf.put_slice(&t.to_binary());
        }
        Value::Interval(i) => {
            buf.put_i32(16);
            buf.put_slice(&i.to_binary());
        }
        Value::Numeric(n) => {
            let mut out = Vec::with_capacity(8 + n.encoded_size());
            n.to_binary(&mut out);
            buf.put_i32(out.len() as i32);
            buf.put_slice(&out);
        }
        Value::Uuid(u) => {
            buf.put_i32(16);
            buf.put_slice(u);
        }
        Value::Bytea(b) => {
            buf.put_i32(b.len() as i32);
            buf.put_slice(b);
        }
        Value::Oid(o) | Value::Reg(_, o) => {
            buf.put_i32(4);
            buf.put_u32(*o);
        }
        Value::Array(a) => {
            // `array_send`: ndim, a has-nulls flag, the element type, each dimension's
            // length and lower bound, then each element with its length (-1 for NULL).
            let mut out = BytesMut::new();
            out.put_i32(a.dims.len() as i32);
            out.put_i32(a.items.iter().any(Value::is_null) as i32);
            out.put_u32(a.elem);
            for d in &a.dims {
                out.put_i32(d.len);
                out.put_i32(d.lower);
            }
            for item in &a.items {
                put_value(item, &mut out);
            }
            buf.put_i32(out.len() as i32);
            buf.put_slice(&out);
        }
    }
}

/// `array_recv`: the layout [`put_value`] writes, each element read as a parameter of
/// the element type.
fn get_array(bytes: &[u8], elem: &DataType, n: usize) -> PgResult<Value> {
    let mut pos = 0usize;
    let int = |pos: &mut usize| -> PgResult<i32> {
        let b = bytes.get(*pos..*pos + 4).ok_or_else(insufficient)?;
        *pos += 4;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let ndim = int(&mut pos)?;
    let _has_nulls = int(&mut pos)?;
    let elem_oid = int(&mut pos)? as u32;
    if ndim < 0 || ndim as usize > common::limits::MAX_ARRAY_DIMS {
        return Err(PgError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            format!("invalid number of dimensions: {ndim}"),
        ));
    }
    if elem_oid != elem.oid() {
        return Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            "wrong element type",
        ));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    let mut count: i64 = 1;
    for _ in 0..ndim {
        let len = int(&mut pos)?;
        let lower = int(&mut pos)?;
        if len < 0 || lower.checked_add(len).is_none() {
            return Err(PgError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "array size exceeds the maximum allowed",
            ));
        }
        count = count.saturating_mul(len as i64);
        dims.push(common::array::Dim { len, lower });
    }
    if ndim == 0 || count == 0 {
        dims.clear();
        count = 0;
    }
    // Every element takes at least its 4-byte length.
    if count > (bytes.len() / 4) as i64 {
        return Err(insufficient());
    }
    let mut items = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let len = int(&mut pos)?;
        if len < 0 {
            items.push(Value::Null);
            continue;
        }
        let body = bytes
            .get(pos..pos + len as usize)
            .ok_or_else(insufficient)?;
        pos += len as usize;
        items.push(get_param(body, elem, n)?);
    }
    if pos != bytes.len() {
        return Err(PgError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            format!("incorrect binary data format in bind parameter {n}"),
        ));
    }
    Ok(Value::Array(std::sync::Arc::new(common::array::Array {
        elem: elem_oid,
        dims,
        items,
    })))
}

fn insufficient() -> PgError {
    PgError::new(
        SqlState::PROTOCOL_VIOLATION,
        "insufficient data left in message",
    )
}

/// The text of a parameter, which must be valid UTF-8 (the only encoding Myriad speaks).
pub fn utf8(bytes: &[u8]) -> PgResult<&str> {
    std::str::from_utf8(bytes).map_err(|e| PgError::invalid_utf8(bytes, e))
}

/// Read parameter `n` (1-based, for errors) of type `ty` from its binary bytes.
pub fn get_param(bytes: &[u8], ty: &DataType, n: usize) -> PgResult<Value> {
    fn fixed<const N: usize>(bytes: &[u8], n: usize) -> PgResult<[u8; N]> {
        if bytes.len() < N {
            return Err(insufficient());
        }
        if bytes.len() > N {
            return Err(PgError::new(
                SqlState::INVALID_BINARY_REPRESENTATION,
                format!("incorrect binary data format in bind parameter {n}"),
            ));
        }
        let mut a = [0u8; N];
        a.copy_from_slice(bytes);
        Ok(a)
    }
    Ok(match ty {
        DataType::Bool => Value::Bool(fixed::<1>(bytes, n)?[0] != 0),
        DataType::Int2 => Value::Int2(i16::from_be_bytes(fixed(bytes, n)?)),
        DataType::Int4 => Value::Int4(i32::from_be_bytes(fixed(bytes, n)?)),
        DataType::Int8 => Value::Int8(i64::from_be_bytes(fixed(bytes, n)?)),
        DataType::Float4 => Value::Float4(f32::from_be_bytes(fixed(bytes, n)?)),
        DataType::Float8 => Value::Float8(f64::from_be_bytes(fixed(bytes, n)?)),
        DataType::Text | DataType::Varchar(_) | DataType::Unknown => {
            Value::Text(utf8(bytes)?.to_string())
        }
        DataType::Bpchar(_) => Value::Bpchar(utf8(bytes)?.to_string()),
        DataType::Date => Value::Date(Date::from_binary(&fixed::<4>(bytes, n)?)?),
        DataType::Timestamp(_) => Value::Timestamp(Timestamp::from_binary(&fixed::<8>(bytes, n)?)?),
        DataType::TimestampTz(_) => {
            Value::TimestampTz(TimestampTz::from_binary(&fixed::<8>(bytes, n)?)?)
        }
        DataType::Interval => Value::Interval(Interval::from_binary(&fixed::<16>(bytes, n)?)?),
        DataType::Numeric(_) => {
            // Bytes left over are PostgreSQL's generic Bind error, which names the
            // parameter; too few, or a bad sign, scale or digit, numeric_recv reports.
            if let [a, b, ..] = *bytes
                && bytes.len() > 8 + 2 * u16::from_be_bytes([a, b]) as usize
            {
                return Err(PgError::new(
                    SqlState::INVALID_BINARY_REPRESENTATION,
                    format!("incorrect binary data format in bind parameter {n}"),
                ));
            }
            Value::Numeric(Numeric::from_binary_typmod(bytes, ty.typmod())?)
        }
        DataType::Uuid => Value::Uuid(fixed::<16>(bytes, n)?),
        DataType::Bytea => Value::Bytea(bytes.to_vec()),
        DataType::Oid => Value::Oid(u32::from_be_bytes(fixed(bytes, n)?)),
        DataType::Reg(kind) => Value::Reg(*kind, u32::from_be_bytes(fixed(bytes, n)?)),
        DataType::Array(a) => get_array(bytes, &a.elem(), n)?,
        DataType::Void => Value::Text(String::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let cases = [
            (Value::Bool(true), DataType::Bool),
            (Value::Int2(-2), DataType::Int2),
            (Value::Int4(70000), DataType::Int4),
            (Value::Int8(-1 << 40), DataType::Int8),
            (Value::Float4(1.5), DataType::Float4),
            (Value::Float8(-0.25), DataType::Float8),
            (Value::Text("héllo".into()), DataType::Text),
            (Value::Date(Date(-36_500)), DataType::Date),
            (
                Value::Timestamp(Timestamp(1 << 50)),
                DataType::Timestamp(None),
            ),
            (
                Value::TimestampTz(TimestampTz::INFINITY),
                DataType::TimestampTz(None),
            ),
            (
                Value::Interval(Interval::new(13, -2, 3_600_000_001)),
                DataType::Interval,
            ),
            (num("-12345.678900"), DataType::Numeric(None)),
            (num("NaN"), DataType::Numeric(None)),
            (num("-Infinity"), DataType::Numeric(None)),
            (num("0.00"), DataType::Numeric(Some((5, 2)))),
            (Value::Uuid(*b"0123456789abcdef"), DataType::Uuid),
            (Value::Bytea(vec![0, 255, 92, 120]), DataType::Bytea),
            (Value::Oid(u32::MAX), DataType::Oid),
            (arr("{{1,NULL},{3,4}}"), DataType::Int4.array().unwrap()),
            (arr("{}"), DataType::Int4.array().unwrap()),
        ];
        for (v, ty) in cases {
            let mut buf = BytesMut::new();
            put_value(&v, &mut buf);
            let len = i32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
            assert_eq!(len, buf.len() - 4);
            let back = get_param(&buf[4..], &ty, 1).unwrap();
            assert_eq!(back, v);
            let cx = common::value::TextContext::detached();
            assert_eq!(back.to_text(&cx), v.to_text(&cx));
        }
    }

    fn arr(t: &str) -> Value {
        let cx = common::value::TextContext::detached();
        Value::parse(t, &DataType::Int4.array().unwrap(), &cx).unwrap()
    }

    fn num(t: &str) -> Value {
        Value::Numeric(Numeric::parse(t).unwrap())
    }

    #[test]
    fn numeric_is_numeric_send() {
        // 1234.5 with dscale 2: ndigits 2, weight 0, sign +, dscale 2, digits 1234 5000.
        let mut buf = BytesMut::new();
        put_value(&num("1234.50"), &mut buf);
        assert_eq!(
            &buf[..],
            &[0, 0, 0, 12, 0, 2, 0, 0, 0, 0, 0, 2, 0x04, 0xd2, 0x13, 0x88]
        );
        let p = |b: &[u8]| get_param(b, &DataType::Numeric(None), 3);
        // A typmod'd parameter rounds as the column would.
        let v = get_param(&buf[4..], &DataType::Numeric(Some((5, 1))), 1).unwrap();
        let cx = common::value::TextContext::detached();
        assert_eq!(v.to_text(&cx).unwrap(), "1234.5");
        let long = p(&[0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            long.message,
            "incorrect binary data format in bind parameter 3"
        );
        assert_eq!(
            p(&[0, 1, 0, 0, 0, 0, 0, 0]).unwrap_err().code,
            SqlState::PROTOCOL_VIOLATION
        );
        assert_eq!(p(&[0, 1]).unwrap_err().code, SqlState::PROTOCOL_VIOLATION);
        let bad_sign = p(&[0, 0, 0, 0, 0x12, 0x34, 0, 0]).unwrap_err();
        assert_eq!(bad_sign.code, SqlState::INVALID_BINARY_REPRESENTATION);
        assert_eq!(
            bad_sign.message,
            "invalid sign in external \"numeric\" value"
        );
        let bad_digit = p(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]).unwrap_err();
        assert_eq!(
            bad_digit.message,
            "invalid digit in external \"numeric\" value"
        );
        let bad_scale = p(&[0, 0, 0, 0, 0, 0, 0xff, 0xff]).unwrap_err();
        assert_eq!(
            bad_scale.message,
            "invalid scale in external \"numeric\" value"
        );
    }

    #[test]
    fn wrong_lengths_fail_as_postgres() {
        let short = get_param(&[0, 1], &DataType::Int4, 1).unwrap_err();
        assert_eq!(short.code, SqlState::PROTOCOL_VIOLATION);
        let long = get_param(&[0; 8], &DataType::Int4, 2).unwrap_err();
        assert_eq!(long.code, SqlState::INVALID_BINARY_REPRESENTATION);
        assert_eq!(
            long.message,
            "incorrect binary data format in bind parameter 2"
        );
        let far = get_param(
            &i64::MAX.wrapping_sub(1).to_be_bytes(),
            &DataType::Timestamp(None),
            1,
        )
        .unwrap_err();
        assert_eq!(far.message, "timestamp out of range");
        let bad = get_param(&[0x61, 0xff], &DataType::Text, 1).unwrap_err();
        assert_eq!(
            bad.message,
            "invalid byte sequence for encoding \"UTF8\": 0xff"
        );
    }
}
