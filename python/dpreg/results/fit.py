"""DPFit (the result of dp_lm / dp_glm) and its R-like Summary.

A DPFit is built from a :class:`~dpreg.release.Release` (released values and public facts only), the
fit's :class:`~dpreg.design.contract.PublicDesign` (no data) and its PrivacyStatement. Everything it
shows is either public (declared, n under replace-one) or released through the ledger, or
post-processing of those (AdaSSP spec 6.4, 6.6, 6.7):

* standard errors are sqrt(diag V) of the noise-aware covariance V of the release;
* z = beta / SE, p = 2 Phi(-|z|), Wald intervals beta +/- z_{1-a/2} SE (normal reference, spec 6.4),
  or the release's percentile-bootstrap intervals / replicates when the method provides them (spec 6.5);
* the noise share of coefficient j is diag(V_priv)_j / diag(V)_j;
* instead of an F test, the noise-aware Wald chi-square of "all non-intercept coefficients are 0"
  (spec 6.6): W = b_S' V_SS^{-1} b_S on |S| degrees of freedom;
* DP residual standard error and DP R-squared only when the method released them (R-squared printed
  clamped to [0, 1], raw value kept in ``to_dict()``).

Never computed, shown or stored (spec 6.7): residual quantiles, residuals or fitted values of the
training data, min/max of any variable, non-private sigma / R^2 / OLS, leverage, logLik/AIC/BIC.
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import DPRegError, InvalidArgument, InvalidArgumentType, diagnostic_category
from ..estimators.registry import METHODS
from ..release import Release
from .format import (SIGNIF_LEGEND, format_column, format_number, format_percent_label, format_pvalue,
                     from_plain_array, is_missing, stars, to_plain)
from .tables import (html_paragraphs, markdown_paragraphs, render_html, render_latex, render_markdown,
                     render_text)

#: layout version of DPFit.to_dict() (bump when keys change meaning)
DICT_FORMAT = "dpreg.DPFit/1"

_INTERCEPT_NAMES = ("Intercept", "(Intercept)")
_NO_INFERENCE = "this method provides no standard errors"


class NotReleasedError(DPRegError, AttributeError):
    """Raised when asking for something a DP fit never holds (residuals, fitted values of the training
    data, log-likelihood, sums of squares, ...). The message gives the reason and what to use instead.

    Also an ``AttributeError``, so ``hasattr(fit, "residuals")`` is False.
    """


class _PlainStatement:
    """Stand-in for a PrivacyStatement rebuilt from a dict when the statement class cannot rebuild
    itself (keeps the texts and numbers; used by DPFit.from_dict)."""

    def __init__(self, d: dict, text: str | None = None):
        self._d = dict(d or {})
        self._text = text

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._d[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self):
        return dict(self._d)

    def __str__(self):
        if self._text:
            return self._text
        eps, delta = self._d.get("eps"), self._d.get("delta")
        return f"Privacy: (eps = {format_number(eps)}, delta = {format_number(delta)})"


def _z_quantile(level: float) -> float:
    _check_level(level)
    return float(stats.norm.ppf(0.5 + level / 2.0))


def _check_level(level):
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not (0 < level < 1):
        raise InvalidArgument("level must be a number strictly between 0 and 1, e.g. 0.95")


def _level_from_alpha(level, alpha):
    """``alpha`` (statsmodels' keyword) -> ``level``."""
    if alpha is not None:
        if level is not None:
            raise InvalidArgument("give either level or alpha (= 1 - level), not both")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (0 < alpha < 1):
            raise InvalidArgument("alpha must be a number strictly between 0 and 1, e.g. 0.05")
        return 1.0 - float(alpha)
    return level


def _warn_alpha_like(level):
    """A positional level below 0.5 is almost always statsmodels' ``conf_int(0.05)`` (an alpha)."""
    if isinstance(level, (int, float)) and not isinstance(level, bool) and 0 < level < 0.5:
        warnings.warn(f"conf_int({level:g}) asks for {100 * level:g}% intervals: dpreg's first argument "
                      f"is the confidence level (statsmodels' conf_int(alpha) is conf_int(alpha={level:g}) "
                      f"here)", UserWarning, stacklevel=3)


def _num(x):
    return None if x is None else float(x)


class DPFit:
    """Result of :func:`dpreg.dp_lm` / :func:`dpreg.dp_glm`.

    Holds the released values (coefficients in original units, noise-aware covariance, released sigma
    and R-squared), the public design (terms, formula, declared schema; no data) and the privacy
    statement. Nothing in it was computed from the data except through releases counted in
    ``privacy``; residuals and fitted values of the training data do not exist (asking for them
    raises :class:`dpreg.results.fit.NotReleasedError` with the reason). The members are listed in :doc:`/api`;
    statsmodels' names (``params``, ``bse``, ``pvalues``, ``conf_int()``, ...) give the same released
    values. Inference is z-based (normal reference, noise-aware standard errors).

    Fits are made by :func:`dpreg.dp_lm` / :func:`dpreg.dp_glm` (or rebuilt with :meth:`from_dict`),
    not constructed directly.

    Parameters
    ----------
    release : dpreg.release.Release
        What the estimator released.
    public : dpreg.design.contract.PublicDesign, optional
        The public design (terms, declared schema).
    privacy : dpreg.PrivacyStatement, optional
        The privacy statement of every release.
    formula : str, optional
        The model formula.
    method : str, optional
        The method's name (default: the release's).
    options : dict, optional
        The options passed by the user.
    auto : bool, default False
        True when ``method="auto"`` chose the method.

    See Also
    --------
    dpreg.dp_lm, dpreg.dp_glm, Summary
    """

    def __init__(self, release: Release, *, public=None, privacy=None, formula: str | None = None,
                 method: str | None = None, options: dict | None = None, auto: bool = False):
        coef = np.asarray(release.coef, dtype=float).ravel()
        terms = list(public.terms) if public is not None else list(release.facts.get("terms", []))
        if not terms:
            terms = [f"b{j}" for j in range(coef.size)]
        if len(terms) != coef.size:
            raise InvalidArgument("internal: the release has a different number of coefficients than terms")
        self._release = release
        self._public = public
        self._privacy = privacy
        self._terms = terms
        self._formula = formula if formula is not None else getattr(public, "formula", None)
        self._method = method or release.method
        self._options = dict(options or {})
        self._auto = bool(auto)

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_release(cls, release: Release, *, public, privacy, formula, method, options=None,
                     auto=False) -> DPFit:
        """Build a fit from an estimator's release (used by :func:`dpreg.dp_lm` / :func:`dpreg.dp_glm`).

        Parameters
        ----------
        release : dpreg.release.Release
            What the estimator released.
        public : dpreg.design.contract.PublicDesign
            The public design.
        privacy : dpreg.PrivacyStatement
            The privacy statement of every release.
        formula : str
            The model formula.
        method : str
            The method's name.
        options : dict, optional
            The options passed by the user.
        auto : bool, default False
            True when ``method="auto"`` chose the method.

        Returns
        -------
        DPFit
        """
        return cls(release, public=public, privacy=privacy, formula=formula, method=method,
                   options=options, auto=auto)

    # ---- public facts --------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """Name of the estimator that made the fit (e.g. ``"adassp"``)."""
        return self._method

    @property
    def formula(self) -> str | None:
        """The model formula as given."""
        return self._formula

    @property
    def terms(self) -> list[str]:
        """Names of the coefficients (``Intercept``, ``x1``, ``C(x2)[T.b]``, ...): public, they follow from the formula and the declared or privately selected levels."""
        return list(self._terms)

    @property
    def options(self) -> dict:
        """The options the user passed (``**options`` of the fitting function)."""
        return dict(self._options)

    @property
    def level(self) -> float:
        """Default confidence level of this fit's intervals: the ``level`` option when the method
        accepts one (declared, so public), else 0.95. ``conf_int()``, ``predict()`` and
        ``summary()`` use it when no level is passed."""
        lv = self._options.get("level")
        if lv is None:
            t = self._release.tuning.get("level")
            lv = t[0] if isinstance(t, (tuple, list)) else t
        try:
            lv = float(lv)
        except (TypeError, ValueError):
            return 0.95
        return lv if 0 < lv < 1 else 0.95

    @property
    def auto(self) -> bool:
        """True when ``method="auto"`` chose the method."""
        return self._auto

    @property
    def privacy(self):
        """The :class:`dpreg.PrivacyStatement` of the fit: guarantee, ledger of every release, leaks, ranges."""
        return self._privacy

    @property
    def family(self) -> str:
        """``"gaussian"`` (:func:`dpreg.dp_lm`) or ``"binomial"`` (:func:`dpreg.dp_glm`)."""
        return getattr(self._public, "family", None) or ("binomial" if self._release.link == "logit"
                                                         else "gaussian")

    @property
    def link(self) -> str:
        """``"identity"`` or ``"logit"``."""
        return self._release.link

    @property
    def _add_remove(self) -> bool:
        nb = getattr(self._privacy, "neighbours", None) if self._privacy is not None else None
        return nb is not None and "add" in str(nb).lower()

    @property
    def nobs(self):
        """Number of rows (public under replace-one). Under add/remove neighbours n is not public:
        the released DP estimate of n (rounded) when the method released one, else None."""
        if self._add_remove:
            n_hat = self._release.facts.get("n_hat")
            return None if n_hat is None else int(round(float(n_hat)))
        n = getattr(self._public, "n", None)
        if n is None:
            n = self._release.facts.get("n")
        return None if n is None else int(n)

    @property
    def outcome(self) -> str | None:
        """Name of the outcome variable (left-hand side of the formula), or None."""
        return getattr(self._public, "outcome", None)

    @property
    def inference_note(self) -> str | None:
        """Why standard errors / intervals are not available (None when they are)."""
        return self._release.inference_note

    @property
    def has_inference(self) -> bool:
        """True when the method released what noise-aware standard errors need."""
        v = self._release.vcov
        return v is not None and bool(np.any(np.isfinite(np.diag(np.asarray(v, float)))))

    @property
    def sigma(self) -> float | None:
        """DP residual standard error (released), original units; None when not released."""
        return _num(self._release.sigma)

    @property
    def df_resid(self):
        """Residual degrees of freedom n - d where sigma was released and n is public, else None."""
        if self._release.df_resid is not None:
            return self._release.df_resid
        if self._release.sigma is not None and self.nobs is not None:
            return self.nobs - len(self._terms)
        return None

    @property
    def r_squared(self) -> float | None:
        """DP R-squared clamped to [0, 1]; the raw value is ``r_squared_raw``."""
        r = self._release.r_squared
        return None if r is None or not np.isfinite(r) else float(min(1.0, max(0.0, r)))

    @property
    def r_squared_raw(self) -> float | None:
        """DP R-squared before clamping to [0, 1] (noise can take it outside); None when not released."""
        return _num(self._release.r_squared)

    @property
    def adj_r_squared(self) -> float | None:
        """DP adjusted R-squared clamped to [0, 1]: the released one, or
        1 - (1 - R^2)(n - 1)/(n - d) from the raw DP R-squared (post-processing)."""
        raw = self.adj_r_squared_raw
        return None if raw is None or not np.isfinite(raw) else float(min(1.0, max(0.0, raw)))

    @property
    def adj_r_squared_raw(self) -> float | None:
        """DP adjusted R-squared before clamping to [0, 1]; None when not released."""
        if self._release.adj_r_squared is not None:
            return float(self._release.adj_r_squared)
        r, n, d = self._release.r_squared, self.nobs, len(self._terms)
        if r is None or n is None or n - d <= 0:
            return None
        return float(1 - (1 - r) * (n - 1) / (n - d))

    @property
    def tuning(self) -> dict:
        """{name: (value, origin)}. An option the user passed is marked "user" even when the
        estimator recorded only its default's origin (e.g. ISP's ``level``)."""
        out = {}
        for k, v in self._release.tuning.items():
            value, origin = (v[0], v[1]) if isinstance(v, (tuple, list)) and len(v) > 1 else (v, None)
            if k in self._options and not str(origin or "").lower().startswith(("user", "declared")):
                origin = "user"
            out[k] = (value, origin)
        return out

    @property
    def facts(self) -> dict:
        """Released intermediate values and public settings of the method (e.g. the ridge used, clip points), as a dict."""
        return dict(self._release.facts)

    @property
    def warnings(self) -> list[str]:
        """Diagnostics of the fit (computed from released values and public facts only); also emitted as warnings at fit time."""
        return list(self._release.warnings)

    @property
    def public(self):
        """The public design (terms, formula, declared schema, column intervals). No data."""
        return self._public

    # ---- what a DP fit never holds --------------------------------------------------------------
    @property
    def residuals(self):
        """Not available in a DP fit (raises :class:`dpreg.results.fit.NotReleasedError`): each residual of the training data is a function of one person's record. Use :attr:`sigma` or :meth:`predict` on new data. ``resid`` is the same."""
        raise NotReleasedError(
            "residuals of the training data are not available: each one is a function of one person's "
            "record and would expose it; use fit.sigma (DP residual standard error) or predict() on "
            "new data")

    @property
    def fitted(self):
        """Not available in a DP fit (raises :class:`dpreg.results.fit.NotReleasedError`): fitted values of the training data would, with the data, expose records. Use :meth:`predict` on new data. ``fitted_values`` is the same."""
        raise NotReleasedError(
            "fitted values of the training data are not available: together with the data they would "
            "expose individual records; use predict() on new data")

    fitted_values = fitted
    resid = residuals

    # ---- statsmodels names (issue 15): the same released values under the names statsmodels uses ----
    # Inference is z-based (normal reference, noise-aware SEs): ``zvalues`` are the z statistics and
    # ``tvalues`` is an alias of them kept for statsmodels code; no t distribution is involved.
    @property
    def params(self) -> pd.Series:
        """statsmodels name of :attr:`coef` (released coefficients, original units)."""
        return self.coef

    @property
    def bse(self) -> pd.Series:
        """statsmodels name of :attr:`std_errors` (noise-aware standard errors)."""
        return self.std_errors

    @property
    def zvalues(self) -> pd.Series:
        """z statistics coef / SE (normal reference); same values as :meth:`z_values`."""
        return self.z_values()

    @property
    def tvalues(self) -> pd.Series:
        """statsmodels name, kept as an alias of :attr:`zvalues`: these are z statistics (normal
        reference, noise-aware SEs), not t statistics."""
        return self.z_values()

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values 2 Phi(-abs(z)) (normal reference); same values as :meth:`p_values`."""
        return self.p_values()

    @property
    def rsquared(self) -> float | None:
        """statsmodels name of :attr:`r_squared` (DP R-squared; None when not released)."""
        return self.r_squared

    @property
    def rsquared_adj(self) -> float | None:
        """statsmodels name of :attr:`adj_r_squared` (None when not released)."""
        return self.adj_r_squared

    @property
    def df_model(self):
        """Number of coefficients other than the intercept (public: follows from the formula and
        the declared levels)."""
        return len(self._slopes())

    @property
    def scale(self) -> float | None:
        """Released residual variance sigma^2 (statsmodels' ``scale``); None when sigma was not
        released."""
        s = self.sigma
        return None if s is None else float(s) ** 2

    mse_resid = scale

    def cov_params(self) -> pd.DataFrame:
        """statsmodels name of :meth:`vcov` (noise-aware covariance of the coefficients)."""
        return self.vcov()

    # ---- notebook display (issue 15): the HTML/Markdown that summary().to_html() makes ---------------
    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def _repr_markdown_(self) -> str:
        return self.summary().to_markdown()

    def plot(self, **kwargs):
        """Coefficient plot with noise-aware intervals (matplotlib).

        Parameters
        ----------
        **kwargs
            Passed to :func:`dpreg.plot_coef` (``level``, ``labels``, ``reference``, ``terms``,
            ``drop_intercept``, ``ax``, ...).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plots import coef_plot
        return coef_plot(self, **kwargs)

    # ---- coefficients and inference -----------------------------------------------------------
    @property
    def coef(self) -> pd.Series:
        """Released coefficients in original units, a ``pandas.Series`` indexed by :attr:`terms` (statsmodels' name: :attr:`params`)."""
        return pd.Series(np.asarray(self._release.coef, float).copy(), index=self.terms, name="coef")

    def _vcov_array(self) -> np.ndarray | None:
        v = self._release.vcov
        return None if v is None else np.asarray(v, dtype=float)

    def vcov(self) -> pd.DataFrame:
        """Noise-aware covariance (original units). All NaN when the method offers no inference
        (reason in ``inference_note``)."""
        v = self._vcov_array()
        d = len(self._terms)
        if v is None:
            v = np.full((d, d), np.nan)
        return pd.DataFrame(v.copy(), index=self.terms, columns=self.terms)

    @property
    def std_errors(self) -> pd.Series:
        """Noise-aware standard errors (sampling error and privacy noise), a ``pandas.Series``; NaN where the method offers no inference (see :attr:`inference_note`). statsmodels' name: :attr:`bse`."""
        v = self._vcov_array()
        if v is None:
            se = np.full(len(self._terms), np.nan)
        else:
            dg = np.diag(v).copy()
            se = np.where(dg >= 0, np.sqrt(np.where(dg >= 0, dg, 0.0)), np.nan)
        return pd.Series(se, index=self.terms, name="std_error")

    @property
    def noise_share(self) -> pd.Series:
        """Share of each coefficient's variance due to privacy noise: diag(V_priv)/diag(V)."""
        v, vp = self._vcov_array(), self._release.vcov_privacy
        d = len(self._terms)
        if v is None or vp is None:
            share = np.full(d, np.nan)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.diag(np.asarray(vp, float)) / np.diag(v)
            # a share cannot exceed 1; it does numerically when the total variance is itself an estimate
            # (e.g. a bootstrap SE slightly below the exactly known noise sd)
            share = np.where(np.isfinite(share), np.clip(share, 0.0, 1.0), np.nan)
        return pd.Series(share, index=self.terms, name="noise_share")

    def z_values(self) -> pd.Series:
        """z statistics coef / SE (normal reference, noise-aware SEs).

        Returns
        -------
        pandas.Series
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            z = self.coef.to_numpy() / self.std_errors.to_numpy()
        return pd.Series(z, index=self.terms, name="z_value")

    def p_values(self) -> pd.Series:
        """Two-sided p-values 2 Phi(-abs(z)) (normal reference).

        Returns
        -------
        pandas.Series
        """
        z = self.z_values().to_numpy()
        return pd.Series(2.0 * stats.norm.sf(np.abs(z)), index=self.terms, name="p_value")

    @property
    def ci_method(self) -> str:
        """How conf_int() builds intervals: "bootstrap" (the method's own intervals / replicates),
        "wald z" or "not available"."""
        r = self._release
        if r.ci is not None or r.ci_draws is not None:
            return "bootstrap"
        return "wald z" if self.has_inference else "not available"

    def conf_int(self, *args, level: float | None = None, alpha: float | None = None) -> pd.DataFrame:
        """Confidence intervals of the coefficients.

        The release's own intervals when computed at this level (percentile bootstrap), else percentiles
        of its bootstrap replicates, else Wald z intervals beta +/- z SE. NaN where the method offers no
        inference.

        Parameters
        ----------
        *args
            At most one positional value, taken as statsmodels' ``alpha``.
        level : float, optional
            Confidence level in (0, 1); None: the fit's :attr:`level` (0.95 unless the method's
            ``level`` option was set).
        alpha : float, optional
            statsmodels' keyword: the same as ``level = 1 - alpha``.

        Returns
        -------
        pandas.DataFrame
            One row per term, columns ``lower`` and ``upper`` (statsmodels' shape).
        """
        if args:   # conf_int(0.9): the level, positionally (statsmodels code passes alpha there)
            if len(args) > 1 or level is not None:
                raise InvalidArgumentType("conf_int() takes one level, positionally or as level=")
            level = args[0]
            _warn_alpha_like(level)
        level = _level_from_alpha(level, alpha)
        level = self.level if level is None else level
        _check_level(level)
        r = self._release
        d = len(self._terms)
        if r.ci is not None and r.ci_level is not None and abs(float(r.ci_level) - level) < 1e-12:
            ci = np.asarray(r.ci, float).reshape(d, 2)
        elif r.ci_draws is not None and np.asarray(r.ci_draws).size:
            draws = np.asarray(r.ci_draws, float)
            alpha = 1.0 - level
            ci = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0).T
        else:
            z = _z_quantile(level)
            b, se = self.coef.to_numpy(), self.std_errors.to_numpy()
            ci = np.column_stack([b - z * se, b + z * se])
        return pd.DataFrame(ci.copy(), index=self.terms, columns=["lower", "upper"])

    def _slopes(self) -> list[int]:
        # a coefficient reported as not estimable (NA) is not part of the Wald test (issue 12)
        b = np.asarray(self._release.coef, float)
        return [j for j, t in enumerate(self._terms) if t not in _INTERCEPT_NAMES and np.isfinite(b[j])]

    def wald_test(self) -> dict:
        """Noise-aware Wald chi-square of "all non-intercept coefficients are 0".

        Returns ``{"statistic", "df", "p_value", "note"}``; statistic/p_value are None with a plain
        reason in ``note`` when it cannot be computed."""
        S = self._slopes()
        out = {"statistic": None, "df": len(S), "p_value": None, "note": None}
        v = self._vcov_array()
        if not S:
            out["note"] = "no coefficients other than the intercept"
            return out
        if v is None:
            out["note"] = "not available: " + (self.inference_note or _NO_INFERENCE)
            return out
        vss = v[np.ix_(S, S)]
        if not np.all(np.isfinite(vss)):
            out["note"] = "not available: covariances between coefficients are not estimated by this method"
            return out
        b = np.asarray(self._release.coef, float)[S]
        try:
            c = np.linalg.cholesky(vss)
        except np.linalg.LinAlgError:
            out["note"] = "not available: the covariance of the coefficients is not positive definite"
            return out
        w_half = np.linalg.solve(c, b)
        w = float(w_half @ w_half)
        out["statistic"] = w
        out["p_value"] = float(stats.chi2.sf(w, len(S)))
        return out

    # ---- prediction -----------------------------------------------------------------------------
    def _new_model_matrix(self, newdata, clamp: bool = True):
        if self._public is None or not hasattr(self._public, "model_matrix"):
            raise DPRegError("this fit cannot build model matrices for new data (no public design)")
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        if not isinstance(newdata, pd.DataFrame):
            raise InvalidArgumentType("newdata must be a pandas DataFrame (or a dict of columns)")
        res = self._public.model_matrix(newdata)
        outside = None
        if isinstance(res, tuple):
            res, outside = res[0], res[1]
        elif hasattr(self._public, "outside_ranges"):
            outside = self._public.outside_ranges(newdata)
        X = np.asarray(res.to_numpy() if hasattr(res, "to_numpy") else res, dtype=float)
        if X.ndim == 1:
            X = X.reshape(1, -1)
        if X.shape[1] != len(self._terms):
            raise DPRegError("internal: the model matrix of newdata has a different number of columns "
                             "than the fit's terms")
        # issue 12: the fit was made on model-matrix columns clamped to their public intervals (spec
        # 2.3), so by default new rows are clamped the same way; the check is on the model-matrix
        # columns (the outcome and rows inside the ranges never trigger it)
        lo = np.asarray(getattr(self._public, "column_lower", np.full(X.shape[1], np.nan)), float)
        hi = np.asarray(getattr(self._public, "column_upper", np.full(X.shape[1], np.nan)), float)
        icpt = [j for j, t in enumerate(self._terms) if t in _INTERCEPT_NAMES]
        known = np.isfinite(lo) & np.isfinite(hi) & (lo.shape == (X.shape[1],))
        known[icpt] = False
        if np.any(known):
            tol = 1e-12 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
            off = known & (np.any(X < lo - tol, axis=0) | np.any(X > hi + tol, axis=0))
            cols = [self._terms[j] for j in np.flatnonzero(off)]
            if clamp:
                X = np.where(known, np.clip(X, np.where(known, lo, -np.inf), np.where(known, hi, np.inf)), X)
            self._warn_outside(cols, clamped=clamp)
        else:
            if outside is not None and not isinstance(outside, (dict, list, tuple, set)) \
                    and bool(np.any(np.asarray(outside))):
                outside = self._outside_columns(newdata) or outside
            self._warn_outside(outside)
        if self._release.row_transform is not None:
            from ..design.scaling import apply_row_transform
            X = np.asarray(apply_row_transform(X, self._release.row_transform), dtype=float)
        return X, newdata.index

    def _outside_columns(self, newdata) -> list[str]:
        """Names of numeric columns of newdata with values outside the schema's public ranges."""
        schema = getattr(self._public, "schema", None)
        cols = []
        outcome = getattr(self._public, "outcome", None)
        for name, v in (getattr(schema, "variables", None) or {}).items():
            if name == outcome:   # the outcome is not a predictor: a column of it in newdata is ignored
                continue
            if v.kind != "numeric" or name not in newdata or v.lower is None or v.upper is None:
                continue
            x = pd.to_numeric(newdata[name], errors="coerce").to_numpy(dtype=float)
            if np.any((x < v.lower) | (x > v.upper)):
                cols.append(str(name))
        return cols

    @staticmethod
    def _warn_outside(outside, clamped: bool = False):
        """Warn (naming columns, never values) when new rows leave the fit's public ranges."""
        if outside is None:
            return
        cols = None
        if isinstance(outside, (bool, np.bool_)):
            hit = bool(outside)
        elif isinstance(outside, dict):
            cols = [str(k) for k, v in outside.items() if np.any(v)]
            hit = bool(cols)
        elif isinstance(outside, (list, tuple, set)) and all(isinstance(c, str) for c in outside):
            cols = sorted(outside)
            hit = bool(cols)
        else:
            hit = bool(np.any(np.asarray(outside)))
        if hit and clamped:
            where = f" of term(s) {', '.join(cols)}" if cols else ""
            warnings.warn(f"newdata: values{where} lie outside the public ranges the fit was made "
                          "with; they were clamped to those ranges, as the training data were "
                          "(clamp=False extrapolates instead)", UserWarning, stacklevel=4)
        elif hit:
            where = f" of column(s) {', '.join(cols)}" if cols else ""
            warnings.warn(f"newdata: values{where} lie outside the public ranges the fit was made "
                          f"with; these predictions extrapolate", UserWarning, stacklevel=3)

    def predict(self, newdata, interval=None, level: float | None = None, type: str = "response",
                clamp: bool = True):
        """Predictions for new data (post-processing of the release).

        Parameters
        ----------
        newdata : pandas.DataFrame
            Rows to predict, with the columns the formula uses (except the outcome).
        interval : {None, "none", "confidence", "prediction"}, optional
            None: a Series of predictions. "confidence": a DataFrame ``fit``, ``lower``, ``upper`` with
            se_fit = sqrt(x0' V x0) (when the method estimates no covariances, the conservative bound
            sum_j abs(x0_j) SE_j). "prediction" adds the released residual variance (gaussian fits only).
        level : float, optional
            Interval level; None: the fit's :attr:`level`.
        type : {"response", "link"}, default "response"
            For logistic fits: "response" gives probabilities (intervals mapped through the logistic
            function), "link" the linear predictor.
        clamp : bool, default True
            True: model-matrix columns of newdata are clamped to the public ranges the fit used, as the
            training rows were (the fit is the regression of the clamped data); a warning names the
            terms that were clamped. False: no clamping (the prediction extrapolates the fitted line;
            a warning says so).

        Returns
        -------
        pandas.Series or pandas.DataFrame
        """
        if interval in ("none",):
            interval = None
        if interval not in (None, "confidence", "prediction"):
            raise InvalidArgument("interval must be None, 'confidence' or 'prediction'")
        if type not in ("response", "link"):
            raise InvalidArgument("type must be 'response' or 'link'")
        logit = self._release.link == "logit"
        if interval == "prediction" and logit:
            raise InvalidArgument("prediction intervals are defined for linear regression (dp_lm) only; "
                             "use interval='confidence' for a logistic fit")
        level = self.level if level is None else level
        _check_level(level)
        if not isinstance(clamp, (bool, np.bool_)):
            raise InvalidArgument("clamp must be True or False")
        X, index = self._new_model_matrix(newdata, clamp=bool(clamp))
        b = np.asarray(self._release.coef, float)
        # a not-estimable (NA) coefficient: rows that use its column get NA, the others ignore it
        na = ~np.isfinite(b)
        if na.any():
            bad_rows = np.any(X[:, na] != 0, axis=1)
            X = X[:, ~na]
            b = b[~na]
        eta = X @ b
        if na.any():
            eta = np.where(bad_rows, np.nan, eta)

        def response(x):
            return stats.logistic.cdf(x) if (logit and type == "response") else x

        if interval is None:
            return pd.Series(response(eta), index=index, name="fit")
        v = self._vcov_array()
        if v is not None and na.any():
            v = v[np.ix_(~na, ~na)]
        if v is None:
            raise DPRegError("intervals are not available for this fit: "
                             + (self.inference_note or _NO_INFERENCE))
        dg = np.diag(v)
        if np.all(np.isfinite(v)):
            se_fit = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, v, X), 0.0))
        elif np.all(np.isfinite(dg)) and np.all(dg >= 0):
            # covariances not estimated (subsample-and-aggregate): sd(x'b) <= sum_j |x_j| SE_j holds for
            # any correlation (triangle inequality for standard deviations), so the interval is conservative
            se_fit = np.abs(X) @ np.sqrt(dg)
        else:
            raise DPRegError("intervals for predictions are not available for this fit: the method "
                             "does not provide standard errors for every coefficient")
        if interval == "prediction":
            sig = self.sigma
            if sig is None and (self.facts or {}).get("sigma_not_estimable"):
                # issue 12: sigma is not estimable at this n and eps; its released 97.5% upper bound
                # keeps the prediction interval conservative
                sig = float(self.facts["sigma_interval"][1])
                warnings.warn("the DP residual standard error is not estimable for this fit; the "
                              "prediction interval uses its 95% upper bound (conservative)", UserWarning,
                              stacklevel=2)
            if sig is None:
                raise DPRegError("prediction intervals need a DP residual standard error, which this "
                                 "method did not release; use interval='confidence'")
            se = np.sqrt(se_fit ** 2 + sig ** 2)
        else:
            se = se_fit
        z = _z_quantile(level)
        out = pd.DataFrame({"fit": response(eta), "lower": response(eta - z * se),
                            "upper": response(eta + z * se)}, index=index)
        return out

    # ---- summaries and printing ----------------------------------------------------------------
    def summary(self, level: float | None = None) -> Summary:
        """R-like summary of the fit.

        Parameters
        ----------
        level : float, optional
            Level of the interval columns; None: the fit's :attr:`level`.

        Returns
        -------
        Summary
        """
        return Summary(self, level=self.level if level is None else level)

    @property
    def description(self) -> str:
        """Plain-language name of the method (e.g. "AdaSSP")."""
        d = self._release.facts.get("description")
        if isinstance(d, str) and d:
            return d
        spec = METHODS.get(self._method)
        return spec.description if spec is not None else self._method

    @property
    def citation(self) -> str | None:
        """The paper the method implements (short form), or None."""
        spec = METHODS.get(self._method)
        return spec.citation if spec is not None else None

    @property
    def title(self) -> str:
        """First summary line: the kind of model, the method and its paper."""
        kind = "DP logistic regression" if self._release.link == "logit" else "DP linear regression"
        mode = self._release.facts.get("mode")
        extra = f", {mode} mode" if isinstance(mode, str) and mode else ""
        desc = self.description
        cite = self.citation
        if cite and "[" not in desc:
            desc = f"{desc} [{cite}]"
        return f"{kind} ({desc}){extra}"

    @property
    def call(self) -> str:
        """The call that made the fit, as R would print it (formula, eps, delta, method)."""
        fn = "dp_glm" if self._release.link == "logit" else "dp_lm"
        parts = [f"formula = {self._formula}"]
        if fn == "dp_glm":
            parts.append("family = binomial")
        p = self._privacy
        if p is not None:
            if getattr(p, "eps", None) is not None:
                parts.append(f"eps = {format_number(p.eps, 6)}")
            if getattr(p, "delta", None) is not None:
                parts.append(f"delta = {format_number(p.delta, 6)}")
        parts.append('method = "auto"' if self._auto else f'method = "{self._method}"')
        return f"{fn}({', '.join(parts)})"

    def _privacy_first_line(self) -> str:
        if self._privacy is None:
            return "Privacy: statement not available"
        return str(self._privacy).strip().splitlines()[0] if str(self._privacy).strip() else ""

    def __str__(self) -> str:
        """Like R's print.lm: Call and the coefficient vector, plus the one-line privacy label."""
        b = self.coef
        vals = format_column(b.to_numpy(), digits=4)
        names = list(b.index)
        widths = [max(len(n), len(v)) for n, v in zip(names, vals)]
        lines = ["", self.title, "Call:", self.call, "", "Coefficients:"]
        row_n, row_v, used = [], [], 0
        for n, v, w in zip(names, vals, widths):
            if row_n and used + w + 2 > 80:
                lines += ["  ".join(row_n), "  ".join(row_v)]
                row_n, row_v, used = [], [], 0
            row_n.append(n.rjust(w))
            row_v.append(v.rjust(w))
            used += w + 2
        if row_n:
            lines += ["  ".join(row_n), "  ".join(row_v)]
        lines += ["", self._privacy_first_line(), ""]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.__str__()

    # ---- plain-type exchange ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Everything the R package (and JSON) needs, as plain Python types only (dict, list, str,
        int, float, bool, None). Missing numbers (NaN, no inference, not released) are ``None``.

        Keys: format, dpreg_version, title, call, method, method_description, auto, formula, family,
        link, outcome, nobs, terms, coef, std_errors, vcov, vcov_privacy, noise_share, ci, ci_level,
        ci_draws, ci_method, inference_note, sigma, df_resid, r_squared, adj_r_squared (clamped to
        [0, 1]), r_squared_raw, adj_r_squared_raw, tuning ({name: {value, origin}}), facts, warnings,
        row_transform, options, coef_table (columns term, estimate, std_error, statistic, p_value,
        conf_low, conf_high, noise_share, stars, and conf_level), wald ({statistic, df, p_value, note}),
        privacy (PrivacyStatement.to_dict()), privacy_text (str(privacy)), public
        (PublicDesign.to_dict()), summary_text (str(summary())), print_text (str(fit)).
        ``coef_table`` uses the fit's ``level``; subsample_aggregate adds the released columns
        sampling_sd, noise_sd, q_lo, q_hi (also in ``facts``).
        """
        from .._version import __version__
        r = self._release
        level = self.level
        ci95 = self.conf_int(level=level)
        se = self.std_errors
        p = self.p_values()
        table = {
            "term": self.terms,
            "estimate": self.coef.tolist(),
            "std_error": se.tolist(),
            "statistic": self.z_values().tolist(),
            "p_value": p.tolist(),
            "conf_low": ci95["lower"].tolist(),
            "conf_high": ci95["upper"].tolist(),
            "noise_share": self.noise_share.tolist(),
            "stars": [stars(x) for x in p],
            "conf_level": level,
        }
        table.update(self._method_columns())
        out = {
            "format": DICT_FORMAT,
            "dpreg_version": __version__,
            "title": self.title,
            "call": self.call,
            "method": self._method,
            "method_description": self.description,
            "auto": self._auto,
            "formula": self._formula,
            "family": self.family,
            "link": r.link,
            "outcome": self.outcome,
            "nobs": self.nobs,
            "terms": self.terms,
            "coef": np.asarray(r.coef, float),
            "std_errors": se.to_numpy(),
            "vcov": r.vcov,
            "vcov_privacy": r.vcov_privacy,
            "noise_share": self.noise_share.to_numpy(),
            "ci": r.ci,
            "ci_level": r.ci_level,
            "ci_draws": r.ci_draws,
            "ci_method": self.ci_method,
            "inference_note": r.inference_note,
            "sigma": r.sigma,
            "df_resid": self.df_resid,
            "r_squared": self.r_squared,
            "adj_r_squared": self.adj_r_squared,
            "r_squared_raw": self.r_squared_raw,
            "adj_r_squared_raw": self.adj_r_squared_raw,
            "tuning": {k: {"value": v[0], "origin": v[1]} for k, v in self.tuning.items()},
            "facts": r.facts,
            "warnings": [str(w) for w in r.warnings],
            # the warning class of each diagnostic (None: an informational note, not emitted)
            "warning_classes": [None if diagnostic_category(w) is None else diagnostic_category(w).__name__
                                for w in r.warnings],
            "row_transform": r.row_transform,
            "options": self._options,
            "coef_table": table,
            "wald": self.wald_test(),
            "privacy": self._privacy.to_dict() if hasattr(self._privacy, "to_dict") else None,
            "privacy_text": None if self._privacy is None else str(self._privacy),
            "public": _public_to_dict(self._public),
            "summary_text": str(self.summary()),
            "method_text": self.summary().method_text(),
            "print_text": str(self),
        }
        return to_plain(out)

    def _method_columns(self) -> dict:
        """Per-coefficient released facts of the method as extra coefficient-table columns
        (subsample-and-aggregate: sampling_sd, noise_sd, q_lo, q_hi; spec winsorized_sa 5.3)."""
        per = self._release.facts.get("coefficients")
        if self._method != "subsample_aggregate" or not isinstance(per, dict):
            return {}
        out = {}
        for key in ("sampling_sd", "noise_sd", "q_lo", "q_hi"):
            col = []
            for t in self._terms:
                v = (per.get(t) or {}).get(key)
                col.append(np.nan if v is None else float(v))
            out[key] = col
        return out

    @classmethod
    def from_dict(cls, d: dict) -> DPFit:
        """Rebuild a working fit (coefficients, inference, summary, predict) from :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            The output of :meth:`to_dict` (e.g. read back from JSON).

        Returns
        -------
        DPFit
        """
        if not isinstance(d, dict) or "coef" not in d:
            raise InvalidArgument("from_dict expects the dict produced by DPFit.to_dict()")
        fmt = d.get("format")
        if fmt is not None and fmt != DICT_FORMAT:
            raise InvalidArgument(f"unsupported DPFit dict format {fmt!r} (this dpreg reads {DICT_FORMAT!r})")
        rel = Release(
            method=d["method"],
            coef=from_plain_array(d["coef"]),
            vcov=from_plain_array(d.get("vcov"), shape_2d=True),
            vcov_privacy=from_plain_array(d.get("vcov_privacy"), shape_2d=True),
            ci=from_plain_array(d.get("ci"), shape_2d=True),
            ci_level=d.get("ci_level"),
            ci_draws=from_plain_array(d.get("ci_draws"), shape_2d=True),
            inference_note=d.get("inference_note"),
            sigma=d.get("sigma"),
            df_resid=d.get("df_resid"),
            r_squared=d.get("r_squared_raw", d.get("r_squared")),
            adj_r_squared=d.get("adj_r_squared_raw", d.get("adj_r_squared")),
            tuning={k: (v.get("value"), v.get("origin")) if isinstance(v, dict) else (v, None)
                    for k, v in (d.get("tuning") or {}).items()},
            facts=dict(d.get("facts") or {}),
            warnings=_diagnostics_from_dict(d.get("warnings"), d.get("warning_classes")),
            link=d.get("link") or "identity",
            row_transform=d.get("row_transform"),
        )
        public = _public_from_dict(d.get("public"))
        privacy = _privacy_from_dict(d.get("privacy"), d.get("privacy_text"))
        fit = cls(rel, public=public, privacy=privacy, formula=d.get("formula"), method=d["method"],
                  options=d.get("options"), auto=bool(d.get("auto", False)))
        if public is None:
            fit._terms = list(d.get("terms") or fit._terms)
        return fit


#: statsmodels attributes a DP fit cannot hold, with the reason (issue 15): each needs the training
#: data's residuals, fitted values or likelihood, none of which is released.
_RESID_REASON = ("each residual is a function of one person's record and would expose it; use "
                 "fit.sigma (DP residual standard error) or predict() on new data")
_LIKELIHOOD_REASON = ("the log-likelihood (and AIC/BIC built from it) is a function of the residuals "
                      "of the training data and was not released; compare fits with their noise-aware "
                      "intervals or wald_test() instead")
_SUMS_REASON = ("sums of squares of the training data were not released (only a DP residual "
                "standard error and R-squared, where the method releases them)")
STATSMODELS_NOT_RELEASED = {
    "fittedvalues": "fitted values of the training data are not available: together with the data "
                    "they would expose individual records; use predict() on new data",
    "resid_pearson": "residuals of the training data are not available: " + _RESID_REASON,
    "wresid": "residuals of the training data are not available: " + _RESID_REASON,
    "llf": _LIKELIHOOD_REASON, "aic": _LIKELIHOOD_REASON, "bic": _LIKELIHOOD_REASON,
    "ssr": _SUMS_REASON, "ess": _SUMS_REASON, "centered_tss": _SUMS_REASON,
    "uncentered_tss": _SUMS_REASON, "mse_model": _SUMS_REASON, "mse_total": _SUMS_REASON,
    "fvalue": "the F statistic needs sums of squares of the training data, which were not released; "
              "use wald_test() (noise-aware Wald chi-square of the same hypothesis)",
    "f_pvalue": "the F statistic needs sums of squares of the training data, which were not released; "
                "use wald_test()['p_value']",
    "get_influence": "influence and leverage measure single records of the training data and would "
                     "expose them",
    "outlier_test": "outlier tests look at single records of the training data and would expose them",
    "condition_number": "the condition number of the training design matrix was not released",
    "eigenvals": "eigenvalues of the training design matrix were not released",
}


def _not_released_property(name: str, reason: str):
    def getter(self):
        raise NotReleasedError(f"{name}: {reason}")
    getter.__name__ = name
    getter.__doc__ = f"Not available in a DP fit (raises NotReleasedError): {reason}."
    return property(getter)


for _name, _reason in STATSMODELS_NOT_RELEASED.items():
    setattr(DPFit, _name, _not_released_property(_name, _reason))
del _name, _reason


def _public_to_dict(public):
    if public is None:
        return None
    if hasattr(public, "to_dict"):
        return public.to_dict()
    # fallback while PublicDesign has no to_dict (plain fields; spec_state omitted)
    schema = getattr(public, "schema", None)
    return {"formula": public.formula, "outcome": public.outcome, "terms": list(public.terms),
            "has_intercept": bool(public.has_intercept),
            "column_lower": np.asarray(public.column_lower, float),
            "column_upper": np.asarray(public.column_upper, float),
            "factor_blocks": [list(map(int, b)) for b in public.factor_blocks],
            "outcome_interval": public.outcome_interval,
            "schema": schema.to_dict() if hasattr(schema, "to_dict") else None,
            "n": None if public.n is None else int(public.n), "family": public.family,
            "outcome_levels": public.outcome_levels}


def _public_from_dict(d):
    if d is None:
        return None
    from ..design.contract import PublicDesign
    if hasattr(PublicDesign, "from_dict"):
        return PublicDesign.from_dict(d)
    from ..design.schema import Schema, VariableSchema
    sd = d.get("schema") or {}
    schema = Schema(variables={k: VariableSchema(**v) for k, v in (sd.get("variables") or {}).items()},
                    outcome=sd.get("outcome"), leaks=list(sd.get("leaks") or []),
                    private=sd.get("private", True))
    oi = d.get("outcome_interval")
    return PublicDesign(formula=d["formula"], outcome=d["outcome"], terms=list(d["terms"]),
                        has_intercept=d["has_intercept"],
                        column_lower=from_plain_array(d["column_lower"]),
                        column_upper=from_plain_array(d["column_upper"]),
                        factor_blocks=[list(b) for b in d["factor_blocks"]],
                        outcome_interval=None if oi is None else tuple(oi), schema=schema, n=d["n"],
                        family=d.get("family", "gaussian"), outcome_levels=d.get("outcome_levels"))


def _privacy_from_dict(d, text=None):
    if d is None:
        return None if text is None else _PlainStatement({}, text)
    try:
        from ..privacy.statement import PrivacyStatement
    except ImportError:
        PrivacyStatement = None
    if PrivacyStatement is not None and hasattr(PrivacyStatement, "from_dict"):
        return PrivacyStatement.from_dict(d)
    return _PlainStatement(d, text)


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

    def __init__(self, fit: DPFit, level: float = 0.95):
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
        not available."""
        f = self.fit
        ci = f.conf_int(level=self.level)
        table = pd.DataFrame({
            "Estimate": f.coef, "Std. Error": f.std_errors, "z value": f.z_values(),
            "Pr(>|z|)": f.p_values(), self.lower_label: ci["lower"], self.upper_label: ci["upper"],
            "Noise share": f.noise_share}, index=f.terms)
        # method-specific released columns (subsample_aggregate: sampling_sd, noise_sd, q_lo, q_hi)
        for name, col in f._method_columns().items():
            table[name] = np.asarray(col, float)
        return table

    @property
    def stars(self) -> pd.Series:
        """Significance stars per term (R's codes: ``***`` p < 0.001, ``**`` < 0.01, ``*`` < 0.05, ``.`` < 0.1)."""
        return pd.Series([stars(p) for p in self.fit.p_values()], index=self.fit.terms, name="stars")

    @property
    def wald(self) -> dict:
        """Noise-aware Wald test of all slopes = 0 (see :meth:`DPFit.wald_test`)."""
        return self.fit.wald_test()

    # ---- cells ------------------------------------------------------------------------------------
    def _cells(self, *, with_stars=True):
        """(headers, rows) of the coefficient table as formatted strings."""
        t = self.coef_table
        terms = list(t.index)
        if not self.has_inference:
            est = format_column(t["Estimate"].to_numpy())
            return ["", "Estimate"], [[n, e] for n, e in zip(terms, est)]
        cols = {
            "Estimate": format_column(t["Estimate"].to_numpy()),
            "Std. Error": format_column(t["Std. Error"].to_numpy()),
            "z value": [("NA" if is_missing(z) else f"{z:.3f}") for z in t["z value"]],
            "Pr(>|z|)": [format_pvalue(p) for p in t["Pr(>|z|)"]],
            self.lower_label: format_column(t[self.lower_label].to_numpy()),
            self.upper_label: format_column(t[self.upper_label].to_numpy()),
        }
        headers = ["", "Estimate", "Std. Error", "z value", "Pr(>|z|)"]
        if with_stars:
            headers.append("")
        headers += [self.lower_label, self.upper_label]
        extra = []
        if "sampling_sd" in t.columns and "noise_sd" in t.columns:
            # subsample_aggregate: the two variance components themselves (spec winsorized_sa 5.3)
            extra = [("Sampling sd", format_column(t["sampling_sd"].to_numpy())),
                     ("Noise sd", format_column(t["noise_sd"].to_numpy()))]
        elif bool(np.any(np.isfinite(t["Noise share"].to_numpy()))):
            extra = [("Noise share", [("NA" if is_missing(s) else f"{s:.2f}") for s in t["Noise share"]])]
        headers += [h for h, _ in extra]
        st = list(self.stars)
        rows = []
        for i, n in enumerate(terms):
            row = [n, cols["Estimate"][i], cols["Std. Error"][i], cols["z value"][i], cols["Pr(>|z|)"][i]]
            if with_stars:
                row.append(st[i])
            row += [cols[self.lower_label][i], cols[self.upper_label][i]]
            row += [c[i] for _, c in extra]
            rows.append(row)
        return headers, rows

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
            out.append(f"DP residual standard error: {format_number(f.sigma)} on {df_s} degrees of freedom")
        facts = f.facts or {}
        if f.sigma is None and facts.get("sigma_not_estimable"):
            lo_s, hi_s = facts.get("sigma_interval", (None, None))
            rng_s = (f"; 95% interval {format_number(lo_s)} to {format_number(hi_s)}"
                     if lo_s is not None and hi_s is not None else "")
            out.append(f"DP residual standard error: {facts['sigma_not_estimable']}{rng_s}")
        if f.r_squared is not None:
            adj = f.adj_r_squared
            ri = facts.get("r_squared_interval")
            ci_txt = (f" (95% interval {format_number(ri[0])} to {format_number(ri[1])})" if ri else "")
            out.append(f"DP R-squared:  {format_number(f.r_squared)}{ci_txt},\tAdjusted R-squared:  "
                       f"{format_number(adj)}")
        elif facts.get("r_squared_not_estimable"):
            out.append(f"DP R-squared: {facts['r_squared_not_estimable']}")
        if f.has_inference:
            w = f.wald_test()
            if w["statistic"] is not None:
                out.append(f"Noise-aware Wald chi-square: {format_number(w['statistic'])} on {w['df']} DF,  "
                           f"p-value: {format_pvalue(w['p_value'], floor_text='< 2.2e-16')}")
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
                       "noise-aware standard errors")
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
                         "(family, declared ranges, factor columns, n, d and eps; see dpreg.api.AUTO_RULE)")
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
            lines.append("Coefficients (noise-aware standard errors; z reference):")
            lines.append(render_text(headers, rows))
            lines += ["---", SIGNIF_LEGEND]
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
        notes = [f"Call: {f.call}", self._n_line()]
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


def _diagnostics_from_dict(texts, classes):
    import dpreg.errors as E
    texts = list(texts or [])
    if not classes or len(classes) != len(texts):
        return texts
    out = []
    for t, c in zip(texts, classes):
        cat = None if c is None else getattr(E, str(c), E.AccuracyWarning)
        out.append(E.Diagnostic(t, cat))
    return out
