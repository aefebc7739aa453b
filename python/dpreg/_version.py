"""The package version, written only here (pyproject.toml reads it; tests/test_version_sync.py checks
that the R package carries the same one). A module of its own so that
any layer can read it without importing the package's public names."""
__version__ = "0.1.0"
