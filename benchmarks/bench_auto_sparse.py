"""method="auto" on sparse numeric designs: the SSP choice, dpgd and the heavy-tailed methods by the public signal-to-noise index.

x ~ U(-1, 1)^p (declared ranges), three non-zero slopes (1, -0.8, 0.6), noise sd 0.5, outcome clipped
to its declared range [-5, 5]; n training rows and n/4 test rows. With ``--slopes dense`` every one of the
p slopes is non-zero, +-1.32 / sqrt(p) with alternating signs (the same l2 norm, 1.32, as the sparse
slopes): the same public facts (n, d, eps), a design that is not sparse. Reported: test MSE / noise variance
(0.25), median over seeds, with auto's public index n mu / (B^2 sqrt(d)) (dpreg.api.auto_snr; below
AUTO_SNR_MIN auto picks dpgd). "adassp" is what auto picked before (every range declared, no factors).

    python -m benchmarks auto_sparse [--seeds 2] [--cells 2000x20,2000x100,...] [--eps 1,8] [--slopes dense]
        [--methods adassp,dpgd,...] [--out auto_sparse]

(``--methods`` may also name ht_iht, with s = 10 like ht_sparse; it is not in the default set.)
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

# the heavy-tailed methods are refused by default where the index is >= 20 (their regime rule); this
# comparison opts in, to show every method in every cell
_OUTSIDE = {"allow_outside_regime": True}
METHODS = (("adassp", {}), ("dpgd", {}), ("ht_fw", dict(_OUTSIDE)), ("ht_lasso", dict(_OUTSIDE)),
           ("ht_sparse", {"s": 10, **_OUTSIDE}), ("auto", {}), ("ht_iht", {"s": 10, **_OUTSIDE}))
#: run unless --methods names the others (ht_iht was added in the nineteenth pass: not in the default tables)
DEFAULT_METHODS = ("adassp", "dpgd", "ht_fw", "ht_lasso", "ht_sparse", "auto")


def _slopes(p, kind):
    b = np.zeros(p)
    if kind == "dense":
        # the l2 norm of the sparse slopes, sqrt(1 + 0.64 + 0.36) = 1.414..., spread over every predictor
        b[:] = math.sqrt(2.0) / math.sqrt(p) * np.where(np.arange(p) % 2 == 0, 1.0, -1.0)
    else:
        b[:3] = [1.0, -0.8, 0.6]
    return b


def _frame(n, p, seed, slopes="sparse"):
    import pandas as pd
    rng = np.random.default_rng(seed)        # benchmark data, not a DP draw
    X = rng.uniform(-1, 1, (n, p))
    b = _slopes(p, slopes)
    y = np.clip(X @ b + 0.5 * rng.normal(size=n), -5, 5)
    df = pd.DataFrame(X, columns=[f"v{j}" for j in range(p)])
    df["y"] = y
    bounds = {f"v{j}": (-1.0, 1.0) for j in range(p)}
    bounds["y"] = (-5.0, 5.0)
    return df, bounds


def main(argv=None):
    import dpreg
    from dpreg.api import auto_snr

    from . import write_result
    ap = argparse.ArgumentParser(prog="python -m benchmarks auto_sparse")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--cells", default="2000x20,2000x100,2000x400,1000x400,500x400,10000x400")
    ap.add_argument("--eps", default="1,8")
    ap.add_argument("--slopes", default="sparse", choices=("sparse", "dense"))
    ap.add_argument("--methods", default=",".join(DEFAULT_METHODS))
    ap.add_argument("--out", default="auto_sparse", help="name of the results file under benchmarks/results/")
    a = ap.parse_args(argv)
    methods = [(m, o) for m, o in METHODS if m in a.methods.split(",")]
    t0 = time.perf_counter()
    lines = [f"# auto on {a.slopes} numeric designs: test MSE / noise variance (median over seeds)", "",
             f"Command: `python -m benchmarks auto_sparse --seeds {a.seeds} --cells {a.cells} --eps {a.eps}"
             + (f" --slopes {a.slopes}" if a.slopes != "sparse" else "")
             + (f" --methods {a.methods}" if a.methods != ",".join(DEFAULT_METHODS) else "") + f" --out {a.out}`", "",
             "| n | p | eps | index | " + " | ".join(m for m, _ in methods) + " |",
             "|---|---|---|---|" + "---|" * len(methods)]
    for cell in a.cells.split(","):
        n, p = (int(v) for v in cell.split("x"))
        for eps in (float(e) for e in a.eps.split(",")):
            res = {m: [] for m, _ in methods}
            chosen = set()
            for seed in range(a.seeds):
                df, bounds = _frame(int(n * 1.25), p, seed, a.slopes)
                tr, te = df.iloc[:n], df.iloc[n:]
                for m, opts in methods:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            fit = dpreg.dp_lm("y ~ .", tr, eps=eps, method=m, bounds=bounds, random_state=seed,
                                              **opts)
                            pred = fit.predict(te).to_numpy(float)
                            res[m].append(float(np.mean((te.y.to_numpy() - pred) ** 2) / 0.25))
                            if m == "auto":
                                chosen.add(fit.method)
                        except dpreg.DPRegError:
                            pass
            index = auto_snr(n, p + 1, p + 1, eps, 1e-6)
            cells = [f"{np.median(v):.3g}" if v else "refused" for v in res.values()]
            if "auto" in res:
                cells[list(res).index("auto")] += f" ({'/'.join(sorted(chosen))})"
            lines.append(f"| {n} | {p} | {eps:g} | {index:.3g} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    lines += ["", f"Total time {time.perf_counter() - t0:.0f}s."]
    write_result(a.out, "\n".join(lines))
    return 0
