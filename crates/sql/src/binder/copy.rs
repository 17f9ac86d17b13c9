//! Binding COPY: the table or query, the column list and the format options, checked
//! as PostgreSQL checks them (`ProcessCopyOptions`).

use common::{PgError, PgResult, SqlState};
use sqlparser::ast::{self, CopyLegacyCsvOption, CopyLegacyOption, CopyOption};

use super::{Binder, Scope, ident_name};
use crate::bound::{BoundCopyFrom, BoundQuery, BoundStatement, CopyFormat, Expr, LogicalPlan};

fn unsupported_option(what: &str) -> PgError {
    PgError::syntax(format!("syntax error at or near \"{what}\""))
}

/// The options as written, before they are checked against each other.
#[derive(Default)]
struct Options {
    format: Option<String>,
    /// Where FORMAT's value was written, for its error.
    format_position: Option<u32>,
    delimiter: Option<char>,
    null: Option<String>,
    header: Option<bool>,
    quote: Option<char>,
    escape: Option<char>,
    freeze: bool,
}

fn one_byte(c: char, what: &str) -> PgResult<u8> {
    if c.is_ascii() {
        Ok(c as u8)
    } else {
        Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("COPY {what} must be a single one-byte character"),
        ))
    }
}

impl Binder<'_> {
    pub(crate) fn bind_copy(
        &self,
        source: &ast::CopySource,
        to: bool,
        target: &ast::CopyTarget,
        options: &[CopyOption],
        legacy: &[CopyLegacyOption],
    ) -> PgResult<BoundStatement> {
        match (to, target) {
            (false, ast::CopyTarget::Stdin) | (true, ast::CopyTarget::Stdout) => {}
            (_, ast::CopyTarget::File { .. } | ast::CopyTarget::Program { .. }) => {
                return Err(PgError::unsupported("COPY to or from a file or program"));
            }
            (false, ast::CopyTarget::Stdout) => {
                return Err(PgError::syntax("syntax error at or near \"STDOUT\""));
            }
            (true, ast::CopyTarget::Stdin) => {
                return Err(PgError::syntax("syntax error at or near \"STDIN\""));
            }
        }
        // PostgreSQL 15 accepts FREEZE on COPY TO and ignores it.
        let (format, freeze) = self.copy_format(options, legacy)?;
        match source {
            ast::CopySource::Query(q) => {
                if !to {
                    return Err(PgError::syntax("syntax error at or near \"FROM\""));
                }
                let query = self.bind_query(q)?;
                Ok(BoundStatement::CopyTo { query, format })
            }
            ast::CopySource::Table {
                table_name,
                columns,
            } => {
                let table = self.table(table_name).map_err(|mut e| {
                    e.position = None;
                    e
                })?;
                let names: Vec<ast::ObjectName> = columns
                    .iter()
                    .map(|c| ast::ObjectName(vec![ast::ObjectNamePart::Identifier(c.clone())]))
                    .collect();
                // PostgreSQL's COPY reports column errors without a cursor position.
                let targets = self.target_columns(&table, &names).map_err(|mut e| {
                    e.position = None;
                    e
                })?;
                if to && table.partition_key.is_some() {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("cannot copy from partitioned table \"{}\"", table.name),
                    )
                    .with_hint("Try the COPY (SELECT ...) TO variant."));
                }
                if to {
                    let alias = table.name.clone();
                    let scope = Scope::for_table(&table, &alias);
                    let exprs = targets
                        .iter()
                        .map(|&i| Expr::column(i, table.columns[i].ty))
                        .collect();
                    let cols = targets
                        .iter()
                        .map(|&i| {
                            scope.output_column(
                                i,
                                table.columns[i].name.as_str().into(),
                                table.columns[i].ty,
                            )
                        })
                        .collect();
                    let plan = LogicalPlan::Project {
                        input: Box::new(LogicalPlan::Scan {
                            table: table.clone(),
                        }),
                        exprs,
                    };
                    return Ok(BoundStatement::CopyTo {
                        query: BoundQuery {
                            plan,
                            columns: cols,
                        },
                        format,
                    });
                }
                let defaults = table
                    .columns
                    .iter()
                    .map(|c| self.default_value(c))
                    .collect::<PgResult<Vec<_>>>()?;
                let fks = self.fk_checks(&table, None, false);
                let checks = self.check_exprs(&table)?;
                let index_exprs = self.index_exprs(&table)?;
                Ok(BoundStatement::CopyFrom(BoundCopyFrom {
                    table,
                    targets,
                    defaults,
                    format,
                    freeze: freeze && !to,
                    fks,
                    checks,
                    index_exprs,
                }))
            }
        }
    }

    /// The format the options describe, and FREEZE.
    fn copy_format(
        &self,
        options: &[CopyOption],
        legacy: &[CopyLegacyOption],
    ) -> PgResult<(CopyFormat, bool)> {
        let mut o = Options::default();
        for opt in options {
            match opt {
                CopyOption::Format(f) => {
                    o.format = Some(ident_name(f));
                    // PostgreSQL points at the option (the FORMAT keyword before it).
                    o.format_position = self.position(&f.span).and_then(|value_at| {
                        let before: String = self.sql.chars().take(value_at as usize - 1).collect();
                        let keyword = before.to_ascii_lowercase().rfind("format")?;
                        Some(before[..keyword].chars().count() as u32 + 1)
                    });
                }
                CopyOption::Freeze(b) => o.freeze = *b,
                CopyOption::Delimiter(c) => o.delimiter = Some(*c),
                CopyOption::Null(s) => o.null = Some(s.clone()),
                CopyOption::Header(b) => o.header = Some(*b),
                CopyOption::Quote(c) => o.quote = Some(*c),
                CopyOption::Escape(c) => o.escape = Some(*c),
                CopyOption::Encoding(e) => {
                    let norm = e.to_ascii_lowercase().replace(['-', '_'], "");
                    if norm != "utf8" {
                        return Err(PgError::unsupported(format!("COPY encoding \"{e}\"")));
                    }
                }
                CopyOption::ForceQuote(_) => return Err(PgError::unsupported("COPY FORCE_QUOTE")),
                CopyOption::ForceNotNull(_) => {
                    return Err(PgError::unsupported("COPY FORCE_NOT_NULL"));
                }
                CopyOption::ForceNull(_) => return Err(PgError::unsupported("COPY FORCE_NULL")),
            }
        }
        for opt in legacy {
            match opt {
                CopyLegacyOption::Binary => o.format = Some("binary".into()),
                CopyLegacyOption::Delimiter(c) => o.delimiter = Some(*c),
                CopyLegacyOption::Null(s) => o.null = Some(s.clone()),
                CopyLegacyOption::Csv(csv) => {
                    o.format = Some("csv".into());
                    for c in csv {
                        match c {
                            CopyLegacyCsvOption::Header => o.header = Some(true),
                            CopyLegacyCsvOption::Quote(q) => o.quote = Some(*q),
                            CopyLegacyCsvOption::Escape(e) => o.escape = Some(*e),
                            CopyLegacyCsvOption::ForceQuote(_) => {
                                return Err(PgError::unsupported("COPY FORCE QUOTE"));
                            }
                            CopyLegacyCsvOption::ForceNotNull(_) => {
                                return Err(PgError::unsupported("COPY FORCE NOT NULL"));
                            }
                        }
                    }
                }
                CopyLegacyOption::Header => o.header = Some(true),
                other => return Err(unsupported_option(&other.to_string())),
            }
        }
        let mut format = match o.format.as_deref() {
            None | Some("text") => CopyFormat::text(),
            Some("csv") => CopyFormat::csv(),
            Some("binary") => return Err(PgError::unsupported("COPY BINARY")),
            Some(other) => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("COPY format \"{other}\" not recognized"),
                )
                .with_position(o.format_position));
            }
        };
        if let Some(d) = o.delimiter {
            format.delimiter = one_byte(d, "delimiter")?;
        }
        if let Some(n) = o.null {
            format.null = n;
        }
        if let Some(h) = o.header {
            format.header = h;
        }
        if let Some(q) = o.quote {
            if !format.csv {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "COPY quote available only in CSV mode",
                ));
            }
            format.quote = one_byte(q, "quote")?;
            if o.escape.is_none() {
                format.escape = format.quote;
            }
        }
        if let Some(e) = o.escape {
            if !format.csv {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "COPY escape available only in CSV mode",
                ));
            }
            format.escape = one_byte(e, "escape")?;
        }
        if matches!(format.delimiter, b'\n' | b'\r') {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter cannot be newline or carriage return",
            ));
        }
        if format.null.contains(['\n', '\r']) {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY null representation cannot use newline or carriage return",
            ));
        }
        if !format.csv && (format.delimiter == b'\\' || format.delimiter.is_ascii_alphanumeric()) {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("COPY delimiter cannot be \"{}\"", format.delimiter as char),
            ));
        }
        if format.csv && format.delimiter == format.quote {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter and quote must be different",
            ));
        }
        if format.null.as_bytes().contains(&format.delimiter) {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter must not appear in the NULL specification",
            ));
        }
        Ok((format, o.freeze))
    }
}
