//! Lexical / ProseMirror `richText` flattening never panics.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = tether_core::history::cursor::lexical::flatten(&serde_json::Value::String(s.to_owned()));
    }
});
