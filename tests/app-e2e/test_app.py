"""The real desktop app (target/debug/tether-app) under Xvfb, driven over WebDriver through
tauri-driver + WebKitWebDriver: it hosts the daemon in-process (MCP answers, daemon.json names
it), shows the GUI logged in, and every main view renders; a screenshot of each is saved to
target/screenshots/app-*.png (TETHER_SCREENSHOT_DIR). A second case starts `tether serve` first:
the app attaches to it. A third checks what the desktop adds: notifications through a real
notification server (dunst), launch at login, links handed to Cursor through xdg-open, exports
saved to Downloads, and a second launch that hands over to the first.

Run by scripts/test as: dbus-run-session -- xvfb-run -a … pytest tests/app-e2e (see that script).
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from urllib3.exceptions import ProtocolError
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from desktop import BIN, ROOT, app_pids, app_tmp, daemon_info, fixture_env, wait_for  # noqa: E402

DRIVER = Path(os.environ.get("TAURI_DRIVER", ROOT / ".tools" / "bin" / "tauri-driver"))
SHOTS = Path(os.environ.get("TETHER_SCREENSHOT_DIR", ROOT / "target" / "screenshots"))
TOKEN = "app-e2e-token-0123456789abcdef"
VIEWS = ["sessions", "tasks", "tags", "agents", "health", "settings"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class App:
    """tauri-driver (which starts WebKitWebDriver, which starts the app) with the given env."""

    def __init__(self, env: dict):
        self.home = env["TETHER_HOME"]
        # tauri-driver accepts before WebKitWebDriver listens behind it; a session asked for in
        # that gap is dropped ("Remote end closed connection"), so start over, at most twice more.
        for attempt in range(3):
            try:
                self._start(env)
                return
            except (ProtocolError, ConnectionError, WebDriverException) as e:
                self.driver_proc.terminate()
                self.driver_proc.wait(10)
                for pid in app_pids(self.home):
                    os.kill(pid, 9)
                if attempt == 2:
                    raise
                print(f"webdriver session failed ({e!r}); retrying")
                time.sleep(1)

    def _start(self, env: dict):
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
            # The app must be gone before the next test starts one: while it lives it owns the
            # single-instance name on D-Bus, and a new launch would hand over to it and exit.
            deadline = time.time() + 20
            while (pids := app_pids(self.home)) and time.time() < deadline:
                time.sleep(0.1)
            for pid in app_pids(self.home):
                os.kill(pid, 9)


def test_the_app_hosts_the_daemon_and_shows_every_view():
    with app_tmp() as tmp:
        env = fixture_env(Path(tmp), TOKEN, TETHER_USER="app-e2e")
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
                if view == "sessions":
                    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="session-row"]')))
                # The picture shows the view with its data, once the live stream is up.
                wait.until(lambda d: "Loading…" not in d.find_element(By.TAG_NAME, "main").text
                           and "connecting" not in d.find_element(By.TAG_NAME, "body").text)
                time.sleep(0.5)
                app.d.save_screenshot(str(SHOTS / f"app-{view}.png"))
            # WebKitGTK under Xvfb can hand out a stale first frame: the sessions picture is taken
            # again at the end, with a chat open in the reader.
            app.d.find_element(By.CSS_SELECTOR, '[data-testid="nav-sessions"]').click()
            wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, '[data-testid="session-row"]'))).click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="continue-in-cursor"]')))
            time.sleep(0.8)
            app.d.save_screenshot(str(SHOTS / "app-sessions.png"))
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
    with app_tmp() as tmp:
        env = fixture_env(Path(tmp), TOKEN, TETHER_USER="app-e2e")
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


def api(info, method, path, body=None):
    base = info["url"].removesuffix("/mcp")
    r = httpx.request(method, base + path, json=body,
                      headers={"Authorization": f"Bearer {TOKEN}", "X-Tether": "1"})
    r.raise_for_status()
    return r.json() if r.content else None


def dunstctl(*args):
    return subprocess.run(["dunstctl", *args], capture_output=True, text=True, timeout=10).stdout


def notified_bodies():
    """Bodies of every notification dunst has shown (closing them moves them to its history)."""
    dunstctl("close-all")
    hist = json.loads(dunstctl("history") or '{"data": [[]]}')
    return [n["body"]["data"] for n in hist["data"][0]]


def fake_handlers(env, log: Path):
    """Registers a `cursor:` URL handler (as Cursor's installer does) and a Markdown viewer, both
    logging what they are given, so nothing real is launched."""
    data = Path(env["XDG_DATA_HOME"]) / "applications"
    data.mkdir(parents=True, exist_ok=True)
    script = Path(env["HOME"]) / "fake-open.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {log}\n')
    script.chmod(0o755)
    for name, mime in [("fake-cursor", "x-scheme-handler/cursor"), ("fake-viewer", "text/markdown;text/plain")]:
        (data / f"{name}.desktop").write_text(
            f"[Desktop Entry]\nType=Application\nName={name}\nExec={script} %u\nMimeType={mime};\nNoDisplay=true\n")
    (Path(env["XDG_CONFIG_HOME"]) / "mimeapps.list").write_text(
        "[Default Applications]\nx-scheme-handler/cursor=fake-cursor.desktop\ntext/markdown=fake-viewer.desktop\n")


def test_desktop_notifications_login_entry_links_exports_and_single_instance():
    with app_tmp() as tmp:
        env = fixture_env(Path(tmp), TOKEN, TETHER_USER="app-e2e")
        # This app finds Cursor's data and its port through settings.json, not the environment.
        cursor_dir, port = env.pop("TETHER_CURSOR_DIR"), free_port()
        home = Path(env["TETHER_HOME"])
        home.mkdir(parents=True)
        (home / "settings.json").write_text(json.dumps(
            {"cursor_user_dir": cursor_dir, "cursor_home": env.pop("TETHER_CURSOR_HOME"), "port": port}))
        del env["TETHER_PORT"]
        links = Path(tmp) / "cursor-links.log"
        fake_handlers(env, links)
        dunst = subprocess.Popen(["dunst"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        app = App(env)
        try:
            info = wait_for("daemon.json", lambda: daemon_info(env))
            assert info["port"] == port, "the port came from the settings"
            wait_for("the index", lambda: httpx.get(info["url"].replace("/mcp", "/health")).json()
                     ["index"]["sessions"] > 0)
            wait = WebDriverWait(app.d, 30)
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="view-sessions"]')))
            view = api(info, "GET", "/api/settings")
            assert view["overridden"] == {} and view["restart_needed"] == [], view
            # A saved port applies at once: the daemon moves, and the window's page follows it.
            for to in (free_port(), port):
                api(daemon_info(env), "PATCH", "/api/settings", {"port": to})
                wait_for(f"the daemon on port {to}", lambda: (daemon_info(env) or {}).get("port") == to, timeout=15)
                wait_for(f"the window on port {to}", lambda: f"127.0.0.1:{to}/" in app.d.current_url, timeout=15)
                wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="view-sessions"]')))

            # A Cursor source that breaks after start: the tray's attention list, and a notification;
            # clicking it opens the window on the view it is about.
            bad = Path(cursor_dir) / "workspaceStorage" / "broken0000" / "state.vscdb"
            bad.parent.mkdir(parents=True, exist_ok=True)
            bad.write_bytes(b"this is not a SQLite database" * 100)
            wait_for("a notification on screen", lambda: dunstctl("count", "displayed").strip() not in ("", "0"),
                     timeout=40)
            assert app.d.current_url.endswith("#/sessions") or "#/" not in app.d.current_url, app.d.current_url
            dunstctl("action", "0")
            wait_for("the window on Health", lambda: app.d.current_url.endswith("#/health"), timeout=15)
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="health-sources"]')))
            assert any("broken0000" in b for b in notified_bodies())
            app.d.execute_script("location.hash = '#/sessions'")

            # With notifications off, the next problem stays quiet.
            api(info, "PATCH", "/api/settings", {"notifications": False})
            time.sleep(3.5)  # one tray tick reads the settings
            bad2 = bad.parent.parent / "broken0001" / "state.vscdb"
            bad2.parent.mkdir()
            bad2.write_bytes(b"also not a database" * 100)
            wait_for("the second failure indexed", lambda: any(
                "broken0001" in a["message"] for a in api(info, "GET", "/api/status")["attention"]))
            time.sleep(4)
            assert not any("broken0001" in b for b in notified_bodies()), "notifications were turned off"

            # Launch at login: an autostart entry that starts minimised, and gone again when turned off.
            # auto-launch writes to ~/.config/autostart whatever XDG_CONFIG_HOME says.
            autostart = Path(env["HOME"]) / ".config" / "autostart"
            api(info, "PATCH", "/api/settings", {"launch_at_login": True})
            entry = wait_for("the autostart entry", lambda: next(autostart.glob("*.desktop"), None), timeout=15)
            text = entry.read_text()
            # The app names its executable resolved (a target dir may be a link, as in CI's cache).
            assert str((BIN / "tether-app").resolve()) in text and "--minimized" in text, text
            api(info, "PATCH", "/api/settings", {"launch_at_login": False})
            wait_for("the entry removed", lambda: not any(autostart.glob("*.desktop")), timeout=15)

            # "Open project in Cursor" goes to Cursor's URL handler; the window stays on the GUI.
            app.d.find_element(By.CSS_SELECTOR, '[data-testid="session-row"]').click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="continue-in-cursor"]')))
            gui = app.d.current_url
            opens = app.d.find_elements(By.CSS_SELECTOR, '[data-testid="open-in-cursor"]')
            (opens[0] if opens else app.d.find_element(By.CSS_SELECTOR, '[data-testid="continue-in-cursor"]')).click()
            logged = wait_for("the cursor: link", lambda: links.exists() and links.read_text().strip(), timeout=15)
            assert logged.startswith("cursor://"), logged
            links.unlink()
            assert app.d.current_url == gui

            # An export is saved to Downloads.
            app.d.find_element(By.CSS_SELECTOR, '[data-testid="export-md"]').click()
            downloads = Path(env["HOME"]) / "Downloads"
            saved = wait_for("the export", lambda: next((p for p in downloads.glob("*.md") if p.stat().st_size), None),
                             timeout=15)
            assert saved.read_text().startswith("# "), saved.read_text()[:200]
            opened = wait_for("the export opened", lambda: links.exists() and links.read_text().strip(), timeout=15)
            assert opened.endswith(saved.name), opened

            # A second launch hands over to this one and leaves.
            second = subprocess.run([BIN / "tether-app"], env=env, capture_output=True, timeout=30)
            assert second.returncode == 0, second.stderr
            assert daemon_info(env)["pid"] == info["pid"], "one daemon, the first app's"
        finally:
            app.close()
            dunst.terminate()
            dunst.wait(10)
