"""Entry points for the R package (called through reticulate).

Everything crossing the bridge is a plain Python type (dict / list / str / int / float / bool /
None): reticulate 1.28 cannot convert numpy 2 arrays or pandas frames, and it corrupts logical,
integer and character NA. So the R side sends

* ``columns``: ``{name: [float, ...]}`` - numeric columns as doubles (NaN for NA), and factor
  columns as their 1-based integer codes, as doubles (NaN for NA);
* ``factors``: ``{name: [level, ...]}`` - the declared levels (R ``levels()``) of each factor
  column, in order (first = reference);

and gets back ``{"ok": bool, "value": ..., "error": {"type", "message", "classes", "privacy"} | None,
"warnings": [{"category", "message"}]}``. Functions here never raise: Python errors and warnings
are returned so that R can re-signal them as R conditions with clean messages (messages from the
core never quote data values).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from ._plain import to_plain
from .errors import (
    DEBUG_NOTE,
    PREDICTING,
    READING,
    DataError,
    InvalidArgument,
    InvalidArgumentType,
    data_error_message,
    debug_errors,
    debug_errors_from,
    library_error_report,
)

#: the options of a fit call that are not method hyperparameters (passed by keyword)
_FIT_ARGS = ("eps", "delta", "method", "bounds", "levels", "neighbours", "inference")


def _as_list(x) -> list:
    # reticulate turns a length-1 R vector into a scalar
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _floats_or_none(raw: list, fast: bool = True):
    """``raw`` as a float array (None -> NaN), or None when an entry is no number. The caller refuses
    outside any exception handler, so numpy's / float()'s message, which quotes the value, is neither
    shown nor kept as the refusal's ``__context__``."""
    import numpy as np
    if fast:
        try:  # R sends doubles (NA as NaN): the fast path
            return np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            pass
    try:
        return np.array([np.nan if v is None else float(v) for v in raw], dtype=float)
    except (TypeError, ValueError):
        return None


def _frame(columns: dict, factors: dict | None, integers=()):
    """The pandas frame of R's columns (doubles, NA as NaN; factors as 1-based codes). ``integers``: the
    names of R's integer-typed columns (their type is public), made nullable ``Int64`` columns here, so
    that their privately estimated ranges are snapped to integers as for an integer dtype in Python
    (docs/derivations/quantile_search.md §13)."""
    import numpy as np
    import pandas as pd

    factors = dict(factors or {})
    integers = {str(v) for v in _as_list(integers or [])}
    out = {}
    for name, values in (columns or {}).items():
        raw = _as_list(values)
        vals = _floats_or_none(raw)
        if vals is None:
            # float()'s message would quote the offending value: raised outside the handlers, so that it is
            # not kept as the refusal's __context__ either (``from None`` only hides it; twenty-eighth pass)
            raise InvalidArgumentType(f"column {name!r}: the bridge takes numbers (factors as 1-based codes "
                                      "with their levels)")
        if name in factors:
            levels = [str(v) for v in _as_list(factors[name])]
            codes = np.where(np.isnan(vals), -1, vals - 1).astype(np.int64)
            out[name] = pd.Categorical.from_codes(codes, categories=levels)
        elif name in integers:
            # an R integer column: whole numbers within +-2^31 (NA -> NaN -> <NA>); the type alone decides
            out[name] = pd.array(vals, dtype="Int64")
        else:
            out[name] = vals
    return pd.DataFrame(out)


def _error_classes(exc) -> list[str]:
    """Names of the exception's classes, most specific first, up to (not including) Exception: R
    turns them into condition classes (dpreg_InvalidArgument, dpreg_DPRegError, dpreg_ValueError), so
    R code catching dpreg_ValueError keeps working now that dpreg's errors are DPRegError subclasses."""
    out = []
    for cls in type(exc).__mro__:
        if cls in (Exception, BaseException, object):
            continue
        out.append(cls.__name__)
    return out


