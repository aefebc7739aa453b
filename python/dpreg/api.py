"""Public entry points: argument checking, then data -> design -> estimator -> Release -> results."""
from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._numeric import no_numeric_warnings
from .api_checks import _as_dpreg, _check_bounds, _check_eps_delta, _dedup, _emit, _from_caught  # noqa: F401
from .auto import (  # noqa: F401
    AUTO_BOOSTED_MIN,
    AUTO_RULE,
    AUTO_SNR_MIN,
    auto_b_sq,
    auto_small_data_note,
    auto_snr,
    auto_withheld_intervals_note,
    choose_method,
)
from .design.private_bounds import unreliable_ranges_note
from .errors import (
    DESIGN,
    FITTING,
    READING,
    AccuracyWarning,
    Diagnostic,
    EstimationFailed,
    InvalidArgument,
    InvalidArgumentType,
    PrivacyLeakWarning,
    data_stage,
    library_errors,
)
from .estimators import dpgd_logistic as _dpgd_logistic
from .estimators.registry import METHODS, get_method, resolve_options
from .privacy.budget import Budget
from .privacy.ledger import Ledger
from .privacy.mechanisms import NoiseSource
from .release import PrivacySpec
from .results.fit import DPFit

#: share of eps spent on private ranges when some are not declared (our choice: 10%, issue 2 item 5)
DEFAULT_BOUNDS_SHARE = 0.10

#: share of eps AND of delta spent on the private selection of category levels when some are not
#: declared (split equally over those columns; docs/derivations/level_selection.md). Our choice: 10%,
#: like the ranges: the threshold grows like ln(1/delta)/eps, so a smaller share would drop levels of a
#: few hundred rows at eps = 1, while the rest of the fit loses only 10% of its eps and delta.
DEFAULT_LEVELS_SHARE = 0.10

#: privacy-statement text of a fit made with the internal hook that switches privacy noise off
NOISE_OFF_TEXT = "privacy noise was switched off (internal test hook): nothing in this fit is private"

_COMMON = {"bounds", "levels", "neighbours", "inference", "budget", "random_state", "na_action",
           "unknown_level", "strict", "bounds_share", "levels_share",
           "allow_large_delta"}

#: privacy-statement note of a fit whose delta >= 1/n was accepted with allow_large_delta=True
LARGE_DELTA_NOTE = ("delta is not below 1/n; it was accepted explicitly (allow_large_delta=True). Such a "
                    "delta permits mechanisms that publish single records outright")


# ``formula`` and ``data``, the first two parameters of both, and ``eps``, ``delta`` (dp_glm's ``family``
# comes between them)
_FORMULA_AND_DATA = """formula : str
        Model formula in R / formulaic syntax, e.g. ``"y ~ x1 + C(x2)"``, ``"y ~ ."``,
        ``"log(y) ~ x1 * x2 - 1"``. ``C(x, Treatment("b"))`` and ``C(x, Sum)`` contrasts work with
        declared levels. Row-wise transforms only: arithmetic in ``I()``, ``np.log`` and the other
        monotone functions, and indicators such as ``I(z > 55)`` or ``I((z > 55) & (w <= 2))`` (a 0/1
        column, computed on the clamped values; join comparisons with ``&`` or ``|`` around
        parentheses, as Python reads them, and negate one with ``~``: ``I(~(z > 55))``). Arithmetic on the outcome goes inside ``I()`` too
        (``"I(y - 3000) ~ x"``): ``"y - 3000 ~ x"`` is refused, since the formula parser would read the
        ``-`` as an operator on terms and fit ``y``.
    data : pandas.DataFrame or another data source
        The private data. Nothing computed from it leaves dpreg except through releases counted in
        the fit's privacy statement. Besides a pandas DataFrame (or a dict of columns): a polars
        DataFrame or LazyFrame, a pyarrow Table, RecordBatch, RecordBatchReader or
        ``pyarrow.dataset.Dataset``, a path, glob, directory (hive-partitioned too) or list of Parquet
        or CSV files, a DuckDB relation or ``(connection, "table, view or query")``, or a Spark
        DataFrame (``pip install 'dpreg[sources]'``; docs/sources.md says which methods stream, with
        memory bounded by the batch size, and where a source's fit can differ from the pandas fit:
        CSV files have no column types, Spark no unsigned integers)."""

_EPS_AND_DELTA = """eps : float, default 1.0
        Privacy budget of the fit, in [1e-6, 1e9].
    delta : float, default 1e-6
        0 (pure-DP methods only: ``ht_fw``, ``subsample_aggregate``) or in [1e-300, 1). Under
        replace-one neighbours delta >= 1/n is refused (such a delta permits publishing a record
        outright) unless ``allow_large_delta=True``."""


# The parameters from ``bounds`` on, and the Raises / Warns sections, are the same for dp_lm and dp_glm:
# written once here and put into both docstrings (their rendered pages are unchanged).
_SHARED_PARAMETERS = """bounds : dict or "data", optional
        ``{"column": (lo, hi)}``: declared public ranges of the numeric variables, outcome included
        (numbers with lo < hi; ``None`` for an end asks for a private estimate of that end). Values
        outside are clamped, silently. Ranges not declared are estimated privately from
        ``bounds_share`` of eps (or the method needs none). A key that is not a column of the data
        is an error naming the closest column; keys for columns the formula does not use are ignored
        (one dict serves several models). ``"data"`` reads every range from the data: a
        :class:`dpreg.PrivacyLeakWarning`, and the fit is not private.
    levels : dict or "data", optional
        ``{"column": [levels]}``: declared public category levels, the first is the reference.
        Levels that are not declared (pandas Categorical, string columns, ``C(x)`` of numbers) are
        data: they are released by a private selection from ``levels_share`` of eps and of delta, in
        sorted order, with the rows of unreleased values pooled (see :doc:`/derivations/level_selection`).
        ``"data"`` reads them from the data instead (:class:`dpreg.PrivacyLeakWarning`; the fit is not
        private). Pure-DP methods need declared levels.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbouring datasets of the guarantee. Under replace-one n is public; under add/remove it is
        private (only methods that support it).
    inference : bool, default True
        Spend a small declared share of the budget on what noise-aware standard errors need. With
        False, ranges estimated privately (no ``bounds=``) are not widened by the margin that makes
        intervals cover the population coefficients: no interval is released, and the margin would
        only add noise to the estimates.
    budget : dpreg.Budget, optional
        An account to draw (eps, delta) from; a fit that would overspend is refused before the data
        are touched.
    random_state : None, int or numpy.random.Generator, optional
        None: secure randomness. A seed makes the fit reproducible; the privacy statement then marks
        it "seeded" (not for release).
    **options
        Options every method accepts (``bounds_share``, default 0.1; ``levels_share``, default 0.1;
        ``na_action``, default "fail"; ``unknown_level``, default "error"; ``strict``, default False;
        ``unit``, default None; ``allow_large_delta``, default False) and the options of the chosen
        method (e.g. ``T`` of the iterative methods, ``s`` of the sparse ones). Every option, its
        default and where the default comes from: :doc:`/reference/options`. An unknown option is
        refused before anything is spent.
"""

