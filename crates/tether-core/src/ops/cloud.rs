//! Cursor Cloud as the person and Cursor ask about it: Cursor's webhook saying an agent changed,
//! a cloud run's bootstrap token exchanged for its bearer, and the cloud environment test (the
//! registered cloud executor's doctor). Starting a cloud run is `ops::runs::start`.

use crate::Tether;
use crate::board::cloud;
use crate::board::runs::Run;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::executor::{Check, DoctorAsk};

/// Cursor's webhook said a cloud agent changed (its signature checked): kept by its delivery id
/// (a delivery seen again changes nothing), and the runner following that agent's run reads it
/// now. The run, when a new delivery concerns one that runs.
pub fn cloud_webhook(t: &Tether, delivery: &str, agent: &str, status: &str, raw: &str) -> Result<Option<Run>> {
    if !cloud::record_webhook(&*t.board_db(), delivery, Some(agent), Some(status), raw)? {
        return Err(Error::Conflict(format!("webhook delivery {delivery} was seen already")));
    }
    let run = cloud::live_run_for_agent(&*t.board_db(), agent)?;
    if let Some(r) = &run {
        t.bus.emit(Event::CloudRunChanged { run: r.num() });
    }
    Ok(run)
}

/// A cloud run's one-time bootstrap token exchanged for its scoped bearer: (bearer, run, expiry ms).
pub fn exchange(t: &Tether, bootstrap: &str) -> Result<Option<(String, Run, i64)>> {
    cloud::exchange(&*t.board_db(), bootstrap)
}

/// `GET /api/cloud/doctor`'s answer: the cloud environment test's checks.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct CloudDoctor {
    pub checks: Vec<Check>,
}

/// The cloud environment test: the API URL, the key (kept, and valid), the repository and model
/// asked about, the public URL when one is set; empty when nothing here runs cloud runs.
pub async fn doctor(t: &Tether, ask: &DoctorAsk) -> Vec<Check> {
    match t.executors.get("cloud") {
        Some(e) => e.doctor(t, ask).await,
        None => Vec::new(),
    }
}
