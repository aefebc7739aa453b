"""DPEstimate: the result of ``dpreg.dp_mean`` and ``dpreg.dp_quantile``.

Holds only released values (the estimate, the released clip points, flags that are functions of
released values), public facts (n, bounds, budget, settings) and the privacy statement. Nothing
here was computed from the data without going through the ledger.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .format import format_number, to_plain

_LABELS = {"mean": "private modified winsorized mean (PMWM)",
           "quantile": "unbounded private quantile (AboveThreshold search)"}


class EstimateSummary:
    """Printable summary block of a :class:`DPEstimate` (``str()``, ``to_markdown()``)."""

    def __init__(self, est: "DPEstimate"):
        self._est = est

    def _rows(self):
        e = self._est
        rows = [("Estimate", format_number(e.estimate))]
        if e.std_error is not None and math.isfinite(e.std_error):
            rows.append(("Std. Error", format_number(e.std_error)))
        return rows

    def __str__(self) -> str:
        e = self._est
        f = e.facts
        kind = _LABELS.get(e.kind, e.kind)
        lines = [f"Differentially private {e.kind}: {kind}"]
        if e.kind == "quantile":
            lines[0] += f", q = {format_number(f.get('q'))}"
        lines.append(f"n = {e.n} (public; replace-one neighbours)")
        lines.append(_privacy_line(e.privacy, f))
        lines.append("")
        width = max(len(r[0]) for r in self._rows())
        for name, val in self._rows():
            lines.append(f"{name.ljust(width)}  {val}")
        if e.kind == "mean":
            lines.append("Std. Error is the sd of the privacy noise of the mean step only "
                         "(sampling error not included).")
            lines.append(f"Released clip points: [{format_number(f.get('q_lo'))}, {format_number(f.get('q_hi'))}]"
                         f"; xi = {format_number(f.get('xi'))}; bounds [{format_number(f['bounds'][0])}, "
                         f"{format_number(f['bounds'][1])}]; beta = {format_number(f.get('beta'))}")
        else:
            lo, hi = f.get("lower"), f.get("upper")
            lines.append(f"Search bounds: [{format_number(lo)}, {format_number(hi)}]; "
                         f"beta = {format_number(f.get('beta'))}; grid steps taken = {f.get('steps')}")
        if e.warnings:
            lines.append("Warnings:")
            lines.extend(f"  - {w}" for w in e.warnings)
        return "\n".join(lines)

    def to_markdown(self) -> str:
        body = ["| | value |", "|---|---:|"] + [f"| {a} | {b} |" for a, b in self._rows()]
        return "\n".join(body)

    __repr__ = __str__


def _privacy_line(privacy, facts) -> str:
    acc = facts.get("accounting", "pure")
    qn = facts.get("quantile_noise", "exponential")
    eps = getattr(privacy, "eps", facts.get("eps"))
    delta = getattr(privacy, "delta", facts.get("delta", 0.0))
    if acc == "pure":
        text = f"Privacy: {format_number(eps)}-DP (pure)"
    else:
        rho = facts.get("rho")
        text = (f"Privacy: (eps = {format_number(eps)}, delta = {format_number(delta)})-DP via "
                f"rho = {format_number(rho)} zCDP")
    text += f"; quantile noise: {qn}"
    seeded = getattr(privacy, "seeded", facts.get("seeded"))
    text += "; seeded: " + ("yes (reproducible, not for release)" if seeded else "no")
    return text


@dataclass
class DPEstimate:
    """A differentially private univariate estimate.

    estimate  : the released value
    std_error : noise-aware standard error where the method gives one (dp_mean: sd of the mean-step
                privacy noise), else None
    privacy   : PrivacyStatement (``dpreg.privacy.accounting.compose_ledger``) of every release
    facts     : released intermediate values (q_lo, q_hi) and public settings (n, bounds, xi, ...)
    warnings  : diagnostics computed from released values and public facts only
    kind      : "mean" or "quantile"
    """
    estimate: float
    std_error: float | None
    privacy: Any
    facts: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    kind: str = "mean"

    @property
    def n(self) -> int:
        return int(self.facts.get("n"))

    def __getattr__(self, name):  # facts as attributes: est.q_lo, est.xi, est.near_bound, ...
        facts = self.__dict__.get("facts", {})
        if name in facts:
            return facts[name]
        raise AttributeError(name)

    def __float__(self):
        return float(self.estimate)

    def summary(self) -> EstimateSummary:
        return EstimateSummary(self)

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return (f"DPEstimate(kind={self.kind!r}, estimate={format_number(self.estimate)}, "
                f"std_error={format_number(self.std_error)}, n={self.facts.get('n')})")

    def to_dict(self) -> dict:
        priv = self.privacy.to_dict() if hasattr(self.privacy, "to_dict") else self.privacy
        return to_plain({"kind": self.kind, "estimate": self.estimate, "std_error": self.std_error,
                         "facts": self.facts, "warnings": list(self.warnings), "privacy": priv})
