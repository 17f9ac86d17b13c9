//! `sqlparser` with PostgreSQL's error conventions.

use common::{PgError, PgResult};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};

/// Nesting depth beyond which the parser gives up with an error instead of exhausting the
/// stack (PostgreSQL reports `stack depth limit exceeded`; sqlparser's default is 50).
const PARSER_RECURSION_LIMIT: usize = 200;

pub use sqlparser::ast::Statement;

/// One parsed statement: sqlparser's, or one of the few whose PostgreSQL grammar sqlparser
/// lacks, parsed here from the same token stream.
// Statement is large (sqlparser returns it by value); boxing it would only move the size
// to the heap for every statement, to save it for the rare VACUUM.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Sql(Statement),
    /// VACUUM or ANALYZE (sqlparser reads Redshift's VACUUM, and Hive's ANALYZE).
    Vacuum(Vacuum),
    /// ALTER SEQUENCE (sqlparser has no such statement).
    AlterSequence(AlterSequence),
    /// ALTER INDEX (sqlparser's lacks IF EXISTS).
    AlterIndex(AlterIndex),
    /// CHECKPOINT (sqlparser has no such statement).
    Checkpoint,
    /// ALTER TABLE ... ALTER COLUMN ... SET STATISTICS | STORAGE | COMPRESSION (sqlparser
    /// lacks these actions).
    AlterColumnSet(AlterColumnSet),
    /// ALTER TABLE ... ATTACH PARTITION / DETACH PARTITION (sqlparser lacks both).
    AlterPartition(AlterPartition),
    /// FETCH or MOVE (sqlparser's FETCH needs FROM and a count; it has no MOVE).
    Fetch(Fetch),
}

/// `FETCH [direction] [FROM | IN] cursor` or `MOVE ...`: PostgreSQL's grammar.
#[derive(Clone, Debug, PartialEq)]
pub struct Fetch {
    pub direction: FetchDirection,
    pub cursor: sqlparser::ast::Ident,
    /// MOVE: the cursor moves as FETCH would move it, and no rows are returned.
    pub move_only: bool,
}

/// Where a FETCH goes, as PostgreSQL's `FetchDirection` and count: `None` is ALL. A
/// negative count of FORWARD or BACKWARD is read as the other direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchDirection {
    Forward(Option<i64>),
    Backward(Option<i64>),
    Absolute(i64),
    Relative(i64),
}

impl std::fmt::Display for Fetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.move_only { "MOVE " } else { "FETCH " })?;
        match self.direction {
            FetchDirection::Forward(None) => f.write_str("FORWARD ALL")?,
            FetchDirection::Forward(Some(n)) => write!(f, "FORWARD {n}")?,
            FetchDirection::Backward(None) => f.write_str("BACKWARD ALL")?,
            FetchDirection::Backward(Some(n)) => write!(f, "BACKWARD {n}")?,
            FetchDirection::Absolute(n) => write!(f, "ABSOLUTE {n}")?,
            FetchDirection::Relative(n) => write!(f, "RELATIVE {n}")?,
        }
        write!(f, " FROM {}", self.cursor)
    }
}

/// `ALTER TABLE [IF EXISTS] [ONLY] name ATTACH PARTITION p FOR VALUES ... | DEFAULT`, or
/// `... DETACH PARTITION p [CONCURRENTLY | FINALIZE]`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterPartition {
    pub if_exists: bool,
    pub table: sqlparser::ast::ObjectName,
    pub partition: sqlparser::ast::ObjectName,
    /// ATTACH's bound; `None` for DETACH.
    pub attach: Option<sqlparser::ast::ForValues>,
    pub concurrently: bool,
    pub finalize: bool,
}

impl std::fmt::Display for AlterPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ALTER TABLE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        match &self.attach {
            Some(bound) => write!(
                f,
                "{} ATTACH PARTITION {} {bound}",
                self.table, self.partition
            ),
            None => {
                write!(f, "{} DETACH PARTITION {}", self.table, self.partition)?;
                if self.concurrently {
                    f.write_str(" CONCURRENTLY")?;
                }
                if self.finalize {
                    f.write_str(" FINALIZE")?;
                }
                Ok(())
            }
        }
    }
}

/// `ALTER TABLE [IF EXISTS] [ONLY] name ALTER [COLUMN] column SET STATISTICS n | SET
/// STORAGE strategy | SET COMPRESSION method`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterColumnSet {
    pub if_exists: bool,
    /// ONLY: a partitioned table's own setting, not its partitions'.
    pub only: bool,
    pub name: sqlparser::ast::ObjectName,
    pub column: sqlparser::ast::Ident,
    pub action: ColumnSet,
}

/// What `ALTER COLUMN ... SET` sets.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnSet {
    /// The statistics target, as written (PostgreSQL's grammar takes a signed integer).
    Statistics(i64),
    /// The storage strategy's name, as written (an identifier, or DEFAULT).
    Storage(String),
    /// The compression method's name, as written (an identifier, or DEFAULT).
    Compression(String),
}

impl std::fmt::Display for AlterColumnSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ALTER TABLE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        if self.only {
            f.write_str("ONLY ")?;
        }
        write!(f, "{} ALTER COLUMN {} SET ", self.name, self.column)?;
        match &self.action {
            ColumnSet::Statistics(n) => write!(f, "STATISTICS {n}"),
            ColumnSet::Storage(s) => write!(f, "STORAGE {s}"),
            ColumnSet::Compression(m) => write!(f, "COMPRESSION {m}"),
        }
    }
}

impl Command {
    /// The sqlparser statement, unless this is one of Myriad's own.
    pub fn sql(&self) -> Option<&Statement> {
        match self {
            Command::Sql(s) => Some(s),
            Command::Vacuum(_)
            | Command::AlterSequence(_)
            | Command::AlterIndex(_)
            | Command::AlterColumnSet(_)
            | Command::AlterPartition(_)
            | Command::Fetch(_)
            | Command::Checkpoint => None,
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Sql(s) => s.fmt(f),
            Command::Vacuum(v) => v.fmt(f),
            Command::AlterSequence(a) => a.fmt(f),
            Command::AlterIndex(a) => a.fmt(f),
            Command::Checkpoint => f.write_str("CHECKPOINT"),
            Command::AlterColumnSet(a) => a.fmt(f),
            Command::AlterPartition(a) => a.fmt(f),
            Command::Fetch(a) => a.fmt(f),
        }
    }
}

/// `ALTER SEQUENCE [IF EXISTS] name [AS type] [INCREMENT ...] [[NO] MINVALUE ...]
/// [[NO] MAXVALUE ...] [START ...] [RESTART [[WITH] n]] [CACHE n] [[NO] CYCLE]
/// [OWNED BY t.c | NONE]`, the options in any order.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterSequence {
    pub if_exists: bool,
    pub name: sqlparser::ast::ObjectName,
    pub data_type: Option<sqlparser::ast::DataType>,
    pub options: Vec<sqlparser::ast::SequenceOptions>,
    /// RESTART: `Some(None)` restarts at the start value.
    pub restart: Option<Option<sqlparser::ast::Expr>>,
    pub owned_by: Option<sqlparser::ast::ObjectName>,
    /// A form Myriad does not have (RENAME TO, OWNER TO, SET ...): its first words.
    pub unsupported: Option<String>,
}

impl std::fmt::Display for AlterSequence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ALTER SEQUENCE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        write!(f, "{}", self.name)?;
        if let Some(t) = &self.data_type {
            write!(f, " AS {t}")?;
        }
        for o in &self.options {
            write!(f, "{o}")?;
        }
        match &self.restart {
            Some(Some(v)) => write!(f, " RESTART WITH {v}")?,
            Some(None) => f.write_str(" RESTART")?,
            None => {}
        }
        if let Some(o) = &self.owned_by {
            write!(f, " OWNED BY {o}")?;
        }
        if let Some(u) = &self.unsupported {
            write!(f, " {u}")?;
        }
        Ok(())
    }
}

/// `ALTER INDEX [IF EXISTS] name RENAME TO new_name`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterIndex {
    pub if_exists: bool,
    pub name: sqlparser::ast::ObjectName,
    pub rename_to: Option<sqlparser::ast::Ident>,
    /// A form Myriad does not have (SET, RESET, ALTER COLUMN, ...): its first words.
    pub unsupported: Option<String>,
}