_RAISES_AND_WARNS = """Raises
    ------
    dpreg.errors.InvalidArgument
        An argument or option outside its valid range (also a ``ValueError``); raised before the data
        are touched and before anything is spent. :class:`dpreg.errors.DeltaTooLarge` for delta >= 1/n.
    dpreg.errors.InvalidArgumentType
        An argument of the wrong type (e.g. a formula that is not a string).
    dpreg.design.formula.FormulaError, dpreg.design.build.DesignError
        A formula or design dpreg cannot fit privately (e.g. missing values with ``na_action="fail"``).
    dpreg.BudgetExceeded
        ``budget`` cannot pay for the fit (nothing is spent).
    dpreg.EstimationFailed
        A mechanism declined to release (e.g. a propose-test-release check failed); the budget of
        the attempt is spent and the exception's ``privacy`` says what was spent.

    Warns
    -----
    dpreg.PrivacyLeakWarning
        Something was taken from the data without budget (``bounds="data"``, ``levels="data"``,
        ``na_action="drop"``); an error with ``strict=True``.
    dpreg.AccuracyWarning, dpreg.ConvergenceWarning
        The fit is private but its accuracy or intervals may be degraded.
"""


def _with_shared_docs(fn):
    """Put the shared parameter and Raises / Warns text into ``fn``'s docstring."""
    if fn.__doc__:   # None under python -OO
        fn.__doc__ = fn.__doc__.replace("{shared_parameters}", _SHARED_PARAMETERS).replace(
            "{raises_and_warns}", _RAISES_AND_WARNS).replace("{formula_and_data}", _FORMULA_AND_DATA).replace(
            "{eps_and_delta}", _EPS_AND_DELTA)
    return fn


@_with_shared_docs
def dp_lm(formula: str, data: Any, *, eps: float = 1.0, delta: float = 1e-6, method: str = "auto",
          bounds: Mapping[str, tuple[float | None, float | None]] | str | None = None,
          levels: Mapping[str, Sequence[Any]] | str | None = None, neighbours: str = "replace_one",
          inference: bool = True, budget: Budget | None = None,
          random_state: int | np.random.Generator | None = None, **options: Any) -> DPFit:
    """Differentially private linear regression with noise-aware inference.

    Fits ``formula`` to ``data`` with the chosen DP estimator and returns lm-like results: coefficients
    in original units, standard errors and intervals that account for the privacy noise, and a
    privacy statement listing every release.

    Parameters
    ----------
    {formula_and_data}
    {eps_and_delta}
    method : str, default "auto"
        The estimator: ``"adassp"``, ``"boosted_adassp"``, ``"isp"``, ``"tukey"``, ``"dpgd"``,
        ``"subsample_aggregate"``, ``"ht_fw"``, ``"ht_lasso"``, ``"ht_iht"``, ``"ht_sparse"``, or
        ``"auto"``, which chooses on public facts only (the family, which ranges were declared,
        whether the model matrix has factor dummies, and n, d, eps, delta): ``"dpgd"`` for logistic
        regression, and for linear regression when the public signal-to-noise index
        n mu / (B^2 sqrt(d)) is below 20 (then with an ``AccuracyWarning``; its standard errors are
        reported where they can be certified, and as not estimable with the reason otherwise), when the
        model matrix has factor dummies below 250 when some range is estimated privately
        (``AUTO_PRIVATE_DPGD_MAX``) and below 100 when every range is declared (``AUTO_BOOSTED_MIN``), below 100
        (``AUTO_NUMERIC_DPGD_MAX``) when every range is declared and there are none, or
        when ``inference=False`` (point estimates only: dpgd's were the most accurate measured on
        real data; the dpgd rules need the public n and d of replace-one neighbours on an in-memory
        data frame without ``unit=``, so a streamed source (files, DuckDB, Spark) keeps the SSP methods; a pyarrow or polars table is then read as a pandas frame and fitted like one), ``"adassp"`` when every numeric range is declared and there are no factor
        dummies (from the index 100 up), ``"boosted_adassp"`` otherwise (``AUTO_RULE`` gives the measurements behind it).
        Whatever the method, ``dp_lm`` warns (``AccuracyWarning``, before anything is spent) where that
        index is below 20, and at eps above 2 below ``dpreg.auto.auto_snr_min(eps)`` (21.2 at eps = 4,
        28.3 at eps >= 8), where fits on real data missed the tighter accuracy of that eps (1.5 x the
        OLS test MSE at eps = 8); the warning names the n or the eps that would clear it.
        Where auto's ``"dpgd"`` (index 20 and up, with inference) releases no interval for most
        coefficients, one ``AccuracyWarning`` at fit time says so and names ``method="boosted_adassp"``,
        which printed intervals for most coefficients on the real factor data measured there.
    {shared_parameters}
    Returns
    -------
    dpreg.DPFit
        The released fit: ``coef``/``params``, ``std_errors``/``bse``, ``conf_int()``, ``predict()``,
        ``summary()``, ``privacy``.

    {raises_and_warns}
    See Also
    --------
    dp_glm : logistic regression.
    Budget : a total budget shared by several fits.
    compare : side-by-side table of fits.

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds, DIAMONDS_BOUNDS, DIAMONDS_LEVELS
    >>> diamonds = load_diamonds()
    >>> fit = dpreg.dp_lm("log(price) ~ log(carat) + cut", diamonds, eps=1.0,
    ...                   bounds={"price": DIAMONDS_BOUNDS["price"], "carat": DIAMONDS_BOUNDS["carat"]},
    ...                   levels={"cut": DIAMONDS_LEVELS["cut"]}, random_state=1)
    >>> print(fit.summary())  # doctest: +SKIP
    """
    # a library's exception raised on the rows (its text may quote a value) becomes a DataError naming its
    # type and stage, raised after the block (errors.library_errors)
    guard = library_errors()
    with guard, no_numeric_warnings():   # a floating-point warning would reveal an extreme row
        return _fit(formula, data, family="gaussian", eps=eps, delta=delta, method=method, bounds=bounds,
                    levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                    random_state=random_state, options=options)
    guard.raise_data_error()


@_with_shared_docs
def dp_glm(formula: str, data: Any, *, family: str = "binomial", eps: float = 1.0, delta: float = 1e-6,
           method: str = "auto", bounds: Mapping[str, tuple[float | None, float | None]] | str | None = None,
           levels: Mapping[str, Sequence[Any]] | str | None = None, neighbours: str = "replace_one",
           inference: bool = True, budget: Budget | None = None,
           random_state: int | np.random.Generator | None = None, **options: Any) -> DPFit:
    """Differentially private generalised linear model (logistic regression).

    Same arguments, checks and results as :func:`dp_lm`, for a binary outcome (0/1, True/False, or a
    two-level category whose levels are declared with ``levels=``). As in R's ``glm()``, the outcome may
    also be one column compared with a constant, ``"I(y > 3) ~ x"`` or ``"I(sex == 'male') ~ x"``, or
    such comparisons joined by ``&``, ``|`` and ``!`` (``"I(a < 10 & b == 'x') ~ z"``, with R's
    precedence, or ``"I((a < 10) & (b == 'x')) ~ z"``; Python's ``~`` negates, as in ``"I(~(y > 3)) ~ x"``),
    on a pandas DataFrame or a file or database source (read as the frame of the formula's columns): the
    event is the one typed into the formula (public), computed row by row (a missing ``y`` is a missing
    outcome, unless ``&`` or ``|`` decides the event without it). A pandas
    Categorical is compared with ``==`` or ``!=`` only (an order would be that of its categories, which
    are data unless declared).

    Parameters
    ----------
    {formula_and_data}
    family : {"binomial"}, default "binomial"
        Only logistic regression; use :func:`dp_lm` for a gaussian outcome. statsmodels'
        ``sm.families.Binomial()`` (its default logit link) is the same model and is accepted.
    {eps_and_delta}
    method : str, default "auto"
        The estimator: ``"adassp"``, ``"boosted_adassp"``, ``"isp"``, ``"tukey"``, ``"dpgd"``,
        ``"subsample_aggregate"``, ``"ht_fw"``, ``"ht_lasso"``, ``"ht_iht"``, ``"ht_sparse"``, or
        ``"auto"`` (``"dpgd"``, a private Newton solver with standard errors). ``ht_fw`` and
        ``ht_sparse`` also fit logistic models. The private Newton solver refuses a model below its
        small regime, n mu / sqrt(d) < 42 (n rows, d coefficients with the intercept, mu the Gaussian-DP
        parameter of the estimator's eps and delta), with :class:`dpreg.errors.SampleTooSmall` before
        anything is spent, naming the n and the eps that would pass; ``allow_outside_regime=True`` fits
        anyway, with a warning.
    {shared_parameters}
    Returns
    -------
    dpreg.DPFit
        The released fit, coefficients on the logit scale; ``predict(type="response")`` gives
        probabilities.

    {raises_and_warns}
    See Also
    --------
    dp_lm : linear regression.

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_penguins
    >>> penguins = load_penguins().dropna(subset=["sex"])   # the outcome: never imputed
    >>> penguins["male"] = (penguins["sex"] == "male").astype(float)
    >>> fit = dpreg.dp_glm("male ~ body_mass_g", penguins, eps=1.0, na_action="impute",
    ...                    bounds={"body_mass_g": (2000, 7000)})  # doctest: +SKIP
    """
    if _glm_family_name(family) != "binomial":
        raise InvalidArgument(_unsupported_family_message(family))
    guard = library_errors()   # as in dp_lm
    with guard, no_numeric_warnings():   # a floating-point warning would reveal an extreme row
        return _fit(formula, data, family="binomial", eps=eps, delta=delta, method=method, bounds=bounds,
                    levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                    random_state=random_state, options=options)
    guard.raise_data_error()


