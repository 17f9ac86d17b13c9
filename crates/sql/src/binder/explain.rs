//! Binding EXPLAIN: PostgreSQL's option list, then the explained statement.

use common::value::parse_bool;
use common::{DataType, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::Binder;
use crate::bound::{BoundStatement, ExplainOptions, OutputColumn};

impl Binder<'_> {
    /// `EXPLAIN [ANALYZE] stmt` or `EXPLAIN (option [value], ...) stmt` of a query,
    /// INSERT, UPDATE or DELETE (`stmt` an EXPLAIN).
    pub(crate) fn bind_explain(&self, stmt: &ast::Statement) -> PgResult<BoundStatement> {
        let (options, statement) = self.explain_parts(stmt)?;
        let inner = match statement {
            ast::Statement::Query(_)
            | ast::Statement::Insert(_)
            | ast::Statement::Update(_)
            | ast::Statement::Delete(_) => self.bind(statement)?,
            other => {
                let word = other.to_string();
                let word = word.split_whitespace().next().unwrap_or("");
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{word}\""
                )));
            }
        };
        Ok(BoundStatement::Explain {
            options,
            inner: Box::new(inner),
            columns: explain_columns(),
        })
    }

    /// An EXPLAIN's options and the statement it explains (the session's EXPLAIN
    /// EXECUTE, which binds no statement, asks too).
    pub fn explain_parts<'s>(
        &self,
        stmt: &'s ast::Statement,
    ) -> PgResult<(ExplainOptions, &'s ast::Statement)> {
        let ast::Statement::Explain {
            describe_alias,
            analyze,
            verbose,
            query_plan,
            estimate,
            statement,
            format,
            options,
        } = stmt
        else {
            return Err(PgError::internal("EXPLAIN's options of another statement"));
        };
        let legacy = *analyze || *verbose || *query_plan || *estimate || format.is_some();
        let options =
            self.explain_options(*describe_alias, legacy, *analyze, options.as_deref())?;
        Ok((options, statement))
    }

    /// EXPLAIN's options: `[ANALYZE] [VERBOSE]` (`legacy`: keywords other than ANALYZE
    /// were used) or PostgreSQL's parenthesized list, with its errors.
    fn explain_options(
        &self,
        alias: ast::DescribeAlias,
        legacy: bool,
        analyze: bool,
        options: Option<&[ast::UtilityOption]>,
    ) -> PgResult<ExplainOptions> {
        if alias != ast::DescribeAlias::Explain {
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{alias}\""
            )));
        }
        let mut analyze = Some(analyze);
        let (mut timing, mut summary, mut verbose, mut buffers) = (None, None, false, false);
        let mut costs = true;
        if legacy && analyze != Some(true) {
            verbose = true;
        }
        for o in options.unwrap_or_default() {
            let name = o.name.value.to_lowercase();
            let value = o.arg.as_ref().map(|a| match a {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                },
                other => other.to_string(),
            });
            let flag = |name: &str| -> PgResult<bool> {
                match &value {
                    None => Ok(true),
                    Some(v) => parse_bool(v).ok_or_else(|| {
                        PgError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("{name} requires a Boolean value"),
                        )
                    }),
                }
            };
            match name.as_str() {
                "analyze" => analyze = Some(flag("analyze")?),
                "timing" => timing = Some(flag("timing")?),
                "summary" => summary = Some(flag("summary")?),
                "verbose" => verbose = flag("verbose")?,
                "buffers" => buffers = flag("buffers")?,
                "costs" => costs = flag("costs")?,
                "settings" | "wal" => {
                    if flag(&name)? {
                        return Err(PgError::unsupported(format!(
                            "EXPLAIN ({})",
                            name.to_uppercase()
                        )));
                    }
                }
                "format" => match value.as_deref().map(str::to_lowercase).as_deref() {
                    Some("text") => {}
                    Some(f @ ("json" | "xml" | "yaml")) => {
                        return Err(PgError::unsupported(format!(
                            "EXPLAIN (FORMAT {})",
                            f.to_uppercase()
                        )));
                    }
                    Some(other) => {
                        return Err(PgError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!(
                                "unrecognized value for EXPLAIN option \"format\": \"{other}\""
                            ),
                        ));
                    }
                    None => {
                        return Err(PgError::new(
                            SqlState::SYNTAX_ERROR,
                            "format requires a parameter",
                        ));
                    }
                },
                _ => {
                    return Err(PgError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("unrecognized EXPLAIN option \"{name}\""),
                    )
                    .with_position(self.position(&o.name.span)));
                }
            }
        }
        let analyze = analyze.unwrap_or(false);
        if timing == Some(true) && !analyze {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "EXPLAIN option TIMING requires ANALYZE",
            ));
        }
        Ok(ExplainOptions {
            analyze,
            timing: timing.unwrap_or(analyze),
            summary: summary.unwrap_or(analyze),
            verbose,
            buffers,
            costs,
        })
    }
}

/// EXPLAIN's one result column.
pub fn explain_columns() -> Vec<OutputColumn> {
    vec![OutputColumn {
        name: "QUERY PLAN".into(),
        ty: DataType::Text,
        table_oid: 0,
        column_number: 0,
    }]
}
