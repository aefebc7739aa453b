"""The package version (the same as pyproject.toml; a test checks it). A module of its own so that
any layer can read it without importing the package's public names."""
__version__ = "0.1.0"
