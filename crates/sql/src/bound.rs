//! Bound statements: names resolved, types known, implicit casts explicit.
//!
//! Expressions address their input row by position ([`ExprKind::Column`]); every node knows
//! its result type. A query is a tree of [`LogicalPlan`] operators that the planner turns
//! into an executable plan.

use std::sync::Arc;

use catalog::{NewTable, TableDesc};
use common::{DataType, PgError, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: DataType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Concat,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
    /// `~`: POSIX regular expression match (`!~` negated, `~*` / `!~*` case-insensitive).
    RegexMatch,
    RegexIMatch,
    NotRegexMatch,
    NotRegexIMatch,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }

    /// The operator as PostgreSQL spells it in `operator does not exist` errors.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Concat => "||",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::RegexMatch => "~",
            BinaryOp::RegexIMatch => "~*",
            BinaryOp::NotRegexMatch => "!~",
            BinaryOp::NotRegexIMatch => "!~*",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarFunc {
    Lower,
    Upper,
    Length,
    /// `octet_length` / `bit_length` of a string: its bytes (bits) in UTF-8.
    OctetLength,
    BitLength,
    Substr,
    /// `repeat(text, int)`: the string that many times (none for a count below 1).
    Repeat,
    // Mathematical functions. Each has a float8 version and a numeric one, picked by the
    // argument's type at bind time (`ExprKind::Func`'s type); the executor follows the
    // argument values' kind.
    Abs,
    /// `round(x)`, `round(numeric, int)`: float8 rounds half to even (`rint`), numeric
    /// half away from zero.
    Round,
    /// `trunc(x)`, `trunc(numeric, int)`.
    Trunc,
    /// `ceil(x)`, `ceiling(x)`.
    Ceil,
    Floor,
    Sign,
    Sqrt,
    Exp,
    Ln,
    /// `log(x)` (base 10), `log(b, x)` (numeric only).
    Log,
    /// `power(a, b)`, `pow(a, b)`, `a ^ b`.
    Power,
    /// `mod(a, b)`: integer or numeric, as `%`.
    Mod,
    /// `div(a, b)`: numeric quotient truncated towards zero.
    Div,
    /// `scale(numeric)`: the display scale.
    Scale,
    // Date/time functions. The clock readings take no arguments and are evaluated at
    // execution from the session clock (`common::datetime::session`), never bound as
    // constants: a prepared statement's binding outlives its transaction.
    /// `now()`: the transaction's start.
    Now,
    /// `CURRENT_TIMESTAMP`: `now()` under the name it was written with (a DEFAULT shows it).
    CurrentTimestamp,
    /// `transaction_timestamp()`: `now()` likewise.
    TransactionTimestamp,
    /// `statement_timestamp()`.
    StatementTimestamp,
    /// `clock_timestamp()`: the wall clock, read at each call.
    ClockTimestamp,
    /// `CURRENT_DATE`: the transaction's start date in the session's zone.
    CurrentDate,
    /// `LOCALTIMESTAMP`: the transaction's start as local wall-clock time.
    LocalTimestamp,
    /// `date_trunc(field, timestamp | timestamptz)`.
    DateTrunc,
    /// `date_part(field, x)`: float8.
    DatePart,
    /// `extract(field FROM x)`: numeric, as PostgreSQL 14 and later return it.
    Extract,
    /// `age(a, b)`; `age(a)` is bound as `age(CURRENT_DATE, a)`.
    Age,
    MakeDate,
    MakeTimestamp,
    MakeTimestampTz,
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`.
    MakeInterval,
    JustifyHours,
    JustifyDays,
    JustifyInterval,
    /// `to_timestamp(double precision)`: Unix seconds to timestamptz.
    ToTimestamp,
    /// `x AT TIME ZONE zone`, `timezone(zone, x)`: timestamp <-> timestamptz.
    AtTimeZone,
    // Sequence functions: volatile, evaluated at each call. The sequence is resolved at
    // bind time (its `regclass` argument is a constant in practice, as in a SERIAL
    // column's DEFAULT) and passed as the first argument, its OID as an int8 constant.
    /// `nextval(seq)`.
    NextVal,
    /// `currval(seq)`.
    CurrVal,
    /// `setval(seq, value [, is_called])`.
    SetVal,
    /// `lastval()`.
    LastVal,
    /// `gen_random_uuid()`: a version 4 UUID from a random source, at each call.
    GenRandomUuid,
    /// `pg_cancel_backend(pid)`: cancel that session's statement.
    PgCancelBackend,
    /// `pg_terminate_backend(pid [, timeout])`: end that session (waiting up to
    /// `timeout` ms for it to go).
    PgTerminateBackend,
    /// `random()`: a double precision value in [0, 1), a new one at each call.
    Random,
    /// `pg_sleep(seconds)`: wait, stopped by a cancel or statement_timeout; void.
    PgSleep,
    /// `pg_stat_force_next_flush()`: void. Myriad shares a transaction's counts when it
    /// ends, always (txn rule 10), so there is nothing to force.
    PgStatForceNextFlush,
    /// `pg_stat_reset()`: forget every table's and index's counts; void.
    PgStatReset,
    /// `pg_stat_reset_single_table_counters(oid)`: forget one table's or index's; void.
    PgStatResetSingleTableCounters,
    /// `pg_get_userbyid(oid)`: the role's name.
    PgGetUserById,
    /// `pg_table_is_visible(oid)`: whether the relation exists (every relation is in
    /// `public`, which is on every search path); NULL for no such relation.
    PgTableIsVisible,
    /// `pg_relation_size(rel)`: its main fork's bytes.
    PgRelationSize,
    /// `pg_table_size(rel)`: a table's bytes, with its free space and visibility maps and
    /// its TOAST relation's, without its indexes.
    PgTableSize,
    /// `pg_indexes_size(table)`: the bytes of the table's indexes.
    PgIndexesSize,
    /// `pg_column_size(value)` of a value not read from a table: the bytes it takes
    /// stored inline and uncompressed (a table's column is its scan's stored size: the
    /// binder's `column_size`).
    PgColumnSize,
    /// `pg_total_relation_size(rel)`: `pg_table_size` and its indexes' bytes.
    PgTotalRelationSize,
    /// `pg_size_pretty(bigint)`: bytes as PostgreSQL prints them (`10 kB`, `3 MB`).
    PgSizePretty,
    // Arrays (`executor::array`). The node's type is the result's; element arguments
    // have been coerced to the array's element type.
    /// `ARRAY[a, b, ...]`: one dimension over the elements, or one more over elements
    /// that are arrays themselves (which must then all have the same dimensions).
    ArrayCtor,
    /// `a[i]`, `a[i][j]`: the array, then one subscript per dimension given.
    Subscript,
    /// `x op ANY (array)`, or `op ALL` when `all`: the comparison `op` between `x` and
    /// each element, combined with three-valued OR (AND).
    ArrayCompare {
        op: BinaryOp,
        all: bool,
    },
    /// `array_length(a, dim)`.
    ArrayLength,
    ArrayUpper,
    ArrayLower,
    ArrayNdims,
    /// `array_dims(a)`: `[1:3]` text.
    ArrayDims,
    /// `cardinality(a)`: the number of elements over all dimensions.
    Cardinality,
    /// `array_to_string(a, sep [, null_string])`.
    ArrayToString,
    /// `array_position(a, x)`: the first subscript holding `x` (NULL matches NULL).
    ArrayPosition,
    ArrayAppend,
    ArrayPrepend,
    ArrayCat,
    ArrayRemove,
    /// `string_to_array(text, sep [, null_string])`.
    StringToArray,
    /// `a @> b`: every element of `b` is in `a`.
    ArrayContains,
    /// `a <@ b`.
    ArrayContained,
    /// `a && b`: some element in both.
    ArrayOverlap,
    // Catalog functions (`executor::catalog_funcs`).
    /// `format_type(type_oid, typmod)`: the SQL name of a type.
    FormatType,
    /// `pg_get_expr(expr, relation [, pretty])`: an expression a catalog keeps as text
    /// (`pg_attrdef.adbin`), shown as it is kept.
    PgGetExpr,
    /// `pg_get_indexdef(index [, column, pretty])`: the CREATE INDEX for an index, or
    /// the name of its key column `column` (1-based) when that is not 0.
    PgGetIndexDef,
    /// `pg_get_constraintdef(constraint [, pretty])`: `PRIMARY KEY (id)`, ...
    PgGetConstraintDef,
    /// `pg_get_statisticsobjdef_columns(oid)`: NULL, there are no statistics objects.
    PgGetStatisticsObjDefColumns,
    /// `pg_relation_is_publishable(regclass)`: true for a table.
    PgRelationIsPublishable,
    /// `pg_partition_ancestors(regclass)` as a `regclass[]` (FROM unnests it): the
    /// partition (or partitioned table), then its parents up to the root; empty for any
    /// other table.
    PgPartitionAncestors,
    /// `pg_get_partkeydef(oid)`: a partitioned table's key (`RANGE (a)`), else NULL.
    PgGetPartKeyDef,
    /// `pg_partition_root(regclass)`: the top of a partition tree.
    PgPartitionRoot,
    /// `pg_partition_tree(regclass)`'s rows, as a `regclass[]` of the relations (FROM
    /// unnests it): the table and every partition below it, level by level, each
    /// level's in OID order; empty for a table that is no partition.
    PgPartitionTree,
    /// `pg_partition_tree`'s `parentrelid`: a partition's parent, else NULL.
    PartitionParent,
    /// `pg_partition_tree`'s `isleaf`: whether the relation has no partitions of its own.
    PartitionIsLeaf,
    /// `pg_partition_tree`'s `level`: how far below the second argument the first is.
    PartitionLevel,
    /// The system column `tableoid` of a partitioned table's row: the leaf partition its
    /// key routes to, which is the one it is in (partition rule 2). Arguments: the
    /// partitioned table's oid, then the row's partition key columns.
    PartitionOfRow,
    /// `pg_get_partition_constraintdef(oid)`: what a partition's bounds require.
    PgGetPartitionConstraintDef,
    /// `pg_get_triggerdef(trigger [, pretty])`: NULL, as Myriad has no triggers.
    PgGetTriggerDef,
    /// `pg_encoding_to_char(encoding)`: an encoding's name (`UTF8`), '' for none.
    PgEncodingToChar,
    /// `col_description(table, column)`: a column's comment (from `pg_description`).
    ColDescription,
    /// `obj_description(object [, catalog])`: an object's comment.
    ObjDescription,
    /// `shobj_description(object, catalog)`: a shared object's comment.
    ShobjDescription,
    /// `pg_type_is_visible(type)`: every type Myriad has is in pg_catalog, on the path;
    /// NULL for no such type.
    PgTypeIsVisible,
    /// `pg_function_is_visible(function)`: every built-in function is in pg_catalog, on
    /// the path; NULL for no such function.
    PgFunctionIsVisible,
    /// `pg_get_function_arguments(function)`: its arguments as `\df` shows them, with
    /// names and defaults.
    PgGetFunctionArguments,
    /// `pg_get_function_identity_arguments(function)`: its arguments without defaults.
    PgGetFunctionIdentityArguments,
    /// `pg_get_function_result(function)`: its result type (`SETOF` for a set).
    PgGetFunctionResult,
    /// `quote_ident(text)`: the text as an identifier, double-quoted where needed.
    QuoteIdent,
    /// `current_setting(name [, missing_ok])`: a run-time setting as SHOW prints it.
    CurrentSetting,
    /// `set_config(name, value, is_local)`: SET as a function (volatile; not strict: a
    /// NULL value resets, a NULL is_local is false).
    SetConfig,
}

impl ScalarFunc {
    /// Is the function VOLATILE in PostgreSQL (see [`Expr::is_volatile`])?
    pub fn is_volatile(self) -> bool {
        use ScalarFunc as F;
        matches!(
            self,
            F::ClockTimestamp
                | F::NextVal
                | F::SetVal
                | F::GenRandomUuid
                | F::PgCancelBackend
                | F::PgTerminateBackend
                | F::PgSleep
                | F::PgStatForceNextFlush
                | F::PgStatReset
                | F::PgStatResetSingleTableCounters
                | F::Random
                | F::SetConfig
        )
    }

    /// Is the function IMMUTABLE in PostgreSQL for these arguments (see
    /// [`Expr::is_immutable`])? The clock, sequences, random values, settings and the
    /// catalog are not; neither is date and time arithmetic in the session's time zone.
    pub fn is_immutable(self, args: &[Expr]) -> bool {
        use ScalarFunc as F;
        let tz = args
            .iter()
            .any(|a| matches!(a.ty, DataType::TimestampTz(_)));
        match self {
            F::Now
            | F::CurrentTimestamp
            | F::TransactionTimestamp
            | F::StatementTimestamp
            | F::ClockTimestamp
            | F::CurrentDate
            | F::LocalTimestamp
            | F::NextVal
            | F::CurrVal
            | F::SetVal
            | F::LastVal
            | F::GenRandomUuid
            | F::PgCancelBackend
            | F::PgTerminateBackend
            | F::PgSleep
            | F::PgStatForceNextFlush
            | F::PgStatReset
            | F::PgStatResetSingleTableCounters
            | F::Random
            | F::MakeTimestampTz
            | F::AtTimeZone
            | F::CurrentSetting
            | F::SetConfig => false,
            // age(x) measures from today.
            F::Age => args.len() == 2 && !tz,
            // to_timestamp(text, format) reads the session's settings.
            F::ToTimestamp => args.len() == 1,
            F::DateTrunc | F::DatePart | F::Extract => !tz,
            F::PgGetUserById
            | F::PgTableIsVisible
            | F::PgRelationSize
            | F::PgTableSize
            | F::PgColumnSize
            | F::PgIndexesSize
            | F::PgTotalRelationSize
            | F::FormatType
            | F::PgGetExpr
            | F::PgGetIndexDef
            | F::PgGetConstraintDef
            | F::PgGetStatisticsObjDefColumns
            | F::PgRelationIsPublishable
            | F::PgPartitionAncestors
            | F::PgGetPartKeyDef
            | F::PgPartitionRoot
            | F::PartitionOfRow
            | F::PgPartitionTree
            | F::PartitionParent
            | F::PartitionIsLeaf
            | F::PartitionLevel
            | F::PgGetPartitionConstraintDef
            | F::PgGetTriggerDef
            | F::PgEncodingToChar
            | F::ColDescription
            | F::ObjDescription
            | F::ShobjDescription
            | F::PgTypeIsVisible
            | F::PgFunctionIsVisible
            | F::PgGetFunctionArguments
            | F::PgGetFunctionIdentityArguments
            | F::PgGetFunctionResult => false,
            _ => true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    /// `array_agg(x)`: the values in input order, NULL over no rows.
    ArrayAgg,
    /// `string_agg(text, sep)`: the non-NULL values joined, NULL over none.
    StringAgg,
}

/// One aggregate call, computed by an [`LogicalPlan::Aggregate`] node.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    /// The argument, over the aggregate's input row (None for `count(*)`).
    pub arg: Option<Expr>,
    /// `string_agg`'s separator, over the same row (the one before each value).
    pub sep: Option<Expr>,
    /// `agg(x ORDER BY ...)`: the order the values reach the aggregate in.
    pub order_by: Vec<SortKey>,
    pub distinct: bool,
    pub ty: DataType,
}

impl AggCall {
    /// The expressions the aggregate reads from its input row.
    pub fn inputs(&self) -> impl Iterator<Item = &Expr> {
        self.arg
            .iter()
            .chain(self.sep.iter())
            .chain(self.order_by.iter().map(|k| &k.expr))
    }

    fn inputs_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.arg
            .iter_mut()
            .chain(self.sep.iter_mut())
            .chain(self.order_by.iter_mut().map(|k| &mut k.expr))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Const(Value),
    /// A column of the input row, by position.
    Column(usize),
    /// A parameter of a prepared statement (`$n` is `Param(n - 1)`). Its node type is
    /// what the context resolved it to; the server substitutes the value
    /// ([`BoundStatement::for_each_expr_mut`]) before planning, so the planner and
    /// executor never see one.
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `IS [NOT] TRUE/FALSE/UNKNOWN`: `value` None is UNKNOWN.
    IsBool {
        expr: Box<Expr>,
        value: Option<bool>,
        negated: bool,
    },
    IsDistinctFrom {
        left: Box<Expr>,
        right: Box<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
        case_insensitive: bool,
    },
    /// `expr IN (list)`; every element already has `expr`'s type.
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Case {
        whens: Vec<(Expr, Expr)>,
        else_result: Box<Expr>,
    },
    Coalesce(Vec<Expr>),
    NullIf(Box<Expr>, Box<Expr>),
    /// A conversion to `ty` of this node; `explicit` casts truncate over-long strings
    /// silently, assignment casts report 22001.
    Cast {
        expr: Box<Expr>,
        explicit: bool,
    },
    Func(ScalarFunc, Vec<Expr>),
    /// An aggregate call while binding; replaced by a column of the aggregate's output
    /// before binding finishes.
    Agg(Box<AggCall>),
    /// A subquery used as a value (PostgreSQL's SubLink).
    SubLink(Box<SubLink>),
    /// Inside a subquery: the value of the enclosing [`SubLink`]'s `args[i]`, a column
    /// of the outer query's row (a correlated reference); inside a LATERAL join's right
    /// side, of its `lateral[i]` over the left row.
    Outer(usize),
}

/// A subquery in an expression: `EXISTS (...)`, `(...)` as a scalar, or `x op ANY/ALL
/// (...)` (`IN` is `= ANY`, `NOT IN` is its negation).
#[derive(Clone, Debug, PartialEq)]
pub struct SubLink {
    pub kind: SubLinkKind,
    /// The subquery (one output column, except under EXISTS). Shared, so that the
    /// executor can key what it keeps per subquery (its plan, and an uncorrelated
    /// subquery's result) by it while the statement runs.
    pub query: Arc<LogicalPlan>,
    /// What the subquery reads of the outer query, over the outer row; inside the
    /// subquery `ExprKind::Outer(i)` is `args[i]`'s value. Empty for an uncorrelated
    /// subquery, whose result does not change from row to row.
    pub args: Vec<Expr>,
}

impl JoinKind {
    /// Whether the join returns only its left side's columns (a semi or anti join).
    pub fn left_only(self) -> bool {
        matches!(self, JoinKind::Semi | JoinKind::Anti)
    }
}

impl SubLink {
    /// Replace the expressions over the outer row, the quantified test and each outer
    /// value, by `f(expr, is_outer_value)`.
    pub fn try_map_outer(
        &mut self,
        f: &mut dyn FnMut(Expr, bool) -> common::PgResult<Expr>,
    ) -> common::PgResult<()> {
        if let SubLinkKind::Quantified { test, .. } = &mut self.kind {
            let t = std::mem::replace(&mut **test, Expr::constant(Value::Null, DataType::Unknown));
            **test = f(t, false)?;
        }
        self.args = std::mem::take(&mut self.args)
            .into_iter()
            .map(|a| f(a, true))
            .collect::<common::PgResult<_>>()?;
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SubLinkKind {
    /// True when the subquery returns a row.
    Exists,
    /// The one value of the subquery's one row (NULL for no row; 21000 for more).
    Scalar,
    /// `ARRAY(subquery)`: the subquery's values, in its order, as one array (empty for
    /// no rows).
    Array,
    /// `test op ANY (subquery)`, or `test op ALL (subquery)` when `all`: `cmp` over the
    /// two-value row `[test's value, a subquery row's value]`, combined over the rows
    /// with SQL's three-valued OR (ANY) or AND (ALL).
    Quantified {
        all: bool,
        test: Box<Expr>,
        cmp: Box<Expr>,
    },
}

impl Expr {
    pub fn new(kind: ExprKind, ty: DataType) -> Expr {
        Expr { kind, ty }
    }

    pub fn constant(value: Value, ty: DataType) -> Expr {
        Expr::new(ExprKind::Const(value), ty)
    }

    pub fn column(index: usize, ty: DataType) -> Expr {
        Expr::new(ExprKind::Column(index), ty)
    }

    /// Does this expression always give the same value for the same row, whatever the
    /// session, the clock, the time zone or the database holds (PostgreSQL's IMMUTABLE)?
    /// What an index predicate or an index expression may be. Conservative: anything
    /// that mixes `timestamptz` with another type reads the session's time zone.
    pub fn is_immutable(&self) -> bool {
        let mut ok = true;
        self.walk(&mut |e| {
            let tz = |t: &DataType| matches!(t, DataType::TimestampTz(_));
            ok &= match &e.kind {
                ExprKind::Param(_) | ExprKind::Outer(_) => false,
                ExprKind::SubLink(_) | ExprKind::Agg(_) => false,
                ExprKind::Func(f, args) => f.is_immutable(args),
                ExprKind::Cast { expr, .. } => tz(&expr.ty) == tz(&e.ty),
                ExprKind::Binary(_, l, r) => tz(&l.ty) == tz(&r.ty),
                _ => true,
            };
        });
        ok
    }

    /// Does evaluating this expression twice risk two answers, or a side effect twice
    /// (PostgreSQL's VOLATILE: `random()`, `nextval()`, `clock_timestamp()`)?
    pub fn is_volatile(&self) -> bool {
        let mut volatile = false;
        self.walk(&mut |e| {
            volatile |= matches!(&e.kind, ExprKind::Func(f, _) if f.is_volatile());
        });
        volatile
    }

    /// Visit this node and all its children (including aggregate arguments).
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        self.for_each_child(&mut |c| c.walk(f));
    }

    /// Visit this node's children (not their children).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Const(_) | ExprKind::Column(_) | ExprKind::Param(_) | ExprKind::Outer(_) => {}
            ExprKind::Neg(e) | ExprKind::Not(e) | ExprKind::Cast { expr: e, .. } => f(e),
            // The subquery's own expressions read its rows, not this one: only the test
            // and the outer values are children here.
            ExprKind::SubLink(link) => {
                if let SubLinkKind::Quantified { test, .. } = &link.kind {
                    f(test);
                }
                link.args.iter().for_each(f);
            }
            ExprKind::IsNull { expr, .. } | ExprKind::IsBool { expr, .. } => f(expr),
            ExprKind::Binary(_, l, r)
            | ExprKind::IsDistinctFrom {
                left: l, right: r, ..
            }
            | ExprKind::NullIf(l, r) => {
                f(l);
                f(r);
            }
            ExprKind::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                f(expr);
                f(pattern);
                if let Some(e) = escape {
                    f(e);
                }
            }
            ExprKind::InList { expr, list, .. } => {
                f(expr);
                list.iter().for_each(f);
            }
            ExprKind::Case { whens, else_result } => {
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                f(else_result);
            }
            ExprKind::Coalesce(list) | ExprKind::Func(_, list) => list.iter().for_each(f),
            ExprKind::Agg(call) => call.inputs().for_each(f),
        }
    }

    pub fn contains_agg(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e.kind, ExprKind::Agg(_)));
        found
    }

    pub fn references_columns(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e.kind, ExprKind::Column(_)));
        found
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    /// The left side's unmatched rows NULL-padded. (The binder makes a RIGHT join a LEFT
    /// join of the sides swapped, under a projection that puts the columns back.)
    Left,
    /// Both sides' unmatched rows NULL-padded.
    Full,
    /// The right side's unmatched rows NULL-padded: only in plans (PostgreSQL's Hash
    /// Right Join, hashing a LEFT join's preserved side); the binder makes a RIGHT JOIN a
    /// LEFT join of its sides swapped.
    Right,
    /// Each left row that some right row matches, once, without the right columns
    /// (the planner makes one of `EXISTS (...)` and `x IN (...)`).
    Semi,
    /// Each left row that no right row matches, without the right columns (`NOT
    /// EXISTS (...)`).
    Anti,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
    pub nulls_first: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LogicalPlan {
    /// One of Myriad's system views (`catalog::SystemView`), filled at run time.
    SystemView {
        view: catalog::SystemView,
        table: Arc<TableDesc>,
    },
    /// Every row of a table, all columns in table order.
    Scan {
        table: Arc<TableDesc>,
    },
    /// `SELECT ... FROM seq`: a sequence's one row (`last_value`, `log_cnt`,
    /// `is_called`); `table` describes those columns for the scope.
    Sequence {
        seq: Arc<catalog::SequenceDesc>,
        table: Arc<TableDesc>,
    },
    /// Literal rows (VALUES, or the single empty row of a SELECT without FROM).
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    /// `unnest(array)` in FROM, or another set-returning function `func` computed as an
    /// array: one row per element, in storage order (every dimension flattened), in one
    /// column of the element type, then (WITH ORDINALITY) the row's number as bigint.
    Unnest {
        array: Expr,
        func: &'static str,
        ordinality: bool,
    },
    /// `generate_series(start, stop [, step])` in FROM: one column of `start`'s type
    /// (int4 or int8), the values from `start` towards `stop` by `step` (default 1).
    GenerateSeries {
        start: Expr,
        stop: Expr,
        step: Option<Expr>,
    },
    Filter {
        input: Box<LogicalPlan>,
        predicate: Expr,
    },
    Project {
        input: Box<LogicalPlan>,
        exprs: Vec<Expr>,
    },
    /// Output: left columns then right columns.
    Join {
        left: Box<LogicalPlan>,
        right: Box<LogicalPlan>,
        kind: JoinKind,
        on: Option<Expr>,
        /// A LATERAL right side (a subquery or function in FROM that reads columns to
        /// its left): what it reads, over the left row; inside it `ExprKind::Outer(i)`
        /// is `lateral[i]`'s value, and it runs again for each left row. Empty for a
        /// plain join.
        lateral: Vec<Expr>,
        /// Written with JOIN (`JOIN ... ON`, `CROSS JOIN`, ...), not as a comma in a FROM
        /// list: the planner reorders it only within `join_collapse_limit`.
        explicit: bool,
    },
    /// Output: the group keys, then the aggregate results.
    Aggregate {
        input: Box<LogicalPlan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    Sort {
        input: Box<LogicalPlan>,
        keys: Vec<SortKey>,
    },
    Distinct {
        input: Box<LogicalPlan>,
    },
    /// `left UNION | INTERSECT | EXCEPT [ALL] right`: both inputs have the same width and
    /// column types (the binder cast each side to the common types).
    SetOp {
        kind: SetOpKind,
        all: bool,
        left: Box<LogicalPlan>,
        right: Box<LogicalPlan>,
    },
    Limit {
        input: Box<LogicalPlan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// SELECT ... FOR UPDATE / FOR SHARE (and the KEY forms): lock each input row's version of `table`
    /// (its address is column `tid_column`, and the oid of the table it is in, a
    /// partition's under a partitioned table, the column after) before passing it on. A row a concurrent
    /// transaction updated meanwhile is, under READ COMMITTED, replaced by its newest
    /// version if that still passes `recheck` (the WHERE clause, over the table's row),
    /// and re-projected with `exprs` (over the table's row plus its address).
    LockRows {
        input: Box<LogicalPlan>,
        table: Arc<TableDesc>,
        tid_column: usize,
        /// FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE or FOR KEY SHARE.
        mode: common::RowLockMode,
        wait: RowWait,
        recheck: Option<Expr>,
        exprs: Vec<Expr>,
    },
}

/// A set operation between two queries' rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

impl SetOpKind {
    /// The keyword, as PostgreSQL's messages name the operation.
    pub fn keyword(self) -> &'static str {
        match self {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        }
    }
}

/// What a row lock does when another transaction holds the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWait {
    /// Wait for it.
    Block,
    /// Fail at once (55P03).
    Nowait,
    /// Leave the row out.
    SkipLocked,
}

