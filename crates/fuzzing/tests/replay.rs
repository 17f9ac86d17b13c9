//! Replays every fuzz input kept in the repository through its target, on stable Rust:
//! `fuzz/corpus/<target>/` (the seeds and what fuzzing added) and `fuzz/regressions/<target>/`
//! (inputs that once failed). A failure names the file; rerun one input with
//! `MYRIAD_FUZZ_INPUT=path cargo test -p myriad-fuzzing --test replay`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The inputs of `target` under `fuzz/<kind>/<target>/`, in name order (README files and
/// hidden files such as `.gitkeep` are not inputs).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                !n.starts_with("README") && !n.starts_with('.')
            })
        })
        .collect();
    files.sort();
    files
}

fn replay(kind: &str, must_have_inputs: bool) {
    let mut failures = Vec::new();
    for (name, target) in myriad_fuzzing::TARGETS {
        let files = inputs(kind, name);
        assert!(
            !must_have_inputs || !files.is_empty(),
            "fuzz/{kind}/{name}/ has no inputs"
        );
        for file in files {
            let data = std::fs::read(&file).expect("read a fuzz input");
            if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                failures.push(file.display().to_string());
            }
        }
    }
    assert!(failures.is_empty(), "inputs that fail: {failures:#?}");
}

#[test]
fn corpus_inputs_pass() {
    replay("corpus", true);
}

#[test]
fn regression_inputs_pass() {
    replay("regressions", false);
}

/// One input, named by `MYRIAD_FUZZ_INPUT`, through the target its directory names.
#[test]
fn one_input_from_the_environment() {
    let Some(path) = std::env::var_os("MYRIAD_FUZZ_INPUT") else {
        return;
    };
    let path = PathBuf::from(path);
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (_, target) = myriad_fuzzing::TARGETS
        .iter()
        .find(|(name, _)| *name == dir)
        .unwrap_or_else(|| panic!("{} is not in a target's directory", path.display()));
    target(&std::fs::read(&path).expect("read the input"));
}
