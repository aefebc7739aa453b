"""dpgd's R^2 sums against the data's least-squares sums: where R^2's error comes from (dpgd.md §8).

dpgd prints R^2 = ESS / (ESS + RSS) from its released Gram matrix and residual sum (derivation dpgd.md §7)
and withholds the point where its 95% interval does not bound R^2 and 1 - R^2 within a factor 2
(adassp_boosted.md §46). This benchmark fits each cell of the validity benchmark's designs with
``method="dpgd"`` (declared ranges, the validity benchmark's data and noise seeds) and reads, inside this
process, the values the fit computes from its releases, next to the exact sums of the same scaled data
(least squares; nothing here is printed by dpreg). Per cell:

* the unprinted point t = ESS_hat / (ESS_hat + RSS_hat) (counted at 1 or 0 where a sum is <= 0, the side
  the fit reports): its median against the median of the data's OLS R^2, the share above 1, and how
  often the released interval excludes 0, excludes 1, both, and holds the OLS R^2;
* the errors of ESS_hat and RSS_hat (scaled units) against the data's sums: mean, s.d. and the s.d.
  the fit states, their correlation, and the correlation the second-order model of dpgd.md §8 predicts
  (median over fits);
* RSS_hat's error split into the released total's part (total - RSS at theta_bar: the residual bundle's
  noise and winsorizing, with the clip c2's 10-90% range) and the privacy excess's part (Q - excess,
  Q = RSS(theta_bar) - RSS*: the coefficient noise);
* the delta-method error of R^2 from each part and the largest error §46's factor-4 rule admits,
  about 0.306 min(R^2, 1 - R^2) (dpgd.md §8).

    python -m benchmarks r2_sums --cells uniform:1000:1,uniform:3000:1 --R 100

A cell is ``design:n:eps`` (designs of ``benchmarks validity``). The functions are wrapped inside this
process only; nothing is written to the package.
"""
import argparse
import contextlib
import math

import numpy as np

from . import patched, write_result

DEFAULT_CELLS = "uniform:1000:1,hetero:1000:1,rare_level:1000:1,raw_scale:1000:1,uniform:3000:1,uniform:1000:4"
#: the largest 95%-interval s.d. of a share q that §46's rule (U <= 4 L) admits: q + 1.96 s <= 4 (q - 1.96 s)
FACTOR4_SD_PER_SHARE = 3.0 / (5.0 * 1.959963984540054)


@contextlib.contextmanager
def recorder():
    """Wrap dpgd's inference steps so that each fit leaves its released-value summaries in ``rec``."""
    from dpreg.estimators import _ssp
    from dpreg.estimators import dpgd_precond as dp
    from dpreg.inference import dpgd as inf_gd
    from dpreg.inference import ssp as inf

    rec, maps = {}, []
    attach, resvar, r2gram = dp._attach_inference, inf.residual_variance_with_se, inf.dp_r_squared_gram
    release_r2, withhold, debias = (dp._release_r_squared, _ssp.withhold_points_the_interval_does_not_support,
                                    inf_gd.debias_map)

    def attach_(rel, sd, X, y, theta, *a, **k):
        r = y - X @ theta
        b, *_ = np.linalg.lstsq(X, y, rcond=None)
        r0 = y - X @ b
        yc = y - y.mean()
        rec.update(rss_at=float(r @ r), rss_star=float(r0 @ r0), ess_star=float(yc @ yc - r0 @ r0))
        return attach(rel, sd, X, y, theta, *a, **k)

    def resvar_(bundle, **k):
        out = resvar(bundle, **k)
        rec.update(excess=out["excess"], total=out["rss"] + out["excess"], c2=bundle["c2"])
        return out

    def r2gram_(*a, **k):
        out = r2gram(*a, **k)
        rec.update(ess=out.get("ess"), var_ess=out.get("var_ess"), rss=k["rss"], var_rss=k["var_rss"])
        return out

    def release_r2_(rel, facts, sd, theta, S, V_noise, W, res_var, bundle, **k):
        rec["model_corr"] = _model_correlation(sd, theta, S, V_noise, W, maps[-1], res_var)
        return release_r2(rel, facts, sd, theta, S, V_noise, W, res_var, bundle, **k)

    def withhold_(rel, facts):
        rec["point"] = rel.r_squared
        rec["side"] = facts.get("r_squared_point_outside")
        rec["interval"] = facts.get("r_squared_interval")
        return withhold(rel, facts)

    def debias_(P):
        out = debias(P)
        maps.append(out)
        return out

    with patched((dp, "_attach_inference", attach_), (inf, "residual_variance_with_se", resvar_),
                 (inf, "dp_r_squared_gram", r2gram_), (dp, "_release_r_squared", release_r2_),
                 (inf_gd, "debias_map", debias_),
                 (_ssp, "withhold_points_the_interval_does_not_support", withhold_)):
        yield rec, maps


