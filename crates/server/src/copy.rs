//! COPY FROM STDIN in a session: the statement starts (bound, locked, a snapshot
//! taken), the session keeps the load while the client's CopyData arrives, and the
//! statement ends at CopyDone (or fails at CopyFail). The rest of the query string runs
//! after it.
//!
//! COPY ... FREEZE: PostgreSQL writes the rows frozen, which needs the table to have
//! been created or truncated in the current subtransaction (else 55000), so no other
//! transaction can have seen it. Myriad checks the same condition (and, as PostgreSQL,
//! only once the copy has begun: the client sees CopyInResponse, then the error); with
//! 64-bit transaction ids nothing ever needs freezing (txn README), so the rows are then
//! written as any rows of the transaction.

use std::sync::Arc;

use common::{Oid, PgError, SqlState};
use sql::parser::Command;
use wire::StatementOutcome;

use crate::session::Session;

/// A COPY FROM STDIN waiting for its data.
pub(crate) struct CopyState {
    load: Box<executor::commands::copy::CopyIn>,
    snapshot: Arc<txn::Snapshot>,
    /// The statement ends its query string: an implicit transaction commits after it.
    last: bool,
    /// The first error in the data; reported at CopyDone.
    error: Option<PgError>,
}

/// The statements of a query string after a COPY FROM STDIN, run once it ends.
pub(crate) struct RestOfString {
    pub stmts: Vec<Command>,
    pub next: usize,
    pub sql: Arc<str>,
}

impl Session {
    /// A COPY FROM STDIN statement has been bound and locked: keep its load.
    pub(crate) fn start_copy(
        &mut self,
        load: Box<executor::commands::copy::CopyIn>,
        snapshot: Arc<txn::Snapshot>,
        last: bool,
    ) {
        let error = (load.freeze() && !self.truncated_here(load.table().oid)).then(|| {
            PgError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
            )
        });
        self.copy = Some(CopyState {
            load,
            snapshot,
            last,
            error,
        });
    }

    pub(crate) fn copy_columns(&self) -> Option<usize> {
        self.copy.as_ref().map(|c| c.load.columns())
    }

    /// TRUNCATE of `tables` succeeded at the current subtransaction depth.
    pub(crate) fn note_truncated(&mut self, tables: impl IntoIterator<Item = Oid>) {
        let depth = self.tx.depth();
        self.truncated
            .extend(tables.into_iter().map(|t| (t, depth)));
    }

    fn truncated_here(&self, table: Oid) -> bool {
        let depth = self.tx.depth();
        self.truncated
            .iter()
            .any(|&(t, d)| t == table && d == depth)
    }

    /// After RELEASE: what the released subtransactions truncated belongs to the
    /// parent. After ROLLBACK TO: what they truncated is undone.
    pub(crate) fn savepoint_ended(&mut self, rolled_back: bool) {
        self.cursors_after_savepoint(rolled_back);
        let depth = self.tx.depth();
        if rolled_back {
            self.truncated.retain(|&(_, d)| d < depth);
        } else {
            for (_, d) in &mut self.truncated {
                *d = (*d).min(depth);
            }
        }
    }

    pub(crate) fn copy_data_in(&mut self, data: &[u8]) {
        let Some(mut c) = self.copy.take() else {
            return;
        };
        if c.error.is_none() {
            let catalog = self.db.catalog.snapshot(&self.tx);
            let session = self.db.exec_session(&self.parts(), &self.tx, catalog);
            let cx = self.db.exec_context(&self.tx, &c.snapshot, &session);
            if let Err(e) = c.load.feed(&cx, data) {
                c.error = Some(e);
            }
        }
        self.copy = Some(c);
    }

    /// CopyDone: load the last rows, end the statement, go on with the query string.
    pub(crate) fn copy_finish(&mut self) -> Vec<StatementOutcome> {
        let Some(c) = self.copy.take() else {
            return vec![];
        };
        let result = match c.error {
            Some(e) => Err(e),
            None => {
                let catalog = self.db.catalog.snapshot(&self.tx);
                let session = self.db.exec_session(&self.parts(), &self.tx, catalog);
                let cx = self.db.exec_context(&self.tx, &c.snapshot, &session);
                c.load.finish(&cx)
            }
        };
        self.tx.end_statement();
        let result = result.and_then(|n| {
            if c.last && !self.explicit && self.tx.is_active() {
                self.end_tx(true)?;
            }
            Ok(n)
        });
        match result {
            Ok(n) => {
                let mut out = vec![StatementOutcome {
                    notices: vec![],
                    result: Ok(wire::Completed {
                        tag: format!("COPY {n}"),
                        ..Default::default()
                    }),
                }];
                if let Some(rest) = self.rest.take() {
                    out.extend(self.run_statements(rest.stmts, rest.next, rest.sql));
                }
                self.set_idle_state();
                out
            }
            Err(e) => self.copy_failed(e),
        }
    }

    /// The COPY fails with `e` (naming the line it was reading); the rest of its query
    /// string is dropped.
    pub(crate) fn copy_failed(&mut self, mut e: PgError) -> Vec<StatementOutcome> {
        if let Some(c) = self.copy.take() {
            e = e.with_context(c.load.next_line_context());
            self.tx.end_statement();
        }
        self.rest = None;
        self.fail();
        self.set_idle_state();
        vec![StatementOutcome {
            notices: vec![],
            result: Err(e),
        }]
    }
}
