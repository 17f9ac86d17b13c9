//! PostgreSQL's hash partitioning, bit for bit: which partition of a `PARTITION BY HASH`
//! table a row belongs to.
//!
//! A hash partition is chosen by `row_hash % modulus == remainder`, where the row hash is
//! built from the 64-bit "extended" hash function of each key column's type, seeded with
//! [`HASH_PARTITION_SEED`], and folded together with [`hash_combine64`] (NULL columns are
//! skipped). The functions here follow PostgreSQL 15's (`compute_partition_hash_value` in
//! `partbounds.c`, `hash_bytes_extended` and `hash_bytes_uint32_extended` in
//! `common/hashfn.c`, Bob Jenkins' lookup3 hash, and the per-type `hash*extended`
//! functions), so that Myriad puts every row in the partition PostgreSQL would: tables
//! migrated from PostgreSQL keep their layout and `satisfies_hash_partition` agrees.
//!
//! Byte order: PostgreSQL hashes the in-memory bytes of some types (`float8`, `numeric`
//! digits), so its results depend on the machine's byte order. These functions give the
//! little-endian results (x86-64, AArch64), which is where PostgreSQL almost always runs.
//!
//! Supported types: `bool`, `int2`, `int4`, `int8`, `float4`, `float8`, `text`,
//! `varchar`, `char(n)`/`bpchar`, `date`, `timestamp`, `timestamptz`, `interval`,
//! `numeric`, `uuid`, `bytea`, `oid` and the `reg*` types. Arrays are not (PostgreSQL's
//! `hash_array_extended` combines element hashes in its own way); neither are text values
//! under a nondeterministic collation, which PostgreSQL hashes by their ICU sort key.

use crate::value::Value;

/// The seed PostgreSQL passes to every extended hash function when partitioning
/// (`HASH_PARTITION_SEED`).
pub const HASH_PARTITION_SEED: u64 = 0x7A5B_2236_7996_DCFD;

/// The starting value of lookup3's three state words, before the key length is added.
const JENKINS_INIT: u32 = 0x9e37_79b9_u32.wrapping_add(3_923_095);

/// The bit pattern of the one NaN PostgreSQL hashes (`get_float8_nan()`: every NaN
/// compares equal in SQL, so all are hashed as this one).
const CANONICAL_NAN_BITS: u64 = 0x7ff8_0000_0000_0000;

/// Combine two 64-bit hashes, order-sensitively (PostgreSQL's `hash_combine64`).
#[inline]
pub fn hash_combine64(a: u64, b: u64) -> u64 {
    a ^ b
        .wrapping_add(0x49a0_f4dd_15e5_a8e3)
        .wrapping_add(a << 54)
        .wrapping_add(a >> 7)
}