def _fit(formula, data, *, family, eps, delta, method, bounds, levels, neighbours, inference, budget,
         random_state, options, _noise_off=False):
    from .design.build import all_ranges_declared
    from .privacy.accounting import compose_ledger

    eps, delta = _check_eps_delta(eps, delta)
    if neighbours not in ("replace_one", "add_remove"):
        raise InvalidArgument("neighbours must be 'replace_one' or 'add_remove'")
    if not isinstance(formula, str):
        if isinstance(data, str) and "~" in data:
            # newcomer review 19: df.pipe(dpreg.dp_lm, "y ~ x") passes the frame first
            name = "dp_glm" if family == "binomial" else "dp_lm"
            raise InvalidArgumentType(f"{name}(formula, data): the formula comes first, as in lm() and "
                                      f"statsmodels; with DataFrame.pipe, name the data argument: "
                                      f"df.pipe((dpreg.{name}, 'data'), 'y ~ x', eps=...)")
        raise InvalidArgumentType("formula must be a string such as 'y ~ x1 + C(x2)'")
    _check_bounds(bounds)
    if budget is not None and not (hasattr(budget, "can_spend") and hasattr(budget, "spend")):
        # an argument: refused here, before the data are touched (it stopped later with an AttributeError)
        raise InvalidArgumentType("budget must be a dpreg.Budget or None")
    users_formula = formula
    allow_large_delta = options.pop("allow_large_delta", False)
    if not isinstance(allow_large_delta, (bool, np.bool_)):
        raise InvalidArgumentType("allow_large_delta must be True or False")
    allow_large_delta = bool(allow_large_delta)
    design_opts = {k: options.pop(k) for k in ("na_action", "unknown_level", "strict") if k in options}
    unit = options.pop("unit", None)   # privacy-unit column: a design (data-side) option, winsorized_sa 5.3
    bounds_share = options.pop("bounds_share", DEFAULT_BOUNDS_SHARE)
    if isinstance(bounds_share, (bool, np.bool_)) or not isinstance(bounds_share, numbers.Real) \
            or not (0 < bounds_share < 1):
        raise InvalidArgument("bounds_share must be a number in (0, 1)")
    levels_share = options.pop("levels_share", DEFAULT_LEVELS_SHARE)
    if isinstance(levels_share, (bool, np.bool_)) or not isinstance(levels_share, numbers.Real) \
            or not (0 < levels_share < 1):
        raise InvalidArgument("levels_share must be a number in (0, 1)")
    if bounds_share + levels_share >= 1:
        raise InvalidArgument("bounds_share + levels_share must be below 1 (the rest of eps is the estimator's)")

    # a file, relation, Arrow/polars table or Spark DataFrame: opened and checked (paths, files, the
    # formula's columns, types across files, the Spark session) before anything is spent
    # from here on the data are touched: an exception of a library (its text may quote a value) becomes a
    # DataError naming its type and the stage (dp_lm / dp_glm's guard; errors.guard_library_errors)
    with data_stage(READING):
        data, stream, bounds, levels = _open_data(formula, data, family=family, method=method, bounds=bounds,
                                                  levels=levels, unit=unit, neighbours=neighbours,
                                                  design_opts=design_opts, options=options)
        if family == "binomial" and stream is None:
            # newcomer review 24: dp_glm("I(y > 3) ~ x", df) was refused; glm() fits the event y > 3. A file
            # or database source is read here as the pandas frame of its formula columns (logistic methods
            # do not stream), so the event is computed on it in the same way (newcomer review 26)
            from .design.build import comparison_outcome
            formula, data = comparison_outcome(formula, data)

        auto = method == "auto"
        if auto and stream is not None:
            data, stream = _in_memory_table_as_pandas_where_auto_needs_n(
                formula, data, stream, family=family, eps=eps, delta=delta, bounds=bounds, levels=levels,
                neighbours=neighbours, inference=inference, unit=unit)
        all_declared = False
        if auto:  # provisional choice; refined on the public design below (see AUTO_RULE)
            all_declared = family == "gaussian" and all_ranges_declared(formula, data, bounds, family=family,
                                                                        unit=unit)
            method = choose_method({"family": family, "all_declared": all_declared})
        est = get_method(method)
        if family not in est.families:
            raise InvalidArgument(f"method {method!r} does not support family {family!r}")
        if neighbours not in est.neighbours:
            raise InvalidArgument(f"method {method!r} supports neighbours in {sorted(est.neighbours)}")
        pure_ok = est.pure_dp
        if delta == 0 and not pure_ok:
            pure = ", ".join(sorted(m for m, s in METHODS.items() if s.pure_dp))
            which = (f"method='auto' (its choices for this model, here {method!r}, use Gaussian or approximate-DP "
                     "mechanisms)" if auto else
                     f"method {method!r}, which uses Gaussian or approximate-DP mechanisms")
            raise InvalidArgument(f"delta = 0 (pure DP) cannot be met by {which}; choose delta > 0, or a pure-DP "
                                  f"method ({pure})")
        resolve_options(est, options, chosen_by_auto=auto)   # unknown options refused before anything is spent
        if unit is not None:
            if not est.supports_units:
                raise InvalidArgument(f"unit= (one privacy unit owning several rows) is not supported by method "
                                 f"{method!r}, whose privacy is calibrated per row; use "
                                 "method='subsample_aggregate' or method='tukey'")
            design_opts["unit"] = unit
        est.check_options(options)   # option preconditions, before anything (a range search) is spent

        # delta >= 1/n refused before anything is spent (e.g. on private ranges) when the row count is public
        # and known here: rows dropped later (na_action="drop") only make 1/n larger, so this never refuses
        # what the check on the design's n (below) would accept
        if neighbours == "replace_one" and unit is None and not est.ignores_delta:
            from .privacy.accounting import check_delta_for_n
            if stream is not None:        # a streamed source: its row count (data is a two-row stand-in)
                check_delta_for_n(delta, int(stream[0].num_rows()), allow_large_delta=allow_large_delta)
            elif getattr(data, "shape", None) is not None and len(data.shape) == 2:
                check_delta_for_n(delta, int(data.shape[0]), allow_large_delta=allow_large_delta)

        if neighbours == "replace_one" and unit is None and stream is None:
            # issue 13: dp_glm's small regime, refused on the public shape before a range search, a level
            # selection or anything else is spent (the same rule runs again on the built design,
            # _fit_spending); with undeclared levels on a lower bound of d, with na_action="drop" on the
            # rows before the drop (an upper bound of n): derivation dpgd_logistic.md §14
            _glm_regime_early(est, formula, data, family=family, eps=eps, delta=delta, bounds=bounds,
                              levels=levels, bounds_share=bounds_share, options=options, design_opts=design_opts,
                              levels_share=levels_share, pure_ok=pure_ok)
        if not auto and neighbours == "replace_one" and unit is None and stream is None \
                and design_opts.get("na_action", "fail") != "drop":
            _check_public_shape_early(est, formula, data, family=family, eps=eps, delta=delta, bounds=bounds,
                                      levels=levels, bounds_share=bounds_share, options=options)

        # a method that cannot be pure DP spends all of delta (Gaussian / PTR releases): check it up front
        delta_needed = 0.0 if pure_ok else delta
        if budget is not None and not budget.can_spend(eps, delta_needed):
            # refuse before anything is computed; the fit is charged what it actually spends (below), and
            # a delta it cannot pay is refused then, before anything is returned
            budget.spend(eps, delta)  # raises BudgetExceeded saying what remains

        noise = NoiseSource(random_state, _noise_off=_noise_off)
        ledger = Ledger()
        try:
            with data_stage(FITTING):   # the design and the estimator's fit tag their own stages first
                fit = _fit_spending(formula, data, family=family, eps=eps, delta=delta, method=method,
                                    bounds=bounds, levels=levels, neighbours=neighbours, inference=inference,
                                    budget=budget, options=options, _noise_off=_noise_off, est=est, auto=auto,
                                    noise=noise, ledger=ledger, design_opts=design_opts,
                                    bounds_share=bounds_share, levels_share=levels_share, pure_ok=pure_ok,
                                    allow_large_delta=allow_large_delta,
                                    stream=stream, all_declared=all_declared)
        except EstimationFailed:
            raise          # charged, with its statement attached
        except Exception as exc:
            # something failed after releases were made (e.g. a private range search, then a check of the
            # formula against the released range): the releases were computed and the error may be a
            # function of them, so the Budget pays for what the ledger holds (not for the estimator's
            # check_public refusals, which depend on public facts only)
            if budget is not None and not getattr(exc, "_dpreg_public", False) and any(
                    e.mu is not None or e.eps is not None or e.rho is not None for e in ledger):
                spent = compose_ledger(ledger, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded)
                budget.spend(spent.eps_spent, spent.delta_spent, label=f"{method}: {formula} (failed)")
            raise
    if formula != users_formula:
        # newcomer review 25: the fit showed the internal backquoted outcome (`I(y > 3)` ~ x) in its
        # call and summary; the user's formula is what they wrote and what update() refits
        fit._formula = users_formula
        fit.public.formula = users_formula
    return fit