/// A column of a statement's result.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputColumn {
    pub name: std::sync::Arc<str>,
    pub ty: DataType,
    /// The table and column it comes from, for RowDescription (0 when computed).
    pub table_oid: u32,
    pub column_number: i16,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BoundQuery {
    pub plan: LogicalPlan,
    pub columns: Vec<OutputColumn>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Returning {
    /// Over the table's row (the new row for INSERT/UPDATE, the old one for DELETE).
    pub exprs: Vec<Expr>,
    pub columns: Vec<OutputColumn>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BoundInsert {
    pub table: Arc<TableDesc>,
    /// Rows as wide as the table, in table column order, already cast to column types.
    pub source: LogicalPlan,
    pub returning: Option<Returning>,
    pub fks: ForeignKeyChecks,
    pub checks: Vec<BoundCheck>,
    pub index_exprs: Vec<BoundIndexExprs>,
}

/// A CHECK constraint as a write evaluates it: its condition over the table's row.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundCheck {
    pub name: String,
    pub expr: Expr,
}

/// What a write evaluates, over the table's row, for a partial or expression index: a
/// new row gets an entry only where `predicate` is true, and its key's expressions are
/// `keys` (in order of the index's `exprs`).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundIndexExprs {
    pub index: common::Oid,
    pub predicate: Option<Expr>,
    pub keys: Vec<Expr>,
}

