"""Release build settings side by side: the `tether` binary built with each candidate profile
(cargo --config overrides, so every variant is spelled out here and none depends on Cargo.toml),
then, interleaved in one run: binary size, start-up (`tether --version`), a start-up that opens
the index and answers (`tether sessions list`), and a full `tether index` of the generated DB.
Writes the `profile` section of docs/benchmarks.md. Run through scripts/bench-profile.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_doc import write_section

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "target" / "profile-bench"
ROUNDS = int(os.environ.get("BENCH_RUNS", "40"))
INDEX_ROUNDS = int(os.environ.get("BENCH_INDEX_RUNS", "4"))

BASE = {"opt-level": 3, "lto": "false", "codegen-units": 16, "debug": '"line-tables-only"', "strip": '"none"'}
# (name, overrides of profile.release, what it is)
VARIANTS = [
    ("release", {}, "the plain release profile (what `scripts/bench` builds)"),
    ("thin", {"lto": '"thin"', "debug": "false", "strip": '"symbols"'}, "thin LTO, stripped"),
    ("fat", {"lto": '"fat"', "codegen-units": 1, "debug": "false", "strip": '"symbols"'},
     "fat LTO, one codegen unit, stripped"),
]


def build(name: str, overrides: dict) -> tuple[Path, float]:
    settings = {**BASE, **overrides}
    cfg = [a for k, v in settings.items() for a in ("--config", f"profile.release.{k}={v}")]
    t0 = time.perf_counter()
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "tether-cli", "--bin", "tether", *cfg],
                   check=True, cwd=ROOT)
    secs = time.perf_counter() - t0
    OUT.mkdir(parents=True, exist_ok=True)
    dest = OUT / f"tether-{name}"
    shutil.copy2(ROOT / "target" / "release" / "tether", dest)
    return dest, secs


def timed(cmd, env) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def main() -> int:
    gen = json.loads(subprocess.check_output([ROOT / "target" / "release" / "tether-bench", "--size-mb",
                                              os.environ.get("BENCH_SIZE_MB", "256"), "--dir",
                                              str(ROOT / "target" / "bench-data-profile"), "generate"]))
    user_dir = gen["user_dir"]
    db_mb = Path(user_dir, "globalStorage", "state.vscdb").stat().st_size / 1e6
    bins = {}
    for name, overrides, _ in VARIANTS:
        print(f"building {name} …", file=sys.stderr)
        bins[name] = build(name, overrides)
    # The plain release profile again, so target/release/tether is what scripts/bench expects.
    build("release", {})
    stripped = OUT / "tether-release-stripped"
    subprocess.run(["strip", "-o", stripped, bins["release"][0]], check=True)
    bins["release-stripped"] = (stripped, None)
    names = ["release", "release-stripped", "thin", "fat"]
    notes = {n: d for n, _, d in VARIANTS} | {"release-stripped": "the plain release binary through strip(1)"}

    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        index_ms = {n: [] for n in names}
        for r in range(INDEX_ROUNDS):
            for n in names:
                home = Path(tmp) / f"{n}-{r}"
                env = dict(os.environ, TETHER_HOME=str(home), TETHER_CURSOR_DIR=user_dir,
                           TETHER_CURSOR_HOME=str(Path(tmp) / "no-cli"), TETHER_LOG="warn")
                print(f"indexing with {n} (round {r + 1}) …", file=sys.stderr)
                index_ms[n].append(timed([bins[n][0], "index"], env))
                envs[n] = env
        version_ms = {n: [] for n in names}
        list_ms = {n: [] for n in names}
        for _ in range(ROUNDS):
            for n in names:
                version_ms[n].append(timed([bins[n][0], "--version"], envs[n]))
                list_ms[n].append(timed([bins[n][0], "sessions", "list", "--json"], envs[n]))

    base_idx = statistics.median(index_ms["release"])
    rows = [
        f"{time.strftime('%Y-%m-%d')}, 2 cores. `tether` (the CLI; the app's binary takes the same profile) built "
        f"with each candidate, then measured interleaved in one run: {ROUNDS} runs each of `--version` and "
        f"`sessions list --json` (opens the index, answers), {INDEX_ROUNDS} full `tether index` of a "
        f"{db_mb:.0f} MB generated DB each (fresh data dir, page cache warm). Build time is the whole "
        "release build for that setting, dependencies included (0 when cargo had it already). "
        "Run with `scripts/bench-profile`.",
        "",
        "| profile | size | build | `--version` p50 / p95 | `sessions list` p50 / p95 | index | index vs release |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in names:
        path, secs = bins[n]
        idx = statistics.median(index_ms[n])
        rows.append(
            f"| {n}: {notes[n]} | {path.stat().st_size / 1e6:.1f} MB | "
            f"{'—' if secs is None else f'{secs / 60:.1f} min'} | "
            f"{pct(version_ms[n], 50):.1f} / {pct(version_ms[n], 95):.1f} ms | "
            f"{pct(list_ms[n], 50):.1f} / {pct(list_ms[n], 95):.1f} ms | "
            f"{idx / 1000:.2f} s ({db_mb / (idx / 1000):.0f} MB/s) | {base_idx / idx:.2f}× |")
    size = {n: bins[n][0].stat().st_size / 1e6 for n in names}
    med = {n: statistics.median(index_ms[n]) for n in names}
    noise = abs(med["release-stripped"] / med["release"] - 1) * 100
    rows += [
        "",
        f"`release` and `release-stripped` run the same machine code, so the {noise:.0f} % between their index "
        "times is this machine's noise, not the profile. `dist` (what `scripts/package` ships, Cargo.toml) is "
        f"`fat`: the smallest binary ({size['fat']:.1f} MB, {size['fat'] / size['release-stripped']:.2f}× the "
        f"stripped release one), with index time {med['fat'] / med['release-stripped']:.2f}× and `--version` "
        f"{pct(version_ms['fat'], 50) / pct(version_ms['release-stripped'], 50):.2f}× the stripped release "
        "binary's; it costs build time only, once per package. `release` keeps line tables and no LTO, so "
        "benchmarks and profiles build quickly and show source lines.",
    ]
    section = "\n".join(rows) + "\n"
    write_section("profile", "## Release build profile\n\n" + section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
