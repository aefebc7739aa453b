"""dpgd's interval half-width in parts (sampling variance, gradient-noise variance, bias bound) against their Monte Carlo truths.

Each fit of a cell is made as in ``benchmarks dpgd_bias_variants`` (``design:n:eps`` with ``dp_lm(...,
method="auto")``, declared ranges, seed 1's data and noise streams; or ``cars:1:50`` etc.). Inside this process
only, the values a released dpgd fit builds its intervals from are recorded (docs/derivations/dpgd.md §2-§5,
§10): the residual variance sigma2 and the floored Gram S of the sampling part sigma2 S^-1, the contraction
and preconditioner of the noise part V_noise, §3a's inflation, the bias bound, next to the data's own scaled
X'X, least-squares fit and residual variance, which no fit sees. Per coefficient (original units):

* the sampling part the fit uses, E[sigma2 (M S^-1 M')_jj] over the released fits, against the spread of the
  least-squares coefficient around the population one (Var(beta_ols - beta)), and against the data's own
  s^2 (M H^-1 M')_jj and the part the averaged iterate carries, s^2 (M (I - P) H^-1 (I - P)' M')_jj;
* the noise part, E[f_j (M V_noise M')_jj] (f_j §3a's inflation, 1 where the lower bound is used), against
  the spread of M xi (xi = theta_bar - (I - P) theta*, the gradient noise carried into the estimate, P at the
  data's X'X) and against the exact conditional variance at the data's X'X, (M V_noise(I - K X'X) M')_jj;
* the bias bound against the exact bias |M P theta*|.

Rows then recompute the 95% intervals of the same fits with parts replaced (the package's rule first; the
row checks that it reproduces every printed interval):

* ``package``: the package's interval; ``exact bias``: with |P theta*| (an oracle) as the bias;
* ``no inflation``: §3a's f_j set to 1; ``sampling (I - P)``: sigma2 (I - P) S^-1 (I - P)' with the
  covariance's P; ``both``: the two together; each with the package's bias bound and with the exact bias;
* ``true variance``: the data's exact variance (s^2 H^-1 + V_noise at X'X) with the exact bias (an oracle:
  the intervals should cover 0.95 if the model of §2 holds);
* ``zero bias``: the bias bound set to 0 (coef +- 1.96 s.d.), with the package's variance and with the true
  one: the narrowest intervals any bias bound (a number >= 0) can give with that variance (dpgd.md §13).

    python -m benchmarks dpgd_variance_parts --cells uniform:1000:0.5,rare_level:1000:0.5 --R 200

Nothing here is printed by dpreg; the functions are wrapped inside this process only.
"""

import numpy as np

from . import patched
from .bench_dpgd_bias_variants import _fits, cell_heading, cells_main

DEFAULT_CELLS = "uniform:1000:0.5,rare_level:1000:0.5"
Z90 = 1.6448536269514722
#: the bias bound (in true s.d.s) above which an interval covers 0.97 at zero bias with any variance at least
#: the true one:
#: Phi^-1(0.985) - Phi^-1(0.95)
B_OVER_S97 = 2.1700903775845606 - Z90


def zero_bias_coverage(r: float, level: float = 0.95) -> float:
    """One eigen-direction with no bias (theta* = 0 along it) and the true s.d. (dpgd.md §13): the coverage of
    theta_bar +- cv(b) with the bias bound b = r (|xi| + 2) of dpgd.md §4 (r = p / (1 - p), xi ~ N(0, 1) the
    noise of theta_bar, P W theta_bar = r xi). For r < 1, x - cv(r (x + 2)) increases in x (cv has slope
    in [0, 1)) from -cv(2 r) < 0, so the covered set is |xi| <= x* with x* = cv(r (x* + 2)), and the coverage
    is 2 Phi(x*) - 1;
    it is 1 where no root lies below 100 (r near 1 or above)."""
    from scipy import optimize, stats

    from dpreg.inference import ssp

    def cv(b):
        return float(ssp.bias_aware_cv(np.array([b]), level)[0])

    r = float(r)
    if r >= 1.0 or 100.0 - cv(r * 102.0) <= 0.0:
        return 1.0
    x = optimize.brentq(lambda x: x - cv(r * (x + 2.0)), 0.0, 100.0, xtol=1e-12)
    return float(2.0 * stats.norm.cdf(x) - 1.0)


