"""Custom operators (`torch.library`, served by genesis): an op defined from a typed Python
function (`custom_op`) or from a schema string (`Library.define`, `define`) with its kernels
(`Library.impl`, `impl`), its gradient formula (`register_autograd`) and its fake kernel
(`register_fake`: recorded, never run, as genesis has no fake tensors).

A custom op is opaque, as in PyTorch: a dispatch mode sees ONE call, `torch.ops.ns.name.default`
(`genesis.utils._python_dispatch.ops_namespace("ns").name.default`), never the ops inside its
kernel, and a selective checkpoint may name it in its policy (a kept output is handed back at
recomputation without running the kernel again). The kernel runs with grad disabled; without a
registered formula, a backward through its output raises. Non-tensor outputs (ints) pass through;
`mutates_args` names the inputs the kernel writes in place (their version goes up).

Where genesis differs: gradients do not flow through the tensors of a `list[Tensor]` argument
(a call that would need them is refused); dispatch keys other than the device kernels, the
composite ones and Meta are refused.

>>> import genesis
>>> with _scoped_library("doc", "FRAGMENT"):
...     @custom_op("doc::twice", mutates_args=())
...     def twice(x: genesis.Tensor) -> genesis.Tensor:
...         return x * 2
...     register_autograd("doc::twice", lambda ctx, grad: grad * 2)
...     x = genesis.ones(2, requires_grad=True)
...     ops_namespace("doc").twice(x).sum().backward()
>>> x.grad.tolist()
[2.0, 2.0]
"""
from __future__ import annotations

import collections.abc
import contextlib
import inspect
import re
import types
import typing

from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled, no_grad
from .tensor import Tensor
from .utils._python_dispatch import OpOverload, call_opaque, ops_namespace

__all__ = ["Library", "custom_op", "CustomOpDef", "register_autograd", "register_fake",
           "register_kernel", "define", "impl", "infer_schema", "get_ctx", "fallthrough_kernel"]

_RESERVED = ("aten", "prim", "prims")
_operators: dict = {}      # "ns::name" or "ns::name.overload" -> CustomOpDef
_def_namespaces: set = set()  # namespaces a live "DEF" Library holds


class _Argument:
    """One argument of a schema: its name, type (schema spelling), default and role."""

    __slots__ = ("name", "type", "default", "keyword_only", "mutated")

    def __init__(self, name, type_, default=inspect.Parameter.empty, keyword_only=False, mutated=False):
        self.name, self.type, self.default = name, type_, default
        self.keyword_only, self.mutated = keyword_only, mutated

    def __str__(self) -> str:
        type_ = "Tensor(a!)" if self.mutated and self.type == "Tensor" else self.type
        default = "" if self.default is inspect.Parameter.empty else f"={self.default!r}"
        return f"{type_} {self.name}{default}"


_PYTHON_TYPES = {int: "SymInt", float: "float", bool: "bool", str: "str"}


def _schema_type(annotation, what: str, func) -> str:
    """The schema spelling of a parameter's or the return's annotation."""
    if annotation is Tensor:
        return "Tensor"
    if annotation in _PYTHON_TYPES:
        return _PYTHON_TYPES[annotation]
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and len(members) == 2 and type(None) in members:
        inner = members[0] if members[1] is type(None) else members[1]
        return _schema_type(inner, what, func) + "?"
    if origin in (list, collections.abc.Sequence) and len(members) == 1:
        return _schema_type(members[0], what, func) + "[]"
    raise ValueError(f"infer_schema(func): {what} has unsupported type {annotation}. Got func with "
                     f"signature {inspect.signature(func)})")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None) -> str:
    """The schema string of a typed function (PyTorch's spelling): `mutates_args` names the
    parameters it writes in place ("unknown": any Tensor one).

    >>> import genesis
    >>> def f(x: genesis.Tensor, n: int, *, scale: float = 1.0) -> tuple[genesis.Tensor, int]:
    ...     return x, n
    >>> infer_schema(f, mutates_args=())
    '(Tensor x, SymInt n, *, float scale=1.0) -> (Tensor, SymInt)'
    """
    arguments, returns = _infer(prototype_function, mutates_args)
    return _schema_text(arguments, returns)


