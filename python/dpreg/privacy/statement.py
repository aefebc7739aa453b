"""PrivacyStatement: what a fit spent, under which definition, and what was public.

Built by :func:`dpreg.privacy.accounting.compose_ledger` from the fit's ledger (public calibrations
only) and the public Schema. Every number in a statement is public (declared by the user, or n) or
a DP release counted in the ledger; ranges read from the data are reported by name only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._plain import to_plain

__all__ = ["NEIGHBOURS_TEXT", "SEEDED_LABEL", "PrivacyStatement"]

NEIGHBOURS_TEXT = {
    "replace_one": "neighbouring datasets differ by replacing one row; n is public",
    "add_remove": "neighbouring datasets differ by adding or removing one row; n is private",
}
NEIGHBOURS_SHORT = {"replace_one": "replace one row (n public)",
                    "add_remove": "add/remove one row (n private)"}
SEEDED_LABEL = "seeded: reproducible, not for release"
NOT_PRIVATE_TEXT = ("this fit is NOT differentially private: variable ranges were read from the data "
                    "(bounds='data', exploration only)")
NOT_PRIVATE_LEVELS_TEXT = ("this fit is NOT differentially private: category levels were read from the data "
                           "(levels='data', exploration only)")
NOT_PRIVATE_BOTH_TEXT = ("this fit is NOT differentially private: variable ranges and category levels were read "
                         "from the data (bounds='data', levels='data', exploration only)")

_SOURCE_TEXT = {"declared": "declared", "estimated": "estimated privately",
                "data": "read from data (leak)", None: "not needed"}
_MECH_NAMES = {"gaussian": "Gaussian", "laplace": "Laplace", "exponential_svt": "sparse vector (exponential)",
               "exponential_mechanism": "exponential mechanism", "ptr": "propose-test-release",
               "tukey_ptr_em": "propose-test-release + restricted exponential mechanism",
               "laplace_peeling": "Laplace peeling", "ptr_truncated_laplace": "propose-test-release (truncated Laplace)",
               "gaussian_analytic": "analytic Gaussian", "gaussian_shaped_analytic": "shaped analytic Gaussian",
               "stability_histogram": "stability histogram", "gaussian_zcdp": "Gaussian (zCDP)"}


#: how many released level names the statement lists (a long list is cut: the coefficients name them all)
LISTED_LEVELS = 6


def _levels_source_text(src, pooled, levels=None) -> str:
    """How the levels of a categorical variable became public (never a data value: a selected level's name
    is released by the private selection)."""
    if src == "declared":
        return "declared"
    if src == "data":
        return "found in data (leak)"
    if src == "selected":
        where = ("pooled into the level (other)" if pooled == "(other)" else
                 "pooled into the reference level" if pooled == "reference" else "pooled")
        # newcomer review 25: Bikeshare's C(mnth) at eps = 1 kept one month, and its one coefficient,
        # C(mnth)[T.(other)], did not say which month it was measured against
        kept = [str(x) for x in (levels or []) if str(x) != "(other)"]
        if kept:
            shown = ", ".join(repr(x) for x in kept[:LISTED_LEVELS])
            more = f", ... ({len(kept) - LISTED_LEVELS} more)" if len(kept) > LISTED_LEVELS else ""
            return f"selected privately: released {shown}{more} (values not released: {where})"
        return f"selected privately (values not released: {where})"
    return "not needed" if src is None else str(src)


def _g(x, digits=4):
    """Compact numeric format for public numbers ("1", "1e-06", "0.2367")."""
    if x is None:
        return "NA"
    x = float(x)
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def _plain(v):
    """Plain Python types for the statement's rows; NaN stays NaN (see :func:`dpreg._plain.to_plain`)."""
    return to_plain(v, nonfinite="keep")