def largest_shift_for_band(c: float, d: int, T: int = 6, k: int = 3, band: float = 0.97):
    """(shift, level) in the one-direction model of dpgd.md §13: a released eigenvalue w = t + c sigma1 (t the
    certification threshold of §10, d the number of columns, lambda = 2 sqrt(d) sigma1), and the largest
    downward shift of the curvature (in sigma1) for which the bias bound still lets the zero-bias interval
    cover at most ``band`` with the true s.d. (K's eigenvalue 1 / (w + lambda), so the contraction at the
    curvature w - shift is a = (lambda + shift) / (w + lambda) and r = p(a) / (1 - p(a))); and the level
    alpha = Q(shift) / Q(shift - c) at which w - shift is §10's one-sided end given the pass (a lower end at
    the conditional median has alpha = 1/2; §10's has alpha = Q(1) = 0.159)."""
    import math

    from scipy import optimize, stats

    from dpreg.inference import dpgd as ig

    lam, e = 2.0 * math.sqrt(d), ig.gram_noise_scale(1.0, d, 1.0)
    t = ig.certification_threshold(e, lam, T, k)
    r_band = optimize.brentq(lambda r: zero_bias_coverage(r) - band, 0.0, 0.99, xtol=1e-12)
    p_band = r_band / (1.0 + r_band)
    a_band = optimize.brentq(lambda a: sum(a ** j for j in range(T - k + 1, T + 1)) / k - p_band, 0.0, 1.0,
                             xtol=1e-14)
    w = t + float(c)
    shift = a_band * (w + lam) - lam
    return float(shift), float(stats.norm.sf(shift) / stats.norm.sf(shift - float(c)))


def record(cell, R):
    """Per released dpgd fit of ``cell``: the values its intervals are built from and the data's truths."""
    import dpreg.estimators.dpgd_precond as dp
    import dpreg.inference.dpgd as ig
    import dpreg.inference.ssp as ssp

    rec, out = {}, []
    attach, widen, samp, infl = dp._attach_inference, ssp.widen_for_bias, ig.sampling_covariance, \
        ig.noisy_variance_inflation

    def attach_(rel, sd, X, y, theta, G, K, **kw):
        ts = np.linalg.lstsq(X, y, rcond=None)[0]
        n, d = X.shape
        rec.update(H=X.T @ X, ts=ts, s2=float(np.sum((y - X @ ts) ** 2) / max(n - d, 1)),
                   theta=np.array(theta, float), G=np.array(G, float), K=np.array(K, float),
                   M=np.array(sd.M, float), **{k: kw[k] for k in ("sigma_G", "sigma_grad", "T", "k")})
        return attach(rel, sd, X, y, theta, G, K, **kw)

    def samp_(P, S, sigma2):
        rec.update(S=np.array(S, float), sigma2=float(sigma2))
        return samp(P, S, sigma2)

    def infl_(s2, level=0.95):
        f = infl(s2, level)
        rec.update(infl=np.atleast_1d(np.array(f, float)))
        return f

    def widen_(V, bias, level=0.95):
        rec.update(V=np.array(V, float), bias=np.array(bias, float))
        return widen(V, bias, level)

    skipped = 0
    with patched((dp, "_attach_inference", attach_), (ssp, "widen_for_bias", widen_),
                 (ig, "sampling_covariance", samp_), (ig, "noisy_variance_inflation", infl_)):
        for truth, fit in _fits(cell, R, rec):
            if not fit.has_inference or "V" not in rec:
                continue
            ci = np.asarray(fit.conf_int(), float)
            keep = np.isfinite(ci[:, 0])
            if keep.sum() != rec["M"].shape[0]:
                skipped += 1
                continue
            r = dict(rec)
            r.setdefault("infl", np.ones(r["M"].shape[0]))
            r.update(coef=np.asarray(fit.coef, float)[keep], ci=ci[keep], truth=np.asarray(truth, float)[keep],
                     plugin=fit.facts.get("covariance_contraction") == "plug-in")
            out.append(r)
    if out:
        sizes = [r["M"].shape[0] for r in out]
        d = max(set(sizes), key=sizes.count)
        skipped += sum(s != d for s in sizes)
        out = [r for r in out if r["M"].shape[0] == d]
    return out, skipped


