//! The linearized search (Neumann and Radke, "Adaptive Optimization of Very Large Join
//! Queries", SIGMOD 2018), for problems past the exact search and up to
//! [`LINEAR_LIMIT`] items: first a linear order of the items, IKKBZ's (Ibaraki and Kameda;
//! Krishnamurthy, Boral and Zaniolo) optimal left-deep order under the C_out cost (the
//! sum of the intermediate results' rows) over a minimum spanning tree of the join graph,
//! from each item as its first (of more than 16, from the 16 of fewest rows) and the
//! cheapest kept; then dynamic programming over the
//! contiguous runs of that order: the cheapest plan of each run that conditions connect,
//! from the cheapest plans of each two runs it splits into, bushy plans included, each
//! join costed in full (`Search::join`). A run of `n` items has `n - 1` splits, so the
//! pairs grow with the cube of the items where everything connects (a chain) and linearly
//! for a star, whose runs connect only through its centre; past [`LINEAR_PAIRS`] pairs
//! the greedy search plans instead.

use super::*;

/// The most items the linearized search takes (their sets are one `u128`; the paper's
/// bound is about 100, and a 100-dimension star has 101). Its pair budget decides first
/// for most problems this size.
pub const LINEAR_LIMIT: usize = 128;

/// The most pairs of parts the linearized search may cost (each pair costs microseconds:
/// a few milliseconds in all, as a 100-dimension star's greedy search; a chain of 30 or
/// more items passes it).
pub const LINEAR_PAIRS: usize = 4096;

/// The join graph the linearized search orders: each condition's items; for each two
/// items (at `a * n + b`) whether conditions of those two alone join them, and the
/// product of those conditions' selectivities; each item's rows (at least 1).
pub(super) struct Graph {
    pub(super) conds: Vec<u128>,
    pub(super) sel: Vec<f64>,
    pub(super) linked: Vec<bool>,
    pub(super) rows: Vec<f64>,
}

/// The most items IKKBZ tries as the first of the order.
const ROOTS: usize = 16;

/// A run of items that IKKBZ keeps together: its rows' growth factor `t` (the product of
/// each item's rows and its condition's selectivity), its C_out cost `c`, and its items
/// from `head` to `tail` (linked through [`Scratch::next`]).
#[derive(Clone, Copy)]
struct Module {
    t: f64,
    c: f64,
    head: usize,
    tail: usize,
}

impl Module {
    /// IKKBZ's rank: the runs of a subtree go in ascending rank.
    fn rank(&self) -> f64 {
        (self.t - 1.0) / self.c
    }

    /// `self` then `after`, as one run.
    fn then(mut self, after: Module, next: &mut [usize]) -> Module {
        self.c += self.t * after.c;
        self.t *= after.t;
        next[self.tail] = after.head;
        self.tail = after.tail;
        self
    }
}

/// What IKKBZ from each root reuses: each node's list of runs, the next item of each
/// run's items, each node's parent, the tree's nodes in pre-order, and a list to merge in.
struct Scratch {
    chains: Vec<Vec<Module>>,
    next: Vec<usize>,
    parent: Vec<usize>,
    preorder: Vec<usize>,
    below: Vec<Module>,
}

/// A set of up to 128 items.
fn mask(items: &Items) -> u128 {
    u128::from(items.word(0)) | (u128::from(items.word(1)) << 64)
}

fn bit(i: usize) -> u128 {
    1u128 << i
}

/// A union-find over items (for the runs that conditions connect).
struct Components {
    parent: Vec<usize>,
    count: usize,
}

impl Components {
    fn new(n: usize) -> Components {
        Components {
            parent: (0..n).collect(),
            count: 0,
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra] = rb;
            self.count -= 1;
        }
    }
}

