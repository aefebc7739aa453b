"""End-to-end checks no other test file makes: the package layout and README's commands and example,
noise-off fits equal to statsmodels' OLS, interval arithmetic of transforms, missing values and n,
data-read bounds and levels marked in every output, clear errors that never quote data, the CLI's bad
input, and a planted record that appears in no output of the default path.
"""
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tomllib
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.api import _fit
from dpreg.design.build import build_design
from dpreg.errors import DPRegError, PrivacyLeakWarning
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Y_PLANT, X_PLANT = 123456.789, 98765.4321
# every way a planted value could be printed: plain, rounded, scientific, with separators
NEEDLES = ["123456.789", "123456.79", "123456.8", "123457", "1.23457e+05", "1.2346e+05", "123,456",
           "98765.4321", "98765.432", "98765.43", "98765.4", "98765", "9.87654e+04", "9.8765e+04", "98,765"]


def assert_clean(text, where):
    # a printed planted value starts a number: a needle preceded by a digit or a point is a chance run of
    # digits inside another (noisy) number, e.g. "98765" in 0.22987656926956224
    for needle in NEEDLES:
        m = re.search(r"(?<![0-9.])" + re.escape(needle), text)
        assert m is None, f"planted value {needle!r} found in {where}: {text[max(m.start() - 150, 0):m.end() + 150]}"


def _assert_plain(obj, path="to_dict()"):
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert isinstance(k, str), f"{path}: key {k!r}"
            _assert_plain(v, f"{path}[{k!r}]")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _assert_plain(v, f"{path}[{i}]")
    else:
        assert obj is None or type(obj) in (bool, int, float, str), f"{path}: {type(obj).__name__}"


def run_module(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


# ---- item 1 / 2: packaging, README, CI entry point ----------------------------------------------
def test_pyproject_layout_and_runtime_dependencies():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        meta = tomllib.load(fh)
    project = meta["project"]
    assert project["requires-python"].replace(" ", "") == ">=3.11"
    names = {dep.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower()
             for dep in project["dependencies"]}
    assert names == {"numpy", "scipy", "pandas", "formulaic", "tabulate"}
    assert project["scripts"]["dpreg"] == "dpreg.cli:main"
    assert os.path.isfile(os.path.join(ROOT, "python", "dpreg", "__init__.py"))
    import dpreg as pkg
    assert os.path.realpath(pkg.__file__).startswith(os.path.realpath(os.path.join(ROOT, "python", "dpreg")))
    for target in ("demo:", "test:"):
        assert any(line.startswith(target) for line in pathlib.Path(ROOT, "Makefile").read_text().splitlines())
    ci = pathlib.Path(ROOT, ".ci", "run").read_text()
    assert "make test" in ci and os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)


def test_readme_has_the_commands_the_example_and_the_privacy_paragraph():
    readme = pathlib.Path(ROOT, "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert 'fit = dpreg.dp_lm("price ~ carat + C(cut) + depth", diamonds, eps=1.0)' in readme
    assert "print(fit.summary())" in readme
    low = readme.lower()
    assert "eps" in low and "delta" in low and "what is released" in low and "never shows" in low


def test_readme_three_line_example_runs_on_offline_diamonds():
    diamonds = dpreg.datasets.load_diamonds() if hasattr(dpreg, "datasets") else None
    if diamonds is None:
        from dpreg.datasets import load_diamonds
        diamonds = load_diamonds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # "budget for private ranges is small": advice only
        fit = dpreg.dp_lm("price ~ carat + C(cut) + depth", diamonds, eps=1.0)
    text = str(fit.summary())
    assert not fit.privacy.seeded and fit.privacy.private
    for block in ("Call:", "Estimate", "Std. Error", "z value", "Pr(>|z|)", "DP residual standard error",
                  "DP R-squared", "estimated privately"):
        assert block in text, block
    assert fit.privacy.eps_spent <= 1.0 * (1 + 1e-9)


def test_make_demo_main_job_is_a_dp_fit_of_real_data_with_a_summary():
    r = run_module("dpreg.demo")
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    assert "diamonds" in out and "n = 53940" in out
    assert out.count("Coefficients (noise-aware standard errors") >= 1
    assert "DP residual standard error" in out and "Privacy: (eps = 1" in out
    assert "Traceback" not in r.stderr


# ---- item 4: design layer ---------------------------------------------------------------------
def _frame(n, seed=0):
    rng = np.random.default_rng(seed)   # synthetic test data (not dpreg noise)
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.uniform(1, 50, n), "z": rng.uniform(-3, 2, n),
                       "f": pd.Categorical(rng.choice(list("abc"), n), categories=list("abc"))})
    df["y"] = (1 + 0.5 * df.x1 - 0.03 * df.x1 ** 2 + 0.2 * df.x1 * df.z + 2 * np.log(df.x2)
               + np.select([df.f == "b", df.f == "c"], [1.0, -2.0], 0.0) + 0.5 * (df.f == "c") * df.z
               + rng.normal(0, 1, n)).clip(-30, 40)
    return df


