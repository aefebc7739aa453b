"""dp_glm's Newton solver on the cells scaling (twenty-second pass, issue 13; docs/derivations/dpgd_logistic.md,
section 6): the largest factor block coded by its cells in place of the intercept column."""
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.scaling import scale_design
from dpreg.design.schema import Schema


def _two_factor_design(X, terms):
    # columns: Intercept, x1 on [0, 100], factor f (3 levels: dummies b, c), factor g (4 levels: dummies q, r, s),
    # x2 on [-5, 5]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=terms, has_intercept=True,
                       column_lower=np.array([1, 0, 0, 0, 0, 0, 0, -5.0]),
                       column_upper=np.array([1, 100, 1, 1, 1, 1, 1, 5.0]),
                       factor_blocks=[[2, 3], [4, 5, 6]], outcome_interval=(0.0, 1.0), schema=Schema(), n=len(X))
    return Design(np.asarray(X, float), np.zeros(len(X)), pub)


TERMS = ["Intercept", "x1", "f[T.b]", "f[T.c]", "g[T.q]", "g[T.r]", "g[T.s]", "x2"]


def _every_corner_record():
    """Every record the schema allows at the corners of the numeric ranges: each level of each factor."""
    rows = []
    for x1, x2, f, g in itertools.product((0.0, 100.0), (-5.0, 5.0), range(3), range(4)):
        fd = [float(f == 1), float(f == 2)]
        gd = [float(g == 1), float(g == 2), float(g == 3)]
        rows.append([1.0, x1, *fd, *gd, x2])
    return np.array(rows)


def test_cells_scaling_bounds_every_record_by_one_with_one_unit_less_of_budget():
    X = _every_corner_record()
    schema = scale_design(_two_factor_design(X, TERMS), mode="schema")
    cells = scale_design(_two_factor_design(X, TERMS), mode="schema_cells")
    # the largest block (g, 3 columns) replaces the intercept: 1 + 2 numerics + 2 blocks - 1
    assert cells.extra["cell_block"] == [4, 5, 6]
    assert cells.B_bar ** 2 == pytest.approx(schema.B_bar ** 2 - 1)
    norms = np.linalg.norm(cells.X, axis=1)
    # the sensitivities (gradient 2, X'WX sqrt(2)/4 under replace-one) need ||z|| <= 1 for every possible
    # record; the corners attain it, so the smaller budget is not loose
    assert norms.max() <= 1 + 1e-12
    assert norms.max() == pytest.approx(1.0, abs=1e-12)
    # the intercept column is the indicator of g's reference level, on the same scale as the dummies
    ref_g = X[:, 4:7].sum(axis=1) == 0
    assert np.allclose(cells.X[:, 0], ref_g / cells.B_bar)
    assert np.allclose(cells.X[:, 4:7], X[:, 4:7] / cells.B_bar)


def test_cells_scaling_maps_coefficients_back_exactly():
    X = _every_corner_record()
    cells = scale_design(_two_factor_design(X, TERMS), mode="schema_cells")
    rng = np.random.default_rng(0)      # arbitrary scaled coefficients: the identity holds for all
    for _ in range(5):
        theta = rng.normal(size=X.shape[1])
        # x' beta = c_y + h_y z' theta for every record (the outcome's declared interval scales it): the same
        # span, so the MLE maps to the MLE
        assert np.allclose(X @ (cells.M @ theta + cells.m), cells.c_y + cells.h_y * (cells.X @ theta), atol=1e-12)


def test_cells_scaling_is_total_on_extreme_rows():
    X = _every_corner_record()
    X[0, 1], X[1, 5], X[2, 7] = 1e308, -1e308, np.nextafter(np.inf, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # no numpy overflow reaches the user
        cells = scale_design(_two_factor_design(X, TERMS), mode="schema_cells")
    assert np.all(np.isfinite(cells.X)) and np.linalg.norm(cells.X, axis=1).max() <= 1 + 1e-12


def _rare_reference_frame(n=20000, seed=0):
    rng = np.random.default_rng(seed)         # test data only
    g = rng.choice(list("abcde"), n, p=[0.02, 0.3, 0.3, 0.2, 0.18])     # a rare reference level, as diamonds' I1
    h = rng.choice(list("xyz"), n)
    x = rng.uniform(0, 10, n)
    eta = -1 + 0.3 * x + 0.5 * pd.Series(g).map(dict(zip("abcde", range(5)))).to_numpy() - 0.7 * (h == "y")
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"y": y, "g": pd.Categorical(g, categories=list("abcde")),
                         "h": pd.Categorical(h, categories=list("xyz")), "x": x})


