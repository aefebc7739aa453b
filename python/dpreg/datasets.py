"""Real datasets that ship offline inside installed packages (no download at run time).

The CSV files are read from the installed packages' folders without importing those packages
(plotnine and ISLP are slow to import). Categorical columns get their levels from the datasets'
documentation, i.e. public domain knowledge, so a DP fit on them does not leak the level set.
"""
from __future__ import annotations

import importlib.util
import os

import pandas as pd

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

BIKESHARE_LEVELS = {
    "mnth": ["Jan", "Feb", "March", "April", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"],
    "weathersit": ["clear", "cloudy/misty", "light rain/snow", "heavy rain/snow"],
}
#: ISLP's documentation: temp, atemp, hum, windspeed are normalised to [0, 1]; hr in 0..23. The
#: bikers range is an analyst's declared guess for one city's hourly rentals (public, not read off data).
BIKESHARE_BOUNDS = {"temp": (0.0, 1.0), "atemp": (0.0, 1.0), "hum": (0.0, 1.0), "windspeed": (0.0, 1.0),
                    "hr": (0.0, 23.0), "bikers": (0.0, 1000.0)}

PENGUINS_LEVELS = {
    "species": ["Adelie", "Chinstrap", "Gentoo"],
    "island": ["Biscoe", "Dream", "Torgersen"],
    "sex": ["female", "male"],
}


def _package_file(package: str, *parts: str) -> str:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the dataset ships inside the Python package {package!r}, which is not installed "
            f"(pip install {package})")
    path = os.path.join(list(spec.submodule_search_locations)[0], *parts)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{package!r} is installed but has no {'/'.join(parts)}")
    return path


def _categorise(df: pd.DataFrame, levels: dict) -> pd.DataFrame:
    for col, lev in levels.items():
        if col in df:
            df[col] = pd.Categorical(df[col].astype("string").astype(object), categories=lev)
    return df


def load_diamonds() -> pd.DataFrame:
    """ggplot2's diamonds (53 940 rows), from the plotnine wheel; cut/color/clarity as Categoricals
    with their documented levels (worst first, so the reference level is the lowest grade)."""
    df = pd.read_csv(_package_file("plotnine", "data", "diamonds.csv"))
    return _categorise(df, DIAMONDS_LEVELS)


def load_bikeshare() -> pd.DataFrame:
    """ISLP's Bikeshare (8 645 hourly rows); mnth and weathersit as Categoricals, hr numeric."""
    df = pd.read_csv(_package_file("ISLP", "data", "Bikeshare.csv"))
    df["hr"] = pd.to_numeric(df["hr"])
    return _categorise(df, BIKESHARE_LEVELS)


def load_penguins() -> pd.DataFrame:
    """Palmer penguins (344 rows, some missing values), from the plotnine wheel."""
    df = pd.read_csv(_package_file("plotnine", "data", "penguins.csv"))
    return _categorise(df, PENGUINS_LEVELS)
