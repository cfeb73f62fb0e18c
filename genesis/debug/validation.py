"""Checks of a Graph's or a Trace's JSON form before it is read, so a file of the wrong
shape (hand-edited, truncated, from another tool or a newer genesis) fails with one
ValueError that says where and what is wrong, never with a KeyError deep in a renderer.

Locations are written as paths into the JSON: `graphs[0].edges[3]`, `parameters[2].shape`.

>>> check_graph({"schema": "genesis.debug.Graph", "version": 2, "nodes": [], "sources": [],
...              "edges": [[0, 17, 0]], "modules": {}, "steps": [], "grad_norms": {}, "meta": {}},
...             versions=(2,), kinds=("op",), where="graphs[0]")
Traceback (most recent call last):
ValueError: graphs[0].edges[0] points at node 0, which does not exist (the graph has no nodes)
"""
from __future__ import annotations

from dataclasses import MISSING, fields

from .findings import KINDS, SEVERITY_ORDER, Finding
from .json_values import NON_FINITE
from .stats import GRAD_KEYS, VALUE_KEYS

__all__ = ["check_graph", "check_trace"]

GRAPH_SCHEMA = "genesis.debug.Graph"
TRACE_SCHEMA = "genesis.debug.Trace"
GRAPH_FIELDS = ("nodes", "edges", "sources", "modules", "steps", "grad_norms", "meta")
NODE_OPTIONAL = {"function": str, "user_defined": bool, "device": str, "module": str,
                 "source": int, "findings": list}
TRACE_FIELDS = {"script": str, "args": list, "graphs": list, "findings": list, "parameters": list,
                "steps_recorded": int, "steps_seen": int, "exit_code": int,
                "script_error": (str, type(None)), "duration_s": (int, float), "meta": dict}
VALUE_NEEDED = ("mean", "nan", "inf")  # the statistics pictures read
GRAD_NEEDED = ("norm", "nan", "inf")
FINDING_TEXT = ("title", "message", "op", "function", "module", "source", "code")


def check_graph(data, *, versions: tuple, kinds: tuple, where: str = "") -> None:
    """Raise ValueError naming the first thing wrong with a Graph's JSON form `data`."""
    _check_schema(data, GRAPH_SCHEMA, "Graph JSON", versions, where)
    for key in GRAPH_FIELDS:
        _field(data, key, where)
    nodes = _typed(data["nodes"], list, _at(where, "nodes"))
    sources = _typed(data["sources"], list, _at(where, "sources"))
    for index, source in enumerate(sources):
        _entries(source, (str, int, str, str), _item(_at(where, "sources"), index),
                 "[file, line, function, code]")
    for index, node in enumerate(nodes):  # a fast test first: a graph may have a million nodes
        if not _plain_node(node, index, len(sources), kinds):
            _check_node(node, index, len(sources), kinds, _item(_at(where, "nodes"), index))
    for index, edge in enumerate(_typed(data["edges"], list, _at(where, "edges"))):
        if not _plain_edge(edge, len(nodes)):
            _check_edge(edge, nodes, _item(_at(where, "edges"), index))
    for path, class_name in _typed(data["modules"], dict, _at(where, "modules")).items():
        _typed(class_name, str, f"{_at(where, 'modules')}[{path!r}]")
    for index, step in enumerate(_typed(data["steps"], list, _at(where, "steps"))):
        _typed(step, int, _item(_at(where, "steps"), index))
    for name, norms in _typed(data["grad_norms"], dict, _at(where, "grad_norms")).items():
        place = f"{_at(where, 'grad_norms')}[{name!r}]"
        for index, norm in enumerate(_typed(norms, list, place)):
            _number(norm, _item(place, index))
    _typed(data["meta"], dict, _at(where, "meta"))


