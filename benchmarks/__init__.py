"""dpreg benchmarks: accuracy, speed, coverage studies.

Run as ``python -m benchmarks NAME [args]``; each ``bench_NAME.py`` module exposes
``main(argv=None)`` and writes markdown tables to stdout and ``benchmarks/results/NAME.md``.
"""
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def write_result(name, text):
    """Print ``text`` and write it to ``benchmarks/results/<name>.md``."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    print(text)
    (RESULTS_DIR / f"{name}.md").write_text(text if text.endswith("\n") else text + "\n")
