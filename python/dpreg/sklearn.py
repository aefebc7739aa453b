"""scikit-learn estimators over dpreg's fits: ``DPLinearRegression`` and ``DPLogisticRegression``.

``pip install 'dpreg[sklearn]'``. They follow scikit-learn's conventions (``fit``/``predict``/``score``,
``get_params``/``set_params``, ``clone``, ``Pipeline``, ``cross_val_score``, ``GridSearchCV``) with two
differences that differential privacy imposes:

* **Every fit spends privacy budget.** Cross-validation and grid search fit many times on the same
  data (k folds x every parameter combination), and so do ``RFE`` (one fit per elimination step) and
  ``MultiOutputRegressor`` / ``RegressorChain`` (one fit per output), so they spend the budget many
  times: 5-fold CV at
  ``eps=1`` is an ``eps=5`` analysis of the data. A :class:`RepeatedFitWarning` says so at run time.
  Pass ``budget=dpreg.Budget(total_eps, total_delta)`` to cap the total: every fit of the estimator
  and of all its clones draws from that one Budget (a Budget is an account: cloning or deep-copying
  an estimator shares it, never copies it), and a fit that would overspend raises
  :class:`dpreg.BudgetExceeded` before touching the data.
* **Ranges are declared, never read off the data.** ``bounds`` (per feature) and ``target_bounds``
  are public declarations; features without one get a privately estimated range (a share of
  ``eps``, as in :func:`dpreg.dp_lm`). Nothing is derived from ``X`` or ``y`` without privacy.

**Steps before the estimator in a Pipeline are outside the guarantee.** ``make_pipeline(StandardScaler(),
DPLinearRegression())`` fits the scaler on the private data without privacy: its means and scales are in the
pipeline, and they change every row the estimator sees, so this fit is not private either. ``fit`` then warns
with :class:`dpreg.PrivacyLeakWarning` and marks ``privacy_`` not private (decided from the pipeline's steps:
scalers, imputers, encoders reading their categories off the data). Use transforms with public parameters
(``FunctionTransformer`` with declared constants, ``OneHotEncoder(categories=[[...]])``), or no scaling:
ranges are declared per feature in its own units (``bounds=``). A ``FunctionTransformer`` or
``TransformedTargetRegressor`` given a function and its inverse checks the pair on every tenth row
(``check_inverse=True``, their default) and warns where they disagree: that check reads the data too, and is
flagged alike (pass ``check_inverse=False``), as is a ``StackingRegressor`` / ``StackingClassifier`` whose
final estimator this is (its features are the other estimators' predictions, fitted on the same data) and a
bagging ensemble drawing rows with replacement (``bootstrap=True``: a row fitted k times is protected at k
times ``eps`` only) and ``AdaBoostRegressor`` (rows drawn with replacement, weighted by the earlier
estimators' errors on the data). A ``FunctionTransformer`` whose function computes from the whole array is not detected.

``score(X, y)`` is scikit-learn's R^2 / accuracy computed on the data you pass: it is not a DP release.
On held-out public data it is harmless; on the private data (including cross-validation folds) it
reveals information about them, so it warns with :class:`dpreg.PrivacyLeakWarning`.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.validation import check_is_fitted
except ImportError as exc:  # pragma: no cover - depends on the optional extra
    raise ImportError("dpreg.sklearn needs scikit-learn: pip install 'dpreg[sklearn]'") from exc

from ._numeric import no_numeric_warnings
from .errors import DPRegWarning, InvalidArgument, InvalidArgumentType, PrivacyLeakWarning

__all__ = ["DPLinearRegression", "DPLogisticRegression", "RepeatedFitWarning"]

_TARGET = "target__"
_LABELS_FROM_DATA = ("classes='data': the class labels were read from y (classes_), without a mechanism; "
                     "declare them with classes=[reference, event] to keep the fit private")


def _saturated(values):
    """Finite numbers beyond the double range (a Python int such as 10**400 in an object array or column,
    a long double) saturated at the largest double, as dp_lm's design does (rule: one such row must not
    decide between a fit and an exception); every other input unchanged, so that scikit-learn's own
    validation keeps its messages (strings, NaN, inf, sparse matrices)."""
    from scipy import sparse

    from ._numeric import saturating_floats
    if values is None:
        return values
    if sparse.issparse(values):
        # audit 32: a sparse matrix is made dense in ``_frame`` by ``np.asarray(X.toarray(), dtype=float)``;
        # a long-double one holding 1e4000 overflowed in that cast (numpy's RuntimeWarning, FloatingPointError
        # under np.seterr(over="raise"), then "infinite values") where a row at 1 fitted. Its stored values
        # are saturated here as a dense array's are (the dtype, public, chooses this branch; never a value)
        if not (values.dtype.kind == "f" and values.dtype.itemsize > 8):
            return values
        m = _long_double_lil_as_csr(values) if values.format == "lil" else values.tocsr(copy=True)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            data = saturating_floats(m.data)
        return sparse.csr_matrix((np.asarray(data, dtype=float), m.indices, m.indptr), shape=m.shape)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return values
    if arr.dtype != object and not (arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
        return values
    # thirtieth pass: numpy's narrowing cast of a long double beyond the double range (alone, or in an
    # object array) reports "overflow encountered in cast" (a RuntimeWarning, or FloatingPointError under
    # np.seterr(over="raise")): one row at 1e4000 warned where a row at 1 did not. The overflow is what
    # this function detects; numpy is told not to report it
    try:
        # audit 33: and a long double below the double range (1e-4940) reports an underflow (FloatingPointError
        # under np.seterr(all="raise")) where a row at 1 did not; it rounds to its nearest double
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            fast = arr.astype(float)
        if not np.isinf(fast).any() and arr.dtype == object:
            return values                  # nothing overflowed: the caller's values, untouched
        # a long double is narrowed here whatever its values (its dtype, public, chooses this): scikit-learn
        # keeps the dtype and the later cast to float64 flagged an underflow (audit 33)
    except OverflowError:
        pass
    except (TypeError, ValueError):
        return values
    try:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            out = saturating_floats(arr)
    except (TypeError, ValueError, ArithmeticError):
        return values
    if isinstance(values, pd.DataFrame):
        return pd.DataFrame(out, columns=values.columns, index=values.index)
    if isinstance(values, pd.Series):
        return pd.Series(out, index=values.index, name=values.name)
    return out


def _quotes_a_value(err: ValueError) -> bool:
    """numpy's failed float conversion, whose message ends with the offending value."""
    return str(err).startswith("could not convert")


