//! Frontend message framing and validation, before `pgwire` decodes anything (wire
//! rule 5).
//!
//! pgwire's decoders index into message bodies without checking their lengths, so a
//! truncated Bind or Execute panics the connection task. This module reads frames off the
//! socket itself and checks each body's structure against the protocol (the same checks
//! PostgreSQL's `pqformat.c` makes while it reads a message), so pgwire only ever decodes
//! well-formed bytes.
//!
//! Two kinds of violation, as in PostgreSQL:
//! - **framing** (a length below 4 or above the type's limit, an unknown message type, a
//!   bad startup packet): the byte stream cannot be resynchronised, so the connection ends
//!   with a FATAL 08P01. (PostgreSQL only logs these and closes; telling the client why
//!   costs nothing.)
//! - **body** (a missing string terminator, too few bytes, trailing bytes): the frame is
//!   intact, so the message fails with an ERROR 08P01 and the session goes on, skipping to
//!   Sync if it was an extended-protocol message.

use bytes::{Buf, BytesMut};
use common::PgError;
use common::error::{Severity, SqlState};
use tokio::io::{AsyncRead, AsyncReadExt};

/// PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`: the longest message of most types.
const SMALL_MESSAGE_LIMIT: usize = 10_000;
/// PostgreSQL's `PQ_LARGE_MESSAGE_LIMIT` (`MaxAllocSize - 1`): Query, Parse, Bind, CopyData.
const LARGE_MESSAGE_LIMIT: usize = 0x3fff_fffe;
/// PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`.
const MAX_STARTUP_PACKET: usize = 10_000;
/// Bytes read from the socket per step while a long message arrives: a declared length
/// reserves nothing up front, so a lying length header costs no memory.
const READ_CHUNK: usize = 64 * 1024;

pub(crate) const SSL_REQUEST_CODE: i32 = 80_877_103;
pub(crate) const GSSENC_REQUEST_CODE: i32 = 80_877_104;
pub(crate) const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// What a startup-phase packet is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StartupKind {
    SslRequest,
    GssEncRequest,
    Cancel,
    Startup,
}

fn fatal(code: SqlState, message: impl Into<String>) -> PgError {
    let mut e = PgError::new(code, message);
    e.severity = Severity::Fatal;
    e
}

fn protocol_error(message: &str) -> PgError {
    PgError::new(SqlState::PROTOCOL_VIOLATION, message)
}

/// Reads whole frames off the socket. Each returned frame is the complete message,
/// type byte and length included, as pgwire's decoders expect it.
pub(crate) struct FrameReader<R> {
    inner: R,
    buf: BytesMut,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(crate) fn new(inner: R) -> FrameReader<R> {
        FrameReader {
            inner,
            buf: BytesMut::with_capacity(8192),
        }
    }