impl std::fmt::Display for AlterIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ALTER INDEX ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        write!(f, "{}", self.name)?;
        if let Some(to) = &self.rename_to {
            write!(f, " RENAME TO {to}")?;
        }
        if let Some(u) = &self.unsupported {
            write!(f, " {u}")?;
        }
        Ok(())
    }
}

/// `VACUUM [(options)] [FULL] [FREEZE] [VERBOSE] [ANALYZE] [table [(columns)], ...]` or
/// `ANALYZE [(options)] [VERBOSE] [table [(columns)], ...]`, as PostgreSQL 15 reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vacuum {
    /// VACUUM (else ANALYZE alone).
    pub vacuum: bool,
    /// ANALYZE, alone or as VACUUM's option.
    pub analyze: bool,
    pub full: bool,
    pub freeze: bool,
    pub verbose: bool,
    pub skip_locked: bool,
    /// The tables named, each with its column list; empty: every table.
    pub tables: Vec<(sqlparser::ast::ObjectName, Vec<sqlparser::ast::Ident>)>,
    /// An option PostgreSQL rejects when the statement runs (42601): its message and
    /// position.
    pub invalid: Option<(String, Option<u32>)>,
}

impl std::fmt::Display for Vacuum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.vacuum { "VACUUM" } else { "ANALYZE" })?;
        let flags = [
            (self.full, "FULL"),
            (self.freeze, "FREEZE"),
            (self.verbose, "VERBOSE"),
            (self.skip_locked, "SKIP_LOCKED"),
            (self.analyze && self.vacuum, "ANALYZE"),
        ];
        let on: Vec<&str> = flags.iter().filter(|(b, _)| *b).map(|(_, w)| *w).collect();
        if !on.is_empty() {
            write!(f, " ({})", on.join(", "))?;
        }
        for (i, (t, cols)) in self.tables.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{t}")?;
            if !cols.is_empty() {
                let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
                write!(f, " ({})", cols.join(", "))?;
            }
        }
        Ok(())
    }
}

/// Parse a query string holding zero or more statements.
pub fn parse(sql: &str) -> PgResult<Vec<Command>> {
    // sqlparser reads what follows `COPY ... FROM STDIN;` as inline data (psql's dump
    // format), but in a query string it is more statements: parse them apart. The rest
    // is parsed with everything before it blanked out, so positions stay true.
    if let Some(cut) = end_of_copy_from_stdin(sql) {
        let mut stmts = parse_one_part(&sql[..cut])?;
        let blanked: String = sql[..cut]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .chain(sql[cut..].chars())
            .collect();
        stmts.extend(parse(&blanked)?);
        return Ok(stmts);
    }
    parse_one_part(sql)
}

/// The byte offset just after the `;` that ends a `COPY ... FROM STDIN` statement, when
/// more statements follow it.
fn end_of_copy_from_stdin(sql: &str) -> Option<usize> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    // Tokenizing costs as much as parsing: a string without the word skips it.
    if !sql
        .as_bytes()
        .windows(5)
        .any(|w| w.eq_ignore_ascii_case(b"stdin"))
    {
        return None;
    }
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .ok()?;
    let mut statement_start = true;
    let mut in_copy = false;
    let mut stdin = false;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                let more = tokens[i + 1..]
                    .iter()
                    .any(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon));
                if in_copy && stdin && more {
                    let at = location_to_position(sql, t.span.start.line, t.span.start.column)?;
                    return sql
                        .char_indices()
                        .nth(at as usize)
                        .map(|(b, _)| b)
                        .or(Some(sql.len()));
                }
                statement_start = true;
                in_copy = false;
                stdin = false;
                continue;
            }
            Token::Word(w) if statement_start => in_copy = w.keyword == Keyword::COPY,
            Token::Word(w) if in_copy && w.keyword == Keyword::STDIN => stdin = true,
            _ => {}
        }
        statement_start = false;
    }
    None
}

fn parse_one_part(sql: &str) -> PgResult<Vec<Command>> {
    let dialect = PostgreSqlDialect {};
    let parse = |text: &str| {
        Parser::new(&dialect)
            .with_recursion_limit(PARSER_RECURSION_LIMIT)
            .try_with_sql(text)
            .and_then(|mut p| parse_commands(&mut p, text))
    };
    // `FROM ONLY t` parses, wrongly, as a table named ONLY, and `PARTITION OF p (a NOT
    // NULL)` as a column of type NOT: those go first (a string without either word is
    // not tokenized twice).
    let has = |word: &[u8]| {
        sql.as_bytes()
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word))
    };
    if (has(b"only") || has(b"partition"))
        && let Some(tokens) = respelled_tokens(sql)
    {
        let mut p = Parser::new(&dialect)
            .with_recursion_limit(PARSER_RECURSION_LIMIT)
            .with_tokens_with_locations(tokens);
        return parse_commands(&mut p, sql).map_err(|e| syntax_error(sql, e));
    }
    parse(sql).or_else(|e| {
        // PostgreSQL spellings sqlparser's grammar lacks, respelled as it has them.
        if let Some(respelled) = copy_booleans_respelled(sql) {
            return parse(&respelled).map_err(|_| syntax_error(sql, e));
        }
        if let Some(tokens) = respelled_tokens(sql) {
            // The tokens keep their places in `sql`, so errors point into it.
            let mut p = Parser::new(&dialect)
                .with_recursion_limit(PARSER_RECURSION_LIMIT)
                .with_tokens_with_locations(tokens);
            return parse_commands(&mut p, sql).map_err(|e| syntax_error(sql, e));
        }
        let err = syntax_error(sql, e);
        Err(misspelled_lock_strength(sql, err.position).unwrap_or(err))
    })
}

/// PostgreSQL's error for `FOR KEY x`, `FOR NO x` or `FOR NO KEY x` that is no locking
/// clause, where sqlparser stopped at the KEY or NO (at position `at`): the error is at
/// the x.
fn misspelled_lock_strength(sql: &str, at: Option<u32>) -> Option<PgError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .ok()?;
    let sig: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let kw = |k: usize| match sig.get(k).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let pos = |k: usize| {
        sig.get(k)
            .and_then(|t| location_to_position(sql, t.span.start.line, t.span.start.column))
    };
    let k = (0..sig.len())
        .find(|&k| kw(k) == Some(Keyword::FOR) && at.is_some() && pos(k + 1) == at)?;
    let bad = match (kw(k + 1), kw(k + 2)) {
        (Some(Keyword::KEY), _) => k + 2,
        (Some(Keyword::NO), Some(Keyword::KEY)) => k + 3,
        (Some(Keyword::NO), _) => k + 2,
        _ => return None,
    };
    Some(match sig.get(bad) {
        Some(t) if t.token != Token::EOF => {
            PgError::syntax(format!("syntax error at or near \"{}\"", t.token))
                .with_position(pos(bad))
        }
        _ => PgError::syntax("syntax error at end of input")
            .with_position(Some(sql.chars().count() as u32 + 1)),
    })
}

/// The first part of a locking clause's `OF` name that marks FOR KEY SHARE (respelled
/// FOR SHARE) or FOR NO KEY UPDATE (respelled FOR UPDATE): a NUL, which no identifier
/// in a query string can hold. [`lock_clause`] reads it back.
const KEY_SHARE_MARK: &str = "\0key share";
const NO_KEY_UPDATE_MARK: &str = "\0no key update";

/// A locking clause as PostgreSQL has it: its strength, the table it names (`OF`), and
/// whether it waits.
pub struct LockClause<'a> {
    pub mode: common::RowLockMode,
    pub of: Option<sqlparser::ast::ObjectName>,
    pub nonblock: Option<&'a sqlparser::ast::NonBlock>,
}

