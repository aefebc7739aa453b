"""Sphinx extension: option tables generated from the code, so that they cannot drift.

``.. dpreg-options::`` renders, for every ``method=`` of :func:`dpreg.dp_lm` / :func:`dpreg.dp_glm`,
a table of the method's options with their default and where the default comes from, read from the
estimator module's ``OPTIONS = {name: (default, origin)}`` declaration (and, for modules implementing
several methods, from its ``_APPLIES`` map of which options each method uses).

``.. dpreg-common-options::`` renders the options that every method accepts (handled by the fitting
entry point before the estimator runs); their defaults are read from the code as well.
"""
from __future__ import annotations

from docutils import nodes
from docutils.statemachine import StringList
from dpreg_options_data import common_options_rst, method_options_rst
from sphinx.util.docutils import SphinxDirective


class _Table(SphinxDirective):
    has_content = False

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="dpreg-options"), self.content_offset, container)
        return container.children


class MethodOptions(_Table):
    def run(self):
        return self._parse(method_options_rst())


class CommonOptions(_Table):
    def run(self):
        return self._parse(common_options_rst())


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