    /// Reads until `n` bytes are buffered. `Ok(false)` at end of stream.
    async fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        while self.buf.len() < n {
            let want = (n - self.buf.len()).min(READ_CHUNK);
            self.buf.reserve(want);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The next startup-phase packet (no type byte). `Ok(None)` when the client hung up.
    pub(crate) async fn next_startup(
        &mut self,
    ) -> Result<Option<(StartupKind, BytesMut)>, PgError> {
        if !self.fill(4).await.map_err(io_error)? {
            return Ok(None);
        }
        let len = be_i32(&self.buf[..4]);
        if len < 8 || len as usize > MAX_STARTUP_PACKET {
            return Err(fatal(
                SqlState::PROTOCOL_VIOLATION,
                "invalid length of startup packet",
            ));
        }
        let len = len as usize;
        if !self.fill(len).await.map_err(io_error)? {
            return Ok(None);
        }
        let packet = self.buf.split_to(len);
        let kind = check_startup(&packet[4..])?;
        Ok(Some((kind, packet)))
    }

    /// The next typed message after startup. `Ok(None)` when the client hung up.
    pub(crate) async fn next_message(&mut self) -> Result<Option<(u8, BytesMut)>, PgError> {
        if !self.fill(5).await.map_err(io_error)? {
            return Ok(None);
        }
        let ty = self.buf[0];
        let limit = match ty {
            b'Q' | b'P' | b'B' | b'd' | b'F' => LARGE_MESSAGE_LIMIT,
            b'E' | b'D' | b'C' | b'S' | b'H' | b'X' | b'c' | b'f' => SMALL_MESSAGE_LIMIT,
            _ => {
                return Err(fatal(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid frontend message type {ty}"),
                ));
            }
        };
        let len = be_i32(&self.buf[1..5]);
        if len < 4 || len as usize > limit {
            return Err(fatal(
                SqlState::PROTOCOL_VIOLATION,
                "invalid message length",
            ));
        }
        let total = 1 + len as usize;
        if !self.fill(total).await.map_err(io_error)? {
            return Ok(None);
        }
        Ok(Some((ty, self.buf.split_to(total))))
    }
}

/// The big-endian i32 at the start of `b`; a shorter slice reads as -1, which every
/// caller rejects as a length or code (callers check the length first anyway).
fn be_i32(b: &[u8]) -> i32 {
    match b.get(..4) {
        Some(&[a, b, c, d]) => i32::from_be_bytes([a, b, c, d]),
        _ => -1,
    }
}

fn io_error(e: std::io::Error) -> PgError {
    fatal(
        SqlState::CONNECTION_FAILURE,
        format!("could not receive data from client: {e}"),
    )
}

/// Checks a startup-phase packet body (after the length word).
fn check_startup(body: &[u8]) -> Result<StartupKind, PgError> {
    let code = be_i32(body);
    match code {
        SSL_REQUEST_CODE | GSSENC_REQUEST_CODE if body.len() == 4 => {
            return Ok(if code == SSL_REQUEST_CODE {
                StartupKind::SslRequest
            } else {
                StartupKind::GssEncRequest
            });
        }
        CANCEL_REQUEST_CODE if body.len() == 12 => return Ok(StartupKind::Cancel),
        SSL_REQUEST_CODE | GSSENC_REQUEST_CODE | CANCEL_REQUEST_CODE => {
            return Err(fatal(
                SqlState::PROTOCOL_VIOLATION,
                "invalid length of startup packet",
            ));
        }
        _ => {}
    }
    let (major, minor) = ((code as u32) >> 16, (code as u32) & 0xffff);
    if major != 3 {
        return Err(fatal(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
        ));
    }
    // Name/value pairs of NUL-terminated strings, then a final NUL.
    let params = &body[4..];
    if params.last() != Some(&0) {
        return Err(fatal(
            SqlState::PROTOCOL_VIOLATION,
            "invalid startup packet layout: expected terminator as last byte",
        ));
    }
    let strings: Vec<&[u8]> = params[..params.len() - 1].split(|b| *b == 0).collect();
    // `split` yields one empty piece after the last terminator of a non-empty list.
    let pieces = match strings.split_last() {
        Some((&[], rest)) => rest,
        _ => {
            return Err(fatal(
                SqlState::PROTOCOL_VIOLATION,
                "invalid startup packet layout: expected terminator as last byte",
            ));
        }
    };
    if pieces.len() % 2 != 0 {
        return Err(fatal(
            SqlState::PROTOCOL_VIOLATION,
            "invalid startup packet layout: expected terminator as last byte",
        ));
    }
    for s in pieces {
        if std::str::from_utf8(s).is_err() {
            return Err(fatal(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                "invalid byte sequence for encoding \"UTF8\" in startup packet",
            ));
        }
    }
    Ok(StartupKind::Startup)
}

/// A cursor over a message body that fails the way `pqformat.c` does.
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn bytes(&mut self, n: usize) -> Result<(), PgError> {
        if n > self.0.len() {
            return Err(protocol_error("insufficient data left in message"));
        }
        self.0.advance(n);
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, PgError> {
        let b = *self
            .0
            .first()
            .ok_or_else(|| protocol_error("insufficient data left in message"))?;
        self.0.advance(1);
        Ok(b)
    }

    fn u16(&mut self) -> Result<usize, PgError> {
        if self.0.len() < 2 {
            return Err(protocol_error("insufficient data left in message"));
        }
        Ok(self.0.get_u16() as usize)
    }

    fn i32(&mut self) -> Result<i32, PgError> {
        if self.0.len() < 4 {
            return Err(protocol_error("insufficient data left in message"));
        }
        Ok(self.0.get_i32())
    }

    /// A NUL-terminated string, which must be valid UTF-8 (the only encoding).
    fn string(&mut self) -> Result<(), PgError> {
        let Some(end) = self.0.iter().position(|b| *b == 0) else {
            return Err(protocol_error("invalid string in message"));
        };
        if std::str::from_utf8(&self.0[..end]).is_err() {
            return Err(PgError::new(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                "invalid byte sequence for encoding \"UTF8\"",
            ));
        }
        self.0.advance(end + 1);
        Ok(())
    }

    fn end(&self) -> Result<(), PgError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(protocol_error("invalid message format"))
        }
    }
}

