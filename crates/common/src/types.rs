//! SQL data types as PostgreSQL names and numbers them.

use crate::ids::Oid;

/// A SQL type together with its length modifier, where it has one.
///
/// `Unknown` is the type of an undecorated string literal (and of a bare NULL) before
/// context resolves it, exactly as PostgreSQL's `unknown` pseudo-type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Text,
    /// `varchar(n)`; `None` is unlimited `varchar`.
    Varchar(Option<u32>),
    /// `char(n)`, PostgreSQL's `bpchar`: blank-padded; `None` is unlimited `bpchar`.
    Bpchar(Option<u32>),
    /// `date`: a calendar day ([`crate::datetime::Date`]).
    Date,
    /// `timestamp [without time zone]`: wall-clock date and time. `Some(p)` is
    /// `timestamp(p)`, values rounded to `p` (0..=6) fractional digits of a second.
    Timestamp(Option<u8>),
    /// `timestamptz`, `timestamp with time zone`: an instant, shown in the session's zone.
    /// `Some(p)` as for [`DataType::Timestamp`].
    TimestampTz(Option<u8>),
    /// `interval`: months, days and microseconds.
    Interval,
    /// `numeric`, `decimal`: exact decimals ([`crate::numeric::Numeric`]). `Some((p, s))`
    /// is `numeric(p, s)` (`numeric(p)` is scale 0), already checked by
    /// [`crate::numeric::typmod_in`]; `None` is unconstrained `numeric`.
    Numeric(Option<(i32, i32)>),
    /// `uuid`: 16 bytes, shown as PostgreSQL's 8-4-4-4-12 hex groups.
    Uuid,
    /// `bytea`: a byte string, shown in PostgreSQL's hex format (`\x0102`).
    Bytea,
    /// `oid`: an unsigned 32-bit object identifier.
    Oid,
    /// `regclass`, `regtype`, `regnamespace`: an OID that reads and prints as the name
    /// of a relation, a type or a schema ([`crate::value::RegKind`]).
    Reg(crate::value::RegKind),
    /// An array of `elem` (PostgreSQL's `_int4`, ...): any number of dimensions, as in
    /// PostgreSQL, of elements of one type. `typmod` is the elements' (and, as in
    /// PostgreSQL's `atttypmod`, the array column's) type modifier.
    Array(ArrayType),
    /// `void`: what a function that returns nothing returns (`pg_sleep`); its one value
    /// is shown as an empty string and is not NULL.
    Void,
    Unknown,
}

/// The element type of an array type: the element's OID and type modifier (a plain
/// `Copy` pair so that [`DataType`] stays `Copy`; [`ArrayType::elem`] rebuilds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayType {
    pub elem_oid: Oid,
    pub typmod: i32,
}

impl ArrayType {
    /// The element type.
    pub fn elem(&self) -> DataType {
        DataType::from_oid(self.elem_oid, self.typmod).unwrap_or(DataType::Unknown)
    }
}

/// PostgreSQL type OIDs (from `pg_type.dat`), sent in RowDescription.
pub mod oids {
    use crate::ids::Oid;
    pub const BOOL: Oid = 16;
    pub const BYTEA: Oid = 17;
    pub const INT8: Oid = 20;
    pub const INT2: Oid = 21;
    pub const INT4: Oid = 23;
    pub const TEXT: Oid = 25;
    pub const FLOAT4: Oid = 700;
    pub const FLOAT8: Oid = 701;
    pub const UNKNOWN: Oid = 705;
    pub const BPCHAR: Oid = 1042;
    pub const VARCHAR: Oid = 1043;
    pub const DATE: Oid = 1082;
    pub const TIMESTAMP: Oid = 1114;
    pub const TIMESTAMPTZ: Oid = 1184;
    pub const INTERVAL: Oid = 1186;
    pub const NUMERIC: Oid = 1700;
    pub const UUID: Oid = 2950;
    pub const OID: Oid = 26;
    pub const REGCLASS: Oid = 2205;
    pub const REGTYPE: Oid = 2206;
    pub const REGNAMESPACE: Oid = 4089;
    pub const VOID: Oid = 2278;

