//! The SQL front end: a query string through the parser, the binder and the planner, as a
//! session sends each statement of a Query message through them
//! (`server::Database::execute_one`; PREPARE as `Session::sql_prepare` does).
//!
//! The catalog is built once per process ([`catalog`]) by running real DDL through a
//! real session on a throwaway data directory; binding and planning read its snapshot,
//! and `reg*` literals read names through it ([`session`]), as a session's statements do.
//! Nothing is executed.

use std::sync::{Arc, OnceLock};

use catalog::CatalogSnapshot;
use common::{PgError, SqlState};
use sql::parser::Command;
use sqlparser::ast::Statement;

/// Tables of every type Myriad has, with keys, foreign keys, checks, defaults, serial and
/// identity columns, indexes, a sequence, a comment and a dropped column; pgbench's
/// tables, since the seed corpus holds pgbench's statements.
const SCHEMA: &str = "
CREATE TABLE t (
    a int PRIMARY KEY, b text, c numeric(10, 2), d float8 DEFAULT 0.5, e bool NOT NULL DEFAULT true,
    f timestamptz, g date, h interval, i uuid, j bytea, k int[], l varchar(20), m char(3),
    n bigint UNIQUE, o smallint CHECK (o > 0), p real, q timestamp(3), r text[], s oid,
    x int);
CREATE INDEX t_b_c ON t (b, c);
CREATE INDEX t_f ON t (f);
ALTER TABLE t DROP COLUMN x;
COMMENT ON TABLE t IS 'every type';
CREATE TABLE u (
    id serial PRIMARY KEY, t_a int REFERENCES t (a), name text NOT NULL UNIQUE,
    qty int CHECK (qty >= 0) DEFAULT 1, at timestamp DEFAULT now());
CREATE TABLE v (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, u_id int, t_a int, payload bytea,
    UNIQUE (u_id, t_a), FOREIGN KEY (u_id) REFERENCES u (id));
CREATE SEQUENCE seq START 10 INCREMENT 5;
CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88));
CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler char(84));
CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84));
CREATE TABLE pgbench_history (
    tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
CREATE TABLE sbtest1 (id serial PRIMARY KEY, k int NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '');
CREATE INDEX k_1 ON sbtest1 (k);
";

/// The database every input is bound against, made on first use and kept for the
/// process (its temporary directory is left behind when the process ends).
struct Fixture {
    catalog: Arc<CatalogSnapshot>,
    /// A session's context over that catalog: what binding and `reg*` text read.
    session: common::session::SessionInfo,
    _db: Arc<server::Database>,
    _dir: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(build_fixture)
}

/// The catalog every input is bound against.
pub fn catalog() -> &'static Arc<CatalogSnapshot> {
    &fixture().catalog
}

/// The session every input is bound in: the bootstrap user, a detached clock, and the
/// fixture's catalog for `reg*` names.
pub fn session() -> &'static common::session::SessionInfo {
    &fixture().session
}

fn build_fixture() -> Fixture {
    use wire::Session as _;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = server::Config {
        data_dir: dir.path().to_path_buf(),
        buffer_pool_pages: 64,
        autovacuum: false,
        ..server::Config::default()
    };
    let db = Arc::new(server::Database::open(&config).expect("open a data directory"));
    let mut session = server::session::Session::new(db.clone());
    for outcome in session.execute_all(SCHEMA) {
        if let Err(e) = outcome.result {
            panic!("the fuzzing schema failed: {} {}", e.code.0, e.message);
        }
    }
    drop(session);
    let catalog = db.committed_catalog();
    let session = common::session::SessionInfo {
        backend_pid: 1,
        text: executor::session::text_context(
            common::datetime::SessionClock::detached(),
            catalog.clone(),
        ),
        ..common::session::SessionInfo::detached()
    };
    Fixture {
        catalog,
        session,
        _db: db,
        _dir: dir,
    }
}

