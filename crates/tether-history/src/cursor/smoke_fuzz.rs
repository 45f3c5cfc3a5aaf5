//! A deterministic, seconds-long fuzz pass over the parsers, so CI catches panics on hostile input
//! without cargo-fuzz. The real fuzzers live in `fuzz/` (`scripts/fuzz`).

use serde_json::{Value, json};

use super::cli::{parse_meta, parse_transcript, parse_tree};
use super::composer::{Bubbles, parse_composer};
use super::lexical::flatten;
use super::value::{Decoded, decode};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Valid-looking seeds, then byte-level mutations of them.
fn seeds() -> Vec<Vec<u8>> {
    vec![
        json!({"_v": 10, "fullConversationHeadersOnly": [{"bubbleId": "b", "type": 1}], "name": "x"}).to_string().into_bytes(),
        json!({"conversation": [{"type": 1, "text": "hi"}, {"type": 2, "richText": "{\"root\":{\"children\":[]}}"}]}).to_string().into_bytes(),
        json!({"type": 2, "toolFormerData": {"name": "t", "params": "{\"command\":\"ls\"}"}, "thinking": {"text": "t"}}).to_string().into_bytes(),
        json!({"root": {"children": [{"type": "paragraph", "children": [{"type": "text", "text": "a"}, {"type": "linebreak"}]}]}}).to_string().into_bytes(),
        b"{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"<user_query>q</user_query>\"}]}}\n{\"type\":\"turn_ended\"}\n".to_vec(),
        vec![0x0a, 0x20, 1, 2, 3, 0x12, 0x20, 9, 9, 0x4a, 0x02, b'/', b'x'],
    ]
}

fn mutate(rng: &mut XorShift, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..(rng.next() % 8 + 1) {
        let op = rng.next() % 4;
        let pos = if v.is_empty() { 0 } else { (rng.next() as usize) % v.len() };
        let byte = b"{}[]\":,0123456789abc\\\n\x00\xff"[(rng.next() as usize) % 24];
        match op {
            0 if !v.is_empty() => v[pos] = byte,
            1 => v.insert(pos, byte),
            2 if !v.is_empty() => {
                v.remove(pos);
            }
            _ => v.truncate(pos),
        }
    }
    v
}

fn exercise(data: &[u8]) {
    if let Decoded::Json(v) = decode(Some(data)) {
        let mut bubbles = Bubbles::new();
        bubbles.insert("b".into(), Some(data.to_vec()));
        let _ = parse_composer("id", &v, &bubbles, None);
        let _ = flatten(&v);
    }
    let text = String::from_utf8_lossy(data);
    let _ = flatten(&Value::String(text.clone().into_owned()));
    let _ = parse_transcript("id", &text, None);
    let _ = parse_tree(data);
    let _ = parse_meta(data);
}

#[test]
fn parsers_survive_mutated_input() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let seeds = seeds();
    for i in 0..100_000 {
        let seed = &seeds[i % seeds.len()];
        exercise(&mutate(&mut rng, seed));
    }
}
