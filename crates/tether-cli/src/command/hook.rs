//! `tether hook <event>`: what Cursor runs on each hook. It forwards the payload to the daemon
//! and always answers "go ahead" at once: it must never block or slow Cursor, so every failure
//! (no daemon, slow daemon, bad input) is swallowed after a short deadline — fail-open. On `stop`
//! it passes on the daemon's follow-up message (signals waiting for the chat), Cursor's only way
//! to wake a chat from outside. An edit's file is read only as a regular file inside the chat's
//! workspace roots, never through a link, never blocking (see [`read_edited`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use tether_core::Paths;

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The hook event, e.g. beforeSubmitPrompt, beforeMCPExecution, stop.
    pub event: String,
}

/// Total time we allow ourselves to talk to the daemon.
const DEADLINE: Duration = Duration::from_millis(250);
const MAX_PAYLOAD: u64 = 1 << 20;
/// An edit's payload carries its text; what is forwarded is hashes, so this bounds only what we
/// read (and a file larger than this is hashed without positions).
const MAX_EDIT_PAYLOAD: u64 = 64 << 20;
/// How long reading the edited file may take (a file on a stalled network mount): past it the
/// edit is sent by its text's hashes alone, without positions.
const READ_LIMIT: Duration = Duration::from_secs(1);
/// Line hashes per request, so that any edit travels under the daemon's 1 MiB hook limit.
const HASHES_PER_PART: usize = 40_000;
const RANGES_PER_PART: usize = 2_000;

fn is_edit(event: &str) -> bool {
    matches!(event, "afterFileEdit" | "afterTabFileEdit")
}

pub fn run(paths: &Paths, a: &HookArgs) {
    let event = a.event.as_str();
    let mut payload = Vec::new();
    let cap = if is_edit(event) { MAX_EDIT_PAYLOAD } else { MAX_PAYLOAD };
    let _ = std::io::stdin().take(cap).read_to_end(&mut payload);
    // Whatever goes wrong in forwarding (a bug included), Cursor still gets its answer.
    let forwarded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if is_edit(event) {
            forward_edit(paths, event, &payload).map(|()| None)
        } else {
            forward(paths, event, &payload)
        }
    }));
    let followup = match forwarded {
        Ok(Ok(f)) => f,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "hook not delivered (fail-open)");
            None
        }
        Err(_) => None,
    };
    // Cursor reads a JSON answer from hooks that can gate an action; we never gate. On `stop`,
    // the daemon may ask the chat to take another turn to read its signals.
    let answer = match (event, followup) {
        ("stop", Some(msg)) => serde_json::json!({"followup_message": msg}).to_string(),
        ("beforeSubmitPrompt", _) => r#"{"continue":true}"#.into(),
        ("beforeMCPExecution" | "beforeShellExecution" | "beforeReadFile", _) => r#"{"permission":"allow"}"#.into(),
        _ => "{}".into(),
    };
    let _ = writeln!(std::io::stdout(), "{answer}");
}

fn err(m: &str) -> std::io::Error {
    std::io::Error::other(m.to_owned())
}

fn object(event: &str, payload: &[u8]) -> std::io::Result<serde_json::Map<String, serde_json::Value>> {
    let serde_json::Value::Object(mut body) = serde_json::from_slice(payload).map_err(|e| err(&e.to_string()))? else {
        return Err(err("the payload is not a JSON object"));
    };
    // The event name comes from our command line when the payload lacks it.
    if body.get("hook_event_name").and_then(|v| v.as_str()).is_none_or(str::is_empty) {
        body.insert("hook_event_name".into(), serde_json::Value::String(event.to_owned()));
    }
    Ok(body)
}

/// Delivers the event; the daemon's follow-up message for a `stop`, if it has one.
fn forward(paths: &Paths, event: &str, payload: &[u8]) -> std::io::Result<Option<String>> {
    post(paths, &object(event, payload)?)
}