/// Read sqlparser's locking clause, with the strength [`lock_strengths_marked`] left in
/// its `OF` name.
pub fn lock_clause(l: &sqlparser::ast::LockClause) -> LockClause<'_> {
    use common::RowLockMode;
    use sqlparser::ast::{LockType, ObjectName, ObjectNamePart};
    let mut mode = match l.lock_type {
        LockType::Share => RowLockMode::Share,
        LockType::Update => RowLockMode::Update,
    };
    let mut of = l.of.clone();
    if let Some(ObjectName(parts)) = &l.of
        && let Some(ObjectNamePart::Identifier(first)) = parts.first()
        && first.quote_style == Some('"')
    {
        let marked = match first.value.as_str() {
            KEY_SHARE_MARK => Some(RowLockMode::KeyShare),
            NO_KEY_UPDATE_MARK => Some(RowLockMode::NoKeyUpdate),
            _ => None,
        };
        if let Some(m) = marked {
            mode = m;
            of = (parts.len() > 1).then(|| ObjectName(parts[1..].to_vec()));
        }
    }
    LockClause {
        mode,
        of,
        nonblock: l.nonblock.as_ref(),
    }
}

type Tokens = Vec<sqlparser::tokenizer::TokenWithSpan>;

/// The tokens of `sql` with the PostgreSQL clauses sqlparser's grammar lacks respelled
/// in forms it has, each carrying a mark the binder reads back: locking strengths,
/// OVERRIDING, identity options out of sqlparser's order. `None` if there is nothing to
/// respell.
fn respelled_tokens(sql: &str) -> Option<Tokens> {
    let dialect = PostgreSqlDialect {};
    let mut tokens = sqlparser::tokenizer::Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .ok()?;
    let mut changed = false;
    for respell in [
        lock_strengths_marked,
        overriding_marked,
        identity_options_ordered,
        only_dropped,
        partition_columns_typed,
    ] {
        if let Some(t) = respell(&tokens) {
            tokens = t;
            changed = true;
        }
    }
    changed.then_some(tokens)
}

/// `ONLY` before a table in FROM, JOIN, UPDATE or DELETE FROM, which sqlparser's
/// grammar lacks: the tokens without it; the binder finds it again in the text before
/// the table's name (`Binder::only`), where the token kept its place. `None` if there
/// is none.
fn only_dropped(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Tokens> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let sig = significant(tokens);
    let mut dropped = Vec::new();
    for k in 1..sig.len() {
        let after_table_keyword = matches!(
            token_keyword(&tokens[sig[k - 1]]),
            Some(Keyword::FROM | Keyword::JOIN | Keyword::UPDATE)
        );
        let names_next = sig
            .get(k + 1)
            .is_some_and(|&n| matches!(tokens[n].token, Token::Word(_)));
        if token_keyword(&tokens[sig[k]]) == Some(Keyword::ONLY)
            && after_table_keyword
            && names_next
        {
            dropped.push(sig[k]);
        }
    }
    if dropped.is_empty() {
        return None;
    }
    Some(
        tokens
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, t)| t.clone())
            .collect(),
    )
}

/// The type name [`partition_columns_typed`] gives the columns of `PARTITION OF`'s
/// list: the binder takes such a column for the parent's, with the options given.
pub const PARTITION_COLUMN_MARK: &str = "\0partition column";

/// `CREATE TABLE ... PARTITION OF parent (a NOT NULL, b WITH OPTIONS DEFAULT 5,
/// CHECK (...))`: the columns there have no type (they are the parent's), which
/// sqlparser's grammar requires. The tokens with [`PARTITION_COLUMN_MARK`] as each
/// column's type, and `WITH OPTIONS` dropped; `None` if there is no such list.
fn partition_columns_typed(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Tokens> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithSpan, Word};
    let sig = significant(tokens);
    let at = |k: usize| sig.get(k).map(|&i| &tokens[i]).and_then(token_keyword);
    // After PARTITION OF and the parent's name: the list's opening parenthesis.
    let mut open = None;
    for k in 0..sig.len() {
        if at(k) == Some(Keyword::PARTITION) && at(k + 1) == Some(Keyword::OF) {
            let mut n = k + 2;
            while matches!(tokens.get(*sig.get(n)?)?.token, Token::Word(_))
                && matches!(
                    sig.get(n + 1).map(|&i| &tokens[i].token),
                    Some(Token::Period)
                )
            {
                n += 2;
            }
            if matches!(
                sig.get(n + 1).map(|&i| &tokens[i].token),
                Some(Token::LParen)
            ) {
                open = Some(n + 1);
            }
            break;
        }
    }
    let open = open?;
    let mut out: Vec<TokenWithSpan> = tokens[..=sig[open]].to_vec();
    let mut depth = 0;
    let mut element_start = true;
    let mut k = open + 1;
    let mut last = sig[open];
    while k < sig.len() {
        let t = &tokens[sig[k]];
        // Whitespace between the last significant token and this one.
        out.extend_from_slice(&tokens[last + 1..sig[k]]);
        last = sig[k];
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => {
                out.extend_from_slice(&tokens[sig[k]..]);
                return Some(out);
            }
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                out.push(t.clone());
                element_start = true;
                k += 1;
                continue;
            }
            _ => {}
        }
        let constraint = matches!(
            at(k),
            Some(
                Keyword::CONSTRAINT
                    | Keyword::CHECK
                    | Keyword::PRIMARY
                    | Keyword::UNIQUE
                    | Keyword::FOREIGN
                    | Keyword::EXCLUDE
                    | Keyword::LIKE
            )
        );
        out.push(t.clone());
        if element_start && depth == 0 && !constraint && matches!(t.token, Token::Word(_)) {
            out.push(TokenWithSpan {
                token: Token::Word(Word {
                    value: PARTITION_COLUMN_MARK.to_string(),
                    quote_style: Some('"'),
                    keyword: Keyword::NoKeyword,
                }),
                span: t.span,
            });
            if at(k + 1) == Some(Keyword::WITH) && at(k + 2) == Some(Keyword::OPTIONS) {
                last = sig[k + 2];
                k += 2;
            }
        }
        element_start = false;
        k += 1;
    }
    None
}

/// The keyword of a token that is an unquoted word.
fn token_keyword(t: &sqlparser::tokenizer::TokenWithSpan) -> Option<sqlparser::keywords::Keyword> {
    match &t.token {
        sqlparser::tokenizer::Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// The indexes of the tokens that are not whitespace.
fn significant(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Vec<usize> {
    (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, sqlparser::tokenizer::Token::Whitespace(_)))
        .collect()
}

/// `FOR KEY SHARE` and `FOR NO KEY UPDATE`, which sqlparser's grammar lacks: the tokens
/// with each respelled `FOR SHARE` / `FOR UPDATE` and marked in its `OF` name (see
/// [`KEY_SHARE_MARK`]); `None` if there are none.
fn lock_strengths_marked(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Tokens> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithSpan, Word};
    let sig = significant(tokens);
    let at = |k: usize| sig.get(k).map(|&i| &tokens[i]).and_then(token_keyword);
    let mut out = Vec::with_capacity(tokens.len() + 4);
    let mut next = 0; // the next token of `tokens` to copy
    let mut marked = false;
    for k in 0..sig.len() {
        if at(k) != Some(Keyword::FOR) {
            continue;
        }
        let (mark, words) = match (at(k + 1), at(k + 2), at(k + 3)) {
            (Some(Keyword::KEY), Some(Keyword::SHARE), _) => (KEY_SHARE_MARK, 2),
            (Some(Keyword::NO), Some(Keyword::KEY), Some(Keyword::UPDATE)) => {
                (NO_KEY_UPDATE_MARK, 3)
            }
            _ => continue,
        };
        // Copy through FOR, drop KEY / NO KEY, keep SHARE / UPDATE.
        out.extend_from_slice(&tokens[next..=sig[k]]);
        let last = sig[k + words];
        out.push(tokens[last].clone());
        next = last + 1;
        let ident = TokenWithSpan {
            token: Token::Word(Word {
                value: mark.to_string(),
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            }),
            span: tokens[sig[k + 1]].span,
        };
        if at(k + words + 1) == Some(Keyword::OF) {
            // FOR ... OF t: the mark goes first in the name (mark.t).
            let of = sig[k + words + 1];
            out.extend_from_slice(&tokens[next..=of]);
            next = of + 1;
            out.push(ident);
            out.push(TokenWithSpan {
                token: Token::Period,
                span: tokens[of].span,
            });
        } else {
            out.push(TokenWithSpan {
                token: Token::make_keyword("OF"),
                span: tokens[sig[k + 1]].span,
            });
            out.push(ident);
        }
        marked = true;
    }
    if !marked {
        return None;
    }
    out.extend_from_slice(&tokens[next..]);
    Some(out)
}

/// The mark of `INSERT ... OVERRIDING SYSTEM VALUE` / `OVERRIDING USER VALUE`, which
/// sqlparser's grammar lacks: respelled as Hive's `PARTITION ('mark')` in the same place,
/// so the mark stays with its statement. A NUL, which no string in a query string can
/// hold, keeps it apart from anything a user writes. [`insert_overriding`] reads it back.
const OVERRIDING_SYSTEM_MARK: &str = "\0overriding system value";
const OVERRIDING_USER_MARK: &str = "\0overriding user value";

/// What an INSERT's OVERRIDING clause overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overriding {
    /// OVERRIDING SYSTEM VALUE: the values given for GENERATED ALWAYS identity columns
    /// are stored.
    System,
    /// OVERRIDING USER VALUE: the values given for identity columns are replaced by the
    /// next values of their sequences.
    User,
}

