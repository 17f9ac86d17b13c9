//! Isolation tests: several sessions interleaving steps, with lock waits made visible.
//!
//! A *spec* (`tests/isolation/*.spec`) names sessions, each a list of SQL steps, and
//! permutations: the order in which the steps run. The runner drives one connection per session
//! and prints a transcript, which is compared with `expected/<name>.out` beside the spec. The
//! expected files are produced against PostgreSQL 15 (`scripts/pg-isolation --bless`): PostgreSQL
//! is the oracle, as for the `.slt` files.
//!
//! # Spec format
//!
//! Close to PostgreSQL's isolation tester (`src/test/isolation`), with one of its step
//! annotations, `(*)`:
//!
//! ```text
//! # comment to end of line (outside SQL blocks)
//! setup    { CREATE TABLE t (id int PRIMARY KEY); }   # global; may repeat, run in order
//! teardown { DROP TABLE t; }                          # global; at most one
//! session s1                                          # names: bare word or "quoted"
//! {
//!   setup    { SET lock_timeout = '100ms'; }          # optional, at most one
//!   step s1a { BEGIN; }                               # step names are unique in the spec
//!   step s1b { SELECT * FROM t; }
//!   teardown { ROLLBACK; }                            # optional, at most one
//! }
//! session s2 { step s2a { DROP TABLE t; } }
//! permutation s1a s1b s2a                             # any number; none = every interleaving
//! permutation s1a s2a(*) s1b                          # (*): s2a is expected to wait
//! ```
//!
//! A SQL block runs from `{` to the first `}` outside a quoted string or `--` comment; its text
//! is trimmed and sent as one simple query (it may hold several statements).
//!
//! `(*)` after a step in a permutation marks a step that waits for a lock and then ends on its
//! own: a deadlock victim, a lock timeout. It is printed as `<waiting ...>` even when it has
//! already ended by the time the runner first looks, which on a loaded machine can happen
//! within a short `deadlock_timeout` or `lock_timeout`; without the mark its transcript would
//! depend on timing.
//!
//! # How a permutation runs
//!
//! 1. A fresh *control* connection runs the global setup blocks. It stays open to watch locks.
//! 2. Each session connects, reads its `pg_backend_pid()` and runs its setup.
//! 3. For each step in order: if the step's session still has a step waiting, the runner first
//!    waits for that step to finish (for at most [`STEP_WAIT_LIMIT`]; past it the spec is wrong
//!    and the permutation fails). This is how a step that a deadlock or a `lock_timeout` ends
//!    on its own is written: the next step of the same session waits for it. Then the step is
//!    sent with the **simple query protocol** and polled: it either completes (its results are
//!    printed, unless it is marked `(*)`: then it counts as waiting, see below) or the control
//!    connection sees it waiting for a lock
//!    (`SELECT count(*) FROM pg_locks WHERE pid = <pid> AND NOT granted` is non-zero), and it
//!    is printed as `<waiting ...>`. A step that does neither within [`STEP_WAIT_LIMIT`] fails
//!    the permutation.
//! 4. After every step the waiting steps are *settled*: each one is polled until it has either
//!    completed or is seen still blocked; when one completes, the others are polled again, as
//!    its end may have released them. The steps that completed are then printed, in the order
//!    they were started, so a deadlock (one step fails, the other is granted the lock) prints
//!    the same way whichever message arrives first.
//! 5. At the end every waiting step must finish (within [`STEP_WAIT_LIMIT`]); then session
//!    teardowns run, the sessions disconnect, and the control connection runs the global
//!    teardown.
//!
//! A step counts as completed when its ReadyForQuery has arrived, not its first error: a failed
//! transaction releases its locks between the two, so a step released by that failure is
//! already visible as granted once the failing step counts as completed.
//!
//! # Transcript
//!
//! ```text
//! Parsed test spec with 2 sessions
//!
//! starting permutation: s1a s2a s1c s2b s2c
//! step s1a: UPDATE t SET v = 1 WHERE id = 1;
//! step s2a: UPDATE t SET v = 2 WHERE id = 1; <waiting ...>
//! step s1c: COMMIT;
//! step s2a: <... completed>
//! step s2b: SELECT id, v FROM t;
//! id|v
//! --+-
//! 1 |2
//! (1 row)
//!
//! step s2c: SELECT 1/0;
//! ERROR:  22012: division by zero
//! ```
//!
//! Statements that return no rows print nothing. A result table has the column names, a dashed
//! separator and left-aligned cells (NULL is `<NULL>`, trailing blanks are trimmed). An error
//! prints its SQLSTATE and primary message (as psql's verbose mode does) but never its detail,
//! which holds pids and xids. Notices are not printed. Setup and teardown print only errors.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// How long a step may run without completing or waiting for a lock, and how long a waiting
/// step may keep waiting once the runner needs its session (or the permutation ends). Past it
/// the permutation fails: the spec sends a step to a blocked session, or the server hangs.
pub const STEP_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// First pause between polls of a running step; it doubles up to [`POLL_INTERVAL_MAX`]. Short,
/// so a step that waits for a lock is seen waiting well before a 10 ms `deadlock_timeout` ends
/// the wait.
const POLL_INTERVAL_MIN: Duration = Duration::from_millis(1);
/// Longest pause between polls of a running step.
const POLL_INTERVAL_MAX: Duration = Duration::from_millis(10);

/// How long a cancelled step may take to end before its session is closed anyway.
const CANCEL_WAIT: Duration = Duration::from_secs(1);

/// Most permutations a spec without `permutation` lines may expand to.
pub const MAX_PERMUTATIONS: usize = 1000;

/// How a NULL value is written in a transcript.
pub const NULL_TEXT: &str = "<NULL>";

// ---------------------------------------------------------------------------------------------
// Spec
// ---------------------------------------------------------------------------------------------