def _run(fn, *args, _stage: str | None = READING, **kwargs) -> dict:
    """``fn(*args, **kwargs)`` as the plain dict R reads. A library's exception (not a dpreg error) goes
    back as a DataError naming its type and the stage only (its text may quote a value of the data, and
    R shows the message): the stage it was tagged with (errors.data_stage), else ``_stage``, the stage of
    a bridge function that reads rows from R or a source; ``_stage=None`` for functions that read only
    a fit's public record and the caller's arguments, whose errors keep their text. With
    DPREG_DEBUG_ERRORS=1 the library's own message is sent, with a note that it may contain data."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning)  # numeric reports are data-dependent
        try:
            value = fn(*args, **kwargs)
            error = None
        except Exception as exc:  # noqa: BLE001 - every error goes back to R as a condition
            value = None
            report = library_error_report(exc, _stage)
            if report is not None and not debug_errors():
                error_type, stage = report
                # the same condition R gets for a DataError raised by the core: the library's exception
                # is not referenced from what goes back (its text, its traceback)
                safe = DataError(data_error_message(error_type, stage), error_type=error_type, stage=stage)
                error = {"type": "DataError", "message": str(safe), "classes": _error_classes(safe),
                         "privacy": None}
            else:
                privacy = getattr(exc, "privacy", None)
                message = str(exc) if report is None else f"{type(exc).__name__}: {exc}\n{DEBUG_NOTE}"
                error = {"type": type(exc).__name__, "message": message,
                         "classes": _error_classes(exc),
                         "privacy": to_plain(privacy) if privacy is not None else None}
    return {"ok": error is None, "value": value, "error": error,
            "warnings": [{"category": w.category.__name__, "message": str(w.message)}
                         for w in caught if not _library_warning(w.category)]}


#: warnings of the libraries under the core (numpy, pandas, formulaic, ...) are about our use of
#: them, not about the user's model, and their text may depend on the data: never sent to R
_LIBRARY_MODULES = ("numpy", "pandas", "scipy", "formulaic", "interface_meta", "sklearn", "statsmodels")


def _library_warning(category) -> bool:
    if issubclass(category, (RuntimeWarning, DeprecationWarning, PendingDeprecationWarning, FutureWarning)):
        return True
    module = getattr(category, "__module__", "") or ""
    return module.split(".")[0] in _LIBRARY_MODULES


def _fit_kwargs(options: dict) -> tuple[dict, dict, bool]:
    options = dict(options or {})
    noise_off = bool(options.pop(".noise_off", False))
    kwargs = {k: options.pop(k) for k in _FIT_ARGS if k in options}
    seed = options.pop("seed", None)
    if isinstance(seed, float) and seed.is_integer():     # R's numbers are doubles: 42 arrives as 42.0
        seed = int(seed)
    kwargs["random_state"] = seed
    if isinstance(kwargs.get("bounds"), dict):
        kwargs["bounds"] = {str(k): tuple(float(v) for v in _as_list(b)) for k, b in kwargs["bounds"].items()}
    if isinstance(kwargs.get("levels"), dict):
        kwargs["levels"] = {str(k): [str(v) for v in _as_list(lv)] for k, lv in kwargs["levels"].items()}
    for k in ("eps", "delta"):
        if isinstance(kwargs.get(k), int) and not isinstance(kwargs.get(k), bool):
            kwargs[k] = float(kwargs[k])
    return kwargs, options, noise_off


def _fit_to_plain(api, formula, data, family, kwargs, extra, noise_off) -> dict:
    """One dp_lm / dp_glm fit for R (a data frame or a source), as plain types."""
    fit = api._fit(formula, data, family=family,
                   eps=kwargs.pop("eps", 1.0), delta=kwargs.pop("delta", 1e-6),
                   method=kwargs.pop("method", "auto"), bounds=kwargs.pop("bounds", None),
                   levels=kwargs.pop("levels", None), neighbours=kwargs.pop("neighbours", "replace_one"),
                   inference=kwargs.pop("inference", True), budget=None,
                   random_state=kwargs.pop("random_state", None), options=extra, _noise_off=noise_off)
    d = fit.to_dict()
    # the methods-section text, stored at fit time so that R can print it without Python
    d["privacy_paragraph"] = _privacy_paragraph(fit)
    return _with_json(d)


def _fit(formula: str, columns: dict, factors: dict | None, options: dict, family: str) -> dict:
    from . import api

    options = dict(options or {})
    integers = options.pop(".integer_columns", None)
    kwargs, extra, noise_off = _fit_kwargs(options)
    data = _frame(columns, factors, integers)
    extra = _whole_numbers_as_int(extra, _method_option_defaults(kwargs.get("method", "auto")))
    return _fit_to_plain(api, formula, data, family, kwargs, extra, noise_off)


def _method_option_defaults(method: str) -> dict:
    """The option defaults that tell R's whole numbers meant as integers: the named method's, or under
    ``method="auto"`` (chosen later, from the data's public shape) those of every method, an option
    counting as integer where any method declares an integer default (an int is accepted wherever a
    float is). Without the auto case ``dp_glm(..., T = 30)`` from R was refused ("must be an integer")."""
    from .estimators.registry import METHODS, get_method
    if method != "auto":
        try:
            return {k: o.default for k, o in get_method(method).options.items()}
        except Exception:  # noqa: BLE001 - unknown methods are reported by api._fit itself
            return {}
    defaults: dict = {}
    for spec in METHODS.values():
        for k, o in spec.options.items():
            d = o.default
            if d is None or (isinstance(d, int) and not isinstance(d, bool)) or k not in defaults:
                defaults[k] = d
    return defaults


def _privacy_paragraph(fit) -> str | None:
    p = getattr(fit, "privacy", None)
    if p is None or not callable(getattr(p, "paragraph", None)):
        return None
    return str(p.paragraph())


def _with_json(d: dict) -> dict:
    # the exact dict as JSON travels back unchanged for predict()/confint() (R's list conversion
    # of nested lists is lossy: length-1 lists become scalars, None inside vectors becomes NULL)
    import json
    d = to_plain(d)
    return {"dict": d, "json": json.dumps(d)}


def _load(fit_json):
    import json
    return _from_dict(json.loads(fit_json) if isinstance(fit_json, str) else fit_json)


def r_dp_lm(formula: str, columns: dict, factors: dict | None = None, options: dict | None = None) -> dict:
    """``dpreg.dp_lm`` on a frame built from plain columns; returns ``DPFit.to_dict()``.

    ``options`` holds the keyword arguments of ``dp_lm`` (``eps``, ``delta``, ``method``, ``bounds``,
    ``levels``, ``neighbours``, ``inference``), ``seed`` (-> ``random_state``), data-policy options
    (``na_action``, ``unknown_level``, ``strict``) and method hyperparameters. ``.noise_off`` is an
    internal test hook (NoiseSource's ``_noise_off``), not part of the R package's user interface;
    ``.integer_columns`` names the columns that are R integer vectors (public type; :func:`_frame`).
    """
    return _run(_fit, formula, columns, factors, options, "gaussian")


def r_dp_glm(formula: str, columns: dict, factors: dict | None = None, options: dict | None = None) -> dict:
    """``dpreg.dp_glm`` (family binomial); see :func:`r_dp_lm`."""
    options = dict(options or {})
    family = options.pop("family", "binomial")

    def go():
        if family != "binomial":
            raise InvalidArgument("dp_glm supports family = binomial() (logistic regression); "
                             "use dp_lm() for gaussian")
        return _fit(formula, columns, factors, options, "binomial")
    return _run(go)


def _source_from_r(data):
    """A data source named from R: a character vector of paths / globs of Parquet or CSV files, a
    list ``(dbdir = "file.duckdb", table = "name or query")`` (opened read-only by DuckDB here), or a
    Python object made with reticulate (a DuckDB relation, a Spark DataFrame, an Arrow table...)."""
    from .errors import SourceError
    if isinstance(data, dict) and "dbdir" in data:
        import duckdb
        dbdir, table = str(data["dbdir"]), str(data.get("table") or "")
        if not table:
            raise SourceError("a DuckDB source needs table = the name of a table or view, or a query")
        import os
        if not os.path.exists(dbdir):
            raise SourceError(f"the DuckDB database file {dbdir!r} does not exist; check the path")
        con = failed = None
        try:
            con = duckdb.connect(dbdir, read_only=True)
        except Exception as exc:  # noqa: BLE001 - DuckDB's error on the database file is not kept
            failed = type(exc).__name__
        if failed is not None:    # outside the handler: not kept as the refusal's __context__
            raise SourceError(f"the DuckDB database {dbdir!r} could not be opened ({failed}); close "
                              "other connections that write to it")
        return (con, table)
    if isinstance(data, (list, tuple)):
        items = [str(v) for v in data]
        return items[0] if len(items) == 1 else items
    return data


def _source_schema(data) -> dict:
    from . import sources
    src = sources.open_source(_source_from_r(data))
    import pyarrow as pa
    kinds = {}
    for name, t in src.arrow_types.items():
        if t is None or pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            kinds[name] = "numeric"
        elif pa.types.is_boolean(t):
            kinds[name] = "logical"
        elif name in src.categorical_columns():
            kinds[name] = "factor"
        else:
            kinds[name] = "other"
    return {"names": list(src.names), "kinds": kinds}


def r_source_schema(data) -> dict:
    """Column names and kinds ("numeric", "logical", "factor", "other") of a data source named from
    R (public facts: the schema, never rows), so that R can translate the formula before the fit."""
    return _run(_source_schema, data)


def _fit_source(formula: str, data, options: dict, family: str) -> dict:
    from . import api
    kwargs, extra, noise_off = _fit_kwargs(options)
    extra = _whole_numbers_as_int(extra, _method_option_defaults(kwargs.get("method", "auto")))
    return _fit_to_plain(api, formula, _source_from_r(data), family, kwargs, extra, noise_off)


def r_dp_lm_source(formula: str, data, options: dict | None = None, family: str = "gaussian") -> dict:
    """``dpreg.dp_lm`` / ``dp_glm`` on a data source named from R (see :func:`_source_from_r`): the rows
    never cross to R; the core reads them (streamed or within its row limit, as from Python)."""
    def go():
        if family not in ("gaussian", "binomial"):
            raise InvalidArgument("family must be gaussian or binomial")
        return _fit_source(formula, data, dict(options or {}), family)
    return _run(go)


def r_call(name: str, debug: str | None, /, *args, **kwargs) -> dict:
    """Call the bridge function ``name`` (one of the ``r_*`` functions here) with ``DPREG_DEBUG_ERRORS`` as
    the R session has it now: ``debug`` is R's ``Sys.getenv("DPREG_DEBUG_ERRORS")`` read at the call ("" when
    unset). Python's own environment is a copy taken when Python started, so a ``Sys.setenv()`` (or
    ``Sys.unsetenv()``) after the first call did not reach it (thirtieth pass); this value decides instead,
    for this call only. Value: the called function's dict."""
    fn = globals().get(name) if isinstance(name, str) and name.startswith("r_") and name != "r_call" else None
    if not callable(fn):
        safe = InvalidArgument(f"the bridge has no function {name!r}")
        return {"ok": False, "value": None, "warnings": [],
                "error": {"type": "InvalidArgument", "message": str(safe), "classes": _error_classes(safe),
                          "privacy": None}}
    with debug_errors_from("" if debug is None else debug):
        return fn(*args, **kwargs)


