//! COPY's text and CSV formats, and COPY FROM's row loading.
//!
//! Input arrives in pieces (one CopyData message may hold part of a line, or many
//! lines): [`CopyReader`] keeps the unfinished tail and cuts complete records. A text
//! record ends at a newline; a CSV record at a newline outside quotes. A record that is
//! exactly `\.` ends the data (what `psql` and pgbench send last), as in PostgreSQL.
//!
//! Text format, as PostgreSQL's: fields split at the delimiter; a backslash escapes
//! (`\b \f \n \r \t \v`, octal `\NNN`, hex `\xHH`, anything else stands for itself, so
//! `\\` is a backslash and `\<delimiter>` a literal delimiter); a field whose raw text
//! is the NULL string (`\N`) is NULL. CSV: fields split at the delimiter outside quotes;
//! inside quotes the escape character (the quote by default) before a quote or escape
//! character makes it literal; an unquoted field equal to the NULL string (empty by
//! default) is NULL, a quoted one never is.
//!
//! Errors are PostgreSQL's 22P04 with its messages, and every error names the record's
//! line (and the column, for a value the type rejects) in its CONTEXT, as PostgreSQL does:
//! `COPY t, line 3, column a: "x"`.

use common::{PgError, PgResult, SqlState, Value};
use sql::bound::{BoundCopyFrom, CopyFormat};

use crate::ExecContext;

/// Rows loaded between checks for statement_timeout.
const COPY_INTERRUPT_ROWS: u64 = 1024;

/// Cuts COPY input into records and fields.
#[derive(Debug)]
pub struct CopyReader {
    format: CopyFormat,
    /// Bytes received after the last complete record.
    pending: Vec<u8>,
    /// Records read so far (PostgreSQL's line number of the current one).
    line: u64,
    /// `\.` was seen: later input is ignored.
    ended: bool,
}

/// One record: its fields (`None` is NULL), and the raw line for error contexts.
#[derive(Debug)]
pub struct Record {
    pub fields: Vec<Option<String>>,
    pub line: u64,
    pub raw: Vec<u8>,
}

/// An error context naming a line and its text (`COPY t, line 2: "7"`).
fn line_text_context(table: &str, line: u64, raw: &[u8]) -> String {
    format!(
        "COPY {table}, line {line}: \"{}\"",
        String::from_utf8_lossy(raw)
    )
}

fn bad_format(message: impl Into<String>) -> PgError {
    PgError::new(SqlState::BAD_COPY_FILE_FORMAT, message)
}

fn utf8(bytes: Vec<u8>) -> PgResult<String> {
    String::from_utf8(bytes).map_err(|e| PgError::invalid_utf8(e.as_bytes(), e.utf8_error()))
}

impl CopyReader {
    pub fn new(format: CopyFormat) -> CopyReader {
        CopyReader {
            format,
            pending: Vec::new(),
            line: 0,
            ended: false,
        }
    }

    /// The line number of the last record returned.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Add `data` and return the records it completes.
    pub fn feed(&mut self, data: &[u8], out: &mut Vec<Record>) -> PgResult<()> {
        if self.ended {
            return Ok(());
        }
        self.pending.extend_from_slice(data);
        let mut start = 0;
        while let Ok(end) = self.scan(start) {
            let mut rec = &self.pending[start..end];
            if rec.last() == Some(&b'\r') {
                rec = &rec[..rec.len() - 1];
            }
            let rec = rec.to_vec();
            start = end + 1;
            if self.take_record(rec, out)? {
                break;
            }
        }
        self.pending.drain(..start);
        Ok(())
    }

    /// The end of input: a last record without a newline counts.
    pub fn finish(&mut self, out: &mut Vec<Record>) -> PgResult<()> {
        if self.ended || self.pending.is_empty() {
            return Ok(());
        }
        if self.scan(0) == Err(true) {
            self.line += 1;
            return Err(bad_format("unterminated CSV quoted field"));
        }
        let rec = std::mem::take(&mut self.pending);
        self.take_record(rec, out)?;
        Ok(())
    }

