"""Command line: ``dpreg fit FORMULA --data FILE.csv --eps 1 [options]`` and ``dpreg --version``.

Bad input gives one line on stderr (``dpreg: error: ...``) and exit code 2, never a traceback;
a declined estimate (EstimationFailed) gives exit code 1. Warnings (e.g. PrivacyLeakWarning) are
printed as one ``dpreg: warning: ...`` line each on stderr. Messages never quote data values.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

from .errors import guard_library_errors

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "markdown", "latex", "html", "json")


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints the whole usage)
        raise UsageError(message)


def _one_line(text) -> str:
    # newcomer review, twenty-first pass: a cut at 500 characters ended the missing-values refusal at
    # "na_action='i..." and the small-data warning before its advice; the messages quote no data, so
    # they are printed whole (one line each)
    text = " ".join(str(text).split())
    return text if len(text) <= 4000 else text[:3997] + "..."


#: keyword arguments of dp_lm / dp_glm that are flags of their own on the command line
_FLAG_FOR_KEYWORD = {"eps": "--eps", "delta": "--delta", "method": "--method", "family": "--family",
                     "random_state": "--seed", "level": "--level"}


def _option_names() -> frozenset:
    """The names the command line takes as ``-o NAME=VALUE``: the fit's common options and every
    method's options (their names only; public)."""
    from .api import _COMMON
    from .estimators.registry import METHODS
    names = set(_COMMON) - {"bounds", "levels", "random_state", "inference", "budget", "allow_large_delta"}
    for spec in METHODS.values():
        names.update(spec.options)
    return frozenset(names)


def _cli_dialect(text: str) -> str:
    """The core writes its advice for Python users (``na_action='drop'``, ``bounds={'x': (lower,
    upper)}``, ``random_state``); on the command line the same advice is a flag or ``-o NAME=VALUE``.
    Only known keyword names are rewritten, so a formula quoted in a message (``Treatment(reference='b')``)
    stays as it is."""
    import re

    def as_json_object(inner: str) -> str:
        return "'{" + inner.replace("'", '"').replace("(", "[").replace(")", "]") + "}'"

    text = re.sub(r"\bbounds=\{([^{}]*)\}", lambda m: "--bounds " + as_json_object(m.group(1)), text)
    text = re.sub(r"\blevels=\{([^{}]*)\}", lambda m: "--levels " + as_json_object(m.group(1)), text)
    text = re.sub(r"\b(bounds|levels)='data'", r"--\1 data", text)
    text = re.sub(r"\b(bounds|levels)= ", r"--\1 ", text)      # "declare levels= for it"
    text = re.sub(r"\binference=False\b", "--no-inference", text)
    text = re.sub(r"\ballow_large_delta=True\b", "--allow-large-delta", text)
    options = _option_names()

    def keyword(m):
        name, value = m.group(1), m.group(2)
        value = value[1:-1] if value.startswith("'") else {"True": "true", "False": "false"}.get(value, value)
        before = m.string[:m.start()]
        in_call = before.endswith("(") or (before.endswith(", ") and before.rfind("(") > before.rfind(")"))
        if name in _FLAG_FOR_KEYWORD and not in_call:   # not "Budget(2, delta=1e-5)", a Python call
            return f"{_FLAG_FOR_KEYWORD[name]} {value}"
        return f"-o {name}={value}" if name in options else m.group(0)
    text = re.sub(r"(?<!\.)\b([a-z][a-z0-9_]*)=('[^'\s]*'|True|False|-?[0-9][0-9.e+-]*)", keyword, text)
    return re.sub(r"\brandom_state\b", "--seed", text)