BOUNDS = {"x1": (0, 10), "x2": (1, 50), "z": (-3, 2), "y": (-30, 40)}

# (dpreg formula, the same model for statsmodels, {statsmodels name: dpreg name})
UNSCALING_CASES = [
    ("y ~ x1 + I(x1**2) + x1:z + log(x2) + C(f) + C(f):z",
     "y ~ x1 + I(x1**2) + x1:z + np.log(x2) + C(f) + C(f):z", {"np.log(x2)": "log(x2)"}),
    ("y ~ x1*z - 1", "y ~ x1*z - 1", {}),
    ("y ~ x1*z + C(f) - 1", "y ~ x1*z + C(f) - 1", {}),
    ("y ~ .", "y ~ x1 + x2 + z + f", {}),
    ("y ~ x1 + sqrt(x2) + exp(z)", "y ~ x1 + np.sqrt(x2) + np.exp(z)",
     {"np.sqrt(x2)": "sqrt(x2)", "np.exp(z)": "exp(z)"}),
]


@pytest.mark.parametrize("method", ["adassp", "boosted_adassp"])
@pytest.mark.parametrize("formula,sm_formula,rename", UNSCALING_CASES, ids=[c[0] for c in UNSCALING_CASES])
def test_unscaled_noise_off_fit_equals_statsmodels_ols(method, formula, sm_formula, rename):
    """Exact un-scaling (spec 2.4) with derived columns, interactions, factor x numeric blocks, no
    intercept and the dot: noise off, the coefficients in original units are statsmodels' OLS.
    n = 20 000 so that lambda_min of the scaled Gram matrix clears AdaSSP's ridge threshold even for
    the collinear x1, x1^2, x1:z columns (the ridge is part of AdaSSP, not of un-scaling).
    Tolerance of T10(e): 1e-8 max(1, ||beta||)."""
    import statsmodels.formula.api as smf
    df = _frame(20000)
    opts = {"T": 1, "tau": 1e6, "stable_ridge": False} if method == "boosted_adassp" else {}
    fit = _fit(formula, df, family="gaussian", eps=8.0, delta=1e-6, method=method, bounds=BOUNDS, levels=None,
               neighbours="replace_one", inference=True, budget=None, random_state=1, options=opts,
               _noise_off=True)
    assert not fit.facts["ridge_active"]
    sm = smf.ols(sm_formula, df).fit().params.rename(index=rename)
    assert sorted(sm.index) == sorted(fit.coef.index)
    theirs = sm[fit.coef.index].to_numpy()
    assert np.max(np.abs(fit.coef.to_numpy() - theirs)) <= 1e-8 * max(1.0, np.linalg.norm(theirs))
    assert not fit.privacy.private      # the noise-off hook never claims privacy


def test_interval_arithmetic_for_log_sqrt_and_interactions_across_zero():
    df = _frame(200)
    d = build_design("y ~ log(x2) + sqrt(x2) + x1:z + I(z**2) + I(z**3) + z:C(f)", df, bounds=BOUNDS,
                     levels={"f": list("abc")}, noise=NoiseSource(1), ledger=Ledger())
    got = dict(zip(d.terms, zip(d.public.column_lower, d.public.column_upper)))
    assert got["log(x2)"] == pytest.approx((0.0, math.log(50)))          # monotone: image of endpoints
    assert got["sqrt(x2)"] == pytest.approx((1.0, math.sqrt(50)))
    assert got["x1:z"] == pytest.approx((-30.0, 20.0))                   # min/max of the endpoint products
    assert got["I(z ** 2)"] == pytest.approx((0.0, 9.0))                 # even power across 0 includes 0
    assert got["I(z ** 3)"] == pytest.approx((-27.0, 8.0))
    for name, (lo, hi) in got.items():
        if name.startswith("z:C(f)"):
            assert (lo, hi) == pytest.approx((-3.0, 2.0))                # numeric x dummy
    j = d.terms.index("log(x2)")
    assert np.all(d.X[:, j] >= 0) and np.all(d.X[:, j] <= math.log(50) + 1e-12)


