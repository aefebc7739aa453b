"""Test helpers shared by several test files (data generators and oracles; no assertions)."""
import math

import numpy as np

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.schema import Schema
from dpreg.privacy.quantile import exact_stop_pmf, grid

QUANTILE_BETA = 1.001


def linear_design(n=2000, seed=0, sd=1.0):
    """y = 1 + 2 x1 - x2 + 0.5 x3 + N(0, sd^2), x ~ U(-1, 1) (the coverage design of AdaSSP spec 9.7),
    as a Design with the schema x in [-1, 1], y in [-10, 12]."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3))
    y = np.clip(1 + x @ [2.0, -1.0, 0.5] + sd * rng.normal(size=n), -10, 12)
    X = np.column_stack([np.ones(n), x])
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=["Intercept", "x1", "x2", "x3"], has_intercept=True,
                       column_lower=np.array([1, -1, -1, -1.0]), column_upper=np.ones(4), factor_blocks=[],
                       outcome_interval=(-10.0, 12.0), schema=Schema(), n=n)
    return Design(X, y, pub)


def stop_log_ratio(counts_a, counts_b, threshold, eps):
    """Largest |log| ratio of AboveThreshold's exact stop laws (threshold and step noise b = 2 / eps) on two
    neighbouring count vectors, over the stops both laws give a probability above 1e-12: the privacy oracle
    of the count walks (quantile_search.md §3, §14; winsorized_sa.md §1.5)."""
    p1 = exact_stop_pmf(counts_a, threshold, 2 / eps, 2 / eps)
    p2 = exact_stop_pmf(counts_b, threshold, 2 / eps, 2 / eps)
    ok = (p1 > 1e-12) & (p2 > 1e-12)
    return float(np.max(np.abs(np.log(p1[ok] / p2[ok]))))


def worst_neighbour_stop_ratio(count_pairs, threshold, eps):
    """For (counts, neighbour's counts) pairs of a count walk: each neighbour moves every count by at most 1,
    all in one direction (sensitivity 1, monotone), and the exact stop laws' log ratio is at most eps; the
    largest ratio seen, for the caller's not-vacuous check."""
    worst = 0.0
    for c1, c2 in count_pairs:
        d = c2 - c1
        assert np.abs(d).max() <= 1 and (np.all(d >= 0) or np.all(d <= 0))
        lr = stop_log_ratio(c1, c2, threshold, eps)
        assert lr <= eps + 1e-9
        worst = max(worst, lr)
    return worst


def assert_stop_frequencies_follow(p, obs, R):
    """Chi-square test (p-value threshold 1e-4) of R released stops' frequencies ``obs`` against the exact
    law ``p``: cells with an expected count below 5 are left out, pooled into one cell where that holds 5
    or more expected."""
    from scipy import stats
    keep = p * R >= 5
    exp_, ob = p[keep] * R, obs[keep]
    rest_e, rest_o = R - exp_.sum(), R - ob.sum()
    if rest_e >= 5:
        exp_, ob = np.append(exp_, rest_e), np.append(ob, rest_o)
    chi2 = float(((ob - exp_) ** 2 / exp_).sum())
    assert stats.chi2.sf(chi2, len(exp_) - 1) > 1e-4


def grid_above(y, lower, beta=QUANTILE_BETA):
    """Grid oracle (winsorized spec 6): smallest g_k = l - 1 + beta^k, k >= 1, strictly greater than y."""
    k = max(1, int(math.floor(math.log(y - lower + 1) / math.log(beta))) - 3)
    while float(grid(lower, k, beta)) <= y:
        k += 1
    return float(grid(lower, k, beta))


def logistic_mle(X, y, max_iter=200, tol=1e-10):
    """Plain Newton-Raphson for the logistic MLE of 0/1 ``y`` on the model matrix ``X`` (a reference
    for dp_glm's tests, not the code under test)."""
    b = np.zeros(X.shape[1])
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(-(X @ b)))
        step = np.linalg.solve((X * (p * (1 - p))[:, None]).T @ X, X.T @ (y - p))
        b = b + step
        if np.max(np.abs(step)) < tol:
            break
    return b


def default_like(seed, n=10000):
    """ISLP Default in simulation (its logistic MLE as the truth): balance ~ N(835, 484) on [0, 3000],
    income ~ N(33 500, 13 300) on [0, 80 000], 30% students, about 3% events (test data only)."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    balance = np.clip(rng.normal(835, 484, n), 0, 3000)
    income = np.clip(rng.normal(33500, 13300, n), 0, 80000)
    student = rng.uniform(size=n) < 0.3
    eta = -10.87 + 0.00574 * balance + 3e-6 * income - 0.647 * student
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"y": y, "balance": balance, "income": income,
                         "student": np.where(student, "Yes", "No")})


def exception_chain(exc):
    """``exc`` and every exception it keeps (``__cause__``, else ``__context__``), outermost first."""
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def local_spark_session(app_name, *, cores, log_level, ansi=False):
    """A local Spark session whose Python workers import this checkout's dpreg with this interpreter
    (they run the per-partition sums)."""
    import os
    import sys

    from pyspark.sql import SparkSession

    import dpreg
    root = os.path.dirname(os.path.dirname(os.path.abspath(dpreg.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                          if p])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if ansi:
        builder = builder.config("spark.sql.ansi.enabled", "true")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    return session
