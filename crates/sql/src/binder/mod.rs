//! The binder: `sqlparser` statements to [`BoundStatement`]s against one catalog snapshot.
//!
//! Name resolution follows PostgreSQL: unquoted identifiers fold to lower case; a column
//! name must match exactly one column of the FROM items in scope (42703 / 42702); a
//! qualifier must name a FROM item (42P01 `missing FROM-clause entry`). Only the `public`
//! schema exists so far.

mod alter;
mod array;
mod catalog_fn;
mod check;
mod coerce;
mod copy;
mod datetime;
mod ddl;
mod dml;
mod explain;
mod expr;
mod index;
mod math;
mod partition;
mod query;
mod reads;
mod sequence;

pub use check::bind_check;
pub use dml::bind_default;
pub use index::{bind_index_expr, bind_index_exprs, bind_index_predicate};
pub use partition::bind_partition_key_exprs;
pub use sequence::check_restart;

pub use coerce::CastContext;
pub use expr::{type_by_name, type_from_ast};

use std::sync::Arc;

use catalog::{CatalogSnapshot, TableDesc};
use common::{DataType, PgError, PgResult, SqlState};
use sqlparser::ast::{self, Statement};

use crate::bound::{BoundStatement, OutputColumn};

/// Binds statements of one query string against one catalog snapshot.
pub struct Binder<'a> {
    /// Every lookup notes what the binding depends on (`reads`).
    catalog: reads::CatalogReads<'a>,
    /// The statement text, to turn token locations into cursor positions.
    sql: &'a str,
    /// The session binding for: its user, database and process id (bound as constants)
    /// and the clock, zone and catalog that literals are read with.
    session: &'a common::session::SessionInfo,
    /// A prepared statement's parameter types, `$1` first: `None` where `$n` is not
    /// allowed (a simple query). A parameter whose type Parse left open starts as
    /// `Unknown` and takes the type its context gives it, as an untyped literal does.
    params: Option<std::cell::RefCell<Vec<DataType>>>,
    /// The SELECT about to be bound is a set operation's leaf: its untyped select-list
    /// items stay untyped for the set operation to resolve (read and cleared by the
    /// SELECT, so that its own subqueries resolve theirs).
    set_op_leaf: std::cell::Cell<bool>,
    /// The queries around the subquery being bound, innermost last: where a column name
    /// the subquery's own FROM items lack is looked up (a correlated reference).
    outer: std::cell::RefCell<Vec<OuterFrame>>,
    /// How deep `bind_expr` is in the expression being bound.
    depth: std::cell::Cell<usize>,
    /// The columns (qualifier, name) whose stored size the SELECT whose FROM is being
    /// bound asks for (`pg_column_size(col)`): its scans of tables with such columns
    /// return them (`query::with_stored_sizes`).
    sized: std::cell::RefCell<Vec<(Option<String>, String)>>,
    /// Whether the statement can call `pg_column_size` (its text names it, or there is no
    /// text): the SELECTs of those that cannot are not searched for calls.
    may_size: bool,
}

/// The deepest expression nesting bound (a chain of 1,000 ANDs is 1,000 deep): every
/// pass over a bound expression (binding, planning, evaluation, EXPLAIN) recurses as deep,
/// and at this depth all fit in a session thread's stack (`wire::SESSION_STACK_BYTES`),
/// also in a debug build. PostgreSQL flattens AND / OR chains and accepts longer ones.
pub const MAX_EXPR_DEPTH: usize = 1000;

/// A query around a subquery: its columns, and the outer values its subquery reads so
/// far (the SubLink's `args`, over this query's row).
struct OuterFrame {
    scope: Scope,
    args: Vec<crate::bound::Expr>,
}

/// PostgreSQL's limit on a statement's parameters (the protocol counts them in 16 bits).
pub const MAX_PARAMS: usize = 65535;

