"""Dispatch modes (`torch.utils._python_dispatch`): a `TorchDispatchMode` entered as a context
manager sees every genesis op called while it is active, as
`mode.__torch_dispatch__(func, types, args, kwargs)`, and decides what the call returns (most
modes log or count, then run the op with `func(*args, **kwargs)`).

`func` is an `OpOverload`, named as PyTorch names the ATen operator the genesis op stands
for: `aten.mul.Tensor` for `a * b`, `aten.mm.default` for `a @ b` on matrices, `aten.sin.default`
for `x.sin()` (see `ATEN_NAMES`; an op missing there keeps genesis's name, `aten.<op>.default`).
The same object is `torch.ops.aten.mul.Tensor` (`genesis.utils._python_dispatch.aten.mul.Tensor`),
so `func is aten.mul.Tensor` tests which op runs.

Where genesis differs from PyTorch: genesis has no dispatcher under its autograd. A mode sees
an op where the op is called (a genesis `Op`'s `apply`, autograd included, so `func(...)`
returns a tensor with its `grad_fn`); `args` are genesis's arguments of that op (Tensors and
the op's own parameters); a user's `autograd.Function` is not an op (the ops its forward calls
are seen); a plain backward computes on arrays, so a mode sees no op there (a `create_graph`
backward's ops are seen); factory functions (`genesis.rand`) are not ops. A custom op
(`genesis.library`) is one call, `<namespace>.<name>.default`: no mode sees the ops inside its
kernel. While a mode's
`__torch_dispatch__` runs, the mode is off (`func(...)` goes to the modes entered before it, then
to the op), as in PyTorch. The modes are per thread; while none is entered, an op call pays
one check of a plain flag.

>>> import genesis
>>> class Log(TorchDispatchMode):
...     def __init__(self):
...         self.calls = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.calls.append(str(func))
...         return func(*args, **(kwargs or {}))
>>> with Log() as log:
...     y = (genesis.ones(2, 2, requires_grad=True) * 2).exp()
>>> log.calls, y.grad_fn.name()
(['aten.mul.Tensor', 'aten.exp.default'], 'ExpBackward0')
"""
from __future__ import annotations

import threading

from ..autograd import function
from ..ops.catalog import public_functions
from ..tensor import Tensor
from .aten_functions import ATEN_FUNCTIONS

__all__ = ["TorchDispatchMode", "OpOverload", "OpOverloadPacket", "aten", "ATEN_NAMES",
           "aten_name", "not_dispatched", "dispatch_call", "pre_dispatch_hooks", "call_opaque",
           "ops_namespace", "namespaces"]


def _by_rank(names: dict):
    """(name, overload) chosen by the number of dims of the first two tensor arguments."""
    def choose(args):
        ranks = tuple(arg.ndim for arg in args[:2] if isinstance(arg, Tensor))
        return names.get(ranks, names[None])
    return choose


def _reduction(name: str, with_dims: str):
    """`name.default` for a full reduction (no dims given), `name.<with_dims>` otherwise."""
    def choose(args):
        return (name, "default") if len(args) < 2 or args[1] is None else (name, with_dims)
    return choose


def _binary(name: str):
    """`name.Tensor` between two tensors, `name.Scalar` with a number."""
    def choose(args):
        return (name, "Tensor") if len(args) > 1 and isinstance(args[1], Tensor) else (name, "Scalar")
    return choose


def _indexing(key) -> tuple:
    """`x[key]`: one integer is aten.select, slices are aten.slice, anything else aten.index."""
    parts = [part for part in (key if key.__class__ is tuple else (key,)) if part is not Ellipsis]
    if len(parts) == 1 and isinstance(parts[0], int) and not isinstance(parts[0], bool):
        return "select", "int"
    if parts and all(isinstance(part, slice) for part in parts):
        return "slice", "Tensor"
    return "index", "Tensor"


