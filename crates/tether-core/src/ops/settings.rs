//! The settings: what is saved next to what the running daemon uses, and saving a change (the
//! person's; the daemon applies it a moment later and says so on the bus).

use crate::Tether;
use crate::board::principal::Principal;
use crate::error::{Error, Result};
use crate::settings::{DEFAULT_PORT, RunningPort, Settings, SettingsPatch, SettingsView};

/// The saved settings next to what this daemon (or, from another process, the running one)
/// uses: which fields are overridden and which wait for a restart.
pub fn get(t: &Tether) -> Result<SettingsView> {
    Ok(view(t, t.settings()?))
}

fn view(t: &Tether, s: Settings) -> SettingsView {
    let port = t.daemon.listening().unwrap_or_else(|| {
        let port = crate::daemon::running(&t.paths).and_then(|d| d.port).unwrap_or(DEFAULT_PORT);
        RunningPort { port, from: "default" }
    });
    s.compare(&t.cursor(), port, DEFAULT_PORT)
}

/// Saves a change (validated as a whole: nothing is saved if any part is wrong). A daemon moves
/// to a newly saved port at once, so one another program holds is refused here.
pub fn update(t: &Tether, who: &Principal, patch: &SettingsPatch) -> Result<SettingsView> {
    if !who.is_person() {
        return Err(Error::NotAllowed("the settings are the person's to change".into()));
    }
    let moving = t.daemon.listening().filter(|r| matches!(r.from, "settings" | "default"));
    if let (Some(Some(port)), Some(now)) = (patch.port, moving)
        && port != now.port
        && std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
    {
        return Err(Error::Invalid { what: "port", reason: format!("{port} is in use by another program") });
    }
    Ok(view(t, t.update_settings(patch)?))
}
