//! The `tether` binary end to end, one test binary: each module owns one behaviour and runs the
//! real binary against generated Cursor data, fakes of the Cursor CLI and Cloud API, and temp
//! homes; `env` is the sandbox they share.

mod env;

mod changes;
mod cloud;
mod code_origin;
mod hardening;
mod history;
mod runs;
mod settings;
mod signals;
mod tasks;
mod team;
mod usage;