def _infer(func, mutates_args) -> tuple:
    signature = inspect.signature(func, eval_str=True)
    mutated = set() if mutates_args == "unknown" else set(mutates_args)
    unknown = mutated - set(signature.parameters)
    if unknown:
        raise ValueError(f"infer_schema(func): {unknown} in mutates_args were not found in the custom "
                         "op's signature. mutates_args should contain the names of all args that the "
                         "custom op mutates, or just the string 'unknown' if you don't know. Got func "
                         f"with signature {signature})")
    arguments = []
    for name, parameter in signature.parameters.items():
        if parameter.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {name} must have a type annotation. "
                             f"Got func with signature {signature})")
        type_ = _schema_type(parameter.annotation, f"Parameter {name}", func)
        arguments.append(_Argument(name, type_, parameter.default,
                                   parameter.kind is inspect.Parameter.KEYWORD_ONLY,
                                   name in mutated or (mutates_args == "unknown" and "Tensor" in type_)))
    annotation = signature.return_annotation
    if annotation is inspect.Signature.empty:
        raise ValueError("infer_schema(func): No return type annotation was provided. Please add one. "
                         f"Got func with signature {signature})")
    if annotation is None or annotation is type(None):
        returns = None
    elif typing.get_origin(annotation) is tuple:
        returns = tuple(_schema_type(member, "Return", func) for member in typing.get_args(annotation))
    else:
        returns = _schema_type(annotation, "Return", func)
    return arguments, returns


def _schema_text(arguments: list, returns) -> str:
    parts, starred = [], False
    for argument in arguments:
        if argument.keyword_only and not starred:
            parts.append("*")
            starred = True
        parts.append(str(argument))
    shown = "()" if returns is None else f"({', '.join(returns)})" if isinstance(returns, tuple) else returns
    return f"({', '.join(parts)}) -> {shown}"


def _parse_schema(schema: str) -> tuple:
    """(name, overload, arguments, returns) of "name.overload(Tensor x, *, int n=2) -> Tensor"."""
    match = re.fullmatch(r"\s*([\w]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*", schema)
    if match is None:
        raise ValueError(f"genesis.library: cannot read the schema {schema!r}; expected e.g. "
                         "\"name(Tensor x, int n=2) -> Tensor\"")
    name, overload, text, returned = match.groups()
    arguments, keyword_only = [], False
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        if part == "*":
            keyword_only = True
            continue
        declared, _, default = part.partition("=")
        type_, _, arg_name = declared.strip().rpartition(" ")
        mutated = "!" in type_
        type_ = re.sub(r"\(\w*!?\)", "", type_).replace("int", "SymInt").replace("SymSymInt", "SymInt")
        value = inspect.Parameter.empty
        if default:
            default = default.strip()
            value = {"None": None, "True": True, "False": False}.get(default, default)
            if value is default:
                value = default.strip("\"'") if default[0] in "\"'" else float(default) \
                    if "." in default or "e" in default else int(default)
        arguments.append(_Argument(arg_name, type_, value, keyword_only, mutated))
    returned = re.sub(r"\(\w*!?\)", "", returned.strip())
    if returned.startswith("("):
        members = tuple(member.strip() for member in returned[1:-1].split(",") if member.strip())
        returns = members or None
    else:
        returns = returned
    return name, overload or "default", arguments, returns


def _parse_qualname(qualname: str) -> tuple:
    namespace, separator, name = qualname.partition("::")
    if not separator or not namespace or not name:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got '
                         f"{qualname}. The qualname passed to the torch.library APIs must look like "
                         '"namespace::name", e.g. "aten::sin"')
    return namespace, name


