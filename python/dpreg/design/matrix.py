"""The model matrix of the design builder (formulaic under the public schema) and the public interval of
each model-matrix column (interval arithmetic on the declared or released ranges)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .formula import FORMULA_CONTEXT
from .inputs import OTHER_LEVEL
from .intervals import interval_of, product
from .newdata import DesignError, _pyval, _safe_categories


def _eval_numeric(info, frame):
    import ast as _ast

    from formulaic import model_matrix
    body = info.tree.body
    if isinstance(body, _ast.Name):
        return np.asarray(frame[info.names.get(body.id, body.id)], dtype=float)
    mm = model_matrix(f"{info.expr} - 1", frame, na_action="raise", context=FORMULA_CONTEXT)
    return mm.iloc[:, 0].to_numpy(dtype=float)


def _plain_numeric_matrix(parsed, frame, schema, values, pending=None):
    """Memory (issue 14): when every right-hand term is the intercept or a numeric column as it is, the
    model matrix is filled directly from dpreg's clamped column copies (``values``): formulaic, which
    would copy every column before pandas copies them again into one array, only reads two rows for
    the terms and the spec state. The matrix is the same (formulaic's column for such a term is
    1 * the column, the intercept 1.0). ``pending`` maps the columns still unclamped (the caller's
    own, read-only: ``build._numeric_ranges``) to their ranges: they are clamped on their way into the
    matrix, so no copy of them is ever made, and the other right-hand-only copies are released as
    soon as they are in the matrix: the peak is the matrix plus the outcome's copy, not the copies
    plus the matrix. Returns (X, head model matrix, spec state, the frame the outcome is evaluated
    on), or X = None for any other formula (then nothing was released or clamped)."""
    import math
    pending = pending or {}
    n = frame.shape[0]
    if n < 2:
        return None, None, None, frame
    head = frame.iloc[:2].copy()          # a copy: no view of the rows
    for v, (lo, hi) in pending.items():   # the two rows as clamped (the terms and the spec state do
        if v in head.columns and math.isfinite(lo) and math.isfinite(hi):   # not depend on them)
            head[v] = np.clip(head[v].to_numpy(dtype=float), lo, hi)
    head_df, state = _model_matrix(parsed, head, schema)
    cols = []
    for st in state["structure"]:
        if st["kinds"] == ["intercept"] and st["columns"] == ["Intercept"]:
            cols.append(None)
        elif st["kinds"] == ["numeric"] and len(st["columns"]) == 1 and st["columns"][0] in values \
                and st["factors"] == st["columns"] and st["columns"][0] in frame.columns:
            cols.append(st["columns"][0])
        else:
            return None, None, None, frame
    if list(head_df.columns) != ["Intercept" if c is None else c for c in cols]:
        return None, None, None, frame
    # a missing value: formulaic's own error, from the full path (checked before any copy is released)
    if any(c is not None and np.isnan(values[c]).any() for c in cols):
        return None, None, None, frame
    keep = [c for c in frame.columns if c in parsed.outcome_vars or c not in cols]
    last = {c: j for j, c in enumerate(cols)}
    X = np.empty((n, len(cols)))
    for j, c in enumerate(cols):
        if c is None:
            X[:, j] = 1.0
        elif c in pending and math.isfinite(pending[c][0]) and math.isfinite(pending[c][1]):
            np.clip(values[c], pending[c][0], pending[c][1], out=X[:, j])   # clamped BEFORE transforms
        else:
            X[:, j] = values[c]
        if c is not None and c not in keep and last[c] == j and c in frame.columns:
            # released as soon as it is in the matrix (dpreg's own frame holds the same array, not a
            # copy)
            values.pop(c, None)
            del frame[c]
    return X, head_df, state, frame


def _take_matrix(mm):
    """(X, header): the values of ``mm.to_numpy(dtype=float)`` in a C-ordered (row-major) array, so that
    AdaSSP / BoostedAdaSSP can scale it in place; filled column by column while each of formulaic's
    columns is released (``mm`` is consumed), so the two full-size copies never coexist; ``header``
    is an empty frame with ``mm``'s columns."""
    cols = list(mm.columns)
    header = pd.DataFrame(columns=mm.columns)
    if len(set(cols)) != len(cols):         # duplicate names: take the whole array
        return mm.to_numpy(dtype=float), header
    X = np.empty(mm.shape, dtype=float, order="C")
    for j, c in enumerate(cols):
        X[:, j] = mm[c].to_numpy(dtype=float)
        del mm[c]
    return X, header


