//! Parsed statements kept by their text's shape (sql rule 1).
//!
//! A query string's literals are masked (`UPDATE t SET a = a + 12 WHERE id = 3` and
//! `... + 7 WHERE id = 99999` differ only there); a string whose masked text was parsed
//! before gets that parse with its own literal values put in the place of the first
//! string's. Masking keeps each character's line and column (a masked character stays one
//! character, a newline stays a newline), so the parse's spans are the string's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::PgResult;
use common::hash::FxBuild;
use sqlparser::ast::{Value, ValueWithSpan, VisitMut, VisitorMut};
use sqlparser::tokenizer::{Location, Span};

use crate::parser::{self, Command};

/// Query strings longer than this are parsed each time (a cache of large statements
/// would hold large trees).
const MAX_TEXT: usize = 1024;

/// What a masked number's digits and a masked string's characters become in the key.
/// A query string holding either byte is not cached, so a key cannot be mistaken for a
/// string's own text.
const NUMBER_MASK: char = '\u{1}';
const STRING_MASK: char = '\u{2}';

/// A statement parse cache shared by every session: parsing reads nothing but the text,
/// so an entry never goes stale.
pub struct ParseCache {
    entries: Mutex<HashMap<Box<str>, Option<Arc<Template>>, FxBuild>>,
    capacity: usize,
}

/// A parse, with the span of each literal of the string it was made from.
struct Template {
    commands: Vec<Command>,
    spans: Vec<Span>,
}

/// A literal found in a query string: where it is and the value the parser gives it.
#[derive(Debug)]
struct Literal {
    span: Span,
    value: LiteralValue,
}

#[derive(Debug, PartialEq)]
enum LiteralValue {
    /// An unsigned number, as written: `Value::Number`.
    Number(String),
    /// A plain `'...'` string, its doubled quotes undone: `Value::SingleQuotedString`.
    String(String),
}

impl ParseCache {
    /// A cache of at most `capacity` query string shapes.
    pub fn new(capacity: usize) -> ParseCache {
        ParseCache {
            entries: Mutex::new(HashMap::default()),
            capacity,
        }
    }

    /// [`parser::parse`], from the cache where a string of the same shape was parsed.
    pub fn parse(&self, sql: &str) -> PgResult<Vec<Command>> {
        let Some((key, literals)) = mask(sql) else {
            return parser::parse(sql);
        };
        let found = self.lock().get(key.as_str()).cloned();
        match found {
            Some(Some(t)) => {
                let commands = t.instantiate(&literals);
                debug_assert_eq!(
                    Ok(&commands),
                    parser::parse(sql).as_ref(),
                    "parse cache differs from the parser on {sql:?}"
                );
                Ok(commands)
            }
            Some(None) => parser::parse(sql),
            None => {
                let commands = parser::parse(sql)?;
                let template = Template::new(&commands, &literals).map(Arc::new);
                let mut entries = self.lock();
                if entries.len() >= self.capacity {
                    // Any one goes: shapes that recur come back at their next parse.
                    if let Some(k) = entries.keys().next().cloned() {
                        entries.remove(&k);
                    }
                }
                entries.insert(key.into_boxed_str(), template);
                Ok(commands)
            }
        }
    }

    /// How many shapes it holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Option<Arc<Template>>, FxBuild>> {
        // The map is left whole by every panic that can happen under the lock.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Template {
    /// The template `commands` make, if each of `literals` is a value of theirs at its
    /// place in the string, of its kind and value, and nothing of the string's was read
    /// into something other than a value (`FETCH 5`'s count, `varchar(10)`'s length).
    fn new(commands: &[Command], literals: &[Literal]) -> Option<Template> {
        let mut commands = commands.to_vec();
        let spans: Vec<Span> = literals.iter().map(|l| l.span).collect();
        let mut found = vec![false; literals.len()];
        for c in &mut commands {
            let Command::Sql(stmt) = c else {
                if literals.is_empty() {
                    continue;
                }
                return None;
            };
            let mut check = Values {
                spans: &spans,
                each: |k: usize, v: &mut Value| {
                    found[k] |= match (v, &literals[k].value) {
                        (Value::Number(n, false), LiteralValue::Number(m)) => n == m,
                        (Value::SingleQuotedString(s), LiteralValue::String(m)) => s == m,
                        _ => return false,
                    };
                    true
                },
                ok: true,
            };
            let _ = stmt.visit(&mut check);
            if !check.ok {
                return None;
            }
        }
        found
            .iter()
            .all(|&f| f)
            .then_some(Template { commands, spans })
    }

    /// The parse of a string of this shape holding `literals`.
    fn instantiate(&self, literals: &[Literal]) -> Vec<Command> {
        let mut commands = self.commands.clone();
        if literals.is_empty() {
            return commands;
        }
        for c in &mut commands {
            if let Command::Sql(stmt) = c {
                let mut set = Values {
                    spans: &self.spans,
                    each: |k: usize, v: &mut Value| {
                        match (v, &literals[k].value) {
                            (Value::Number(n, _), LiteralValue::Number(m)) => m.clone_into(n),
                            (Value::SingleQuotedString(s), LiteralValue::String(m)) => {
                                m.clone_into(s)
                            }
                            _ => {}
                        }
                        true
                    },
                    ok: true,
                };
                let _ = stmt.visit(&mut set);
            }
        }
        commands
    }
}