def check_trace(data, *, versions: tuple, row_type) -> None:
    """Raise ValueError naming the first thing wrong with a Trace's JSON form `data` (its
    graphs are checked by `check_graph` as they are read); `row_type` is the dataclass of
    a parameter row."""
    _check_schema(data, TRACE_SCHEMA, "trace.json", versions, "")
    for key, expected in TRACE_FIELDS.items():
        _typed(_field(data, key, ""), expected, key)
    for index, argument in enumerate(data["args"]):
        _typed(argument, str, _item("args", index))
    for index, finding in enumerate(data["findings"]):
        _check_finding(finding, _item("findings", index))
    for index, row in enumerate(data["parameters"]):
        _check_row(row, row_type, _item("parameters", index))
    if "checks" in data["meta"]:  # the gradient checks' results
        for index, check in enumerate(_typed(data["meta"]["checks"], list, "meta.checks")):
            _number(_typed(check, dict, _item("meta.checks", index)).get("max_abs_error"),
                    _at(_item("meta.checks", index), "max_abs_error"))
    if "losses" in data["meta"]:  # every backward call's loss, which `genesis diff` compares
        _check_losses(data["meta"]["losses"], "meta.losses")


def _check_losses(losses, where: str) -> None:
    """{"steps": [int, ...], "values": [number, ...]}, one value per step."""
    _typed(losses, dict, where)
    steps = _typed(_field(losses, "steps", where), list, _at(where, "steps"))
    values = _typed(_field(losses, "values", where), list, _at(where, "values"))
    if len(steps) != len(values):
        raise ValueError(f"{where} has {len(steps)} steps and {len(values)} values, expected one "
                         "value per step")
    for index, (step, value) in enumerate(zip(steps, values)):
        if type(step) is not int:
            _typed(step, int, _item(_at(where, "steps"), index))
        _number(value, _item(_at(where, "values"), index))


# -- the fast tests: True when every rule of the precise checks below holds -----------------

_NUMBER_TYPES = (int, float)
_NODE_REQUIRED = frozenset(("id", "kind", "name", "outputs"))


def _plain_node(node, index: int, sources: int, kinds: tuple) -> bool:
    if type(node) is not dict:
        return False
    try:
        node_id, kind, name, outputs = node["id"], node["kind"], node["name"], node["outputs"]
    except KeyError:
        return False
    if type(node_id) is not int or node_id != index or kind not in kinds or type(name) is not str \
            or type(outputs) is not list:
        return False
    for info in outputs:
        if info is not None and not _plain_tensor(info):
            return False
    if len(node) > 4:
        for key, value in node.items():
            if key not in _NODE_REQUIRED and type(value) is not NODE_OPTIONAL.get(key):
                return False
        if "source" in node and not 0 <= node["source"] < sources:
            return False
        if "findings" in node and any(type(tag) is not str for tag in node["findings"]):
            return False
    return True


def _plain_tensor(info) -> bool:
    if type(info) is not list or not 2 <= len(info) <= 4 or type(info[0]) is not list \
            or type(info[1]) is not str:
        return False
    for extent in info[0]:
        if type(extent) is not int or extent < 0:
            return False
    return (len(info) < 3 or info[2] is None or _plain_figures(info[2], VALUE_KEYS, VALUE_NEEDED)) \
        and (len(info) < 4 or info[3] is None or _plain_figures(info[3], GRAD_KEYS, GRAD_NEEDED))


def _plain_figures(figures, keys: tuple, needed: tuple) -> bool:
    if type(figures) is list:
        values = figures
        if len(values) != len(keys):
            return False
    elif type(figures) is dict:
        if any(key not in figures for key in needed):
            return False
        values = figures.values()
    else:
        return False
    for value in values:
        if value is not None and type(value) not in _NUMBER_TYPES and \
                not (type(value) is str and value in NON_FINITE):
            return False
    return True


def _plain_edge(edge, nodes: int) -> bool:
    if type(edge) is not list or not 3 <= len(edge) <= 5:
        return False
    src, dst, index = edge[0], edge[1], edge[2]
    if type(src) is not int or type(dst) is not int or type(index) is not int \
            or not 0 <= src < nodes or not 0 <= dst < nodes or index < 0:
        return False
    if len(edge) > 3 and (type(edge[3]) is not int or edge[3] < 0):
        return False
    if len(edge) > 4 and edge[4] is not None:
        if type(edge[4]) is not list or any(type(extent) is not int or extent < 0 for extent in edge[4]):
            return False
    return True


# -- the precise checks: the first thing wrong, and where -----------------------------------

