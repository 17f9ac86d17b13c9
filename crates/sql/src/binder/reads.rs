//! The binder's view of the catalog: every lookup is noted in the binding's
//! [`Dependencies`], so a cached plan is replanned only when something it read changed
//! (catalog `deps` module). The methods mirror [`CatalogSnapshot`]'s; binder code calls
//! these and never the snapshot itself, so no lookup goes unnoted.

use std::cell::RefCell;
use std::sync::Arc;

use catalog::{CatalogSnapshot, Dependencies, ForeignKey, IndexDesc, SequenceDesc, TableDesc};
use common::Oid;

pub(crate) struct CatalogReads<'a> {
    snap: &'a CatalogSnapshot,
    deps: RefCell<Dependencies>,
}

impl<'a> CatalogReads<'a> {
    pub fn new(snap: &'a CatalogSnapshot) -> CatalogReads<'a> {
        CatalogReads {
            snap,
            deps: RefCell::new(Dependencies::default()),
        }
    }

    /// What the lookups so far depend on.
    pub fn dependencies(&self) -> Dependencies {
        self.deps.borrow().clone()
    }

    fn note(&self, oid: Oid) {
        self.deps.borrow_mut().note_relation(self.snap, oid);
    }

    pub fn table(&self, name: &str) -> Option<&'a Arc<TableDesc>> {
        let t = self.snap.table(name);
        match t {
            Some(t) => self.note(t.oid),
            None => self.deps.borrow_mut().note_missing_table(name),
        }
        t
    }

    pub fn table_by_oid(&self, oid: Oid) -> Option<&'a Arc<TableDesc>> {
        self.note(oid);
        self.snap.table_by_oid(oid)
    }

    /// Every partition below partitioned table `oid` (see
    /// [`CatalogSnapshot::descendants`]).
    pub fn descendants(&self, oid: Oid) -> Vec<Arc<TableDesc>> {
        self.note(oid);
        let found = self.snap.descendants(oid);
        for t in &found {
            self.note(t.oid);
        }
        found
    }

    /// The partition of `oid` whose DETACH CONCURRENTLY is pending (a change to it is
    /// one to `oid`: partition rule 5).
    pub fn detach_pending(&self, oid: Oid) -> Option<&'a Arc<TableDesc>> {
        self.note(oid);
        self.snap.detach_pending(oid)
    }

    /// The DEFAULT partition of `oid`, if it has one.
    pub fn default_partition(&self, oid: Oid) -> Option<Oid> {
        self.note(oid);
        self.snap.partitions(oid)?.default_partition()
    }

    pub fn sequence(&self, name: &str) -> Option<&'a Arc<SequenceDesc>> {
        let s = self.snap.sequence(name);
        match s {
            Some(s) => self.note(s.oid),
            None => self.deps.borrow_mut().note_missing_sequence(name),
        }
        s
    }

    /// An index by name, with its table (whose descriptor holds the index).
    pub fn index(&self, name: &str) -> Option<(&'a Arc<TableDesc>, &'a IndexDesc)> {
        let found = self.snap.index(name);
        if let Some((t, _)) = found {
            self.note(t.oid);
        }
        found
    }

    /// An index by OID, with its table.
    pub fn index_by_oid(&self, oid: Oid) -> Option<(&'a Arc<TableDesc>, &'a IndexDesc)> {
        let found = self.snap.index_by_oid(oid);
        if let Some((t, _)) = found {
            self.note(t.oid);
        }
        found
    }

    pub fn relation_exists(&self, name: &str) -> bool {
        // Each kind looked up in turn, so each finding (or its absence) is noted.
        self.table(name).is_some() || self.index(name).is_some() || self.sequence(name).is_some()
    }

    /// Every table: the binding depends on the whole catalog.
    pub fn tables(&self) -> impl Iterator<Item = &'a Arc<TableDesc>> + use<'a> {
        self.deps.borrow_mut().note_everything(self.snap);
        self.snap.tables()
    }

    /// The foreign keys referencing table `oid`, with their tables. Which keys reference
    /// it is part of `oid`'s version (a key added to another table moves it).
    pub fn referencing(
        &self,
        oid: Oid,
    ) -> impl Iterator<Item = (&'a Arc<TableDesc>, &'a ForeignKey)> + use<'a> {
        self.note(oid);
        let found: Vec<_> = self.snap.referencing(oid).collect();
        for (t, _) in &found {
            self.note(t.oid);
        }
        found.into_iter()
    }

    /// The foreign keys referencing table `oid` or a table it is a partition of
    /// (`CatalogSnapshot::referencing_through_parents`); every level is read.
    /// See [`CatalogSnapshot::referencing_below`]. A key added or dropped that references
    /// a partition moves the versions of the tables above it.
    pub fn referencing_below(
        &self,
        oid: Oid,
    ) -> Vec<(&'a Arc<TableDesc>, &'a Arc<TableDesc>, &'a ForeignKey)> {
        self.note(oid);
        let found = self.snap.referencing_below(oid);
        for (_, t, _) in &found {
            self.note(t.oid);
        }
        found
    }

    pub fn referencing_through_parents(
        &self,
        oid: Oid,
    ) -> Vec<(&'a Arc<TableDesc>, &'a ForeignKey)> {
        let mut at = self.snap.table_by_oid(oid);
        while let Some(t) = at {
            self.note(t.oid);
            at = t
                .partition_of
                .as_ref()
                .and_then(|o| self.snap.table_by_oid(o.parent));
        }
        let found = self.snap.referencing_through_parents(oid);
        for (t, _) in &found {
            self.note(t.oid);
        }
        found
    }

    /// The sequences table `oid` owns (part of its version).
    pub fn owned_sequences(
        &self,
        oid: Oid,
    ) -> impl Iterator<Item = &'a Arc<SequenceDesc>> + use<'a> {
        self.note(oid);
        let found: Vec<_> = self.snap.owned_sequences(oid).collect();
        for s in &found {
            self.note(s.oid);
        }
        found.into_iter()
    }
}
