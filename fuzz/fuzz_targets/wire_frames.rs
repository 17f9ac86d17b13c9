//! `cargo +nightly fuzz run wire_frames`: see `myriad_fuzzing::wire_frames` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::wire_frames(data));
