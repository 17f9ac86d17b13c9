//! Binding declarative partitioning: `PARTITION BY` of CREATE TABLE and `PARTITION OF
//! ... FOR VALUES`. The bound's values are bound here, coerced to the key columns'
//! types; they are evaluated, checked against the parent's other partitions and
//! entered in the catalog when the statement runs, under the parent's lock
//! (`executor::commands::partition`).

use std::sync::Arc;

use catalog::partition::{KeyExpr, PartitionKey, PartitionStrategy};
use catalog::{ColumnDesc, TableDesc};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::coerce::CastContext;
use super::expr::ExprContext;
use super::{Binder, Scope, ident_name};
use crate::bound::{
    BoundDatum, BoundPartitionOf, BoundPartitionSpec, BoundStatement, DetachStep, Expr,
};

/// The clause name in errors: `aggregate functions are not allowed in partition key
/// expressions`.
pub(crate) const PARTITION_KEY_CLAUSE: &str = "partition key expressions";

fn invalid_definition(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::INVALID_TABLE_DEFINITION, msg)
}

impl Binder<'_> {
    /// `PARTITION BY strategy (column | func(...) | (expression), ...)` of `itself`, the
    /// table being made (sqlparser reads it as a call of a function named after the
    /// strategy).
    pub(crate) fn bind_partition_key(
        &self,
        by: &ast::Expr,
        itself: &TableDesc,
    ) -> PgResult<PartitionKey> {
        let ast::Expr::Function(f) = by else {
            return Err(PgError::syntax(format!("syntax error at or near \"{by}\"")));
        };
        let strategy = match f.name.to_string().to_lowercase().as_str() {
            "range" => PartitionStrategy::Range,
            "list" => PartitionStrategy::List,
            "hash" => PartitionStrategy::Hash,
            other => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("unrecognized partitioning strategy \"{other}\""),
                ));
            }
        };
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(PgError::syntax(format!("syntax error at or near \"{by}\"")));
        };
        let columns = &itself.columns;
        let mut key = Vec::with_capacity(list.args.len());
        let mut exprs = Vec::new();
        for arg in &list.args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = arg else {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{arg}\""
                )));
            };
            // `(a)` is the column itself, as in PostgreSQL.
            let mut e = e;
            while let ast::Expr::Nested(inner) = e {
                e = inner;
            }
            let ty = if let ast::Expr::Identifier(id) = e {
                let name = ident_name(id);
                if super::alter::SYSTEM_COLUMNS.contains(&name.as_str()) {
                    return Err(PgError::new(
                        SqlState::INVALID_OBJECT_DEFINITION,
                        format!("cannot use system column \"{name}\" in partition key"),
                    )
                    .with_position(self.position(&id.span)));
                }
                let Some(c) = columns.iter().position(|c| !c.dropped && c.name == name) else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{name}\" named in partition key does not exist"),
                    )
                    .with_position(self.position(&id.span)));
                };
                key.push(c);
                columns[c].ty
            } else {
                let bound = self.partition_key_expression(itself, e)?;
                let read = super::index::columns_read(&bound);
                if read.is_empty() {
                    return Err(PgError::new(
                        SqlState::INVALID_OBJECT_DEFINITION,
                        "cannot use constant expression as partition key",
                    ));
                }
                key.push(catalog::EXPRESSION_KEY + exprs.len());
                exprs.push(KeyExpr {
                    text: e.to_string(),
                    columns: read,
                    ty: bound.ty,
                });
                bound.ty
            };
            if !partition_key_type(&ty) {
                return Err(PgError::unsupported(format!(
                    "partition keys of type {}",
                    ty.name()
                )));
            }
        }
        if key.is_empty() {
            return Err(PgError::syntax("syntax error at or near \")\""));
        }
        if strategy == PartitionStrategy::List && key.len() > 1 {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                "cannot use \"list\" partition strategy with more than one column",
            ));
        }
        Ok(PartitionKey {
            strategy,
            columns: key,
            exprs,
        })
    }

    /// An expression of a partition key over `table`'s row (PostgreSQL's
    /// `ComputePartitionAttrs` checks, as an index expression's).
    fn partition_key_expression(&self, table: &TableDesc, e: &ast::Expr) -> PgResult<Expr> {
        self.key_expression(table, e, PARTITION_KEY_CLAUSE, "partition key expression")
    }

    /// The expressions of `table`'s partition key, bound over its row, in the order of
    /// its `exprs`.
    pub(crate) fn partition_key_exprs(&self, table: &TableDesc) -> PgResult<Vec<Expr>> {
        let Some(key) = &table.partition_key else {
            return Ok(Vec::new());
        };
        key.exprs
            .iter()
            .map(|e| self.partition_key_expression(table, &crate::parser::parse_expr(&e.text)?))
            .collect()
    }

    /// `PARTITION OF parent FOR VALUES ...`: the parent (it must be partitioned) and the
    /// bound, its values bound as constants of the key columns' types.
    pub(crate) fn bind_partition_of(
        &self,
        parent: &ast::ObjectName,
        values: Option<&ast::ForValues>,
    ) -> PgResult<BoundPartitionOf> {
        let parent = self.table(parent)?;
        let Some(key) = parent.partition_key.clone() else {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("\"{}\" is not partitioned", parent.name),
            ));
        };
        let Some(values) = values else {
            return Err(PgError::syntax("syntax error at end of input"));
        };
        let wrong = |what: &str| {
            invalid_definition(format!(
                "invalid bound specification for a {what} partition"
            ))
        };
        let spec = match (key.strategy, values) {
            (PartitionStrategy::Hash, ast::ForValues::Default) => {
                return Err(invalid_definition(
                    "a hash-partitioned table may not have a default partition",
                ));
            }
            (_, ast::ForValues::Default) => BoundPartitionSpec::Default,
            (PartitionStrategy::Hash, ast::ForValues::With { modulus, remainder }) => {
                if *modulus == 0 {
                    return Err(invalid_definition(
                        "modulus for hash partition must be an integer value greater than zero",
                    ));
                }
                if remainder >= modulus {
                    return Err(invalid_definition(
                        "remainder for hash partition must be less than modulus",
                    ));
                }
                let (Ok(modulus), Ok(remainder)) =
                    (u32::try_from(*modulus), u32::try_from(*remainder))
                else {
                    return Err(PgError::new(
                        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                        "value is out of range for type integer",
                    ));
                };
                BoundPartitionSpec::Hash { modulus, remainder }
            }
            (PartitionStrategy::Hash, _) => return Err(wrong("hash")),
            (PartitionStrategy::List, ast::ForValues::In(values)) => BoundPartitionSpec::List(
                values
                    .iter()
                    .map(|v| self.bind_bound_value(v, &parent, &key, key.columns[0]))
                    .collect::<PgResult<_>>()?,
            ),
            (PartitionStrategy::List, _) => return Err(wrong("list")),
            (PartitionStrategy::Range, ast::ForValues::From { from, to }) => {
                let side = |values: &[ast::PartitionBoundValue], what: &str| {
                    if values.len() != key.columns.len() {
                        return Err(invalid_definition(format!(
                            "{what} must specify exactly one value per partitioning column"
                        )));
                    }
                    let mut out = Vec::with_capacity(values.len());
                    for (v, &c) in values.iter().zip(&key.columns) {
                        out.push(match v {
                            ast::PartitionBoundValue::MinValue => BoundDatum::MinValue,
                            ast::PartitionBoundValue::MaxValue => BoundDatum::MaxValue,
                            ast::PartitionBoundValue::Expr(e) => {
                                BoundDatum::Value(self.bind_bound_value(e, &parent, &key, c)?)
                            }
                        });
                    }
                    check_infinite(&out)?;
                    Ok(out)
                };
                BoundPartitionSpec::Range {
                    from: side(from, "FROM")?,
                    to: side(to, "TO")?,
                }
            }
            (PartitionStrategy::Range, _) => return Err(wrong("range")),
        };
        Ok(BoundPartitionOf {
            key_types: key.types(&parent.columns),
            parent,
            spec,
        })
    }

    /// One value of a bound: a constant expression (no column, no subquery), coerced to
    /// the type of `key`'s part `c` as an assignment (PostgreSQL's
    /// `transformPartitionBoundValue`).
    fn bind_bound_value(
        &self,
        e: &ast::Expr,
        parent: &TableDesc,
        key: &PartitionKey,
        c: usize,
    ) -> PgResult<crate::bound::Expr> {
        let scope = Scope::default();
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "partition bound",
        };
        let (ty, name) = match PartitionKey::expression(c).and_then(|k| key.exprs.get(k)) {
            Some(x) => (x.ty, x.text.as_str()),
            None => (parent.columns[c].ty, parent.columns[c].name.as_str()),
        };
        let bound = self.bind_expr(e, &cx).map_err(|err| {
            if err.code == SqlState::UNDEFINED_COLUMN {
                PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cannot use column reference in partition bound expression",
                )
            } else {
                err
            }
        })?;
        let mut subquery = false;
        bound.walk(&mut |n| {
            subquery |= matches!(n.kind, crate::bound::ExprKind::SubLink(_));
        });
        if subquery {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use subquery in partition bound",
            ));
        }
        // PostgreSQL points at the value when it is not of the key's type.
        let at = self.position(&sqlparser::ast::Spanned::span(e));
        self.coerce(bound, &ty, CastContext::Assignment)
            .map_err(|err| {
                if err.code == SqlState::DATATYPE_MISMATCH {
                    PgError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "specified value cannot be cast to type {} for column \"{name}\"",
                            ty.name(),
                        ),
                    )
                } else {
                    err
                }
                .with_position(at)
            })
    }

    /// ALTER TABLE parent DETACH PARTITION table [CONCURRENTLY | FINALIZE], with
    /// PostgreSQL's refusals (partition rule 6: one pending detach per parent, none
    /// beside a DEFAULT partition).
    fn bind_detach(
        &self,
        a: &crate::parser::AlterPartition,
        parent: Arc<TableDesc>,
        table: Arc<TableDesc>,
    ) -> PgResult<BoundStatement> {
        let state =
            |message: String| PgError::new(SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE, message);
        let finalize_hint = "Use ALTER TABLE ... DETACH PARTITION ... FINALIZE to complete the pending detach operation.";
        let pending = self.catalog.detach_pending(parent.oid);
        if a.concurrently
            && let Some(p) = pending
        {
            return Err(state(format!(
                // User tables live in schema public.
                "partition \"{}\" already pending detach in partitioned table \"public.{}\"",
                p.name, parent.name
            ))
            .with_hint(finalize_hint));
        }
        let of = table
            .partition_of
            .as_ref()
            .filter(|p| p.parent == parent.oid);
        let Some(of) = of else {
            return Err(PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!(
                    "relation \"{}\" is not a partition of relation \"{}\"",
                    table.name, parent.name
                ),
            ));
        };
        let step = if a.finalize {
            if of.detach_pending.is_none() {
                return Err(state(format!(
                    "cannot complete detaching partition \"{}\"",
                    table.name
                ))
                .with_detail("There's no pending concurrent detach."));
            }
            DetachStep::Finish
        } else if of.detach_pending.is_some() {
            return Err(state(format!("cannot detach partition \"{}\"", table.name))
                .with_detail(
                    "The partition is being detached concurrently or has an unfinished detach.",
                )
                .with_hint(finalize_hint));
        } else if a.concurrently {
            if self.catalog.default_partition(parent.oid).is_some() {
                return Err(state(
                    "cannot detach partitions concurrently when a default partition exists".into(),
                ));
            }
            DetachStep::Mark
        } else {
            DetachStep::Whole
        };
        Ok(BoundStatement::DetachPartition {
            parent,
            table,
            step,
        })
    }

    /// ALTER TABLE parent ATTACH PARTITION table FOR VALUES ... | DETACH PARTITION
    /// table, with PostgreSQL's refusals.
    pub(crate) fn bind_alter_partition(
        &self,
        a: &crate::parser::AlterPartition,
    ) -> PgResult<BoundStatement> {
        if a.if_exists && !self.table_exists(&a.table) {
            let (name, _) = self.object_name(&a.table)?;
            return Ok(BoundStatement::Nothing {
                tag: "ALTER TABLE",
                notices: vec![PgError::notice(format!(
                    "relation \"{name}\" does not exist, skipping"
                ))],
            });
        }
        let parent = self.table(&a.table)?;
        let table = self.table(&a.partition)?;
        let Some(values) = &a.attach else {
            return self.bind_detach(a, parent, table);
        };
        if parent.partition_key.is_none() {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("table \"{}\" is not partitioned", parent.name),
            ));
        }
        if table.partition_of.is_some() {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{}\" is already a partition", table.name),
            ));
        }
        if table.oid == parent.oid
            || self
                .catalog
                .descendants(table.oid)
                .iter()
                .any(|d| d.oid == parent.oid)
        {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                "circular inheritance not allowed",
            )
            .with_detail(format!(
                "\"{}\" is already a child of \"{}\".",
                parent.name, table.name
            )));
        }
        check_same_columns(&parent, &table)?;
        let of = self.bind_partition_of(&a.table, Some(values))?;
        Ok(BoundStatement::AttachPartition { table, of })
    }

    /// The new table of `PARTITION OF parent`: the parent's columns (partition rule 1),
    /// with their defaults and NOT NULL.
    pub(crate) fn partition_columns(parent: &Arc<TableDesc>) -> Vec<ColumnDesc> {
        parent
            .columns
            .iter()
            .map(|c| ColumnDesc {
                identity: None,
                stat_target: None,
                ..c.clone()
            })
            .collect()
    }
}

