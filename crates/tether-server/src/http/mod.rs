//! The loopback HTTP server: one listener (any loopback address; nothing else is accepted), our
//! own accept loop (HTTP/1, a header deadline, a connection budget that strangers cannot
//! exhaust), and the routes ([`routes`]): `/mcp` behind the bearer token, the GUI's `/api` behind
//! its login, `/health`, `/hook` behind the hook token, the cloud callbacks, the GUI's files.
//!
//! Imports run one way: conn, login, error ← auth ← statics, hook, sse, callback, api ← routes ← serve.

pub mod api;
pub mod auth;
mod callback;
pub mod conn;
pub mod contract;
pub mod error;
pub(crate) mod hook;
pub(crate) mod login;
pub mod routes;
mod serve;
mod sse;
mod statics;

pub use serve::{ServeError, bind_loopback, serve_http};
