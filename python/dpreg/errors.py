"""dpreg's own exceptions and warnings.

Messages raised from code that has seen the data must never quote a data value: they name columns,
options and public quantities only.
"""


class DPRegError(Exception):
    """Base class of dpreg's own exceptions."""


class EstimationFailed(DPRegError):
    """A mechanism declined to release an estimate (e.g. a propose-test-release check failed).

    The budget of the attempt is spent: ``privacy`` carries the PrivacyStatement of what was spent.
    The message never says which internal step failed or why in data terms.

    Parameters
    ----------
    message : str
        What happened and what to change.
    privacy : dpreg.PrivacyStatement, optional
        What the attempt spent.
    """

    def __init__(self, message, privacy=None):
        super().__init__(message)
        self.privacy = privacy


class SampleTooSmall(DPRegError, ValueError):
    """The data are too few for a requested step at this budget (e.g. private ranges); the message says
    which n or eps would work and what to declare instead. Raised before any budget is spent."""


class BudgetExceeded(DPRegError):
    """A fit asked a dpreg.Budget for more (eps, delta) than remains."""


class DPRegWarning(UserWarning):
    """Base class of dpreg's own warnings. A fit emits each of its warnings once, as a Python warning
    at fit time, and lists the same ones in its summary."""


class ConvergenceWarning(DPRegWarning):
    """An iterative method may not have converged within its iteration budget: the estimate may
    carry optimisation error on top of the privacy noise."""


class AccuracyWarning(DPRegWarning):
    """The fit is valid (the privacy claim holds) but its accuracy or its intervals are degraded,
    e.g. by heavy clipping, a repaired noisy matrix, or a budget too small for the design."""


class RangeWarning(DPRegWarning):
    """New data given to ``predict`` lie outside the public ranges the fit was made with: they are
    clamped to those ranges (as the training rows were), or extrapolated with ``clamp=False``. Also a
    value outside a factor's privately selected levels: it is predicted at the level that holds the fit's
    rows of unreleased values (the reference level, or ``(other)``), as those rows were."""


class PrivacyLeakWarning(DPRegWarning):
    """Something was taken from the data without budget (levels found in data, bounds read off data,
    rows dropped for missing values). The fit's privacy statement records it."""


class Diagnostic(str):
    """A diagnostic sentence of a fit (a ``str``) tagged with the warning class it is emitted as.

    ``category=None`` marks an informational note: listed under "Notes" in the summary, never emitted
    as a Python warning (e.g. "the ridge penalty was active", which is the normal state of a fit with
    factor dummies and nothing a user has to act on). Plain strings in a fit's warnings count as
    :class:`AccuracyWarning`."""

    category: type | None

    def __new__(cls, text, category=AccuracyWarning):
        obj = super().__new__(cls, text)
        obj.category = category
        return obj

    def __reduce__(self):   # pickling / copy keep the tag
        return (Diagnostic, (str(self), self.category))


def diagnostic_category(text):
    """Warning class of one diagnostic text (None for a note)."""
    return getattr(text, "category", AccuracyWarning)


def emitted(texts):
    """The diagnostics that are warnings (not notes), each once, in order."""
    seen, out = set(), []
    for t in texts:
        cat = diagnostic_category(t)
        if cat is not None and (cat, str(t)) not in seen:
            seen.add((cat, str(t)))
            out.append(t)
    return out


class PrivacyLeakError(DPRegError):
    """Raised instead of PrivacyLeakWarning when ``strict=True``."""


class InvalidArgument(DPRegError, ValueError):
    """An argument or option has a value dpreg refuses (outside its valid range, inconsistent with
    the method or with public facts such as n). Also a ``ValueError``, so ``except ValueError`` code
    keeps working. The message names the argument, the valid range and what to change."""


class InvalidArgumentType(DPRegError, TypeError, ValueError):
    """An argument has a type dpreg cannot use (e.g. a formula that is not a string, eps = "1"). Also a
    ``TypeError``, and a ``ValueError`` (what some of these checks raised before)."""


class DeltaTooLarge(InvalidArgument):
    """delta >= 1/n under replace-one neighbours: such a delta permits a mechanism that publishes one
    record outright, so it is refused unless ``allow_large_delta=True`` is passed explicitly (the
    privacy statement then says so)."""


class MethodOutsideRegime(InvalidArgument):
    """The chosen method is outside the regime where it gives a usable answer, decided from public facts
    only (n, the model matrix's columns and factor blocks, eps, delta), before any budget is spent. The
    message names the condition and what would work (another method, or the method's opt-in
    ``allow_outside_regime=True``, which fits anyway and says so in a warning)."""


class InternalError(DPRegError, RuntimeError):
    """An invariant of dpreg itself failed (a bug, never a property of the user's data or arguments),
    e.g. a ledger that composes to more than the request. Also a ``RuntimeError``."""


class DesignError(DPRegError, ValueError):
    """Bad data or schema for the design (message names columns/options, never values). A
    :class:`dpreg.DPRegError` and, as before, a ``ValueError``. Defined here (also importable as
    ``dpreg.design.build.DesignError``) because data sources raise it too, below the design layer."""


class SourceError(DPRegError, ValueError):
    """A data source cannot be read as given (missing path, corrupt file, missing column, types that
    change between files, no running Spark session...). Raised before any budget is spent. Also
    importable as ``dpreg.sources.SourceError`` (where it was defined before)."""