/// The foreign keys a write must check, resolved when it is bound (a key added to or
/// dropped from another table moves the version of the table it references, so a cached
/// binding is redone). The other tables are
/// locked RowShare with the statement, as PostgreSQL's referential checks lock them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForeignKeyChecks {
    /// The written table's keys, each with the table it references: a new or changed
    /// row must reference a row that exists.
    pub outgoing: Vec<(catalog::ForeignKey, Arc<TableDesc>)>,
    /// Other tables' keys that reference the written table, each with its table: a
    /// removed or changed key must not be referenced.
    pub incoming: Vec<(catalog::ForeignKey, Arc<TableDesc>)>,
    /// Keys that reference a partition below the written table: (that partition, the
    /// key, its table). A removed or changed key of a row in the partition must not be
    /// referenced.
    pub incoming_below: Vec<(Arc<TableDesc>, catalog::ForeignKey, Arc<TableDesc>)>,
}

impl ForeignKeyChecks {
    pub fn is_empty(&self) -> bool {
        self.outgoing.is_empty() && self.incoming.is_empty() && self.incoming_below.is_empty()
    }

    /// Whether removed or changed keys are checked (`incoming` or `incoming_below`).
    pub fn checks_removals(&self) -> bool {
        !self.incoming.is_empty() || !self.incoming_below.is_empty()
    }