def parts(r):
    """The fit's parts and the data's truths, per coefficient in original units (module docstring)."""
    from dpreg.inference import dpgd as ig

    M, K, T, k = r["M"], r["K"], r["T"], r["k"]
    d = M.shape[0]

    def dg(V):
        return np.einsum("ij,jk,ik->i", M, V, M)

    Sinv = np.linalg.inv((r["S"] + r["S"].T) / 2.0)
    v_samp = r["sigma2"] * dg(Sinv)
    f = r["infl"]
    v_noise = np.diag(r["V"]) / f - v_samp          # V = f (v_samp + v_noise) on the diagonal
    A_true = ig.plugin_contraction(K, r["H"])
    P_true, _ = ig.averaging_maps(A_true, T, k)
    Hinv = np.linalg.inv(r["H"])
    IPt = np.eye(d) - P_true
    # the covariance's own contraction: the plug-in I - K G_0 or §3's lower bound, as the fit chose
    if r["plugin"]:
        w, Q = np.linalg.eigh((r["G"] + r["G"].T) / 2.0)
        A = ig.plugin_contraction(K, (Q * np.maximum(w, 0.0)) @ Q.T)
    else:
        from dpreg.estimators.dpgd_precond import _contraction
        A = _contraction(r["G"], K, r["sigma_G"])
    P, _ = ig.averaging_maps(A, T, k)
    IP = np.eye(d) - P
    xi = r["theta"] - IPt @ r["ts"]
    # the plug-in's second-order mean over the Gram noise, estimated at the plug-in itself (dpgd.md §12)
    w, Q = np.linalg.eigh((r["G"] + r["G"].T) / 2.0)
    A_plug = ig.plugin_contraction(K, (Q * np.maximum(w, 0.0)) @ Q.T)
    v_plug = dg(ig.noise_covariance(K, A_plug, r["sigma_grad"], T, k))
    c2 = _second_order(K, A_plug, r, dg)
    err = r["coef"] - r["truth"]
    return dict(
        v_samp=v_samp, f=f, v_noise=v_noise, bias_bound=r["bias"],
        v_samp_IP=r["sigma2"] * dg(IP @ Sinv @ IP.T),
        v_samp_data=r["s2"] * dg(Hinv), v_samp_data_IP=r["s2"] * dg(IPt @ Hinv @ IPt.T),
        v_noise_true=dg(ig.noise_covariance(K, A_true, r["sigma_grad"], T, k)),
        bias_exact=np.abs(M @ (P_true @ r["ts"])),
        e_samp=err - M @ (r["theta"] - r["ts"]), e_noise=M @ xi, e_bias=-(M @ (P_true @ r["ts"])), err=err,
        sigma2_ratio=r["sigma2"] / r["s2"], v_plug=v_plug, c2=c2, plugin=np.full(d, r["plugin"]))


def _second_order(K, A, r, dg):
    """(1/2) sum_{a <= b} Var(E_ab) d^2 v_j along K B_ab, by central second differences with the step
    s.d.(E_ab): the mean of v_j(A - K E) - v_j(A) over the Gram noise to second order."""
    from dpreg.inference import dpgd as ig

    d = K.shape[0]
    sg = r["sigma_G"]

    def v(Ax):
        return dg(ig.noise_covariance(K, Ax, r["sigma_grad"], r["T"], r["k"]))

    v0 = v(A)
    out = np.zeros(d)
    for a in range(d):
        for b in range(a, d):
            B = np.zeros((d, d))
            B[a, b] = B[b, a] = 1.0
            h = sg if a == b else sg / np.sqrt(2.0)
            KB = h * (K @ B)
            out += 0.5 * (v(A + KB) - 2.0 * v0 + v(A - KB))
    return out