/// A parsed spec file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spec {
    /// Global setup blocks, run in order on the control connection before each permutation.
    pub setup: Vec<String>,
    /// Global teardown, run on the control connection after each permutation.
    pub teardown: Option<String>,
    /// Sessions in file order.
    pub sessions: Vec<Session>,
    /// Named permutations; empty means every interleaving.
    pub permutations: Vec<Vec<PermutationStep>>,
}

/// One session of a spec: a connection and the steps it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Session {
    pub name: String,
    pub setup: Option<String>,
    pub steps: Vec<Step>,
    pub teardown: Option<String>,
}

/// One step: a named SQL string, sent as one simple query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub sql: String,
}

/// A step as a `permutation` line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermutationStep {
    pub name: String,
    /// Marked `(*)`: the step waits for a lock and ends on its own (see the module docs).
    pub waits: bool,
}

/// Which step: its session, and its index among that session's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRef {
    pub session: usize,
    pub step: usize,
}

/// A step of a permutation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub at: StepRef,
    /// Print it as waiting even if it ends before it is seen waiting (`(*)`).
    pub waits: bool,
}

/// A syntax or consistency error in a spec, with the 1-based line where it was found (0 when
/// it concerns the whole spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ParseError {}

/// Words that start a top-level item; a bare word equal to one of them ends a permutation.
const KEYWORDS: [&str; 4] = ["setup", "teardown", "session", "permutation"];

/// A name as written: bare words may not be keywords where a keyword could follow.
struct Word {
    text: String,
    quoted: bool,
    line: usize,
}

/// A cursor over the spec text that tracks the line number.
struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Scanner {
            text,
            pos: 0,
            line: 1,
        }
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line: self.line,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        if ch == '\n' {
            self.line += 1;
        }
        Some(ch)
    }

    /// Skips blanks and `#` comments.
    fn skip_blanks(&mut self) {
        while let Some(ch) = self.peek() {
            if ch == '#' {
                while let Some(ch) = self.bump() {
                    if ch == '\n' {
                        break;
                    }
                }
            } else if ch.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    /// The next name: a bare word of letters, digits and `_`, or a `"quoted"` string.
    fn word(&mut self) -> Result<Option<Word>, ParseError> {
        self.skip_blanks();
        let line = self.line;
        match self.peek() {
            Some('"') => {
                self.bump();
                let mut text = String::new();
                loop {
                    match self.bump() {
                        Some('"') => break,
                        Some('\n') | None => {
                            return Err(ParseError {
                                line,
                                message: "unterminated quoted name".to_owned(),
                            });
                        }
                        Some(ch) => text.push(ch),
                    }
                }
                if text.is_empty() {
                    return self.error("empty quoted name");
                }
                Ok(Some(Word {
                    text,
                    quoted: true,
                    line,
                }))
            }
            Some(ch) if ch.is_alphanumeric() || ch == '_' => {
                let mut text = String::new();
                while let Some(ch) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
                    text.push(ch);
                    self.bump();
                }
                Ok(Some(Word {
                    text,
                    quoted: false,
                    line,
                }))
            }
            _ => Ok(None),
        }
    }

    fn name(&mut self, what: &str) -> Result<String, ParseError> {
        match self.word()? {
            Some(word) => Ok(word.text),
            None => self.error(format!("expected {what} name")),
        }
    }

    /// Consumes an optional `(*)` mark after a permutation step.
    fn wait_mark(&mut self) -> Result<bool, ParseError> {
        self.skip_blanks();
        if self.peek() != Some('(') {
            return Ok(false);
        }
        self.bump();
        self.expect('*')?;
        self.expect(')')?;
        Ok(true)
    }

    fn expect(&mut self, want: char) -> Result<(), ParseError> {
        self.skip_blanks();
        match self.peek() {
            Some(ch) if ch == want => {
                self.bump();
                Ok(())
            }
            Some(ch) => self.error(format!("expected '{want}', found '{ch}'")),
            None => self.error(format!("expected '{want}', found end of file")),
        }
    }

    /// A `{ SQL }` block: the trimmed text up to the first `}` outside quotes and comments.
    fn sql_block(&mut self) -> Result<String, ParseError> {
        self.expect('{')?;
        let start_line = self.line;
        let start = self.pos;
        let mut quote: Option<char> = None;
        loop {
            let Some(ch) = self.bump() else {
                return Err(ParseError {
                    line: start_line,
                    message: "unterminated SQL block".to_owned(),
                });
            };
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    '\'' | '"' => quote = Some(ch),
                    '-' if self.peek() == Some('-') => {
                        while let Some(ch) = self.bump() {
                            if ch == '\n' {
                                break;
                            }
                        }
                    }
                    '}' => break,
                    _ => {}
                },
            }
        }
        let sql = self.text[start..self.pos - 1].trim();
        if sql.is_empty() {
            return Err(ParseError {
                line: start_line,
                message: "empty SQL block".to_owned(),
            });
        }
        Ok(sql.to_owned())
    }
}

/// Parses and checks a spec: names unique, permutations naming existing steps.
pub fn parse_spec(text: &str) -> Result<Spec, ParseError> {
    let mut scanner = Scanner::new(text);
    let mut spec = Spec::default();
    // A bare word read ahead by a permutation line, to be handled as the next item.
    let mut pending: Option<Word> = None;
    loop {
        let word = match pending.take() {
            Some(word) => word,
            None => match scanner.word()? {
                Some(word) => word,
                None => match scanner.peek() {
                    None => break,
                    Some(ch) => return scanner.error(format!("unexpected '{ch}'")),
                },
            },
        };
        let keyword = if word.quoted { "" } else { word.text.as_str() };
        match keyword {
            "setup" => spec.setup.push(scanner.sql_block()?),
            "teardown" => {
                if spec.teardown.is_some() {
                    return Err(ParseError {
                        line: word.line,
                        message: "more than one global teardown".to_owned(),
                    });
                }
                spec.teardown = Some(scanner.sql_block()?);
            }
            "session" => spec.sessions.push(parse_session(&mut scanner)?),
            "permutation" => {
                let mut steps = Vec::new();
                while let Some(next) = scanner.word()? {
                    if !next.quoted && KEYWORDS.contains(&next.text.as_str()) {
                        pending = Some(next);
                        break;
                    }
                    let waits = scanner.wait_mark()?;
                    steps.push(PermutationStep {
                        name: next.text,
                        waits,
                    });
                }
                if steps.is_empty() {
                    return Err(ParseError {
                        line: word.line,
                        message: "permutation names no steps".to_owned(),
                    });
                }
                spec.permutations.push(steps);
            }
            _ => {
                return Err(ParseError {
                    line: word.line,
                    message: format!(
                        "expected setup, teardown, session or permutation, found \"{}\"",
                        word.text
                    ),
                });
            }
        }
    }
    check_spec(&spec)?;
    Ok(spec)
}