# newcomer review, twenty-second pass: the help showed no command to start from. Both lines run as
# printed (tests/test_cli.py::test_help_examples_run_as_written); the table ships with dpreg, and its
# rows with missing values are left out first (the fit refuses missing values unless told otherwise)
_EXAMPLE = """\
example (the penguins table that ships with dpreg, written to a CSV file, then fitted):
  python -c "from dpreg.datasets import load_penguins; load_penguins().dropna().to_csv('penguins.csv', index=False)"
  python -m dpreg fit "body_mass_g ~ flipper_length_mm + sex" --data penguins.csv --eps 2 --bounds '{"body_mass_g": [2500, 6500], "flipper_length_mm": [170, 235]}' --levels '{"sex": ["female", "male"]}'

Declared --bounds and --levels are public facts (from documentation, not read off the data); without
them dpreg estimates ranges and selects levels privately from a share of eps."""


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    p = _Parser(prog="dpreg", description="Differentially private linear and logistic regression with "
                                          "noise-aware inference.",
                epilog=_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"dpreg {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    f = sub.add_parser("fit", help="fit a DP linear (or, with --family binomial, logistic) regression and "
                                   "print its summary",
                       description="Fit a DP linear regression (--family binomial: logistic regression) on "
                                   "a CSV or Parquet file and print its summary.",
                       epilog=_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("formula", help='model formula, e.g. "price ~ carat + C(cut)"')
    f.add_argument("--data", required=True, help="CSV file with a header row, a Parquet file, a glob such as "
                   "'dir/*.parquet' or 'dir/*.csv', or a directory of such files (read by DuckDB)")
    f.add_argument("--eps", required=True, type=float, help="privacy budget eps (> 0)")
    f.add_argument("--delta", type=float, default=1e-6, help="delta (default 1e-6; 0 for pure-DP methods)")
    from .estimators.registry import METHODS
    f.add_argument("--method", default="auto", metavar="METHOD",
                   help=f"estimator: auto (the default) or one of {', '.join(METHODS)}")
    f.add_argument("--allow-large-delta", action="store_true",
                   help="accept delta >= 1/n (refused by default: such a delta permits publishing a record "
                        "outright); the privacy statement then says so")
    f.add_argument("--bounds", help='public ranges as inline JSON \'{"column": [lower, upper], ...}\' or a '
                                    'JSON file holding it, or the word data (exploration only: not private)')
    f.add_argument("--levels", help='public levels as inline JSON \'{"column": ["reference", "level2", ...], '
                                    '...}\' or a JSON file holding it (others are selected privately), or '
                                    'the word data (exploration only: not private)')
    f.add_argument("--seed", type=int, help="fix the random seed (reproducible, NOT for release)")
    f.add_argument("--family", choices=("gaussian", "binomial"), default="gaussian",
                   help="gaussian (dp_lm, default) or binomial (dp_glm, logistic regression)")
    f.add_argument("--no-inference", action="store_true", help="spend no budget on standard errors")
    f.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                   help="method option, repeatable (e.g. -o m=400 -o ci=bootstrap); VALUE is read as "
                        "JSON when it parses (numbers, true/false, lists), else as text")
    f.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    f.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    return p


def _read_json(path: str, what: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} file {path} is not valid JSON (line {exc.lineno}, column {exc.colno})") \
            from None
    except (OSError, UnicodeDecodeError):
        raise UsageError(f"cannot read {what} file {path}") from None


def _inline_or_file_json(arg: str, what: str):
    """Inline JSON (--bounds '{"price": [300, 19000]}') or the path of a JSON file."""
    if arg.lstrip().startswith("{"):
        try:
            return json.loads(arg)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--{what} is not valid JSON (column {exc.colno})") from None
    if "=" in arg and not os.path.exists(arg):
        # newcomer review 32: --bounds er=0,3300 (the NAME=VALUE form of -o) said "bounds file not found"
        raise UsageError(_name_value_hint(arg, what))
    return _read_json(arg, what)


