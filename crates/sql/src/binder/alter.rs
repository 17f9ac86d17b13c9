//! Binding ALTER TABLE: ADD PRIMARY KEY / UNIQUE / FOREIGN KEY / CHECK, DROP CONSTRAINT, ADD
//! COLUMN, ALTER COLUMN SET / DROP DEFAULT and NOT NULL, RENAME COLUMN, RENAME TO; and
//! ALTER INDEX ... RENAME TO.

use std::sync::Arc;

use catalog::{FkAction, NewForeignKey, NewKey, TableChange, TableDesc};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{Binder, ident_name};
use crate::bound::{BoundStatement, ColumnDrop, CommentOn, ConstraintDrop};

impl Binder<'_> {
    /// The table an ALTER TABLE names; for IF EXISTS on a missing one, `Err` holds the
    /// statement that only says it was skipped.
    fn altered_table(
        &self,
        name: &ast::ObjectName,
        if_exists: bool,
    ) -> PgResult<Result<Arc<TableDesc>, BoundStatement>> {
        let (name, pos) = self.object_name(name)?;
        match self.catalog.table(&name) {
            Some(table) => Ok(Ok(table.clone())),
            None if if_exists => Ok(Err(BoundStatement::Nothing {
                tag: "ALTER TABLE",
                notices: vec![PgError::notice(format!(
                    "relation \"{name}\" does not exist, skipping"
                ))],
            })),
            None => Err(PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
            .with_position(pos)),
        }
    }

    /// ALTER TABLE [IF EXISTS] [ONLY] t action: one action (the server runs a statement
    /// with several as one ALTER TABLE per action, each bound against what the ones
    /// before it left).
    /// What PostgreSQL refuses to change in a partition alone (its columns are its
    /// parent's).
    fn check_partition_alter(
        &self,
        table: &TableDesc,
        op: &ast::AlterTableOperation,
    ) -> PgResult<()> {
        use ast::AlterTableOperation as Op;
        let parent = table
            .partition_of
            .as_ref()
            .and_then(|p| self.catalog.table_by_oid(p.parent));
        let inherited = |what: &str, name: &str| {
            PgError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("cannot {what} inherited column \"{name}\""),
            )
        };
        match op {
            Op::AddColumn { .. } if parent.is_some() => Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                "cannot add column to a partition",
            )),
            Op::DropColumn { column_names, .. } => {
                let Some(name) = column_names.first().map(ident_name) else {
                    return Ok(());
                };
                if parent.is_some() && table.column_index(&name).is_some() {
                    return Err(inherited("drop", &name));
                }
                if let Some(key) = &table.partition_key
                    && let Some(c) = table.column_index(&name)
                    && key.columns_read().contains(&c)
                {
                    return Err(PgError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        format!(
                            "cannot drop column \"{name}\" because it is part of the partition key of relation \"{}\"",
                            table.name
                        ),
                    ));
                }
                Ok(())
            }
            Op::RenameColumn {
                old_column_name, ..
            } if parent.is_some() && table.column_index(&ident_name(old_column_name)).is_some() => {
                Err(inherited("rename", &ident_name(old_column_name)))
            }
            Op::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::DropNotNull,
            } => {
                let name = ident_name(column_name);
                match (parent, table.column_index(&name)) {
                    (Some(p), Some(c)) if p.columns.get(c).is_some_and(|c| c.not_null) => {
                        Err(PgError::new(
                            SqlState::INVALID_TABLE_DEFINITION,
                            format!("column \"{name}\" is marked NOT NULL in parent table"),
                        ))
                    }
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn bind_alter_table(&self, a: &ast::AlterTable) -> PgResult<BoundStatement> {
        if a.table_type.is_some() || a.location.is_some() || a.on_cluster.is_some() {
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{}\"",
                a.to_string().split_whitespace().nth(1).unwrap_or("")
            )));
        }
        let table = match self.altered_table(&a.name, a.if_exists)? {
            Ok(table) => table,
            Err(skipped) => return Ok(skipped),
        };
        let [op] = a.operations.as_slice() else {
            return Err(PgError::unsupported("ALTER TABLE with several actions"));
        };
        self.check_partition_alter(&table, op)?;
        if a.only {
            self.check_alter_only(&table, op)?;
        }
        let mut bound = self.bind_alter_action(table, op)?;
        if let BoundStatement::ChangeTable { only, .. } = &mut bound {
            *only = a.only;
        }
        Ok(bound)
    }

    /// ALTER TABLE ONLY of a partitioned table with partitions: what PostgreSQL refuses
    /// to change in the parent alone (its partitions' columns and constraints are its
    /// own: partition rule 1), with its errors. A default or a statistics target may be
    /// the parent's alone; a table without partitions has nothing to leave out.
    fn check_alter_only(&self, table: &TableDesc, op: &ast::AlterTableOperation) -> PgResult<()> {
        use ast::AlterTableOperation as Op;
        if table.partition_key.is_none() {
            return Ok(());
        }
        let partitions = self.catalog.descendants(table.oid);
        if partitions.is_empty() {
            return Ok(());
        }
        let refuse = |message: String| PgError::new(SqlState::INVALID_TABLE_DEFINITION, message);
        let hint = "Do not specify the ONLY keyword.";
        match op {
            Op::AddColumn { .. } => Err(refuse("column must be added to child tables too".into())),
            Op::AddConstraint { constraint, .. } => match constraint {
                ast::TableConstraint::Check(_) => Err(refuse(
                    "constraint must be added to child tables too".into(),
                )),
                // PostgreSQL makes the parent's index alone, invalid until each
                // partition's is attached (pg_dump's way); Myriad has no invalid index.
                _ => Err(PgError::unsupported(
                    "ALTER TABLE ONLY ... ADD CONSTRAINT of a partitioned table",
                )),
            },
            Op::DropColumn { .. } => Err(refuse(
                "cannot drop column from only the partitioned table when partitions exist".into(),
            )
            .with_hint(hint)),
            Op::RenameColumn {
                old_column_name, ..
            } => Err(refuse(format!(
                "inherited column \"{}\" must be renamed in child tables too",
                ident_name(old_column_name)
            ))),
            Op::DropConstraint { .. }
            | Op::AlterColumn {
                op: ast::AlterColumnOperation::DropNotNull,
                ..
            } => Err(refuse(
                "cannot remove constraint from only the partitioned table when partitions exist"
                    .into(),
            )
            .with_hint(hint)),
            Op::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetNotNull,
            } => {
                let name = ident_name(column_name);
                let Some(c) = table.column_index(&name) else {
                    return Ok(());
                };
                match partitions
                    .iter()
                    .find(|p| p.columns.get(c).is_some_and(|col| !col.not_null))
                {
                    Some(p) => Err(
                        refuse("constraint must be added to child tables too".into())
                            .with_detail(format!(
                                "Column \"{name}\" of relation \"{}\" is not already NOT NULL.",
                                p.name
                            ))
                            .with_hint(hint),
                    ),
                    None => Ok(()),
                }
            }
            Op::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDataType { .. },
            } => Err(refuse(format!(
                "type of inherited column \"{}\" must be changed in child tables too",
                ident_name(column_name)
            ))),
            _ => Ok(()),
        }
    }

    /// One ALTER TABLE action on `table`.
    fn bind_alter_action(
        &self,
        table: Arc<TableDesc>,
        op: &ast::AlterTableOperation,
    ) -> PgResult<BoundStatement> {
        match op {
            ast::AlterTableOperation::AddConstraint {
                constraint,
                not_valid,
            } => {
                if let ast::TableConstraint::Check(check) = constraint {
                    let (check, condition) = self.bind_new_check(&table, check, !*not_valid)?;
                    return Ok(BoundStatement::AddCheck {
                        table,
                        check,
                        condition,
                    });
                }
                if *not_valid {
                    return Err(PgError::unsupported("NOT VALID constraints"));
                }
                self.bind_add_constraint(table, constraint)
            }
            ast::AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                column_position: None,
                ..
            } => self.bind_add_column(table, column_def, *if_not_exists),
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                self.bind_alter_column(table, column_name, op)
            }
            ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => self.bind_rename_column(table, old_column_name, new_column_name),
            ast::AlterTableOperation::RenameTable {
                table_name: ast::RenameTableNameKind::To(to),
            } => {
                let (name, _) = self.object_name(to)?;
                Ok(BoundStatement::ChangeTable {
                    table,
                    change: TableChange::Rename(name),
                    notices: Vec::new(),
                    only: false,
                })
            }
            ast::AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                drop_behavior,
                ..
            } => {
                let [name] = column_names.as_slice() else {
                    return Err(PgError::syntax(format!(
                        "syntax error at or near \"{}\"",
                        column_names.get(1).map(ident_name).unwrap_or_default()
                    )));
                };
                self.bind_drop_column(
                    table,
                    &ident_name(name),
                    *if_exists,
                    matches!(drop_behavior, Some(ast::DropBehavior::Cascade)),
                )
            }
            ast::AlterTableOperation::DropConstraint {
                if_exists,
                name,
                drop_behavior,
            } => self.bind_drop_constraint(
                table,
                &ident_name(name),
                *if_exists,
                matches!(drop_behavior, Some(ast::DropBehavior::Cascade)),
            ),
            other => Err(PgError::unsupported(format!(
                "ALTER TABLE ... {}",
                other
                    .to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        }
    }

    /// ALTER TABLE DROP COLUMN [IF EXISTS] name [CASCADE]. The table's indexes and
    /// constraints that use the column go with it; foreign keys of other tables that
    /// reference it only with CASCADE (2BP01 without).
    fn bind_drop_column(
        &self,
        table: Arc<TableDesc>,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> PgResult<BoundStatement> {
        if SYSTEM_COLUMNS.contains(&name) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot drop system column \"{name}\""),
            ));
        }
        let Some(column) = table.column_index(name) else {
            let message = format!(
                "column \"{name}\" of relation \"{}\" does not exist",
                table.name
            );
            return skip_or_fail(message, if_exists, SqlState::UNDEFINED_COLUMN);
        };
        // A foreign key referencing the column, unless it is the table's own and the
        // column is one of its referencing columns: such a key goes with the column.
        let dependents: Vec<(Arc<TableDesc>, catalog::ForeignKey)> = self
            .catalog
            .referencing(table.oid)
            .filter(|(t, fk)| {
                let own = t.oid == table.oid && fk.columns.contains(&column);
                fk.ref_columns.contains(&column) && !own
            })
            .map(|(t, fk)| (t.clone(), fk.clone()))
            .collect();
        let mut notices = Vec::new();
        if !dependents.is_empty() {
            let what = format!("column {name} of table {}", table.name);
            if !cascade {
                let on: Vec<_> = dependents
                    .iter()
                    .map(|(t, fk)| (t.clone(), fk.clone(), what.clone()))
                    .collect();
                return Err(dependents_error(&what, &on));
            }
            let lines: Vec<String> = dependents
                .iter()
                .map(|(t, fk)| format!("constraint {} on table {}", fk.name, t.name))
                .collect();
            notices.push(cascade_notice(&lines));
        }
        Ok(BoundStatement::DropColumn(ColumnDrop {
            table,
            column,
            dependents,
            notices,
        }))
    }

    /// COMMENT ON TABLE t | COLUMN t.c | INDEX i IS 'text' | NULL ('' removes it too, as
    /// in PostgreSQL). A system column takes its negative attnum, as PostgreSQL's does.
    pub(crate) fn bind_comment(
        &self,
        kind: ast::CommentObject,
        name: &ast::ObjectName,
        text: Option<&str>,
    ) -> PgResult<BoundStatement> {
        let text = text.filter(|t| !t.is_empty()).map(str::to_string);
        // PostgreSQL reports a missing relation here without a position.
        let missing = |what: &str| {
            PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{what}\" does not exist"),
            )
        };
        let wrong = |what: &str, kind: &str| {
            PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{what}\" is not {kind}"),
            )
        };
        let (table, object, sub) = match kind {
            ast::CommentObject::Table => {
                let (n, _) = self.object_name(name)?;
                match self.catalog.table(&n) {
                    Some(t) => (t.clone(), t.oid, 0),
                    None if self.catalog.relation_exists(&n) => {
                        return Err(wrong(&n, "a table"));
                    }
                    None => return Err(missing(&n)),
                }
            }
            ast::CommentObject::Index => {
                let (n, _) = self.object_name(name)?;
                match self.catalog.index(&n) {
                    Some((t, i)) => (t.clone(), i.oid, 0),
                    None if self.catalog.relation_exists(&n) => {
                        return Err(wrong(&n, "an index"));
                    }
                    None => return Err(missing(&n)),
                }
            }
            ast::CommentObject::Column => {
                let Some((column, relation)) = name.0.split_last() else {
                    return Err(PgError::syntax("column name must be qualified"));
                };
                if relation.is_empty() {
                    return Err(PgError::syntax("column name must be qualified"));
                }
                let relation = ast::ObjectName(relation.to_vec());
                let (rel, _) = self.object_name(&relation)?;
                let Some(t) = self.catalog.table(&rel) else {
                    return Err(missing(&rel));
                };
                let column = match column {
                    ast::ObjectNamePart::Identifier(id) => ident_name(id),
                    other => other.to_string(),
                };
                let system = SYSTEM_COLUMNS.iter().position(|s| *s == column);
                let sub = match (t.column_index(&column), system) {
                    (Some(i), _) => i as i32 + 1,
                    (None, Some(k)) => -(k as i32) - 1,
                    (None, None) => {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!(
                                "column \"{column}\" of relation \"{}\" does not exist",
                                t.name
                            ),
                        ));
                    }
                };
                (t.clone(), t.oid, sub)
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "COMMENT ON {}",
                    other.to_string().to_uppercase()
                )));
            }
        };
        Ok(BoundStatement::Comment(CommentOn {
            table,
            object,
            sub,
            text,
        }))
    }

    /// ALTER INDEX [IF EXISTS] name RENAME TO new_name: renames the index, and the
    /// constraint it backs. As in PostgreSQL, the name may also be a table's, which it
    /// renames.
    pub(crate) fn bind_alter_index(
        &self,
        a: &crate::parser::AlterIndex,
    ) -> PgResult<BoundStatement> {
        let (name, _) = self.object_name(&a.name)?;
        let target = match (self.catalog.index(&name), self.catalog.table(&name)) {
            (Some((t, i)), _) => Some((t.clone(), Some(i.oid))),
            (None, Some(t)) => Some((t.clone(), None)),
            (None, None) => None,
        };
        let Some((table, index)) = target else {
            if self.catalog.relation_exists(&name) {
                return Err(PgError::unsupported(format!(
                    "ALTER INDEX of sequence \"{name}\""
                )));
            }
            return missing_relation(&name, a.if_exists, "ALTER INDEX");
        };
        let (Some(to), None) = (&a.rename_to, &a.unsupported) else {
            return Err(PgError::unsupported(format!(
                "ALTER INDEX ... {}",
                a.unsupported
                    .as_deref()
                    .unwrap_or_default()
                    .split_whitespace()
                    .take_while(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'))
                    .take(2)
                    .map(str::to_uppercase)
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        };
        let to = ident_name(to);
        let change = match index {
            Some(index) => TableChange::RenameIndex { index, name: to },
            None => TableChange::Rename(to),
        };
        Ok(BoundStatement::ChangeTable {
            table,
            change,
            notices: Vec::new(),
            only: false,
        })
    }

    /// ADD [COLUMN] [IF NOT EXISTS] name type [NULL | NOT NULL | DEFAULT e ...]. Keys,
    /// references, identity and SERIAL on a new column are not yet Myriad's.
    fn bind_add_column(
        &self,
        table: Arc<TableDesc>,
        def: &ast::ColumnDef,
        if_not_exists: bool,
    ) -> PgResult<BoundStatement> {
        let name = ident_name(&def.name);
        if table.column_index(&name).is_some() {
            return skip_or_fail(
                column_exists(&name, &table),
                if_not_exists,
                SqlState::DUPLICATE_COLUMN,
            );
        }
        self.check_not_reserved(&def.name)?;
        check_not_system_column(&name)?;
        if let ast::DataType::Custom(n, mods) = &def.data_type
            && mods.is_empty()
            && n.0.len() == 1
            && super::sequence::serial_type(n.to_string().to_lowercase().as_str()).is_some()
        {
            return Err(PgError::unsupported(
                "ALTER TABLE ... ADD COLUMN of a SERIAL type",
            ));
        }
        let ty = self.bind_type(&def.data_type)?;
        let mut column = catalog::ColumnDesc::new(name, ty);
        let mut fill = None;
        for opt in &def.options {
            match &opt.option {
                ast::ColumnOption::Null => column.not_null = false,
                ast::ColumnOption::NotNull => column.not_null = true,
                ast::ColumnOption::Default(e) => {
                    self.check_default(e, &column)?;
                    column.default = Some(e.to_string());
                }
                other => {
                    return Err(PgError::unsupported(format!(
                        "ALTER TABLE ... ADD COLUMN with {other}"
                    )));
                }
            }
        }
        if column.default.is_some() {
            fill = Some(self.default_value(&column)?);
        }
        Ok(BoundStatement::AddColumn {
            table,
            column,
            fill,
        })
    }

    /// ALTER [COLUMN] c SET DEFAULT e | DROP DEFAULT | SET NOT NULL | DROP NOT NULL, with
    /// PostgreSQL's refusals for key and identity columns.
    fn bind_alter_column(
        &self,
        table: Arc<TableDesc>,
        column: &ast::Ident,
        op: &ast::AlterColumnOperation,
    ) -> PgResult<BoundStatement> {
        use ast::AlterColumnOperation as Op;
        let name = ident_name(column);
        let Some(i) = table.column_index(&name) else {
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" of relation \"{}\" does not exist",
                    table.name
                ),
            ));
        };
        let col = &table.columns[i];
        let identity = || {
            PgError::syntax(format!(
                "column \"{name}\" of relation \"{}\" is an identity column",
                table.name
            ))
        };
        let change = match op {
            Op::SetNotNull => TableChange::NotNull {
                column: i,
                not_null: true,
            },
            Op::DropNotNull => {
                if table
                    .indexes
                    .iter()
                    .any(|x| x.primary && x.columns.contains(&i))
                {
                    return Err(PgError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        format!("column \"{name}\" is in a primary key"),
                    ));
                }
                if col.identity.is_some() {
                    return Err(identity());
                }
                TableChange::NotNull {
                    column: i,
                    not_null: false,
                }
            }
            Op::SetDefault { value } => {
                if col.identity.is_some() {
                    return Err(identity());
                }
                self.check_default(value, col)?;
                TableChange::Default {
                    column: i,
                    default: Some(value.to_string()),
                }
            }
            Op::DropDefault => {
                if col.identity.is_some() {
                    return Err(identity()
                        .with_hint("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead."));
                }
                TableChange::Default {
                    column: i,
                    default: None,
                }
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "ALTER TABLE ... ALTER COLUMN ... {}",
                    other
                        .to_string()
                        .split_whitespace()
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            }
        };
        Ok(BoundStatement::ChangeTable {
            table,
            change,
            notices: Vec::new(),
            only: false,
        })
    }

    /// ALTER TABLE ... ALTER [COLUMN] c SET STATISTICS n: -1 for the default, 0 for none,
    /// above 10000 lowered to it with a warning (as PostgreSQL does). SET STORAGE: the
    /// column's strategy (access rule 12), which the rows stored before keep. SET
    /// COMPRESSION: lz4 (or DEFAULT, which is lz4), the one method Myriad has.
    pub(crate) fn bind_column_set(
        &self,
        a: &crate::parser::AlterColumnSet,
    ) -> PgResult<BoundStatement> {
        use crate::parser::ColumnSet;
        let table = match self.altered_table(&a.name, a.if_exists)? {
            Ok(table) => table,
            Err(skipped) => return Ok(skipped),
        };
        let column = ident_name(&a.column);
        let Some(i) = table.column_index(&column) else {
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{column}\" of relation \"{}\" does not exist",
                    table.name
                ),
            ));
        };
        let ty = table.columns[i].ty;
        let not_varlena = || {
            PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("column data type {} can only have storage PLAIN", ty.name()),
            )
        };
        let target = match &a.action {
            ColumnSet::Statistics(t) => *t,
            ColumnSet::Storage(name) => {
                let storage = match name.to_ascii_lowercase().as_str() {
                    "plain" => common::types::Storage::Plain,
                    "external" => common::types::Storage::External,
                    "extended" => common::types::Storage::Extended,
                    "main" => common::types::Storage::Main,
                    _ => {
                        return Err(PgError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("invalid storage type \"{name}\""),
                        ));
                    }
                };
                if ty.typlen() != -1 && storage != common::types::Storage::Plain {
                    return Err(not_varlena());
                }
                return Ok(BoundStatement::ChangeTable {
                    table,
                    change: TableChange::Storage { column: i, storage },
                    notices: Vec::new(),
                    only: a.only,
                });
            }
            ColumnSet::Compression(method) => {
                if ty.typlen() != -1 {
                    return Err(PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!(
                            "column data type {} does not support compression",
                            ty.name()
                        ),
                    ));
                }
                return match method.to_ascii_lowercase().as_str() {
                    // lz4 is what every value is compressed with: nothing changes.
                    "lz4" | "default" => Ok(BoundStatement::ChangeTable {
                        change: TableChange::Storage {
                            column: i,
                            storage: table.columns[i].storage,
                        },
                        table,
                        notices: Vec::new(),
                        only: a.only,
                    }),
                    "pglz" => Err(PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "compression method pglz not supported",
                    )
                    .with_detail("Myriad compresses values with lz4 only.")),
                    _ => Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid compression method \"{method}\""),
                    )),
                };
            }
        };
        let mut notices = Vec::new();
        let target = match target {
            t if t < -1 => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("statistics target {t} is too low"),
                ));
            }
            -1 => None,
            t if t > 10000 => {
                notices.push(PgError::warning(
                    SqlState::WARNING,
                    "lowering statistics target to 10000",
                ));
                Some(10000)
            }
            t => Some(t as u16),
        };
        Ok(BoundStatement::ChangeTable {
            table,
            change: TableChange::StatTarget { column: i, target },
            notices,
            only: a.only,
        })
    }

    /// RENAME [COLUMN] a TO b.
    fn bind_rename_column(
        &self,
        table: Arc<TableDesc>,
        old: &ast::Ident,
        new: &ast::Ident,
    ) -> PgResult<BoundStatement> {
        let (old, name) = (ident_name(old), ident_name(new));
        let Some(i) = table.column_index(&old) else {
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{old}\" does not exist"),
            ));
        };
        self.check_not_reserved(new)?;
        check_not_system_column(&name)?;
        if table.column_index(&name).is_some() {
            return skip_or_fail(
                column_exists(&name, &table),
                false,
                SqlState::DUPLICATE_COLUMN,
            );
        }
        Ok(BoundStatement::ChangeTable {
            table,
            // The executor rewrites the text of the checks and of the index predicates
            // and expressions that read the column.
            change: TableChange::RenameColumn {
                column: i,
                name,
                checks: Vec::new(),
                index_exprs: Vec::new(),
            },
            notices: Vec::new(),
            only: false,
        })
    }

    fn bind_add_constraint(
        &self,
        table: Arc<TableDesc>,
        c: &ast::TableConstraint,
    ) -> PgResult<BoundStatement> {
        let (name, cols, primary) = match c {
            ast::TableConstraint::PrimaryKey(pk) => (&pk.name, &pk.columns, true),
            ast::TableConstraint::Unique(u) => (&u.name, &u.columns, false),
            ast::TableConstraint::ForeignKey(fk) => return self.bind_add_foreign_key(table, fk),
            other => return Err(PgError::unsupported(format!("table constraint {other}"))),
        };
        let mut positions = Vec::with_capacity(cols.len());
        for ic in cols {
            let ast::Expr::Identifier(id) = &ic.column.expr else {
                return Err(PgError::unsupported("expressions in key constraints"));
            };
            let n = ident_name(id);
            let Some(p) = table.column_index(&n) else {
                // PostgreSQL says it differently for the two (SET NOT NULL comes first
                // for a primary key).
                let message = if primary {
                    format!(
                        "column \"{n}\" of relation \"{}\" does not exist",
                        table.name
                    )
                } else {
                    format!("column \"{n}\" named in key does not exist")
                };
                return Err(PgError::new(SqlState::UNDEFINED_COLUMN, message));
            };
            if positions.contains(&p) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!(
                        "column \"{n}\" appears twice in {} constraint",
                        if primary { "primary key" } else { "unique" }
                    ),
                ));
            }
            positions.push(p);
        }
        if primary && table.indexes.iter().any(|i| i.primary) {
            return Err(PgError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!(
                    "multiple primary keys for table \"{}\" are not allowed",
                    table.name
                ),
            ));
        }
        if let Some(key) = &table.partition_key {
            let what = if primary { "PRIMARY KEY" } else { "UNIQUE" };
            super::partition::check_unique_holds_partition_key(&table, key, &positions, what)?;
        }
        Ok(BoundStatement::AddKey {
            table,
            key: NewKey {
                check_xmin: 0,
                parent: None,
                name: name.as_ref().map(ident_name),
                columns: positions,
                primary,
            },
        })
    }

    fn bind_add_foreign_key(
        &self,
        table: Arc<TableDesc>,
        fk: &ast::ForeignKeyConstraint,
    ) -> PgResult<BoundStatement> {
        let referenced = self.referenced_table(&fk.foreign_table)?;
        let fk = self.bind_foreign_key(&table, &referenced, fk)?;
        Ok(BoundStatement::AddForeignKey {
            table,
            referenced,
            fk,
        })
    }

    /// The table a foreign key references (a missing one's error has no position, as
    /// in PostgreSQL).
    pub(crate) fn referenced_table(&self, name: &ast::ObjectName) -> PgResult<Arc<TableDesc>> {
        // A partitioned table is referenced through its partitions' keys
        // (`executor::fkey`).
        self.table(name).map_err(|e| e.with_position(None))
    }

    /// A foreign key of `table` referencing `referenced` (the same table, for a
    /// self-reference), checked as PostgreSQL checks it: the columns exist, pair up, have
    /// the same types, and the referenced ones have a unique index over exactly them.
    /// The pairs come back in the index's column order.
    pub(crate) fn bind_foreign_key(
        &self,
        table: &TableDesc,
        referenced: &TableDesc,
        fk: &ast::ForeignKeyConstraint,
    ) -> PgResult<NewForeignKey> {
        if fk
            .characteristics
            .is_some_and(|c| c.deferrable == Some(true))
        {
            return Err(PgError::unsupported("DEFERRABLE foreign keys"));
        }
        let match_full = match fk.match_kind {
            None | Some(ast::ConstraintReferenceMatchKind::Simple) => false,
            Some(ast::ConstraintReferenceMatchKind::Full) => true,
            Some(ast::ConstraintReferenceMatchKind::Partial) => {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "MATCH PARTIAL not yet implemented",
                ));
            }
        };
        let action = |a: &Option<ast::ReferentialAction>, what: &str| match a {
            None | Some(ast::ReferentialAction::NoAction) => Ok(FkAction::NoAction),
            Some(ast::ReferentialAction::Restrict) => Ok(FkAction::Restrict),
            Some(other) => Err(PgError::unsupported(format!("ON {what} {other}"))),
        };
        let on_delete = action(&fk.on_delete, "DELETE")?;
        let on_update = action(&fk.on_update, "UPDATE")?;
        let mut columns = Vec::with_capacity(fk.columns.len());
        for c in &fk.columns {
            let n = ident_name(c);
            let p = table.column_index(&n).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                )
            })?;
            columns.push(p);
        }
        // No column list: the primary key's columns.
        let ref_columns: Vec<usize> = if fk.referred_columns.is_empty() {
            referenced
                .indexes
                .iter()
                .find(|i| i.primary)
                .map(|i| i.columns.clone())
                .ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!(
                            "there is no primary key for referenced table \"{}\"",
                            referenced.name
                        ),
                    )
                })?
        } else {
            let mut out = Vec::with_capacity(fk.referred_columns.len());
            for c in &fk.referred_columns {
                let n = ident_name(c);
                out.push(referenced.column_index(&n).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{n}\" referenced in foreign key constraint does not exist"
                        ),
                    )
                })?);
            }
            out
        };
        if columns.len() != ref_columns.len() {
            return Err(PgError::new(
                SqlState::INVALID_FOREIGN_KEY,
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        // A unique index over exactly the referenced columns (in any order), whose
        // positions the check probes in the index's order.
        let mut sorted = ref_columns.clone();
        sorted.sort_unstable();
        let index = referenced
            .unique_indexes()
            .filter(|i| i.proves_unique())
            .find(|i| {
                let mut c = i.columns.clone();
                c.sort_unstable();
                c == sorted
            })
            .ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_FOREIGN_KEY,
                    format!(
                        "there is no unique constraint matching given keys for referenced table \"{}\"",
                        referenced.name
                    ),
                )
            })?;
        for (&c, &r) in columns.iter().zip(&ref_columns) {
            let (ct, rt) = (table.columns[c].ty, referenced.columns[r].ty);
            if ct.oid() != rt.oid() {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "foreign key constraint \"{}\" cannot be implemented",
                        fk.name.as_ref().map(ident_name).unwrap_or_else(|| format!(
                            "{}_{}_fkey",
                            table.name, table.columns[columns[0]].name
                        ))
                    ),
                )
                .with_detail(format!(
                    "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                    table.columns[c].name,
                    referenced.columns[r].name,
                    ct.name(),
                    rt.name()
                )));
            }
        }
        // Keep the pairs in the index's column order, so a referencing row's key probes
        // the index directly.
        let (columns, ref_columns): (Vec<usize>, Vec<usize>) = index
            .columns
            .iter()
            .map(|ic| {
                let k = ref_columns.iter().position(|r| r == ic).expect("same set");
                (columns[k], ref_columns[k])
            })
            .unzip();
        Ok(NewForeignKey {
            name: fk.name.as_ref().map(ident_name),
            columns,
            ref_table: referenced.oid,
            ref_columns,
            ref_index: index.oid,
            on_delete,
            on_update,
            match_full,
        })
    }

    fn bind_drop_constraint(
        &self,
        table: Arc<TableDesc>,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> PgResult<BoundStatement> {
        if let Some(check) = table.checks.iter().find(|c| c.name == name) {
            return Ok(BoundStatement::DropConstraint(ConstraintDrop::Check {
                check: check.oid,
                table,
            }));
        }
        if let Some(fk) = table.foreign_keys.iter().find(|f| f.name == name) {
            let referenced = self.catalog.table_by_oid(fk.ref_table).cloned();
            return Ok(BoundStatement::DropConstraint(ConstraintDrop::ForeignKey {
                fk: fk.oid,
                referenced,
                table,
            }));
        }
        if let Some(index) = table
            .indexes
            .iter()
            .find(|i| i.constraint && i.name == name)
        {
            if index.parent.is_some() {
                return Err(PgError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    format!(
                        "cannot drop inherited constraint \"{name}\" of relation \"{}\"",
                        table.name
                    ),
                ));
            }
            let dependents: Vec<(Arc<TableDesc>, catalog::ForeignKey)> = self
                .catalog
                .referencing(table.oid)
                .filter(|(_, fk)| fk.ref_index == index.oid)
                .map(|(t, fk)| (t.clone(), fk.clone()))
                .collect();
            if !dependents.is_empty() && !cascade {
                let on: Vec<_> = dependents
                    .into_iter()
                    .map(|(t, fk)| (t, fk, format!("index {name}")))
                    .collect();
                return Err(dependents_error(
                    &format!("constraint {name} on table {}", table.name),
                    &on,
                ));
            }
            return Ok(BoundStatement::DropConstraint(ConstraintDrop::Key {
                index: index.clone(),
                table,
                dependents,
            }));
        }
        let message = format!(
            "constraint \"{name}\" of relation \"{}\" does not exist",
            table.name
        );
        skip_or_fail(message, if_exists, SqlState::UNDEFINED_OBJECT)
    }
}