/// Parses `name { setup? step* teardown? }` after the `session` keyword.
fn parse_session(scanner: &mut Scanner<'_>) -> Result<Session, ParseError> {
    let name = scanner.name("session")?;
    let line = scanner.line;
    scanner.expect('{')?;
    let mut session = Session {
        name,
        ..Session::default()
    };
    loop {
        scanner.skip_blanks();
        if scanner.peek() == Some('}') {
            scanner.bump();
            break;
        }
        let Some(word) = scanner.word()? else {
            return match scanner.peek() {
                None => Err(ParseError {
                    line,
                    message: format!("session {} is not closed with '}}'", session.name),
                }),
                Some(ch) => scanner.error(format!("unexpected '{ch}' in session")),
            };
        };
        let keyword = if word.quoted { "" } else { word.text.as_str() };
        let duplicate = |what: &str| ParseError {
            line: word.line,
            message: format!("session {} has more than one {what}", session.name),
        };
        match keyword {
            "setup" if session.setup.is_some() => return Err(duplicate("setup")),
            "setup" => session.setup = Some(scanner.sql_block()?),
            "teardown" if session.teardown.is_some() => return Err(duplicate("teardown")),
            "teardown" => session.teardown = Some(scanner.sql_block()?),
            "step" => {
                let name = scanner.name("step")?;
                let sql = scanner.sql_block()?;
                session.steps.push(Step { name, sql });
            }
            _ => {
                return Err(ParseError {
                    line: word.line,
                    message: format!(
                        "expected setup, step or teardown in session, found \"{}\"",
                        word.text
                    ),
                });
            }
        }
    }
    Ok(session)
}

fn check_spec(spec: &Spec) -> Result<(), ParseError> {
    let whole = |message: String| Err(ParseError { line: 0, message });
    if spec.sessions.is_empty() {
        return whole("spec has no sessions".to_owned());
    }
    for (i, session) in spec.sessions.iter().enumerate() {
        if session.steps.is_empty() {
            return whole(format!("session {} has no steps", session.name));
        }
        if spec.sessions[..i].iter().any(|s| s.name == session.name) {
            return whole(format!("session name {} is used twice", session.name));
        }
    }
    let mut names: Vec<&str> = spec
        .sessions
        .iter()
        .flat_map(|s| s.steps.iter().map(|step| step.name.as_str()))
        .collect();
    names.sort_unstable();
    if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
        return whole(format!("step name {} is used twice", pair[0]));
    }
    for permutation in &spec.permutations {
        for step in permutation {
            if spec.find_step(&step.name).is_none() {
                return whole(format!("permutation names unknown step {}", step.name));
            }
        }
    }
    Ok(())
}

impl Spec {
    /// The session and index of the step called `name`.
    pub fn find_step(&self, name: &str) -> Option<StepRef> {
        self.sessions.iter().enumerate().find_map(|(session, s)| {
            let step = s.steps.iter().position(|step| step.name == name)?;
            Some(StepRef { session, step })
        })
    }

    pub fn step(&self, at: StepRef) -> &Step {
        &self.sessions[at.session].steps[at.step]
    }

    /// The permutations to run: the named ones, or else every interleaving of the sessions'
    /// steps that keeps each session's order (at most [`MAX_PERMUTATIONS`]).
    pub fn permutations_to_run(&self) -> Result<Vec<Vec<Planned>>, String> {
        if !self.permutations.is_empty() {
            return Ok(self
                .permutations
                .iter()
                .map(|steps| {
                    steps
                        .iter()
                        .map(|step| Planned {
                            at: self.find_step(&step.name).expect("checked at parse time"),
                            waits: step.waits,
                        })
                        .collect()
                })
                .collect());
        }
        let mut all = Vec::new();
        let mut next = vec![0usize; self.sessions.len()];
        let mut current = Vec::new();
        self.interleave(&mut next, &mut current, &mut all)?;
        Ok(all)
    }