/// Target `sql_front_end`: `data` as a query string (invalid UTF-8 replaced), parsed, and
/// each statement that reaches the binder in the server bound and planned. Statements the
/// session runs itself (BEGIN, SET, SHOW, EXECUTE, ...) and VACUUM stop at the parser.
/// Asserts: no error is XX000 (an internal error is Myriad's bug, whatever the text).
pub fn sql_front_end(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let commands = match sql::parser::parse(&text) {
        Ok(c) => c,
        Err(e) => return check(&text, "parse", e),
    };
    let catalog = catalog();
    for cmd in &commands {
        if let Err(e) = bind_and_plan(catalog, &text, cmd) {
            check(&text, "bind", e);
        }
    }
}

fn check(text: &str, step: &str, e: PgError) {
    assert!(
        e.code != SqlState::INTERNAL_ERROR,
        "{step} of {text:?}: XX000 {} ({:?})",
        e.message,
        e.detail
    );
}

fn bind_and_plan(catalog: &CatalogSnapshot, text: &str, cmd: &Command) -> Result<(), PgError> {
    let binder = sql::Binder::new(catalog, text, session());
    let stmt = match cmd {
        Command::Sql(stmt) => stmt,
        // Utility statements: bound, and not planned (they go around the planner).
        Command::AlterSequence(_)
        | Command::AlterIndex(_)
        | Command::AlterColumnSet(_)
        | Command::AlterPartition(_) => {
            binder.bind_command(cmd)?;
            return Ok(());
        }
        // VACUUM, ANALYZE and the like run in the session, not through the binder.
        _ => return Ok(()),
    };
    match stmt {
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::Execute { .. }
        | Statement::Deallocate { .. }
        | Statement::ShowVariable { .. }
        | Statement::Reset(_)
        | Statement::Set(
            sqlparser::ast::Set::SetTransaction { .. }
            | sqlparser::ast::Set::SingleAssignment { .. }
            | sqlparser::ast::Set::SetTimeZone { .. },
        ) => Ok(()),
        Statement::Prepare {
            data_types,
            statement,
            ..
        } => {
            let declared = data_types
                .iter()
                .map(|t| binder.resolve_type(t).map(|t| t.without_typmod()))
                .collect::<Result<Vec<_>, _>>()?;
            prepared(catalog, text, statement, declared)
        }
        // Several ALTER TABLE actions run one at a time (`Session::alter_table_actions`).
        Statement::AlterTable(a) if a.operations.len() > 1 => {
            for op in &a.operations {
                let one = Statement::AlterTable(sqlparser::ast::AlterTable {
                    operations: vec![op.clone()],
                    ..a.clone()
                });
                binder.bind(&one)?;
            }
            Ok(())
        }
        // `$n` makes sense only in a prepared statement: bind it as Parse would.
        _ if text.contains('$') => prepared(catalog, text, stmt, Vec::new()),
        _ => plan_unless_utility(catalog, binder.bind_command(cmd)?),
    }
}

/// Plan `bound` as the server does: utility statements go around the planner.
fn plan_unless_utility(
    catalog: &CatalogSnapshot,
    bound: sql::bound::BoundStatement,
) -> Result<(), PgError> {
    if !bound.is_utility() {
        let settings = planner::PlannerSettings::default();
        planner::plan(
            &planner::PlanContext {
                snapshot_xmin: u64::MAX,
                catalog,
                sizes: &planner::NoStorage,
                settings: &settings,
                subplans: None,
            },
            bound,
        )?;
    }
    Ok(())
}

/// Bind a statement of the extended protocol and make its generic plan (parameters in
/// place), as Parse and the plan cache do.
fn prepared(
    catalog: &CatalogSnapshot,
    text: &str,
    stmt: &Statement,
    declared: Vec<common::DataType>,
) -> Result<(), PgError> {
    let (bound, _types) = sql::Binder::new(catalog, text, session())
        .with_params(declared)
        .bind_prepared(stmt)?;
    plan_unless_utility(catalog, bound)
}