    /// Each element type with its array type (`typarray` in `pg_type.dat`).
    pub const ARRAYS: [(Oid, Oid); 20] = [
        (BOOL, 1000),
        (BYTEA, 1001),
        (INT8, 1016),
        (INT2, 1005),
        (INT4, 1007),
        (TEXT, 1009),
        (OID, 1028),
        (FLOAT4, 1021),
        (FLOAT8, 1022),
        (BPCHAR, 1014),
        (VARCHAR, 1015),
        (DATE, 1182),
        (TIMESTAMP, 1115),
        (TIMESTAMPTZ, 1185),
        (INTERVAL, 1187),
        (NUMERIC, 1231),
        (UUID, 2951),
        (REGCLASS, 2210),
        (REGTYPE, 2211),
        (REGNAMESPACE, 4090),
    ];

    /// The array type whose elements are `elem`.
    pub fn array_of(elem: Oid) -> Option<Oid> {
        ARRAYS.iter().find(|(e, _)| *e == elem).map(|(_, a)| *a)
    }

    /// The element type of array type `array`.
    pub fn element_of(array: Oid) -> Option<Oid> {
        ARRAYS.iter().find(|(_, a)| *a == array).map(|(e, _)| *e)
    }
}

/// The largest fractional-second precision of `timestamp(p)`: microseconds.
pub const MAX_TIMESTAMP_PRECISION: u8 = 6;

/// The precision a `timestamp` typmod stands for (`None` for -1, none declared).
fn timestamp_precision(typmod: i32) -> Option<u8> {
    (typmod >= 0).then(|| typmod.min(i32::from(MAX_TIMESTAMP_PRECISION)) as u8)
}

/// The VARHDRSZ that PostgreSQL adds to a character type's declared length in its typmod.
const VARHDRSZ: i32 = 4;

impl DataType {
    /// The type's OID as PostgreSQL reports it.
    pub fn oid(&self) -> Oid {
        match self {
            DataType::Bool => oids::BOOL,
            DataType::Int2 => oids::INT2,
            DataType::Int4 => oids::INT4,
            DataType::Int8 => oids::INT8,
            DataType::Float4 => oids::FLOAT4,
            DataType::Float8 => oids::FLOAT8,
            DataType::Text => oids::TEXT,
            DataType::Varchar(_) => oids::VARCHAR,
            DataType::Bpchar(_) => oids::BPCHAR,
            DataType::Date => oids::DATE,
            DataType::Timestamp(_) => oids::TIMESTAMP,
            DataType::TimestampTz(_) => oids::TIMESTAMPTZ,
            DataType::Interval => oids::INTERVAL,
            DataType::Numeric(_) => oids::NUMERIC,
            DataType::Uuid => oids::UUID,
            DataType::Bytea => oids::BYTEA,
            DataType::Oid => oids::OID,
            DataType::Reg(k) => k.type_oid(),
            // Every element type Myriad has has an array type.
            DataType::Array(a) => oids::array_of(a.elem_oid).unwrap_or(0),
            DataType::Void => oids::VOID,
            DataType::Unknown => oids::UNKNOWN,
        }
    }

    /// The type modifier (`atttypmod`): declared length + 4 for character types,
    /// `((p << 16) | s) + 4` for `numeric(p, s)`, `p` for `timestamp(p)`, else -1.
    pub fn typmod(&self) -> i32 {
        match self {
            DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => *n as i32 + VARHDRSZ,
            DataType::Numeric(Some((p, s))) => crate::numeric::typmod(*p, *s),
            DataType::Timestamp(Some(p)) | DataType::TimestampTz(Some(p)) => i32::from(*p),
            DataType::Array(a) => a.typmod,
            _ => -1,
        }
    }

    /// The storage length (`typlen`): fixed size in bytes, or -1 for variable length.
    pub fn typlen(&self) -> i16 {
        match self {
            DataType::Bool => 1,
            DataType::Int2 => 2,
            DataType::Int4 | DataType::Float4 | DataType::Date | DataType::Oid => 4,
            DataType::Void => 4,
            DataType::Reg(_) => 4,
            DataType::Int8 | DataType::Float8 => 8,
            DataType::Timestamp(_) | DataType::TimestampTz(_) => 8,
            DataType::Interval | DataType::Uuid => 16,
            DataType::Unknown => -2,
            _ => -1,
        }
    }