def _model_matrix(parsed, frame, schema):
    from formulaic import model_matrix
    failed = None
    try:
        mm = model_matrix(parsed.rhs, frame, na_action="raise", context=FORMULA_CONTEXT)
    except Exception as exc:
        failed = type(exc).__name__
    if failed is not None:
        # raised outside the handler: formulaic's message may quote a data value, and ``from None`` only
        # hid it while keeping it as the refusal's __context__ (twenty-eighth pass)
        raise DesignError(f"the formula could not be evaluated on the data ({failed}); check the "
                          "terms and column types")
    spec = mm.model_spec
    structure = []
    for st in spec.structure:
        facs = list(st.term.factors)
        kinds = []
        for fa in facs:
            enc = spec.encoder_state.get(str(fa.expr))
            kind = "intercept" if str(fa.expr) == "1" else (
                "categorical" if enc is not None and str(enc[0].value) == "categorical" else "numeric")
            kinds.append(kind)
        structure.append({"term": str(st.term), "factors": [str(f.expr) for f in facs], "kinds": kinds,
                          "columns": list(st.columns)})
    cats = {v: [ _pyval(x) for x in vs.levels] for v, vs in schema.variables.items()
            if vs.kind == "categorical" and v in parsed.rhs_vars}
    nums = [v for v in parsed.rhs_vars if v not in cats]
    # selected levels: new values outside the released ones go where the fit's pooled rows went
    pooled = {v: (cats[v].index(OTHER_LEVEL) if vs.pooled == OTHER_LEVEL else 0)
              for v, vs in schema.variables.items() if v in cats and vs.pooled is not None}
    state = {"rhs": parsed.rhs, "lhs": parsed.lhs, "categorical": cats, "numeric": nums,
             "structure": structure, "terms": list(mm.columns), "pooled": pooled}
    return mm, state


def _encoding(info, schema):
    """(lower, upper, one_hot) of the columns a categorical factor (C(x) or C(x, contrast)) can
    produce, from its DECLARED levels only: the factor is coded on a frame holding each level once
    (reduced and full-rank codings), so no data value is read. Treatment coding gives (0, 1, True)."""
    from formulaic import model_matrix
    var = info.variables[0]
    vs = schema.variables.get(var)
    if vs is None or not vs.levels:
        return 0.0, 1.0, True
    frame = pd.DataFrame({var: pd.Categorical.from_codes(np.arange(len(vs.levels)),
                                                         categories=_safe_categories(vs.levels, var))})
    vals = []
    for f in (info.expr, f"{info.expr} - 1"):
        try:
            mm = model_matrix(f, frame, context=FORMULA_CONTEXT)
        except Exception:
            raise DesignError(f"the term {info.expr!r} cannot be coded with the declared levels of {var!r} "
                              "(is the contrast's reference level one of them?)") from None
        vals.append(mm.drop(columns=[c for c in mm.columns if c == "Intercept"]).to_numpy(dtype=float))
    lo = min(0.0, *(float(v.min()) for v in vals if v.size))
    hi = max(1.0, *(float(v.max()) for v in vals if v.size))
    one_hot = all(v.size == 0 or (np.isin(v, (0.0, 1.0)).all() and (v.sum(axis=1) <= 1).all()) for v in vals)
    return lo, hi, bool(one_hot)


def _column_intervals(parsed, X_df, structure, var_iv, encodings=None):
    lower = np.full(X_df.shape[1], np.nan)
    upper = np.full(X_df.shape[1], np.nan)
    col_index = {c: j for j, c in enumerate(X_df.columns)}
    for st in structure:
        iv = (1.0, 1.0)
        for expr, kind in zip(st["factors"], st["kinds"]):
            if kind == "intercept":
                continue
            if kind == "categorical":
                lo_c, hi_c, _ = (encodings or {}).get(expr, (0.0, 1.0, True))
                iv = product(iv, (lo_c, hi_c))
            else:
                info = parsed.factors[expr]
                iv = product(iv, interval_of(info.tree, info.names, var_iv, info.expr))
        for c in st["columns"]:
            lower[col_index[c]], upper[col_index[c]] = iv
    return lower, upper