def test_missing_values_never_make_n_data_dependent():
    df = _frame(2000, seed=3)
    df.loc[[5, 17, 80], "x1"] = np.nan
    df.loc[[9], "f"] = np.nan
    with pytest.raises(DPRegError) as exc:          # default: refuse, name the columns, no count
        dpreg.dp_lm("y ~ x1 + C(f)", df, eps=1.0, bounds=BOUNDS, method="adassp")
    msg = str(exc.value)
    assert "'x1'" in msg and "'f'" in msg and "na_action" in msg
    assert re.findall(r"(?<![\w.])\d+", msg) == [], msg   # no count of incomplete rows (not public)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fit = dpreg.dp_lm("y ~ x1 + C(f)", df, eps=1.0, bounds=BOUNDS, method="adassp", na_action="impute",
                          random_state=2)
    assert fit.nobs == len(df) and fit.privacy.private and not fit.privacy.leaks
    with pytest.warns(PrivacyLeakWarning, match="drop"):
        dropped = dpreg.dp_lm("y ~ x1 + C(f)", df, eps=1.0, bounds=BOUNDS, method="adassp",
                              na_action="drop", random_state=2)
    assert dropped.nobs == len(df) - 4 and any("drop" in t for t in dropped.privacy.leaks)


def test_bounds_data_marks_the_fit_not_private_in_every_output():
    df = _frame(1000)
    with pytest.warns(PrivacyLeakWarning):
        fit = dpreg.dp_lm("y ~ x1 + z", df, eps=1.0, bounds="data", method="adassp", random_state=1)
    assert not fit.privacy.private and fit.privacy.leaks
    assert fit.to_dict()["privacy"]["private"] is False
    assert "NOT" in fit.summary().to_markdown() and "NOT" in fit.summary().to_html()


def test_levels_from_data_warn_even_when_the_design_then_fails():
    """A numeric column used as C(x) with levels="data" takes its levels from the data: the leak warning
    must reach the caller even though the design is then refused, and the refusal must not quote the
    number of coefficients (it counts the distinct values observed)."""
    df = _frame(300)
    with pytest.warns(PrivacyLeakWarning, match="x1"), pytest.raises(DPRegError) as exc:
        dpreg.dp_lm("y ~ C(x1)", df, eps=1.0, bounds=BOUNDS, method="adassp", levels="data")
    assert "coefficients" in str(exc.value) and "(300)" not in str(exc.value) and "(299)" not in str(exc.value)