# genesis op name (as `genesis.autograd.function._op_name` gives it) -> the ATen operator
# PyTorch dispatches for the same call: (name, overload), or a function of the op's arguments
# choosing one. Only where the names differ or the overload is not "default".
ATEN_NAMES = {
    **{name: (name, "Tensor") for name in ("add", "sub", "mul", "div")},  # a number is wrapped
    **{name: _binary(name) for name in ("eq", "ne", "lt", "le", "gt", "ge", "remainder", "fmod")},
    "pow": lambda args: ("pow", "Tensor_Tensor" if isinstance(args[1], Tensor) else "Tensor_Scalar"),
    "square": ("pow", "Tensor_Scalar"),
    "matmul": _by_rank({(2, 2): ("mm", "default"), (3, 3): ("bmm", "default"),
                        (1, 1): ("dot", "default"), (2, 1): ("mv", "default"),
                        None: ("matmul", "default")}),
    "sum": _reduction("sum", "dim_IntList"),
    "mean": _reduction("mean", "dim"),
    "var": ("var", "correction"),
    "var_mean": ("var_mean", "correction"),
    "std": ("std", "correction"),
    "reshape": ("view", "default"),
    "view_of": ("alias", "default"),
    "transpose": ("transpose", "int"),
    "select": ("select", "int"),
    "unbind": ("unbind", "int"),
    "split": ("split", "Tensor"),
    "narrow": ("slice", "Tensor"),
    "get_item": lambda args: _indexing(args[1]),
    "slice": ("slice", "Tensor"),  # x[key], by the node PyTorch's indexing ends with
    "index": ("index", "Tensor"),
    "where": ("where", "self"),
    "masked_fill": ("masked_fill", "Scalar"),
    "fill": ("fill_", "Scalar"),
    "copy": ("copy_", "default"),
    "to_copy": ("_to_copy", "default"),
    "softmax": ("_softmax", "default"),
    "log_softmax": ("_log_softmax", "default"),
    "dropout": ("native_dropout", "default"),
    "layer_norm": ("native_layer_norm", "default"),
    "batch_norm": ("native_batch_norm", "default"),
    "max_along_dim": ("max", "dim"),
    "min_along_dim": ("min", "dim"),
    "clamp": ("clamp", "Tensor"),
    "scatter": ("scatter", "src"),
    "scatter_add": ("scatter_add", "default"),
    "index_put": ("index_put", "default"),
}


def aten_name(cls, args: tuple) -> tuple:
    """(name, overload) of the ATen operator standing for a call of the genesis op `cls`.

    >>> from genesis.ops.elementwise import Mul
    >>> import genesis
    >>> from genesis.ops.comparison import Eq
    >>> aten_name(Eq, (genesis.ones(2), genesis.ones(2))), aten_name(Eq, (genesis.ones(2), 2.0))
    (('eq', 'Tensor'), ('eq', 'Scalar'))
    """
    name = function._op_name(cls)
    entry = ATEN_NAMES.get(name)
    if entry is None:
        return name, "default"
    return entry if entry.__class__ is tuple else entry(args)


class _State(threading.local):
    """This thread's mode stack (innermost last) and the ops dispatched now (innermost last,
    as (OpOverload, op class)): a call of `func` inside a mode runs the op dispatched."""

    def __init__(self):
        self.modes: list = []
        self.running: list = []
        self.suspended: list = []  # the modes taken off while their handlers run, in order


_state = _State()
_not_dispatched: set = set()
_entered = [0]  # modes entered on all threads: `function.dispatch_modes.active` while above 0
_entering = threading.Lock()


def not_dispatched(cls):
    """Mark an Op class that modes do not see (it is no ATen operator: checkpoint's node, which
    hands on outputs the ops inside it made); returns the class.

    >>> class Hidden(function.Op):
    ...     pass
    >>> not_dispatched(Hidden) is Hidden
    True
    """
    _not_dispatched.add(cls)
    return cls


# `hook(cls, args)` run before an op call is handed to the modes (a non-reentrant
# checkpoint's recomputation may end there, as PyTorch's does before dispatching)
pre_dispatch_hooks: list = []


def _run(cls, args: tuple, kwargs: dict):
    """What an op call does while modes are active: hand it to the innermost mode, with that
    mode off while it runs."""
    for hook in pre_dispatch_hooks:
        hook(cls, args)
    if cls in _not_dispatched:
        with _Suspended():
            return cls.apply(*args, **kwargs)
    name, overload = aten_name(cls, args)
    func = getattr(getattr(aten, name), overload)
    types = tuple({type(arg) for arg in args if isinstance(arg, Tensor)})
    with _Suspended() as mode:
        _state.running.append((func, cls))
        try:
            return mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            _state.running.pop()


class _PlainCall:
    """A call that is no genesis Op, as `_state.running` holds it: `apply` hands it on to the
    modes entered before the one handling it."""

    def __init__(self, func, run):
        self.func, self.run = func, run

    def apply(self, *args, **kwargs):
        return _show(self.func, self.run, args, kwargs)