_TYPE_CHECKS = {
    "Tensor": lambda v: isinstance(v, Tensor),
    "SymInt": lambda v: isinstance(v, int) and not isinstance(v, Tensor),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, Tensor),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "Scalar": lambda v: isinstance(v, (int, float, complex)) and not isinstance(v, Tensor),
}


class CustomOpDef:
    """A custom op (what `custom_op` returns, and what `Library.define` makes): callable as
    the function it stands for; `torch.ops.ns.name` and `.default` call it too.

    >>> import genesis
    >>> with _scoped_library("doc", "FRAGMENT"):
    ...     @custom_op("doc::inc", mutates_args=())
    ...     def inc(x: genesis.Tensor, n: int) -> genesis.Tensor:
    ...         return x + n
    ...     inc, inc(genesis.zeros(1), 2).tolist()
    (<CustomOpDef(doc::inc)>, [2.0])
    """

    def __init__(self, namespace: str, name: str, overload: str, arguments: list, returns,
                 library: "Library"):
        self._namespace, self._name, self._overload = namespace, name, overload
        self._qualname = f"{namespace}::{name}" + ("" if overload == "default" else f".{overload}")
        self._arguments, self._returns = arguments, returns
        self._signature = inspect.Signature([
            inspect.Parameter(argument.name, inspect.Parameter.KEYWORD_ONLY if argument.keyword_only
                              else inspect.Parameter.POSITIONAL_OR_KEYWORD, default=argument.default)
            for argument in arguments])
        self._mutated = tuple(index for index, argument in enumerate(arguments) if argument.mutated)
        self._kernels: dict = {}      # device type ("cpu", "cuda") or "default" -> function
        self._composite = None        # CompositeImplicitAutograd: called as it is, not opaque
        self._backward_fn = self._setup_context_fn = self._fake_fn = None
        self._library = library
        self._opoverload = ops_namespace(namespace)._add(name, overload, self)
        self._opoverload.run_with_outputs = self._run_with_outputs
        self._function = type(f"GeneratedBackwardFor_{namespace}_{name}_{overload}", (Function,),
                              {"forward": staticmethod(self._forward),
                               "backward": staticmethod(self._backward)})

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self._qualname}(): {error}") from None
        self._check_types(bound)
        if self._composite is not None:
            return self._composite(*args, **kwargs)
        keyword_only = {name: bound.arguments[name] for name in bound.kwargs}
        return call_opaque(self._opoverload, self._run, bound.args, keyword_only)

    def _check_types(self, bound) -> None:
        for argument in self._arguments:
            if argument.name not in bound.arguments:
                continue
            value, type_ = bound.arguments[argument.name], argument.type
            if type_.endswith("?"):
                if value is None:
                    continue
                type_ = type_[:-1]
            check = _TYPE_CHECKS.get(type_) or (lambda v: isinstance(v, (list, tuple)))
            if not check(value):
                expected = "int" if type_ == "SymInt" else type_
                raise RuntimeError(f"{self._qualname}() Expected a value of type '{expected}' for "
                                   f"argument '{argument.name}' but instead found type "
                                   f"'{type(value).__name__}'.\nDeclaration: {self._qualname}"
                                   f"{_schema_text(self._arguments, self._returns)}")

    def _run(self, *args, _kernel=None, **kwargs):
        """The call past the dispatch modes: its autograd, then its kernel (or `_kernel`)."""
        if is_grad_enabled():
            if any(isinstance(arg, (list, tuple)) and any(
                    isinstance(item, Tensor) and item._requires_grad for item in arg) for arg in args):
                raise NotImplementedError(f"{self._qualname}: genesis does not differentiate through "
                                          "the tensors of a list argument of a custom op yet; pass "
                                          "them as separate Tensor arguments")
            if any(isinstance(arg, Tensor) and arg._requires_grad for arg in args):
                return self._restructured(self._function.apply(*args, _kernel=_kernel, **kwargs))
        with no_grad():
            return self._call_kernel(args, kwargs, _kernel)

    def _run_with_outputs(self, outputs, args: tuple, kwargs: dict):
        return self._run(*args, _kernel=lambda *_, **__: outputs, **kwargs)

    def _call_kernel(self, args: tuple, kwargs: dict, kernel=None):
        if kernel is None:
            device = next((arg.device.type for arg in args if isinstance(arg, Tensor)), "cpu")
            kernel = self._kernels.get(device) or self._kernels.get("default")
            if kernel is None:
                raise NotImplementedError(f"Could not run '{self._qualname}' with arguments from the "
                                          f"'{device.upper()}' backend: genesis.library has no kernel "
                                          f"of it for {device} (registered: {sorted(self._kernels)})")
        result = kernel(*args, **kwargs)
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for output in outputs:
            if isinstance(output, Tensor) and any(isinstance(arg, Tensor) and output._data is arg._data
                                                  for arg in args):
                raise RuntimeError(
                    f"{self._qualname}: The output of this custom operator (1) must not also be an "
                    "input to this custom operator and (2) may not alias any inputs to this custom "
                    "operator or other returns. Please instead return a clone of the offending output "
                    "tensor(s) (e.g. return x.clone())")
        for index in self._mutated:
            if index < len(args) and isinstance(args[index], Tensor):
                args[index]._version_counter[0] += 1
        return result

    def _forward(self, ctx, *args, _kernel=None, **kwargs):
        result = self._call_kernel(args, kwargs, _kernel)
        if self._setup_context_fn is not None:
            inputs = self._signature.bind(*args, **kwargs)
            inputs.apply_defaults()
            positional = tuple(inputs.arguments[a.name] for a in self._arguments if not a.keyword_only)
            if any(argument.keyword_only for argument in self._arguments):
                keyword_only = {a.name: inputs.arguments[a.name] for a in self._arguments if a.keyword_only}
                self._setup_context_fn(ctx=ctx, inputs=positional, keyword_only_inputs=keyword_only,
                                       output=result)
            else:
                self._setup_context_fn(ctx=ctx, inputs=positional, output=result)
        return tuple(result) if isinstance(result, list) else result

    def _restructured(self, result):
        """A list-of-tensors return comes back a list (the Function handed it on as a tuple)."""
        return list(result) if self._returns == "Tensor[]" else result

    def _backward(self, ctx, *grads):
        if self._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {self._opoverload} but no autograd "
                               "formula was registered. Please use register_autograd to add one.")
        if self._returns == "Tensor[]":
            grads = (list(grads),)
        return self._backward_fn(ctx, *grads)

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        """Set the op's gradient formula: `backward(ctx, *grads)` returns one gradient per
        positional input; `setup_context(ctx, inputs, output)` (with `keyword_only_inputs` for
        an op with keyword-only arguments) runs in forward to save what backward needs."""
        if self._mutated:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} "
                               f"with schema {self._qualname}{_schema_text(self._arguments, self._returns)}"
                               ". Please create a functional operator and register an autograd "
                               "formula for that.")
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_fake(self, fn, /):
        """Record the op's fake (meta) kernel; genesis has no fake tensors, so it is not run."""
        self._fake_fn = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        """Set the op's kernel for `device_types` ("cpu", "cuda", a sequence, or None: every
        device); a decorator when `fn` is None."""
        def register(function):
            for device in (("default",) if device_types is None else
                           (device_types,) if isinstance(device_types, str) else device_types):
                self._kernels[device] = function
            return function
        return register if fn is None else register(fn)

    def _remove(self) -> None:
        ops_namespace(self._namespace)._remove(self._name, self._overload)
        if _operators.get(self._qualname) is self:
            del _operators[self._qualname]


