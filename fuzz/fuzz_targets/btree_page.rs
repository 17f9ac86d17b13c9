//! `cargo +nightly fuzz run btree_page`: see `myriad_fuzzing::btree_page` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::btree_page(data));
