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
    """

    def __init__(self, message, privacy=None):
        super().__init__(message)
        self.privacy = privacy


class SampleTooSmall(DPRegError, ValueError):
    """The data are too few for a requested step at this budget (e.g. private ranges); the message says
    which n or eps would work and what to declare instead. Raised before any budget is spent."""


class BudgetExceeded(DPRegError):
    """A fit asked a dpreg.Budget for more (eps, delta) than remains."""


class PrivacyLeakWarning(UserWarning):
    """Something was taken from the data without budget (levels found in data, bounds read off data,
    rows dropped for missing values). The fit's privacy statement records it."""


class PrivacyLeakError(DPRegError):
    """Raised instead of PrivacyLeakWarning when ``strict=True``."""
