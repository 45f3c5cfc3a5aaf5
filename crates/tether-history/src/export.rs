//! Exporting one session as Markdown, JSON or a self-contained HTML page.
//!
//! Works from what the index holds, which never includes Cursor secrets. HTML escapes every
//! piece of conversation text: it is untrusted input.

use crate::error::{Error, Result};
use crate::sessions::{SessionDetail, ShowOptions, show};
use crate::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
    Html,
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "html" => Ok(Format::Html),
            other => Err(Error::invalid("export format", format!("{other:?} (use md, json or html)"))),
        }
    }
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Json => "json",
            Format::Html => "html",
        }
    }
}

pub fn export(store: &Store, key: &str, format: Format) -> Result<String> {
    let d = show(store, key, &ShowOptions { include_tools: true, ..Default::default() })?;
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(&d)?,
        Format::Markdown => markdown(&d),
        Format::Html => html(&d),
    })
}

fn title(d: &SessionDetail) -> &str {
    d.session.title.as_deref().unwrap_or("Untitled chat")
}

fn markdown(d: &SessionDetail) -> String {
    let s = &d.session;
    let mut out = format!("# {}\n\n", title(d));
    out.push_str(&format!("- Session: `{}`\n", s.id));
    if let Some(p) = &s.project {
        out.push_str(&format!("- Project: `{p}`\n"));
    }
    out.push_str(&format!("- Source: {} ({})\n", s.source, s.format));
    if let Some(t) = &s.created_at {
        out.push_str(&format!("- Created: {t}\n"));
    }
    if let Some(t) = &s.updated_at {
        out.push_str(&format!("- Updated: {t}\n"));
    }
    if !s.tags.is_empty() {
        out.push_str(&format!("- Tags: {}\n", s.tags.join(", ")));
    }
    out.push('\n');
    for m in &d.messages {
        match m.kind.as_str() {
            "tool" => out.push_str(&format!(
                "> **Tool** `{}`{}: `{}`\n\n",
                m.tool_name.as_deref().unwrap_or("tool"),
                m.tool_status.as_deref().map(|s| format!(" ({s})")).unwrap_or_default(),
                m.text.replace('`', "'")
            )),
            "error" => out.push_str(&format!("> **Error:** {}\n\n", m.text)),
            "thinking" => {
                out.push_str("<details><summary>Thinking</summary>\n\n");
                out.push_str(&m.text);
                out.push_str("\n\n</details>\n\n");
            }
            _ => {
                let who = match m.role.as_str() {
                    "user" => "User",
                    "assistant" => "Assistant",
                    "system" => "System",
                    other => other,
                };
                out.push_str(&format!("## {who}\n\n{}\n\n", m.text));
            }
        }
    }
    out
}

pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2em auto;padding:0 1em;color:#1d1d1f;background:#fff}
@media(prefers-color-scheme:dark){body{color:#e8e8e8;background:#16171a}.msg{border-color:#333}.meta{color:#999}}
h1{font-size:1.5em}.meta{color:#666;font-size:.9em}.msg{border:1px solid #ddd;border-radius:8px;padding:.6em 1em;margin:1em 0}
.user{border-left:4px solid #3b82f6}.assistant{border-left:4px solid #10b981}.role{font-weight:600;font-size:.85em;text-transform:uppercase;opacity:.7}
pre{white-space:pre-wrap;word-wrap:break-word;font:inherit;margin:.3em 0}details{margin:.5em 0;opacity:.85}code{font-family:ui-monospace,monospace}";

fn html(d: &SessionDetail) -> String {
    let s = &d.session;
    let mut body = String::new();
    for m in &d.messages {
        match m.kind.as_str() {
            "tool" => body.push_str(&format!(
                "<details class=\"tool\"><summary>Tool <code>{}</code>{}</summary><pre>{}</pre></details>\n",
                escape_html(m.tool_name.as_deref().unwrap_or("tool")),
                m.tool_status.as_deref().map(|s| format!(" ({})", escape_html(s))).unwrap_or_default(),
                escape_html(&m.text)
            )),
            "thinking" => body.push_str(&format!(
                "<details class=\"thinking\"><summary>Thinking</summary><pre>{}</pre></details>\n",
                escape_html(&m.text)
            )),
            "error" => body.push_str(&format!(
                "<div class=\"msg error\"><div class=\"role\">error</div><pre>{}</pre></div>\n",
                escape_html(&m.text)
            )),
            _ => body.push_str(&format!(
                "<div class=\"msg {role}\"><div class=\"role\">{role}</div><pre>{}</pre></div>\n",
                escape_html(&m.text),
                role = escape_html(&m.role)
            )),
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{t}</title><style>{STYLE}</style></head>\n\
<body><h1>{t}</h1><p class=\"meta\">{id} · {proj} · {src} · {upd}</p>\n{body}</body></html>\n",
        t = escape_html(title(d)),
        id = escape_html(&s.id),
        proj = escape_html(s.project.as_deref().unwrap_or("no project")),
        src = escape_html(&s.source),
        upd = escape_html(s.updated_at.as_deref().unwrap_or("")),
    )
}
