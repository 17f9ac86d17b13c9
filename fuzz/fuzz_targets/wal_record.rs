//! `cargo +nightly fuzz run wal_record`: see `myriad_fuzzing::wal_record` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::wal_record(data));