def _from_dict(fit_dict: dict):
    from .results.fit import DPFit
    return DPFit.from_dict(fit_dict)


def _predict(fit_json, columns, factors, interval, level, type_, se_fit=False, clamp=True):
    fit = _load(fit_json)
    data = _frame(columns, factors)
    interval = None if interval in (None, "none") else interval
    out = fit.predict(data, interval=interval, level=float(level), type=type_, clamp=bool(clamp))
    if interval is None:
        res = {"fit": to_plain(list(getattr(out, "values", out)))}
    else:
        res = {"fit": to_plain(list(out["fit"])), "lower": to_plain(list(out["lower"])),
               "upper": to_plain(list(out["upper"]))}
    if se_fit:
        res["se_fit"] = _se_fit(fit, data, type_, clamp, say_missing=interval is None)
    return res


def _se_fit(fit, data, type_, clamp=True, say_missing=False) -> list:
    """Standard errors of the predictions (R's ``se.fit``), post-processing of released values only.

    ``DPFit.predict`` builds the link-scale confidence interval eta +/- z se, so
    se = (upper - lower) / (2 z) recovers the core's se exactly up to rounding (relative error about
    1e-16 |eta| / (z se)); this keeps the one place that computes se (including its conservative
    bound when covariances are not estimated) in the core. For a logistic fit on the response scale
    the delta method gives se * p (1 - p), as R's ``predict.glm(type = "response", se.fit = TRUE)``.
    """
    from scipy import stats
    level = 0.95
    with warnings.catch_warnings(record=True) as caught:   # the extrapolation warning was given above
        warnings.simplefilter("always")
        ci = fit.predict(data, interval="confidence", level=level, type="link", clamp=bool(clamp))
    if say_missing:
        # thirty-first pass (newcomer): se.fit = TRUE alone on a fit without intervals returned NA with no
        # word (interval = "confidence" says why); the same reason, once, naming what was asked
        for w in caught:
            text = str(w.message)
            if text.startswith("intervals are not available for this fit: "):
                # thirty-third pass (newcomer): the interval's own suffix "the interval ends are NA"
                # named what was not asked for; se.fit names what it returns
                reason = text.split(": ", 1)[1].removesuffix("; the interval ends are NA")
                warnings.warn("standard errors of the predictions (se.fit) are not available for this fit: "
                              + reason + "; se.fit is NA", w.category, stacklevel=2)
                break
    z = float(stats.norm.ppf(0.5 + level / 2))
    se = (ci["upper"].to_numpy(float) - ci["lower"].to_numpy(float)) / (2.0 * z)
    if type_ == "response" and getattr(fit, "link", None) == "logit":
        p = stats.logistic.cdf(ci["fit"].to_numpy(float))
        se = se * p * (1.0 - p)
    return to_plain([float(v) for v in se])


