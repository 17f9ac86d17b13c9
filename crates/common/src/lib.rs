//! Myriad's bottom layer: identifiers, limits, SQL types and values, and the one error type.
//!
//! Everything above depends on this crate and it depends on nothing of Myriad's. It holds
//! what every layer must agree on:
//!
//! - [`ids`]: object identifiers (`Oid`, `BlockNumber`, ...) as PostgreSQL names them.
//! - [`limits`]: fixed sizes (the 8 KiB page) and named limits, each explained once.
//! - [`types`]: [`DataType`], its PostgreSQL type OID, typmod and display name.
//! - [`datetime`]: `date`, `timestamp`, `timestamptz`, `interval` and time zones, with
//!   PostgreSQL's text and binary formats, arithmetic and functions.
//! - [`value`]: [`Value`], one SQL datum, with PostgreSQL's text input and output.
//! - [`array`]: [`array::Array`], PostgreSQL's arrays, their text form and order.
//! - [`numeric`]: [`numeric::Numeric`], PostgreSQL's exact decimal type and its arithmetic.
//! - [`error`]: [`PgError`], a user-facing error carrying a SQLSTATE, message, detail, hint
//!   and cursor position, mapped one-to-one onto the wire's ErrorResponse.

pub mod array;
pub mod datetime;
pub mod error;
pub mod hash;
pub mod ids;
pub mod limits;
pub mod numeric;
pub mod pghash;
pub mod rowlock;
pub mod session;
pub mod types;
pub mod value;

pub use error::{PgError, PgResult, SqlState};
pub use ids::{BlockNumber, ItemPointer, Oid, RelId};
pub use rowlock::RowLockMode;
pub use types::DataType;
pub use value::Value;
