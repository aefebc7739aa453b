"""The version number is written once, in python/dpreg/_version.py: pyproject.toml reads it from there
(``dynamic = ["version"]``), and the R package's DESCRIPTION, its NEWS and the install instructions
must carry the same one (a release bumps them together; this test catches a missed one)."""
import re
from pathlib import Path

import dpreg

ROOT = Path(__file__).resolve().parents[1]


def _source_version() -> str:
    text = (ROOT / "python" / "dpreg" / "_version.py").read_text()
    m = re.search(r'^__version__\s*=\s*"([^"]+)"', text, flags=re.M)
    assert m, "python/dpreg/_version.py has no __version__"
    return m.group(1)


def test_pyproject_reads_the_version_from_the_one_source():
    text = (ROOT / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r'^version\s*=', project, flags=re.M), "pyproject.toml must not write a version itself"
    assert re.search(r'^dynamic\s*=\s*\[[^\]]*"version"', text, flags=re.M)
    assert 'attr = "dpreg._version.__version__"' in text
    assert dpreg.__version__ == _source_version()


def test_r_description_version_matches_the_source():
    desc = ROOT / "r-package" / "DESCRIPTION"
    m = re.search(r"^Version:\s*(\S+)", desc.read_text(), flags=re.M)
    assert m, "r-package/DESCRIPTION has no Version"
    assert m.group(1) == _source_version()


def test_r_news_and_install_instructions_name_the_current_version():
    news = (ROOT / "r-package" / "NEWS.md").read_text()
    assert news.startswith(f"# dpreg {_source_version()}")
    for readme in (ROOT / "README.md", ROOT / "r-package" / "README.md"):
        for v in re.findall(r"dpreg_(\d[^/\s]*?)\.tar\.gz", readme.read_text()):
            assert v == _source_version(), f"{readme.name} installs dpreg_{v}.tar.gz"


def test_the_package_ships_its_type_hints_marker():
    assert (ROOT / "python" / "dpreg" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()