/// A visitor calling `each(k, value)` for each value at the span of literal `k`; `ok`
/// turns false where `each` refuses one.
struct Values<'s, F> {
    spans: &'s [Span],
    each: F,
    ok: bool,
}

impl<F: FnMut(usize, &mut Value) -> bool> VisitorMut for Values<'_, F> {
    type Break = ();

    fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> std::ops::ControlFlow<()> {
        let at = |s: &Span| (s.start.line, s.start.column);
        if let Ok(k) = self.spans.binary_search_by_key(&at(&v.span), at)
            && self.spans[k] == v.span
            && !(self.each)(k, &mut v.value)
        {
            self.ok = false;
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// The string's key (its text, each literal's characters masked) and its literals;
/// `None` for a string not to cache.
fn mask(sql: &str) -> Option<(String, Vec<Literal>)> {
    if sql.len() > MAX_TEXT || sql.contains([NUMBER_MASK, STRING_MASK]) {
        return None;
    }
    // `parser::parse` takes another path for strings holding these words, anywhere.
    let has = |word: &[u8]| {
        sql.as_bytes()
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word))
    };
    if has(b"only") || has(b"partition") || has(b"stdin") {
        return None;
    }
    let b = sql.as_bytes();
    let mut key = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    let mut at = Cursor::default();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    while at.i < b.len() {
        let start = at.i;
        let c = b[start];
        match c {
            b'\'' => {
                // A prefixed string (E'...', B'...', U&'...') is another kind of token.
                if start > 0 && (ident(b[start - 1]) || b[start - 1] == b'&') {
                    return None;
                }
                let j = closing_quote(b, start)?;
                let content = &sql[start + 1..j];
                if content.contains('\\') {
                    at.copy(sql, j + 1, &mut key);
                    continue;
                }
                let from = at.location();
                key.push('\'');
                at.advance(b, start + 1);
                for ch in content.chars() {
                    key.push(if ch == '\n' { '\n' } else { STRING_MASK });
                }
                at.advance(b, j + 1);
                key.push('\'');
                literals.push(Literal {
                    span: Span::new(from, at.location()),
                    value: LiteralValue::String(content.replace("''", "'")),
                });
            }
            b'0'..=b'9' => {
                let mut j = start;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                let after = b.get(j).copied();
                let before = start.checked_sub(1).map(|p| b[p]);
                let plain = !after.is_some_and(|a| ident(a) || a == b'.')
                    && !before.is_some_and(|p| ident(p) || p == b'.');
                if !plain {
                    at.copy(sql, j, &mut key);
                    continue;
                }
                let from = at.location();
                key.extend(
                    sql[start..j]
                        .chars()
                        .map(|d| if d == '.' { '.' } else { NUMBER_MASK }),
                );
                at.advance(b, j);
                literals.push(Literal {
                    span: Span::new(from, at.location()),
                    value: LiteralValue::Number(sql[start..j].to_owned()),
                });
            }
            b'"' => {
                let j = closing_quote(b, start)?;
                at.copy(sql, j + 1, &mut key);
            }
            b'-' if b.get(start + 1) == Some(&b'-') => {
                let end = sql[start..].find('\n').map_or(b.len(), |e| start + e);
                at.copy(sql, end, &mut key);
            }
            b'/' if b.get(start + 1) == Some(&b'*') => {
                let (mut j, mut depth) = (start + 2, 1);
                while depth > 0 {
                    match (b.get(j), b.get(j + 1)) {
                        (None, _) => return None,
                        (Some(b'/'), Some(b'*')) => (depth, j) = (depth + 1, j + 2),
                        (Some(b'*'), Some(b'/')) => (depth, j) = (depth - 1, j + 2),
                        _ => j += 1,
                    }
                }
                at.copy(sql, j, &mut key);
            }
            b'$' => {
                // `$1`; a dollar-quoted string (`$$...$$`, `$tag$...$tag$`) is not cached.
                if !b.get(start + 1).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                let mut j = start + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                at.copy(sql, j, &mut key);
            }
            c if ident(c) => {
                let mut j = start;
                while j < b.len() && ident(b[j]) {
                    j += 1;
                }
                at.copy(sql, j, &mut key);
            }
            _ => {
                let end = start + sql[start..].chars().next().map_or(1, char::len_utf8);
                at.copy(sql, end, &mut key);
            }
        }
    }
    Some((key, literals))
}

/// Where the quoted string or name opening at `b[start]` closes (its quote doubled
/// inside it); `None` if it does not.
fn closing_quote(b: &[u8], start: usize) -> Option<usize> {
    let q = b[start];
    let mut j = start + 1;
    loop {
        match *b.get(j)? {
            c if c == q && b.get(j + 1) == Some(&q) => j += 2,
            c if c == q => return Some(j),
            _ => j += 1,
        }
    }
}

