"""dp_quantile's early-stop flag: how often walks stop before the data, and how often the flag fires.

Data far from both declared bounds (n rows uniform on [1000, 1100], bounds (0, 1e4), grid ratio 1.001),
one level q per fit, ``inference=False`` (one search gets the whole eps). An "early stop" is a release
outside the data's range on the side the walk starts from (the walk crossed no row). For each n x eps cell
the table gives the share of early stops, of fits flagged ``facts["early_stop"]`` (this pass), of fits
flagged by the former 10-step ``near_bound`` rule, of early stops left unflagged and of releases at the
data that were flagged, and the public reach M (grid steps) with the step d where the data begin.

    python -m benchmarks quantile_early_stop --ns 10 20 40 100 1000 --eps 0.5 1 2 --q 0.5 0.25 --reps 300
"""
import argparse
import warnings

import numpy as np


def cell(n, eps, q, reps, seed0=0):
    import dpreg
    from dpreg.privacy.quantile import k_max
    rng = np.random.default_rng(12345 + n)
    x = 1000.0 + 100.0 * rng.random(n)
    lo, hi = 0.0, 1e4
    d = k_max(lo, float(x.min()), 1.001) if q >= 0.5 else k_max(-hi, -float(x.max()), 1.001)
    early = flagged = old = early_unflagged = data_flagged = 0
    reach = None
    for s in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = dpreg.dp_quantile(x, q, eps=eps, bounds=(lo, hi), inference=False, random_state=seed0 + s)
        v = float(e.estimate)
        is_early = (v < x.min()) if q >= 0.5 else (v > x.max())
        f = bool(e.facts["early_stop"])
        early += is_early
        flagged += f
        old += bool(e.facts["steps"] <= 10 and e.facts["stopped"])
        early_unflagged += is_early and not f
        data_flagged += (not is_early) and f
        reach = e.facts["early_stop_steps"]
    return dict(n=n, eps=eps, q=q, reps=reps, early=early, flagged=flagged, old_rule=old,
                early_unflagged=early_unflagged, data_flagged=data_flagged, reach=reach, data_step=d)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks quantile_early_stop", description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[10, 20, 40, 100, 1000])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--q", type=float, nargs="+", default=[0.5])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--alpha", type=float, default=None,
                    help="level of the reach (default: the package's EARLY_STOP_ALPHA); for comparisons only")
    a = ap.parse_args(argv)
    if a.alpha is not None:
        import dpreg.privacy.quantile as pq
        pq.EARLY_STOP_ALPHA = a.alpha
    print("| n | eps | q | early stops | flagged | former 10-step rule | early, unflagged | at the data, flagged "
          "| reach M | data step d |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for q in a.q:
        for n in a.ns:
            for eps in a.eps:
                r = cell(n, eps, q, a.reps)
                print(f"| {n} | {eps:g} | {q:g} | {r['early']}/{r['reps']} | {r['flagged']} | {r['old_rule']} | "
                      f"{r['early_unflagged']} | {r['data_flagged']} | {r['reach']} | {r['data_step']} |", flush=True)


if __name__ == "__main__":
    main()