def _check_schema(data, schema: str, what: str, versions: tuple, where: str) -> None:
    _typed(data, dict, where or "the file")
    found = data.get("schema")
    if found != schema:
        raise ValueError(f"{where or 'the file'} is not a genesis {what} (its schema is {found!r}, "
                         f"expected {schema!r})")
    version = _typed(_field(data, "version", where), int, _at(where, "version"))
    if version > max(versions):
        raise ValueError(f"{where or 'the file'} was written by a newer genesis ({what} schema "
                         f"version {version}; this genesis reads {_versions(versions)}): upgrade "
                         "genesis to read it")
    if version not in versions:
        raise ValueError(f"{where or 'the file'} has {what} schema version {version}, which this "
                         f"genesis does not read (it reads {_versions(versions)})")


def _check_node(node, index: int, sources: int, kinds: tuple, where: str) -> None:
    _typed(node, dict, where)
    node_id = _typed(_field(node, "id", where), int, _at(where, "id"))
    if node_id != index:
        raise ValueError(f"{_at(where, 'id')} is {node_id}, expected {index} (a node's id is its "
                         "position in nodes)")
    kind = _field(node, "kind", where)
    if kind not in kinds:
        raise ValueError(f"{_at(where, 'kind')} is {kind!r}, expected one of {', '.join(kinds)}")
    _typed(_field(node, "name", where), str, _at(where, "name"))
    for number, info in enumerate(_typed(_field(node, "outputs", where), list, _at(where, "outputs"))):
        if info is not None:
            _check_tensor(info, _item(_at(where, "outputs"), number))
    for key, value in node.items():
        if key in ("id", "kind", "name", "outputs"):
            continue
        if key not in NODE_OPTIONAL:
            raise ValueError(f"{where} has an unknown field {key!r}")
        _typed(value, NODE_OPTIONAL[key], _at(where, key))
    if "source" in node and not 0 <= node["source"] < sources:
        raise ValueError(f"{_at(where, 'source')} points at source line {node['source']}, which "
                         f"does not exist ({_count(sources, 'source line')})")
    for number, tag in enumerate(node.get("findings", ())):
        _typed(tag, str, _item(_at(where, "findings"), number))


def _check_tensor(info, where: str) -> None:
    """[shape, dtype], then value statistics and gradient statistics (lists or dicts, or null)."""
    _typed(info, list, where)
    if not 2 <= len(info) <= 4:
        raise ValueError(f"{where} has {_entry_count(len(info))}, expected 2 to 4 "
                         "([shape, dtype, value statistics, gradient statistics])")
    _shape(info[0], _item(where, 0))
    _typed(info[1], str, _item(where, 1))
    for position, keys, needed in ((2, VALUE_KEYS, VALUE_NEEDED), (3, GRAD_KEYS, GRAD_NEEDED)):
        if position < len(info) and info[position] is not None:
            _check_figures(info[position], keys, needed, _item(where, position))


def _check_figures(figures, keys: tuple, needed: tuple, where: str) -> None:
    """Statistics: a list in the order of `keys`, or a dict with at least the `needed` keys."""
    _typed(figures, (list, dict), where)
    if isinstance(figures, list):
        if len(figures) != len(keys):
            raise ValueError(f"{where} has {_entry_count(len(figures))}, expected {len(keys)} "
                             f"({', '.join(keys)})")
        figures = dict(zip(keys, figures))
    for key in needed:
        _field(figures, key, where)
    for key, value in figures.items():
        _number(value, _at(where, key))


def _check_edge(edge, nodes: list, where: str) -> None:
    _typed(edge, list, where)
    if not 3 <= len(edge) <= 5:
        raise ValueError(f"{where} has {_entry_count(len(edge))}, expected 3 to 5 "
                         "([source node, target node, input slot, output number, shape])")
    for position in range(min(len(edge), 4)):
        _typed(edge[position], int, _item(where, position))
    for node_id in edge[:2]:
        if not 0 <= node_id < len(nodes):
            raise ValueError(f"{where} points at node {node_id}, which does not exist "
                             f"({'the graph has no nodes' if not nodes else _count(len(nodes), 'node')})")
    for position, what in ((2, "input slot"), (3, "output number")):
        if position < len(edge) and edge[position] < 0:
            raise ValueError(f"{_item(where, position)} is {edge[position]}, a negative {what}")
    if len(edge) > 4 and edge[4] is not None:
        _shape(edge[4], _item(where, 4))


