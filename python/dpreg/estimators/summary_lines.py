"""The method blocks of the text summary, one function per method family, declared on each method's
:class:`~dpreg.estimators.registry.MethodSpec` as ``summary_lines``.

Each function reads only the fit's public facts, tuning values and terms (``fit.facts``,
``fit.tuning``, ``fit.terms``): released values and public constants. ``fmt`` is the results
layer's formatting kit, passed in so that the estimators do not import the results layer:
``fmt.number(x, digits=4)`` (significant digits, "NA" for missing), ``fmt.wrap(text, indent=...)``
(lines of at most 100 characters), ``fmt.value(v)`` (a tuning value or a short list of them) and
``fmt.range(values)`` ("a" when all equal, else "min-max")."""
from __future__ import annotations


def isp_lines(fit, fmt) -> list[str]:
    """ISP facts (docs/isp.md): status, noise constant, where R came from, k, L, iota, the budget
    split. All are public constants computed from (n, d, eps, delta, L, R) or released (R via
    PrivSigma); the forbidden internals (s1, s2, weights, down-weighted rows, exact RSS) are never in
    the facts."""
    f = fit.facts
    fn = lambda k: fmt.number(f.get(k))  # noqa: E731
    src = f.get("R_source")
    if src == "PrivSigma":
        r_from = "from PrivSigma (private residual scale"
        if f.get("sigma_hi_privsigma") is not None:
            r_from += f" sigma_hi = {fn('sigma_hi_privsigma')}"
        r_from += ")"
    elif src == "declared sigma":
        r_from = "from the declared sigma (sigma * sqrt(2 log(2n)); no budget spent on it)"
    elif src == "declared R":
        r_from = "declared (no budget spent on it)"
    else:
        r_from = f"({src})" if src else ""
    lines = [
        f"ISP status: {f.get('status', 'NA')}; noise constant c = {fn('noise_constant_c')} (units of y: "
        "on well-behaved data the coefficients are OLS plus N(0, c^2 (X'X)^-1) noise)",
        f"  residual bound R = {fn('R')} {r_from}",
        f"  grid size k = {f.get('k', 'NA')}, leverage threshold L = {fn('L')}, residual inflation "
        f"iota = {fn('iota')} (iota_max = {fn('iota_max')}), covariance samples N = "
        f"{f.get('N_cov_samples') if f.get('N_cov_samples') is not None else 'none'}, leverage thresholds "
        f"tried: {f.get('L_tries', 'NA')} (released: call {f.get('call_released', 'NA')})",
    ]
    lines = [fmt.wrap(x, indent="    ") if x.startswith("  ") else fmt.wrap(x) for x in lines]
    ed = lambda e, d: f"{fn(e)} (delta {fn(d)})"  # noqa: E731
    split = (f"Budget split (eps, delta): total {ed('eps_total', 'delta_total')}; PrivSigma eps_sigma = "
             f"{ed('eps_sigma', 'delta_sigma')}; each ISP call {ed('eps_per_call', 'delta_per_call')} = "
             f"eps_T {ed('eps_T', 'delta_T')} for the propose-test-release check + eps_M "
             f"{ed('eps_M', 'delta_M')} and eps_C {ed('eps_C', 'delta_C')} for the coefficients")
    if f.get("N_cov_samples") is not None:
        split += (f" + eps_N {ed('eps_N', 'delta_N')} for the covariance samples + eps_S "
                  f"{ed('eps_S', 'delta_S')} for the residual sum of squares")
    lines.append(fmt.wrap(split))
    return lines


