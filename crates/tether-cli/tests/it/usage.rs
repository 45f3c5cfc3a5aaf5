//! Usage and budgets end to end through `tether` with the fake Cursor CLI: a run's budget stops
//! it within an event of crossing (warned at 80 % first), its task goes back with the reason and
//! the person is told; a run over budget only at its end is marked so and holds its follow-up
//! until the person approves; a dollar budget without a price is refused; today's budget holds
//! the queue until it is raised; the report counts what was spent. And the account's usage CSV:
//! exact totals per model per day, a re-import adds nothing, a bad row is named by its line.

use serde_json::{Value, json};

use crate::runs::{Env, nix_term};

fn events(e: &Env, id: &str) -> Vec<Value> {
    e.json(&["runs", "show", id, "--events"])["events"].as_array().unwrap().clone()
}

#[test]
fn budgets_stop_runs_hold_what_follows_and_hold_the_queue_for_the_day() {
    let e = Env::new(json!({}));
    let ws = e.ws.to_string_lossy().into_owned();
    let task = e.json(&["task", "add", "Refactor the parser", "--project", &ws]);
    let task = task["id"].as_str().unwrap();

    // 1,000 tokens a turn against 10k: warned at 8k, stopped at 10k, long before its 40 turns.
    let r = e.run_here(
        "[fake:events=40][fake:sleep=40][fake:turn-usage=1000] refactor",
        &["--task", task, "--budget", "10k"],
    );
    assert_eq!(r["status"], "over_budget", "{r:#}");
    assert!(r["error"].as_str().unwrap().contains("went over budget: 10,000 tokens of its budget (10k)"), "{r:#}");
    let log = events(&e, "R-1");
    let kinds: Vec<String> = log
        .iter()
        .filter_map(|ev| match ev["kind"].as_str() {
            Some("status") => ev["status"].as_str().map(str::to_owned),
            Some("usage") => Some("usage".into()),
            _ => None,
        })
        .collect();
    let warned = kinds.iter().position(|k| k == "budget_warning").expect("warned first");
    assert_eq!(kinds[..warned].iter().filter(|k| *k == "usage").count(), 8, "warned at 80 %: {kinds:?}");
    let turns = kinds.iter().filter(|k| *k == "usage").count();
    assert!((10..=11).contains(&turns), "stopped within one event of crossing, not after {turns} turns");
    let spent = r["usage"]["input_tokens"].as_i64().unwrap();
    assert_eq!(spent, turns as i64 * 1000, "the run keeps what it spent");
    let t = e.json(&["task", "show", task]);
    assert_eq!(t["status"], "todo", "the task is back on the board");
    assert!(t["notes"].to_string().contains("over budget"), "{t:#}");
    let inbox = e.json(&["signals", "list", "--to", "human"]);
    assert!(inbox.to_string().contains("R-1 went over budget"), "{inbox:#}");

    // Over only by its final figures (the CLI's result: ~15k tokens against 10k): marked at its
    // end with its result kept, and its follow-up waits for the person.
    let r = e.run_here("plain work", &["--budget", "10k"]);
    assert_eq!(r["status"], "over_budget", "{r:#}");
    assert!(!r["result"].as_str().unwrap().is_empty(), "the partial result is kept");
    let f = e.json(&["runs", "followup", "R-2", "go on", "--follow"]);
    assert_eq!((f["status"].as_str(), f["held"].as_str()), (Some("queued"), Some("budget")), "{f:#}");
    e.json(&["runs", "approve", "R-3"]);
    assert_eq!(e.json(&["runs", "show", "R-2"])["budget_allowed"], true);

    // A dollar budget needs a price for the model.
    let out = e.run(&["run", "x", "--workspace", &ws, "--budget", "$1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no price"), "{out:?}");

    // Approved, the daemon runs it (over its inherited budget again).
    let mut daemon = e.spawn(&["serve", "--port", "0"]);
    e.wait_for("R-3 to run", 60, || e.status("R-3") == "over_budget");

    // Today's budget spent: a new run waits in the queue, and goes once it is raised.
    assert!(e.run(&["settings", "set", "usage.daily_budget", "20k"]).status.success());
    let held = e.json(&["run", "later", "--workspace", &ws]);
    let id = held["id"].as_str().unwrap().to_owned();
    e.wait_for("the run to be held for today", 30, || e.json(&["runs", "show", &id])["held"] == "daily");
    let summary = e.json(&["usage", "--since", "today", "--by", "run", "--source", "runs"]);
    let r1 = summary["rows"].as_array().unwrap().iter().find(|r| r["keys"][0] == "R-1").cloned().unwrap();
    assert_eq!(r1["tokens"], spent, "{summary:#}");
    assert_eq!(summary["coverage"]["runs_with_tokens"], summary["coverage"]["runs"].as_i64().unwrap() - 1);
    assert!(e.run(&["settings", "set", "usage.daily_budget", "1M"]).status.success());
    e.wait_for("the held run to go", 60, || e.status(&id) == "succeeded");
    nix_term(&mut daemon);
}

