"""docs/benchmarks.md for the Python benchmarks: replaces the text between `<!-- bench:NAME -->`
markers, or adds the section at the end (as the Rust suites do in tether-bench's main.rs).
"""

from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "benchmarks.md"


def write_section(name: str, body: str):
    doc = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    open_m, close_m = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{open_m}\n{body}{close_m}"
    if open_m in doc:
        doc = doc[: doc.index(open_m)] + block + doc[doc.index(close_m) + len(close_m):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(doc)