/// lookup3's reversible mixing of three words: six rounds, each of the form
/// `x -= y; x ^= y.rotate_left(r); y += z` over a rotation of the three words.
#[inline]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's final avalanche of three words into `c` (and `b`).
#[inline]
fn finalize(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// Start the state for a key of `len` bytes; a nonzero seed is mixed in as if it were a
/// first 12-byte block (its high half, its low half, then zero).
#[inline]
fn seeded_state(len: u32, seed: u64) -> (u32, u32, u32) {
    let init = JENKINS_INIT.wrapping_add(len);
    let (mut a, mut b, mut c) = (init, init, init);
    if seed != 0 {
        a = a.wrapping_add((seed >> 32) as u32);
        b = b.wrapping_add(seed as u32);
        mix(&mut a, &mut b, &mut c);
    }
    (a, b, c)
}

/// Little-endian word of up to four bytes (missing high bytes read as zero).
#[inline]
fn le_word(bytes: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w[..bytes.len()].copy_from_slice(bytes);
    u32::from_le_bytes(w)
}

/// 64-bit lookup3 hash of `k` with `seed` (PostgreSQL's `hash_bytes_extended`, which
/// `hash_any_extended` calls): `b` of the final state in the high half, `c` in the low.
pub fn hash_bytes_extended(k: &[u8], seed: u64) -> u64 {
    // PostgreSQL takes the length as an `int`; keys are far below 4 GiB.
    let (mut a, mut b, mut c) = seeded_state(k.len() as u32, seed);
    let mut blocks = k.chunks_exact(12);
    for block in &mut blocks {
        a = a.wrapping_add(le_word(&block[0..4]));
        b = b.wrapping_add(le_word(&block[4..8]));
        c = c.wrapping_add(le_word(&block[8..12]));
        mix(&mut a, &mut b, &mut c);
    }
    // The last 0..=11 bytes: up to four into `a`, four into `b`, and three into `c`
    // above its lowest byte (which lookup3 keeps for the length).
    let tail = blocks.remainder();
    let part = |from: usize, to: usize| &tail[from.min(tail.len())..to.min(tail.len())];
    a = a.wrapping_add(le_word(part(0, 4)));
    b = b.wrapping_add(le_word(part(4, 8)));
    c = c.wrapping_add(le_word(part(8, 11)) << 8);
    finalize(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// 64-bit hash of one 32-bit word with `seed` (PostgreSQL's `hash_bytes_uint32_extended`,
/// behind `hash_uint32_extended`). Not the same as hashing the word's four bytes.
pub fn hash_uint32_extended(k: u32, seed: u64) -> u64 {
    let (mut a, mut b, mut c) = seeded_state(4, seed);
    a = a.wrapping_add(k);
    finalize(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// `hashint8extended`: an `int8` folded to 32 bits so that it hashes as the equal `int4`
/// would (the high half, or its complement for a negative value, xored into the low).
fn hash_int8(v: i64, seed: u64) -> u64 {
    let lo = v as u32;
    let hi = (v >> 32) as u32;
    let folded = lo ^ if v >= 0 { hi } else { !hi };
    hash_uint32_extended(folded, seed)
}

/// `hashfloat8extended` (and `hashfloat4extended`, which widens to `float8` first):
/// both zeros give the seed itself, every NaN hashes as the canonical NaN, anything else
/// by the little-endian bytes of the `float8`.
fn hash_float8(v: f64, seed: u64) -> u64 {
    if v == 0.0 {
        return seed;
    }
    let bits = if v.is_nan() {
        CANONICAL_NAN_BITS
    } else {
        v.to_bits()
    };
    hash_bytes_extended(&bits.to_le_bytes(), seed)
}

/// `hash_numeric_extended`: NaN and the infinities give the seed, zero `seed - 1`;
/// otherwise the base-10000 digits without leading or trailing zero digits are hashed as
/// native `int16`s and the result xored with the (sign-extended) weight of the first
/// nonzero digit. The sign and the display scale do not count: `-1`, `1` and `1.00` hash
/// alike (equal values must, and PostgreSQL accepts the collision of `x` and `-x`).
fn hash_numeric(n: &crate::numeric::Numeric, seed: u64) -> u64 {
    if !n.is_finite() {
        return seed;
    }
    // The binary (send) format is the one public view of the digits: big-endian int16
    // ndigits, weight, sign, dscale, then the digits, most significant first.
    let mut wire = Vec::new();
    n.to_binary(&mut wire);
    let weight = i16::from_be_bytes([wire[2], wire[3]]);
    let digits: Vec<u16> = wire[8..]
        .chunks_exact(2)
        .map(|d| u16::from_be_bytes([d[0], d[1]]))
        .collect();
    let Some(first) = digits.iter().position(|&d| d != 0) else {
        return seed.wrapping_sub(1);
    };
    let last = digits.iter().rposition(|&d| d != 0).unwrap_or(first);
    let bytes: Vec<u8> = digits[first..=last]
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect();
    // Each leading zero digit lowers the weight of the first digit hashed.
    let weight = i64::from(weight) - first as i64;
    hash_bytes_extended(&bytes, seed) ^ weight as u64
}

/// The extended hash of one non-NULL value under `seed`, as PostgreSQL's hash operator
/// class for the value's type computes it (the function `compute_partition_hash_value`
/// calls per key column). `None` for NULL (which partitioning skips, see
/// [`partition_row_hash`]) and for a type this module does not support (arrays).
///
/// Text is hashed as under a deterministic collation (all of Myriad's); `char(n)` without
/// its trailing blanks, as `bpchar` equality ignores them.
pub fn partition_hash_value(v: &Value, seed: u64) -> Option<u64> {
    Some(match v {
        Value::Null | Value::Array(_) => return None,
        // `hashcharextended` of the `char` 0 or 1.
        Value::Bool(b) => hash_uint32_extended(u32::from(*b), seed),
        // `hashint2extended` sign-extends to `int4` first, so equal int2/int4/int8 agree.
        Value::Int2(i) => hash_uint32_extended(i32::from(*i) as u32, seed),
        Value::Int4(i) => hash_uint32_extended(*i as u32, seed),
        Value::Int8(i) => hash_int8(*i, seed),
        Value::Float4(f) => hash_float8(f64::from(*f), seed),
        Value::Float8(f) => hash_float8(*f, seed),
        Value::Text(s) => hash_bytes_extended(s.as_bytes(), seed),
        Value::Bpchar(s) => hash_bytes_extended(s.trim_end_matches(' ').as_bytes(), seed),
        Value::Bytea(b) => hash_bytes_extended(b, seed),
        Value::Uuid(u) => hash_bytes_extended(u, seed),
        // Days since 2000-01-01, PostgreSQL's `DateADT` (date_ops uses `hashint4extended`).
        Value::Date(d) => hash_uint32_extended(d.0 as u32, seed),
        // Microseconds since 2000-01-01 (UTC for timestamptz), PostgreSQL's `Timestamp`:
        // `timestamp_hash_extended` is `hashint8extended`.
        Value::Timestamp(t) => hash_int8(t.0, seed),
        Value::TimestampTz(t) => hash_int8(t.0, seed),
        // `interval_hash_extended`: the comparison key (a month as 30 days, a day as 24
        // hours, in microseconds, computed in 128 bits) truncated to 64 bits and hashed as
        // an `int8`, so intervals that compare equal (`1 mon` and `30 days`) hash alike.
        Value::Interval(iv) => {
            let days = i128::from(iv.months) * 30 + i128::from(iv.days);
            let span = i128::from(iv.micros) + days * 86_400_000_000;
            hash_int8(span as i64, seed)
        }
        Value::Numeric(n) => hash_numeric(n, seed),
        // `hashoidextended`; the reg* types use the oid operator class.
        Value::Oid(o) | Value::Reg(_, o) => hash_uint32_extended(*o, seed),
    })
}

/// The hash of a row's partition key, `values` in the key's column order
/// (`compute_partition_hash_value`): each non-NULL value's hash under
/// [`HASH_PARTITION_SEED`] combined into a running hash that starts at 0; NULLs are
/// skipped (an all-NULL key hashes to 0). The row belongs to the partition with
/// `remainder == row_hash % modulus`. `None` if a value's type is not supported.
pub fn partition_row_hash(values: &[Value]) -> Option<u64> {
    values
        .iter()
        .filter(|v| !v.is_null())
        .try_fold(0u64, |row, v| {
            partition_hash_value(v, HASH_PARTITION_SEED).map(|h| hash_combine64(row, h))
        })
}

#[cfg(test)]
mod tests {
    //! Every expected number below was read from PostgreSQL 15.18 (x86-64): the per-type
    //! hashes from `SELECT hash...extended(value, 8816678312871386365)` (that is
    //! `HASH_PARTITION_SEED` as a signed bigint), the remainders from the partitions that
    //! `INSERT`s into hash-partitioned tables routed each row to.

    use super::*;
    use crate::datetime::{Date, Interval, Timestamp, TimestampTz};
    use crate::numeric::Numeric;
    use crate::types::DataType;
    use crate::value::{RegKind, TextContext};

    const SEED: u64 = HASH_PARTITION_SEED;

    /// PostgreSQL prints the `uint64` result as a signed `bigint`.
    fn pg(signed: i64) -> u64 {
        signed as u64
    }

    fn hash(v: Value) -> u64 {
        partition_hash_value(&v, SEED).expect("supported type")
    }

    fn parse(text: &str, ty: DataType) -> Value {
        Value::parse(text, &ty, &TextContext::detached()).unwrap()
    }

    #[test]
    fn seed_is_postgres_constant() {
        assert_eq!(HASH_PARTITION_SEED as i64, 8816678312871386365);
    }

    #[test]
    fn unseeded() {
        // hashint4extended(5, 0), hashtextextended('abc', 0)
        assert_eq!(hash_uint32_extended(5, 0), pg(-9138765687874534020));
        assert_eq!(hash_bytes_extended(b"abc", 0), pg(-6747756470228489321));
    }

    #[test]
    fn int4() {
        for (v, expect) in [
            (0, -4403592609991167795),
            (1, 5968994663651403477),
            (5, -2840406021921404358),
            (-1, -5017072347659237694),
            (-42, 6660635123915733087),
            (i32::MAX, -6050265599104649060),
            (i32::MIN, 4938542303000433043),
        ] {
            assert_eq!(hash(Value::Int4(v)), pg(expect), "int4 {v}");
        }
    }

    #[test]
    fn int2() {
        for (v, expect) in [
            (0, -4403592609991167795),
            (7, 1708571371176205364),
            (-7, -7298374200968567817),
            (i16::MAX, -6436696229286267413),
            (i16::MIN, 5885242512097991578),
        ] {
            assert_eq!(hash(Value::Int2(v)), pg(expect), "int2 {v}");
        }
    }

    #[test]
    fn int8() {
        for (v, expect) in [
            (0, -4403592609991167795),
            (1, 5968994663651403477),
            (-1, -5017072347659237694),
            (5, -2840406021921404358),
            (4294967296, 5968994663651403477),
            (4294967301, -3962796844073183168),
            (-4294967296, -4403592609991167795),
            (1234567890123, 4234184308168508908),
            (i64::MAX, 4938542303000433043),
            (i64::MIN, -6050265599104649060),
        ] {
            assert_eq!(hash(Value::Int8(v)), pg(expect), "int8 {v}");
        }
    }

    #[test]
    fn text() {
        for (v, expect) in [
            ("", -5700645584453517373),
            ("a", -6705225459120232837),
            ("abc", 3628778498291917250),
            ("abcd", 4029384952263848046),
            ("hello wor", -929470285757940715),
            ("hello world!", -1886269529411655687),
            ("the quick brown fox jumps", 6110941752397460172),
            ("héllo wörld ünïcödé ✓", 675326175432669775),
            ("日本語テキスト", 3781793241886115942),
        ] {
            assert_eq!(hash(Value::Text(v.into())), pg(expect), "text {v:?}");
        }
    }

    #[test]
    fn bpchar_ignores_trailing_blanks() {
        // hashbpcharextended('abc'::char(10)), ('abc  '::bpchar), (''::char(3))
        assert_eq!(
            hash(Value::Bpchar("abc       ".into())),
            pg(3628778498291917250)
        );
        assert_eq!(hash(Value::Bpchar("abc  ".into())), pg(3628778498291917250));
        assert_eq!(hash(Value::Bpchar("abc".into())), pg(3628778498291917250));
        assert_eq!(hash(Value::Bpchar("   ".into())), pg(-5700645584453517373));
        let padded = parse("abc", DataType::Bpchar(Some(10)));
        assert_eq!(hash(padded), pg(3628778498291917250));
    }

    #[test]
    fn bool() {
        // hashcharextended(true::int::"char") and false
        assert_eq!(hash(Value::Bool(true)), pg(5968994663651403477));
        assert_eq!(hash(Value::Bool(false)), pg(-4403592609991167795));
    }

    #[test]
    fn date() {
        // hashint4extended(d - date '2000-01-01')
        for (v, expect) in [
            ("2000-01-01", -4403592609991167795),
            ("2024-03-15", 4526760040217564145),
            ("1999-12-31", -5017072347659237694),
            ("1970-01-01", -7791128061482025433),
        ] {
            assert_eq!(hash(parse(v, DataType::Date)), pg(expect), "date {v}");
        }
        assert_eq!(hash(Value::Date(Date(8840))), pg(4526760040217564145));
    }

    #[test]
    fn timestamp() {
        // timestamp_hash_extended(ts)
        for (v, expect) in [
            ("2000-01-01 00:00:00", -4403592609991167795),
            ("2024-03-15 12:34:56.789012", -4784615922562990220),
            ("1969-07-20 20:17:40", 7213293563011269728),
            ("1900-01-01 00:00:00.000001", -8944118746013498610),
            ("infinity", 4938542303000433043),
            ("-infinity", -6050265599104649060),
        ] {
            assert_eq!(
                hash(parse(v, DataType::Timestamp(None))),
                pg(expect),
                "timestamp {v}"
            );
        }
        assert_eq!(
            hash(Value::Timestamp(Timestamp(763821296789012))),
            pg(-4784615922562990220)
        );
        // timestamptz: the UTC instant, whatever the session zone.
        let tz = parse("2024-03-15 08:34:56.789012-04", DataType::TimestampTz(None));
        assert_eq!(tz, Value::TimestampTz(TimestampTz(763821296789012)));
        assert_eq!(hash(tz), pg(-4784615922562990220));
    }

    #[test]
    fn interval() {
        // interval_hash_extended(iv)
        for (v, expect) in [
            ("0", -4403592609991167795),
            ("1 day", 1510475873825010920),
            ("24 hours", 1510475873825010920),
            ("1 mon", -3825187674808932648),
            ("30 days", -3825187674808932648),
            ("1 year 2 mons 3 days 04:05:06.789", -5535040227874969024),
            ("-1 day", 4539127968092228699),
            // Beyond 64 bits of microseconds: the comparison key is truncated.
            ("178000000 years", -2934422561232648050),
            ("-178000000 years 5 days", 7570837170078265074),
        ] {
            assert_eq!(
                hash(parse(v, DataType::Interval)),
                pg(expect),
                "interval {v}"
            );
        }
        let extreme = Interval {
            months: i32::MAX,
            days: i32::MAX,
            micros: 0,
        };
        assert_eq!(hash(Value::Interval(extreme)), pg(-2591744416122873038));
    }

    #[test]
    fn float8() {
        for (v, expect) in [
            (0.0, 8816678312871386365),
            (-0.0, 8816678312871386365),
            (1.0, 3988910132942752730),
            (-1.5, -6586303043542849247),
            (f64::NAN, -6475869854796787835),
            (-f64::NAN, -6475869854796787835),
            (f64::INFINITY, -4970436883654098436),
            (f64::NEG_INFINITY, 7927086137625499499),
            (std::f64::consts::PI, -8886531266256864049),
            (0.1, 8245503238132018451),
        ] {
            assert_eq!(hash(Value::Float8(v)), pg(expect), "float8 {v}");
        }
        // Zero hashes to the seed itself.
        assert_eq!(hash(Value::Float8(-0.0)), SEED);
        // A NaN with another payload is still the one NaN.
        let odd_nan = f64::from_bits(0x7ff0_0000_0000_0001);
        assert_eq!(hash(Value::Float8(odd_nan)), pg(-6475869854796787835));
    }

    #[test]
    fn float4() {
        // hashfloat4extended: widened to float8 (0.1::float4 is not 0.1::float8).
        for (v, expect) in [
            (0.0, 8816678312871386365),
            (-0.0, 8816678312871386365),
            (1.0, 3988910132942752730),
            (-1.5, -6586303043542849247),
            (f32::NAN, -6475869854796787835),
            (f32::INFINITY, -4970436883654098436),
            (0.1, -6747671251798447639),
        ] {
            assert_eq!(hash(Value::Float4(v)), pg(expect), "float4 {v}");
        }
    }

    #[test]
    fn uuid() {
        for (v, expect) in [
            ("00000000-0000-0000-0000-000000000000", -5281082146396728638),
            ("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 424513190990560493),
            ("ffffffff-ffff-ffff-ffff-ffffffffffff", -148986464341306210),
        ] {
            assert_eq!(hash(parse(v, DataType::Uuid)), pg(expect), "uuid {v}");
        }
    }

    #[test]
    fn oid_and_reg() {
        // hashoidextended
        assert_eq!(hash(Value::Oid(0)), pg(-4403592609991167795));
        assert_eq!(hash(Value::Oid(1259)), pg(1668737162854917857));
        assert_eq!(hash(Value::Oid(u32::MAX)), pg(-5017072347659237694));
        assert_eq!(
            hash(Value::Reg(RegKind::Class, 1259)),
            pg(1668737162854917857)
        );
        // A table partitioned by a regclass column (oid_ops): the row hash of 'pg_class'.
        assert_eq!(
            partition_row_hash(&[Value::Reg(RegKind::Class, 1259)]),
            Some(6974246754289684420)
        );
    }

    #[test]
    fn bytea() {
        // bytea hashes its bytes as text does.
        assert_eq!(hash(Value::Bytea(vec![])), pg(-5700645584453517373));
        assert_eq!(hash(Value::Bytea(b"abc".to_vec())), pg(3628778498291917250));
        // bytea's hash function takes `internal` and cannot be called from SQL: these were
        // recovered from `satisfies_hash_partition` on a table partitioned by a bytea
        // column (the row hash modulo each prime up to 59, joined by the Chinese
        // remainder theorem, less hash_combine64's constant).
        for (v, expect) in [
            ("\\x00", -8583321429529518889),
            ("\\xdeadbeef", -887469618524615072),
            ("\\x000102030405060708090a0b0c0d0e0f10", 5421338085723872396),
        ] {
            assert_eq!(hash(parse(v, DataType::Bytea)), pg(expect), "bytea {v}");
        }
    }

    #[test]
    fn numeric() {
        // hash_numeric_extended
        for (v, expect) in [
            ("0", 8816678312871386364),
            ("0.000", 8816678312871386364),
            ("1", -3231555093127941538),
            ("1.0", -3231555093127941538),
            ("-1", -3231555093127941538),
            ("10000", -3231555093127941537),
            ("100000000", -3231555093127941540),
            ("12345.6789", 6445526082213146339),
            ("0.0001", 3231555093127941537),
            ("0.00012", 3073084697884637736),
            ("-98765432109876543210.0123456789", -6780539583606045522),
            ("NaN", 8816678312871386365),
            ("Infinity", 8816678312871386365),
            ("-Infinity", 8816678312871386365),
            ("1e-100", 3231555093127941561),
            ("3.14", 5989645263542377328),
        ] {
            assert_eq!(
                hash(parse(v, DataType::Numeric(None))),
                pg(expect),
                "numeric {v}"
            );
        }
        assert_eq!(hash(Value::Numeric(Numeric::zero())), SEED - 1);
    }

    #[test]
    fn unsupported_and_null() {
        let int4_array = DataType::Array(crate::types::ArrayType {
            elem_oid: crate::types::oids::INT4,
            typmod: -1,
        });
        let arr = parse("{1,2}", int4_array);
        assert_eq!(partition_hash_value(&arr, SEED), None);
        assert_eq!(partition_row_hash(&[Value::Int4(1), arr]), None);
        assert_eq!(partition_hash_value(&Value::Null, SEED), None);
    }

    #[test]
    fn combine() {
        assert_eq!(hash_combine64(0, 0), 0x49a0_f4dd_15e5_a8e3);
        let h = pg(5968994663651403477);
        assert_eq!(
            partition_row_hash(&[Value::Int4(1)]),
            Some(hash_combine64(0, h))
        );
    }

    /// `row_hash % modulus`, the remainder of the partition the row goes to.
    fn remainder(values: &[Value], modulus: u64) -> u64 {
        partition_row_hash(values).unwrap() % modulus
    }

    #[test]
    fn routes_int4_like_postgres_modulus_4() {
        // create table h4 (a int) partition by hash (a); four partitions, modulus 4.
        for (v, part) in [
            (-42, 2),
            (-1, 1),
            (0, 0),
            (1, 0),
            (2, 2),
            (3, 1),
            (5, 1),
            (100, 1),
            (i32::MAX, 3),
        ] {
            assert_eq!(remainder(&[Value::Int4(v)], 4), part, "a = {v}");
        }
        // A NULL key hashes to 0: the partition with remainder 0.
        assert_eq!(partition_row_hash(&[Value::Null]), Some(0));
    }

    #[test]
    fn routes_two_columns_like_postgres_modulus_10() {
        // create table h10 (a text, b int) partition by hash (a, b); ten partitions.
        let t = |s: &str| Value::Text(s.into());
        for (row, part) in [
            ([Value::Null, Value::Null], 0),
            ([Value::Null, Value::Int4(1)], 0),
            ([t(""), Value::Int4(0)], 9),
            ([t("abc"), Value::Null], 3),
            ([t("abc"), Value::Int4(1)], 6),
            ([t("hello world!"), Value::Int4(-7)], 1),
            ([t("日本語テキスト"), Value::Int4(42)], 1),
        ] {
            assert_eq!(remainder(&row, 10), part, "row {row:?}");
        }
        // The full row hashes, recovered as for bytea from satisfies_hash_partition.
        for (row, expect) in [
            ([t("abc"), Value::Int4(1)], 4419148885624973416),
            ([t("abc"), Value::Null], 8934288089726683813),
            ([Value::Null, Value::Int4(1)], 11274504255086170040),
            ([t("日本語テキスト"), Value::Int4(42)], 9012779286495667981),
        ] {
            assert_eq!(partition_row_hash(&row), Some(expect), "row {row:?}");
        }
        // NULLs are skipped, not hashed: (NULL, 1) hashes as the one-column key (1).
        assert_eq!(
            partition_row_hash(&[Value::Null, Value::Int4(1)]),
            partition_row_hash(&[Value::Int4(1)])
        );
        // Order matters.
        assert_ne!(
            partition_row_hash(&[t("abc"), Value::Int4(1)]),
            partition_row_hash(&[Value::Int4(1), t("abc")])
        );
    }

    #[test]
    fn routes_four_types_like_postgres_modulus_4() {
        // create table hm (a bigint, b date, c uuid, d numeric)
        //     partition by hash (a, b, c, d); four partitions.
        let date = |s| parse(s, DataType::Date);
        let uuid = |s| parse(s, DataType::Uuid);
        let num = |s| parse(s, DataType::Numeric(None));
        let first = [
            Value::Int8(4294967301),
            date("2024-03-15"),
            uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            num("3.14"),
        ];
        assert_eq!(partition_row_hash(&first), Some(6984012391692636393));
        for (row, part) in [
            (first, 1),
            ([Value::Int8(-1), Value::Null, Value::Null, num("0")], 3),
            (
                [
                    Value::Null,
                    date("1970-01-01"),
                    Value::Null,
                    num("-98765432109876543210.0123456789"),
                ],
                1,
            ),
            (
                [
                    Value::Int8(1234567890123),
                    date("2000-01-01"),
                    uuid("00000000-0000-0000-0000-000000000000"),
                    Value::Null,
                ],
                3,
            ),
            (
                [
                    Value::Int8(5),
                    Value::Null,
                    uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"),
                    num("12345.6789"),
                ],
                1,
            ),
        ] {
            assert_eq!(remainder(&row, 4), part, "row {row:?}");
        }
    }
}
