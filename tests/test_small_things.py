"""Issue 15 item 7: contrasts with declared levels, bounds-key typos are errors, CLI inline JSON."""
import json

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.cli import main
from dpreg.design.build import DesignError
from dpreg.design.formula import FormulaError

LEVELS = {"g": ["a", "b", "c"]}
BOUNDS = {"x": (0, 1), "y": (-2, 4)}


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    n = 4000
    d = pd.DataFrame({"x": rng.uniform(0, 1, n), "g": rng.choice(["a", "b", "c"], n)})
    d["y"] = d.x + (d.g == "b") * 1.0 + (d.g == "c") * 0.5 + rng.normal(0, 0.3, n)
    return d


def test_treatment_contrast_with_reference(df):
    fit = dpreg.dp_lm('y ~ x + C(g, Treatment("b"))', df, eps=5, bounds=BOUNDS, levels=LEVELS, random_state=1)
    assert [t.split("[")[1] for t in fit.terms[2:]] == ["T.a]", "T.c]"]
    # group means a = 0, b = 1, c = 0.5 (plus x): effects against b are -1 and -0.5; with eps = 5 and
    # n = 4000 the privacy noise on them is ~0.1 (BoostedAdaSSP), so 0.35 is a loose band
    assert fit.coef.iloc[2] == pytest.approx(-1.0, abs=0.35)
    assert fit.coef.iloc[3] == pytest.approx(-0.5, abs=0.35)
    assert fit.public.factor_blocks == [[2, 3]]      # treatment dummies keep one-hot semantics
    assert fit.predict(df.head(4)).shape == (4,)
    with pytest.raises(DesignError, match="declared levels"):
        dpreg.dp_lm('y ~ x + C(g, Treatment("z"))', df, eps=5, bounds=BOUNDS, levels=LEVELS)


@pytest.mark.parametrize("coding", ["Sum", "contr.sum"])
def test_sum_contrast_columns_get_their_public_interval(df, coding):
    fit = dpreg.dp_lm(f"y ~ x + C(g, {coding})", df, eps=5, bounds=BOUNDS, levels=LEVELS, random_state=1)
    # Sum coding takes the values -1, 0, 1: the public interval must say so (privacy calibration uses
    # it), and the block is not treated as one-hot (a row of the last level is all -1)
    assert list(fit.public.column_lower[2:]) == [-1.0, -1.0]
    assert list(fit.public.column_upper[2:]) == [1.0, 1.0]
    assert fit.public.factor_blocks == []
    # effects against the grand mean 0.5: a -0.5, b +0.5
    assert fit.coef.iloc[2] == pytest.approx(-0.5, abs=0.3)
    assert fit.coef.iloc[3] == pytest.approx(0.5, abs=0.3)


def test_bad_contrast_argument(df):
    with pytest.raises(FormulaError, match="contrast"):
        dpreg.dp_lm("y ~ x + C(g, foo)", df, eps=1, bounds=BOUNDS, levels=LEVELS)
    with pytest.raises(FormulaError, match="constants"):
        dpreg.dp_lm("y ~ x + C(g, Treatment(x))", df, eps=1, bounds=BOUNDS, levels=LEVELS)


def test_bounds_key_typo_is_an_error_with_the_closest_name(df):
    df2 = df.rename(columns={"y": "price"})
    with pytest.raises(DesignError, match="did you mean 'price'"):
        dpreg.dp_lm("price ~ x", df2, eps=1, bounds={"prise": (-2, 4), "x": (0, 1)})


def test_cli_bounds_inline_json(df, tmp_path, capsys):
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    rc = main(["fit", "y ~ x", "--data", str(path), "--eps", "1", "--seed", "3",
               "--bounds", json.dumps({"x": [0, 1], "y": [-2, 4]}), "--format", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    ranges = {r["variable"]: r for r in json.loads(out)["privacy"]["ranges"]}
    assert ranges["x"]["source"].startswith("declared") and ranges["y"]["source"].startswith("declared")
    assert main(["fit", "y ~ x", "--data", str(path), "--eps", "1", "--bounds", '{"x": [0, 1'] ) == 2
    assert "not valid JSON" in capsys.readouterr().err
