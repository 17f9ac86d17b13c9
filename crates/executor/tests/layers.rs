//! Executor rule 1: the executor's modules are layered, and no module reaches a module
//! of a layer above its own. The layers are listed here and in the crate's README; this
//! test reads the sources, collects each module's `crate::` paths, and fails on a path
//! that goes up, on a cycle, or on a module no layer lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first: a module may use modules of its own layer or below (and
/// the crate root's types: `ExecContext`, `StatementResult`). Keep in step with
/// `crates/executor/README.md`.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "values",
        &["array", "cast", "datetime", "math", "sortkey", "spill"],
    ),
    (
        "session state",
        &["instrument", "reg_catalog", "sequence", "session"],
    ),
    ("environment", &["env"]),
    ("deparsing", &["catalog_funcs", "deparse", "ruleutils"]),
    ("expressions", &["agg", "eval", "keytable"]),
    ("system views", &["views"]),
    ("plan nodes", &["exec"]),
    ("writes", &["dml", "fkey", "index", "route"]),
    ("statements", &["commands", "explain", "portal"]),
];

/// The module (a file or a directory under `src/`) each source file belongs to.
fn sources(dir: &Path, unit: Option<&str>, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            sources(&path, Some(unit.unwrap_or(&name)), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let unit = unit.unwrap_or(&name).to_string();
            out.push((unit, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The first segment of every `crate::` path in `src` (comments left out), including
/// each path of a `crate::{a, b::c}` group.
fn crate_paths(src: &str) -> BTreeSet<String> {
    let code: String = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(group[start..i].trim()));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.insert(ident(group[start..end].trim()));
        } else {
            out.insert(ident(after));
        }
        rest = after;
    }
    out
}

#[test]
fn modules_reach_only_their_layer_and_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, None, &mut files);
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (unit, text) in &files {
        if unit == "lib" {
            continue;
        }
        assert!(
            layer_of.contains_key(unit.as_str()),
            "module `{unit}` is in no layer: place it in LAYERS and the README"
        );
        let targets = crate_paths(text)
            .into_iter()
            .filter(|t| t != unit && layer_of.contains_key(t.as_str()));
        uses.entry(unit.clone()).or_default().extend(targets);
    }
    let mut wrong = Vec::new();
    for (from, targets) in &uses {
        for to in targets {
            if layer_of[to.as_str()] > layer_of[from.as_str()] {
                wrong.push(format!(
                    "`{from}` ({}) uses `{to}` ({})",
                    LAYERS[layer_of[from.as_str()]].0,
                    LAYERS[layer_of[to.as_str()]].0
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "uses that go up a layer: {wrong:#?}");

    // Within a layer, no cycle either.
    fn visit<'a>(
        m: &'a str,
        uses: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("modules that use each other: {:?}", &path[i..]);
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for t in uses.get(m).into_iter().flatten() {
            visit(t, uses, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in uses.keys() {
        visit(m, &uses, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_scan_of_paths_sees_groups_and_skips_comments() {
    let found = crate_paths(
        "use crate::env::{Env, Row};\nuse crate::{ExecContext, dml, exec::build};\n\
         // crate::explain is named only here\nlet x = crate::views::rows(s);",
    );
    let want: BTreeSet<String> = ["env", "ExecContext", "dml", "exec", "views"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
}
