"""DPEstimate: the result of ``dpreg.dp_mean`` and ``dpreg.dp_quantile``.

Holds only released values (the estimate(s), the released clip points or interval ends, flags that
are functions of released values), public facts (n, bounds, budget, settings) and the privacy
statement. Nothing here was computed from the data without going through the ledger.
"""
from __future__ import annotations

import html as _html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InvalidArgument, InvalidArgumentType
from .format import format_number, format_percent_label, to_plain
from .tables import render_html, render_markdown, render_text

_LABELS = {"mean": "private modified winsorized mean (PMWM)",
           "quantile": "unbounded private quantile (AboveThreshold search)"}


def _label(e) -> str:
    """The estimator's name for the summary title (dp_mean has two: PMWM, or the clipped mean)."""
    f = e.facts or {}
    if e.kind == "mean" and f.get("estimator") == "clipped":
        return "mean of the data clipped to the declared bounds"
    if e.kind == "quantile" and _finite(f.get("lower")) and _finite(f.get("upper")):
        # thirty-first pass (newcomer): "unbounded private quantile" above "Search bounds: [1, 11]" read
        # as a contradiction; with both bounds declared the search runs between them
        return "AboveThreshold search between the declared bounds"
    return _LABELS.get(e.kind, e.kind)


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def _sampling_error_text(sampling_sd) -> str:
    """The note's words for the mean's sampling error, from the released second moment.

    A sampling sd of exactly 0 is the post-processing clamp of a released second moment that, with its
    noise allowance, fell to or below the squared offset of the mean: the noise hid the data's spread at
    this n and eps, and "sd 0" would read as data without spread. The interval stays the calibrated one
    (its coverage is over that noise; docs/derivations/winsorized_sa.md §2.7).
    """
    if sampling_sd == 0:
        return ("sampling error (sd not resolved: the privately released second moment, with its noise "
                "allowance, leaves no spread, so the noise hides the data's spread at this n and eps; the "
                "interval's coverage is calibrated over that noise)")
    return f"sampling error (sd {format_number(sampling_sd)}, from a privately released second moment)"


