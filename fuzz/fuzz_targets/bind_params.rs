//! `cargo +nightly fuzz run bind_params`: see `myriad_fuzzing::bind_params` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::bind_params(data));
