//! `cargo +nightly fuzz run heap_page`: see `myriad_fuzzing::heap_page` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| myriad_fuzzing::heap_page(data));
