"""Simulated time is an int of nanoseconds everywhere (as SimTime / Duration in C++).

    seconds(2) == 2_000_000_000
    seconds("0.1") == milliseconds(100)      # decimal text is exact
    parse_duration("250ms") == milliseconds(250)
    to_seconds(p.now())                      # a float, for printing only

A float given to seconds() is read through its shortest decimal text (repr), so seconds(0.1) is
exactly 100_000_000 ns, never 100_000_000.000000005 rounded somewhere.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .codec import INFINITE

NS_PER_SECOND = 1_000_000_000

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": NS_PER_SECOND, "m": 60 * NS_PER_SECOND,
          "min": 60 * NS_PER_SECOND, "h": 3600 * NS_PER_SECOND}


def _exact(value) -> Fraction:
    if isinstance(value, bool):
        raise TypeError("a time must be a number or decimal text, not a bool")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(Decimal(repr(value)))
    if isinstance(value, (Decimal, Fraction)):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(Decimal(value.strip()))
        except InvalidOperation:
            raise ValueError(f"'{value}' is not a decimal number") from None
    raise TypeError(f"a time must be a number or decimal text, not {type(value).__name__}")


def _scaled(value, unit_ns: int) -> int:
    f = _exact(value) * unit_ns
    if f.denominator != 1:
        raise ValueError(f"{value} is not a whole number of nanoseconds")
    return int(f)


def nanoseconds(n) -> int:
    return _scaled(n, 1)


def microseconds(n) -> int:
    return _scaled(n, 1_000)


def milliseconds(n) -> int:
    return _scaled(n, 1_000_000)


def seconds(n) -> int:
    return _scaled(n, NS_PER_SECOND)


def to_seconds(ns: int) -> float:
    """For printing and for arithmetic that is not time (a speed, a distance)."""
    return ns / NS_PER_SECOND


def parse_duration(text: str) -> int:
    """'0.1', '250ms', '10m', '1.5s' -> nanoseconds (no unit: seconds)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s|min|m|h)?\s*", str(text))
    if not m:
        raise ValueError(f"'{text}' is not a duration (e.g. 0.1, 250ms, 10m)")
    return _scaled(m.group(1), _UNITS[m.group(2) or "s"])


def format_time(ns: int) -> str:
    if ns >= INFINITE:
        return "+inf"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // NS_PER_SECOND}.{ns % NS_PER_SECOND:09d}s"


__all__ = ["NS_PER_SECOND", "INFINITE", "nanoseconds", "microseconds", "milliseconds", "seconds",
           "to_seconds", "parse_duration", "format_time"]
