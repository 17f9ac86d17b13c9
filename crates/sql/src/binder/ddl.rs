//! Binding DDL: CREATE TABLE and DROP TABLE.

use catalog::NewKey;
use std::sync::Arc;

use catalog::{ColumnDesc, NewTable, TableDesc, TableOptions};
use common::value::parse_bool;
use common::{DataType, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::coerce::CastContext;
use super::expr::ExprContext;
use super::{Binder, Scope, ident_name};
use crate::bound::BoundStatement;

impl Binder<'_> {
    pub(crate) fn bind_create_table(&self, c: &ast::CreateTable) -> PgResult<BoundStatement> {
        if c.or_replace
            || c.temporary
            || c.external
            || c.query.is_some()
            || c.like.is_some()
            || c.clone.is_some()
            || c.inherits.is_some()
            || (c.for_values.is_some() && c.partition_of.is_none())
        {
            return Err(PgError::unsupported(format!(
                "this form of CREATE TABLE (\"{}\")",
                first_line(&c.to_string())
            )));
        }
        if c.unlogged {
            return Err(PgError::unsupported("CREATE UNLOGGED TABLE"));
        }
        let options = match &c.table_options {
            ast::CreateTableOptions::None => TableOptions::default(),
            ast::CreateTableOptions::With(opts) => table_options(opts)?,
            other => {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{}\"",
                    other.to_string().split_whitespace().next().unwrap_or("")
                )));
            }
        };
        let (name, pos) = self.object_name(&c.name)?;
        if self.catalog.relation_exists(&name) {
            if c.if_not_exists {
                return Ok(BoundStatement::Nothing {
                    tag: "CREATE TABLE",
                    notices: vec![already_exists_skipping(&name)],
                });
            }
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let _ = pos;
        if c.columns.len() > common::limits::MAX_COLUMNS {
            return Err(PgError::new(
                SqlState::TOO_MANY_COLUMNS,
                format!(
                    "tables can have at most {} columns",
                    common::limits::MAX_COLUMNS
                ),
            ));
        }
        let partition_of = match &c.partition_of {
            Some(parent) => Some(self.bind_partition_of(parent, c.for_values.as_ref())?),
            None => None,
        };
        let mut columns: Vec<ColumnDesc> = match &partition_of {
            Some(p) => Self::partition_columns(&p.parent),
            None => Vec::with_capacity(c.columns.len()),
        };
        let mut keys: Vec<NewKey> = Vec::new();
        let mut serials = Vec::new();
        let mut foreign_keys: Vec<ast::ForeignKeyConstraint> = Vec::new();
        let mut checks: Vec<ast::CheckConstraint> = Vec::new();
        let mut named: Vec<String> = Vec::new();
        for def in &c.columns {
            self.check_not_reserved(&def.name)?;
            let cname = ident_name(&def.name);
            super::alter::check_not_system_column(&cname)?;
            if named.contains(&cname)
                || (partition_of.is_none() && columns.iter().any(|x| x.name == cname))
            {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" specified more than once"),
                ));
            }
            named.push(cname.clone());
            // `PARTITION OF parent (a NOT NULL, ...)`: options for the parent's column.
            let inherited = match &def.data_type {
                ast::DataType::Custom(n, _)
                    if n.0.len() == 1
                        && n.to_string().contains(crate::parser::PARTITION_COLUMN_MARK) =>
                {
                    match columns.iter().position(|x| !x.dropped && x.name == cname) {
                        Some(i) => Some(i),
                        None => {
                            return Err(PgError::new(
                                SqlState::UNDEFINED_COLUMN,
                                format!("column \"{cname}\" does not exist"),
                            ));
                        }
                    }
                }
                _ if partition_of.is_some() => {
                    return Err(PgError::syntax(format!(
                        "syntax error at or near \"{}\"",
                        def.data_type
                    )));
                }
                _ => None,
            };
            let serial = match &def.data_type {
                _ if inherited.is_some() => None,
                ast::DataType::Custom(n, mods) if mods.is_empty() && n.0.len() == 1 => {
                    super::sequence::serial_type(n.to_string().to_lowercase().as_str())
                }
                _ => None,
            };
            let (mut col, idx) = match inherited {
                Some(i) => (columns[i].clone(), i),
                None => {
                    let ty = match serial {
                        Some(ty) => ty,
                        None => self.bind_type(&def.data_type)?,
                    };
                    let col = ColumnDesc::new(cname, ty);
                    (col, columns.len())
                }
            };
            let has_default = def
                .options
                .iter()
                .any(|o| matches!(o.option, ast::ColumnOption::Default(_)));
            if let Some(ty) = serial {
                if has_default {
                    return Err(PgError::syntax(format!(
                        "multiple default values specified for column \"{}\" of table \"{name}\"",
                        col.name
                    )));
                }
                serials.push((idx, super::sequence::sequence_options(Some(ty), &[])?));
            }
            let mut identity = None;
            for opt in &def.options {
                match &opt.option {
                    ast::ColumnOption::Generated {
                        generated_as,
                        sequence_options,
                        generation_expr: None,
                        ..
                    } => {
                        let kind = match generated_as {
                            ast::GeneratedAs::Always => catalog::Identity::Always,
                            ast::GeneratedAs::ByDefault => catalog::Identity::ByDefault,
                            ast::GeneratedAs::ExpStored => {
                                return Err(PgError::unsupported("generated columns"));
                            }
                        };
                        if identity.is_some() {
                            return Err(PgError::syntax(format!(
                                "multiple identity specifications for column \"{}\" of table \"{name}\"",
                                col.name
                            )));
                        }
                        if serial.is_some() || has_default {
                            return Err(PgError::syntax(format!(
                                "both default and identity specified for column \"{}\" of table \"{name}\"",
                                col.name
                            )));
                        }
                        if !matches!(col.ty, DataType::Int2 | DataType::Int4 | DataType::Int8) {
                            return Err(PgError::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "identity column type must be smallint, integer, or bigint",
                            ));
                        }
                        let options = super::sequence::sequence_options(
                            Some(col.ty),
                            sequence_options.as_deref().unwrap_or_default(),
                        )?;
                        identity = Some((kind, options));
                    }
                    ast::ColumnOption::Generated { .. } => {
                        return Err(PgError::unsupported("generated columns"));
                    }
                    ast::ColumnOption::Null if serial.is_some() || identity.is_some() => {
                        return Err(PgError::syntax(format!(
                            "conflicting NULL/NOT NULL declarations for column \"{}\" of table \"{name}\"",
                            col.name
                        )));
                    }
                    ast::ColumnOption::Null => col.not_null = false,
                    ast::ColumnOption::NotNull => col.not_null = true,
                    ast::ColumnOption::Default(e) => {
                        self.check_default(e, &col)?;
                        col.default = Some(e.to_string());
                    }
                    ast::ColumnOption::PrimaryKey(_) => {
                        col.not_null = true;
                        keys.push(NewKey {
                            check_xmin: 0,
                            parent: None,
                            name: opt.name.as_ref().map(ident_name),
                            columns: vec![idx],
                            primary: true,
                        });
                    }
                    ast::ColumnOption::Unique(_) => {
                        keys.push(NewKey {
                            check_xmin: 0,
                            parent: None,
                            name: opt.name.as_ref().map(ident_name),
                            columns: vec![idx],
                            primary: false,
                        });
                    }
                    ast::ColumnOption::ForeignKey(fk) => {
                        // `col REFERENCES t (c)`: a one-column FOREIGN KEY constraint.
                        let mut fk = fk.clone();
                        fk.columns = vec![def.name.clone()];
                        fk.name = opt.name.clone().or(fk.name);
                        foreign_keys.push(fk);
                    }
                    ast::ColumnOption::Check(check) => {
                        // Bound once every column is known: it may read any of them.
                        let mut check = check.clone();
                        check.name = opt.name.clone().or(check.name);
                        checks.push(check);
                    }
                    other => {
                        return Err(PgError::unsupported(format!("column constraint {other}")));
                    }
                }
            }
            if let Some((kind, options)) = identity {
                if def
                    .options
                    .iter()
                    .any(|o| matches!(o.option, ast::ColumnOption::Null))
                {
                    return Err(PgError::syntax(format!(
                        "conflicting NULL/NOT NULL declarations for column \"{}\" of table \"{name}\"",
                        col.name
                    )));
                }
                col.identity = Some(kind);
                col.not_null = true;
                serials.push((idx, options));
            }
            col.not_null |= serial.is_some();
            if inherited.is_some() {
                columns[idx] = col;
            } else {
                columns.push(col);
            }
        }
        for tc in &c.constraints {
            let (name, cols, primary) = match tc {
                ast::TableConstraint::PrimaryKey(pk) => (&pk.name, &pk.columns, true),
                ast::TableConstraint::Unique(u) => (&u.name, &u.columns, false),
                ast::TableConstraint::ForeignKey(fk) => {
                    foreign_keys.push(fk.clone());
                    continue;
                }
                ast::TableConstraint::Check(check) => {
                    checks.push(check.clone());
                    continue;
                }
                other => return Err(PgError::unsupported(format!("table constraint {other}"))),
            };
            let mut positions = Vec::with_capacity(cols.len());
            for ic in cols {
                let ast::Expr::Identifier(id) = &ic.column.expr else {
                    return Err(PgError::unsupported("expressions in key constraints"));
                };
                let n = ident_name(id);
                let Some(p) = columns.iter().position(|x| x.name == n) else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{n}\" named in key does not exist"),
                    )
                    .with_position(self.position(&id.span)));
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
            if primary {
                for &p in &positions {
                    columns[p].not_null = true;
                }
            }
            keys.push(NewKey {
                check_xmin: 0,
                parent: None,
                name: name.as_ref().map(ident_name),
                columns: positions,
                primary,
            });
        }
        if keys.iter().filter(|k| k.primary).count() > 1 {
            return Err(PgError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("multiple primary keys for table \"{name}\" are not allowed"),
            ));
        }
        // A unique constraint identical to another adds nothing (PostgreSQL merges them).
        let mut deduped: Vec<NewKey> = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(existing) = deduped.iter_mut().find(|d| d.columns == k.columns) {
                existing.primary |= k.primary;
                if existing.name.is_none() {
                    existing.name = k.name;
                }
            } else {
                deduped.push(k);
            }
        }
        let partition_key = match &c.partition_by {
            Some(by) => {
                let itself = TableDesc {
                    name: name.clone(),
                    columns: columns.clone().into(),
                    ..Default::default()
                };
                Some((self.bind_partition_key(by, &itself)?, itself))
            }
            None => None,
        };
        if let Some((pk, itself)) = &partition_key {
            for k in &deduped {
                let what = if k.primary { "PRIMARY KEY" } else { "UNIQUE" };
                super::partition::check_unique_holds_partition_key(itself, pk, &k.columns, what)?;
            }
        }
        // A partition has its parent's keys, each belonging to the parent's.
        if let Some(p) = &partition_of {
            for i in p.parent.indexes.iter().filter(|i| i.constraint) {
                if !deduped.iter().any(|k| k.columns == i.columns) {
                    deduped.push(NewKey {
                        check_xmin: 0,
                        parent: Some(i.oid),
                        name: None,
                        columns: i.columns.clone(),
                        primary: i.primary,
                    });
                }
            }
        }
        let (foreign_keys, referenced) =
            self.bind_new_foreign_keys(&name, &columns, &deduped, &foreign_keys)?;
        let itself = TableDesc {
            name: name.clone(),
            columns: columns.clone().into(),
            ..Default::default()
        };
        // A partition has its parent's CHECK constraints (PostgreSQL's inherited ones).
        let inherited =
            partition_of
                .iter()
                .flat_map(|p| &p.parent.checks)
                .map(|c| catalog::NewCheck {
                    name: Some(c.name.clone()),
                    expr: c.expr.clone(),
                    columns: c.columns.clone(),
                    validated: c.validated,
                });
        let checks = inherited
            .map(Ok)
            .chain(
                checks
                    .iter()
                    .map(|c| Ok(self.bind_new_check(&itself, c, true)?.0)),
            )
            .collect::<PgResult<Vec<_>>>()?;
        Ok(BoundStatement::CreateTable {
            new: NewTable {
                name,
                columns,
                keys: deduped,
                options,
                serials,
                foreign_keys,
                checks,
                partition_key: partition_key.map(|(k, _)| k),
                // Made from `partition_of` when the statement runs.
                partition_of: None,
            },
            referenced,
            partition_of,
        })
    }

    /// A new table's FOREIGN KEY / REFERENCES constraints, and the other tables they
    /// reference. A key referencing the table itself is checked against the keys it is
    /// being created with; it comes back with `ref_table` 0 and, as `ref_index`, its
    /// key's position plus one (the catalog gives them their OIDs).
    fn bind_new_foreign_keys(
        &self,
        name: &str,
        columns: &[ColumnDesc],
        keys: &[NewKey],
        fks: &[ast::ForeignKeyConstraint],
    ) -> PgResult<(Vec<catalog::NewForeignKey>, Vec<Arc<TableDesc>>)> {
        if fks.is_empty() {
            return Ok(Default::default());
        }
        let itself = TableDesc {
            name: name.to_string(),
            columns: columns.to_vec().into(),
            indexes: keys
                .iter()
                .enumerate()
                .map(|(n, k)| catalog::IndexDesc {
                    oid: n as u32 + 1,
                    rel: 0,
                    name: String::new(),
                    columns: k.columns.clone(),
                    unique: true,
                    primary: k.primary,
                    constraint: true,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut out = Vec::with_capacity(fks.len());
        let mut referenced: Vec<Arc<TableDesc>> = Vec::new();
        for fk in fks {
            if self.object_name(&fk.foreign_table)?.0 == name {
                out.push(self.bind_foreign_key(&itself, &itself, fk)?);
                continue;
            }
            let other = self.referenced_table(&fk.foreign_table)?;
            out.push(self.bind_foreign_key(&itself, &other, fk)?);
            if !referenced.iter().any(|r| r.oid == other.oid) {
                referenced.push(other);
            }
        }
        Ok((out, referenced))
    }

    /// A DEFAULT must be a column-free expression assignable to the column.
    pub(crate) fn check_default(&self, e: &ast::Expr, col: &ColumnDesc) -> PgResult<()> {
        let scope = Scope::default();
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "DEFAULT expressions",
        };
        let bound = self.bind_expr(e, &cx).map_err(|err| {
            if err.code == SqlState::UNDEFINED_COLUMN {
                PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cannot use column reference in DEFAULT expression",
                )
            } else {
                err
            }
        })?;
        self.assign(bound, col)?;
        Ok(())
    }

    /// Coerce `e` for storing into `col`, with PostgreSQL's assignment error.
    pub(crate) fn assign(
        &self,
        e: crate::bound::Expr,
        col: &ColumnDesc,
    ) -> PgResult<crate::bound::Expr> {
        let from = e.ty;
        self.coerce(e, &col.ty, CastContext::Assignment)
            .map_err(|err| {
                if err.code == SqlState::DATATYPE_MISMATCH {
                    PgError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "column \"{}\" is of type {} but expression is of type {}",
                            col.name,
                            col.ty.name(),
                            from.name()
                        ),
                    )
                    .with_hint("You will need to rewrite or cast the expression.")
                } else {
                    err
                }
            })
    }

    pub(crate) fn bind_drop(
        &self,
        object_type: ast::ObjectType,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
    ) -> PgResult<BoundStatement> {
        if object_type == ast::ObjectType::Index {
            return self.bind_drop_index(if_exists, names);
        }
        if object_type == ast::ObjectType::Sequence {
            return self.bind_drop_sequences(if_exists, names, cascade);
        }
        if object_type != ast::ObjectType::Table {
            return Err(PgError::unsupported(format!("DROP {object_type}")));
        }
        let mut tables = Vec::new();
        let mut notices = Vec::new();
        for n in names {
            let (name, _) = self.object_name(n)?;
            match self.catalog.table(&name) {
                Some(t) => {
                    if !tables
                        .iter()
                        .any(|x: &std::sync::Arc<catalog::TableDesc>| x.oid == t.oid)
                    {
                        tables.push(t.clone());
                    }
                }
                None if self.catalog.sequence(&name).is_some() => {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a table"),
                    )
                    .with_hint("Use DROP SEQUENCE to remove a sequence."));
                }
                None if if_exists => notices.push(PgError::notice(format!(
                    "table \"{name}\" does not exist, skipping"
                ))),
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("table \"{name}\" does not exist"),
                    ));
                }
            }
        }
        // A partitioned table goes with its partitions; a partition's parent is locked
        // (AccessExclusive, as PostgreSQL does) while one of its partitions goes.
        let mut partition_parents: Vec<std::sync::Arc<catalog::TableDesc>> = Vec::new();
        // A partition whose DETACH is pending goes with them too, as in PostgreSQL.
        let named = tables.len();
        let mut i = 0;
        while i < tables.len() {
            let oid = tables[i].oid;
            let pending = self.catalog.detach_pending(oid).cloned();
            for d in self.catalog.descendants(oid).into_iter().chain(pending) {
                if !tables.iter().any(|x| x.oid == d.oid) {
                    tables.push(d);
                }
            }
            i += 1;
        }
        for t in &tables {
            if let Some(of) = &t.partition_of
                && !tables.iter().any(|x| x.oid == of.parent)
                && !partition_parents.iter().any(|x| x.oid == of.parent)
                && let Some(p) = self.catalog.table_by_oid(of.parent)
            {
                partition_parents.push(p.clone());
            }
        }
        // Foreign keys of tables that stay, referencing a table that goes: DROP refuses,
        // CASCADE drops the keys (first) with a notice for each.
        // A partition of a referenced table is referenced too (PostgreSQL's clones of
        // the key), unless that table goes with it.
        let mut foreign_keys: Vec<(Arc<TableDesc>, catalog::ForeignKey, Arc<TableDesc>)> =
            Vec::new();
        for t in &tables {
            for (other, fk) in self.catalog.referencing_through_parents(t.oid) {
                let referenced_goes =
                    fk.ref_table != t.oid && tables.iter().any(|x| x.oid == fk.ref_table);
                if !tables.iter().any(|x| x.oid == other.oid)
                    && !referenced_goes
                    && !foreign_keys
                        .iter()
                        .any(|(o, f, _)| o.oid == other.oid && f.oid == fk.oid)
                {
                    foreign_keys.push((other.clone(), fk.clone(), t.clone()));
                }
            }
        }
        if let Some((_, _, t)) = foreign_keys.first() {
            if !cascade {
                // PostgreSQL names the table the statement names, and every key that
                // depends on it or on a partition of it.
                let named_of = |t: &Arc<TableDesc>| {
                    let mut at = t.clone();
                    while !tables[..named].iter().any(|x| x.oid == at.oid) {
                        match at
                            .partition_of
                            .as_ref()
                            .and_then(|o| self.catalog.table_by_oid(o.parent))
                        {
                            Some(p) => at = p.clone(),
                            None => break,
                        }
                    }
                    at
                };
                let root = named_of(t);
                // In the order PostgreSQL's walk of the dependencies finds them: depth
                // first through the partitions, each level's in creation order.
                let path = |t: &Arc<TableDesc>| {
                    let mut path = vec![t.oid];
                    let mut at = t.partition_of.as_ref().map(|o| o.parent);
                    while let Some(p) = at.filter(|_| path[0] != root.oid) {
                        path.insert(0, p);
                        at = self
                            .catalog
                            .table_by_oid(p)
                            .and_then(|t| t.partition_of.as_ref().map(|o| o.parent));
                    }
                    path
                };
                let mut found: Vec<_> = foreign_keys
                    .iter()
                    .filter(|(_, _, x)| named_of(x).oid == root.oid)
                    .collect();
                found.sort_by_cached_key(|(_, fk, x)| (path(x), fk.oid));
                let deps: Vec<_> = found
                    .into_iter()
                    .map(|(o, fk, x)| (o.clone(), fk.clone(), format!("table {}", x.name)))
                    .collect();
                return Err(super::alter::dependents_error(
                    &format!("table {}", root.name),
                    &deps,
                ));
            }
            let lines: Vec<String> = foreign_keys
                .iter()
                .map(|(other, fk, _)| format!("constraint {} on table {}", fk.name, other.name))
                .collect();
            notices.push(super::alter::cascade_notice(&lines));
        }
        let foreign_keys = foreign_keys.into_iter().map(|(o, fk, _)| (o, fk)).collect();
        Ok(BoundStatement::DropTables {
            tables,
            notices,
            foreign_keys,
            partition_parents,
        })
    }

    /// TRUNCATE [TABLE] [ONLY] name [*], ... [RESTART | CONTINUE IDENTITY]
    /// [CASCADE | RESTRICT]. A table a foreign key references goes only with the
    /// referencing table (CASCADE is not supported yet). RESTART IDENTITY restarts the
    /// sequences the tables own (their SERIAL columns'); the session refuses it inside a
    /// transaction block, where PostgreSQL would undo the restart on rollback.
    pub(crate) fn bind_truncate(&self, t: &ast::Truncate) -> PgResult<BoundStatement> {
        if t.if_exists {
            return Err(PgError::syntax("syntax error at or near \"EXISTS\""));
        }
        if t.partitions.is_some() {
            return Err(PgError::syntax("syntax error at or near \"PARTITION\""));
        }
        if t.on_cluster.is_some() {
            return Err(PgError::syntax("syntax error at or near \"ON\""));
        }
        let mut tables: Vec<std::sync::Arc<catalog::TableDesc>> = Vec::new();
        for target in &t.table_names {
            let (name, pos) = self.object_name(&target.name)?;
            if self.catalog.table(&name).is_none() && self.catalog.index(&name).is_some() {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a table"),
                )
                .with_position(pos));
            }
            let table = self.table(&target.name)?;
            if target.only && table.partition_key.is_some() {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    "cannot truncate only a partitioned table",
                )
                .with_hint(
                    "Do not specify the ONLY keyword, or use TRUNCATE ONLY on the partitions directly.",
                ));
            }
            if !tables.iter().any(|x| x.oid == table.oid) {
                tables.push(table);
            }
        }
        let cascade = matches!(t.cascade, Some(ast::CascadeOption::Cascade));
        for t in &tables {
            // Keys referencing it, a table above it, or a partition below it.
            let through_parents = self
                .catalog
                .referencing_through_parents(t.oid)
                .into_iter()
                .map(|(o, _)| (o, t));
            // PostgreSQL looks level by level, each level's partitions in creation order.
            let depth = |b: &TableDesc| {
                let mut n = 0;
                let mut at = b.partition_of.as_ref().map(|o| o.parent);
                while let Some(p) = at.filter(|&p| p != t.oid) {
                    n += 1;
                    at = self
                        .catalog
                        .table_by_oid(p)
                        .and_then(|x| x.partition_of.as_ref().map(|o| o.parent));
                }
                n
            };
            let mut below = self.catalog.referencing_below(t.oid);
            below.sort_by_cached_key(|(b, o, _)| (depth(b), b.oid, o.oid));
            let below = below.into_iter().map(|(b, o, _)| (o, b));
            if let Some((other, t)) = through_parents
                .chain(below)
                .find(|(o, _)| !tables.iter().any(|x| x.oid == o.oid))
            {
                if cascade {
                    return Err(PgError::unsupported("TRUNCATE ... CASCADE"));
                }
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cannot truncate a table referenced in a foreign key constraint",
                )
                .with_detail(format!(
                    "Table \"{}\" references \"{}\".",
                    other.name, t.name
                ))
                .with_hint(format!(
                    "Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.",
                    other.name
                )));
            }
        }
        let restart = if t.identity == Some(ast::TruncateIdentityOption::Restart) {
            tables
                .iter()
                .flat_map(|t| self.catalog.owned_sequences(t.oid).cloned())
                .collect()
        } else {
            Vec::new()
        };
        Ok(BoundStatement::Truncate { tables, restart })
    }
}

