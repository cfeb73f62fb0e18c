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

The common case costs one encoding: the values are walked only when that fails or the
text shows a surrogate. Compact text (no indent) is made by `orjson` when it is installed
(a declared dependency: 10x faster than `json` on the numbers a big graph holds), and kept
only when it is ASCII and holds no `null`: orjson writes NaN and Inf as null, so a text with
a null, as any text orjson refuses (a lone surrogate, a NumPy scalar, a key that is not a
string), is made again by `json`. The two give the same values; a number may be spelled
differently (orjson's 0.00001 for json's 1e-05). `loads` reads such text back (the
standard library's json, with the cyclic collector paused).

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

from .gc_pause import paused_gc

try:
    import orjson
except ImportError:  # an install without it: the standard library's json does it all
    orjson = None

__all__ = ["dumps", "loads", "to_json_value", "number", "numbers", "NON_FINITE"]

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_SURROGATE_ESCAPE = re.compile(r"\\ud[89a-f][0-9a-f]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value, indent: int | None = None, separators=None) -> str:
    """`json.dumps` that always gives strict JSON, in ASCII (see the module docstring)."""
    if indent is None and orjson is not None and separators == _COMPACT:
        text = _orjson_text(value)
        if text is not None:
            return text
    try:
        text = json.dumps(value, indent=indent, separators=separators, allow_nan=False)
    except (ValueError, TypeError):  # a non-finite float or a NumPy scalar somewhere
        text = None
    if text is not None and not _SURROGATE_ESCAPE.search(text):
        return text
    return json.dumps(to_json_value(value), indent=indent, separators=separators,
                      allow_nan=False)


_COMPACT = (",", ":")
# what `json` refuses or writes otherwise (dataclasses, dates, subclasses such as NumPy's
# float64) orjson passes on as unknown: such a value goes to `json`
_AS_JSON_WOULD = 0 if orjson is None else (orjson.OPT_PASSTHROUGH_DATACLASS
                                           | orjson.OPT_PASSTHROUGH_DATETIME
                                           | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _orjson_text(value) -> str | None:
    """The compact text of `value` by orjson, or None where `json` must make it: orjson
    refused it, or wrote a `null` (a NaN or Inf becomes one), or a character past ASCII."""
    try:
        encoded = orjson.dumps(value, option=_AS_JSON_WOULD)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if b"null" in encoded or not encoded.isascii():
        return None
    return encoded.decode("ascii")


def loads(text):
    """`json.loads(text)` with the cyclic collector paused: the millions of dicts and lists
    of a big trace.json hold no cycle, yet each full collection set off while they are made
    walks all those made so far (a 100,000-op trace: 1.4 s to read, 0.55 s paused). Errors
    are json's (json.JSONDecodeError). (orjson reads faster, but turns an integer past 64
    bits into a float: the values would not all be json's.)

    >>> loads('{"min": "-Infinity", "n": [1, 2]}')
    {'min': '-Infinity', 'n': [1, 2]}
    """
    with paused_gc():
        return json.loads(text)


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