def _involves(term: str, dummy: str) -> bool:
    """Whether the model-matrix column ``term`` is a product with the factor dummy ``dummy`` (one of its
    ':'-separated components, e.g. ``x:C(g)[T.e]`` with ``C(g)[T.e]``)."""
    return term != dummy and (term.startswith(dummy + ":") or term.endswith(":" + dummy)
                              or (":" + dummy + ":") in term)


def _interactions_of_unidentified_levels(release, public) -> None:
    """Newcomer review 26: a factor level that the fit reported as not estimable (NA: its released count
    does not show rows there) or whose interval it withheld (its count cannot rule out a level with no
    rows) left its interactions alone: ``y ~ x * g`` with a declared level of g that has no rows printed
    x:ge (a column of zeros there) with an interval and a p-value of 0.04 (BoostedAdaSSP, n = 10^5). An
    interaction column is zero wherever its level's dummy is, so it is not identified where the level
    is not: its estimate is NA where the level's is, and its interval is withheld where the level's
    is. Where the factor's reference level may be empty (the reference rule withheld the intercept and
    the factor's dummies), the terms interacting with the factor (x in x:g, the slope at that level) and
    the interactions (differences from it) lose their intervals too. Post-processing of the released
    estimates and covariance, the facts the method recorded and the public term names."""
    terms = list(public.terms)
    dummies = [int(j) for block in (public.factor_blocks or []) for j in block]
    if not dummies or len(terms) <= len(dummies) + 1:
        return
    coef = np.asarray(release.coef, float)
    withheld = set(release.facts.get("empty_level_withheld") or [])
    missing = [terms[j] for j in dummies if not np.isfinite(coef[j])]
    unsure = [terms[j] for j in dummies if terms[j] in withheld and terms[j] not in missing]
    as_na = [k for k, t in enumerate(terms) if np.isfinite(coef[k]) and any(_involves(t, m) for m in missing)]
    no_interval = [k for k, t in enumerate(terms) if k not in as_na and any(_involves(t, m) for m in unsure)]
    # a reference level the release cannot tell from an empty one (BoostedAdaSSP's reference rule withheld
    # the intercept and the factor's dummies): in x:g, the slope of x is the reference level's slope and
    # each x:g column the difference from it, neither identified where the level has no rows
    reference = [terms[j] for j in dummies if terms[j] in set(release.facts.get("reference_level_withheld") or [])]
    from_reference = []
    for k, t in enumerate(terms):
        for m in reference:
            if _involves(t, m) and k not in as_na and k not in no_interval:
                from_reference.append(k)
                partner = t.replace(":" + m, "", 1) if t.endswith(":" + m) else (
                    t.replace(m + ":", "", 1) if t.startswith(m + ":") else None)
                if partner in terms and terms.index(partner) not in no_interval:
                    from_reference.append(terms.index(partner))
    from_reference = sorted(set(from_reference))
    if release.vcov is not None:
        diagonal = np.diag(np.asarray(release.vcov, float))
        no_interval = [k for k in no_interval if np.isfinite(diagonal[k])]
        from_reference = [k for k in from_reference if np.isfinite(diagonal[k])]
    else:
        no_interval = from_reference = []
    if not as_na and not no_interval and not from_reference:
        return
    from .errors import Diagnostic
    from .estimators._ssp import report_coefficients_as_na
    from .estimators.adassp import _withhold_intervals
    if as_na:
        report_coefficients_as_na(release, as_na)
    if release.vcov is not None:
        _withhold_intervals(release, release.facts, sorted(set(as_na) | set(no_interval) | set(from_reference)))
    notes = []
    if from_reference:
        notes.append(Diagnostic(
            f"No interval for {', '.join(terms[k] for k in from_reference)}: the reference level of the factor "
            "of these interactions may have no rows (see the note on the intervals withheld for its levels); "
            "the slope of a term that interacts with the factor is then that level's slope, and each "
            "interaction the difference from it, neither identified. A larger n or eps, or a more populated "
            "reference level (declared first in levels=), gives their intervals.", None))
    if not as_na and not no_interval:
        release.warnings = list(release.warnings) + notes
        return
    parts = []
    if as_na:
        parts.append(f"Not estimable (reported as NA, no interval): {', '.join(terms[k] for k in as_na)}, "
                     f"the interaction(s) of {', '.join(missing)}, which the fit reports as not estimable")
    if no_interval:
        parts.append(f"No interval for {', '.join(terms[k] for k in no_interval)}, the interaction(s) of "
                     f"{', '.join(unsure)}, whose interval(s) the fit withheld")
    release.warnings = list(release.warnings) + notes + [Diagnostic(
        "; ".join(parts) + ": an interaction column is zero wherever its level has no rows, so it is not "
        "identified where the level is not (its value would be privacy noise). A larger n or eps helps "
        "where the level has rows.")]