/// An INSERT's OVERRIDING clause, marked by [`overriding_marked`]. Any other
/// `PARTITION (...)` (Hive's, which PostgreSQL does not have) is an error.
pub fn insert_overriding(i: &sqlparser::ast::Insert) -> PgResult<Option<Overriding>> {
    use sqlparser::ast::{Expr, Value};
    let Some(p) = &i.partitioned else {
        return Ok(None);
    };
    if let [Expr::Value(v)] = p.as_slice()
        && let Value::SingleQuotedString(s) = &v.value
    {
        match s.as_str() {
            OVERRIDING_SYSTEM_MARK => return Ok(Some(Overriding::System)),
            OVERRIDING_USER_MARK => return Ok(Some(Overriding::User)),
            _ => {}
        }
    }
    Err(PgError::unsupported("INSERT ... PARTITION"))
}

/// The tokens with each INSERT's `OVERRIDING {SYSTEM | USER} VALUE` respelled
/// `PARTITION ('mark')` (see [`OVERRIDING_SYSTEM_MARK`]); `None` if there is none.
fn overriding_marked(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Tokens> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithSpan};
    let sig = significant(tokens);
    let at = |k: usize| sig.get(k).map(|&i| &tokens[i]).and_then(token_keyword);
    let mut out = Vec::with_capacity(tokens.len() + 2);
    let mut next = 0; // the next token of `tokens` to copy
    let mut in_insert = false;
    for k in 0..sig.len() {
        let t = &tokens[sig[k]];
        match &t.token {
            Token::SemiColon => in_insert = false,
            Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::INSERT => {
                in_insert = true
            }
            _ => {}
        }
        let overriding = matches!(&t.token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("overriding"));
        if !in_insert || !overriding || at(k + 2) != Some(Keyword::VALUE) {
            continue;
        }
        let mark = match at(k + 1) {
            Some(Keyword::SYSTEM) => OVERRIDING_SYSTEM_MARK,
            Some(Keyword::USER) => OVERRIDING_USER_MARK,
            _ => continue,
        };
        out.extend_from_slice(&tokens[next..sig[k]]);
        let span = |j: usize| tokens[sig[k + j]].span;
        // Right after the table's name, sqlparser would read PARTITION as an alias:
        // the table's own name goes first as one (PostgreSQL's alias needs AS, so
        // there was none).
        let after_name = k >= 2
            && (matches!(tokens[sig[k - 2]].token, Token::Period)
                || at(k - 2) == Some(Keyword::INTO));
        if after_name && let Token::Word(name) = &tokens[sig[k - 1]].token {
            out.push(TokenWithSpan {
                token: Token::make_keyword("AS"),
                span: span(0),
            });
            out.push(TokenWithSpan {
                token: Token::Word(name.clone()),
                span: span(0),
            });
        }
        out.push(TokenWithSpan {
            token: Token::make_keyword("PARTITION"),
            span: span(0),
        });
        out.push(TokenWithSpan {
            token: Token::LParen,
            span: span(0),
        });
        out.push(TokenWithSpan {
            token: Token::SingleQuotedString(mark.to_string()),
            span: span(1),
        });
        out.push(TokenWithSpan {
            token: Token::RParen,
            span: span(2),
        });
        next = sig[k + 2] + 1;
    }
    if next == 0 {
        return None;
    }
    out.extend_from_slice(&tokens[next..]);
    Some(out)
}

/// The tokens with the options of each `GENERATED ... AS IDENTITY (options)` put in the
/// one order sqlparser reads (INCREMENT, MINVALUE, MAXVALUE, START, CACHE, CYCLE);
/// PostgreSQL takes them in any order. `None` if no list is out of that order, or one
/// holds an option sqlparser lacks (its syntax error stands).
fn identity_options_ordered(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Tokens> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let sig = significant(tokens);
    let at = |k: usize| sig.get(k).map(|&i| &tokens[i]).and_then(token_keyword);
    let rank = |k: usize| match at(k)? {
        Keyword::INCREMENT => Some(0),
        Keyword::MINVALUE => Some(1),
        Keyword::MAXVALUE => Some(2),
        Keyword::START => Some(3),
        Keyword::CACHE => Some(4),
        Keyword::CYCLE => Some(5),
        Keyword::NO => match at(k + 1)? {
            Keyword::MINVALUE => Some(1),
            Keyword::MAXVALUE => Some(2),
            Keyword::CYCLE => Some(5),
            _ => None,
        },
        _ => None,
    };
    let mut out = Vec::with_capacity(tokens.len());
    let mut next = 0; // the next token of `tokens` to copy
    let mut changed = false;
    let mut k = 0;
    while k + 1 < sig.len() {
        if at(k) != Some(Keyword::IDENTITY) || tokens[sig[k + 1]].token != Token::LParen {
            k += 1;
            continue;
        }
        // The options: from the token after `(` to the matching `)`, cut where each
        // option begins (an option's words never begin another: NO only before its word).
        let first = k + 2;
        let mut end = first;
        let mut depth = 0;
        while let Some(&i) = sig.get(end) {
            match tokens[i].token {
                Token::LParen => depth += 1,
                Token::RParen if depth == 0 => break,
                Token::RParen => depth -= 1,
                Token::EOF => return None,
                _ => {}
            }
            end += 1;
        }
        let mut groups: Vec<(u8, usize, usize)> = Vec::new(); // (rank, first, last) in sig
        let mut j = first;
        while j < end {
            let r = rank(j)?;
            let mut last = j + if at(j) == Some(Keyword::NO) { 1 } else { 0 };
            while last + 1 < end && rank(last + 1).is_none() {
                last += 1;
            }
            groups.push((r, j, last));
            j = last + 1;
        }
        if groups.windows(2).any(|w| w[0].0 > w[1].0) {
            groups.sort_by_key(|g| g.0);
            out.extend_from_slice(&tokens[next..sig[first]]);
            for (i, &(_, a, b)) in groups.iter().enumerate() {
                if i > 0 {
                    out.push(sqlparser::tokenizer::TokenWithSpan {
                        token: Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                        span: tokens[sig[a]].span,
                    });
                }
                out.extend_from_slice(&tokens[sig[a]..=sig[b]]);
            }
            next = sig[end];
            changed = true;
        }
        k = end;
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&tokens[next..]);
    Some(out)
}

