//! The eight table lock modes and PostgreSQL's conflict table (`lock.c`, `LockConflicts`),
//! as documented in "Table-Level Locks" of the PostgreSQL manual.

/// A lock mode, numbered as PostgreSQL's `lockdefs.h` (1 = weakest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockMode {
    /// `SELECT`.
    AccessShare = 1,
    /// `SELECT ... FOR UPDATE/SHARE`.
    RowShare = 2,
    /// `INSERT`, `UPDATE`, `DELETE`.
    RowExclusive = 3,
    /// `VACUUM`, `ANALYZE`, `CREATE INDEX CONCURRENTLY`.
    ShareUpdateExclusive = 4,
    /// `CREATE INDEX`; waiting for a transaction (lock rule 9).
    Share = 5,
    /// `CREATE TRIGGER`.
    ShareRowExclusive = 6,
    /// `REFRESH MATERIALIZED VIEW CONCURRENTLY`; a transaction on its own xid.
    Exclusive = 7,
    /// `DROP`, `TRUNCATE`, most `ALTER TABLE`, `LOCK TABLE` without a mode.
    AccessExclusive = 8,
}

/// A set of lock modes: bit `mode as u8 - 1` stands for `mode`.
pub(crate) type ModeMask = u8;

const fn bits(modes: &[LockMode]) -> ModeMask {
    let mut mask = 0;
    let mut i = 0;
    while i < modes.len() {
        mask |= modes[i].bit();
        i += 1;
    }
    mask
}

use LockMode::*;

/// Row `m - 1`: the modes that mode `m` conflicts with. The table is symmetric (a test checks).
const CONFLICTS: [ModeMask; 8] = [
    bits(&[AccessExclusive]),
    bits(&[Exclusive, AccessExclusive]),
    bits(&[Share, ShareRowExclusive, Exclusive, AccessExclusive]),
    bits(&[
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ]),
    bits(&[
        RowExclusive,
        ShareUpdateExclusive,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ]),
    bits(&[
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ]),
    bits(&[
        RowShare,
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ]),
    bits(&[
        AccessShare,
        RowShare,
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ]),
];

impl LockMode {
    /// Every mode, weakest first.
    pub const ALL: [LockMode; 8] = [
        AccessShare,
        RowShare,
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ];

    /// The name `pg_locks.mode` shows and error details print ("AccessShareLock").
    pub const fn name(self) -> &'static str {
        match self {
            AccessShare => "AccessShareLock",
            RowShare => "RowShareLock",
            RowExclusive => "RowExclusiveLock",
            ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            Share => "ShareLock",
            ShareRowExclusive => "ShareRowExclusiveLock",
            Exclusive => "ExclusiveLock",
            AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// The mode `LOCK TABLE ... IN <mode> MODE` names, upper case ("ACCESS SHARE").
    pub fn from_sql(words: &str) -> Option<LockMode> {
        let norm: Vec<String> = words
            .split_whitespace()
            .map(|w| w.to_ascii_uppercase())
            .collect();
        Some(match norm.join(" ").as_str() {
            "ACCESS SHARE" => AccessShare,
            "ROW SHARE" => RowShare,
            "ROW EXCLUSIVE" => RowExclusive,
            "SHARE UPDATE EXCLUSIVE" => ShareUpdateExclusive,
            "SHARE" => Share,
            "SHARE ROW EXCLUSIVE" => ShareRowExclusive,
            "EXCLUSIVE" => Exclusive,
            "ACCESS EXCLUSIVE" => AccessExclusive,
            _ => return None,
        })
    }

    /// Whether a holder of `self` and a holder of `other` (in different sessions) exclude
    /// each other.
    pub const fn conflicts_with(self, other: LockMode) -> bool {
        self.conflicts() & other.bit() != 0
    }

    /// Lock rule 1: AccessShare, RowShare and RowExclusive on a relation may take the fast
    /// path (PostgreSQL's `EligibleForRelationFastPath`).
    pub const fn is_fast_path_eligible(self) -> bool {
        (self as u8) < ShareUpdateExclusive as u8
    }

    /// Lock rule 2: Share and stronger conflict with some fast-path mode, so they announce
    /// themselves and transfer fast-path entries (PostgreSQL's
    /// `ConflictsWithRelationFastPath`). ShareUpdateExclusive is neither: it conflicts with
    /// no fast-path mode, so it simply lives in the shared table.
    pub const fn conflicts_with_fast_path(self) -> bool {
        (self as u8) > ShareUpdateExclusive as u8
    }

    pub(crate) const fn bit(self) -> ModeMask {
        1 << (self as u8 - 1)
    }

    pub(crate) const fn conflicts(self) -> ModeMask {
        CONFLICTS[self as usize - 1]
    }

    /// The modes in `mask`, weakest first.
    pub(crate) fn in_mask(mask: ModeMask) -> impl Iterator<Item = LockMode> {
        LockMode::ALL
            .into_iter()
            .filter(move |m| mask & m.bit() != 0)
    }
}

impl std::fmt::Display for LockMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_table_is_symmetric() {
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                assert_eq!(a.conflicts_with(b), b.conflicts_with(a), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn fast_path_classes_follow_the_conflict_table() {
        for strong in LockMode::ALL {
            let hits_weak = LockMode::ALL
                .iter()
                .any(|w| w.is_fast_path_eligible() && strong.conflicts_with(*w));
            assert_eq!(hits_weak, strong.conflicts_with_fast_path(), "{strong}");
        }
        for weak in LockMode::ALL.iter().filter(|m| m.is_fast_path_eligible()) {
            for other in LockMode::ALL.iter().filter(|m| m.is_fast_path_eligible()) {
                assert!(!weak.conflicts_with(*other), "weak modes never conflict");
            }
        }
    }

    #[test]
    fn sql_names() {
        assert_eq!(
            LockMode::from_sql("access  exclusive"),
            Some(AccessExclusive)
        );
        assert_eq!(
            LockMode::from_sql("SHARE UPDATE EXCLUSIVE"),
            Some(ShareUpdateExclusive)
        );
        assert_eq!(LockMode::from_sql("share exclusive"), None);
    }
}
