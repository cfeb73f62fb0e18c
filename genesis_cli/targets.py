"""Finding what `genesis gradcheck TARGET` should check, and building its inputs.

TARGET forms: `path/to/file.py` (every `genesis.Function` subclass defined in
that file), `path/to/file.py:Name`, and `package.module:Name`. A target is a
Function subclass (checked through `.apply`) or a plain callable. A file is
imported with `sys.argv` set to just its path, so its own argument parsing never
sees genesis's options; one that exits while being imported is a usage error
naming the line that exited.

>>> [target.name for target in resolve("genesis.ops.elementwise:Mul")]
['genesis.ops.elementwise:Mul']
>>> parse_shape("3,4"), parse_shape("scalar")
((3, 4), ())
"""
from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.util
import inspect
import io
import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from typing import Callable

import numpy as np

import genesis
from genesis.debug.blame import forward_parameters
from genesis.device import DeviceError

__all__ = ["TargetError", "Target", "Inputs", "resolve", "input_count", "build_inputs",
           "made_up_value", "MADE_UP_VALUES", "parse_shape", "parse_dtype", "parse_device", "on_device", "DEFAULT_SHAPE"]

DEFAULT_SHAPE = (3, 4)
_STANDARD_LIBRARY = os.path.join(sysconfig.get_paths()["stdlib"], "")


class TargetError(ValueError):
    """The target can't be found or loaded; the message says why and what to pass."""


@dataclass
class Target:
    """One thing to gradcheck: a name for the table, the callable, and where it came from."""

    name: str
    function: Callable
    obj: object

    @property
    def is_function_class(self) -> bool:
        return isinstance(self.obj, type) and issubclass(self.obj, genesis.Function)


@dataclass
class Inputs:
    """The arguments of one check and how they were made, in words for the report.
    `random`: made here in the --dtype (not by `gradcheck_inputs()`); `defaulted`: random
    and of the default shape (so a shape error may mean `--shape` is needed)."""

    args: tuple
    description: str
    random: bool = True
    defaulted: bool = False


def resolve(spec: str) -> list:
    """The targets named by `spec` (see module docstring)."""
    location, _, name = spec.partition(":") if not _is_windows_drive(spec) else (spec, "", "")
    if location.endswith(".py"):
        module = _load_file(location)
        label = os.path.basename(location)
    elif not name:
        raise TargetError(f"{spec!r} is not a target: give a .py file, file.py:Name or "
                          "package.module:Name")
    else:
        module = _import(location)
        label = location
    if name:
        return [_target_from(module, name, f"{label}:{name}")]
    found = [Target(f"{label}:{obj.__name__}", obj.apply, obj) for obj in _own_functions(module)]
    if not found:
        torch_functions = _own_torch_functions(module)
        if torch_functions:
            named = ", ".join(torch_functions)
            raise TargetError(f"{location} defines PyTorch Functions ({named}), not genesis "
                              "ones: check them with genesis standing in for torch, "
                              f"`genesis gradcheck --torch {spec}`")
        raise TargetError(f"{location} defines no genesis.autograd.Function subclass; to check a "
                          "plain function name it: file.py:function_name")
    return found


def _own_torch_functions(module) -> list:
    """The names of the real torch.autograd.Function subclasses defined in `module`."""
    return [obj.__name__ for obj in vars(module).values()
            if isinstance(obj, type) and obj.__module__ == module.__name__
            and any(base.__module__.startswith("torch.autograd") and base.__name__ == "Function"
                    for base in obj.__mro__[1:])]


def _own_functions(module) -> list:
    """The Function subclasses defined in `module` (not imported into it)."""
    return [obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, genesis.Function)
            and obj.__module__ == module.__name__]


def _is_windows_drive(spec: str) -> bool:
    return len(spec) > 2 and spec[1] == ":" and spec[2] in "\\/"


def _load_file(path: str):
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise TargetError(f"file not found: {path} (check the path)")
    module_name = f"_genesis_target_{abs(hash(path))}"
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)   # so the file can import its neighbours
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        _run_import(path, path, lambda: spec.loader.exec_module(module))
    except TargetError:
        del sys.modules[module_name]
        raise
    except Exception as error:
        del sys.modules[module_name]
        raise TargetError(f"importing {path} failed: {type(error).__name__}: {error}") from error
    return module


def _import(module_name: str):
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return _run_import(module_name, module_name, lambda: importlib.import_module(module_name))
    except ModuleNotFoundError as error:
        raise TargetError(f"can't import module {module_name!r}: {error} (run from the folder "
                          "that holds the package, or give a file path)") from error
    except TargetError:
        raise
    except Exception as error:
        raise TargetError(f"importing {module_name} failed: {type(error).__name__}: {error}") from error


