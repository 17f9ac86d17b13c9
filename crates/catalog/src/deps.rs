//! What a binding read from the catalog: a cached plan stays valid for a later catalog
//! snapshot while everything it read is as it was.
//!
//! Problem: every DDL moves the catalog's one version, so a plan cached for a version
//! would be planned again after any DDL anywhere (and, once statistics live in the
//! catalog, after every ANALYZE of any table). Mechanism: the snapshot keeps, per
//! relation, the version that last changed it ([`CatalogSnapshot::changed_at`]: its
//! descriptor, a foreign key of another table that references it, a sequence it owns);
//! the binder notes each relation it reads with that version, and each name it looked up
//! and did not find (an unqualified name that is not a table may be a system view or a
//! sequence: a table created under that name would bind in its place). A later snapshot
//! binds the statement the same way while each relation has the same version and each
//! missing name is still missing. Cost: a check is one map lookup per relation read, and
//! runs only when the catalog's version moved since the last check.

use common::Oid;

use crate::CatalogSnapshot;

/// The catalog facts a binding depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Relations read, each with the version that had last changed it.
    relations: Vec<(Oid, u64)>,
    /// Names looked up as a table, and as a sequence, and not found.
    missing_tables: Vec<String>,
    missing_sequences: Vec<String>,
    /// It read every table (a pass over the catalog): any change may matter.
    everything: Option<u64>,
}

impl Dependencies {
    /// The binding read relation `oid` as `snap` has it.
    pub fn note_relation(&mut self, snap: &CatalogSnapshot, oid: Oid) {
        let Some(version) = snap.changed_at(oid) else {
            return;
        };
        if !self.relations.iter().any(|(o, _)| *o == oid) {
            self.relations.push((oid, version));
        }
    }

    /// The binding looked for a table named `name` and found none.
    pub fn note_missing_table(&mut self, name: &str) {
        if !self.missing_tables.iter().any(|n| n == name) {
            self.missing_tables.push(name.to_string());
        }
    }

    /// The binding looked for a sequence named `name` and found none.
    pub fn note_missing_sequence(&mut self, name: &str) {
        if !self.missing_sequences.iter().any(|n| n == name) {
            self.missing_sequences.push(name.to_string());
        }
    }

    /// The binding read the whole catalog of `snap`.
    pub fn note_everything(&mut self, snap: &CatalogSnapshot) {
        self.everything = Some(snap.version);
    }

    /// Would `snap` bind the statement as the snapshot these were noted in did?
    pub fn hold_in(&self, snap: &CatalogSnapshot) -> bool {
        self.everything.is_none_or(|v| v == snap.version)
            && self
                .relations
                .iter()
                .all(|&(oid, version)| snap.changed_at(oid) == Some(version))
            && self.missing_tables.iter().all(|n| snap.table(n).is_none())
            && self
                .missing_sequences
                .iter()
                .all(|n| snap.sequence(n).is_none())
    }

    /// The relations read.
    pub fn relations(&self) -> impl Iterator<Item = Oid> + '_ {
        self.relations.iter().map(|(oid, _)| *oid)
    }
}
