//! Roles for runs: Cursor rule files (`<role>.mdc`) in Tether's data dir that a run with
//! `--role R` places in its workspace (`.cursor/rules/tether-role-R.mdc`) while it runs. Seeded
//! with four on first use; the person edits them or adds their own.
//!
//! Only reads and writes the roles folder it is given.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};

const SEEDED: &[(&str, &str, &str)] = &[
    (
        "planner",
        "Plan the work before anyone writes code",
        "You are the planner. Read the request and the code it touches, then write a short plan: the \
         steps, the files each step changes, the risks, and how to tell each step is done. Do not \
         change code. If the request is unclear, say what you would ask instead of guessing.",
    ),
    (
        "backend",
        "Backend engineer: server, data and APIs",
        "You are the backend engineer. Make the smallest change that does what is asked, keep the \
         existing style, and add or update tests for what you change. Run the tests you touched. \
         Never weaken error handling or validation to make a test pass. End with what you changed and \
         what is left.",
    ),
    (
        "frontend",
        "Frontend engineer: UI, accessibility and state",
        "You are the frontend engineer. Keep components small and accessible (labels, keyboard, \
         focus), follow the existing design tokens, and add tests for behaviour you change. Do not \
         add dependencies without saying why. End with what you changed and how to see it.",
    ),
    (
        "reviewer",
        "Reviewer: find what is wrong before it ships",
        "You are the reviewer. Read the change and its tests; look for bugs, missing error handling, \
         security problems and untested paths. Do not rewrite the change: list concrete findings with \
         file and line, most important first, and say whether it can ship.",
    ),
];

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Role {
    pub name: String,
    pub description: String,
}

/// Seeds the roles folder the first time it is needed (never again, so deleted roles stay gone).
pub fn ensure(dir: &Path) -> Result<()> {
    if dir.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    for (name, description, body) in SEEDED {
        let text = format!("---\ndescription: {description}\nalwaysApply: true\n---\n{body}\n");
        let p = dir.join(format!("{name}.mdc"));
        std::fs::write(&p, text).map_err(|e| Error::io(format!("writing {}", p.display()), e))?;
    }
    Ok(())
}

/// The roles there are, by name.
pub fn list(dir: &Path) -> Result<Vec<Role>> {
    ensure(dir)?;
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    for e in entries.flatten() {
        let p = e.path();
        let Some(name) = p.file_stem().and_then(|s| s.to_str()).filter(|_| p.extension().is_some_and(|x| x == "mdc"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let description = text
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("description:"))
            .map(|d| d.trim().to_owned())
            .unwrap_or_default();
        out.push(Role { name: name.to_owned(), description });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The rule text of a role.
pub fn rule(dir: &Path, name: &str) -> Result<String> {
    ensure(dir)?;
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let p = dir.join(format!("{name}.mdc"));
    match std::fs::read_to_string(&p) {
        Ok(t) if valid => Ok(t),
        _ => {
            let names: Vec<String> = list(dir)?.into_iter().map(|r| r.name).collect();
            Err(Error::invalid("role", format!("no role {name:?} in {} (roles: {})", dir.display(), names.join(", "))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_once_and_listed_with_descriptions() {
        let d = tempfile::tempdir().unwrap();
        let roles = d.path().join("roles");
        let names: Vec<String> = list(&roles).unwrap().into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["backend", "frontend", "planner", "reviewer"]);
        assert!(rule(&roles, "reviewer").unwrap().contains("alwaysApply: true"));
        std::fs::remove_file(roles.join("planner.mdc")).unwrap();
        assert_eq!(list(&roles).unwrap().len(), 3, "a deleted role stays deleted");
        let e = rule(&roles, "../etc").unwrap_err().to_string();
        assert!(e.contains("no role") && e.contains("backend"), "{e}");
    }
}
