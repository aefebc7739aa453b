"""Figures for papers (matplotlib, an optional extra: ``pip install dpreg[plots]``).

Both functions only post-process released quantities (coefficients, noise-aware intervals) or
numbers the caller computed; they never touch data.
"""
from __future__ import annotations

import numpy as np


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError("dpreg's plots need matplotlib: pip install 'dpreg[plots]'") from exc
    return plt


def coef_plot(fits, *, level=0.95, labels=None, reference=None, reference_label="non-private OLS",
              terms=None, drop_intercept=True, ax=None):
    """Coefficient plot with noise-aware confidence intervals.

    Also reachable as ``dpreg.plot_coef`` and :meth:`dpreg.DPFit.plot`. The figure uses constrained
    layout, so long term names are not clipped by a plain ``savefig``.

    Parameters
    ----------
    fits : dpreg.DPFit, list of dpreg.DPFit, or dict
        One fit, or several drawn side by side (the terms of all of them; a fit without a term has no
        mark there); a dict maps legend labels to fits, as in :func:`dpreg.compare`.
    level : float, default 0.95
        Level of the intervals.
    labels : list of str, optional
        Legend labels, one per fit (default: the dict's keys, else method and eps).
    reference : mapping, optional
        term -> value (e.g. the non-private statsmodels coefficients), drawn as open diamonds and
        labelled as the non-private reference.
    reference_label : str, default "non-private OLS"
        Legend label of ``reference``.
    terms : list of str, optional
        Terms to draw (default: all).
    drop_intercept : bool, default True
        Leave out the intercept when ``terms`` is not given.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")   # no window: a script or a test
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds, DIAMONDS_BOUNDS
    >>> diamonds = load_diamonds()
    >>> bounds = {"price": DIAMONDS_BOUNDS["price"], "carat": DIAMONDS_BOUNDS["carat"]}
    >>> fit = dpreg.dp_lm("price ~ carat", diamonds, eps=1.0, method="adassp", bounds=bounds, random_state=1)
    >>> ax = dpreg.plot_coef(fit)
    >>> ax.figure.savefig("coefficients.png")  # doctest: +SKIP
    """
    plt = _plt()
    if isinstance(fits, dict):
        labels = labels or [str(k) for k in fits]
        fits = list(fits.values())
    fits = list(fits) if isinstance(fits, (list, tuple)) else [fits]
    if not fits or not all(hasattr(f, "inference_centre") and hasattr(f, "conf_int") for f in fits):
        from ..errors import InvalidArgumentType
        raise InvalidArgumentType("plot_coef takes a fit, a list of fits or a dict {label: fit} "
                                  "(dpreg.DPFit objects)")
    labels = labels or [f"{f.method} (eps = {f.privacy.eps:g})" for f in fits]
    # the union of the fits' terms, in the order they first appear (as dpreg.compare's rows)
    all_terms = list(dict.fromkeys(t for f in fits for t in f.coef.index))
    if terms is None:
        terms = [t for t in all_terms if not (drop_intercept and t == "Intercept")]
    if ax is None:
        # constrained layout sizes the margins at draw time, so long term names are not clipped by a
        # plain fig.savefig() (no bbox_inches="tight" needed)
        _, ax = plt.subplots(figsize=(6.5, 0.45 * len(terms) + 1.5), layout="constrained")
    ypos = np.arange(len(terms))[::-1]
    k = len(fits) + (reference is not None)
    offsets = (np.arange(k) - (k - 1) / 2) * 0.22
    for i, (fit, label) in enumerate(zip(fits, labels)):
        # the dot is the point the interval is about (AdaSSP with its ridge corrected: the corrected
        # estimate; its ridge estimate, what predict() uses, is drawn as an open circle)
        centre = fit.inference_centre.reindex(terms).to_numpy(float)
        ci = getattr(fit, "_conf_int", fit.conf_int)(level=level).reindex(terms)
        lo, hi = ci["lower"].to_numpy(float), ci["upper"].to_numpy(float)
        y = ypos + offsets[i]
        has = np.isfinite(lo) & np.isfinite(hi)
        ax.hlines(y[has], lo[has], hi[has], color=f"C{i}", lw=2)
        # a point whose interval is withheld gets its own mark and legend entry (newcomer review 20: a dot
        # without a bar read as a very precise estimate)
        bare = np.isfinite(centre) & ~has
        ax.plot(np.where(bare, np.nan, centre), y, "o", color=f"C{i}", label=label)
        if bare.any():
            ax.plot(centre[bare], y[bare], "x", color=f"C{i}",
                    label=f"{label}: no interval (not estimable at this n and eps)")
        if getattr(fit, "has_separate_centre", False):
            ax.plot(fit.coef.reindex(terms).to_numpy(float), y, "o", mfc="none", color=f"C{i}",
                    label=f"{label}: ridge estimate (used by predict)")
    if reference is not None:
        ref = np.array([float(reference[t]) if t in reference else np.nan for t in terms])
        ax.plot(ref, ypos + offsets[-1], "D", mfc="none", color="black", label=reference_label)
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(ypos)
    ax.set_yticklabels(terms)
    ax.set_xlabel(f"estimate with {100 * level:g}% noise-aware interval")
    ax.legend(loc="best", fontsize="small", frameon=False)
    return ax


def privacy_utility_plot(eps_grid, errors, *, labels=None, ylabel="test MSE / OLS MSE", logy=True,
                         ax=None):
    """Privacy-utility curve: error against eps, one line per method.

    eps_grid : sequence of eps values
    errors   : dict label -> sequence of errors (same length as eps_grid), or a 2-D array with
               ``labels``; each entry may itself be a sequence of replicates (its median is drawn,
               with the inter-quartile range as a band).
    """
    plt = _plt()
    if not isinstance(errors, dict):
        errors = dict(zip(labels, errors))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    eps = np.asarray(eps_grid, float)
    for i, (label, vals) in enumerate(errors.items()):
        vals = [np.atleast_1d(np.asarray(v, float)) for v in vals]
        med = np.array([np.median(v) for v in vals])
        q1 = np.array([np.quantile(v, 0.25) for v in vals])
        q3 = np.array([np.quantile(v, 0.75) for v in vals])
        ax.plot(eps, med, "o-", color=f"C{i}", label=label)
        if any(len(v) > 1 for v in vals):
            ax.fill_between(eps, q1, q3, color=f"C{i}", alpha=0.2)
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    ax.set_xscale("log")
    ax.set_xticks(eps)
    ax.set_xticklabels([f"{e:g}" for e in eps])
    ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("eps (privacy budget)")
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False, fontsize="small")
    return ax


def privacy_utility_curve(fit_fn, eps_grid, error_fn, *, reps=5, seed=0):
    """Measure a privacy-utility curve: for each eps, ``reps`` fits ``fit_fn(eps, random_state)``,
    each scored by ``error_fn(fit)``. Returns {eps: [errors]} (seeded: for studies, not release)."""
    out = {}
    for i, eps in enumerate(eps_grid):
        out[float(eps)] = [float(error_fn(fit_fn(eps, seed + 1000 * i + r))) for r in range(reps)]
    return out