    fn interleave(
        &self,
        next: &mut [usize],
        current: &mut Vec<Planned>,
        all: &mut Vec<Vec<Planned>>,
    ) -> Result<(), String> {
        let mut any = false;
        for session in 0..self.sessions.len() {
            let step = next[session];
            if step == self.sessions[session].steps.len() {
                continue;
            }
            any = true;
            next[session] += 1;
            current.push(Planned {
                at: StepRef { session, step },
                waits: false,
            });
            self.interleave(next, current, all)?;
            current.pop();
            next[session] -= 1;
        }
        if !any {
            if all.len() == MAX_PERMUTATIONS {
                return Err(format!(
                    "spec has more than {MAX_PERMUTATIONS} interleavings; name its permutations"
                ));
            }
            all.push(current.clone());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Step results
// ---------------------------------------------------------------------------------------------

/// Rows of text values as received; `None` is NULL.
pub type Rows = Vec<Vec<Option<String>>>;

/// What one statement of a step produced that the transcript shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A result set: column names and rows of text values (`None` is NULL).
    Rows { columns: Vec<String>, rows: Rows },
    /// An error from the server (with SQLSTATE) or the client library (without).
    Error {
        severity: String,
        sqlstate: Option<String>,
        message: String,
    },
}

impl Output {
    fn from_error(err: &tokio_postgres::Error) -> Self {
        match err.as_db_error() {
            Some(db) => Output::Error {
                severity: db.severity().to_owned(),
                sqlstate: Some(db.code().code().to_owned()),
                message: db.message().to_owned(),
            },
            None => Output::Error {
                severity: "ERROR".to_owned(),
                sqlstate: None,
                message: format!("client: {err}"),
            },
        }
    }

    /// Appends this output to a transcript.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Output::Rows { columns, rows } => write_table(out, columns, rows),
            Output::Error {
                severity,
                sqlstate,
                message,
            } => match sqlstate {
                Some(code) => {
                    let _ = writeln!(out, "{severity}:  {code}: {message}");
                }
                None => {
                    let _ = writeln!(out, "{severity}:  {message}");
                }
            },
        }
    }
}

/// Writes a result set as an aligned table followed by a row count and a blank line.
fn write_table(out: &mut String, columns: &[String], rows: &Rows) {
    let cell = |value: &Option<String>| value.as_deref().unwrap_or(NULL_TEXT).to_owned();
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for row in rows {
        for (width, value) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell(value).chars().count());
        }
    }
    let line = |out: &mut String, cells: Vec<String>| {
        let mut text = String::new();
        for (i, (value, width)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                text.push('|');
            }
            let _ = write!(text, "{value:<width$}");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(out, columns.to_vec());
    let separator: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&separator.join("+"));
    out.push('\n');
    for row in rows {
        line(out, row.iter().map(cell).collect());
    }
    let _ = writeln!(
        out,
        "({} {})\n",
        rows.len(),
        if rows.len() == 1 { "row" } else { "rows" }
    );
}

fn write_outputs(out: &mut String, outputs: &[Output]) {
    for output in outputs {
        output.write_to(out);
    }
}

/// Sends `sql` as one simple query and collects what it shows, up to its ReadyForQuery: rows of
/// every statement, and the error that ended it, if any.
async fn run_simple_query(client: &Client, sql: &str) -> Vec<Output> {
    let mut outputs = Vec::new();
    let stream = match client.simple_query_raw(sql).await {
        Ok(stream) => stream,
        Err(err) => {
            outputs.push(Output::from_error(&err));
            return outputs;
        }
    };
    let mut stream = pin!(stream);
    // The result set being received: its column names and rows.
    let mut table: Option<(Vec<String>, Rows)> = None;
    while let Some(message) = stream.next().await {
        match message {
            Ok(SimpleQueryMessage::RowDescription(columns)) => {
                let names = columns.iter().map(|c| c.name().to_owned()).collect();
                table = Some((names, Vec::new()));
            }
            Ok(SimpleQueryMessage::Row(row)) => {
                if let Some((_, rows)) = &mut table {
                    rows.push(
                        (0..row.len())
                            .map(|i| row.get(i).map(str::to_owned))
                            .collect(),
                    );
                }
            }
            Ok(SimpleQueryMessage::CommandComplete(_)) => {
                if let Some((columns, rows)) = table.take() {
                    outputs.push(Output::Rows { columns, rows });
                }
            }
            // The enum is non-exhaustive; nothing else carries results today.
            Ok(_) => {}
            Err(err) => {
                outputs.push(Output::from_error(&err));
                // After a server error the stream goes on to ReadyForQuery; after a client
                // error (connection closed) it would repeat the error for ever.
                if err.as_db_error().is_none() {
                    break;
                }
                table = None;
            }
        }
    }
    outputs
}

// ---------------------------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------------------------

/// One connection of a permutation.
struct Conn {
    client: Arc<Client>,
    /// The connection task; it ends when the client is dropped or the socket closes.
    task: JoinHandle<()>,
}

impl Conn {
    async fn connect(url: &str) -> Result<Conn, String> {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(|err| format!("cannot connect to {url}: {err}"))?;
        let task = tokio::spawn(async move {
            if let Err(err) = connection.await {
                eprintln!("isolation: connection error: {err}");
            }
        });
        Ok(Conn {
            client: Arc::new(client),
            task,
        })
    }

    /// Runs a setup or teardown block; `Err` holds the transcript lines of its error.
    async fn run_quietly(&self, sql: &str) -> Result<(), String> {
        let run = run_simple_query(&self.client, sql);
        let outputs = tokio::time::timeout(STEP_WAIT_LIMIT, run)
            .await
            .map_err(|_| format!("did not finish within {STEP_WAIT_LIMIT:?}\n"))?;
        let mut text = String::new();
        for output in outputs.iter().filter(|o| matches!(o, Output::Error { .. })) {
            output.write_to(&mut text);
        }
        if text.is_empty() { Ok(()) } else { Err(text) }
    }

    async fn close(self) {
        drop(self.client);
        if tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .is_err()
        {
            eprintln!("isolation: a connection did not close in time");
        }
    }
}

/// A session's connection and its backend pid, as `pg_locks.pid` shows it.
struct SessionConn {
    conn: Conn,
    pid: i32,
}

/// A step that has been sent and has not been printed as completed.
struct Running {
    at: StepRef,
    /// Position in the permutation; orders simultaneous completions.
    seq: usize,
    handle: JoinHandle<Vec<Output>>,
}

/// The state of one permutation run.
struct PermutationRun<'a> {
    spec: &'a Spec,
    control: &'a Conn,
    sessions: Vec<SessionConn>,
    /// The step each session has waiting for a lock, if any.
    waiting: Vec<Option<Running>>,
    out: &'a mut String,
}

