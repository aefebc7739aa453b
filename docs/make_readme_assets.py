"""Regenerate the table and figure shown in README.md (seeded fits: for illustration, not release).

Run: .venv/bin/python docs/make_readme_assets.py
"""
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402,F401  (statsmodels evaluates np.log in the formula below)
import statsmodels.formula.api as smf  # noqa: E402

import dpreg  # noqa: E402
from dpreg.datasets import DIAMONDS_BOUNDS, load_diamonds  # noqa: E402
from dpreg.results.plots import coef_plot  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    warnings.simplefilter("ignore")
    diamonds = load_diamonds()
    formula = "log(price) ~ log(carat) + cut + depth"
    bounds = {k: DIAMONDS_BOUNDS[k] for k in ("price", "carat", "depth")}
    fits = [dpreg.dp_lm(formula, diamonds, eps=1.0, bounds=bounds, random_state=1),
            dpreg.dp_lm(formula, diamonds, eps=1.0, random_state=2),
            dpreg.dp_lm(formula, diamonds, eps=4.0, bounds=bounds, random_state=3)]
    names = ["declared ranges, eps = 1", "private ranges, eps = 1", "declared ranges, eps = 4"]
    with open(os.path.join(HERE, "figures", "diamonds-table.md"), "w") as fh:
        fh.write(dpreg.compare(fits, names=names).to_markdown() + "\n")
    ols = smf.ols("np.log(price) ~ np.log(carat) + cut + depth", data=diamonds).fit()
    reference = ols.params.rename(lambda t: t.replace("np.log", "log")).to_dict()
    ax = coef_plot(fits, labels=names, reference=reference, reference_label="non-private OLS (reference)")
    ax.set_title("diamonds: DP estimates with 95% noise-aware intervals")
    ax.figure.savefig(os.path.join(HERE, "figures", "diamonds-coefplot.png"), dpi=110, bbox_inches="tight")
    print("wrote docs/figures/diamonds-table.md and docs/figures/diamonds-coefplot.png")


if __name__ == "__main__":
    main()
