"""Progress bars of long work (out-of-core passes over a data source).

Shown only in an interactive session (stderr is a terminal and no CI variable is set), silent in
scripts and CI; switchable with :func:`set_progress` (True / False / None = automatic) or the
environment variable ``DPREG_PROGRESS`` (``1`` / ``0``). A bar counts rows read, whose total is n:
public under replace-one neighbours, the only relation the streamed passes run under.
"""
from __future__ import annotations

import os
import sys

from .errors import InvalidArgument

_SETTING = None


def set_progress(on: bool | None) -> None:
    """Switch the progress bars of long fits (streamed passes over files, Spark jobs).

    Parameters
    ----------
    on : bool or None
        True: always show them; False: never; None (the default setting): only when standard error
        is an interactive terminal and neither ``CI`` nor ``DPREG_PROGRESS=0`` is set.

    Returns
    -------
    None

    Examples
    --------
    >>> import dpreg
    >>> dpreg.set_progress(False)   # no progress bars, e.g. in a batch job's log
    >>> dpreg.set_progress(None)    # back to the default setting
    """
    global _SETTING
    if on not in (True, False, None):
        raise InvalidArgument("set_progress takes True, False or None")
    _SETTING = on


def enabled() -> bool:
    if _SETTING is not None:
        return _SETTING
    env = os.environ.get("DPREG_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("0", "false", "no", "")
    if os.environ.get("CI"):
        return False
    try:
        return bool(sys.stderr.isatty())
    except Exception:
        return False


class _Silent:
    def update(self, k=1):
        pass

    def close(self):
        pass


def bar(total: int, desc: str):
    """A tqdm bar (or a silent stand-in) counting ``total`` units."""
    if not enabled():
        return _Silent()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Silent()
    return tqdm(total=total, desc=desc, unit="rows", unit_scale=True, leave=False)