class EstimateSummary:
    """Printable summary block of a :class:`dpreg.DPEstimate`, made by :meth:`dpreg.DPEstimate.summary`.

    ``str()``, :meth:`to_markdown`, :meth:`to_html`, :meth:`to_latex`; notebooks display it as HTML.

    Parameters
    ----------
    est : DPEstimate
        The estimate to summarise.
    """

    def __init__(self, est: DPEstimate):
        self._est = est

    def _table(self):
        """(headers, rows): one row per released estimate."""
        e = self._est
        ci = e.conf_int()
        has_ci = bool(np.any(np.isfinite(ci.to_numpy(dtype=float))))
        has_se = any(_finite(v) for v in e._se_list())
        headers = [""] + ["Estimate"] + (["Std. Error"] if has_se else [])
        if has_ci:
            headers += [ci.columns[0], ci.columns[1]]
        rows = []
        for i, name in enumerate(e._names()):
            row = [name, format_number(e._est_list()[i])]
            if has_se:
                row.append(format_number(e._se_list()[i]))
            if has_ci:
                row += [format_number(ci.iloc[i, 0]), format_number(ci.iloc[i, 1])]
            rows.append(row)
        return headers, rows

    def _notes(self) -> list[str]:
        e = self._est
        f = e.facts
        notes = [f"n = {e.n} (public; replace-one neighbours)", _privacy_line(e.privacy, f)]
        if e.kind == "mean":
            if f.get("conf_int") is None and f.get("sampling_sd") is not None:
                notes.append("No interval: the bias of the private clip points could not be bounded well "
                             "enough from public facts (see the warning).")
            elif f.get("winsorization_bias_bound") is not None:
                bb = f["winsorization_bias_bound"]
                notes.append(f"Interval for the mean: {_sampling_error_text(f['sampling_sd'])}, privacy noise (sd "
                             f"{format_number(f.get('noise_sd'))}) and a public bound on the winsorization "
                             f"bias (-{format_number(bb[0])}, +{format_number(bb[1])}); Std. Error = "
                             f"half-width / z.")
            elif f.get("sampling_sd") is not None:
                notes.append(f"Std. Error combines {_sampling_error_text(f['sampling_sd'])} and privacy noise (sd "
                             f"{format_number(f.get('noise_sd'))}).")
            else:
                notes.append("Std. Error is the sd of the privacy noise of the mean step only "
                             "(sampling error not included: inference=False or se_fraction=0).")
            b = f.get("bounds") or [None, None]
            if f.get("estimator") == "clipped":
                notes.append(f"Mean of the data clipped to the declared bounds [{format_number(b[0])}, "
                             f"{format_number(b[1])}] (no winsorization bias for data inside them).")
            else:
                notes.append(f"Released clip points: [{format_number(f.get('q_lo'))}, "
                             f"{format_number(f.get('q_hi'))}]; xi = {format_number(f.get('xi'))}; bounds "
                             f"[{format_number(b[0])}, {format_number(b[1])}]; beta = "
                             f"{format_number(f.get('beta'))}")
        else:
            notes.append(f"Search bounds: [{format_number(f.get('lower'))}, {format_number(f.get('upper'))}]"
                         + (f"; private anchor {format_number(f['anchor'])}" if f.get("anchor") is not None else "")
                         + (f"; released starts of the walks [{format_number(f['starts'][0])}, "
                            f"{format_number(f['starts'][1])}]" if f.get("starts") is not None else "")
                         + f"; beta = {format_number(f.get('beta'))}")
            if f.get("conf_int") is not None:
                # the construction that ran (docs/derivations/quantile_search.md §5, §5.4, §5.5): an end
                # with a declared bound on its side walks from it on a grid centred on the estimate; an end
                # without one is a search at a widened level
                declared = [v is not None and math.isfinite(float(v)) for v in (f.get("lower"), f.get("upper"))]
                walked = ("each end" if all(declared) else "the end on the declared bound's side"
                          if any(declared) else None)
                text = "Intervals: "
                if walked:
                    text += (f"{walked} walks from its declared bound on a grid centred on the estimate and "
                             "releases the last point passed, at a count target that bounds its miss "
                             "probability exactly (binomial rank and search noise)")
                if not all(declared):
                    text += (("; the other end is" if walked else "each end is") + " a released order "
                             "statistic at a level widened for sampling error (binomial rank) and the "
                             "search noise (tail bound)")
                notes.append(text + "; Std. Error = half-width / z.")
        if f.get("anchor") is not None and e.kind == "mean":
            notes.append(f"No bound declared: private anchor {format_number(f['anchor'])} (10% of the budget).")
        return notes

    def __str__(self) -> str:
        e = self._est
        f = e.facts
        kind = _label(e)
        lines = [f"Differentially private {e.kind}: {kind}"]
        if e.kind == "quantile" and not isinstance(f.get("q"), list):
            lines[0] += f", q = {format_number(f.get('q'))}"
        notes = self._notes()
        lines += notes[:2] + [""] + [render_text(*self._table())] + notes[2:]
        if e.warnings:
            lines.append("Warnings:")
            lines.extend(f"  - {w}" for w in e.warnings)
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The summary as Markdown (table, notes, privacy line).

        Returns
        -------
        str
        """
        e = self._est
        parts = [f"**Differentially private {e.kind}: {_label(e)}**",
                 render_markdown(*self._table()), "\n\n".join(self._notes())]
        parts += [f"Warning: {w}" for w in e.warnings]
        return "\n\n".join(parts) + "\n"

    def to_html(self) -> str:
        """The summary as HTML (what notebooks display).

        Returns
        -------
        str
        """
        e = self._est
        out = [f"<p><strong>{_html.escape('Differentially private ' + e.kind + ': ' + _label(e))}"
               "</strong></p>", render_html(*self._table())]
        out += [f"<p>{_html.escape(t)}</p>" for t in self._notes() + [f"Warning: {w}" for w in e.warnings]]
        return "\n".join(out) + "\n"

    def to_latex(self, *, caption: str | None = None, label: str | None = None) -> str:
        r"""A booktabs ``table`` (needs ``\usepackage{booktabs}``) with the notes under it.

        Parameters
        ----------
        caption : str, optional
            Table caption.
        label : str, optional
            LaTeX ``\label`` of the table.

        Returns
        -------
        str
        """
        from .tables import render_latex
        e = self._est
        return render_latex(*self._table(), caption=caption or f"Differentially private {e.kind}",
                            label=label, notes=self._notes() + [f"Warning: {w}" for w in e.warnings]) + "\n"

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

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
    """A differentially private univariate estimate, returned by :func:`dpreg.dp_mean` and
    :func:`dpreg.dp_quantile`.

    Released facts are also readable as attributes (``est.q_lo``, ``est.near_bound``, ...).

    Attributes
    ----------
    estimate : float or list of float
        The released value; for :func:`dpreg.dp_quantile` with several levels, a list in the order of
        q (:attr:`estimates` gives them as a Series indexed by q).
    std_error : float, list of float or None
        Standard error: for dp_mean, sampling error and privacy noise combined (noise only with
        ``inference=False``); for dp_quantile, the released interval's half-width / z. None when not
        available.
    privacy : dpreg.PrivacyStatement
        The privacy statement of every release.
    facts : dict
        Released intermediate values (clip points, interval ends) and public settings.
    warnings : list of str
        Diagnostics computed from released values and public facts only.
    kind : str
        "mean" or "quantile".
    """
    estimate: Any
    std_error: Any
    privacy: Any
    facts: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    kind: str = "mean"

    @property
    def n(self) -> int:
        """Number of values (public under replace-one neighbours)."""
        return int(self.facts.get("n"))

    def __getattr__(self, name):  # facts as attributes: est.q_lo, est.xi, est.near_bound, ...
        if name.startswith("_"):
            raise AttributeError(name)
        facts = self.__dict__.get("facts", {})
        if name in facts:
            return facts[name]
        raise AttributeError(name)

    # ---- helpers for scalar / vector results ----------------------------------------------------
    @property
    def vector(self) -> bool:
        """True for ``dp_quantile`` with several levels."""
        return isinstance(self.estimate, (list, tuple, np.ndarray))

    def _est_list(self) -> list:
        return list(self.estimate) if self.vector else [self.estimate]

    def _se_list(self) -> list:
        if self.std_error is None:
            return [None] * len(self._est_list())
        return list(self.std_error) if self.vector else [self.std_error]

    def _names(self) -> list[str]:
        if self.kind == "mean":
            return ["mean"]
        qs = self.facts.get("q")
        qs = qs if isinstance(qs, list) else [qs]
        return [f"q = {format_number(v)}" for v in qs]

    @property
    def estimates(self) -> pd.Series:
        """The released value(s) as a Series (index: "mean", or the levels q)."""
        if self.kind == "mean":
            idx = ["mean"]
        else:
            qs = self.facts.get("q")
            idx = qs if isinstance(qs, list) else [qs]
        return pd.Series([float(v) for v in self._est_list()], index=idx, name="estimate")

    def __float__(self):
        if self.vector:
            raise InvalidArgumentType("several quantiles were released: use .estimates (a Series) or .estimate")
        return float(self.estimate)

    # ---- inference --------------------------------------------------------------------------------
    def conf_int(self, level: float | None = None) -> pd.DataFrame:
        """Confidence interval(s), one row per estimate.

        dp_mean can recompute its interval at another level from its released standard-error components
        (post-processing); dp_quantile's interval ends are releases at one level, so another level is
        refused.

        Parameters
        ----------
        level : float, optional
            None: the level the release was made for (``facts["level"]``).

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``; NaN when no interval was released (``inference=False``).

        Raises
        ------
        dpreg.errors.InvalidArgument
            A dp_quantile interval asked for at a level other than the released one.
        """
        f = self.facts
        rel_level = f.get("level")
        idx = list(self.estimates.index)
        conf = f.get("conf_int")
        if level is not None and not (isinstance(level, (int, float)) and not isinstance(level, bool)
                                      and 0 < level < 1):
            raise InvalidArgument("level must be a number strictly between 0 and 1, e.g. 0.95")
        if conf is None:
            return pd.DataFrame(np.full((len(idx), 2), np.nan), index=idx, columns=["lower", "upper"])
        if level is not None and rel_level is not None and abs(level - rel_level) > 1e-12:
            if self.kind != "mean":
                raise InvalidArgument(f"the interval ends were released at level {rel_level:g}; rerun "
                                 f"dp_quantile(..., level={level:g}) for another level")
            conf = self._mean_interval(level)
        arr = np.asarray(conf, dtype=float).reshape(len(idx), 2)
        return pd.DataFrame(arr, index=idx, columns=["lower", "upper"])

    def _mean_interval(self, level):
        from scipy import stats
        f = self.facts
        s, sd = f.get("sampling_sd") or 0.0, f.get("noise_sd") or 0.0
        bias = f.get("winsorization_bias_bound")
        if bias is not None:
            # the bias bound holds with probability 1 - bias_alpha (spent from the released level's
            # miscoverage), so only levels up to the released one can be recomputed
            if level > f["level"]:
                raise InvalidArgument(f"the winsorization bias bound of this interval was derived for level "
                                      f"{f['level']:g}; rerun dp_mean(..., level={level:g}) for a higher level")
            level = level + f["bias_alpha"]
        if f.get("accounting") == "pure":
            from ..inference.subsample import gauss_laplace_halfwidth
            h = gauss_laplace_halfwidth(s, sd / math.sqrt(2.0), float(level))
        else:
            h = float(stats.norm.ppf(0.5 + level / 2.0)) * math.sqrt(s * s + sd * sd)
        if bias is not None:
            return [self.estimate - h - bias[0], self.estimate + h + bias[1]]
        return [self.estimate - h, self.estimate + h]

    # ---- display and exchange -----------------------------------------------------------------------
    def summary(self) -> EstimateSummary:
        """Printable summary of the estimate.

        Returns
        -------
        EstimateSummary
        """
        return EstimateSummary(self)

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def _repr_markdown_(self) -> str:
        return self.summary().to_markdown()

    def __repr__(self) -> str:
        if self.vector:
            est = "[" + ", ".join(format_number(v) for v in self.estimate) + "]"
            se = "None" if self.std_error is None else "[" + ", ".join(format_number(v) for v in self.std_error) + "]"
        else:
            est, se = format_number(self.estimate), format_number(self.std_error)
        return f"DPEstimate(kind={self.kind!r}, estimate={est}, std_error={se}, n={self.facts.get('n')})"

    def to_dict(self) -> dict:
        """Plain Python types: kind, estimate, std_error, conf_int ({lower, upper, level}), facts,
        warnings, privacy (PrivacyStatement.to_dict()), summary_text."""
        priv = self.privacy.to_dict() if hasattr(self.privacy, "to_dict") else self.privacy
        ci = self.conf_int()
        return to_plain({"kind": self.kind, "estimate": self.estimate, "std_error": self.std_error,
                         "conf_int": {"lower": ci["lower"].tolist(), "upper": ci["upper"].tolist(),
                                      "level": self.facts.get("level")},
                         "facts": self.facts, "warnings": list(self.warnings), "privacy": priv,
                         "summary_text": str(self.summary())})


__all__ = ["DPEstimate", "EstimateSummary", "format_percent_label"]
