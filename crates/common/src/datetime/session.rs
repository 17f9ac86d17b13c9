//! The session's date/time context, passed explicitly.
//!
//! PostgreSQL keeps the transaction's start time, the statement's start time and the
//! `TimeZone` setting in per-backend globals, and its type input and output functions
//! (`timestamptz_in`, `timestamptz_out`, `date_in` of `'today'`) read them. Myriad passes
//! them instead: the server makes a [`SessionClock`] for each statement and hands it down
//! (in [`crate::value::TextContext`]) to binding, execution and the wire's text output, so
//! sessions can share threads and a portal can outlive the statement that opened it.
//!
//! Work with no session (a unit test, a background task) uses [`SessionClock::detached`]:
//! the wall clock as "now" and UTC as its zone.

use std::time::{SystemTime, UNIX_EPOCH};

use super::{DateTimeContext, TimeZone, TimestampTz};

/// What one statement sees of the session's clock and zone.
#[derive(Clone, Debug)]
pub struct SessionClock {
    /// `now()`, `CURRENT_TIMESTAMP`, `transaction_timestamp()`: the transaction's start.
    pub transaction_start: TimestampTz,
    /// `statement_timestamp()`: the start of the statement being run.
    pub statement_start: TimestampTz,
    /// The `TimeZone` setting.
    pub time_zone: TimeZone,
}

impl SessionClock {
    /// Outside any session: now is the wall clock, the zone UTC.
    pub fn detached() -> SessionClock {
        let now = clock_timestamp();
        SessionClock {
            transaction_start: now,
            statement_start: now,
            time_zone: TimeZone::utc(),
        }
    }

    /// What text input needs: the transaction's start as "now" and the session's zone.
    pub fn context(&self) -> DateTimeContext {
        DateTimeContext::new(self.transaction_start, self.time_zone.clone())
    }
}

/// The wall clock now (`clock_timestamp()`), to the microsecond.
pub fn clock_timestamp() -> TimestampTz {
    timestamptz_of(SystemTime::now())
}

/// The instant of a `SystemTime`.
pub fn timestamptz_of(t: SystemTime) -> TimestampTz {
    let micros = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    };
    TimestampTz::from_unix_micros(micros)
}
