"""DP logistic regression for ``method="dpgd"`` under ``dp_glm``: private Newton / Boehning
majorise-minimise with released gradients and Hessians (:func:`fit_logistic_mm`)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import Diagnostic, InvalidArgument
from ..inference import logistic as _inf_logit
from ..privacy import sensitivity
from ..privacy.mechanisms import gaussian_mechanism
from ..release import Release
from ._dpgd_core import _ROW_CHUNK_ENTRIES, INFERENCE_NOTE

# --------------------------------------------------------------------------------------------------
# logistic regression: private majorise-minimise (Newton with Boehning's Hessian bound)
# --------------------------------------------------------------------------------------------------
#: shares of mu^2 of the releases of the logistic solvers (our choice, benchmarked with
#: ``python -m benchmarks accuracy --glm ...``): the gradients carry the estimate; the curvature
#: matrices (X'X once for "mm", X'WX at every step for "newton") only precondition the steps and feed
#: the standard errors, and their sensitivity (<= sqrt(2)/4 for X'WX) is small next to their size
MM_SHARES = {"gram": 0.2, "gradient": 0.65, "hessian": 0.15}
NEWTON_SHARES = {"gradient": 0.6, "hessian": 0.4}
#: default number of steps. "mm": Boehning's bound gives a linear rate of at least
#: 1 - 4 min_i p_i (1 - p_i) per step, slow when probabilities are near 0 or 1 (measured: 40 steps
#: left Default's and diamonds' MLE 8-40 SEs away). "newton": IRLS from 0 converges in about 6-10
#: steps on non-separated data; 15 with a capped step (NEWTON_STEP_CAP) also reaches the larger
#: coefficients of nearly separated data.
MM_T = 40
NEWTON_T = 20
#: largest Newton step, in units of the columns scaled into [-1, 1] (before the division by the norm
#: budget B_bar): a trust region against overshooting from theta = 0. Nearly separated data (e.g.
#: diamonds' price > 5000) have MLEs of norm ~50 on that scale: reached in ~10 capped steps
NEWTON_STEP_CAP = 5.0
#: share of the Newton iterates averaged into the estimate when the convergence checks pass (issue 13).
#: Near the fixed point theta* the iteration is e_t = A e_{t-1} - K xi_t with A = I - K H small (a
#: Newton step), so the last iterate carries the noise of ONE gradient release made at 1/T of the
#: gradient budget; the mean of the last k iterates carries about 1/k of that variance (exactly:
#: :func:`_averaged_noise_cov`). The first half of the steps is left out: it is the approach to theta*
#: from 0 (about 6-10 steps on non-separated data)
NEWTON_AVERAGE = 0.5

#: more steps where the gradient noise allows (issue 13): the default T is the largest number of steps
#: whose per-step gradient noise s.d. stays below NEWTON_STEP_NOISE * n (n public), at least NEWTON_T
#: and at most NEWTON_T_MAX. Why: a steep logistic fit (diamonds' price > 5000: |theta_MLE| = 158 on
#: the scaled design, curvature 0.11 along its largest component against a ridge of 15) is still far
#: from the MLE after 20 ridged Newton steps, a bias toward 0 of 20 MLE SEs that no noise explains (the
#: same with the noise switched off); after 200 steps the fits are 1.4-3.9 MLE SEs away (median of 3
#: seeds 1.7). Small or rare-event data (Default, OJ) are
#: hurt by more, noisier steps (measured at T = 200: Default 4-15 MLE SEs instead of 1-2), and the rule
#: keeps their T = 20: each step's noise must be small next to n, the largest gradient sum. 1/2000: our
#: choice, measured (python -m benchmarks accuracy --glm ..., docs/accuracy.md, dp_glm on steep data)
NEWTON_STEP_NOISE = 1.0 / 2000.0
NEWTON_T_MAX = 200
#: releases of X'WX in the averaging window when T > NEWTON_T (evenly spaced; see newton_hessian_steps).
#: One, measured on diamonds' price > 5000 at eps = 8 (3 seeds, declared / private ranges): max MLE SEs
#: 8.5, 2.1, 1.4 / 7.4, 5.4, 4.5 with one; 3.4, 4.8, 11.6 (not converged) / 7.5, 4.5, 6.4 with four (each
#: release then has more noise, so the steps carry a larger ridge)
NEWTON_WINDOW_RELEASES = 1
#: a run longer than NEWTON_T that fails the convergence checks reports the mean of its last k iterates,
#: not the last one (issue 13, fourteenth pass; see fit_logistic_mm)
AVERAGE_UNCONVERGED_LONG_RUN = True
#: length of the steps in the averaging window of a run longer than NEWTON_T (issue 13, eighteenth pass;
#: derivation §1c). The mean of the window's iterates keeps E[g(theta_t)] = 0, not theta_t = theta*: with a
#: rare outcome the logistic gradient is curved in theta, and iterates that scatter by s.d. s around theta*
#: have a mean shifted by O(s^2) (Jensen), toward a smaller intercept when the outcome is rare. A step of
#: length gamma shrinks the stationary scatter of each iterate by about gamma / (2 - gamma), so the shift,
#: while the variance of the window's mean, sigma_g^2 H^{-2} / k for k >> 1/gamma, stays. The price: the
#: remaining-share bound counts the shorter steps, so weak directions keep more of the way left (more
#: intervals withheld as gamma falls). Measured at eps = 8, 6 seeds (median of the largest MLE SEs; share of
#: intervals released): MplsStops (T = 167) 1.48, 0.67 with gamma = 1; 0.99, 0.83 with 0.5; 0.99, 0.17
#: with 0.3; 2.19 with 0.1 (the window's mean then averages too few independent iterates); a simulated
#: rare outcome with rare levels (tests/test_glm_rare.py, n = 40 000) 2.61, 0.33 with 1; 1.07, 0.67 with
#: 0.5; 0.97, 0.17 with 0.3. 0.5: our choice (derivation §1c)
NEWTON_WINDOW_STEP = 0.5

#: the Newton solver's scaling (twenty-second pass, issue 13; docs/derivations/dpgd_logistic.md, section
#: 6): the largest factor block coded by its cells in place of the intercept ("schema_cells"), which
#: spends one unit less of the row-norm budget and gives a rare reference level a coordinate of its own.
#: On diamonds' price > 5000 the least curvature of X'WX at the MLE doubles (0.109 -> 0.215) and the
#: one-release noise floor on log(carat) falls from 4.65 to 3.60 MLE SEs. "schema" is the earlier scaling.
NEWTON_SCALING = "schema_cells"


def newton_default_T(n_public, mu, neighbours):
    """Default number of private Newton steps from public facts (n under replace-one neighbours, mu):
    the largest T with sigma_step = sens_g sqrt(T / share_g) / mu <= NEWTON_STEP_NOISE * n, within
    [NEWTON_T, NEWTON_T_MAX]; NEWTON_T when n is not public (add/remove neighbours)."""
    if n_public is None:
        return NEWTON_T
    sens_g = mm_sensitivities(neighbours)["gradient"]
    t = (NEWTON_STEP_NOISE * float(n_public) * float(mu) / sens_g) ** 2 * NEWTON_SHARES["gradient"]
    return int(min(NEWTON_T_MAX, max(NEWTON_T, math.floor(t))))


def newton_hessian_steps(T):
    """Steps of the private Newton iteration at which X'WX is released (a public function of T). Up to
    NEWTON_T steps: every step. Beyond: steps 1, 2, 4, 8, ... (doubling) and NEWTON_WINDOW_RELEASES
    evenly spaced in the averaging window; the other steps reuse the latest release. A release per step
    would split the curvature budget T + 1 ways, and the ridge that keeps each release positive definite
    (proportional to its noise s.d.) would grow as sqrt(T): along weakly curved directions the steps
    would shrink as fast as their number grows. The curvature only preconditions the steps (the fixed
    point g = 0 is the same), so a release made a few steps earlier serves."""
    if T <= NEWTON_T:
        return list(range(1, T + 1))
    k = max(1, int(round(NEWTON_AVERAGE * T)))
    t_pool = T - k
    steps = {2 ** j for j in range(int(math.log2(T)) + 1) if 2 ** j <= T}
    m = max(1, min(NEWTON_WINDOW_RELEASES, k))
    # from step t_pool + 2 on: a release at step s is made at theta_{s-1}, one of the averaged iterates,
    # so that it also enters the mean X'WX behind the standard errors
    steps |= {min(T, t_pool + 2 + (i * (k - 1)) // m) for i in range(m)}
    return sorted(steps)


def newton_step_lengths(T):
    """Length of each of the T private Newton steps (a public function of T): 1, except in the averaging
    window of a run longer than NEWTON_T (its last round(NEWTON_AVERAGE T) steps), NEWTON_WINDOW_STEP."""
    k = max(1, int(round(NEWTON_AVERAGE * T)))
    return [NEWTON_WINDOW_STEP if (T > NEWTON_T and t > T - k) else 1.0 for t in range(1, T + 1)]


MM_NOTE = ("Standard errors are noise-aware approximations: the sampling part is the inverse of a "
           "privately released information matrix X'WX at the estimate, the privacy part the stationary "
           "covariance of the noisy iteration; both are computed from releases only.")


def mm_sensitivities(neighbours):
    """L2 sensitivities on the schema-scaled design (every possible row has ||x|| <= 1, y in {0, 1}).

    * sum_i (sigmoid(x_i'theta) - y_i) x_i: each summand has norm <= |sigmoid - y| ||x_i|| <= 1, so
      replacing one row moves the sum by <= 2 (replace-one), adding/removing by <= 1.
    * X'X (Frobenius): for two rows, ||x x' - z z'||_F^2 = ||x||^4 + ||z||^4 - 2 (x'z)^2 <= 2, so
      sqrt(2) (replace-one), 1 (add/remove): AdaSSP's construction (A) with B_x = 1.
    * X'WX with w_i = sigmoid(x_i'theta)(1 - sigmoid(x_i'theta)) <= 1/4: the same argument for
      w x x' (PSD, Frobenius norm <= 1/4): sqrt(2)/4 (replace-one), 1/4 (add/remove).
    """
    gram = sensitivity.xtx_frobenius(1.0, neighbours)
    return {"gradient": sensitivity.clipped_gradient_sum(1.0, neighbours), "gram": gram, "hessian": gram / 4.0}


def _sigmoid(z):
    return np.exp(-np.logaddexp(0.0, -z))     # finite for every finite z, no overflow warning


def _logistic_sums(X, y, theta, weighted_gram=False):
    """sum_i (sigmoid(x_i'theta) - y_i) x_i (and sum_i w_i x_i x_i'), in row chunks."""
    n, d = X.shape
    g = np.zeros(d)
    H = np.zeros((d, d)) if weighted_gram else None
    step = max(1, _ROW_CHUNK_ENTRIES // max(d, 1))
    for i0 in range(0, n, step):
        Xc = X[i0:i0 + step]
        p = _sigmoid(Xc @ theta)
        g += Xc.T @ (p - y[i0:i0 + step])
        if weighted_gram:
            H += (Xc * (p * (1.0 - p))[:, None]).T @ Xc
    return g, H


def _pd_floor(A, floor):
    """Symmetric A with eigenvalues raised to at least ``floor`` (post-processing of a release)."""
    A = (A + A.T) / 2.0
    w, V = np.linalg.eigh(A)
    return (V * np.maximum(w, floor)) @ V.T


def fit_logistic_mm(design, spec, noise, ledger, tun):
    """Private logistic regression on the schema-scaled design (rows of norm <= 1 by construction from
    declared or privately estimated ranges; every constant public).

    ``algorithm="newton"`` (default): theta_t = theta_{t-1} - (H_t + lam I)^{-1} g_t with g_t the released
    gradient sum and H_t the latest released X'WX (at theta_{t-1} when step t releases one: every step up
    to NEWTON_T steps, else the steps of newton_hessian_steps); lam = 2 sqrt(d) sigma_H keeps the noisy
    matrix positive definite; each step is capped at NEWTON_STEP_CAP (trust region). At theta_0 = 0,
    W = I/4, so the first step is Boehning's majorise-minimise step.
    ``algorithm="mm"``: Boehning's bound (Hessian <= X'X/4): G = X'X released once, then
    theta_t = theta_{t-1} - 4 (G + lam I)^{-1} g_t, a monotone Newton-like iteration.
    In both, each step's releases are Gaussian mechanisms on statistics evaluated at earlier releases
    (adaptive composition, exact in GDP). The final X'WX (at the estimate) gives the standard errors."""
    from scipy import linalg as sla

    from ..design.scaling import scale_design
    from ..privacy.accounting import mu_from_eps_delta

    y = np.asarray(design.y, dtype=float)
    if not np.all((y == 0) | (y == 1)):
        raise InvalidArgument("logistic regression needs a binary outcome coded 0/1 (declare its two levels)")
    newton = tun["algorithm"][0] == "newton"
    sd = scale_design(design, mode=NEWTON_SCALING if newton else "schema", tau_x=1.0)
    X = sd.X
    n, d = X.shape
    Mmap = sd.M / sd.h_y          # eta = x_orig' beta = x_scaled' theta: beta = Mmap theta (no offset)
    T = tun["T"][0]
    mu = mu_from_eps_delta(spec.eps, spec.delta)
    sens = mm_sensitivities(spec.neighbours)
    shares = NEWTON_SHARES if newton else MM_SHARES
    mu_grad = mu * math.sqrt(shares["gradient"] / T)
    sigma_grad = sens["gradient"] / mu_grad
    # curvature releases: newton: one per scheduled step and one at the estimate; mm: one Gram + one
    hessian_steps = newton_hessian_steps(T) if newton else []
    n_h = len(hessian_steps) + 1 if newton else 1
    mu_h = mu * math.sqrt(shares["hessian"] / n_h)
    sigma_H = sens["hessian"] / mu_h
    lam_H = 2.0 * math.sqrt(d) * sigma_H
    released_H = []     # every released X'WX, in order (released_H[t] at theta_t)

    def release_hessian(theta, label, for_se=False):
        _, H = _logistic_sums(X, y, theta, weighted_gram=True)
        H_hat = gaussian_mechanism(H, sensitivity=sens["hessian"], mu=mu_h, noise=noise, ledger=ledger,
                                   statistic=label, share=shares["hessian"] / n_h, symmetric_matrix=True)
        released_H.append(H_hat)
        if for_se is None:
            return None
        if for_se:
            # no ridge for the standard errors: in a flat direction (nearly separated data) the information
            # is small and the SE must be large; the eigenvalue floor is the noise scale of the release
            return _pd_floor(H_hat, sigma_H)
        return _pd_floor(H_hat, 0.0) + lam_H * np.eye(d)

    lam = None
    averaged = 1
    window_drift = None     # the drift statistic over the averaging window (Newton, when computed)
    if not newton:
        mu_g = mu * math.sqrt(shares["gram"])
        G = gaussian_mechanism(X.T @ X, sensitivity=sens["gram"], mu=mu_g, noise=noise, ledger=ledger,
                               statistic="XtX (scaled design)", share=shares["gram"], symmetric_matrix=True)
        lam = 2.0 * math.sqrt(d) * sens["gram"] / mu_g
        K = 4.0 * np.linalg.inv(_pd_floor(G, 0.0) + lam * np.eye(d))
    theta = np.zeros(d)
    base_rate = None        # (p_hat, s.d.) from the first step's gradient release (newton, §17)
    curvature_rate = None   # (mean p_i (1 - p_i) at the estimate, s.d.) from H_bar (newton, §17)
    capped = 0
    cap = NEWTON_STEP_CAP * float(sd.B_bar)     # theta lives on the scale divided by B_bar
    iterates = []
    k_avg = max(1, int(round(NEWTON_AVERAGE * T)))
    t_pool = T - k_avg          # from step t_pool + 1 on, the releases from theta_{t_pool} on are pooled
    ridges = []                 # the ridge of every Newton step (public: sigma_H and the step count)
    # the length of every Newton step (public: T): shortened in the averaging window of a long run
    step_lengths = newton_step_lengths(T) if newton else [1.0] * T
    pooled_releases = 0         # releases of X'WX made in the averaging phase so far
    averaged_releases = 0       # ... of them, the ones made at averaged iterates (step >= t_pool + 2)
    for t in range(1, T + 1):
        if newton:
            if t in hessian_steps:
                release_hessian(theta, f"X'WX (scaled design), step {t}", for_se=None)
                pooled_releases += t > t_pool
                averaged_releases += t > t_pool + 1
            # in the averaging phase the iterates fluctuate around the fixed point, so the releases of
            # X'WX made there estimate the same matrix: their mean (m of them) has noise s.d.
            # sigma_H / sqrt(m), and the ridge that keeps it positive definite shrinks by sqrt(m). The
            # fixed point (g = 0) is the same; the steps along weakly curved directions are no longer
            # slowed by the full ridge lam_H (issues 12/13: the bias toward 0 there). Post-processing.
            m = max(1, pooled_releases)
            lam_t = lam_H / math.sqrt(m)
            ridges.append(lam_t)
            H_mean = _inf_logit.mean_release(released_H[-m:])
            K = np.linalg.inv(_pd_floor(H_mean, 0.0) + lam_t * np.eye(d))
        g, _ = _logistic_sums(X, y, theta)
        g_hat = gaussian_mechanism(g, sensitivity=sens["gradient"], mu=mu_grad, noise=noise, ledger=ledger,
                                   statistic=f"logistic gradient sum, step {t}",
                                   share=shares["gradient"] / T)
        if t == 1 and newton:
            # the outcome's base rate, released at no extra cost (derivation §17): at theta = 0 every
            # sigmoid is 1/2, so the gradient along the intercept's direction is sum_i (1/2 - y_i) / B_bar
            base_rate = _released_base_rate(g_hat, sd, n, sigma_grad)
        step = K @ g_hat
        if newton:
            step = step_lengths[t - 1] * step
        norm = float(np.linalg.norm(step))
        if newton and norm > cap:
            step *= cap / norm
            capped += 1
        theta = theta - step
        iterates.append(theta)
    H_pd = release_hessian(theta, "X'WX at the estimate (scaled design)", for_se=True)
    sigma_bar = sigma_H
    if newton:
        # the last k_avg releases of X'WX were made at the k_avg iterates that the averaging uses
        # (theta_{T-k+1}, ..., theta_T): their mean has noise s.d. sigma_H / sqrt(k) (post-processing);
        # it sharpens the curvature behind the standard errors and the resolution rule below
        k_h = averaged_releases + 1    # with the release at the estimate
        H_bar = _inf_logit.mean_release(released_H[-k_h:])
        sigma_bar = sigma_H / math.sqrt(k_h)
        H_pd = _pd_floor(H_bar, sigma_bar)
        # the mean of p_i (1 - p_i) over the rows at the estimate, read off H_bar along the base-rate
        # direction (derivation §17; recorded for the measurement, post-processing)
        curvature_rate = _released_curvature_rate(H_bar, sd, n, sigma_bar)
    V_samp = np.linalg.inv(H_pd)
    K_last = step_lengths[-1] * np.linalg.inv(H_pd + ridges[-1] * np.eye(d)) if newton else K
    # privacy part: near the fixed point e_t = A e_{t-1} - K sigma z_t with A = I - K H; the stationary
    # covariance (an upper bound for the finite-T one, which starts from no noise) solves a Lyapunov eq.
    A = np.eye(d) - K_last @ H_pd
    rho = float(np.max(np.abs(np.linalg.eigvals(A))))
    notes = []
    if rho < 1.0:
        V_noise = sla.solve_discrete_lyapunov(A, sigma_grad ** 2 * (K_last @ K_last.T))
        V_noise = (V_noise + V_noise.T) / 2.0
        if newton:
            # at the fixed point the last step is the noise term K xi alone, with covariance
            # sigma^2 K K' <= V, so step' V^{-1} step is at most chi^2_d in distribution; a larger value
            # (beyond d + 4 sqrt(2 d), ~3.5 sd of chi^2_d) means the iteration was still moving
            V_tot = V_samp + V_noise
            stat = float(step @ np.linalg.solve(V_tot, step))
            # (a former whole-fit check of the slowest direction is gone; the
            # resolution rule below replaces it direction by direction: a coefficient in resolved
            # directions keeps its interval, one on an unresolved direction is withheld)
            # the net movement over the averaging window (issues 12/13, nearly separated data): at the
            # fixed point theta_T - theta_{T-k} is the difference of two states of the stationary
            # recursion, covariance 2V - A^k V - V A'^k, so its quadratic form is chi^2_d to first
            # order; a slow steady drift (a logistic loss whose curvature falls along the way, e.g. a
            # steep or separating direction) passes the last-step check above but not this one
            drift = iterates[-1] - (iterates[-k_avg - 1] if len(iterates) > k_avg else np.zeros(d))
            V_start = None
            if step_lengths[-1] != step_lengths[t_pool - 1]:
                # the window's steps are shorter (derivation §1c): theta_{T-k} carries the stationary
                # scatter of the full steps before the window, larger than the window's own
                K_full = step_lengths[t_pool - 1] * np.linalg.inv(H_pd + ridges[t_pool - 1] * np.eye(d))
                A_full = np.eye(d) - K_full @ H_pd
                if float(np.max(np.abs(np.linalg.eigvals(A_full)))) < 1.0:
                    V_start = sla.solve_discrete_lyapunov(A_full, sigma_grad ** 2 * (K_full @ K_full.T))
            drift_stat = _inf_logit.window_drift_statistic(drift, A, V_noise, k_avg, V_start=V_start)
            window_drift = drift_stat
            chi2_limit = d + 4.0 * math.sqrt(2.0 * d)
            if norm >= cap or stat > chi2_limit or drift_stat > chi2_limit:
                notes.append(_conv_warning(T))
            else:
                # converged by the checks above: the last NEWTON_AVERAGE share of the iterates fluctuate
                # around the fixed point, each carrying fresh gradient noise; their mean keeps the fixed
                # point and divides the noise (post-processing of releases; docs/accuracy.md, dp_glm)
                k = k_avg
                theta = np.mean(iterates[-k:], axis=0)
                V_noise = _averaged_noise_cov(A, V_noise, k)
                averaged = k
        else:
            se_min = float(np.sqrt(np.min(np.diag(V_samp + V_noise))))
            if rho ** T * float(np.linalg.norm(theta)) > 0.5 * se_min:   # error left after T MM steps
                notes.append(_conv_warning(T))
    else:
        V_noise = np.full((d, d), np.nan)
        notes.append(_conv_warning(T))
    beta = Mmap @ theta
    vcov = Mmap @ (V_samp + V_noise) @ Mmap.T
    vcov_priv = Mmap @ V_noise @ Mmap.T
    if not np.all(np.isfinite(vcov)):
        vcov = vcov_priv = None
    resolution = None
    union_ci = union_widening = None       # the remaining-share union's intervals (section 2e), if any
    not_converged = newton and averaged == 1 and k_avg > 1
    reported_iterates = averaged
    separation = None
    if not_converged and T > NEWTON_T and AVERAGE_UNCONVERGED_LONG_RUN:
        # a long run that fails the convergence checks still reports the mean of its last k iterates
        # (only the point estimate: no interval, the ConvergenceWarning stays). Each of its steps carries
        # gradient noise of s.d. proportional to sqrt(T), so its last iterate holds one such release: on
        # diamonds' price > 5000 at eps = 8 (T = 200) the 4 of 20 fits that failed the checks were 10-27
        # MLE SEs off with the last iterate and 2.9-5.4 with the mean (the others: 1.4-5.6). The mean lags
        # a still-moving iterate by half the window's drift; the checks fail there for drifts of a few
        # noise s.d.s, small next to the sqrt(k) the mean removes. A 20-step run keeps the last iterate:
        # there a failed check means the approach from 0 is not over (diamonds at eps = 1: 35 MLE SEs),
        # and the mean would add the lag to that bias; a short long run still approaching its MLE is mixed
        # (a steep simulated design at T = 30, 4 unconverged seeds: 0.5-3.1 MLE SEs with the mean, 0.7-5.3
        # with the last iterate; docs/accuracy.md, fourteenth pass). Post-processing of the iterates.
        theta = np.mean(iterates[-k_avg:], axis=0)
        beta = Mmap @ theta
        reported_iterates = k_avg
    if not_converged:
        # the convergence checks failed (ConvergenceWarning): the iterate is still moving, possibly with
        # capped steps, so neither the noise covariance (a fixed-point approximation) nor the remaining-
        # share bound (uncapped steps) describes its error: no interval is released (issues 12/13;
        # measured: diamonds' price > 5000 at eps = 8, 0.71 of such intervals contained the MLE)
        vcov = vcov_priv = None
        # say why when the releases show it: separation (derivation, section 2b) is the usual reason
        w_bar, U_bar, P_last = _remaining_shares(H_bar, sigma_bar, sigma_H, ridges, 1, step_lengths)
        separation = _separation_check(w_bar, U_bar, P_last, released_H[0], sigma_H, sigma_bar, Mmap)
        if separation["separated"]:
            names = [design.public.terms[j] for j in separation["separation_loading"]]
            notes.append(_separation_warning(names, len(separation["separated"]), T))
    if newton and vcov is not None:
        # issue 12, twenty-seventh pass (derivation §9): beside an unresolved direction the way left can
        # reach the released coefficients where the MLE may be long along it (a column declared on a
        # range far wider than its released spread); along a possibly empty level's column it cannot.
        # Thirtieth pass (§14): where such a column is not shown to fit its range, the whole resolution
        # rule (shares, bias widening, loadings) runs at the curvature's two-s.d. lower bound
        leak = _unresolved_leak_check(H_bar, sigma_bar, sigma_H, ridges, averaged, step_lengths,
                                      released_H, k_h, sd, design)
        vcov, vcov_priv, resolution = _resolution_rule(H_bar, sigma_bar, sigma_H, ridges, averaged, theta,
                                                       V_noise, Mmap, vcov, vcov_priv, H_start=released_H[0],
                                                       step_lengths=step_lengths,
                                                       z=LEAK_CURVATURE_Z if leak["wide"] else None)
        resolution["wide_range_columns"] = leak["wide"]
        if leak["withhold_all"] and not resolution["separated"]:
            extra = [j for j in range(d) if j not in resolution["withheld"]]
            for j in extra:
                vcov[j, :] = vcov[:, j] = np.nan
                vcov_priv[j, :] = vcov_priv[:, j] = np.nan
            resolution["withheld"] = sorted(set(resolution["withheld"]) | set(extra))
            resolution["widening"] = [None] * d
            if extra:
                notes.append(_unresolved_leak_note([design.public.terms[j] for j in extra],
                                                   [design.public.terms[j] for j in leak["wide"]]))
        if resolution["separated"]:
            # (quasi-)separation: the per-direction rule assumes that the curvature is about constant
            # along the path, so that the error left along an unresolved direction does not move the
            # others (they are orthogonal in the eigenbasis of H_bar). Where the curvature collapses, the
            # way left to the MLE along the separated direction is not bounded by any release (derivation,
            # section 2b). Since the sixteenth pass (issue 12, section 2e) it is bounded under a stated
            # assumption, a curvature of at least SEPARATED_MIN_CURVATURE_SDS sigma_bar along the rest of
            # the way, and the intervals are the union over the share left that the assumption allows
            # (wide along the direction, asymmetric: they extend away from 0). Where even that share is
            # not bounded (above MAX_REMAINING) no interval is released, as before. Measured: ISLP
            # Default at eps = 8 (every fit here before) released again, every interval holding the MLE;
            # the steep simulated design's released intervals cover 0.97-0.98 (docs/validity.md)
            names = [design.public.terms[j] for j in resolution["separation_loading"]]
            union = _inf_logit.separated_union(H_bar, sigma_bar, sigma_H, ridges, averaged, theta, Mmap,
                                               sigma_grad, resolution["separated"], step_lengths=step_lengths)
            # thirty-fourth pass: the columns not shown to fit their declared ranges (already a fact) are
            # named in the warning, with what helps first (held-out nafld1: weight and height declared on
            # 0-300 kg and 100-250 cm, an outcome of 8%: every 20-step fit at eps = 8 gave this warning
            # and no or one interval; with private ranges 0.95 of the intervals were released)
            wide_names = [design.public.terms[j] for j in resolution["wide_range_columns"]]
            if union is None:
                notes.append(_separation_warning(names, len(resolution["separated"]), T, wide_names))
                vcov = vcov_priv = None
            else:
                union["withheld"] = sorted(set(union["withheld"]) | set(resolution["blind_withheld"]))
                vcov, vcov_priv, union_ci, union_widening = _union_release(union, Mmap, beta)
                resolution["withheld"] = union["withheld"]
                withheld_names = [design.public.terms[j] for j in union["withheld"]]
                notes.append(_separation_union_warning(names, withheld_names, len(resolution["separated"]), T,
                                                       wide_names, d))
        elif resolution["withheld"]:
            if resolution["unresolved_withheld"]:
                names = [design.public.terms[j] for j in resolution["unresolved_withheld"]]
                notes.append(_not_estimable_note(names, resolution, d))
            blind_only = [j for j in resolution["blind_withheld"] if j not in resolution["unresolved_withheld"]]
            if blind_only:
                names = [design.public.terms[j] for j in blind_only]
                notes.append(_blind_collapse_note(names, resolution["blind"],
                                                  resolution["collapse_detectable_curvature"]))
        if vcov is not None and not np.any(np.isfinite(np.diag(vcov))):
            vcov = vcov_priv = union_ci = None
    noise_cost = None       # the released gain over the constant model against the noise's cost (§18)
    if newton and np.all(np.isfinite(V_noise)):
        # issue 13, thirty-third pass (derivation §18): recorded for the measurement (post-processing of
        # releases); a check that withheld the intervals where it is below 1 was measured and not kept
        noise_cost = _noise_cost_check(H_pd, V_noise, theta, _base_rate_direction(sd, d))
    facts = {"description": ("private Newton (IRLS) for the logistic loss" if newton else
                             "private majorise-minimise (Boehning's Hessian bound) for the logistic loss")
             + " on the schema-scaled design",
             "loss": "logistic", "T": T, "mu": float(mu), "algorithm": "newton" if newton else "mm",
             "noise_sd_gradient": float(sigma_grad), "noise_sd_hessian": float(sigma_H), "contraction": rho,
             "sensitivities": {k: float(v) for k, v in sens.items()}, "shares": dict(shares),
             "scaling": "columns centred and scaled into [-1, 1] with their public (declared or privately "
                        "estimated) ranges, rows divided by the norm budget; coefficients mapped back exactly"
                        + ("; the largest factor's cells in place of the intercept column"
                           if sd.extra.get("cell_block") else "")}
    if separation is not None:
        facts["separated_directions"] = len(separation["separated"])
        facts["curvature_fall_sd"] = separation["curvature_fall_sd"]
        facts["separation_loading"] = [design.public.terms[j] for j in separation["separation_loading"]]
    if newton:
        facts["capped_steps"] = capped
        facts["window_drift_chi2"] = window_drift
        facts["averaged_iterates"] = reported_iterates
        facts["noise_sd_hessian_mean"] = float(sigma_bar)
        if noise_cost is not None:
            facts["gain_to_noise_cost"] = noise_cost["ratio"]
        if resolution is not None:
            facts["unresolved_directions"] = resolution["unresolved"]
            facts["bias_aware_widening"] = resolution["widening"]
            facts["remaining_share"] = resolution["remaining"]
            facts["not_estimable"] = [design.public.terms[j] for j in resolution["withheld"]]
            facts["wide_range_columns"] = [design.public.terms[j] for j in resolution["wide_range_columns"]]
            facts["separated_directions"] = len(resolution["separated"])
            facts["curvature_fall_sd"] = resolution["curvature_fall_sd"]
            facts["collapse_check_blind_directions"] = resolution["blind"]
            facts["collapse_detectable_curvature"] = resolution["collapse_detectable_curvature"]
            if resolution["separated"]:
                facts["not_estimable"] = list(design.public.terms)
                facts["separation_loading"] = [design.public.terms[j] for j in resolution["separation_loading"]]
            if union_ci is not None:
                facts["not_estimable"] = [design.public.terms[j] for j in resolution["withheld"]]
                facts["separation_union_directions"] = len(resolution["separated"])
                facts["separation_union_widening"] = union_widening
    else:
        facts["gram_ridge"] = float(lam)
    if spec.neighbours == "replace_one":
        facts["n"] = int(n)
        if newton and base_rate is not None:
            facts["base_rate_released"], facts["base_rate_sd"] = base_rate
        if newton and curvature_rate is not None:
            facts["mean_curvature_released"], facts["mean_curvature_sd"] = curvature_rate
    note = MM_NOTE if vcov is not None else INFERENCE_NOTE
    if vcov is None and resolution is not None and resolution["withheld"]:
        note = NOT_RESOLVED_NOTE if resolution["unresolved_withheld"] else BLIND_COLLAPSE_NOTE
    if resolution is not None and resolution["separated"]:
        note = SEPARATED_NOTE if union_ci is None else SEPARATED_UNION_NOTE
    if not_converged:
        note = NOT_CONVERGED_NOTE
    rel = Release(method="dpgd", coef=beta, vcov=vcov, vcov_privacy=vcov_priv,
                  inference_note=note, ci=union_ci, ci_level=None if union_ci is None else UNION_LEVEL,
                  tuning=tun, facts=facts, warnings=notes, link="logit", df_resid=None)
    # what the fit released about each level's count (derivation dpgd_logistic.md §7): newton's releases
    # of X'WX made before the averaging window (disjoint from H_bar, which decides the intervals), mm's
    # X'X; a level it cannot tell from one with no rows gets no interval, and NA where it is at most 0
    count_diag, count_sd = _level_count_release(released_H, k_h if newton else None, None if newton else G,
                                                sigma_H if newton else sens["gram"] / mu_g)
    _withhold_possibly_empty_levels(rel, design, count_diag, count_sd)
    # the point (derivation §11): NA below the same gate on the mean of every release of X'WX (more power
    # than the releases before the window; the independence from H_bar that the interval's gate needs
    # does not matter for a point, and a level with no rows is below it with probability Phi(2) either way)
    na_diag, na_sd = (_level_count_release(released_H, 0, None, sigma_H) if newton
                      else (count_diag, count_sd))
    _report_released_empty_levels(rel, design, na_diag, na_sd)
    return rel


#: one-sided level of the count gate on a factor level's interval (derivation dpgd_logistic.md §7): a
#: level with no rows passes it with probability Phi(-2) = 0.023, independently of the resolution rule
#: (disjoint releases), so the two together release its interval at Phi(-2) times the resolution rule's
#: own rate; the same 2 as the keep rule of the linear methods (NOT_ESTIMABLE_Z)
LEVEL_COUNT_GATE_SDS = 2.0


def _level_count_release(released_H, k_h, G, sigma):
    """(diagonal, noise s.d.) of what the fit released about each column's count of rows. Newton: the mean
    of the releases of X'WX made before the k_h that H_bar averages (at least the one at theta = 0); column
    j's entry is s^2 sum over the rows at the level of w_i(theta_t) <= c_j s^2 / 4, 0 exactly when the
    level has no rows, plus Gaussian noise of s.d. sigma / sqrt(m). mm: the released X'X (c_j s^2 plus
    noise of s.d. sigma). Post-processing of releases."""
    if G is not None:
        return np.diag(np.asarray(G, float)).copy(), float(sigma)
    before = released_H[:max(1, len(released_H) - int(k_h))]
    return (np.diag(_inf_logit.mean_release(before)).astype(float).copy(),
            float(sigma) / math.sqrt(len(before)))


def _withhold_possibly_empty_levels(rel, design, count_diag, count_sd) -> None:
    """Issue 12, twenty-fourth pass (derivation dpgd_logistic.md §7): withhold the interval of a factor
    dummy whose released count cannot rule out a declared level with no rows (below LEVEL_COUNT_GATE_SDS
    noise s.d.s). Its coefficient is not identified; the resolution rule's curvature bound is a typical-size
    one, and along a column of zeros the released curvature is noise alone (rare_level at eps = 8: an
    interval in 4 of 200 fits). Post-processing of the released count and public constants."""
    if rel.vcov is None or not design.public.factor_blocks or not count_sd > 0.0:
        return
    vcov = np.array(rel.vcov, float)
    se_known = np.isfinite(np.diag(vcov))
    columns = [int(j) for block in design.public.factor_blocks for j in block
               if se_known[int(j)] and not count_diag[int(j)] >= LEVEL_COUNT_GATE_SDS * count_sd]
    if not columns:
        return
    from .adassp import _withhold_intervals
    _withhold_intervals(rel, rel.facts, columns)
    if isinstance(rel.facts.get("bias_aware_widening"), list):
        rel.facts["bias_aware_widening"] = [None if j in columns else x
                                            for j, x in enumerate(rel.facts["bias_aware_widening"])]
    names = [design.public.terms[j] for j in columns]
    rel.facts["empty_level_withheld"] = names
    rel.warnings = list(rel.warnings) + [_empty_level_note(names)]


def _empty_level_note(names):
    plural = len(names) > 1
    return Diagnostic(
        f"No interval for {', '.join(names)}: the released count{'s' if plural else ''} of "
        f"{'these levels' if plural else 'this level'} (the diagonal of the curvature released before the "
        f"estimate's steps) cannot rule out a declared level with no rows, whose coefficient is not identified (the "
        f"estimate is mostly privacy noise). A larger n or eps gives {'their' if plural else 'its'} interval "
        "where the level has rows.", None)


def _report_released_empty_levels(rel, design, count_release, count_sd=None) -> None:
    """A factor level whose interval the fit withheld (in a fit that releases no interval: every level) and
    whose released count of rows cannot rule out a level with no rows is reported as not estimable (NA
    estimate, also the inference centre, predictions at it NA), with the reason. ``count_release`` is the
    diagonal of :func:`_level_count_release` (a positive multiple of the count, 0 for a level with no rows,
    plus noise of s.d. ``count_sd``).

    Twenty-eighth pass (derivation dpgd_logistic.md §11): the level's point is NA where its released count
    is below the count gate (LEVEL_COUNT_GATE_SDS noise s.d.s), not only where it is at most 0 (§7; the
    rule of BoostedAdaSSP and dpgd, adassp_boosted.md §37). Below the gate the releases cannot tell the
    level from one with no rows, whose column is zero in every row: along it the released curvature is
    noise alone and the fit cannot resolve the direction, so the point is privacy noise (n = 300, eps = 8:
    an empty level printed points such as -7.65 and -7.08). It is the rule by which dp_lm's keep rule
    reports a level NA (2 noise s.d.s, NOT_ESTIMABLE_Z). A level at or above the gate keeps its point even
    without an interval (the twenty-second pass's NA for every withheld level took real levels'
    predictions). ``count_sd`` None keeps the old rule (count at most 0). Post-processing of the released
    count and public constants."""
    if not design.public.factor_blocks:
        return
    from ..inference import ssp as _inf_ssp
    # a fit that releases no interval withholds every one (twenty-fourth pass: the same rule)
    se_missing = (np.ones(len(design.public.terms), bool) if rel.vcov is None
                  else ~np.isfinite(np.diag(np.asarray(rel.vcov, float))))
    columns = [int(j) for block in design.public.factor_blocks for j in block if se_missing[int(j)]]
    if not columns:
        return
    count = np.asarray(count_release, float)
    at_most_0 = set(_inf_ssp.levels_released_as_empty(count, columns))
    below_gate = set(at_most_0)
    if count_sd is not None and count_sd > 0.0:
        below_gate |= {j for j in columns if not count[j] >= LEVEL_COUNT_GATE_SDS * count_sd}
    chosen = [j for j in columns if j in below_gate]
    if not chosen:
        return
    from . import _ssp
    _ssp.report_coefficients_as_na(rel, chosen)
    names = [design.public.terms[j] for j in chosen]
    rel.facts["empty_level_not_estimable"] = names
    # the note of the gate (no interval) no longer describes a level reported as NA: rebuilt for the rest
    gate_named = list(rel.facts.get("empty_level_withheld") or [])
    warnings_ = list(rel.warnings)
    if set(gate_named) & set(names):
        withheld = [t for t in gate_named if t not in names]
        warnings_ = [w for w in warnings_ if str(w) != str(_empty_level_note(gate_named))]
        if withheld:
            warnings_.append(_empty_level_note(withheld))
    zero = [design.public.terms[j] for j in chosen if j in at_most_0]
    warnings_.append(_not_estimable_levels_warning(names, zero, gated=count_sd is not None and count_sd > 0.0))
    rel.warnings = warnings_


def _not_estimable_levels_warning(names, zero, gated=True):
    """The one warning of a dp_glm fit that reports declared levels as NA (§11, thirtieth pass): the class
    (AccuracyWarning) and wording pattern of dp_lm's keep rule ("Not estimable at this n and eps: <terms>
    (<why>). Reported as NA."), emitted once per fit whatever the mix of reasons, so R relays it as a
    warning at fit time as it does dp_lm's (it was a note under "Notes" only). ``zero``: the names whose
    released count is at most 0 (among ``names``); ``gated``: the count gate applied (its s.d. is known).
    Public names and constants only."""
    from ..errors import AccuracyWarning
    plural = len(names) > 1
    these = "these levels" if plural else "this level"
    if gated:
        why = (f"the released count{'s' if plural else ''} of rows at {these} "
               f"{'are' if plural else 'is'} within {LEVEL_COUNT_GATE_SDS:g} noise standard deviations of 0"
               + (f" ({', '.join(zero)}: at most 0)" if zero else ""))
    else:
        why = f"the released count{'s' if plural else ''} of rows at {these} {'are' if plural else 'is'} at most 0"
    return Diagnostic(
        f"Not estimable at this n and eps: {', '.join(names)} ({why}, so the releases cannot rule out a "
        f"declared level with no rows; along such a level's column the released curvature is noise alone "
        f"and the fit cannot resolve its direction, so a value there would be mostly privacy noise; "
        f"predictions at {these} are NA; a larger n or eps gives {'their' if plural else 'its'} estimate "
        "where the level has rows). Reported as NA, no interval.", AccuracyWarning)


NOT_RESOLVED_NOTE = (
    "standard errors not estimable at this n and eps: the released X'WX does not resolve the curvature "
    "of the directions every coefficient loads on, so the private Newton iteration may still hold part "
    "of its starting point (0) there, a bias no release bounds (more rows, a larger eps, or tighter "
    "declared ranges help)")


BLIND_COLLAPSE_NOTE = (
    "standard errors not estimable at this n and eps: along a direction every coefficient loads on, the "
    "released X'WX at the estimate is at the noise floor, and at this n and eps the check for a curvature "
    "that collapsed since the start (a steep slope or a rare outcome, where the private Newton steps stop "
    "short of the maximum-likelihood fit) has no power there (see the warning; more rows or a larger eps "
    "help)")


NOT_CONVERGED_NOTE = (
    "standard errors not estimable at this n and eps: the private Newton iteration was still moving after "
    "its T steps (see the warning), so its distance from the maximum-likelihood fit is not bounded by any "
    "release (raise T, use a larger eps or more rows, or declare tighter ranges)")

#: the same fact for a fit without inference (newcomer review 26: such a fit said "standard errors not
#: estimable" where none was asked for, or, when it converged, only that none was asked for)
NOT_CONVERGED_POINT_NOTE = (
    "the private Newton iteration was still moving after its T steps (see the warning), so the "
    "coefficients may still be some way from the maximum-likelihood fit (raise T, use a larger eps or "
    "more rows, or declare tighter ranges)")


SEPARATED_NOTE = (
    "standard errors not estimable: the released curvature collapsed along a direction of the coefficients "
    "(quasi-separation, or a rare outcome or steep slope that this n and eps cannot resolve; see the "
    "warning), so the private iteration's distance from the maximum-likelihood fit is not bounded by any "
    "release, for any coefficient")


SEPARATED_UNION_NOTE = (
    "Standard errors are noise-aware approximations, and along the direction(s) where the released "
    "curvature collapsed (see the warning) the intervals allow for the private iteration having covered "
    "only part of the way to the maximum-likelihood fit, assuming the curvature there stays at least half "
    "the noise s.d. of its release: they are wide and not symmetric about the estimate (they extend away "
    "from 0); the standard errors are scaled to their half-width")

#: level of the remaining-share union's intervals (dp_glm's intervals are 95% ones)
UNION_LEVEL = 0.95


def _union_release(union, Mmap, beta):
    """(vcov, vcov_priv, ci, widening) of the remaining-share union (derivation, section 2e): the
    intervals are its ends about the estimate; the standard errors are the covariance at the assumed
    lowest curvature, scaled so that z SE is the union's half-width (so SE, z, p and the noise share agree
    with the interval, as for AdaSSP's attenuation union); withheld coefficients are NA."""
    z = union["z"]
    vcov = Mmap @ union["V"] @ Mmap.T
    vcov_priv = Mmap @ union["V_noise"] @ Mmap.T
    se0 = np.sqrt(np.maximum(np.diag(vcov), 0.0))
    down, up = union["down"], union["up"]
    with np.errstate(divide="ignore", invalid="ignore"):
        widen = np.where(se0 > 0, (down + up) / (2.0 * z * se0), 1.0)
    widen = np.maximum(widen, 1.0)
    vcov = vcov * np.outer(widen, widen)
    vcov_priv = vcov_priv * np.outer(widen, widen)
    ci = np.column_stack([beta - down, beta + up])
    for j in union["withheld"]:
        vcov[j, :] = vcov[:, j] = np.nan
        vcov_priv[j, :] = vcov_priv[:, j] = np.nan
        ci[j, :] = np.nan
    return vcov, vcov_priv, ci, [None if j in union["withheld"] else float(x) for j, x in enumerate(widen)]


def _remaining_shares(H_bar, sigma_bar, sigma_H, ridges, k, step_lengths=None, z=None):
    """(w, U, P): eigenvalues and eigenvectors of the mean released X'WX and, per eigendirection, the
    bound P_v on the share of the starting point 0 the estimate (the mean of the last k iterates) may
    still hold (derivation, section 2), from the curvature's lower bound at z noise s.d.s (default
    CURVATURE_Z = 1; LEAK_CURVATURE_Z beside a wide declared range, §14). Released values and public
    constants only."""
    z = _inf_logit.CURVATURE_Z if z is None else z
    w, U, h_lo = _inf_logit.curvature_lower_bounds(H_bar, sigma_bar, z=z)
    # step t divided by its pooled release (m_t matrices: ridge lam_H / sqrt(m_t), noise sigma_H / sqrt(m_t))
    sig_steps = [sigma_H * lam / ridges[0] for lam in ridges]
    lengths = [1.0] * len(ridges) if step_lengths is None else step_lengths
    r = np.column_stack([_inf_logit.step_contraction(h_lo, lam, s, step_length=g)
                         for lam, s, g in zip(ridges, sig_steps, lengths)])
    return w, U, _inf_logit.remaining_share(r, k)


def _separation_check(w, U, P, H_start, sigma_H, sigma_bar, Mmap):
    """(Quasi-)separation and steep directions (derivation, section 2b, steps 7-8): the unresolved
    directions, and the ones at the noise floor at the estimate
    (:func:`dpreg.inference.logistic.floor_directions`), whose released curvature collapsed since
    theta = 0; the coefficients that load on them (more than MAX_UNRESOLVED_LOADING of their unit loading
    vector, largest first), and the largest fall among those weak directions in noise s.d.s (None when
    there is none). Floor directions count at every T (issue 12, steep pass): before, only in runs longer
    than NEWTON_T steps, and on the simulated steep design (slope 30) the 20-step fits with such a
    direction released x1 intervals that covered the population slope in 0.33-0.45 of the fits (0.90 at
    n = 10^4, eps = 8; derivation, section 2c). The cost: ISLP Default's 20-step intervals, whose releases
    look the same, are withheld too."""
    fall = _inf_logit.curvature_fall(H_start, sigma_H, w, U, sigma_bar)
    floor = _inf_logit.floor_directions(w, sigma_bar, Mmap.shape[1])
    separated = _inf_logit.separated_directions(fall, P, floor=floor)
    unit_rows = Mmap / np.maximum(np.linalg.norm(Mmap, axis=1), np.finfo(float).tiny)[:, None]
    sep_load = np.linalg.norm(unit_rows @ U[:, separated], axis=1) if separated else np.zeros(Mmap.shape[0])
    weak = (np.asarray(P) > _inf_logit.MAX_REMAINING) | floor
    # issue 12, seventeenth pass (derivation §2f): the floor directions along which this check has no
    # power (a complete collapse would go unflagged with probability above 5%); the coefficients that load
    # on them are withheld by the resolution rule
    blind, c_star = _inf_logit.blind_directions(H_start, sigma_H, w, U, sigma_bar, floor, separated)
    blind_load = np.linalg.norm(unit_rows @ U[:, blind], axis=1) if blind.any() else np.zeros(Mmap.shape[0])
    return {"separated": separated,
            "separation_loading": [int(j) for j in np.argsort(-sep_load, kind="stable")
                                   if sep_load[j] > _inf_logit.MAX_UNRESOLVED_LOADING],
            "curvature_fall_sd": float(np.max(fall[weak])) if weak.any() else None,
            "blind": int(np.sum(blind)), "collapse_detectable_curvature": c_star,
            "blind_withheld": [int(j) for j in np.flatnonzero(blind_load > _inf_logit.MAX_UNRESOLVED_LOADING)]}


def _resolution_rule(H_bar, sigma_bar, sigma_H, ridges, k, theta, V_noise, Mmap, vcov, vcov_priv, H_start,
                     step_lengths=None, z=None):
    """Issues 12/13 (docs/derivations/dpgd_logistic.md): per eigendirection of the mean released X'WX,
    the share P_v of the starting point the (averaged) estimate may still hold, from a lower bound on the
    curvature (z noise s.d.s below the released eigenvalue: CURVATURE_Z = 1, or LEAK_CURVATURE_Z beside a
    column declared on a wide range, §14); the intervals are widened by the bias that share implies, and
    withheld for the coefficients that load on directions where it is not bounded (P_v > MAX_REMAINING).
    The separation checks keep the one-s.d. shares. Released values and public constants only."""
    from ..inference import ssp as _inf_ssp

    w, U, P = _remaining_shares(H_bar, sigma_bar, sigma_H, ridges, k, step_lengths)
    P_sep = P
    if z is not None:
        _, _, P = _remaining_shares(H_bar, sigma_bar, sigma_H, ridges, k, step_lengths, z=z)
    b_dir = _inf_logit.direction_bias(U, P, theta, V_noise)
    bias, load = _inf_logit.coefficient_bias(Mmap, U, b_dir)
    vcov, widen = _inf_ssp.widen_for_bias(vcov, bias, 0.95)
    vcov_priv = vcov_priv.copy()
    unresolved_withheld = [int(j) for j in np.flatnonzero(load > _inf_logit.MAX_UNRESOLVED_LOADING)]
    out = {"unresolved": int(np.sum(~np.isfinite(b_dir))), "unresolved_withheld": unresolved_withheld,
           "remaining": [float(x) for x in P]}
    out.update(_separation_check(w, U, P_sep, H_start, sigma_H, sigma_bar, Mmap))
    # a coefficient on a direction the collapse check cannot see (derivation §2f) is withheld as one on an
    # unresolved direction: its remaining-share bound may understate the way left
    withheld = sorted(set(unresolved_withheld) | set(out["blind_withheld"]))
    for j in withheld:
        vcov[j, :] = vcov[:, j] = np.nan
        vcov_priv[j, :] = vcov_priv[:, j] = np.nan
    out["withheld"] = withheld
    out["widening"] = [float(x) if j not in withheld else None for j, x in enumerate(widen)]
    return vcov, vcov_priv, out


#: a numeric column counts as declared on a range far wider than the data's spread when the releases of
#: X'WX show (2 noise s.d.s, one-sided) its weighted standard deviation below this fraction of its
#: declared half-range (derivation dpgd_logistic.md §9): flchain's light chains are at about 0.015, the
#: simulated validity designs' columns (ranges that fit the data) at 0.33-0.58
WIDE_RANGE_SPREAD_FRACTION = 0.15

#: the wide-range check flags a column unless the releases SHOW its spread at or above the threshold: its
#: released spread minus 2 noise s.d.s (one-sided) must reach WIDE_RANGE_SPREAD_FRACTION of its declared
#: half-range (derivation §14, issue 12, thirtieth pass). §9 flagged only a column shown below the threshold
#: (+2 s.d.s) and §13 one released below it (0); both left a column declared on about 11 times its spread
#: unflagged wherever the noise pulled its released spread up (CPSSW9204-shaped, n = 8 000, eps = 1: 4 of
#: 30 fits, whose released intervals beside its weak direction held the MLE in 8 of 14). A column
#: whose range fits its data is flagged only where the noise is large next to its spread (n = 1000, eps = 1)
WIDE_RANGE_Z = -2.0

#: beside a column flagged by the wide-range check (where the MLE may be long along a weak direction),
#: a direction counts as unresolved for the withhold-all rule of §9 when its remaining share at the
#: curvature's TWO-s.d. lower bound exceeds MAX_REMAINING (§14): the one-s.d. bound of §2 (CURVATURE_Z)
#: fails for about 1 weak direction in 6, and there the released intervals carried a shortfall of 5-20 MLE
#: SEs (CPSSW9204-shaped, n = 8 000, eps = 1, fit seed 29: the weak direction released 1.35 s.d.s above its
#: true curvature at the estimate, share bound 0.43 against 0.71 left)
LEAK_CURVATURE_Z = 2.0


def _wide_range_columns(H_mean, noise_sd, sd, design, z=None):
    """Numeric columns whose released spread (plus z noise s.d.s, default WIDE_RANGE_Z = -2: its one-sided
    lower end, derivation §14) is below WIDE_RANGE_SPREAD_FRACTION of their declared half-range
    (derivation §9). H_mean is the mean of the
    fit's releases of X'WX (noise s.d. noise_sd): a weighted Gram sum_i w_i x_i x_i' with weights in
    (0, 1/4]. With e the public coefficient vector of the constant column (the intercept, plus the cells
    of the cell-coded factor: every scaled row has e'x = 1 / B_bar), e'He = (sum w) / B_bar^2 and the
    Schur complement S_j = H_jj - (e'H_j)^2 / e'He = (sum w) var_w(x_j), so S_j / e'He is the column's
    weighted variance over the largest variance its declared range allows, (1 / B_bar)^2. To first order
    the noise of S_j is v'Ev with v = unit_j - m_j e, m_j = e'H_j / e'He, so N(0, (noise_sd ||v||^2)^2).
    Post-processing of releases and public facts."""
    z = WIDE_RANGE_Z if z is None else z
    icpt = sd.extra.get("intercept_index")
    if icpt is None:
        return []
    A = np.asarray(H_mean, float)
    A = (A + A.T) / 2.0
    d = A.shape[0]
    e = np.zeros(d)
    e[icpt] = 1.0
    if sd.extra.get("cell_block"):
        e[list(sd.extra["cell_block"])] = 1.0
    scale = float(e @ A @ e)
    if not scale > 0.0:
        return []
    in_block = np.zeros(d, dtype=bool)
    for block in design.public.factor_blocks or []:
        in_block[list(map(int, block))] = True
    cross = A @ e
    n_e = float(np.sum(e))
    wide = []
    for j in range(d):
        if j == icpt or in_block[j]:
            continue
        m_j = cross[j] / scale
        schur = A[j, j] - cross[j] * m_j
        schur_sd = noise_sd * (1.0 + m_j ** 2 * n_e)
        if schur + z * schur_sd < WIDE_RANGE_SPREAD_FRACTION ** 2 * scale:
            wide.append(j)
    return wide


def _unresolved_leak_check(H_bar, sigma_bar, sigma_H, ridges, k, step_lengths, released_H, k_h, sd, design):
    """Derivation §9: {"wide": the wide-range columns, "withhold_all": True where an unresolved direction
    remains once the possibly empty levels' columns are set aside (they pass no way left into any other
    coefficient), judged at the curvature's LEAK_CURVATURE_Z-s.d. lower bound (§14), and some column is
    not shown to be declared on a range that fits its released spread (where the MLE may be long along the
    unresolved direction). Released values and public constants only."""
    wide = _wide_range_columns(_inf_logit.mean_release(released_H), sigma_H / math.sqrt(len(released_H)),
                               sd, design)
    d = H_bar.shape[0]
    keep = np.ones(d, dtype=bool)
    if design.public.factor_blocks:
        count_diag, count_sd = _level_count_release(released_H, k_h, None, sigma_H)
        for block in design.public.factor_blocks:
            for j in map(int, block):
                if not count_diag[j] >= LEVEL_COUNT_GATE_SDS * count_sd:
                    keep[j] = False
    if not wide or not keep.any():
        return {"wide": wide, "withhold_all": False}
    idx = np.flatnonzero(keep)
    _, _, P = _remaining_shares(H_bar[np.ix_(idx, idx)], sigma_bar, sigma_H, ridges, k, step_lengths,
                                z=LEAK_CURVATURE_Z)
    return {"wide": wide, "withhold_all": bool(np.any(np.asarray(P) > _inf_logit.MAX_REMAINING))}


def _unresolved_leak_note(names, wide_names):
    from ..errors import AccuracyWarning, Diagnostic
    return Diagnostic(
        f"Not estimable at this n and eps: the intervals of {', '.join(names)} are withheld (reported as NA). "
        "The released X'WX does not resolve the curvature along some direction of the coefficients (at two "
        "noise s.d.s), and the releases do not show that "
        f"{', '.join(wide_names)} " + ("is" if len(wide_names) == 1 else "are") + " declared on a range that "
        "fits the data (the released spread is not clearly above 0.15 of the declared half-range), so the "
        "maximum-likelihood fit may lie far along that "
        "direction; the private Newton iteration may stop short of it there, and the noise of the releases "
        "hides how much of that shortfall reaches the other coefficients. Tighter declared ranges (close to "
        "the data's), more rows or a larger eps help.", AccuracyWarning)


def _not_estimable_note(names, resolution, d):
    from ..errors import AccuracyWarning, Diagnostic
    u = resolution["unresolved"]
    return Diagnostic(
        f"Not estimable at this n and eps: the intervals of {', '.join(names)} are withheld (reported as NA). "
        f"The released X'WX does not resolve the curvature in {u} of {d} directions, so the private Newton "
        "iteration may still hold part of its starting point (0) along them, a bias toward 0 that no release "
        "bounds, and these coefficients load on them. More rows, a larger eps, or tighter declared ranges "
        "help.", AccuracyWarning)


def _blind_collapse_note(names, n_blind, c_star):
    from ..errors import AccuracyWarning, Diagnostic
    # derivation §2f: the numbers in it are public (c* is a function of d and the releases' noise scales)
    return Diagnostic(
        f"Not estimable at this n and eps: the intervals of {', '.join(names)} are withheld (reported as NA). "
        "Along " + ("one direction" if n_blind == 1 else f"{n_blind} directions") + " of the coefficients "
        "the released curvature X'WX at the estimate is at the noise floor, and the check for a curvature "
        "that collapsed since the start (a steep slope, a rare outcome or quasi-separation, where the "
        "private Newton steps stop far short of the maximum-likelihood fit and the interval would miss) "
        "has no power there: it flags a complete collapse with probability 95% only along a direction "
        f"whose curvature at the start is at least {c_star:.3g} on the scaled design (set by the noise of "
        "the releases, so by n, eps and delta only), and the release at the start does not show that. "
        "A steep slope and a direction that is weak by design give the same releases at this n and eps. "
        "More rows (the curvature grows with n) or a larger eps (the threshold falls with the noise) help.",
        AccuracyWarning)


def _wide_range_hint(wide_names):
    """The sentence the separation warnings end with where some column is not shown to be declared on a
    range that fits its released spread (derivation §14; the names are the fit's ``wide_range_columns``
    fact, a function of releases): there a weak direction reaches the noise floor without separation, and
    tighter declared ranges help first (thirty-fourth pass)."""
    if not wide_names:
        return ""
    are = "is" if len(wide_names) == 1 else "are"
    return (f" The releases do not show that {', '.join(wide_names)} {are} declared on a range that fits the "
            "data (the released spread is not clearly above 0.15 of the declared half-range): a declared "
            "range much wider than the data's spread leaves little curvature along that column on the scaled "
            "design, so a direction that loads on it can reach the noise floor with a rare outcome or a "
            "moderate slope, without separation. Tighter declared ranges (close to the data's) help first.")


def _separation_warning(names, n_sep, T, wide_names=()):
    from ..errors import ConvergenceWarning, Diagnostic
    # the five that load most (largest first); the full list is in the fit's facts (separation_loading)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    which = f"the coefficients that load on it ({shown})" if names else "the coefficients"
    # the releases show the collapse, not its cause: true (quasi-)separation (MLE at infinity) and a rare
    # outcome or steep finite slope (ISLP Default; the steep design of the validity benchmark) look the
    # same at this n and eps, so the text names both and what helps in each case
    return Diagnostic(
        "Quasi-separation or a direction this n and eps cannot resolve: along "
        + ("one direction" if n_sep == 1 else f"{n_sep} directions")
        + " of the coefficients the released curvature X'WX fell from its value at the start to the noise "
        "floor of its releases. That happens when fitted probabilities go to 0 or 1 (glm's 'fitted "
        "probabilities numerically 0 or 1 occurred': the maximum-likelihood fit is far away or at infinity), "
        f"and also with a rare outcome or a steep but finite slope. Either way the distance of the {T} private "
        f"Newton steps from the maximum-likelihood fit along it is not bounded by any release: {which} may be "
        "shrunk toward 0, and through the changing curvature the others moved too. No standard error or "
        "interval is released (reported as NA). If the data are separated, merging sparse factor levels, "
        "dropping the separating term, or a penalised (e.g. Firth) model help; if the slope is steep but "
        "finite, more rows or a larger eps help." + _wide_range_hint(wide_names), ConvergenceWarning)


def _separation_union_warning(names, withheld, n_sep, T, wide_names=(), d=None):
    from ..errors import ConvergenceWarning, Diagnostic
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    which = f"the coefficients that load on it ({shown})" if names else "the coefficients"
    gone = (f" The intervals of {', '.join(withheld)} are withheld (NA): they also load on a direction the "
            "release does not resolve at all.") if withheld else ""
    if d is not None and withheld and len(withheld) >= d:
        # every interval withheld (thirty-fourth pass): the text said "their intervals allow for that: they
        # are the union ..." and then that all of them were withheld; it now says so first
        return Diagnostic(
            "Quasi-separation or a direction this n and eps cannot resolve: along "
            + ("one direction" if n_sep == 1 else f"{n_sep} directions")
            + " of the coefficients the released curvature X'WX fell from its value at the start to the "
            "noise floor of its releases (a rare outcome, a steep slope, or fitted probabilities going to 0 "
            f"or 1). The {T} private Newton steps may have covered only part of the way to the "
            f"maximum-likelihood fit along it, so {which} may be shrunk toward 0. No interval is released "
            "(NA): every coefficient also loads on a direction the release does not resolve at all, so not "
            "even the union over the shares of the way left (the intervals given where the rest is "
            "resolved) is bounded. Merging sparse factor levels, dropping the separating term, or a "
            "penalised (e.g. Firth) model help with separated data; more rows or a larger eps help "
            "otherwise." + _wide_range_hint(wide_names), ConvergenceWarning)
    # same first words as the withholding warning (the releases show the collapse, not its cause); what
    # is released now rests on a stated assumption, so the text says which and when it fails
    return Diagnostic(
        "Quasi-separation or a direction this n and eps cannot resolve: along "
        + ("one direction" if n_sep == 1 else f"{n_sep} directions")
        + " of the coefficients the released curvature X'WX fell from its value at the start to the noise "
        "floor of its releases (a rare outcome, a steep slope, or fitted probabilities going to 0 or 1). "
        f"The {T} private Newton steps may have covered only part of the way to the maximum-likelihood fit "
        f"along it, so {which} may be shrunk toward 0. Their intervals allow for that: they are the union "
        "over every share of the way left that is possible if the curvature along the direction stays at "
        "least half the noise s.d. of its release, so they are wide and extend away from 0 (the standard "
        "errors are scaled to their half-width). That assumption cannot be checked from the releases; it "
        "fails if the data are separated (the maximum-likelihood fit is at infinity), and then no interval "
        "holds. Merging sparse factor levels, dropping the separating term, or a penalised (e.g. Firth) "
        "model help with separated data; more rows or a larger eps narrow the intervals." + gone
        + _wide_range_hint(wide_names), ConvergenceWarning)


def _averaged_noise_cov(A, V, k):
    """Covariance of the mean of k consecutive states of the stationary recursion e_t = A e_{t-1} + u_t
    with stationary covariance V (:func:`dpreg.inference.logistic.averaged_iterate_cov`)."""
    return _inf_logit.averaged_iterate_cov(A, V, k)


def _released_base_rate(g_hat, sd, n, sigma_grad):
    """(p_hat, its noise s.d.): the share of rows with y = 1 read off the first Newton step's released
    gradient sum (at theta = 0; derivation dpgd_logistic.md §17), or None without an intercept (the base
    rate is then not a direction of the design). Every scaled row has x'u = 1 / B_bar along
    u = e_intercept (plus the cells of ``sd.extra["cell_block"]``, which sum to the intercept column in the
    "schema_cells" scaling), so u'g(0) = (n / 2 - sum y) / B_bar and p_hat = 1/2 - B_bar u'g_hat / n, with
    Gaussian noise of s.d. B_bar sigma_grad ||u|| / n. Post-processing of a release; n is public under
    replace-one neighbours (the only place it is used)."""
    u = _base_rate_direction(sd, len(g_hat))
    if u is None or n <= 0:
        return None
    B = float(sd.B_bar)
    p_hat = 0.5 - B * float(u @ np.asarray(g_hat, float)) / float(n)
    return float(p_hat), float(B * sigma_grad * math.sqrt(float(u @ u)) / float(n))


def _base_rate_direction(sd, d):
    """u with x_i'u = 1 / B_bar for every scaled row (the intercept column, plus the cells of the factor
    coded by its cells), or None without an intercept (public: the design's layout)."""
    icpt = sd.extra.get("intercept_index")
    if icpt is None:
        return None
    u = np.zeros(d)
    u[int(icpt)] = 1.0
    for j in sd.extra.get("cell_block") or []:
        u[int(j)] = 1.0
    return u


def _released_curvature_rate(H_bar, sd, n, sigma_bar):
    """(mean over rows of p_i (1 - p_i) at the estimate, its noise s.d.) read off the mean released X'WX:
    u'H u = sum_i w_i / B_bar^2 along the base-rate direction u, and for a fixed u the symmetric noise of
    H_bar gives u'E u ~ N(0, sigma_bar^2 ||u||^4) (derivation §17). None without an intercept."""
    u = _base_rate_direction(sd, H_bar.shape[0])
    if u is None or n <= 0:
        return None
    B2 = float(sd.B_bar) ** 2
    return float(B2 * float(u @ H_bar @ u) / n), float(B2 * sigma_bar * float(u @ u) / n)


def _conv_warning(T):
    from ..errors import ConvergenceWarning, Diagnostic
    return Diagnostic(f"The private logistic iteration may not have converged in T = {T} steps (it was "
                      "still moving at the end, e.g. on nearly separated data): raise T, or declare tighter "
                      "ranges.", ConvergenceWarning)


# --------------------------------------------------------------------------------------------------
# the small regime (issue 13, twenty-ninth pass; docs/derivations/dpgd_logistic.md section 12)
# --------------------------------------------------------------------------------------------------
#: dp_glm's private Newton solver is refused, before anything is spent, where n mu / sqrt(d) < REGIME_MARGIN
#: (n rows, public under replace-one; mu the Gaussian-DP parameter of the estimator's budget, after the
#: shares of a private range search or level selection; d coefficients with the intercept). Why this
#: margin (§12): the test log-loss a point loses to its noise is about delta' (H / n) delta / 2 with
#: delta = H^{-1} xi, xi the gradient noise (s.d. sigma_g = 2 sqrt(T / 0.6) / mu per coordinate), which is
#: sigma_g^2 tr(H^{-1}) / (2 n) >= 2 sigma_g^2 d^2 / n^2 on the scaled design (tr H <= n / 4); the MLE's gain
#: over the intercept-only model grows with the predictors (about d for predictors of comparable weight),
#: so the noise eats the gain where (n mu)^2 / d is below a constant. The value 42: measured (python -m
#: benchmarks glm_regime --set train): the misclassified training cells (refused though the median fit kept
#: a positive share of the MLE's gain, or passed though it kept none) are fewest, 6-8 of 168, for margins
#: 34-43; 42 is the value there that also refuses the issue's example (n = 300, d = 3, eps = 1: margin 41.0,
#: median share -0.77). Checked on held-out designs and real subsamples (docs/accuracy.md, twenty-ninth pass)
REGIME_MARGIN = 42.0


def regime_margin(n, d, mu) -> float:
    """n mu / sqrt(d): the public margin of dp_glm's small-regime rule (n rows, d coefficients with the
    intercept, mu the estimator's Gaussian-DP parameter)."""
    return float(n) * float(mu) / math.sqrt(float(d))


def regime_passes(n, d, mu) -> bool:
    """Whether (n, d, mu) is inside dp_glm's regime, n mu / sqrt(d) >= REGIME_MARGIN (public facts only)."""
    return regime_margin(n, d, mu) >= REGIME_MARGIN


def regime_refusal(n, d, eps, delta, estimator_budget, *, ranges_searched=False, levels_selected=False,
                   allowed=False, n_at_most=False, d_at_least=False):
    """The refusal text of dp_glm's small-regime rule, or None where it passes (or ``allowed``: the
    text is then the warning of a fit made anyway, prefixed so). Public facts only: n (replace-one), d,
    the user's (eps, delta) and ``estimator_budget(eps) -> (eps_est, delta_est)``, the budget the
    estimator gets at a total eps (the shares of the private range search or level selection taken off,
    exactly as the fit takes them). The n and the eps it names pass the same check: n rounded up to an
    integer, eps rounded up to 3 significant digits and checked. ``n_at_most`` / ``d_at_least``: the
    check runs before the design is built on an upper bound of n (rows before na_action="drop") or a lower
    bound of d (one level per factor whose levels are selected privately), so it refuses only what the
    check on the built design would; the text says so, and the n and eps it names are then necessary, not
    sufficient (derivation §14)."""
    from ..design.private_bounds import _up3
    from ..privacy.accounting import mu_from_eps_delta

    def mu_at(e):
        e_est, d_est = estimator_budget(e)
        return mu_from_eps_delta(e_est, d_est)

    mu = mu_at(eps)
    if regime_passes(n, d, mu):
        return None
    need_n = max(int(math.ceil(REGIME_MARGIN * math.sqrt(d) / mu)), int(n) + 1)
    while not regime_passes(need_n, d, mu):      # the float product of the named n passes
        need_n += 1
    # the smallest total eps whose estimator mu passes at this n: mu grows with eps (bisection on a
    # bracket), then rounded up to 3 significant digits and checked
    lo, hi = float(eps), max(2.0 * float(eps), 1e-3)
    while not regime_passes(n, d, mu_at(hi)) and hi < 1e6:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if regime_passes(n, d, mu_at(mid)) else (mid, hi)
    need_eps = float(_up3(hi))
    while not regime_passes(n, d, mu_at(need_eps)):
        need_eps = float(_up3(need_eps * (1.0 + 1e-3)))
    spent, what = [], []
    if ranges_searched:
        spent.append("a private range search")
        what.append("the ranges")
    if levels_selected:
        spent.append("a private selection of levels")
        what.append("the levels")
    shares = (f", after the share of {' and '.join(spent)}: declaring {' and '.join(what)} leaves the whole "
              "budget to the estimator") if spent else ""
    shown = math.floor(regime_margin(n, d, mu) * 10.0) / 10.0     # rounded down: never printed as 42
    rows = f"n = {int(n)} rows" + (" (before the rows with missing values are dropped)" if n_at_most else "")
    coefs = (f"at least {int(d)} coefficients (one level of each factor whose levels are not declared; each "
             "further level the private selection keeps adds one)" if d_at_least else f"{int(d)} coefficients")
    bounds_note = ""
    if n_at_most or d_at_least:
        bounds_note = (" Checked before anything is spent, on " + " and ".join(
            (["an upper bound of n"] if n_at_most else []) + (["a lower bound of d"] if d_at_least else []))
            + ": the fit would be refused with the exact values too, and the n and eps named here are "
            "necessary, not sufficient.")
    passes = "are needed" if (n_at_most or d_at_least) else "pass"
    head = (f"{rows} is too small for dp_glm's logistic fit of {coefs} at eps = "
            f"{float(eps):.4g}, delta = {float(delta):.3g}: n mu / sqrt(d) = {shown:g} is below "
            f"{REGIME_MARGIN:g}, where the released coefficients were measured to be no better than the "
            f"intercept-only model (mu = {mu:.3g}, the Gaussian-DP parameter of the estimator's budget"
            f"{shares}). At this budget n >= {need_n} rows {passes}; at n = {int(n)}, eps >= {need_eps:g} "
            f"{'is needed' if (n_at_most or d_at_least) else 'passes'}.{bounds_note} "
            "Or fit fewer terms (each factor level is a coefficient), "
            # only what was not declared (thirty-fourth pass: PSID1982 with every range and level declared
            # was told to declare them)
            + (f"declare {' and '.join(what)}, " if what else "")
            + "or use a univariate summary (dp_mean() of the outcome by group)")
    if allowed:
        return (f"{head}. Fitted anyway (allow_outside_regime=True): the coefficients are likely to be "
                "dominated by the privacy noise.")
    return f"{head}; to fit anyway, pass allow_outside_regime=True."


# --------------------------------------------------------------------------------------------------
# the outcome's base rate from the releases (issue 13, thirty-second pass; derivation dpgd_logistic.md §17)
# --------------------------------------------------------------------------------------------------
# The fit records the base rate p released by the first Newton step (facts base_rate_released /
# base_rate_sd) and the mean of p_i (1 - p_i) at the estimate from the mean released X'WX (facts
# mean_curvature_released / mean_curvature_sd). A check after the fit that withheld the intervals where
# n 4p(1 - p) mu / sqrt(d) was small, on either, was measured and not kept (§17: it withheld useful held-out
# cells). base_rate_factor is the measurement's helper (python -m benchmarks glm_regime --set released).
def base_rate_factor(p_hat, p_sd, z=0.0) -> float:
    """4p(1 - p) at the lower confidence bound (z s.d.s) of a released base rate: its least value over
    [p_hat - z p_sd, p_hat + z p_sd] clipped to [0, 1] (0 where the interval reaches 0 or 1). Post-processing;
    total on any input (0 for a non-finite one)."""
    p_hat, p_sd = float(p_hat), float(p_sd)
    if not (math.isfinite(p_hat) and math.isfinite(p_sd)):
        return 0.0
    far = abs(p_hat - 0.5) + float(z) * max(p_sd, 0.0)
    if far >= 0.5:
        return 0.0
    return float(1.0 - 4.0 * far * far)       # 4p(1 - p) = 1 - 4 (p - 1/2)^2


# --------------------------------------------------------------------------------------------------
# the noise's cost against the released gain (issue 13, thirty-third pass; derivation dpgd_logistic.md §18)
# --------------------------------------------------------------------------------------------------
# The fit records gain / cost (fact gain_to_noise_cost): the predictors' gain in test log-loss over the
# constant model, estimated from the releases, over the privacy noise's expected cost in the released point.
# A check that withheld the intervals, with an AccuracyWarning, where it is below 1 (the estimated share of
# the MLE's gain kept at most 0) was measured and not kept (§18: it withheld more useful fits than useless
# ones on every design of python -m benchmarks glm_regime --set cost).


def _noise_cost_check(H, V, theta, u):
    """The predictors' gain over the constant model against the privacy noise's cost, from releases
    (derivation dpgd_logistic.md §18), or None without an intercept direction ``u`` or on a non-finite input.

    On the scaled design, with H the (floored) mean released X'WX, V the gradient noise's covariance in the
    reported point theta (a function of H and the public noise scale) and Q = H - H u u'H / u'H u (the
    curvature left after the best constant, theta = c u): the point's expected excess log-loss from its
    noise is cost = tr(H V) / 2 (times 1/n per row), and the plug-in gain theta'Q theta / 2 overstates the
    MLE's gain by tr(Q V) / 2 in expectation, so gain = (theta'Q theta - tr(Q V)) / 2. n cancels in the
    ratio gain / cost (reported; negative where the plug-in gain is below its own noise); below 1 the
    estimated share of the gain the point keeps, 1 - cost / gain, is at most 0. Also the plug-in gain without
    the noise correction over the cost (a variant measured in §18). Post-processing of releases; total on
    finite input."""
    if u is None:
        return None
    H = (np.asarray(H, float) + np.asarray(H, float).T) / 2.0
    V = (np.asarray(V, float) + np.asarray(V, float).T) / 2.0
    theta = np.asarray(theta, float)
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(V)) and np.all(np.isfinite(theta))):
        return None
    # audit 33: a point, curvature or noise covariance near the ends of the double range (theta at 1e160,
    # a subnormal H) overflowed or underflowed in the products below, a FloatingPointError under
    # np.seterr(all="raise"); such an input gives no statistic (None), silently (releases only, rule 3)
    with np.errstate(all="ignore"):
        Hu = H @ u
        uHu = float(u @ Hu)
        if not (uHu > 0.0 and math.isfinite(uHu)):
            return None
        Q = H - np.outer(Hu, Hu) / uHu
        cost = 0.5 * float(np.sum(H * V))                 # tr(H V) / 2 (both symmetric)
        plug_in = 0.5 * float(theta @ Q @ theta)
        gain = plug_in - 0.5 * float(np.sum(Q * V))
        finite = bool(np.all(np.isfinite(Q))) and math.isfinite(plug_in)
    if not (finite and cost > 0.0 and math.isfinite(cost) and math.isfinite(gain)):
        return None
    ratio, plug_in_to_cost = gain / cost, plug_in / cost
    if not (math.isfinite(ratio) and math.isfinite(plug_in_to_cost)):
        return None
    return {"ratio": float(ratio), "gain": float(gain), "cost": float(cost),
            "plug_in_to_cost": float(plug_in_to_cost)}