def _ranges_from_schema(schema) -> tuple[list[dict], bool, list[str]]:
    """(ranges, private, leaks) from a Schema (or its to_dict()).

    Declared ranges are public and reported with their values; privately estimated ranges are DP
    releases (in the ledger) and reported with their released values; ranges read from the data are
    reported by name only: their values are not released by this statement.
    """
    if schema is None:
        return [], True, []
    sd = schema.to_dict() if hasattr(schema, "to_dict") else dict(schema)
    out = []
    private = bool(sd.get("private", True))
    outcome = sd.get("outcome")
    for name, v in (sd.get("variables") or {}).items():
        kind = v.get("kind")
        row = {"variable": str(name), "kind": kind, "role": "outcome" if name == outcome else "predictor"}
        if kind == "categorical":
            src = v.get("levels_source")
            row["source"] = _levels_source_text(src, v.get("pooled"), v.get("levels"))
            if src == "data":
                private = False      # a data-derived name is published without a mechanism
            # levels appear in coefficient names anyway; they are reported, marked by their source
            # (declared, released by the private selection, or read from the data with a leak)
            row["levels"] = None if v.get("levels") is None else [str(x) for x in v["levels"]]
            row["lower"] = row["upper"] = None
        else:
            src = v.get("bounds_source")
            row["source"] = _SOURCE_TEXT.get(src, str(src))
            if src == "data":
                private = False
                row["lower"] = row["upper"] = None   # never re-published here
            else:
                row["lower"] = None if v.get("lower") is None else float(v["lower"])
                row["upper"] = None if v.get("upper") is None else float(v["upper"])
            row["levels"] = None
        out.append(row)
    return out, private, [str(t) for t in (sd.get("leaks") or [])]