def _check_finding(finding, where: str) -> None:
    _typed(finding, dict, where)
    allowed = {item.name for item in fields(Finding)}
    for key in finding:
        if key not in allowed:
            raise ValueError(f"{where} has an unknown field {key!r}")
    kind = _typed(_field(finding, "kind", where), str, _at(where, "kind"))
    if kind not in KINDS:
        raise ValueError(f"{_at(where, 'kind')} is {kind!r}, not a finding kind this genesis knows")
    severity = _typed(_field(finding, "severity", where), str, _at(where, "severity"))
    if severity not in SEVERITY_ORDER:
        raise ValueError(f"{_at(where, 'severity')} is {severity!r}, expected error, warning or info")
    _typed(_field(finding, "title", where), str, _at(where, "title"))
    for key in FINDING_TEXT:
        if finding.get(key) is not None:
            _typed(finding[key], str, _at(where, key))
    for key in ("graph", "node"):
        if finding.get(key) is not None:
            _typed(finding[key], int, _at(where, key))
    _typed(finding.get("details", {}), dict, _at(where, "details"))


def _check_row(row, row_type, where: str) -> None:
    _typed(row, dict, where)
    known = {item.name: item for item in fields(row_type)}
    for key in row:
        if key not in known:
            raise ValueError(f"{where} has an unknown field {key!r}")
    for name, item in known.items():
        if item.default is MISSING and item.default_factory is MISSING:
            _field(row, name, where)
    _typed(row["name"], str, _at(where, "name"))
    _shape(row["shape"], _at(where, "shape"))
    _typed(row["dtype"], str, _at(where, "dtype"))
    _number(row["grad_norm"], _at(where, "grad_norm"))
    _typed(row.get("status", ""), str, _at(where, "status"))
    for index, norm in enumerate(_typed(row.get("history", []), list, _at(where, "history"))):
        _number(norm, _item(_at(where, "history"), index))
    for index, step in enumerate(_typed(row.get("steps", []), list, _at(where, "steps"))):
        _typed(step, int, _item(_at(where, "steps"), index))
    if row.get("grad_norm_step") is not None:
        _typed(row["grad_norm_step"], int, _at(where, "grad_norm_step"))
    for index, summary in enumerate(_typed(row.get("summary", []), list, _at(where, "summary"))):
        _typed(summary, dict, _item(_at(where, "summary"), index))


# -- values --------------------------------------------------------------------------------

def _field(data: dict, key: str, where: str):
    if key not in data:
        raise ValueError(f"{where or 'the file'} has no {key!r} field")
    return data[key]


def _typed(value, expected, where: str):
    """`value` when it is of the `expected` JSON type(s) (an int is no bool, a float may be an
    int), else a ValueError saying what it is."""
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise ValueError(f"{where} is {_describe(value)}, expected {_names(kinds)}")
    return value


def _number(value, where: str) -> None:
    """A statistic: a number, null, or one of the strings NaN, Infinity, -Infinity."""
    if value is None or (isinstance(value, str) and value in NON_FINITE) or \
            (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return
    raise ValueError(f"{where} is {_describe(value)}, expected a number or null")


def _shape(value, where: str) -> None:
    for index, extent in enumerate(_typed(value, list, where)):
        if _typed(extent, int, _item(where, index)) < 0:
            raise ValueError(f"{_item(where, index)} is {extent}, a negative extent")


def _entries(value, types: tuple, where: str, layout: str) -> None:
    if len(_typed(value, list, where)) != len(types):
        raise ValueError(f"{where} has {_entry_count(len(value))}, expected {len(types)} {layout}")
    for index, (entry, expected) in enumerate(zip(value, types)):
        _typed(entry, expected, _item(where, index))


_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer",
               float: "a number", bool: "true or false", type(None): "null"}


def _names(kinds: tuple) -> str:
    return " or ".join(dict.fromkeys(_JSON_NAMES[kind] for kind in kinds))


def _describe(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _versions(versions: tuple) -> str:
    listed = sorted(versions)
    if len(listed) == 1:
        return f"version {listed[0]}"
    return "versions " + ", ".join(map(str, listed[:-1])) + f" and {listed[-1]}"


def _count(number: int, what: str) -> str:
    return f"the graph has {number} {what}{'' if number == 1 else 's'}"


def _entry_count(number: int) -> str:
    return f"{number} entr{'y' if number == 1 else 'ies'}"


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _item(where: str, index) -> str:
    return f"{where}[{index!r}]" if isinstance(index, str) else f"{where}[{index}]"