/// A place in the string: its byte offset, and its line and column as sqlparser counts
/// them (from 1; a column per character).
struct Cursor {
    i: usize,
    line: u64,
    column: u64,
}

impl Default for Cursor {
    fn default() -> Cursor {
        Cursor {
            i: 0,
            line: 1,
            column: 1,
        }
    }
}

impl Cursor {
    fn location(&self) -> Location {
        Location::new(self.line, self.column)
    }

    /// Move to byte `to`.
    fn advance(&mut self, b: &[u8], to: usize) {
        for &c in &b[self.i..to] {
            if c == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if c & 0xC0 != 0x80 {
                self.column += 1;
            }
        }
        self.i = to;
    }

    /// Copy the string to byte `to` into the key as it is.
    fn copy(&mut self, sql: &str, to: usize, key: &mut String) {
        key.push_str(&sql[self.i..to]);
        self.advance(sql.as_bytes(), to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each string, parsed through a cache already holding the first's shape, parses as
    /// the parser parses it.
    fn same_as_parser(strings: &[&str]) {
        let cache = ParseCache::new(16);
        for s in strings {
            assert_eq!(cache.parse(s).ok(), parser::parse(s).ok(), "{s}");
        }
    }

    fn cached(cache: &ParseCache, s: &str) -> bool {
        let (key, _) = mask(s).expect("maskable");
        cache.lock().get(key.as_str()).is_some_and(|t| t.is_some())
    }

    #[test]
    fn literals_are_replaced_in_place() {
        same_as_parser(&[
            "UPDATE pgbench_accounts SET abalance = abalance + -4040 WHERE aid = 334",
            "UPDATE pgbench_accounts SET abalance = abalance + 12 WHERE aid = 9999999",
            "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 7",
        ]);
        same_as_parser(&[
            "SELECT 'it''s', 1.5, x FROM t WHERE y = 'abc' ORDER BY 1 LIMIT 10",
            "SELECT 'a''b''', 2.7, x FROM t WHERE y = 'héé' ORDER BY 2 LIMIT 99",
            "SELECT 'none', 9.9, x FROM t WHERE y = '' ORDER BY 3 LIMIT 0",
        ]);
        same_as_parser(&[
            "INSERT INTO h (a, b)\n VALUES (1, 'x\ny'), (2, 'é');",
            "INSERT INTO h (a, b)\n VALUES (7, 'p\nq'), (8, 'ü');",
        ]);
        same_as_parser(&["BEGIN", "BEGIN", "END;", "END;"]);
        let cache = ParseCache::new(16);
        for s in [
            "UPDATE pgbench_accounts SET abalance = abalance + -4040 WHERE aid = 334;",
            "SELECT abalance FROM pgbench_accounts WHERE aid = 334;",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
             VALUES (5, 1, 334, -4040, CURRENT_TIMESTAMP);",
            "SELECT 'it''s', 1.5, x FROM t WHERE y = 'abc' ORDER BY 1 LIMIT 10",
            "END;",
        ] {
            cache.parse(s).expect("parses");
            assert!(cached(&cache, s), "{s}");
        }
    }

    #[test]
    fn a_cached_shape_keeps_positions_of_errors_later() {
        let cache = ParseCache::new(16);
        let a = "SELECT 1 FROM t WHERE a = 'x'";
        cache.parse(a).expect("parses");
        assert!(cached(&cache, a));
        let b = "SELECT 22 FROM t WHERE a = 'yy'";
        let got = cache.parse(b).expect("parses");
        assert_eq!(got, parser::parse(b).expect("parses"));
        assert!(!cached(&cache, "SELECT 22 FROM t WHERE a = 'yyy'"));
    }

    #[test]
    fn literals_read_as_something_else_are_not_cached() {
        let cache = ParseCache::new(16);
        for s in [
            "CREATE TABLE t (a varchar(10))",
            "FETCH 5 FROM c",
            "SELECT E'a\\nb'",
            "SELECT $$x$$",
            "SELECT 'a' 'b'",
        ] {
            let _ = cache.parse(s);
            if let Some((key, _)) = mask(s) {
                let entry = cache.lock().get(key.as_str()).cloned();
                assert!(!matches!(entry, Some(Some(_))), "{s} cached");
            }
        }
        // Numbers next to words or dots are left in the key as they are.
        assert_eq!(mask("SELECT 1e5, t.1, x1, 1.").map(|m| m.1.len()), Some(0));
        assert_eq!(
            mask("SELECT 1 -- 'a\n, /* 'b' /* 2 */ */ \"c'\"").map(|m| m.1.len()),
            Some(1)
        );
    }

    #[test]
    fn capacity_bounds_the_cache() {
        let cache = ParseCache::new(4);
        for n in 0..20 {
            cache.parse(&format!("SELECT a{n} FROM t")).expect("parses");
        }
        assert_eq!(cache.len(), 4);
    }
}