    /// The other tables involved, for locking.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableDesc>> {
        self.outgoing
            .iter()
            .chain(&self.incoming)
            .map(|(_, t)| t)
            .chain(self.incoming_below.iter().map(|(_, _, t)| t))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BoundUpdate {
    pub table: Arc<TableDesc>,
    pub filter: Option<Expr>,
    /// (column position, new value over the old row), already cast to the column type.
    pub assignments: Vec<(usize, Expr)>,
    pub returning: Option<Returning>,
    pub fks: ForeignKeyChecks,
    pub checks: Vec<BoundCheck>,
    pub index_exprs: Vec<BoundIndexExprs>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BoundDelete {
    pub table: Arc<TableDesc>,
    pub filter: Option<Expr>,
    pub returning: Option<Returning>,
    pub fks: ForeignKeyChecks,
}

/// Which part of DETACH PARTITION a statement does (partition rule 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetachStep {
    /// Plain DETACH: all of it, under AccessExclusive on the parent.
    Whole,
    /// CONCURRENTLY's first transaction: the partition marked pending, out of its
    /// parent's directory, and given its partition constraint as a CHECK.
    Mark,
    /// CONCURRENTLY's second transaction, or FINALIZE: a pending partition detached.
    Finish,
}

/// `PARTITION OF parent FOR VALUES ...` as bound.
#[derive(Clone, Debug)]
pub struct BoundPartitionOf {
    pub parent: Arc<TableDesc>,
    /// The types of the parent's key parts: what the bound's values are of.
    pub key_types: Vec<common::DataType>,
    pub spec: BoundPartitionSpec,
}

/// A partition bound whose values are constant expressions of the key columns' types.
#[derive(Clone, Debug)]
pub enum BoundPartitionSpec {
    Range {
        from: Vec<BoundDatum>,
        to: Vec<BoundDatum>,
    },
    List(Vec<Expr>),
    Hash {
        modulus: u32,
        remainder: u32,
    },
    Default,
}

/// One value of a range bound.
#[derive(Clone, Debug)]
pub enum BoundDatum {
    MinValue,
    MaxValue,
    Value(Expr),
}

#[derive(Clone, Debug)]
pub enum BoundStatement {
    Query(BoundQuery),
    Insert(BoundInsert),
    Update(BoundUpdate),
    Delete(BoundDelete),
    /// CREATE TABLE, with the other tables its foreign keys reference (locked, as
    /// PostgreSQL does, against changes to their keys while the table is made).
    CreateTable {
        new: NewTable,
        referenced: Vec<Arc<TableDesc>>,
        /// `PARTITION OF`: the parent (locked AccessExclusive, as PostgreSQL does) and
        /// the bound, evaluated and checked when the statement runs.
        partition_of: Option<BoundPartitionOf>,
    },
    /// ALTER TABLE parent ATTACH PARTITION table FOR VALUES ...: `table` becomes the
    /// partition `of` describes (its parent locked AccessExclusive).
    AttachPartition {
        table: Arc<TableDesc>,
        of: BoundPartitionOf,
    },
    /// ALTER TABLE parent DETACH PARTITION table: `table` is a table of its own again,
    /// at once or in the steps of CONCURRENTLY (partition rule 6).
    DetachPartition {
        parent: Arc<TableDesc>,
        table: Arc<TableDesc>,
        step: DetachStep,
    },
    /// CREATE SEQUENCE, DROP SEQUENCE.
    Sequence(SequenceDdl),
    /// EXPLAIN [ANALYZE] of a query, INSERT, UPDATE or DELETE.
    Explain {
        options: ExplainOptions,
        inner: Box<BoundStatement>,
        /// One text column, `QUERY PLAN`.
        columns: Vec<OutputColumn>,
    },
    DropTables {
        tables: Vec<Arc<TableDesc>>,
        notices: Vec<PgError>,
        /// DROP ... CASCADE: foreign keys of other tables referencing these, dropped
        /// first.
        foreign_keys: Vec<(Arc<TableDesc>, catalog::ForeignKey)>,
        /// The parents of partitions that go while their parent stays: locked
        /// AccessExclusive (partition rule 5).
        partition_parents: Vec<Arc<TableDesc>>,
    },
    CreateIndex {
        table: Arc<TableDesc>,
        index: catalog::NewIndex,
        /// Its predicate and expressions bound over the table's row: the rows the build
        /// gives entries, and their keys (`index` 0: it has no OID yet).
        bound: BoundIndexExprs,
    },
    /// LOCK TABLE: the session takes `mode` on each table, in order, and holds it to
    /// transaction end (the server does it; nothing to plan).
    Lock {
        tables: Vec<Arc<TableDesc>>,
        mode: sqlparser::ast::LockTableMode,
        nowait: bool,
    },
    /// COPY ... FROM STDIN: the session feeds it the data.
    CopyFrom(BoundCopyFrom),
    /// COPY table | (query) TO STDOUT.
    CopyTo {
        query: BoundQuery,
        format: CopyFormat,
    },
    /// TRUNCATE: every row of each table goes, in this transaction (a rollback
    /// restores them).
    Truncate {
        tables: Vec<Arc<TableDesc>>,
        /// RESTART IDENTITY: the sequences the tables own, back to their start.
        restart: Vec<Arc<catalog::SequenceDesc>>,
    },
    /// DROP INDEX: each index with its table, and notices for IF EXISTS.
    DropIndexes {
        indexes: Vec<(Arc<TableDesc>, catalog::IndexDesc)>,
        notices: Vec<PgError>,
    },
    /// ALTER TABLE ADD COLUMN: the new column, last. `fill` is its DEFAULT, computed
    /// for each row already stored (without one they read NULL).
    AddColumn {
        table: Arc<TableDesc>,
        column: catalog::ColumnDesc,
        fill: Option<Expr>,
    },
    /// ALTER TABLE ALTER COLUMN SET / DROP DEFAULT, SET / DROP NOT NULL, RENAME COLUMN,
    /// RENAME TO: the table's descriptor changes (SET NOT NULL checks the rows first).
    ChangeTable {
        table: Arc<TableDesc>,
        change: catalog::TableChange,
        /// Warnings the statement gives when it succeeds.
        notices: Vec<common::PgError>,
        /// ALTER TABLE ONLY: a partitioned table's change stays its own (a default, a
        /// statistics target), where it would reach its partitions.
        only: bool,
    },
    /// ALTER TABLE ADD PRIMARY KEY | UNIQUE.
    AddKey {
        table: Arc<TableDesc>,
        key: catalog::NewKey,
    },
    /// ALTER TABLE ADD FOREIGN KEY: `fk.ref_table` is filled from `referenced`.
    AddForeignKey {
        table: Arc<TableDesc>,
        referenced: Arc<TableDesc>,
        fk: catalog::NewForeignKey,
    },
    /// ALTER TABLE ADD CHECK: unless NOT VALID, the stored rows are checked first
    /// (`condition` is the check bound over the table's row).
    AddCheck {
        table: Arc<TableDesc>,
        check: catalog::NewCheck,
        condition: Expr,
    },
    DropConstraint(ConstraintDrop),
    Comment(CommentOn),
    DropColumn(ColumnDrop),
    /// A statement with nothing to do but report (`CREATE ... IF NOT EXISTS` of what
    /// exists, `ALTER TABLE IF EXISTS` of what does not).
    Nothing {
        tag: &'static str,
        notices: Vec<PgError>,
    },
}

impl BoundStatement {
    /// DDL, TRUNCATE, LOCK TABLE, COPY FROM and the like: run as bound, around the
    /// planner (`executor::commands`), as PostgreSQL's ProcessUtility runs them. The
    /// others (queries, DML, EXPLAIN, COPY TO) are planned.
    pub fn is_utility(&self) -> bool {
        !matches!(
            self,
            BoundStatement::Query(_)
                | BoundStatement::Insert(_)
                | BoundStatement::Update(_)
                | BoundStatement::Delete(_)
                | BoundStatement::Explain { .. }
                | BoundStatement::CopyTo { .. }
        )
    }
}

/// COMMENT ON a table, column or index of `table` (`catalog::Comment`'s `object` and
/// `sub`); None removes it.
#[derive(Clone, Debug)]
pub struct CommentOn {
    pub table: Arc<TableDesc>,
    pub object: common::Oid,
    pub sub: i32,
    pub text: Option<String>,
}

/// ALTER TABLE DROP COLUMN: `column` of `table`, after (CASCADE) the foreign keys of
/// other tables that reference it.
#[derive(Clone, Debug)]
pub struct ColumnDrop {
    pub table: Arc<TableDesc>,
    pub column: usize,
    pub dependents: Vec<(Arc<TableDesc>, catalog::ForeignKey)>,
    pub notices: Vec<common::PgError>,
}

/// ALTER TABLE DROP CONSTRAINT.
#[derive(Clone, Debug)]
pub enum ConstraintDrop {
    /// A CHECK constraint of `table`.
    Check {
        table: Arc<TableDesc>,
        check: common::Oid,
    },
    /// A foreign key of `table` (`referenced` is locked too, as PostgreSQL does).
    ForeignKey {
        table: Arc<TableDesc>,
        fk: common::Oid,
        referenced: Option<Arc<TableDesc>>,
    },
    /// A PRIMARY KEY or UNIQUE constraint and its index, and (CASCADE) the foreign keys
    /// that reference it, which go first.
    Key {
        table: Arc<TableDesc>,
        index: catalog::IndexDesc,
        dependents: Vec<(Arc<TableDesc>, catalog::ForeignKey)>,
    },
}

impl Expr {
    /// Rebuild this node with each direct child replaced by `f(child)`.
    pub fn try_map_children(
        self,
        f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>,
    ) -> common::PgResult<Expr> {
        let mut bx = |e: Box<Expr>| -> common::PgResult<Box<Expr>> { Ok(Box::new(f(*e)?)) };
        let kind = match self.kind {
            k @ (ExprKind::Const(_)
            | ExprKind::Column(_)
            | ExprKind::Param(_)
            | ExprKind::Outer(_)) => k,
            ExprKind::SubLink(mut link) => {
                link.try_map_outer(&mut |e, _| f(e))?;
                ExprKind::SubLink(link)
            }
            ExprKind::Neg(e) => ExprKind::Neg(bx(e)?),
            ExprKind::Not(e) => ExprKind::Not(bx(e)?),
            ExprKind::Cast { expr, explicit } => ExprKind::Cast {
                expr: bx(expr)?,
                explicit,
            },
            ExprKind::IsNull { expr, negated } => ExprKind::IsNull {
                expr: bx(expr)?,
                negated,
            },
            ExprKind::IsBool {
                expr,
                value,
                negated,
            } => ExprKind::IsBool {
                expr: bx(expr)?,
                value,
                negated,
            },
            ExprKind::Binary(op, l, r) => ExprKind::Binary(op, bx(l)?, bx(r)?),
            ExprKind::IsDistinctFrom {
                left,
                right,
                negated,
            } => ExprKind::IsDistinctFrom {
                left: bx(left)?,
                right: bx(right)?,
                negated,
            },
            ExprKind::NullIf(l, r) => ExprKind::NullIf(bx(l)?, bx(r)?),
            ExprKind::Like {
                expr,
                pattern,
                escape,
                negated,
                case_insensitive,
            } => ExprKind::Like {
                expr: bx(expr)?,
                pattern: bx(pattern)?,
                escape: escape.map(&mut bx).transpose()?,
                negated,
                case_insensitive,
            },
            ExprKind::InList {
                expr,
                list,
                negated,
            } => ExprKind::InList {
                expr: bx(expr)?,
                list: list
                    .into_iter()
                    .map(&mut *f)
                    .collect::<common::PgResult<_>>()?,
                negated,
            },
            ExprKind::Case { whens, else_result } => {
                let mut out = Vec::with_capacity(whens.len());
                for (w, t) in whens {
                    out.push((f(w)?, f(t)?));
                }
                ExprKind::Case {
                    whens: out,
                    else_result: Box::new(f(*else_result)?),
                }
            }
            ExprKind::Coalesce(list) => ExprKind::Coalesce(
                list.into_iter()
                    .map(&mut *f)
                    .collect::<common::PgResult<_>>()?,
            ),
            ExprKind::Func(func, list) => ExprKind::Func(
                func,
                list.into_iter()
                    .map(&mut *f)
                    .collect::<common::PgResult<_>>()?,
            ),
            ExprKind::Agg(mut call) => {
                for e in call.inputs_mut() {
                    let old = std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
                    *e = f(old)?;
                }
                ExprKind::Agg(call)
            }
        };
        Ok(Expr { kind, ty: self.ty })
    }
}

impl LogicalPlan {
    /// Call `f` on every top-level expression of this plan and its inputs (children of
    /// an expression are `f`'s to visit).
    pub fn for_each_expr_mut(
        &mut self,
        f: &mut dyn FnMut(&mut Expr) -> common::PgResult<()>,
    ) -> common::PgResult<()> {
        match self {
            LogicalPlan::SystemView { .. }
            | LogicalPlan::Scan { .. }
            | LogicalPlan::Sequence { .. } => {}
            LogicalPlan::Values { rows, .. } => {
                for e in rows.iter_mut().flatten() {
                    f(e)?;
                }
            }
            LogicalPlan::Unnest { array, .. } => f(array)?,
            LogicalPlan::GenerateSeries { start, stop, step } => {
                f(start)?;
                f(stop)?;
                step.iter_mut().try_for_each(&mut *f)?;
            }
            LogicalPlan::Filter { input, predicate } => {
                input.for_each_expr_mut(f)?;
                f(predicate)?;
            }
            LogicalPlan::Project { input, exprs } => {
                input.for_each_expr_mut(f)?;
                exprs.iter_mut().try_for_each(&mut *f)?;
            }
            LogicalPlan::Join {
                left,
                right,
                on,
                lateral,
                ..
            } => {
                left.for_each_expr_mut(f)?;
                right.for_each_expr_mut(f)?;
                on.iter_mut().try_for_each(&mut *f)?;
                lateral.iter_mut().try_for_each(&mut *f)?;
            }
            LogicalPlan::Aggregate {
                input,
                group_by,
                aggs,
            } => {
                input.for_each_expr_mut(f)?;
                group_by.iter_mut().try_for_each(&mut *f)?;
                aggs.iter_mut()
                    .flat_map(|a| a.inputs_mut())
                    .try_for_each(&mut *f)?;
            }
            LogicalPlan::Sort { input, keys } => {
                input.for_each_expr_mut(f)?;
                keys.iter_mut().try_for_each(|k| f(&mut k.expr))?;
            }
            LogicalPlan::Distinct { input } => input.for_each_expr_mut(f)?,
            LogicalPlan::SetOp { left, right, .. } => {
                left.for_each_expr_mut(f)?;
                right.for_each_expr_mut(f)?;
            }
            LogicalPlan::Limit {
                input,
                limit,
                offset,
            } => {
                input.for_each_expr_mut(f)?;
                limit.iter_mut().try_for_each(&mut *f)?;
                offset.iter_mut().try_for_each(&mut *f)?;
            }
            LogicalPlan::LockRows {
                input,
                recheck,
                exprs,
                ..
            } => {
                input.for_each_expr_mut(f)?;
                recheck.iter_mut().try_for_each(&mut *f)?;
                exprs.iter_mut().try_for_each(&mut *f)?;
            }
        }
        Ok(())
    }
}

impl BoundStatement {
    /// Call `f` on every top-level expression of the statement: how a prepared
    /// statement's parameter types are collected and its values substituted.
    pub fn for_each_expr_mut(
        &mut self,
        f: &mut dyn FnMut(&mut Expr) -> common::PgResult<()>,
    ) -> common::PgResult<()> {
        let returning =
            |r: &mut Option<Returning>, f: &mut dyn FnMut(&mut Expr) -> common::PgResult<()>| {
                r.iter_mut()
                    .flat_map(|r| r.exprs.iter_mut())
                    .try_for_each(f)
            };
        match self {
            BoundStatement::Query(q) | BoundStatement::CopyTo { query: q, .. } => {
                q.plan.for_each_expr_mut(f)
            }
            BoundStatement::CopyFrom(c) => c.defaults.iter_mut().try_for_each(f),
            BoundStatement::Insert(i) => {
                i.source.for_each_expr_mut(f)?;
                returning(&mut i.returning, f)
            }
            BoundStatement::Update(u) => {
                u.filter.iter_mut().try_for_each(&mut *f)?;
                u.assignments.iter_mut().try_for_each(|(_, e)| f(e))?;
                returning(&mut u.returning, f)
            }
            BoundStatement::Delete(d) => {
                d.filter.iter_mut().try_for_each(&mut *f)?;
                returning(&mut d.returning, f)
            }
            BoundStatement::Explain { inner, .. } => inner.for_each_expr_mut(f),
            BoundStatement::CreateTable { .. }
            | BoundStatement::AttachPartition { .. }
            | BoundStatement::DetachPartition { .. }
            | BoundStatement::Sequence(_)
            | BoundStatement::DropTables { .. }
            | BoundStatement::CreateIndex { .. }
            | BoundStatement::Lock { .. }
            | BoundStatement::Truncate { .. }
            | BoundStatement::DropIndexes { .. }
            | BoundStatement::AddKey { .. }
            | BoundStatement::AddColumn { .. }
            | BoundStatement::ChangeTable { .. }
            | BoundStatement::AddForeignKey { .. }
            | BoundStatement::AddCheck { .. }
            | BoundStatement::DropConstraint(_)
            | BoundStatement::DropColumn(_)
            | BoundStatement::Comment(_)
            | BoundStatement::Nothing { .. } => Ok(()),
        }
    }