def _run_import(what: str, argv0: str, load):
    """`load()` with `sys.argv` set to just `argv0`, so the code's own argument parsing sees
    none of genesis's options. What it writes to stderr is passed on, unless it exits: that
    is a TargetError of one line, naming the line that exited."""
    arguments, sys.argv = sys.argv, [argv0]
    said = io.StringIO()
    exited = False
    try:
        with contextlib.redirect_stderr(said):
            return load()
    except SystemExit as exit:
        exited = True
        raise TargetError(_exited_at_import(what, exit, said.getvalue())) from None
    finally:
        sys.argv = arguments
        if not exited:
            sys.stderr.write(said.getvalue())


def _exited_at_import(what: str, exit: SystemExit, said: str) -> str:
    """What to say when importing `what` raised SystemExit: the line of its file that did it,
    what it printed last, the fix."""
    frames = [frame for frame in traceback.extract_tb(exit.__traceback__)
              if not frame.filename.startswith(("<", _STANDARD_LIBRARY))]  # <frozen importlib>
    where = f" at {frames[-1].filename}:{frames[-1].lineno} ({frames[-1].line.strip()})" \
        if frames else ""
    last = [line.strip() for line in said.splitlines() if line.strip()]
    printed = f" after printing {last[-1]!r}" if last else ""
    return (f"importing {what} exited{where} with status {exit.code!r}{printed}; genesis "
            "gradcheck imports it to find what to check, so put its own script code under "
            "`if __name__ == \"__main__\":`")


def _target_from(module, name: str, label: str) -> Target:
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{label}: no {part!r} there; {_candidates(module)}")
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, genesis.Function):
        return Target(label, obj.apply, obj)
    if callable(obj):
        return Target(label, obj, obj)
    raise TargetError(f"{label} is {_short_repr(obj)} ({type(obj).__name__}), not a Function "
                      "subclass or a callable")


