"""ISP (method="isp"): time and memory next to statsmodels OLS; coverage study of spec isp §16.

Usage: ``python -m benchmarks isp [--quick] [--reps R] [--skip-speed] [--skip-coverage]``

* speed: n in {2e5, 1e6, 5e6} x d in {10, 50} (``--quick``: n in {2e5, 1e6}), Gaussian design and
  errors (no rows removed), declared sigma = 1, eps chosen per n so the public preconditions hold
  (8 at 2e5, 4 at 1e6, 1 at 5e6), inference bundle on; plus one run per size with 20 planted residual
  outliers (+50 sigma). "normal equations" = ``solve(X'X, X'y)`` in numpy, the floor any exact
  method pays (statsmodels uses a pseudo-inverse and is slower). Peak memory is the tracemalloc peak of numpy allocations during the call, beyond the data.
* coverage: n = 2e5, d = 20, eps = 8, delta = 1e-6, declared sigma = 1, R datasets (default 200,
  ``--quick`` 50): coverage of nominal 95% Wald intervals with the noise-aware vcov, and when the
  privacy noise c is ignored.
"""
from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np

from benchmarks import write_result


def _design(X, y):
    from dpreg.design.contract import Design, PublicDesign
    from dpreg.design.schema import Schema
    d = X.shape[1]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=["Intercept"] + [f"x{j}" for j in range(1, d)],
                       has_intercept=True, column_lower=np.full(d, np.nan), column_upper=np.full(d, np.nan),
                       factor_blocks=[], outcome_interval=None, schema=Schema(), n=X.shape[0])
    return Design(X=X, y=y, public=pub)


def _data(seed, n, d, sigma=1.0):
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    X[:, 0] = 1.0
    X[:, 1:] = rng.standard_normal((n, d - 1))
    beta = rng.standard_normal(d)
    y = X @ beta + sigma * rng.standard_normal(n)
    return X, y, beta


def _measure(fn):
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = fn()
        err = None
    except Exception as exc:  # report, don't crash the table
        out, err = None, type(exc).__name__
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak / 2 ** 20, err


def _isp_fit(X, y, eps, sigma=1.0, seed=0, inference=True):
    from dpreg.estimators import isp
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    from dpreg.release import PrivacySpec
    return isp.fit(_design(X, y), PrivacySpec(eps=eps, delta=1e-6, inference=inference),
                   NoiseSource(seed), Ledger(), sigma=sigma)


def _speed_row(n, d, eps, sm):
    X, y, _ = _data(1, n, d)
    _, t_ols, m_ols, e_ols = _measure(lambda: sm.OLS(y, X).fit())
    _, t_ne, _, _ = _measure(lambda: np.linalg.solve(X.T @ X, X.T @ y))
    rel, t_isp, m_isp, e_isp = _measure(lambda: _isp_fit(X, y, eps))
    status = e_isp or rel.facts["status"]
    y_out = y.copy()
    y_out[np.arange(20) * 97] += 50.0
    rel2, t_out, _, e_out = _measure(lambda: _isp_fit(X, y_out, eps))
    status2 = e_out or rel2.facts["status"]
    ratio = t_isp / t_ols if not e_ols else float("nan")
    return (f"| {n:.0e} | {d} | {eps:g} | {t_ols:.2f} | {m_ols:.0f} | {t_ne:.2f} | {t_isp:.2f} | "
            f"{m_isp:.0f} | {ratio:.2f} | {t_isp / t_ne:.1f} | {status} | {t_out:.2f} | {status2} |")


def speed(sizes, dims):
    import statsmodels.api as sm
    eps_for = {200_000: 8.0, 1_000_000: 4.0, 5_000_000: 1.0}
    rows = ["| n | d | eps | statsmodels OLS time (s) | OLS peak MB | normal equations (s) | ISP time (s) | "
            "ISP peak MB | ISP / statsmodels | ISP / normal eq. | ISP status | ISP time, 20 outliers (s) | status |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        for d in dims:
            rows.append(_speed_row(n, d, eps_for[n], sm))
            gc.collect()
    return "\n".join(rows)


def coverage_study(reps=200, n=200_000, d=20, eps=8.0, level=0.95, seed0=1000):
    """Coverage of noise-aware Wald intervals (spec §14.10/§16). Returns a dict of summary numbers."""
    from scipy.stats import norm
    zq = norm.ppf(0.5 + level / 2)
    cover, cover_naive, sig2, fails = [], [], [], 0
    errs = []
    ses = []
    c = None
    for r in range(reps):
        X, y, beta = _data(seed0 + r, n, d)
        try:
            rel = _isp_fit(X, y, eps, seed=seed0 + r)
        except Exception:
            fails += 1
            continue
        c = rel.facts["noise_constant_c"]
        se = np.sqrt(np.diag(rel.vcov))
        S_hat = rel.vcov_privacy / c ** 2
        se_naive = np.sqrt(np.diag(rel.sigma ** 2 * S_hat))
        err = rel.coef - beta
        cover.append(np.abs(err) <= zq * se)
        cover_naive.append(np.abs(err) <= zq * se_naive)
        errs.append(err)
        ses.append(se)
        sig2.append(rel.sigma ** 2)
    errs, ses = np.array(errs), np.array(ses)
    true_sd = errs.std(axis=0)
    return {"reps": reps, "fails": fails, "c": c, "coverage": float(np.mean(cover)),
            "coverage_ignoring_c": float(np.mean(cover_naive)),
            "mean_se_over_true_sd": float(np.mean(ses.mean(axis=0) / true_sd)),
            "sigma2_mean": float(np.mean(sig2)), "sigma2_sd": float(np.std(sig2))}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks isp", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n in {2e5, 1e6}; 50 coverage datasets")
    ap.add_argument("--reps", type=int, default=None, help="coverage datasets (default 200; quick 50)")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-coverage", action="store_true")
    args = ap.parse_args(argv)
    out = ["# ISP benchmark (method=\"isp\")", ""]
    if not args.skip_speed:
        sizes = [200_000, 1_000_000] if args.quick else [200_000, 1_000_000, 5_000_000]
        out += ["## Wall time and peak memory vs statsmodels OLS", "",
                "Gaussian design/errors, declared sigma = 1, inference bundle on, delta = 1e-6. "
                "Peak MB = tracemalloc peak during the call (data excluded).", "",
                speed(sizes, [10, 50]), ""]
    if not args.skip_coverage:
        reps = args.reps or (50 if args.quick else 200)
        t0 = time.perf_counter()
        cs = coverage_study(reps=reps)
        dt = time.perf_counter() - t0
        out += ["## Coverage (spec isp §14.10 / §16)", "",
                f"n = 2e5, d = 20, eps = 8, delta = 1e-6, declared sigma = 1, {reps} datasets "
                f"({dt:.0f} s).", "",
                "| quantity | value | spec §16 prototype |", "|---|---|---|",
                f"| noise constant c | {cs['c']:.3f} | 3.99 |",
                f"| FAIL count | {cs['fails']} | 0 |",
                f"| coverage of 95% CIs (noise-aware) | {cs['coverage']:.3f} | 0.952 |",
                f"| coverage if privacy noise ignored | {cs['coverage_ignoring_c']:.3f} | 0.378 |",
                f"| mean SE / true SD | {cs['mean_se_over_true_sd']:.3f} | 1.000 |",
                f"| mean of sigma~^2 (true 1) | {cs['sigma2_mean']:.3f} | 0.999 |",
                f"| sd of sigma~^2 | {cs['sigma2_sd']:.3f} | 0.032 |", ""]
    write_result("isp", "\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