/// sqlparser's `parse_statements`, with VACUUM and ANALYZE read by [`parse_vacuum`].
fn parse_commands(p: &mut Parser<'_>, sql: &str) -> Result<Vec<Command>, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let mut out = Vec::new();
    let mut expecting_delimiter = false;
    loop {
        while p.consume_token(&Token::SemiColon) {
            expecting_delimiter = false;
        }
        let next = p.peek_token();
        if next.token == Token::EOF {
            break;
        }
        if expecting_delimiter {
            return p.expected("end of statement", next);
        }
        let own = match &next.token {
            Token::Word(w) if w.quote_style.is_none() => {
                w.keyword == Keyword::VACUUM
                    || w.keyword == Keyword::ANALYZE
                    || w.value.eq_ignore_ascii_case("analyse")
            }
            _ => false,
        };
        out.push(if own {
            Command::Vacuum(parse_vacuum(p, sql)?)
        } else if is_create_sequence(p) {
            Command::Sql(parse_create_sequence(p)?)
        } else if is_alter_sequence(p) {
            Command::AlterSequence(parse_alter_sequence(p)?)
        } else if is_alter_index(p) {
            Command::AlterIndex(parse_alter_index(p)?)
        } else if is_alter_partition(p) {
            Command::AlterPartition(parse_alter_partition(p, sql)?)
        } else if is_alter_column_set(p) {
            Command::AlterColumnSet(parse_alter_column_set(p)?)
        } else if is_checkpoint(p) {
            p.next_token();
            Command::Checkpoint
        } else if let Some(move_only) = fetch_or_move(p) {
            Command::Fetch(parse_fetch(p, move_only)?)
        } else if is_reset_time_zone(p) {
            // PostgreSQL's spelling of `RESET timezone`, which sqlparser lacks.
            for _ in 0..3 {
                p.next_token();
            }
            Command::Sql(Statement::Reset(sqlparser::ast::ResetStatement {
                reset: sqlparser::ast::Reset::ConfigurationParameter(
                    sqlparser::ast::ObjectName::from(vec![sqlparser::ast::Ident::new("timezone")]),
                ),
            }))
        } else {
            Command::Sql(p.parse_statement()?)
        });
        expecting_delimiter = true;
    }
    Ok(out)
}

