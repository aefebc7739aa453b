"""T14 end to end: a planted unique record never appears in anything a fit shows or stores, the fit
keeps no array of length n, and the serialised fit does not grow with n."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

try:
    import dpreg.design.build  # noqa: F401
    HAVE_BUILDER = True
except ImportError:
    HAVE_BUILDER = False

import dpreg
from dpreg.cli import main as cli_main

pytestmark = pytest.mark.skipif(not HAVE_BUILDER, reason="design builder not present yet")

Y_PLANT, X_PLANT = 123456.789, 98765.4321
# every way the planted values could be printed: plain, rounded, scientific
NEEDLES = ["123456.789", "123456.79", "123456.8", "123457", "1.23457e+05", "1.2346e+05", "123,456",
           "98765.4321", "98765.432", "98765.43", "98765.4", "98765", "9.87654e+04", "9.8765e+04", "98,765"]
BOUNDS = {"y": (-200000.0, 200000.0), "x": (0.0, 100000.0), "z": (-10.0, 10.0)}
LEVELS = {"g": ["a", "b", "c"]}


def planted_frame(n, seed=0):
    rng = np.random.default_rng(seed)   # synthetic test data (not dpreg noise)
    x = rng.uniform(0, 100000, n)
    z = rng.normal(0, 2, n).clip(-10, 10)
    g = rng.choice(LEVELS["g"], n)
    y = 0.5 * x + 1000 * z + 5000 * (g == "b") + rng.normal(0, 5000, n)
    df = pd.DataFrame({"y": y.clip(-200000, 200000), "x": x, "z": z,
                       "g": pd.Categorical(g, categories=LEVELS["g"])})
    df.loc[n // 2, ["y", "x"]] = [Y_PLANT, X_PLANT]
    return df


def assert_clean(text, where):
    for needle in NEEDLES:
        assert needle not in text, f"planted value {needle!r} found in {where}"


def all_texts(fit):
    s = fit.summary()
    yield "str(fit)", str(fit)
    yield "repr(fit)", repr(fit)
    yield "str(summary)", str(s)
    yield "markdown", s.to_markdown()
    yield "latex", s.to_latex()
    yield "html", s.to_html()
    yield "to_dict json", json.dumps(fit.to_dict(), allow_nan=False)
    yield "privacy", str(fit.privacy) + fit.privacy.paragraph() + json.dumps(fit.privacy.to_dict())
    yield "coef_table", s.coef_table.to_string()
    yield "compare", str(dpreg.compare([fit])) + dpreg.compare([fit]).to_latex()


def fit_methods():
    """(method, extra options, n, eps): each method where its public preconditions hold (ISP needs
    large n at this eps; TukeyEM's PTR check needs many models)."""
    return [("adassp", {}, 4000, 1.0), ("boosted_adassp", {}, 4000, 1.0),
            ("isp", {"sigma": 5000.0}, 50000, 10.0), ("tukey", {"m": 400}, 20000, 4.0),
            ("ht_fw", {}, 4000, 1.0), ("subsample_aggregate", {}, 4000, 1.0)]


@pytest.mark.parametrize("method,kw,n,eps", fit_methods())
def test_planted_record_never_shown(method, kw, n, eps):
    df = planted_frame(n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = dpreg.dp_lm("y ~ x + z + C(g)", df, eps=eps, delta=1e-6, method=method, bounds=BOUNDS,
                              levels=LEVELS, random_state=5, **kw)
        except (ValueError, dpreg.EstimationFailed) as exc:
            assert_clean(str(exc), f"{method} error")
            pytest.skip(f"{method} declined at this n: {exc}")
        for where, text in all_texts(fit):
            assert_clean(text, f"{method} {where}")
        # predictions for the planted row itself are the user's own new data: not checked
        fit.predict(df.head(3), interval=None)
    for w in caught:
        assert_clean(str(w.message), f"{method} warning")


def test_errors_and_warnings_do_not_quote_the_planted_value(capsys):
    df = planted_frame(500)
    df["s"] = np.where(np.arange(500) == 7, "v123456.789", "plain")   # a string level to be leaked
    msgs = []
    for call in (
        lambda: dpreg.dp_lm("y ~ x + C(s)", df, eps=1, bounds=BOUNDS, levels={"s": ["plain"]}),  # unknown level
        lambda: dpreg.dp_lm("y ~ x + nosuch", df, eps=1, bounds=BOUNDS),
        lambda: dpreg.dp_lm("y ~ x", df.assign(x=df["x"].where(df.index != 3)), eps=1, bounds=BOUNDS),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
            except Exception as exc:   # noqa: BLE001 - any error text is checked
                msgs.append(str(exc))
        msgs += [str(w.message) for w in caught]
    assert msgs
    for m in msgs:
        assert_clean(m, "error/warning")
        assert "v123456" not in m


def test_cli_outputs_clean(tmp_path, capsys):
    df = planted_frame(2000)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    b = tmp_path / "b.json"
    b.write_text(json.dumps({k: list(v) for k, v in BOUNDS.items()}))
    lv = tmp_path / "l.json"
    lv.write_text(json.dumps(LEVELS))
    for fmt in ("text", "json", "latex"):
        rc = cli_main(["fit", "y ~ x + z + C(g)", "--data", str(path), "--eps", "1", "--bounds", str(b),
                       "--levels", str(lv), "--seed", "3", "--format", fmt])
        out, err = capsys.readouterr()
        assert rc == 0, err
        assert_clean(out + err, f"cli {fmt}")


def _arrays_with_length(obj, n, depth=0, seen=None):
    """Yield paths of numpy/pandas objects with a dimension equal to n reachable from obj."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 5:
        return
    seen.add(id(obj))
    if isinstance(obj, (np.ndarray, pd.Series, pd.DataFrame, pd.Index)):
        if n in getattr(obj, "shape", ()):
            yield type(obj).__name__
        return
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("dpreg"):
        items = vars(obj).items()
    else:
        return
    for k, v in items:
        for p in _arrays_with_length(v, n, depth + 1, seen):
            yield f"{k}.{p}"


def test_fit_keeps_no_row_level_arrays():
    n = 3001
    fit = dpreg.dp_lm("y ~ x + z + C(g)", planted_frame(n), eps=1.0, bounds=BOUNDS, levels=LEVELS,
                      random_state=1)
    assert list(_arrays_with_length(fit, n)) == []


def test_serialised_size_does_not_grow_with_n():
    # both sizes where the fit releases its intervals, sigma and R^2 (at small n they are withheld and
    # the dict is shorter for that reason alone); a per-row array would add >= 300,000 entries
    sizes = {}
    for n in (100000, 400000):
        fit = dpreg.dp_lm("y ~ x + z + C(g)", planted_frame(n, seed=2), eps=1.0, bounds=BOUNDS,
                          levels=LEVELS, random_state=4)
        sizes[n] = len(json.dumps(fit.to_dict()))
    assert abs(sizes[400000] - sizes[100000]) < 1024, sizes
