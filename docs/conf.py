"""Sphinx configuration of dpreg's documentation site (API reference, API contract, vignettes, notes).

Built by ``make docs`` (called by ``make test``) with ``-W --keep-going -n``: any warning, including a
cross-reference that does not resolve, fails the build.
"""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "python"))   # document this checkout's dpreg
sys.path.insert(0, os.path.join(_HERE, "_ext"))

import dpreg  # noqa: E402

project = "dpreg"
author = "the dpreg developers"
release = version = dpreg.__version__   # the one version number (python/dpreg/_version.py)

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",            # Markdown pages and executed MyST notebooks (the vignettes)
    "dpreg_options",      # per-method option tables generated from the estimators' OPTIONS
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "figures/diamonds-table.md", "**/.ipynb_checkpoints",
                    "vignettes/_build"]
html_theme = "alabaster"
html_title = f"dpreg {release}"
html_static_path: list[str] = []

# -- autodoc / numpydoc -----------------------------------------------------------------------------
autosummary_generate = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"                 # types are written in the numpydoc sections
numpydoc_show_class_members = False        # members are listed by autodoc itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()   # validation lives in tests/test_docs_reference.py

# -- cross-references: nitpicky, with a small ignore list -------------------------------------------
nitpicky = True
intersphinx_mapping: dict = {}   # no network while building: every reference resolves inside the site
# Targets that are not documented objects of this site. Each entry says why it is acceptable.
nitpick_ignore_regex = [
    # standard library, numpy, pandas, scikit-learn and matplotlib names in signatures and See Also:
    # the build runs without network, so their inventories are not fetched
    (r"py:.*", r"(numpy|np|pandas|pd|sklearn|matplotlib|scipy)\..*"),
    (r"py:class", r"(ValueError|TypeError|RuntimeError|UserWarning|RuntimeWarning|Warning|Exception|"
                  r"KeyError|AttributeError|NotImplementedError)"),
    # private base classes (e.g. the shared base of the scikit-learn estimators) are not part of the API;
    # autodoc names them in "Bases:" lines
    (r"py:class", r"dpreg\..*\._\w+"),
]

# -- vignettes (MyST notebooks executed by myst-nb; a failing cell fails the build) -----------------
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