impl PermutationRun<'_> {
    /// Whether the session's backend waits for a lock, per `pg_locks`.
    async fn is_blocked(&self, session: usize) -> Result<bool, String> {
        let pid = self.sessions[session].pid;
        let sql = format!("SELECT count(*) FROM pg_locks WHERE pid = {pid} AND NOT granted");
        let messages = self
            .control
            .client
            .simple_query(&sql)
            .await
            .map_err(|err| format!("lock check on the control connection failed: {err}"))?;
        let count = messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        });
        match count.as_deref().map(str::parse::<i64>) {
            Some(Ok(n)) => Ok(n > 0),
            _ => Err(format!("lock check returned {count:?}, not a count")),
        }
    }

    fn step_name(&self, at: StepRef) -> &str {
        &self.spec.step(at).name
    }

    /// Polls a running step until it completes (`true`) or its session is seen waiting for a
    /// lock (`false`); fails after [`STEP_WAIT_LIMIT`].
    async fn poll_step(
        &self,
        session: usize,
        handle: &JoinHandle<Vec<Output>>,
        at: StepRef,
    ) -> Result<bool, String> {
        let started = Instant::now();
        let mut pause = POLL_INTERVAL_MIN;
        loop {
            if handle.is_finished() {
                return Ok(true);
            }
            if self.is_blocked(session).await? {
                // It may have finished (and released its wait) between the two checks.
                return Ok(handle.is_finished());
            }
            if started.elapsed() > STEP_WAIT_LIMIT {
                return Err(format!(
                    "step {} neither completed nor waited for a lock within {STEP_WAIT_LIMIT:?}",
                    self.step_name(at)
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_INTERVAL_MAX);
        }
    }

    /// Sends one step, printing its result or that it waits.
    async fn run_step(&mut self, planned: Planned, seq: usize) -> Result<(), String> {
        let at = planned.at;
        let session = at.session;
        if self.waiting[session].is_some() {
            self.wait_for_session(session, at).await?;
        }
        let step = self.spec.step(at);
        let client = Arc::clone(&self.sessions[session].conn.client);
        let sql = step.sql.clone();
        let handle = tokio::spawn(async move { run_simple_query(&client, &sql).await });
        let completed = match self.poll_step(session, &handle, at).await {
            Ok(completed) => completed,
            Err(message) => {
                self.cancel(session, handle).await;
                return Err(message);
            }
        };
        // A step marked `(*)` that ended before it was seen waiting is printed as if it had
        // been seen: its completion follows when the waiting steps are settled below.
        if completed && !planned.waits {
            let outputs = handle
                .await
                .map_err(|err| format!("step task failed: {err}"))?;
            let _ = writeln!(self.out, "step {}: {}", step.name, step.sql);
            write_outputs(self.out, &outputs);
        } else {
            let _ = writeln!(self.out, "step {}: {} <waiting ...>", step.name, step.sql);
            self.waiting[session] = Some(Running { at, seq, handle });
        }
        self.settle().await
    }

    /// Polls every waiting step until each has completed or is seen still blocked, then prints
    /// the completed ones in the order they were started.
    async fn settle(&mut self) -> Result<(), String> {
        let mut done: Vec<Running> = Vec::new();
        loop {
            let mut order: Vec<usize> = (0..self.waiting.len())
                .filter(|&s| self.waiting[s].is_some())
                .collect();
            order.sort_by_key(|&s| self.waiting[s].as_ref().map(|r| r.seq));
            let mut any_completed = false;
            for session in order {
                let running = self.waiting[session].as_ref().expect("filtered above");
                if self.poll_step(session, &running.handle, running.at).await? {
                    done.extend(self.waiting[session].take());
                    any_completed = true;
                }
            }
            // A completed step may have released others: look at them again.
            if !any_completed {
                break;
            }
        }
        done.sort_by_key(|r| r.seq);
        for running in done {
            let outputs = running
                .handle
                .await
                .map_err(|err| format!("step task failed: {err}"))?;
            let name = &self.spec.step(running.at).name;
            let _ = writeln!(self.out, "step {name}: <... completed>");
            write_outputs(self.out, &outputs);
        }
        Ok(())
    }

    /// Waits for the session's waiting step to finish before `next` runs on it.
    async fn wait_for_session(&mut self, session: usize, next: StepRef) -> Result<(), String> {
        let started = Instant::now();
        while let Some(running) = &self.waiting[session] {
            if started.elapsed() > STEP_WAIT_LIMIT {
                return Err(format!(
                    "step {} sent to session {} while step {} is still waiting (for {STEP_WAIT_LIMIT:?})",
                    self.step_name(next),
                    self.spec.sessions[session].name,
                    self.step_name(running.at)
                ));
            }
            tokio::time::sleep(POLL_INTERVAL_MAX).await;
            self.settle().await?;
        }
        Ok(())
    }

    /// Waits for every waiting step to finish, at the end of the permutation.
    async fn finish(&mut self) -> Result<(), String> {
        let started = Instant::now();
        while let Some(running) = self.waiting.iter().flatten().min_by_key(|r| r.seq) {
            if started.elapsed() > STEP_WAIT_LIMIT {
                return Err(format!(
                    "permutation ended with step {} still waiting (for {STEP_WAIT_LIMIT:?})",
                    self.step_name(running.at)
                ));
            }
            tokio::time::sleep(POLL_INTERVAL_MAX).await;
            self.settle().await?;
        }
        Ok(())
    }

    /// After a failure: cancels the steps still running so the sessions can be closed.
    async fn cancel_waiting(&mut self) {
        for session in 0..self.waiting.len() {
            if let Some(running) = self.waiting[session].take() {
                self.cancel(session, running.handle).await;
            }
        }
    }

    /// Cancels the session's running query and waits a little for it to end.
    async fn cancel(&self, session: usize, handle: JoinHandle<Vec<Output>>) {
        let token = self.sessions[session].conn.client.cancel_token();
        let _ = token.cancel_query(NoTls).await;
        if tokio::time::timeout(CANCEL_WAIT, handle).await.is_err() {
            eprintln!("isolation: a cancelled step did not end; closing its session");
        }
    }
}

/// What running one spec produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpecRun {
    /// The transcript, to compare with the expected file.
    pub transcript: String,
    /// Failures that make the run invalid whatever the transcript says (a step that hung, a
    /// setup that failed, a lost connection); each also appears in the transcript.
    pub failures: Vec<String>,
}