/// The keyword `n` tokens ahead, if that token is an unquoted word.
fn keyword_at(p: &Parser<'_>, n: usize) -> Option<sqlparser::keywords::Keyword> {
    match p.peek_nth_token_ref(n).token {
        sqlparser::tokenizer::Token::Word(ref w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// `CHECKPOINT` next? (Not a keyword of sqlparser's.)
fn is_checkpoint(p: &Parser<'_>) -> bool {
    match &p.peek_token_ref().token {
        sqlparser::tokenizer::Token::Word(w) => {
            w.quote_style.is_none() && w.value.eq_ignore_ascii_case("checkpoint")
        }
        _ => false,
    }
}

/// `FETCH` (false) or `MOVE` (true) next?
fn fetch_or_move(p: &Parser<'_>) -> Option<bool> {
    match &p.peek_token_ref().token {
        sqlparser::tokenizer::Token::Word(w) if w.quote_style.is_none() => {
            if w.value.eq_ignore_ascii_case("fetch") {
                Some(false)
            } else if w.value.eq_ignore_ascii_case("move") {
                Some(true)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `FETCH | MOVE [direction] [FROM | IN] cursor`, where direction is NEXT, PRIOR,
/// FIRST, LAST, ABSOLUTE n, RELATIVE n, n, ALL, FORWARD [n | ALL] or BACKWARD [n | ALL]
/// (n signed), as PostgreSQL's grammar has it.
fn parse_fetch(p: &mut Parser<'_>, move_only: bool) -> Result<Fetch, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    p.next_token();
    let count = |p: &mut Parser<'_>| -> Result<i64, ParserError> {
        let negative = p.consume_token(&Token::Minus);
        if !negative {
            let _ = p.consume_token(&Token::Plus);
        }
        let t = p.next_token();
        match &t.token {
            Token::Number(n, _) => match n.parse::<i64>() {
                Ok(v) => Ok(if negative { -v } else { v }),
                Err(_) => p.expected("an integer count", t),
            },
            _ => p.expected("an integer count", t),
        }
    };
    let is_count = |p: &Parser<'_>| {
        matches!(
            p.peek_token_ref().token,
            Token::Number(..) | Token::Minus | Token::Plus
        )
    };
    let signed = |n: i64, forward: bool| match (n < 0, forward) {
        (false, true) | (true, false) => FetchDirection::Forward(Some(n.abs())),
        (false, false) | (true, true) => FetchDirection::Backward(Some(n.abs())),
    };
    let direction = if p.parse_keyword(Keyword::NEXT) {
        FetchDirection::Forward(Some(1))
    } else if p.parse_keyword(Keyword::PRIOR) {
        FetchDirection::Backward(Some(1))
    } else if p.parse_keyword(Keyword::FIRST) {
        FetchDirection::Absolute(1)
    } else if p.parse_keyword(Keyword::LAST) {
        FetchDirection::Absolute(-1)
    } else if p.parse_keyword(Keyword::ABSOLUTE) {
        FetchDirection::Absolute(count(p)?)
    } else if p.parse_keyword(Keyword::RELATIVE) {
        FetchDirection::Relative(count(p)?)
    } else if p.parse_keyword(Keyword::ALL) {
        FetchDirection::Forward(None)
    } else if p.parse_keyword(Keyword::FORWARD) {
        if p.parse_keyword(Keyword::ALL) {
            FetchDirection::Forward(None)
        } else if is_count(p) {
            signed(count(p)?, true)
        } else {
            FetchDirection::Forward(Some(1))
        }
    } else if p.parse_keyword(Keyword::BACKWARD) {
        if p.parse_keyword(Keyword::ALL) {
            FetchDirection::Backward(None)
        } else if is_count(p) {
            signed(count(p)?, false)
        } else {
            FetchDirection::Backward(Some(1))
        }
    } else if is_count(p) {
        signed(count(p)?, true)
    } else {
        FetchDirection::Forward(Some(1))
    };
    if !p.parse_keyword(Keyword::FROM) {
        let _ = p.parse_keyword(Keyword::IN);
    }
    let cursor = p.parse_identifier()?;
    Ok(Fetch {
        direction,
        cursor,
        move_only,
    })
}

/// `CREATE [TEMP | TEMPORARY] SEQUENCE` next?
fn is_create_sequence(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    let kw = |n: usize| keyword_at(p, n);
    kw(0) == Some(Keyword::CREATE)
        && (kw(1) == Some(Keyword::SEQUENCE)
            || (matches!(kw(1), Some(Keyword::TEMP | Keyword::TEMPORARY))
                && kw(2) == Some(Keyword::SEQUENCE)))
}

/// `CREATE [TEMP] SEQUENCE [IF NOT EXISTS] name [option ...]` with the options in any
/// order, as PostgreSQL takes them (sqlparser's reads them in one fixed order, so
/// `START WITH 1 INCREMENT BY 1`, as pg_dump writes it, would not parse). Built as
/// sqlparser's statement, which the binder reads.
fn parse_create_sequence(p: &mut Parser<'_>) -> Result<Statement, ParserError> {
    use sqlparser::keywords::Keyword;
    p.expect_keyword(Keyword::CREATE)?;
    let temporary = p
        .parse_one_of_keywords(&[Keyword::TEMP, Keyword::TEMPORARY])
        .is_some();
    p.expect_keyword(Keyword::SEQUENCE)?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    let o = parse_sequence_options(p, false)?;
    let (data_type, options, owned_by) = (o.data_type, o.options, o.owned_by);
    Ok(Statement::CreateSequence {
        temporary,
        if_not_exists,
        name,
        data_type,
        sequence_options: options,
        owned_by,
    })
}

/// A sequence's options, as CREATE and ALTER SEQUENCE take them.
struct SequenceClauses {
    data_type: Option<sqlparser::ast::DataType>,
    options: Vec<sqlparser::ast::SequenceOptions>,
    restart: Option<Option<sqlparser::ast::Expr>>,
    owned_by: Option<sqlparser::ast::ObjectName>,
}

/// The option list of CREATE SEQUENCE (or, with `alter`, ALTER SEQUENCE, which also takes
/// RESTART), in any order, each at most once.
fn parse_sequence_options(p: &mut Parser<'_>, alter: bool) -> Result<SequenceClauses, ParserError> {
    use sqlparser::ast::SequenceOptions as O;
    use sqlparser::keywords::Keyword;
    let mut c = SequenceClauses {
        data_type: None,
        options: Vec::new(),
        restart: None,
        owned_by: None,
    };
    // AS, RESTART and OWNED BY once each here; the binder reports a repeated option of
    // the list with PostgreSQL's "conflicting or redundant options".
    let mut seen: Vec<&str> = Vec::new();
    let mut once = |p: &Parser<'_>, what: &'static str| {
        if seen.contains(&what) {
            Err(ParserError::ParserError(format!(
                "conflicting or redundant options near {}",
                p.peek_token()
            )))
        } else {
            seen.push(what);
            Ok(())
        }
    };
    loop {
        if p.parse_keyword(Keyword::AS) {
            once(p, "as")?;
            c.data_type = Some(p.parse_data_type()?);
        } else if p.parse_keyword(Keyword::INCREMENT) {
            let by = p.parse_keyword(Keyword::BY);
            c.options.push(O::IncrementBy(p.parse_number()?, by));
        } else if p.parse_keyword(Keyword::MINVALUE) {
            c.options.push(O::MinValue(Some(p.parse_number()?)));
        } else if p.parse_keyword(Keyword::MAXVALUE) {
            c.options.push(O::MaxValue(Some(p.parse_number()?)));
        } else if p.parse_keyword(Keyword::START) {
            let with = p.parse_keyword(Keyword::WITH);
            c.options.push(O::StartWith(p.parse_number()?, with));
        } else if alter && p.parse_keyword(Keyword::RESTART) {
            once(p, "restart")?;
            let with = p.parse_keyword(Keyword::WITH);
            let value = if with
                || matches!(
                    p.peek_token().token,
                    sqlparser::tokenizer::Token::Number(..) | sqlparser::tokenizer::Token::Minus
                ) {
                Some(p.parse_number()?)
            } else {
                None
            };
            c.restart = Some(value);
        } else if p.parse_keyword(Keyword::CACHE) {
            c.options.push(O::Cache(p.parse_number()?));
        } else if p.parse_keyword(Keyword::CYCLE) {
            c.options.push(O::Cycle(false));
        } else if p.parse_keyword(Keyword::NO) {
            match p.expect_one_of_keywords(&[
                Keyword::MINVALUE,
                Keyword::MAXVALUE,
                Keyword::CYCLE,
            ])? {
                Keyword::MINVALUE => {
                    c.options.push(O::MinValue(None));
                }
                Keyword::MAXVALUE => {
                    c.options.push(O::MaxValue(None));
                }
                _ => {
                    // sqlparser's flag: true is NO CYCLE.
                    c.options.push(O::Cycle(true));
                }
            }
        } else if p.parse_keywords(&[Keyword::OWNED, Keyword::BY]) {
            once(p, "owned_by")?;
            c.owned_by = Some(p.parse_object_name(false)?);
        } else {
            return Ok(c);
        }
    }
}

/// `ALTER SEQUENCE` next?
fn is_alter_sequence(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    let kw = |n: usize| keyword_at(p, n);
    kw(0) == Some(Keyword::ALTER) && kw(1) == Some(Keyword::SEQUENCE)
}

fn parse_alter_sequence(p: &mut Parser<'_>) -> Result<AlterSequence, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    p.expect_keywords(&[Keyword::ALTER, Keyword::SEQUENCE])?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    if let Token::Word(w) = &p.peek_token().token
        && matches!(w.keyword, Keyword::RENAME | Keyword::OWNER | Keyword::SET)
    {
        // Not supported yet: keep the words for the error, up to the statement's end.
        let mut words = Vec::new();
        while !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
            words.push(p.next_token().to_string());
        }
        return Ok(AlterSequence {
            if_exists,
            name,
            data_type: None,
            options: Vec::new(),
            restart: None,
            owned_by: None,
            unsupported: Some(words.join(" ")),
        });
    }
    let c = parse_sequence_options(p, true)?;
    if c.data_type.is_none() && c.options.is_empty() && c.restart.is_none() && c.owned_by.is_none()
    {
        return p.expected("a sequence option", p.peek_token());
    }
    Ok(AlterSequence {
        if_exists,
        name,
        data_type: c.data_type,
        options: c.options,
        restart: c.restart,
        owned_by: c.owned_by,
        unsupported: None,
    })
}

/// `RESET TIME ZONE` next?
fn is_reset_time_zone(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    let kw = |n: usize| keyword_at(p, n);
    kw(0) == Some(Keyword::RESET) && kw(1) == Some(Keyword::TIME) && kw(2) == Some(Keyword::ZONE)
}

/// `ALTER INDEX` next?
/// `ALTER TABLE ...` whose action is `SET STATISTICS`, `SET STORAGE` or `SET
/// COMPRESSION`?
fn is_alter_column_set(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    alter_table_with(p, |w, n| {
        w.keyword == Keyword::SET
            && matches!(
                keyword_at(p, n + 1),
                Some(Keyword::STATISTICS | Keyword::STORAGE | Keyword::COMPRESSION)
            )
    })
}

/// `ALTER TABLE` next, with an unquoted word (at token `n`) before the statement's end
/// that `is_action` takes for the action Myriad parses itself.
fn alter_table_with(
    p: &Parser<'_>,
    is_action: impl Fn(&sqlparser::tokenizer::Word, usize) -> bool,
) -> bool {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    if keyword_at(p, 0) != Some(Keyword::ALTER) || keyword_at(p, 1) != Some(Keyword::TABLE) {
        return false;
    }
    let mut n = 2;
    loop {
        match &p.peek_nth_token_ref(n).token {
            Token::EOF | Token::SemiColon => return false,
            Token::Word(w) if w.quote_style.is_none() && is_action(w, n) => return true,
            _ => {}
        }
        n += 1;
    }
}

fn parse_alter_column_set(p: &mut Parser<'_>) -> Result<AlterColumnSet, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    p.expect_keywords(&[Keyword::ALTER, Keyword::TABLE])?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let only = p.parse_keyword(Keyword::ONLY);
    let name = p.parse_object_name(false)?;
    p.expect_keyword(Keyword::ALTER)?;
    let _ = p.parse_keyword(Keyword::COLUMN);
    let column = p.parse_identifier()?;
    p.expect_keyword(Keyword::SET)?;
    let named = |p: &mut Parser<'_>| -> Result<String, ParserError> {
        if p.parse_keyword(Keyword::DEFAULT) {
            return Ok("default".into());
        }
        Ok(p.parse_identifier()?.value)
    };
    let action = if p.parse_keyword(Keyword::STORAGE) {
        Some(ColumnSet::Storage(named(p)?))
    } else if p.parse_keyword(Keyword::COMPRESSION) {
        Some(ColumnSet::Compression(named(p)?))
    } else {
        p.expect_keyword(Keyword::STATISTICS)?;
        None
    };
    if let Some(action) = action {
        return Ok(AlterColumnSet {
            if_exists,
            only,
            name,
            column,
            action,
        });
    }
    let neg = p.consume_token(&Token::Minus);
    if !neg {
        let _ = p.consume_token(&Token::Plus);
    }
    let next = p.next_token();
    let Token::Number(digits, _) = &next.token else {
        return p.expected("an integer", next);
    };
    let Ok(n) = digits.parse::<i64>() else {
        return p.expected("an integer", next);
    };
    Ok(AlterColumnSet {
        if_exists,
        only,
        name,
        column,
        action: ColumnSet::Statistics(if neg { -n } else { n }),
    })
}

/// `ALTER TABLE ... ATTACH | DETACH PARTITION` next?
fn is_alter_partition(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    alter_table_with(p, |w, n| {
        (w.value.eq_ignore_ascii_case("attach") || w.value.eq_ignore_ascii_case("detach"))
            && keyword_at(p, n + 1) == Some(Keyword::PARTITION)
    })
}

fn parse_alter_partition(p: &mut Parser<'_>, sql: &str) -> Result<AlterPartition, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    p.expect_keywords(&[Keyword::ALTER, Keyword::TABLE])?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let _ = p.parse_keyword(Keyword::ONLY);
    let table = p.parse_object_name(false)?;
    let verb = p.next_token();
    let attach = matches!(&verb.token, Token::Word(w) if w.value.eq_ignore_ascii_case("attach"));
    p.expect_keyword(Keyword::PARTITION)?;
    let partition = p.parse_object_name(false)?;
    if !attach {
        let mut concurrently = false;
        let mut finalize = false;
        if let Token::Word(w) = &p.peek_token().token {
            if w.value.eq_ignore_ascii_case("concurrently") {
                p.next_token();
                concurrently = true;
            } else if w.value.eq_ignore_ascii_case("finalize") {
                p.next_token();
                finalize = true;
            }
        }
        return Ok(AlterPartition {
            if_exists,
            table,
            partition,
            attach: None,
            concurrently,
            finalize,
        });
    }
    // The bound is CREATE TABLE ... PARTITION OF's: its text, read by sqlparser's
    // grammar for that statement.
    let (mut from, mut to) = (None, None);
    while !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
        let t = p.next_token();
        from.get_or_insert(t.span.start);
        to = Some(t.span.end);
    }
    let char_at = |l: sqlparser::tokenizer::Location| {
        location_to_position(sql, l.line, l.column).map(|x| x as usize - 1)
    };
    let words: String = match (from.and_then(char_at), to.and_then(char_at)) {
        (Some(a), Some(b)) if a <= b => sql.chars().skip(a).take(b - a).collect(),
        _ => String::new(),
    };
    let text = format!("CREATE TABLE t PARTITION OF p {words}");
    let bound = Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&text)?
        .parse_statement()?;
    let Statement::CreateTable(c) = bound else {
        return p.expected("FOR VALUES or DEFAULT", p.peek_token());
    };
    let Some(values) = c.for_values else {
        return p.expected("FOR VALUES or DEFAULT", p.peek_token());
    };
    Ok(AlterPartition {
        if_exists,
        table,
        partition,
        attach: Some(values),
        concurrently: false,
        finalize: false,
    })
}

fn is_alter_index(p: &Parser<'_>) -> bool {
    use sqlparser::keywords::Keyword;
    let kw = |n: usize| keyword_at(p, n);
    kw(0) == Some(Keyword::ALTER) && kw(1) == Some(Keyword::INDEX)
}

fn parse_alter_index(p: &mut Parser<'_>) -> Result<AlterIndex, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    p.expect_keywords(&[Keyword::ALTER, Keyword::INDEX])?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    if p.parse_keyword(Keyword::RENAME) {
        p.expect_keyword(Keyword::TO)?;
        let to = p.parse_identifier()?;
        return Ok(AlterIndex {
            if_exists,
            name,
            rename_to: Some(to),
            unsupported: None,
        });
    }
    // Not supported yet: keep the words for the error, up to the statement's end.
    let mut words = Vec::new();
    while !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
        words.push(p.next_token().to_string());
    }
    if words.is_empty() {
        return p.expected("an ALTER INDEX action", p.peek_token());
    }
    Ok(AlterIndex {
        if_exists,
        name,
        rename_to: None,
        unsupported: Some(words.join(" ")),
    })
}

