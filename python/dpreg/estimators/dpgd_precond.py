"""The squared loss of ``method="dpgd"`` with public ranges: clipped-gradient steps preconditioned by
a released Gram matrix (:func:`fit_linear_precond`, issue 13)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import Diagnostic
from ..inference import dpgd as _inf_gd
from ..privacy import sensitivity
from ..privacy.mechanisms import gaussian_mechanism
from ..release import Release
from . import _ssp
from ._dpgd_core import clipped_gradient_sum, public_scaling
from .dpgd_logistic import _pd_floor

# --------------------------------------------------------------------------------------------------
# squared loss: clipped-gradient steps preconditioned by a released Gram matrix (issue 13)
# --------------------------------------------------------------------------------------------------
#: shares of mu^2: the Gram matrix only preconditions the steps (the fixed point of the iteration is
#: set by the clipped gradients alone), so most of the budget goes to the gradients
PRECOND_SHARES = {"gram": 0.25, "gradient": 0.75}
#: default number of steps. With the exact Gram one step reaches the (clipped-gradient) optimum from 0;
#: with the released one each step contracts the error by ||I - (G_hat + lam I)^{-1} X'X||, which is
#: small wherever the released Gram is well above its noise; a few more steps remove what the ridge
#: slows down. The noise of each gradient release grows like sqrt(T), so T stays small
#: (benchmarked: ``python -m benchmarks accuracy --methods dpgd``; see docs/accuracy.md)
PRECOND_T = 6
#: per-sample gradient clip on the scaled problem (rows of norm <= 1, outcome in [-1, 1]): the gradient
#: of row i is r_i x_i with |r_i| <= 1 + |x_i'theta|; C = 1 leaves every row with a residual below 1 on
#: that scale unclipped (residuals of a fitted model are a fraction of the outcome's range)
PRECOND_C = 1.0
#: share of the last iterates averaged into the estimate (issue 13): near the fixed point each iterate
#: carries the noise of one gradient release made at 1/T of the gradient budget, fresh at every step, so
#: the mean of the last k has about 1/k of that variance (post-processing of releases). Where the
#: iteration is still contracting (noise-dominated designs, a large ridge) the mean also shrinks toward
#: the earlier iterates. Measured (``python -m benchmarks accuracy --methods dpgd``, declared ranges,
#: 8 seeds, median test MSE / OLS, last iterate -> mean of the last 3 of 6): penguins 4.39 -> 2.74
#: (eps = 1) and 1.85 -> 1.60 (eps = 8), Wage 1.39 -> 1.30 and 1.07 -> 1.05, Credit 17.5 -> 16.8 and
#: 6.4 -> 7.0; on diamonds, Bikeshare and the synthetic design within 3% either way (3 seeds)
PRECOND_AVERAGE = 0.5
#: share of mu^2 for the residual moments of the estimate when inference is on (issue 13; AdaSSP's
#: inference_share): about 5% more noise s.d. on the Gram and gradient releases
PRECOND_INFERENCE_SHARE = 0.10
#: how many r.m.s. Gram-noise norms are taken off the released Gram for the lower bound on X'X of
#: the verdict (inference/dpgd.py, curvature_lower_bound)
PRECOND_CURVATURE_Z = 1.0
#: the covariance and the bias use the plug-in contraction I - K G_0 (docs/derivations/dpgd.md §3a)
#: only where the verdict also holds with this many r.m.s. Gram-noise norms taken off: a fit that
#: passes the check by less owes it to its Gram noise (selection: where few fits are certified, those
#: that are drew noise that raised the weak direction's curvature, and the plug-in then overstates it;
#: measured: correlated design, n = 1000, eps = 4, 4% certified, plug-in intervals covered 0.75-0.80).
#: Those keep the lower bound (the former, conservative covariance). 1.25 set by measurement
#: (docs/validity.md, DP-GD)
PRECOND_PLUGIN_MARGIN_Z = 1.25
#: share (before the inference share is taken out, like PRECOND_SHARES) of mu^2 moved from the
#: gradients to a second release of X'X when inference is requested, the first released Gram does not
#: certify the contraction (docs/derivations/dpgd.md §4), and the same check with the noise of the
#: combined release (0.225 + 0.2025 of mu^2: sigma1 / 1.38) would pass (issue 13, small data). Decided from the first release only (post-processing), so the split
#: composes adaptively; where the check predicts no gain nothing is moved
PRECOND_TOPUP_SHARE = 0.225
#: the correlation of the errors of ESS_hat and RSS_hat that dpgd's R^2 interval allows for (issue 12,
#: twenty-fifth pass; docs/derivations/dpgd.md §7): measured -0.28 to +0.20 on the uniform design (n 1000 and
#: 3000, eps 1 and 4, 100-200 fits per cell), not explained by their first-order covariance through the
#: shared gradient and Gram noise (predicted |correlation| below 0.01); over five cells (n 1000-10^4) the
#: intervals (before the tail allowance) held the data's least-squares R^2 in 0.930-0.955 of 200 fits per
#: cell with independence, and in 0.945-0.985 with -0.3 (5-9% wider). AdaSSP's sums measured -0.41 to
#: +0.35 (adassp_boosted.md §15), where independence is kept. Twenty-sixth pass (dpgd.md §8): the
#: second-order covariance of the coefficient noise's quadratic parts, 2 tr(C V M V), explains the positive
#: correlations at eps = 1 (predicted +0.21, measured +0.24 at n = 1000) but not the negative ones (n = 1000,
#: eps = 4: +0.07 against -0.21); using it would narrow the interval where they are negative, so this
#: allowance for the unexplained part stays (the derived bound -1 costs about 21% of width at n = 3000)
PRECOND_R2_SUMS_CORRELATION = -0.3


def _precond_applicable(public, options):
    """The preconditioned iteration needs the schema scaling: a public interval for every numeric column
    and for the outcome (always there through dp_lm, which declares or privately estimates them for
    NEEDS_BOUNDS methods). Options of the plain iteration (step, schedule, ...) select it instead."""
    if any(k in options for k in ("step", "schedule", "standardize", "n_share")):
        return False
    oi = public.outcome_interval
    if oi is None or not (np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]):
        return False
    _, _, _, _, raw = public_scaling(public, "gaussian")
    return not raw


def precond_sensitivities(neighbours, C):
    """L2 sensitivities on the schema-scaled design (every possible row has ||x|| <= 1).

    * X'X (Frobenius): ||x x' - z z'||_F^2 = ||x||^4 + ||z||^4 - 2 (x'z)^2 <= 2: sqrt(2) (replace-one),
      1 (add/remove).
    * sum_i clip_C(grad_i): each summand has norm <= C: 2C (replace-one), C (add/remove).
    """
    return {"gram": sensitivity.xtx_frobenius(1.0, neighbours),
            "gradient": sensitivity.clipped_gradient_sum(C, neighbours)}


def _without_empty_levels(sd, G, sigma_G, design, spec, full):
    """The design without the factor-level columns whose released count shows no rows (AdaSSP's rule,
    issue 12; post-processing of G): (sd, G, keep, X, y, n, d), ``keep`` None when nothing is dropped."""
    _, _, X, y, n, d = full
    drop = _ssp.uninformative_dummies(G, sigma_G, design.public.factor_blocks,
                                      n=n if spec.neighbours == "replace_one" else None,
                                      dummy_sq=(float(sd.tau_x) / float(sd.B_bar)) ** 2)
    if not drop:
        return sd, G, None, X, y, n, d
    sd, G, keep = _ssp.reduce_design(sd, G, drop)
    X = sd.X
    return sd, G, keep, X, np.asarray(sd.y, dtype=float), X.shape[0], X.shape[1]


def fit_linear_precond(design, spec, noise, ledger, tun):
    """Linear DP-GD in the standardised parametrisation with a private preconditioner.

    Rows are scaled by the public (declared or privately estimated) ranges so that every possible row
    has norm <= 1 and the outcome lies in [-1, 1] (the schema scaling of AdaSSP). G = X'X is released
    once (Gaussian mechanism); then for t = 1..T

        theta_t = theta_{t-1} - (G_hat + lam I)^{-1} (sum_i clip_C(grad_i(theta_{t-1})) + sigma z_t)

    and the estimate is the mean of the last PRECOND_AVERAGE * T iterates (post-processing)

    with lam = 2 sqrt(d) sigma_G (keeps the floored released matrix well conditioned). Each gradient
    release is evaluated at theta_{t-1}, a function of earlier releases only, so the releases compose
    adaptively (exact in Gaussian DP). Plain DP-GD's step ignores the curvature of the scaled design:
    along a column whose spread is small next to its public range the curvature is tiny and a fixed step
    crawls (7-20 x OLS test MSE on real data in 100 steps); the released Gram corrects that in a few
    steps. Without clipping the fixed point is least squares on the scaled problem; with clipping it is
    the root of the clipped-gradient equation (a Huber-like M-estimator), so the estimate is not a
    function of the released X'y as in sufficient-statistics perturbation (AdaSSP).

    With inference (spec.inference, the default) PRECOND_INFERENCE_SHARE of mu^2 releases the residual
    moments at the estimate and the covariance of docs/derivations/dpgd.md is attached
    (:func:`_attach_inference`); factor levels whose released count shows no rows are left out (NA)."""
    from ..design.scaling import scale_design
    from ..privacy.accounting import mu_from_eps_delta

    sd = scale_design(design, mode="schema", tau_x=1.0)
    X, y = sd.X, np.asarray(sd.y, dtype=float)
    n, d = X.shape
    T, C = tun["T"][0], tun["C"][0]
    mu = mu_from_eps_delta(spec.eps, spec.delta)
    sens = precond_sensitivities(spec.neighbours, C)
    inference = bool(getattr(spec, "inference", True))
    # issue 13: with inference, a share of mu^2 releases the residual moments of the estimate (the
    # bundle of AdaSSP), the rest is split between Gram and gradients as without inference
    inf_share = PRECOND_INFERENCE_SHARE if inference else 0.0
    shares = {k: v * (1.0 - inf_share) for k, v in PRECOND_SHARES.items()}
    if inference:
        shares["inference"] = inf_share
    mu_g = mu * math.sqrt(shares["gram"])
    G = gaussian_mechanism(X.T @ X, sensitivity=sens["gram"], mu=mu_g, noise=noise, ledger=ledger,
                           statistic="XtX (scaled design)", share=shares["gram"], symmetric_matrix=True)
    sigma_G = sens["gram"] / mu_g
    keep = None
    full = (sd, G, X, y, n, d)
    if inference:
        # a factor level whose released count shows no rows (a declared level never observed) has no
        # estimable coefficient: its column is left out and reported as NA (post-processing of G, the
        # rule of AdaSSP, issue 12); the remaining rows keep norm <= 1, so every sensitivity holds
        sd, G, keep, X, y, n, d = _without_empty_levels(sd, G, sigma_G, design, spec, full)
    k = max(1, int(round(PRECOND_AVERAGE * T)))
    not_estimable = None
    if inference:
        # whether the covariance can be certified depends on the released G alone (the contraction
        # with a lower bound on X'X, docs/derivations/dpgd.md §4), so it is decided before the
        # gradient steps: where it cannot, no budget is spent on the residual moments and their share
        # goes to the gradients (the split is a function of an earlier release: adaptive composition),
        # and the fit is the one without inference (all columns kept)
        remaining = _certified_remaining(G, _preconditioner(G, sigma_G), sigma_G, T, k)
        topup = PRECOND_TOPUP_SHARE * (1.0 - inf_share)
        if remaining > _inf_gd.MAX_REMAINING and topup > 0 and shares["gradient"] > topup:
            # issue 13, small data: would a Gram release with less noise certify it? The same check on
            # the released G with the noise scale of the combined release (post-processing of G). Only
            # then is a second X'X released (share ``topup`` from the gradients) and averaged with the
            # first (inverse-variance weights: the pair is one Gaussian release at the summed share)
            s_g = shares["gram"]
            sigma_c = sens["gram"] / (mu * math.sqrt(s_g + topup))
            if _certified_remaining(G, _preconditioner(G, sigma_c), sigma_c, T, k) <= _inf_gd.MAX_REMAINING:
                sd0, _, X0, _, _, _ = full
                G2 = gaussian_mechanism(X0.T @ X0, sensitivity=sens["gram"], mu=mu * math.sqrt(topup),
                                        noise=noise, ledger=ledger,
                                        statistic="XtX (scaled design), second release for inference",
                                        share=topup, symmetric_matrix=True)
                shares["gradient"] -= topup
                shares["gram_topup"] = topup
                G = (s_g * full[1] + topup * G2) / (s_g + topup)
                sigma_G = sigma_c
                sd, X, y, n, d = sd0, X0, full[3], full[4], full[5]
                full = (sd, G, X, y, n, d)
                sd, G, keep, X, y, n, d = _without_empty_levels(sd, G, sigma_G, design, spec, full)
                remaining = _certified_remaining(G, _preconditioner(G, sigma_G), sigma_G, T, k)
        if remaining > _inf_gd.MAX_REMAINING:
            not_estimable = remaining
            shares["gradient"] += shares.pop("inference")
            (sd, G, X, y, n, d), keep = full, None
    lam = 2.0 * math.sqrt(d) * sigma_G
    K = _preconditioner(G, sigma_G)
    mu_grad = mu * math.sqrt(shares["gradient"] / T)
    sigma_grad = sens["gradient"] / mu_grad
    theta = np.zeros(d)
    iterates = []
    for t in range(1, T + 1):
        g = clipped_gradient_sum(X, y, theta, C, family="gaussian")
        g_hat = gaussian_mechanism(g, sensitivity=sens["gradient"], mu=mu_grad, noise=noise, ledger=ledger,
                                   statistic=f"sum of clipped per-sample gradients, step {t}",
                                   share=shares["gradient"] / T)
        theta = theta - K @ g_hat
        iterates.append(theta)
    theta = np.mean(iterates[-k:], axis=0)      # the estimate: the mean of the last k iterates
    beta = sd.M @ theta + sd.m
    facts = {"description": "DP gradient descent preconditioned by a released X'X, per-sample gradient "
                            "clipping, on the schema-scaled design",
             "loss": "squared", "T": T, "mu": float(mu), "algorithm": "precond", "averaged_iterates": k,
             "noise_sd_gradient": float(sigma_grad), "noise_sd_gram": float(sigma_G), "gram_ridge": float(lam),
             "gradient_sensitivity": float(sens["gradient"]), "noise_sd_per_step": float(sigma_grad),
             "sensitivities": {k: float(v) for k, v in sens.items()}, "shares": dict(shares),
             "clipping": f"per-sample gradients clipped to L2 norm {C:g} on the scaled problem",
             "scaling": "columns centred and scaled into [-1, 1] with their public (declared or privately "
                        "estimated) ranges, rows divided by the norm budget; coefficients mapped back exactly"}
    if spec.neighbours == "replace_one":
        facts["n"] = int(n)
    from .adassp import report_levels_without_intervals
    if not inference:
        rel = Release(method="dpgd", coef=beta, vcov=None, vcov_privacy=None,
                      inference_note="inference not requested (inference=False); the whole budget went to "
                                     "the estimate",
                      tuning=tun, facts=facts, warnings=[], link="identity")
        # twenty-fourth pass (docs/derivations/adassp_boosted.md §43): no interval is released, so a level
        # whose released count (the diagonal of G, for the full design) is at most 0 is NA
        report_levels_without_intervals(rel, design, None, np.diag(G))
        return rel
    if not_estimable is not None:
        facts["remaining_contraction"] = float(not_estimable)
        rel = Release(method="dpgd", coef=beta, vcov=None, vcov_privacy=None,
                      inference_note=NOT_ESTIMABLE_NOTE if "gram_topup" not in shares else NOT_ESTIMABLE_AFTER_TOPUP,
                      tuning=tun, facts=facts, warnings=[], link="identity")
        report_levels_without_intervals(rel, design, None, np.diag(G))
    else:
        rel = Release(method="dpgd", coef=beta, tuning=tun, facts=facts, warnings=[], link="identity")
        _attach_inference(rel, sd, X, y, theta, G, K, sigma_G=sigma_G, sigma_grad=sigma_grad, T=T, k=k,
                          mu=mu, share=inf_share, spec=spec, noise=noise, ledger=ledger)
        # twenty-first pass (docs/derivations/adassp_boosted.md §30, as BoostedAdaSSP): a kept level whose
        # released count, allowing for the keep rule's gate, cannot rule out a declared level with no rows
        # gets no interval (the validity grid: the zero-row level printed one in about 1% of fits)
        from .adassp import withhold_possibly_empty_levels
        withhold_possibly_empty_levels(rel, design, keep, G, sigma_G, _ssp.NOT_ESTIMABLE_Z)
        report_levels_without_intervals(rel, design, keep, np.diag(G))
    if keep is not None:
        from .adassp import restore_columns
        rel = restore_columns(rel, keep, design)
    return rel


# what helps names BoostedAdaSSP (nineteenth pass): auto fits dpgd on declared factor data up to the index 100,
# where AdaSSP's default withholds the intervals along the hidden directions (eighteenth pass) and
# BoostedAdaSSP released valid ones on most real designs (docs/accuracy.md, "auto on declared factor data
# after AdaSSP's withholding")
NOT_ESTIMABLE_NOTE = (
    "standard errors not estimable at this n and eps: the released Gram matrix does not resolve the "
    "curvature of every direction, so the gradient steps may have left much of the coefficients' "
    "starting point (0) in some direction, a bias that no release bounds; no budget was spent on "
    "inference. More rows, a larger eps, or fewer or less collinear columns (e.g. fewer factor levels) "
    "help; method='boosted_adassp' may print intervals here (wider, from its own larger share of the "
    "budget for X^T X, about its own estimate), and method='adassp' with hidden_directions='assume' under "
    "an assumption the released Gram matrix cannot confirm")


# the second X'X release was made (it looked able to certify the curvature) and still did not: its
# budget is not lost, the combined release preconditions the gradient steps (newcomer review 17: the note
# said "no budget was spent on inference" beside that ledger row)
NOT_ESTIMABLE_AFTER_TOPUP = NOT_ESTIMABLE_NOTE.replace(
    "no budget was spent on inference",
    "a second X'X release, made to certify it, did not either (it is averaged into the preconditioner of "
    "the gradient steps), and no budget was spent on the residual moments")


def _preconditioner(G, sigma_G):
    """K = (G_0 + lam I)^-1, G_0 the released G with negative eigenvalues set to 0, lam = 2 sqrt(d) sigma_G."""
    d = G.shape[0]
    return np.linalg.inv(_pd_floor(G, 0.0) + 2.0 * math.sqrt(d) * sigma_G * np.eye(d))


def _contraction(G, K, sigma_G, z=PRECOND_CURVATURE_Z):
    """A = I - K H_lo with the lower bound H_lo on X'X (docs/derivations/dpgd.md §3), z r.m.s. Gram-noise
    norms below the released G. Released G only."""
    d = K.shape[0]
    H_lo = _inf_gd.curvature_lower_bound(G, _inf_gd.gram_noise_scale(sigma_G, d, z))
    return _inf_gd.plugin_contraction(K, H_lo)


def _certified_remaining(G, K, sigma_G, T, k, z=PRECOND_CURVATURE_Z):
    """||P||_2: the share of the starting point the averaged iterate may still hold (released G only)."""
    P, _ = _inf_gd.averaging_maps(_contraction(G, K, sigma_G, z), T, k)
    return float(np.linalg.norm(P, 2))


def _attach_inference(rel, sd, X, y, theta, G, K, *, sigma_G, sigma_grad, T, k, mu, share, spec, noise,
                      ledger):
    """Noise-aware covariance of the averaged iterate (docs/derivations/dpgd.md): the residual moments
    of theta_bar are released (AdaSSP's bundle, ``share`` of mu^2), then everything is post-processing
    of the released G, the gradients' public noise scale and that bundle."""
    from ..inference import dpgd as inf_gd
    from ..inference import ssp as inf

    d = theta.size
    bundle = _ssp.release_bundle(X, y, theta, mu_inf=mu * math.sqrt(share), neighbours=spec.neighbours,
                                 r_squared=False, noise=noise, ledger=ledger, share_of=mu)
    S = _ssp.pd_project(G, sigma_G)             # X'X for the sampling part (floored as in AdaSSP)
    # the verdict (the caller's check, docs/derivations/dpgd.md §4) used the contraction with a LOWER
    # bound on X'X's eigenvalues (Weyl: lambda_i(X'X) >= lambda_i(G) - ||E||): where the released Gram
    # does not resolve a direction's curvature the iteration may not have moved along it at all. Its
    # remaining share is reported. Where the check also holds with PRECOND_PLUGIN_MARGIN_Z, the
    # covariance and the bias use the plug-in contraction I - K G_0 (first-order unbiased for the noise
    # covariance at X'X; the lower bound made the intervals cover 0.98-1.00 where the noise dominates),
    # and the spread of that plug-in over the Gram noise inflates each variance (§3a); otherwise they
    # keep the lower bound (no inflation: it is a one-sided bound already). The bias-aware widening is
    # taken at the 95% level (dpgd has no level option; other levels of conf_int scale the same
    # standard errors)
    facts = rel.facts
    A_lo = _contraction(G, K, sigma_G)
    P_lo, _ = inf_gd.averaging_maps(A_lo, T, k)
    facts["remaining_contraction"] = float(np.linalg.norm(P_lo, 2))
    plugin = _certified_remaining(G, K, sigma_G, T, k, PRECOND_PLUGIN_MARGIN_Z) <= inf_gd.MAX_REMAINING
    facts["covariance_contraction"] = "plug-in" if plugin else "lower bound"
    A = inf_gd.plugin_contraction(K, _pd_floor(G, 0.0)) if plugin else A_lo
    P, _ = inf_gd.averaging_maps(A, T, k)
    V_noise = inf_gd.noise_covariance(K, A, sigma_grad, T, k)
    W = inf_gd.debias_map(P)
    W_lo = W if not plugin else inf_gd.debias_map(P_lo)
    V_lo = V_noise if not plugin else inf_gd.noise_covariance(K, A_lo, sigma_grad, T, k)
    # the bias bound allows for the selection (§9, §10): the certified fits are selected on Gram noise
    # that raised the weak curvature, and the plug-in P then understates the remaining bias P theta*.
    # Each released eigenvalue is lowered to its one-sided lower confidence end given that it passed the
    # check (level Q(PRECOND_CURVATURE_Z), the z of H_lo; far above the pass threshold z sigma_G), at
    # most by the e of the lower bound (§9's rule, where the pass is a strong selection; e = z sigma_G
    # sqrt((d + 1)/2), so at d = 2 the cap nearly always binds). Its eigenvalues are at least H_lo's, so its
    # ||P_B|| <= ||P_lo|| <= MAX_REMAINING and W_B exists whenever W does
    d_g = G.shape[0]
    e_lo = inf_gd.gram_noise_scale(sigma_G, d_g, PRECOND_CURVATURE_Z)
    t_pass = inf_gd.certification_threshold(e_lo, 2.0 * math.sqrt(d_g) * sigma_G, T, k)
    A_b = inf_gd.plugin_contraction(K, inf_gd.selection_adjusted_curvature(
        G, e_lo, sigma_G, t_pass, level=0.5 * math.erfc(PRECOND_CURVATURE_Z / math.sqrt(2.0))))
    P_b, _ = inf_gd.averaging_maps(A_b, T, k)
    W_b = inf_gd.debias_map(P_b)
    V_b = inf_gd.noise_covariance(K, A_b, sigma_grad, T, k)
    bias_scaled = None if W is None or W_b is None else inf_gd.bias_bound(P_b, W_b, theta, V_b)
    # sigma^2 keeps the excess of the lower bound (§5; unchanged by §3a: the plug-in's smaller excess
    # printed sigma-hat in more noise-dominated fits, with released intervals that held the OLS sigma
    # less often, 0.91-0.93 in two cells)
    res_var = inf.residual_variance_with_se(bundle, d=d, S=S, V_priv=V_lo,
                                            bias=None if W_lo is None else (theta - W_lo @ theta),
                                            sigma_gram=sigma_G, point_given_gate=_ssp.SIGMA_POINT_GIVEN_GATE)
    sigma2 = res_var["sigma2"] if res_var["estimable"] else res_var["sigma2_cov"]
    V_samp = inf_gd.sampling_covariance(None, S, sigma2)          # sigma^2 S^-1 (conservative, see there)
    V = V_samp + V_noise
    M = sd.M
    n_pub = bundle["n_pub"]
    rel.df_resid = float(n_pub - d)
    if W is None:     # not reached: the caller checked ||P|| <= MAX_REMAINING before spending budget
        rel.vcov = np.full((d, d), np.nan)
        rel.vcov_privacy = np.full((d, d), np.nan)
        rel.inference_note = NOT_ESTIMABLE_NOTE
    else:
        # each coefficient's variance rests on the plug-in contraction, itself noisy through the Gram
        # noise: the second-order coverage correction for a noisy variance (§3a), per coefficient
        if plugin:
            _, s2 = inf_gd.plugin_noise_covariance_spread(K, A, sigma_grad, T, k, M, V_samp, sigma_G)
            infl = inf_gd.noisy_variance_inflation(s2, 0.95)
        else:
            infl = np.ones(M.shape[0])
        V_orig = inf.to_original(M, V) * np.sqrt(np.outer(infl, infl))
        rel.vcov, widen = inf.widen_for_bias(V_orig, np.abs(M) @ bias_scaled, 0.95)
        # the noise share counts the inflation and the bias widening too (as AdaSSP's, issue 12): the
        # printed variance above the sampling part sigma^2 S^-1
        part = inf.privacy_part(rel.vcov, V_samp, M)
        rel.vcov_privacy = part if part is not None else inf.to_original(M, V_noise)
        facts["bias_aware_widening"] = [float(x) for x in widen]
        facts["variance_estimate_inflation"] = [float(x) for x in infl]
        rel.inference_note = None
    sig_ci = [float(sd.h_y * math.sqrt(res_var["lower"])), float(sd.h_y * math.sqrt(res_var["upper"]))]
    facts.update(sigma_interval=sig_ci, sigma_estimable=res_var["estimable"], n_public=float(n_pub),
                 privacy_excess=res_var["excess"])
    if W is not None:
        _release_r_squared(rel, facts, sd, theta, S, V_noise, W, res_var, bundle, sigma_G=sigma_G, n_pub=n_pub,
                           d=d, eps=spec.eps)
    # issue 12 (derivation adassp_boosted.md §22): the upper end allows for the tails the released sums
    # cannot exclude
    _ssp.allow_for_heavy_tails(facts, bundle, h_y=float(sd.h_y), n_pub=float(n_pub), d=d)
    if res_var["estimable"]:
        rel.sigma = float(sd.h_y * math.sqrt(res_var["sigma2"]))
    else:
        facts["sigma_not_estimable"] = _ssp.sigma_not_estimable_reason(res_var)
    # twenty-fifth pass (adassp_boosted.md §46): the point only where its interval bounds it within 2x
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    _ssp.widen_printed_sigma_interval_for_the_gate(rel, facts, res_var, float(sd.h_y))
    # thirty-fourth pass (dpgd.md §15, adassp_boosted.md §63): the printed R^2 point is lowered where the tails
    # the released sums cannot exclude could make it overstate R^2 by more than the 0.05
    _ssp.lower_r_squared_for_heavy_tails(rel, facts)
    if facts.get("tail_allowance_note") and facts.get("sigma_interval"):
        rel.warnings = list(rel.warnings) + [Diagnostic(
            facts["tail_allowance_note"][0].upper() + facts["tail_allowance_note"][1:] + ".", None)]
    if "n_hat" in bundle:
        facts["n_hat"] = bundle["n_hat"]


def _release_r_squared(rel, facts, sd, theta, S, V_noise, W, res_var, bundle, *, sigma_G, n_pub, d, eps=None):
    """R^2 of the least-squares fit on the scaled data, ESS / (ESS + RSS), from released values only
    (issue 12, twenty-fifth pass; docs/derivations/dpgd.md §7). No new release: ESS_hat is AdaSSP's
    explained sum from the released Gram (adassp_boosted.md §10, §15) at the de-biased estimate
    W theta_bar (W = (I - P)^-1 of the covariance's contraction, so W theta_bar = theta* - W noise) with
    the gradient noise carried through the same map, W V_noise W'; RSS_hat is the residual sum of dpgd.md §5
    with its privacy variance and its excess error bound as a bias. The point is adassp_boosted.md §15's
    median-unbiased ESS_hat / (ESS_hat + RSS_hat), the interval its test inversion (allowing for a
    correlation PRECOND_R2_SUMS_CORRELATION of the two sums' errors); adassp_boosted.md §46's rule, applied
    after the tail allowance at the end of _attach_inference, decides whether the point is printed. A
    release of the outcome's moments (Sum y, Sum y^2) was measured not to help at the sizes where auto fits
    dpgd (dpgd.md §7)."""
    from ..inference import ssp as inf
    from .adassp import HEAVY_TAIL_R2_REASON, HEAVY_TAIL_WITHHOLD_Z, _edge_r_squared
    if res_var["estimable"]:
        # AdaSSP's rule (issue 12): where the released sums show tails heavier than normal at z > 3, the
        # winsorized residual sum understates RSS and R^2 would overstate the fit (t3 errors: +0.05 over
        # the data's least-squares R^2 on the validity grid, docs/validity.md)
        tails = inf.heavy_tail_signal(bundle)
        if tails["z"] is not None and tails["z"] > HEAVY_TAIL_WITHHOLD_Z:
            facts["r_squared_not_estimable"] = HEAVY_TAIL_R2_REASON
            return
    icpt = sd.extra.get("intercept_index")
    theta_d = W @ theta
    V_d = W @ V_noise @ W.T
    rss = dict(rss=float(res_var["rss"]), var_rss=float(res_var["var_rss_noise"]),
               rss_bias=float(res_var["excess_error"]))
    # twenty-ninth pass (adassp_boosted.md §54): the printed median reads the residual sum with the
    # plug-in excess tr(S V_noise) + b'Sb, b = theta_bar - W theta_bar (first-order unbiased for the realised
    # excess; the interval keeps the lower bound's, whose mean error made R^2's point 0.15 too high at
    # n = 1000, eps = 1); W and V_noise are the lower bound's where the plug-in margin fails
    # (residual_variance_with_se's sum and noise variance with V_noise and that b, without its verdict)
    SV = S @ V_noise
    b = theta - W @ theta
    excess_plug = float(np.trace(SV)) + float(b @ S @ b)
    plug = dict(rss=float(res_var["rss_mean"]) + float(res_var["excess"]) - excess_plug,
                var_rss=float(res_var["var_a2_noise"]) + 2.0 * float(np.sum(SV * SV.T)))
    _edge_r_squared(rel, facts, rss, theta=theta_d, S=S, V_priv=(V_d + V_d.T) / 2.0, icpt=icpt,
                    sigma_gram=float(sigma_G), n_pub=float(n_pub), d=d, at_edge=False,
                    sums_correlation=PRECOND_R2_SUMS_CORRELATION, rss_point=plug, eps=eps)

