"""dpreg benchmarks: accuracy, speed, coverage studies.

Run as ``python -m benchmarks NAME [args]``; each ``bench_NAME.py`` module exposes
``main(argv=None)`` and writes markdown tables to stdout and ``benchmarks/results/NAME.md``.
"""
import contextlib
from pathlib import Path
from unittest import mock

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@contextlib.contextmanager
def patched(*replacements):
    """Within the block, ``setattr(module, name, new)`` for each ``(module, name, new)``; the package's own
    functions are restored on the way out, also after an error (the diagnosis benchmarks wrap internal
    functions to record the values a fit computes, inside their own process only)."""
    with contextlib.ExitStack() as stack:
        for module, name, new in replacements:
            stack.enter_context(mock.patch.object(module, name, new))
        yield


def write_result(name, text):
    """Print ``text`` and write it to ``benchmarks/results/<name>.md``."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    print(text)
    (RESULTS_DIR / f"{name}.md").write_text(text if text.endswith("\n") else text + "\n")
