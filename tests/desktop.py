"""Helpers for the tests that start the desktop app (tests/app-e2e, tests/package): a generated
Cursor home with a home directory of its own, the app's processes, daemon.json, and waiting.
"""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("TETHER_BIN_DIR", ROOT / "target" / "debug"))


def app_tmp():
    """A temporary dir for one app's run. WebKit's GPU process may still be writing its shader
    cache there as the app closes: a leftover is not a failure of the app."""
    return tempfile.TemporaryDirectory(ignore_cleanup_errors=True)


def fixture_env(tmp: Path, token: str, **extra: str) -> dict:
    """The environment for a Tether on a generated Cursor home in `tmp`."""
    out = subprocess.run([BIN / "tether-fixture", tmp / "cursor"], check=True, capture_output=True, text=True,
                         timeout=90)
    # A home of its own, so launch-at-login entries, downloads, URL handlers and WebKit's data
    # stay in tmp.
    user = tmp / "user"
    (user / "config").mkdir(parents=True)
    (user / "Downloads").mkdir()
    (user / "config" / "user-dirs.dirs").write_text(f'XDG_DOWNLOAD_DIR="{user / "Downloads"}"\n')
    env = dict(os.environ, TETHER_HOME=str(tmp / "home"), TETHER_TOKEN=token, TETHER_PORT="0", TETHER_LOG="warn",
               HOME=str(user), XDG_CONFIG_HOME=str(user / "config"), XDG_DATA_HOME=str(user / "data"),
               XDG_CACHE_HOME=str(user / "cache"), **extra)
    # The GUI must be the one the binary finds itself.
    env.pop("TETHER_UI_DIR", None)
    for line in out.stdout.splitlines():
        k, v = line.split("=", 1)
        env[k] = v
    return env


def app_pids(home: str) -> list[int]:
    """tether-app processes started with this TETHER_HOME."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if (d / "comm").read_text().strip() != "tether-app":
                continue
            if f"TETHER_HOME={home}".encode() in (d / "environ").read_bytes().split(b"\0"):
                out.append(int(d.name))
        except OSError:
            continue
    return out


def wait_for(what, f, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = f()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def daemon_info(env):
    try:
        return json.loads((Path(env["TETHER_HOME"]) / "daemon.json").read_text())
    except (OSError, ValueError):
        return None