/// Runs every permutation of `spec` against the server at `url`.
pub async fn run_spec(url: &str, spec: &Spec) -> SpecRun {
    let mut run = SpecRun::default();
    let count = spec.sessions.len();
    let _ = writeln!(
        run.transcript,
        "Parsed test spec with {count} {}",
        if count == 1 { "session" } else { "sessions" }
    );
    let permutations = match spec.permutations_to_run() {
        Ok(permutations) => permutations,
        Err(message) => {
            let _ = writeln!(run.transcript, "\n{message}");
            run.failures.push(message);
            return run;
        }
    };
    for permutation in permutations {
        let names: Vec<&str> = permutation
            .iter()
            .map(|planned| spec.step(planned.at).name.as_str())
            .collect();
        let _ = writeln!(
            run.transcript,
            "\nstarting permutation: {}",
            names.join(" ")
        );
        if let Err(message) = run_permutation(url, spec, &permutation, &mut run.transcript).await {
            let _ = writeln!(run.transcript, "FAILED: {message}");
            run.failures
                .push(format!("permutation {}: {message}", names.join(" ")));
        }
    }
    run
}

/// Runs one permutation on fresh connections, appending to `out`. `Err` means the permutation
/// could not run as written (its message is not yet in `out`).
async fn run_permutation(
    url: &str,
    spec: &Spec,
    permutation: &[Planned],
    out: &mut String,
) -> Result<(), String> {
    let control = Conn::connect(url).await?;
    for sql in &spec.setup {
        if let Err(error) = control.run_quietly(sql).await {
            let _ = write!(out, "setup failed:\n{error}");
            // Undo what the setup did before it failed, so the next permutation starts clean.
            if let Some(sql) = &spec.teardown
                && let Err(error) = control.run_quietly(sql).await
            {
                let _ = write!(out, "teardown failed:\n{error}");
            }
            control.close().await;
            return Err("global setup failed".to_owned());
        }
    }

    let mut result = Ok(());
    let mut sessions = Vec::new();
    for session in &spec.sessions {
        match connect_session(url).await {
            Ok(conn) => sessions.push(conn),
            Err(message) => {
                result = Err(format!("session {}: {message}", session.name));
                break;
            }
        }
    }
    if result.is_ok() {
        for (session, conn) in spec.sessions.iter().zip(&sessions) {
            let Some(sql) = &session.setup else { continue };
            if let Err(error) = conn.conn.run_quietly(sql).await {
                let _ = write!(out, "setup of session {} failed:\n{error}", session.name);
                result = Err(format!("setup of session {} failed", session.name));
                break;
            }
        }
    }

    let session_count = sessions.len();
    let mut run = PermutationRun {
        spec,
        control: &control,
        sessions,
        waiting: (0..session_count).map(|_| None).collect(),
        out,
    };
    if result.is_ok() {
        result = run_steps(&mut run, permutation).await;
    }
    if result.is_err() {
        run.cancel_waiting().await;
    }
    let sessions = std::mem::take(&mut run.sessions);
    for (session, conn) in spec.sessions.iter().zip(sessions) {
        if let Some(sql) = &session.teardown
            && let Err(error) = conn.conn.run_quietly(sql).await
        {
            let _ = write!(
                run.out,
                "teardown of session {} failed:\n{error}",
                session.name
            );
        }
        conn.conn.close().await;
    }
    if let Some(sql) = &spec.teardown
        && let Err(error) = control.run_quietly(sql).await
    {
        let _ = write!(run.out, "teardown failed:\n{error}");
    }
    control.close().await;
    result
}

async fn run_steps(run: &mut PermutationRun<'_>, permutation: &[Planned]) -> Result<(), String> {
    for (seq, &planned) in permutation.iter().enumerate() {
        run.run_step(planned, seq).await?;
    }
    run.finish().await
}

async fn connect_session(url: &str) -> Result<SessionConn, String> {
    let conn = Conn::connect(url).await?;
    let messages = conn
        .client
        .simple_query("SELECT pg_backend_pid()")
        .await
        .map_err(|err| format!("SELECT pg_backend_pid() failed: {err}"))?;
    let pid = messages.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse::<i32>().ok()),
        _ => None,
    });
    match pid {
        Some(pid) => Ok(SessionConn { conn, pid }),
        None => Err("SELECT pg_backend_pid() returned no pid".to_owned()),
    }
}

// ---------------------------------------------------------------------------------------------
// Files, expected output and diffs
// ---------------------------------------------------------------------------------------------

/// Options for [`run_specs_with_options`].
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The server under test (`postgres`, `myriad`): when `expected/<name>.<label>.out` exists it
    /// is used instead of `expected/<name>.out`.
    pub label: Option<String>,
    /// Write the transcripts as the expected files instead of comparing.
    pub bless: bool,
}

/// The sorted `*.spec` files directly inside `dir` (empty if it cannot be read).
pub fn spec_files(dir: &Path) -> Vec<PathBuf> {
    crate::files_with_extension(dir, "spec")
}

/// The expected output of `spec_file`: `expected/<name>.out` beside it, or
/// `expected/<name>.<label>.out` when a label is given and that file exists.
pub fn expected_path(spec_file: &Path, label: Option<&str>) -> PathBuf {
    let dir = spec_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("expected");
    let stem = spec_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(label) = label {
        let labelled = dir.join(format!("{stem}.{label}.out"));
        if labelled.is_file() {
            return labelled;
        }
    }
    dir.join(format!("{stem}.out"))
}

