//! `nextval`, `currval`, `setval`, `lastval`: sequence functions inside expressions.
//!
//! They reach the pool, the running sequence states and the session's `currval` /
//! `lastval` memory through the statement's [`Session`], as PostgreSQL keeps that memory
//! per backend.

use std::sync::Arc;

use access::sequence::{Exhausted, SeqBounds};
use catalog::SequenceDesc;
use common::{Oid, PgError, PgResult, SqlState, Value};
use sql::bound::ScalarFunc;

use crate::session::Session;

/// 25006 for `nextval` / `setval` in a read-only transaction.
fn check_writable(s: &Session, func: &str) -> PgResult<()> {
    if s.read_only {
        return Err(PgError::new(
            SqlState::READ_ONLY_SQL_TRANSACTION,
            format!("cannot execute {func}() in a read-only transaction"),
        ));
    }
    Ok(())
}

/// Sequence `oid` as the transaction sees it now (after [`lock`]'s wait).
fn lookup(s: &Session, oid: Oid) -> PgResult<Arc<SequenceDesc>> {
    s.catalog_now()
        .sequence_by_oid(oid)
        .cloned()
        .ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("could not open relation with OID {oid}"),
            )
        })
}

fn bounds(s: &SequenceDesc) -> SeqBounds {
    SeqBounds {
        increment: s.options.increment,
        min: s.options.min,
        max: s.options.max,
        cycle: s.options.cycle,
    }
}

/// Lock sequence `oid` as PostgreSQL's sequence functions do: RowExclusive, to the end
/// of the transaction. A transaction restarting it (ALTER SEQUENCE, TRUNCATE ... RESTART
/// IDENTITY) holds a conflicting lock: this waits for it to end, and the call then finds
/// the sequence's storage as it left it (the catalog is published before its locks go).
pub(crate) fn lock(s: &Session, tx: &txn::Tx, oid: i64) -> PgResult<()> {
    let Ok(oid) = Oid::try_from(oid) else {
        return Ok(()); // not a sequence: the call reports it
    };
    tx.lock(
        txn::lock::LockTag::Relation(oid),
        txn::lock::LockMode::RowExclusive,
        false,
    )
    .map_err(|e| {
        let name = s
            .catalog_now()
            .sequence_by_oid(oid)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| oid.to_string());
        e.to_pg(&format!("relation \"{name}\""))
    })
}

/// `nextval(seq)`.
pub fn nextval(s: &Session, oid: Oid) -> PgResult<i64> {
    check_writable(s, "nextval")?;
    let seq = lookup(s, oid)?;
    match s.sequences.nextval(s.pool, seq.rel, &bounds(&seq))? {
        Ok(v) => {
            let mut memory = s.sequence_memory.borrow_mut();
            memory.currval.insert(oid, v);
            memory.last = Some(oid);
            Ok(v)
        }
        Err(Exhausted::Max(m)) => Err(PgError::new(
            SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
            format!(
                "nextval: reached maximum value of sequence \"{}\" ({m})",
                seq.name
            ),
        )),
        Err(Exhausted::Min(m)) => Err(PgError::new(
            SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
            format!(
                "nextval: reached minimum value of sequence \"{}\" ({m})",
                seq.name
            ),
        )),
    }
}

/// `currval(seq)`: this session's last value of `seq`.
pub fn currval(s: &Session, oid: Oid) -> PgResult<i64> {
    let seq = lookup(s, oid)?;
    let value = s.sequence_memory.borrow().currval.get(&oid).copied();
    value.ok_or_else(|| {
        PgError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "currval of sequence \"{}\" is not yet defined in this session",
                seq.name
            ),
        )
    })
}

/// `lastval()`: this session's last `nextval` result, of any sequence.
pub fn lastval(s: &Session) -> PgResult<i64> {
    let not_defined = || {
        PgError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "lastval is not yet defined in this session",
        )
    };
    let (last, value) = {
        let memory = s.sequence_memory.borrow();
        let last = memory.last;
        (last, last.and_then(|o| memory.currval.get(&o).copied()))
    };
    let (Some(oid), Some(value)) = (last, value) else {
        return Err(not_defined());
    };
    // A sequence dropped since: PostgreSQL reports it as never defined.
    if s.catalog_now().sequence_by_oid(oid).is_none() {
        return Err(not_defined());
    }
    Ok(value)
}

/// `SELECT * FROM seq`: the sequence's running state (or its page's, if unused since
/// startup).
pub fn state(s: &Session, oid: Oid) -> PgResult<access::sequence::SeqState> {
    let seq = lookup(s, oid)?;
    s.sequences.state(s.pool, seq.rel)
}

/// `setval(seq, value [, is_called])`: returns `value`.
pub fn setval(s: &Session, oid: Oid, value: i64, is_called: bool) -> PgResult<i64> {
    check_writable(s, "setval")?;
    let seq = lookup(s, oid)?;
    let o = &seq.options;
    if value < o.min || value > o.max {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                seq.name, o.min, o.max
            ),
        ));
    }
    s.sequences.setval(s.pool, seq.rel, value, is_called)?;
    if is_called {
        s.sequence_memory.borrow_mut().currval.insert(oid, value);
    }
    Ok(value)
}

/// A sequence function's call; `args` has no NULL (they are strict), and the first is
/// the sequence's OID (the binder resolved it).
pub(crate) fn eval_func(s: &Session, f: ScalarFunc, args: &[Value]) -> PgResult<Value> {
    let seq = || match args.first() {
        Some(Value::Int8(oid)) => {
            Oid::try_from(*oid).map_err(|_| PgError::internal(format!("bad sequence OID {oid}")))
        }
        other => Err(PgError::internal(format!(
            "bad sequence argument {other:?}"
        ))),
    };
    let v = match f {
        ScalarFunc::NextVal => nextval(s, seq()?)?,
        ScalarFunc::CurrVal => currval(s, seq()?)?,
        ScalarFunc::LastVal => lastval(s)?,
        ScalarFunc::SetVal => {
            let Some(Value::Int8(value)) = args.get(1) else {
                return Err(PgError::internal("setval without a bigint value"));
            };
            let is_called = !matches!(args.get(2), Some(Value::Bool(false)));
            setval(s, seq()?, *value, is_called)?
        }
        other => {
            return Err(PgError::internal(format!(
                "{other:?} is not a sequence function"
            )));
        }
    };
    Ok(Value::Int8(v))
}
