//! Import from Taskmaster and Backlog.md samples written from their documented formats, and export.

use std::path::Path;

use tether_board::task_io::ExportFormat;
use tether_board::tasks::{self, Actor, ClaimTarget, Status, TaskFilter};
use tether_core::Board;
use tether_core::sql::Database;
use tether_testkit::pg::board_engines;

fn by_ref(s: &dyn Database) -> std::collections::HashMap<String, tasks::Task> {
    let all = Board::new(s).tasks().list(&TaskFilter { limit: 1000, ..Default::default() }).unwrap();
    all.into_iter().filter_map(|t| Some((t.external_ref.clone()?, t))).collect()
}

/// Taskmaster's tagged layout (v0.16+): tags at the top, each with `tasks` and `metadata`.
const TASKMASTER: &str = r#"{
  "master": {
    "tasks": [
      {"id": 1, "title": "Set up the repository", "description": "Create the workspace.",
       "details": "Cargo workspace with crates/.", "testStrategy": "cargo build passes",
       "status": "done", "dependencies": [], "priority": "high", "subtasks": []},
      {"id": 2, "title": "Parse the config", "description": "Read config.toml.",
       "status": "in-progress", "dependencies": [1], "priority": "medium", "complexity": 5,
       "subtasks": [
         {"id": 1, "title": "Define the schema", "description": "Types for every key.", "status": "done", "dependencies": []},
         {"id": 2, "title": "Validate values", "description": "Clear errors.", "status": "pending", "dependencies": [1]}
       ]},
      {"id": 3, "title": "Write the docs", "description": "README.", "status": "deferred",
       "dependencies": [2, 99], "priority": "low"},
      {"id": 4, "title": "", "status": "pending"}
    ],
    "metadata": {"created": "2025-06-01T10:00:00.000Z", "description": "Tasks for master context"}
  },
  "feature-auth": {
    "tasks": [
      {"id": 1, "title": "OAuth login", "description": "Sign in with a provider.", "status": "review",
       "dependencies": [], "priority": "critical"}
    ],
    "metadata": {"created": "2025-06-02T10:00:00.000Z"}
  }
}"#;

#[test]
fn taskmaster_tagged_file_maps_fields_subtasks_and_dependencies_and_reports_the_rest() {
    let d = tempfile::tempdir().unwrap();
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let path = d.path().join("tasks.json");
        std::fs::write(&path, TASKMASTER).unwrap();
        let me = Actor::person("pat");
        let r = Board::new(&s).tasks().import_taskmaster(&me, &path).unwrap();
        assert_eq!(r.created.len(), 6, "{r:?}");
        let t = by_ref(&s);
        let setup = &t["taskmaster:1"];
        assert_eq!((setup.status, setup.priority), (Status::Done, "high"));
        assert!(setup.description.contains("## Details") && setup.description.contains("## Test strategy"));
        let config = &t["taskmaster:2"];
        assert_eq!(config.status, Status::InProgress);
        assert_eq!(config.assignee.as_deref(), Some("pat"), "an in-progress task is held by the importer");
        let schema = &t["taskmaster:2.1"];
        let validate = &t["taskmaster:2.2"];
        // The parent waits for its subtasks; a subtask's bare dependency names its sibling.
        let mut want = vec![setup.id.clone(), schema.id.clone(), validate.id.clone()];
        want.sort();
        let mut got = config.depends_on.clone();
        got.sort();
        assert_eq!(got, want);
        assert_eq!(validate.depends_on, std::slice::from_ref(&schema.id));
        let docs = &t["taskmaster:3"];
        assert_eq!((docs.status, docs.labels.clone()), (Status::Todo, vec!["deferred".to_string()]));
        assert_eq!(docs.depends_on, std::slice::from_ref(&config.id));
        let oauth = &t["taskmaster:feature-auth:1"];
        assert_eq!((oauth.status, oauth.priority), (Status::InReview, "critical"));
        assert!(oauth.labels.contains(&"taskmaster:feature-auth".to_string()));
        let report = r.not_mapped.join("\n");
        for expected in ["field `complexity`", "deferred", "missing taskmaster:99", "without a title"] {
            assert!(report.contains(expected), "{expected:?} not in {report}");
        }

        // Importing again changes nothing; an edited source refreshes text but keeps Tether's status.
        let again = Board::new(&s).tasks().import_taskmaster(&me, &path).unwrap();
        assert_eq!((again.created.len(), again.updated.len(), again.unchanged.len()), (0, 0, 6));
        std::fs::write(&path, TASKMASTER.replace("Write the docs", "Write the user guide")).unwrap();
        let edited = Board::new(&s).tasks().import_taskmaster(&me, &path).unwrap();
        assert_eq!(edited.updated, [format!("{} ← taskmaster:3", docs.id)]);
        assert_eq!(by_ref(&s)["taskmaster:3"].title, "Write the user guide");
        assert_eq!(Board::new(&s).tasks().list(&TaskFilter { limit: 100, ..Default::default() }).unwrap().len(), 6);
    }
}

