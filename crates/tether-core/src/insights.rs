//! Insights: aggregates over the index and the board for the Insights view and `tether stats` —
//! activity per day (by source), where the work went (projects, busiest days, longest chats,
//! tags), which models answered, tokens only where they were recorded, tasks done and runs by
//! outcome. Read-only over our store; prints nothing.
//!
//! Days are the machine's local days. Chats count on the day they started; messages on the day
//! their chat was last active (message times are missing in many of Cursor's storage eras, and
//! a per-message scan would not stay fast on a year of history).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Datelike, Days, Local, NaiveDate, TimeZone};
use rusqlite::params;
use serde::Serialize;

use crate::error::Result;
use crate::store::Store;

#[derive(Debug, Clone, Default)]
pub struct InsightsQuery {
    /// Only chats active since (epoch ms).
    pub since: Option<i64>,
    /// Only this project (a path, or a folder above it).
    pub project: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Insights {
    pub totals: Totals,
    /// One entry per local day with activity, oldest first.
    pub days: Vec<Day>,
    pub projects: Vec<ProjectStat>,
    pub busiest_days: Vec<Day>,
    pub longest: Vec<ChatStat>,
    pub tags: Vec<TagStat>,
    pub models: Vec<ModelStat>,
    /// Chats per model per week (`week` is the Monday), oldest first.
    pub models_by_week: Vec<ModelWeek>,
    pub tokens: Tokens,
    pub tasks: TaskStats,
    pub runs: Vec<RunStat>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Totals {
    pub chats: i64,
    pub messages: i64,
    pub projects: i64,
    pub days_active: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Day {
    /// `YYYY-MM-DD`, local time.
    pub day: String,
    pub chats: i64,
    pub messages: i64,
    /// Chats started that day, by source.
    pub ide: i64,
    pub cli: i64,
    pub cloud: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ProjectStat {
    /// `None`: chats with no known project.
    pub project: Option<String>,
    pub chats: i64,
    pub messages: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ChatStat {
    pub id: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub source: String,
    pub messages: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TagStat {
    pub tag: String,
    pub chats: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ModelStat {
    /// `unknown` when Cursor recorded none.
    pub model: String,
    pub chats: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ModelWeek {
    pub week: String,
    pub model: String,
    pub chats: i64,
}

/// Token figures exist only for Tether's own runs (the Cursor CLI's `result` usage); Cursor's
/// chat databases mostly record zero, so no chat figure is shown rather than an invented one.
#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Tokens {
    pub runs: i64,
    pub runs_with_figures: i64,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TaskStats {
    pub done_per_day: Vec<DayCount>,
    /// From the last claim to done, over the tasks done in the range.
    pub claim_to_done: Option<Spread>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct DayCount {
    pub day: String,
    pub count: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Spread {
    pub count: i64,
    pub p50_ms: i64,
    pub p90_ms: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct RunStat {
    pub kind: String,
    pub status: String,
    pub count: i64,
}

/// The filter every session query shares: `?1` since (ms or NULL), `?2` project (or NULL).
const SCOPE: &str = "(?1 IS NULL OR coalesce(s.updated_at, s.created_at) >= ?1)
    AND (?2 IS NULL OR s.project = ?2 OR s.project LIKE ?2 || '/%')";

/// One chat as the day-based figures read it.
struct ChatRow {
    created: Option<i64>,
    updated: Option<i64>,
    origin: String,
    messages: i64,
    project: Option<String>,
    model: Option<String>,
}

/// Totals, days, projects and models (by week too), gathered in one pass over the chats in scope.
#[derive(Default)]
struct ChatPass {
    totals: Totals,
    /// Per project (`None`: no known project): chats, messages.
    projects: HashMap<Option<String>, (i64, i64)>,
    models: HashMap<String, i64>,
    active: HashSet<NaiveDate>,
    days: BTreeMap<NaiveDate, Day>,
    weeks: BTreeMap<(NaiveDate, String), i64>,
}

/// The machine's local day of an epoch-ms time (whole seconds, as SQLite's `unixepoch` read them).
fn local_day(ms: i64) -> Option<NaiveDate> {
    Local.timestamp_opt(ms / 1000, 0).earliest().map(|t| t.date_naive())
}

/// The Monday of a day's week (the week a chat counts in for models by week).
fn monday_of(d: NaiveDate) -> NaiveDate {
    d - Days::new(u64::from(d.weekday().num_days_from_monday()))
}

impl ChatPass {
    fn add(&mut self, r: ChatRow) {
        self.totals.chats += 1;
        self.totals.messages += r.messages;
        let project = self.projects.entry(r.project).or_default();
        (project.0, project.1) = (project.0 + 1, project.1 + r.messages);
        let model = r.model.as_deref().map(str::trim).filter(|m| !m.is_empty()).unwrap_or("unknown");
        *self.models.entry(model.to_owned()).or_default() += 1;
        // Chats count on the day they started; messages on the day their chat was last active.
        if let Some(d) = r.created.or(r.updated).and_then(local_day) {
            let day = self.days.entry(d).or_default();
            day.chats += 1;
            match r.origin.as_str() {
                "ide" => day.ide += 1,
                "cli" => day.cli += 1,
                "cloud" => day.cloud += 1,
                _ => {}
            }
            *self.weeks.entry((monday_of(d), model.to_owned())).or_default() += 1;
        }
        if let Some(d) = r.updated.or(r.created).and_then(local_day) {
            self.days.entry(d).or_default().messages += r.messages;
            self.active.insert(d);
        }
    }

    fn finish(self, out: &mut Insights) {
        let ymd = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
        let known_projects = self.projects.keys().filter(|p| p.is_some()).count() as i64;
        out.totals = Totals { projects: known_projects, days_active: self.active.len() as i64, ..self.totals };
        let mut projects: Vec<ProjectStat> = self
            .projects
            .into_iter()
            .map(|(project, (chats, messages))| ProjectStat { project, chats, messages })
            .collect();
        projects.sort_by(|a, b| {
            b.messages.cmp(&a.messages).then(b.chats.cmp(&a.chats)).then_with(|| a.project.cmp(&b.project))
        });
        projects.truncate(10);
        out.projects = projects;
        let mut models: Vec<ModelStat> =
            self.models.into_iter().map(|(model, chats)| ModelStat { model, chats }).collect();
        models.sort_by(|a, b| b.chats.cmp(&a.chats).then_with(|| a.model.cmp(&b.model)));
        out.models = models;
        out.days = self.days.into_iter().map(|(d, day)| Day { day: ymd(d), ..day }).collect();
        let mut weeks: Vec<ModelWeek> =
            self.weeks.into_iter().map(|((w, model), chats)| ModelWeek { week: ymd(w), model, chats }).collect();
        // Oldest week first; within a week the most chats first, then by name.
        weeks.sort_by(|a, b| a.week.cmp(&b.week).then(b.chats.cmp(&a.chats)).then_with(|| a.model.cmp(&b.model)));
        out.models_by_week = weeks;
    }
}

pub fn insights(store: &Store, q: &InsightsQuery) -> Result<Insights> {
    let project = q.project.as_deref().map(|p| p.trim_end_matches('/').to_owned()).filter(|p| !p.is_empty());
    let p = params![q.since, project];
    store.read(|c| {
        let mut out = Insights::default();
        // Every figure by day in one pass over the chats in scope, their local days worked out here:
        // SQLite's `date(…, 'localtime')` per row, in four scans, was most of this view's time.
        let mut pass = ChatPass::default();
        let mut st = c.prepare(&format!(
            "SELECT s.created_at, s.updated_at, s.origin, s.message_count, s.project, s.model FROM sessions s WHERE {SCOPE}"
        ))?;
        let mut rows = st.query(p)?;
        while let Some(r) = rows.next()? {
            pass.add(ChatRow {
                created: r.get(0)?,
                updated: r.get(1)?,
                origin: r.get(2)?,
                messages: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                project: r.get(4)?,
                model: r.get(5)?,
            });
        }
        pass.finish(&mut out);
        let mut busiest = out.days.clone();
        busiest.sort_by(|a, b| b.messages.cmp(&a.messages).then_with(|| b.day.cmp(&a.day)));
        busiest.truncate(5);
        out.busiest_days = busiest;

        out.longest = c
            .prepare(&format!(
                "SELECT s.id, s.title, s.project, s.origin, s.message_count FROM sessions s WHERE {SCOPE}
                 ORDER BY s.message_count DESC, s.updated_at DESC LIMIT 10"
            ))?
            .query_map(p, |r| {
                Ok(ChatStat { id: r.get(0)?, title: r.get(1)?, project: r.get(2)?, source: r.get(3)?, messages: r.get(4)? })
            })?
            .collect::<rusqlite::Result<_>>()?;
        out.tags = c
            .prepare(&format!(
                "SELECT t.tag, count(*) FROM session_tags t JOIN sessions s ON s.id = t.session_id WHERE {SCOPE}
                 GROUP BY t.tag ORDER BY 2 DESC, 1 LIMIT 20"
            ))?
            .query_map(p, |r| Ok(TagStat { tag: r.get(0)?, chats: r.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;

        // The board: runs, tasks (project-scoped through their project when one is asked for).
        out.tokens = c.query_row(
            "SELECT count(*), count(input_tokens), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                    coalesce(sum(cache_read_tokens), 0)
             FROM runs WHERE (?1 IS NULL OR created_at >= ?1)
               AND (?2 IS NULL OR workspace = ?2 OR workspace LIKE ?2 || '/%')",
            p,
            |r| {
                Ok(Tokens {
                    runs: r.get(0)?,
                    runs_with_figures: r.get(1)?,
                    input: r.get(2)?,
                    output: r.get(3)?,
                    cache_read: r.get(4)?,
                })
            },
        )?;
        out.runs = c
            .prepare(
                "SELECT kind, status, count(*) FROM runs WHERE (?1 IS NULL OR created_at >= ?1)
                   AND (?2 IS NULL OR workspace = ?2 OR workspace LIKE ?2 || '/%')
                 GROUP BY kind, status ORDER BY kind, 3 DESC",
            )?
            .query_map(p, |r| Ok(RunStat { kind: r.get(0)?, status: r.get(1)?, count: r.get(2)? }))?
            .collect::<rusqlite::Result<_>>()?;
        let task_scope = "(?1 IS NULL OR e.at >= ?1) AND (?2 IS NULL OR t.project = ?2 OR t.project LIKE ?2 || '/%')";
        out.tasks.done_per_day = c
            .prepare(&format!(
                "SELECT date(e.at / 1000, 'unixepoch', 'localtime') AS d, count(DISTINCT e.task)
                 FROM task_events e JOIN tasks t ON t.num = e.task WHERE e.kind = 'completed' AND {task_scope}
                 GROUP BY d ORDER BY d"
            ))?
            .query_map(p, |r| Ok(DayCount { day: r.get(0)?, count: r.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;
        let mut spans: Vec<i64> = c
            .prepare(&format!(
                "SELECT e.at - (SELECT max(c.at) FROM task_events c WHERE c.task = e.task AND c.kind = 'claimed' AND c.at <= e.at)
                 FROM task_events e JOIN tasks t ON t.num = e.task WHERE e.kind = 'completed' AND {task_scope}"
            ))?
            .query_map(p, |r| r.get::<_, Option<i64>>(0))?
            .filter_map(|r| r.ok().flatten())
            .collect();
        spans.sort_unstable();
        if !spans.is_empty() {
            let at = |q: f64| spans[((spans.len() - 1) as f64 * q).round() as usize];
            out.tasks.claim_to_done = Some(Spread { count: spans.len() as i64, p50_ms: at(0.5), p90_ms: at(0.9) });
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_projects_models_and_the_board_add_up() {
        let s = Store::open_in_memory().unwrap();
        let day = 86_400_000i64;
        let t0 = 1_767_225_600_000i64; // 2026-01-01T00:00:00Z
        {
            let c = s.writer();
            c.execute("INSERT INTO sources(id, path, kind) VALUES (1, '/x', 'global')", []).unwrap();
            for (i, (origin, project, model, msgs, created)) in [
                ("ide", Some("/src/app"), Some("gpt-5"), 10, t0 + 12 * 3_600_000),
                ("cli", Some("/src/app/sub"), None, 4, t0 + 12 * 3_600_000),
                ("ide", Some("/src/other"), Some("gpt-5"), 30, t0 + 2 * day + 12 * 3_600_000),
                ("cloud", Some("github.com/acme/shop"), Some("composer-2"), 2, t0 + 9 * day + 12 * 3_600_000),
            ]
            .into_iter()
            .enumerate()
            {
                c.execute(
                    "INSERT INTO sessions(id, source_id, origin, format, title, project, model, created_at, updated_at, message_count)
                     VALUES (?1, 1, ?2, 'x', ?1, ?3, ?4, ?5, ?5, ?6)",
                    params![format!("c{i}"), origin, project, model, created, msgs],
                )
                .unwrap();
            }
            c.execute(
                "INSERT INTO session_tags(session_id, tag) VALUES ('c0', 'infra'), ('c2', 'infra'), ('c1', 'ux')",
                [],
            )
            .unwrap();
        }
        let all = insights(&s, &InsightsQuery::default()).unwrap();
        assert_eq!(all.totals, Totals { chats: 4, messages: 46, projects: 4, days_active: 3 });
        assert_eq!(all.days.len(), 3);
        assert_eq!((all.days[0].chats, all.days[0].ide, all.days[0].cli, all.days[0].messages), (2, 1, 1, 14));
        assert_eq!(all.busiest_days[0].messages, 30);
        assert_eq!(all.longest[0].id, "c2");
        assert_eq!(all.tags[0], TagStat { tag: "infra".into(), chats: 2 });
        assert_eq!(all.models[0], ModelStat { model: "gpt-5".into(), chats: 2 });
        assert!(all.models.iter().any(|m| m.model == "unknown" && m.chats == 1), "unknown said honestly");
        assert_eq!(all.models_by_week.iter().map(|w| w.chats).sum::<i64>(), 4);
        let app = insights(&s, &InsightsQuery { project: Some("/src/app/".into()), ..Default::default() }).unwrap();
        assert_eq!((app.totals.chats, app.totals.messages), (2, 14), "a folder takes its subfolders");
        let late = insights(&s, &InsightsQuery { since: Some(t0 + 5 * day), ..Default::default() }).unwrap();
        assert_eq!(late.totals.chats, 1);
        assert_eq!(late.days[0].cloud, 1);
        assert_eq!(all.tokens, Tokens::default(), "no runs, no figures");
        assert!(all.tasks.claim_to_done.is_none());
    }

    /// Our local days and weeks are SQLite's (`date(…, 'unixepoch', 'localtime')`, and the week's
    /// `'weekday 0', '-6 days'`), in whatever zone the test runs: scripts/test runs it again in
    /// America/New_York (DST) and Asia/Kathmandu (+05:45).
    #[test]
    fn local_days_and_weeks_are_sqlites() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let t0 = 1_704_067_200_000i64; // 2024-01-01T00:00:00Z
        for i in 0..2_000i64 {
            // Every 4 h 23 min 17 s over a year: all hours of the day, both DST changes.
            let ms = t0 + i * 15_797_000 + 123;
            let (day, week): (String, String) = c
                .query_row(
                    "SELECT date(?1 / 1000, 'unixepoch', 'localtime'),
                            date(?1 / 1000, 'unixepoch', 'localtime', 'weekday 0', '-6 days')",
                    [ms],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            let d = local_day(ms).unwrap();
            assert_eq!((d.to_string(), monday_of(d).to_string()), (day, week), "at {ms}");
        }
    }
}