    /// PostgreSQL's storage strategy (`typstorage`): `p` plain for fixed-length types,
    /// `m` main for numeric, `x` extended for the other variable-length ones.
    pub fn typstorage(&self) -> &'static str {
        self.default_storage().code()
    }

    /// The storage strategy a column of this type has until `ALTER COLUMN ... SET
    /// STORAGE` changes it.
    pub fn default_storage(&self) -> Storage {
        match self {
            DataType::Numeric(_) => Storage::Main,
            _ if self.typlen() == -1 => Storage::Extended,
            _ => Storage::Plain,
        }
    }

    /// Rebuild a type from its OID and typmod (the inverse of [`oid`](Self::oid) and
    /// [`typmod`](Self::typmod)).
    pub fn from_oid(oid: Oid, typmod: i32) -> Option<DataType> {
        let len = (typmod >= VARHDRSZ).then(|| (typmod - VARHDRSZ) as u32);
        Some(match oid {
            oids::BOOL => DataType::Bool,
            oids::INT2 => DataType::Int2,
            oids::INT4 => DataType::Int4,
            oids::INT8 => DataType::Int8,
            oids::FLOAT4 => DataType::Float4,
            oids::FLOAT8 => DataType::Float8,
            oids::TEXT => DataType::Text,
            oids::VARCHAR => DataType::Varchar(len),
            oids::BPCHAR => DataType::Bpchar(len),
            oids::DATE => DataType::Date,
            oids::TIMESTAMP => DataType::Timestamp(timestamp_precision(typmod)),
            oids::TIMESTAMPTZ => DataType::TimestampTz(timestamp_precision(typmod)),
            oids::INTERVAL => DataType::Interval,
            oids::NUMERIC => DataType::Numeric(crate::numeric::typmod_precision_scale(typmod)),
            oids::UUID => DataType::Uuid,
            oids::BYTEA => DataType::Bytea,
            oids::OID => DataType::Oid,
            oids::REGCLASS => DataType::Reg(crate::value::RegKind::Class),
            oids::REGTYPE => DataType::Reg(crate::value::RegKind::Type),
            oids::REGNAMESPACE => DataType::Reg(crate::value::RegKind::Namespace),
            oids::UNKNOWN => DataType::Unknown,
            oids::VOID => DataType::Void,
            array => {
                let elem_oid = oids::element_of(array)?;
                DataType::Array(ArrayType { elem_oid, typmod })
            }
        })
    }

    /// The name PostgreSQL's `format_type` prints, used in error messages.
    pub fn name(&self) -> String {
        match self {
            DataType::Varchar(Some(n)) => format!("character varying({n})"),
            DataType::Bpchar(Some(n)) => format!("character({n})"),
            DataType::Bpchar(None) => "bpchar".to_string(),
            DataType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
            DataType::Timestamp(Some(p)) => format!("timestamp({p}) without time zone"),
            DataType::TimestampTz(Some(p)) => format!("timestamp({p}) with time zone"),
            DataType::Array(a) => format!("{}[]", a.elem().name()),
            other => other.base_name().to_string(),
        }
    }

    /// The name without length modifier (`integer`, `character varying`, ...).
    pub fn base_name(&self) -> &'static str {
        match self {
            DataType::Bool => "boolean",
            DataType::Int2 => "smallint",
            DataType::Int4 => "integer",
            DataType::Int8 => "bigint",
            DataType::Float4 => "real",
            DataType::Float8 => "double precision",
            DataType::Text => "text",
            DataType::Varchar(_) => "character varying",
            DataType::Bpchar(_) => "character",
            DataType::Date => "date",
            DataType::Timestamp(_) => "timestamp without time zone",
            DataType::TimestampTz(_) => "timestamp with time zone",
            DataType::Interval => "interval",
            DataType::Numeric(_) => "numeric",
            DataType::Uuid => "uuid",
            DataType::Bytea => "bytea",
            DataType::Oid => "oid",
            DataType::Reg(k) => k.type_name(),
            DataType::Array(_) => "array",
            DataType::Void => "void",
            DataType::Unknown => "unknown",
        }
    }

    /// The internal name PostgreSQL uses for a cast's output column (`int4`, `text`, ...;
    /// an array type's is its element type's, as `'{1}'::int[]` is named `int4`).
    pub fn internal_name(&self) -> &'static str {
        match self {
            DataType::Array(a) => a.elem().internal_name(),
            DataType::Oid => "oid",
            DataType::Reg(k) => k.type_name(),
            DataType::Bool => "bool",
            DataType::Int2 => "int2",
            DataType::Int4 => "int4",
            DataType::Int8 => "int8",
            DataType::Float4 => "float4",
            DataType::Float8 => "float8",
            DataType::Text => "text",
            DataType::Varchar(_) => "varchar",
            DataType::Bpchar(_) => "bpchar",
            DataType::Date => "date",
            DataType::Timestamp(_) => "timestamp",
            DataType::TimestampTz(_) => "timestamptz",
            DataType::Interval => "interval",
            DataType::Numeric(_) => "numeric",
            DataType::Uuid => "uuid",
            DataType::Bytea => "bytea",
            DataType::Void => "void",
            DataType::Unknown => "unknown",
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, DataType::Int2 | DataType::Int4 | DataType::Int8)
    }

    pub fn is_float(&self) -> bool {
        matches!(self, DataType::Float4 | DataType::Float8)
    }

    /// PostgreSQL's numeric category: the integers, `numeric` and the floats.
    pub fn is_numeric(&self) -> bool {
        self.is_integer() || self.is_float() || matches!(self, DataType::Numeric(_))
    }

    /// Whether `=` on this type can join by hashing (PostgreSQL's hashjoinable
    /// operators): equal values hash alike (`executor::sortkey::HashKey`; intervals by
    /// their span, as they compare). Arrays, `char(n)` and `reg*` are left out.
    pub fn hash_joinable(&self) -> bool {
        matches!(
            self,
            DataType::Bool
                | DataType::Int2
                | DataType::Int4
                | DataType::Int8
                | DataType::Float4
                | DataType::Float8
                | DataType::Text
                | DataType::Varchar(_)
                | DataType::Date
                | DataType::Timestamp(_)
                | DataType::TimestampTz(_)
                | DataType::Interval
                | DataType::Numeric(_)
                | DataType::Uuid
                | DataType::Bytea
                | DataType::Oid
        )
    }

    /// Whether `self = other` can join by hashing: both hash-joinable, and one type but
    /// for its modifier (`numeric(10,2) = numeric`), or both `text` / `varchar`, which
    /// compare as text without a cast.
    pub fn hash_joins_with(&self, other: &DataType) -> bool {
        let text = |t: &DataType| matches!(t, DataType::Text | DataType::Varchar(_));
        self.hash_joinable()
            && other.hash_joinable()
            && (self.without_typmod() == other.without_typmod() || (text(self) && text(other)))
    }

    /// Text-like types (PostgreSQL's string category).
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_)
        )
    }

    /// `date`, `timestamp` and `timestamptz` (PostgreSQL's datetime category, whose
    /// implicit casts go date -> timestamp -> timestamptz; `interval` is a category of its
    /// own).
    pub fn is_datetime(&self) -> bool {
        matches!(
            self,
            DataType::Date | DataType::Timestamp(_) | DataType::TimestampTz(_)
        )
    }

    /// Rank within the datetime category: implicit casts only go up this ladder.
    pub fn datetime_rank(&self) -> Option<u8> {
        Some(match self {
            DataType::Date => 1,
            DataType::Timestamp(_) => 2,
            DataType::TimestampTz(_) => 3,
            _ => return None,
        })
    }

    /// Rank within the numeric category: a wider type can hold every value of a narrower
    /// one (or, for the floats, approximate it), and implicit casts only go up this
    /// ladder (int2 < int4 < int8 < numeric < float4 < float8), as in `pg_cast`.
    pub fn numeric_rank(&self) -> Option<u8> {
        Some(match self {
            DataType::Int2 => 1,
            DataType::Int4 => 2,
            DataType::Int8 => 3,
            DataType::Numeric(_) => 4,
            DataType::Float4 => 5,
            DataType::Float8 => 6,
            _ => return None,
        })
    }

    /// The same type without a length modifier (the type of an expression over a column).
    pub fn without_typmod(&self) -> DataType {
        match self {
            DataType::Varchar(_) => DataType::Varchar(None),
            DataType::Bpchar(_) => DataType::Bpchar(None),
            DataType::Numeric(_) => DataType::Numeric(None),
            DataType::Timestamp(_) => DataType::Timestamp(None),
            DataType::TimestampTz(_) => DataType::TimestampTz(None),
            DataType::Array(a) => DataType::Array(ArrayType { typmod: -1, ..*a }),
            other => *other,
        }
    }

    /// The array type whose elements are of this type (`None` for an array or
    /// `unknown`: PostgreSQL has no arrays of arrays, only more dimensions).
    pub fn array(&self) -> Option<DataType> {
        if matches!(self, DataType::Array(_) | DataType::Unknown) {
            return None;
        }
        Some(DataType::Array(ArrayType {
            elem_oid: self.oid(),
            typmod: self.typmod(),
        }))
    }

    /// An array type's element type.
    pub fn elem(&self) -> Option<DataType> {
        match self {
            DataType::Array(a) => Some(a.elem()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oid_typmod_round_trip() {
        for t in [
            DataType::Bool,
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float4,
            DataType::Float8,
            DataType::Text,
            DataType::Varchar(Some(10)),
            DataType::Varchar(None),
            DataType::Bpchar(Some(1)),
            DataType::Bpchar(None),
            DataType::Date,
            DataType::Timestamp(None),
            DataType::Timestamp(Some(0)),
            DataType::TimestampTz(None),
            DataType::TimestampTz(Some(6)),
            DataType::Interval,
            DataType::Numeric(None),
            DataType::Numeric(Some((10, 2))),
            DataType::Numeric(Some((1000, -1000))),
            DataType::Numeric(Some((3, 5))),
            DataType::Uuid,
            DataType::Bytea,
            DataType::Oid,
            DataType::Reg(crate::value::RegKind::Class),
            DataType::Array(ArrayType {
                elem_oid: oids::VARCHAR,
                typmod: 14,
            }),
            DataType::Array(ArrayType {
                elem_oid: oids::INT4,
                typmod: -1,
            }),
        ] {
            assert_eq!(DataType::from_oid(t.oid(), t.typmod()), Some(t));
        }
    }

    #[test]
    fn names_match_format_type() {
        assert_eq!(DataType::Varchar(Some(5)).name(), "character varying(5)");
        assert_eq!(DataType::Bpchar(Some(3)).name(), "character(3)");
        assert_eq!(DataType::Float8.name(), "double precision");
        assert_eq!(DataType::Numeric(Some((5, 2))).name(), "numeric(5,2)");
        assert_eq!(DataType::Numeric(None).name(), "numeric");
        assert_eq!(DataType::Numeric(Some((7, 0))).typmod(), (7 << 16) + 4);
        let varchar_array = DataType::from_oid(1015, 14).unwrap();
        assert_eq!(varchar_array.name(), "character varying(10)[]");
        assert_eq!(varchar_array.internal_name(), "varchar");
    }
}

/// How a column's values may be stored when its row is large (PostgreSQL's
/// `attstorage`): TOAST (access rule 12) compresses only `Extended` and `Main` values and
/// moves only `Extended` and `External` ones out of line, `Main` ones last of all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Always inline and uncompressed (fixed-length types).
    Plain,
    /// Out of line, never compressed.
    External,
    /// Compressed, then out of line if still too large.
    Extended,
    /// Compressed; out of line only if the row cannot fit a page otherwise.
    Main,
}

impl Storage {
    /// The one-letter code `pg_attribute.attstorage` shows.
    pub fn code(self) -> &'static str {
        match self {
            Storage::Plain => "p",
            Storage::External => "e",
            Storage::Extended => "x",
            Storage::Main => "m",
        }
    }

    /// The strategy a code names.
    pub fn from_code(code: u8) -> Option<Storage> {
        Some(match code {
            b'p' => Storage::Plain,
            b'e' => Storage::External,
            b'x' => Storage::Extended,
            b'm' => Storage::Main,
            _ => return None,
        })
    }
}