#[test]
fn bad_taskmaster_files_are_clear_errors_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let me = Actor::person("pat");
        let bad = d.path().join("bad.json");
        std::fs::write(&bad, "{\"tasks\": [").unwrap();
        let e = Board::new(&s).tasks().import_taskmaster(&me, &bad).unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
        std::fs::write(&bad, "{\"version\": 1}").unwrap();
        assert!(
            Board::new(&s).tasks().import_taskmaster(&me, &bad).unwrap_err().to_string().contains("no `tasks` array")
        );
        // A dependency cycle inside the file is reported; the tasks still land.
        std::fs::write(
        &bad,
        r#"{"tasks": [{"id": 1, "title": "a", "dependencies": [2]}, {"id": 2, "title": "b", "dependencies": [1]}]}"#,
    )
    .unwrap();
        let r = Board::new(&s).tasks().import_taskmaster(&me, &bad).unwrap();
        assert_eq!(r.created.len(), 2);
        assert!(r.not_mapped.iter().any(|n| n.contains("cycle")), "{:?}", r.not_mapped);
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn backlog_md_folder_maps_frontmatter_sections_and_folders() {
    let d = tempfile::tempdir().unwrap();
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let project = d.path().join("proj");
        write(&project, "backlog/config.yml", "project_name: demo\nstatuses: [\"To Do\", \"In Progress\", \"Done\"]\n");
        write(
            &project,
            "backlog/tasks/task-1 - Add-login.md",
            "---\nid: task-1\ntitle: Add login\nstatus: In Progress\nassignee:\n  - '@alice'\nreporter: '@bob'\n\
         created_date: '2025-06-08 10:00'\nlabels:\n  - auth\n  - web\ndependencies: []\npriority: high\n\
         milestone: v1\n---\n\n## Description\n\nUsers sign in with email.\n\n## Acceptance Criteria\n\
         <!-- AC:BEGIN -->\n- [ ] #1 Form validates email\n- [x] #2 Session cookie is HttpOnly\n<!-- AC:END -->\n\n\
         ## Implementation Notes\n\nUse the existing session store.\n",
        );
        write(
            &project,
            "backlog/tasks/task-2 - Logout.md",
            "---\nid: task-2\ntitle: \"Logout\"\nstatus: To Do\nassignee: []\nlabels: [auth]\ndependencies: [task-1]\n---\n\nClear the cookie.\n",
        );
        write(
            &project,
            "backlog/tasks/task-1.1 - Login-form.md",
            "---\nid: task-1.1\ntitle: Login form\nstatus: Done\nparent_task_id: task-1\n---\n\n## Description\n\nThe form.\n",
        );
        write(&project, "backlog/drafts/task-3 - Idea.md", "---\nid: task-3\ntitle: Passkeys\nstatus: To Do\n---\n");
        write(&project, "backlog/completed/task-4 - Old.md", "---\nid: task-4\ntitle: Old work\nstatus: Done\n---\n");
        write(&project, "backlog/tasks/notes.md", "no frontmatter here\n");

        let r = Board::new(&s).tasks().import_backlog(&Actor::person("pat"), &project).unwrap();
        assert_eq!(r.created.len(), 5, "{r:?}");
        let t = by_ref(&s);
        let login = &t["backlog:task-1"];
        assert_eq!(
            (login.status, login.priority, login.assignee.as_deref()),
            (Status::InProgress, "high", Some("alice"))
        );
        assert_eq!(login.labels, ["auth", "web"]);
        assert_eq!(login.acceptance, ["Form validates email", "Session cookie is HttpOnly (done)"]);
        assert!(login.description.starts_with("Users sign in with email."), "{}", login.description);
        assert!(login.description.contains("## Implementation Notes"));
        assert!(!login.description.contains("AC:BEGIN"));
        let logout = &t["backlog:task-2"];
        assert_eq!((logout.status, logout.depends_on.clone()), (Status::Todo, vec![login.id.clone()]));
        assert_eq!(logout.description, "Clear the cookie.");
        assert!(t["backlog:task-1.1"].labels.contains(&"subtask of task-1".to_string()));
        assert!(t["backlog:task-3"].labels.contains(&"draft".to_string()));
        assert_eq!(t["backlog:task-4"].status, Status::Done);
        let report = r.not_mapped.join("\n");
        assert!(report.contains("field `reporter`") && report.contains("field `milestone`"), "{report}");
        assert!(report.contains("notes.md has no readable frontmatter"), "{report}");

        // Pointing at backlog/ itself works as well, and finds the same tasks.
        let again = Board::new(&s).tasks().import_backlog(&Actor::person("pat"), &project.join("backlog")).unwrap();
        assert_eq!((again.created.len(), again.unchanged.len()), (0, 5));
        let e = Board::new(&s).tasks().import_backlog(&Actor::person("pat"), d.path()).unwrap_err();
        assert!(e.to_string().contains("no tasks/ folder"), "{e}");
    }
}

#[test]
fn export_carries_notes_and_history() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let me = Actor::person("pat");
        let t = Board::new(&s)
            .tasks()
            .create(&me, &tasks::NewTask { title: "Ship <it>".into(), ..Default::default() })
            .unwrap();
        Board::new(&s).tasks().claim(&me, &ClaimTarget::Id(t.id.clone())).unwrap();
        let note = tasks::TaskChange { comment: Some("half done".into()), handoff: true, ..Default::default() };
        Board::new(&s).tasks().update(&me, &t.id, &note).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&Board::new(&s).tasks().export(ExportFormat::Json).unwrap()).unwrap();
        let exported = &json["tasks"][0];
        assert_eq!(exported["id"], t.id.as_str());
        assert_eq!(exported["notes"][0]["detail"]["text"], "half done");
        assert_eq!(exported["history"].as_array().unwrap().len(), 3);
        let md = Board::new(&s).tasks().export(ExportFormat::Markdown).unwrap();
        assert!(
            md.contains("## in_progress (1)") && md.contains("## T-1 Ship <it>") && md.contains("half done"),
            "{md}"
        );
    }
}
