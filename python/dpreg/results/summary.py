"""The R-like :class:`Summary` of a fit and the formatting kit handed to the methods' summary blocks."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..errors import diagnostic_category
from ..estimators.registry import METHODS
from ..inference.wald import BONFERRONI_RULE
from .common import _NO_INFERENCE, _check_level
from .format import SIGNIF_LEGEND, format_column, format_number, format_percent_label, format_pvalue, is_missing, stars
from .tables import html_paragraphs, markdown_paragraphs, render_html, render_latex, render_markdown, render_text


def _wrap(text: str, width: int = 100, indent: str = "  ") -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, width=width, subsequent_indent=indent, break_long_words=False,
                                   break_on_hyphens=False))


def _value_str(value) -> str:
    """A tuning value or fact for the summary: numbers with 4 significant digits, sequences of
    numbers as [a, b, ...] (so tuples and the lists they become in to_dict() print alike)."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.number)):
        return format_number(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
        if len(items) > 6:
            return "[" + ", ".join(_value_str(v) for v in items[:6]) + f", ... ({len(items)} values)]"
        return "[" + ", ".join(_value_str(v) for v in items) + "]"
    if value is None:
        return "None"
    return str(value)


def _short_origin(origin) -> str:
    """Origin of a tuning value for the one-line Tuning list: short origins as they are, a value
    derived from a private release or a declared quantity says so, every other long text is a
    documented default (the full text is in ``fit.tuning`` and ``to_dict()``)."""
    o = str(origin)
    if len(o) <= 24:
        return o
    for key, short in (("PrivSigma", "from PrivSigma"), ("declared sigma", "from declared sigma"),
                       ("user", "user"), ("declared", "declared")):
        if o.lower().startswith(key.lower()):
            return short
    return "default"


def _range_str(values) -> str:
    """'a' when all equal, else 'min-max' (per-iteration parameters)."""
    vals = [float(v) for v in values if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)]
    if not vals:
        return "NA"
    lo, hi = min(vals), max(vals)
    if np.isclose(lo, hi, rtol=1e-9, atol=0.0):
        return format_number(lo)
    return f"{format_number(lo)}-{format_number(hi)}"


#: the formatting kit handed to the methods' summary_lines (dpreg.estimators.summary_lines)
_FMT = SimpleNamespace(number=format_number, wrap=_wrap, value=_value_str, range=_range_str)

#: what the standard error, z and p of a fit with asymmetric released intervals mean (DPFit.z_values)
_UNION_SE_TEXT = ("the standard errors are scaled to their half-width, z and p use the half-width on the side "
                  "of 0 (p < 1 - level exactly when the interval excludes 0)")