def r_predict(fit_json: str, columns: dict, factors: dict | None = None, interval: str = "none",
              level: float = 0.95, type: str = "response", se_fit: bool = False, clamp: bool = True) -> dict:
    """Predictions for new rows from a fit stored as ``to_dict()`` JSON (``DPFit.from_dict``).
    Value: ``{"fit": [...]}`` plus ``"lower"``, ``"upper"`` for confidence/prediction intervals,
    and ``"se_fit"`` (link-scale se, or its delta-method image for logistic ``type="response"``)
    when ``se_fit`` is true. ``clamp`` as in ``DPFit.predict``: new rows are clamped to the fit's public
    ranges (True) or extrapolated (False)."""
    return _run(_predict, fit_json, columns, factors, interval, level, type, bool(se_fit), bool(clamp),
                _stage=PREDICTING)


def _conf_int(fit_json, level):
    ci = _load(fit_json)._conf_int(level=float(level))   # R warns in confint()
    return {"lower": to_plain(list(ci["lower"])), "upper": to_plain(list(ci["upper"]))}


def r_conf_int(fit_json: str, level: float = 0.95) -> dict:
    """Noise-aware confidence intervals at ``level`` (``DPFit.conf_int``), as two lists."""
    return _run(_conf_int, fit_json, level, _stage=None)


