"""Shared test helpers."""
import os
import sys

# The package is installed in editable mode by `make`; this keeps plain `pytest` working from a checkout too.
_HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(_HERE, "..", "python"))
sys.path.insert(0, os.path.join(_HERE, ".."))