def _no_interval_is_none(release) -> None:
    """A fit whose rules withheld every coefficient's interval (dp_glm's count gate after its resolution
    rule, say) releases no interval: it is stored as a fit without inference is (no covariance, a note
    saying why), so cov_params, bse, conf_int, summary and R's vcov / confint / summary show it the one
    way (newcomer review 25: the covariance was all NaN, and the summary printed a column of NaN
    standard errors with no note). Post-processing of what was released."""
    if release.vcov is None:
        return
    diagonal = np.diag(np.asarray(release.vcov, float))
    if np.any(np.isfinite(diagonal)):
        return
    if release.ci is not None and np.any(np.isfinite(np.asarray(release.ci, float))):
        return      # intervals released apart from the covariance (a bootstrap hull) are intervals
    # the method's note described the standard errors it had; none is left
    _store_without_inference(release, "every coefficient's interval was withheld (the warnings and notes say why)")


def _store_without_inference(release, note: str) -> None:
    """The release as a fit without inference: no covariance, interval, draws or level, no summary line
    about unresolved directions, and ``note`` (why, in plain words) as its inference note. Post-processing."""
    release.vcov = release.vcov_privacy = release.ci = release.ci_draws = None
    release.ci_level = None
    release.facts.pop("unresolved_directions", None)   # drives the summary's "Intervals:" line
    release.inference_note = note


def _glm_regime_applies(est, options, family) -> bool:
    """Whether dp_glm's small-regime rule applies: the private Newton solver (method dpgd, the default
    algorithm) on a logistic model. ``allow_outside_regime`` is refused with dp_lm (public: the call)."""
    if est.name != "dpgd":
        return False
    if family != "binomial":
        if "allow_outside_regime" in options:
            raise InvalidArgument("option 'allow_outside_regime' applies to dp_glm's logistic fit only (the "
                                  "small-regime rule of method 'dpgd' with algorithm 'newton')")
        return False
    return options.get("algorithm", "auto") in ("auto", "newton")


def _glm_regime_budget(eps_fractions, delta_fractions, delta):
    """estimator_budget(eps_total) -> (eps, delta) the estimator gets after design shares that are the
    given fractions of eps (and of delta), as _fit_spending computes them (public)."""
    from .privacy.accounting import conservative_share, eps_room

    def budget(e):
        e_left = eps_room(e, [f * e for f in eps_fractions])
        d_left = eps_room(delta, [f * delta for f in delta_fractions]) if delta > 0 else 0.0
        return conservative_share(e_left), conservative_share(d_left)
    return budget


def _glm_regime_early(est, formula, data, *, family, eps, delta, bounds, levels, bounds_share, options,
                      design_opts, levels_share=DEFAULT_LEVELS_SHARE, pure_ok=False):
    """dp_glm's small-regime rule (dpgd_logistic.md sections 12 and 14) on the public shape, before anything
    is spent: raises SampleTooSmall naming the n and the eps that pass. Where the shape depends on a private
    level selection (undeclared levels) it runs on a lower bound of d (one level per undeclared factor, at
    the budget left after the selection's share); with na_action="drop" on the rows before the drop (an
    upper bound of the rows kept). Both only refuse what the same rule on the built design (_fit_spending)
    would refuse, where the exact n and d are checked again."""
    if not _glm_regime_applies(est, options, family) or options.get("allow_outside_regime", False):
        return
    if getattr(data, "shape", None) is None or len(data.shape) != 2:
        return
    from .design.build import all_ranges_declared, public_shape
    from .estimators.dpgd_logistic import regime_refusal
    searched = est.wants_bounds(options, family=family) and bounds != "data" and not all_ranges_declared(
        formula, data, bounds, family=family)
    # declarations of columns the formula does not name do not change its shape (the synthetic frame of
    # public_shape has the formula's columns only, and refuses the others)
    shape_bounds = {k: v for k, v in bounds.items() if str(k) in formula} if isinstance(bounds, dict) else {}
    shape_levels = {k: v for k, v in levels.items() if str(k) in formula} if isinstance(levels, dict) else levels
    outcome = formula.split("~", 1)[0].strip().strip("`")
    if outcome in getattr(data, "columns", ()) and outcome not in shape_bounds and not (
            isinstance(shape_levels, dict) and outcome in shape_levels):
        # a 0/1 outcome's range is public (dp_glm refuses any other value): the synthetic rows need it
        shape_bounds[outcome] = (0.0, 1.0)
    shape = public_shape(formula, data, bounds=shape_bounds or None, levels=shape_levels, family=family,
                         ranges_searched=searched)
    d_at_least = False
    if shape is None:
        # undeclared levels: each such factor keeps at least one level, and no term has fewer columns
        # with more levels, so the stand-in shape's d is a lower bound (derivation §14)
        shape = public_shape(formula, data, bounds=shape_bounds or None, levels=shape_levels, family=family,
                             ranges_searched=searched, one_level_stand_in=True)
        if shape is None:
            return
        d_at_least = True
    eps_fractions = ([bounds_share] if searched else []) + ([levels_share] if d_at_least else [])
    delta_fractions = [levels_share] if d_at_least and delta > 0 and not pure_ok else []
    budget = _glm_regime_budget(eps_fractions, delta_fractions, delta)
    n_at_most = design_opts.get("na_action", "fail") == "drop"
    text = regime_refusal(int(data.shape[0]), len(shape.terms), eps, delta, budget, ranges_searched=searched,
                          levels_selected=d_at_least, n_at_most=n_at_most, d_at_least=d_at_least)
    if text is None:
        return
    range_refusal = _range_plan_refusal(formula, data, bounds=bounds, levels=levels, family=family,
                                        bounds_share=bounds_share, eps=eps, design_opts=design_opts) \
        if searched else None
    if range_refusal is _DESIGN_REFUSES:
        return      # the design's own refusal (missing or infinite values, ...) comes first, where it runs
    if range_refusal is not None:
        # the range search's own refusal (public facts too) comes first, as before this rule: it names
        # the ranges to declare, which also gives the estimator the whole budget
        from .design.build import SampleTooSmallForRanges
        raise SampleTooSmallForRanges(range_refusal)
    from .errors import SampleTooSmall
    raise SampleTooSmall(text)


#: _range_plan_refusal's answer where the design's first stage refuses (build_design raises the same,
#: before anything is spent)
_DESIGN_REFUSES = object()


def _range_plan_refusal(formula, data, *, bounds, levels, family, bounds_share, eps, design_opts):
    """The text of the private range search's refusal on public facts (n, the budget share, the columns
    whose ranges are missing), None, or _DESIGN_REFUSES where the design's first stage (the same call
    build_design makes first) refuses: the checks build_design makes before anything is spent."""
    from .design.build import SampleTooSmallForRanges, _check_range_search_early, _columns_and_na
    text = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the design reports its own warnings when it runs
            c = _columns_and_na(formula, data, bounds=bounds, levels=levels, family=family,
                                na_action=design_opts.get("na_action", "fail"),
                                strict=bool(design_opts.get("strict", False)), outcome_levels=None,
                                n_public=True, unit=None)
            _check_range_search_early(c, need_bounds=True, unit=None, bounds_share_eps=bounds_share * eps)
    except SampleTooSmallForRanges as exc:
        text = str(exc)
    except Exception:   # noqa: BLE001 - any other refusal is the design's own, made where it runs
        text = _DESIGN_REFUSES
    return text


