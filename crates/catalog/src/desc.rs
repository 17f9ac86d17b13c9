//! Descriptors: the catalog's description of one table.

use common::DataType;
use common::ids::{Oid, RelId};

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDesc {
    pub name: String,
    pub ty: DataType,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text (PostgreSQL keeps it as a node tree in
    /// `pg_attrdef`; text keeps this layer free of the SQL front end, which re-binds it).
    pub default: Option<String>,
}

/// A btree index of a table. PRIMARY KEY and UNIQUE constraints are unique indexes with
/// `constraint` set (PostgreSQL keeps the constraint in `pg_constraint` and its index in
/// `pg_index`; here they are one object with one name, as users see them).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDesc {
    pub oid: Oid,
    /// The index's storage (`base/<rel>`).
    pub rel: RelId,
    /// Also the constraint's name for a constraint index (`t_pkey`, `t_a_key`).
    pub name: String,
    /// Column positions (0-based) in key order.
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    /// Backs a PRIMARY KEY or UNIQUE constraint (DROP INDEX refuses it).
    pub constraint: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableDesc {
    pub oid: Oid,
    /// The storage the table's rows live in (`base/<rel>`).
    pub rel: RelId,
    pub name: String,
    pub columns: Vec<ColumnDesc>,
    /// Every index of the table, constraint indexes first, in creation order.
    pub indexes: Vec<IndexDesc>,
    /// Storage parameters (`WITH (...)`).
    pub options: TableOptions,
    /// FOREIGN KEY constraints of this table (the tables it references keep no copy:
    /// [`crate::CatalogSnapshot::referencing`] finds these from their side).
    pub foreign_keys: Vec<ForeignKey>,
}

/// A table's storage parameters (PostgreSQL's `reloptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableOptions {
    /// How full (percent, 10..=100) INSERT fills a heap page before starting another: the
    /// rest stays free for updated versions of the page's rows.
    pub fillfactor: u8,
    /// `false` keeps autovacuum away from the table.
    pub autovacuum_enabled: bool,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            fillfactor: 100,
            autovacuum_enabled: true,
        }
    }
}

/// What a foreign key does when a referenced row's key is deleted or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    /// Error if referencing rows remain at the end of the statement.
    NoAction,
    /// Error at once if referencing rows exist.
    Restrict,
}

/// A FOREIGN KEY constraint: `columns` of this table reference `ref_columns` of table
/// `ref_table`, which have the unique index `ref_index`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKey {
    /// The constraint's OID (PostgreSQL's `pg_constraint.oid`).
    pub oid: Oid,
    pub name: String,
    /// Referencing column positions, in key order.
    pub columns: Vec<usize>,
    pub ref_table: Oid,
    /// The referenced columns, pairwise with `columns`.
    pub ref_columns: Vec<usize>,
    /// The unique index over exactly `ref_columns` that the check probes.
    pub ref_index: Oid,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    /// MATCH FULL: all referencing columns NULL or none (else MATCH SIMPLE: any NULL
    /// column exempts the row).
    pub match_full: bool,
}

impl TableDesc {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.ty).collect()
    }

    /// The unique indexes (constraint or not): what inserts and updates must check.
    pub fn unique_indexes(&self) -> impl Iterator<Item = &IndexDesc> {
        self.indexes.iter().filter(|i| i.unique)
    }
}

/// What CREATE INDEX asks for.
#[derive(Clone, Debug)]
pub struct NewIndex {
    pub name: Option<String>,
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// PostgreSQL's generated index name (`ChooseIndexName`): `<table>_<col>[_<col>...]_idx`.
pub(crate) fn default_index_name(table: &str, columns: &[ColumnDesc], index: &NewIndex) -> String {
    let cols: Vec<&str> = index
        .columns
        .iter()
        .map(|&i| columns[i].name.as_str())
        .collect();
    make_object_name(table, &cols.join("_"), "idx")
}

/// What CREATE TABLE asks for; the catalog assigns identifiers and missing names.
#[derive(Clone, Debug)]
pub struct NewTable {
    pub name: String,
    pub columns: Vec<ColumnDesc>,
    pub keys: Vec<NewKey>,
    pub options: TableOptions,
    /// SERIAL columns (by position): each gets a sequence `<table>_<column>_seq`, owned
    /// by the column, and the DEFAULT `nextval('<sequence>'::regclass)`.
    pub serials: Vec<(usize, SequenceOptions)>,
}

/// A sequence's parameters (CREATE SEQUENCE's options, with PostgreSQL's defaults
/// filled in and checked by the binder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequenceOptions {
    /// `AS smallint | integer | bigint`: the default bounds follow it.
    pub ty: DataType,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
}

