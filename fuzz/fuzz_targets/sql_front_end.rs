//! `cargo +nightly fuzz run sql_front_end`: see `myriad_fuzzing::sql_front_end` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::sql_front_end(data));
