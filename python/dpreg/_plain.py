"""The one converter to plain Python types (dict, list, str, int, float, bool, None), used wherever dpreg
hands values to JSON, to R (through the bridge) or to a ``to_dict()``."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import InvalidArgument


def to_plain(obj: Any, *, nonfinite: str = "none") -> Any:
    """Recursively convert ``obj`` to dict/list/str/int/float/bool/None.

    numpy scalars and arrays become Python numbers and (nested) lists; tuples and sets become lists;
    dict keys become strings; objects with ``to_dict()`` are converted through it, other objects
    with ``tolist()`` through that, anything else becomes its ``str()``.

    ``nonfinite`` says what NaN and +/-inf become: ``"none"`` (the default) turns them into None, which
    is what JSON (no NaN) and R (None -> NULL/NA through the bridge) need; ``"keep"`` leaves them as
    floats, for a ``to_dict()`` whose ``from_dict()`` reads NaN back as "not known" (the public design's
    column intervals, the privacy statement's rows); such dicts are passed through the default again
    when they reach JSON or R.
    """
    if nonfinite not in ("none", "keep"):
        raise InvalidArgument("nonfinite must be 'none' or 'keep'")
    return _plain(obj, nonfinite == "keep")


def _plain(obj, keep):
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if (keep or math.isfinite(f)) else None
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist(), keep)
    if isinstance(obj, dict):
        return {str(k): _plain(v, keep) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_plain(v, keep) for v in obj]
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return _plain(obj.to_dict(), keep)
    if hasattr(obj, "tolist"):
        return _plain(obj.tolist(), keep)
    return str(obj)
