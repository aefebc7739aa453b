"""Empirical privacy audit, fast subset (the full audit: ``python -m benchmarks audit``, docs/audit.md).

For every method, pairs of replace-one neighbouring datasets (a row beyond the declared ranges, at
+-1e300 or 1.5e308, with and without declared bounds, a factor level only one row has) get a few
hundred seeded releases per side. A case passes when

* the held-out Clopper-Pearson eps lower bound of the best distinguishing test (chosen on the other
  half of the releases) is at most the claimed eps, and for Gaussian-DP claims mu_lb <= mu;
* no release is non-finite, raises a non-dpreg exception or lets a numpy warning through, no error /
  warning class occurs in at least half the releases of one side and never on the other;
* no data-derived string (the unique level's name) appears in the output (infinite eps).

The broken variants (noise scale halved, a sensitivity term dropped, clamping skipped; monkeypatched
inside the benchmark module only) must be flagged by the same code, so the audit can fail.

Tolerances: each case's bounds hold jointly with probability >= 1 - ALPHA = 0.95 when the claim is
true (Clopper-Pearson, union bound; derivation in benchmarks/bench_audit.py); the seeds are fixed,
so the outcome is deterministic. Cases that fail on today's code because of known findings are
strict xfails naming the finding: remove the mark once the fix is merged.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchmarks import bench_audit as A

#: releases per side whose whole to_dict() is scanned (strings, non-finite fields); keeps the file fast
TEST_SCAN = 4
CASES = [c for c in A.build_cases() if c.n["test"] > 0]


def _param(case):
    marks = [pytest.mark.xfail(strict=True, reason=f"known finding: {case.known}")] if case.known else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_empirical_eps_lower_bound_within_claim(case):
    r = A.run_case(case, case.n["test"], scan=TEST_SCAN)
    if math.isnan(r["eps"]):
        # no release on either side: the method refused every time (e.g. a pure-DP method asked to use
        # undeclared levels). Refusing is fine when it is the same on both sides (checked as findings),
        # and only where the case says it audits a refusal: otherwise its mechanism went unaudited
        # (twenty-first pass: the heavy-tailed cases after the regime refusal), which evaluate() flags
        assert case.refusal and not r["findings"], r["findings"]
        return
    assert r["eps_lb"] <= r["eps"], r["findings"]
    if r["mu"] is not None:
        assert r["mu_lb"] <= r["mu"], r["findings"]
    assert not r["findings"], r["findings"]


@pytest.mark.parametrize("variant,case", A.broken_cases(), ids=[b for b, _ in A.broken_cases()])
def test_broken_variant_is_flagged(variant, case):
    r = A.run_case(case, case.n["test"], broken=variant)
    assert r["flagged"], f"{variant} not detected: eps_lb {r['eps_lb']}, mu_lb {r['mu_lb']}"
    # the broken variant is detected through its privacy loss (or its non-finite output), not by luck
    assert r["eps_lb"] > r["eps"] or (r["mu"] is not None and r["mu_lb"] > r["mu"]), r["findings"]


def test_unbroken_tight_case_is_not_flagged():
    """The configuration the broken variants are measured on passes with the real code."""
    _, case = A.broken_cases()[0]
    r = A.run_case(case, case.n["test"])
    assert not r["findings"], r["findings"]


def test_clopper_pearson_upper_bound():
    # k = 0: P(Bin(n, p) = 0) = (1 - p)^n = a at p = 1 - a^(1/n) (closed form)
    assert A.cp_upper(0, 50, 0.01)[()] == pytest.approx(1 - 0.01 ** (1 / 50), rel=1e-10)
    # general k: the bound p solves P(Bin(n, p) <= k) = a
    k, n, a = 7, 40, 0.025
    p = A.cp_upper(k, n, a)[()]
    assert stats.binom.cdf(k, n, p) == pytest.approx(a, rel=1e-8)
    assert A.cp_upper(n, n, a)[()] == 1.0


def test_eps_and_mu_from_rates():
    # a test with FPR = FNR = 1/2 (a coin) shows nothing
    assert A.eps_from_rates(0.5, 0.5, 0.0) == 0.0
    # FPR = e^-eps/2, 1 - FNR = 1/2 (the Laplace mechanism at its median threshold): log ratio = eps
    assert A.eps_from_rates(0.5 * math.exp(-2.0), 0.5, 0.0) == pytest.approx(2.0, rel=1e-12)
    # the Gaussian trade-off: FPR = Phi(-t), FNR = Phi(t - mu) gives mu back for any threshold t
    mu, t = 1.3, 0.4
    assert A.mu_from_rates(stats.norm.cdf(-t), stats.norm.cdf(t - mu)) == pytest.approx(mu, rel=1e-9)


def test_selection_and_held_out_bound_on_a_simulated_laplace_mechanism():
    """A Laplace mechanism at eps = 1 (sensitivity 1, scale 1) on two means 0 and 1: the audit's
    bound stays below 1, and at scale 1/4 (true eps 4) it exceeds 1. Simulated releases (numpy's
    generator makes test data here, not dpreg noise)."""
    rng = np.random.default_rng(5)

    def obs(values):
        return [A.Obs(frozenset(), {"estimate": float(v)}, (1.0, 0.0, None)) for v in values]
    n = 4000
    ok = A.select_and_bound(obs(rng.laplace(0, 1, n)), obs(1 + rng.laplace(0, 1, n)), 0.0, None)
    assert ok["eps_lb"] <= 1.0
    bad = A.select_and_bound(obs(rng.laplace(0, 0.25, n)), obs(1 + rng.laplace(0, 0.25, n)), 0.0, None)
    assert bad["eps_lb"] > 1.0


def test_a_case_whose_every_release_is_refused_is_flagged_unless_it_audits_a_refusal():
    """Twenty-first pass: 44 cases (every heavy-tailed one) had refusals on both sides after the twentieth
    pass's regime rule and passed as "ok" with eps_lb 0. A case with no release on either side is now a
    finding, unless it is declared a refusal case; the heavy-tailed cases fit (with the opt-in)."""
    refused = A.Obs(tokens=frozenset({"error:MethodOutsideRegime"}), feats={}, claim=None)
    plain = A.Case("m: x", "m", "x -> y", None, None, {"full": 1, "quick": 1, "test": 1})
    r = A.evaluate(plain, [refused] * 6, [refused] * 6)
    assert r["flagged"] and any("no release on either side" in f for f in r["findings"])
    as_refusal = A.Case("m: x", "m", "x -> y", None, None, {"full": 1, "quick": 1, "test": 1}, refusal=True)
    assert not A.evaluate(as_refusal, [refused] * 6, [refused] * 6)["flagged"]
    ht = [c for c in A.build_cases() if c.method.startswith("ht_") and c.n["test"] > 0 and not c.refusal]
    assert len(ht) >= 10
    for case in ht:
        d0, d1 = case.make()
        claims = [A.observe(case.fit, d, seed).claim for seed, d in enumerate((d0, d1))]
        assert all(c is not None for c in claims), case.name



def test_a_level_reported_as_na_by_its_released_count_is_a_declared_outcome_not_a_defect():
    """Twenty-fourth pass: the twenty-third pass reports as NA a kept level whose released count is at most
    0 (adassp_boosted.md §37; facts["empty_level_not_estimable"], with a warning). The harness counted that
    NaN coefficient as a defect, so the quick audit's case "dp_glm dpgd (blind directions)" was flagged at
    41/100 releases of D and 38/100 of D' (the same rate on both sides). The level's count is one row or
    none, so a fixed seed among the first 20 gives the NA (each does with probability about 1/2)."""
    case = next(c for c in A.build_cases() if c.method == "dp_glm dpgd (blind directions)")
    d0, _ = case.make()
    for seed in range(20):
        fit = case.fit(d0, seed)
        named = fit.facts.get("empty_level_not_estimable")
        if named:
            break
    assert named, "no fit of the first 20 seeds reported a level as NA by its released count"
    assert all(math.isnan(fit.coef[t]) for t in named)
    tokens = A.observe(case.fit, d0, seed).tokens
    assert {f"na-declared:coef[{t}]" for t in named} <= tokens
    assert not [t for t in tokens if A.is_defect(t)]
