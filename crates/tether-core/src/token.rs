//! Secrets: the MCP bearer token (OS keyring by default), the low-privilege hook token, and the
//! person's Cursor API key (kept the same way as the MCP token).
//!
//! The MCP token lives in the OS keyring under an entry named after the data dir, so test and
//! production instances never share one. Where no keyring can be reached (a server, a container,
//! a desktop without a Secret Service) the token goes to a 0600 file in the data dir by itself,
//! with a warning, and stays there (clients keep working when a keyring appears later; `tether
//! token store keyring` moves it) — unless the `keyring_only` setting refuses that. The person
//! may also choose the file outright, and `TETHER_TOKEN` overrides everything (servers, tests).
//! Tokens are never logged. Depends on `keyring` only.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::paths::Paths;

/// Where the MCP token is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export, export_to = "core.ts")]
pub enum Backend {
    Keyring,
    File,
    /// The file, because no OS keyring could be reached.
    Fallback,
    /// `TETHER_TOKEN` from the environment (read-only).
    Env,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Keyring => "keyring",
            Backend::File => "file",
            Backend::Fallback => "fallback",
            Backend::Env => "env",
        }
    }

    /// Where the token is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Backend::Keyring => "OS keyring",
            Backend::File => "0600 file in the data dir",
            Backend::Fallback => "0600 file in the data dir (no OS keyring was reachable)",
            Backend::Env => "TETHER_TOKEN environment variable",
        }
    }
}

const SERVICE: &str = "tether";

fn entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("mcp-token:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

fn keyring_error(paths: &Paths, e: &keyring::Error) -> Error {
    Error::Keyring(format!(
        "the OS keyring is not available ({e}). On a desktop, start or unlock your keyring \
         (GNOME Keyring, KWallet, macOS Keychain, Windows Credential Manager). On a server, either run \
         `tether token store file` to keep the token in {} (mode 0600), or set TETHER_TOKEN \
         (the keyring_only setting refuses the file).",
        paths.data_dir.join("mcp-token").display()
    ))
}

/// The configured backend: `TETHER_TOKEN` wins, then the choice saved by `set_backend`.
pub fn backend(paths: &Paths) -> Backend {
    if std::env::var_os("TETHER_TOKEN").is_some_and(|v| !v.is_empty()) {
        return Backend::Env;
    }
    match std::fs::read_to_string(paths.data_dir.join("token-store")).as_deref().map(str::trim) {
        Ok("file") => Backend::File,
        Ok("fallback") => Backend::Fallback,
        _ => Backend::Keyring,
    }
}

/// Chooses where the token is kept from now on, moving the current token there.
pub fn set_backend(paths: &Paths, to: Backend) -> Result<()> {
    if to == Backend::Env {
        return Err(Error::invalid("token store", "the environment cannot be chosen as a store; set TETHER_TOKEN"));
    }
    paths.ensure()?;
    let current = read(paths, backend(paths)).ok().flatten();
    let marker = paths.data_dir.join("token-store");
    write_private(&marker, to.as_str())?;
    if let Some(t) = current {
        write(paths, to, &t)?;
    }
    Ok(())
}

fn read(paths: &Paths, b: Backend) -> Result<Option<String>> {
    match b {
        Backend::Env => Ok(std::env::var("TETHER_TOKEN").ok()),
        Backend::File | Backend::Fallback => match std::fs::read_to_string(paths.data_dir.join("mcp-token")) {
            Ok(s) => Ok(Some(s.trim().to_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("reading the token file", e)),
        },
        Backend::Keyring => match entry(paths)?.get_password() {
            Ok(t) => Ok(Some(t)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(paths, &e)),
        },
    }
}

fn write(paths: &Paths, b: Backend, token: &str) -> Result<()> {
    match b {
        Backend::Env => Err(Error::invalid("token", "TETHER_TOKEN is set; change it in the environment instead")),
        Backend::File | Backend::Fallback => write_private(&paths.data_dir.join("mcp-token"), token),
        Backend::Keyring => entry(paths)?.set_password(token).map_err(|e| keyring_error(paths, &e)),
    }
}

/// What to do when the OS keyring cannot be reached (the `keyring_only` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoKeyring {
    /// Keep the token in a 0600 file in the data dir, with a warning.
    UseFile,
    /// Fail, saying how to choose a store.
    Refuse,
}

impl NoKeyring {
    /// As the saved settings say (for processes that hold no `Tether`; unreadable settings
    /// allow the file, as a fresh machine does).
    pub fn saved(paths: &Paths) -> Self {
        let only = crate::settings::Settings::load(paths).is_ok_and(|s| s.keyring_only);
        if only { NoKeyring::Refuse } else { NoKeyring::UseFile }
    }
}

/// The MCP token, created on first use. When the keyring is the store and cannot be reached,
/// falls back to the file (remembered, so every later process finds the same token) unless
/// `no_keyring` refuses.
pub fn mcp_token(paths: &Paths, no_keyring: NoKeyring) -> Result<(String, Backend)> {
    let b = backend(paths);
    let found = match read(paths, b) {
        Ok(found) => found.filter(|t| !t.is_empty()),
        Err(e @ Error::Keyring(_)) => return fall_back(paths, no_keyring, e),
        Err(e) => return Err(e),
    };
    if let Some(t) = found {
        return Ok((t, b));
    }
    let t = generate();
    match write(paths, b, &t) {
        Ok(()) => Ok((t, b)),
        Err(e @ Error::Keyring(_)) => fall_back(paths, no_keyring, e),
        Err(e) => Err(e),
    }
}

fn fall_back(paths: &Paths, no_keyring: NoKeyring, why: Error) -> Result<(String, Backend)> {
    if no_keyring == NoKeyring::Refuse {
        return Err(why);
    }
    let file = paths.data_dir.join("mcp-token");
    tracing::warn!(
        "no OS keyring could be reached; the MCP token is kept in {} (mode 0600) from now on \
         (`tether token store keyring` moves it back; the keyring_only setting refuses the file)",
        file.display()
    );
    paths.ensure()?;
    write_private(&paths.data_dir.join("token-store"), Backend::Fallback.as_str())?;
    if let Some(t) = read(paths, Backend::Fallback)?.filter(|t| !t.is_empty()) {
        return Ok((t, Backend::Fallback));
    }
    let t = generate();
    write_private(&file, &t)?;
    Ok((t, Backend::Fallback))
}

/// Replaces the MCP token; clients configured with the old one get 401 from now on.
pub fn rotate(paths: &Paths) -> Result<(String, Backend)> {
    let b = backend(paths);
    let t = generate();
    write(paths, b, &t)?;
    Ok((t, b))
}

/// Removes the keyring entry (used by tests and `tether token store file`).
pub fn forget_keyring(paths: &Paths) -> Result<()> {
    match entry(paths)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(keyring_error(paths, &e)),
    }
}

