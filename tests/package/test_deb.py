"""The .deb that scripts/package builds, installed the way a user installs it: `apt-get install
./tether_*.deb`, then the installed `tether --version` and `tether index` on a generated Cursor
home, the app started from its menu entry (gtk-launch) under Xvfb until its daemon's /health
answers and serves the GUI installed beside it, and `apt-get remove`, after which nothing of the
package is left on the system and the user's data dir is still there.

It installs into the system, so it runs only as root (CI's throw-away machine); as anyone else it
is skipped and says what it needs. Run by scripts/test after `scripts/package --debug` as:
dbus-run-session -- xvfb-run -a … pytest tests/package.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from desktop import ROOT, app_pids, daemon_info, fixture_env, wait_for  # noqa: E402

OUT = ROOT / "target" / "package"
APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
# Every child gets a limit well inside scripts/test's `timeout 300`, so `finally` always runs and
# the package never stays installed.
STEP = 90

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="installing the .deb needs root: run `sudo apt-get install "
                       "./target/package/tether_*.deb` by hand, or scripts/test as root on a throw-away machine"),
    pytest.mark.skipif(shutil.which("apt-get") is None, reason="apt-get is missing: the .deb is for Debian/Ubuntu"),
]


def installed(pkg: str) -> bool:
    r = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", pkg], capture_output=True, text=True,
                       timeout=STEP)
    return r.returncode == 0 and r.stdout.startswith("ii")


def run(*cmd, **kw):
    kw.setdefault("timeout", STEP)
    kw.setdefault("check", True)
    return subprocess.run(list(cmd), **kw)


def test_install_run_and_remove_the_deb():
    # A package left by an interrupted run (or someone's own install) is not replaced silently.
    assert not installed("tether"), "a tether package is installed already; `apt-get remove tether` first"
    found = sorted(OUT.glob("tether_*.deb"))
    assert len(found) == 1, f"expected one package from scripts/package in {OUT}, found {found}"
    deb = found[0]
    version = deb.name.split("_")[1]
    control = run("dpkg-deb", "-f", deb, "Depends", capture_output=True, text=True).stdout
    # What a clean machine must pull: WebKitGTK and GTK for the window, appindicator for the tray
    # (loaded at run time, so only the declaration brings it), D-Bus for the keyring.
    for dep in ["libwebkit2gtk-4.1-0", "libgtk-3-0", "libayatana-appindicator3-1", "libdbus-1-3", "libc6"]:
        assert dep in control, f"{dep} is not among the package's dependencies: {control}"

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = fixture_env(tmp, "deb-test-token-0123456789abcdef")
        run("apt-get", "install", "-y", "-q", f"./{deb.name}", cwd=deb.parent, env=APT_ENV, stdout=subprocess.DEVNULL)
        files = []
        try:
            files = [Path(p) for p in run("dpkg", "-L", "tether", capture_output=True, text=True).stdout.split()]
            for want in ["/usr/bin/tether", "/usr/bin/tether-app", "/usr/share/applications/Tether.desktop",
                         "/usr/share/tether/ui/index.html", "/usr/share/icons/hicolor/512x512/apps/tether-app.png"]:
                assert Path(want) in files, f"{want} is not in the package"
            desktop = Path("/usr/share/applications/Tether.desktop").read_text()
            assert "Exec=tether-app" in desktop and "Name=Tether" in desktop and "Icon=tether-app" in desktop

            # The CLI on PATH, the same version as the package (and so as the app).
            assert shutil.which("tether") == "/usr/bin/tether"
            assert run("tether", "--version", capture_output=True, text=True).stdout.strip() == f"tether {version}"
            out = run("tether", "index", env=env, capture_output=True, text=True)
            listed = json.loads(run("tether", "sessions", "list", "--json", env=env, capture_output=True,
                                    text=True).stdout)
            assert len(listed) > 0, out.stdout + out.stderr

            # The menu entry starts the installed app, which hosts the daemon and serves the GUI
            # installed beside it. (gtk-launch's output goes nowhere: the app inherits it and
            # would hold a pipe open.)
            run("gtk-launch", "Tether", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            info = wait_for("the app's daemon.json", lambda: daemon_info(env), 60)
            assert Path(f"/proc/{info['pid']}/exe").resolve() == Path("/usr/bin/tether-app")
            base = info["url"].removesuffix("/mcp")
            health = wait_for("/health", lambda: get_json(f"{base}/health"), 60)
            assert health["status"] == "ok" and health["version"] == version
            page = httpx.get(f"{base}/", timeout=5).text
            assets = [a.removeprefix(".").removeprefix("/") for a in page.split('"') if "assets/" in a]
            assert assets and all((Path("/usr/share/tether/ui") / a).is_file() for a in assets), page
            assert all(httpx.get(f"{base}/{a}", timeout=5).status_code == 200 for a in assets)
            app = info["pid"]
            os.kill(app, signal.SIGTERM)
            wait_for("the app to stop on SIGTERM", lambda: not Path(f"/proc/{app}").exists(), 20)
        finally:
            for pid in app_pids(env["TETHER_HOME"]):
                os.kill(pid, signal.SIGKILL)
            run("apt-get", "remove", "-y", "-q", "tether", env=APT_ENV, stdout=subprocess.DEVNULL)

        assert not installed("tether")
        left = [p for p in files if p.exists() and not p.is_dir()]
        assert not left, f"apt-get remove left {left}"
        strays = run("find", "/usr", "/etc", "/opt", "-xdev", "-iname", "*tether*", capture_output=True,
                     text=True, check=False).stdout.split()
        assert not strays, f"left on the system after apt-get remove: {strays}"
        # The user's data stays: the index (with its chats) in the data dir.
        assert (Path(env["TETHER_HOME"]) / "index.db").is_file()


def get_json(url):
    try:
        r = httpx.get(url, timeout=2)
        return r.status_code == 200 and r.json()
    except httpx.HTTPError:
        return None