/// Checks the body of a typed message (after its type byte and length word). An error
/// here fails the message, not the connection.
pub(crate) fn check_body(ty: u8, body: &[u8]) -> Result<(), PgError> {
    let mut b = Body(body);
    match ty {
        b'Q' | b'f' => b.string()?,
        b'P' => {
            b.string()?;
            b.string()?;
            let n = b.u16()?;
            b.bytes(n * 4)?;
        }
        b'B' => {
            b.string()?;
            b.string()?;
            let formats = b.u16()?;
            b.bytes(formats * 2)?;
            let params = b.u16()?;
            for _ in 0..params {
                match b.i32()? {
                    -1 => {}
                    n if n < 0 => return Err(protocol_error("insufficient data left in message")),
                    n => b.bytes(n as usize)?,
                }
            }
            let results = b.u16()?;
            b.bytes(results * 2)?;
        }
        b'E' => {
            b.string()?;
            b.i32()?;
        }
        b'D' | b'C' => {
            let kind = b.u8()?;
            if kind != b'S' && kind != b'P' {
                let what = if ty == b'D' { "DESCRIBE" } else { "CLOSE" };
                return Err(protocol_error(&format!(
                    "invalid {what} message subtype {kind}"
                )));
            }
            b.string()?;
        }
        b'd' => return Ok(()),
        b'S' | b'H' | b'X' | b'c' => {}
        b'F' => {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "the function call message is not supported",
            ));
        }
        _ => {
            return Err(fatal(
                SqlState::PROTOCOL_VIOLATION,
                format!("invalid frontend message type {ty}"),
            ));
        }
    }
    b.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: &[u8]) -> (u8, Vec<u8>) {
        (bytes[0], bytes[5..].to_vec())
    }

    fn body_error(bytes: &[u8]) -> String {
        let (ty, body) = frame(bytes);
        check_body(ty, &body).unwrap_err().message
    }

    #[test]
    fn truncated_messages_that_crashed_pgwire_are_rejected() {
        // Execute without its row limit.
        assert_eq!(
            body_error(b"E\0\0\0\x05\0"),
            "insufficient data left in message"
        );
        // Parse whose parameter count is cut off.
        assert_eq!(
            body_error(b"P\0\0\0\x08\0\0\0\x01"),
            "insufficient data left in message"
        );
        // Bind cut after the names.
        assert_eq!(
            body_error(b"B\0\0\0\x06\0\0"),
            "insufficient data left in message"
        );
        // Bind whose parameter claims i32::MAX bytes.
        assert_eq!(
            body_error(b"B\0\0\0\x0e\0\0\0\0\0\x01\x7f\xff\xff\xff"),
            "insufficient data left in message"
        );
    }

    #[test]
    fn well_formed_messages_pass() {
        let ok: &[(u8, &[u8])] = &[
            (b'Q', b"select 1\0"),
            (b'P', b"s\0select $1\0\0\x01\0\0\0\x17"),
            (b'B', b"\0s\0\0\x01\0\0\0\x01\0\0\0\x0242\0\x01\0\0"),
            (b'B', b"\0\0\0\0\0\x01\xff\xff\xff\xff\0\0"),
            (b'E', b"\0\0\0\0\0"),
            (b'D', b"S\0"),
            (b'C', b"Pp\0"),
            (b'S', b""),
            (b'd', b"abc"),
        ];
        for (ty, body) in ok {
            check_body(*ty, body).unwrap_or_else(|e| panic!("{body:?}: {}", e.message));
        }
    }

    #[test]
    fn malformed_bodies_get_postgres_messages() {
        assert_eq!(body_error(b"Q\0\0\0\x07abc"), "invalid string in message");
        assert_eq!(body_error(b"S\0\0\0\x05x"), "invalid message format");
        assert_eq!(
            body_error(b"E\0\0\0\x0a\0\0\0\0\0x"),
            "invalid message format"
        );
        assert_eq!(
            body_error(b"D\0\0\0\x06X\0"),
            "invalid DESCRIBE message subtype 88"
        );
        assert_eq!(
            body_error(b"C\0\0\0\x05"),
            "insufficient data left in message"
        );
        let bad_utf8 = check_body(b'Q', b"\xff\0").unwrap_err();
        assert_eq!(bad_utf8.code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
    }

    async fn read_one(bytes: &[u8]) -> Result<Option<(u8, BytesMut)>, PgError> {
        FrameReader::new(bytes).next_message().await
    }

    #[tokio::test]
    async fn framing_errors_are_fatal() {
        for (bytes, msg) in [
            (&b"E\0\0\0\x00"[..], "invalid message length"),
            (b"d\0\0\0\x00", "invalid message length"),
            (b"S\xff\xff\xff\xff", "invalid message length"),
            (b"E\0\x01\0\0", "invalid message length"),
            (b"p\0\0\0\x00", "invalid frontend message type 112"),
            (b"z\0\0\0\x04", "invalid frontend message type 122"),
        ] {
            let e = read_one(bytes).await.unwrap_err();
            assert_eq!(e.severity, Severity::Fatal, "{bytes:?}");
            assert_eq!(e.message, msg, "{bytes:?}");
        }
        // A truncated stream is a hang-up, not a message.
        assert!(read_one(b"Q\0\0\0\x0dsel").await.unwrap().is_none());
        let (ty, m) = read_one(b"S\0\0\0\x04Q").await.unwrap().unwrap();
        assert_eq!((ty, &m[..]), (b'S', &b"S\0\0\0\x04"[..]));
    }

    #[tokio::test]
    async fn startup_packets() {
        async fn kind(bytes: &[u8]) -> Result<StartupKind, PgError> {
            FrameReader::new(bytes)
                .next_startup()
                .await
                .map(|p| p.unwrap().0)
        }
        assert_eq!(
            kind(b"\0\0\0\x08\x04\xd2\x16\x2f").await.unwrap(),
            StartupKind::SslRequest
        );
        assert_eq!(
            kind(b"\0\0\0\x17\0\x03\0\0user\0postgres\0\0")
                .await
                .unwrap(),
            StartupKind::Startup
        );
        assert_eq!(
            kind(b"\0\0\0\x09\0\x03\0\0\0").await.unwrap(),
            StartupKind::Startup
        );
        for (bytes, msg) in [
            (&b"\0\0\0\x04"[..], "invalid length of startup packet"),
            (b"\x7f\0\0\0", "invalid length of startup packet"),
            (
                b"\0\0\0\x0c\0\x03\0\0user",
                "invalid startup packet layout: expected terminator as last byte",
            ),
            (
                b"\0\0\0\x0d\0\x03\0\0user\0",
                "invalid startup packet layout: expected terminator as last byte",
            ),
            (
                b"\0\0\0\x08\0\x02\0\0",
                "unsupported frontend protocol 2.0: server supports 3.0 to 3.0",
            ),
        ] {
            let e = kind(bytes).await.unwrap_err();
            assert_eq!(e.message, msg, "{bytes:?}");
            assert_eq!(e.severity, Severity::Fatal);
        }
    }
}
