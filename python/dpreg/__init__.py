"""dpreg: differentially private linear regression with noise-aware inference."""
from ._version import __version__  # noqa: F401
from .errors import (  # noqa: F401
    AccuracyWarning,
    BudgetExceeded,
    ConvergenceWarning,
    DPRegError,
    DPRegWarning,
    EstimationFailed,
    PrivacyLeakWarning,
    RangeWarning,
)


def __getattr__(name):  # lazy: keeps `import dpreg` cheap and lets modules land independently
    if name in ("dp_lm", "dp_glm"):
        from . import api
        return getattr(api, name)
    if name in ("dp_mean", "dp_quantile"):
        from . import univariate
        return getattr(univariate, name)
    if name == "Budget":
        from .privacy.budget import Budget
        return Budget
    if name in ("DPFit", "Summary"):
        from .results import fit
        return getattr(fit, name)
    if name == "DPEstimate":
        from .results.estimate import DPEstimate
        return DPEstimate
    if name == "PrivacyStatement":
        from .privacy.statement import PrivacyStatement
        return PrivacyStatement
    if name == "plot_coef":
        from .results.plots import coef_plot
        return coef_plot
    if name == "set_progress":
        from ._progress import set_progress
        return set_progress
    if name == "compare":
        from .results.compare import compare
        return compare
    raise AttributeError(f"module 'dpreg' has no attribute {name!r}")


__all__ = ["dp_lm", "dp_glm", "dp_mean", "dp_quantile", "Budget", "DPFit", "DPEstimate", "Summary",
           "PrivacyStatement", "PrivacyLeakWarning", "DPRegWarning", "ConvergenceWarning", "AccuracyWarning", "RangeWarning",
           "DPRegError", "EstimationFailed", "BudgetExceeded", "compare", "plot_coef", "set_progress"]
