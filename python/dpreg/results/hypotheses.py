"""Linear hypotheses R b = q about a fit's coefficients, and statsmodels' results idioms built on them
(``t_test``, ``wald_test`` with a hypothesis, ``get_prediction``).

Everything here is post-processing of released values: the inference centre b (= the coefficients except
for AdaSSP's corrected ridge), the released noise-aware covariance V, the released intervals of fits
whose intervals are asymmetric, and predict()'s intervals. No new release, no budget.

* A fit with Wald z intervals: row i of R gives the estimate R_i b, its standard error
  sqrt(R_i V R_i'), z = (R_i b - q_i) / se, p = 2 Phi(-|z|) and the interval R_i b +- z_{1-a/2} se. With
  R_i = e_j and q_i = 0 these are exactly the summary's coefficient row (same formula, same numbers).
  Where the method estimates no covariances (subsample-and-aggregate: the off-diagonal of V is NaN) a
  combination gets the conservative se sum_j |R_ij| SE_j (sd(x'b) <= sum |x_j| sd(b_j) for any
  correlation), as predict() does.
* A fit with asymmetric intervals (an attenuation or separation union, a bootstrap hull;
  docs/derivations/joint_tests.md): only rows naming one coefficient, c b_j = q, are tested, with the
  released interval of b_j scaled by c and the side-of-q/c half-width as the standard error, so that
  p < 1 - level exactly when the released interval excludes q/c (with q = 0: the summary's p-value). A
  combination of several coefficients has no released interval and is refused (R's
  ``car::linearHypothesis()`` asks this code, so it answers and refuses alike), except on AdaSSP fits
  with declared ranges, where it gets the union interval of its own map (``combinations``, §28).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy import stats

from .._numeric import numpy_defaults
from ..errors import InvalidArgument, InvalidArgumentType
from . import combinations
from .common import _check_level, _level_from_alpha, _z_quantile
from .format import format_number, format_pvalue

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _split_top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside parentheses and brackets (a term name such as
    ``C(g, Treatment('a'))[T.b]`` holds commas)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _linear_side(text: str, terms: list[str], where: str) -> tuple[np.ndarray, float]:
    """Coefficient vector and constant of one side of an equation: a sum of ``[+-] [number [*]] term``
    and ``[+-] number``. Term names are matched longest first, so names holding ``-`` or ``:`` work."""
    coef = np.zeros(len(terms))
    const = 0.0
    by_length = sorted(range(len(terms)), key=lambda j: -len(terms[j]))

    def names_at(pos):
        """(term index, characters it spans) of the names at ``pos``; a name may be back-quoted as in the
        formula (newcomer review 20: "`body mass` = 0" was "'`body' is not a coefficient")."""
        quoted = [(j, len(terms[j]) + 2) for j in by_length if text.startswith(f"`{terms[j]}`", pos)]
        # a term name followed by a name character is a longer, unknown name ("x11" is not "x1")
        return quoted or [(j, len(terms[j])) for j in by_length if text.startswith(terms[j], pos) and not (
            pos + len(terms[j]) < n and (text[pos + len(terms[j])].isalnum() or text[pos + len(terms[j])] in "_."))]
    i, n, seen = 0, len(text), False
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        sign = 1.0
        if text[i] in "+-":
            sign = -1.0 if text[i] == "-" else 1.0
            i += 1
            while i < n and text[i].isspace():
                i += 1
        elif seen:
            raise InvalidArgument(f"hypothesis {where!r}: expected + or - before {text[i:]!r}")
        factor = 1.0
        number = _NUMBER.match(text, i)
        name_here = names_at(i)
        if number and not name_here:
            factor = float(number.group())
            i = number.end()
            while i < n and text[i].isspace():
                i += 1
            if i < n and text[i] == "*":
                i += 1
                while i < n and text[i].isspace():
                    i += 1
            else:
                const += sign * factor
                seen = True
                continue
            name_here = names_at(i)
        if not name_here:
            import difflib
            word = re.split(r"\s*[-+=]\s*|\s+", text[i:].strip(), maxsplit=1)[0]
            close = difflib.get_close_matches(word, terms, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InvalidArgument(f"hypothesis {where!r}: {word!r} is not a coefficient of this fit{hint}; "
                                  f"the coefficients are {', '.join(terms[:8])}{', ...' if len(terms) > 8 else ''}")
        j, span = name_here[0]
        with np.errstate(over="ignore", invalid="ignore"):   # 1e308*x1 + 1e308*x1: inf, refused by the caller
            coef[j] += sign * factor
        i += span
        seen = True
    if not seen:
        raise InvalidArgument(f"hypothesis {where!r}: a side of the equation is empty")
    return coef, const


def _row_label(r_row: np.ndarray, q: float, terms: list[str]) -> str:
    parts = []
    for j in np.flatnonzero(r_row):
        c = float(r_row[j])
        mag = abs(c)
        body = terms[j] if mag == 1 else f"{format_number(mag)}*{terms[j]}"
        parts.append(("- " if c < 0 else "+ ") + body)
    text = " ".join(parts) if parts else "0"
    text = text[2:] if text.startswith("+ ") else "-" + text[2:] if text.startswith("- ") else text
    return f"{text} = {format_number(float(q)) if q != 0 else '0'}"


@numpy_defaults
def parse_hypotheses(hypotheses, terms) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(R, q, labels)`` of linear hypotheses ``R b = q`` given as statsmodels takes them.

    ``hypotheses``: a string of comma-separated equations over the coefficient names
    (``"x1 = 0, x2 - x3 = 0, 2*x1 + x2 = 1"``; a side without ``=`` means ``= 0``) or a list of such
    equations, a matrix R (one row per hypothesis, one column per coefficient; q = 0), or a tuple
    ``(R, q)``. Non-finite numbers (a literal beyond the double range, or sums overflowing) are refused."""
    terms = [str(t) for t in terms]
    d = len(terms)
    if isinstance(hypotheses, (list, tuple)) and hypotheses and all(isinstance(h, str) for h in hypotheses):
        hypotheses = ", ".join(hypotheses)     # statsmodels (patsy) also takes a list of equations
    if isinstance(hypotheses, str):
        rows, consts = [], []
        for piece in _split_top_level(hypotheses, ","):
            if not piece.strip():
                raise InvalidArgument(f"hypothesis {hypotheses!r}: an empty equation")
            sides = _split_top_level(piece, "=")
            if len(sides) > 2:
                raise InvalidArgument(f"hypothesis {piece.strip()!r}: more than one '='")
            left, left_c = _linear_side(sides[0], terms, piece.strip())
            right, right_c = (np.zeros(d), 0.0) if len(sides) == 1 else \
                _linear_side(sides[1], terms, piece.strip())
            with np.errstate(over="ignore", invalid="ignore"):
                rows.append(left - right)
                consts.append(right_c - left_c)
        R, q = np.array(rows, float), np.array(consts, float)
        if not (np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
            # review 18: "x1 = 1e400" was tested as "x1 = NA" (z = -inf) and "1e400*x1 = 0" gave numpy's
            # invalid-value warning; the same numbers as a matrix are refused just below
            raise InvalidArgument(f"hypothesis {hypotheses!r}: its numbers and their sums must be finite "
                                  "(beyond the double range, about 1.8e308, they are infinite)")
    else:
        if isinstance(hypotheses, tuple) and len(hypotheses) == 2:
            R, q = hypotheses
        else:
            R, q = hypotheses, None
        try:
            R = np.atleast_2d(np.asarray(R, dtype=float))
            q = np.zeros(R.shape[0]) if q is None else np.asarray(q, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InvalidArgumentType("the hypothesis must be a string such as 'x1 = 0, x2 - x3 = 0', a "
                                      "matrix R (one column per coefficient) or a tuple (R, q)") from None
        if R.ndim != 2 or R.shape[1] != d:
            raise InvalidArgument(f"the hypothesis matrix needs one column per coefficient ({d}: "
                                  f"{', '.join(terms[:8])}{', ...' if d > 8 else ''})")
        if q.shape[0] != R.shape[0]:
            raise InvalidArgument("q needs one value per row of the hypothesis matrix")
        if not (np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
            raise InvalidArgument("the hypothesis matrix and q must be finite numbers")
    if R.shape[0] == 0:
        raise InvalidArgument("no hypothesis given")
    if np.any(~R.any(axis=1)):
        raise InvalidArgument("a hypothesis names no coefficient (a row of R is all 0)")
    return R, q, [_row_label(R[i], q[i], terms) for i in range(R.shape[0])]


@numpy_defaults
def normalised_rows(R, q):
    """``(R / s, q / s, s)`` with s_i = max_j |R_ij|: each hypothesis scaled to a largest coefficient of 1.
    z, p and the Wald statistic do not change under such a scaling, and computed on the scaled rows they
    cannot overflow (``"1e308*x1 = 1e308"`` is ``"x1 = 1"``) or underflow (``"5e-324*x1 = 0"``)."""
    scale = np.max(np.abs(R), axis=1)
    return R / scale[:, None], q / scale, scale


@numpy_defaults
def linear_combinations(fit, R, q, labels, caller="t_test"):
    """Per-row estimate, standard error, z, p-value of ``R b = q`` on ``fit``, and how to build its
    intervals (module docstring). Returns ``(effect, se, z, note, interval_rule)`` where
    ``interval_rule(level)`` gives the ``(k, 2)`` interval ends of R b. z is computed on the rows scaled
    to a largest coefficient of 1 (:func:`normalised_rows`); estimate, standard error and interval are
    of R b as given (beyond the double range they are infinite)."""
    Rn, qn, scale = normalised_rows(R, q)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        effect, se, z, note, interval = _unit_combinations(fit, Rn, qn, labels, caller)
        effect_given, se_given = effect * scale, se * scale

    @numpy_defaults
    def interval_given(level):
        ends = interval(level)
        with np.errstate(over="ignore", invalid="ignore"):
            return ends * scale[:, None]

    return effect_given, se_given, z, note, interval_given


def _unit_combinations(fit, R, q, labels, caller):
    b = fit._centre_array()
    V = fit._vcov_array()
    k = R.shape[0]
    side = fit._release_side_se(b) if V is not None else None
    used = R != 0
    # AdaSSP with declared ranges: a row naming several coefficients gets the union interval of its own
    # map and the withholding rule of the coefficients (docs/derivations/adassp_boosted.md §28)
    by_rule = combinations.applies(fit._release)
    multi = (used.sum(axis=1) > 1) & by_rule
    with np.errstate(invalid="ignore", over="ignore"):
        effect = np.array([float(R[i, used[i]] @ b[used[i]]) for i in range(k)])
    na = np.array([not np.all(np.isfinite(b[used[i]])) for i in range(k)])
    note = None
    if V is None:
        se = np.full(k, np.nan)
        note = "not available: " + (fit.inference_note or "this method provides no standard errors")
    elif side is not None:
        single = used.sum(axis=1) == 1
        if not single.all() and not by_rule:
            bad = [labels[i] for i in np.flatnonzero(~single)]
            raise InvalidArgument(
                f"{caller}: {bad[0]!r} combines several coefficients; this fit's intervals are its own "
                f"asymmetric ones ({fit.ci_method}), and a combination of coefficients has no released "
                "interval. Test one coefficient per "
                "row, e.g. 'x1 = 0', or several coefficients jointly with wald_test(['x1', 'x2']), which "
                "uses Bonferroni over the printed p-values (docs/derivations/joint_tests.md)")
        own = fit._conf_int(level=fit._release.ci_level).to_numpy()
        z_level = _z_quantile(float(fit._release.ci_level))
        se = np.full(k, np.nan)
        scaled_ends = np.full((k, 2), np.nan)
        for i in np.flatnonzero(single):
            j = int(np.flatnonzero(used[i])[0])
            c = float(R[i, j])
            with np.errstate(over="ignore", invalid="ignore"):
                ends = np.sort(c * own[j])
            scaled_ends[i] = ends
            target = q[i]
            with np.errstate(invalid="ignore", over="ignore"):
                half = effect[i] - ends[0] if effect[i] >= target else ends[1] - effect[i]
            if np.isfinite(half) and half > 0:
                se[i] = half / z_level
    else:
        dg = np.diag(V)
        if np.all(np.isfinite(V)):
            with np.errstate(invalid="ignore", over="ignore"):
                var = np.einsum("ij,jk,ik->i", R, V, R)
            se = np.where(var >= 0, np.sqrt(np.maximum(var, 0.0)), np.nan)
        else:
            with np.errstate(invalid="ignore"):
                sd = np.where(np.isfinite(dg) & (dg >= 0), np.sqrt(np.where(dg >= 0, dg, 0.0)), np.nan)
            se = np.array([float(np.abs(R[i, used[i]]) @ sd[used[i]]) for i in range(k)])
            if np.any(used.sum(axis=1) > 1):
                note = ("this method estimates no covariances between coefficients: a combination's "
                        "standard error is the bound sum_j |r_j| SE_j (conservative)")
        if np.any(~np.isfinite(se)) and note is None:
            note = "not available for some rows: the standard errors of some coefficients are not estimable"
    if multi.any():
        z_fit = _z_quantile(fit.level)
        with np.errstate(invalid="ignore", over="ignore"):
            down, up, withheld = combinations.combination_ends(fit._release, R[multi], fit.level)
            half = np.where(effect[multi] >= q[multi], down, up)
            se[multi] = np.where(np.isfinite(half) & (half > 0), half / z_fit, np.nan)
        if withheld.any():
            note = ("not available for some rows: they combine the coefficients along a direction the "
                    "privacy noise in X^T X hides (the rule that withholds the coefficients' intervals; "
                    "a fit with hidden_directions='assume', which spends its own eps, gives them under its "
                    "stated assumption)")
    se = np.where(na, np.nan, se)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = (effect - q) / se

    def interval(level):
        zq = _z_quantile(level)
        if side is not None:
            # the released intervals at the fit's level, nested at other levels (conf_int's rule)
            own_l = fit._conf_int(level=level).to_numpy()
            out = np.full((k, 2), np.nan)
            for i in np.flatnonzero(~multi):
                j = int(np.flatnonzero(used[i])[0])
                with np.errstate(over="ignore", invalid="ignore"):
                    out[i] = np.sort(float(R[i, j]) * own_l[j])
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                out = np.column_stack([effect - zq * se, effect + zq * se])
        if multi.any():
            with np.errstate(invalid="ignore", over="ignore"):
                lo, hi, _ = combinations.combination_ends(fit._release, R[multi], level)
                out[multi] = np.column_stack([effect[multi] - lo, effect[multi] + hi])
        return np.where(na[:, None], np.nan, out)

    return effect, se, z, note, interval


class WaldTestResult(dict):
    """What :meth:`dpreg.DPFit.wald_test` returns: the dict ``{"statistic", "df", "p_value", "note", "rule"}``
    (as documented; R and JSON receive it as a plain dict), printed as one sentence, with statsmodels'
    attribute names ``statistic``, ``pvalue`` and ``df`` (newcomer review 20: ``print(fit.wald_test(...))``
    showed the raw dict, and ``res.pvalue`` of statsmodels' idiom was an AttributeError)."""

    @property
    def statistic(self):
        """The chi-square W (rule "chi-square") or the largest squared z (rule "bonferroni"); None when
        not available (see ``note``)."""
        return self.get("statistic")

    @property
    def pvalue(self):
        """The p-value (statsmodels' name; the key is ``"p_value"``); None when not available."""
        return self.get("p_value")

    @property
    def df(self):
        """Degrees of freedom: the number of coefficients or hypothesis rows tested."""
        return self.get("df")

    def __str__(self) -> str:
        stat, p, df = self.get("statistic"), self.get("p_value"), self.get("df")
        if stat is None or p is None:
            return f"Wald test on {df} DF: {self.get('note') or 'not available'}"
        if self.get("rule") == "bonferroni":
            return (f"Bonferroni over {df} z test{'s' if df != 1 else ''} (the fit's intervals are "
                    f"asymmetric): largest z^2 {format_number(stat)}, p-value: {format_pvalue(p)}")
        return f"Noise-aware Wald chi-square: {format_number(stat)} on {df} DF, p-value: {format_pvalue(p)}"

    def __repr__(self) -> str:
        return f"<{self}; keys {', '.join(self.keys())}>"


class WaldTermsResult:
    """What :meth:`dpreg.DPFit.wald_test_terms` returns: one noise-aware Wald test per term of the formula
    (statsmodels' ``wald_test_terms()``; R's ``car::Anova(fit, type = 3)`` / ``drop1()`` of a dpreg fit).
    ``table`` is a DataFrame indexed by term with columns ``statistic``, ``pvalue``, ``df_constraint``
    (statsmodels' names), ``rule`` and ``note`` (why a row has no statistic); ``summary_frame()`` returns
    it. Post-processing of the released coefficients and covariance (no new release)."""

    def __init__(self, table: pd.DataFrame):
        self.table = table

    def summary_frame(self) -> pd.DataFrame:
        """The table (statsmodels' name)."""
        return self.table

    def __str__(self) -> str:
        shown = self.table[["statistic", "df_constraint", "pvalue"]].copy()
        shown.columns = ["chi2", "df", "P>chi2"]
        shown["chi2"] = [format_number(v) if v == v else "NA" for v in shown["chi2"]]
        shown["P>chi2"] = [format_pvalue(v) if v == v else "NA" for v in shown["P>chi2"]]
        lines = ["Noise-aware Wald tests of each term (all its coefficients 0; normal reference, no new "
                 "release)", shown.to_string()]
        notes = {str(n) for n in self.table["note"] if isinstance(n, str) and n}
        lines += [f"Note: {n}" for n in sorted(notes)]
        if (self.table["rule"] == "bonferroni").any():
            lines.append("Rows with rule 'bonferroni': the fit's intervals are asymmetric; the statistic is "
                         "the largest squared z and the p-value Bonferroni over the printed p-values")
        return "\n".join(lines)

    __repr__ = __str__


class LinearHypothesisTest:
    """Result of :meth:`dpreg.DPFit.t_test`: one z test per hypothesis ``r_i b = q_i`` (statsmodels'
    ``ContrastResults`` with a normal reference).

    Post-processing of the released coefficients and covariance (no new release). For a row naming one
    coefficient with ``q = 0`` the z value, p-value and interval are the fit's summary row. Made by
    :meth:`dpreg.DPFit.t_test`, not constructed directly.

    Parameters
    ----------
    hypotheses, effect, sd, statistic, q, level, note
        The attributes below.
    interval : callable
        ``interval(level)`` gives the interval ends at a level (the fit's rule: Wald z, or the released
        asymmetric interval scaled by the hypothesis' coefficient).

    Attributes
    ----------
    hypotheses : list of str
        The hypotheses, as text (``"x1 - x2 = 0"``).
    effect : numpy.ndarray
        The estimates r_i b, about the fit's inference centre.
    sd : numpy.ndarray
        Their noise-aware standard errors.
    statistic : numpy.ndarray
        z = (r_i b - q_i) / sd (``zvalue``; ``tvalue`` is a statsmodels alias).
    pvalue : numpy.ndarray
        Two-sided p-values 2 Phi(-abs(z)).
    q : numpy.ndarray
        The hypothesised values.
    level : float
        The default level of :meth:`conf_int` and :meth:`summary_frame` (the fit's).
    note : str or None
        Why some values are NaN, or how a standard error was bounded.
    """

    def __init__(self, hypotheses, effect, sd, statistic, q, interval, level, note=None):
        self.hypotheses = list(hypotheses)
        self.effect = np.asarray(effect, float)
        self.sd = np.asarray(sd, float)
        self.statistic = np.asarray(statistic, float)
        self.q = np.asarray(q, float)
        self.pvalue = 2.0 * stats.norm.sf(np.abs(self.statistic))
        self.level = float(level)
        self.note = note
        self._interval = interval

    @property
    def zvalue(self) -> np.ndarray:
        """The z statistics (``statistic``)."""
        return self.statistic

    @property
    def tvalue(self) -> np.ndarray:
        """statsmodels' name, an alias of ``zvalue``: the reference is normal, not t."""
        return self.statistic

    def conf_int(self, alpha: float | None = None, level: float | None = None) -> np.ndarray:
        """Intervals of r_i b, one row per hypothesis (statsmodels' shape).

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: ``level = 1 - alpha``.
        level : float, optional
            The confidence level; None (and no alpha): ``level``.

        Returns
        -------
        numpy.ndarray
            Shape (number of hypotheses, 2): lower, upper.
        """
        level = _level_from_alpha(level, alpha)
        level = self.level if level is None else level
        _check_level(level)
        return self._interval(level)

    def summary_frame(self, alpha: float | None = None, level: float | None = None) -> pd.DataFrame:
        """One row per hypothesis: ``coef``, ``std err``, ``z``, ``P>|z|``, ``Conf. Int. Low``,
        ``Conf. Int. Upp.`` (statsmodels' columns with a normal reference), indexed by the hypotheses.

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: ``level = 1 - alpha``.
        level : float, optional
            The confidence level; None (and no alpha): ``level``.

        Returns
        -------
        pandas.DataFrame
        """
        ci = self.conf_int(alpha=alpha, level=level)
        return pd.DataFrame({"coef": self.effect, "std err": self.sd, "z": self.statistic,
                             "P>|z|": self.pvalue, "Conf. Int. Low": ci[:, 0], "Conf. Int. Upp.": ci[:, 1]},
                            index=pd.Index(self.hypotheses, name="hypothesis"))

    def summary(self, alpha: float | None = None, level: float | None = None) -> str:
        """The tests as a readable table (the text ``print()`` shows).

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: ``level = 1 - alpha``.
        level : float, optional
            The confidence level of the intervals; None: ``level``.

        Returns
        -------
        str
        """
        level = _level_from_alpha(level, alpha)
        level = self.level if level is None else level
        frame = self.summary_frame(level=level)
        pct = f"{100 * level:g}%"
        header = ["hypothesis", "estimate", "std err", "z", "P>|z|", f"{pct} lower", f"{pct} upper"]
        rows = []
        for h, row in zip(frame.index, frame.to_numpy()):
            cells = [format_number(float(v)) if np.isfinite(v) else "NA" for v in row]
            cells[3] = format_pvalue(float(row[3]))       # R's format.pval, as the summary prints p
            rows.append([h] + cells)
        widths = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
        lines = ["Linear hypotheses: noise-aware z tests (normal reference; no new release)"]
        lines.append("  ".join(header[c].ljust(widths[c]) if c == 0 else header[c].rjust(widths[c])
                               for c in range(len(header))))
        for r in rows:
            lines.append("  ".join(r[c].ljust(widths[c]) if c == 0 else r[c].rjust(widths[c])
                                   for c in range(len(r))))
        if self.note:
            lines.append(f"Note: {self.note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()


class PredictionResults:
    """Result of :meth:`dpreg.DPFit.get_prediction`: predictions of new rows with their standard errors,
    as statsmodels' ``PredictionResults``. Post-processing of the release, with :meth:`dpreg.DPFit.predict`'s
    rules (clamping to the public ranges, NA rows, the reasons for missing intervals). Made by
    :meth:`dpreg.DPFit.get_prediction`, not constructed directly.

    Parameters
    ----------
    predicted_mean, se_mean, level
        The attributes below.
    link_fit, link_centre, link_se : numpy.ndarray
        The linear predictor x0' coef, the centre of its intervals x0' inference_centre, and its
        standard error (the identity link for dp_lm).
    obs_se : numpy.ndarray or None
        The standard error of a new observation (dp_lm: sqrt(se^2 + sigma^2)); None for dp_glm.
    logit : bool
        True: the mean and the interval ends are mapped through the logistic function.
    index : pandas.Index
        The rows of the new data.
    link_ends : callable, optional
        ``link_ends(level, obs)`` -> (lower, upper) on the link scale: the interval ends where they are
        not the centre +- z se (AdaSSP's union intervals, docs/derivations/adassp_boosted.md §28); None:
        symmetric.

    Attributes
    ----------
    predicted_mean : pandas.Series
        Predictions on the response scale (probabilities for a logistic fit), as ``predict()``.
    se_mean : pandas.Series
        Standard errors of the mean prediction; for a logistic fit on the probability scale by the delta
        method, p (1 - p) times the linear predictor's standard error (statsmodels' ``se_mean``).
    level : float
        The default level of :meth:`conf_int` and :meth:`summary_frame` (the fit's).
    """

    def __init__(self, predicted_mean, se_mean, link_fit, link_centre, link_se, obs_se, logit, level, index,
                 link_ends=None):
        self.predicted_mean = pd.Series(np.asarray(predicted_mean, float), index=index, name="mean")
        self.se_mean = pd.Series(np.asarray(se_mean, float), index=index, name="mean_se")
        self.level = float(level)
        self._link_fit = np.asarray(link_fit, float)
        self._link_centre = np.asarray(link_centre, float)
        self._link_se = np.asarray(link_se, float)
        self._obs_se = None if obs_se is None else np.asarray(obs_se, float)
        self._logit = bool(logit)
        self._index = index
        # asymmetric intervals (AdaSSP's union, docs/derivations/adassp_boosted.md §28): a callable
        # (level, obs) -> (lower, upper) on the link scale, predict()'s own ends
        self._link_ends = link_ends

    def _response(self, x):
        return stats.logistic.cdf(x) if self._logit else x

    def _ends(self, se, level, obs=False):
        if self._link_ends is not None:
            lower, upper = self._link_ends(level, obs)
            return self._response(lower), self._response(upper)
        zq = _z_quantile(level)
        with np.errstate(over="ignore", invalid="ignore"):
            half = zq * se
            lower = np.where(np.isinf(half), -np.inf, self._link_centre - half)
            upper = np.where(np.isinf(half), np.inf, self._link_centre + half)
        return self._response(lower), self._response(upper)

    def conf_int(self, alpha: float | None = None, level: float | None = None, obs: bool = False) -> np.ndarray:
        """Interval ends of the mean prediction (``obs=True``: of a new observation, dp_lm only).

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: ``level = 1 - alpha``.
        level : float, optional
            The confidence level; None (and no alpha): ``level``.
        obs : bool, default False
            True: prediction intervals for a new observation (they add the released residual variance).

        Returns
        -------
        numpy.ndarray
            Shape (rows, 2): lower, upper.
        """
        level = _level_from_alpha(level, alpha)
        level = self.level if level is None else level
        _check_level(level)
        if obs and self._obs_se is None:
            raise InvalidArgument("obs=True: prediction intervals for a new observation are defined for linear "
                                  "regression (dp_lm) only")
        lower, upper = self._ends(self._obs_se if obs else self._link_se, level, obs)
        return np.column_stack([lower, upper])

    def summary_frame(self, alpha: float | None = None, level: float | None = None) -> pd.DataFrame:
        """statsmodels' frame: ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` and, for dp_lm,
        ``obs_ci_lower``, ``obs_ci_upper``; the intervals equal ``predict(interval="confidence")`` and
        ``predict(interval="prediction")`` at the same level.

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: ``level = 1 - alpha`` (statsmodels' default 0.05 is the fit's default
            level 0.95).
        level : float, optional
            The confidence level; None (and no alpha): ``level``.

        Returns
        -------
        pandas.DataFrame
        """
        level = _level_from_alpha(level, alpha)
        level = self.level if level is None else level
        _check_level(level)
        mean_lo, mean_hi = self._ends(self._link_se, level)
        cols = {"mean": self.predicted_mean.to_numpy(), "mean_se": self.se_mean.to_numpy(),
                "mean_ci_lower": mean_lo, "mean_ci_upper": mean_hi}
        if self._obs_se is not None:
            cols["obs_ci_lower"], cols["obs_ci_upper"] = self._ends(self._obs_se, level, True)
        return pd.DataFrame(cols, index=self._index)
