"""Issue 15 item 6: the example datasets ship inside dpreg (no plotnine / ISLP, no download)."""
import subprocess
import sys
from importlib import resources

import pandas as pd
import pytest

from dpreg import datasets


@pytest.mark.parametrize("loader, rows, cats", [
    ("load_diamonds", 53940, datasets.DIAMONDS_LEVELS),
    ("load_bikeshare", 8645, datasets.BIKESHARE_LEVELS),
    ("load_penguins", 344, datasets.PENGUINS_LEVELS),
])
def test_loaders_read_package_data(loader, rows, cats):
    df = getattr(datasets, loader)()
    assert isinstance(df, pd.DataFrame) and len(df) == rows
    for col, lev in cats.items():
        assert list(df[col].cat.categories) == lev
        # every non-missing value is one of the documented levels (none became NaN by a typo)
        assert df[col].notna().sum() == df[col].astype(object).notna().sum()


def test_data_files_are_package_data_with_licence():
    root = resources.files("dpreg").joinpath("data")
    names = {p.name for p in root.iterdir()}
    assert {"diamonds.csv.gz", "penguins.csv.gz", "bikeshare.csv.gz", "README.md"} <= names
    note = root.joinpath("README.md").read_text()
    for word in ("MIT", "CC0", "BSD", "CC BY 4.0"):
        assert word in note
    total = sum(len(root.joinpath(n).read_bytes()) for n in names)
    assert total < 3_000_000  # keeps the wheel small


def test_readme_example_needs_no_plotnine_or_islp():
    # a fresh interpreter in which plotnine and ISLP cannot be imported runs the README example
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('plotnine', 'ISLP'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Block())\n"
        "import warnings; warnings.simplefilter('ignore')\n"
        "import dpreg\n"
        "from dpreg.datasets import load_diamonds\n"
        "diamonds = load_diamonds()\n"
        "fit = dpreg.dp_lm('price ~ carat + C(cut) + depth', diamonds, eps=1.0, random_state=1)\n"
        "s = str(fit.summary())\n"
        "assert 'carat' in s\n"
        "assert not any(m.split('.')[0] in ('plotnine', 'ISLP') for m in sys.modules)\n"
        "print('ok')\n")
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
