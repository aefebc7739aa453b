"""DPFit (the result of dp_lm / dp_glm) and its R-like Summary.

A DPFit is built from a :class:`~dpreg.release.Release` (released values and public facts only), the
fit's :class:`~dpreg.design.contract.PublicDesign` (no data) and its PrivacyStatement. Everything it
shows is either public (declared, n under replace-one) or released through the ledger, or
post-processing of those:

* standard errors are sqrt(diag V) of the noise-aware covariance V of the release;
* z = beta / SE, p = 2 Phi(-|z|), Wald intervals beta +/- z_{1-a/2} SE (normal reference),
  or the release's percentile-bootstrap intervals / replicates when the method provides them; beta is
  the release's inference centre, which differs from the printed estimate only for AdaSSP's
  corrected ridge (the estimate is then the ridge fit, :attr:`DPFit.inference_centre` the corrected one);
* the noise share of coefficient j is diag(V_priv)_j / diag(V)_j;
* instead of an F test, the noise-aware Wald chi-square of "all non-intercept coefficients are 0"
  (dpreg.inference.wald): W = b_S' V_SS^{-1} b_S on |S| degrees of freedom;
* DP residual standard error and DP R-squared only when the method released them (R-squared printed
  clamped to [0, 1], raw value kept in ``to_dict()``).

Never computed, shown or stored (each is a function of single records): residual quantiles, residuals or fitted values of the
training data, min/max of any variable, non-private sigma / R^2 / OLS, leverage, logLik/AIC/BIC.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from scipy import stats

from .._numeric import NUMPY_ERRSTATE, numpy_defaults
from ..errors import PREDICTING, AccuracyWarning, InvalidArgument, InvalidArgumentType, data_stage, library_errors
from ..estimators.registry import METHODS
from ..inference.wald import side_of_zero_bonferroni, wald_chi2
from ..release import Release
from . import combinations
from .common import (  # noqa: F401
    _INTERCEPT_NAMES,
    _NO_INFERENCE,
    NotReleasedError,
    _check_level,
    _level_from_alpha,
    _num,
    _warn_alpha_like,
    _z_quantile,
)
from .format import format_column, format_number
from .hypotheses import (
    LinearHypothesisTest,
    PredictionResults,
    WaldTermsResult,
    WaldTestResult,
    linear_combinations,
    normalised_rows,
    parse_hypotheses,
)
from .not_released import STATSMODELS_NOT_RELEASED, _not_released_property
from .predict import _PredictionMixin
from .serialise import DICT_FORMAT, _PlainStatement, _SerialisationMixin  # noqa: F401
from .summary import _FMT, Summary  # noqa: F401


def _is_hypothesis(terms, names=()) -> bool:
    """A statsmodels-style linear hypothesis (a string with '=', a matrix, a tuple (R, q), a list of
    equations), as opposed to term names. A string without '=' that is no term name but parses as a
    combination of the coefficients ``names`` ("x1 - x2", statsmodels' "x1 - x2 = 0") is one too."""
    if isinstance(terms, str):
        if "=" in terms:
            return True
        if terms in names:
            return False
        try:
            parse_hypotheses(terms, names)
        except (InvalidArgument, InvalidArgumentType):
            return False     # a factor name, or a misspelt name: the term lookup and its hints
        return True
    if isinstance(terms, (list, tuple)) and terms and all(isinstance(t, str) for t in terms):
        return any("=" in t for t in terms)     # a list of equations (patsy), else term names
    if isinstance(terms, tuple) and len(terms) == 2:
        return True
    if isinstance(terms, list) and terms:
        return True      # a matrix as a list of rows
    return isinstance(terms, np.ndarray)


def _released_interval(ends) -> tuple[float, float] | None:
    # newcomer review 20: the intervals of sigma and R^2 were reachable only through fit.facts
    if ends is None or len(ends) != 2 or any(e is None for e in ends):
        return None
    return float(ends[0]), float(ends[1])


class DPFit(_PredictionMixin, _SerialisationMixin):
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
    def privacy(self) -> Any:
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
    def nobs(self) -> int | None:
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
    def df_resid(self) -> float | None:
        """Residual degrees of freedom n - d (lm's and statsmodels' ``df_resid``): n is public under
        replace-one (the released DP estimate of n under add/remove) and d follows from the formula and
        the declared levels, so it is reported whether or not the method released a sigma; None where
        n is neither public nor released. dpreg's intervals and tests use a normal (z) reference, not
        a t on these degrees of freedom."""
        if self._release.df_resid is not None:
            return self._release.df_resid
        if self.nobs is not None:
            # newcomer review 24: was None where no sigma was released (dpgd at small n), so R's
            # df.residual() was NA though n - p is public, as lm users expect it
            return float(self.nobs - len(self._terms))
        return None

    @property
    def r_squared(self) -> float | None:
        """DP R-squared clamped to [0, 1]; the raw value is ``r_squared_raw``."""
        r = self._release.r_squared
        return None if r is None or not np.isfinite(r) else float(min(1.0, max(0.0, r)))

    @property
    def sigma_interval(self) -> tuple[float, float] | None:
        """The released 95% interval of the DP residual standard error, as the summary prints it, also
        where :attr:`sigma` is None because sigma is not estimable at this n and eps (the summary then
        prints the reason and this interval only); None where none was released. R: ``glance()``'s
        ``sigma.conf.low`` / ``sigma.conf.high``."""
        return _released_interval((self._release.facts or {}).get("sigma_interval"))

    @property
    def r_squared_interval(self) -> tuple[float, float] | None:
        """The released 95% interval of the DP R-squared (summary and ``glance()``'s
        ``r.squared.conf.low`` / ``.high``), also where only the interval is released; None otherwise."""
        return _released_interval((self._release.facts or {}).get("r_squared_interval"))

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
    def public(self) -> Any:
        """The public design (terms, formula, declared schema, column intervals). No data."""
        return self._public

    # ---- what a DP fit never holds --------------------------------------------------------------
    @property
    def residuals(self) -> NoReturn:
        """Not available in a DP fit (raises :class:`dpreg.results.fit.NotReleasedError`): each residual of the training data is a function of one person's record. Use :attr:`sigma` or :meth:`predict` on new data. ``resid`` is the same."""
        raise NotReleasedError(
            "residuals of the training data are not available: each one is a function of one person's "
            "record and would expose it; use fit.sigma (DP residual standard error) or predict() on "
            "new data")

    @property
    def fitted(self) -> NoReturn:
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
    def df_model(self) -> int:
        """Number of coefficients other than the intercept (public: follows from the formula and
        the declared levels)."""
        return len(self._slopes())

    @property
    def fvalue(self) -> float:
        """The noise-aware Wald test of all slopes in statsmodels' F form (thirty-second pass): the
        chi-square of :meth:`wald_test` (no arguments, the summary's line) divided by its degrees of
        freedom q, an F on (q, inf) degrees of freedom under the normal reference dpreg's tests use
        (:attr:`f_pvalue` is the chi-square's p-value). R's ``summary(fit)$fstatistic`` is the same
        number, ``c(value =, numdf = q, dendf = Inf)``. Not lm's F: that needs the residual sum of
        squares of the training data, which is not released. Post-processing of the released
        coefficients and covariance. Raises :class:`dpreg.results.fit.NotReleasedError` with the reason on a ``dp_glm``
        fit (statsmodels' GLM and Logit results have no F either), where the joint test is Bonferroni
        (asymmetric intervals) or where no standard errors were released."""
        return self._f_form("fvalue")[0]

    @property
    def f_pvalue(self) -> float:
        """p-value of :attr:`fvalue` on (q, inf) degrees of freedom: the p-value of the noise-aware Wald
        chi-square of all slopes (:meth:`wald_test`). Raises :class:`dpreg.results.fit.NotReleasedError` where
        :attr:`fvalue` does."""
        return self._f_form("f_pvalue")[1]

    def _f_form(self, name: str) -> tuple[float, float]:
        """(W / q, p) of the all-slopes Wald chi-square; the reason (NotReleasedError) where it has no F
        form. Decided on the fit's link, its released interval kind and standard errors (released facts)."""
        reason = None
        if self.link == "logit":
            reason = ("a binomial fit has no F statistic (statsmodels' GLM and Logit results have none); "
                      "wald_test() is the noise-aware chi-square of all slopes")
        else:
            w = self._wald_test_dict(None)
            if w.get("rule") != "chi-square":
                reason = ("this fit's intervals are asymmetric, so its joint test of the slopes is Bonferroni "
                          "over the printed p-values, which has no F form; use wald_test()")
            elif w.get("statistic") is None or not w.get("df"):
                reason = "no joint test of the slopes is available: " + (w.get("note") or "the fit has no slopes")
        if reason is not None:
            raise NotReleasedError(f"{name}: {reason}")
        return float(w["statistic"]) / int(w["df"]), float(w["p_value"])

    @property
    def scale(self) -> float | None:
        """Released residual variance sigma^2 (statsmodels' ``scale``); None when sigma was not
        released."""
        s = self.sigma
        return None if s is None else float(s) ** 2

    mse_resid = scale

    def cov_params(self) -> pd.DataFrame:
        """statsmodels name of :meth:`vcov` (noise-aware covariance of the coefficients)."""
        out = self._vcov_frame()
        self._warn_missing_vcov(out)
        return out

    # ---- notebook display (issue 15): the HTML/Markdown that summary().to_html() makes ---------------
    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def _repr_markdown_(self) -> str:
        return self.summary().to_markdown()

    def plot(self, **kwargs: Any) -> Any:
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

    @property
    def inference_centre(self) -> pd.Series:
        """The point the standard errors, z values, p-values, intervals, Wald tests and prediction
        intervals are about, a ``pandas.Series`` indexed by :attr:`terms`.

        It equals :attr:`coef` except for AdaSSP (``method="adassp"``) fits whose ridge was active and
        corrected for (``facts["ridge_debiased"]``): there :attr:`coef` is the ridge estimate of the
        AdaSSP paper (what :meth:`predict` uses; the better point estimate on factor data at small
        eps), and the inference is about the estimate corrected for the ridge's shrinkage (printed as
        the column "Corrected" of the summary), as debiased-lasso software reports its intervals about
        a bias-corrected centre. Both are post-processing of the same releases."""
        c = self._release.inference_centre
        if c is None:
            return self.coef.rename("inference_centre")
        return pd.Series(np.asarray(c, float).copy(), index=self.terms, name="inference_centre")

    @property
    def has_separate_centre(self) -> bool:
        """True when :attr:`inference_centre` differs from :attr:`coef` (AdaSSP's corrected ridge)."""
        return self._release.inference_centre is not None

    def _centre_array(self) -> np.ndarray:
        c = self._release.inference_centre
        return np.asarray(self._release.coef if c is None else c, float)

    def _vcov_array(self) -> np.ndarray | None:
        v = self._release.vcov
        return None if v is None else np.asarray(v, dtype=float)

    def vcov(self) -> pd.DataFrame:
        """Noise-aware covariance (original units). All NaN when the method offers no inference
        (reason in ``inference_note``), and NaN in the rows and columns of coefficients whose standard
        error was withheld; either warns once (``AccuracyWarning``) with the reason, as
        :meth:`conf_int` does."""
        out = self._vcov_frame()
        self._warn_missing_vcov(out)
        return out

    def _vcov_frame(self) -> pd.DataFrame:
        """:meth:`vcov` without its warning."""
        v = self._vcov_array()
        d = len(self._terms)
        if v is None:
            v = np.full((d, d), np.nan)
        return pd.DataFrame(v.copy(), index=self.terms, columns=self.terms)

    def _warn_missing_vcov(self, v: pd.DataFrame) -> None:
        """One AccuracyWarning when variances (the diagonal) of ``v`` are NaN (thirty-third pass, newcomer:
        vcov() gave an all-NaN matrix with no word, where conf_int() says why). The texts are
        :meth:`_warn_missing_intervals`'; only the fit's terms and its released inference note are named.
        A method that estimates no covariances (NaN off the diagonal only) is not warned about here."""
        dg = np.diag(v.to_numpy(dtype=float))
        missing = [str(t) for t, x in zip(v.index, dg) if not np.isfinite(x)]
        self._warn_not_released(missing, "the covariance of the coefficients is not available for this fit: ",
                                lambda shown: f"the covariance is not available for {shown} (NaN in their rows "
                                "and columns): no standard error was released for them (the summary says why)")

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
        """z statistics centre / SE (normal reference, noise-aware SEs), with the centre
        :attr:`inference_centre` (= :attr:`coef` except for AdaSSP's corrected ridge). Where the release
        has its own asymmetric intervals (:attr:`ci_method` "attenuation union", "separation union",
        "bootstrap"), SE is that interval's half-width on the side of 0 over z, so that the p-value is
        below 1 - level exactly when the released interval excludes 0.

        Returns
        -------
        pandas.Series
        """
        b = self._centre_array()
        se = self.std_errors.to_numpy()
        side = self._release_side_se(b)
        if side is not None:
            se = np.where(np.isfinite(side), side, se)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = b / se
        return pd.Series(z, index=self.terms, name="z_value")

    def _release_side_se(self, b) -> np.ndarray | None:
        """Where the release has its own, asymmetric intervals at its level (an attenuation or separation
        union, a bootstrap hull), the standard error of the side 0 lies on: the released half-width on
        that side over z (issue 12: with the symmetric scaled SE, a union excluding 0 printed p = 0.23-0.33).
        So p < 1 - level exactly when the released interval excludes 0. None where there is none."""
        r = self._release
        if r.ci is None or r.ci_level is None or r.vcov is None:
            return None
        own = np.asarray(r.ci, float).reshape(len(self._terms), 2)
        z = _z_quantile(float(r.ci_level))
        with np.errstate(invalid="ignore"):
            half = np.where(b >= 0, b - own[:, 0], own[:, 1] - b)
            return np.where(np.isfinite(half) & (half > 0), half / z, np.nan)

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
        "attenuation union" (AdaSSP's attenuation-robust intervals at the fit's level, Wald z from the
        scaled standard errors at other levels, nested with the union), "separation union" (dp_glm's
        intervals along a collapsed curvature, the union over the share of the way left; the same use of
        levels), "wald z" or "not available". With a union or bootstrap, z values and p-values use the
        released interval's half-width on the side of 0 (:meth:`z_values`)."""
        r = self._release
        if r.ci is not None and r.ci_draws is None and (r.facts or {}).get("attenuation_directions"):
            return "attenuation union"
        if r.ci is not None and r.ci_draws is None and (r.facts or {}).get("separation_union_directions"):
            return "separation union"
        if r.ci is not None or r.ci_draws is not None:
            return "bootstrap"
        return "wald z" if self.has_inference else "not available"

    def conf_int(self, *args, level: float | None = None, alpha: float | None = None,
                 cols=None) -> pd.DataFrame:
        """Confidence intervals of the coefficients.

        The release's own intervals when computed at this level (percentile bootstrap), else percentiles
        of its bootstrap replicates, else Wald z intervals centre +/- z SE about
        :attr:`inference_centre` (= :attr:`coef` except for AdaSSP's corrected ridge). Where the release
        has its own intervals at one level (an attenuation union, a bootstrap hull), the intervals at
        other levels nest with them: a lower level's are cut at the released ends, a higher level's
        span them. NaN where the method offers no inference.

        Parameters
        ----------
        *args
            At most one positional value, taken as statsmodels' ``alpha``.
        level : float, optional
            Confidence level in (0, 1); None: the fit's :attr:`level` (0.95 unless the method's
            ``level`` option was set).
        alpha : float, optional
            statsmodels' keyword: the same as ``level = 1 - alpha``.
        cols : sequence of int or str, optional
            statsmodels' keyword: only these coefficients, by position (0 is the first term) or by
            name (``fit.terms``), in the order given; None: all.

        Returns
        -------
        pandas.DataFrame
            One row per term (or per entry of ``cols``), columns ``lower`` and ``upper``
            (statsmodels' shape).

        Warns
        -----
        AccuracyWarning
            Once, where rows are NaN: the summary's reason for a fit without intervals, or the names of
            the coefficients whose standard errors were withheld.
        """
        out = self._conf_int(*args, level=level, alpha=alpha, cols=cols)
        self._warn_missing_intervals(out)
        return out

    def _warn_missing_intervals(self, ci: pd.DataFrame) -> None:
        """One AccuracyWarning when rows of ``ci`` are NaN, with the reason the summary gives (thirty-first
        pass, newcomer: confint() returned NA rows with no word, where predict(interval=) says why). Names
        only the fit's terms (public or released levels) and its released inference note."""
        missing = [str(t) for t, lo, hi in zip(ci.index, ci["lower"], ci["upper"])
                   if not (np.isfinite(lo) and np.isfinite(hi))]
        self._warn_not_released(missing, "confidence intervals are not available for this fit: ",
                                lambda shown: f"confidence intervals are not available for {shown}: no standard "
                                "error was released for them (the summary says why)")

    def _warn_not_released(self, missing, whole_fit, some_terms):
        """The one AccuracyWarning of vcov() and conf_int() where something is NaN: for a fit without
        standard errors ``whole_fit`` and its released inference note, else ``some_terms`` of the terms
        (at most six named). Names only the fit's terms and its released note; stacklevel: the user's call."""
        if not missing:
            return
        if not self.has_inference:
            text = whole_fit + (self.inference_note or _NO_INFERENCE)
        else:
            text = some_terms(", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else ""))
        warnings.warn(text, AccuracyWarning, stacklevel=4)

    def _conf_int(self, *args, level: float | None = None, alpha: float | None = None,
                  cols=None) -> pd.DataFrame:
        """:meth:`conf_int` without its warning (for the summary, tidy, plots and tests that build on it)."""
        rows = None if cols is None else self._conf_int_rows(cols)
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
            b, se = self._centre_array(), self.std_errors.to_numpy()
            ci = np.column_stack([b - z * se, b + z * se])
        if r.ci is not None and r.ci_level is not None and abs(float(r.ci_level) - level) >= 1e-12:
            # the release's own intervals (an asymmetric attenuation union, a bootstrap hull) hold at their
            # level; another level's intervals nest with them (issue 12: a 90% interval reaching past the
            # 95% one on the union's short side read as a contradiction). A lower level is cut to the
            # released one: each released end misses on its side with probability at most about
            # (1 - its level) / 2, below the lower level's share; a higher level spans it
            own = np.asarray(r.ci, float).reshape(d, 2)
            if level < float(r.ci_level):
                ci = np.column_stack([np.fmax(ci[:, 0], own[:, 0]), np.fmin(ci[:, 1], own[:, 1])])
            else:
                ci = np.column_stack([np.fmin(ci[:, 0], own[:, 0]), np.fmax(ci[:, 1], own[:, 1])])
        out = pd.DataFrame(ci.copy(), index=self.terms, columns=["lower", "upper"])
        return out if rows is None else out.iloc[rows]

    def _conf_int_rows(self, cols) -> list[int]:
        """Positions of statsmodels' ``conf_int(cols=...)``: integer positions or term names."""
        # newcomer review 24: conf_int(cols=[1, 2]), statsmodels' signature, was a plain TypeError
        items = [cols] if isinstance(cols, (str, numbers.Integral)) else cols
        try:
            items = list(items)
        except TypeError:
            raise InvalidArgumentType("cols must be a list of coefficient positions or names "
                                      "(fit.terms)") from None
        d = len(self._terms)
        rows = []
        for c in items:
            if isinstance(c, (bool, np.bool_)):
                raise InvalidArgumentType("cols must be a list of coefficient positions or names (fit.terms)")
            if isinstance(c, numbers.Integral):
                if not -d <= int(c) < d:
                    raise InvalidArgument(f"cols: position {int(c)} is outside the fit's {d} coefficients "
                                          "(0 is the first term of fit.terms)")
                rows.append(int(c) % d)
            elif isinstance(c, str):
                if c not in self.terms:
                    raise InvalidArgument(f"cols: {c!r} is not a coefficient of the fit; its terms are "
                                          f"{', '.join(map(repr, self.terms))}")
                rows.append(list(self.terms).index(c))
            else:
                raise InvalidArgumentType("cols must be a list of coefficient positions or names (fit.terms)")
        return rows

    def _term_index(self, terms) -> list[int]:
        """Positions of the named terms; a factor's name stands for its coefficients ``name[...]``."""
        names = [terms] if isinstance(terms, str) else terms
        if not isinstance(names, (list, tuple)) or not names or not all(isinstance(t, str) for t in names):
            raise InvalidArgumentType("terms must be a term name or a list of term names (fit.terms)")
        all_terms = [str(t) for t in self._terms]
        index = []
        for name in names:
            if len(name) > 2 and name[0] == name[-1] == "`" and name not in all_terms:
                name = name[1:-1]      # back-quoted as in the formula ("`body mass`")
            hits = [j for j, t in enumerate(all_terms) if t == name] or self._term_columns(name, all_terms)
            if not hits:
                collapsed = self._collapsed_factor(name)
                if collapsed is not None:
                    # newcomer review 18: "is not a term or factor of this fit" for a factor the formula
                    # has, whose private selection released one level (the warning said so at the fit)
                    raise InvalidArgument(f"wald_test: {name!r} has no coefficient in this fit: the private "
                                          "selection of its levels released fewer than two levels, so the "
                                          "term dropped out of the model (see fit.warnings). Declare its "
                                          f"levels with levels={{{collapsed!r}: [...]}} to test it")
                import difflib
                close = difflib.get_close_matches(name, all_terms, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                shown = ", ".join(all_terms[:8]) + (", ..." if len(all_terms) > 8 else "")
                raise InvalidArgument(f"wald_test: {name!r} is not a term or factor of this fit{hint}. It "
                                      "takes names and tests that those coefficients are all 0 "
                                      "(['x1', 'x2']), or a hypothesis such as 'x1 = 0, x2 - x3 = 0'; "
                                      f"the terms are {shown}")
            index.extend(j for j in hits if j not in index)
        # as in the default test: a coefficient reported as not estimable (NA) is left out
        b = np.asarray(self._release.coef, float)
        return [j for j in index if np.isfinite(b[j])]

    def _term_columns(self, name: str, all_terms: list[str]) -> list[int]:
        """Positions of the coefficients of the formula term called ``name`` (thirty-second pass): the term's
        own columns, as statsmodels' ``wald_test_terms()`` and R's ``car::Anova()`` group them, so a factor's
        name is its main effect and not its interactions (``C(size)`` in ``C(size) * meno``: the two
        ``C(size)[...]`` columns, not ``C(size)[...]:meno``; the interaction is ``"C(size):meno"``). Without
        the public term structure: the columns ``name[...]`` holding no ``:`` after the level."""
        for label, columns in self._term_groups():
            if label == name:
                return [all_terms.index(c) for c in columns if c in all_terms]
        return [j for j, t in enumerate(all_terms)
                if t.startswith(name + "[") and ":" not in t[len(name):].split("]", 1)[-1]]

    def _collapsed_factor(self, name: str) -> str | None:
        """The column of a factor named ``name`` (or ``C(name)``, ``C(name, ...)``) whose released levels
        number fewer than two, so it has no coefficient; None otherwise. Public schema only."""
        schema = getattr(self.public, "schema", None)
        if schema is None:
            return None
        column = name[2:-1].split(",")[0].strip() if name.startswith("C(") and name.endswith(")") else name
        v = schema.variables.get(column)
        if v is not None and v.kind == "categorical" and v.levels is not None and len(v.levels) < 2:
            return column
        return None

    def _slopes(self) -> list[int]:
        # a coefficient reported as not estimable (NA) is not part of the Wald test (issue 12)
        b = np.asarray(self._release.coef, float)
        return [j for j, t in enumerate(self._terms) if t not in _INTERCEPT_NAMES and np.isfinite(b[j])]

    @numpy_defaults
    def wald_test(self, terms: str | list[str] | None = None) -> dict:
        """Noise-aware Wald chi-square of "these coefficients are all 0" (about
        :attr:`inference_centre`, like the intervals); post-processing of the released covariance.

        Parameters
        ----------
        terms : str, list of str, array or tuple, optional
            None (default): every coefficient but the intercept (the test printed by ``summary()``).
            Otherwise coefficient names (``fit.terms``), or the name of a formula term, which stands for
            the coefficients of that term: ``fit.wald_test("C(occupation)")`` tests the whole factor (what
            an F test of the factor does in ``anova``), ``fit.wald_test(["age", "educ"])`` two slopes
            jointly. A factor's name is its main effect only, as in :meth:`wald_test_terms` and
            statsmodels' per-term tests: in ``C(size) * meno``, ``"C(size)"`` tests the ``C(size)[...]``
            columns and ``"C(size):meno"`` the interaction (statsmodels' own ``wald_test("C(size)")``
            refuses a term name: "unrecognized token in constraint").
            statsmodels' linear hypotheses are taken too: a string with ``=``
            (``"x1 = 0, x2 - x3 = 0"``) or a combination that is no term name (``"x1 - x2"``, meaning
            ``= 0``), a list of such equations, a matrix R (hypothesis R b = 0) or a tuple ``(R, q)``, as
            :meth:`t_test` takes them; then the statistic is W = (R b - q)' (R V R')^-1 (R b - q) on as
            many degrees of freedom as rows.

        Where the release has its own asymmetric intervals (:attr:`ci_method` "attenuation union",
        "separation union", "bootstrap"), the released centre and covariance are not what they rest on,
        and the chi-square test disagreed with the printed p-values (issue 12: Default's balance 0.24
        against 0.003). There the test is Bonferroni over the coefficients' side-of-0 z tests, the
        p-values :meth:`p_values` prints: p = min(1, k min_j p_j), valid whenever they are, and for one
        coefficient that coefficient's p-value (docs/derivations/joint_tests.md).

        Returns ``{"statistic", "df", "p_value", "note", "rule"}``; ``rule`` is "chi-square" (statistic
        W on df degrees of freedom) or "bonferroni" (statistic max_j z_j^2 of the df coefficients).
        statistic/p_value are None with a plain reason in ``note`` when it cannot be computed. The dict
        prints as a sentence and has statsmodels' attribute names too (``.statistic``, ``.pvalue``,
        ``.df``): :class:`dpreg.results.hypotheses.WaldTestResult`."""
        return WaldTestResult(self._wald_test_dict(terms))

    def wald_test_terms(self, skip_single: bool = False) -> WaldTermsResult:
        """One noise-aware Wald test per term of the formula: all the coefficients of the term are 0
        (statsmodels' ``wald_test_terms()``; a factor or an interaction with a factor is one row with as
        many degrees of freedom as it has coefficients). Each row is :meth:`wald_test` of that term's
        coefficients (a chi-square, or Bonferroni over the printed p-values where the fit's intervals are
        asymmetric), so a fit without standard errors gives rows without a statistic, with the reason in
        ``note``. Post-processing of the released coefficients and covariance: nothing is spent.

        Parameters
        ----------
        skip_single : bool, default False
            True leaves out terms with a single coefficient (their test is the summary's z test), as
            statsmodels does.

        Returns
        -------
        WaldTermsResult
            ``.table``: a DataFrame indexed by term with ``statistic``, ``pvalue``, ``df_constraint``,
            ``rule`` and ``note``; printing shows it."""
        if not isinstance(skip_single, (bool, np.bool_)):
            raise InvalidArgumentType("skip_single must be True or False")
        rows = []
        for label, columns in self._term_groups():
            if skip_single and len(columns) == 1:
                continue
            present = [c for c in columns if c in self._terms]
            if not present:
                continue
            out = self._wald_test_dict(present)
            stat, p = out.get("statistic"), out.get("p_value")
            rows.append({"term": label, "statistic": np.nan if stat is None else float(stat),
                         "pvalue": np.nan if p is None else float(p), "df_constraint": int(out.get("df") or 0),
                         "rule": out.get("rule"), "note": out.get("note") or ""})
        table = pd.DataFrame(rows, columns=["term", "statistic", "pvalue", "df_constraint", "rule", "note"])
        return WaldTermsResult(table.set_index("term"))

    def _term_groups(self) -> list[tuple[str, list[str]]]:
        """(term label, its model-matrix columns) in formula order, from the public design's term structure
        where it has one; otherwise each factor main effect (``factor_blocks``) is one group and every other
        column its own. Public facts only."""
        spec = getattr(self.public, "spec_state", None)
        structure = spec.get("structure") if isinstance(spec, dict) else None
        if structure:
            return [(("Intercept" if s.get("term") == "1" else str(s.get("term"))), [str(c) for c in s["columns"]])
                    for s in structure if s.get("columns")]
        names = [str(t) for t in self._terms]
        blocks = [list(b) for b in (getattr(self.public, "factor_blocks", None) or [])]
        first = {b[0]: b for b in blocks if b}
        inside = {j for b in blocks for j in b}
        groups = []
        for j, name in enumerate(names):
            if j in first:
                cols = [names[i] for i in first[j]]
                label = name.split("[", 1)[0] if "[" in name else name
                groups.append((label, cols))
            elif j not in inside:
                groups.append((name, [name]))
        return groups

    def _wald_test_dict(self, terms) -> dict:
        if _is_hypothesis(terms, self._terms):
            return self._wald_test_of_hypotheses(terms)
        index = self._slopes() if terms is None else self._term_index(terms)
        v = self._vcov_array()
        if v is not None and self._release_side_se(self._centre_array()) is not None:
            return side_of_zero_bonferroni(self.z_values().to_numpy(), index)
        out = wald_chi2(self._centre_array(), v, index)
        if v is not None and out["statistic"] is None and any(
                not np.isfinite(v[j, j]) for j in index):
            # a coefficient whose interval is withheld ("not estimable at this n and eps", e.g. dp_glm)
            out["note"] = "not available: the standard errors of some coefficients are not estimable"
        if v is None and out["df"]:
            out["note"] = "not available: " + (self.inference_note or _NO_INFERENCE)
        return out

    def _wald_test_of_hypotheses(self, hypotheses) -> dict:
        """wald_test() of statsmodels-style linear hypotheses R b = q (see :meth:`wald_test`)."""
        R, q, labels = parse_hypotheses(hypotheses, self._terms)
        R, q, _scale = normalised_rows(R, q)      # W does not change; the products cannot overflow
        k = R.shape[0]
        if np.linalg.matrix_rank(R) < k:
            raise InvalidArgument("wald_test: the hypotheses are linearly dependent (one row of R is a "
                                  "combination of the others); give each constraint once")
        v = self._vcov_array()
        b = self._centre_array()
        if v is not None and self._release_side_se(b) is not None:
            # asymmetric intervals: Bonferroni over the rows' side-of-q z tests (each row one coefficient;
            # t_test refuses combinations, with the reason)
            _effect, _se, z, _note, _interval = linear_combinations(self, R, q, labels, caller="wald_test")
            return side_of_zero_bonferroni(z, range(k))
        if v is None:
            out = wald_chi2(np.zeros(k), None, range(k))
            out["note"] = "not available: " + (self.inference_note or _NO_INFERENCE)
            return out
        used = R != 0
        if any(not np.all(np.isfinite(b[used[i]])) for i in range(k)):
            return {"statistic": None, "df": k, "p_value": None, "rule": "chi-square",
                    "note": "not available: a hypothesis uses a coefficient that is not estimable (NA)"}
        with np.errstate(invalid="ignore", over="ignore"):
            effect = R @ np.where(np.isfinite(b), b, 0.0) - q
            cov = R @ np.where(np.isfinite(v), v, 0.0) @ R.T
        if combinations.applies(self._release):
            # AdaSSP with declared ranges and no unresolved direction (Wald z intervals): rows the
            # withholding rule lets through are tested with the covariance of their own maps, also where
            # they use coefficients whose own intervals are withheld (docs/derivations/adassp_boosted.md §28)
            cov = combinations.combination_vcov(self._release, R)
        elif not np.all(np.isfinite(v[np.ix_(used.any(axis=0), used.any(axis=0))])):
            cov = np.full((k, k), np.nan)
        out = wald_chi2(effect, cov, range(k))
        if out["statistic"] is None and np.any(~np.isfinite(np.diag(cov))):
            out["note"] = "not available: the standard errors of some coefficients are not estimable"
        return out

    @numpy_defaults
    def t_test(self, r_matrix, level: float | None = None) -> LinearHypothesisTest:
        """z tests of linear hypotheses about the coefficients (statsmodels' ``t_test``; the reference is
        normal, the standard errors noise-aware). Post-processing of released values (no budget).

        Parameters
        ----------
        r_matrix : str, array or tuple
            ``"x1 = 0, x2 - x3 = 0, 2*x1 + x2 = 1"`` (comma-separated equations over :attr:`terms`; a side
            without ``=`` means ``= 0``; a list of such equations as patsy takes them), a matrix R with one
            column per coefficient (R b = 0), or a tuple ``(R, q)``. Numbers must be finite.
        level : float, optional
            The default level of the result's intervals; None: the fit's :attr:`level`.

        Returns
        -------
        dpreg.results.hypotheses.LinearHypothesisTest
            One row per hypothesis: estimate r b (about :attr:`inference_centre`), standard error
            sqrt(r V r'), z, p-value, interval; ``print()`` shows the table, ``summary_frame()`` gives it
            as a DataFrame. For ``"x1 = 0"`` the numbers are the summary's row of x1.

        Notes
        -----
        On a fit whose intervals are its own asymmetric ones (:attr:`ci_method` "attenuation union",
        "separation union", "bootstrap") each hypothesis must name one coefficient: its test uses the
        released interval (p below 1 - level exactly when it excludes the hypothesised value), and a
        combination of coefficients, which has no released interval, is refused, except on AdaSSP fits
        with declared ranges (the union interval of the combination's own map; R's
        ``car::linearHypothesis()`` asks the same code). Where the method estimates no covariances the
        standard error of a combination is the conservative bound sum_j abs(r_j) SE_j, as in
        :meth:`predict`.
        """
        level = self.level if level is None else level
        _check_level(level)
        R, q, labels = parse_hypotheses(r_matrix, self._terms)
        effect, se, z, note, interval = linear_combinations(self, R, q, labels)
        return LinearHypothesisTest(labels, effect, se, z, q, interval, level, note)

    def f_test(self, r_matrix) -> NoReturn:
        """Not available in a DP fit (raises :class:`dpreg.results.fit.NotReleasedError`): an F test
        needs the residual sum of squares of the training data, which is not released, and the privacy
        noise in the estimates does not follow an F law. :meth:`wald_test` takes the same hypotheses and
        gives the noise-aware chi-square (Bonferroni on fits with asymmetric intervals).

        Parameters
        ----------
        r_matrix : str, array or tuple
            As for :meth:`wald_test` (the message names the call to use).
        """
        shown = repr(r_matrix) if isinstance(r_matrix, str) else "r_matrix"
        raise NotReleasedError(
            "f_test: an F test needs the residual sum of squares of the training data, which was not "
            "released, and the privacy noise in the estimates does not follow an F law; use "
            f"fit.wald_test({shown}), the noise-aware chi-square of the same hypothesis (Bonferroni over "
            "the printed p-values on fits with asymmetric intervals), or fit.t_test() for one z test per row")

    def get_prediction(self, newdata=None, type: str = "response", clamp: bool = True, *,
                       exog=None) -> PredictionResults:
        """Predictions of new rows with standard errors (statsmodels' ``get_prediction``), by the rules of
        :meth:`predict` (clamping to the public ranges, NA rows, the reasons for missing intervals).

        Parameters
        ----------
        newdata : pandas.DataFrame
            Rows to predict (as for :meth:`predict`; a dict of columns, polars and pyarrow tables too).
        type : {"response", "link"}, default "response"
            For logistic fits: "response" gives probabilities (intervals mapped through the logistic
            function, ``mean_se`` by the delta method), "link" the linear predictor.
        clamp : bool, default True
            As for :meth:`predict`.
        exog : pandas.DataFrame, optional
            statsmodels' name for ``newdata`` (as for :meth:`predict`); give one of the two.

        Returns
        -------
        dpreg.results.hypotheses.PredictionResults
            ``predicted_mean``, ``se_mean``, ``conf_int(alpha=)`` and ``summary_frame(alpha=)`` with
            statsmodels' columns ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` (and, for
            dp_lm, ``obs_ci_lower``, ``obs_ci_upper``): the intervals of ``predict(interval=...)`` at the
            same level.
        """
        import warnings

        from .predict import statsmodels_newdata
        newdata = statsmodels_newdata(newdata, exog)
        if type not in ("response", "link"):
            raise InvalidArgument("type must be 'response' or 'link'")
        logit = self._release.link == "logit"
        level = self.level
        seen, parts = [], {}
        guard = library_errors()    # as in predict(): a library's exception on the new rows, by its type only
        with guard, data_stage(PREDICTING), np.errstate(**NUMPY_ERRSTATE), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # the rows as they are now, copied: conf_int() / summary_frame() at another level compute from
            # them later (AdaSSP's union ends), and must not see the caller's frame changed in between
            newdata = self._newdata_as_frame(newdata).copy(deep=True)
            parts["mean"] = self._predict(newdata, "confidence", level, "link", clamp, _parts=True)
            if not logit:
                parts["obs"] = self._predict(newdata, "prediction", level, "link", clamp, _parts=True)
        if guard.report is not None:
            guard.raise_data_error()
        for w in caught:            # each reason once, at the caller's line
            if (str(w.message), w.category) not in seen:
                seen.append((str(w.message), w.category))
                warnings.warn(w.message, w.category, stacklevel=2)

        def column(frame, name):
            # a fit without intervals gives predict()'s NA ends and no centre or standard error
            return frame[name].to_numpy(float) if name in frame else np.full(len(frame), np.nan)

        mean = parts["mean"]
        link_fit = mean["fit"].to_numpy(float)
        centre, se = column(mean, "_centre"), column(mean, "_se")
        obs_se = column(parts["obs"], "_se") if "obs" in parts else None
        to_response = logit and type == "response"
        if to_response:
            p = stats.logistic.cdf(link_fit)
            with np.errstate(over="ignore", invalid="ignore"):
                predicted, se_mean = p, p * (1.0 - p) * se
        else:
            predicted, se_mean = link_fit, se
        link_ends = None
        if "_lower" in mean:
            # asymmetric intervals (AdaSSP's union, §28): the ends are predict()'s own at each level; the
            # reasons were said above, once. Called later (summary_frame, conf_int), outside this method's
            # pin of numpy's error state: pinned again (a new row at 5e-324 underflows; audit 20)
            # These later calls compute from the new rows again, so they run under predict()'s guard too
            # (thirtieth pass: a library's exception there reached the caller with its own text)
            @numpy_defaults
            def link_ends(at_level, obs):
                later = library_errors()
                with later, data_stage(PREDICTING), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    frame = self._predict(newdata, "prediction" if obs else "confidence", at_level, "link",
                                          clamp, _parts=True)
                    return column(frame, "_lower"), column(frame, "_upper")
                later.raise_data_error()
        return PredictionResults(predicted, se_mean, link_fit, centre, se, obs_se, to_response, level,
                                 mean.index, link_ends=link_ends)

    # ---- summaries and printing ----------------------------------------------------------------
    def summary(self, level: float | None = None, alpha: float | None = None) -> Summary:
        """R-like summary of the fit.

        Parameters
        ----------
        level : float, optional
            Level of the interval columns; None: the fit's :attr:`level`.
        alpha : float, optional
            statsmodels' keyword: the same as ``level = 1 - alpha`` (as in :meth:`conf_int`).

        Returns
        -------
        Summary
        """
        # newcomer review 19: summary(alpha=0.1), statsmodels' spelling, was a TypeError
        level = _level_from_alpha(level, alpha)
        return Summary(self, level=self.level if level is None else level)

    def summary2(self, alpha: float | None = None, level: float | None = None) -> Summary:
        """statsmodels' ``summary2()``: the same :class:`Summary` as :meth:`summary` (its
        ``tables`` holds statsmodels' two frames: the model facts and the coefficient table).

        Parameters
        ----------
        alpha : float, optional
            statsmodels' keyword: the level of the interval columns is ``1 - alpha``.
        level : float, optional
            Level of the interval columns; None: the fit's :attr:`level`.

        Returns
        -------
        Summary
        """
        # newcomer review 24: res.summary2() (and summary2().tables[1]) was an AttributeError
        return self.summary(level=level, alpha=alpha)

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


for _name, _reason in STATSMODELS_NOT_RELEASED.items():
    setattr(DPFit, _name, _not_released_property(_name, _reason))
del _name, _reason
