//! The wire protocol's decoders: frames and Bind parameters.
//!
//! Both must answer any bytes with the error PostgreSQL would send, never with a panic (a
//! dead connection thread) or XX000 (an internal error is Myriad's bug, not the client's).

use bytes::BytesMut;
use common::error::Severity;
use common::{DataType, SqlState};
use wire::ClientFrame;

/// The SQLSTATEs a client's malformed bytes may earn from the frame decoder, as from
/// PostgreSQL: 08P01 protocol violation, 22021 invalid UTF-8 in a string, 0A000 for a
/// protocol version or message (FunctionCall) Myriad does not speak.
const FRAME_ERRORS: [SqlState; 3] = [
    SqlState::PROTOCOL_VIOLATION,
    SqlState::CHARACTER_NOT_IN_REPERTOIRE,
    SqlState::FEATURE_NOT_SUPPORTED,
];

/// Target `wire_frames`: `data` is a client's byte stream from the first byte of the
/// connection (startup packets, then typed messages), read as the server reads a socket
/// ([`wire::read_client_stream`]). Asserts: every error is one of [`FRAME_ERRORS`]; a FATAL
/// error is the last thing read.
pub fn wire_frames(data: &[u8]) {
    let frames = wire::read_client_stream(data);
    for (i, f) in frames.iter().enumerate() {
        if let ClientFrame::Error(e) = f {
            assert!(
                FRAME_ERRORS.contains(&e.code),
                "frame decoder error {} {:?}: {}",
                e.code.0,
                e.severity,
                e.message
            );
            assert!(
                e.severity != Severity::Fatal || i + 1 == frames.len(),
                "frames read after a FATAL error: {frames:?}"
            );
        }
    }
}

/// The parameter types [`bind_params`] chooses from: every type Myriad has, a few type
/// modifiers, and (below) the array of each.
const PARAM_TYPES: &[(u32, i32)] = &[
    (common::types::oids::BOOL, -1),
    (common::types::oids::INT2, -1),
    (common::types::oids::INT4, -1),
    (common::types::oids::INT8, -1),
    (common::types::oids::FLOAT4, -1),
    (common::types::oids::FLOAT8, -1),
    (common::types::oids::TEXT, -1),
    (common::types::oids::VARCHAR, -1),
    (common::types::oids::VARCHAR, 4 + 3),
    (common::types::oids::BPCHAR, 4 + 5),
    (common::types::oids::DATE, -1),
    (common::types::oids::TIMESTAMP, -1),
    (common::types::oids::TIMESTAMP, 2),
    (common::types::oids::TIMESTAMPTZ, -1),
    (common::types::oids::INTERVAL, -1),
    (common::types::oids::NUMERIC, -1),
    // numeric(10, 2): PostgreSQL's typmod is ((p << 16) | s) + 4.
    (common::types::oids::NUMERIC, ((10 << 16) | 2) + 4),
    (common::types::oids::UUID, -1),
    (common::types::oids::BYTEA, -1),
    (common::types::oids::OID, -1),
    (common::types::oids::REGCLASS, -1),
    (common::types::oids::REGTYPE, -1),
    (common::types::oids::REGNAMESPACE, -1),
];

/// Target `bind_params`: one Bind parameter. `data[0]` picks the type (its low 6 bits
/// index [`PARAM_TYPES`], bit 6 takes the array of that type) and the format (bit 7:
/// binary, else text); the rest is the parameter's bytes. They are decoded as the server's
/// Bind decodes them (`wire::binary::get_param`, or UTF-8 and `Value::parse`). Asserts: an
/// error is never XX000; a decoded value prints as text and in binary, and its binary form
/// decodes again.
pub fn bind_params(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let (oid, typmod) = PARAM_TYPES[(selector & 0x3f) as usize % PARAM_TYPES.len()];
    let Some(mut ty) = DataType::from_oid(oid, typmod) else {
        panic!("type {oid} is not a type Myriad has");
    };
    if selector & 0x40 != 0 {
        ty = ty.array().unwrap_or(ty);
    }
    let binary = selector & 0x80 != 0;
    // `reg*` text is looked up by name in the session's catalog.
    let text_cx = &crate::sql_front_end::session().text;
    let decoded = if binary {
        wire::binary::get_param(bytes, &ty, 1)
    } else {
        wire::binary::utf8(bytes).and_then(|text| common::Value::parse(text, &ty, text_cx))
    };
    let value = match decoded {
        Ok(v) => v,
        Err(e) => {
            assert!(
                e.code != SqlState::INTERNAL_ERROR,
                "{ty:?} parameter ({}): XX000 {}",
                if binary { "binary" } else { "text" },
                e.message
            );
            return;
        }
    };
    if value.is_null() {
        return;
    }
    let _ = value.to_text(text_cx);
    let mut buf = BytesMut::new();
    wire::binary::put_value(&value, &mut buf);
    // put_value writes the length word, then the bytes.
    let sent = &buf[4..];
    if let Err(e) = wire::binary::get_param(sent, &ty, 1) {
        panic!("{ty:?} value {value:?} sent in binary does not decode again: {e:?}");
    }
}