/// An edit: what it wrote, computed here from the file as it is now (ranges and line hashes),
/// sent in parts small enough for the daemon's limit; the edit's text never leaves this process.
fn forward_edit(paths: &Paths, event: &str, payload: &[u8]) -> std::io::Result<()> {
    use tether_core::model::trace::{Replacement, capture, pack};
    let mut body = object(event, payload)?;
    let edits: Vec<Replacement> = body.remove("edits").and_then(|e| serde_json::from_value(e).ok()).unwrap_or_default();
    let file = body.get("file_path").and_then(|f| f.as_str()).unwrap_or_default().to_owned();
    if file.is_empty() || !Path::new(&file).is_absolute() {
        return post(paths, &body).map(|_| ());
    }
    let roots: Vec<PathBuf> = body
        .get("workspace_roots")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|p| p.as_str()).map(PathBuf::from).collect())
        .unwrap_or_default();
    let text = read_edited(Path::new(&file), &roots);
    let c = capture(text.as_deref(), &edits);
    let uid = tether_core::token::generate();
    let hashes = c.written.len() + c.replaced.len();
    let parts = hashes.div_ceil(HASHES_PER_PART).max(c.ranges.len().div_ceil(RANGES_PER_PART)).max(1);
    for i in 0..parts {
        let cut = |v: &[i64], per: usize| -> String {
            let (a, b) = ((i * per).min(v.len()), ((i + 1) * per).min(v.len()));
            pack(&v[a..b])
        };
        // Written and replaced share a part's budget in proportion to their sizes.
        let per_w = c.written.len().div_ceil(parts);
        let per_r = c.replaced.len().div_ceil(parts);
        let per_g = c.ranges.len().div_ceil(parts);
        let ranges = &c.ranges[(i * per_g).min(c.ranges.len())..((i + 1) * per_g).min(c.ranges.len())];
        body.insert(
            "trace".into(),
            serde_json::json!({"edit": uid, "file": file, "ranges": ranges, "written": cut(&c.written, per_w), "replaced": cut(&c.replaced, per_r)}),
        );
        // A part that did not get through is lost, not the ones after it.
        if let Err(e) = post(paths, &body) {
            tracing::debug!(error = %e, part = i, "an edit's part not delivered (fail-open)");
        }
    }
    Ok(())
}

/// The edited file's text, to place the edit's lines: only a regular file inside the chat's
/// workspace roots (Cursor names them in every hook), reached without following a link and
/// opened non-blocking (a FIFO, a device, a link out of the workspace are not read), at most
/// [`MAX_EDIT_PAYLOAD`] bytes, within [`READ_LIMIT`]. `None` otherwise: the edit still travels,
/// as hashes without positions.
fn read_edited(file: &Path, roots: &[PathBuf]) -> Option<String> {
    let (file, roots) = (file.to_owned(), roots.to_vec());
    let (tx, rx) = std::sync::mpsc::channel();
    // A thread, so that a read that hangs anyway is left behind when the hook answers and exits.
    std::thread::spawn(move || {
        let read = tether_core::nofollow::read_file_within(&file, &roots, MAX_EDIT_PAYLOAD);
        if let Err(e) = &read {
            tracing::debug!(error = %e, "the edited file is not read");
        }
        let _ = tx.send(read.ok().and_then(|b| String::from_utf8(b).ok()));
    });
    rx.recv_timeout(READ_LIMIT).ok().flatten()
}

fn post(paths: &Paths, body: &serde_json::Map<String, serde_json::Value>) -> std::io::Result<Option<String>> {
    let info = tether_core::daemon::running(paths).ok_or_else(|| err("no daemon"))?;
    let port = info.port.ok_or_else(|| err("daemon has no port"))?;
    let token = std::fs::read_to_string(paths.data_dir.join("hook-token"))?;
    let body = serde_json::Value::Object(body.clone()).to_string();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, DEADLINE)?;
    s.set_write_timeout(Some(DEADLINE))?;
    s.set_read_timeout(Some(DEADLINE))?;
    s.set_nodelay(true)?;
    write!(
        s,
        "POST /hook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        token.trim(),
        body.len()
    )?;
    // `Connection: close`: the answer ends when the daemon closes; it is tiny, and the deadline
    // bounds a daemon that does not.
    let mut answer = Vec::new();
    s.take(64 * 1024).read_to_end(&mut answer)?;
    let text = String::from_utf8_lossy(&answer);
    match text.get(9..12) {
        Some("204") => Ok(None),
        Some("200") => {
            let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
            let v: serde_json::Value = serde_json::from_str(body.trim()).map_err(|e| err(&e.to_string()))?;
            Ok(v["followup_message"].as_str().filter(|m| !m.is_empty()).map(str::to_owned))
        }
        _ => Err(err(&format!("daemon answered {}", text.lines().next().unwrap_or("nothing")))),
    }
}
