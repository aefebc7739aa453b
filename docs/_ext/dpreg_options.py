"""Sphinx extension: option tables generated from the code, so that they cannot drift.

``.. dpreg-options::`` renders, for every ``method=`` of :func:`dpreg.dp_lm` / :func:`dpreg.dp_glm`,
a table of the method's options with their default and where the default comes from, read from the
estimator module's ``OPTIONS = {name: (default, origin)}`` declaration (and, for modules implementing
several methods, from its ``_APPLIES`` map of which options each method uses).

``.. dpreg-common-options::`` renders the options that every method accepts (handled by the fitting
entry point before the estimator runs); their defaults are read from the code as well.
"""
from __future__ import annotations

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _fmt(value) -> str:
    return "``" + repr(value).replace("`", "'") + "``"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def method_options() -> dict[str, dict[str, tuple]]:
    """``{method: {option: (default, origin)}}`` for every registered method, read from the estimators."""
    from dpreg.estimators import REGISTRY
    out: dict[str, dict[str, tuple]] = {}
    for method, module in REGISTRY.items():
        est = importlib.import_module(f"dpreg.estimators.{module}")
        applies = getattr(est, "_APPLIES", {}).get(method)
        out[method] = {k: v for k, v in est.OPTIONS.items() if applies is None or k in applies}
    return out


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
                      "'fail' refuses missing values; 'impute' uses the range centre / reference level "
                      "(n unchanged); 'drop' makes the number of complete rows public (a leak warning)"),
        "unknown_level": (design["unknown_level"].default,
                          "a value outside the declared levels is an error; 'other' pools it"),
        "strict": (design["strict"].default, "True turns every privacy-leak warning into an error"),
        "unit": (None, "column naming the privacy unit (one unit owning several rows); only for "
                       "subsample_aggregate and tukey"),
        "allow_large_delta": (False, "delta >= 1/n is refused under replace-one neighbours unless this is "
                                     "True; the privacy statement then records it"),
    }


class _Table(SphinxDirective):
    has_content = False

    def _table(self, title: str, rows: dict[str, tuple]) -> list[str]:
        lines = [f".. list-table:: {title}", "   :header-rows: 1", "   :widths: 18 22 60", "",
                 "   * - option", "     - default", "     - where the default comes from"]
        for name, (default, origin) in rows.items():
            lines += [f"   * - ``{name}``", f"     - {_fmt(default)}", f"     - {_cell(origin)}"]
        return lines + [""]

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="dpreg-options"), self.content_offset, container)
        return container.children


class MethodOptions(_Table):
    def run(self):
        lines: list[str] = []
        for method, rows in method_options().items():
            lines += [f".. rubric:: method=\"{method}\"", ""]
            lines += self._table(f"options of method=\"{method}\"", rows) if rows else ["No options.", ""]
        return self._parse(lines)


class CommonOptions(_Table):
    def run(self):
        return self._parse(self._table("options accepted by every method", common_options()))


def setup(app):
    app.add_directive("dpreg-options", MethodOptions)
    app.add_directive("dpreg-common-options", CommonOptions)
    app.connect("missing-reference", resolve_alias)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def _aliases() -> list[tuple[str, str]]:
    """(public name, defining-module name) pairs of the objects exported by ``dpreg``."""
    import dpreg
    pairs = []
    for name in dpreg.__all__:
        obj = getattr(dpreg, name)
        canonical = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', name)}"
        if canonical != f"dpreg.{name}":
            pairs.append((f"dpreg.{name}", canonical))
    return pairs


def resolve_alias(app, env, node, contnode):
    """Resolve ``dpreg.DPFit`` written as ``dpreg.results.fit.DPFit`` (and back): the same object has a
    public name (documented) and the name of its defining module (used by autodoc, e.g. in base classes).
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    for public, canonical in _aliases():
        for src, dst in ((canonical, public), (public, canonical)):
            if target == src or target.startswith(src + "."):
                alt = dst + target[len(src):]
                domain = env.get_domain("py")
                found = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], alt, node, contnode)
                if found is not None:
                    return found
    return None


def _setup_aliases(app):
    app.connect("missing-reference", resolve_alias)
