"""Dispatcher: ``python -m benchmarks NAME [args]`` runs ``benchmarks/bench_NAME.py:main(argv)``.

``python -m benchmarks --help`` (or no arguments) lists the available benchmarks, discovered
from the ``bench_*.py`` files next to this one, with the first line of each module docstring.
"""
import ast
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover():
    """Map benchmark name -> first docstring line, without importing the modules."""
    found = {}
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem[len("bench_"):]
        try:
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        except SyntaxError:
            doc = "(syntax error in module)"
        found[name] = doc.strip().splitlines()[0] if doc.strip() else ""
    return found


def usage(found):
    lines = ["usage: python -m benchmarks NAME [args]   (python -m benchmarks NAME --help for its options)",
             "", "available benchmarks:"]
    width = max((len(n) for n in found), default=0)
    for name, doc in found.items():
        lines.append(f"  {name.ljust(width)}  {doc}")
    if not found:
        lines.append("  (none found)")
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    found = discover()
    if not argv or argv[0] in ("-h", "--help", "help", "list"):
        print(usage(found))
        return 0
    name = argv[0]
    if name.startswith("bench_"):
        name = name[len("bench_"):]
    if name.endswith(".py"):
        name = name[:-3]
    if name not in found:
        print(f"unknown benchmark {argv[0]!r}\n", file=sys.stderr)
        print(usage(found), file=sys.stderr)
        return 2
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    module = importlib.import_module(f"benchmarks.bench_{name}")
    result = module.main(argv[1:])
    return 0 if result is None else int(result)


if __name__ == "__main__":
    sys.exit(main())