def _candidates(module) -> str:
    """What the module offers to check, in words."""
    names = [obj.__name__ for obj in _own_functions(module)]
    names += [name for name, obj in vars(module).items()
              if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")]
    if not names:
        return "it defines no Function subclass or function"
    return "it defines " + ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def input_count(target: Target) -> tuple:
    """(required, most) tensor inputs the target takes, the ones --shape is given for: the
    positional parameters of its forward (less ctx, where forward takes it) or of the
    callable that `take_tensors`; `most` is None when it takes *args.

    >>> input_count(resolve("genesis.ops.elementwise:Mul")[0])
    (2, 2)
    """
    tensors = [p for p in _positional(target) if takes_tensor(p)]
    required = sum(1 for p in tensors if p.default is p.empty)
    return required, None if _variadic(target) else len(tensors)


# What a required input annotated with a Python number type gets: a tensor would be wrong there.
MADE_UP_VALUES = {int: 2, float: 0.5, bool: False}


def takes_tensor(parameter: inspect.Parameter) -> bool:
    """Whether an input takes a tensor: it is not annotated, or annotated with a Tensor
    class or anything but a class (Optional[Tensor], Any). An annotation may be the class
    or, under `from __future__ import annotations`, a builtin's name.

    >>> def scale(x, k: int):
    ...     return x * k
    >>> [takes_tensor(p) for p in inspect.signature(scale).parameters.values()]
    [True, False]
    """
    kind = _annotated_class(parameter)
    return kind is None or issubclass(kind, genesis.Tensor)


def made_up_value(target: Target, parameter: inspect.Parameter):
    """The value an input that does not `takes_tensor` gets: its default where it has one,
    else MADE_UP_VALUES' for one annotated int, float or bool; of another class (str, list,
    ...) no value can be made up: a TargetError names the input."""
    if parameter.default is not parameter.empty:
        return parameter.default
    kind = _annotated_class(parameter)
    if kind in MADE_UP_VALUES:
        return MADE_UP_VALUES[kind]
    raise TargetError(f"{target.name}: can't make up a value for its argument {parameter.name!r} "
                      f"(annotated {kind.__name__}): give {target.name.rpartition(':')[2]} a "
                      "gradcheck_inputs() that returns its inputs")


def _annotated_class(parameter: inspect.Parameter) -> type | None:
    kind = parameter.annotation
    if isinstance(kind, str):
        kind = getattr(builtins, kind.strip(), None)
    return kind if isinstance(kind, type) and kind is not parameter.empty else None


def _parameters(target: Target) -> list:
    """The parameters that take the target's inputs: forward's (see
    `genesis.debug.blame.forward_parameters`) or the callable's."""
    if target.is_function_class:
        parameters = forward_parameters(target.obj)
    else:
        try:
            parameters = list(inspect.signature(target.function).parameters.values())
        except (TypeError, ValueError):
            parameters = None
    if parameters is None:
        raise TargetError(f"can't tell how many inputs {target.name} takes; pass --shape once per "
                          "input")
    return parameters


def _positional(target: Target) -> list:
    return [p for p in _parameters(target) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _variadic(target: Target) -> bool:
    return any(p.kind is p.VAR_POSITIONAL for p in _parameters(target))


def build_inputs(target: Target, shapes: list, dtype, seed: int, device=None) -> Inputs:
    """Inputs for the check: random tensors of `shapes` (one per tensor input) when given,
    else the target's `gradcheck_inputs()` (a staticmethod or attribute) when it has one,
    else random tensors of DEFAULT_SHAPE, one per required tensor input; random ones require
    grad. The other inputs get a `made_up_value`. All on `device` (the CPU by default): given
    inputs are moved there, as leaves."""
    device = genesis.device("cpu") if device is None else device
    provider = getattr(target.obj, "gradcheck_inputs", None)
    if not shapes and provider is not None:
        genesis.manual_seed(seed)
        inputs = provider() if callable(provider) else provider
        args = tuple(_moved(arg, device) for arg in (
            inputs if isinstance(inputs, (list, tuple)) else (inputs,)))
        return Inputs(args, "gradcheck_inputs(): " + ", ".join(_describe(arg) for arg in args)
                      + on_device(device), random=False)
    required, most = input_count(target)
    numbers = {p.name: made_up_value(target, p) for p in _positional(target) if not takes_tensor(p)}
    noun = "tensor input" if numbers else "input"
    defaulted = not shapes
    if defaulted:
        shapes = [DEFAULT_SHAPE] * max(required, 1)
        description = f"{len(shapes)} x {DEFAULT_SHAPE}"
    elif len(shapes) < required or (most is not None and len(shapes) > most):
        raise TargetError(f"{target.name} takes {_count_words(required, most, noun)} but "
                          f"{len(shapes)} --shape {'was' if len(shapes) == 1 else 'were'} given; "
                          f"pass --shape once per {noun}")
    else:
        description = ", ".join(str(shape) for shape in shapes)
    rng = np.random.default_rng(seed)
    tensors = [genesis.tensor(rng.standard_normal(shape), dtype=dtype, device=device,
                              requires_grad=True) for shape in shapes]
    made_up = "".join(f"; {p.name}={numbers[p.name]!r} (made up for `{p.name}: "
                      f"{_annotated_class(p).__name__}`)"
                      for p in _positional(target) if p.name in numbers and p.default is p.empty)
    return Inputs(_in_order(target, tensors, numbers),
                  f"{description} random {dtype.name}, seed {seed}{on_device(device)}{made_up}",
                  defaulted=defaulted)


def _in_order(target: Target, tensors: list, numbers: dict) -> tuple:
    """The arguments in forward's order: the tensors in the tensor inputs' places, `numbers`
    (from `made_up_value`) in theirs, as far as the last tensor or required number."""
    args, left = [], list(tensors)
    for parameter in _positional(target):
        if parameter.name in numbers:
            if parameter.default is not parameter.empty and not left:
                break
            args.append(numbers[parameter.name])
        elif left:
            args.append(left.pop(0))
        else:
            break
    return tuple(args + left)   # the rest go to *args


def _moved(value, device):
    """A tensor input on `device`, a leaf that requires grad as the given one did."""
    if not isinstance(value, genesis.Tensor) or value.device == device:
        return value
    return value.detach().to(device).requires_grad_(value.requires_grad)


def on_device(device) -> str:
    """' on cuda:0' for the report, nothing for the CPU."""
    return "" if device.type == "cpu" else f" on {device}"


def parse_device(name: str):
    """The genesis device called `name` ('cpu', 'cuda', 'cuda:1'), checked to be usable.

    >>> parse_device("cpu")
    device(type='cpu')
    """
    try:
        device = genesis.device(name)
        device.xp  # a GPU without CuPy or a driver says so here, not in every check
    except DeviceError as error:
        raise TargetError(f"bad --device {name!r}: {error}") from None
    return device


def _count_words(required: int, most: int | None, noun: str = "input") -> str:
    if most == required:
        return f"{required} {noun}{'' if required == 1 else 's'}"
    return f"{required} or more {noun}s" if most is None else f"{required} to {most} {noun}s"


def _describe(arg) -> str:
    if isinstance(arg, genesis.Tensor):
        grad = "" if arg.requires_grad else " (no grad)"
        return f"{tuple(arg.shape)} {arg.dtype.name}{grad}"
    return _short_repr(arg)


def parse_shape(text: str) -> tuple:
    """'3,4' or '3x4' -> (3, 4); '' or 'scalar' -> ()."""
    cleaned = text.strip().strip("()[]")
    if cleaned in ("", "scalar"):
        return ()
    try:
        shape = tuple(int(part) for part in cleaned.replace("x", ",").split(",") if part.strip())
    except ValueError:
        shape = None
    if shape is None or any(size < 0 for size in shape):
        raise TargetError(f"bad --shape {text!r}: expected sizes >= 0 separated by commas, like "
                          "--shape 3,4 (or --shape scalar)")
    return shape


def parse_dtype(name: str):
    """The floating genesis dtype called `name` ('float64', 'float32', 'double', ...).

    >>> parse_dtype("double")
    genesis.float64
    """
    dtype = getattr(genesis, name, None)
    if not isinstance(dtype, genesis.DType) or not dtype.is_floating_point:
        raise TargetError(f"bad --dtype {name!r}: gradients need a floating dtype: float64 "
                          "(recommended), float32, float16 or bfloat16")
    return dtype