/// Where a Cursor API key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeySource {
    /// `CURSOR_API_KEY` in Tether's environment (wins).
    Env,
    /// Stored by `tether cursor-key set` (or `tether cloud login`) where the MCP token is kept.
    Stored,
}

fn cursor_key_entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("cursor-api-key:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

/// A secret kept where the MCP token is kept: its keyring entry, or the 0600 file of that name.
fn stored_secret(paths: &Paths, entry: fn(&Paths) -> Result<keyring::Entry>, file: &str) -> Result<Option<String>> {
    Ok(match backend(paths) {
        Backend::Keyring => match entry(paths)?.get_password() {
            Ok(k) => Some(k),
            Err(keyring::Error::NoEntry) => None,
            Err(e) => return Err(keyring_error(paths, &e)),
        },
        _ => match std::fs::read_to_string(paths.data_dir.join(file)) {
            Ok(k) => Some(k),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(format!("reading {file}"), e)),
        },
    })
}

/// The Cursor API key for runs of the Cursor CLI and Cursor's cloud API, if there is one.
/// Never logged or printed.
pub fn cursor_key(paths: &Paths) -> Result<Option<(String, KeySource)>> {
    if let Some(k) = std::env::var("CURSOR_API_KEY").ok().filter(|k| !k.trim().is_empty()) {
        return Ok(Some((k.trim().to_owned(), KeySource::Env)));
    }
    let stored = stored_secret(paths, cursor_key_entry, "cursor-api-key")?;
    Ok(stored.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()).map(|k| (k, KeySource::Stored)))
}

/// Keeps a Cursor API key where the MCP token is kept (the OS keyring, or the 0600 file store).
pub fn set_cursor_key(paths: &Paths, key: &str) -> Result<()> {
    set_secret(
        paths,
        cursor_key_entry,
        "cursor-api-key",
        key,
        "Cursor API key",
        "paste the key from Cursor's dashboard",
    )
}

/// Forgets the stored Cursor API key (the environment's, if any, still applies).
pub fn forget_cursor_key(paths: &Paths) -> Result<()> {
    forget_secret(paths, cursor_key_entry, "cursor-api-key")
}

/// Keeps a secret where the MCP token is kept; one line, no spaces.
fn set_secret(
    paths: &Paths,
    entry: fn(&Paths) -> Result<keyring::Entry>,
    file: &str,
    value: &str,
    what: &'static str,
    hint: &str,
) -> Result<()> {
    let value = value.trim();
    if value.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid(what, format!("it is empty or has spaces; {hint}")));
    }
    keep_secret(paths, entry, file, value)
}