/// Runs the specs against `url` and compares each transcript with its expected file.
pub async fn run_specs(url: &str, files: &[PathBuf]) -> Result<(), String> {
    run_specs_with_options(url, files, &Options::default()).await
}

/// Runs the specs against `url`, continuing past failures; see [`Options`].
///
/// Prints one line per spec to stderr as it goes. On failure returns a report: for each failing
/// spec its run failures and a diff from the expected file, then a summary line.
pub async fn run_specs_with_options(
    url: &str,
    files: &[PathBuf],
    options: &Options,
) -> Result<(), String> {
    let mut report = String::new();
    let mut failed = 0usize;
    for file in files {
        let problems = check_spec_file(url, file, options).await;
        if problems.is_empty() {
            eprintln!("ok   {}", file.display());
        } else {
            eprintln!("FAIL {}", file.display());
            failed += 1;
            let _ = writeln!(report, "--- {}", file.display());
            for problem in problems {
                report.push_str(&problem);
                if !problem.ends_with('\n') {
                    report.push('\n');
                }
            }
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        let _ = writeln!(report, "{failed} of {} specs failed", files.len());
        Err(report)
    }
}

/// Runs one spec file; returns its problems, each formatted for the report.
async fn check_spec_file(url: &str, file: &Path, options: &Options) -> Vec<String> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) => return vec![format!("cannot read {}: {err}", file.display())],
    };
    let spec = match parse_spec(&text) {
        Ok(spec) => spec,
        Err(err) => return vec![format!("{}: {err}", file.display())],
    };
    let run = run_spec(url, &spec).await;
    let mut problems = run.failures.clone();
    let expected_file = expected_path(file, options.label.as_deref());
    if options.bless {
        if problems.is_empty() {
            if let Err(err) = std::fs::create_dir_all(expected_file.parent().expect("has parent"))
                .and_then(|()| std::fs::write(&expected_file, &run.transcript))
            {
                problems.push(format!("cannot write {}: {err}", expected_file.display()));
            }
        } else {
            problems.push(format!("not blessed: {}", expected_file.display()));
        }
        return problems;
    }
    match std::fs::read_to_string(&expected_file) {
        Ok(expected) if expected == run.transcript => {}
        Ok(expected) => problems.push(unified_diff(
            &expected_file.display().to_string(),
            "actual",
            &expected,
            &run.transcript,
        )),
        Err(err) => problems.push(format!(
            "cannot read {}: {err}\nactual output:\n{}",
            expected_file.display(),
            run.transcript
        )),
    }
    problems
}

/// Lines of context around each change in [`unified_diff`].
const DIFF_CONTEXT_LINES: usize = 3;

