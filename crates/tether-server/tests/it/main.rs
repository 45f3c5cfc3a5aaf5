//! tether-server's tests, one binary, each against a daemon in this process
//! (`tether_testkit::daemon::TestDaemon`: the Host `tether serve` runs, on port 0).
//!
//! Which level owns which rule: the operations' rules (who may do what, what a write changes)
//! are tested here through the surfaces that map onto them, once per surface for the mapping
//! (arguments in, result and `{code, message}` out); what real clients see of the protocol
//! (SDK handshakes, the Inspector, the conformance suite, a browser) stays in tests/mcp,
//! tests/mcp-ts and tests/ui-e2e.

mod code_origin;
mod docs_api;
mod http_board;
mod http_doors;
mod http_events;
mod http_runs;
mod http_sessions;
mod http_support;
mod http_system;
mod mcp_board;
mod mcp_errors;
mod mcp_resources;
mod mcp_runs;
mod mcp_sessions;
mod mcp_util;
mod smoke;
mod team_outage;
mod team_runners;
mod team_sharing;
mod team_trust;
