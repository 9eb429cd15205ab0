//! libFuzzer harness `island`: the body is [`knobeln::fuzzing::island`], shared
//! with the corpus replay test (`tests/it/fuzz_corpus.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: knobeln::fuzzing::spare_caught_panics(),
    |data: &[u8]| knobeln::fuzzing::island(data)
);
