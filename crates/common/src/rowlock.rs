//! Row lock strengths: what a transaction holds on a row it locked, updated or deleted
//! (PostgreSQL's `LockTupleMode`).

/// A row lock's strength, weakest first. Holding one covers every weaker one.
///
/// | held \ wanted  | KeyShare | Share | NoKeyUpdate | Update |
/// |----------------|----------|-------|-------------|--------|
/// | KeyShare       |          |       |             |   x    |
/// | Share          |          |       |      x      |   x    |
/// | NoKeyUpdate    |          |   x   |      x      |   x    |
/// | Update         |    x     |   x   |      x      |   x    |
///
/// SELECT ... FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE and FOR UPDATE take them by
/// name; a foreign key check takes KeyShare on the referenced row; an UPDATE that leaves
/// every key column (a column of a unique index) as it was takes NoKeyUpdate, any other
/// UPDATE and every DELETE take Update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowLockMode {
    KeyShare,
    Share,
    NoKeyUpdate,
    Update,
}

impl RowLockMode {
    /// Whether a holder of `self` keeps another transaction from taking `other`.
    pub fn conflicts(self, other: RowLockMode) -> bool {
        use RowLockMode::*;
        match (self, other) {
            (Update, _) | (_, Update) => true,
            (KeyShare, _) | (_, KeyShare) => false,
            (Share, Share) => false,
            _ => true,
        }
    }

    /// The words after FOR in a locking clause (`KEY SHARE`).
    pub fn clause(self) -> &'static str {
        match self {
            RowLockMode::KeyShare => "KEY SHARE",
            RowLockMode::Share => "SHARE",
            RowLockMode::NoKeyUpdate => "NO KEY UPDATE",
            RowLockMode::Update => "UPDATE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowLockMode::{self, *};

    #[test]
    fn conflicts_are_postgresql_table_and_symmetric() {
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        // PostgreSQL's tupleLockExtraInfo conflict table, row by row.
        let expected = [
            [false, false, false, true],
            [false, false, true, true],
            [false, true, true, true],
            [true, true, true, true],
        ];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.conflicts(*b), expected[i][j], "{a:?} vs {b:?}");
                assert_eq!(a.conflicts(*b), b.conflicts(*a));
            }
        }
        assert!(RowLockMode::KeyShare < RowLockMode::Update);
    }
}