#[test]
fn the_account_csv_gives_exact_totals_per_model_per_day_once() {
    let e = Env::new(json!({}));
    let csv = e.dir.path().join("usage-events.csv");
    std::fs::write(
        &csv,
        "Date,Cloud Agent ID,Automation ID,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output Tokens,Total Tokens,Cost\n\
         2026-03-01T09:00:00.000Z,,,Included,claude-4.5-sonnet,No,100,20,500,30,650,Included\n\
         2026-03-01T10:00:00.000Z,,,Included,claude-4.5-sonnet,No,1,2,3,4,10,Included\n\
         2026-03-01T11:00:00.000Z,bc-9,,Usage-based,gpt-5,No,0,1000,0,200,1200,$0.03\n\
         2026-03-02T08:00:00.000Z,,,\"Errored, Not Charged\",gpt-5,No,0,50,0,0,50,$0.00\n\
         March the third,,,Included,gpt-5,No,1,1,1,1,4,Included\n",
    )
    .unwrap();
    let csv = csv.to_string_lossy().into_owned();
    let first = e.run(&["usage", "import", &csv]);
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(text.contains("4 new events") && text.contains("line 6: Date \"March the third\""), "{text}");
    let again = e.json(&["usage", "import", &csv]);
    assert_eq!((again["imported"].as_i64(), again["duplicates"].as_i64()), (Some(0), Some(4)));

    let r = e.json(&[
        "usage",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-03",
        "--by",
        "day",
        "--by",
        "model",
        "--source",
        "account",
    ]);
    let rows: Vec<(String, String, i64, i64, Option<f64>)> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["keys"][0].as_str().unwrap().to_owned(),
                row["keys"][1].as_str().unwrap().to_owned(),
                row["items"].as_i64().unwrap(),
                row["tokens"].as_i64().unwrap(),
                row["cost_usd"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("2026-03-01".into(), "claude-4.5-sonnet".into(), 2, 660, Some(0.0)),
            ("2026-03-01".into(), "gpt-5".into(), 1, 1200, Some(0.03)),
            ("2026-03-02".into(), "gpt-5".into(), 1, 50, Some(0.0)),
        ]
    );
    let csv_out = e.run(&[
        "usage",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-03",
        "--by",
        "model",
        "--source",
        "account",
        "--csv",
    ]);
    let csv_out = String::from_utf8_lossy(&csv_out.stdout);
    assert!(
        csv_out.starts_with("source,model,items,with_tokens,input,output,cache_read,cache_write,tokens,cost_usd"),
        "{csv_out}"
    );
    assert!(csv_out.contains("account,gpt-5,2,2,1050,200,0,0,1250,0.0300,false,0,0"), "{csv_out}");

    // A model named like a formula (CSV injection) comes back as text.
    std::fs::write(
        e.dir.path().join("evil.csv"),
        "Date,Kind,Model,Input (w/o Cache Write),Output Tokens,Cost\n\
         2026-03-02T09:00:00.000Z,Included,-2+3+cmd|' /C calc'!A0,1,1,Included\n",
    )
    .unwrap();
    assert!(e.run(&["usage", "import", &e.dir.path().join("evil.csv").to_string_lossy()]).status.success());
    let csv_out = e.run(&[
        "usage",
        "--since",
        "2026-03-02",
        "--until",
        "2026-03-03",
        "--by",
        "model",
        "--source",
        "account",
        "--csv",
    ]);
    let csv_out = String::from_utf8_lossy(&csv_out.stdout);
    assert!(csv_out.contains("account,\"'-2+3+cmd|' /C calc'!A0\",1,"), "{csv_out}");
}

/// A budget past the ceiling or not a number (`inf` and `1e309` read as i64::MAX tokens, `NaN`
/// and `-1` as nothing sensible) is refused naming the forms, on each way the CLI takes one, and
/// in a settings file edited by hand.
#[test]
fn budgets_that_are_not_figures_are_refused_everywhere_the_cli_takes_one() {
    let e = Env::new(json!({}));
    let ws = e.ws.to_string_lossy().into_owned();
    e.json(&["task", "add", "Budgeted"]);
    let refused = |args: &[&str]| {
        let out = e.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("write tokens (200000, 200k"), "{args:?}: {err}");
    };
    for b in ["inf", "1e309", "9223372036854775808", "NaN", "-1", "$1e300"] {
        refused(&["usage", "budget", "T-1", "--", b]);
        refused(&["settings", "set", "usage.daily_budget", "--", b]);
        refused(&["run", "x", "--workspace", &ws, &format!("--budget={b}")]);
    }
    assert_eq!(e.json(&["task", "show", "T-1"])["budget"], serde_json::Value::Null);
    let settings = e.dir.path().join("data/settings.json");
    std::fs::write(&settings, r#"{"usage": {"daily_budget": "inf"}}"#).unwrap();
    refused(&["usage"]);
}
