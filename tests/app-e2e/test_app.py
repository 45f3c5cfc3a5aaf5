"""The real desktop app (target/debug/tether-app) under Xvfb, driven over WebDriver through
tauri-driver + WebKitWebDriver: it hosts the daemon in-process (MCP answers, daemon.json names
it), shows the GUI logged in, and every main view renders; a screenshot of each is saved to
target/screenshots/app-*.png (TETHER_SCREENSHOT_DIR). A second case starts `tether serve` first: the app attaches to it.

Run by scripts/test as: dbus-run-session -- xvfb-run -a … pytest tests/app-e2e (see that script).
"""

import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("TETHER_BIN_DIR", ROOT / "target" / "debug"))
DRIVER = Path(os.environ.get("TAURI_DRIVER", ROOT / ".tools" / "bin" / "tauri-driver"))
SHOTS = Path(os.environ.get("TETHER_SCREENSHOT_DIR", ROOT / "target" / "screenshots"))
TOKEN = "app-e2e-token-0123456789abcdef"
VIEWS = ["sessions", "tasks", "tags", "agents", "health", "settings"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fixture_env(tmp: Path) -> dict:
    out = subprocess.run([BIN / "tether-fixture", tmp / "cursor"], check=True, capture_output=True, text=True)
    env = dict(os.environ, TETHER_HOME=str(tmp / "home"), TETHER_TOKEN=TOKEN, TETHER_PORT="0", TETHER_LOG="warn",
               TETHER_USER="app-e2e")
    for line in out.stdout.splitlines():
        k, v = line.split("=", 1)
        env[k] = v
    return env


class App:
    """tauri-driver (which starts WebKitWebDriver, which starts the app) with the given env."""

    def __init__(self, env: dict):
        port = free_port()
        self.driver_proc = subprocess.Popen([DRIVER, "--port", str(port), "--native-port", str(free_port())],
                                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        opts = ArgOptions()
        opts.set_capability("browserName", "wry")
        opts.set_capability("tauri:options", {"application": str(BIN / "tether-app")})
        self.d = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=opts)

    def close(self):
        try:
            self.d.quit()
        finally:
            self.driver_proc.terminate()
            self.driver_proc.wait(10)


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


def test_the_app_hosts_the_daemon_and_shows_every_view():
    with tempfile.TemporaryDirectory() as tmp:
        env = fixture_env(Path(tmp))
        app = App(env)
        try:
            info = wait_for("daemon.json", lambda: daemon_info(env))
            assert info["url"].startswith("http://127.0.0.1:")
            health = wait_for("the index", lambda: (h := httpx.get(info["url"].replace("/mcp", "/health")).json())
                              ["index"]["sessions"] > 0 and h)
            assert health["status"] == "ok"
            wait = WebDriverWait(app.d, 30)
            # The window went through the one-time login link and shows the GUI.
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="view-sessions"]')))
            assert "/login" not in app.d.current_url
            SHOTS.mkdir(parents=True, exist_ok=True)
            for view in VIEWS:
                app.d.find_element(By.CSS_SELECTOR, f'[data-testid="nav-{view}"]').click()
                wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f'[data-testid="view-{view}"]')))
                time.sleep(0.8)  # let the view's data arrive before the picture
                app.d.save_screenshot(str(SHOTS / f"app-{view}.png"))
            # The MCP endpoint of the in-process daemon answers with the token.
            r = httpx.post(info["url"], headers={"Authorization": f"Bearer {TOKEN}",
                                                 "Accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                               "protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "e2e", "version": "0"}}})
            assert r.status_code == 200
        finally:
            app.close()
        # Quitting the app stops its daemon and frees the data dir.
        wait_for("the daemon to stop", lambda: daemon_info(env) is None or not pid_alive(daemon_info(env)["pid"]))


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def test_the_app_attaches_to_a_running_tether_serve():
    with tempfile.TemporaryDirectory() as tmp:
        env = fixture_env(Path(tmp))
        serve = subprocess.Popen([BIN / "tether", "serve"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            info = wait_for("tether serve", lambda: (i := daemon_info(env)) and i["pid"] == serve.pid and i)
            app = App(env)
            try:
                WebDriverWait(app.d, 30).until(
                    EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="view-sessions"]')))
                assert app.d.current_url.startswith(info["url"].removesuffix("/mcp"))
                assert daemon_info(env)["pid"] == serve.pid, "the app attached instead of taking over"
            finally:
                app.close()
            assert serve.poll() is None, "closing the app leaves `tether serve` running"
        finally:
            serve.terminate()
            assert serve.wait(20) == 0