def half_width(p, row):
    from dpreg.inference import ssp

    exact = row.endswith("exact bias")
    nobias = row.endswith("zero bias")
    b = p["bias_exact"] if exact else np.zeros_like(p["bias_bound"]) if nobias else p["bias_bound"]
    base = row.replace(", exact bias", "").replace("exact bias", "package")
    base = base.replace(", zero bias", "").replace("zero bias", "package")
    if base == "true variance":
        v = p["v_samp_data"] + p["v_noise_true"]
    elif base == "second-order":
        vn = np.where(p["plugin"], np.maximum(p["v_noise"] - p["c2"], 0.0), p["v_noise"])
        v = p["f"] * (p["v_samp"] + vn)
    elif base == "plug-in everywhere, second-order":
        v = p["f"] * (p["v_samp"] + np.maximum(p["v_plug"] - p["c2"], 0.0))
    else:
        vs = p["v_samp_IP"] if base in ("sampling (I - P)", "both") else p["v_samp"]
        f = np.ones_like(p["f"]) if base in ("no inflation", "both") else p["f"]
        v = f * (vs + p["v_noise"])
    hw = np.array([float(ssp.bias_aware_cv(np.array([bj / np.sqrt(vj)]), 0.95)[0]) * np.sqrt(vj)
                   if vj > 0 else bj for bj, vj in zip(b, v)])
    return hw


ROWS = ("package", "exact bias", "no inflation", "no inflation, exact bias", "sampling (I - P)",
        "sampling (I - P), exact bias", "both", "both, exact bias", "second-order", "second-order, exact bias",
        "plug-in everywhere, second-order", "plug-in everywhere, second-order, exact bias", "true variance",
        "true variance, exact bias", "zero bias", "true variance, zero bias")


def _fmt(x):
    return np.round(np.asarray(x, float), 3).tolist()