def fallthrough_kernel():
    """A dummy kernel PyTorch registers to skip a dispatch key; genesis accepts and ignores it."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "CompositeExplicitAutograd": "default",
                "cpu": "cpu", "cuda": "cuda", "default": "default"}


class Library:
    """A set of op definitions and kernels in namespace `ns`: kind "DEF" (the one library
    defining `ns`), "FRAGMENT" (one of many) or "IMPL" (kernels only). `_destroy()` (or leaving
    `_scoped_library`) removes the ops it defined and the kernels it registered.

    >>> lib = Library("doc", "FRAGMENT")
    >>> lib.define("neg(Tensor x) -> Tensor")
    'neg'
    >>> lib._destroy()
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with "
                             "another name.")
        if kind == "DEF":
            if ns in _def_namespaces:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace "
                                   f"{ns}; please put all of your definitions in a single "
                                   "TORCH_LIBRARY block (use kind='FRAGMENT' for more)")
            _def_namespaces.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs: list = []
        self._op_impls: list = []   # (op, key, the kernel it replaced)
        self._live = True

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define the op `schema` names ("name(Tensor x) -> Tensor"); returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        name, overload, arguments, returns = _parse_schema(schema)
        qualname = f"{self.ns}::{name}" + ("" if overload == "default" else f".{overload}")
        if qualname in _operators:
            raise RuntimeError(f"Tried to register an operator ({qualname}) with the same name and "
                               "overload name multiple times.")
        self._add(CustomOpDef(self.ns, name, overload, arguments, returns, self))
        return name if overload == "default" else f"{name}.{overload}"

    def _add(self, op: CustomOpDef) -> None:
        previous = _operators.get(op._qualname)
        if previous is not None:
            previous._library._op_defs.remove(previous)
        _operators[op._qualname] = op
        self._op_defs.append(op)

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Register `fn` as the kernel of op `op_name` ("name", "name.overload", or its
        OpOverload) for `dispatch_key` ("CPU", "CUDA", "CompositeExplicitAutograd": every device;
        "CompositeImplicitAutograd" or "": `fn` is called as it is, its ops differentiated and
        seen by modes; "Meta": recorded)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if with_keyset:
            raise NotImplementedError("genesis.library: with_keyset=True needs PyTorch's dispatcher")
        op = _lookup(op_name if isinstance(op_name, OpOverload) or "::" in str(op_name)
                     else f"{self.ns}::{op_name}")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key == "Meta":
            op._fake_fn = fn
            return
        if key == "CompositeImplicitAutograd":
            slot = "composite"
            previous, op._composite = op._composite, fn
        elif key in _DEVICE_KEYS:
            slot = _DEVICE_KEYS[key]
            if not allow_override and slot in op._kernels:
                raise RuntimeError(f"This is not allowed since there's already a kernel registered from "
                                   f"python overriding {op._name}'s behavior for {key} dispatch key "
                                   f"and {self.ns} namespace.")
            previous = op._kernels.get(slot)
            op._kernels[slot] = fn
        else:
            raise NotImplementedError(f"genesis.library: kernels for the dispatch key {key!r} are not "
                                      "supported (use CPU, CUDA, CompositeExplicitAutograd, "
                                      "CompositeImplicitAutograd, Meta; register_autograd for autograd)")
        self._op_impls.append((op, slot, previous))

    def _destroy(self) -> None:
        """Remove the ops this library defined and the kernels it registered."""
        for op, slot, previous in reversed(self._op_impls):
            if slot == "composite":
                op._composite = previous
            elif previous is None:
                op._kernels.pop(slot, None)
            else:
                op._kernels[slot] = previous
        for op in self._op_defs:
            op._remove()
        self._op_defs, self._op_impls = [], []
        if self.kind == "DEF" and self._live:
            _def_namespaces.discard(self.ns)
        self._live = False


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    """A `Library` whose ops and kernels are removed when the block ends."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


_libraries: dict = {}  # namespace -> the FRAGMENT holding ops defined with no library given


def _fragment(namespace: str, lib) -> Library:
    if lib is not None:
        return lib
    found = _libraries.get(namespace)
    if found is None:
        found = _libraries[namespace] = Library(namespace, "FRAGMENT")
    return found


def _lookup(op) -> CustomOpDef:
    """The custom op named by a qualname, an OpOverload or a CustomOpDef."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        op = op.name()
    if not isinstance(op, str):
        raise ValueError(f"got unexpected type for op: {type(op)}")
    namespace, name = _parse_qualname(op)
    found = _operators.get(op)
    if found is None:
        getattr(ops_namespace(namespace), name.split(".")[0])  # PyTorch's AttributeError
        raise ValueError(f"genesis.library: {op} is no custom op (genesis's own ops take no kernels)")
    return found


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make `fn` (typed: Tensor, int, float, bool, str, optionals and lists of them) the custom
    op `name` ("namespace::name"), for `device_types` (None: every device); a decorator when
    `fn` is None. `mutates_args` names the inputs it writes in place ("unknown": any).

    >>> import genesis
    >>> @custom_op("doc::halve", mutates_args=())
    ... def halve(x: genesis.Tensor) -> genesis.Tensor:
    ...     return x / 2
    >>> halve(genesis.ones(1)).tolist(), str(ops_namespace("doc").halve.default)
    ([0.5], 'doc.halve.default')
    >>> halve._remove()
    """
    def make(function) -> CustomOpDef:
        namespace, op_name = _parse_qualname(name)
        if schema is not None:
            _, _, arguments, returns = _parse_schema(op_name + schema)
        else:
            arguments, returns = _infer(function, mutates_args)
        op = CustomOpDef(namespace, op_name, "default", arguments, returns, _fragment(namespace, None))
        op._library._add(op)
        op.register_kernel(device_types, function)
        op.__doc__, op.__wrapped__ = function.__doc__, function
        return op

    return make if fn is None else make(fn)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Set the gradient formula of custom op `op` (a qualname, its OpOverload or CustomOpDef):
    see `CustomOpDef.register_autograd`."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Record the fake kernel of custom op `op` (not run: genesis has no fake tensors); a
    decorator when `func` is None."""
    found = _lookup(op)
    return found.register_fake if func is None else found.register_fake(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Set the kernel of custom op `op` for `device_types`; a decorator when `func` is None."""
    return _lookup(op).register_kernel(device_types, func)


def define(qualname: str, schema: str, *, lib=None, tags=()) -> None:
    """Define op `qualname` ("namespace::name") of `schema` ("(Tensor x) -> Tensor"), in `lib`
    (its life) or in a library that lives on; kernels come with `impl`.

    >>> import genesis
    >>> with _scoped_library("doc", "FRAGMENT") as lib:
    ...     define("doc::neg", "(Tensor x) -> Tensor", lib=lib)
    ...     impl("doc::neg", "cpu", lambda x: -x, lib=lib)
    ...     ops_namespace("doc").neg(genesis.ones(1)).tolist()
    [-1.0]
    """
    namespace, name = _parse_qualname(qualname)
    if not re.fullmatch(r"\(.*\) -> .*", schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. '
                         f'"(Tensor x) -> Tensor" but got "{schema}"')
    _fragment(namespace, lib).define(name + schema, tags=tags)


def impl(qualname: str, types, func=None, *, lib=None):
    """Register `func` as the kernel of op `qualname` for the device types `types` ("cpu",
    "cuda", "default" for all, or a dispatch key name); a decorator when `func` is None."""
    keys = (types,) if isinstance(types, str) else tuple(types)

    def register(function):
        namespace, _ = _parse_qualname(qualname)
        library = _fragment(namespace, lib)
        for key in keys:
            library.impl(qualname, function, key)
        return function

    if func is None:
        return register
    register(func)
    return None


def get_ctx():
    """The fake-kernel context of PyTorch: genesis runs no fake kernels, so there is none."""
    raise RuntimeError("genesis.library.get_ctx: genesis has no fake tensors; fake kernels are "
                       "recorded, never run")