impl Search<'_, '_> {
    /// The linearized search over `parts` (one per item, at most [`LINEAR_LIMIT`]), or
    /// `None` where it would cost more than [`LINEAR_PAIRS`] pairs. Sets of items that no
    /// condition connects are each searched, then joined by cross products, smallest
    /// first (as the exact search does).
    pub(super) fn linearized(&self, parts: &[Part]) -> Option<Part> {
        let n = parts.len();
        if n > LINEAR_LIMIT {
            return None;
        }
        let graph = self.graph(parts);
        let conds = &graph.conds;
        // The connected sets of items, through every condition.
        let mut comps = Components::new(n);
        comps.count = n;
        for &m in conds {
            let first = m.trailing_zeros() as usize;
            let mut rest = m & !bit(first);
            while rest != 0 {
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                comps.union(first, b);
            }
        }
        let mut sets: Vec<u128> = Vec::new();
        let mut root_of: Vec<usize> = Vec::new();
        for i in 0..n {
            let r = comps.find(i);
            match root_of.iter().position(|&x| x == r) {
                Some(k) => sets[k] |= bit(i),
                None => {
                    root_of.push(r);
                    sets.push(bit(i));
                }
            }
        }
        // Each set's order (its pairs counted first, so that nothing is costed for a
        // problem over the budget), then its plan.
        let mut pairs = 0;
        let mut orders = Vec::with_capacity(sets.len());
        for &set in &sets {
            let order = Self::linear_order(set, &graph);
            let connected = Self::runs_connected(&order, conds);
            pairs += Self::pairs(&connected, order.len());
            if pairs > LINEAR_PAIRS {
                return None;
            }
            orders.push((order, connected));
        }
        let planned: Vec<Part> = orders
            .iter()
            .map(|(order, connected)| self.runs(parts, order, connected))
            .collect::<Option<_>>()?;
        Some(if planned.len() == 1 {
            planned.into_iter().next().expect("one set")
        } else {
            self.greedy(planned)
        })
    }

    /// The join graph of `parts` (one per item).
    pub(super) fn graph(&self, parts: &[Part]) -> Graph {
        let n = parts.len();
        let conds: Vec<u128> = self.conds.iter().map(|c| mask(&c.items)).collect();
        let all = Node::side_by_side(parts.iter().map(|p| &p.node));
        let mut sel = vec![1.0f64; n * n];
        let mut linked = vec![false; n * n];
        // (Of a class's equalities between two items, one: a join applies one.)
        let mut classes = std::collections::HashSet::new();
        for (c, &m) in self.conds.iter().zip(&conds) {
            if m.count_ones() == 2 && c.pair.is_none_or(|p| classes.insert((m, p.class))) {
                let a = m.trailing_zeros() as usize;
                let b = (m & !bit(a)).trailing_zeros() as usize;
                let s = self.est.selectivity(&all, &c.expr);
                for (x, y) in [(a, b), (b, a)] {
                    sel[x * n + y] *= s;
                    linked[x * n + y] = true;
                }
            }
        }
        let rows = parts.iter().map(|p| p.node.est.rows.max(1.0)).collect();
        Graph {
            conds,
            sel,
            linked,
            rows,
        }
    }

