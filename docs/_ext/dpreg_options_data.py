"""Option tables of every method, read from the code (used by the Sphinx extension ``dpreg_options``
and by ``tests/test_docs_reference.py``; no Sphinx import here)."""
from __future__ import annotations

import inspect


def _fmt(value) -> str:
    return "``" + repr(value).replace("`", "'") + "``"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def method_options() -> dict[str, dict[str, tuple]]:
    """``{method: {option: (default, origin)}}`` for every registered method, read from the registry."""
    from dpreg.estimators.registry import METHODS
    return {name: {k: (o.default, o.origin) for k, o in spec.options.items()} for name, spec in METHODS.items()}


def common_options() -> dict[str, tuple]:
    """The options every method accepts, with their defaults read from the code."""
    from dpreg import api
    from dpreg.design.build import build_design
    design = inspect.signature(build_design).parameters
    return {
        "bounds_share": (api.DEFAULT_BOUNDS_SHARE,
                         "our choice: share of eps spent on private ranges of the variables whose range "
                         "is not declared (0 when every range is declared)"),
        "levels_share": (api.DEFAULT_LEVELS_SHARE,
                         "our choice: share of eps and of delta spent on the private selection of "
                         "category levels that are not declared (see the level-selection derivation)"),
        "na_action": (design["na_action"].default,
                      "'fail' refuses missing values; 'impute' gives a missing predictor the range centre / "
                      "reference level (n unchanged) and never fills the outcome (refused under replace-one, "
                      "the rows left out under add/remove); 'drop' makes the number of complete rows public "
                      "(a leak warning)"),
        "unknown_level": (design["unknown_level"].default,
                          "a value outside the declared levels is an error; 'other' pools it"),
        "strict": (design["strict"].default, "True turns every privacy-leak warning into an error"),
        "unit": (None, "column naming the privacy unit (one unit owning several rows); only for "
                       "subsample_aggregate and tukey"),
        "allow_large_delta": (False, "delta >= 1/n is refused under replace-one neighbours unless this is "
                                     "True; the privacy statement then records it"),
    }



def table_rst(title: str, rows: dict[str, tuple]) -> list[str]:
    """reStructuredText lines of one option table (option, default, where the default comes from)."""
    lines = [f".. list-table:: {title}", "   :header-rows: 1", "   :widths: 18 22 60", "",
             "   * - option", "     - default", "     - where the default comes from"]
    for name, (default, origin) in rows.items():
        lines += [f"   * - ``{name}``", f"     - {_fmt(default)}", f"     - {_cell(origin)}"]
    return lines + [""]


def method_options_rst() -> list[str]:
    """One table per ``method=``, under a rubric naming the method."""
    lines: list[str] = []
    for method, rows in method_options().items():
        lines += [f".. rubric:: method=\"{method}\"", ""]
        lines += table_rst(f"options of method=\"{method}\"", rows) if rows else ["No options.", ""]
    return lines


def common_options_rst() -> list[str]:
    """The table of the options every method accepts."""
    return table_rst("options accepted by every method", common_options())