def _wald_test(fit_json, rows, rhs):
    import numpy as np

    R = np.array([[float(v) for v in _as_list(row)] for row in _as_list(rows)], dtype=float)
    q = np.array([float(v) for v in _as_list(rhs)], dtype=float)
    return to_plain(_load(fit_json).wald_test((R, q)))


def r_wald_test(fit_json: str, rows, rhs) -> dict:
    """``DPFit.wald_test((R, q))`` of a fit stored as ``to_dict()`` JSON: the joint test of the linear
    hypotheses R b = q (rows of R as lists, one entry per coefficient), by the fit's own rule (the
    chi-square, or on fits with asymmetric intervals Bonferroni over the rows' side-of-q z tests, with
    the combinations of §28 on AdaSSP). Value: ``statistic``, ``df``, ``p_value``, ``note``, ``rule``.
    Post-processing of the released values; for R's ``car::linearHypothesis()``."""
    return _run(_wald_test, fit_json, rows, rhs, _stage=None)


def _model_matrix(fit_json, columns, factors):
    fit = _load(fit_json)
    X, _ = fit._new_model_matrix(_frame(columns, factors))
    return {"rows": to_plain([[float(v) for v in row] for row in X]), "terms": list(fit.terms)}


def r_model_matrix(fit_json: str, columns: dict, factors: dict | None = None) -> dict:
    """The model matrix of new rows as the fit's public design builds it (the matrix whose
    product with the coefficients is the linear predictor of ``predict``): ``{"rows": [[...]],
    "terms": [...]}``. Uses only the fit's public design and the new rows given."""
    return _run(_model_matrix, fit_json, columns, factors, _stage=PREDICTING)


