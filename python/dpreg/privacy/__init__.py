"""Privacy core: accounting (GDP, zCDP, pure DP), the per-fit ledger, Budget, PrivacyStatement,
sensitivities and mechanisms (the only place random numbers are drawn).

Names are imported lazily so that importing a submodule (e.g. ``privacy.ledger``) stays cheap.
"""
_NAMES = {
    "accounting": ("compose_ledger", "delta_cks", "delta_gdp", "eps_bs", "eps_cks", "eps_from_mu_delta",
                   "log_delta_gdp", "mu_from_eps_delta", "mu_from_rho", "rho_bs", "rho_from_eps_delta_cks",
                   "rho_from_mu", "split_mu"),
    "budget": ("Budget",),
    "counts": ("AboveThreshold", "exponential_mechanism", "noisy_counts", "propose_test_release",
               "report_noisy_max"),
    "ledger": ("Ledger", "LedgerEntry"),
    "mechanisms": ("NoiseSource", "gaussian_mechanism", "laplace_mechanism"),
    "statement": ("PrivacyStatement",),
}
_WHERE = {name: mod for mod, names in _NAMES.items() for name in names}
__all__ = ["AboveThreshold", "Budget", "Ledger", "LedgerEntry", "NoiseSource", "PrivacyStatement", "compose_ledger",
           "delta_cks", "delta_gdp", "eps_bs", "eps_cks", "eps_from_mu_delta", "exponential_mechanism",
           "gaussian_mechanism", "laplace_mechanism", "log_delta_gdp", "mu_from_eps_delta", "mu_from_rho",
           "noisy_counts", "propose_test_release", "report_noisy_max", "rho_bs", "rho_from_eps_delta_cks",
           "rho_from_mu", "split_mu"]


def __getattr__(name):
    if name in _WHERE:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
