//! The session's date/time context, kept per thread.
//!
//! PostgreSQL keeps the transaction's start time, the statement's start time and the
//! `TimeZone` setting in per-backend globals, and its type input and output functions
//! (`timestamptz_in`, `timestamptz_out`, `date_in` of `'today'`) read them. Myriad runs each
//! session's statements on that session's own thread (`wire::spawn_connection_thread`), so
//! the same globals become thread-locals here: the server sets them right before a statement
//! is bound and executed ([`set_session_clock`]), and [`crate::Value::parse`],
//! [`crate::Value::to_text`] and the executor's `now()` read them. Passing the context down
//! every call chain instead would touch every text conversion in every layer for a value
//! that never changes during a statement.
//!
//! A thread that never set a context (a unit test, a background task) sees the wall clock
//! as "now" and UTC as its zone.

use std::cell::RefCell;
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

thread_local! {
    static CURRENT: RefCell<Option<SessionClock>> = const { RefCell::new(None) };
}

/// Make `clock` the context of this thread's statements until the next call.
pub fn set_session_clock(clock: SessionClock) {
    CURRENT.with(|c| *c.borrow_mut() = Some(clock));
}

/// The context of this thread's current statement (the wall clock and UTC if none was set).
pub fn session_clock() -> SessionClock {
    CURRENT.with(|c| c.borrow().clone()).unwrap_or_else(|| {
        let now = clock_timestamp();
        SessionClock {
            transaction_start: now,
            statement_start: now,
            time_zone: TimeZone::utc(),
        }
    })
}

/// What text input needs: the transaction's start as "now" and the session's zone.
pub fn session_context() -> DateTimeContext {
    let c = session_clock();
    DateTimeContext::new(c.transaction_start, c.time_zone)
}

/// The session's `TimeZone`.
pub fn session_time_zone() -> TimeZone {
    CURRENT
        .with(|c| c.borrow().as_ref().map(|c| c.time_zone.clone()))
        .unwrap_or_else(TimeZone::utc)
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