def _check_public_shape_early(est, formula, data, *, family, eps, delta, bounds, levels, bounds_share, options):
    """The method's preconditions on the public design (e.g. the heavy-tailed methods' regime rule),
    checked before a private range search spends anything, where the design's shape is public: built
    by :func:`dpreg.design.build.public_shape` from the formula, the column types and the declared
    levels and ranges (None when the columns come from a private selection of levels: the check then
    runs on the built design only). The budget it is checked at is the one the estimator will get: the
    rest of eps after the range search's share. The same check runs
    again on the built design (resolve_options in _fit_spending), so the two cannot disagree but for
    the last bits of that split. Without a range search nothing is spent before that check anyway."""
    from .design.build import all_ranges_declared, public_shape
    from .privacy.accounting import conservative_share, eps_room
    if est.check_public_hook is None or getattr(data, "shape", None) is None:
        return
    searched = est.wants_bounds(options, family=family) and bounds != "data" and not all_ranges_declared(
        formula, data, bounds, family=family)
    if not searched:
        # nothing is spent before the check on the built design unless levels are selected (and then
        # the shape comes from the selection): the fit's own order of refusals is kept
        return
    shape = public_shape(formula, data, bounds=bounds if isinstance(bounds, dict) else None, levels=levels,
                         family=family, ranges_searched=True)
    if shape is None:
        return
    n = int(data.shape[0])
    eps_left = eps_room(eps, [bounds_share * eps])
    spec = PrivacySpec(eps=conservative_share(eps_left), delta=conservative_share(delta) if delta > 0 else 0.0,
                       neighbours="replace_one", inference=False)
    est.check_public(n, shape.d, spec, options, public=shape)


def _d_from_a_release(public) -> bool:
    """True when the number of coefficients depends on a private level selection."""
    from .design.build import selected_level_factors
    return bool(selected_level_factors(public))


def _ranges_from_a_release(public) -> bool:
    """True when a variable's range (and so the column intervals) came from the private range search."""
    variables = getattr(getattr(public, "schema", None), "variables", {}) or {}
    return any(getattr(v, "bounds_source", None) == "estimated" for v in variables.values())


def _glm_family_name(family) -> str | None:
    """"binomial" for the model dp_glm fits, however it is spelt: the name in any case, or statsmodels'
    family object ``sm.families.Binomial()`` with its default logit link (newcomer review 23: smf.glm's
    spelling was refused though it is the same model); None for anything else."""
    if isinstance(family, str):
        return family.lower()
    link = getattr(family, "link", None)
    if type(family).__name__ == "Binomial" and type(link).__name__.lower() == "logit":
        return "binomial"
    return None


def _unsupported_family_message(family) -> str:
    """The refusal of a dp_glm family other than "binomial", naming what was asked for (newcomer review
    18: family="probit" and "poisson" were told "use dp_lm for gaussian", as R's dp_glm no longer is)."""
    head = "dp_glm fits logistic regression only (family='binomial', logit link)"
    name = family.lower() if isinstance(family, str) else type(family).__name__.lower()
    if name == "gaussian":
        return f"{head}; use dp_lm() for a gaussian model"
    if name in ("logit", "logistic"):
        return f"{head}: write family='binomial' for logistic regression"
    if name == "binomial":      # statsmodels' sm.families.Binomial() with a link other than the logit
        link = type(getattr(family, "link", None)).__name__.lower()
        return f"{head}; the {link} link has no DP estimator in dpreg"
    shown = repr(family) if isinstance(family, str) else type(family).__name__
    return f"{head}; family {shown} has no DP estimator in dpreg"


def _open_data(formula, data, *, family, method, bounds, levels, unit, neighbours, design_opts, options):
    """(data for the design, stream, bounds, levels). pandas frames and mappings pass unchanged (stream
    None). Any other source (dpreg.sources) is checked first. A method whose data access is sums over rows
    then streams it (stream = (source, columns); data = two rows of public facts with the source's column
    types, which the public method choice reads); other methods get its formula columns as a pandas frame (within
    ``sources.MATERIALISE_ROW_LIMIT`` rows under replace-one, where n is public). Only the formula's
    columns are read, so bounds / levels declared for other columns of the source are set aside here, as
    a pandas frame's unused columns are ignored; a key that is no column of the source is refused, with
    the closest column name as a hint."""
    import pandas as pd
    if isinstance(data, (pd.DataFrame, dict)):
        return data, None, bounds, levels
    from . import sources
    from .design.chunked import can_stream
    from .design.formula import formula_columns
    src = sources.open_source(data)
    cols = formula_columns(formula, src, levels=levels if isinstance(levels, dict) else None, unit=unit)
    declared_keys = [k for d in (bounds, levels) if isinstance(d, dict) for k in d]
    unknown = [k for k in declared_keys if str(k) not in set(map(str, src.names))]
    if unknown:   # refused here, where every column name of the source is known for the hint
        from .design.build import unknown_columns_error
        raise unknown_columns_error(unknown, src.names)
    bounds, levels = (_without_unread_columns(d, src.names, cols) for d in (bounds, levels))
    if isinstance(src, sources.CsvTextSource):
        # CSV cells are text: the formula's columns are typed from public facts (the formula, levels=)
        from .design.inputs import type_csv_source
        src = type_csv_source(src, formula, cols, levels, unit=unit)
    streamed_method = method if method != "auto" else ("adassp" if family == "gaussian" else method)
    if can_stream(streamed_method, family=family, source=src, formula=formula, levels=levels, bounds=bounds,
                  neighbours=neighbours, design_opts={**design_opts, "unit": unit}, options=options):
        from .design.chunked import synthetic_head
        declared = {k: v for k, v in bounds.items()} if isinstance(bounds, dict) else {}
        return synthetic_head(src, cols, levels, declared), (src, cols), bounds, levels
    # under add/remove n is private: no refusal may depend on it, so no row limit is checked there
    limit = sources.MATERIALISE_ROW_LIMIT if neighbours == "replace_one" else None
    return src.to_pandas(cols, max_rows=limit), None, bounds, levels


def _in_memory_table_as_pandas_where_auto_needs_n(formula, data, stream, *, family, eps, delta, bounds,
                                                      levels, neighbours, inference, unit):
    """(data, stream). The rules of method="auto" that need n and d (dpgd where the noise dominates or
    with inference=False; dpgd rather than BoostedAdaSSP for factor data below AUTO_BOOSTED_MIN) apply
    only to a data frame in memory; a streamed source gets the choice without them. A pyarrow or polars
    table is in memory too, but was streamed like a file, so the same data gave another method (and
    other numbers) than as a pandas frame (newcomer reviews 17, for dpgd, and 18, for AdaSSP). Where
    the rule, applied to the public shape (the formula, the column types, the declared levels and
    ranges, n: all public under replace-one), chooses otherwise than without n and d, such a table is
    read as the pandas frame of its formula columns, which is then fitted like one. Files, DuckDB and
    Spark stay streamed (AUTO_RULE)."""
    src, columns = stream
    if src.kind != "arrow" or family != "gaussian" or neighbours != "replace_one" or unit is not None:
        return data, stream
    from . import sources
    from .design.build import all_ranges_declared, public_shape
    n = int(src.num_rows())
    if n > sources.MATERIALISE_ROW_LIMIT:
        return data, stream
    shape = public_shape(formula, data, bounds=bounds if isinstance(bounds, dict) else None, levels=levels,
                         family=family, ranges_searched=True)
    if shape is None:
        return data, stream
    facts = {"family": family, "all_declared": all_ranges_declared(formula, data, bounds, family=family),
             "has_factors": bool(shape.factor_blocks), "inference": bool(inference), "n": n,
             "d": len(shape.terms), "b_sq": auto_b_sq(shape), "eps": eps, "delta": delta}
    streamed_facts = {k: v for k, v in facts.items() if k not in ("n", "d")}
    if choose_method(facts) == choose_method(streamed_facts):
        return data, stream
    return src.to_pandas(columns, max_rows=sources.MATERIALISE_ROW_LIMIT), None