    /// The result columns, for statements that return rows (a query, or DML with
    /// RETURNING).
    pub fn columns(&self) -> Option<&[OutputColumn]> {
        match self {
            BoundStatement::Query(q) => Some(&q.columns),
            BoundStatement::Explain { columns, .. } => Some(columns),
            BoundStatement::Insert(BoundInsert { returning, .. })
            | BoundStatement::Update(BoundUpdate { returning, .. })
            | BoundStatement::Delete(BoundDelete { returning, .. }) => {
                returning.as_ref().map(|r| r.columns.as_slice())
            }
            _ => None,
        }
    }
}

impl BoundStatement {
    /// Put each parameter's value in place of its `$n` (a constant of the parameter's
    /// type, cast to where its use resolved it if that differs).
    pub fn substitute_params(
        &mut self,
        values: &[Value],
        types: &[DataType],
    ) -> common::PgResult<()> {
        self.for_each_expr_mut(&mut |e| {
            let taken = std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
            *e = substitute_params(taken, values, types)?;
            Ok(())
        })
    }
}

/// COPY's data format: text (PostgreSQL's default) or CSV, with their options.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyFormat {
    pub csv: bool,
    /// One byte (PostgreSQL requires a single one-byte character).
    pub delimiter: u8,
    /// The string that stands for NULL (`\N` in text, empty in CSV).
    pub null: String,
    /// The first line holds column names: skipped on input, written on output.
    pub header: bool,
    /// CSV only.
    pub quote: u8,
    /// CSV only.
    pub escape: u8,
}

