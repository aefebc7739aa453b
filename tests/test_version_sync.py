"""The version number lives in pyproject.toml; the Python package and the R package's DESCRIPTION
must carry the same one (a release bumps all three together; this test catches a missed one)."""
import re
from pathlib import Path

import dpreg

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, flags=re.M)
    assert m, "pyproject.toml has no version"
    return m.group(1)


def test_python_version_matches_pyproject():
    assert dpreg.__version__ == _pyproject_version()


def test_r_description_version_matches_pyproject():
    desc = ROOT / "r-package" / "DESCRIPTION"
    m = re.search(r"^Version:\s*(\S+)", desc.read_text(), flags=re.M)
    assert m, "r-package/DESCRIPTION has no Version"
    assert m.group(1) == _pyproject_version()