/// Keeps `value` where the MCP token is kept: the keyring's `entry`, else the 0600 `file` in the
/// data dir (the counterpart of `stored_secret` and `forget_secret`).
fn keep_secret(paths: &Paths, entry: fn(&Paths) -> Result<keyring::Entry>, file: &str, value: &str) -> Result<()> {
    paths.ensure()?;
    match backend(paths) {
        Backend::Keyring => entry(paths)?.set_password(value).map_err(|e| keyring_error(paths, &e)),
        _ => write_private(&paths.data_dir.join(file), value),
    }
}

fn forget_secret(paths: &Paths, entry: fn(&Paths) -> Result<keyring::Entry>, file: &str) -> Result<()> {
    match backend(paths) {
        Backend::Keyring => match entry(paths)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keyring_error(paths, &e)),
        },
        _ => match std::fs::remove_file(paths.data_dir.join(file)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(format!("removing {file}"), e)),
        },
    }
}

fn github_token_entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("github-token:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

/// The GitHub token for runs' pull requests: `GITHUB_TOKEN` in Tether's environment, else the one
/// `tether github login` kept. Never logged or printed.
pub fn github_token(paths: &Paths) -> Result<Option<(String, KeySource)>> {
    if let Some(k) = std::env::var("GITHUB_TOKEN").ok().filter(|k| !k.trim().is_empty()) {
        return Ok(Some((k.trim().to_owned(), KeySource::Env)));
    }
    let stored = stored_secret(paths, github_token_entry, "github-token")?;
    Ok(stored.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()).map(|k| (k, KeySource::Stored)))
}

pub fn set_github_token(paths: &Paths, token: &str) -> Result<()> {
    set_secret(
        paths,
        github_token_entry,
        "github-token",
        token,
        "GitHub token",
        "paste a token with pull request access",
    )
}

pub fn forget_github_token(paths: &Paths) -> Result<()> {
    forget_secret(paths, github_token_entry, "github-token")
}

fn team_password_entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("team-database-password:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

/// The team database's password `tether team join` kept, if any. Never logged or printed.
pub fn team_password(paths: &Paths) -> Result<Option<String>> {
    Ok(stored_secret(paths, team_password_entry, "team-database-password")?.filter(|p| !p.is_empty()))
}

/// Keeps the team database's password where the MCP token is kept. A password may hold spaces,
/// but not line breaks or other control characters.
pub fn set_team_password(paths: &Paths, password: &str) -> Result<()> {
    if password.is_empty() || password.chars().any(char::is_control) {
        return Err(Error::invalid("team database password", "it is empty or holds control characters"));
    }
    keep_secret(paths, team_password_entry, "team-database-password", password)
}

pub fn forget_team_password(paths: &Paths) -> Result<()> {
    forget_secret(paths, team_password_entry, "team-database-password")
}

fn team_identity_entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("team-database-client-certificate:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

/// The client certificate and key (PEM) `tether team join --client-cert` kept, if any. Never
/// logged or printed.
pub fn team_identity(paths: &Paths) -> Result<Option<String>> {
    Ok(stored_secret(paths, team_identity_entry, "team-database-client-certificate")?.filter(|p| !p.trim().is_empty()))
}

/// Keeps the team database's client certificate and key (PEM, checked by the caller) where the
/// MCP token is kept.
pub fn set_team_identity(paths: &Paths, pem: &str) -> Result<()> {
    keep_secret(paths, team_identity_entry, "team-database-client-certificate", pem)
}

pub fn forget_team_identity(paths: &Paths) -> Result<()> {
    forget_secret(paths, team_identity_entry, "team-database-client-certificate")
}

fn webhook_secret_entry(paths: &Paths) -> Result<keyring::Entry> {
    let user = format!("cursor-webhook-secret:{}", paths.data_dir.display());
    keyring::Entry::new(SERVICE, &user).map_err(|e| keyring_error(paths, &e))
}

/// The webhook secret if one was made (never makes one: for the receiver, which must not touch
/// the keyring's write path for a caller it has not checked yet).
pub fn existing_webhook_secret(paths: &Paths) -> Result<Option<String>> {
    Ok(stored_secret(paths, webhook_secret_entry, "cursor-webhook-secret")?
        .map(|s| s.trim().to_owned())
        .filter(|s| s.len() >= 32))
}

/// The secret Cursor signs webhooks with (HMAC-SHA256), made on first use (64 hex characters;
/// Cursor wants at least 32) and kept where the MCP token is kept. Never logged or printed.
pub fn webhook_secret(paths: &Paths) -> Result<String> {
    let stored = stored_secret(paths, webhook_secret_entry, "cursor-webhook-secret")?;
    if let Some(s) = stored.map(|s| s.trim().to_owned()).filter(|s| s.len() >= 32) {
        return Ok(s);
    }
    let s = generate();
    keep_secret(paths, webhook_secret_entry, "cursor-webhook-secret", &s)?;
    Ok(s)
}

/// The hook token: lets `tether hook` report Cursor events and nothing else, so it can sit in a
/// plain 0600 file that hook processes read without touching the keyring.
pub fn hook_token(paths: &Paths) -> Result<String> {
    let p = paths.data_dir.join("hook-token");
    match std::fs::read_to_string(&p) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("reading the hook token", e)),
    }
    paths.ensure()?;
    let t = generate();
    write_private(&p, &t)?;
    Ok(t)
}

