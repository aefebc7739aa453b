"""Plain-type exchange of a fit: :meth:`DPFit.to_dict` (everything the R package and JSON need,
as dict/list/str/int/float/bool/None) and :meth:`DPFit.from_dict` (a working fit rebuilt from it)."""
from __future__ import annotations

from typing import Self

import numpy as np

from ..errors import InvalidArgument, diagnostic_category
from ..release import Release
from .format import format_number, from_plain_array, stars, to_plain

#: layout version of DPFit.to_dict() (bump when keys change meaning)
DICT_FORMAT = "dpreg.DPFit/1"


class _PlainStatement:
    """Stand-in for a PrivacyStatement rebuilt from a dict when the statement class cannot rebuild
    itself (keeps the texts and numbers; used by DPFit.from_dict)."""

    def __init__(self, d: dict, text: str | None = None):
        self._d = dict(d or {})
        self._text = text

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._d[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self):
        return dict(self._d)

    def __str__(self):
        if self._text:
            return self._text
        eps, delta = self._d.get("eps"), self._d.get("delta")
        return f"Privacy: (eps = {format_number(eps)}, delta = {format_number(delta)})"


class _SerialisationMixin:
    """``to_dict`` / ``from_dict`` of :class:`dpreg.results.fit.DPFit`."""

    def to_dict(self) -> dict:
        """Everything the R package (and JSON) needs, as plain Python types only (dict, list, str,
        int, float, bool, None). Missing numbers (NaN, no inference, not released) are ``None``.

        Keys: format, dpreg_version, title, call, method, method_description, auto, formula, family,
        link, outcome, nobs, terms, coef, inference_centre (None unless AdaSSP's corrected ridge, see
        :attr:`DPFit.inference_centre`), std_errors, vcov, vcov_privacy, noise_share, ci, ci_level,
        ci_draws, ci_method, inference_note, sigma, df_resid, r_squared, adj_r_squared (clamped to
        [0, 1]), r_squared_raw, adj_r_squared_raw, tuning ({name: {value, origin}}), facts, warnings,
        row_transform, combinations (released pieces for intervals of coefficient combinations, or None),
        options, coef_table (columns term, estimate, std_error, statistic, p_value,
        conf_low, conf_high, noise_share, stars, conf_level, and inference_centre where the fit has
        one), wald ({statistic, df, p_value, note, rule}: rule "chi-square" or "bonferroni", see
        DPFit.wald_test),
        privacy (PrivacyStatement.to_dict()), privacy_text (str(privacy)), public
        (PublicDesign.to_dict()), summary_text (str(summary())), print_text (str(fit)).
        ``coef_table`` uses the fit's ``level``; subsample_aggregate adds the released columns
        sampling_sd, noise_sd, q_lo, q_hi (also in ``facts``).
        """
        from .._version import __version__
        r = self._release
        level = self.level
        ci95 = self._conf_int(level=level)
        se = self.std_errors
        p = self.p_values()
        table = {
            "term": self.terms,
            "estimate": self.coef.tolist(),
            "std_error": se.tolist(),
            "statistic": self.z_values().tolist(),
            "p_value": p.tolist(),
            "conf_low": ci95["lower"].tolist(),
            "conf_high": ci95["upper"].tolist(),
            "noise_share": self.noise_share.tolist(),
            "stars": [stars(x) for x in p],
            "conf_level": level,
        }
        if self.has_separate_centre:
            # AdaSSP's corrected ridge: the point the inference columns are about (estimate = ridge)
            table["inference_centre"] = self.inference_centre.tolist()
        table.update(self._method_columns())
        out = {
            "format": DICT_FORMAT,
            "dpreg_version": __version__,
            "title": self.title,
            "call": self.call,
            "method": self._method,
            "method_description": self.description,
            "auto": self._auto,
            "formula": self._formula,
            "family": self.family,
            "link": r.link,
            "outcome": self.outcome,
            "nobs": self.nobs,
            "terms": self.terms,
            "coef": np.asarray(r.coef, float),
            "inference_centre": r.inference_centre,
            "std_errors": se.to_numpy(),
            "vcov": r.vcov,
            "vcov_privacy": r.vcov_privacy,
            "noise_share": self.noise_share.to_numpy(),
            "ci": r.ci,
            "ci_level": r.ci_level,
            "ci_draws": r.ci_draws,
            "ci_method": self.ci_method,
            "inference_note": r.inference_note,
            "sigma": r.sigma,
            "df_resid": self.df_resid,
            "r_squared": self.r_squared,
            "adj_r_squared": self.adj_r_squared,
            "r_squared_raw": self.r_squared_raw,
            "adj_r_squared_raw": self.adj_r_squared_raw,
            "tuning": {k: {"value": v[0], "origin": v[1]} for k, v in self.tuning.items()},
            "facts": r.facts,
            "warnings": [str(w) for w in r.warnings],
            # the warning class of each diagnostic (None: an informational note, not emitted)
            "warning_classes": [None if diagnostic_category(w) is None else diagnostic_category(w).__name__
                                for w in r.warnings],
            "row_transform": r.row_transform,
            "combinations": r.combinations,
            "options": self._options,
            "coef_table": table,
            "wald": self.wald_test(),
            "privacy": self._privacy.to_dict() if hasattr(self._privacy, "to_dict") else None,
            "privacy_text": None if self._privacy is None else str(self._privacy),
            "public": _public_to_dict(self._public),
            "summary_text": str(self.summary()),
            "method_text": self.summary().method_text(),
            "print_text": str(self),
        }
        return to_plain(out)

    def _method_columns(self) -> dict:
        """Per-coefficient released facts of the method as extra coefficient-table columns
        (subsample-and-aggregate: sampling_sd, noise_sd, q_lo, q_hi; docs/derivations/winsorized_sa.md §4)."""
        per = self._release.facts.get("coefficients")
        if self._method != "subsample_aggregate" or not isinstance(per, dict):
            return {}
        out = {}
        for key in ("sampling_sd", "noise_sd", "q_lo", "q_hi"):
            col = []
            for t in self._terms:
                v = (per.get(t) or {}).get(key)
                col.append(np.nan if v is None else float(v))
            out[key] = col
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Self:
        """Rebuild a working fit (coefficients, inference, summary, predict) from :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            The output of :meth:`to_dict` (e.g. read back from JSON).

        Returns
        -------
        DPFit
        """
        if not isinstance(d, dict) or "coef" not in d:
            raise InvalidArgument("from_dict expects the dict produced by DPFit.to_dict()")
        fmt = d.get("format")
        if fmt is not None and fmt != DICT_FORMAT:
            raise InvalidArgument(f"unsupported DPFit dict format {fmt!r} (this dpreg reads {DICT_FORMAT!r})")
        rel = Release(
            method=d["method"],
            coef=from_plain_array(d["coef"]),
            vcov=from_plain_array(d.get("vcov"), shape_2d=True),
            vcov_privacy=from_plain_array(d.get("vcov_privacy"), shape_2d=True),
            ci=from_plain_array(d.get("ci"), shape_2d=True),
            ci_level=d.get("ci_level"),
            ci_draws=from_plain_array(d.get("ci_draws"), shape_2d=True),
            inference_note=d.get("inference_note"),
            sigma=d.get("sigma"),
            df_resid=d.get("df_resid"),
            r_squared=d.get("r_squared_raw", d.get("r_squared")),
            adj_r_squared=d.get("adj_r_squared_raw", d.get("adj_r_squared")),
            tuning={k: (v.get("value"), v.get("origin")) if isinstance(v, dict) else (v, None)
                    for k, v in (d.get("tuning") or {}).items()},
            facts=dict(d.get("facts") or {}),
            warnings=_diagnostics_from_dict(d.get("warnings"), d.get("warning_classes")),
            link=d.get("link") or "identity",
            row_transform=d.get("row_transform"),
            inference_centre=from_plain_array(d.get("inference_centre")),
            combinations=d.get("combinations"),
        )
        public = _public_from_dict(d.get("public"))
        privacy = _privacy_from_dict(d.get("privacy"), d.get("privacy_text"))
        fit = cls(rel, public=public, privacy=privacy, formula=d.get("formula"), method=d["method"],
                  options=d.get("options"), auto=bool(d.get("auto", False)))
        if public is None:
            fit._terms = list(d.get("terms") or fit._terms)
        return fit


