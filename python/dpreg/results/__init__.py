"""Results: the fit object DPFit (fit.py; prediction in predict.py, to_dict/from_dict in serialise.py,
the statsmodels names it cannot hold in not_released.py), its Summary (summary.py), number formatting
(format.py), table rendering (tables.py), side-by-side comparison of fits (compare.py).
Post-processing of releases only."""


def __getattr__(name):  # lazy, like dpreg/__init__.py
    if name in ("DPFit", "Summary", "NotReleasedError"):
        from . import fit
        return getattr(fit, name)
    if name in ("compare", "Comparison"):
        from . import compare
        return getattr(compare, name)
    raise AttributeError(f"module 'dpreg.results' has no attribute {name!r}")
