//! The built-in functions and aggregates, as `pg_proc` lists them: PostgreSQL's OIDs,
//! names and signatures of the versions Myriad binds. The rows are generated from
//! PostgreSQL 15's catalog (`scripts/gen-pg-proc`, into `procs_data.rs`); the server test
//! `pg_proc_lists_what_binds` binds a call of each with its argument types and checks the
//! result type, so a row that the binder does not back fails the suite. Functions are
//! bound by hand-written code (`sql::binder`); this table is what SQL sees of them.

use common::Oid;

mod data {
    include!("procs_data.rs");
}

/// One built-in function (a row of `pg_proc`).
#[derive(Debug)]
pub struct BuiltinProc {
    pub oid: Oid,
    pub name: &'static str,
    /// `prokind`: 'f' a function, 'a' an aggregate.
    pub kind: char,
    /// The argument types (polymorphic ones as PostgreSQL's pseudo-types).
    pub args: &'static [Oid],
    /// The result type (of each row, for a set-returning function).
    pub ret: Oid,
    /// Returns a set of rows (`generate_series`, `unnest`).
    pub retset: bool,
    /// NULL for any NULL argument, without a call.
    pub strict: bool,
    /// `provolatile`: 'i' immutable, 's' stable, 'v' volatile.
    pub volatility: char,
    /// `proparallel`: 's' safe, 'r' restricted, 'u' unsafe.
    pub parallel: char,
    /// The arguments' names, for functions whose arguments have names (else empty).
    pub arg_names: &'static [&'static str],
    /// The defaults of the last arguments, as PostgreSQL prints them.
    pub defaults: &'static [&'static str],
}

/// Every built-in function, by OID.
pub fn builtin_procs() -> &'static [BuiltinProc] {
    data::BUILTIN_PROCS
}

/// The built-in function with OID `oid`.
pub fn builtin_proc(oid: Oid) -> Option<&'static BuiltinProc> {
    let all = data::BUILTIN_PROCS;
    all.binary_search_by_key(&oid, |p| p.oid)
        .ok()
        .map(|i| &all[i])
}

/// The polymorphic pseudo-types of built-in functions' signatures, by OID, with the
/// names `format_type` gives them.
pub const PSEUDO_TYPES: &[(Oid, &str)] = &[
    (2276, "\"any\""),
    (2277, "anyarray"),
    (2283, "anyelement"),
    (2776, "anynonarray"),
    (5077, "anycompatible"),
    (5078, "anycompatiblearray"),
];

impl BuiltinProc {
    /// `pg_get_function_arguments`: `double precision, integer`, with names and
    /// defaults where the function has them (`years integer DEFAULT 0, ...`).
    /// `type_name` names a type by OID.
    pub fn arguments(&self, type_name: impl Fn(Oid) -> String) -> String {
        let first_default = self.args.len() - self.defaults.len();
        self.args
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut s = String::new();
                if let Some(n) = self.arg_names.get(i) {
                    s.push_str(n);
                    s.push(' ');
                }
                s.push_str(&type_name(t));
                if i >= first_default {
                    s.push_str(" DEFAULT ");
                    s.push_str(self.defaults[i - first_default]);
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `pg_get_function_identity_arguments`: the arguments without their defaults.
    pub fn identity_arguments(&self, type_name: impl Fn(Oid) -> String) -> String {
        self.args
            .iter()
            .enumerate()
            .map(|(i, &t)| match self.arg_names.get(i) {
                Some(n) => format!("{n} {}", type_name(t)),
                None => type_name(t),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `pg_get_function_result`: the result type, `SETOF` for a set.
    pub fn result(&self, type_name: impl Fn(Oid) -> String) -> String {
        let t = type_name(self.ret);
        if self.retset { format!("SETOF {t}") } else { t }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_oid_order_and_well_formed() {
        let all = builtin_procs();
        assert!(all.windows(2).all(|w| w[0].oid < w[1].oid));
        for p in all {
            assert!(
                p.arg_names.is_empty() || p.arg_names.len() == p.args.len(),
                "{p:?}"
            );
            assert!(p.defaults.len() <= p.args.len(), "{p:?}");
            assert!(matches!(p.kind, 'f' | 'a') && matches!(p.volatility, 'i' | 's' | 'v'));
        }
        let now = all.iter().find(|p| p.name == "now").unwrap();
        assert_eq!(builtin_proc(now.oid).map(|p| p.name), Some("now"));
        assert!(builtin_proc(1).is_none());
    }

    #[test]
    fn argument_lists_print_as_postgres_does() {
        let names = |t: Oid| match t {
            23 => "integer".to_string(),
            701 => "double precision".to_string(),
            _ => t.to_string(),
        };
        let p = builtin_procs()
            .iter()
            .find(|p| p.name == "make_interval")
            .unwrap();
        assert_eq!(
            p.arguments(names),
            "years integer DEFAULT 0, months integer DEFAULT 0, weeks integer DEFAULT 0, \
             days integer DEFAULT 0, hours integer DEFAULT 0, mins integer DEFAULT 0, \
             secs double precision DEFAULT 0.0"
        );
        assert!(
            p.identity_arguments(names)
                .ends_with("mins integer, secs double precision")
        );
    }
}
