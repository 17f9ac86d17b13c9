//! Identifiers shared by every layer, named as in PostgreSQL.

/// A catalog object identifier (tables, types, namespaces), as PostgreSQL's `oid`.
pub type Oid = u32;

/// Identifies a relation's storage. Today one relation has one file per fork, named by its
/// `RelId`; it stays a separate name from `Oid` because TRUNCATE and rewrites will give a
/// relation new storage under the same `Oid` (PostgreSQL's relfilenode).
///
/// A fork other than the main one is a `RelId` of its own to the storage manager, the
/// buffer pool and the write-ahead log: the main fork's id with the fork's number in its
/// top two bits ([`fork`]), so everything that keeps pages keeps a fork's unchanged.
/// Relation ids stay below [`MAX_RELID`].
pub type RelId = u32;

/// The forks of a relation, as PostgreSQL's `ForkNumber` (its init fork aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fork {
    Main = 0,
    /// The free space map (`<rel>_fsm`).
    FreeSpace = 1,
    /// The visibility map (`<rel>_vm`).
    Visibility = 2,
}

/// Bits of a `RelId` below its fork number.
const FORK_SHIFT: u32 = 30;

/// Relation ids (and so OIDs, which they are drawn from) stay below this: the top two bits
/// name a fork.
pub const MAX_RELID: RelId = 1 << FORK_SHIFT;

/// The id under which the storage layers know fork `fork` of relation `rel`.
pub const fn fork(rel: RelId, fork: Fork) -> RelId {
    (rel & (MAX_RELID - 1)) | ((fork as u32) << FORK_SHIFT)
}

/// The relation and fork a storage id names.
pub const fn fork_of(id: RelId) -> (RelId, Fork) {
    let rel = id & (MAX_RELID - 1);
    match id >> FORK_SHIFT {
        0 => (rel, Fork::Main),
        1 => (rel, Fork::FreeSpace),
        _ => (rel, Fork::Visibility),
    }
}

/// A block (page) number within one relation fork.
pub type BlockNumber = u32;

/// A line pointer number within a page, 1-based as in PostgreSQL.
pub type OffsetNumber = u16;

/// A position in the write-ahead log: the byte offset in the log's endless stream. 0 is
/// "never logged" (a page that no WAL record has touched).
pub type Lsn = u64;

/// The physical address of a heap tuple: block and line pointer, PostgreSQL's `ItemPointer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemPointer {
    pub block: BlockNumber,
    pub offset: OffsetNumber,
}

/// First OID handed out to user objects; lower ones are reserved for built-in objects
/// (PostgreSQL's `FirstNormalObjectId`).
pub const FIRST_NORMAL_OID: Oid = 16384;

/// PostgreSQL's fully reserved keywords (`RESERVED_KEYWORD` in `kwlist.h`), sorted.
pub const RESERVED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lateral",
    "leading",
    "limit",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "placing",
    "primary",
    "references",
    "returning",
    "select",
    "session_user",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

/// PostgreSQL's `quote_identifier`: the name as it is if it reads back unchanged
/// unquoted (lower-case letters, digits and underscores, not starting with a digit,
/// not a reserved keyword), else in double quotes with quotes doubled.
pub fn quote_identifier(name: &str) -> std::borrow::Cow<'_, str> {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && RESERVED_KEYWORDS.binary_search(&name).is_err();
    if plain {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("\"{}\"", name.replace('"', "\"\"")))
    }
}

/// Split `a.b` / `"A"."b"` into identifiers as PostgreSQL's `stringToQualifiedNameList`
/// does: unquoted parts fold to lower case, quoted ones keep case and `""` is a quote.
pub fn split_qualified(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c.is_whitespace() {
                    break;
                }
                part.extend(c.to_lowercase());
                chars.next();
            }
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(parts),
            Some('.') => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_quote_and_split_as_postgres_does() {
        assert_eq!(quote_identifier("t_1"), "t_1");
        assert_eq!(quote_identifier("My T"), "\"My T\"");
        assert_eq!(quote_identifier("select"), "\"select\"");
        assert_eq!(quote_identifier("1a"), "\"1a\"");
        assert_eq!(
            split_qualified(" Public . \"A\"\"b\" "),
            Some(vec!["public".to_string(), "A\"b".to_string()])
        );
        assert_eq!(split_qualified("a..b"), None);
        assert_eq!(split_qualified("a b"), None);
    }
}
