"""Strict JSON for everything a trace writes (trace.json, the run journal, the HTML
report's data), whatever values and names the run held.

- A number that is not finite is written as a string: "NaN", "Infinity" or
  "-Infinity" (the convention of Protocol Buffers' JSON mapping; JavaScript's
  `Number("-Infinity")` reads it back). `number()` and `numbers()` turn those strings
  back into floats where a field holds numbers, so a masked `-inf` minimum or an
  infinite gradient entry survives a round trip.
- A string that is not valid Unicode (a lone surrogate, as Python makes from a file
  name's undecodable bytes) has each such code point replaced by U+FFFD, so a strict
  parser and a UTF-8 file accept it; control characters are escaped by JSON itself.
- NumPy scalars and tuples are written as the plain numbers and lists they stand for.

The common case costs one `json.dumps`: the values are walked only when that fails
or the text shows a surrogate.

>>> dumps({"min": float("-inf"), "name": "fc\\udcff", "n": 3})
'{"min": "-Infinity", "name": "fc\\\\ufffd", "n": 3}'
>>> number("-Infinity"), number(2.5), number(None)
(-inf, 2.5, None)
>>> numbers({"worst": [["NaN", 1.0]], "parameters": ["Infinity"]}, keep=("parameters",))
{'worst': [[nan, 1.0]], 'parameters': ['Infinity']}
"""
from __future__ import annotations

import json
import math
import re

import numpy as np

__all__ = ["dumps", "to_json_value", "number", "numbers", "NON_FINITE"]

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_SURROGATE_ESCAPE = re.compile(r"\\ud[89a-f][0-9a-f]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value, indent: int | None = None, separators=None) -> str:
    """`json.dumps` that always gives strict JSON, in ASCII (see the module docstring)."""
    try:
        text = json.dumps(value, indent=indent, separators=separators, allow_nan=False)
    except (ValueError, TypeError):  # a non-finite float or a NumPy scalar somewhere
        text = None
    if text is not None and not _SURROGATE_ESCAPE.search(text):
        return text
    return json.dumps(to_json_value(value), indent=indent, separators=separators,
                      allow_nan=False)


def to_json_value(value):
    """`value` with non-finite floats as strings, lone surrogates replaced, NumPy scalars and
    tuples as plain numbers and lists (dicts, lists and tuples are copied)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, (bool, int)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _non_finite_name(value)
    if isinstance(value, dict):
        return {to_json_value(str(key)): to_json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, np.generic):
        return to_json_value(value.item())
    raise TypeError(f"a trace holds plain data only; got {type(value).__name__}: {value!r:.80}")


def _non_finite_name(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def number(value):
    """A numeric field read back: "NaN", "Infinity", "-Infinity" become floats."""
    if isinstance(value, str):
        return NON_FINITE.get(value, value)
    return value


def numbers(value, keep: tuple = ()):
    """Every "NaN"/"Infinity"/"-Infinity" string in `value` read back as a float, except
    under the dict keys in `keep` (fields that hold names, which may be any string)."""
    if isinstance(value, dict):
        return {key: item if key in keep else numbers(item, keep) for key, item in value.items()}
    if isinstance(value, list):
        return [numbers(item, keep) for item in value]
    return number(value)