impl CopyFormat {
    pub fn text() -> CopyFormat {
        CopyFormat {
            csv: false,
            delimiter: b'\t',
            null: "\\N".into(),
            header: false,
            quote: b'"',
            escape: b'"',
        }
    }

    pub fn csv() -> CopyFormat {
        CopyFormat {
            csv: true,
            delimiter: b',',
            null: String::new(),
            ..CopyFormat::text()
        }
    }
}

/// COPY table [(columns)] FROM STDIN.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundCopyFrom {
    pub table: Arc<TableDesc>,
    /// The table column each data column goes to.
    pub targets: Vec<usize>,
    /// A whole row of each column's DEFAULT (NULL where none), for the columns the data
    /// leaves out.
    pub defaults: Vec<Expr>,
    pub format: CopyFormat,
    /// FREEZE was asked for (checked by the session: the table must have been created
    /// or truncated in the current subtransaction).
    pub freeze: bool,
    pub fks: ForeignKeyChecks,
    pub checks: Vec<BoundCheck>,
    pub index_exprs: Vec<BoundIndexExprs>,
}

/// Sequence DDL, as bound and as executed.
#[derive(Clone, Debug)]
pub enum SequenceDdl {
    Create {
        name: String,
        options: catalog::SequenceOptions,
        /// `OWNED BY table.column`.
        owned_by: Option<(common::Oid, usize)>,
    },
    Drop {
        sequences: Vec<SequenceDrop>,
        notices: Vec<PgError>,
    },
    Alter {
        seq: Arc<catalog::SequenceDesc>,
        options: catalog::SequenceOptions,
        owned_by: Option<(common::Oid, usize)>,
        /// RESTART: the value the next `nextval` returns.
        restart: Option<i64>,
    },
}