/// An identifier as PostgreSQL reads it: unquoted names fold to lower case and every name
/// is cut to `NAMEDATALEN - 1` bytes.
pub fn ident_name(id: &ast::Ident) -> String {
    let mut s = if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    };
    let max = common::limits::MAX_IDENTIFIER_BYTES;
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// One column visible to expressions: the FROM items' columns, in order.
#[derive(Clone, Debug)]
pub(crate) struct ScopeColumn {
    /// The FROM item's name (its alias, or the table name), shared by its columns.
    pub table: Option<std::sync::Arc<str>>,
    /// Shared with the output columns that show it (no copy per statement).
    pub name: std::sync::Arc<str>,
    pub ty: DataType,
    pub table_oid: u32,
    pub column_number: i16,
    /// A dropped column of a table (`ColumnDesc::dropped`): it keeps its place in the
    /// row, but no name finds it and `*` does not show it.
    pub dropped: bool,
    /// A column JOIN ... USING merged with its match on the other side: its qualified
    /// name and `table.*` still find it, its bare name and `*` find the merged column.
    pub merged_away: bool,
    /// A scan's stored size of the table's column of this number (`pg_column_size`;
    /// `TableDesc::stored_sizes`): no name finds it and `*` does not show it.
    pub stored_size_of: Option<i16>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub columns: Vec<ScopeColumn>,
}

impl Scope {
    pub fn for_table(table: &TableDesc, alias: &str) -> Scope {
        let alias: std::sync::Arc<str> = alias.into();
        Scope {
            columns: table
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    // The stored sizes a query asked the scan for (`TableDesc::stored_sizes`).
                    let own = table.columns.len() - table.stored_sizes.len();
                    let stored_size_of =
                        i.checked_sub(own).map(|k| table.stored_sizes[k] as i16 + 1);
                    ScopeColumn {
                        table: Some(alias.clone()),
                        name: c.name.as_str().into(),
                        ty: c.ty,
                        table_oid: if stored_size_of.is_some() {
                            0
                        } else {
                            table.oid
                        },
                        column_number: if stored_size_of.is_some() {
                            0
                        } else {
                            i as i16 + 1
                        },
                        dropped: c.dropped || stored_size_of.is_some(),
                        merged_away: false,
                        stored_size_of,
                    }
                })
                .collect(),
        }
    }

    fn has_table(&self, name: &str) -> bool {
        self.columns
            .iter()
            .any(|c| c.table.as_deref() == Some(name))
    }

    /// Resolve a possibly qualified column name to its position and type.
    pub fn resolve(&self, table: Option<&str>, name: &str) -> PgResult<(usize, DataType)> {
        if let Some(t) = table
            && !self.has_table(t)
        {
            return Err(PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("missing FROM-clause entry for table \"{t}\""),
            ));
        }
        let mut found = None;
        for (i, c) in self.columns.iter().enumerate() {
            if *c.name == *name
                && !c.dropped
                && (table.is_some() || !c.merged_away)
                && (table.is_none() || c.table.as_deref() == table)
            {
                if found.is_some() {
                    return Err(PgError::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!("column reference \"{name}\" is ambiguous"),
                    ));
                }
                found = Some((i, c.ty));
            }
        }
        found.ok_or_else(|| {
            let msg = match table {
                Some(t) => format!("column {t}.{name} does not exist"),
                None => format!("column \"{name}\" does not exist"),
            };
            PgError::new(SqlState::UNDEFINED_COLUMN, msg)
        })
    }

    pub fn output_column(
        &self,
        index: usize,
        name: std::sync::Arc<str>,
        ty: DataType,
    ) -> OutputColumn {
        let c = &self.columns[index];
        OutputColumn {
            name,
            ty,
            table_oid: c.table_oid,
            column_number: c.column_number,
        }
    }
}