def _without_unread_columns(declared, source_columns, read_columns):
    """A bounds / levels mapping without the keys that name a column of the source the formula does not
    read; anything else (None, "data") unchanged."""
    if not isinstance(declared, dict):
        return declared
    unread = set(map(str, source_columns)) - set(map(str, read_columns))
    return {k: v for k, v in declared.items() if str(k) not in unread}


def _forget_data_ranges(public) -> None:
    """bounds="data": the ranges are the data's minima and maxima, i.e. exact values of single records.
    They served the fit (clamping, scaling) and are not kept in the result, which reports them by name
    only, like the privacy statement. Factor dummies ([0, 1]) and the intercept keep their intervals."""
    schema = getattr(public, "schema", None)
    data_vars = [v for v in (schema.variables.values() if schema is not None else ())
                 if v.bounds_source == "data"]
    if not data_vars:
        return
    from .design.build import forget_numeric_intervals
    for v in data_vars:
        v.lower = v.upper = None
    forget_numeric_intervals(public, outcome=schema.outcome in {v.name for v in data_vars})


RAW_SCALE_NOTE = ("This method runs on the scale set by the ranges; with standardize=False it runs on the raw "
                  "scale instead, where its defaults (unit radius and truncation levels) assume data of unit "
                  "scale (e.g. many heavy-tailed columns of order 1).")