impl Binder<'_> {
    fn bind_drop_index(
        &self,
        if_exists: bool,
        names: &[ast::ObjectName],
    ) -> PgResult<BoundStatement> {
        let mut indexes: Vec<(std::sync::Arc<catalog::TableDesc>, catalog::IndexDesc)> = Vec::new();
        let mut notices = Vec::new();
        for n in names {
            let (name, _) = self.object_name(n)?;
            match self.catalog.index(&name) {
                Some((t, i)) => {
                    if i.constraint {
                        return Err(PgError::new(
                            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                            format!(
                                "cannot drop index {name} because constraint {name} on table {} requires it",
                                t.name
                            ),
                        )
                        .with_hint(format!(
                            "You can drop constraint {name} on table {} instead.",
                            t.name
                        )));
                    }
                    if let Some((_, p)) = i.parent.and_then(|p| self.catalog.index_by_oid(p)) {
                        return Err(PgError::new(
                            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                            format!(
                                "cannot drop index {name} because index {} requires it",
                                p.name
                            ),
                        )
                        .with_hint(format!("You can drop index {} instead.", p.name)));
                    }
                    if !indexes.iter().any(|(_, x)| x.oid == i.oid) {
                        indexes.push((t.clone(), i.clone()));
                    }
                }
                None if self.catalog.table(&name).is_some() => {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not an index"),
                    )
                    .with_hint("Use DROP TABLE to remove a table."));
                }
                None if if_exists => notices.push(PgError::notice(format!(
                    "index \"{name}\" does not exist, skipping"
                ))),
                None => {
                    // PostgreSQL gives no cursor position here (nor for DROP TABLE).
                    return Err(PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("index \"{name}\" does not exist"),
                    ));
                }
            }
        }
        Ok(BoundStatement::DropIndexes { indexes, notices })
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The notice of `CREATE ... IF NOT EXISTS` for a relation that exists.
pub(crate) fn already_exists_skipping(name: &str) -> PgError {
    PgError::notice(format!("relation \"{name}\" already exists, skipping"))
        .with_code(SqlState::DUPLICATE_TABLE)
}