def _public_to_dict(public):
    if public is None:
        return None
    if hasattr(public, "to_dict"):
        return public.to_dict()
    # fallback while PublicDesign has no to_dict (plain fields; spec_state omitted)
    schema = getattr(public, "schema", None)
    return {"formula": public.formula, "outcome": public.outcome, "terms": list(public.terms),
            "has_intercept": bool(public.has_intercept),
            "column_lower": np.asarray(public.column_lower, float),
            "column_upper": np.asarray(public.column_upper, float),
            "factor_blocks": [list(map(int, b)) for b in public.factor_blocks],
            "outcome_interval": public.outcome_interval,
            "schema": schema.to_dict() if hasattr(schema, "to_dict") else None,
            "n": None if public.n is None else int(public.n), "family": public.family,
            "outcome_levels": public.outcome_levels}


def _public_from_dict(d):
    if d is None:
        return None
    from ..design.contract import PublicDesign
    if hasattr(PublicDesign, "from_dict"):
        return PublicDesign.from_dict(d)
    from ..design.schema import Schema, VariableSchema
    sd = d.get("schema") or {}
    schema = Schema(variables={k: VariableSchema(**v) for k, v in (sd.get("variables") or {}).items()},
                    outcome=sd.get("outcome"), leaks=list(sd.get("leaks") or []),
                    private=sd.get("private", True))
    oi = d.get("outcome_interval")
    return PublicDesign(formula=d["formula"], outcome=d["outcome"], terms=list(d["terms"]),
                        has_intercept=d["has_intercept"],
                        column_lower=from_plain_array(d["column_lower"]),
                        column_upper=from_plain_array(d["column_upper"]),
                        factor_blocks=[list(b) for b in d["factor_blocks"]],
                        outcome_interval=None if oi is None else tuple(oi), schema=schema, n=d["n"],
                        family=d.get("family", "gaussian"), outcome_levels=d.get("outcome_levels"))


def _privacy_from_dict(d, text=None):
    if d is None:
        return None if text is None else _PlainStatement({}, text)
    try:
        from ..privacy.statement import PrivacyStatement
    except ImportError:
        PrivacyStatement = None
    if PrivacyStatement is not None and hasattr(PrivacyStatement, "from_dict"):
        return PrivacyStatement.from_dict(d)
    return _PlainStatement(d, text)


def _diagnostics_from_dict(texts, classes):
    import dpreg.errors as E
    texts = list(texts or [])
    if not classes or len(classes) != len(texts):
        return texts
    out = []
    for t, c in zip(texts, classes):
        cat = None if c is None else getattr(E, str(c), E.AccuracyWarning)
        out.append(E.Diagnostic(t, cat))
    return out