impl SequenceOptions {
    /// PostgreSQL's defaults for a sequence of type `ty` counting by `increment`.
    pub fn defaults(ty: DataType, increment: i64) -> SequenceOptions {
        let type_max = match ty {
            DataType::Int2 => i16::MAX as i64,
            DataType::Int4 => i32::MAX as i64,
            _ => i64::MAX,
        };
        let (min, max) = if increment > 0 {
            (1, type_max)
        } else {
            (-type_max - 1, -1)
        };
        SequenceOptions {
            ty,
            start: if increment > 0 { min } else { max },
            increment,
            min,
            max,
            cache: 1,
            cycle: false,
        }
    }
}

/// A sequence (CREATE SEQUENCE, or a SERIAL column's).
#[derive(Clone, Debug, PartialEq)]
pub struct SequenceDesc {
    pub oid: Oid,
    /// The storage of its one page (`base/<rel>`).
    pub rel: RelId,
    pub name: String,
    pub options: SequenceOptions,
    /// `OWNED BY table.column`: dropped with the table (a SERIAL column's sequence).
    pub owned_by: Option<(Oid, usize)>,
}

/// `nextval('name'::regclass)`, as PostgreSQL shows a SERIAL column's default: the name
/// double-quoted where an identifier needs it, in a string literal.
pub fn nextval_default(sequence: &str) -> String {
    let plain = sequence
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && sequence
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let ident = if plain {
        sequence.to_string()
    } else {
        format!("\"{}\"", sequence.replace('"', "\"\""))
    };
    format!("nextval('{}'::regclass)", ident.replace('\'', "''"))
}

/// What ALTER TABLE ... ADD FOREIGN KEY asks for (checked by the caller against both
/// tables); the catalog assigns the OID and, if missing, the name.
#[derive(Clone, Debug)]
pub struct NewForeignKey {
    pub name: Option<String>,
    pub columns: Vec<usize>,
    pub ref_table: Oid,
    pub ref_columns: Vec<usize>,
    pub ref_index: Oid,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    pub match_full: bool,
}

#[derive(Clone, Debug)]
pub struct NewKey {
    pub name: Option<String>,
    pub columns: Vec<usize>,
    pub primary: bool,
}

/// PostgreSQL's generated constraint name: `<table>_pkey` or `<table>_<col>[_<col>...]_key`,
/// each part truncated so that the whole fits in an identifier.
pub(crate) fn default_key_name(table: &str, columns: &[ColumnDesc], key: &NewKey) -> String {
    let cols: Vec<&str> = key
        .columns
        .iter()
        .map(|&i| columns[i].name.as_str())
        .collect();
    let (middle, suffix) = if key.primary {
        (String::new(), "pkey")
    } else {
        (cols.join("_"), "key")
    };
    make_object_name(table, &middle, suffix)
}

impl NewForeignKey {
    /// The constraint, once it has its OID and name.
    pub fn named(&self, oid: Oid, name: String) -> ForeignKey {
        ForeignKey {
            oid,
            name,
            columns: self.columns.clone(),
            ref_table: self.ref_table,
            ref_columns: self.ref_columns.clone(),
            ref_index: self.ref_index,
            on_delete: self.on_delete,
            on_update: self.on_update,
            match_full: self.match_full,
        }
    }
}

/// PostgreSQL's generated foreign key name: `<table>_<col>[_<col>...]_fkey`.
pub(crate) fn default_fk_name(table: &str, columns: &[ColumnDesc], fk: &NewForeignKey) -> String {
    let cols: Vec<&str> = fk
        .columns
        .iter()
        .map(|&i| columns[i].name.as_str())
        .collect();
    make_object_name(table, &cols.join("_"), "fkey")
}

/// PostgreSQL's `makeObjectName`: shorten the longer of the two names until
/// `name1_name2_label` fits in `NAMEDATALEN - 1` bytes.
fn make_object_name(name1: &str, name2: &str, label: &str) -> String {
    let max = common::limits::MAX_IDENTIFIER_BYTES;
    let overhead = label.len() + 1 + if name2.is_empty() { 0 } else { 1 };
    let mut n1 = name1.len();
    let mut n2 = name2.len();
    while n1 + n2 + overhead > max {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let cut = |s: &str, mut n: usize| {
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_string()
    };
    let mut out = cut(name1, n1);
    if !name2.is_empty() {
        out.push('_');
        out.push_str(&cut(name2, n2));
    }
    out.push('_');
    out.push_str(label);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_like_postgres() {
        let t = "a".repeat(60);
        let name = make_object_name(&t, "", "pkey");
        assert_eq!(name.len(), 63);
        assert!(name.ends_with("_pkey"));
        assert_eq!(make_object_name("t", "a_b", "key"), "t_a_b_key");
    }
}
