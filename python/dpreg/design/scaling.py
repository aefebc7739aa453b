"""Row scaling for the sufficient-statistics estimators (the three modes below).

Three modes turn a :class:`~dpreg.design.contract.Design` (original units) into rows with
``||x_i|| <= tau_x`` and an outcome in known units:

* ``"schema"`` (default when every non-intercept column has a public interval): each
  column is centred and scaled into [-1, 1] with its *public* interval, factor main-effect blocks keep
  their 0/1 dummies, and the whole row is divided by the norm budget ``B_bar`` so that every possible
  record has norm <= tau_x. Clipping never bites; the fitted coefficients map back to ordinary lm
  coefficients through ``beta = M theta + m``.
* ``"schema_cells"`` (dp_glm's Newton solver, twenty-second pass): ``"schema"`` with the largest factor
  main-effect block (most columns; the first on a tie) coded by its cells: the intercept column is replaced
  by the indicator of that factor's reference level, so exactly one column of the block's L columns is 1.
  The block then spends 1 of the norm budget instead of the intercept's 1 plus the block's 1
  (``B_bar^2`` one smaller), and the reference cell has a coordinate of its own: its noise no longer
  passes through the intercept and every other level's column (docs/derivations/dpgd_logistic.md,
  section 6). The same span as ``"schema"``: ``beta = M theta`` maps back exactly.
* ``"clip"`` (no public feature ranges): the intercept column is set to ``tau_x/sqrt(2)``
  and the rest of the row is clipped to norm ``tau_x/sqrt(2)`` (whole row to ``tau_x`` without an
  intercept). Coefficients refer to the clipped design; predict() applies the same row transform.
* ``"paper"`` (benchmark replication only): the model matrix as built, each row clipped to
  ``tau_x``, the outcome raw. Write the formula with ``- 1`` (and factors, which formulaic then codes
  with all levels) to reproduce the seed paper's no-intercept one-hot design exactly.

Every constant used here (intervals, centres, widths, B_bar, tau_x) is public: it comes from the
schema and the options, never from the data. The outcome is scaled with its declared interval when
there is one (then ``|y~| <= 1``); otherwise it stays in raw units (c_y = 0, h_y = 1).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument
from .contract import Design, ScaledDesign

MODES = ("schema", "schema_cells", "clip", "paper")


def _intercept_index(public) -> int | None:
    if not public.has_intercept:
        return None
    terms = list(public.terms)
    for name in ("Intercept", "(Intercept)"):
        if name in terms:
            return terms.index(name)
    lo = np.asarray(public.column_lower, float)
    hi = np.asarray(public.column_upper, float)
    ones = np.flatnonzero((lo == 1.0) & (hi == 1.0))
    if ones.size:
        return int(ones[0])
    raise InvalidArgument("the design says it has an intercept but no intercept column was found")


#: rows per block when the model matrix is clamped and scaled (a block of 20 columns: 1.25 MiB)
SCALE_BLOCK_ROWS = 8192


def _clip_rows(X: np.ndarray, bound: float, inplace: bool = False) -> np.ndarray:
    """Scale every row with norm > bound back to norm bound (a copy unless ``inplace``)."""
    sq = np.einsum("ij,ij->i", X, X)
    over = np.flatnonzero(sq > bound * bound)
    out = X if inplace else np.array(X, dtype=float, copy=True)
    if over.size:
        out[over] *= (bound / np.sqrt(sq[over]))[:, None]
    return out


def _outcome_scaling(public, y: np.ndarray, centre: bool):
    """(y_scaled, c_y, h_y, declared). Without an intercept the outcome is not centred either: a
    non-zero centre would be an implicit intercept the coefficients cannot express."""
    interval = public.outcome_interval
    if interval is None:
        return np.asarray(y, float), 0.0, 1.0, False
    lo, hi = float(interval[0]), float(interval[1])
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise InvalidArgument("the outcome interval must be finite with lower < upper")
    if centre:
        c_y, h_y = (lo + hi) / 2.0, (hi - lo) / 2.0
    else:
        c_y, h_y = 0.0, max(abs(lo), abs(hi))
    y_scaled = (np.clip(np.asarray(y, float), lo, hi) - c_y) / h_y
    return y_scaled, c_y, h_y, True


def scale_design(design: Design, *, mode: str = "schema", tau_x: float = 1.0) -> ScaledDesign:
    """Scale ``design`` for AdaSSP / BoostedAdaSSP; the modes are described in the module docstring.

    Returns a :class:`ScaledDesign` whose ``M``, ``m`` map scaled coefficients to original units
    (``beta = M theta + m``) and whose ``extra`` holds the public ``row_transform`` predict() needs in
    clip / paper mode (None in schema mode), the intercept index and whether the outcome was scaled.
    """
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}")
    if not (isinstance(tau_x, (int, float)) and math.isfinite(tau_x) and tau_x > 0):
        raise InvalidArgument("tau_x must be a finite number > 0")
    tau_x = float(tau_x)
    if getattr(design.X, "streamed", False):   # out-of-core rows (design.chunked.StreamedRows): scaled
        return _scale_streamed(design, mode, tau_x)   # batch by batch when read
    public = design.public
    X = np.asarray(design.X, dtype=float)
    n, d = X.shape
    icpt = _intercept_index(public)

    if mode in ("schema", "schema_cells"):
        return _schema_mode(design, X, icpt, tau_x, cells=mode == "schema_cells")

    if mode == "paper":
        y_raw = np.asarray(design.y, float)
        Xs = _clip_rows(X, tau_x)
        row_transform = {"kind": "clip_rows", "clip_norm": tau_x}
        return ScaledDesign(X=Xs, y=y_raw, M=np.eye(d), m=np.zeros(d), centre=np.zeros(d),
                            half_width=np.ones(d), c_y=0.0, h_y=1.0, B_bar=1.0, tau_x=tau_x,
                            extra={"mode": "paper", "intercept_index": icpt, "outcome_scaled": False,
                                   "row_transform": row_transform})

    # clip mode (module docstring)
    y_s, c_y, h_y, declared = _outcome_scaling(public, design.y, centre=icpt is not None)
    if icpt is None:
        Xs = _clip_rows(X, tau_x)
        icpt_value = None
    else:
        icpt_value = tau_x / math.sqrt(2.0)
        others = [j for j in range(d) if j != icpt]
        Xs = np.empty_like(X)
        Xs[:, others] = _clip_rows(X[:, others], icpt_value)
        Xs[:, icpt] = icpt_value
    # prediction = c_y + h_y * x_check' theta; with a constant intercept column the centre folds into
    # the intercept coefficient, so coef = h_y * theta + m and predict = transform(x) @ coef.
    M = h_y * np.eye(d)
    m = np.zeros(d)
    if icpt is not None:
        m[icpt] = c_y / icpt_value
    row_transform = {"kind": "clip", "intercept_index": icpt, "intercept_value": icpt_value,
                     "clip_norm": icpt_value if icpt is not None else tau_x}
    return ScaledDesign(X=Xs, y=y_s, M=M, m=m, centre=np.zeros(d), half_width=np.ones(d), c_y=c_y,
                        h_y=h_y, B_bar=1.0, tau_x=tau_x,
                        extra={"mode": "clip", "intercept_index": icpt, "outcome_scaled": declared,
                               "row_transform": row_transform})


def _cell_block(blocks, icpt):
    """The factor block coded by its cells in ``"schema_cells"`` mode: the one with most columns (public:
    the declared or privately selected levels), the first on a tie; None without intercept or factor."""
    if icpt is None or not blocks:
        return None
    return max(blocks, key=len)


def _schema_mode(design: Design, X: np.ndarray, icpt: int | None, tau_x: float,
                 cells: bool = False) -> ScaledDesign:
    public = design.public
    n, d = X.shape
    lo = np.asarray(public.column_lower, float).copy()
    hi = np.asarray(public.column_upper, float).copy()
    in_block = np.zeros(d, dtype=bool)
    blocks = [list(map(int, b)) for b in (public.factor_blocks or []) if len(b)]
    for b in blocks:
        in_block[b] = True
    if icpt is not None:
        in_block[icpt] = False
    numeric = np.ones(d, dtype=bool)
    numeric[in_block] = False
    if icpt is not None:
        numeric[icpt] = False
    bad = [public.terms[j] for j in np.flatnonzero(numeric)
           if not (np.isfinite(lo[j]) and np.isfinite(hi[j]) and hi[j] > lo[j])]
    if bad:
        raise InvalidArgument("schema mode needs a public interval (lower < upper) for every column; missing or "
                         "degenerate for: " + ", ".join(bad) + ". Declare bounds, or use mode='clip'.")
    centre = np.zeros(d)
    half = np.ones(d)
    if icpt is not None:
        centre[numeric] = (lo[numeric] + hi[numeric]) / 2.0
        half[numeric] = (hi[numeric] - lo[numeric]) / 2.0
    else:   # no intercept: centring would add an implicit intercept
        half[numeric] = np.maximum(np.abs(lo[numeric]), np.abs(hi[numeric]))
    # the norm budget: 1 for the intercept, 1 per numeric/derived column, 1 per factor block; with the
    # cells of one block in place of the intercept, that block and the intercept share one unit
    cell_block = _cell_block(blocks, icpt) if cells else None
    b_sq = (1 if icpt is not None else 0) + int(numeric.sum()) + len(blocks) - (cell_block is not None)
    B_bar = math.sqrt(max(b_sq, 1))

    # one copy of X, then in place: clamp to the public intervals, centre, scale (dummies: [0, 1], c = 0,
    # h = 1; intercept: [1, 1]); rows then have norm <= tau_x by construction
    col_lo = np.where(numeric, lo, 0.0)
    col_hi = np.where(numeric, hi, 1.0)
    if icpt is not None:
        col_lo[icpt] = col_hi[icpt] = 1.0
    # Row block by row block (issue 14: no whole-frame temporaries; the model matrix may be in
    # column order, so a block is read once, while it is in cache): the same elementwise operations
    # on every entry, and the per-row norms of _clip_rows, as on the whole array, so Xs is
    # bit-identical (test: test_schema_scaling_blocked_equals_whole)
    # In place when the design's last reader allows it (Design.x_scratch) and X is already the
    # C-ordered float array a new one would be: no second n x d array, the same values and layout, so
    # the same sums bit for bit (test: test_schema_scaling_in_place_equals_copy)
    in_place = (getattr(design, "x_scratch", False) and X is design.X and X.flags.c_contiguous
                and X.flags.writeable)
    Xs = X if in_place else np.empty((n, d), dtype=float)
    if in_place:
        design.x_scratch = False      # once: X now holds scaled rows
    factor = (tau_x / B_bar) / half
    for start in range(0, n, SCALE_BLOCK_ROWS):
        blk = Xs[start:start + SCALE_BLOCK_ROWS]
        if in_place:
            np.clip(blk, col_lo, col_hi, out=blk)
        else:
            blk[...] = np.clip(np.asarray(X[start:start + SCALE_BLOCK_ROWS], dtype=float), col_lo, col_hi)
        blk -= centre
        if cell_block is not None:   # the reference cell's indicator: 1 - (the block's dummies)
            subtract_block_from_intercept(blk, icpt, cell_block)
        blk *= factor
        _clip_rows(blk, tau_x, inplace=True)     # defensive: a no-op for records inside the schema

    y_s, c_y, h_y, declared = _outcome_scaling(public, design.y, centre=icpt is not None)
    K = h_y * tau_x / B_bar
    M = np.diag(K / half)
    m = np.zeros(d)
    if icpt is not None:
        M[icpt, :] = -K * centre / half
        M[icpt, icpt] = K
        m[icpt] = c_y
        if cell_block is not None:   # x' beta = z' theta with z_icpt = 1 - sum(block): beta_l = K theta_l - K theta_icpt
            M[cell_block, icpt] = -K
    return ScaledDesign(X=Xs, y=y_s, M=M, m=m, centre=centre, half_width=half, c_y=c_y, h_y=h_y,
                        B_bar=B_bar, tau_x=tau_x,
                        extra={"mode": "schema_cells" if cells else "schema", "intercept_index": icpt, "outcome_scaled": declared,
                               "row_transform": None, "n_factor_blocks": len(blocks),
                               "cell_block": None if cell_block is None else list(cell_block)})


def subtract_block_from_intercept(X: np.ndarray, intercept_index: int, block) -> np.ndarray:
    """In place: the intercept column of the scaled rows ``X`` minus the columns ``block`` (one factor's
    dummies): BoostedAdaSSP's cell coding (docs/derivations/adassp_boosted.md §33) and dp_glm's
    "schema_cells" scaling. Row by row, so an in-memory design and a streamed one (each batch as it is
    read, design.chunked.StreamedRows) get the same recoded rows bit for bit. A row keeps its entries or loses its intercept entry: its norm does not
    grow."""
    X[:, intercept_index] -= X[:, list(block)].sum(axis=1)
    return X


def apply_row_transform(X, row_transform) -> np.ndarray:
    """Apply the public row transform recorded in a Release (clip / paper mode) to new model-matrix
    rows ``X`` (original units), so that ``apply_row_transform(X, rt) @ coef`` is the prediction.
    ``row_transform=None`` returns X unchanged (schema mode: coefficients are lm coefficients)."""
    X = np.asarray(X, dtype=float)
    if row_transform is None:
        return X
    kind = row_transform.get("kind")
    if kind == "clip_rows":
        return _clip_rows(X, float(row_transform["clip_norm"]))
    if kind == "clip":
        icpt = row_transform.get("intercept_index")
        if icpt is None:
            return _clip_rows(X, float(row_transform["clip_norm"]))
        value = float(row_transform["intercept_value"])
        others = [j for j in range(X.shape[1]) if j != icpt]
        out = np.empty_like(X)
        out[:, others] = _clip_rows(X[:, others], value)
        out[:, icpt] = value
        return out
    raise InvalidArgument(f"unknown row transform kind {kind!r}")


def _scale_streamed(design, mode, tau_x):
    """``scale_design`` of a streamed design: the public maps (M, m, centres, row transform) from the
    design of the first rows, the rows themselves scaled batch by batch when they are read."""
    rows = design.X
    sd = scale_design(rows.build(rows.head), mode=mode, tau_x=tau_x)
    scaled = rows.scaled(mode, tau_x)
    sd.X = scaled
    sd.y = scaled
    return sd
