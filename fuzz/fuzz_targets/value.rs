//! A `composerData` value and its bubbles, as raw cell bytes, never panic the parser.
#![no_main]
use tether_core::history::cursor::composer::{Bubbles, parse_composer};
use tether_core::history::cursor::value::{Decoded, decode};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // First half: composerData; second half: one bubble referenced as "b".
    let (a, b) = data.split_at(data.len() / 2);
    if let Decoded::Json(v) = decode(Some(a)) {
        let mut bubbles = Bubbles::new();
        bubbles.insert("b".into(), Some(b.to_vec()));
        let _ = parse_composer("id", &v, &bubbles, None);
    }
});
