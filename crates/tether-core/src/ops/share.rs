//! Sharing a chat with the team: the person's own transcript, as Markdown, with its secrets
//! replaced (API keys, tokens, private keys, passwords in URLs, `.env`-style assignments: the
//! `redact-secret` crate's detectors, not a list of our own), shown to the person first, then
//! copied into the team database for teammates to find. The chat history itself never leaves
//! the machine; only what the person confirmed does.
//!
//! Reads the history directly (not `ops::sessions`, which reads the shared copies here for
//! `sessions_find`'s team scope): imports run sessions → share.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::Tether;
use crate::board::shared::{NewShared, SharedChat, SharedSummary};
use crate::error::{Error, Result};
use crate::history::{export, sessions};
use crate::ops::Principal;

/// What sharing a chat would put in the team database: shown to the person before they share.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SharePreview {
    /// The chat's full id.
    pub session: String,
    pub title: String,
    pub project: Option<String>,
    #[ts(type = "number")]
    pub messages: i64,
    /// The transcript as teammates would read it, secrets replaced by `<SECRET_n>`.
    pub text: String,
    /// What was replaced, by kind (`github_token`, `private_key`, `connection_string_password`…).
    pub redactions: Vec<Redaction>,
    /// A digest of `text`: given back to [`share`], it makes sure what is shared is what was shown.
    pub digest: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Redaction {
    pub kind: String,
    pub count: usize,
}

/// Share a chat with the team, as previewed.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Share {
    /// Session id (or a unique prefix) or nickname (over HTTP, the path's).
    #[serde(default)]
    pub session: String,
    /// The preview's `digest`: when the chat changed since (so the text would differ), sharing
    /// is refused. Absent: share what the redaction gives now (`--yes`).
    #[serde(default)]
    pub digest: Option<String>,
}

/// The chat as it would be shared, secrets replaced.
pub fn preview(t: &Tether, key: &str) -> Result<SharePreview> {
    let summary = t.store.read(|c| sessions::summary(c, &sessions::resolve(c, key)?))?;
    let markdown = export::export(&t.store, &summary.id, export::Format::Markdown)?;
    let (text, redactions) = redact(&markdown)?;
    let digest = hex(&sha2::Sha256::digest(text.as_bytes()));
    Ok(SharePreview {
        title: summary.title.clone().unwrap_or_else(|| "(untitled chat)".into()),
        session: summary.id,
        project: summary.project,
        messages: summary.messages,
        text,
        redactions,
        digest,
    })
}

/// Copies the redacted chat into the team database; the person's own act only. Sharing the same
/// chat again replaces the team's copy.
pub fn share(t: &Tether, who: &Principal, s: Share) -> Result<SharedChat> {
    let Principal::Person(person) = who else {
        return Err(Error::NotAllowed("only the person shares a chat with the team".into()));
    };
    if !t.in_team() {
        return Err(Error::invalid(
            "share",
            "sharing needs a team database: join one first (tether team join postgres://…)",
        ));
    }
    let p = preview(t, &s.session)?;
    if s.digest.as_ref().is_some_and(|d| *d != p.digest) {
        return Err(Error::Conflict(format!(
            "{} changed since it was previewed; preview it again and share what you see",
            p.session
        )));
    }
    let new = NewShared {
        source: p.session,
        title: p.title,
        project: p.project,
        shared_by: person.clone(),
        messages: p.messages,
        redacted: p.redactions.iter().map(|r| r.count as i64).sum(),
        body: p.text,
    };
    t.board().shared().share(&new)
}

/// A shared copy taken back: `{unshared: id}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Unshared {
    pub unshared: String,
}

/// Chats shared with the team as the GUI reads them: `{shared}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SharedList {
    pub shared: Vec<SharedSummary>,
}

