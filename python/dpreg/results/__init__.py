"""Results: DPFit and its Summary (fit.py), number formatting (format.py), table rendering
(tables.py), side-by-side comparison of fits (compare.py). Post-processing of releases only."""


def __getattr__(name):  # lazy, like dpreg/__init__.py
    if name in ("DPFit", "Summary", "NotReleasedError"):
        from . import fit
        return getattr(fit, name)
    if name in ("compare", "Comparison"):
        from . import compare
        return getattr(compare, name)
    raise AttributeError(f"module 'dpreg.results' has no attribute {name!r}")