def _core_spelling(expr: str) -> str:
    """``expr`` as the core's formula parser names the term: Python's ``ast.unparse`` of the code
    (numbers in Python's repr, ``1e-05`` and ``100000.0``; parentheses where Python needs them), the
    back-quoted column names kept as written. An expression that is not Python code comes back as is."""
    import ast

    from .design.formula import _BACKTICK

    names: dict[str, str] = {}

    def repl(m):
        key = f"__dpreg_col{len(names)}__"
        names[key] = m.group(0)
        return key
    try:
        out = ast.unparse(ast.parse(_BACKTICK.sub(repl, expr), mode="eval")).replace("\n", " ")
    except (SyntaxError, ValueError):
        return expr
    for key, name in names.items():
        out = out.replace(key, name)
    return out


def r_core_spelling(exprs) -> dict:
    """The core's names of the terms R wrote (``I(x > 0.00001)`` -> ``I(x > 1e-05)``), in order: R
    keys its coefficient labels by them, so that the label is R's deparse of what the user typed
    whatever spelling of a number R's translation sent. Reads no data."""
    return _run(lambda: [_core_spelling(str(e)) for e in _as_list(exprs)], _stage=None)


def r_privacy_paragraph(fit_json: str) -> dict:
    """The methods-section paragraph (``PrivacyStatement.paragraph()``) of a fit stored as
    ``to_dict()`` JSON; for fits whose record does not carry ``privacy_paragraph`` yet."""
    return _run(lambda: _privacy_paragraph(_load(fit_json)), _stage=None)


_COMPARE_FORMATS = ("data.frame", "text", "markdown", "latex", "html")


def _compare(fit_jsons, names, term_labels, fmt, options):
    from .results.compare import compare

    if fmt not in _COMPARE_FORMATS:
        raise InvalidArgument(f"format must be one of {', '.join(_COMPARE_FORMATS)}")
    fits = [_load(j) for j in _as_list(fit_jsons)]
    names = None if names is None else [str(n) for n in _as_list(names)]
    options = dict(options or {})
    kwargs = {}
    if options.get("digits") is not None:
        kwargs["digits"] = int(options["digits"])
    if options.get("show_stars") is not None:
        kwargs["show_stars"] = bool(options["show_stars"])
    table = compare(fits, names=names, **kwargs)
    # R users know the coefficients by lm()'s names ("factor(g)b", "(Intercept)"): relabel the
    # core's term names (labels only; the numbers are the released ones)
    labels = {}
    for one in _as_list(term_labels):
        for core, r_name in (one or {}).items():
            labels.setdefault(str(core), str(r_name))
    if labels:
        new = [labels.get(t, t) for t in table.terms]
        if len(set(new)) == len(new):
            mapping = dict(zip(table.terms, new))
            table.terms = new
            for frame in (table.estimates, table.std_errors, table.p_values):
                frame.rename(index=mapping, inplace=True)
    headers, rows = table.rows()
    if fmt == "latex":
        text = table.to_latex(caption=options.get("caption", "DP regression fits"),
                              label=options.get("label"))
    elif fmt == "markdown":
        text = table.to_markdown()
    elif fmt == "html":
        text = table.to_html()
    elif fmt == "text":
        text = str(table)
    else:
        text = None
    return to_plain({"headers": list(headers), "rows": [list(r) for r in rows], "notes": table.notes(),
                   "n_footer": table.N_FOOTER, "terms": list(table.terms), "names": list(table.names),
                   "estimates": [list(map(float, table.estimates[n])) for n in table.names],
                   "std_errors": [list(map(float, table.std_errors[n])) for n in table.names],
                   "text": text})


def r_compare(fit_jsons, names=None, term_labels=None, format: str = "data.frame",
              options: dict | None = None) -> dict:
    """``dpreg.compare`` of fits stored as ``to_dict()`` JSON (rebuilt with ``DPFit.from_dict``).

    ``term_labels``: per fit, ``{core term: R name}`` (the R package's coefficient names);
    ``format``: ``"data.frame"`` (cells only), ``"text"``, ``"markdown"``, ``"latex"`` (booktabs) or
    ``"html"``; ``options``: ``digits``, ``show_stars``, and for LaTeX ``caption``, ``label``.
    Value: ``headers``, ``rows`` (formatted cells), ``notes``, ``n_footer``, ``terms``, ``names``,
    numeric ``estimates`` / ``std_errors`` (one list per fit, aligned with ``terms``; None = not
    available) and ``text`` (the rendered table, None for ``"data.frame"``).
    """
    return _run(_compare, fit_jsons, names, term_labels, format, options, _stage=None)


