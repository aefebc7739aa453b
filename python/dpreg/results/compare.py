"""``dpreg.compare([fit1, fit2, ...])``: a side-by-side table of several DP fits (regression-table
style: estimate with stars, standard error in parentheses underneath; then method, budget, n, DP
sigma and DP R-squared). Only released values and public facts of each fit are shown.
"""
from __future__ import annotations

import pandas as pd

from ..errors import InvalidArgument, InvalidArgumentType
from .format import format_number, is_missing, stars
from .tables import html_paragraphs, markdown_paragraphs, render_html, render_latex, render_markdown, render_text


class Comparison:
    """Side-by-side table of DP fits, made by :func:`dpreg.compare`.

    ``estimates`` / ``std_errors`` are numeric DataFrames (terms x models); :meth:`rows` gives the
    formatted cells; ``str()``, :meth:`to_markdown`, :meth:`to_latex` (booktabs) and :meth:`to_html`
    render them; notebooks display it as HTML.

    Parameters
    ----------
    fits : sequence of dpreg.DPFit
        The fits, one column each.
    names : sequence of str, optional
        Column names (default: the methods).
    digits : int, default 4
        Significant digits of the cells.
    show_stars : bool, default True
        Append significance stars to the estimates.
    """

    N_FOOTER = 6   # method, eps, delta, n, sigma, R-squared rows at the bottom of rows()

    def __init__(self, fits, names=None, *, digits: int = 4, show_stars: bool = True):
        fits = list(fits)
        if not fits:
            raise InvalidArgument("compare() needs at least one fit")
        for f in fits:
            if not hasattr(f, "coef") or not hasattr(f, "std_errors"):
                raise InvalidArgumentType("compare() takes DPFit objects (results of dpreg.dp_lm / dp_glm)")
        if names is None:
            names = [f"({i + 1}) {f.method}" for i, f in enumerate(fits)]
        names = [str(n) for n in names]
        if len(names) != len(fits):
            raise InvalidArgument("names must have one entry per fit")
        if len(set(names)) != len(names):
            raise InvalidArgument("names must be distinct")
        self.fits = fits
        self.names = names
        self.digits = digits
        self.show_stars = show_stars
        terms: list[str] = []
        for f in fits:
            for t in f.terms:
                if t not in terms:
                    terms.append(t)
        self.terms = terms
        self.estimates = pd.DataFrame({n: f.coef.reindex(terms) for n, f in zip(names, fits)}, index=terms)
        self.std_errors = pd.DataFrame({n: f.std_errors.reindex(terms) for n, f in zip(names, fits)},
                                       index=terms)
        self.p_values = pd.DataFrame({n: f.p_values().reindex(terms) for n, f in zip(names, fits)},
                                     index=terms)

    @property
    def table(self) -> pd.DataFrame:
        """Formatted cells as a DataFrame (estimate rows, SE rows, footer rows)."""
        headers, rows = self.rows()
        return pd.DataFrame([r[1:] for r in rows], index=[r[0] for r in rows], columns=headers[1:])

    def rows(self):
        """The formatted cells.

        Returns
        -------
        tuple
            ``(headers, rows)``: estimate rows, standard-error rows, then footer rows (method, eps,
            delta, n, sigma, R-squared).
        """
        headers = [""] + self.names
        rows = []
        for t in self.terms:
            est_row, se_row = [t], [""]
            for n in self.names:
                b, se, p = self.estimates.at[t, n], self.std_errors.at[t, n], self.p_values.at[t, n]
                if is_missing(b):
                    est_row.append("")
                    se_row.append("")
                    continue
                mark = stars(p).strip() if self.show_stars else ""
                est_row.append(format_number(b, self.digits) + mark)
                se_row.append("" if is_missing(se) else f"({format_number(se, self.digits)})")
            rows.append(est_row)
            if any(c for c in se_row[1:]):
                rows.append(se_row)
        rows.append(["Method"] + [f.method for f in self.fits])
        rows.append(["eps"] + [self._priv(f, "eps") for f in self.fits])
        rows.append(["delta"] + [self._priv(f, "delta") for f in self.fits])
        rows.append(["n"] + [("NA" if f.nobs is None else str(f.nobs)) for f in self.fits])
        rows.append(["DP residual s.e."] + [format_number(f.sigma, self.digits, na="")
                                           for f in self.fits])
        rows.append(["DP R-squared"] + [self._r2_cell(f) for f in self.fits])
        return headers, rows

    def _r2_cell(self, fit) -> str:
        """DP R-squared, with its 95% interval when that is flagged imprecise (issue 12), so a
        noise-dominated R-squared is not read as a precise one."""
        txt = format_number(fit.r_squared, self.digits, na="")
        facts = fit.facts or {}
        ri = facts.get("r_squared_interval")
        if txt and ri and facts.get("r_squared_imprecise"):
            txt += f" [{format_number(ri[0], 2)}, {format_number(ri[1], 2)}]"
        return txt

    @staticmethod
    def _priv(fit, name):
        p = fit.privacy
        v = None if p is None else getattr(p, name, None)
        return "NA" if v is None else format_number(v, 6)

    def notes(self) -> list[str]:
        """Notes printed under the table (privacy of each fit, what the stars mean, warnings).

        Returns
        -------
        list of str
        """
        out = ["Standard errors (noise-aware, normal reference) in parentheses; empty where a method offers "
               "no inference."]
        if self.show_stars:
            out.append("*** p <= 0.001, ** p <= 0.01, * p <= 0.05, . p <= 0.1")
        out.append("Each fit spent its own budget; the budgets add up over fits on the same data.")
        for name, f in zip(self.names, self.fits):
            if getattr(f.privacy, "seeded", False):
                out.append(f"{name}: seeded, reproducible, not for release.")
            if getattr(f.privacy, "private", True) is False:
                out.append(f"{name}: NOT differentially private (ranges read from the data).")
            withheld = self._not_estimable(name, f)
            if withheld:
                out.append(withheld)
            if getattr(f, "has_separate_centre", False):
                # AdaSSP with its ridge corrected: the estimate and the inference have different centres
                out.append(f"{name}: estimates are the ridge estimates (AdaSSP; predict() uses them); the "
                           "standard errors and stars are about the estimates corrected for the ridge's "
                           "shrinkage (its summary's column 'Corrected').")
        return out

    def _not_estimable(self, name, fit) -> str | None:
        """A note for the empty standard errors of a fit that offers inference but reports them as not
        estimable at this n and eps (newcomer review 20: the table's only word on an empty cell was "empty
        where a method offers no inference", beside AdaSSP's withheld coefficients). Released facts only:
        which standard errors are NaN, and the fit's inference note."""
        se = self.std_errors[name]
        est = self.estimates[name]
        # the table's term names (R's bridge relabels them to lm()'s), restricted to this fit's estimates
        estimated = [t for t in self.terms if not is_missing(est.get(t))]
        missing = [t for t in estimated if is_missing(se.get(t))]
        if not missing:
            return None
        if len(missing) < len(estimated):
            shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
            return (f"{name}: no standard error for {shown}: not estimable at this n and eps (withheld; "
                    "its summary says why).")
        note = getattr(fit, "inference_note", None) or ""
        if "not estimable" in note:
            return f"{name}: no standard errors: not estimable at this n and eps (its summary says why)."
        return None

    def __str__(self):
        headers, rows = self.rows()
        return render_text(headers, rows) + "\n---\n" + "\n".join(self.notes()) + "\n"

    def __repr__(self):
        return self.__str__()

    def to_markdown(self) -> str:
        """The table and its notes as Markdown.

        Returns
        -------
        str
        """
        headers, rows = self.rows()
        return render_markdown(headers, rows) + "\n\n" + markdown_paragraphs(self.notes()) + "\n"

    def to_html(self) -> str:
        """The table and its notes as HTML.

        Returns
        -------
        str
        """
        headers, rows = self.rows()
        return render_html(headers, rows) + "\n" + html_paragraphs(self.notes()) + "\n"

    # notebook display (issue 15)
    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def to_latex(self, *, caption: str | None = "DP regression fits", label: str | None = None) -> str:
        r"""A booktabs ``table`` with the notes under it (needs ``\usepackage{booktabs}``).

        Parameters
        ----------
        caption : str, optional
            Table caption (default "DP regression fits").
        label : str, optional
            LaTeX ``\label`` of the table.

        Returns
        -------
        str
        """
        headers, rows = self.rows()
        return render_latex(headers, rows, caption=caption, label=label, notes=self.notes(),
                            midrule_before=len(rows) - self.N_FOOTER) + "\n"


