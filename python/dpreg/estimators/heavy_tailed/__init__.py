"""Heavy-tailed / high-dimensional DP estimators of Hu, Ni, Xiao & Wang (PODS 2022) [HNXW].

Derivations: ``docs/derivations/heavy_tailed.md`` (it corrects several constants of the paper; we follow it).

* ``ht_fw``     Algorithm 1: robust-gradient DP Frank-Wolfe over a polytope (pure eps-DP);
                squared or logistic loss.
* ``ht_lasso``  Algorithm 2: shrinkage + DP Frank-Wolfe on the full data ((eps, delta)-DP); squared.
* ``ht_iht``    Algorithms 3 + 4: truncated DP iterative hard thresholding with Peeling and an explicit
                l2 projection ((eps, delta)-DP); squared.
* ``ht_sparse`` Algorithm 5: robust gradients + Peeling ((eps, delta)-DP); squared or logistic.

Regime (docs/heavy_tailed.md, "Regime"; options.regime_note, public facts only): refused before anything is
spent, unless ``allow_outside_regime=True``, below 1000 rows, where the signal-to-noise index of
method="auto" is >= 20 (the sufficient-statistics methods are in their regime), and below it ht_fw /
ht_lasso on range-scaled data at n x eps < 16 000 / 40 000 (their error is set by n eps; there dpgd was
better in nearly every measured cell) and ht_iht when its Peeling noise drowns the s kept coefficients.

None of them needs data bounds in principle: their scales ``K``, ``tau``, ``radius`` are public options in
data units (see ``docs/heavy_tailed.md``). By default (squared loss) they ask for ranges (:func:`needs_bounds`,
the ``needs_bounds_hook``: declared, or estimated privately from a share of eps) and run on the
problem centred and scaled into [-1, 1] by them, mapped back exactly.

Privacy bookkeeping. Algorithms 1, 3, 5 touch each of T disjoint blocks (a data-independent random
partition) exactly once, so by parallel composition the whole run costs what one block's mechanism
costs. The ledger therefore has ONE cost row for the run (``eps`` for Algorithm 1, ``eps`` + ``delta``
otherwise) plus zero-cost note rows giving every per-iteration mechanism parameter (sensitivity, noise
scale, active accountant bound). Algorithm 2 is T-fold adaptive composition on the full data; its cost
row states the (eps, delta) certified by the docs/derivations/heavy_tailed.md §7 accountant.

Nothing data-dependent is kept except the released iterates (and the public block sizes): no robust
gradients, no pre-noise vectors, no scores, no clip counts, no permutation.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..._plain import to_plain
from ...errors import AccuracyWarning, InvalidArgument, MethodOutsideRegime
from ...privacy.requests import eps_room
from ...release import Release
from ..registry import METHODS as _REGISTRY
from .frank_wolfe import _fit_fw, _fit_lasso
from .options import (  # noqa: F401
    _SCALING,
    INFERENCE_NOTE,
    METHODS,
    OPTIONS,
    _delta_for,
    _public_standardisation,
    _resolve,
    _unit_truncation,
    check_family,
    check_options,
    check_public_shape,
    given,
    needs_bounds,
    regime_note,
)
from .problem import _Problem
from .radius import PILOT_MAX_D, PILOT_SHARE, pilot_radius, radius_cap
from .sparse import _fit_iht, _fit_sparse


def _radius_rule_applies(method, std, family, options, d):
    """The radius rule (radius.py) chooses the l1 radius of ht_fw / ht_lasso on the standardised path
    of the squared loss, with the default l1 constraint, when the user gave no radius. Not for the
    logistic loss (the pilot is a least-squares statistic) nor for d above PILOT_MAX_D (radius 1)."""
    return (method in ("ht_fw", "ht_lasso") and std is not None and family == "gaussian"
            and "radius" not in options and isinstance(options.get("constraint", "l1"), str)
            and options.get("constraint", "l1") == "l1" and d <= PILOT_MAX_D)


def _mark_entry_bound(tun, method, std, family, options):
    """On the standardised path of the squared loss every entry of the scaled design and outcome lies in
    [-1, 1], so ht_fw's per-sample gradient entries are at most R_V + 1 in size: its default robust-mean
    scale is capped there (options.fw_kappa; a user's scale is kept). Public: the path and the options."""
    if method == "ht_fw" and std is not None and family == "gaussian" and "scale" not in options:
        tun["_entry_bound"] = (True, "internal")


def _pilot_eps(spec):
    """The pilot's eps: PILOT_SHARE of the fit's; the method runs on the exact rest (eps_room)."""
    return float(spec.eps) * PILOT_SHARE


def fit(design, spec, noise, ledger, *, method, **options):
    if method not in METHODS:
        raise InvalidArgument(f"heavy_tailed.fit: unknown method {method!r}")
    family = getattr(design.public, "family", "gaussian") or "gaussian"
    check_family(method, family)
    std = _public_standardisation(design, options, family)
    raw_options = dict(options)       # as the user gave them (the public check's regime rule reads these)
    options = {k: v for k, v in given(options).items() if k != "standardize"}   # None: the default
    if std is not None:
        options.update(std)
    n, d = design.X.shape
    intercept_present = bool(design.public.has_intercept)
    run_spec, cap = spec, None
    if _radius_rule_applies(method, std, family, options, d):
        # the radius rule (radius.py): a public cap at the method's share of eps; a pilot only if it is > 1
        run_spec = dataclasses.replace(spec, eps=eps_room(float(spec.eps), [_pilot_eps(spec)]))
        tun = _resolve(method, n, d, run_spec, options, family=family,
                       intercept=(0 if intercept_present else None))
        _mark_entry_bound(tun, method, std, family, options)
        _unit_truncation(tun, options)
        tun["_delta"] = (0.0 if method == "ht_fw" else float(spec.delta), "internal")
        cap = radius_cap(method, n, d, run_spec.eps, tun, intercept_present)
        if cap <= 1.0:
            run_spec = spec
    if run_spec is spec:
        tun = _resolve(method, n, d, spec, options, family=family,
                       intercept=(0 if intercept_present else None))
        _mark_entry_bound(tun, method, std, family, options)
    if cap is not None and cap <= 1.0:
        tun["radius"] = (1.0, "default: 1; the public cap of the radius rule is 1 at this n, d and eps "
                              "(docs/heavy_tailed.md, 'The l1 radius'), so no pilot was spent")
    delta, notes = _delta_for(method, spec, n)
    # outside the methods' regime (public facts: n, the model matrix's columns and factor blocks, eps;
    # linear and logistic): refused by the public check before anything is spent (check_public_shape); a
    # user who opted in with allow_outside_regime=True gets the fit and the warning (docs/heavy_tailed.md,
    # "Regime")
    allowed = bool(options.get("allow_outside_regime", False))
    note = regime_note(method, n, design.public, spec.eps, spec.delta, refusal=not allowed, family=family,
                       options=raw_options)
    if note is not None and not allowed:
        raise MethodOutsideRegime(note)
    if note is not None:
        warnings.warn(note, AccuracyWarning, stacklevel=3)
        notes.append(note)
    prob = _Problem(design, options, method, family)
    if std is not None:
        tun["standardize"] = (True, OPTIONS["standardize"][1])
        _unit_truncation(tun, options)
    elif prob.scaled:
        for name in _SCALING:
            if name in options:
                v = options[name]
                tun[name] = (v if np.ndim(v) == 0 or isinstance(v, dict) else list(map(float, v)), "user")
    pilot_facts = {}
    if run_spec is not spec:
        r, pilot_facts = pilot_radius(prob, design.public, _pilot_eps(spec), cap, noise, ledger,
                                      share=PILOT_SHARE)
        tun["radius"] = (r, f"private pilot ({PILOT_SHARE:g} of eps): l1 norm of a ridge fit of the released "
                            f"standardised X'X, X'y, rounded up to a power of 2, within [1, {cap:g}] (the "
                            "public cap; docs/heavy_tailed.md, 'The l1 radius')")
        tun["_share"] = (1.0 - PILOT_SHARE, "internal")
    runner = {"ht_fw": _fit_fw, "ht_lasso": _fit_lasso, "ht_iht": _fit_iht, "ht_sparse": _fit_sparse}[method]
    w, facts = runner(prob, run_spec, noise, ledger, tun, delta, options)
    if pilot_facts:
        facts["radius_pilot"] = pilot_facts
    coef = prob.to_original(w)
    nz = np.flatnonzero(w != 0)
    facts.update({
        "description": _REGISTRY[method].description,
        "loss": "logistic" if family == "binomial" else "squared",
        "support": [prob.terms[j] for j in nz],
        "nonzeros": int(nz.size),
        "d": int(d),
        "n": int(n),
        "privacy_type": "pure eps-DP" if method == "ht_fw" else "(eps, delta)-DP",
        "eps": float(spec.eps),
        "delta": float(delta),
        "neighbours": "replace one row; n treated as public",
        "scaled_problem": ("radius, K, tau and moment4 refer to the problem after the public "
                           "centring/scaling constants") if prob.scaled else None,
    })
    if "path" in facts:
        facts["path"] = [prob.to_original(p).tolist() for p in facts["path"]]
    tuning = {k: (to_plain(v, nonfinite="keep"), o) for k, (v, o) in tun.items() if not k.startswith("_")}
    return Release(method=method, coef=coef, vcov=None, vcov_privacy=None, inference_note=INFERENCE_NOTE,
                   tuning=tuning, facts=facts, warnings=notes,
                   link="logit" if family == "binomial" else "identity")