/// A unique key (or unique index) of partitioned table `table` must hold every column of
/// its partition key, each partition's key being unique only within the partition
/// (PostgreSQL's rule and error). `what`: `PRIMARY KEY`, `UNIQUE`.
pub(crate) fn check_unique_holds_partition_key(
    table: &TableDesc,
    key: &PartitionKey,
    columns: &[usize],
    what: &str,
) -> PgResult<()> {
    // The key's parts in order: the first an index cannot hold decides the error.
    match key.columns.iter().find(|c| !columns.contains(c)) {
        None => Ok(()),
        Some(&expr) if PartitionKey::expression(expr).is_some() => Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("unsupported {what} constraint with partition key definition"),
        )
        .with_detail(format!(
            "{what} constraints cannot be used when partition keys include expressions."
        ))),
        Some(&missing) => Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "unique constraint on partitioned table must include all partitioning columns",
        )
        .with_detail(format!(
            "{what} constraint on table \"{}\" lacks column \"{}\" which is part of the partition key.",
            table.name, table.columns[missing].name
        ))),
    }
}

/// A table attached as a partition has its parent's columns (PostgreSQL's errors for
/// one more, one fewer, another type, a NOT NULL missing), and in the parent's places
/// (partition rule 1; a table whose columns are elsewhere is not supported yet).
fn check_same_columns(parent: &TableDesc, table: &TableDesc) -> PgResult<()> {
    let mismatch = |m: String| PgError::new(SqlState::DATATYPE_MISMATCH, m);
    for c in table.columns.iter().filter(|c| !c.dropped) {
        if parent.column_index(&c.name).is_none() {
            return Err(mismatch(format!(
                "table \"{}\" contains column \"{}\" not found in parent \"{}\"",
                table.name, c.name, parent.name
            ))
            .with_detail("The new partition may contain only the columns present in parent."));
        }
    }
    for p in parent.columns.iter().filter(|c| !c.dropped) {
        let Some(i) = table.column_index(&p.name) else {
            return Err(mismatch(format!(
                "child table is missing column \"{}\"",
                p.name
            )));
        };
        let c = &table.columns[i];
        if c.ty != p.ty {
            return Err(mismatch(format!(
                "child table \"{}\" has different type for column \"{}\"",
                table.name, p.name
            )));
        }
        if p.not_null && !c.not_null {
            return Err(mismatch(format!(
                "column \"{}\" in child table must be marked NOT NULL",
                p.name
            )));
        }
    }
    let same_places = parent.columns.len() == table.columns.len()
        && parent
            .columns
            .iter()
            .zip(table.columns.iter())
            .all(|(p, c)| p.dropped == c.dropped && (p.dropped || p.name == c.name));
    if !same_places {
        return Err(PgError::unsupported(
            "ATTACH PARTITION of a table whose columns are not in its parent's order",
        ));
    }
    Ok(())
}