/// PostgreSQL 15's other storage parameters for tables: valid there, not honoured here.
const OTHER_TABLE_PARAMETERS: &[&str] = &[
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_analyze_threshold",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_freeze_min_age",
    "autovacuum_freeze_max_age",
    "autovacuum_freeze_table_age",
    "autovacuum_multixact_freeze_min_age",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_multixact_freeze_table_age",
    "log_autovacuum_min_duration",
    "toast_tuple_target",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_analyze_scale_factor",
    "parallel_workers",
    "user_catalog_table",
    "vacuum_index_cleanup",
    "vacuum_truncate",
];

/// `WITH (name = value, ...)` of CREATE TABLE, checked as PostgreSQL's reloptions are.
pub(crate) fn table_options(opts: &[ast::SqlOption]) -> PgResult<TableOptions> {
    let invalid = |m: String| PgError::new(SqlState::INVALID_PARAMETER_VALUE, m);
    let mut out = TableOptions::default();
    let mut seen: Vec<String> = Vec::new();
    for opt in opts {
        let (name, value) = match opt {
            ast::SqlOption::KeyValue { key, value } => (ident_name(key), Some(value)),
            ast::SqlOption::Ident(key) => (ident_name(key), None),
            other => {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{other}\""
                )));
            }
        };
        // The text PostgreSQL would see (a bare name means true).
        let text = match value {
            None => "true".to_string(),
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.clone(),
                ast::Value::Number(n, _) => n.clone(),
                ast::Value::Boolean(b) => b.to_string(),
                other => other.to_string(),
            },
            Some(ast::Expr::Identifier(id)) => id.value.clone(),
            Some(other) => other.to_string(),
        };
        if name == "oids" {
            // PostgreSQL still accepts WITH (oids = false).
            if parse_bool(&text) == Some(false) {
                continue;
            }
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "tables declared WITH OIDS are not supported",
            ));
        }
        if seen.contains(&name) {
            return Err(invalid(format!(
                "parameter \"{name}\" specified more than once"
            )));
        }
        seen.push(name.clone());
        match name.as_str() {
            "fillfactor" => {
                let n = text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(f64::round_ties_even)
                    .ok_or_else(|| {
                        invalid(format!(
                            "invalid value for integer option \"{name}\": {text}"
                        ))
                    })?;
                if !(10.0..=100.0).contains(&n) {
                    return Err(invalid(format!(
                        "value {text} out of bounds for option \"{name}\""
                    ))
                    .with_detail("Valid values are between \"10\" and \"100\"."));
                }
                out.fillfactor = n as u8;
            }
            "autovacuum_enabled" => {
                out.autovacuum_enabled = parse_bool(&text).ok_or_else(|| {
                    invalid(format!(
                        "invalid value for boolean option \"{name}\": {text}"
                    ))
                })?;
            }
            n if OTHER_TABLE_PARAMETERS.contains(&n) || n.starts_with("toast.") => {
                return Err(PgError::unsupported(format!("storage parameter \"{n}\"")));
            }
            _ => return Err(invalid(format!("unrecognized parameter \"{name}\""))),
        }
    }
    Ok(out)
}