def _name_value_hint(arg: str, what: str) -> str:
    """The refusal of --bounds / --levels given as NAME=VALUE: the inline JSON that says the same, built
    from what the user typed (never from the data)."""
    name, _sep, value = arg.partition("=")
    parts = [v.strip() for v in value.split(",")]
    if what == "bounds":
        example = "{" + json.dumps(name.strip() or "column") + ": [" + ", ".join(parts[:2] or ["lower", "upper"]) + "]}"
    else:
        example = "{" + json.dumps(name.strip() or "column") + ": " + json.dumps(parts) + "}"
    return (f"--{what} {arg}: no such file, and --{what} takes no NAME=VALUE: write inline JSON, e.g. "
            f"--{what} '{example}', with every column in one --{what} (given twice, only the last counts), "
            "or the path of a JSON file holding it")


def _bounds(arg):
    if arg is None:
        return None
    if arg == "data":
        return "data"
    raw = _inline_or_file_json(arg, "bounds")
    if not isinstance(raw, dict):
        raise UsageError('bounds JSON must be an object {"column": [lower, upper], ...}')
    out = {}
    for col, rng in raw.items():
        if (not isinstance(rng, (list, tuple)) or len(rng) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rng)):
            raise UsageError(f"bounds for column {col!r} must be a list [lower, upper] of two numbers")
        try:
            lo, hi = float(rng[0]), float(rng[1])
        except OverflowError:
            raise UsageError(f"bounds for column {col!r} are beyond the range of floating-point numbers") \
                from None
        if lo != lo or hi != hi:
            raise UsageError(f"bounds for column {col!r} contain NaN; give two numbers")
        out[str(col)] = (lo, hi)
    return out


def _levels(arg):
    if arg is None:
        return None
    if arg == "data":
        return "data"
    raw = _inline_or_file_json(arg, "levels")
    if not isinstance(raw, dict) or not all(isinstance(v, list) and v for v in raw.values()):
        raise UsageError('levels JSON must be an object {"column": ["reference", "level2", ...], ...}')
    return {str(k): [str(x) for x in v] for k, v in raw.items()}


def _options(items) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise UsageError(f"--option expects NAME=VALUE, got {item!r}")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


def _read_csv(path: str):
    import pandas as pd
    refusal = None
    try:
        # every cell as text, nothing read as missing: the formula's columns are typed from public facts
        # (design.inputs.type_csv_frame), as for CSV files read by DuckDB; pandas' inference typed a column
        # from its values (one text cell made a number column a factor)
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except FileNotFoundError:
        refusal = f"data file not found: {path}"
    except pd.errors.EmptyDataError:
        refusal = f"data file {path} is empty"
    except (pd.errors.ParserError, UnicodeDecodeError, IsADirectoryError, PermissionError, OSError):
        refusal = f"cannot read {path} as a CSV file with a header row"
    # raised outside the handlers: pandas' ParserError quotes line numbers and field counts of the file and
    # a UnicodeDecodeError holds its bytes (``.object``); ``from None`` only hid them while keeping them as
    # the refusal's __context__
    raise UsageError(refusal)


def _render(fit, fmt: str, level: float) -> str:
    if fmt == "json":
        return json.dumps(fit.to_dict(), allow_nan=False, indent=1)
    s = fit.summary(level=level)
    # the summary's warnings and notes carry the core's advice in Python's spelling
    # (method='boosted_adassp'), as the refusals did (newcomer review, twenty-second pass)
    if fmt == "markdown":
        return _cli_dialect(s.to_markdown())
    if fmt == "latex":
        return s.to_latex()
    if fmt == "html":
        return s.to_html()
    return _cli_dialect(str(s))


