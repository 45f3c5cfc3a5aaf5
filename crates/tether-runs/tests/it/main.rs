//! tether-runs' integration tests, one binary: cloud runs end to end against the fake Cursor API,
//! and a run driven by an executor the host registered.

mod cloud;
mod executor;