def _estimate(kind: str, x, q, options: dict):
    import dpreg

    options = dict(options or {})
    seed = options.pop("seed", None)
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    if "bounds" in options and options["bounds"] is not None:
        options["bounds"] = tuple(None if v is None else float(v) for v in _as_list(options["bounds"]))
    if kind == "quantile" and ("lower" in options or "upper" in options):
        # the R wrapper's lower=/upper= are dp_quantile's bounds=(lower, upper) (None: not declared)
        lo, hi = options.pop("lower", None), options.pop("upper", None)
        if options.get("bounds") is None:
            options["bounds"] = (None if lo is None else float(lo), None if hi is None else float(hi))
    if options.pop(".source", False):
        values = _source_from_r(x)       # files / DuckDB / a Python object: the core reads the column
    else:
        values = _floats_or_none(_as_list(x), fast=False)
        if values is None:   # float()'s message would quote the offending value: not kept (as above)
            raise InvalidArgumentType("x must be a numeric vector")
    fn = dpreg.dp_mean if kind == "mean" else dpreg.dp_quantile
    options = _whole_numbers_as_int(options, _signature_defaults(fn))
    if kind == "mean":
        est = dpreg.dp_mean(values, random_state=seed, **options)
    else:
        # several levels arrive as a list (released jointly from one budget), one as a number
        levels = [float(v) for v in q] if isinstance(q, (list, tuple)) else float(q)
        est = dpreg.dp_quantile(values, levels, random_state=seed, **options)
    return to_plain(est.to_dict())


def r_dp_mean(x, options: dict | None = None) -> dict:
    """``dpreg.dp_mean`` of a numeric vector; value is ``DPEstimate.to_dict()``."""
    return _run(_estimate, "mean", x, None, options)


def r_dp_quantile(x, q: float, options: dict | None = None) -> dict:
    """``dpreg.dp_quantile`` of a numeric vector; value is ``DPEstimate.to_dict()``."""
    return _run(_estimate, "quantile", x, q, options)


def _estimate_conf_int(kind: str, estimate, std_error, facts: dict, level: float) -> dict:
    from .results.estimate import DPEstimate
    est = DPEstimate(estimate=estimate, std_error=std_error, privacy=None, facts=dict(facts or {}),
                     kind=kind)
    ci = est.conf_int(level=float(level))
    return {"lower": [float(v) for v in ci["lower"]], "upper": [float(v) for v in ci["upper"]]}


def r_estimate_conf_int(kind: str, estimate, std_error, facts: dict, level: float) -> dict:
    """``DPEstimate.conf_int(level)`` of an estimate R holds as plain values (its released facts):
    dp_mean's interval at another level from its released components; dp_quantile's ends were
    released at one level, so another level is refused (InvalidArgument)."""
    return _run(_estimate_conf_int, kind, estimate, std_error, facts, level, _stage=None)


def _whole_numbers_as_int(options: dict, defaults: dict) -> dict:
    # R numbers are doubles: 10 arrives as 10.0; options whose default is an int get an int back
    out = dict(options)
    for k, v in out.items():
        d = defaults.get(k)
        # a default of None marks an option without a fixed type (e.g. the sparsity s): a whole
        # number from R is then meant as an integer too (an int is accepted wherever a float is)
        int_like = d is None or (isinstance(d, int) and not isinstance(d, bool))
        if k in defaults and int_like and isinstance(v, float) and v.is_integer():
            out[k] = int(v)
    return out


def _signature_defaults(fn) -> dict:
    import inspect
    return {k: p.default for k, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty}


def core_info() -> dict[str, Any]:
    """Version facts for the R package's diagnostics."""
    import dpreg
    return {"version": dpreg.__version__,
            "has_fit": _has("dpreg.results.fit"), "has_dp_glm": _has("dpreg.estimators.dpgd"),
            "has_dp_mean": _has("dpreg.univariate")}


def _has(module: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _isfinite(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)
