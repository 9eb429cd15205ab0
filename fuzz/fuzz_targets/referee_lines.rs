//! libFuzzer harness `referee_lines`: the body is [`knobeln::fuzzing::referee_lines`], shared
//! with the corpus replay test (`tests/it/fuzz_corpus.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: knobeln::fuzzing::spare_caught_panics(),
    |data: &[u8]| knobeln::fuzzing::referee_lines(data)
);