/// A unified diff of two texts by lines (longest common subsequence; the files are small).
pub fn unified_diff(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (' ' | '-' | '+', line, old index, new index).
    let mut edits: Vec<(char, &str, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            edits.push((' ', a[i], i, j));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            edits.push(('-', a[i], i, j));
            i += 1;
        } else {
            edits.push(('+', b[j], i, j));
            j += 1;
        }
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let changes: Vec<usize> = (0..edits.len()).filter(|&k| edits[k].0 != ' ').collect();
    let mut k = 0;
    while k < changes.len() {
        // Grow a hunk while the next change is within twice the context of the last.
        let start = changes[k].saturating_sub(DIFF_CONTEXT_LINES);
        let mut last = changes[k];
        k += 1;
        while k < changes.len() && changes[k] <= last + 2 * DIFF_CONTEXT_LINES {
            last = changes[k];
            k += 1;
        }
        let end = (last + DIFF_CONTEXT_LINES + 1).min(edits.len());
        let hunk = &edits[start..end];
        let old_count = hunk.iter().filter(|e| e.0 != '+').count();
        let new_count = hunk.iter().filter(|e| e.0 != '-').count();
        let _ = writeln!(
            out,
            "@@ -{},{old_count} +{},{new_count} @@",
            hunk[0].2 + 1,
            hunk[0].3 + 1
        );
        for (sign, line, _, _) in hunk {
            let _ = writeln!(out, "{sign}{line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
# A comment.
setup { CREATE TABLE t (id int PRIMARY KEY, v text); }
setup
{
  INSERT INTO t VALUES (1, '}'), (2, 'x');  -- a } in a comment
}
teardown { DROP TABLE t; }

session s1
{
  setup { SET lock_timeout = '100ms'; }
  step s1a { BEGIN; }
  step "s1 b" { SELECT "}" FROM t; }
  teardown { ROLLBACK; }
}
session "s2" { step s2a { DROP TABLE t; } }

permutation s1a "s1 b" s2a
permutation "s2a" (*)
    s1a(*)
"#;

    fn step(name: &str, sql: &str) -> Step {
        Step {
            name: name.to_owned(),
            sql: sql.to_owned(),
        }
    }

    #[test]
    fn a_full_spec_parses() {
        let spec = parse_spec(SPEC).unwrap();
        assert_eq!(
            spec.setup,
            [
                "CREATE TABLE t (id int PRIMARY KEY, v text);",
                "INSERT INTO t VALUES (1, '}'), (2, 'x');  -- a } in a comment",
            ]
        );
        assert_eq!(spec.teardown.as_deref(), Some("DROP TABLE t;"));
        assert_eq!(spec.sessions.len(), 2);
        assert_eq!(
            spec.sessions[0],
            Session {
                name: "s1".to_owned(),
                setup: Some("SET lock_timeout = '100ms';".to_owned()),
                steps: vec![step("s1a", "BEGIN;"), step("s1 b", r#"SELECT "}" FROM t;"#)],
                teardown: Some("ROLLBACK;".to_owned()),
            }
        );
        assert_eq!(spec.sessions[1].name, "s2");
        assert_eq!(spec.sessions[1].steps, [step("s2a", "DROP TABLE t;")]);
        let names: Vec<Vec<(&str, bool)>> = spec
            .permutations
            .iter()
            .map(|p| p.iter().map(|s| (s.name.as_str(), s.waits)).collect())
            .collect();
        assert_eq!(
            names,
            [
                vec![("s1a", false), ("s1 b", false), ("s2a", false)],
                vec![("s2a", true), ("s1a", true)]
            ]
        );
        let runs = spec.permutations_to_run().unwrap();
        assert_eq!(
            runs[1],
            [
                Planned {
                    at: StepRef {
                        session: 1,
                        step: 0
                    },
                    waits: true
                },
                Planned {
                    at: StepRef {
                        session: 0,
                        step: 0
                    },
                    waits: true
                }
            ]
        );
    }

    #[test]
    fn multi_line_sql_keeps_its_lines() {
        let spec = parse_spec("session s { step a {\n  SELECT 1;\n  SELECT 2;\n} }").unwrap();
        assert_eq!(spec.sessions[0].steps[0].sql, "SELECT 1;\n  SELECT 2;");
    }

    #[test]
    fn without_permutations_every_interleaving_runs() {
        let spec =
            parse_spec("session a { step a1 {x} step a2 {x} } session b { step b1 {x} }").unwrap();
        let names: Vec<String> = spec
            .permutations_to_run()
            .unwrap()
            .iter()
            .map(|p| {
                p.iter()
                    .map(|planned| spec.step(planned.at).name.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(names, ["a1 a2 b1", "a1 b1 a2", "b1 a1 a2"]);
    }

    #[test]
    fn too_many_interleavings_is_an_error() {
        let steps = "step {n}0 {x} step {n}1 {x} step {n}2 {x} step {n}3 {x}";
        let text: String = ["p", "q", "r"]
            .iter()
            .map(|n| format!("session {n} {{ {} }}\n", steps.replace("{n}", n)))
            .collect();
        // 12! / (4! 4! 4!) = 34650 interleavings.
        let err = parse_spec(&text)
            .unwrap()
            .permutations_to_run()
            .unwrap_err();
        assert!(err.contains("more than 1000"), "{err}");
    }

    fn error_of(text: &str) -> String {
        parse_spec(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        assert_eq!(
            error_of("session s {\n step a { SELECT 1; }\n bogus }"),
            r#"line 3: expected setup, step or teardown in session, found "bogus""#
        );
        assert_eq!(
            error_of("setup { SELECT 1;\n"),
            "line 1: unterminated SQL block"
        );
        assert_eq!(error_of("setup {  }"), "line 1: empty SQL block");
        assert_eq!(
            error_of("\n\nstep a { x }"),
            r#"line 3: expected setup, teardown, session or permutation, found "step""#
        );
        assert_eq!(
            error_of("session s { step a { x }"),
            "line 1: session s is not closed with '}'"
        );
        assert_eq!(
            error_of("session s { step a {x} }\npermutation\n"),
            "line 2: permutation names no steps"
        );
        assert_eq!(
            error_of("session s { step a {x} }\npermutation \"a\nb\""),
            "line 2: unterminated quoted name"
        );
        assert_eq!(error_of("setup ( x )"), "line 1: expected '{', found '('");
        assert_eq!(
            error_of("session s { step a {x} }\npermutation a(+)"),
            "line 2: expected '*', found '+'"
        );
        assert_eq!(error_of("session { }"), "line 1: expected session name");
        assert_eq!(
            error_of("session s { setup {x} setup {y} step a {x} }"),
            "line 1: session s has more than one setup"
        );
    }

    #[test]
    fn consistency_errors() {
        assert_eq!(error_of("setup { x }"), "spec has no sessions");
        assert_eq!(error_of("session s { }"), "session s has no steps");
        assert_eq!(
            error_of("session s { step a {x} } session s { step b {x} }"),
            "session name s is used twice"
        );
        assert_eq!(
            error_of("session s { step a {x} } session t { step a {x} }"),
            "step name a is used twice"
        );
        assert_eq!(
            error_of("session s { step a {x} } permutation a b"),
            "permutation names unknown step b"
        );
        assert_eq!(
            error_of("teardown {x} teardown {y} session s { step a {x} }"),
            "line 1: more than one global teardown"
        );
    }

    #[test]
    fn tables_errors_and_nulls_format_deterministically() {
        let mut out = String::new();
        Output::Rows {
            columns: vec!["id".to_owned(), "name".to_owned()],
            rows: vec![
                vec![Some("1".to_owned()), None],
                vec![Some("100".to_owned()), Some("x".to_owned())],
            ],
        }
        .write_to(&mut out);
        Output::Rows {
            columns: vec!["count".to_owned()],
            rows: vec![],
        }
        .write_to(&mut out);
        Output::Error {
            severity: "ERROR".to_owned(),
            sqlstate: Some("40P01".to_owned()),
            message: "deadlock detected".to_owned(),
        }
        .write_to(&mut out);
        assert_eq!(
            out,
            "id |name\n---+------\n1  |<NULL>\n100|x\n(2 rows)\n\n\
             count\n-----\n(0 rows)\n\n\
             ERROR:  40P01: deadlock detected\n"
        );
    }

    #[test]
    fn diffs_show_changes_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            unified_diff("old", "new", old, new),
            "--- old\n+++ new\n@@ -2,9 +2,10 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n+k\n"
        );
        assert_eq!(unified_diff("o", "n", "x\n", "x\n"), "--- o\n+++ n\n");
    }

    #[test]
    fn expected_files_sit_in_expected_beside_the_spec() {
        let spec = Path::new("tests/isolation/deadlock.spec");
        assert_eq!(
            expected_path(spec, None),
            Path::new("tests/isolation/expected/deadlock.out")
        );
        // A label only counts when its file exists.
        assert_eq!(
            expected_path(spec, Some("nosuchlabel")),
            Path::new("tests/isolation/expected/deadlock.out")
        );
    }
}