def run(cell, R):
    recs, skipped = record(cell, R)
    lines = [cell_heading(cell, recs, R, skipped)]
    if not recs:
        return lines
    ps = [parts(r) for r in recs]

    def arr(key):
        return np.array([p[key] for p in ps])

    n_plug = sum(r["plugin"] for r in recs)
    lines.append(f"plug-in covariance in {n_plug} fits; sigma2 / the data's s^2: median "
                 f"{np.median(arr('sigma2_ratio')):.2f}, 10/90% {_fmt(np.quantile(arr('sigma2_ratio'), [0.1, 0.9]))}")
    lines += ["", "Variances per coefficient (original units; mean over fits, Monte Carlo spread over fits):", "",
              "| part | per coefficient |", "|---|---|"]
    rows = [
        ("sampling used, E[sigma2 M S^-1 M']", arr("v_samp").mean(0)),
        ("sampling with (I - P), E[sigma2 M (I-P) S^-1 (I-P)' M']", arr("v_samp_IP").mean(0)),
        ("data's s^2 M H^-1 M'", arr("v_samp_data").mean(0)),
        ("data's s^2 with (I - P) at X'X", arr("v_samp_data_IP").mean(0)),
        ("MC Var(beta_ols - beta)", arr("e_samp").var(0, ddof=1)),
        ("noise used, E[V_noise] (before inflation)", arr("v_noise").mean(0)),
        ("inflation f, mean", arr("f").mean(0)),
        ("noise used with inflation, E[f V_noise]", (arr("f") * arr("v_noise")).mean(0)),
        ("exact conditional E[V_noise(X'X)]", arr("v_noise_true").mean(0)),
        ("MC Var(M xi)", arr("e_noise").var(0, ddof=1)),
        ("MC Var(total error - bias)", (arr("err") - arr("e_bias")).var(0, ddof=1)),
        ("total used, E[f (samp + noise)]", (arr("f") * (arr("v_samp") + arr("v_noise"))).mean(0)),
        ("MC Var(total error)", arr("err").var(0, ddof=1)),
        ("bias bound, mean", arr("bias_bound").mean(0)),
        ("exact bias |M P theta*|, mean", arr("bias_exact").mean(0)),
    ]
    for name, v in rows:
        lines.append(f"| {name} | {_fmt(v)} |")
    for grp, m in (("plug-in fits", arr("plugin")[:, 0]), ("lower-bound fits", ~arr("plugin")[:, 0])):
        if m.sum() < 2:
            continue
        sub = [
            ("noise used / exact conditional, mean ratio", (arr("v_noise")[m] / arr("v_noise_true")[m]).mean(0)),
            ("plug-in V_noise / exact conditional", (arr("v_plug")[m] / arr("v_noise_true")[m]).mean(0)),
            ("plug-in less second order / exact conditional",
             ((arr("v_plug")[m] - arr("c2")[m]) / arr("v_noise_true")[m]).mean(0)),
            ("MC Var(M xi) / E[exact conditional]", arr("e_noise")[m].var(0, ddof=1) / arr("v_noise_true")[m].mean(0)),
            ("inflation f", arr("f")[m].mean(0))]
        lines += ["", f"{grp} ({int(m.sum())}):", "", "| ratio | per coefficient |", "|---|---|"]
        lines += [f"| {name} | {_fmt(v)} |" for name, v in sub]
    sd_used = np.sqrt((arr("f") * (arr("v_samp") + arr("v_noise"))).mean(0))
    lines.append("")
    lines.append(f"s.d. used / MC s.d. of (total error - bias): "
                 f"{_fmt(sd_used / (arr('err') - arr('e_bias')).std(0, ddof=1))}")
    # at zero bias an interval coef +- cv(b / s) s with s >= s0 covers with probability at least
    # P(|Z| <= b / s0 + 1.645),
    # s0 the true s.d. (cv(x) >= x + 1.645, dpgd.md §12): above 0.97 wherever b > 0.53 s0
    ratio = arr("bias_bound") / np.sqrt(arr("v_samp_data") + arr("v_noise_true"))
    lines.append(f"bias bound / exact s.d. (s^2 M H^-1 M' + V_noise at X'X): median {_fmt(np.median(ratio, 0))}, "
                 f"10% {_fmt(np.quantile(ratio, 0.1, axis=0))}; share above {B_OVER_S97:.3f}: "
                 f"{_fmt((ratio > B_OVER_S97).mean(0))}")
    # dpgd.md §13: where the weakest released eigenvalue sits above the certification threshold t, and the
    # one-direction model's largest curvature shift (and its conditional level) for a zero-bias coverage <= 0.97
    import math

    from dpreg.inference import dpgd as ig

    d_g = recs[0]["G"].shape[0]
    t1 = ig.certification_threshold(ig.gram_noise_scale(1.0, d_g, 1.0), 2.0 * math.sqrt(d_g), recs[0]["T"],
                                    recs[0]["k"])
    c_min = np.array([np.linalg.eigvalsh((r["G"] + r["G"].T) / 2.0)[0] / r["sigma_G"] - t1 for r in recs])
    sh = np.array([largest_shift_for_band(c, d_g, recs[0]["T"], recs[0]["k"]) for c in c_min])
    lines.append(f"weakest released eigenvalue above t (sigma1): median {np.median(c_min):.2f}, 10/90% "
                 f"{_fmt(np.quantile(c_min, [0.1, 0.9]))}; largest shift for a zero-bias coverage <= 0.97 (one "
                 f"direction, true s.d.): median {np.median(sh[:, 0]):.2f}, its conditional level: median "
                 f"{np.median(sh[:, 1]):.2f}, share above 1/2 {np.mean(sh[:, 1] > 0.5):.2f}")
    base = np.array([half_width(p, "package") for p in ps])
    printed = np.array([(r["ci"][:, 1] - r["ci"][:, 0]) / 2.0 for r in recs])
    same = int(np.sum(np.all(np.isclose(base, printed, rtol=1e-6, atol=0.0), axis=1)))
    lines += ["", f"the package's rule reproduces the printed intervals of {same} of {len(recs)} fits", "",
              "| interval | coverage per coefficient | all | mean | width / package (median) |",
              "|---|---|---|---|---|"]
    for row in ROWS:
        hw = base if row == "package" else np.array([half_width(p, row) for p in ps])
        cov = np.abs(arr("err")) <= hw
        lines.append(f"| {row} | {_fmt(cov.mean(0))} | {cov.all(1).mean():.3f} | {cov.mean():.3f} | "
                     f"{np.median(hw / base):.2f} |")
    return lines


def main(argv=None):
    cells_main(argv, name="dpgd_variance_parts", title="dpgd's interval in parts: sampling, gradient noise, bias", run=run, default_cells=DEFAULT_CELLS, default_R=200)


if __name__ == "__main__":
    main()