/// One sequence DROP SEQUENCE removes, with the column DEFAULTs that go with it
/// (CASCADE), as (table, column).
#[derive(Clone, Debug)]
pub struct SequenceDrop {
    pub sequence: Arc<catalog::SequenceDesc>,
    pub defaults: Vec<(common::Oid, usize)>,
}

/// EXPLAIN's options (PostgreSQL's defaults: TIMING and SUMMARY follow ANALYZE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExplainOptions {
    pub analyze: bool,
    pub timing: bool,
    pub summary: bool,
    /// VERBOSE: each node's output columns, relations with their schema, every column
    /// qualified in conditions and keys.
    pub verbose: bool,
    /// BUFFERS: with ANALYZE, each node's buffer accesses (its children's included).
    pub buffers: bool,
    /// COSTS (on unless turned off): each node's estimated cost, rows and width.
    pub costs: bool,
}

/// `e` with each parameter's value in place of its `$n` (a constant of the parameter's
/// type, cast to where its use resolved it if that differs), in its subqueries too.
pub fn substitute_params(e: Expr, values: &[Value], types: &[DataType]) -> common::PgResult<Expr> {
    match e.kind {
        ExprKind::Param(i) => {
            let (Some(v), Some(t)) = (values.get(i), types.get(i)) else {
                return Err(PgError::internal(format!(
                    "no value for parameter ${}",
                    i + 1
                )));
            };
            let c = Expr::constant(v.clone(), *t);
            Ok(if *t == e.ty {
                c
            } else {
                Expr::new(
                    ExprKind::Cast {
                        expr: Box::new(c),
                        explicit: false,
                    },
                    e.ty,
                )
            })
        }
        ExprKind::SubLink(_) => {
            let mut e = e.try_map_children(&mut |c| substitute_params(c, values, types))?;
            if let ExprKind::SubLink(link) = &mut e.kind {
                Arc::make_mut(&mut link.query).for_each_expr_mut(&mut |x| {
                    let taken =
                        std::mem::replace(x, Expr::constant(Value::Null, DataType::Unknown));
                    *x = substitute_params(taken, values, types)?;
                    Ok(())
                })?;
            }
            Ok(e)
        }
        _ => e.try_map_children(&mut |c| substitute_params(c, values, types)),
    }
}