#: scikit-learn's validation messages that quote neither values nor counts of the data (the input's kind,
#: NaN / infinity, the number of features and their names: the schema, public)
_SAFE_VALIDATION = ("Input X contains", "Input y contains", "Input contains", "X has ", "X does not contain",
                    "The feature names should match", "Feature names", "dtype='numeric' is not compatible",
                    "Unable to convert array of bytes/strings", "Sparse data was passed",
                    "Found array with dim", "np.matrix is not supported", "Unknown label type")

_RESHAPE = ("Reshape your data either using array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample.")


def _validation_message(text: str, *, n_public: bool, name: str, fitting: bool) -> str | None:
    """scikit-learn's message of a refused input, told without what the data would reveal, or None when it
    can be shown as it is.

    Its checks quote the values of a 1-D or complex array ("Expected 2D array, got 1D array instead:
    array=[...]") and the number of rows ("Found array with 1 sample(s) (shape=(1, 3))", "inconsistent
    numbers of samples: [50, 49]", "got an array of shape (50, 2)"). Values are never shown. The number of
    rows is shown only where it is public: the training data of a fit under replace-one neighbours (the
    default), where n is a public fact of the fit (``n_public``); under add/remove neighbours n is private,
    and new rows given to predict or score may be private data too. The features' count and names are the
    schema (public). An unknown message that holds a digit or a line of values is replaced as a whole."""
    import re
    rows_hidden = ("the number of rows is not shown: under add/remove neighbours n is private" if fitting else
                   "the number of rows is not shown: new rows may be private data too")
    if text.startswith(("Expected 2D array", "Expected 2D input", "Input should have at least 1 dimension")):
        kind = "a scalar" if "scalar" in text else "a 1D array"
        return f"Expected 2D array, got {kind} instead (its values are not shown).\n{_RESHAPE}"
    if text.startswith("Complex data not supported"):
        return f"Complex data not supported: {name} holds complex numbers (their values are not shown)"
    if n_public and re.match(r"(Found array with \d+ (sample|feature)\(s\)|Found input variables with "
                             r"inconsistent numbers of samples|y should be a 1d array)", text):
        return None                 # n is public here: scikit-learn's own text (its checks match it)
    m = re.match(r"Found array with \d+ sample\(s\) \(shape=\([^)]*\)\) while a minimum of (\d+) is "
                 r"required(.*)$", text, re.S)
    if m:
        return (f"Found array with fewer samples than the minimum of {m.group(1)} required{m.group(2).rstrip('.')}"
                f" ({rows_hidden})")
    m = re.match(r"Found array with (\d+) feature\(s\) \(shape=\([^)]*\)\) while a minimum of (\d+) is "
                 r"required(.*)$", text, re.S)
    if m:
        return (f"Found array with {m.group(1)} feature(s) while a minimum of {m.group(2)} is required"
                f"{m.group(3).rstrip('.')} ({rows_hidden})")
    if text.startswith("Found input variables with inconsistent numbers of samples"):
        return f"Found input variables with inconsistent numbers of samples: X and y differ ({rows_hidden})"
    if text.startswith("y should be a 1d array"):
        return f"y should be a 1d array, got an array of more dimensions instead ({rows_hidden}, nor the shape)"
    if text.startswith(_SAFE_VALIDATION):
        return None
    if re.search(r"\d", text) or "array=" in text or "\n" in text:
        from .errors import DEBUG_ERRORS_ENV
        return (f"scikit-learn's validation refused {name}; its message is not shown: it may quote values "
                f"or the number of rows of the data (rerun with the environment variable {DEBUG_ERRORS_ENV}=1 "
                "to see it; it may then contain data values: do not share it)")
    return None


def _checked(check, *args, name: str = "X", n_public: bool = False, fitting: bool = False, **kwargs):
    """``check(*args, **kwargs)`` (a scikit-learn validation function) with its refusal told by
    :func:`_validation_message`: an :class:`dpreg.errors.InvalidArgument` (a ``ValueError``, as
    scikit-learn's) for a ValueError whose text would reveal data, raised outside the handler so that
    scikit-learn's exception is not kept; its own exception otherwise (and under DPREG_DEBUG_ERRORS=1)."""
    from .errors import DEBUG_NOTE, DPRegError, debug_errors
    safe = None
    try:
        return check(*args, **kwargs)
    except DPRegError:
        raise                        # dpreg's own refusals (e.g. predict's, inside score) are already safe
    except ValueError as err:
        if _quotes_a_value(err):
            raise                    # the caller's own refusal of text in a number column
        safe = _validation_message(str(err), n_public=n_public, name=name, fitting=fitting)
        if safe is None:
            raise
        if debug_errors():
            err.add_note(DEBUG_NOTE)
            raise
    raise InvalidArgument(safe)


