"""Private modified winsorized mean (PMWM) and the classic subsample-and-aggregate aggregators.

Derivations: ``docs/derivations/winsorized_sa.md`` §1.5, §2 (PMWM), §2.6 (feasibility), §3.5 (trimming
rule), §3.8 (clipped mean, widened winsorized mean). Paper: Ramsay and Spicker (2025), "Improved
subsample-and-aggregate via the private modified winsorized mean", Sections 2.4, 3.1-3.2.

The private quantiles are the one unbounded-quantile implementation of the package,
:func:`dpreg.privacy.quantile.upq`; this module only decides budgets, trimming and clipping,
and releases the clipped mean.

Budgets here are *internal* budgets in one currency: ``model="pure"`` (eps) or ``model="zcdp"`` (rho).
Every release adds a ledger row in that currency (``eps=`` for pure releases, ``rho=`` for zCDP ones).

Privacy of one PMWM call with budget ``B`` and split ``(s1, s2, s3)`` (docs/derivations/winsorized_sa.md §2.3)
--------------------------------------------------------------------------------
* two private quantiles, each with threshold budget ``B*s1/2`` and step budget ``B*s2/2``
  (each (eps_thr + eps_step)-DP by the AboveThreshold argument of docs/derivations/winsorized_sa.md §1.6; in zCDP either the
  pure quantile converted by eps -> eps^2/2 or the Gaussian variant of docs/derivations/winsorized_sa.md §1.5);
* the clipped mean ``(1/n) sum clip(x_i, q_lo, q_hi)``: replacing one record moves one clipped value
  inside ``[q_lo, q_hi]``, so the mean moves by at most ``Delta = (q_hi - q_lo)/n`` (replace-one,
  n public). ``q_lo``, ``q_hi`` are already released, so this is adaptive composition. Laplace noise
  ``Lap(Delta/(B*s3))`` is ``B*s3``-DP; Gaussian noise ``N(0, Delta^2/(2*B*s3))`` is ``B*s3``-zCDP
  (Bun and Steinke 2016, Prop. 1.6: sensitivity D and variance D^2/(2 rho)).
* total: ``B*(s1 + s2 + s3) = B`` by basic (adaptive) composition.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgument
from ..privacy.ledger import Ledger
from ..privacy.mechanisms import NoiseSource, gaussian_mechanism, laplace_mechanism
from ..privacy.requests import check_budget_split
from ..privacy.selection_mechanisms import interval_exponential_mechanism

#: constants of the feasibility and trimming rules (docs/derivations/winsorized_sa.md §2.6 and §3.5; calibrated by simulation)
KAPPA_O = 4.0
KAPPA_P = 8.0
#: paper Section 3.2 / authors' code: cap of the trimming proportion without contamination
CAP_PAPER = 0.025
#: docs/derivations/winsorized_sa.md §3.5: cap of the trimming proportion for the S&A aggregator (a project choice)
CAP_SA = 0.25
DEFAULT_SPLIT = (0.25, 0.25, 0.5)
DEFAULT_BETA = 1.001

FEASIBILITY_WARNING = ("PMWM budget too small for n: quantile search may stop early or overshoot; "
                       "expect large error")


def _upq():
    from ..privacy.quantile import upq
    return upq


# ------------------------------------------------------------------------------------------------
# public-quantity helpers (no data)
# ------------------------------------------------------------------------------------------------
def check_split(split) -> tuple[float, float, float]:
    """The (threshold, steps, mean) budget split of the winsorized mean: 3 positive shares summing to 1
    with equal threshold and step shares."""
    s = check_budget_split(split, 3, message="split must be 3 positive numbers summing to 1", sum_to_one=True)
    if abs(s[0] - s[1]) > 1e-12:
        # the package's quantile search splits each quantile's budget equally between threshold and
        # steps (docs/derivations/winsorized_sa.md §1.5); every split studied in the paper (Appendix A.4) has s1 == s2
        raise InvalidArgument("split must have equal threshold and step shares: (s, s, 1 - 2s)")
    return s


def grid_steps(lower: float, upper: float, beta: float) -> int:
    """K_max of docs/derivations/winsorized_sa.md §1.2: first k with ``lower - 1 + beta^k >= upper``. The span of public bounds near
    +-1.8e308 overflows a double; its logarithm is taken as log 2 + log(span / 2) instead."""
    span = upper - lower + 1.0
    log_span = math.log(span) if math.isfinite(span) else \
        math.log(2.0) + math.log(upper / 2.0 - lower / 2.0 + 0.5)
    return int(math.ceil(log_span / math.log(beta)))


def threshold_scale(budget: float, model: str, quantile_noise: str, split, *, n_quantiles: int = 2) -> float:
    """``s_q`` of docs/derivations/winsorized_sa.md §2.6 and §3.5: scale (in counts) of the threshold noise of one quantile.

    ``n_quantiles`` = 2 for the two-sided PMWM (each quantile gets half of s1 and s2), 1 for the
    one-sided variant of docs/derivations/winsorized_sa.md §2.5 (the quantile gets all of s1 and s2).
    """
    s1, s2, _ = split
    share = 1.0 / n_quantiles
    if model == "pure":
        return 1.0 / (budget * s1 * share)
    if quantile_noise == "gaussian":
        return 1.0 / math.sqrt(budget * s1 * share)
    # zCDP with the pure-DP (exponential/laplace) search converted: eps_q = sqrt(2 rho_q)
    eps_q = math.sqrt(2.0 * budget * (s1 + s2) * share)
    return 1.0 / (eps_q * s1 / (s1 + s2))


def feasible_count(s_q: float, steps: int) -> int:
    """Smallest count of values for which the quantile search is reliable (docs/derivations/winsorized_sa.md §2.6)."""
    return int(math.ceil(s_q * (math.log(max(steps, 1)) + KAPPA_O + KAPPA_P)))


def trim_proportion(n: int, *, trim_count: int = 10, eta: float = 0.0, trim: str = "paper",
                    s_q: float | None = None, cap: float | None = None) -> tuple[float, int]:
    """Trimming proportion xi and effective trim count (docs/derivations/winsorized_sa.md §2.2 ``trim="paper"``, 3.5 ``"adaptive"``)."""
    if trim == "paper":
        c_eff = int(trim_count)
        cap_base = CAP_PAPER if cap is None else cap
    elif trim == "adaptive":
        if s_q is None:
            raise InvalidArgument("adaptive trimming needs the threshold noise scale")
        c_eff = max(int(trim_count), int(math.ceil(KAPPA_O * s_q)))
        cap_base = CAP_SA if cap is None else cap
    else:
        raise InvalidArgument("trim must be 'paper' or 'adaptive'")
    xi = min(max(c_eff / n, eta), max(cap_base, eta))
    return float(xi), c_eff


def xi_theoretical(n: int, eta: float, conf_delta: float) -> float:
    """Lugosi-Mendelson constants; public quantities only (docs/derivations/winsorized_sa.md §2.1; the published constants are not legible, these are a reconstruction)."""
    return float(min(0.49, 8.0 * eta + 12.0 * math.log(4.0 / conf_delta) / n))


def quantile_budgets(budget: float, model: str, split, *, n_quantiles: int = 2) -> dict:
    """Per-quantile budget (docs/derivations/winsorized_sa.md §2.3), as keyword arguments of ``upq`` plus the threshold share."""
    s1, s2, _ = split
    share = 1.0 / n_quantiles
    if model == "pure":
        return {"eps": budget * (s1 + s2) * share, "threshold_share": s1 / (s1 + s2)}
    return {"rho": budget * (s1 + s2) * share, "threshold_share": s1 / (s1 + s2)}


# ------------------------------------------------------------------------------------------------
# private releases
# ------------------------------------------------------------------------------------------------
def private_quantile(x, q, *, lower, upper, budget_kw, quantile_noise, beta, noise, ledger, statistic,
                     max_steps=None, direction=None):
    """One call of the package's unbounded private quantile (``privacy.quantile.upq``);
    ``direction`` as there (None: by q)."""
    kw = dict(budget_kw)
    kw.pop("threshold_share", None)  # always 1/2 here: check_split enforces s1 == s2
    return _upq()(x, q, lower=lower, upper=upper, noise=noise, ledger=ledger, beta=beta,
                  quantile_noise=quantile_noise, max_steps=max_steps, statistic=statistic,
                  direction=direction, **kw)


def _values(x):
    """A float array, or a column read in batches (``sources.columns.ValueColumn``: quantile searches on
    binned counts, an exact clipped mean) as it is."""
    return x if hasattr(x, "clipped_mean") else np.asarray(x, dtype=float)


def clipped_mean(x, lo: float, hi: float) -> float:
    """``mean(clip(x, lo, hi))`` without noise, total on finite input: the value the mean step of
    :func:`noisy_clipped_mean` adds its noise to (its bootstrap replicates use it too)."""
    x = _values(x)
    n = x.shape[0]
    lo, hi = float(lo), float(hi)
    if hasattr(x, "clipped_mean"):
        # a column read in batches (dp_mean, any source): the exact mean, rounded once, so the same
        # float whatever the batches (sources.columns; no overflow for values near +-1e308)
        return float(x.clipped_mean(lo, hi))
    if not math.isfinite(hi / n - lo / n) or not (abs(lo) < 1e300 and abs(hi) < 1e300):
        return float(np.sum(np.clip(x, lo, hi) / n))  # each term <= 1e308/n: the sum cannot overflow
    return float(np.mean(np.clip(x, lo, hi)))


def noisy_clipped_mean(x, lo: float, hi: float, *, budget: float, model: str, noise: NoiseSource,
                       ledger: Ledger, statistic: str = "clipped mean", lower_sens: float | None = None,
                       share: float | None = None, cost_as_rho: bool = False) -> tuple[float, float]:
    """Release ``mean(clip(x, lo, hi)) + noise`` (docs/derivations/winsorized_sa.md §2.4).

    Sensitivity (replace-one, n public): one record's clipped value moves within [lo, hi], so the
    mean moves by at most ``Delta = (hi - lo)/n``. Pure: ``Lap(Delta/budget)`` (budget-DP).
    zCDP: ``N(0, Delta^2/(2*budget))`` (budget-zCDP). ``lo``/``hi`` must be public (declared or
    already released). Returns ``(value, noise_sd)``.
    """
    x = _values(x)
    n = x.shape[0]
    lo, hi = float(lo), float(hi)
    delta_sens = hi / n - lo / n                 # (hi - lo)/n without overflowing for ends near 1e308
    m = clipped_mean(x, lo, hi)
    if model == "pure":
        value = laplace_mechanism(m, sensitivity_l1=delta_sens, eps=budget, noise=noise, ledger=ledger,
                                  statistic=statistic, share=share, cost_as_rho=cost_as_rho)
        sd = math.sqrt(2.0) * delta_sens / budget
    else:
        # rho-zCDP Gaussian of sd Delta/sqrt(2 rho): mu = sqrt(2 rho), written as rho in the ledger
        sd = delta_sens / math.sqrt(2.0 * budget)
        value = gaussian_mechanism(m, sensitivity=delta_sens, mu=math.sqrt(2.0 * budget), noise=noise,
                                   ledger=ledger, statistic=statistic, share=share, cost_as_rho=True)
    return float(value), float(sd)


@dataclass
class PMWMResult:
    estimate: float
    q_lo: float
    q_hi: float
    xi: float
    sensitivity: float          # Delta = (q_hi - q_lo)/n (computed from released values)
    noise_sd: float             # sd of the mean-step noise
    crossed: bool = False
    near_bound: bool = False
    clamped: bool = False
    reached_max_steps: bool = False
    warnings: list = field(default_factory=list)


def _flags(res):
    return (bool(getattr(res, "near_bound", False)), bool(getattr(res, "clamped", False)),
            bool(getattr(res, "reached_max_steps", False)))


def pmwm(x, *, lower: float, upper: float, budget: float, model: str = "pure", xi: float,
         split=DEFAULT_SPLIT, beta: float = DEFAULT_BETA, quantile_noise: str = "exponential",
         crossing: str = "bounds", noise: NoiseSource, ledger: Ledger, label: str = "mean",
         clamp_output: bool = False, anchor: float | None = None) -> PMWMResult:
    """Practical PMWM (docs/derivations/winsorized_sa.md §2.4). ``xi`` is public (from :func:`trim_proportion`).

    Where the searches start (every start is public or already released):
    * both bounds finite: q_hi walks up from ``lower``, q_lo down from ``upper`` (docs/derivations/winsorized_sa.md §2.4);
    * ``lower`` finite only: q_hi walks up from it, then q_lo walks down from the released q_hi;
    * ``upper`` finite only: q_lo walks down from it, then q_hi walks up from the released q_lo;
    * neither: ``anchor`` (a released value) is required; q_hi walks up and q_lo down from it.
    A low quantile is never searched upward (nor a high one downward): the noisy walk would have to
    pass thousands of grid steps with a count margin of only xi n and would stop early.

    Noise draw order (docs/derivations/winsorized_sa.md §5.5): upper quantile (threshold, steps), lower quantile, mean noise (the
    lower quantile first when only ``upper`` is finite).
    """
    x = _values(x)
    n = x.shape[0]
    qkw = quantile_budgets(budget, model, split, n_quantiles=2)
    fin_lo, fin_hi = math.isfinite(lower), math.isfinite(upper)
    if not fin_lo and not fin_hi and anchor is None:
        raise InvalidArgument("pmwm: without finite bounds a released anchor is needed")

    def q(level, lo, hi, name):
        return private_quantile(x, level, lower=lo, upper=hi, budget_kw=qkw, quantile_noise=quantile_noise,
                                beta=beta, noise=noise, ledger=ledger, statistic=f"{label}.{name}")

    if fin_lo and fin_hi:
        r_hi = q(1.0 - xi, lower, upper, "q_hi")
        r_lo = q(xi, lower, upper, "q_lo")
    elif fin_lo:
        r_hi = q(1.0 - xi, lower, upper, "q_hi")
        r_lo = q(xi, lower, max(float(r_hi.estimate), lower + 1e-9 * max(1.0, abs(lower))), "q_lo")
    elif fin_hi:
        r_lo = q(xi, lower, upper, "q_lo")
        r_hi = q(1.0 - xi, min(float(r_lo.estimate), upper - 1e-9 * max(1.0, abs(upper))), upper, "q_hi")
    else:
        r_hi = q(1.0 - xi, float(anchor), upper, "q_hi")
        r_lo = q(xi, lower, float(anchor), "q_lo")
    q_hi, q_lo = float(r_hi.estimate), float(r_lo.estimate)
    crossed = q_lo > q_hi
    if crossed:  # post-processing of released values
        if crossing == "swap":
            q_lo, q_hi = q_hi, q_lo
        else:
            q_lo, q_hi = float(lower), float(upper)
    value, sd = noisy_clipped_mean(x, q_lo, q_hi, budget=budget * split[2], model=model, noise=noise,
                                   ledger=ledger, statistic=f"{label}.mean", share=None)
    if clamp_output:
        value = float(min(max(value, lower), upper))
    f_hi, f_lo = _flags(r_hi), _flags(r_lo)
    return PMWMResult(estimate=value, q_lo=q_lo, q_hi=q_hi, xi=float(xi), sensitivity=(q_hi - q_lo) / n,
                      noise_sd=sd, crossed=bool(crossed), near_bound=f_hi[0] or f_lo[0],
                      clamped=f_hi[1] or f_lo[1], reached_max_steps=f_hi[2] or f_lo[2])


def pmwm_one_sided(x, *, lower: float, upper: float, budget: float, model: str = "pure", xi: float,
                   split=DEFAULT_SPLIT, beta: float = DEFAULT_BETA, quantile_noise: str = "exponential",
                   noise: NoiseSource, ledger: Ledger, label: str = "spread") -> PMWMResult:
    """One-sided PMWM (docs/derivations/winsorized_sa.md §2.5): public lower bound ``lower``; only the upper clip point is estimated
    and gets the whole quantile share. Privacy: ``B*s1 + B*s2 + B*s3 = B``."""
    x = _values(x)
    n = x.shape[0]
    qkw = quantile_budgets(budget, model, split, n_quantiles=1)
    r_hi = private_quantile(x, 1.0 - xi, lower=lower, upper=upper, budget_kw=qkw,
                            quantile_noise=quantile_noise, beta=beta, noise=noise, ledger=ledger,
                            statistic=f"{label}.q_hi")
    q_hi = float(r_hi.estimate)
    value, sd = noisy_clipped_mean(x, lower, q_hi, budget=budget * split[2], model=model, noise=noise,
                                   ledger=ledger, statistic=f"{label}.mean")
    f = _flags(r_hi)
    return PMWMResult(estimate=value, q_lo=float(lower), q_hi=q_hi, xi=float(xi),
                      sensitivity=(q_hi - lower) / n, noise_sd=sd, near_bound=f[0], clamped=f[1],
                      reached_max_steps=f[2])


# ------------------------------------------------------------------------------------------------
# classic aggregators (docs/derivations/winsorized_sa.md §3.8)
# ------------------------------------------------------------------------------------------------
def clipped_mean_aggregate(x, *, lower: float, upper: float, budget: float, model: str, noise: NoiseSource,
                           ledger: Ledger, label: str = "mean") -> PMWMResult:
    """Standard S&A aggregator: mean of values clipped to the public [lower, upper] plus noise with
    sensitivity (upper - lower)/k (see :func:`noisy_clipped_mean`)."""
    x = _values(x)
    value, sd = noisy_clipped_mean(x, lower, upper, budget=budget, model=model, noise=noise, ledger=ledger,
                                   statistic=f"{label}.clipped_mean")
    return PMWMResult(estimate=value, q_lo=float(lower), q_hi=float(upper), xi=0.0,
                      sensitivity=(upper - lower) / x.shape[0], noise_sd=sd)


def _em_quantile(z_ext, q, eps, noise, ledger, statistic, model="pure"):
    """Exponential mechanism for the q-quantile over the intervals of the sorted, clipped values
    (Smith 2011). Interval i in {0..k} = [z_i, z_{i+1}] with utility -|i - q k|; replacing one record
    shifts the rank of every interval by at most 1, so the utility has sensitivity 1 and the weights
    ``len_i * exp(-eps |i - qk| / 2)`` give eps-DP
    (:func:`dpreg.privacy.selection_mechanisms.interval_exponential_mechanism`)."""
    k = z_ext.shape[0] - 2
    i = np.arange(k + 1)
    # the interval's choice and the point inside it are drawn by the mechanism (which writes the row)
    return interval_exponential_mechanism(z_ext, -np.abs(i - q * k), eps=float(eps), sensitivity=1.0, noise=noise,
                                          ledger=ledger, statistic=statistic, cost_as_rho=(model != "pure"))


def wwm_aggregate(x, *, lower: float, upper: float, budget: float, model: str, noise: NoiseSource,
                  ledger: Ledger, label: str = "mean", zeta: float = 0.1) -> PMWMResult:
    """Widened winsorized mean (Smith 2011), docs/derivations/winsorized_sa.md §3.8. Pure budget b: two EM quartiles (b/4 each),
    Laplace mean of values clipped to the widened interval (b/2), sensitivity (hi - lo)/k.
    zCDP budget rho: run the pure version with b = sqrt(2 rho) (b-DP implies b^2/2 = rho zCDP);
    each pure part eps_i is recorded as its zCDP cost eps_i^2/2 (sum 3/8 rho <= rho)."""
    x = np.asarray(x, dtype=float)
    k = x.shape[0]
    b = budget if model == "pure" else math.sqrt(2.0 * budget)
    z = np.sort(np.clip(x, lower, upper))
    z_ext = np.concatenate(([lower], z, [upper]))
    a_hat = _em_quantile(z_ext, 0.25, b / 4.0, noise, ledger, f"{label}.wwm_q25", model)
    b_hat = _em_quantile(z_ext, 0.75, b / 4.0, noise, ledger, f"{label}.wwm_q75", model)
    mid, iqr = (a_hat + b_hat) / 2.0, abs(b_hat - a_hat)
    r = k ** (1.0 / 3.0 + zeta)
    lo, hi = mid - 4.0 * r * iqr, mid + 4.0 * r * iqr
    # under zCDP the pure Laplace release is written with its zCDP cost (b/2)^2/2
    value, sd = noisy_clipped_mean(z, lo, hi, budget=b / 2.0, model="pure", noise=noise, ledger=ledger,
                                   statistic=f"{label}.wwm_mean", cost_as_rho=(model != "pure"))
    return PMWMResult(estimate=value, q_lo=lo, q_hi=hi, xi=0.0, sensitivity=(hi - lo) / k, noise_sd=sd)
