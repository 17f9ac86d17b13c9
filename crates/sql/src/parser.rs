//! `sqlparser` with PostgreSQL's error conventions.

use common::{PgError, PgResult};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};

/// Nesting depth beyond which the parser gives up with an error instead of exhausting the
/// stack (PostgreSQL reports `stack depth limit exceeded`; sqlparser's default is 50).
const PARSER_RECURSION_LIMIT: usize = 200;

pub use sqlparser::ast::Statement;

/// Parse a query string holding zero or more statements.
pub fn parse(sql: &str) -> PgResult<Vec<Statement>> {
    let dialect = PostgreSqlDialect {};
    Parser::new(&dialect)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| syntax_error(sql, e))
}

/// Parse a single expression (a stored column DEFAULT).
pub fn parse_expr(sql: &str) -> PgResult<sqlparser::ast::Expr> {
    let dialect = PostgreSqlDialect {};
    Parser::new(&dialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| syntax_error(sql, e))
}

/// The 1-based character offset in `sql` of a sqlparser (line, column) location.
pub fn location_to_position(sql: &str, line: u64, column: u64) -> Option<u32> {
    if line == 0 {
        return None;
    }
    let mut pos = 0u32;
    for (i, l) in sql.split('\n').enumerate() {
        if i as u64 + 1 == line {
            return Some(pos + column as u32);
        }
        pos += l.chars().count() as u32 + 1;
    }
    None
}

/// Turn sqlparser's "Expected: X, found: TOK at Line: L, Column: C" into PostgreSQL's
/// `syntax error at or near "TOK"` (or `at end of input`) with the token's position.
fn syntax_error(sql: &str, e: ParserError) -> PgError {
    let msg = match e {
        ParserError::RecursionLimitExceeded => {
            return PgError::new(
                common::SqlState::PROGRAM_LIMIT_EXCEEDED,
                "stack depth limit exceeded",
            )
            .with_hint("The statement is nested too deeply.");
        }
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
    };
    let (body, position) = match msg.rfind(" at Line: ") {
        Some(at) => {
            let loc = &msg[at + " at Line: ".len()..];
            let mut parts = loc.split(", Column: ");
            let line = parts.next().and_then(|l| l.trim().parse().ok());
            let col = parts.next().and_then(|c| c.trim().parse().ok());
            let pos = match (line, col) {
                (Some(l), Some(c)) => location_to_position(sql, l, c),
                _ => None,
            };
            (&msg[..at], pos)
        }
        None => (msg.as_str(), None),
    };
    if body.starts_with("Unterminated") && body.contains("string") {
        let rest: String = position
            .map(|p| sql.chars().skip(p.saturating_sub(1) as usize).collect())
            .unwrap_or_default();
        return PgError::syntax(format!("unterminated quoted string at or near \"{rest}\""))
            .with_position(position);
    }
    if let Some(e) = delete_without_from(sql, body, position) {
        return e;
    }
    let found = body.rsplit_once("found: ").map(|(_, f)| f.trim());
    match found {
        Some("EOF") => PgError::syntax("syntax error at end of input")
            .with_position(Some(sql.chars().count() as u32 + 1)),
        Some(tok) => {
            let tok = tok.trim_matches('\'').trim_matches('"');
            PgError::syntax(format!("syntax error at or near \"{tok}\"")).with_position(position)
        }
        None => PgError::syntax(format!("syntax error: {body}")).with_position(position),
    }
}

/// `DELETE t WHERE ...`: sqlparser reads `t` as a MySQL multi-table target and then misses
/// FROM; PostgreSQL's grammar fails on `t` itself, right after DELETE.
fn delete_without_from(sql: &str, body: &str, position: Option<u32>) -> Option<PgError> {
    if !body.starts_with("Expected: FROM") {
        return None;
    }
    let before: Vec<char> = sql
        .chars()
        .take(position?.saturating_sub(1) as usize)
        .collect();
    let lower: String = before.iter().collect::<String>().to_ascii_lowercase();
    let at = lower.rfind("delete")? + "delete".len();
    let rest = &lower[at..];
    let skip = rest.len() - rest.trim_start().len();
    let start = lower[..at + skip].chars().count();
    let token: String = before[start..]
        .iter()
        .take_while(|c| !c.is_whitespace())
        .collect();
    if token.is_empty() {
        return None;
    }
    Some(
        PgError::syntax(format!("syntax error at or near \"{token}\""))
            .with_position(Some(start as u32 + 1)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_look_like_postgres() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.code, common::SqlState::SYNTAX_ERROR);
        assert_eq!(e.message, "syntax error at or near \"SELEC\"");
        assert_eq!(e.position, Some(1));
        let e = parse("SELECT 1 +").unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
        let e = parse("DELETE e WHERE id = 1").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"e\"");
        assert_eq!(e.position, Some(8));
        let e = parse("SELECT 'abc").unwrap_err();
        assert_eq!(e.message, "unterminated quoted string at or near \"'abc\"");
        assert_eq!(e.position, Some(8));
        let e = parse("SELECT 1;\nSELECT 1 1").unwrap_err();
        assert!(
            e.message.starts_with("syntax error at or near"),
            "{}",
            e.message
        );
        assert!(e.position.unwrap() > 10);
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(location_to_position("ab\ncd", 2, 1), Some(4));
        assert_eq!(location_to_position("é x", 1, 3), Some(3));
    }
}