def subsample_lines(fit, fmt) -> list[str]:
    """Subsample-and-aggregate facts (docs/subsample_tukey.md)."""
    f = fit.facts
    agg_names = {"pmwm": "private modified winsorized mean", "clipped": "clipped mean (Nissim et al. 2007)",
                 "wwm": "widened winsorized mean (Smith 2011)"}
    agg = f.get("aggregator")
    k, m, N = f.get("k"), f.get("m"), f.get("N")
    by_unit = bool(f.get("by_unit"))  # unit=: groups of whole units; the row count is private
    size = "" if m is None else f" of ~{fmt.number(m, 3)} {'units' if by_unit else 'rows'}"
    n_txt = f"N = {N} units" if by_unit else f"N = {N}"
    lines = [fmt.wrap(f"Groups: k = {k} disjoint groups{size} ({n_txt}), OLS in each group; aggregator: "
                   f"{agg_names.get(agg, agg)} ({agg}); beta = {fmt.value(f.get('beta'))}, xi = "
                   f"{fmt.value(f.get('xi'))} (c_eff = {fmt.value(f.get('c_eff'))})")]
    acc = f.get("accounting")
    if acc == "zcdp":
        acc_s = f"zCDP, rho = {fmt.number(f.get('rho'))}"
    elif acc == "pure":
        acc_s = "pure eps-DP (delta = 0)"
    else:
        acc_s = str(acc)
    shares = f.get("budget_shares") or {}
    share_s = ", ".join(f"{str(k_).replace('_', ' ')} {100 * float(v):.0f}%" for k_, v in shares.items()
                        if isinstance(v, (int, float)))
    lines.append(fmt.wrap(f"Accounting: {acc_s}; quantile noise: {f.get('quantile_noise')}"
                       + (f"; budget: {share_s}" if share_s else "")))
    se_m = f.get("se_method")
    n_boot = fit.tuning.get("n_boot", (None,))[0]
    se_text = {"bootstrap": "parametric bootstrap of the whole aggregator from the released spread"
                            + (f" (B = {n_boot})" if n_boot is not None else "")
                            + "; intervals from its replicates",
               "analytic": "analytic, SE = sqrt(sampling_sd^2 + noise_sd^2)",
               "none": "none (all budget on the coefficients)"}.get(se_m, str(se_m))
    lines.append(fmt.wrap(f"Standard errors: {se_text}; sampling_sd from the privately released spread of "
                       "the group estimates, noise_sd of the aggregation noise"))
    cb = f.get("coef_bounds")
    if isinstance(cb, dict) and cb:
        pairs = {tuple(map(float, v)) for v in cb.values()}
        if len(pairs) == 1:
            lo, hi = pairs.pop()
            lines.append(f"Coefficient bounds: [{fmt.number(lo)}, {fmt.number(hi)}] for every term")
        else:
            lines.append(fmt.wrap("Coefficient bounds: " + ", ".join(
                f"{t} [{fmt.number(v[0])}, {fmt.number(v[1])}]" for t, v in cb.items())))
    return lines


def tukey_lines(fit, fmt) -> list[str]:
    f = fit.facts
    blocks = (f"~{f.get('units_per_model')} whole units (every unit used)" if f.get("by_unit")
              else f"{f.get('block_size')} rows ({f.get('unused_rows', 0)} rows unused)")
    lines = [fmt.wrap(f"TukeyEM: m = {f.get('m')} models, OLS on disjoint random blocks of {blocks}; "
                   "the estimate is drawn from the "
                   f"approximate Tukey-depth region of the m block estimates (depth >= t = "
                   f"{f.get('depth_floor_t')})"),
             fmt.wrap(f"Propose-test-release check: passed (eps/2 = {fmt.number(f.get('eps_prime'))} for "
                   f"the Laplace test against the cut {fmt.number(f.get('ptr_cut'))}; eps/2 and delta "
                   "for the restricted exponential mechanism; a failed check releases nothing and raises "
                   "EstimationFailed)")]
    return lines


def dpgd_lines(fit, fmt) -> list[str]:
    f = fit.facts
    k = int(f.get("averaged_iterates") or 1)
    reported = f"mean of the last {k} iterates reported" if k > 1 else "last iterate reported"
    if "contraction" in f:   # logistic loss: private Newton or majorise-minimise
        sens = f.get("sensitivities") or {}
        if f.get("algorithm") == "newton":
            head = (f"Private Newton: logistic loss, T = {f.get('T')} steps, each with a released X'WX "
                    f"(noise sd {fmt.number(f.get('noise_sd_hessian'))}) and gradient sum")
        else:
            head = (f"Private MM: logistic loss, T = {f.get('T')} Newton-like steps preconditioned by a "
                    f"released X'X (ridge {fmt.number(f.get('gram_ridge'))}) and a gradient sum")
        lines = [fmt.wrap(f"{head}; gradient-sum sensitivity {fmt.number(sens.get('gradient'))}, Gaussian "
                       f"noise sd {fmt.number(f.get('noise_sd_gradient'))} per step; contraction at the "
                       f"estimate {fmt.number(f.get('contraction'))}; {reported}")]
        widen = [w for w in (f.get("bias_aware_widening") or []) if w is not None]
        if "unresolved_directions" in f:
            # issues 12/13: the resolution rule of docs/derivations/dpgd_logistic.md (post-processing)
            u, d = int(f["unresolved_directions"]), len(f.get("remaining_share") or [])
            held = f.get("not_estimable") or []
            txt = (f"Intervals: the mean of the last {k} released X'WX matrices (noise sd "
                   f"{fmt.number(f.get('noise_sd_hessian_mean'))}) resolves {d - u} of {d} directions")
            union = [w for w in (f.get("separation_union_widening") or []) if w is not None]
            if widen and max(widen) > 1.01 and not f.get("separation_union_directions"):
                txt += f"; intervals widened for the bias toward 0 left by the steps (factor up to {fmt.number(max(widen))})"
            if f.get("separation_union_directions"):
                # the remaining-share union (derivation section 2e): intervals under a stated assumption
                txt += (f"; (quasi-)separated along {int(f['separation_union_directions'])} of them: intervals "
                        "are the union over the share of the way left there (see the warning), widened up "
                        f"to {fmt.number(max(union) if union else 1.0)}x")
                if held:
                    txt += f"; withheld (not estimable at this n and eps): {', '.join(held)}"
            elif f.get("separated_directions"):
                # the separation check (derivation section 2b) withholds every interval
                txt += (f"; (quasi-)separated along {int(f['separated_directions'])} of them: no interval "
                        "(see the warning)")
            elif held:
                txt += f"; withheld (not estimable at this n and eps): {', '.join(held)}"
            if f.get("collapse_check_blind_directions") and not f.get("separated_directions"):
                # derivation section 2f: floor directions the collapse check cannot see at this n and eps.
                # Said in full here: its own warning is issued only where it withholds an interval the
                # unresolved directions did not (newcomer review 20: "(see the warning)" pointed at a
                # warning about the other rule on Pima, n = 752, eps = 4)
                txt += ("; the check for a curvature that collapsed since the start (a steep slope or a rare "
                        f"outcome) has no power along {int(f['collapse_check_blind_directions'])} of them at "
                        "this n and eps")
            lines.append(fmt.wrap(txt))
        return lines
    return [fmt.wrap(f"DP-GD: {f.get('loss', 'squared')} loss, T = {f.get('T')} full-batch steps, "
                  f"{f.get('clipping', 'per-sample gradients clipped')}; per-step gradient sensitivity "
                  f"{fmt.number(f.get('gradient_sensitivity'))}, Gaussian noise sd "
                  f"{fmt.number(f.get('noise_sd_per_step'))} on each gradient sum; {reported}")]


