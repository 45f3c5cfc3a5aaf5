//! docs/api.md against the code: every route of the route table (`API_ROUTES`,
//! `CALLBACK_ROUTES`) is documented as "`METHOD /path`", every route the document names exists,
//! and every event the GUI's stream can send (`Event::NAMES`, kept in step with the enum here)
//! has its row.

use tether_core::events::{Event, IndexEvent, SettingsEvent};
use tether_server::http::routes::{API_ROUTES, CALLBACK_ROUTES};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
    std::fs::read_to_string(path).expect("docs/api.md")
}

/// "`METHOD /path`" as the document writes a route.
fn written(method: &str, path: &str) -> String {
    format!("`{} {path}`", method.to_uppercase())
}

#[test]
fn every_route_is_documented_and_every_documented_route_exists() {
    let doc = doc();
    let routes: Vec<String> = API_ROUTES.iter().chain(CALLBACK_ROUTES).map(|(m, p)| written(m, p)).collect();
    let missing: Vec<&String> = routes.iter().filter(|r| !doc.contains(r.as_str())).collect();
    assert!(missing.is_empty(), "docs/api.md does not mention {missing:?}");

    // Every "`METHOD /api/…`" or "`METHOD /webhooks/…`" in the document (a query left off) is
    // a route.
    let mut unknown = Vec::new();
    for piece in doc.split('`').skip(1).step_by(2) {
        let Some((method, path)) = piece.split_once(' ') else { continue };
        let path = path.split('?').next().unwrap_or(path);
        let routed = path.starts_with("/api/") || path.starts_with("/webhooks/");
        let is_method = ["GET", "POST", "PATCH", "PUT", "DELETE"].contains(&method);
        if is_method && routed && !routes.contains(&written(method, path)) {
            unknown.push(piece.to_owned());
        }
    }
    assert!(unknown.is_empty(), "docs/api.md names routes the server does not have: {unknown:?}");
}

/// One of each event, by a match without a wildcard: a new variant stops this compiling until
/// it is added here (and, when the GUI hears it, to `Event::NAMES` and docs/api.md).
fn one_of_each() -> Vec<Event> {
    let all = vec![
        Event::Sessions { ids: None },
        Event::Tasks { rev: 1 },
        Event::Signals { rev: 1 },
        Event::Runs { rev: 1 },
        Event::Agents {},
        Event::Index(IndexEvent::default()),
        Event::Settings(SettingsEvent::default()),
        Event::RunCancelRequested { run: 1 },
        Event::CloudRunChanged { run: 1 },
        Event::ReindexRequested,
        Event::SignalsDrained { session: String::new() },
        Event::Usage { imported: 1 },
        Event::Budget { run: "R-1".into(), level: "warn".into(), message: String::new() },
    ];
    for e in &all {
        match e {
            Event::Sessions { .. }
            | Event::Tasks { .. }
            | Event::Signals { .. }
            | Event::Runs { .. }
            | Event::Agents {}
            | Event::Index(_)
            | Event::Settings(_)
            | Event::RunCancelRequested { .. }
            | Event::CloudRunChanged { .. }
            | Event::ReindexRequested
            | Event::SignalsDrained { .. }
            | Event::Usage { .. }
            | Event::Budget { .. } => {}
        }
    }
    all
}

#[test]
fn every_event_the_gui_hears_is_named_and_documented() {
    let mut named: Vec<&str> = one_of_each().iter().filter_map(Event::name).collect();
    named.sort_unstable();
    let mut names = Event::NAMES.to_vec();
    names.sort_unstable();
    assert_eq!(named, names, "Event::NAMES is every name Event::name gives");

    let doc = doc();
    let section = doc.split("## Events").nth(1).expect("docs/api.md has an Events section");
    for name in Event::NAMES.iter().chain(&["hello"]) {
        assert!(section.contains(&format!("| `{name}` |")), "docs/api.md's events table has no row for `{name}`");
    }
    // The run log's stream (`GET /api/runs/{id}/events`) sends these.
    for name in ["events", "status", "lagged"] {
        assert!(doc.contains(&format!("`{name}`")), "docs/api.md does not describe the run stream's `{name}`");
    }
}
