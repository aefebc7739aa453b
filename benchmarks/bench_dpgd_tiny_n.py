"""dpgd's released intervals at tiny n: coverage of the OLS coefficients conditional on release.

``python -m benchmarks dpgd_tiny_n --cells cars:1:50,women:10:15,synth:4:30 --R 1000 [--faithful FILE]``
prints, per cell, the fits, the released share, the coverage per coefficient and of both, split by the
contraction the covariance used, and the median and mean interval width per coefficient
(docs/derivations/dpgd.md §9, §10; docs/validity.md "Twenty-eighth pass: dpgd's intervals at tiny n" and
"Twenty-eighth pass: dpgd's bias bound, a sharper rule"). ``cars`` and ``women`` are R's datasets (embedded); ``faithful`` is read from a CSV
with columns eruptions, waiting (R: ``write.csv(faithful, FILE, row.names = FALSE)``); ``synth`` is
y = clip(2 + 0.5 x + N(0, 1), -5, 15), x ~ U(0, 10), data seed 10000 + seed. Declared ranges: cars dist
(0, 120), speed (0, 25); women weight (100, 170), height (55, 75); faithful eruptions (1.5, 5.5), waiting
(40, 100); synth x (0, 10), y (-5, 15). Seeds 1..R, method "auto", eps as given, default delta.
"""
import argparse
import warnings

import numpy as np
import pandas as pd

CARS = {"speed": [4, 4, 7, 7, 8, 9, 10, 10, 10, 11, 11, 12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15,
                  15, 16, 16, 17, 17, 17, 18, 18, 18, 18, 19, 19, 19, 20, 20, 20, 20, 20, 22, 23, 24, 24, 24, 24,
                  25],
        "dist": [2, 10, 4, 22, 16, 10, 18, 26, 34, 17, 28, 14, 20, 24, 28, 26, 34, 34, 46, 26, 36, 60, 80, 20, 26,
                 54, 32, 40, 32, 40, 50, 42, 56, 76, 84, 36, 46, 68, 32, 48, 52, 56, 64, 66, 54, 70, 92, 93, 120,
                 85]}
WOMEN = {"height": list(range(58, 73)),
         "weight": [115, 117, 120, 123, 126, 129, 132, 135, 139, 142, 146, 150, 154, 159, 164]}
SPECS = {"cars": ("dist ~ speed", {"dist": (0, 120), "speed": (0, 25)}),
         "women": ("weight ~ height", {"weight": (100, 170), "height": (55, 75)}),
         "faithful": ("eruptions ~ waiting", {"eruptions": (1.5, 5.5), "waiting": (40, 100)}),
         "synth": ("y ~ x", {"x": (0, 10), "y": (-5, 15)})}


def _data(name, n, seed, faithful):
    if name == "cars":
        return pd.DataFrame(CARS)
    if name == "women":
        return pd.DataFrame(WOMEN)
    if name == "faithful":
        return pd.read_csv(faithful)
    rng = np.random.default_rng(10_000 + seed)
    x = rng.uniform(0, 10, n)
    return pd.DataFrame({"x": x, "y": np.clip(2 + 0.5 * x + rng.standard_normal(n), -5, 15)})


def _cell(name, eps, n, R, faithful):
    import dpreg

    form, bounds = SPECS[name]
    yname, xname = form.split(" ~ ")
    rows = []
    for seed in range(1, R + 1):
        df = _data(name, n, seed, faithful)
        X = np.column_stack([np.ones(len(df)), df[xname].to_numpy(float)])
        ols = np.linalg.lstsq(X, df[yname].to_numpy(float), rcond=None)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = dpreg.dp_lm(form, df, eps=eps, bounds=bounds, random_state=seed)
        if f.has_inference:
            ci = np.asarray(f.conf_int())
            rows.append((f.facts.get("covariance_contraction"), (ci[:, 0] <= ols) & (ols <= ci[:, 1]),
                         ci[:, 1] - ci[:, 0]))
    line = f"{name} n={len(_data(name, n, 1, faithful))} eps={eps}: fits {R}, released {len(rows)}"
    if rows:
        c = np.array([r[1] for r in rows])
        line += f", coverage per coefficient {np.round(c.mean(0), 3).tolist()}, both {c.all(1).mean():.3f}"
        wd = np.array([r[2] for r in rows])
        line += (f", width per coefficient median {np.round(np.median(wd, 0), 3).tolist()} "
                 f"mean {np.round(wd.mean(0), 3).tolist()}")
        for kind in ("plug-in", "lower bound"):
            ck = np.array([r[1] for r in rows if r[0] == kind])
            if len(ck):
                line += f"; {kind} {len(ck)}: {np.round(ck.mean(0), 3).tolist()}"
    print(line, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="cars:1:50,women:10:15,synth:1:100,synth:4:30")
    p.add_argument("--R", type=int, default=1000)
    p.add_argument("--faithful", default=None, help="CSV of R's faithful (columns eruptions, waiting)")
    a = p.parse_args(argv)
    for cell in a.cells.split(","):
        name, eps, n = cell.split(":")
        _cell(name, float(eps), int(n), a.R, a.faithful)


if __name__ == "__main__":
    main()
