"""DP gradient descent with per-sample gradient clipping (the baseline of Tang et al. 2024); for the
squared loss with public ranges the default is its preconditioned form (``fit_linear_precond``,
``algorithm="precond"``, issue 13: steps scaled by a released X'X, see there), and, for
the logistic loss (``dp_glm``), a private Newton iteration (``fit_logistic_mm``, issue 13; the default
``algorithm="newton"``; ``"mm"`` = Boehning's majorise-minimise; ``"gd"`` = the iteration below).
Both run on the schema-scaled design built from the declared or privately estimated ranges.

Squared loss (``dp_lm``) or logistic loss (``dp_glm``, y in {0, 1} mapped to +-1):

    theta_0 = 0;  for t = 1..T:
        q_i = clip_C(grad_i(theta_{t-1}))                  per-sample L2 clipping to norm <= C
        G_t = sum_i q_i + sigma z_t,  z_t ~ N(0, I_d)       released (Gaussian mechanism)
        theta_t = theta_{t-1} - step * s(t) * G_t / n_pub   s(t) = 1, 1/t or 1/sqrt(t)
    return theta_T (last iterate)

Sensitivity of the clipped sum (one release): every q_i has ||q_i||_2 <= C. Replacing one row changes
one summand, so ||sum q(D) - sum q(D')||_2 <= ||q_i|| + ||q_i'|| <= 2C (replace-one); adding or removing
one row changes the sum by one summand, <= C (add/remove). The gradients are evaluated at theta_{t-1},
a function of earlier releases only, so the bound holds adaptively.

Calibration: mu_step = mu / sqrt(T) and sigma = Delta / mu_step make each release mu_step-GDP; T-fold
adaptive composition is exactly mu-GDP ([DRS] Cor. 3.3), with mu = mu_from_eps_delta(eps, delta) (the
exact GDP -> (eps, delta) conversion). Under add/remove, n is private: a share ``n_share`` of mu^2
releases n_hat = n + N(0, 1/mu_n^2) (counting query, sensitivity 1) used as the step normaliser.

No data clipping and no bounds are needed ([S1] Table 1). Where the user declared ranges, the columns
are rescaled to [-1, 1] with those public constants first (option ``standardize``, our choice): the
default C = 1 and step = 1 assume unit-scale data, and on raw columns such as a price or a horsepower
the iteration oscillates or crawls. Rescaling by public constants is a row-wise transform, so the
sensitivity argument below is unchanged. The plain iteration offers no standard errors (see
``INFERENCE_NOTE``); the preconditioned squared loss does where the released Gram matrix resolves every
direction's curvature (issue 13, ``dpreg.inference.dpgd``, docs/derivations/dpgd.md).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import InvalidArgument
from ..privacy.composition import ComposedReleases, gdp_step_mu
from ..privacy.mechanisms import gaussian_mechanism
from ..release import Release

# the shared pieces, the logistic fits and the preconditioned squared loss (re-exported here)
from ._dpgd_core import (  # noqa: F401
    _MODERATE,
    _ROW_CHUNK_ENTRIES,
    INFERENCE_NOTE,
    _clipped_extreme_rows,
    clipped_gradient_sum,
    public_scaling,
    unscale,
)
from .dpgd_logistic import (  # noqa: F401
    MM_NOTE,
    MM_SHARES,
    MM_T,
    NEWTON_SHARES,
    NEWTON_STEP_CAP,
    NEWTON_T,
    _conv_warning,
    _logistic_sums,
    _pd_floor,
    _sigmoid,
    fit_logistic_mm,
    mm_sensitivities,
    newton_default_T,
)
from .dpgd_precond import (  # noqa: F401
    PRECOND_C,
    PRECOND_SHARES,
    PRECOND_T,
    _precond_applicable,
    fit_linear_precond,
    precond_sensitivities,
)

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py

# ---- option checks (public: the option values alone), declared with each option in OPTIONS -----
def _check_C(C):
    if isinstance(C, bool) or not isinstance(C, numbers.Real) or not (C > 0) or not math.isfinite(C):
        raise InvalidArgument("option 'C' (gradient clipping norm) must be a finite number > 0")


def _check_T(T):
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 1:
        raise InvalidArgument("option 'T' (number of gradient steps) must be an integer >= 1")


def _check_step(step):
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not (step > 0) or not math.isfinite(step):
        raise InvalidArgument("option 'step' must be a finite number > 0")


def _check_schedule(schedule):
    if schedule not in ("constant", "1/t", "1/sqrt(t)"):
        raise InvalidArgument("option 'schedule' must be 'constant', '1/t' or '1/sqrt(t)'")


def _check_standardize(standardize):
    if not isinstance(standardize, bool):
        raise InvalidArgument("option 'standardize' must be True or False")


def _check_allow_outside_regime(allowed):
    if not isinstance(allowed, bool):
        raise InvalidArgument("option 'allow_outside_regime' must be True or False")


def _check_algorithm(algorithm):
    if algorithm not in ("auto", "newton", "mm", "gd", "precond"):
        raise InvalidArgument("option 'algorithm' must be 'auto', 'newton' or 'mm' (logistic loss only), "
                              "'precond' (squared loss only) or 'gd'")


# {name: (default, origin, check)}; n_share has no declared check: whether it applies depends on the
# neighbouring relation, so _resolve checks it
OPTIONS = {
    "C": (1.0, "default: our choice within the [S1] Table 1 range (per-sample gradient clip, "
               "data units)", _check_C),
    "T": (100, "default: our choice within the [S1] Table 1 range", _check_T),
    "step": (1.0, "default: eta0 = 1, the DP-GD baseline of [S1]", _check_step),
    "schedule": ("constant", "default: constant step, the DP-GD baseline of [S1]", _check_schedule),
    "n_share": (0.05, "default: our choice, 5% of mu^2 for the released n under add/remove", None),
    "algorithm": ("auto", "our choice: 'newton' (private Newton/IRLS with a released X'WX per step, noise-aware "
                          "standard errors; 'mm' = Boehning majorise-minimise) for the logistic loss; "
                          "'precond' (clipped-gradient steps preconditioned by a released X'X, issue 13) for "
                          "the squared loss; 'gd' = the plain DP-GD iteration of [S1]'s baseline", _check_algorithm),
    "standardize": (True, "our choice: columns with a declared range are rescaled to [-1, 1] with those "
                          "public constants (and a declared outcome range for squared loss), so that the "
                          "default C = 1 and step = 1 suit the data; coefficients are mapped back exactly",
                    _check_standardize),
    "allow_outside_regime": (False, "default: dp_glm's private Newton solver refuses, before anything is "
                                    "spent, a fit whose n mu / sqrt(d) is below its regime threshold, where the "
                                    "released point was measured to be no better than the intercept-only model "
                                    "(docs/derivations/dpgd_logistic.md section 12); True fits anyway, with a "
                                    "warning", _check_allow_outside_regime),
}

SCALE_WARNING = ("DP gradient descent ran on the raw scale of column(s) {cols}: its defaults (C = 1, step = 1) "
                 "assume unit-scale data. Declare bounds= for them so dpreg can rescale with public "
                 "constants, or pass C and step suited to their scale.")


def _resolve(options, neighbours):
    tun = {}
    for name in options:
        if name not in OPTIONS:
            raise InvalidArgument(f"unknown option '{name}' for method 'dpgd'; known: {', '.join(OPTIONS)}")

    def origin(name):
        return "user" if name in options else OPTIONS[name][1]

    def value(name):   # the user's value or the default, checked by the option's declared check
        v = options.get(name, OPTIONS[name][0])
        OPTIONS[name][2](v)
        return v

    C, T, step = value("C"), value("T"), value("step")
    schedule, standardize, algorithm = value("schedule"), value("standardize"), value("algorithm")
    tun["algorithm"] = (algorithm, origin("algorithm"))
    if "allow_outside_regime" in options:   # shown only when set: the fit then carries the regime warning
        tun["allow_outside_regime"] = (bool(value("allow_outside_regime")), "user")
    tun.update(C=(float(C), origin("C")), T=(int(T), origin("T")), step=(float(step), origin("step")),
               schedule=(schedule, origin("schedule")), standardize=(standardize, origin("standardize")))
    if neighbours == "add_remove":
        share = options.get("n_share", OPTIONS["n_share"][0])
        if isinstance(share, bool) or not isinstance(share, numbers.Real) or not (0 < share < 1):
            raise InvalidArgument("option 'n_share' must be in (0, 1)")
        tun["n_share"] = (float(share), origin("n_share"))
    elif "n_share" in options:
        raise InvalidArgument("option 'n_share' applies only to neighbours='add_remove' (n is public otherwise)")
    return tun


def check_public(n, d, spec, options):
    """Data-independent checks before the data are touched."""
    _resolve(options, spec.neighbours)
    if not (0 < spec.delta < 1):
        raise InvalidArgument("method 'dpgd' is Gaussian-DP and needs 0 < delta < 1")


def _schedule(name, t):
    if name == "constant":
        return 1.0
    if name == "1/t":
        return 1.0 / t
    return 1.0 / math.sqrt(t)


def fit(design, spec, noise, ledger, *, method="dpgd", **options):
    from ..privacy.accounting import mu_from_eps_delta

    family = getattr(design.public, "family", "gaussian") or "gaussian"
    neighbours = spec.neighbours
    tun = _resolve(options, neighbours)
    if not (0 < spec.delta < 1):
        raise InvalidArgument("method 'dpgd' is Gaussian-DP and needs 0 < delta < 1")
    algorithm = tun["algorithm"][0]
    if algorithm in ("newton", "mm") and family != "binomial":
        raise InvalidArgument(f"option algorithm='{algorithm}' is for the logistic loss (dp_glm); use 'gd' with dp_lm")
    if family == "binomial" and algorithm in ("auto", "newton", "mm"):
        algorithm = "newton" if algorithm == "auto" else algorithm
        tun["algorithm"] = (algorithm, tun["algorithm"][1])
        if "T" not in options:
            if algorithm == "newton":
                n_public = design.X.shape[0] if neighbours == "replace_one" else None
                tun["T"] = (newton_default_T(n_public, mu_from_eps_delta(spec.eps, spec.delta), neighbours),
                            "default: the most steps whose gradient noise s.d. stays below n/2000, within "
                            "[20, 200] (20 when n is not public; our choice, see "
                            "dpreg.estimators.dpgd_logistic.newton_default_T)")
            else:
                tun["T"] = (MM_T, "default: MM_T (our choice, see dpreg.estimators.dpgd.MM_T)")
        for name in ("C", "step", "schedule", "standardize"):
            if name in options:
                raise InvalidArgument(f"option '{name}' applies to algorithm='gd' only")
            tun.pop(name, None)
        return fit_logistic_mm(design, spec, noise, ledger, tun)
    if algorithm == "auto" and family == "gaussian" and not _precond_applicable(design.public, options):
        algorithm = "gd"     # no public range for some column (direct call), or options of the plain iteration
    if algorithm in ("auto", "precond") and family == "gaussian":
        tun["algorithm"] = ("precond", tun["algorithm"][1])
        if "T" not in options:
            tun["T"] = (PRECOND_T, "default: PRECOND_T (our choice, see dpreg.estimators.dpgd.PRECOND_T)")
        if "C" not in options:
            tun["C"] = (PRECOND_C, "default: PRECOND_C (our choice, see dpreg.estimators.dpgd.PRECOND_C)")
        for name in ("step", "schedule", "standardize", "n_share"):
            if name in options:
                raise InvalidArgument(f"option '{name}' applies to algorithm='gd' only")
            tun.pop(name, None)
        return fit_linear_precond(design, spec, noise, ledger, tun)
    if algorithm == "precond":
        raise InvalidArgument("option algorithm='precond' is for the squared loss (dp_lm)")
    tun["algorithm"] = ("gd", tun["algorithm"][1])
    X = design.X
    n, d = X.shape
    y = np.asarray(design.y, dtype=float)
    if family == "binomial":
        if not np.all((y == 0) | (y == 1)):
            raise InvalidArgument("logistic regression needs a binary outcome coded 0/1 (declare its two levels)")
        y = 2.0 * y - 1.0
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(X))):
        raise InvalidArgument("the model matrix or outcome contains non-finite values (use na_action, or remove "
                         "infinite values)")
    mu = mu_from_eps_delta(spec.eps, spec.delta)
    C, T, step, schedule = tun["C"][0], tun["T"][0], tun["step"][0], tun["schedule"][0]
    public = design.public
    intercept_index = public.terms.index("Intercept") if public.has_intercept and "Intercept" in public.terms \
        else None
    warnings_out = []
    if tun["standardize"][0]:
        centre, half, c_y, h_y, raw = public_scaling(public, family)
        if np.any(centre != 0) or np.any(half != 1):
            X = (X - centre) / half          # public row-wise transform: the sensitivity is unchanged
        if c_y != 0.0 or h_y != 1.0:
            y = (y - c_y) / h_y
    else:
        centre, half, c_y, h_y = np.zeros(d), np.ones(d), 0.0, 1.0
        raw = [t for t in public.terms if t != "Intercept"]
    if raw:
        shown = ", ".join(repr(t) for t in raw[:6]) + (f" and {len(raw) - 6} more" if len(raw) > 6 else "")
        warnings_out.append(SCALE_WARNING.format(cols=shown))
    facts = {"description": "DP gradient descent with per-sample gradient clipping",
             "loss": "logistic" if family == "binomial" else "squared",
             "T": T, "mu": float(mu)}
    if neighbours == "add_remove":
        share = tun["n_share"][0]
        mu_n = mu * math.sqrt(share)
        mu_gd = mu * math.sqrt(1.0 - share)
        n_hat = gaussian_mechanism(float(n), sensitivity=1.0, mu=float(mu_n), noise=noise, ledger=ledger,
                                   statistic="n (number of rows)", share=share)
        n_pub = max(1.0, n_hat)  # post-processing of the release
        facts["n_hat"] = float(n_hat)
        delta_sens = C
    else:
        mu_gd = mu
        n_pub = float(n)
        facts["n"] = int(n)
        delta_sens = 2.0 * C
    # the largest mu_step with T mu_step^2 <= mu_gd^2 exactly (= mu_gd / sqrt(T) up to one rounding step)
    mu_step = gdp_step_mu(mu_gd, T)
    sigma = delta_sens / mu_step
    # the T gradient releases are written as one row with their composed cost (exact GDP composition)
    with ComposedReleases(ledger, statistic=f"sum of clipped per-sample gradients, {T} steps",
                          mechanism="gaussian", rule="gdp", claim={"mu": float(mu_gd)},
                          share=(1.0 - tun["n_share"][0]) if neighbours == "add_remove" else 1.0,
                          note=f"adaptive Gaussian releases at mu/sqrt(T) = {mu_step:.6g} each") as steps:
        theta = run(X, y, T=T, C=C, step=step, schedule=schedule, sigma=sigma, n_pub=n_pub, noise=noise,
                    family=family, sensitivity=float(delta_sens), mu_step=mu_step, ledger=steps)
    theta = unscale(theta, centre, half, c_y, h_y, intercept_index)
    facts.update({"gradient_sensitivity": float(delta_sens), "noise_sd_per_step": float(sigma),
                  "clipping": f"per-sample gradients clipped to L2 norm {C:g}; no data clipping"})
    if tun["standardize"][0] and (np.any(half != 1) or h_y != 1.0):
        facts["scaling"] = ("columns with declared ranges rescaled to [-1, 1] with those public constants; "
                            "coefficients mapped back to original units")
    return Release(method="dpgd", coef=theta, vcov=None, vcov_privacy=None, inference_note=INFERENCE_NOTE,
                   tuning=tun, facts=facts, warnings=warnings_out,
                   link="logit" if family == "binomial" else "identity")


def run(X, y, *, T, C, step, schedule, sigma, n_pub, noise, family="gaussian", theta0=None,
        sensitivity=None, mu_step=None, ledger=None):
    """The DP-GD iteration (module docstring). Each step releases the clipped gradient sum through
    :func:`~dpreg.privacy.mechanisms.gaussian_mechanism` (L2 sensitivity ``sensitivity``, cost
    ``mu_step``, noise scale ``sigma = sensitivity / mu_step``; its row goes to ``ledger``). ``C = inf``
    (no clipping, infinite sigma) is allowed only with the noise switched off
    (``NoiseSource(_noise_off=True)``): a test hook for the OLS limit, which releases nothing."""
    n, d = X.shape
    if not math.isfinite(sigma) and not getattr(noise, "_noise_off", False):
        raise InvalidArgument("dpgd: infinite noise scale (C = inf) is only a test configuration")
    row_norms = np.empty(n)
    rstep = max(1, _ROW_CHUNK_ENTRIES // max(d, 1))
    for i0 in range(0, n, rstep):
        Xc = np.asarray(X[i0:i0 + rstep], dtype=float)
        # rows above _MODERATE are recomputed overflow-free in clipped_gradient_sum: do not square them
        Xc = np.where(np.abs(Xc) <= _MODERATE, Xc, 0.0)
        row_norms[i0:i0 + rstep] = np.sqrt(np.einsum("ij,ij->i", Xc, Xc))
    theta = np.zeros(d) if theta0 is None else np.asarray(theta0, dtype=float).copy()
    for t in range(1, T + 1):
        G = clipped_gradient_sum(X, y, theta, C, family=family, row_norms=row_norms)
        if math.isfinite(sigma):
            G = gaussian_mechanism(G, sensitivity=sensitivity, mu=mu_step, noise=noise, ledger=ledger,
                                   statistic=f"clipped gradient sum, step {t}")
        theta = theta - step * _schedule(schedule, t) * G / n_pub
    return theta