/// A word that is not a keyword sqlparser knows (`skip_locked`, `analyse`).
fn parse_word(p: &mut Parser<'_>, word: &str) -> bool {
    use sqlparser::tokenizer::Token;
    match p.peek_token().token {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word) => {
            p.next_token();
            true
        }
        _ => false,
    }
}

/// VACUUM or ANALYZE in PostgreSQL 15's grammar (`gram.y` VacuumStmt / AnalyzeStmt).
fn parse_vacuum(p: &mut Parser<'_>, sql: &str) -> Result<Vacuum, ParserError> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let mut v = Vacuum::default();
    if p.parse_keyword(Keyword::VACUUM) {
        v.vacuum = true;
    } else if !p.parse_keyword(Keyword::ANALYZE) && !parse_word(p, "analyse") {
        return p.expected("VACUUM or ANALYZE", p.peek_token());
    } else {
        v.analyze = true;
    }
    if p.consume_token(&Token::LParen) {
        // The generic option list: name [value], ...; booleans take PostgreSQL's spellings.
        loop {
            let tok = p.next_token();
            let Token::Word(w) = &tok.token else {
                return p.expected("an option name", tok);
            };
            let name = w.value.to_ascii_lowercase();
            let at = location_to_position(sql, tok.span.start.line, tok.span.start.column);
            let value = match p.peek_token().token {
                Token::Comma | Token::RParen => None,
                _ => Some(p.next_token()),
            };
            let word = value.as_ref().map(|t| match &t.token {
                Token::Word(w) => w.value.to_ascii_lowercase(),
                Token::Number(n, _) => n.clone(),
                Token::SingleQuotedString(s) => s.to_ascii_lowercase(),
                other => other.to_string(),
            });
            let on = match word.as_deref() {
                None | Some("true" | "on" | "yes" | "1") => true,
                Some("false" | "off" | "no" | "0") => false,
                // INDEX_CLEANUP AUTO, PARALLEL n: not booleans.
                Some(_) if matches!(name.as_str(), "index_cleanup" | "parallel") => true,
                Some(_) => {
                    v.invalid
                        .get_or_insert((format!("{name} requires a Boolean value"), None));
                    true
                }
            };
            match name.as_str() {
                "analyze" | "analyse" if v.vacuum => v.analyze = on,
                "full" if v.vacuum => v.full = on,
                "freeze" if v.vacuum => v.freeze = on,
                "verbose" => v.verbose = on,
                "skip_locked" => v.skip_locked = on,
                // Accepted without effect on Myriad's storage: there are no pages to skip
                // (no visibility map), no TOAST, no parallel workers, and index cleanup
                // and truncation always happen.
                "disable_page_skipping"
                | "index_cleanup"
                | "process_toast"
                | "truncate"
                | "parallel"
                    if v.vacuum => {}
                _ => {
                    let what = if v.vacuum { "VACUUM" } else { "ANALYZE" };
                    v.invalid
                        .get_or_insert((format!("unrecognized {what} option \"{name}\""), at));
                }
            }
            if p.consume_token(&Token::RParen) {
                break;
            }
            p.expect_token(&Token::Comma)?;
        }
    } else if v.vacuum {
        v.full = p.parse_keyword(Keyword::FULL);
        v.freeze = p.parse_keyword(Keyword::FREEZE);
        v.verbose = p.parse_keyword(Keyword::VERBOSE);
        v.analyze = p.parse_keyword(Keyword::ANALYZE) || parse_word(p, "analyse");
    } else {
        v.verbose = p.parse_keyword(Keyword::VERBOSE);
    }
    if matches!(p.peek_token().token, Token::Word(_)) {
        loop {
            let name = p.parse_object_name(false)?;
            let mut cols = Vec::new();
            if p.consume_token(&Token::LParen) {
                cols = p.parse_comma_separated(|p| p.parse_identifier())?;
                p.expect_token(&Token::RParen)?;
            }
            v.tables.push((name, cols));
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    Ok(v)
}

/// COPY's boolean options take any of PostgreSQL's boolean spellings (`freeze on`, which
/// pgbench sends; `header 1`), sqlparser only `true`/`false`: the same text with those
/// values respelled, if there are any.
fn copy_booleans_respelled(sql: &str) -> Option<String> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .ok()?;
    let significant: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut edits: Vec<(u32, usize, &str)> = Vec::new();
    let mut in_copy = false;
    let mut statement_start = true;
    for (i, t) in significant.iter().enumerate() {
        match &t.token {
            Token::SemiColon => {
                in_copy = false;
                statement_start = true;
                continue;
            }
            Token::Word(w) if statement_start => in_copy = w.keyword == Keyword::COPY,
            _ => {}
        }
        statement_start = false;
        let is_bool_option = matches!(&t.token, Token::Word(w)
            if w.quote_style.is_none() && matches!(w.keyword, Keyword::FREEZE | Keyword::HEADER));
        if !in_copy || !is_bool_option {
            continue;
        }
        let Some(value) = significant.get(i + 1) else {
            continue;
        };
        let (text, truth) = match &value.token {
            Token::Word(w) if w.quote_style.is_none() => {
                match w.value.to_ascii_lowercase().as_str() {
                    "on" | "yes" => (w.value.clone(), "true"),
                    "off" | "no" => (w.value.clone(), "false"),
                    _ => continue,
                }
            }
            Token::Number(n, _) if n == "1" => (n.clone(), "true"),
            Token::Number(n, _) if n == "0" => (n.clone(), "false"),
            _ => continue,
        };
        let at = location_to_position(sql, value.span.start.line, value.span.start.column)?;
        edits.push((at, text.chars().count(), truth));
    }
    if edits.is_empty() {
        return None;
    }
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 0usize;
    for (at, len, truth) in edits {
        let start = at as usize - 1;
        out.extend(&chars[next..start]);
        out.push_str(truth);
        next = start + len;
    }
    out.extend(&chars[next..]);
    Some(out)
}

/// Parse a single expression (a stored column DEFAULT).
pub fn parse_expr(sql: &str) -> PgResult<sqlparser::ast::Expr> {
    let dialect = PostgreSqlDialect {};
    Parser::new(&dialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| syntax_error(sql, e))
}

/// Parse a type name as `regtype` input reads one (`integer`, `character varying(10)`,
/// `pg_catalog.int4`, `text[]`). Anything but exactly one type name is `None`.
pub fn parse_type_name(text: &str) -> Option<common::DataType> {
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect).try_with_sql(text).ok()?;
    let t = p.parse_data_type().ok()?;
    if p.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    crate::binder::type_from_ast(&t).ok()
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
                common::SqlState::STATEMENT_TOO_COMPLEX,
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

    /// The locking clauses of a one-statement query string, as the binder reads them.
    fn locks(sql: &str) -> Vec<(common::RowLockMode, Option<String>)> {
        let cmds = parse(sql).expect("parses");
        let [Command::Sql(Statement::Query(q))] = cmds.as_slice() else {
            panic!("not one query: {cmds:?}")
        };
        q.locks
            .iter()
            .map(lock_clause)
            .map(|l| (l.mode, l.of.map(|o| o.to_string())))
            .collect()
    }

    #[test]
    fn lock_strengths_sqlparser_lacks() {
        use common::RowLockMode::*;
        assert_eq!(locks("SELECT 1 FROM t FOR UPDATE"), [(Update, None)]);
        assert_eq!(
            locks("SELECT 1 FROM t FOR SHARE OF t"),
            [(Share, Some("t".into()))]
        );
        assert_eq!(locks("SELECT 1 FROM t FOR KEY SHARE"), [(KeyShare, None)]);
        assert_eq!(
            locks("select 1 from t for no /* c */ key\n update of t skip locked"),
            [(NoKeyUpdate, Some("t".into()))]
        );
        assert_eq!(
            locks("SELECT 1 FROM t FOR KEY SHARE OF \"T\" NOWAIT"),
            [(KeyShare, Some("\"T\"".into()))]
        );
        // A quoted "key" is an identifier, not the keyword.
        assert!(parse("SELECT 1 FROM t FOR \"key\" SHARE").is_err());
        // Errors after the clause point into the text as written.
        let e = parse("SELECT 1 FROM t FOR KEY SHARE OF t WHERE").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"WHERE\"");
        assert_eq!(e.position, Some(36));
        let e = parse("SELECT 1 FROM t FOR NO KEY SHARE").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"SHARE\"");
        assert_eq!(e.position, Some(28));
        let e = parse("SELECT 1 FROM t FOR KEY").unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
        // FOR before KEY elsewhere is left alone.
        assert!(parse("SELECT substring('abc' FROM 1 FOR key) FROM (SELECT 2 AS key) s").is_ok());
    }

    fn overridings(sql: &str) -> Vec<Option<Overriding>> {
        parse(sql)
            .expect("parses")
            .iter()
            .map(|c| match c {
                Command::Sql(Statement::Insert(i)) => insert_overriding(i).expect("marked"),
                other => panic!("not an INSERT: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn overriding_marks_its_own_insert() {
        use Overriding::*;
        assert_eq!(
            overridings(
                "INSERT INTO t VALUES (1); insert into s.t (a) overriding user value select 1;\
                 INSERT INTO t AS x OVERRIDING SYSTEM VALUE VALUES (2)"
            ),
            [None, Some(User), Some(System)]
        );
        assert_eq!(
            overridings("INSERT INTO \"T\" OVERRIDING SYSTEM VALUE SELECT 1"),
            [Some(System)]
        );
        // As in PostgreSQL's grammar, DEFAULT VALUES takes no OVERRIDING.
        let e = parse("INSERT INTO t OVERRIDING SYSTEM VALUE DEFAULT VALUES").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"DEFAULT\"");
        assert_eq!(e.position, Some(39));
        // Outside an INSERT the words are left alone, and errors after the clause point
        // into the text as written.
        assert!(parse("SELECT 1 overriding system value").is_err());
        let e = parse("INSERT INTO t OVERRIDING SYSTEM VALUE VALUES (1) WHERE").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"WHERE\"");
        assert_eq!(e.position, Some(50));
        // Hive's PARTITION, which the mark borrows, is not PostgreSQL's.
        let [Command::Sql(Statement::Insert(i))] =
            &parse("INSERT INTO t (a) PARTITION ('x') VALUES (1)").expect("parses")[..]
        else {
            panic!()
        };
        assert!(insert_overriding(i).is_err());
    }

    #[test]
    fn identity_options_in_any_order() {
        let [Command::Sql(Statement::CreateTable(c))] = &parse(
            "CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY (START 3 NO CYCLE INCREMENT BY -1 \
             NO MINVALUE CACHE 2 MAXVALUE 9))",
        )
        .expect("parses")[..] else {
            panic!()
        };
        let text = c.to_string();
        assert!(
            text.contains("( INCREMENT BY -1 NO MINVALUE MAXVALUE 9 START 3 CACHE 2 NO CYCLE )"),
            "{text}"
        );
        // An option sqlparser lacks (SEQUENCE NAME) stays a syntax error.
        let e =
            parse("CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY (CACHE 2 SEQUENCE NAME s))")
                .unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"SEQUENCE\"");
    }

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
    fn copy_takes_postgres_booleans() {
        for sql in [
            "copy t from stdin with (freeze on)",
            "COPY t FROM STDIN (FORMAT csv, HEADER 1, FREEZE off)",
        ] {
            let stmts = parse(sql).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
            assert!(
                matches!(stmts[0], Command::Sql(Statement::Copy { .. })),
                "{sql}"
            );
        }
        // Statements after COPY FROM STDIN are statements, not data.
        let stmts = parse("select 1; copy t from stdin;\n select 2; select 3").unwrap();
        assert_eq!(stmts.len(), 4);
        assert!(matches!(stmts[1], Command::Sql(Statement::Copy { .. })));
        let e = parse("copy t from stdin; selec 2").unwrap_err();
        assert_eq!(e.position, Some(20));
        let e = parse("copy t from stdin with (freeze maybe)").unwrap_err();
        assert_eq!(e.code, common::SqlState::SYNTAX_ERROR);
    }

    fn vacuum(sql: &str) -> Vacuum {
        match parse(sql)
            .unwrap_or_else(|e| panic!("{sql}: {}", e.message))
            .pop()
        {
            Some(Command::Vacuum(v)) => v,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn vacuum_and_analyze_in_postgres_grammar() {
        let v = vacuum("vacuum analyze pgbench_branches");
        assert!(v.vacuum && v.analyze && !v.full);
        assert_eq!(v.tables.len(), 1);
        assert_eq!(v.tables[0].0.to_string(), "pgbench_branches");
        let v = vacuum("VACUUM FULL FREEZE VERBOSE ANALYSE a, b (x, y)");
        assert!(v.full && v.freeze && v.verbose && v.analyze);
        assert_eq!(v.tables[1].1.len(), 2);
        let v = vacuum("vacuum (analyze off, skip_locked, index_cleanup auto, parallel 2) t");
        assert!(v.vacuum && !v.analyze && v.skip_locked && v.invalid.is_none());
        let v = vacuum("analyze verbose t(a)");
        assert!(!v.vacuum && v.analyze && v.verbose);
        assert_eq!(vacuum("VACUUM").tables.len(), 0);
        let v = vacuum("vacuum (foo) vt");
        assert_eq!(
            v.invalid,
            Some(("unrecognized VACUUM option \"foo\"".into(), Some(9)))
        );
        let v = vacuum("analyze (freeze) t");
        assert_eq!(
            v.invalid.unwrap().0,
            "unrecognized ANALYZE option \"freeze\""
        );
        let v = vacuum("vacuum (full maybe) t");
        assert_eq!(v.invalid.unwrap().0, "full requires a Boolean value");
        // Several statements, and the rest of the grammar is sqlparser's.
        let cmds = parse("vacuum t; select 1; analyze").unwrap();
        assert_eq!(cmds.len(), 3);
        assert!(cmds[1].sql().is_some());
        let e = parse("vacuum analyze t u").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"u\"");
        assert_eq!(e.position, Some(18));
        assert_eq!(
            vacuum("VACUUM (ANALYZE) t (a)").to_string(),
            "VACUUM (ANALYZE) t (a)"
        );
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(location_to_position("ab\ncd", 2, 1), Some(4));
        assert_eq!(location_to_position("é x", 1, 3), Some(3));
    }
}
