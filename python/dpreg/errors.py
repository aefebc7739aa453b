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


# ---- exceptions of the libraries under dpreg (privacy rule 1 on error messages) --------------------------

#: set to 1 to see a library's own exception where dpreg would raise a :class:`DataError` (debugging only:
#: its message may quote values of the data, so it must not be shared)
DEBUG_ERRORS_ENV = "DPREG_DEBUG_ERRORS"

#: the stages named by a :class:`DataError` (public: where in dpreg the library raised)
READING, DESIGN, FITTING, PREDICTING = "reading the data", "building the design", "fitting", "predicting"

#: the note added to a library's exception re-raised under DPREG_DEBUG_ERRORS=1
DEBUG_NOTE = (f"dpreg: {DEBUG_ERRORS_ENV}=1 is set, so this is the library's own exception, shown as raised: "
              "its message may contain values of the private data; do not publish or share it")


class DataError(DPRegError, ValueError):
    """A library under dpreg (numpy, pandas, formulaic, scipy, DuckDB, pyarrow, Spark) raised while dpreg
    was reading the data, building the design, fitting or predicting, and dpreg has no refusal of its own
    for the case. The library's message may quote a value, a row number or a count of the data, so this
    names only the exception's type (``error_type``) and the stage (``stage``); the original is not kept
    (no ``__cause__`` or ``__context__``). With the environment variable ``DPREG_DEBUG_ERRORS=1`` the
    original is raised instead, with a note that its message may contain data. Also a ``ValueError``.

    Parameters
    ----------
    message : str
        The text (see ``dpreg.errors.data_error_message``).
    error_type : str, optional
        The name of the library exception's class.
    stage : str, optional
        "reading the data", "building the design", "fitting" or "predicting".
    """

    def __init__(self, message, *, error_type=None, stage=None):
        super().__init__(message)
        self.error_type = error_type
        self.stage = stage

    def __reduce__(self):   # pickling (the R bridge, Spark) keeps the class and its public fields
        return (_data_error, (str(self), self.error_type, self.stage))


def _data_error(message, error_type, stage):
    return DataError(message, error_type=error_type, stage=stage)


def data_error_message(error_type: str, stage: str) -> str:
    """The text of a :class:`DataError`: the exception's type and the stage, and how to see the original."""
    return (f"{error_type} raised by a library under dpreg while {stage}. Its message is not shown: it may "
            "quote values of the private data (a cell, a row number or a count). Check the data's column "
            f"types and values; to see the original exception, rerun with the environment variable "
            f"{DEBUG_ERRORS_ENV}=1 (its message may then contain data values: do not share it)")


def debug_flag(value) -> bool:
    """Whether a value of DPREG_DEBUG_ERRORS ("1", "true", "yes", any case) asks for the originals."""
    return str(value or "").strip().lower() in ("1", "true", "yes")


#: DPREG_DEBUG_ERRORS as the caller's process sees it now, where that is not this Python's environment: the
#: R package reads Sys.getenv() at each call and passes it (Python's os.environ is a copy taken when
#: Python started, so Sys.setenv() after that did not reach it). None: read os.environ.
_debug_override = None


def debug_errors() -> bool:
    """Whether DPREG_DEBUG_ERRORS=1 asks for libraries' own exceptions (debugging): the value the R package
    passed with the current call (:func:`debug_errors_from`), else this process's environment."""
    import os
    override = _debug_override.get() if _debug_override is not None else None
    if override is not None:
        return override
    return debug_flag(os.environ.get(DEBUG_ERRORS_ENV))


class debug_errors_from:   # noqa: N801 - a context manager, named like contextlib's
    """``with debug_errors_from(value): ...``: :func:`debug_errors` answers from ``value`` (the caller's
    DPREG_DEBUG_ERRORS, e.g. R's ``Sys.getenv()`` at the call) inside the block, whatever os.environ
    says; ``value=None`` leaves os.environ in charge."""

    def __init__(self, value):
        self.value = None if value is None else debug_flag(value)
        self._token = None

    def __enter__(self):
        global _debug_override
        if _debug_override is None:
            import contextvars
            _debug_override = contextvars.ContextVar("dpreg_debug_errors", default=None)
        self._token = _debug_override.set(self.value)
        return self

    def __exit__(self, exc_type, exc, tb):
        _debug_override.reset(self._token)
        return False


