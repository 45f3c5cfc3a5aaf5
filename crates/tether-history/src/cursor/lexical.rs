//! Flattening Lexical `richText` editor state (and the ProseMirror-like variant) to plain text.
//!
//! Pure; unknown node types degrade to their children or their `text`, never an error.

use serde_json::Value;

/// Flatten a `richText` value (a JSON string or an already-parsed object) to text.
/// Returns `None` when nothing textual is found.
pub fn flatten(rich: &Value) -> Option<String> {
    let parsed;
    let root = match rich {
        Value::String(s) if !s.trim().is_empty() => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        Value::Object(_) => rich,
        _ => return None,
    };
    let node = root.get("root").unwrap_or(root);
    let mut out = String::new();
    walk(node, &mut out, 0);
    let text = out.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

const MAX_DEPTH: usize = 64;

fn walk(node: &Value, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let ty = node.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "text" | "mention" | "code-highlight" | "hashtag" | "link-text" => {
            if let Some(t) = node.get("text").and_then(Value::as_str) {
                out.push_str(t);
            }
        }
        "linebreak" | "hard_break" => out.push('\n'),
        "code" | "code_block" => {
            ensure_newline(out);
            let lang = node.get("language").and_then(Value::as_str).unwrap_or("");
            out.push_str("```");
            out.push_str(lang);
            out.push('\n');
            children(node, out, depth);
            ensure_newline(out);
            out.push_str("```\n");
        }
        "paragraph" | "heading" | "quote" | "listitem" | "list_item" | "list" | "bullet_list" | "ordered_list" => {
            children(node, out, depth);
            ensure_newline(out);
        }
        _ => {
            if !children(node, out, depth)
                && let Some(t) = node.get("text").and_then(Value::as_str)
            {
                out.push_str(t);
            }
        }
    }
}

/// Walk `children` (Lexical) or `content` (ProseMirror); false if neither is an array.
fn children(node: &Value, out: &mut String, depth: usize) -> bool {
    let kids = node.get("children").or_else(|| node.get("content")).and_then(Value::as_array);
    match kids {
        Some(kids) => {
            for k in kids {
                walk(k, out, depth + 1);
            }
            true
        }
        None => false,
    }
}

fn ensure_newline(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_paragraphs_mentions_linebreaks_and_code() {
        let rich = json!({"root": {"type": "root", "children": [
            {"type": "paragraph", "children": [
                {"type": "text", "text": "Look at "},
                {"type": "mention", "text": "@parse.ts", "mentionName": "parse.ts"},
                {"type": "linebreak"},
                {"type": "text", "text": "please"}
            ]},
            {"type": "heading", "tag": "h2", "children": [{"type": "text", "text": "Title"}]},
            {"type": "code", "language": "rust", "children": [{"type": "code-highlight", "text": "fn main() {}"}]},
            {"type": "mystery-node", "children": [{"type": "text", "text": "kept"}]},
            {"type": "another-mystery"}
        ]}});
        let s = serde_json::to_string(&rich).unwrap();
        assert_eq!(
            flatten(&Value::String(s)).unwrap(),
            "Look at @parse.ts\nplease\nTitle\n```rust\nfn main() {}\n```\nkept"
        );
    }

    #[test]
    fn prosemirror_like_docs_and_garbage_do_not_crash() {
        let pm =
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "hi"}]}]});
        assert_eq!(flatten(&pm).unwrap(), "hi");
        assert_eq!(flatten(&Value::String("{not json".into())), None);
        assert_eq!(flatten(&Value::String("".into())), None);
        assert_eq!(flatten(&json!(42)), None);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut v = json!({"type": "text", "text": "deep"});
        for _ in 0..300 {
            v = json!({"type": "paragraph", "children": [v]});
        }
        // serde_json's own recursion limit rejects this as a string; as a value it must not overflow.
        let _ = flatten(&json!({"root": v}));
    }
}