impl<'a> Binder<'a> {
    pub fn new(
        catalog: &'a CatalogSnapshot,
        sql: &'a str,
        session: &'a common::session::SessionInfo,
    ) -> Binder<'a> {
        Binder {
            catalog: reads::CatalogReads::new(catalog),
            sql,
            session,
            params: None,
            set_op_leaf: std::cell::Cell::new(false),
            outer: std::cell::RefCell::new(Vec::new()),
            depth: std::cell::Cell::new(0),
            sized: std::cell::RefCell::new(Vec::new()),
            may_size: sql.is_empty()
                || sql
                    .as_bytes()
                    .windows(14)
                    .any(|w| w.eq_ignore_ascii_case(b"pg_column_size")),
        }
    }

    /// What the statements bound so far read from the catalog: a plan made from them
    /// holds for a later catalog while these do.
    pub fn dependencies(&self) -> catalog::Dependencies {
        self.catalog.dependencies()
    }

    /// Allow `$n` parameters: `declared` are the types Parse gave (`Unknown` where it
    /// left one open); more may be used than declared.
    pub fn with_params(mut self, declared: Vec<DataType>) -> Binder<'a> {
        self.params = Some(std::cell::RefCell::new(declared));
        self
    }

    /// Bind a statement of the extended protocol: the bound statement and its parameter
    /// types, each resolved by the first context that gave it one (42P18 if none did).
    pub fn bind_prepared(&self, stmt: &Statement) -> PgResult<(BoundStatement, Vec<DataType>)> {
        let mut bound = self.bind(stmt)?;
        let mut types = self
            .params
            .as_ref()
            .map(|p| p.borrow().clone())
            .unwrap_or_default();
        bound.for_each_expr_mut(&mut |e| {
            e.walk(&mut |n| {
                if let crate::bound::ExprKind::Param(i) = n.kind
                    && types[i] == DataType::Unknown
                {
                    types[i] = n.ty.without_typmod();
                }
            });
            Ok(())
        })?;
        if let Some(i) = types.iter().position(|t| *t == DataType::Unknown) {
            return Err(PgError::new(
                SqlState::INDETERMINATE_DATATYPE,
                format!("could not determine data type of parameter ${}", i + 1),
            ));
        }
        Ok((bound, types))
    }

    /// A type name as written (`int`, `varchar(10)`, ...).
    pub fn resolve_type(&self, t: &ast::DataType) -> PgResult<DataType> {
        self.bind_type(t)
    }

    /// An EXECUTE argument: a column-free expression, converted to parameter type `ty`
    /// as an assignment would convert it.
    pub fn bind_argument(&self, e: &ast::Expr, ty: &DataType) -> PgResult<crate::bound::Expr> {
        let scope = Scope::default();
        let cx = expr::ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "EXECUTE parameter",
        };
        let bound = self.bind_expr(e, &cx)?;
        self.coerce(bound, ty, CastContext::Assignment)
    }

    /// `$n`: its declared type so far (`Unknown` until a context resolves it).
    pub(crate) fn param(&self, n: usize) -> Option<DataType> {
        let params = self.params.as_ref()?;
        if n == 0 || n > MAX_PARAMS {
            return None;
        }
        let mut p = params.borrow_mut();
        if p.len() < n {
            p.resize(n, DataType::Unknown);
        }
        Some(p[n - 1])
    }

    /// Bind one of Myriad's own commands, or a sqlparser statement.
    pub fn bind_command(&self, cmd: &crate::parser::Command) -> PgResult<BoundStatement> {
        match cmd {
            crate::parser::Command::Sql(s) => self.bind(s),
            crate::parser::Command::AlterSequence(a) => self.bind_alter_sequence(a),
            crate::parser::Command::AlterIndex(a) => self.bind_alter_index(a),
            crate::parser::Command::AlterColumnSet(a) => self.bind_column_set(a),
            crate::parser::Command::AlterPartition(a) => self.bind_alter_partition(a),
            crate::parser::Command::Vacuum(_)
            | crate::parser::Command::Checkpoint
            | crate::parser::Command::Fetch(_) => Err(PgError::internal(
                "VACUUM, ANALYZE, CHECKPOINT and FETCH run outside the binder",
            )),
        }
    }

    pub fn bind(&self, stmt: &Statement) -> PgResult<BoundStatement> {
        match stmt {
            Statement::Query(q) => Ok(BoundStatement::Query(self.bind_query(q)?)),
            Statement::Insert(i) => self.bind_insert(i),
            Statement::Update(u) => self.bind_update(u),
            Statement::Delete(d) => self.bind_delete(d),
            Statement::Explain { .. } => self.bind_explain(stmt),
            Statement::CreateTable(c) => self.bind_create_table(c),
            Statement::CreateIndex(c) => self.bind_create_index(c),
            Statement::CreateSequence {
                temporary,
                if_not_exists,
                name,
                data_type,
                sequence_options,
                owned_by,
            } => self.bind_create_sequence(
                *temporary,
                *if_not_exists,
                name,
                data_type.as_ref(),
                sequence_options,
                owned_by.as_ref(),
            ),
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => self.bind_drop(*object_type, *if_exists, names, *cascade),
            Statement::Lock(l) => self.bind_lock(l),
            Statement::AlterTable(a) => self.bind_alter_table(a),
            Statement::Comment {
                object_type,
                object_name,
                comment,
                if_exists: false,
            } => self.bind_comment(*object_type, object_name, comment.as_deref()),
            Statement::Truncate(t) => self.bind_truncate(t),
            Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                values,
            } if values.is_empty() => self.bind_copy(source, *to, target, options, legacy_options),
            other => Err(PgError::unsupported(statement_kind(other))),
        }
    }

    /// The cursor position of a token, if the parser recorded one.
    pub(crate) fn position(&self, span: &sqlparser::tokenizer::Span) -> Option<u32> {
        crate::parser::location_to_position(self.sql, span.start.line, span.start.column)
    }

    /// Whether `ONLY` comes before the table name `name` in the statement's text (the
    /// parser dropped the word: `parser::only_dropped`).
    pub(crate) fn only(&self, name: &ast::ObjectName) -> bool {
        let Some(first) = name.0.first() else {
            return false;
        };
        let span = match first {
            ast::ObjectNamePart::Identifier(id) => id.span,
            _ => return false,
        };
        let Some(at) = self.position(&span) else {
            return false;
        };
        // The position counts from 1; the text before the name, backwards.
        let before: String = self
            .sql
            .chars()
            .take(at.saturating_sub(1) as usize)
            .collect();
        let word: String = before
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        word.eq_ignore_ascii_case("ylno")
    }

    /// Look up a table by (possibly schema-qualified) name.
    /// Does `name` name a table this session sees?
    pub fn table_exists(&self, name: &ast::ObjectName) -> bool {
        self.table(name).is_ok()
    }

    pub(crate) fn table(&self, name: &ast::ObjectName) -> PgResult<Arc<TableDesc>> {
        let (parts, pos) = self.object_name(name)?;
        self.catalog.table(&parts).cloned().ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{parts}\" does not exist"),
            )
            .with_position(pos)
        })
    }

    /// LOCK [TABLE] [ONLY] name [*], ... [IN mode MODE] [NOWAIT]: the tables (each must be
    /// a table) and the mode, ACCESS EXCLUSIVE by default.
    fn bind_lock(&self, l: &ast::Lock) -> PgResult<BoundStatement> {
        let mut tables = Vec::with_capacity(l.tables.len());
        for target in &l.tables {
            let (name, pos) = self.object_name(&target.name)?;
            if self.catalog.table(&name).is_none() && self.catalog.index(&name).is_some() {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("cannot lock relation \"{name}\""),
                )
                .with_detail("This operation is not supported for indexes.")
                .with_position(pos));
            }
            let table = self.table(&target.name)?;
            // Without ONLY, a partitioned table's partitions are locked too (after it),
            // as PostgreSQL locks a table's descendants.
            let below = match table.partition_key {
                Some(_) if !target.only => self.catalog.descendants(table.oid),
                _ => Vec::new(),
            };
            tables.push(table);
            tables.extend(below);
        }
        Ok(BoundStatement::Lock {
            tables,
            mode: l
                .lock_mode
                .clone()
                .unwrap_or(ast::LockTableMode::AccessExclusive),
            nowait: l.nowait,
        })
    }

    /// PostgreSQL's grammar does not accept its reserved keywords as unquoted names;
    /// sqlparser does, so the binder rejects them with the error PostgreSQL's parser gives.
    pub(crate) fn check_not_reserved(&self, id: &ast::Ident) -> PgResult<()> {
        if id.quote_style.is_none()
            && RESERVED_KEYWORDS
                .binary_search(&id.value.to_lowercase().as_str())
                .is_ok()
        {
            return Err(
                PgError::syntax(format!("syntax error at or near \"{}\"", id.value))
                    .with_position(self.position(&id.span)),
            );
        }
        Ok(())
    }

    /// `information_schema.name`: one of the standard's views, or 42P01; None for a
    /// name in another schema.
    pub(crate) fn standard_view(
        &self,
        name: &ast::ObjectName,
    ) -> Option<PgResult<catalog::SystemView>> {
        let [s, t] = name.0.as_slice() else {
            return None;
        };
        let (s, t) = (s.as_ident()?, t.as_ident()?);
        if ident_name(s) != "information_schema" {
            return None;
        }
        let n = ident_name(t);
        Some(
            catalog::SystemView::lookup_in("information_schema", &n).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"information_schema.{n}\" does not exist"),
                )
                .with_position(self.position(&s.span))
            }),
        )
    }

    /// The relation name of an object name, checking its schema.
    pub(crate) fn object_name(&self, name: &ast::ObjectName) -> PgResult<(String, Option<u32>)> {
        let ids: Vec<&ast::Ident> = name
            .0
            .iter()
            .map(|p| match p {
                ast::ObjectNamePart::Identifier(id) => Ok(id),
                _ => Err(PgError::unsupported(format!("name {name}"))),
            })
            .collect::<PgResult<_>>()?;
        for id in &ids {
            self.check_not_reserved(id)?;
        }
        match ids.as_slice() {
            [t] => Ok((ident_name(t), self.position(&t.span))),
            [s, t] => {
                let schema = ident_name(s);
                // The system views live in pg_catalog as well (PostgreSQL's home for them).
                // So do the built-in functions a FROM clause can call.
                let system = schema == "pg_catalog"
                    && (catalog::SystemView::lookup(&ident_name(t)).is_some()
                        || query::SET_RETURNING.contains(&ident_name(t).as_str()));
                if schema == "pg_catalog" && !system {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{schema}.{}\" does not exist", ident_name(t)),
                    )
                    .with_position(self.position(&s.span)));
                }
                if schema != "public" && !system {
                    return Err(PgError::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{schema}\" does not exist"),
                    )
                    .with_position(self.position(&s.span)));
                }
                Ok((ident_name(t), self.position(&t.span)))
            }
            _ => Err(PgError::syntax(format!(
                "improper qualified name (too many dotted names): {name}"
            ))),
        }
    }
}

/// A statement's kind for `... is not supported` errors: its leading keywords.
fn statement_kind(stmt: &Statement) -> String {
    let text = stmt.to_string();
    let words: Vec<&str> = text
        .split_whitespace()
        .take_while(|w| w.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .take(2)
        .collect();
    if words.is_empty() {
        "this statement".into()
    } else {
        words.join(" ").to_uppercase()
    }
}

use common::ids::RESERVED_KEYWORDS;

#[cfg(test)]
mod tests {
    #[test]
    fn reserved_keywords_are_sorted() {
        assert!(
            common::ids::RESERVED_KEYWORDS
                .windows(2)
                .all(|w| w[0] < w[1])
        );
    }
}
