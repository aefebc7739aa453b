"""The import graph of ``dpreg`` goes one way (docs/architecture.md).

Every module's imports of ``dpreg`` modules are read from its source with ``ast`` (module-level and
function-level imports alike, relative or absolute). Two rules:

* no import goes up a layer (LAYERS below, lowest first);
* no cycle between modules, also inside one layer or one package.

A module that is not assigned to a layer fails the test, so a new package has to be placed on purpose.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[1] / "python" / "dpreg"

#: lowest first. A module may import modules of its own layer or of lower layers only.
LAYERS = [
    # base: exceptions and warnings, floating-point guards, exact sums, plain conversion, progress bars,
    # plain-text tables
    ("base", ("dpreg.errors", "dpreg._numeric", "dpreg._exact_sum", "dpreg._plain", "dpreg._progress",
              "dpreg._tables", "dpreg._version")),
    # the one place to audit: mechanisms, ledger, accounting, private quantiles, the Release boundary
    ("privacy", ("dpreg.privacy", "dpreg.release")),
    # where rows come from
    ("sources", ("dpreg.sources",)),
    # formula + public schema -> model matrix, private ranges and levels
    ("design", ("dpreg.design",)),
    # post-processing of released statistics (covariances, bootstrap, Wald tests): numpy/scipy only
    ("inference", ("dpreg.inference",)),
    # the methods and their registry
    ("estimators", ("dpreg.estimators",)),
    # fit and estimate objects, summaries, tables, plots
    ("results", ("dpreg.results",)),
    # public entry points
    ("api", ("dpreg.api", "dpreg.api_checks", "dpreg.auto", "dpreg.univariate")),
    # front ends and the package's public names
    ("front", ("dpreg.cli", "dpreg.sklearn", "dpreg.bridge", "dpreg.demo", "dpreg.datasets", "dpreg")),
]


def _module_name(path: pathlib.Path) -> tuple[str, list[str]]:
    """(dotted name, package parts) of a file under PACKAGE_ROOT."""
    rel = path.relative_to(PACKAGE_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def _modules() -> dict[str, tuple[pathlib.Path, list[str]]]:
    out = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        name, pkg = _module_name(path)
        out[name] = (path, pkg)
    return out


def _resolve(name: str, modules) -> str:
    """The module a dotted import name refers to (``a.b.c`` may name an attribute of ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def _imports(modules):
    """Yield (importing module, dotted target, the module part that must exist) for every import of
    a dpreg name in the package's sources."""
    for mod, (path, pkg) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    yield mod, a.name, a.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg[:len(pkg) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                for a in node.names:
                    yield mod, f"{stem}.{a.name}", stem


def missing_modules() -> list[str]:
    """Imports of a dpreg module that does not exist (e.g. left behind by a move)."""
    modules = _modules()
    return sorted({f"{mod} imports {must}" for mod, _, must in _imports(modules)
                   if (must == "dpreg" or must.startswith("dpreg.")) and must not in modules})


def import_graph() -> dict[str, set[str]]:
    """{module: dpreg modules it imports}, from every import statement in its source."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, target, _ in _imports(modules):
        if target == "dpreg" or target.startswith("dpreg."):
            resolved = _resolve(target, modules)
            if resolved and resolved != mod:
                graph[mod].add(resolved)
    return graph


def layer_of(module: str) -> int | None:
    """Index in LAYERS of the longest prefix that names ``module``'s layer."""
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def upward_imports(graph) -> list[str]:
    bad = []
    for mod, targets in graph.items():
        for t in targets:
            lm, lt = layer_of(mod), layer_of(t)
            if lm is not None and lt is not None and lt > lm:
                bad.append(f"{mod} ({LAYERS[lm][0]}) imports {t} ({LAYERS[lt][0]})")
    return sorted(bad)


def cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_graph_is_read_from_the_sources(graph):
    # the reader must see the imports it checks: a few that exist for sure
    assert "dpreg.estimators" in graph["dpreg.api"] or any(t.startswith("dpreg.estimators")
                                                          for t in graph["dpreg.api"])
    assert "dpreg.errors" in graph["dpreg.privacy.accounting"]
    # function-level imports count too (dp_lm imports the design builder inside _fit_spending)
    assert "dpreg.design.build" in graph["dpreg.api"]


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_no_import_goes_up_a_layer(graph):
    assert upward_imports(graph) == []


def test_no_import_cycle(graph):
    assert cycles(graph) == []


def test_every_imported_dpreg_module_exists():
    assert missing_modules() == []


def test_the_checks_catch_what_they_forbid():
    # a synthetic graph with one upward import and one cycle: both are reported
    g = {"dpreg.design.build": {"dpreg.estimators.adassp"}, "dpreg.estimators.adassp": {"dpreg.design.build"},
         "dpreg.results.fit": set()}
    assert upward_imports(g) == ["dpreg.design.build (design) imports dpreg.estimators.adassp (estimators)"]
    assert cycles(g) == [["dpreg.design.build", "dpreg.estimators.adassp"]]


#: what ``dpreg.inference`` may import: post-processing of released numbers needs arithmetic, not data,
#: mechanisms or results (issue of the one-way house: covariances, bootstrap and Wald tests live here)
INFERENCE_THIRD_PARTY = {"numpy", "scipy"}


def inference_imports() -> list[str]:
    """Imports of ``dpreg.inference`` modules that reach beyond numpy, scipy, the standard library,
    the base layer and ``dpreg.inference`` itself."""
    import sys

    modules = _modules()
    base = LAYERS[0][1]
    bad = []
    for mod, (path, _) in modules.items():
        if not (mod == "dpreg.inference" or mod.startswith("dpreg.inference.")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in INFERENCE_THIRD_PARTY or top in sys.stdlib_module_names or top == "__future__":
                    continue
                bad.append(f"{mod} imports {name}")
    for mod, targets in import_graph().items():
        if mod == "dpreg.inference" or mod.startswith("dpreg.inference."):
            bad += [f"{mod} imports {t}" for t in targets
                    if not (t.startswith("dpreg.inference") or t in base)]
    return sorted(bad)


def test_inference_depends_on_numpy_and_scipy_only():
    assert inference_imports() == []