def _model_correlation(sd, theta, S, V_noise, W, W_lo, res_var):
    """dpgd.md §8: Cov(ESS_hat, RSS_hat) = 2 tr(C V M V) + 4 c'V g over the coefficient noise e ~ N(0, V),
    V = W V_noise W', with theta* taken at W theta_bar; divided by the two sums' model s.d.s (RSS_hat's
    with the residual bundle's own noise variance added)."""
    d = theta.size
    icpt = sd.extra.get("intercept_index")
    V = W @ V_noise @ W.T
    V = (V + V.T) / 2.0
    th = W @ theta
    A = np.linalg.inv(W)                 # theta_bar - theta* = m + A e, A = I - P
    m = theta - th
    s = [j for j in range(d) if j != icpt]
    C = np.zeros((d, d))
    if icpt is None:
        C = S.copy()
    else:
        C[np.ix_(s, s)] = S[np.ix_(s, s)] - np.outer(S[s, icpt], S[icpt, s]) / S[icpt, icpt]
    c = C @ th
    B = np.eye(d) - W_lo                 # the excess removes b'Sb, b = B theta_bar
    n0 = B @ (th + m)
    M = A.T @ S @ A - A.T @ B.T @ S @ B @ A
    g = A.T @ S @ m - A.T @ B.T @ S @ n0
    cov = quadratic_forms_covariance(C, c, M, g, V)
    var_e = quadratic_forms_covariance(C, c, C, c, V)
    var_r = quadratic_forms_covariance(M, g, M, g, V) + float(res_var["var_a2_noise"])
    return float(cov / math.sqrt(var_e * var_r)) if var_e > 0 and var_r > 0 else float("nan")


def quadratic_forms_covariance(A, a, B, b, V):
    """Cov(e'Ae + 2a'e, e'Be + 2b'e) for e ~ N(0, V) and symmetric A, B: 2 tr(AVBV) + 4 a'Vb (the
    quadratic and the linear parts are uncorrelated because the Gaussian's third moments vanish)."""
    return float(2.0 * np.trace(A @ V @ B @ V) + 4.0 * a @ V @ b)


def run(design_name, n, eps, R, seed):
    from .bench_validity import Design, cell_fits

    rows = []
    with recorder() as (rec, maps):
        def reset():
            rec.clear()
            maps.clear()

        for _ in cell_fits(Design(design_name), n, eps, R, seed, "dpgd", before_fit=reset, skip_refused=False):
            if rec.get("ess") is not None and rec.get("interval") is not None:
                rows.append(dict(rec))
    return rows