/// After MINVALUE only MINVALUE, after MAXVALUE only MAXVALUE.
fn check_infinite(side: &[BoundDatum]) -> PgResult<()> {
    let mut after: Option<&BoundDatum> = None;
    for d in side {
        match (after, d) {
            (Some(BoundDatum::MinValue), BoundDatum::MinValue)
            | (Some(BoundDatum::MaxValue), BoundDatum::MaxValue) => {}
            (Some(BoundDatum::MinValue), _) => {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "every bound following MINVALUE must also be MINVALUE",
                ));
            }
            (Some(BoundDatum::MaxValue), _) => {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "every bound following MAXVALUE must also be MAXVALUE",
                ));
            }
            _ => {}
        }
        if !matches!(d, BoundDatum::Value(_)) {
            after = Some(d);
        }
    }
    Ok(())
}

/// Types a partition key may have: those with a btree order and PostgreSQL's hash
/// (`common::pghash`).
fn partition_key_type(ty: &common::DataType) -> bool {
    use common::DataType as T;
    !matches!(ty, T::Array(_) | T::Unknown)
}

/// The expressions of `table`'s partition key, bound over its row in the order of its
/// `exprs` (for routing rows, pruning and showing the key); none for a key of columns.
pub fn bind_partition_key_exprs(
    catalog: &catalog::CatalogSnapshot,
    table: &TableDesc,
    session: &common::session::SessionInfo,
) -> PgResult<Vec<Expr>> {
    match &table.partition_key {
        Some(k) if !k.exprs.is_empty() => {
            Binder::new(catalog, "", session).partition_key_exprs(table)
        }
        _ => Ok(Vec::new()),
    }
}
