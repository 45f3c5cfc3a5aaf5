//! Agent transcripts (JSONL) never panic the parser.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = tether_core::history::cursor::cli::parse_transcript("id", &text, None);
});
