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

pub mod client;
pub mod doctor;
pub mod drive;
pub mod error;
mod tls;
pub mod transcript;
pub mod webhook;

pub use client::{Client, Pace, client_for, client_from};
pub use error::{CloudError, Kind};
pub use tls::install_tls_provider;
