//! tether-runs' integration tests, one binary: cloud runs end to end against the fake Cursor API.

mod cloud;