    /// Scan from `start` for the newline that ends a record (outside quotes, in CSV):
    /// its offset, or, when the input ends first, whether it ended inside quotes.
    fn scan(&self, start: usize) -> Result<usize, bool> {
        let buf = &self.pending[start..];
        if !self.format.csv {
            return buf
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| start + i)
                .ok_or(false);
        }
        let (q, e) = (self.format.quote, self.format.escape);
        let mut quoted = false;
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            if quoted {
                if b == e && e != q && i + 1 < buf.len() && (buf[i + 1] == q || buf[i + 1] == e) {
                    i += 2;
                    continue;
                }
                if b == q {
                    quoted = false;
                }
            } else if b == q {
                quoted = true;
            } else if b == b'\n' {
                return Ok(start + i);
            }
            i += 1;
        }
        Err(quoted)
    }

    /// Handle one record; true when it was the end marker.
    fn take_record(&mut self, rec: Vec<u8>, out: &mut Vec<Record>) -> PgResult<bool> {
        self.line += 1;
        if rec == b"\\." {
            self.ended = true;
            return Ok(true);
        }
        if self.line == 1 && self.format.header {
            return Ok(false);
        }
        let fields = if self.format.csv {
            self.csv_fields(&rec)?
        } else {
            self.text_fields(&rec)?
        };
        out.push(Record {
            fields,
            line: self.line,
            raw: rec,
        });
        Ok(false)
    }

    fn text_fields(&self, rec: &[u8]) -> PgResult<Vec<Option<String>>> {
        if rec.contains(&b'\r') {
            return Err(bad_format("literal carriage return found in data")
                .with_hint("Use \"\\r\" to represent carriage return."));
        }
        let delim = self.format.delimiter;
        let mut fields = Vec::new();
        let mut i = 0;
        loop {
            let raw_start = i;
            let mut value = Vec::new();
            while i < rec.len() && rec[i] != delim {
                let b = rec[i];
                i += 1;
                if b != b'\\' || i >= rec.len() {
                    value.push(b);
                    continue;
                }
                let c = rec[i];
                i += 1;
                match c {
                    b'b' => value.push(8),
                    b'f' => value.push(12),
                    b'n' => value.push(b'\n'),
                    b'r' => value.push(b'\r'),
                    b't' => value.push(b'\t'),
                    b'v' => value.push(11),
                    b'0'..=b'7' => {
                        let mut v = (c - b'0') as u32;
                        for _ in 0..2 {
                            match rec.get(i) {
                                Some(d @ b'0'..=b'7') => {
                                    v = v * 8 + (d - b'0') as u32;
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        value.push((v & 0xff) as u8);
                    }
                    b'x' if rec.get(i).is_some_and(|d| d.is_ascii_hexdigit()) => {
                        let mut v = 0u32;
                        for _ in 0..2 {
                            match rec.get(i) {
                                Some(d) if d.is_ascii_hexdigit() => {
                                    v = v * 16 + (*d as char).to_digit(16).unwrap_or(0);
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        value.push(v as u8);
                    }
                    other => value.push(other),
                }
            }
            let raw = &rec[raw_start..i];
            fields.push(if raw == self.format.null.as_bytes() {
                None
            } else {
                Some(utf8(value)?)
            });
            if i >= rec.len() {
                break;
            }
            i += 1; // the delimiter
        }
        Ok(fields)
    }

    fn csv_fields(&self, rec: &[u8]) -> PgResult<Vec<Option<String>>> {
        let CopyFormat {
            delimiter: delim,
            quote: q,
            escape: e,
            ..
        } = self.format;
        let mut fields = Vec::new();
        let mut i = 0;
        loop {
            let mut value = Vec::new();
            let mut quoted_any = false;
            let raw_start = i;
            while i < rec.len() && rec[i] != delim {
                if rec[i] != q {
                    value.push(rec[i]);
                    i += 1;
                    continue;
                }
                // A quoted part, up to its closing quote.
                quoted_any = true;
                i += 1;
                loop {
                    let Some(&b) = rec.get(i) else {
                        return Err(bad_format("unterminated CSV quoted field"));
                    };
                    if b == e && rec.get(i + 1).is_some_and(|n| *n == q || *n == e) {
                        value.push(rec[i + 1]);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    if b == q {
                        break;
                    }
                    value.push(b);
                }
            }
            let raw = &rec[raw_start..i];
            fields.push(if !quoted_any && raw == self.format.null.as_bytes() {
                None
            } else {
                Some(utf8(value)?)
            });
            if i >= rec.len() {
                break;
            }
            i += 1;
        }
        Ok(fields)
    }
}

/// One value as COPY TO writes it.
fn put_field(format: &CopyFormat, v: Option<&str>, out: &mut Vec<u8>) {
    let Some(s) = v else {
        out.extend_from_slice(format.null.as_bytes());
        return;
    };
    if format.csv {
        let (q, e, d) = (format.quote, format.escape, format.delimiter);
        let needs_quotes = s.is_empty() && format.null.is_empty()
            || s == format.null
            || s == "\\."
            || s.bytes()
                .any(|b| b == d || b == q || b == b'\n' || b == b'\r');
        if !needs_quotes {
            out.extend_from_slice(s.as_bytes());
            return;
        }
        out.push(q);
        for b in s.bytes() {
            if b == q || b == e {
                out.push(e);
            }
            out.push(b);
        }
        out.push(q);
        return;
    }
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            11 => out.extend_from_slice(b"\\v"),
            b'\t' => out.extend_from_slice(b"\\t"),
            d if d == format.delimiter => {
                out.push(b'\\');
                out.push(d);
            }
            other => out.push(other),
        }
    }
}

/// A line of COPY TO output: the values (or, for the header, the column names).
/// COPY TO's lines for `rows`, their values shown in `text`.
pub fn rows_to_lines(
    format: &CopyFormat,
    rows: &[Vec<common::Value>],
    text: &common::value::TextContext,
) -> Vec<Vec<u8>> {
    rows.iter()
        .map(|r| {
            let texts: Vec<Option<String>> = r.iter().map(|v| v.to_text(text)).collect();
            let fields: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
            format_line(format, &fields)
        })
        .collect()
}

pub fn format_line(format: &CopyFormat, values: &[Option<&str>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(format.delimiter);
        }
        put_field(format, *v, &mut out);
    }
    out.push(b'\n');
    out
}

/// COPY FROM STDIN in progress: records become rows, inserted a batch at a time.
#[derive(Debug)]
pub struct CopyIn {
    types: Vec<common::DataType>,
    from: BoundCopyFrom,
    reader: CopyReader,
    records: Vec<Record>,
    rows: u64,
    /// Into a partitioned table: the leaves its rows went to.
    router: Option<crate::route::Router>,
}

impl CopyIn {
    pub fn new(from: BoundCopyFrom) -> CopyIn {
        CopyIn {
            types: from.table.column_types(),
            reader: CopyReader::new(from.format.clone()),
            router: from
                .table
                .partition_key
                .is_some()
                .then(|| crate::route::Router::new(from.table.clone())),
            from,
            records: Vec::new(),
            rows: 0,
        }
    }

    pub fn table(&self) -> &catalog::TableDesc {
        &self.from.table
    }

    /// The number of columns the data has (for CopyInResponse).
    pub fn columns(&self) -> usize {
        self.from.targets.len()
    }

    pub fn freeze(&self) -> bool {
        self.from.freeze
    }

    /// The context of an error that stops the COPY between records (CopyFail): the
    /// line it was about to read.
    pub fn next_line_context(&self) -> String {
        self.context(self.reader.line() + 1)
    }

    fn context(&self, line: u64) -> String {
        format!("COPY {}, line {line}", self.from.table.name)
    }

    /// Take a CopyData message's bytes.
    pub fn feed(&mut self, cx: &ExecContext, data: &[u8]) -> PgResult<()> {
        let mut records = std::mem::take(&mut self.records);
        let r = self.reader.feed(data, &mut records);
        let line = self.reader.line();
        r.map_err(|e| e.with_context(self.context(line)))?;
        for rec in records.drain(..) {
            self.load(cx, rec)?;
        }
        self.records = records;
        Ok(())
    }

    /// CopyDone: the last record goes in; the number of rows loaded.
    pub fn finish(mut self, cx: &ExecContext) -> PgResult<u64> {
        let mut records = Vec::new();
        let raw = self.reader.pending.clone();
        let r = self.reader.finish(&mut records);
        let line = self.reader.line();
        r.map_err(|e| e.with_context(line_text_context(&self.from.table.name, line, &raw)))?;
        for rec in records {
            self.load(cx, rec)?;
        }
        Ok(self.rows)
    }

    /// Insert one record's row into the leaf partition it belongs in.
    fn load_routed(&mut self, cx: &ExecContext, rec: Record, row: Vec<Value>) -> PgResult<()> {
        let name = &self.from.table.name;
        let router = self.router.as_mut().expect("made for a partitioned table");
        let leaf = router
            .leaf(cx, &row)
            .map_err(|e| e.with_context(line_text_context(name, rec.line, &rec.raw)))?;
        crate::dml::check_row(cx, &leaf.table, &leaf.checks, &row)
            .map_err(|e| e.with_context(line_text_context(name, rec.line, &rec.raw)))?;
        crate::dml::insert_checked_row(cx, &leaf.table, &leaf.types, &row, &leaf.index_exprs)
            .map_err(|e| e.with_context(format!("COPY {name}, line {}", rec.line)))?;
        // PostgreSQL checks foreign keys after the rows (its triggers): no line.
        leaf.check_keys(cx, &self.from.fks, &[&row])?;
        self.rows += 1;
        if self.rows.is_multiple_of(COPY_INTERRUPT_ROWS) {
            cx.tx.check_for_interrupts()?;
        }
        Ok(())
    }

    /// Insert one record's row. Errors name its line: with the line's text while the
    /// record is read and checked, without it once the row is going in (a unique
    /// violation), as PostgreSQL words them.
    fn load(&mut self, cx: &ExecContext, rec: Record) -> PgResult<()> {
        let table = &self.from.table;
        let row = self.row(cx, &rec)?;
        if table.partition_key.is_some() {
            return self.load_routed(cx, rec, row);
        }
        crate::dml::check_row(cx, table, &self.from.checks, &row)
            .and_then(|()| match table.partition_of {
                Some(_) => crate::dml::check_partition_constraint(cx, table, &row),
                None => Ok(()),
            })
            .map_err(|e| e.with_context(line_text_context(&table.name, rec.line, &rec.raw)))?;
        crate::dml::insert_checked_row(cx, table, &self.types, &row, &self.from.index_exprs)
            .map_err(|e| e.with_context(self.context(rec.line)))?;
        // PostgreSQL checks foreign keys after the rows (its triggers): no line.
        if !self.from.fks.outgoing.is_empty() {
            crate::fkey::check_outgoing(cx, table, &self.from.fks, &[&row])?;
        }
        self.rows += 1;
        if self.rows.is_multiple_of(COPY_INTERRUPT_ROWS) {
            cx.tx.check_for_interrupts()?;
        }
        Ok(())
    }

    /// A table row from a record: each field read by its column's input function, the
    /// other columns their defaults.
    fn row(&self, cx: &ExecContext, rec: &Record) -> PgResult<Vec<Value>> {
        let table = &self.from.table;
        let targets = &self.from.targets;
        let line_context = || line_text_context(&table.name, rec.line, &rec.raw);
        if rec.fields.len() > targets.len() {
            return Err(
                bad_format("extra data after last expected column").with_context(line_context())
            );
        }
        if rec.fields.len() < targets.len() {
            let missing = &table.columns[targets[rec.fields.len()]].name;
            return Err(bad_format(format!("missing data for column \"{missing}\""))
                .with_context(line_context()));
        }
        let mut row = self
            .from
            .defaults
            .iter()
            .map(|e| crate::eval::eval(e, &[], cx.session))
            .collect::<PgResult<Vec<_>>>()?;
        for (field, &t) in rec.fields.iter().zip(targets) {
            let col = &table.columns[t];
            row[t] = match field {
                None => Value::Null,
                Some(text) => Value::parse(text, &col.ty, cx.session.text()).map_err(|e| {
                    e.with_context(format!(
                        "COPY {}, line {}, column {}: \"{}\"",
                        table.name, rec.line, col.name, text
                    ))
                })?,
            };
        }
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(format: CopyFormat, chunks: &[&[u8]]) -> PgResult<Vec<Vec<Option<String>>>> {
        let mut r = CopyReader::new(format);
        let mut out = Vec::new();
        for c in chunks {
            r.feed(c, &mut out)?;
        }
        r.finish(&mut out)?;
        Ok(out.into_iter().map(|r| r.fields).collect())
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn text_records_split_across_messages() {
        let rows = read(
            CopyFormat::text(),
            &[
                b"1\ta b\t\\N\n2\t",
                b"x\\ty\\\\z\t\\101\\x41\n",
                b"3\t\t\n\\.\n",
                b"ignored\n",
            ],
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                vec![s("1"), s("a b"), None],
                vec![s("2"), s("x\ty\\z"), s("AA")],
                vec![s("3"), s(""), s("")],
            ]
        );
    }

    #[test]
    fn last_line_without_newline_and_crlf() {
        let rows = read(CopyFormat::text(), &[b"1\r\n2"]).unwrap();
        assert_eq!(rows, vec![vec![s("1")], vec![s("2")]]);
    }

    #[test]
    fn csv_quotes_nulls_and_embedded_newlines() {
        let mut f = CopyFormat::csv();
        f.header = true;
        let rows = read(f, &[b"a,b,c\n1,,\"\"\n2,\"x,\"\"y\"\"\nz\",\"q\"\n"]).unwrap();
        assert_eq!(
            rows,
            vec![
                vec![s("1"), None, s("")],
                vec![s("2"), s("x,\"y\"\nz"), s("q")],
            ]
        );
        let e = read(CopyFormat::csv(), &[b"1,\"open\n"]).unwrap_err();
        assert_eq!(e.code, SqlState::BAD_COPY_FILE_FORMAT);
        assert_eq!(e.message, "unterminated CSV quoted field");
    }

    #[test]
    fn output_escapes_as_postgres() {
        let t = CopyFormat::text();
        assert_eq!(
            format_line(&t, &[Some("a\tb\\c\nd"), None, Some("")]),
            b"a\\tb\\\\c\\nd\t\\N\t\n".to_vec()
        );
        let c = CopyFormat::csv();
        assert_eq!(
            format_line(
                &c,
                &[
                    Some("a,b"),
                    None,
                    Some(""),
                    Some("say \"hi\""),
                    Some("plain")
                ]
            ),
            b"\"a,b\",,\"\",\"say \"\"hi\"\"\",plain\n".to_vec()
        );
    }
}
