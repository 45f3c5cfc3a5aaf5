//! The daemon's own routes over HTTP: status and `/health` (no token, nothing secret), the
//! doctor, insights, the settings (read; saved as a whole or not at all), a re-index (202, then
//! `index` events), installing into a project, the GUI's login (a one-time code for token
//! holders → an HttpOnly cookie), and rotating the token (the old one stops working at once).

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tether_testkit::daemon::TestDaemon;

use crate::http_support::{assert_error, indexed, mcp_init, ok};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_health_doctor_and_insights() {
    let d = TestDaemon::start_on(tether_testkit::eras::build_all).await;
    indexed(&d).await;

    // /health: for anyone, nothing secret.
    let res = d.bare(Method::GET, "/health").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert!(!text.contains(&d.token), "no token in /health");
    let h: Value = serde_json::from_str(&text).unwrap();
    assert_eq!((&h["status"], &h["index"]["state"], &h["mcp_sessions"]), (&json!("ok"), &json!("idle"), &json!(0)));
    assert!(h["version"].is_string() && h["uptime_s"].is_u64() && h["index"]["sessions"].as_i64() > Some(0), "{h}");

    // Status: health, where it serves, what needs the person, the MCP sessions.
    let mcp = d.mcp().await;
    let s = ok(d.get("/api/status").await);
    assert_eq!(s["status"], "ok");
    assert_eq!(s["url"], format!("{}/mcp", d.base));
    assert_eq!((&s["paused"], &s["moved_from"]), (&json!(false), &Value::Null));
    assert!(s["attention"].is_array() && s["index"]["messages"].as_i64() > Some(0), "{s}");
    let sessions = s["mcp_sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{s}");
    assert!(sessions[0]["id"].is_string() && sessions[0]["transport"].is_string(), "{s}");
    // /health counts the session once its peer is registered, which the server does just after
    // answering `initialize` (status lists it from the request): a moment later under load.
    let mut n = Value::Null;
    for _ in 0..50 {
        n = ok(d.get("/health").await)["mcp_sessions"].clone();
        if n == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(n, 1);
    mcp.cancel().await.unwrap();

    // The doctor: each source with its status, and the Cursor CLI.
    let doc = ok(d.get("/api/doctor").await);
    let sources = doc["sources"].as_array().unwrap();
    assert!(!sources.is_empty(), "{doc}");
    assert!(sources.iter().all(|s| ["complete", "partial", "error"].contains(&s["status"].as_str().unwrap())), "{doc}");
    assert!(doc["cursor_cli"]["found"].is_boolean(), "{doc}");

    // Insights, whole and narrowed.
    let all = ok(d.get("/api/insights").await);
    for k in ["totals", "days", "projects", "busiest_days", "longest", "tags", "models", "tokens", "tasks", "runs"] {
        assert!(all.get(k).is_some(), "{k}: {all}");
    }
    assert!(!all["days"].as_array().unwrap().is_empty(), "{all}");
    let future = ok(d.get("/api/insights?since=99999999999999").await);
    assert_eq!(future["days"], json!([]), "{future}");
    assert_error(&d.get("/api/insights?since=yesterday").await, 400, "invalid_input");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_saved_as_a_whole_or_not_at_all() {
    let d = TestDaemon::start().await;
    let v = ok(d.get("/api/settings").await);
    let s = &v["settings"];
    for k in [
        "cursor_user_dir",
        "cursor_home",
        "port",
        "notifications",
        "launch_at_login",
        "signal_sla_minutes",
        "runs",
        "cloud",
    ] {
        assert!(s.get(k).is_some(), "{k}: {v}");
    }
    assert_eq!(v["port"], d.host.port());
    assert!(v["cursor_user_dirs"].is_array() && v["cursor_homes"].is_array() && v["overridden"].is_object(), "{v}");
    assert!(v["restart_needed"].is_array(), "{v}");
    assert_eq!(s["signal_sla_minutes"]["question"], 10);

    let saved = ok(d
        .patch(
            "/api/settings",
            json!({"notifications": false, "signal_sla_minutes": {"question": 5}, "runs": {"max_total": 2}}),
        )
        .await);
    assert_eq!(saved["settings"]["notifications"], false);
    assert_eq!(saved["settings"]["signal_sla_minutes"]["question"], 5);
    assert_eq!(saved["settings"]["signal_sla_minutes"]["review_requested"], 30, "merged, not replaced");
    assert_eq!(saved["settings"]["runs"]["max_total"], 2);
    assert_eq!(ok(d.get("/api/settings").await)["settings"], saved["settings"]);

    // Each bad patch is refused whole: nothing of it is saved.
    let missing = d.dir.path().join("no-such-folder");
    for (patch, status) in [
        (json!({"notifications": true, "port": 80}), 400),
        (json!({"notifications": true, "cursor_user_dir": missing}), 400),
        (json!({"notifications": true, "runs": {"max_total": 0}}), 400),
        (json!({"notifications": true, "signal_sla_minutes": {"shout": 5}}), 400),
        (json!({"notifications": true, "cloud": {"public_url": "http://tunnel.example.com"}}), 400),
        (json!({"notifications": true, "colour": "blue"}), 422),
        (json!({"notifications": true, "runs": {"max_totl": 2}}), 422),
        (json!({"notifications": "yes"}), 422),
    ] {
        assert_error(&d.patch("/api/settings", patch.clone()).await, status, "invalid_input");
        assert_eq!(ok(d.get("/api/settings").await)["settings"], saved["settings"], "after {patch}");
    }
    // `null` resets one to its default.
    let reset = ok(d.patch("/api/settings", json!({"cloud": {"public_url": "https://t.example.com"}})).await);
    assert_eq!(reset["settings"]["cloud"]["public_url"], "https://t.example.com");
    let reset = ok(d.patch("/api/settings", json!({"cloud": {"public_url": null}})).await);
    assert_eq!(reset["settings"]["cloud"]["public_url"], Value::Null);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reindex_is_accepted_and_reports_progress() {
    let d = TestDaemon::start_on(tether_testkit::eras::build_all).await;
    indexed(&d).await;
    let mut ev = d.events("/api/events").await;
    let res = d.request(Method::POST, "/api/index").send().await.unwrap();
    assert_eq!(res.status(), 202);
    let start = ev.next_named("index", Duration::from_secs(10)).await.expect("an index event");
    assert_eq!(start.data["state"], "indexing", "{:?}", start.data);
    let end = loop {
        let e = ev.next_named("index", Duration::from_secs(20)).await.expect("the pass ends");
        if e.data["state"] != "indexing" {
            break e;
        }
    };
    assert_eq!(end.data["state"], "idle", "{:?}", end.data);
    assert!(end.data["sessions"].as_u64() > Some(0), "{:?}", end.data);
    drop(ev);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_installs_into_a_project_or_shows_what_it_would() {
    let d = TestDaemon::start().await;
    let project = d.folder("project");
    let plan = ok(d.post("/api/init", json!({"project": project, "dry_run": true})).await);
    assert_eq!(plan["applied"], false);
    assert!(plan["diff"].as_str().is_some_and(|s| !s.is_empty()) && plan["skipped"].is_array(), "{plan}");
    let changed: Vec<String> = serde_json::from_value(plan["changed"].clone()).unwrap();
    assert!(!changed.is_empty(), "{plan}");
    assert!(!project.join(".cursor").exists(), "a dry run writes nothing");
    let done = ok(d.post("/api/init", json!({"project": project})).await);
    assert_eq!(done["applied"], true);
    for f in &changed {
        assert!(std::path::Path::new(f).exists(), "{f}");
    }
    assert!(changed.iter().all(|f| f.starts_with(d.dir.path().to_str().unwrap())), "only in the temp dir: {changed:?}");
    assert_error(&d.post("/api/init", json!({"project": d.dir.path().join("nowhere")})).await, 400, "invalid_input");
    assert_error(&d.post("/api/init", json!({"dry_run": true})).await, 422, "invalid_input");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_plugin_writes_the_local_plugin_without_the_token_and_removes_it() {
    let d = TestDaemon::start().await;
    let plan = ok(d.post("/api/init/plugin", json!({"dry_run": true})).await);
    assert_eq!(plan["applied"], false);
    let changed: Vec<String> = serde_json::from_value(plan["changed"].clone()).unwrap();
    assert!(changed.iter().any(|f| f.ends_with("plugins/local/tether/.cursor-plugin/plugin.json")), "{plan}");
    assert!(changed.iter().all(|f| !std::path::Path::new(f).exists()), "a dry run writes nothing");
    let done = ok(d.post("/api/init/plugin", json!({})).await);
    assert_eq!(done["changed"], plan["changed"]);
    for f in &changed {
        assert!(f.starts_with(d.dir.path().to_str().unwrap()), "only in the temp dir: {f}");
        assert!(!std::fs::read_to_string(f).unwrap().contains(&d.token), "{f} holds the token");
    }
    let gone = ok(d.post("/api/init/plugin", json!({"remove": true})).await);
    assert_eq!(gone["changed"].as_array().map(Vec::len), Some(changed.len()), "{gone}");
    assert!(changed.iter().all(|f| !std::path::Path::new(f).exists()));
    assert_error(&d.post("/api/init/plugin", json!({"dry_run": "yes"})).await, 422, "invalid_input");
    d.stop().await;
}

/// A client that keeps redirects to itself (to see the login page's answer).
fn browser() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gui_logs_in_with_a_one_time_code_and_the_token_rotates() {
    let d = TestDaemon::start().await;
    let b = browser();
    // Only a token holder mints a code.
    assert_error(
        &TestDaemon::send(d.bare(Method::POST, "/api/login-code").header("X-Tether", "1")).await,
        401,
        "unauthorized",
    );
    let code = ok(d.post("/api/login-code", json!({})).await)["code"].as_str().unwrap().to_owned();

    let login = |code: &str| b.get(format!("{}/login?code={code}", d.base)).send();
    let res = login(&code).await.unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/");
    let set = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    for part in ["tether_ui=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
        assert!(set.contains(part), "{part}: {set}");
    }
    let cookie = set.split(';').next().unwrap().to_owned();
    assert_eq!(login(&code).await.unwrap().status(), 401, "a code works once");
    assert_eq!(login("made-up").await.unwrap().status(), 401);
    assert_eq!(b.get(format!("{}/login", d.base)).send().await.unwrap().status(), 400);

    // The cookie reads and (with the header) writes, but mints no codes.
    let with_cookie = |m: Method, path: &str| b.request(m, format!("{}{path}", d.base)).header("Cookie", &cookie);
    assert_eq!(with_cookie(Method::GET, "/api/sessions").send().await.unwrap().status(), 200);
    let r = TestDaemon::send(with_cookie(Method::POST, "/api/tasks").json(&json!({"title": "t"}))).await;
    assert_error(&r, 403, "forbidden");
    let r =
        TestDaemon::send(with_cookie(Method::POST, "/api/tasks").header("X-Tether", "1").json(&json!({"title": "t"})))
            .await;
    assert_eq!(r.0, 200, "{}", r.1);
    let r = TestDaemon::send(with_cookie(Method::POST, "/api/login-code").header("X-Tether", "1")).await;
    assert_error(&r, 401, "unauthorized");
    let r = TestDaemon::send(d.bare(Method::GET, "/api/status").header("Cookie", "tether_ui=forged")).await;
    assert_error(&r, 401, "unauthorized");

    // Rotating the token: never sent; the old one stops at once (API and MCP); the cookie stays.
    let res = d.request(Method::POST, "/api/token/rotate").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!({"rotated": true}));
    let new = tether_core::token::mcp_token(&d.tether().paths, tether_core::token::NoKeyring::Refuse).unwrap().0;
    assert!(new != d.token && !text.contains(&new) && !text.contains(&d.token));
    assert_error(&d.get("/api/status").await, 401, "unauthorized");
    let mcp = |token: &str| mcp_init(&d, Some(token), None).send();
    assert_eq!(mcp(&d.token).await.unwrap().status(), 401);
    assert_eq!(mcp(&new).await.unwrap().status(), 200);
    assert_eq!(d.bare(Method::GET, "/api/status").bearer_auth(&new).send().await.unwrap().status(), 200);
    assert_eq!(with_cookie(Method::GET, "/api/status").send().await.unwrap().status(), 200, "the browser stays in");
    d.stop().await;
}

/// Usage over HTTP: the account's CSV imported (once), the report as JSON and as CSV, the
/// summary and prices, a task's budget; bad groupings and files are refused with a reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_reports_imports_and_budgets() {
    let d = TestDaemon::start().await;
    let csv = "Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output,Total Tokens,Cost\n\
               2026-03-01T09:00:00.000Z,Usage-based,gpt-5,No,0,1000,0,200,1200,$0.03\n\
               2026-03-01T10:00:00.000Z,Usage-based,gpt-5,No,0,10,0,2,12,$0.01\n";
    let body = json!({"file": "usage.csv", "csv": csv});
    let r = ok(d.post("/api/usage/import", body.clone()).await);
    assert_eq!((&r["imported"], &r["malformed"]), (&json!(2), &json!([])), "{r}");
    assert_eq!(ok(d.post("/api/usage/import", body).await)["duplicates"], 2);
    assert_error(
        &d.post("/api/usage/import", json!({"file": "x.csv", "csv": "Model\ngpt-5\n"})).await,
        400,
        "invalid_input",
    );

    let q = "since=2026-03-01&until=2026-03-02&by=model&source=account";
    let rep = ok(d.get(&format!("/api/usage?{q}")).await);
    assert_eq!(rep["rows"][0]["keys"], json!(["gpt-5"]), "{rep}");
    assert_eq!((&rep["rows"][0]["tokens"], &rep["rows"][0]["cost_usd"]), (&json!(1212), &json!(0.04)), "{rep}");
    let res = d.request(Method::GET, &format!("/api/usage?{q}&format=csv")).send().await.unwrap();
    assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(res.text().await.unwrap().contains("account,gpt-5,2,2,1010,202,0,0,1212,0.0400"));
    // A formula in an imported cell comes back as text, not a live formula (CSV injection).
    let evil = "Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output,Total Tokens,Cost\n\
                2026-03-02T11:00:00.000Z,Usage-based,\"=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\",No,0,1,0,0,1,$0.01\n\
                2026-03-02T11:00:01.000Z,Usage-based,@SUM(A1),No,0,1,0,0,1,$0.01\n";
    ok(d.post("/api/usage/import", json!({"file": "evil.csv", "csv": evil})).await);
    let q2 = "since=2026-03-02&until=2026-03-03&by=model&source=account";
    let res = d.request(Method::GET, &format!("/api/usage?{q2}&format=csv")).send().await.unwrap();
    let text = res.text().await.unwrap();
    assert!(text.contains("account,\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\",1,"), "{text}");
    assert!(text.contains("account,\"'@SUM(A1)\",1,"), "{text}");
    assert!(!text.contains(",=") && !text.contains(",@"), "{text}");
    assert_error(&d.get("/api/usage?by=colour").await, 400, "invalid_input");
    let encoded = ok(d.get("/api/usage?since=2026-03-01&until=2026-03-02&by=day%2Cmodel&source=account").await);
    assert_eq!(encoded["rows"][0]["keys"], json!(["2026-03-01", "gpt-5"]), "a comma sent percent-encoded: {encoded}");
    assert_error(&d.get("/api/usage?since=last+tuesday").await, 400, "invalid_input");

    let s = ok(d.get("/api/usage/summary").await);
    assert!(s["line"].as_str().unwrap().starts_with("Runs today: 0 tokens"), "{s}");
    assert!(ok(d.get("/api/usage/prices").await)["models"]["gpt-5"]["output"].is_number());

    let t = ok(d.post("/api/tasks", json!({"title": "Budgeted"})).await);
    let id = t["id"].as_str().unwrap();
    assert_eq!(ok(d.put(&format!("/api/tasks/{id}/budget"), json!({"budget": "500k"})).await)["budget"], "500k");
    assert_eq!(ok(d.get(&format!("/api/tasks/{id}")).await)["budget"], "500k");
    assert_error(&d.put(&format!("/api/tasks/{id}/budget"), json!({"budget": "lots"})).await, 422, "invalid_input");
    // Past the ceiling or not a number: refused naming the forms, never i64::MAX tokens.
    for budget in [json!("inf"), json!("1e309"), json!("9223372036854775808"), json!("-1"), json!("NaN"), json!(1e300)]
    {
        let r = d.put(&format!("/api/tasks/{id}/budget"), json!({"budget": budget})).await;
        assert_error(&r, 422, "invalid_input");
        assert!(r.1["message"].as_str().unwrap().contains("write tokens (200000, 200k"), "{budget}: {}", r.1);
    }
    assert_eq!(ok(d.get(&format!("/api/tasks/{id}")).await)["budget"], "500k", "the budget before stays");
    let r = d.patch("/api/settings", json!({"usage": {"daily_budget": "inf"}})).await;
    assert!(r.0.is_client_error() && r.1["code"] == "invalid_input", "{r:?}");
    assert!(r.1["message"].as_str().unwrap().contains("write tokens (200000, 200k"), "{r:?}");
    assert!(ok(d.get("/api/settings").await)["settings"]["usage"]["daily_budget"].is_null());
    d.stop().await;
}

/// A period that is not one (`-5d` read as five days ahead, a count past milliseconds) is
/// invalid input, a coded 400, on every route that takes one; never 200 with everything, or a 5xx.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_periods_are_invalid_input() {
    let d = TestDaemon::start().await;
    for since in ["-5d", "-1y", "0d", "99999999999999999d", "1e3d"] {
        let r = d.get(&format!("/api/usage?since={since}")).await;
        assert_error(&r, 400, "invalid_input");
    }
    for since in ["-5d", "-24h", "99999999999999999d", "9223372036854775807w", "d"] {
        assert_error(&d.get(&format!("/api/trace/written?since={since}")).await, 400, "invalid_input");
        assert_error(&d.get(&format!("/api/trace/export?since={since}")).await, 400, "invalid_input");
    }
    ok(d.get("/api/trace/written?since=7d").await);
    ok(d.get("/api/usage?since=7d").await);
    d.stop().await;
}
