//! Cursor Cloud agents for Tether: a client of Cursor's Cloud Agents API (v1; v0 only to launch
//! with a webhook), and the driver that runs a queued run of kind `cloud` — launch or follow-up,
//! the run's stream (resumed, or polled when it expired), cancel and time limit enforced at
//! Cursor — turning it into the same typed run events local runs have, and its transcript into
//! a chat in Tether's index.
//!
//! The run model and every decision that must hold across processes live in tether-core
//! (`board::runs`, `board::cloud`); the queue and its limits in tether-runs, which calls
//! [`drive::drive`] for cloud runs. The API key is never logged, printed, or put in an event.
//! Must not depend on axum, rmcp, clap or tauri.

/// Installs the process's one TLS crypto provider (ring) for every HTTP client it builds. reqwest
/// is built with `rustls-no-provider` (ring builds faster than aws-lc), so a binary that builds
/// any reqwest client — ours, or one inside a library such as rmcp's — calls this first; it is
/// idempotent and cheap.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

pub mod client;
pub mod doctor;
pub mod drive;
pub mod error;
pub mod transcript;
pub mod webhook;

pub use client::{Client, Pace};
pub use error::{CloudError, Kind};

/// A client for this data dir's settings and key.
pub fn client_for(t: &tether_core::Tether) -> Result<Client, CloudError> {
    let settings = t.settings().map_err(|e| CloudError::config(e.to_string()))?;
    client_from(t, &settings)
}

/// A client for these settings and this data dir's key.
pub fn client_from(t: &tether_core::Tether, settings: &tether_core::settings::Settings) -> Result<Client, CloudError> {
    let key = tether_core::token::cursor_key(&t.paths)
        .map_err(|e| CloudError::config(e.to_string()))?
        .map(|(k, _)| k)
        .ok_or_else(|| CloudError::config("no Cursor API key: run `tether cloud login`, or set CURSOR_API_KEY"))?;
    Client::new(&client::base_url(settings.cloud.api_url.as_deref())?, key)
}
