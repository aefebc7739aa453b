"""Example datasets shipped inside dpreg (no download, no other package needed).

Three small gzip-compressed CSV files live in ``dpreg/data/`` (sources and licences in
``dpreg/data/README.md``): ggplot2's diamonds (MIT), the Palmer penguins (CC0) and ISLP's Bikeshare
(BSD-style; underlying UCI data CC BY 4.0). Categorical columns get their levels from the datasets'
documentation, i.e. public domain knowledge, so a DP fit on them does not leak the level set.
"""
from __future__ import annotations

from importlib import resources

import pandas as pd

#: documented grading scales of diamonds' categorical columns, worst first (the first is the reference)
DIAMONDS_LEVELS = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["D", "E", "F", "G", "H", "I", "J"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}
#: documented physical ranges (ggplot2's diamonds documentation: price in US dollars 326-18 823,
#: carat 0.2-5.01, depth 43-79 %, table 43-95 %, x/y/z in mm 0-58.9), rounded outward: public facts.
DIAMONDS_BOUNDS = {
    "price": (300.0, 19000.0), "carat": (0.2, 5.1), "depth": (40.0, 80.0), "table": (40.0, 100.0),
    "x": (0.0, 11.0), "y": (0.0, 60.0), "z": (0.0, 32.0),
}

#: documented levels of Bikeshare's categorical columns (the first is the reference)
BIKESHARE_LEVELS = {
    "mnth": ["Jan", "Feb", "March", "April", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"],
    "weathersit": ["clear", "cloudy/misty", "light rain/snow", "heavy rain/snow"],
}
#: ISLP's documentation: temp, atemp, hum, windspeed are normalised to [0, 1]; hr in 0..23. The
#: bikers range is an analyst's declared guess for one city's hourly rentals (public, not read off data).
BIKESHARE_BOUNDS = {"temp": (0.0, 1.0), "atemp": (0.0, 1.0), "hum": (0.0, 1.0), "windspeed": (0.0, 1.0),
                    "hr": (0.0, 23.0), "bikers": (0.0, 1000.0)}

#: documented levels of the penguins' categorical columns (the first is the reference)
PENGUINS_LEVELS = {
    "species": ["Adelie", "Chinstrap", "Gentoo"],
    "island": ["Biscoe", "Dream", "Torgersen"],
    "sex": ["female", "male"],
}


def _read(name: str) -> pd.DataFrame:
    """Read ``dpreg/data/<name>.csv.gz`` from the installed package (works from a wheel or a zip)."""
    with resources.files("dpreg").joinpath("data", f"{name}.csv.gz").open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


def _categorise(df: pd.DataFrame, levels: dict) -> pd.DataFrame:
    for col, lev in levels.items():
        if col in df:
            df[col] = pd.Categorical(df[col].astype("string").astype(object), categories=lev)
    return df


def load_diamonds() -> pd.DataFrame:
    """ggplot2's diamonds (53 940 rows; MIT licence), shipped with dpreg.

    Returns
    -------
    pandas.DataFrame
        cut/color/clarity as Categoricals with their documented levels (worst first, so the
        reference level is the lowest grade); documented ranges in :data:`DIAMONDS_BOUNDS`.
    """
    df = _read("diamonds")
    return _categorise(df, DIAMONDS_LEVELS)


def load_bikeshare() -> pd.DataFrame:
    """ISLP's Bikeshare (8 645 hourly rows, Washington DC 2011), shipped with dpreg.

    Returns
    -------
    pandas.DataFrame
        mnth and weathersit as Categoricals, hr numeric; documented ranges in
        :data:`BIKESHARE_BOUNDS`.
    """
    df = _read("bikeshare")
    df["hr"] = pd.to_numeric(df["hr"])
    return _categorise(df, BIKESHARE_LEVELS)


def load_penguins() -> pd.DataFrame:
    """Palmer penguins (344 rows, some missing values; CC0), shipped with dpreg.

    Returns
    -------
    pandas.DataFrame
        species, island and sex as Categoricals with their documented levels.
    """
    df = _read("penguins")
    return _categorise(df, PENGUINS_LEVELS)