    /// IKKBZ's order of the items of `set` (connected by conditions): over the minimum
    /// spanning tree of the two-item conditions (by selectivity), the cheapest under
    /// C_out of the orders that start from each item. Items that only conditions of
    /// three or more items connect follow in their written order.
    pub(super) fn linear_order(set: u128, graph: &Graph) -> Vec<usize> {
        let Graph {
            sel, linked, rows, ..
        } = graph;
        let n = rows.len();
        let members: Vec<usize> = (0..n).filter(|&i| set & bit(i) != 0).collect();
        if members.len() <= 2 {
            return members;
        }
        // Prim's minimum spanning tree (a forest where two-item conditions do not
        // connect everything): each item's cheapest link into the tree so far.
        let mut tree: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut in_tree = 0u128;
        let mut link: Vec<Option<(f64, usize)>> = vec![None; n];
        for &start in &members {
            if in_tree & bit(start) != 0 {
                continue;
            }
            let mut next = Some(start);
            while let Some(v) = next {
                in_tree |= bit(v);
                if let Some((_, u)) = link[v] {
                    tree[u].push(v);
                    tree[v].push(u);
                }
                next = None;
                let mut cheapest = f64::INFINITY;
                for &w in &members {
                    if in_tree & bit(w) != 0 {
                        continue;
                    }
                    if linked[v * n + w] && link[w].is_none_or(|(s, _)| sel[v * n + w] < s) {
                        link[w] = Some((sel[v * n + w], v));
                    }
                    if let Some((s, _)) = link[w]
                        && (next.is_none() || s < cheapest)
                    {
                        cheapest = s;
                        next = Some(w);
                    }
                }
            }
        }
        // On equal costs the order from the item of fewest rows (a star's filtered
        // centre rather than a dimension before it: fewer runs connect).
        let mut scratch = Scratch {
            chains: vec![Vec::new(); n],
            next: vec![usize::MAX; n],
            parent: vec![usize::MAX; n],
            preorder: Vec::with_capacity(n),
            below: Vec::new(),
        };
        // Roots: every item of a small set; of a larger one the [`ROOTS`] with the fewest
        // rows (IKKBZ from every root costs the square of the items; an order that starts
        // from few rows keeps the intermediate results small).
        let mut roots = members.clone();
        if roots.len() > ROOTS {
            roots.sort_by(|&a, &b| rows[a].total_cmp(&rows[b]));
            roots.truncate(ROOTS);
        }
        let mut best: Option<(f64, f64, Vec<usize>)> = None;
        for &root in &roots {
            let order = ikkbz(root, &members, &tree, sel, rows, &mut scratch);
            let cost = c_out(&order, &tree, sel, rows, n);
            if best
                .as_ref()
                .is_none_or(|(c, r, _)| cost < *c || (cost == *c && rows[root] < *r))
            {
                best = Some((cost, rows[root], order));
            }
        }
        best.expect("a member").2
    }

    /// For each run `i..=j` of `order` (at `i * len + j`), whether conditions within it
    /// connect all its items.
    pub(super) fn runs_connected(order: &[usize], conds: &[u128]) -> Vec<bool> {
        let len = order.len();
        let max = order.iter().copied().max().map_or(0, |m| m + 1);
        let mut position = vec![usize::MAX; max];
        for (p, &t) in order.iter().enumerate() {
            position[t] = p;
        }
        // The conditions each item is in.
        let mut by_item: Vec<Vec<u128>> = vec![Vec::new(); max];
        for &c in conds {
            let mut rest = c;
            while rest != 0 {
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if b < max {
                    by_item[b].push(c);
                }
            }
        }
        let mut connected = vec![false; len * len];
        for i in 0..len {
            let mut comps = Components::new(len);
            let mut run = 0u128;
            for j in i..len {
                let t = order[j];
                run |= bit(t);
                comps.count += 1;
                for &c in &by_item[t] {
                    // A condition joins once its last item is in the run.
                    if c & !run == 0 {
                        let mut rest = c;
                        while rest != 0 {
                            let b = rest.trailing_zeros() as usize;
                            rest &= rest - 1;
                            comps.union(position[b], j);
                        }
                    }
                }
                connected[i * len + j] = comps.count == 1;
            }
        }
        connected
    }

    /// The pairs of parts the runs' search costs: each split of a connected run into
    /// two connected runs, either side outer.
    pub(super) fn pairs(connected: &[bool], len: usize) -> usize {
        let mut pairs = 0;
        for i in 0..len {
            for j in i + 1..len {
                if connected[i * len + j] {
                    pairs += (i..j)
                        .filter(|&k| connected[i * len + k] && connected[(k + 1) * len + j])
                        .count()
                        * 2;
                }
            }
        }
        pairs
    }