def heavy_tailed_lines(fit, fmt) -> list[str]:
    """Heavy-tailed family (docs/heavy_tailed.md): loss and constraint, iterations and blocks,
    composition, per-iteration mechanism parameters, support, assumptions and every tuning value
    with its origin."""
    f = fit.facts
    d = f.get("d", len(fit.terms))
    lines = [fmt.wrap(f"Loss: {f.get('loss', 'squared')}; constraint: {f.get('constraint', 'NA')}")]
    bs = f.get("block_sizes")
    if bs:
        it = f"T = {f.get('T')} iterations on disjoint blocks of {fmt.range(bs)} rows"
    else:
        it = f"T = {f.get('T')} iterations on the full (shrunken) data"
    lines.append(fmt.wrap(f"Iterations: {it}; composition: {f.get('composition', 'NA')}; privacy: "
                       f"{f.get('privacy_type', 'NA')}, eps = {fmt.number(f.get('eps'))}, delta = "
                       f"{fmt.number(f.get('delta'))}"))
    per = f.get("per_iteration")
    parts = []
    if isinstance(per, list) and per:
        keys = [k for k in per[0] if k not in ("t", "m")]
        for k in keys:
            vals = [p.get(k) for p in per if isinstance(p, dict)]
            if all(isinstance(v, str) for v in vals):
                parts.append(f"{k} = {'/'.join(dict.fromkeys(vals))}")
            else:
                parts.append(f"{k} = {fmt.range(vals)}")
    for k in ("eps_step", "eps_step_rule", "score_sensitivity", "sensitivity_constant", "accounting"):
        if k in f and f[k] is not None:
            parts.append(f"{k} = {fmt.value(f[k])}")
    if parts:
        lines.append(fmt.wrap("Mechanism per iteration: " + ", ".join(parts)))
    if f.get("shrinkage"):
        lines.append(fmt.wrap(f"Shrinkage: {f['shrinkage']}"))
    support = f.get("support")
    if support is not None:
        sup = f"Non-zero coefficients: {f.get('nonzeros', len(support))} of {d} (support: " \
              f"{', '.join(support) if support else 'none'})"
        if f.get("forced_into_support"):
            sup += f"; forced into the support: {', '.join(f['forced_into_support'])}"
        if f.get("sparsity_note"):
            sup += f"; {f['sparsity_note']}"
        lines.append(fmt.wrap(sup))
    if f.get("privacy_noise_sd") is not None:
        lines.append(fmt.wrap(f"privacy_noise_sd = {fmt.number(f['privacy_noise_sd'])} (NOT a standard "
                           f"error): {f.get('privacy_noise_sd_note', '')}".rstrip(": ")))
    if f.get("assumptions"):
        lines.append(fmt.wrap(f"Accuracy guarantee assumes: {f['assumptions']}"))
    if f.get("scaled_problem"):
        lines.append(fmt.wrap(f"Scaling: {f['scaled_problem']}"))
    tun = fit.tuning
    if tun:
        lines.append("Tuning (value -- origin):")
        for k, (value, origin) in tun.items():
            lines.append(fmt.wrap(f"  {k} = {fmt.value(value)} -- {origin or 'not recorded'}", indent="      "))
    return lines
