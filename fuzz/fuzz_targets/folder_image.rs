//! libFuzzer harness `folder_image`: the body is [`knobeln::fuzzing::folder_image`], shared
//! with the corpus replay test (`tests/it/fuzz_corpus.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: knobeln::fuzzing::spare_caught_panics(),
    |data: &[u8]| knobeln::fuzzing::folder_image(data)
);