def _plain_name(name) -> bool:
    """A name the formula can carry as itself: an identifier that is not a Python keyword (True, None,
    class, ...) and not a name the design reserves."""
    import keyword
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) \
        and name not in ("Intercept", _TARGET)


def _formula_names(names: list[str]) -> list[str]:
    """The feature names as the columns of the formula's frame, so that ``fit_`` (its summary, terms
    and privacy statement) speaks of the user's features; x0, x1, ... when any of them is not a plain
    identifier or they repeat (names only: public)."""
    if names and len(set(names)) == len(names) and all(_plain_name(n) for n in names):
        return list(names)
    return [f"x{j}" for j in range(len(names))]


def _target_name(y, feature_names) -> str:
    """The outcome's name in ``fit_``: a pandas Series' name when it is a plain identifier, else "y";
    the internal name when that clashes with a feature."""
    name = getattr(y, "name", None) if isinstance(y, pd.Series) else None
    name = name if _plain_name(name) else "y"
    return name if name not in set(map(str, feature_names)) else _TARGET


class RepeatedFitWarning(DPRegWarning):
    """A dpreg estimator is fitted repeatedly on the same data (cross-validation, grid search): each
    fit spends its own privacy budget and the spends add up. A :class:`dpreg.errors.DPRegWarning`
    (hence a ``UserWarning``), like every warning dpreg gives."""


def _long_double_lil_as_csr(values):
    """A LIL matrix of a long-double dtype as a CSR matrix of the same dtype, its stored values as they are
    (audit 33: scipy's ``tocsr`` / ``tocoo`` of a LIL matrix pass its values through float64, so that a value
    beyond the double range became inf before it could be saturated, and the fit was refused "Input X
    contains infinity" where a row at 1 fitted). A LIL matrix holds no duplicate entries."""
    from scipy import sparse
    lengths = np.fromiter((len(r) for r in values.rows), dtype=np.int64, count=values.shape[0])
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.fromiter((j for r in values.rows for j in r), dtype=np.int64, count=int(indptr[-1]))
    data = np.array([v for r in values.data for v in r], dtype=values.dtype).reshape(-1)
    return sparse.csr_matrix((data, indices, indptr), shape=values.shape)


def _in_model_selection() -> bool:
    """True when called from scikit-learn's cross-validation or search machinery, from its recursive
    feature elimination (``RFE`` refits the estimator on the same rows once per eliminated feature or step)
    or from a multi-output wrapper (``MultiOutputRegressor``, ``RegressorChain``: one fit per output on the
    same rows); audit 32: both spent eps per fit with no word. Public facts about the caller only."""
    for frame in inspect.stack(context=0)[2:]:
        mod = frame.frame.f_globals.get("__name__", "")
        if mod.startswith(("sklearn.model_selection", "sklearn.feature_selection._rfe", "sklearn.multioutput")):
            return True
    return False


def _reads_the_data(step) -> bool:
    """Whether a scikit-learn step fitted before this estimator learns something from the data without
    privacy (a scaler's means and scales, an encoder's categories found in the data, an imputer's fill
    values). From the step's class and parameters only (public): ``None``, ``"passthrough"`` and
    ``"drop"`` learn nothing; a Pipeline, ColumnTransformer or FeatureUnion as its parts do; an encoder with
    declared categories (and no ``min_frequency`` / ``max_categories``) and PolynomialFeatures (the number
    of features only) learn nothing private; other steps as scikit-learn's ``requires_fit`` tag says
    (False for FunctionTransformer and Normalizer, which compute each row from itself)."""
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return False
    parts = None
    if hasattr(step, "steps") and isinstance(step.steps, list):                     # Pipeline
        parts = [t for _, t in step.steps]
    elif hasattr(step, "transformers") and isinstance(step.transformers, list):  # ColumnTransformer
        parts = [t for _, t, *_ in step.transformers] + [getattr(step, "remainder", "drop")]
    elif hasattr(step, "transformer_list"):                                             # FeatureUnion
        parts = [t for _, t in step.transformer_list]
    if parts is not None:
        return any(_reads_the_data(t) for t in parts)
    name = type(step).__name__
    if name in ("OneHotEncoder", "OrdinalEncoder"):
        params = step.get_params(deep=False)
        return isinstance(params.get("categories", "auto"), str) or params.get("min_frequency") is not None \
            or params.get("max_categories") is not None
    if name == "PolynomialFeatures":
        return False
    if name == "FunctionTransformer":
        # audit 31: with both functions and check_inverse=True (its default) fit() checks them on every
        # tenth row and warns where they are not inverse there: the warning is a function of those rows
        params = step.get_params(deep=False)
        return bool(params.get("check_inverse", True)) and params.get("func") is not None \
            and params.get("inverse_func") is not None
    try:
        return bool(step.__sklearn_tags__().requires_fit)
    except Exception:   # noqa: BLE001 - a step without scikit-learn's tags: counted as reading the data
        return True


