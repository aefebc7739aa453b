"""The R package drives the same Python core: R and Python agree to the last bit.

The R code runs in ``Rscript`` child processes (R's reticulate starting this venv's Python). Running
reticulate *inside* an rpy2 process is not usable with reticulate 1.28: rpy2 (cffi) releases the GIL
while R evaluates, and reticulate's finalisers then drop Python references without it, which aborts
the interpreter at the next R garbage collection (reproduced here; cf. rstudio/reticulate#1188). rpy2
drives R in-process where no Python call is involved: printing a fit restored with readRDS().
Numbers come back from R as C99 hex floats (sprintf("%a")), so comparisons are exact.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import api

pytestmark = pytest.mark.r

REPO = Path(__file__).resolve().parents[1]
RPKG = REPO / "r-package"

WRAPPER = textwrap.dedent(r'''
    suppressPackageStartupMessages(library(dpreg))
    args <- commandArgs(trailingOnly = TRUE)
    spec <- jsonlite::fromJSON(args[1], simplifyVector = TRUE)
    for (fr in names(spec$frames)) {
      one <- spec$frames[[fr]]
      d <- read.csv(one$csv, check.names = FALSE, stringsAsFactors = FALSE)
      for (nm in names(one$levels)) d[[nm]] <- factor(d[[nm]], levels = one$levels[[nm]])
      assign(fr, d, envir = globalenv())
    }
    res <- eval(parse(text = spec$code), envir = globalenv())
    enc <- lapply(res, function(v) {
      if (is.numeric(v)) ifelse(is.na(v), NA, sprintf("%a", as.double(v))) else v
    })
    writeLines(jsonlite::toJSON(enc, auto_unbox = FALSE, na = "null"), spec$out)
''')


def _have(module):
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001 - any failure means: not usable here
        return False


@pytest.fixture(scope="module")
def r_lib(tmp_path_factory):
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed")
    ok = subprocess.run(["Rscript", "-e", "quit(status = !(requireNamespace('reticulate', quietly = TRUE) && "
                         "requireNamespace('jsonlite', quietly = TRUE)))"], capture_output=True)
    if ok.returncode != 0:
        pytest.skip("the R packages reticulate and jsonlite are not installed")
    lib = tmp_path_factory.mktemp("rlib")
    res = subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(RPKG)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    return lib


def _r_env(r_lib):
    return dict(os.environ, R_LIBS=str(r_lib), DPREG_PYTHON=sys.executable, RETICULATE_PYTHON=sys.executable)


def run_r(r_lib, frames: dict, code: str, tmp_path) -> dict:
    """Runs R ``code`` (its value: a named list of atomic vectors) with each of ``frames``
    ({R name: DataFrame}) as a data.frame in R. Numbers come back exactly (hex floats)."""
    spec_frames = {}
    for name, frame in frames.items():
        csv = tmp_path / f"{name}.csv"
        frame.to_csv(csv, index=False, float_format="%.17g")  # 17 significant digits: exact round trip
        levels = {n: [str(v) for v in frame[n].cat.categories] for n in frame.columns
                  if isinstance(frame[n].dtype, pd.CategoricalDtype)}
        spec_frames[name] = {"csv": str(csv), "levels": levels}
    out = tmp_path / "out.json"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"frames": spec_frames, "code": code, "out": str(out)}))
    script = tmp_path / "wrapper.R"
    script.write_text(WRAPPER)
    res = subprocess.run(["Rscript", str(script), str(spec)], capture_output=True, text=True,
                         env=_r_env(r_lib), timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    raw = json.loads(out.read_text())

    def dec(v):
        if isinstance(v, str) and v.startswith(("0x", "-0x")):
            return float.fromhex(v)
        return v
    return {k: [dec(x) for x in v] for k, v in raw.items()}


def toy_frame(n=1000, seed=7):   # n >= 1000: the private ranges of CASES[1] run (overshoot rule)
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    z = rng.normal(0, 1, n)
    g = pd.Categorical.from_codes(rng.integers(0, 3, n), ["a", "b", "c d"])
    y = 1 + 0.5 * x - 0.3 * z + np.array([0.0, 2.0, -1.0])[g.codes] + rng.normal(0, 0.5, n)
    return pd.DataFrame({"y": y, "x": x, "z": z, "g": g})


BOUNDS_R = "list(x = c(0, 10), z = c(-4, 4), y = c(-10, 20))"
BOUNDS_PY = {"x": (0, 10), "z": (-4, 4), "y": (-10, 20)}
# declared (public) levels of g: a factor's / Categorical's own levels are data, not public
LEVELS_R = 'list(g = c("a", "b", "c d"))'
LEVELS_PY = {"g": ["a", "b", "c d"]}


CASES = [
    # (R formula, core formula, method, bounds declared)
    ("y ~ x + z + g", "y ~ x + z + g", "adassp", True),
    ("log(y + 20) ~ x * g + I(x^2)", "np.log(y + 20) ~ x * g + I(x ** 2)", "boosted_adassp", False),
]
PLANTED = (987654.321, -876543.21, 765432.123)


def frames():
    planted = toy_frame(n=500, seed=11)
    planted.loc[17, ["x", "z", "y"]] = list(PLANTED)
    # n = 10000: see test_noise_off_agrees_with_lm
    return {"df": toy_frame(), "big": toy_frame(n=10000, seed=3), "planted": planted,
            "small": toy_frame(n=400, seed=2)}


@pytest.fixture(scope="module")
def r_run(r_lib, tmp_path_factory):
    """Everything R computes for this module, in one Rscript run (each run starts Python)."""
    tmp = tmp_path_factory.mktemp("rrun")
    rds = tmp / "fit.rds"
    parts = []
    for i, (rf, _pf, method, with_bounds) in enumerate(CASES):
        b = BOUNDS_R if with_bounds else "NULL"
        parts.append(f'f{i} <- dp_lm({rf}, data = df, eps = 1, delta = 1e-6, method = "{method}", '
                     f'bounds = {b}, levels = {LEVELS_R}, seed = 1)')
    parts.append(f"""
    nf <- dp_lm(y ~ x + z + g, data = big, method = "adassp", bounds = {BOUNDS_R}, seed = 1,
                levels = {LEVELS_R}, .noise_off = TRUE)
    l <- lm(y ~ x + z + g, data = big)
    pf <- dp_lm(y ~ x + z + g, data = planted, eps = 1, bounds = {BOUNDS_R}, levels = {LEVELS_R}, seed = 5)
    ptxt <- c(capture.output(print(summary(pf))), capture.output(print(pf)),
              capture.output(print(privacy(pf))), capture.output(print(dpreg:::tidy.dp_fit(pf, conf.int = TRUE))),
              capture.output(print(dpreg:::glance.dp_fit(pf))), deparse(unclass(pf)))
    sf <- dp_lm(y ~ x + z + g, data = small, bounds = {BOUNDS_R}, levels = {LEVELS_R}, seed = 3)
    saveRDS(sf, "{rds}")
    """)
    outs = [f"coef{i} = unname(coef(f{i})), se{i} = unname(f{i}$std.errors), "
            f"vcov{i} = as.vector(t(vcov(f{i}))), sigma{i} = f{i}$sigma, names{i} = names(coef(f{i}))"
            for i in range(len(CASES))]
    outs.append("noise_off = unname(coef(nf)), noise_off_names = names(coef(nf)), lm = unname(coef(l)), "
                "lm_names = names(coef(l)), ridge = nf$facts$ridge_lambda, "
                "planted_text = paste(ptxt, collapse = '\\n'), "
                "saved_coef = unname(coef(sf)), saved_summary = capture.output(print(summary(sf)))")
    code = "\n".join(parts) + f"\nlist({', '.join(outs)})"
    out = run_r(r_lib, frames(), code, tmp)
    out["rds"] = str(rds)
    return out


def _na(values):
    """None and NaN as one missing-value marker (exact comparison of the other numbers)."""
    return ["NA" if v is None or (isinstance(v, float) and np.isnan(v)) else v for v in values]


def test_same_seed_same_numbers_bit_for_bit(r_run):
    df = frames()["df"]
    for i, (_rf, pf, method, with_bounds) in enumerate(CASES):
        fit = dpreg.dp_lm(pf, df, eps=1.0, delta=1e-6, method=method,
                          bounds=BOUNDS_PY if with_bounds else None, levels=LEVELS_PY, random_state=1)
        # exact equality: same data, same seed, same core code -> the same floating-point numbers
        # R's NA travels back as None; a not-estimable coefficient (issue 12) is NaN in Python
        assert _na(r_run[f"coef{i}"]) == _na(fit.coef.tolist())
        assert _na(r_run[f"se{i}"]) == _na(fit.std_errors.tolist())
        assert _na(r_run[f"vcov{i}"]) == _na(np.asarray(fit.vcov(), float).ravel().tolist())
        assert r_run[f"sigma{i}"] == ([fit.sigma] if fit.sigma is not None else [None])
    # the core's term names mapped to the ones lm() uses
    assert r_run["names0"] == ["(Intercept)", "x", "z", "gb", "gc d"]
    assert r_run["names1"] == ["(Intercept)", "x", "gb", "gc d", "I(x^2)", "x:gb", "x:gc d"]


def test_noise_off_agrees_with_lm(r_run):
    # All data lie inside the declared bounds, so nothing is clamped; with n = 10000 the released
    # lambda_min is far above AdaSSP's ridge threshold, so lambda = 0 (asserted below) and the
    # noiseless AdaSSP solution is the OLS solution of the same normal equations. The two solvers
    # differ only by rounding: relative error ~ cond(X'X) * 1e-16 << 1e-8.
    assert r_run["ridge"] == [0.0]
    assert r_run["noise_off_names"] == r_run["lm_names"]
    np.testing.assert_allclose(r_run["noise_off"], r_run["lm"], rtol=1e-8, atol=1e-10)


def test_summary_has_no_data_value(r_run):
    # A planted record with distinctive values far outside the declared bounds (clamped, never
    # reported): neither summary(), print(), privacy(), tidy(), glance() nor the fit object show them.
    text = r_run["planted_text"][0]
    assert "Coefficients" in text and "Privacy" in text and "Ledger" in text
    for planted in ("987654", "876543", "765432", "9.87654e+05", "7.65432e+05"):
        assert planted not in text
    assert "Residuals:" not in text


def test_noise_off_hook_is_not_public():
    # the hook exists on the internal _fit only; the public functions refuse it as an unknown option
    df = toy_frame(n=200)
    with pytest.raises((TypeError, ValueError)):
        dpreg.dp_lm("y ~ x", df, bounds=BOUNDS_PY, random_state=1, _noise_off=True)
    assert "_noise_off" in api._fit.__code__.co_varnames


RPY2_CHILD = textwrap.dedent(r'''
    import json, os, sys
    import rpy2.robjects as ro
    from rpy2.rinterface_lib import callbacks
    callbacks.consolewrite_print = lambda s: None
    callbacks.consolewrite_warnerror = lambda s: sys.stderr.write(s)
    ro.r("suppressPackageStartupMessages(library(dpreg))")
    fit = ro.r["readRDS"](sys.argv[1])
    ro.globalenv["fit"] = fit
    text = "\n".join(ro.r("capture.output(print(summary(fit)), print(fit), print(confint(fit)))"))
    coef = list(ro.r("unname(coef(fit))"))
    started = bool(ro.r("reticulate::py_available()")[0])
    sys.stdout.write(json.dumps({"text": text, "coef": coef, "python_started": started}))
    sys.stdout.flush()
    os._exit(0)
''')


def test_saved_fit_prints_in_r_without_python(r_lib, r_run, tmp_path):
    # fitted in R (Rscript + reticulate) and saved with saveRDS; rpy2 drives a fresh R that reads the
    # object and prints summary/print/confint: this must not start Python and shows the same numbers
    if not _have("rpy2.robjects"):
        pytest.skip("rpy2 is not installed")
    rds = r_run["rds"]
    script = tmp_path / "rpy2_child.py"
    script.write_text(RPY2_CHILD)
    env = _r_env(r_lib)
    env["DPREG_PYTHON"] = env["RETICULATE_PYTHON"] = "/nonexistent/python"  # Python must not be needed
    res = subprocess.run([sys.executable, str(script), str(rds)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["python_started"] is False
    assert _na(out["coef"]) == _na(r_run["saved_coef"])
    assert "\n".join(r_run["saved_summary"]) in out["text"]
    assert "2.5 %" in out["text"] and "97.5 %" in out["text"]


# ---- the bridge itself (plain Python; no R needed) -------------------------------------------------
def test_bridge_frame_codes_and_missing_values():
    from dpreg.bridge import _frame
    df = _frame({"g": [2.0, float("nan"), 1.0]}, {"g": ["a", "b", "c"]})
    assert list(df["g"].cat.categories) == ["a", "b", "c"]   # all declared levels, unused kept
    assert df["g"].isna().tolist() == [False, True, False]
    assert df["g"].iloc[0] == "b" and df["g"].iloc[2] == "a"  # R codes are 1-based
    assert _frame({"x": 1.5}, None)["x"].tolist() == [1.5]    # a length-1 R vector arrives as a scalar


def test_bridge_returns_errors_and_warnings_instead_of_raising():
    from dpreg import bridge
    df = toy_frame(n=3000)
    cols = {"y": df["y"].tolist(), "x": df["x"].tolist()}
    bad = bridge.r_dp_lm("y ~ x", cols, None, {"eps": -1.0})
    assert bad["ok"] is False and "eps" in bad["error"]["message"]
    # a DPRegError subclass that is still a ValueError: R gets both condition classes
    assert bad["error"]["type"] == "InvalidArgument"
    assert {"InvalidArgument", "DPRegError", "ValueError"} <= set(bad["error"]["classes"])
    ok = bridge.r_dp_lm("y ~ x", cols, None, {"eps": 1.0, "seed": 3.0, "bounds": {"x": [0.0, 10.0]}})
    assert ok["ok"] is True
    # the undeclared outcome range is estimated privately: reported as a warning, not raised
    assert all(set(w) == {"category", "message"} for w in ok["warnings"])
    d = ok["value"]["dict"]
    assert json.loads(ok["value"]["json"]) == d
    ref = dpreg.dp_lm("y ~ x", df[["y", "x"]], bounds={"x": (0, 10)}, random_state=3)
    assert d["coef"] == ref.coef.tolist()
    pred = bridge.r_predict(ok["value"]["json"], {"x": [1.0, 2.0]}, None, "confidence", 0.9)
    assert pred["ok"] is True, pred["error"]
    expect = ref.predict(pd.DataFrame({"x": [1.0, 2.0]}), interval="confidence", level=0.9)
    assert pred["value"]["fit"] == expect["fit"].tolist()
    assert pred["value"]["lower"] == expect["lower"].tolist()
    # clamp reaches DPFit.predict: x = 20 is outside the declared [0, 10], clamped to 10 by default
    # and extrapolated with clamp=False (R's predict(clamp = FALSE) passed nothing before)
    outside = {"x": [20.0]}
    clamped = bridge.r_predict(ok["value"]["json"], outside, None, "none", 0.95, "response", False)
    raw = bridge.r_predict(ok["value"]["json"], outside, None, "none", 0.95, "response", True, False)
    assert clamped["value"]["fit"] == ref.predict(pd.DataFrame({"x": [10.0]}), clamp=False).tolist()
    assert raw["value"]["fit"] == ref.predict(pd.DataFrame({"x": [20.0]}), clamp=False).tolist()
    assert raw["value"]["fit"] != clamped["value"]["fit"]
    assert any("extrapolate" in w["message"] for w in raw["warnings"])