def dispatch_call(func, run, args: tuple, kwargs: dict | None = None):
    """`run(*args, **kwargs)`, shown to the active modes as a call of `func` (for a call that
    is no genesis Op, such as the `aten.detach.default` a checkpoint's recomputation makes);
    without modes, a plain call. Made inside a mode's handler (by the autograd part of an op,
    which PyTorch runs above its modes), it is shown to the modes whose handlers run too.

    >>> import genesis
    >>> dispatch_call(aten.detach.default, genesis.Tensor.detach, (genesis.ones(1),)).tolist()
    [1.0]
    """
    kwargs = kwargs or {}
    if not _state.modes and not _state.suspended:
        return run(*args, **kwargs)
    modes, suspended = _state.modes, _state.suspended
    _state.modes, _state.suspended = modes + suspended[::-1], []
    try:
        return _show(func, run, args, kwargs)
    finally:
        _state.modes, _state.suspended = modes, suspended


def call_opaque(func, run, args: tuple, kwargs: dict):
    """`run(*args, **kwargs)` shown to this thread's active modes as ONE call of `func` (a custom
    op of `genesis.library`): the handler's `func(...)` goes on to the modes entered before it,
    then runs `run` with every mode off, so the ops inside it are seen by none (as in PyTorch).

    >>> import genesis
    >>> call_opaque(aten.exp.default, genesis.exp, (genesis.zeros(1),), {}).tolist()
    [1.0]
    """
    if not _state.modes:
        return run(*args, **kwargs)
    return _show(func, run, args, kwargs)


def _show(func, run, args: tuple, kwargs: dict):
    if not _state.modes:
        return run(*args, **kwargs)
    types = tuple({type(arg) for arg in args if isinstance(arg, Tensor)})
    with _Suspended() as mode:
        _state.running.append((func, _PlainCall(func, run)))
        try:
            return mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            _state.running.pop()


class _Suspended:
    """The innermost mode taken off the stack for the duration (PyTorch runs a mode's handler
    with that mode off)."""

    def __enter__(self):
        self.mode = _state.modes.pop()
        _state.suspended.append(self.mode)
        return self.mode

    def __exit__(self, *exc):
        _state.suspended.pop()
        _state.modes.append(self.mode)


function.DispatchModes.run = staticmethod(_run)
function.DispatchModes.local = _state


class TorchDispatchMode:
    """A context manager seeing every genesis op called while it is active (see the module
    docstring). Subclasses define `__torch_dispatch__(self, func, types, args=(), kwargs=None)`;
    the default runs the op.

    >>> import genesis
    >>> with TorchDispatchMode():
    ...     genesis.zeros(2).exp().tolist()
    [1.0, 1.0]
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        with _entering:
            _state.modes.append(self)
            _entered[0] += 1
            function.dispatch_modes.active = True
        return self

    def __exit__(self, *exc):
        modes = _state.modes
        with _entering:
            for index in range(len(modes) - 1, -1, -1):
                if modes[index] is self:
                    del modes[index]
                    _entered[0] -= 1
                    break
            function.dispatch_modes.active = _entered[0] > 0

    @classmethod
    def push(cls, *args, **kwargs):
        """Make a mode of this class and return it, to be entered with `with`."""
        return cls(*args, **kwargs)


def _get_current_dispatch_mode():
    """The innermost active dispatch mode of this thread, or None."""
    return _state.modes[-1] if _state.modes else None


def _get_current_dispatch_mode_stack() -> list:
    """The active dispatch modes of this thread, outermost first."""
    return list(_state.modes)


class OpOverload:
    """One ATen operator overload (`aten.mul.Tensor`): `str()` gives "aten.mul.Tensor",
    `__name__` "mul.Tensor", `overloadpacket` the operator (`aten.mul`). Calling it runs the
    genesis op: inside a mode's handler, the op being dispatched; elsewhere, genesis's function
    of that name (`genesis.mul`), when there is one.

    >>> import genesis
    >>> str(aten.exp.default), aten.exp.default.__name__, aten.exp.default.overloadpacket is aten.exp
    ('aten.exp.default', 'exp.default', True)
    >>> aten.exp.default(genesis.zeros(1)).tolist()
    [1.0]
    """

    # A custom op's (genesis.library): `run_with_outputs(outputs, args, kwargs)` makes the call's
    # autograd with `outputs` as its results, its kernel not run again (a selective checkpoint's
    # recomputation of an op whose outputs it kept); None for an aten op, which computes again.
    run_with_outputs = None

    def __init__(self, packet: "OpOverloadPacket", overload: str, kernel=None):
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"
        self.namespace = packet.namespace
        self._kernel = kernel  # a custom op's call; None: genesis's function of the packet's name

    def name(self) -> str:
        """The operator's schema name: "aten::mul.Tensor" ("aten::exp" for a default)."""
        suffix = "" if self._overloadname == "default" else f".{self._overloadname}"
        return f"{self.namespace}::{self.overloadpacket.__name__}{suffix}"

    def __call__(self, *args, **kwargs):
        for func, cls in reversed(_state.running):
            if func is self:
                return cls.apply(*args, **kwargs)
        if self._kernel is not None:
            return self._kernel(*args, **kwargs)
        return self.overloadpacket._function(*args, **kwargs)

    def __repr__(self) -> str:
        return (f"<OpOverload(op='{self.namespace}.{self.overloadpacket.__name__}', "
                f"overload='{self._overloadname}')>")

    def __str__(self) -> str:
        return f"{self.namespace}.{self.__name__}"

    def __hash__(self) -> int:
        return id(self)


