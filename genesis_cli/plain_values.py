"""Typer's checks of `genesis trace`'s option values, without pydantic where a value needs none.

Typer (from 0.2x) checks each option's value with a pydantic TypeAdapter that it builds on
first use (`_TyperParameter.get_runtime_param`). For `genesis trace` that means importing
pydantic and building nine adapters: 13 MB that its process then holds while the script
runs (a third of that process, which waits beside the script's own), and 0.3 s of
processor time at every start. Its options' values are plain: flags, text, paths, whole
numbers with a lower bound. `take_plain_values(params)` gives each such parameter a
`PlainValues` coercion, which takes a plain value exactly as Typer's adapter would (the same result) and
hands any other value to Typer's own coercion, built then: a value Typer refuses is refused
by Typer, with its message. A Typer without these checks (before 0.2x) is left as it is.

>>> import typer
>>> from typer.main import get_command
>>> app = typer.Typer()
>>> @app.command()
... def run(steps: int = typer.Option(1, "--steps", min=1)):
...     print(steps + 1)
>>> command = get_command(app)
>>> take_plain_values(command.params)
>>> command.main(["--steps", "41"], standalone_mode=False)
42
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PlainValues", "take_plain_values"]

_NOT_PLAIN = object()  # a value for Typer's own coercion
# the checks of a Path parameter that `PlainValues` makes as Typer does: its defaults
_PATH_DEFAULTS = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False,
                  "readable": True, "resolve_path": False, "allow_dash": False,
                  "path_type": None}


def take_plain_values(params: list) -> None:
    """Give each of a command's `params` (its `get_params(ctx)`: with the help option) whose
    values can be plain a `PlainValues` coercion, where Typer would build a pydantic adapter
    on first use."""
    for param in params:
        if getattr(param, "_runtime_param", False) is not None:  # none to build (older Typer)
            continue
        kind = _plain_kind(getattr(param, "type_descriptor", None))
        if kind is not None:
            param._runtime_param = PlainValues(kind)


class PlainValues:
    """A parameter's coercion (Typer's `RuntimeParam.coerce`) for values of one plain `kind`:
    "flag" (bool), "text" (str), "texts" (list[str]), "whole" (int, within the parameter's
    min and max) or "path" (pathlib.Path, with Typer's default checks: it may be missing; if
    it exists, it must be readable)."""

    def __init__(self, kind: str):
        self.kind = kind

    def coerce(self, value, param, ctx):
        multiple = param.multiple or param.nargs == -1
        if value is None:  # as Typer's coercion gives it
            return () if multiple else None
        plain = _NOT_PLAIN if multiple and isinstance(value, str) else self._plain(value, param)
        if plain is not _NOT_PLAIN:
            return plain
        from typer._coercion import build_runtime_param  # pydantic, only for this value

        return build_runtime_param(param.type_descriptor).coerce(value, param=param, ctx=ctx)

    def _plain(self, value, param):
        if self.kind == "flag":
            return value if type(value) is bool else _NOT_PLAIN
        if self.kind == "text":
            return value if type(value) is str else _NOT_PLAIN
        if self.kind == "texts":
            if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
                return list(value)
            return _NOT_PLAIN
        if self.kind == "whole":
            return _whole(value, param.type_descriptor.parameter_info)
        return _path(value)


def _plain_kind(descriptor) -> str | None:
    """The kind of plain values a parameter takes (see `PlainValues`), or None."""
    if descriptor is None or descriptor.file_annotation is not None:
        return None
    annotation, info = descriptor.annotation, descriptor.parameter_info
    if info.parser is not None:
        return None
    if annotation is bool:
        return "flag"
    if annotation is str:
        return "text"
    if annotation == list[str]:
        return "texts"
    if annotation is int and not info.clamp:
        return "whole"
    if annotation is Path and all(getattr(info, name, None) == default
                                  for name, default in _PATH_DEFAULTS.items()):
        return "path"
    return None


def _whole(value, info):
    """An int given as one (not a bool), or as up to 18 ASCII digits, within the bounds."""
    if type(value) is str and 0 < len(value) <= 18 and value.isascii() and value.isdigit():
        value = int(value)
    if type(value) is not int:
        return _NOT_PLAIN
    if (info.min is not None and value < info.min) or (info.max is not None and value > info.max):
        return _NOT_PLAIN  # Typer says which bound
    return value


def _path(value):
    """A Path of a str (or a Path) that is missing, or is there and readable, as Typer's
    default checks take it."""
    if isinstance(value, Path):
        path = value
    elif type(value) is str and value and "\0" not in value:
        path = Path(value)
    else:
        return _NOT_PLAIN
    try:
        os.stat(path)
    except OSError:  # missing: Typer's default checks take it
        return path
    return path if os.access(path, os.R_OK) else _NOT_PLAIN