/// Constant-time comparison, so response timing does not reveal how much of a guess was right.
pub fn matches(expected: &str, given: &str) -> bool {
    let (a, b) = (expected.as_bytes(), given.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub use tether_store::random_token as generate;

pub(crate) fn write_private(path: &Path, content: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut o = std::fs::OpenOptions::new();
    tether_store::private::create_private(o.write(true).create(true).truncate(true));
    let mut f = o.open(&tmp).map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    f.write_all(content.as_bytes()).map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    f.sync_all().map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_store_round_trip_and_rotation() {
        let d = tempfile::tempdir().unwrap();
        let p = Paths::at(d.path());
        if backend(&p) == Backend::Env {
            return; // TETHER_TOKEN set by the caller's environment
        }
        set_backend(&p, Backend::File).unwrap();
        let (a, b) = mcp_token(&p, NoKeyring::Refuse).unwrap();
        assert_eq!(b, Backend::File);
        assert_eq!(a.len(), 64);
        assert_eq!(mcp_token(&p, NoKeyring::Refuse).unwrap().0, a, "stable across calls");
        let (r, _) = rotate(&p).unwrap();
        assert_ne!(r, a);
        assert_eq!(mcp_token(&p, NoKeyring::Refuse).unwrap().0, r);
        if cfg!(unix) {
            let meta = std::fs::metadata(d.path().join("mcp-token")).unwrap();
            assert_eq!(tether_store::private::mode(&meta), Some(0o600));
        }
        assert!(matches(&r, &r.clone()));
        assert!(!matches(&r, &a));
        assert!(!matches(&r, ""));
    }

    #[test]
    fn hook_token_is_separate_and_stable() {
        let d = tempfile::tempdir().unwrap();
        let p = Paths::at(d.path());
        let h = hook_token(&p).unwrap();
        assert_eq!(hook_token(&p).unwrap(), h);
    }

    /// The real OS keyring. Run by `scripts/test` inside `dbus-run-session` with an unlocked
    /// gnome-keyring (see `scripts/keyring-tests`); ignored elsewhere because a plain test run may
    /// have no keyring at all.
    #[test]
    #[ignore = "needs a Secret Service; scripts/test runs it under dbus-run-session"]
    fn real_keyring_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = Paths::at(d.path());
        assert_eq!(backend(&p), Backend::Keyring);
        let (a, b) = mcp_token(&p, NoKeyring::UseFile).unwrap();
        assert_eq!(b, Backend::Keyring);
        assert_eq!(mcp_token(&p, NoKeyring::UseFile).unwrap().0, a, "read back from the keyring");
        assert!(!d.path().join("mcp-token").exists(), "no file copy while the keyring answers");
        let other = tempfile::tempdir().unwrap();
        assert_ne!(mcp_token(&Paths::at(other.path()), NoKeyring::UseFile).unwrap().0, a, "entries are per data dir");
        forget_keyring(&p).unwrap();
        forget_keyring(&Paths::at(other.path())).unwrap();
    }

    #[test]
    fn no_keyring_falls_back_to_the_file_once_and_for_all_unless_refused() {
        // With no D-Bus session the Secret Service cannot be reached.
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() || backend_is_env() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let p = Paths::at(d.path());
        let err = mcp_token(&p, NoKeyring::Refuse).unwrap_err().to_string();
        assert!(err.contains("tether token store file") && err.contains("TETHER_TOKEN"), "{err}");
        assert!(!d.path().join("mcp-token").exists(), "refused: no file written");

        let (a, b) = mcp_token(&p, NoKeyring::UseFile).unwrap();
        assert_eq!(b, Backend::Fallback);
        assert_eq!(backend(&p), Backend::Fallback, "remembered for every later process");
        assert_eq!(std::fs::read_to_string(d.path().join("mcp-token")).unwrap(), a);
        assert_eq!(mcp_token(&p, NoKeyring::Refuse).unwrap(), (a, Backend::Fallback), "the same token after");
    }

    fn backend_is_env() -> bool {
        std::env::var_os("TETHER_TOKEN").is_some_and(|v| !v.is_empty())
    }
}