def compare(fits, names=None, **kwargs) -> Comparison:
    """Side-by-side table of DP fits.

    Parameters
    ----------
    fits : dpreg.DPFit, sequence of dpreg.DPFit, or dict
        The fits (one fit gives a one-column table); a dict maps column names to fits.
    names : sequence of str, optional
        Column names (default: the dict's keys, or the methods).
    **kwargs
        ``digits`` and ``show_stars`` of :class:`dpreg.results.compare.Comparison`.

    Returns
    -------
    dpreg.results.compare.Comparison

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds, DIAMONDS_BOUNDS
    >>> diamonds = load_diamonds()
    >>> bounds = {"price": DIAMONDS_BOUNDS["price"], "carat": DIAMONDS_BOUNDS["carat"]}
    >>> fit1 = dpreg.dp_lm("price ~ carat", diamonds, eps=1.0, method="adassp", bounds=bounds, random_state=1)
    >>> fit2 = dpreg.dp_lm("price ~ carat", diamonds, eps=1.0, method="boosted_adassp", bounds=bounds,
    ...                    random_state=1)
    >>> table = dpreg.compare([fit1, fit2], names=["AdaSSP", "Boosted"])
    >>> print(table)  # doctest: +SKIP
    """
    if isinstance(fits, dict) and names is None:
        names, fits = list(fits.keys()), list(fits.values())
    elif hasattr(fits, "inference_centre"):   # one fit (it raised "'DPFit' object is not iterable")
        fits = [fits]
    return Comparison(fits, names, **kwargs)


__all__ = ["compare", "Comparison"]
