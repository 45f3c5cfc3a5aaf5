"""Desktop app startup and idle CPU, next to `tether serve` measured in the same run.

For each of N launches (fresh data dir, the generated Cursor fixture): time from spawning the
process until its MCP endpoint answers /health with our pid in daemon.json ("MCP ready"), and the
app's own "ready in X ms" line (tray built, window requested). Then idle, as the person has it
all day: `tether serve` alone, and the app started with its window hidden (`--minimized`, as at
login), each left 20 s to settle and then measured for 60 s: CPU time of the process and all its
children (a WebKit process included) as a share of one core, and wake-ups (voluntary context
switches of all their threads) per second. Writes the `app` section of docs/benchmarks.md.
Run through scripts/bench-app (it provides Xvfb and a D-Bus session).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "crates" / "tether-bench" / "py"))
from bench_doc import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("TETHER_BIN_DIR", ROOT / "target" / "debug"))
N = int(os.environ.get("BENCH_RUNS", "10"))


def env_for(tmp: Path) -> dict:
    out = subprocess.run([BIN / "tether-fixture", tmp / "cursor"], check=True, capture_output=True, text=True)
    env = dict(os.environ, TETHER_HOME=str(tmp / "home"), TETHER_TOKEN="bench", TETHER_PORT="0", TETHER_LOG="warn")
    env.update(line.split("=", 1) for line in out.stdout.splitlines())
    return env


def mcp_ready(env, proc, t0):
    daemon_json = Path(env["TETHER_HOME"]) / "daemon.json"
    while time.perf_counter() - t0 < 30:
        try:
            info = json.loads(daemon_json.read_text())
            if info["pid"] == proc.pid and httpx.get(info["url"].replace("/mcp", "/health"), timeout=1).status_code == 200:
                return (time.perf_counter() - t0) * 1000
        except (OSError, ValueError, KeyError, httpx.HTTPError):
            pass
        time.sleep(0.005)
    raise SystemExit(f"not ready after 30 s: {proc.args}")


def launch(cmd, keep=False, ready_line=False):
    """Starts `cmd` on a fresh data dir; ms to MCP ready, and (`ready_line`) the app's own "ready in
    X ms", waited for up to 10 s: the app may print it after its endpoint answers, so ending it at
    once lost the line."""
    tmp = tempfile.TemporaryDirectory()
    env = env_for(Path(tmp.name))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines, said = [], threading.Event()

    def read():
        for line in proc.stderr:
            lines.append(line)
            if "ready in" in line:
                said.set()

    threading.Thread(target=read, daemon=True).start()
    ready = mcp_ready(env, proc, t0)
    if keep:
        return proc, tmp, ready
    if ready_line:
        said.wait(10)
    proc.terminate()
    proc.wait(20)
    tmp.cleanup()
    m = re.search(r"ready in (\d+) ms", "".join(lines))
    return ready, int(m.group(1)) if m else None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def tree(pid):
    """The process and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in Path(f"/proc/{p}/task").iterdir():
                todo += [int(k) for k in (t / "children").read_text().split()]
        except OSError:
            pass
    return out


def usage(pids):
    """CPU seconds and voluntary context switches of these processes (all their threads)."""
    cpu, switches = 0.0, 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            for t in Path(f"/proc/{p}/task").iterdir():
                for line in (t / "status").read_text().splitlines():
                    if line.startswith("voluntary_ctxt_switches"):
                        switches += int(line.split()[1])
        except OSError:
            pass
    return cpu, switches


def idle(cmd, settle=20, secs=60):
    """% of a core, wake-ups/s and processes of `cmd` left alone after its first index."""
    proc, tmp, _ = launch(cmd, keep=True)
    time.sleep(settle)
    (c0, s0), t0 = usage(tree(proc.pid)), time.perf_counter()
    time.sleep(secs)
    pids = tree(proc.pid)
    (c1, s1), dt = usage(pids), time.perf_counter() - t0
    proc.terminate()
    proc.wait(20)
    tmp.cleanup()
    return (c1 - c0) / dt * 100, (s1 - s0) / dt, len(pids)


def main():
    app, serve = [], []
    tray = []
    for _ in range(N):  # interleaved, so both see the same machine noise
        r, t = launch([BIN / "tether-app"], ready_line=True)
        app.append(r)
        if t is not None:
            tray.append(t)
        serve.append(launch([BIN / "tether", "serve"])[0])
    serve_idle = idle([BIN / "tether", "serve"])
    app_idle = idle([BIN / "tether-app", "--minimized"])
    added = app_idle[0] - serve_idle[0]

    p50a, p95a, p50s = statistics.median(app), pct(app, 95), statistics.median(serve)
    verdict = "PASS" if p95a <= 1000 else "MISS"
    rows = [
        "## Desktop app startup",
        "",
        f"{time.strftime('%Y-%m-%d')}, debug build, Xvfb, {os.cpu_count()} cores. {N} launches each, app and "
        "`tether serve` interleaved, fresh data dir with the generated Cursor fixture each time. "
        "\"MCP ready\" = from spawning the process until `/health` answers on the port in daemon.json.",
        "",
        "| metric | result | target | ratio | verdict |",
        "| --- | --- | --- | --- | --- |",
        f"| app: spawn → MCP ready p50 / p95 / max | {p50a:.0f} / {p95a:.0f} / {max(app):.0f} ms | ≤ 1000 ms "
        f"| {1000 / p95a:.2f}× | {verdict} |",
        f"| app: its own \"ready\" (tray built, window requested) p50 | "
        f"{statistics.median(tray) if tray else float('nan'):.0f} ms | | | |",
        f"| `tether serve`: spawn → MCP ready p50 / p95 | {p50s:.0f} / {pct(serve, 95):.0f} ms | | app/serve "
        f"{p50a / p50s:.2f}× | |",
        f"| idle, `tether serve` alone: CPU, wake-ups (20 s to settle, then 60 s) | {serve_idle[0]:.2f} % of a core, "
        f"{serve_idle[1]:.1f} /s | | | |",
        f"| idle, the app with its window hidden (`--minimized`; its {app_idle[2]} process(es)) | {app_idle[0]:.2f} % "
        f"of a core, {app_idle[1]:.1f} /s | | | |",
        # A difference within rounding prints as +0.00, not -0.00.
        f"| what the app adds over `tether serve`, idle | {(added if round(added, 2) else 0.0):+.2f} % of a core | ≤ 1 % | "
        f"{1 / max(added, 1e-3):.2f}× | {'PASS' if added <= 1 else 'MISS'} |",
    ]
    section = "\n".join(rows) + "\n"
    write_section("app", section)
    print(section)


if __name__ == "__main__":
    sys.exit(main())
