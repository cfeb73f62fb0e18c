"""`genesis.debug.json_values.dumps`: strict ASCII JSON, the same values whether orjson (the
compact text's fast path) or the standard library's json makes the text."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genesis.debug import json_values
from genesis.debug.json_values import dumps, numbers

COMPACT = (",", ":")


def _strict(text: str):
    """The values of `text`, refusing what strict JSON has not (NaN, Infinity)."""
    assert text.isascii()
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in {text!r}"))


def _by_json_only(monkeypatch, value) -> str:
    with monkeypatch.context() as patched:
        patched.setattr(json_values, "orjson", None)
        return dumps(value, separators=COMPACT)


@pytest.mark.skipif(json_values.orjson is None, reason="orjson is not installed")
def test_compact_text_of_plain_data_is_made_by_orjson(monkeypatch):
    made = []
    real = json_values.orjson.dumps
    monkeypatch.setattr(json_values.orjson, "dumps", lambda *a, **k: made.append(1) or real(*a, **k),
                        raising=False)
    assert dumps({"min": -243.57847595214844, "shape": [16], "kind": "op"},
                 separators=COMPACT) == '{"min":-243.57847595214844,"shape":[16],"kind":"op"}'
    assert made


@pytest.mark.parametrize("value, expected", [
    ({"min": float("-inf"), "max": float("nan")}, {"min": "-Infinity", "max": "NaN"}),
    ({"name": "fc\udcff"}, {"name": "fc\ufffd"}),            # a lone surrogate
    ({"n": np.float32(2.5), "k": np.int64(3)}, {"n": 2.5, "k": 3}),  # NumPy scalars
    ({"name": "poids é"}, {"name": "poids é"}),              # written as \\u00e9
    ({1: "one"}, {"1": "one"}),                              # a key that is not a string
    ({"big": 2 ** 70}, {"big": 2 ** 70}),                    # past 64 bits
    ({"gone": None, "small": 1e-5}, {"gone": None, "small": 1e-5}),
])
def test_what_orjson_would_write_otherwise_comes_out_as_json_writes_it(monkeypatch, value, expected):
    fast = dumps(value, separators=COMPACT)
    assert _strict(fast) == expected
    assert _strict(_by_json_only(monkeypatch, value)) == expected


def test_values_json_refuses_are_refused_the_same_way():
    @dataclasses.dataclass
    class Point:
        x: float

    with pytest.raises(TypeError, match="plain data only"):
        dumps({"point": Point(1.0)}, separators=COMPACT)


_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
_LEAVES = st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | _FLOATS | st.text(max_size=8)
_VALUES = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(_VALUES)
def test_any_plain_value_gives_the_same_values_by_either_encoder(value):
    fast = dumps(value, separators=COMPACT)
    json_values_orjson, json_values.orjson = json_values.orjson, None
    try:
        slow = dumps(value, separators=COMPACT)
    finally:
        json_values.orjson = json_values_orjson
    read_fast, read_slow = _strict(fast), _strict(slow)
    assert _same(numbers(read_fast), numbers(read_slow))


def _same(a, b) -> bool:
    """Equal, NaN counting as equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    return a == b and type(a) is type(b)