class OpOverloadPacket:
    """An ATen operator with all its overloads (`aten.mul`); an attribute gives one overload
    (`aten.mul.Tensor`, always the same object), a call runs genesis's function of that name.

    >>> str(aten.mul), aten.mul.Tensor is aten.mul.Tensor
    ('aten.mul', True)
    """

    def __init__(self, name: str, namespace: str = "aten"):
        self.__name__ = name
        self.namespace = namespace
        self._overloads: dict = {}

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is None and self.namespace != "aten":  # a custom op: its defined overloads only
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
        if found is None:
            found = self._overloads[overload] = OpOverload(self, overload)
        return found

    def overloads(self) -> list:
        """The names of the overloads used so far."""
        return list(self._overloads)

    def _function(self, *args, **kwargs):
        if self.namespace != "aten":
            return getattr(self, "default")(*args, **kwargs)
        function_ = public_functions().get(self.__name__) or ATEN_FUNCTIONS.get(self.__name__)
        if function_ is None:
            raise NotImplementedError(f"aten.{self.__name__}: genesis has no function of that name "
                                      "to run outside a dispatch mode's handler")
        return function_(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self.__name__}')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self.__name__}"


class _Namespace:
    """`torch.ops.aten`: an attribute per operator (`aten.sin`), made once. Another namespace
    (`torch.ops.mylib`) holds the custom ops `genesis.library` defines in it, and no others."""

    def __init__(self, name: str = "aten"):
        self._namespace_name = name  # (not `name`: an op may be called that)
        self._packets: dict = {}

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        found = self._packets.get(name)
        if found is None and self._namespace_name != "aten":
            raise AttributeError(f"'_OpNamespace' '{self._namespace_name}' object has no attribute "
                                 f"'{name}'")
        if found is None:
            found = self._packets[name] = OpOverloadPacket(name)
        return found

    def _add(self, name: str, overload: str, kernel) -> OpOverload:
        """A custom op's overload, made and kept (genesis.library.Library.define)."""
        packet = self._packets.get(name)
        if packet is None:
            packet = self._packets[name] = OpOverloadPacket(name, self._namespace_name)
        found = packet._overloads[overload] = OpOverload(packet, overload, kernel)
        return found

    def _remove(self, name: str, overload: str) -> None:
        """Forget a custom op's overload (its library was destroyed), and its packet with its last."""
        packet = self._packets.get(name)
        if packet is not None:
            packet._overloads.pop(overload, None)
            if not packet._overloads:
                del self._packets[name]


aten = _Namespace()
namespaces = {"aten": aten}  # `torch.ops.<name>`: the namespaces made so far


def ops_namespace(name: str) -> _Namespace:
    """`torch.ops.<name>`: the namespace of that name, made at the first ask (PyTorch's are too).

    >>> ops_namespace("aten") is aten, ops_namespace("mylib") is ops_namespace("mylib")
    (True, True)
    """
    found = namespaces.get(name)
    if found is None:
        found = namespaces[name] = _Namespace(name)
    return found