class data_stage:   # noqa: N801 - used as a context manager, like contextlib's
    """``with data_stage(READING): ...``: an exception other than a dpreg error leaving the block is
    tagged with the stage (the innermost block's), which the public entry points turn into a
    :class:`DataError` (:func:`guard_library_errors`). The exception itself passes on unchanged."""

    def __init__(self, stage: str):
        self.stage = stage

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and isinstance(exc, Exception) and not isinstance(exc, DPRegError) \
                and getattr(exc, "_dpreg_stage", None) is None:
            import contextlib
            with contextlib.suppress(Exception):   # an exception without attributes: not tagged
                exc._dpreg_stage = self.stage
        return False


def stage_of(exc) -> str | None:
    """The stage an exception (or one it keeps in its chain) was tagged with, else None."""
    seen = []
    while exc is not None and not any(exc is s for s in seen):
        stage = getattr(exc, "_dpreg_stage", None)
        if stage is not None:
            return stage
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return None


def library_error_report(exc, default_stage=None):
    """(error_type, stage) of a library exception to be replaced by a :class:`DataError`, or None for one
    that passes unchanged: a dpreg error, or an exception raised outside every data stage when no
    ``default_stage`` is given (the boundary: arguments are checked before the data are touched)."""
    if isinstance(exc, DPRegError) or not isinstance(exc, Exception):
        return None
    stage = stage_of(exc) or default_stage
    if stage is None:
        return None
    return type(exc).__name__, stage


class library_errors:   # noqa: N801 - a context manager, named like contextlib's
    """The guard of a public entry point, written in its body (no extra frame: the warnings' stacklevel
    still reaches the caller)::

        guard = library_errors()
        with guard:
            return _fit(...)
        guard.raise_data_error()

    A library exception raised while the data were touched (tagged by :class:`data_stage`, or any
    exception other than a dpreg error when ``default_stage`` is given) is suppressed by the ``with``
    and :meth:`raise_data_error`, after it, raises a :class:`DataError` naming its type and the stage,
    outside any handler (so without ``__context__``); nothing of the library's exception is kept. Under
    DPREG_DEBUG_ERRORS=1 the original propagates with :data:`DEBUG_NOTE`. dpreg's own errors, and
    exceptions outside every stage (arguments), propagate unchanged."""

    def __init__(self, default_stage=None):
        self.default_stage = default_stage
        self.report = None

    def __enter__(self):
        self.report = None
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            return False
        report = library_error_report(exc, self.default_stage)
        if report is None:
            return False
        if debug_errors():
            if DEBUG_NOTE not in (getattr(exc, "__notes__", None) or ()):
                exc.add_note(DEBUG_NOTE)
            return False
        self.report = report     # names only: the exception itself is not kept
        return True

    def raise_data_error(self):
        """Raise the DataError of the suppressed exception (call it after the ``with`` block)."""
        if self.report is None:
            raise InternalError("library_errors: no exception was suppressed")
        error_type, stage = self.report
        raise DataError(data_error_message(error_type, stage), error_type=error_type, stage=stage)


def guard_library_errors(default_stage=None, *, extra=None):
    """Decorator form of :class:`library_errors` (one frame: the function's own warnings count it in
    their stacklevel, as they counted ``_numeric.without_numeric_warnings``; ``extra``, a context
    manager factory such as ``_numeric.no_numeric_warnings``, runs in the same frame). A call that does
    not fit the signature (a misspelt keyword) raises Python's own TypeError, outside the guard."""
    import functools
    import inspect

    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            try:
                signature.bind(*args, **kwargs)
                fits = True
            except TypeError:
                fits = False
            if not fits:
                return fn(*args, **kwargs)      # Python's TypeError for the call, before the body runs
            guard = library_errors(default_stage)
            with guard:
                if extra is None:
                    return fn(*args, **kwargs)
                with extra():
                    return fn(*args, **kwargs)
            guard.raise_data_error()
        return guarded
    return wrap