def _fit_spending(formula, data, *, family, eps, delta, method, bounds, levels, neighbours, inference, budget,
                  options, _noise_off, est, auto, noise, ledger, design_opts, bounds_share,
                  levels_share=DEFAULT_LEVELS_SHARE, pure_ok=False, allow_large_delta=False, stream=None,
                  all_declared=False):
    """The part of :func:`_fit` that touches the data and spends budget."""
    from .design.build import SampleTooSmallForRanges, build_design
    from .privacy.accounting import check_delta_for_n, compose_ledger, conservative_share, eps_room
    from .results.fit import DPFit

    # an estimator may need ranges only on some paths (e.g. its standardised default): its spec says so
    wants = est.wants_bounds(options, unit=design_opts.get("unit"), family=family)
    need_bounds = wants and bounds != "data"
    caught, design_notes = [], []
    try:
        with warnings.catch_warnings(record=True) as caught, data_stage(DESIGN):
            warnings.simplefilter("always")
            if stream is not None and method in ("adassp", "boosted_adassp"):
                from .design.chunked import build_streamed_design
                design = build_streamed_design(formula, stream[0], stream[1], bounds=bounds, levels=levels,
                                               family=family, need_bounds=need_bounds,
                                               bounds_share_eps=bounds_share * eps, noise=noise, ledger=ledger,
                                               n_public=neighbours == "replace_one",
                                               range_margin=bool(inference), **design_opts)
            else:
                if stream is not None:     # the source was not read: read its formula columns now
                    from . import sources
                    data = stream[0].to_pandas(stream[1], max_rows=sources.MATERIALISE_ROW_LIMIT)
                build = functools.partial(
                    build_design, formula, data, bounds=bounds, levels=levels, family=family,
                    bounds_share_eps=bounds_share * eps, levels_share_eps=levels_share * eps,
                    # pure-DP methods keep their pure claim: no (eps, delta) selection,
                    # their levels must be declared
                    levels_share_delta=levels_share * delta if delta > 0 and not pure_ok else None,
                    noise=noise, ledger=ledger, allow_wide=est.allows_wide,
                    n_public=neighbours == "replace_one",
                    # the private ranges' margin buys intervals for the population coefficients: none
                    # are released without inference, so the searched ends are kept (public flag)
                    range_margin=bool(inference), **design_opts)
                refusal = None
                try:
                    design = build(need_bounds=need_bounds)
                except SampleTooSmallForRanges as exc:
                    # the heavy-tailed methods' standardised path asks for ranges but has a raw-scale
                    # path: say so. Not taken silently: on natural-scale data the raw scale was 20 to
                    # 7e5 x the OLS test MSE (docs/accuracy.md)
                    if not (need_bounds and est.ranges_optional):
                        raise
                    refusal = f"{exc} {RAW_SCALE_NOTE}"
                if refusal is not None:   # outside the handler: the design's exception chain is not kept
                    raise SampleTooSmallForRanges(refusal)
    finally:  # also when the design fails: a leak warning (e.g. levels read from the data) is never lost
        for w in caught:  # re-raise to the caller, and keep the public texts for the summary
            if not issubclass(w.category, UserWarning):
                # a floating-point (or library) warning from evaluating the formula on the rows would
                # reveal a row's value: never relayed, whatever its class
                continue
            warnings.warn(str(w.message), _as_dpreg(w.category), stacklevel=4)  # the caller of dp_lm / dp_glm
            if not issubclass(w.category, PrivacyLeakWarning):  # leaks are in the privacy statement
                design_notes.append(Diagnostic(str(w.message), _as_dpreg(w.category)))
    if auto and family == "gaussian":
        # the choice refined on the public design (same needs as the provisional one: ranges)
        facts = {"family": family, "all_declared": method == "adassp",
                 "has_factors": bool(design.public.factor_blocks), "inference": bool(inference)}
        if neighbours == "replace_one" and design.units is None and stream is None:
            facts.update(n=design.n, d=design.d, b_sq=auto_b_sq(design.public), eps=eps, delta=delta)
        refined = choose_method(facts)
        if refined != method:
            method = refined
            est = get_method(method)
            unknown = set(options) - est.accepted_options
            if unknown:
                raise InvalidArgument(f"option(s) {', '.join(sorted(unknown))} do not apply to {method!r}, "
                                      "which method='auto' chose for this design; pass method= explicitly")
    # what the design layer actually spent (ranges: pure eps; level selection: eps and delta; 0 if all
    # declared); the estimator gets the rest, rounded down (exactly) and by SPLIT_MARGIN, so that the
    # ledger composes to at most the request, not even exceeding it in the last bit
    design_rows = [e for e in ledger if e.eps is not None]
    eps_left = eps_room(eps, [e.eps for e in design_rows])
    delta_left = eps_room(delta, [e.delta or 0.0 for e in design_rows]) if delta > 0 else 0.0
    # issue 12: a private range from a search too coarse to be widened clamps the data by an unknown
    # amount, so intervals for the population coefficients would miss (dpgd at n = 300, eps = 4: 0.80-0.84).
    # AdaSSP / BoostedAdaSSP withhold theirs and say why (estimators/adassp.py); every other method is
    # fitted without inference there (a public decision: the list is a function of n and eps), so no
    # budget goes to standard errors that would not be printed
    unreliable = list(design.public.schema.unreliable_ranges or [])
    skip_inference = bool(inference) and bool(unreliable) and method not in ("adassp", "boosted_adassp")
    spec = PrivacySpec(eps=conservative_share(eps_left), delta=conservative_share(delta_left),
                       neighbours=neighbours, inference=bool(inference) and not skip_inference)
    # with unit= the public count is N (units): the row count is private
    n_public = design.n if design.units is None else design.public.n
    large_delta = False
    try:
        # under add/remove n is private: no rule can be checked on it; an always-pure method (ht_fw)
        # does not use delta at all
        if neighbours == "replace_one" and not est.ignores_delta:
            large_delta = check_delta_for_n(delta, n_public, allow_large_delta=allow_large_delta)
        resolve_options(est, options, {"n": n_public, "d": design.d, "privacy": spec, "public": design.public},
                        chosen_by_auto=auto)
        regime_note = None
        if neighbours == "replace_one" and design.units is None and _glm_regime_applies(est, options, family):
            # issue 13: the small-regime rule on the built design (the same rule as before the design was
            # built; here also where the levels were selected privately, whose share the budget pays)
            from .estimators.dpgd_logistic import regime_refusal
            budget_at = _glm_regime_budget([e.eps / eps for e in design_rows] if eps > 0 else [],
                                           [(e.delta or 0.0) / delta for e in design_rows] if delta > 0 else [],
                                           delta)
            allowed = bool(options.get("allow_outside_regime", False))
            regime_note = regime_refusal(n_public, design.d, eps, delta, budget_at,
                                         ranges_searched=_ranges_from_a_release(design.public),
                                         levels_selected=_d_from_a_release(design.public), allowed=allowed)
            if regime_note is not None and not allowed:
                from .errors import SampleTooSmall
                raise SampleTooSmall(regime_note)
    except Exception as exc:
        # a function of n, the declared options and d. d is public unless a factor's levels were
        # selected privately: then it is a function of that release, the refusal tells the caller
        # something the release computed, and the Budget pays for what the ledger holds (see _fit)
        # The heavy-tailed methods' check (check_public_hook) also reads the column intervals (whether the
        # fit runs standardised): after a private range search those are a release too (a searched range
        # whose image overflows, exp(v), puts the fit on the raw scale, with more noise). Its refusals on
        # public facts were made before the search (_check_public_shape_early); one made here depends on
        # the released ranges, and the Budget pays for them (sixteenth audit pass)
        exc._dpreg_public = not (_d_from_a_release(design.public) or (
            est.check_public_hook is not None and _ranges_from_a_release(design.public)))
        raise
    from .design.formula import indicator_margin_note
    margin_note = indicator_margin_note(formula)
    if margin_note is not None:   # from the formula's text only: a note (nothing to act on), not a warning
        design_notes.append(Diagnostic(margin_note, None))
    small = None
    if family == "gaussian" and neighbours == "replace_one":
        # the same public rule whether auto chose the method or the user did (issue 13: a user who picks
        # a method by name is told too when the noise is expected to dominate)
        small = auto_small_data_note(design.public, design.n if design.units is None else design.public.n,
                                     eps, delta, chosen=method, inference=bool(inference), explicit=not auto,
                                     has_intervals=bool(inference) and est.reports_standard_errors,
                                     refused_above_index=est.refused_above_index)
        if small is not None:   # public facts only; said before the estimator spends anything, and
            # after the method's public refusals (a refused fit gets the refusal alone)
            warnings.warn(str(small), AccuracyWarning, stacklevel=4)
            design_notes.append(small)
    if regime_note is not None:   # allow_outside_regime=True below the regime: said before anything is spent
        regime_note = Diagnostic(regime_note, AccuracyWarning)
        warnings.warn(str(regime_note), AccuracyWarning, stacklevel=4)
        design_notes.append(regime_note)
    notes = [LARGE_DELTA_NOTE] if large_delta else None

    if _noise_off:
        # internal test hook (also reachable through the bridge's ".noise_off"): privacy noise is zero,
        # so the statement must not claim differential privacy
        design.public.schema.private = False
        if NOISE_OFF_TEXT not in design.public.schema.leaks:
            design.public.schema.leaks.append(NOISE_OFF_TEXT)

    schema = design.public.schema  # public; the statement must not keep the design (data) alive

    def statement():
        st = compose_ledger(ledger, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded,
                            schema=schema, notes=notes)
        st.unit = design_opts.get("unit")  # the sentence on replace-one-unit neighbours
        return st

    def charge(privacy):
        if budget is not None:
            budget.spend(privacy.eps_spent, privacy.delta_spent, label=f"{method}: {formula}")

    fit_caught = []
    if method in ("adassp", "boosted_adassp"):
        # the fit is the design's last reader (deleted below): its rows may be scaled in place
        # (issue 14: peak memory <= 2x the model matrix; design.contract.Design.x_scratch)
        design.x_scratch = True
    failed = None
    try:
        with warnings.catch_warnings(record=True) as fit_caught, data_stage(FITTING):
            warnings.simplefilter("always")
            release = est.fit(design, spec, noise, ledger, **options)
    except EstimationFailed as exc:
        failed = str(exc)
    except Exception:
        _emit(_from_caught(fit_caught))
        raise
    if failed is not None:
        # outside the handler: the estimator ran on the rows, so the caught refusal's own chain (e.g. a
        # linear-algebra error) is not kept as this refusal's __context__ (``from None`` only hid it)
        privacy = statement()
        charge(privacy)  # a failed propose-test-release still spent its budget
        _emit(_from_caught(fit_caught))
        raise EstimationFailed(failed, privacy=privacy)
    privacy = statement()
    charge(privacy)
    if not spec.inference and release.inference_note == _dpgd_logistic.NOT_CONVERGED_NOTE:
        # newcomer review 26: no standard errors were asked for, but the estimate's own caveat stays
        release.inference_note = ("inference not requested (inference=False); no standard errors or "
                                  "intervals are reported; " + _dpgd_logistic.NOT_CONVERGED_POINT_NOTE)
    elif not spec.inference and (release.vcov is not None or release.ci is not None):
        # a method whose releases give intervals by post-processing (dp_glm's Newton solver) still
        # withholds them when no inference was asked for, or when it was skipped because the private
        # ranges are unreliable: the ranges were not widened for intervals (range_margin), and the
        # summary printed standard errors beside the note that they are not estimable
        _store_without_inference(release, "inference not requested (inference=False); no standard errors or "
                                          "intervals are reported")
    if skip_inference:
        release.inference_note = unreliable_ranges_note(unreliable)
    _interactions_of_unidentified_levels(release, design.public)
    _no_interval_is_none(release)
    if family == "gaussian" and auto and method == "dpgd" and spec.inference and small is None \
            and neighbours == "replace_one" and design.units is None and stream is None:
        # thirty-fourth pass: auto chose dpgd (for its estimate) and dpgd withheld most intervals: said at
        # fit time, once (a function of the release and public facts: n, d, B^2, eps, delta). dp_lm only:
        # dp_glm's auto is always dpgd (no SSP method to name), and its own warnings say why
        withheld = auto_withheld_intervals_note(release.vcov, int(np.size(release.coef)),
                                                auto_snr(design.n, design.d, auto_b_sq(design.public), eps, delta),
                                                has_factors=bool(design.public.factor_blocks))
        if withheld is not None:
            release.warnings = list(release.warnings) + [withheld]
    # every diagnostic of the fit, once: the design's (already emitted above), then the estimator's
    # (warned while fitting, or returned in the Release); the summary lists the same ones
    own = _dedup(_from_caught(fit_caught) + list(release.warnings))
    release.warnings = _dedup(design_notes + own)
    _emit([t for t in own if str(t) not in {str(x) for x in design_notes}])
    public = design.public
    if neighbours == "add_remove":
        public.n = None  # n is private under add/remove: only a released estimate may be reported
    _forget_data_ranges(public)
    del design  # results never see the data
    return DPFit.from_release(release, public=public, privacy=privacy, formula=formula, method=method,
                              options=options, auto=auto)