@dataclass
class PrivacyStatement:
    """The privacy facts of one fit or release (``fit.privacy``).

    ``str()`` prints the guarantee and the ledger; :meth:`paragraph` gives sentences for a methods
    section; notebooks display it as HTML. Made by the fitting functions, not constructed directly
    (:meth:`from_dict` rebuilds one from :meth:`to_dict`).

    Attributes
    ----------
    eps, delta : float
        Requested budget of the fit.
    eps_spent, delta_spent : float
        What the ledger composes to (at most the request; ``delta_spent`` = 0 for pure DP).
    mu : float or None
        Total Gaussian-DP mu when every costed release is Gaussian.
    rho : float or None
        Total zCDP rho when exact (Gaussian / zCDP releases only).
    definition : str
        "mu-GDP", "rho-zCDP", "eps-differential privacy (pure)" or "(eps, delta)-differential privacy".
    neighbours : str
        "replace_one" or "add_remove"; :attr:`neighbours_text` is the plain sentence.
    ledger : LedgerTable
        One dict per release (statistic, mechanism, sensitivity, noise_scale, mu, eps, delta, rho,
        share, note); prints as a table.
    seeded : bool
        True when the user fixed the seed ("reproducible, not for release").
    leaks : list of str
        Texts of everything taken from the data without budget.
    ranges : list of dict
        Per variable: source (declared / estimated privately / read from data) and public or released
        values.
    private : bool
        False when ranges or levels were read from the data (the fit is then not DP).
    components : dict
        The composition by currency (mu_gaussian, rho_zcdp, eps_pure, ...).
    notes : list of str
        Further plain sentences (e.g. from the estimator).
    unit : str or None
        Name of the privacy-unit column (``unit=``), or None when each row is a unit; neighbours then
        differ by replacing all rows of one unit, and N (the number of units) is public instead of
        the row count.
    """
    eps: float
    delta: float
    eps_spent: float
    delta_spent: float
    mu: float | None = None
    rho: float | None = None
    definition: str = "(eps, delta)-differential privacy"
    neighbours: str = "replace_one"
    ledger: list[dict] = field(default_factory=list)
    seeded: bool = False
    leaks: list[str] = field(default_factory=list)
    ranges: list[dict] = field(default_factory=list)
    private: bool = True
    components: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unit: str | None = None

    def __post_init__(self):
        from .ledger import LedgerTable
        self.ledger = LedgerTable(self.ledger or [])   # prints as a table; still a list of dicts

    # ---- construction ---------------------------------------------------------------------------
    @classmethod
    def build(cls, *, eps, delta, eps_spent, delta_spent, mu=None, rho=None, definition, neighbours,
              ledger, seeded, schema=None, leaks=None, notes=None, components=None) -> PrivacyStatement:
        """Build a statement from a composed ledger and the design's schema (used by the fitting functions).

        Parameters
        ----------
        eps, delta : float
            Requested budget.
        eps_spent, delta_spent : float
            What the ledger composes to.
        mu, rho : float, optional
            Exact totals in Gaussian-DP / zCDP, where they exist.
        definition : str
            The privacy definition met.
        neighbours : str
            "replace_one" or "add_remove".
        ledger : list of dict
            One row per release.
        seeded : bool
            Whether the user fixed the seed.
        schema : dpreg.design.schema.Schema, optional
            Where the ranges and levels came from (declared, private, data).
        leaks : list of str, optional
            Texts of what was taken from the data without budget.
        notes : list of str, optional
            Further sentences.
        components : dict, optional
            The composition by currency.

        Returns
        -------
        PrivacyStatement
        """
        ranges, private, schema_leaks = _ranges_from_schema(schema)
        all_leaks = []
        for t in list(schema_leaks) + [str(x) for x in (leaks or [])]:
            if t not in all_leaks:
                all_leaks.append(t)
        return cls(eps=float(eps), delta=float(delta), eps_spent=float(eps_spent),
                   delta_spent=float(delta_spent), mu=None if mu is None else float(mu),
                   rho=None if rho is None else float(rho), definition=str(definition),
                   neighbours=str(neighbours), ledger=_plain(list(ledger)), seeded=bool(seeded),
                   leaks=all_leaks, ranges=ranges, private=bool(private),
                   components=_plain(dict(components or {})), notes=[str(n) for n in (notes or [])])

    # ---- views ----------------------------------------------------------------------------------
    @property
    def neighbours_text(self) -> str:
        """The neighbouring relation as a plain sentence."""
        if self.unit is not None and self.neighbours == "replace_one":
            return (f"neighbouring datasets differ by replacing one unit (all rows of one {self.unit}); "
                    "the number of units N is public")
        return NEIGHBOURS_TEXT.get(self.neighbours, str(self.neighbours))

    @property
    def _neighbours_short(self) -> str:
        if self.unit is not None and self.neighbours == "replace_one":
            return f"replace one unit (all rows of one {self.unit}; N public)"
        return NEIGHBOURS_SHORT.get(self.neighbours, self.neighbours)

    @property
    def seeded_label(self) -> str | None:
        """"reproducible, not for release" when the seed was fixed, else None."""
        return SEEDED_LABEL if self.seeded else None

    @property
    def mu_total(self) -> float | None:
        """sqrt(sum mu_i^2) over the Gaussian releases, also in mixed ledgers; None if there are none."""
        return (self.components or {}).get("mu_gaussian")

    @property
    def eps_achieved(self) -> float:
        """Another name of :attr:`eps_spent`."""
        return self.eps_spent

    @property
    def pure(self) -> bool:
        """True when nothing of delta was spent (pure eps-DP)."""
        return self.delta_spent == 0.0

    @property
    def _data_ranges(self) -> bool:
        """Some range was read from the data (bounds='data'), the usual reason for private=False."""
        return any(str(r.get("source", "")).startswith("read from data") for r in self.ranges)

    @property
    def _data_levels(self) -> bool:
        """Some levels were read from the data (levels='data')."""
        return any(r.get("kind") == "categorical" and str(r.get("source", "")).startswith("found in data")
                   for r in self.ranges)

    @property
    def _not_private_text(self) -> str:
        if self._data_ranges and self._data_levels:
            return NOT_PRIVATE_BOTH_TEXT
        if self._data_ranges:
            return NOT_PRIVATE_TEXT
        if self._data_levels:
            return NOT_PRIVATE_LEVELS_TEXT
        return "this fit is NOT differentially private: " + "; ".join(self.leaks)

    def guarantee(self) -> str:
        """The (eps, delta) guarantee in words, e.g. "(eps = 1, delta = 1e-06)-DP".


        Returns
        -------
        str
        """
        if self.pure:
            return f"(eps = {_g(self.eps_spent)})-DP (pure, delta = 0)"
        return f"(eps = {_g(self.eps_spent)}, delta = {_g(self.delta_spent)})-DP"

    def _mechanism_counts(self) -> list[tuple[str, int, list[str]]]:
        out: dict[str, list[str]] = {}
        for row in self.ledger:
            costed = any(row.get(k) is not None for k in ("mu", "eps", "rho"))
            if not costed:
                continue
            m = _MECH_NAMES.get(row.get("mechanism"), str(row.get("mechanism")))
            out.setdefault(m, []).append(str(row.get("statistic")))
        return [(m, len(stats), stats) for m, stats in out.items()]

    @staticmethod
    def _list_stats(stats, limit=6):
        if len(stats) <= limit:
            return ", ".join(stats)
        return ", ".join(stats[:limit]) + f", ... ({len(stats) - limit} more)"

    def __str__(self) -> str:
        head = f"Privacy: {self.guarantee()}, neighbours = {self._neighbours_short}"
        if self.mu is not None:
            head += f", mu-GDP = {_g(self.mu)}"
        elif self.rho is not None:
            head += f", rho-zCDP = {_g(self.rho)}"
        # the first line is what one-line printouts show: it must carry the release warnings too
        if self.seeded:
            head += ", " + SEEDED_LABEL
        if not self.private:
            read = [w for w, hit in (("bounds", self._data_ranges), ("levels", self._data_levels)) if hit]
            head += ", NOT differentially private" + (f" ({' and '.join(read)} read from data)" if read else "")
        lines = [head]
        if (abs(self.eps_spent - self.eps) > 1e-9 * max(self.eps, 1.0)
                or abs(self.delta_spent - self.delta) > 1e-9 * max(self.delta, 1e-300)):
            lines.append(f"  requested: eps = {_g(self.eps)}, delta = {_g(self.delta)}")
        mechs = self._mechanism_counts()
        if mechs:
            parts = [f"{m} x{k} ({self._list_stats(s, 4)})" for m, k, s in mechs]
            lines.append("  releases: " + "; ".join(parts))
        else:
            lines.append("  releases: none")
        if self.ranges:
            parts = []
            for r in self.ranges:
                if r["kind"] == "categorical":
                    parts.append(f"{r['variable']} levels {r['source']}")
                elif r["lower"] is not None and r["upper"] is not None:
                    parts.append(f"{r['variable']} {r['source']} [{_g(r['lower'])}, {_g(r['upper'])}]")
                else:
                    parts.append(f"{r['variable']} {r['source']}")
            lines.append("  ranges: " + "; ".join(parts))
        for t in self.leaks:
            lines.append("  leak: " + t)
        if not self.private:
            lines.append("  WARNING: " + self._not_private_text)
        return "\n".join(lines)

    def __repr__(self) -> str:
        extra = f", mu={_g(self.mu)}" if self.mu is not None else ""
        return (f"PrivacyStatement(eps_spent={_g(self.eps_spent)}, delta_spent={_g(self.delta_spent)}, "
                f"definition={self.definition!r}, neighbours={self.neighbours!r}{extra}, "
                f"releases={len(self.ledger)}, seeded={self.seeded}, private={self.private})")

    def paragraph(self) -> str:
        """Sentences for a methods section, generated from this statement.

        Returns
        -------
        str
        """
        s = []
        # what was read off the data without a mechanism (bounds='data', levels='data'), for the first
        # sentence and for "apart from ..." (the data were not accessed only through the releases)
        read = " and ".join(w for w, hit in (("ranges", self._data_ranges), ("levels", self._data_levels)) if hit)
        if not self.private:
            s.append("The estimates are NOT differentially private: the ranges of some variables "
                     + ("and the levels of some categorical variables " if self._data_levels else "")
                     + "were read from the data (exploration only)." if self._data_ranges else
                     "The estimates are NOT differentially private: " + "; ".join(self.leaks) + ".")
        mechs = self._mechanism_counts()
        if mechs:
            parts = []
            for m, k, stats in mechs:
                noun = "release" if k == 1 else "releases"
                parts.append(f"{k} {m} {noun} ({self._list_stats(stats)})")
            mech_text = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
            lead = ("The results were obtained with differential privacy; the data" if self.private
                    else f"Apart from the {read} read from the data, the data" if read
                    else "Apart from that, the data")
            s.append(f"{lead} were accessed only through {mech_text}, and everything reported was "
                     f"computed from these releases.")
        else:
            s.append("No statistic of the data was released by this computation.")
        if self.pure:
            s.append(f"The total privacy loss is eps = {_g(self.eps_spent)} (pure differential privacy, "
                     f"basic composition).")
        else:
            how = self.components.get("conversion") if self.components else None
            txt = (f"The total privacy loss is (eps = {_g(self.eps_spent)}, delta = {_g(self.delta_spent)})"
                   f"-differential privacy")
            if self.mu is not None:
                txt += (f"; all releases are Gaussian and compose exactly to mu = {_g(self.mu)} in Gaussian "
                        f"differential privacy (Dong, Roth and Su 2022), converted to (eps, delta) exactly")
            elif self.rho is not None:
                txt += (f"; the releases compose to rho = {_g(self.rho)} in zero-concentrated differential "
                        f"privacy")
                comp = self.components or {}
                if comp.get("mu_gaussian") and not comp.get("rho_zcdp"):
                    # newcomer review, twenty-first pass: all releases Gaussian, so (eps, delta) was certified
                    # by the exact GDP conversion (accounting.compose_ledger); CKS from rho gives a larger
                    # eps (1.08 for rho = 0.028 at delta = 1e-6), and naming it made the paragraph disagree
                    # with its own numbers
                    txt += (f"; (eps, delta) follows from the exact conversion of their continuous "
                            f"counterpart, mu = {_g(comp['mu_gaussian'])} in Gaussian differential privacy "
                            f"(Dong, Roth and Su 2022), plus the discretisation's term of at most "
                            f"{_g(comp.get('eps_lattice') or 0.0)} in eps")
                else:
                    txt += ", converted with the bound of Canonne, Kamath and Steinke (2020)"
            elif how:
                txt += f" ({how}; other releases by basic composition)"
            s.append(txt + ".")
        if self.unit is not None and self.neighbours == "replace_one":
            s.append(f"Neighbouring datasets differ by replacing one unit (all rows of one {self.unit}); "
                     "the number of units N is treated as public, the number of rows is not.")
        elif self.neighbours == "replace_one":
            s.append("Neighbouring datasets differ by replacing one row; the number of rows n is treated "
                     "as public.")
        else:
            s.append("Neighbouring datasets differ by adding or removing one row; n is not treated as "
                     "public.")
        declared = [r["variable"] for r in self.ranges if r["source"].startswith("declared")]
        estimated = [r["variable"] for r in self.ranges if r["source"] == "estimated privately"]
        selected = [r for r in self.ranges if str(r["source"]).startswith("selected privately")]
        leaked = [("the levels of " if r["kind"] == "categorical" else "the range of ") + r["variable"]
                  for r in self.ranges if "leak" in r["source"]]
        if declared:
            s.append("Declared public (not derived from the data): the model specification, the privacy "
                     "budget, the hyperparameters and the ranges or levels of " + ", ".join(declared) + ".")
        else:
            s.append("Declared public (not derived from the data): the model specification, the privacy "
                     "budget and the hyperparameters.")
        if estimated:
            s.append("The ranges of " + ", ".join(estimated) + " were estimated privately from a share of "
                     "the budget (included above).")
        if selected:
            other = [r["variable"] for r in selected if "level (other)" in r["source"]]
            ref = [r["variable"] for r in selected if "reference level" in r["source"]]
            txt = ("The levels of " + ", ".join(r["variable"] for r in selected) + " were selected privately "
                   "(noisy counts above a threshold, from a share of the budget included above); rows with "
                   "values that were not released are pooled")
            parts = []
            if other:
                parts.append("into the level (other) for " + ", ".join(other))
            if ref:
                parts.append("into the reference level for " + ", ".join(ref))
            s.append(txt + (" " + " and ".join(parts) if parts else "") + ".")
        if leaked:
            s.append("Taken from the data without privacy protection: " + ", ".join(leaked) + ".")
        for t in self.leaks:
            if t not in " ".join(s):
                s.append("Privacy leak: " + t.rstrip(".") + ".")
        if self.seeded:
            s.append("The random seed was fixed, so the noise is reproducible: these results are for "
                     "checking only and must not be released.")
        for n in self.notes:
            s.append(n.rstrip(".") + ".")
        return " ".join(s)

    # ---- display (notebooks, reports) -----------------------------------------------------------
    def to_html(self) -> str:
        """The one-line label, the methods-section paragraph and the ledger as an HTML table.

        Returns
        -------
        str
        """
        import html
        head = str(self).strip().splitlines()[0]
        return (f"<p><strong>{html.escape(head)}</strong></p>\n<p>{html.escape(self.paragraph())}</p>\n"
                + self.ledger.to_html() + "\n")

    def to_markdown(self) -> str:
        """The one-line label, the methods-section paragraph and the ledger as Markdown.

        Returns
        -------
        str
        """
        head = str(self).strip().splitlines()[0]
        return f"**{head}**\n\n{self.paragraph()}\n\n{self.ledger.to_markdown()}\n"

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    # ---- exchange -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain Python types only (dict/list/str/float/int/bool/None), with ``summary`` and ``paragraph``
        texts.

        Returns
        -------
        dict
        """
        return _plain({
            "eps": self.eps, "delta": self.delta, "eps_spent": self.eps_spent,
            "delta_spent": self.delta_spent, "mu": self.mu, "rho": self.rho,
            "definition": self.definition, "neighbours": self.neighbours,
            "neighbours_text": self.neighbours_text, "ledger": [dict(r) for r in self.ledger],
            "seeded": self.seeded, "seeded_label": self.seeded_label, "leaks": list(self.leaks),
            "ranges": [dict(r) for r in self.ranges], "private": self.private,
            "components": dict(self.components), "notes": list(self.notes), "unit": self.unit,
            "summary": str(self), "paragraph": self.paragraph(),
        })

    @classmethod
    def from_dict(cls, d: dict) -> PrivacyStatement:
        """Rebuild a statement from :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            The output of :meth:`to_dict`.

        Returns
        -------
        PrivacyStatement
        """
        def f(x):
            return None if x is None else float(x)
        eps, delta = float(d["eps"]), float(d.get("delta") or 0.0)
        eps_spent = d.get("eps_spent", eps)
        delta_spent = d.get("delta_spent", delta)
        return cls(eps=eps, delta=delta, eps_spent=float(eps if eps_spent is None else eps_spent),
                   delta_spent=float(delta if delta_spent is None else delta_spent),
                   mu=f(d.get("mu")), rho=f(d.get("rho")),
                   definition=str(d.get("definition", "(eps, delta)-differential privacy")),
                   neighbours=str(d.get("neighbours", "replace_one")),
                   ledger=[dict(r) for r in d.get("ledger") or []], seeded=bool(d.get("seeded", False)),
                   leaks=[str(t) for t in d.get("leaks") or []],
                   ranges=[dict(r) for r in d.get("ranges") or []], private=bool(d.get("private", True)),
                   components=dict(d.get("components") or {}), notes=[str(t) for t in d.get("notes") or []],
                   unit=None if d.get("unit") is None else str(d["unit"]))

    def to_frame(self):
        """The ledger as a DataFrame (one row per release).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        cols = ["statistic", "mechanism", "sensitivity", "noise_scale", "mu", "eps", "delta", "rho",
                "share", "note"]
        return pd.DataFrame([dict(r) for r in self.ledger], columns=cols)
