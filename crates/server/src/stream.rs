//! A query's rows, streamed: a simple Query's SELECT runs as a portal
//! (`executor::portal`), whose rows go to the client in batches as they are made
//! (`wire::Session::fetch`), so a big result is never held whole and the client has the
//! first rows before the last are made. The statements after it in the query string
//! run once it ends (`wire::Session::resume`). Server rule 2.

use std::panic::AssertUnwindSafe;

use common::PgError;
use executor::portal::Portal;
use wire::{Fetched, StatementOutcome};

use crate::copy::RestOfString;
use crate::session::Session;

/// The most bytes of rows (`executor::exec::row_bytes`) one batch holds, however few
/// rows that is: what the server holds of a query's result at once.
pub(crate) const BATCH_BYTES: usize = 256 << 10;

/// The first batch of a statement (or of an Execute) is smaller: its rows reach the
/// client soon, as PostgreSQL's first 8 kB output buffer does, and a small result
/// still goes out whole with its statement.
pub(crate) const FIRST_BATCH_BYTES: usize = 8 << 10;

/// A simple Query's statement whose rows are still being sent.
pub(crate) struct Streaming {
    portal: Portal,
    /// COPY TO STDOUT: the rows go as lines of this format.
    copy: Option<sql::bound::CopyFormat>,
    /// The statement ends its query string: an implicit transaction commits after it.
    last: bool,
    /// The statements after it.
    rest: Option<RestOfString>,
    /// An error the first batch met, after rows the client is still to be sent.
    pending: Option<PgError>,
    /// Its rows go in binary (FETCH from a cursor declared BINARY).
    binary: bool,
}

/// Up to `max_rows` rows of `portal`, at most `max_bytes` of them ([`BATCH_BYTES`],
/// [`FIRST_BATCH_BYTES`]); a panic in the executor is this statement's error.
pub(crate) fn fetch_batch(
    portal: &mut Portal,
    max_rows: usize,
    max_bytes: usize,
) -> common::PgResult<Vec<Vec<common::Value>>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| portal.fetch(max_rows, max_bytes)))
        .unwrap_or_else(|p| Err(crate::session::panic_payload_error(p.as_ref())))
}

impl Streaming {
    /// The statements of its query string after it, run once it ends.
    pub(crate) fn set_rest(&mut self, rest: RestOfString) {
        self.rest = Some(rest);
    }

    /// The tag of the statement once all its rows are out.
    fn tag(&self) -> String {
        if let Some(tag) = self.portal.tag() {
            return tag.to_string();
        }
        match self.copy {
            Some(_) => format!("COPY {}", self.portal.fetched()),
            None => format!("SELECT {}", self.portal.fetched()),
        }
    }
}

impl Session {
    /// A statement of a query string returned a portal: its first batch goes with its
    /// outcome (for COPY TO, as lines after the header). A result that fits in it ends
    /// the statement now (one batch: what most queries are); else the rest streams
    /// (`self.streaming`), and the caller leaves the statements after it there.
    pub(crate) fn start_stream(
        &mut self,
        mut r: executor::StatementResult,
        last: bool,
    ) -> Result<StatementOutcome, PgError> {
        let mut portal = r
            .portal
            .take()
            .ok_or_else(|| PgError::internal("no portal"))?;
        let copy = r.copy_format.take();
        let first = fetch_batch(&mut portal, wire::STREAM_BATCH_ROWS, FIRST_BATCH_BYTES);
        let (rows, pending) = match first {
            Ok(rows) => (rows, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let text = portal.text().clone();
        if let (Some(format), Some((_, lines))) = (&copy, r.copy_out.as_mut()) {
            lines.extend(executor::commands::copy::rows_to_lines(
                format, &rows, &text,
            ));
        } else {
            r.rows = rows;
        }
        let st = Streaming {
            portal,
            copy,
            last,
            rest: None,
            pending,
            binary: r.binary,
        };
        if st.portal.is_done() && st.pending.is_none() {
            r.tag = st.tag();
            drop(st.portal);
            let r = self.statement_done(r, last)?;
            let (notices, done) = crate::session::to_wire(r, &text);
            return Ok(StatementOutcome {
                notices,
                result: Ok(done),
            });
        }
        let (notices, mut done) = crate::session::to_wire(r, &text);
        done.more = true;
        self.streaming = Some(st);
        Ok(StatementOutcome {
            notices,
            result: Ok(done),
        })
    }

    /// `wire::Session::fetch`: the next rows of the streaming statement. Its end (its
    /// last rows, or an error) ends the statement as [`Session::run`] would have: an
    /// implicit transaction commits after the query string's last statement, an error
    /// fails the transaction and drops the rest of the string.
    pub(crate) fn fetch_streaming(&mut self, max_rows: usize) -> Fetched {
        let Some(st) = self.streaming.as_mut() else {
            return Fetched {
                rows: Vec::new(),
                copy_lines: None,
                text: self.info.text.clone(),
                binary: false,
                notices: self.take_notices(),
                end: Some(Err(PgError::internal("no statement is streaming"))),
            };
        };
        let text = st.portal.text().clone();
        let binary = st.binary;
        let fetched = match st.pending.take() {
            Some(e) => Err(e),
            None => fetch_batch(&mut st.portal, max_rows, BATCH_BYTES),
        };
        let (rows, copy_lines) = match (fetched, &st.copy) {
            (Ok(rows), Some(format)) => (
                Vec::new(),
                Some(executor::commands::copy::rows_to_lines(
                    format, &rows, &text,
                )),
            ),
            (Ok(rows), None) => (rows, None),
            (Err(e), _) => {
                self.streaming = None;
                self.fail();
                return Fetched {
                    rows: Vec::new(),
                    copy_lines: None,
                    text,
                    binary: false,
                    notices: self.take_notices(),
                    end: Some(Err(e)),
                };
            }
        };
        if !st.portal.is_done() || st.pending.is_some() {
            return Fetched {
                rows,
                copy_lines,
                text,
                binary,
                notices: self.take_notices(),
                end: None,
            };
        }
        let Some(st) = self.streaming.take() else {
            unreachable!("the stream was there above")
        };
        let tag = st.tag();
        drop(st.portal);
        let end = match self.statement_done(Default::default(), st.last) {
            Ok(_) => {
                self.after_stream = st.rest;
                Ok(tag)
            }
            Err(e) => {
                self.fail();
                Err(e)
            }
        };
        Fetched {
            rows,
            copy_lines,
            text,
            binary,
            notices: self.take_notices(),
            end: Some(end),
        }
    }

    /// `wire::Session::resume`: the statements after a streamed one.
    pub(crate) fn resume_after_stream(&mut self) -> Vec<StatementOutcome> {
        let out = match self.after_stream.take() {
            Some(rest) => self.run_statements(rest.stmts, rest.next, rest.sql),
            None => Vec::new(),
        };
        if self.streaming.is_none() {
            self.set_idle_state();
        }
        out
    }
}
