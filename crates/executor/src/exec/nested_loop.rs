//! Nested loop join over a materialised (or, LATERAL, re-run) inner side.

#[allow(unused_imports)]
use super::*;

pub(crate) struct NestedLoopOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) left: Box<dyn Operator + 'a>,
    /// The right input until it has been materialised into `right_rows`.
    pub(crate) right: Option<Box<dyn Operator + 'a>>,
    /// A LATERAL right side and its outer values over the left row: run for each left
    /// row into `right_rows`.
    pub(crate) lateral: Option<(&'a Plan, &'a [Expr])>,
    pub(crate) right_rows: Vec<Row>,
    pub(crate) kind: JoinKind,
    pub(crate) on: Option<&'a Expr>,
    pub(crate) right_width: usize,
    pub(crate) current: Option<Row>,
    pub(crate) pos: usize,
    pub(crate) matched: bool,
}

impl NestedLoopOp<'_> {
    /// The rows of a LATERAL right side for the left row `left`. Under EXPLAIN ANALYZE
    /// its nodes are not counted (they would be built again for each row), as a
    /// subquery's are not.
    fn run_lateral(&self, plan: &Plan, args: &[Expr], left: &[Value]) -> PgResult<Vec<Row>> {
        let outer = args
            .iter()
            .map(|a| self.env.eval(a, left))
            .collect::<PgResult<Vec<_>>>()?;
        let env = Env {
            outer: &outer,
            instrument: None,
            ..self.env
        };
        let mut op = build(plan, env)?;
        collect(op.as_mut())
    }
}

impl Operator for NestedLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut r) = self.right.take() {
            self.right_rows = collect(r.as_mut())?;
        }
        loop {
            if self.current.is_none() {
                match self.left.next()? {
                    None => return Ok(None),
                    Some(l) => {
                        if let Some((plan, args)) = self.lateral {
                            self.right_rows = self.run_lateral(plan, args, &l)?;
                        }
                        self.current = Some(l);
                        self.pos = 0;
                        self.matched = false;
                    }
                }
            }
            let left = self.current.as_ref().expect("set above");
            while self.pos < self.right_rows.len() {
                self.env.tx.check_for_interrupts()?;
                let right = &self.right_rows[self.pos];
                self.pos += 1;
                if let Some(mut row) = joined_row(&self.env, self.on, left, right)? {
                    self.matched = true;
                    match self.kind {
                        // The left row once, at its first match; or not at all.
                        JoinKind::Semi => {
                            row.truncate(left.len());
                            self.current = None;
                            return Ok(Some(row));
                        }
                        JoinKind::Anti => {
                            self.pos = self.right_rows.len();
                            break;
                        }
                        _ => return Ok(Some(row)),
                    }
                }
            }
            let left = self.current.take().expect("set above");
            if self.kind == JoinKind::Anti && !self.matched {
                return Ok(Some(left));
            }
            if self.kind == JoinKind::Left && !self.matched {
                let mut row = left;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                return Ok(Some(row));
            }
        }
    }
}
