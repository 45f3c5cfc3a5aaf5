//! The sandbox every test runs `tether` in: a clean environment (nothing of the caller's but
//! PATH), its own home and data dir, and Cursor's data either absent or a generated fixture; and
//! the workspace's binaries, the test kit's fakes built on first use.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tether_testkit::CursorFixture;

/// A binary of the workspace. Cargo builds this package's own (`tether`) for its tests; the
/// test kit's fakes (`tether-fake-agent`, `tether-fake-cursor-api`) are built here when missing.
pub fn bin(name: &str) -> PathBuf {
    let b = assert_cmd::cargo::cargo_bin(name);
    if !b.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "-p", "tether-testkit", "--bin", name])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok && b.exists(), "building {name}");
    }
    b
}

/// `tether` in the sandbox at `dir`: home `dir/home`, data dir `dir/data`, no Cursor data.
pub fn tether_in(dir: &Path) -> Command {
    let mut c = Command::new(bin("tether"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("TETHER_HOME", dir.join("data"))
        .env("TETHER_CURSOR_DIR", dir.join("no-cursor"))
        .env("TETHER_CURSOR_HOME", dir.join("no-cursor-cli"))
        .env("NO_COLOR", "1")
        // Local days (usage reports) the same on every machine.
        .env("TZ", "UTC");
    c
}

/// `tether` over a fixture of Cursor's data (its home, its User dir and CLI home), with its data
/// dir at `data`. Nothing else is set: not even NO_COLOR, which callers add.
pub fn tether_on(fx: &CursorFixture, data: &Path) -> Command {
    let mut c = Command::new(bin("tether"));
    c.env_clear()
        .env("HOME", &fx.home)
        .env("TETHER_HOME", data)
        .env("TETHER_CURSOR_DIR", &fx.user_dir)
        .env("TETHER_CURSOR_HOME", &fx.cursor_home);
    c
}

/// A temp dir holding one sandbox for [`tether_in`]; removed when dropped.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    pub fn cmd(&self) -> Command {
        tether_in(self.dir.path())
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    /// `tether ARGS… --json`, which must succeed: what it printed.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}