@guard_library_errors()   # a library's exception raised on the rows: a DataError naming its type and stage
def _fit(args) -> str:
    import math

    import dpreg

    from .errors import DPRegError
    from .privacy.accounting import check_request
    if not (math.isfinite(args.eps) and args.eps > 0):
        raise UsageError("--eps must be a finite number > 0 (the privacy budget of this fit)")
    if not (math.isfinite(args.delta) and 0 <= args.delta < 1):
        raise UsageError("--delta must be a number with 0 <= delta < 1")
    try:   # the package's valid ranges (e.g. eps = 1e300 is refused, with the reason)
        check_request(args.eps, args.delta)
    except DPRegError as exc:
        opt = "--eps" if str(exc).startswith("eps") else "--delta"
        raise UsageError(f"{opt}: {exc}") from None
    if not (0 < args.level < 1):
        raise UsageError("--level must be strictly between 0 and 1")
    import os
    if args.data.lower().endswith((".parquet", ".pq")) or any(ch in args.data for ch in "*?[") \
            or os.path.isdir(args.data):
        # Parquet files, a glob (Parquet or CSV) or a directory of them: read by DuckDB (dpreg.sources)
        data = args.data
    else:
        from .design.inputs import type_csv_frame
        from .errors import READING, data_stage
        levels = _levels(args.levels)     # an argument: its errors keep their text
        text = _read_csv(args.data)       # its refusals (UsageError) name the file, never its contents
        with data_stage(READING):         # a library's exception on the rows becomes a DataError (_fit's guard)
            data = type_csv_frame(text, args.formula, levels)
    kwargs = dict(eps=args.eps, delta=args.delta, method=args.method, bounds=_bounds(args.bounds),
                  levels=_levels(args.levels), random_state=args.seed, inference=not args.no_inference)
    if args.allow_large_delta:
        kwargs["allow_large_delta"] = True
    if args.seed is not None and args.seed < 0:
        raise UsageError("--seed must be a non-negative integer")
    kwargs.update(_options(args.option))
    from .errors import DeltaTooLarge
    refusal = None
    try:
        if args.family == "binomial":
            fit = dpreg.dp_glm(args.formula, data, family="binomial", **kwargs)
        else:
            fit = dpreg.dp_lm(args.formula, data, **kwargs)
    except DeltaTooLarge as exc:   # name the command-line flag, not the Python keyword
        refusal = str(exc).replace("allow_large_delta=True", "--allow-large-delta")
    if refusal is not None:   # outside the handler: the fit's exception chain (data path) is not kept
        raise UsageError(refusal)
    return _render(fit, args.format, args.level)


def main(argv=None) -> int:
    from .errors import DPRegError, EstimationFailed
    argv = list(sys.argv[1:] if argv is None else argv)
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=RuntimeWarning)  # numeric reports are data-dependent
            try:
                args = _parser().parse_args(argv)
            except SystemExit as exc:  # --help / --version
                return int(exc.code or 0)
            if args.command is None:
                raise UsageError("missing command; usage: dpreg fit FORMULA --data FILE.csv --eps EPS "
                                 "(see dpreg fit --help)")
            out = _fit(args)
        _print_warnings(caught)
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
        return EXIT_OK
    except UsageError as exc:
        _print_warnings(caught)
        print(f"dpreg: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except EstimationFailed as exc:
        _print_warnings(caught)
        print(f"dpreg: estimation failed (budget spent): {_one_line(_cli_dialect(str(exc)))}", file=sys.stderr)
        return EXIT_FAILED
    except (DPRegError, ValueError, TypeError, KeyError, LookupError, FileNotFoundError,
            json.JSONDecodeError) as exc:
        _print_warnings(caught)
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dpreg: error: {_one_line(_cli_dialect(str(msg)))}", file=sys.stderr)
        for note in getattr(exc, "__notes__", None) or ():   # DPREG_DEBUG_ERRORS=1: says the text may hold data
            print(f"dpreg: {_one_line(str(note))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("dpreg: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback; unknown errors by type only (text could quote data)
        if type(exc).__module__.startswith("formulaic"):  # a formula the parser rejects
            _print_warnings(caught)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            print(f"dpreg: error: invalid formula: {_one_line(first)}", file=sys.stderr)
            return EXIT_USAGE
        print(f"dpreg: internal error ({type(exc).__name__}); please report it with the command line",
              file=sys.stderr)
        return EXIT_FAILED


def _print_warnings(caught):
    seen = set()
    for w in caught or []:
        text = _one_line(_cli_dialect(str(w.message)))
        key = (w.category.__name__, text)
        if key in seen:
            continue
        seen.add(key)
        print(f"dpreg: warning ({w.category.__name__}): {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