    /// The cheapest plan of the whole of `order` from the cheapest plans of its runs.
    pub(super) fn runs(&self, parts: &[Part], order: &[usize], connected: &[bool]) -> Option<Part> {
        let len = order.len();
        // The plans of the connected runs only (a star's are a few per item).
        let mut best: HashMap<usize, Part> = HashMap::new();
        for (p, &t) in order.iter().enumerate() {
            best.insert(p * len + p, parts[t].clone());
        }
        for size in 2..=len {
            for i in 0..=len - size {
                let j = i + size - 1;
                if !connected[i * len + j] {
                    continue;
                }
                let mut found: Option<Part> = None;
                for k in i..j {
                    if !connected[i * len + k] || !connected[(k + 1) * len + j] {
                        continue;
                    }
                    let (Some(a), Some(b)) =
                        (best.get(&(i * len + k)), best.get(&((k + 1) * len + j)))
                    else {
                        continue;
                    };
                    for p in [self.join(a, b), self.join(b, a)].into_iter().flatten() {
                        if found.as_ref().is_none_or(|f| beats(&p, f)) {
                            found = Some(p);
                        }
                    }
                }
                if let Some(p) = found {
                    best.insert(i * len + j, p);
                }
            }
        }
        best.remove(&(len - 1))
    }
}

/// The C_out cost of joining `order` left to right: the sum of the rows of each prefix
/// past the first item, each item's rows times the selectivity to its tree parent (its
/// tree neighbour already in the prefix).
fn c_out(order: &[usize], tree: &[Vec<usize>], sel: &[f64], rows: &[f64], n: usize) -> f64 {
    let mut seen = 0u128;
    let mut size = 1.0;
    let mut cost = 0.0;
    for (p, &t) in order.iter().enumerate() {
        let s = tree[t]
            .iter()
            .find(|&&w| seen & bit(w) != 0)
            .map_or(1.0, |&w| sel[t * n + w]);
        size *= rows[t] * s;
        if p > 0 {
            cost += size;
        }
        seen |= bit(t);
    }
    cost
}

/// IKKBZ from `root`: each subtree's runs in ascending rank, a node's own run first
/// (merged with the runs after it while they rank lower: they cannot go before it);
/// then `root` and its subtrees' runs merged. Members outside `root`'s tree follow.
fn ikkbz(
    root: usize,
    members: &[usize],
    tree: &[Vec<usize>],
    sel: &[f64],
    rows: &[f64],
    x: &mut Scratch,
) -> Vec<usize> {
    let n = rows.len();
    // Parents and a pre-order of the tree from `root`.
    let mut seen = bit(root);
    x.preorder.clear();
    x.preorder.push(root);
    let mut at = 0;
    while at < x.preorder.len() {
        let v = x.preorder[at];
        at += 1;
        for &w in &tree[v] {
            if seen & bit(w) == 0 {
                seen |= bit(w);
                x.parent[w] = v;
                x.preorder.push(w);
            }
        }
    }
    for k in (0..x.preorder.len()).rev() {
        let v = x.preorder[k];
        // The children's runs, each list in ascending rank, merged by one stable sort (a
        // run keeps its place among equal ranks of its own list).
        let mut below = std::mem::take(&mut x.below);
        below.clear();
        for &w in &tree[v] {
            if w != root && x.parent[w] == v && seen & bit(w) != 0 {
                below.append(&mut x.chains[w]);
            }
        }
        below.sort_by(|a, b| a.rank().total_cmp(&b.rank()));
        let chain = &mut x.chains[v];
        chain.clear();
        if v == root {
            chain.append(&mut below);
        } else {
            let t = sel[v * n + x.parent[v]] * rows[v];
            x.next[v] = usize::MAX;
            let mut head = Module {
                t,
                c: t.max(f64::MIN_POSITIVE),
                head: v,
                tail: v,
            };
            let mut rest = below.drain(..).peekable();
            while let Some(after) = rest.next_if(|m| head.rank() > m.rank()) {
                head = head.then(after, &mut x.next);
            }
            chain.push(head);
            chain.extend(rest);
        }
        x.below = below;
    }
    let mut order = Vec::with_capacity(members.len());
    order.push(root);
    for m in &x.chains[root] {
        let mut i = m.head;
        loop {
            order.push(i);
            if i == m.tail {
                break;
            }
            i = x.next[i];
        }
    }
    x.chains[root].clear();
    order.extend(members.iter().filter(|&&m| seen & bit(m) == 0));
    order
}
