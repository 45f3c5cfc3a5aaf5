//! CLI store protobuf tree nodes and hex/plain meta never panic the parser.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tether_core::history::cursor::cli::parse_tree(data);
    let _ = tether_core::history::cursor::cli::parse_meta(data);
});