def test_noise_off_newton_on_the_cells_scaling_reaches_the_mle():
    import statsmodels.formula.api as smf

    from dpreg.api import _fit
    df = _rare_reference_frame()
    mle = smf.logit("y ~ g + h + x", df).fit(disp=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = _fit("y ~ g + h + x", df, family="binomial", eps=8.0, delta=1e-6, method="auto",
                   bounds={"x": (0, 10)}, levels={"g": list("abcde"), "h": list("xyz")},
                   neighbours="replace_one", inference=True, budget=None, random_state=1, options={"T": 60},
                   _noise_off=True)
    assert "cells in place of the intercept" in fit.facts["scaling"]
    z = (fit.coef - mle.params[fit.coef.index]) / mle.bse[fit.coef.index]
    # no noise, 60 Newton steps on a well-conditioned design: the solver's fixed point is the MLE (the
    # ridge only sets the speed); 0.01 SE is far below any noise of interest and above the solver's tolerance
    assert np.max(np.abs(z.to_numpy())) < 0.01


def test_cells_scaling_lowers_the_noise_floor_of_a_rare_reference_contrast():
    """The reason for the scaling: a gradient release's isotropic noise reaches a contrast against a rare
    reference level through the intercept and every other dummy of the block on the schema scaling (the
    reference cell's score is the intercept's minus the dummies'), through one coordinate on the cells
    scaling. The oracle floor sigma (M H^-2 M')_jj^(1/2) of one release at the MLE, from the data."""
    import statsmodels.formula.api as smf

    from dpreg.api import _fit
    from dpreg.estimators import dpgd, dpgd_logistic
    df = _rare_reference_frame()
    mle = smf.logit("y ~ g + h + x", df).fit(disp=0)
    seen = {}
    original = dpgd.fit_logistic_mm

    def capture(design, spec, noise, ledger, tun):
        seen["design"] = design
        return original(design, spec, noise, ledger, tun)

    dpgd.fit_logistic_mm = capture
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _fit("y ~ g + h + x", df, family="binomial", eps=8.0, delta=1e-6, method="auto",
                       bounds={"x": (0, 10)}, levels={"g": list("abcde"), "h": list("xyz")},
                       neighbours="replace_one", inference=True, budget=None, random_state=1,
                       options={"T": 1}, _noise_off=True)
    finally:
        dpgd.fit_logistic_mm = original
    names = list(fit.coef.index)
    beta = mle.params[names].to_numpy()
    se = mle.bse[names].to_numpy()
    floors = {}
    for mode in ("schema", "schema_cells"):
        sd = scale_design(seen["design"], mode=mode)
        theta = np.linalg.solve(sd.M, beta)
        _, H = dpgd_logistic._logistic_sums(sd.X, np.asarray(seen["design"].y, float), theta, weighted_gram=True)
        Hi = np.linalg.inv(H)
        floors[mode] = np.sqrt(np.diag(sd.M @ Hi @ Hi @ sd.M.T)) / se      # per unit of noise s.d.
    g_terms = [j for j, nm in enumerate(names) if nm.startswith("g[")]
    # every contrast against the 2% level: on the schema scaling its noise carries the reference cell's
    # variance 5 times (intercept + 4 dummies), on the cells scaling once, and B shrinks by sqrt(4/5):
    # expect a ratio near sqrt(4/5)/sqrt(5) = 0.4 where the reference cell dominates; 0.75 leaves room
    # for the other cells' share of each contrast
    assert np.all(floors["schema_cells"][g_terms] < 0.75 * floors["schema"][g_terms])
    assert math.isfinite(float(np.max(floors["schema_cells"])))