def _steps_fitted_before(estimator) -> list[str]:
    """The steps that a Pipeline (or a TransformedTargetRegressor's transformer) fitted on the same data
    before it fits ``estimator``, and that learn from the data without privacy (:func:`_reads_the_data`),
    as "name (Class)". Found from the callers' frames: scikit-learn's ``Pipeline.fit`` fits the steps in
    order, then calls the final estimator's ``fit`` itself, the same object (nested pipelines: each level
    in turn). Reads the pipeline's structure only, never the data."""
    found = []
    target = estimator
    frame = inspect.currentframe()
    try:
        f = frame.f_back if frame is not None else None
        while f is not None:
            module = f.f_globals.get("__name__", "")
            owner = f.f_locals.get("self") if module.startswith("sklearn.") else None
            if owner is not None and module.startswith("sklearn.pipeline") and hasattr(owner, "steps"):
                steps = owner.steps
                if steps and steps[-1][1] is target:
                    found = [f"{name} ({type(t).__name__})" for name, t in steps[:-1] if _reads_the_data(t)] + found
                    target = owner
            elif owner is not None and module.startswith("sklearn.ensemble") \
                    and getattr(owner, "final_estimator_", None) is target and hasattr(owner, "estimators"):
                # audit 31: StackingRegressor / StackingClassifier fit their estimators on the same data and
                # give this one their cross-validated predictions as its features (not private ones)
                found.append(f"the stacked estimators of {type(owner).__name__} (their cross-validated "
                             "predictions, fitted on the same data, are its features)")
                target = owner
            elif owner is not None and module.startswith("sklearn.compose") \
                    and getattr(owner, "regressor_", None) is target and hasattr(owner, "transformer"):
                if owner.transformer is not None and _reads_the_data(owner.transformer):
                    found.append(f"the target's transformer ({type(owner.transformer).__name__})")
                elif getattr(owner, "check_inverse", False) and (
                        owner.transformer is not None or getattr(owner, "func", None) is not None
                        or getattr(owner, "inverse_func", None) is not None):
                    # audit 31: TransformedTargetRegressor(func=..., inverse_func=...) checks the pair on every
                    # tenth row of y (check_inverse=True, its default) and warns where they are not inverse
                    # there: one row of y decided a warning, and the fit was marked private
                    found.append("the target's inverse check (TransformedTargetRegressor's check_inverse=True)")
                target = owner
            f = f.f_back
    finally:
        del frame
    return found


def _bootstrap_ensemble(estimator) -> str | None:
    """The warning text (``_BOOTSTRAP`` / ``_BOOSTED``, naming the ensemble's class) where an ensemble fits
    ``estimator`` on rows drawn with replacement (one row may be fitted several times, and a row fitted k
    times is protected at k times eps only), found from the callers' frames: scikit-learn's
    ``_parallel_build_estimators``, whose ``ensemble`` says ``bootstrap`` (audit 31), and AdaBoost's
    ``_boost``, which always draws rows weighted by the earlier estimators' errors (audit 32); None
    otherwise. Reads the ensemble's class and parameters only."""
    frame = inspect.currentframe()
    try:
        f = frame.f_back if frame is not None else None
        while f is not None:
            module = f.f_globals.get("__name__", "")
            if module.startswith("sklearn.ensemble") and f.f_code.co_name == "_boost" \
                    and f.f_locals.get("estimator") is estimator:
                # audit 32: AdaBoostRegressor fits every estimator without sample_weight support on rows drawn
                # with replacement, weighted by the earlier estimators' errors on the rows themselves (not
                # private); it has no bootstrap parameter
                return _BOOSTED.format(est=type(estimator).__name__, ens=type(f.f_locals.get("self")).__name__)
            if module.startswith("sklearn.ensemble") and f.f_code.co_name == "_parallel_build_estimators":
                ens = f.f_locals.get("ensemble")
                if ens is not None and getattr(ens, "bootstrap", False):
                    return _BOOTSTRAP.format(est=type(estimator).__name__, ens=type(ens).__name__)
                return None
            f = f.f_back
    finally:
        del frame
    return None


_BOOTSTRAP = ("{est} is fitted on a bootstrap sample drawn by {ens} (bootstrap=True): rows drawn with "
              "replacement, so one row of the data may be fitted several times, and a row fitted k times is "
              "protected at k times eps only; this fit is not covered by the privacy statement (marked not "
              "private). Use bootstrap=False (subsamples without replacement)")
_BOOSTED = ("{est} is fitted by {ens} on rows drawn with replacement and weighted by the earlier estimators' "
            "errors on the data (computed without privacy), so one row may be fitted several times and the "
            "rows drawn depend on the other rows; this fit is not covered by the privacy statement (marked "
            "not private). Boosting is not private; fit the estimator once on the data")


def _outside_stacklevel() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the caller of this function) of the first frame outside
    dpreg and scikit-learn: the user's line that fitted the pipeline."""
    frame = inspect.currentframe()
    try:
        f = frame.f_back if frame is not None else None
        level = 1
        while f is not None:
            module = f.f_globals.get("__name__", "")
            if not (module == "dpreg" or module.startswith(("dpreg.", "sklearn."))):
                return level
            f = f.f_back
            level += 1
    finally:
        del frame
    return 2


_FITTED_BEFORE = ("{est} is fitted after {steps}, fitted on the same data without differential privacy: what "
                  "they learned (means and scales, categories, fill values, whether a function and its inverse "
                  "agree on sampled rows) is a non-private function of the data, and it can change every row "
                  "{est} sees, so neither the pipeline nor this fit is covered by the privacy statement "
                  "(marked not private). Declare those parameters from public knowledge instead (e.g. "
                  "FunctionTransformer(lambda X: (X - centre) / scale) with public numbers, "
                  "OneHotEncoder(categories=[[...]])), pass check_inverse=False to a FunctionTransformer or "
                  "TransformedTargetRegressor given a function and its inverse, or leave the features "
                  "unscaled: dpreg takes each feature's declared range in its own units (bounds=)")