# ==================================================================================================
class Summary:
    """R-like summary of a :class:`DPFit`, made by :meth:`DPFit.summary`.

    ``str()`` prints the block; :attr:`coef_table` is a DataFrame; :meth:`to_markdown`,
    :meth:`to_latex` (booktabs) and :meth:`to_html` export it together with the privacy statement;
    notebooks display it as HTML.

    Parameters
    ----------
    fit : DPFit
        The fit to summarise.
    level : float, default 0.95
        Level of the interval columns.
    """

    def __init__(self, fit, level: float = 0.95):  # fit: a DPFit
        _check_level(level)
        self.fit = fit
        self.level = float(level)
        self.lower_label = format_percent_label((1 - level) / 2)
        self.upper_label = format_percent_label(1 - (1 - level) / 2)

    # ---- numbers -------------------------------------------------------------------------------
    @property
    def has_inference(self) -> bool:
        """True when the fit has noise-aware standard errors."""
        return self.fit.has_inference

    @property
    def coef_table(self) -> pd.DataFrame:
        """Estimate, Std. Error, z value, ``Pr(>|z|)``, the two CI bounds and the noise share; NaN where
        not available. For AdaSSP's corrected ridge also ``Corrected`` (after ``Estimate``): the
        :attr:`DPFit.inference_centre` the inference columns are about (z value = Corrected / Std. Error)."""
        f = self.fit
        ci = f._conf_int(level=self.level)
        cols = {"Estimate": f.coef}
        if f.has_separate_centre:
            # AdaSSP's corrected ridge: the centre of the inference, next to the (ridge) estimate
            cols["Corrected"] = f.inference_centre
        cols.update({"Std. Error": f.std_errors, "z value": f.z_values(),
                     "Pr(>|z|)": f.p_values(), self.lower_label: ci["lower"], self.upper_label: ci["upper"],
                     "Noise share": f.noise_share})
        table = pd.DataFrame(cols, index=f.terms)
        # method-specific released columns (subsample_aggregate: sampling_sd, noise_sd, q_lo, q_hi)
        for name, col in f._method_columns().items():
            table[name] = np.asarray(col, float)
        return table

    @property
    def tables(self) -> list[pd.DataFrame]:
        """statsmodels' ``summary2().tables``: ``[facts, coef_table]``, the first a two-column frame of the
        model's public and released facts (method, n, residual and model degrees of freedom, eps, delta,
        the DP sigma and R-squared where released), the second :attr:`coef_table`."""
        # newcomer review 24: summary2().tables[1] is statsmodels users' way to the coefficient frame
        f = self.fit
        privacy = f.privacy
        facts = [("Model:", f.title), ("Method:", f.method), ("No. Observations:", f.nobs),
                 ("Df Model:", f.df_model), ("Df Residuals:", f.df_resid),
                 ("eps:", getattr(privacy, "eps", None)), ("delta:", getattr(privacy, "delta", None)),
                 ("DP residual standard error:", f.sigma), ("DP R-squared:", f.r_squared)]
        frame = pd.DataFrame([(k, "NA" if v is None else (v if isinstance(v, str) else format_number(v, 10)))
                              for k, v in facts], columns=["", "value"])
        return [frame, self.coef_table]

    @property
    def stars(self) -> pd.Series:
        """Significance stars per term (R's codes: ``***`` p < 0.001, ``**`` < 0.01, ``*`` < 0.05, ``.`` < 0.1)."""
        return pd.Series([stars(p) for p in self.fit.p_values()], index=self.fit.terms, name="stars")

    @property
    def wald(self) -> dict:
        """Noise-aware joint test of all slopes = 0 (see :meth:`DPFit.wald_test`; its ``rule`` says which)."""
        return self.fit.wald_test()

    # ---- cells ------------------------------------------------------------------------------------
    def _cells(self, *, with_stars=True):
        """(headers, rows) of the coefficient table as formatted strings."""
        t = self.coef_table
        terms = list(t.index)
        if not self.has_inference:
            est = format_column(t["Estimate"].to_numpy())
            return ["", "Estimate"], [[n, e] for n, e in zip(terms, est)]
        centre = "Corrected" in t.columns
        cols = {
            "Estimate": format_column(t["Estimate"].to_numpy()),
            "Corrected": format_column(t["Corrected"].to_numpy()) if centre else None,
            "Std. Error": format_column(t["Std. Error"].to_numpy()),
            "z value": [("NA" if is_missing(z) else f"{z:.3f}") for z in t["z value"]],
            "Pr(>|z|)": [format_pvalue(p) for p in t["Pr(>|z|)"]],
            self.lower_label: format_column(t[self.lower_label].to_numpy()),
            self.upper_label: format_column(t[self.upper_label].to_numpy()),
        }
        headers = ["", "Estimate"] + (["Corrected"] if centre else []) + ["Std. Error", "z value", "Pr(>|z|)"]
        if with_stars:
            headers.append("")
        headers += [self.lower_label, self.upper_label]
        extra = []
        if "sampling_sd" in t.columns and "noise_sd" in t.columns:
            # subsample_aggregate: the two variance components themselves (released per coefficient)
            extra = [("Sampling sd", format_column(t["sampling_sd"].to_numpy())),
                     ("Noise sd", format_column(t["noise_sd"].to_numpy()))]
        elif bool(np.any(np.isfinite(t["Noise share"].to_numpy()))):
            extra = [("Noise share", [("NA" if is_missing(s) else f"{s:.2f}") for s in t["Noise share"]])]
        headers += [h for h, _ in extra]
        st = list(self.stars)
        rows = []
        for i, n in enumerate(terms):
            row = ([n, cols["Estimate"][i]] + ([cols["Corrected"][i]] if centre else [])
                   + [cols["Std. Error"][i], cols["z value"][i], cols["Pr(>|z|)"][i]])
            if with_stars:
                row.append(st[i])
            row += [cols[self.lower_label][i], cols[self.upper_label][i]]
            row += [c[i] for _, c in extra]
            rows.append(row)
        return headers, rows

    #: the line under the coefficient table when the estimate and the inference centre differ
    CENTRE_LINE = ("Estimate: the ridge estimate (AdaSSP; predict() uses it). Corrected: the estimate "
                   "corrected for the ridge's shrinkage; the Std. Error, z value (Corrected / Std. Error where "
                   "the intervals are symmetric), p-value and intervals are about it.")

    def _centre_lines(self) -> list[str]:
        return [self.CENTRE_LINE] if self.fit.has_separate_centre and self.has_inference else []

    def _clip_cells(self):
        """(headers, rows) of subsample_aggregate's released clip points q_lo, q_hi, or None."""
        t = self.coef_table
        if "q_lo" not in t.columns:
            return None
        lo, hi = format_column(t["q_lo"].to_numpy()), format_column(t["q_hi"].to_numpy())
        return ["", "q_lo", "q_hi"], [[n, a, b] for n, a, b in zip(t.index, lo, hi)]

    def _method_lines(self) -> list[str] | None:
        """Method-specific block, declared on the method's spec (None: the generic Facts line is used
        instead)."""
        spec = METHODS.get(self.fit.method)
        if spec is None or spec.summary_lines is None:
            return None
        return spec.summary_lines(self.fit, _FMT)

    def _n_line(self) -> str:
        f = self.fit
        if f._add_remove:
            n = f.nobs
            return ("n: not public under add/remove neighbours" if n is None
                    else f"n = {n} (DP estimate)")
        unit = getattr(f._privacy, "unit", None) if f._privacy is not None else None
        if unit is not None:  # unit= : N units are public, the row count is not
            return f"N = {f.nobs} units of {unit} (public; the number of rows is private)"
        return f"n = {f.nobs} (public)"

    def _tuning_line(self) -> str | None:
        tun = self.fit.tuning
        spec = METHODS.get(self.fit.method)
        if not tun or (spec is not None and spec.tuning_in_block):   # the block lists every origin in full
            return None
        parts = []
        for k, (value, origin) in tun.items():
            value_s = _value_str(value) if not isinstance(value, (bool, np.bool_)) else str(value)
            o = ""
            if origin:
                o = f" ({_short_origin(origin)})"
            parts.append(f"{k} = {value_s}{o}")
        return _wrap("Tuning: " + ", ".join(parts))

    #: facts shown in the text summary (all facts are public or released; the rest are in to_dict())
    SUMMARY_FACTS = ("ridge_lambda", "ridge_active", "pd_repaired", "T", "tau", "tau_x", "B_y", "k", "L", "R",
                     "c", "status", "support_size", "nonzeros", "s", "n_models", "m", "aggregator",
                     "iterations", "privacy_noise_sd")

    def _facts_line(self) -> str | None:
        if self._method_lines() is not None:
            return None
        parts = []
        facts = self.fit.facts
        for k in self.SUMMARY_FACTS:
            if k not in facts:
                continue
            v = facts[k]
            if isinstance(v, (bool, np.bool_)):
                parts.append(f"{k} = {'yes' if v else 'no'}")
            elif isinstance(v, (int, float, np.number)):
                parts.append(f"{k} = {format_number(v)}")
            elif isinstance(v, str) and len(v) <= 40:
                parts.append(f"{k} = {v}")
        return _wrap("Facts: " + ", ".join(parts)) if parts else None

    def _fit_lines(self) -> list[str]:
        """sigma, R-squared and the Wald test lines (released values only)."""
        f = self.fit
        out = []
        if f.sigma is not None:
            df = f.df_resid
            # under add/remove n (hence df) is a released estimate: print it rounded, like n
            df_s = "NA" if df is None else (format_number(df, 10) if float(df).is_integer()
                                            else f"{float(df):.0f} (estimated)")
            si = (f.facts or {}).get("sigma_interval")
            # thirtieth pass (derivation adassp_boosted.md §55): a point that is the median given the
            # verdict's refusal is flagged beside its interval, as R^2's median is
            med_s = ("; imprecise at this n and eps; the point is its median"
                     if (f.facts or {}).get("sigma_interval_median") else "")
            si_s = (f" (95% interval {format_number(si[0])} to {format_number(si[1])}{med_s})"
                    if si is not None and si[0] is not None and si[1] is not None else "")
            out.append(f"DP residual standard error: {format_number(f.sigma)} on {df_s} degrees of freedom{si_s}")
        facts = f.facts or {}
        if f.sigma is None and facts.get("sigma_not_estimable"):
            lo_s, hi_s = facts.get("sigma_interval", (None, None))
            rng_s = (f"; 95% interval {format_number(lo_s)} to {format_number(hi_s)}"
                     if lo_s is not None and hi_s is not None else "")
            out.append(f"DP residual standard error: {facts['sigma_not_estimable']}{rng_s}")
        if f.r_squared is not None:
            adj = f.adj_r_squared
            ri = facts.get("r_squared_interval")
            # issue 12: the interval is printed wherever R^2 is, and flagged when it is wide, so that a
            # noise-dominated R^2 is not read as a precise one
            wide = "; imprecise at this n and eps" if facts.get("r_squared_imprecise") else ""
            if facts.get("r_squared_interval_median"):
                # twenty-ninth pass (derivation adassp_boosted.md §54): the point is the interval's median,
                # printed where the interval does not bound R^2 within a factor 2
                wide = "; imprecise at this n and eps; the point is its median"
            ci_txt = (f" (95% interval {format_number(ri[0])} to {format_number(ri[1])}{wide})" if ri else "")
            ai = facts.get("adj_r_squared_interval")
            adj_txt = (f" (95% interval {format_number(ai[0])} to {format_number(ai[1])})"
                       if ai and wide else "")
            out.append(f"DP R-squared:  {format_number(f.r_squared)}{ci_txt},\tAdjusted R-squared:  "
                       f"{format_number(adj)}{adj_txt}")
        elif facts.get("r_squared_not_estimable"):
            ri = facts.get("r_squared_interval")
            rng_r = (f"; 95% interval {format_number(ri[0])} to {format_number(ri[1])}" if ri else "")
            out.append(f"DP R-squared: {facts['r_squared_not_estimable']}{rng_r}")
        if f.has_inference:
            w = f.wald_test()
            if w["statistic"] is not None and w.get("rule") == BONFERRONI_RULE:
                # issue 12: the intervals are asymmetric, so the joint test is the one that agrees with
                # the printed p-values (docs/derivations/joint_tests.md); the line says which rule
                out.append(_wrap(f"Joint test that the {w['df']} slopes are 0: p-value: "
                                 f"{format_pvalue(w['p_value'], floor_text='< 2.2e-16')} (Bonferroni over "
                                 "their side-of-0 z tests, as the intervals are asymmetric)"))
            elif w["statistic"] is not None:
                out.append(f"Noise-aware Wald chi-square: {format_number(w['statistic'])} on {w['df']} DF,  "
                           f"p-value: {format_pvalue(w['p_value'], floor_text='< 2.2e-16')}")
                if f.link != "logit":
                    # thirty-second pass: statsmodels' fvalue / R's fstatistic, the same test in F form
                    out.append(_wrap(f"  as an F (fvalue; R's fstatistic): {format_number(w['statistic'] / w['df'])} "
                                     f"on {w['df']} and Inf DF, the chi-square / DF (lm's F needs the residual "
                                     "sum of squares, not released)"))
            elif w["note"]:
                out.append(f"Noise-aware Wald chi-square: {w['note']}")
        not_rel = []
        if f.sigma is None and f.link != "logit" and not facts.get("sigma_not_estimable"):
            not_rel.append("residual standard error")
        if f.r_squared is None and f.link != "logit" and not facts.get("r_squared_not_estimable"):
            not_rel.append("R-squared")
        if not_rel:
            out.append(f"Not released by this fit (no budget spent on them): {', '.join(not_rel)}")
        return out

    def _inference_lines(self) -> list[str]:
        f = self.fit
        if not f.has_inference:
            note = f.inference_note or _NO_INFERENCE
            if "standard error" in note.lower():
                return [note]
            return ["No standard errors or intervals are available for this fit: " + note]
        out = []
        if f.inference_note:
            out.append(f"Inference note: {f.inference_note}")
        if f.ci_method == "bootstrap":
            out.append("Intervals: from the method's bootstrap replicates; z and p from the "
                       "interval's half-width on the side of 0 (p < 1 - level exactly when it excludes 0)")
        elif f.ci_method == "attenuation union":
            # issue 12 (AdaSSP, docs/derivations/adassp_boosted.md §20): k is a function of the released
            # X'X and sigma1 only
            k = int(f.facts.get("attenuation_directions") or 0)
            # issue 12, nineteenth pass (§25): where the released lambda_min bounds the curvature, the
            # union rests on that bound (a released value), not on the stated assumption
            basis = ("with the data's variation along each bounded below by the released lambda_min"
                     if f.facts.get("hidden_certified_floor") else
                     "assuming the data vary along each at least half as much as that noise")
            out.append(f"Intervals: allow for the estimates being attenuated along {k} "
                       f"direction{'s' if k != 1 else ''} of X'X that the privacy noise hides or blurs "
                       f"({basis}; where it blurs one, by as much as the released X'X allows), so they are not "
                       f"symmetric about the {'corrected ' if f.has_separate_centre else ''}estimate; "
                       + _UNION_SE_TEXT)
        elif f.ci_method == "separation union":
            # issue 12, sixteenth pass (docs/derivations/dpgd_logistic.md §2e): k is a function of the
            # released X'WX matrices only
            k = int(f.facts.get("separation_union_directions") or 0)
            out.append(f"Intervals: allow for the private iteration having covered only part of the way to "
                       f"the maximum-likelihood fit along {k} direction{'s' if k != 1 else ''} where the "
                       "released curvature collapsed (assuming it stays at least half the noise s.d. of its "
                       "release there), so they are wide and not symmetric about the estimate; "
                       + _UNION_SE_TEXT)
        return out

    def _privacy_text(self) -> str:
        p = self.fit.privacy
        return "Privacy: statement not available" if p is None else str(p).rstrip()

    def _privacy_paragraph(self) -> str:
        p = self.fit.privacy
        if p is None:
            return "Privacy statement not available."
        if hasattr(p, "paragraph") and callable(p.paragraph):
            return str(p.paragraph())
        return " ".join(str(p).split())

    def method_text(self) -> str:
        """The method block of the summary (auto choice, tuning with origins, facts, method-specific
        lines), as text: what the R package prints under its title."""
        f = self.fit
        lines = []
        if f.auto:
            lines.append(f'Method: "{f.method}", chosen by method = "auto" from public facts '
                         "(family, declared ranges, factor columns, n, d, eps and whether inference was asked "
                         "for; see dpreg.api.AUTO_RULE)")
        for extra in (self._tuning_line(), self._facts_line()):
            if extra:
                lines.append(extra)
        lines += self._method_lines() or []
        return "\n".join(lines)

    # ---- text -----------------------------------------------------------------------------------
    def __str__(self) -> str:
        f = self.fit
        lines = [f.title, "", "Call:", f.call, ""]
        method_text = self.method_text()
        if method_text:
            lines += method_text.split("\n")
        lines.append(self._privacy_text())
        lines.append(self._n_line())
        lines.append("")
        headers, rows = self._cells()
        if f.has_inference:
            lines.append("Coefficients (noise-aware standard errors; normal reference):")
            lines.append(render_text(headers, rows))
            lines += ["---", SIGNIF_LEGEND]
            lines += [_wrap(x) for x in self._centre_lines()]
        else:
            lines.append("Coefficients (no standard errors, see below):")
            lines.append(render_text(headers, rows))
        clip = self._clip_cells()
        if clip is not None:
            lines += ["", "Private clip points of the group estimates (released quantiles):",
                      render_text(*clip)]
        lines.append("")
        lines += self._fit_lines()
        lines += self._inference_lines()
        warned, notes = _split_diagnostics(f.warnings)
        if warned:
            lines.append("Warnings:")
            lines += [f"  * {w}" for w in warned]
        if notes:
            lines.append("Notes:")
            lines += [f"  * {w}" for w in notes]
        lines.append("")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.__str__()

    def _notes(self) -> list[str]:
        f = self.fit
        notes = self._centre_lines() + [f"Call: {f.call}", self._n_line()]
        notes += [x for x in (self._tuning_line(), self._facts_line()) if x]
        method_notes = []
        for x in self._method_lines() or []:
            text = " ".join(x.split())
            if x.startswith("  ") and method_notes:      # a sub-item joins the paragraph above it
                sep = " " if method_notes[-1].endswith(":") else "; "
                method_notes[-1] += sep + text
            else:
                method_notes.append(text)
        notes += method_notes
        clip = self._clip_cells()
        if clip is not None:
            notes.append("Private clip points of the group estimates (q_lo, q_hi): " + "; ".join(
                f"{r[0]} [{r[1]}, {r[2]}]" for r in clip[1]))
        notes += [x.replace("\t", " ") for x in self._fit_lines()]
        notes += self._inference_lines()
        if f.has_inference:
            notes.append("Significance: *** p <= 0.001, ** p <= 0.01, * p <= 0.05, . p <= 0.1")
        warned, plain = _split_diagnostics(f.warnings)
        notes += [f"Warning: {w}" for w in warned] + [f"Note: {w}" for w in plain]
        return notes

    def to_markdown(self) -> str:
        """The summary as Markdown: title, coefficient table, notes and the privacy paragraph.

        Returns
        -------
        str
        """
        headers, rows = self._cells()
        parts = [f"**{self.fit.title}**", render_markdown(headers, rows),
                 markdown_paragraphs(self._notes()), f"*Privacy.* {self._privacy_paragraph()}"]
        return "\n\n".join(parts) + "\n"

    def to_html(self) -> str:
        """The summary as HTML (what notebooks display).

        Returns
        -------
        str
        """
        import html
        headers, rows = self._cells()
        return "\n".join([f"<p><strong>{html.escape(self.fit.title)}</strong></p>",
                          render_html(headers, rows), html_paragraphs(self._notes()),
                          html_paragraphs([f"Privacy. {self._privacy_paragraph()}"])]) + "\n"

    def to_latex(self, *, caption: str | None = None, label: str | None = None) -> str:
        r"""A booktabs ``table`` followed by the notes and the privacy statement paragraph.

        Needs ``\usepackage{booktabs}``.

        Parameters
        ----------
        caption : str, optional
            Table caption (default: the fit's title).
        label : str, optional
            LaTeX ``\label`` of the table.

        Returns
        -------
        str
        """
        headers, rows = self._cells()
        notes = self._notes() + [f"Privacy. {self._privacy_paragraph()}"]
        return render_latex(headers, rows, caption=caption or self.fit.title, label=label,
                            notes=notes) + "\n"

    # statsmodels' names for the same renderings (newcomer review 19: summary().as_latex() was an
    # AttributeError)
    def as_text(self) -> str:
        """statsmodels' name for ``str(summary)``.

        Returns
        -------
        str
        """
        return str(self)

    def as_latex(self) -> str:
        """statsmodels' name for :meth:`to_latex` (default caption and no label).

        Returns
        -------
        str
        """
        return self.to_latex()

    def as_html(self) -> str:
        """statsmodels' name for :meth:`to_html`.

        Returns
        -------
        str
        """
        return self.to_html()

    def to_dict(self) -> dict:
        """The fit's :meth:`DPFit.to_dict`.

        Returns
        -------
        dict
        """
        return self.fit.to_dict()

    # notebook display (issue 15)
    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def _split_diagnostics(texts):
    """(warnings, notes) of a fit: the ones emitted as Python warnings, and the informational notes."""
    warned = [w for w in texts if diagnostic_category(w) is not None]
    return warned, [w for w in texts if diagnostic_category(w) is None]
