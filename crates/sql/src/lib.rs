//! The SQL front end: text to bound, typed statements.
//!
//! 1. [`parser::parse`] runs `sqlparser` (PostgreSQL dialect) over the whole query string and
//!    turns its errors into PostgreSQL's `syntax error at or near "..."` with a position;
//!    [`parse_cache::ParseCache`] gives a string the parse of one of the same shape,
//!    literals aside, with its own literals (sql rule 1).
//! 2. [`binder::Binder::bind`] resolves every name against one [`catalog::CatalogSnapshot`],
//!    types every expression, inserts the implicit casts PostgreSQL would, and produces a
//!    [`bound::BoundStatement`]: a logical plan for queries, a target and row source for DML,
//!    a descriptor for DDL.
//!
//! Nothing here touches storage: binding is a pure function of the statement and the
//! catalog snapshot, and the binder notes what it read of it (`binder::reads`), which is
//! what lets the plan cache keep a plan until DDL changes something it read.

pub mod binder;
pub mod bound;
pub mod parse_cache;
pub mod parser;

pub use binder::Binder;
pub use bound::BoundStatement;