/// Takes a shared copy back (anyone on the team may: the copy is the team's).
pub fn unshare(t: &Tether, who: &Principal, id: &str) -> Result<Unshared> {
    if !who.is_person() {
        return Err(Error::NotAllowed("only a person takes a shared chat back".into()));
    }
    if !t.board().shared().unshare(id)? {
        return Err(Error::NotFound(format!("no chat shared with the team as {id:?}")));
    }
    Ok(Unshared { unshared: id.to_owned() })
}

/// Chats shared with the team, the most recent first; with `words`, those holding them all.
pub fn list(t: &Tether, words: Option<&str>, limit: usize) -> Result<Vec<SharedSummary>> {
    if !t.in_team() {
        return Err(Error::invalid("scope", "no team joined: shared chats live in a team database (tether team join)"));
    }
    t.board().shared().list(words, limit.clamp(1, 200))
}

/// One shared chat, whole.
pub fn get(t: &Tether, id: &str) -> Result<SharedChat> {
    t.board().shared().get(id)
}

/// `markdown` with every secret the detectors find replaced, and how many of each kind. The one
/// redaction for chat text that leaves Tether (a shared chat, a trace export's excerpts).
pub(crate) fn redact(markdown: &str) -> Result<(String, Vec<Redaction>)> {
    // The crate refuses inputs past its whole-input limit; a chat that long is redacted in
    // pieces cut at line ends (a secret spans no line end but a private key's, whose block the
    // detector finds by its header and footer lines, and a piece never cuts inside one).
    let limit = redact_secret::DEFAULT_MAX_INPUT_BYTES / 2;
    let mut out = String::with_capacity(markdown.len());
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for piece in pieces(markdown, limit) {
        let r = redact_secret::sanitize(piece)
            .map_err(|e| Error::invalid("share", format!("the secret scanner refused the chat: {e}")))?;
        for f in r.findings() {
            *kinds.entry(f.detected().type_name().to_owned()).or_default() += 1;
        }
        out.push_str(r.text());
    }
    Ok((out, kinds.into_iter().map(|(kind, count)| Redaction { kind, count }).collect()))
}

/// `text` cut into pieces of at most about `limit` bytes, at line ends outside PEM blocks.
fn pieces(text: &str, limit: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut in_block) = (0, false);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("-----BEGIN ") {
            in_block = true;
        } else if line.starts_with("-----END ") {
            in_block = false;
        }
        at += line.len();
        if !in_block && at - start >= limit {
            out.push(&text[start..at]);
            start = at;
        }
    }
    if start < text.len() || out.is_empty() {
        out.push(&text[start..]);
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_of_each_kind_are_replaced_and_counted_and_plain_text_is_kept() {
        let chat = "## user\n\nDeploy with DATABASE_URL=postgres://admin:s3cr3tP4ss@db.example.com:5432/app\n\
                    and token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 please.\n\
                    ```\nDB_PASSWORD=hunter2-correct-horse\n```\n\
                    -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n\
                    ## assistant\n\nThe function add(a, b) returns a + b.\n";
        let (text, kinds) = redact(chat).unwrap();
        for secret in
            ["s3cr3tP4ss", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "hunter2-correct-horse", "b3BlbnNzaC1rZXkt"]
        {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert!(text.contains("The function add(a, b) returns a + b.") && text.contains("db.example.com"), "{text}");
        let kinds: Vec<&str> = kinds.iter().map(|k| k.kind.as_str()).collect();
        assert!(kinds.contains(&"github_token") && kinds.contains(&"private_key"), "{kinds:?}");
    }

    #[test]
    fn a_long_chat_is_cut_at_line_ends_outside_key_blocks() {
        let text = "a\n-----BEGIN KEY-----\nxx\n-----END KEY-----\nb\nc\n";
        let cut = pieces(text, 2);
        assert_eq!(cut.concat(), text);
        assert!(cut.contains(&"-----BEGIN KEY-----\nxx\n-----END KEY-----\n"), "{cut:?}");
    }
}