class _DPBase(BaseEstimator):
    _family = "gaussian"

    # ---- data -> formula ---------------------------------------------------------------------------
    def _frame(self, X, y=None, *, fitting: bool):
        """scikit-learn's own input validation (messages, sparse matrices made dense, n_features_in_,
        feature_names_in_), then a DataFrame whose columns are the feature names where they can serve
        as formula names (``_formula_names``), else x0, x1, ..."""
        from sklearn.utils.validation import validate_data
        X = _saturated(X)
        if y is not None:
            y = _saturated(y)
        not_numbers = False
        # the training rows' n is public under replace-one neighbours only (scikit-learn's messages name it)
        n_public = fitting and dict(self.options or {}).get("neighbours", "replace_one") == "replace_one"
        try:
            # thirty-first pass (newcomer): a sparse matrix is taken and made dense, as scikit-learn's own
            # linear models take it; OneHotEncoder(categories=[...]), the fixed transform the docs advise
            # in a Pipeline, outputs one by default, and the fit stopped with "Sparse data was passed"
            if fitting:
                X, y = _checked(validate_data, self, X, y, dtype="numeric", ensure_all_finite=True,
                                y_numeric=False, reset=True, name="X or y", n_public=n_public, fitting=True,
                                accept_sparse=("csr", "csc", "coo"))
            else:
                X = _checked(validate_data, self, X, dtype="numeric", ensure_all_finite=True, reset=False,
                             accept_sparse=("csr", "csc", "coo"))
        except ValueError as err:
            if not _quotes_a_value(err):
                raise
            not_numbers = True
        if not_numbers:
            # raised outside the handler: ``from None`` only hid numpy's error, which quotes the value,
            # while keeping it as the refusal's __context__ (twenty-eighth pass)
            raise self._not_numbers_error("X", X)
        from scipy import sparse
        values = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=float)
        names = [str(c) for c in getattr(self, "feature_names_in_", [])] or \
            [f"x{j}" for j in range(values.shape[1])]
        return pd.DataFrame(values, columns=_formula_names(names)), names, y

    def _not_numbers_error(self, what, values):
        """numpy's "could not convert string to float: '<value>'" quotes a data value; this names the
        columns (public: the user's schema) and never a value (data policy, docs/api.md)."""
        where = ""
        if isinstance(values, pd.DataFrame):
            bad = [str(c) for c, t in values.dtypes.items()
                   if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
            where = f" (column(s) {', '.join(repr(c) for c in bad)})" if bad else ""
        hint = ("encode categorical features as numbers first with declared categories, e.g. "
                "OneHotEncoder(categories=[[...]]) in a Pipeline (its default categories='auto' reads "
                "them off the data: not private), or use dpreg.dp_lm / dp_glm with a formula, which "
                "selects the levels privately unless you declare them"
                if what == "X" else "the target of a regression must be numeric")
        return InvalidArgumentType(f"{type(self).__name__}: {what} holds values that are not numbers"
                                   f"{where}; {hint}")

    def _bounds(self, names, columns, target):
        """Declared bounds by the user's feature names (or x0, x1, ...) -> the frame's column names."""
        out = {}
        if isinstance(self.bounds, (tuple, list)) and len(self.bounds) == 2 and \
                not isinstance(self.bounds[0], (tuple, list)):
            declared = {name: tuple(self.bounds) for name in names}   # one range for every feature
        else:
            declared = dict(self.bounds or {})
        known = set(names)
        unknown = [k for k in declared if str(k) not in known]
        if unknown:
            import difflib
            hints = []
            for k in unknown:
                if str(k) in (str(target), "y"):
                    # newcomer review 18: dp_lm's bounds dict (outcome included) reused here was refused
                    # as an unknown feature, without saying where the target's range goes
                    hints.append(f"{k!r} (the target: declare its range with target_bounds=(lower, upper))")
                    continue
                close = difflib.get_close_matches(str(k), list(names), n=1)
                hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise InvalidArgument(f"bounds name unknown feature(s): {', '.join(hints)}")
        for name, column in zip(names, columns):
            if name in declared:
                out[column] = tuple(declared[name])
        if self.target_bounds is not None:
            out[target] = tuple(self.target_bounds)
        return out

    def _ranges_refusal(self, text, names, columns, declared, family):
        """dp_lm's refusal of private ranges at this n and eps, told in this estimator's terms
        (twenty-second pass): the features by the user's names, not the formula's x0, x1, ..., and the
        ranges declared as ``bounds=`` (features) and ``target_bounds=`` (the target), where dp_lm's
        advice ``bounds={'<target>': ...}`` would be refused here. Names and the refusal's public
        numbers only."""
        for name, column in zip(names, columns):
            if name != column:
                text = text.replace(repr(column), repr(name))
        head = text.split(" Or declare the ranges", 1)[0]
        undeclared = [name for name, column in zip(names, columns) if column not in (declared or {})]
        args = []
        if undeclared:
            args.append("bounds={" + ", ".join(f"{name!r}: (lower, upper)" for name in undeclared) + "}")
        if family != "binomial" and self.target_bounds is None:
            args.append("target_bounds=(lower, upper)")
        return (f"{head} Or declare the ranges from public knowledge (documentation, physical limits), e.g. "
                f"{type(self).__name__}({', '.join(args)}): with declared ranges dpreg fits at any n, with "
                "intervals as wide as the privacy noise requires")

    def _check_budget_param(self):
        b = self.budget
        if b is not None and not hasattr(b, "can_spend"):
            raise InvalidArgumentType("budget must be a dpreg.Budget (shared by every fit and clone) or None")

    def _warn_repeated(self):
        if _in_model_selection():
            # newcomer review, twenty-first pass: with a Budget passed, the advice to pass one read as if
            # it had been ignored; say what it has left instead
            if self.budget is None:
                cap = ". Pass budget=dpreg.Budget(total_eps, total_delta) to cap it."
            else:
                shown = getattr(self.budget, "_remaining_shown", None)
                re, rd = shown() if shown is not None else self.budget.remaining
                cap = (f", capped by the Budget you passed (remaining before this fit: eps = {re:.6g}, "
                       f"delta = {rd:.6g}).")
            warnings.warn(
                f"{type(self).__name__} is being fitted repeatedly on the same data (cross-validation, a "
                "parameter search, recursive feature elimination or one fit per output): every "
                f"fit spends eps = {self.eps:g} on the same data, so the total privacy loss is eps times "
                f"the number of fits{cap}",
                RepeatedFitWarning, stacklevel=4)

    def _dp_fit(self, X, y, family):
        from .api import dp_glm, dp_lm
        if y is None:
            raise InvalidArgument(f"{type(self).__name__} requires y to be passed, but the target y is None")
        self._check_budget_param()
        target = _target_name(y, list(X.columns) if isinstance(X, pd.DataFrame) else [])
        df, names, y = self._frame(X, y, fitting=True)
        columns = list(df.columns)
        if target in columns:
            target = _TARGET
        not_numbers = False
        try:
            df[target] = np.asarray(y, dtype=float).ravel()
        except ValueError as err:
            if not _quotes_a_value(err):
                raise
            not_numbers = True
        if not_numbers:
            raise self._not_numbers_error("y", y)     # outside the handler, as in _frame
        n, p = df.shape[0], df.shape[1] - 1 + bool(self.fit_intercept)
        # under add/remove (options={"neighbours": "add_remove"}) n is private: no refusal on it (the
        # sixteenth audit pass; dp_lm fits any n >= 1 there)
        if n <= p and dict(self.options or {}).get("neighbours", "replace_one") == "replace_one":
            raise InvalidArgument(f"n_samples={n} is too small for {p} coefficients: a regression needs more "
                             "rows than coefficients")
        formula = f"{target} ~ " + " + ".join(columns)
        if not self.fit_intercept:
            formula += " - 1"
        self._warn_repeated()
        # thirtieth pass: make_pipeline(StandardScaler(), DPLinearRegression()) fitted silently although the
        # scaler reads the data without privacy
        before = _steps_fitted_before(self)
        bagged = _bootstrap_ensemble(self)
        kw = dict(eps=self.eps, delta=self.delta, method=self.method,
                  bounds=self._bounds(names, columns, target) or None,
                  budget=self.budget, random_state=self.random_state, **dict(self.options or {}))
        from .design.build import SampleTooSmallForRanges
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # the private-range notes of dp_lm speak of its own options (bounds_share), not this estimator's
            warnings.filterwarnings("ignore", message=".*budget for private ranges is small.*")
            refusal = None
            try:
                fit = dp_glm(formula, df, **kw) if family == "binomial" else dp_lm(formula, df, **kw)
            except SampleTooSmallForRanges as exc:
                refusal = self._ranges_refusal(str(exc), names, columns, kw["bounds"], family)
            if refusal is not None:   # outside the handler: the fit's exception chain is not kept
                raise SampleTooSmallForRanges(refusal)
        for w in caught:
            # given again from the caller of fit() (user -> fit -> _dp_fit), not from this module's line;
            # the caller's warning filters apply as usual
            warnings.warn(w.message, stacklevel=3)
        texts = [_FITTED_BEFORE.format(est=type(self).__name__, steps=", ".join(before))] if before else []
        if bagged:
            texts.append(bagged)
        for text in texts:
            warnings.warn(text, PrivacyLeakWarning, stacklevel=_outside_stacklevel())
            fit.privacy.private = False
            if text not in fit.privacy.leaks:
                fit.privacy.leaks.append(text)
        coef = fit.coef
        self.fit_ = fit
        self.privacy_ = fit.privacy
        inter = [t for t in coef.index if t in ("Intercept", "(Intercept)")]
        self.intercept_ = float(coef[inter[0]]) if inter else 0.0
        self.coef_ = np.array([float(coef.get(c, 0.0)) for c in columns])
        return self

    def _linear(self, X):
        check_is_fitted(self, "coef_")
        df, _, _ = self._frame(X, fitting=False)
        # X @ coef_ + intercept_ as scikit-learn's linear models (no clamping: coef_ keeps its meaning); a
        # new row beyond the double range gives +-inf, an underflow 0, with numpy's default error handling
        # whatever the caller's np.seterr and no RuntimeWarning, as DPFit.predict (audit, eighteenth pass)
        with no_numeric_warnings():
            return df.to_numpy() @ self.coef_ + self.intercept_

    def _leak_warning(self):
        warnings.warn("score() is computed on the data you pass, without differential privacy: on the "
                      "private data (e.g. cross-validation folds) it reveals information about them",
                      PrivacyLeakWarning, stacklevel=3)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = True       # made dense (thirty-first pass)
        return tags


def _params_doc(kind):
    return f"""
    Parameters
    ----------
    eps : float, default 1.0
        Privacy budget of one fit (every call of ``fit`` spends it).
    delta : float, default 1e-6
        As in :func:`dpreg.{kind}`.
    method : str, default "auto"
        Estimator, as in :func:`dpreg.{kind}`.
    bounds : dict or (lower, upper), optional
        Declared public ranges {{feature name: (lower, upper)}} (names of a DataFrame's columns, else
        "x0", "x1", ...), or one (lower, upper) for every feature. Undeclared ranges are estimated
        privately from a share of ``eps``; a name that is not a feature is an error.
    target_bounds : (lower, upper), optional
        Declared public range of the target{' (unused: the target is 0/1)' if kind == 'dp_glm' else ''}.
    fit_intercept : bool, default True
    budget : dpreg.Budget, optional
        Shared account every fit (and every clone's fit) draws from: caps the total spend of
        cross-validation and grid search.
    random_state : None or int
        None: fresh secure noise (each fit differs); an int makes fits reproducible (seeded,
        not for release).
    options : dict, optional
        Further options of the method (``**options`` of :func:`dpreg.{kind}`).
    """


class DPLinearRegression(RegressorMixin, _DPBase):
    __doc__ = ("Differentially private linear regression (:func:`dpreg.dp_lm`) as a scikit-learn "
               "regressor.\n" + _params_doc("dp_lm") + """
    In a Pipeline, steps fitted on the data before it (``StandardScaler``, ``SimpleImputer``,
    ``OneHotEncoder()`` with its default ``categories="auto"``) are not private: ``fit`` warns with
    :class:`dpreg.PrivacyLeakWarning` and marks ``privacy_`` not private. Declare such parameters instead
    (``FunctionTransformer`` with public constants, ``OneHotEncoder(categories=[[...]])``) or leave the
    features in their own units with their declared ``bounds``.

    For prediction alone, ``options={"inference": False}`` with ``method="auto"`` fits dpgd (replace-one
    neighbours, the default), whose
    predictions were the most accurate measured on real data (docs/accuracy.md, "Every method on every
    dataset"); ``fit_`` then has no standard errors.

    Attributes
    ----------
    coef_, intercept_ : released coefficients (original units); for ``method="adassp"`` with its ridge
        active, the ridge estimate (``fit_.inference_centre`` is the corrected estimate its intervals are about)
    fit_ : DPFit, the full result (summary, noise-aware intervals, privacy statement); its terms are the
        feature names, and its outcome the name of a pandas Series y (x0, x1, ... and y when there are no
        names or one is not a Python identifier)
    privacy_ : PrivacyStatement of the last fit
    n_features_in_, feature_names_in_ : as in scikit-learn
    """)

    def __init__(self, eps=1.0, delta=1e-6, method="auto", bounds=None, target_bounds=None,
                 fit_intercept=True, budget=None, random_state=None, options=None):
        self.eps = eps
        self.delta = delta
        self.method = method
        self.bounds = bounds
        self.target_bounds = target_bounds
        self.fit_intercept = fit_intercept
        self.budget = budget
        self.random_state = random_state
        self.options = options

    def fit(self, X, y):
        """Fit privately (spends ``eps``; draws from ``budget`` when one is set).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).
        y : array-like of shape (n_samples,)
            Target.

        Returns
        -------
        self
        """
        return self._dp_fit(X, y, "gaussian")

    def predict(self, X):
        """Predictions ``X @ coef_ + intercept_`` (post-processing of the release).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
        """
        return self._linear(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a private fit is noisy and (AdaSSP) adaptively ridge-regularised: on scikit-learn's
        # 200-row check data its training R^2 is below the checks' 0.5 unless eps is huge
        tags.regressor_tags.poor_score = True
        return tags

    def score(self, X, y, sample_weight=None):
        """R^2 on the data you pass: not differentially private (warns with :class:`dpreg.PrivacyLeakWarning`).

        Harmless on held-out public data; on the private data (including cross-validation folds) it
        reveals information about them.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).
        y : array-like of shape (n_samples,)
            True values.
        sample_weight : array-like of shape (n_samples,), optional
            Weights, as in scikit-learn.

        Returns
        -------
        float
        """
        self._leak_warning()
        # scikit-learn's metric checks X and y against each other ("inconsistent numbers of samples:
        # [49, 50]"): told without the counts, as predict's checks
        return _checked(super().score, X, y, sample_weight=sample_weight, name="X, y")


class DPLogisticRegression(ClassifierMixin, _DPBase):
    __doc__ = ("Differentially private logistic regression (:func:`dpreg.dp_glm`) as a scikit-learn "
               "binary classifier.\n" + _params_doc("dp_glm") + """classes : (reference, event) or "data", optional
        The two class labels, public (the second is the event, the "1" of the model). Not needed for a
        bool target or numeric 0/1 labels. ``"data"`` reads them from y, as scikit-learn does: the
        labels are then published without a mechanism and the fit is marked NOT differentially private.

    Attributes
    ----------
    classes_ : the two class labels (the second is the "1" of the logistic model): ``[False, True]`` for a
        bool y, ``[0, 1]`` (in y's dtype) for numeric 0/1 labels, the declared ``classes`` otherwise.
        Never read off y unless ``classes="data"`` (then the fit is marked NOT differentially private).
    coef_, intercept_ : released coefficients on the logit scale
    fit_, privacy_, n_features_in_, feature_names_in_ : as in DPLinearRegression
    """)

    def __init__(self, eps=1.0, delta=1e-6, method="auto", bounds=None, target_bounds=None,
                 fit_intercept=True, budget=None, random_state=None, options=None, classes=None):
        self.eps = eps
        self.delta = delta
        self.method = method
        self.bounds = bounds
        self.target_bounds = target_bounds
        self.fit_intercept = fit_intercept
        self.budget = budget
        self.random_state = random_state
        self.options = options
        self.classes = classes

    def _public_classes(self, yv):
        """(the two class labels, read from the data?). Labels that only the data know (strings, other
        numbers) are data, like a factor's levels (rule: category names found in the data are released
        only by a private selection or with an opt-in that marks the fit not private): they must be
        declared, or read with ``classes="data"``. A bool y or numeric 0/1 labels are public by their
        type, whichever of them occur, so a y where one class is absent fits like any other."""
        from sklearn.utils.multiclass import type_of_target
        if isinstance(self.classes, str) and self.classes == "data":
            kind = type_of_target(yv)
            classes = np.unique(yv)
            if kind != "binary" or classes.size != 2:
                raise InvalidArgument(f"Only binary classification is supported by DPLogisticRegression: it "
                                      f"needs samples of exactly 2 classes; got {classes.size} class(es)")
            return classes, True
        if self.classes is not None:
            declared = list(self.classes) if isinstance(self.classes, (list, tuple, np.ndarray, pd.Index)) else None
            if declared is None or len(declared) != 2 or declared[0] == declared[1]:
                raise InvalidArgument("classes must be two distinct labels [reference, event], or 'data'")
            if not pd.Series(yv.ravel()).isin(declared).all():
                # the label itself is not quoted: it is a value only the data know
                raise InvalidArgument("y holds a label that is not one of the declared classes")
            return np.asarray(declared, dtype=object if any(isinstance(c, str) for c in declared) else None), False
        if yv.dtype.kind == "b":
            return np.array([False, True]), False
        if yv.dtype.kind in "iuf" and np.all((yv == 0) | (yv == 1)):
            return np.array([0, 1], dtype=yv.dtype), False
        raise InvalidArgument("DPLogisticRegression is a binary classifier, and the class labels of y (other than "
                              "bool or 0/1) are data: declare them with classes=[reference, event] "
                              "(public labels; the second is the event), use a bool or 0/1 target, or pass "
                              "classes='data' to read them from y (the fit is then NOT differentially private)")

    def fit(self, X, y):
        """Fit privately (spends ``eps``; draws from ``budget`` when one is set).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).
        y : array-like of shape (n_samples,)
            Two labels: bool, numeric 0/1, or the declared ``classes`` (``classes="data"`` reads them
            from y and marks the fit not private).

        Returns
        -------
        self
        """
        from sklearn.utils.multiclass import check_classification_targets
        if y is None:
            raise InvalidArgument("requires y to be passed, but the target y is None")
        yv = np.asarray(y)
        n_public = dict(self.options or {}).get("neighbours", "replace_one") == "replace_one"
        if isinstance(self.classes, str) and self.classes == "data":
            # scikit-learn's own refusals (the fit is not private), told without values or counts
            _checked(check_classification_targets, yv, name="y", n_public=n_public, fitting=True)
        elif yv.dtype.kind in "fc":
            # a missing or infinite label: scikit-learn's refusal of such values, as for X
            from sklearn.utils import assert_all_finite
            assert_all_finite(yv, input_name="y")
        # public labels are checked before scikit-learn's target check: that one refused a label such as
        # 0.5 or 1e308 with its ValueError ("Unknown label type: continuous") and 2.0 with this
        # InvalidArgument, so the class of a one-row refusal told whether that label was a whole number
        # (eighteenth audit pass); every label outside the public two now gets the same refusal
        classes, from_data = self._public_classes(yv)
        if not from_data:
            # the shape (e.g. a 2-D y); the labels are public here
            _checked(check_classification_targets, yv, name="y", n_public=n_public, fitting=True)
        self.classes_ = classes
        y01 = (yv == classes[1]).astype(float)
        if from_data:
            warnings.warn(_LABELS_FROM_DATA, PrivacyLeakWarning, stacklevel=2)
        self._dp_fit(X, y01, "binomial")
        if from_data:
            # the labels are published without a mechanism: the statement says so (as levels="data")
            self.privacy_.private = False
            if _LABELS_FROM_DATA not in self.privacy_.leaks:
                self.privacy_.leaks.append(_LABELS_FROM_DATA)
        return self

    def decision_function(self, X):
        """Linear predictor (logit scale).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
        """
        return self._linear(X)

    def predict_proba(self, X):
        """Class probabilities from the released coefficients.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        from scipy.special import expit
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """Logarithms of the class probabilities, computed on the log scale (finite where a probability
        rounds to 0 in :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``: log(1 - p) = log_expit(-eta) and log p = log_expit(eta).
        """
        # newcomer review 19: scikit-learn's classifiers have predict_log_proba (soft voting, stacking);
        # np.log(predict_proba) would be -inf (with numpy's divide warning) where 1 - p rounds to 0
        from scipy.special import log_expit
        eta = self.decision_function(X)
        return np.column_stack([log_expit(-eta), log_expit(eta)])

    def predict(self, X):
        """Predicted class labels (probability of the second class >= 0.5).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
        """
        idx = (self.decision_function(X) > 0).astype(int)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False     # logistic regression: binary targets
        return tags

    def score(self, X, y, sample_weight=None):
        """Accuracy on the data you pass: not differentially private (warns with :class:`dpreg.PrivacyLeakWarning`).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Features (a DataFrame's column names are the names ``bounds`` refers to).
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), optional
            Weights, as in scikit-learn.

        Returns
        -------
        float
        """
        self._leak_warning()
        # scikit-learn's metric checks X and y against each other ("inconsistent numbers of samples:
        # [49, 50]"): told without the counts, as predict's checks
        return _checked(super().score, X, y, sample_weight=sample_weight, name="X, y")