/// PostgreSQL's notice of what a DROP ... CASCADE dropped besides its object: one
/// object named in the message, several counted there and named in the detail.
pub(crate) fn cascade_notice(lines: &[String]) -> PgError {
    match lines {
        [one] => PgError::notice(format!("drop cascades to {one}")),
        many => PgError::notice(format!("drop cascades to {} other objects", many.len()))
            .with_detail(
                many.iter()
                    .map(|l| format!("drop cascades to {l}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
    }
}

/// 2BP01 for dropping `what` while foreign keys depend on it, worded as PostgreSQL's
/// `reportDependentObjects`.
pub(crate) fn dependents_error(
    what: &str,
    dependents: &[(Arc<TableDesc>, catalog::ForeignKey, String)],
) -> PgError {
    let lines: Vec<String> = dependents
        .iter()
        .map(|(t, fk, on)| format!("constraint {} on table {} depends on {on}", fk.name, t.name))
        .collect();
    PgError::new(
        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot drop {what} because other objects depend on it"),
    )
    .with_detail(lines.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}

/// PostgreSQL's system columns, in the order of their attnums (-1 down to -6).
pub(crate) const SYSTEM_COLUMNS: [&str; 6] = ["ctid", "xmin", "cmin", "xmax", "cmax", "tableoid"];

/// PostgreSQL's system columns: no user column may take their names.
pub(crate) fn check_not_system_column(name: &str) -> PgResult<()> {
    if SYSTEM_COLUMNS.contains(&name) {
        return Err(PgError::new(
            SqlState::DUPLICATE_COLUMN,
            format!("column name \"{name}\" conflicts with a system column name"),
        ));
    }
    Ok(())
}

/// With IF [NOT] EXISTS (`skip`), `message` as a NOTICE ending ", skipping" and nothing
/// done; else the error `code`.
fn skip_or_fail(message: String, skip: bool, code: SqlState) -> PgResult<BoundStatement> {
    if skip {
        return Ok(BoundStatement::Nothing {
            tag: "ALTER TABLE",
            notices: vec![PgError::notice(format!("{message}, skipping"))],
        });
    }
    Err(PgError::new(code, message))
}

fn column_exists(name: &str, table: &TableDesc) -> String {
    format!(
        "column \"{name}\" of relation \"{}\" already exists",
        table.name
    )
}

/// ALTER INDEX / SEQUENCE [IF EXISTS] of a relation that does not exist: with IF EXISTS
/// PostgreSQL's notice and nothing done, else 42P01 (which PostgreSQL reports without a
/// position).
pub(crate) fn missing_relation(
    name: &str,
    if_exists: bool,
    tag: &'static str,
) -> PgResult<BoundStatement> {
    if if_exists {
        return Ok(BoundStatement::Nothing {
            tag,
            notices: vec![PgError::notice(format!(
                "relation \"{name}\" does not exist, skipping"
            ))],
        });
    }
    Err(PgError::new(
        SqlState::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    ))
}