# ---- item 5: default path with private ranges ---------------------------------------------------
def test_default_path_dot_formula_estimates_every_range_from_ten_percent():
    df = _frame(20000, seed=4)[["y", "x1", "z", "f"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)     # no leak on the default path
        warnings.simplefilter("ignore", UserWarning)
        fit = dpreg.dp_lm("y ~ .", df, eps=1.0, random_state=5)
    assert fit.method == "boosted_adassp" and fit.privacy.private
    ranges = fit.privacy.to_dict()["ranges"]
    text = json.dumps(ranges) + str(fit.privacy)
    for v in ("y", "x1", "z"):
        assert f"{v} estimated privately" in str(fit.privacy)
    assert "f levels selected privately" in str(fit.privacy) and text     # a Categorical's levels are data
    range_eps = sum(e["eps"] or 0.0 for e in fit.privacy.ledger if str(e["statistic"]).startswith("range"))
    assert range_eps == pytest.approx(0.10 * 1.0, rel=1e-9)      # default bounds_share = 10 %
    level_eps = sum(e["eps"] or 0.0 for e in fit.privacy.ledger if "(f)" in str(e["statistic"]))
    assert level_eps == pytest.approx(0.10 * 1.0, rel=1e-9)      # default levels_share = 10 %
    assert fit.privacy.eps_spent <= 1.0 * (1 + 1e-9)


def test_numpy_scalars_are_valid_budgets():
    """eps/delta taken from a numpy grid (np.int64, np.float32) are numbers, passed on as floats."""
    df = _frame(1000)
    fit = dpreg.dp_lm("y ~ x1", df, eps=np.int64(2), delta=np.float32(1e-6), bounds=BOUNDS, method="adassp",
                      random_state=1)
    assert type(fit.privacy.eps) is float and fit.privacy.eps == 2.0
    assert 0 < fit.privacy.delta_spent <= float(np.float32(1e-6)) * (1 + 1e-9)
    for bad in (np.bool_(True), np.float64("nan"), np.int64(0)):
        with pytest.raises(ValueError, match="eps"):
            dpreg.dp_lm("y ~ x1", df, eps=bad, bounds=BOUNDS, method="adassp")


# ---- item 8: residuals / fitted on a real fit ---------------------------------------------------
def test_residuals_and_fitted_raise_on_a_real_fit():
    df = _frame(1000)
    fit = dpreg.dp_lm("y ~ x1 + C(f)", df, eps=1.0, bounds=BOUNDS, method="adassp", random_state=1)
    for name in ("residuals", "fitted", "fitted_values", "resid"):
        with pytest.raises(DPRegError, match="expose"):
            getattr(fit, name)
    d = fit.to_dict()
    assert "residuals" not in d and "fitted" not in d


# ---- item 10: every error, through the public entry point, never quoting data -------------------
def _planted(n=200):
    rng = np.random.default_rng(7)   # synthetic test data (not dpreg noise)
    df = pd.DataFrame({"y": rng.normal(size=n), "x": rng.uniform(0, 10, n), "s": ["t"] * n,
                       "g": pd.Categorical(rng.choice(list("ab"), n), categories=list("ab"))})
    df.loc[3, "x"] = X_PLANT
    df.loc[4, "y"] = Y_PLANT
    return df


PB = {"x": (0, 10), "y": (-5, 5)}
ITEM10 = [
    # (id, formula, data transform, kwargs, exception type, needle in message)
    ("eps=0", "y ~ x", None, {"eps": 0}, ValueError, "eps"),
    ("eps<0", "y ~ x", None, {"eps": -1}, ValueError, "eps"),
    ("eps=inf", "y ~ x", None, {"eps": float("inf")}, ValueError, "eps"),
    ("eps=nan", "y ~ x", None, {"eps": float("nan")}, ValueError, "eps"),
    ("delta=0 auto", "y ~ x", None, {"delta": 0.0}, ValueError, "pure DP"),
    ("delta=0 adassp", "y ~ x", None, {"delta": 0.0, "method": "adassp"}, ValueError, "pure DP"),
    ("delta=0 boosted", "y ~ x", None, {"delta": 0.0, "method": "boosted_adassp"}, ValueError, "pure DP"),
    ("delta=1", "y ~ x", None, {"delta": 1.0}, ValueError, "delta"),
    ("delta<0", "y ~ x", None, {"delta": -1e-6}, ValueError, "delta"),
    ("delta=nan", "y ~ x", None, {"delta": float("nan")}, ValueError, "delta"),
    ("unknown method", "y ~ x", None, {"method": "ols"}, ValueError, "boosted_adassp"),
    ("unknown option adassp", "y ~ x", None, {"method": "adassp", "lam": 1}, ValueError, "lam"),
    ("unknown option boosted", "y ~ x", None, {"method": "boosted_adassp", "rounds": 5}, ValueError, "rounds"),
    ("bad option value", "y ~ x", None, {"method": "boosted_adassp", "T": 0}, ValueError, "T"),
    ("missing column", "y ~ x + nope", None, {}, ValueError, "'nope'"),
    ("missing outcome", "nope ~ x", None, {}, ValueError, "'nope'"),
    ("non-numeric outcome", "s ~ x", None, {}, ValueError, "'s'"),
    ("categorical outcome", "g ~ x", None, {}, ValueError, "'g'"),
    ("n <= coefficients", "y ~ x + g", lambda d: d.iloc[:3], {"levels": {"g": ["a", "b"]}}, ValueError,
     "coefficients"),
    ("empty frame", "y ~ x", lambda d: d.iloc[:0], {}, ValueError, "no rows"),
    ("no columns", "y ~ x", lambda d: pd.DataFrame(), {}, ValueError, "no rows"),
    ("datetime column", "y ~ t", lambda d: d.assign(t=pd.Timestamp("2020-01-01")), {}, ValueError, "'t'"),
    ("timedelta column", "y ~ t", lambda d: d.assign(t=pd.Timedelta(1, "D")), {}, ValueError, "'t'"),
    ("complex column", "y ~ c", lambda d: d.assign(c=d.x + 1j), {}, ValueError, "'c'"),
    ("mixed object column", "y ~ m", lambda d: d.assign(m=[Y_PLANT if i % 2 else "a" for i in range(len(d))]),
     {}, ValueError, "'m'"),
    ("two tildes", "y ~ x ~ g", None, {}, ValueError, "~"),
    ("infinite value", "y ~ x", lambda d: d.assign(x=d.x.where(d.index != 5, np.inf)), {}, ValueError, "'x'"),
    ("inverted bounds", "y ~ x", None, {"bounds": {"x": (10, 0), "y": (-5, 5)}}, ValueError, "'x'"),
]


@pytest.mark.parametrize("case", ITEM10, ids=[c[0] for c in ITEM10])
def test_errors_are_clear_and_never_quote_data(case):
    _, formula, transform, kw, exc_type, needle = case
    df = _planted()
    if transform is not None:
        df = transform(df)
    kw = dict(kw)
    kw.setdefault("bounds", PB)
    kw.setdefault("eps", 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(exc_type) as exc:
            dpreg.dp_lm(formula, df, **kw)
    msg = str(exc.value)
    assert needle in msg, msg
    assert len(msg) >= 20 and "Traceback" not in msg
    assert_clean(msg, "error message")
    for w in caught:
        assert_clean(str(w.message), "warning")


# ---- item 9: command line, as a user runs it ----------------------------------------------------
@pytest.fixture
def planted_csv(tmp_path):
    path = tmp_path / "d.csv"
    _planted(400).to_csv(path, index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({k: list(v) for k, v in PB.items()}))
    return path, bounds


CLI_BAD = [
    ("missing column", ["y ~ x + nope"], "nope"),
    ("non-numeric outcome", ["s ~ x"], "'s'"),
    ("two tildes", ["y ~ x ~ g"], "~"),
    ("delta zero", ["y ~ x", "--delta", "0", "--method", "adassp"], "pure DP"),
    ("unknown method", ["y ~ x", "--method", "magic"], "magic"),
    ("unknown option", ["y ~ x", "--method", "adassp", "-o", "lam=2"], "lam"),
]


def test_cli_bad_input_one_line_nonzero_exit_no_traceback(planted_csv):
    """The real user path (a subprocess per bad input, run side by side): non-zero exit, exactly one
    stderr line naming the problem, no traceback, no data value."""
    data, bounds = planted_csv
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    procs = []
    for name, argv, needle in CLI_BAD:
        cmd = [sys.executable, "-m", "dpreg.cli", "fit", argv[0], "--data", str(data), "--eps", "1",
               "--bounds", str(bounds), *argv[1:]]
        procs.append((name, needle, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                     text=True, env=env, cwd=ROOT)))
    for name, needle, proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode not in (0, None), name
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "Traceback" not in err, (name, err)
        assert needle in lines[0], (name, lines[0])
        assert_clean(out + err, f"cli {name}")


# ---- T14: planted record on the default path (private ranges, auto), every output ---------------
def test_planted_record_default_path_every_output_and_warning():
    rng = np.random.default_rng(11)   # synthetic test data (not dpreg noise)
    n = 20000
    df = pd.DataFrame({"x": rng.uniform(0, 100, n), "g": pd.Categorical(rng.choice(list("abc"), n),
                                                                        categories=list("abc"))})
    df["y"] = 3 + 0.2 * df.x + (df.g == "b") * 2.0 + rng.normal(0, 1, n)
    df.loc[n // 2, ["y", "x"]] = [Y_PLANT, X_PLANT]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dpreg.dp_lm("y ~ .", df, eps=1.0, random_state=9)
        s = fit.summary()
        texts = {"str(fit)": str(fit), "repr(fit)": repr(fit), "summary": str(s), "markdown": s.to_markdown(),
                 "latex": s.to_latex(), "html": s.to_html(), "coef_table": s.coef_table.to_string(),
                 "to_dict": json.dumps(fit.to_dict(), allow_nan=False),
                 "privacy": str(fit.privacy) + fit.privacy.paragraph() + json.dumps(fit.privacy.to_dict())}
        fit.predict(df.head(3))
    for where, text in texts.items():
        assert_clean(text, where)
    _assert_plain(fit.to_dict())                      # item 8: plain Python types only
    for w in caught:
        assert_clean(str(w.message), "warning")


def test_statement_names_the_privately_selected_levels_and_only_those():
    # newcomer review 25: Bikeshare's C(mnth) at eps = 1 kept one month, and its one coefficient
    # C(mnth)[T.(other)] did not say which month it was measured against. The released level names (the
    # private selection's output) are listed; a level the selection did not release never appears
    rng = np.random.default_rng(7)
    n = 4000
    g = np.where(rng.uniform(size=n) < 0.5, "alpha", "beta").astype(object)
    g[:2] = "gamma"                      # two rows: far below the selection's threshold at this eps
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "g": g})
    df["y"] = df.x + (df.g == "beta") + rng.normal(0, 1, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x + C(g)", df, eps=1, bounds={"x": (0, 1), "y": (-5, 6)}, random_state=2)
    released = [lv for lv in fit.public.schema.variables["g"].levels if lv != "(other)"]
    assert sorted(released) == ["alpha", "beta"]
    text = str(fit.privacy)
    assert "g levels selected privately: released 'alpha', 'beta'" in text or \
        "g levels selected privately: released 'beta', 'alpha'" in text
    assert "gamma" not in text and "gamma" not in str(fit.summary())