def summarise(rows):
    f = lambda k: np.array([np.nan if r.get(k) is None else r[k] for r in rows], float)  # noqa: E731
    ess, rss, tss = f("ess_star"), f("rss_star"), f("ess_star") + f("rss_star")
    r2_ols = ess / tss
    e_ess, e_rss = f("ess") - ess, f("rss") - rss
    e_total, e_q = f("total") - f("rss_at"), (f("rss_at") - rss) - f("excess")
    ess_hat, rss_hat = f("ess"), f("rss")
    point = np.where((ess_hat > 0) & (rss_hat > 0), ess_hat / (ess_hat + rss_hat), np.where(rss_hat <= 0, 1.0, 0.0))
    iv = np.array([r["interval"] for r in rows], float)
    med = lambda x: float(np.median(x))  # noqa: E731
    q = min(med(r2_ols), 1.0 - med(r2_ols))
    return {
        "m": len(rows), "r2_ols": med(r2_ols), "point": med(point), "point_iqr": np.percentile(point, [25, 75]),
        "above_1": float(np.mean(rss_hat <= 0)), "inside": int(sum(r["point"] is not None for r in rows)),
        "excl0": float(np.mean(iv[:, 0] > 0)), "excl1": float(np.mean(iv[:, 1] < 1)),
        "both": float(np.mean((iv[:, 0] > 0) & (iv[:, 1] < 1))),
        "holds": float(np.mean((iv[:, 0] <= r2_ols) & (r2_ols <= iv[:, 1]))),
        "ess_err": (float(e_ess.mean()), float(e_ess.std()), math.sqrt(med(f("var_ess")))),
        "rss_err": (float(e_rss.mean()), float(e_rss.std()), math.sqrt(med(f("var_rss")))),
        "corr": float(np.corrcoef(e_ess, e_rss)[0, 1]), "model_corr": float(np.nanmedian(f("model_corr"))),
        "total_err": (float(e_total.mean()), float(e_total.std())), "q_err": (float(e_q.mean()), float(e_q.std())),
        "c2": np.percentile(f("c2"), [10, 90]), "sums": (med(ess), med(rss)),
        # delta method: dR2 = (RSS dESS - ESS dRSS) / TSS^2; with an exact TSS, R^2 = 1 - RSS / TSS has the
        # error of RSS_hat's excess part alone, dRSS / TSS
        "sd_from_ess": float(np.std(rss * e_ess / tss ** 2)), "sd_from_rss": float(np.std(ess * e_rss / tss ** 2)),
        "sd_from_excess_exact_tss": float(np.std(e_q / tss)), "sd_allowed": FACTOR4_SD_PER_SHARE * q,
    }


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks r2_sums", description=__doc__.splitlines()[0])
    p.add_argument("--cells", default=DEFAULT_CELLS, help="comma-separated design:n:eps (declared ranges, dpgd)")
    p.add_argument("--R", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="r2_sums")
    a = p.parse_args(argv)
    lines = ["# dpgd's R^2 sums against the data's least-squares sums (dpgd.md §8)", "",
             f"`python -m benchmarks r2_sums --cells {a.cells} --R {a.R} --seed {a.seed}`", "",
             "fits: those with an R^2 interval (in parentheses: those whose point fell in (0, 1); "
             "§46 then prints it only where the interval supports it). point: ESS_hat / (ESS_hat + RSS_hat) "
             "before §46, counted at 1 "
             "(0) where RSS_hat (ESS_hat) <= 0, median [IQR] against the median OLS R^2 of the scaled data; "
             "interval: shares excluding 0 / excluding 1 / both / holding the OLS R^2. Errors in scaled units: "
             "mean, s.d. (stated s.d.). RSS parts: the released total's error and Q - excess (mean, s.d.). "
             "R^2 s.d. from: the delta-method s.d. of R^2 from ESS_hat's error alone, from RSS_hat's alone, from "
             "the excess part with an exact TSS; allowed: the largest s.d. §46's factor-4 rule admits.", "",
             "| cell | fits (point in (0, 1)) | point vs OLS R^2; above 1 | interval: excl. 0 / 1 / both; holds | "
             "ESS (median) err | RSS (median) err | corr (model) | RSS parts: total; Q - excess; c2 10-90% | "
             "R^2 s.d. from ESS / RSS / excess; allowed |", "|---|---|---|---|---|---|---|---|---|"]
    for cell in a.cells.split(","):
        name, n, eps = cell.split(":")
        s = summarise(run(name, int(float(n)), float(eps), a.R, a.seed))
        row = (f"| {name} n = {int(float(n))}, eps = {float(eps):g} | {s['m']} ({s['inside']}) | "
               f"{s['point']:.3f} [{s['point_iqr'][0]:.3f}-{s['point_iqr'][1]:.3f}] vs {s['r2_ols']:.3f}; "
               f"{s['above_1']:.2f} | {s['excl0']:.2f} / {s['excl1']:.2f} / {s['both']:.2f}; {s['holds']:.2f} | "
               f"({s['sums'][0]:.1f}) {s['ess_err'][0]:+.2f}, {s['ess_err'][1]:.2f} ({s['ess_err'][2]:.2f}) | "
               f"({s['sums'][1]:.1f}) {s['rss_err'][0]:+.2f}, {s['rss_err'][1]:.2f} ({s['rss_err'][2]:.2f}) | "
               f"{s['corr']:+.2f} ({s['model_corr']:+.2f}) | {s['total_err'][0]:+.2f}, {s['total_err'][1]:.2f}; "
               f"{s['q_err'][0]:+.2f}, {s['q_err'][1]:.2f}; {s['c2'][0]:.2f}-{s['c2'][1]:.2f} | "
               f"{s['sd_from_ess']:.3f} / {s['sd_from_rss']:.3f} / {s['sd_from_excess_exact_tss']:.3f}; "
               f"{s['sd_allowed']:.3f} |")
        print(row, flush=True)
        lines.append(row)
    write_result(a.out, "\n".join(lines))


if __name__ == "__main__":
    main()
