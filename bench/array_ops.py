"""Kernel launches and host syncs per training step, genesis vs PyTorch, counted on the CPU.

On a GPU genesis is bound by the host: every NumPy-style call on a CuPy array is one
kernel launch with its own Python and driver cost, so the number of array operations a
step makes is what its GPU time follows (bench/cuda_benchmarks.py times it on a real
GPU). This script counts them without a GPU: genesis runs on a "cuda" device
(GENESIS_FAKE_CUDA) whose namespace is NumPy wrapped in a counter, so every array
operation that would be a CuPy call is seen; views, reshapes that need no copy,
allocation without a fill and no-op casts are not counted, as they launch nothing. A host sync is a GPU value
read on the host (bool, float, int, item, tolist, a transfer to the CPU). CuPy-only
kernels (genesis's fused kernels, genesis/ops/_kernels.py, and cupyx's erf) count as one
launch each.

PyTorch's column counts the compute ops of the same step in its CPU profiler: the
top-most ATen calls that are not views, metadata or composites of other ops, with Adam's
multi-tensor (foreach) update as on CUDA (one op for all parameters). On CUDA most are one kernel each, so the two columns compare like with like, not
exactly. (PyTorch's own host reads are not counted: on the CPU they include Adam's step
counters, which stay on the host on CUDA too.)

Workloads are those of bench/cuda_benchmarks.py, the MLP and CNN training steps (Adam) and
the transformer block forward + backward, bench/norm_layers.py's three layers,
`layer(x).sum().backward()`, and the MLP step under `genesis trace` (a step it records,
one it only watches; no PyTorch counterpart); with --ops, common layers one at a time (each op's forward
and the backward of its sum, which adds the sum, its seed and its broadcast to each row).

Run: python bench/array_ops.py [--list] [--ops]

Run: python bench/array_ops.py [--list]   (--list prints each counted operation)
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import types

os.environ.setdefault("GENESIS_FAKE_CUDA", "1")

import numpy as np  # noqa: E402

import genesis  # noqa: E402
import genesis.nn.functional as genesis_F  # noqa: E402
from genesis.ops._kernels import REGISTRY, parameters  # noqa: E402
from genesis.ops._multi_tensor import MultiTensorKernel  # noqa: E402
from genesis.debug._census import ARRAY_SUMS  # noqa: E402
from cuda_benchmarks import (CNN_BATCH, CNN_IMAGE, MLP_BATCH, MLP_SIZES, cnn, mlp,  # noqa: E402
                             transformer_block)
from norm_layers import step as norm_step  # noqa: E402
from transformer_block import BATCH, D_MODEL, LENGTH, initial_weights  # noqa: E402

NORM_CASES = [("BatchNorm2d", (32, 32, 16, 16), lambda nn: nn.BatchNorm2d(32)),
              ("LayerNorm", (8, 128, 256), lambda nn: nn.LayerNorm(256)),
              ("GroupNorm", (32, 32, 16, 16), lambda nn: nn.GroupNorm(8, 32))]  # norm_layers.py's
_NUMPY_DEVICE = genesis.device("cpu")  # fused kernels' references compute on the host

# Calls that make or view arrays without running a kernel.
_NO_KERNEL = {"swapaxes", "transpose", "broadcast_to", "expand_dims", "reshape", "squeeze",
              "moveaxis", "empty", "empty_like", "ravel", "atleast_1d", "result_type",
              "promote_types", "can_cast", "isscalar", "ndim", "shape", "issubdtype", "dtype",
              "broadcast_shapes", "iinfo", "finfo", "get_printoptions", "may_share_memory",
              "shares_memory", "get_array_module"}
# PyTorch ops that launch nothing themselves: views and metadata, composites whose work is
# done by the ops they call (counted there), and reads of CPU scalars (Adam's step count).
_TORCH_TRANSPARENT = {
    "aten::view", "aten::t", "aten::transpose", "aten::as_strided", "aten::expand",
    "aten::reshape", "aten::_reshape_alias", "aten::empty", "aten::empty_strided",
    "aten::empty_like", "aten::detach", "aten::detach_", "aten::unsqueeze", "aten::squeeze",
    "aten::permute", "aten::select", "aten::slice", "aten::unbind", "aten::split", "aten::alias",
    "aten::resolve_conj", "aten::resolve_neg", "aten::lift_fresh", "aten::result_type",
    "aten::_unsafe_view", "aten::chunk", "aten::narrow", "aten::expand_as", "aten::view_as",
    "aten::contiguous", "aten::to", "aten::_to_copy", "aten::size", "aten::stride",
    "aten::linear", "aten::matmul", "aten::cross_entropy_loss", "aten::log_softmax",
    "aten::nll_loss", "aten::nll_loss_nd", "aten::softmax", "aten::_local_scalar_dense",
    "aten::item"}

class Counter:
    """Tallies launches and host syncs by operation name (and by genesis source line)."""

    def __init__(self):
        self.launches, self.syncs, self.sites = collections.Counter(), collections.Counter(), collections.Counter()
        self.active, self.depth = False, 0

    def launch(self, name: str) -> None:
        if self.active and self.depth == 0 and name not in _NO_KERNEL:
            self.launches[name] += 1
            self.sites[f"{_genesis_caller()}  {name}"] += 1

    def sync(self, name: str) -> None:
        if self.active and self.depth == 0:
            self.syncs[name] += 1
            self.sites[f"{_genesis_caller()}  {name} (host sync)"] += 1


COUNTER = Counter()


def _genesis_caller() -> str:
    frame = sys._getframe(2)
    while frame is not None and (f"{os.sep}genesis{os.sep}" not in frame.f_code.co_filename
                                 or frame.f_code.co_filename.endswith("_kernels.py")):
        frame = frame.f_back  # a fused kernel counts at the line that runs it
    if frame is None:
        return "?"
    path = frame.f_code.co_filename
    return f"{path[path.rindex(os.sep + 'genesis' + os.sep) + 1:]}:{frame.f_lineno}"


def _plain(value):
    if isinstance(value, CountedArray):
        return value.view(np.ndarray)
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    return value


def _counted(value):
    if isinstance(value, np.generic):  # a reduction to one value: a 0-d array on CuPy
        value = np.asarray(value)
    if isinstance(value, np.ndarray) and not isinstance(value, CountedArray):
        array = value.view(CountedArray)
        array._owns_memory = value.base is None
        return array
    if isinstance(value, tuple):
        return tuple(_counted(item) for item in value)
    if isinstance(value, list):
        return [_counted(item) for item in value]
    return value


def _call(name: str, function, args, kwargs):
    COUNTER.launch(name)
    COUNTER.depth += 1
    try:
        return _counted(function(*_plain(args), **{key: _plain(v) for key, v in kwargs.items()}))
    finally:
        COUNTER.depth -= 1


class CountedArray(np.ndarray):
    """A NumPy array whose every operation is tallied as one launch (it stands for a CuPy
    array); `base` reads None for a wrapped fresh array, so genesis reuses buffers as on CuPy."""

    @property
    def base(self):
        return None if self.__dict__.get("_owns_memory") else np.ndarray.base.__get__(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        return _call(name, getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, function, types_, args, kwargs):
        return _call(function.__name__, function, args, kwargs)

    def astype(self, dtype, *args, **kwargs):
        if np.dtype(dtype) == self.dtype and kwargs.get("copy", True) is False:
            return self
        return _call("astype", self.view(np.ndarray).astype, (dtype, *args), kwargs)

    def reshape(self, *shape, **kwargs):
        plain = self.view(np.ndarray)
        result = plain.reshape(*shape, **kwargs)
        if result.size and not np.may_share_memory(result, plain):  # a strided view's copy
            COUNTER.launch("reshape (copy)")
        return _counted(result)

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        if any(isinstance(item, np.ndarray | list) for item in keys):
            return _call("getitem (advanced index)", self.view(np.ndarray).__getitem__, (key,), {})
        return _counted(self.view(np.ndarray)[key])  # a view

    def __setitem__(self, key, value):
        _call("setitem", self.view(np.ndarray).__setitem__, (key, value), {})

    def _host(name):
        def read(self, *args):
            COUNTER.sync(name)
            return getattr(self.view(np.ndarray), name)(*args)
        return read

    __bool__, __float__, __int__, item, tolist = (
        _host("__bool__"), _host("__float__"), _host("__int__"), _host("item"), _host("tolist"))

    def get(self):  # CuPy's copy to the host
        COUNTER.sync("get")
        return self.view(np.ndarray).copy()


def _launching_method(name):
    def method(self, *args, **kwargs):
        return _call(name, getattr(self.view(np.ndarray), name), args, kwargs)
    return method


for _name in ("copy", "sum", "max", "min", "mean", "fill", "any", "all", "dot", "clip", "cumsum",
              "argmax", "argmin", "var", "std", "prod", "nonzero"):
    setattr(CountedArray, _name, _launching_method(_name))


class CountingNumPy(types.ModuleType):
    """The fake GPU's namespace: NumPy, with each array function counted as a launch.
    Named "cupy" so genesis takes its CuPy paths; those needing CuPy's own kernels get
    stand-ins that count one launch and compute with NumPy (genesis's fused kernels run
    their array-call references)."""

    def __init__(self):
        super().__init__("cupy")

    @staticmethod
    def asarray(value, dtype=None, *args, **kwargs):
        if isinstance(value, np.ndarray) and (dtype is None or np.dtype(dtype) == value.dtype):
            return value  # CuPy returns the array itself: nothing runs
        return _call("asarray", np.asarray, (value, dtype, *args), kwargs)

    @staticmethod
    def ascontiguousarray(value, dtype=None):
        if isinstance(value, np.ndarray) and value.flags.c_contiguous and \
                (dtype is None or np.dtype(dtype) == value.dtype):
            return value  # as CuPy: the array itself, nothing runs
        return _call("ascontiguousarray", np.ascontiguousarray, (value, dtype), {})

    def __getattr__(self, name):
        value = getattr(np, name)
        if isinstance(value, types.BuiltinFunctionType | types.FunctionType | np.ufunc) \
                or type(value).__name__ == "_ArrayFunctionDispatcher":
            def counted(*args, **kwargs):
                return _call(name, value, args, kwargs)
            counted.__name__ = name
            if isinstance(value, np.ufunc):
                counted.at = lambda *args: _call(f"{name}.at", value.at, args, {})
            return counted
        return value

    @staticmethod
    def ElementwiseKernel(inputs, outputs, body, name):  # noqa: N802 (CuPy's name)
        return _fused_stand_in(name)

    @staticmethod
    def ReductionKernel(inputs, outputs, map_expr, reduce_expr, post_map, identity, name):  # noqa: N802
        return _fused_stand_in(name)

    @staticmethod
    def RawKernel(code, name):  # noqa: N802 (CuPy's name)
        if name in ARRAY_SUMS:
            return _array_sums_stand_in(code, ARRAY_SUMS[name])
        stand_in = _multi_tensor_stand_in if isinstance(REGISTRY[name], MultiTensorKernel) \
            else _row_stand_in
        return stand_in(code, name)

    @staticmethod
    def get_array_module(array):
        return np


def _fused_stand_in(name: str):
    """A genesis fused kernel on the fake GPU: one launch, computed by its array-call
    reference (uncounted), after checking the arguments as CuPy would."""
    kernel = REGISTRY[name]
    reference = kernel.reference

    fresh = len(parameters(kernel.inputs))  # called with only its inputs: new outputs

    def launch(*args, **options):
        check_kernel_arguments(kernel, args)
        COUNTER.launch(name)
        COUNTER.depth += 1
        try:
            result = reference(_NUMPY_DEVICE, *_plain(args), **options)
            if len(args) > fresh:  # the outputs given, which CuPy fills and returns
                outputs = args[fresh:]
                return outputs[0] if len(outputs) == 1 else outputs
            if "out" not in options:  # CuPy allocates the outputs
                result = _owning(result)
            return _counted(result)
        finally:
            COUNTER.depth -= 1
    return launch


def _owning(value):
    """`value` (an array or a tuple of them) as arrays owning their memory, as a CuPy
    kernel's fresh outputs are (a reference may return a view of a larger buffer)."""
    if isinstance(value, tuple):
        return tuple(_owning(item) for item in value)
    return value.copy() if isinstance(value, np.ndarray) and value.base is not None else value


def _row_stand_in(code: str, name: str):
    """A genesis row kernel (genesis/ops/_row_kernels.py) on the fake GPU: one launch, the
    rows computed by its reference and written into the outputs it was given, after checking
    the launch as CUDA and CuPy would take it."""
    kernel = REGISTRY[name]
    dtype = np.dtype(np.float32 if "typedef float T;" in code else np.float64)

    def launch(grid, block, args):
        arguments, layout = _plain(args[:-4]), args[-4:]
        check_row_launch(kernel, dtype, grid, block, arguments, layout)
        count = len(parameters(kernel.inputs))
        COUNTER.launch(name)
        COUNTER.depth += 1
        try:
            n, inner, middle, across = (int(number) for number in layout)
            # (outer, middle, inner): rows along the middle dim, or across it (keep=1)
            shapes = {"element": (-1, middle, inner),
                      "row": (1, middle, 1) if across else (-1, 1, inner)}
            rows = [argument.reshape(shapes[kernel.kinds[item.name]])
                    if kernel.kinds[item.name] in shapes else argument
                    for item, argument in zip(parameters(kernel.inputs)
                                              + parameters(kernel.outputs), arguments)]
            results = kernel.reference(_NUMPY_DEVICE, *rows[:count],
                                       **({"keep": 1} if across else {"axis": 1}))
            for output, result in zip(rows[count:], results if isinstance(results, tuple)
                                      else (results,)):
                output[...] = result
        finally:
            COUNTER.depth -= 1
    return launch


def _multi_tensor_stand_in(code: str, name: str):
    """A genesis multi-tensor kernel (genesis/ops/_multi_tensor.py) on the fake GPU: one
    launch, each tensor updated by its Elementwise kernel's reference, after checking the
    launch as CUDA and CuPy would take it."""
    kernel = REGISTRY[name]
    dtype = np.dtype(np.float32 if "typedef float T;" in code else np.float64)
    per_tensor = len(kernel.arrays) + 1  # the arrays, then the size

    def launch(grid, block, args):
        numbers = args[len(args) - len(kernel.scalars):]
        packed = _plain(args[:len(args) - len(kernel.scalars)])
        tensors = [packed[start:start + per_tensor - 1]
                   for start in range(0, len(packed), per_tensor)]
        sizes = packed[per_tensor - 1::per_tensor]
        check_multi_tensor_launch(kernel, dtype, grid, block, tensors, sizes, numbers)
        COUNTER.launch(name)
        COUNTER.depth += 1
        try:
            for arrays in tensors:
                kernel.kernel.reference(_NUMPY_DEVICE, *kernel._arguments(arrays, numbers))
        finally:
            COUNTER.depth -= 1
    return launch


def _array_sums_stand_in(code: str, kernel):
    """A sums-over-many-arrays kernel of genesis trace (genesis/debug/_census.py) on the fake
    GPU: one launch, each array's sums (its figures' references) added into its slots, after
    checking the launch as CUDA and CuPy would take it."""
    dtype = np.dtype(np.float32 if "typedef float T;" in code else np.float64)
    terms = len(kernel.terms)

    def launch(grid, block, args):
        packed, sums = _plain(args[:-1]), _plain(args[-1])
        arrays, sizes = packed[0::2], packed[1::2]
        problems = chunked_launch_problems(dtype, grid, block, [(array,) for array in arrays],
                                           sizes, dense=True)
        if not isinstance(sums, np.ndarray) or sums.dtype != np.float64 or \
                sums.shape != (terms * len(arrays),) or sums.any():
            problems.append(f"sums that are not a zeroed float64 array of {terms} per array")
        if problems:
            raise TypeError(f"{kernel.name}: " + "; ".join(problems))
        COUNTER.launch(kernel.name)
        COUNTER.depth += 1
        try:
            for slot, array in enumerate(arrays):
                for term, figure in enumerate(kernel.figures):
                    sums[terms * slot + term] += figure(_NUMPY_DEVICE, array)
        finally:
            COUNTER.depth -= 1
    return launch


def chunked_launch_problems(dtype, grid, block, tensors, sizes, dense: bool) -> list:
    """What is wrong with a launch over tensors cut into CHUNKs (genesis/ops/_multi_tensor.py
    and the kernels sharing its chunks): 1 to MAX_TENSORS tensors, each its arrays of the
    built T and one int64 size equal to theirs, C-ordered (or, when `dense`, in any order
    without gaps); a block of THREADS per CHUNK of each."""
    from genesis.ops._multi_tensor import MAX_TENSORS, THREADS, blocks_for
    problems = []
    if not 0 < len(tensors) <= MAX_TENSORS or len(sizes) != len(tensors):
        problems.append(f"{len(tensors)} tensors with {len(sizes)} sizes")
    for arrays, size in zip(tensors, sizes):
        if not isinstance(size, np.int64) or any(
                not isinstance(array, np.ndarray) or array.dtype != dtype or array.size != size
                or not (array.flags.c_contiguous or dense and array.flags.f_contiguous)
                for array in arrays):
            order = "dense" if dense else "C-ordered"
            problems.append(f"a tensor that is not {order} {dtype} arrays of its size {size!r}")
    if tuple(grid) != (blocks_for(sizes),) or tuple(block) != (THREADS,):
        problems.append(f"grid {grid} and block {block} for sizes {sizes}")
    return problems


def check_multi_tensor_launch(kernel, dtype, grid, block, tensors, sizes, numbers) -> None:
    """A multi-tensor launch: per tensor, C-ordered arrays of the built T and one size, as
    int64, equal to theirs; each number of its declared width (a Python float would go as
    a double); a block of THREADS per CHUNK of each tensor."""
    problems = chunked_launch_problems(dtype, grid, block, tensors, sizes, dense=False)
    for item, number in zip(kernel.scalars, numbers):
        if type(number) is not (dtype.type if item.type == "T" else np.dtype(item.type).type):
            problems.append(f"{item.name} is a {type(number).__name__}")
    if problems:
        raise TypeError(f"{kernel.name}: " + "; ".join(problems))


def check_row_launch(kernel, dtype, grid, block, arguments, layout) -> None:
    """A row kernel's launch: one C-ordered array per array parameter, of the built T or its
    declared type, all of one shape (one element per row for `row` ones, any for `raw`
    ones); scalars and the layout (n, inner, middle, across) as NumPy numbers of their width (CuPy
    passes a Python int as C long long and a float as double); one block per row of a
    power-of-two threads up to CUDA's 1024."""
    declared = parameters(kernel.inputs) + parameters(kernel.outputs)
    problems = []
    if len(arguments) != len(declared):
        problems.append(f"{len(arguments)} arguments for {len(declared)} parameters")
    first = arguments[0]
    n, inner, middle, across = layout
    for item, argument in zip(declared, arguments):
        kind = kernel.kinds[item.name]
        want_dtype = dtype if item.type == "T" else np.dtype(item.type)
        if kind == "scalar":
            if type(argument) is not want_dtype.type:
                problems.append(f"{item.name} is a {type(argument).__name__}, not {want_dtype}")
            continue
        size = {"element": first.size, "row": first.size // n}.get(kind, argument.size)
        if not isinstance(argument, np.ndarray) or not argument.flags.c_contiguous or \
                (argument.dtype, argument.size) != (want_dtype, size) or \
                (kind == "element" and argument.shape != first.shape):
            problems.append(f"{item.name} is not a C-ordered {want_dtype} of {size} elements "
                            f"(a {kind} array): {getattr(argument, 'dtype', type(argument))} "
                            f"{getattr(argument, 'shape', '')}")
    if not all(isinstance(number, np.int64) for number in layout):
        problems.append(f"the layout is not int64: {[type(number).__name__ for number in layout]}")
    threads = block[0]
    if len(block) != 1 or threads & (threads - 1) or not 32 <= threads <= 1024:
        problems.append(f"block {block}")
    rows = middle if across else first.size // n
    if first.size % (middle * inner) or n * rows != first.size or (not across and n != middle) \
            or tuple(grid) != (rows,):
        problems.append(f"grid {grid} for rows of {n} (inner {inner}, middle {middle}, "
                        f"across {across}) in {first.shape}")
    if problems:
        raise TypeError(f"{kernel.name}: " + "; ".join(problems))


def check_kernel_arguments(kernel, args) -> None:
    """What CuPy insists on when a kernel is called: the inputs, optionally followed by every
    output; each array of its declared dtype, the T-typed ones of one dtype."""
    inputs, outputs = parameters(kernel.inputs), parameters(kernel.outputs)
    if len(args) not in (len(inputs), len(inputs) + len(outputs)):
        raise TypeError(f"{kernel.name}: {len(args)} arguments for {len(inputs)} inputs and "
                        f"{len(outputs)} outputs")
    placeholder = set()
    for item, arg in zip(inputs + outputs, args):
        if not isinstance(arg, np.ndarray):
            continue
        if item.type == "T":
            placeholder.add(arg.dtype)
        elif arg.dtype != np.dtype(item.type):
            raise TypeError(f"{kernel.name}: {item.name} is {arg.dtype}, declared {item.type}")
    if len(placeholder) > 1:
        raise TypeError(f"{kernel.name}: T is both {' and '.join(map(str, placeholder))}")


def _install_fake_cupyx() -> None:
    from genesis.ops import _erf
    special = types.ModuleType("cupyx.scipy.special")
    special.erf = lambda x: _call("erf", lambda a: _erf.erf_array(np, a), (x,), {})
    for name, module in (("cupyx", types.ModuleType("cupyx")),
                         ("cupyx.scipy", types.ModuleType("cupyx.scipy")),
                         ("cupyx.scipy.special", special)):
        sys.modules.setdefault(name, module)


def on_counted_gpu(tensor):
    """`tensor` moved to the fake GPU, its array counted from now on."""
    moved = tensor.to("cuda")
    moved._data = _counted(moved._data)
    return moved


def count(step, label: str, before: int = 2) -> tuple:
    for _ in range(before):  # the first steps create optimizer state
        step()
    COUNTER.launches.clear(), COUNTER.syncs.clear(), COUNTER.sites.clear()
    COUNTER.active = True
    try:
        step()
    finally:
        COUNTER.active = False
    return label, sum(COUNTER.launches.values()), sum(COUNTER.syncs.values()), dict(COUNTER.sites)


def count_traced(step, label: str, how: str) -> tuple:
    """`count` of a step run under `genesis trace`'s session: a step it records fully (graph,
    statistics, NaN watch, gradient norms, and the sampled figures: the third step is one),
    one it samples (update ratios, activation statistics, value distributions: step 3), or
    one it only watches (NaN watch, norms, the loss: step 5)."""
    from genesis.debug.session import TraceSession

    before = {"recorded": 2, "sampled": 3, "watched": 5}[how]
    with TraceSession(steps=3 if how == "recorded" else 1):
        return count(step, label, before=before)


# -- genesis on the counting fake GPU ---------------------------------------------------------
def genesis_counts(rng) -> list:
    cuda = genesis.device("cuda")
    cuda.xp  # resolve the fake GPU's namespace (NumPy) for the moves below
    steps = [(label, _adam_step(genesis, _on_counted_gpu(build(genesis.nn)),
                                *(on_counted_gpu(genesis.tensor(array)) for array in data)))
             for label, build, data in _training_cases(rng)]
    weights = {key: on_counted_gpu(genesis.tensor(value)).requires_grad_()
               for key, value in initial_weights(rng).items()}
    block_input = on_counted_gpu(genesis.tensor(
        rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32))).requires_grad_()
    seed = on_counted_gpu(genesis.tensor(rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32)))
    norm_steps = []
    for label, shape, make in NORM_CASES:
        norm_steps.append((label, norm_step(_on_counted_gpu(make(genesis.nn)), on_counted_gpu(
            genesis.tensor(rng.standard_normal(shape).astype(np.float32))).requires_grad_())))
    label, build, data = _training_cases(rng)[0]
    traced_steps = [(f"{label}, {how}", _adam_step(genesis, _on_counted_gpu(build(genesis.nn)), *(
        on_counted_gpu(genesis.tensor(array)) for array in data)), how)
        for how in ("recorded", "sampled", "watched")]
    cuda._xp = CountingNumPy()
    _install_fake_cupyx()

    def block_step():
        for leaf in (block_input, *weights.values()):
            leaf.grad = None
        transformer_block(genesis, genesis_F, block_input, weights).backward(seed)

    try:
        return [count(step, label) for label, step in steps] + \
            [count(block_step, "block fwd+bwd")] + [count(step, label) for label, step in norm_steps] + \
            [count_traced(step, label, how) for label, step, how in traced_steps]
    finally:
        cuda._xp = None


def _training_cases(rng) -> list:
    """(label, model builder, (features, labels)) of bench/cuda_benchmarks.py's steps."""
    return [("MLP step", mlp, (rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32),
                               rng.integers(0, MLP_SIZES[-1], MLP_BATCH))),
            ("CNN step", cnn, (rng.standard_normal((CNN_BATCH,) + CNN_IMAGE).astype(np.float32),
                               rng.integers(0, 10, CNN_BATCH)))]


def _adam_step(framework, model, x, y):
    """One Adam training step of `model` on (x, y), as the benchmarks time it (PyTorch's
    Adam as on CUDA: multi-tensor)."""
    options = {"foreach": True} if framework is not genesis else {}
    optimizer = framework.optim.Adam(model.parameters(), lr=1e-3, **options)

    def step():
        optimizer.zero_grad()
        framework.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return step


def _on_counted_gpu(module):
    """`module` moved to the fake GPU, its parameters' and buffers' arrays counted."""
    module.to("cuda")
    for tensor in (*module.parameters(), *module.buffers()):
        tensor._data = _counted(tensor._data)
    return module


# -- common layers, one at a time (--ops) -------------------------------------------------------
def op_cases(framework, functional, tensor, module) -> dict:
    """Label -> a function running one op's forward and the backward of its sum, built from
    `framework`'s ops on float32 inputs made by `tensor(array, requires_grad)`; `module`
    readies an nn module (moves it to the device)."""
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return tensor(rng.standard_normal(shape).astype(np.float32), True)

    x, weight, image, kernel = leaf(64, 128), leaf(128), leaf(8, 3, 16, 16), leaf(4, 3, 3, 3)
    table, sequence = leaf(100, 32), leaf(4, 10, 32)
    positive = tensor(rng.uniform(0.5, 2.0, (64, 128)).astype(np.float32), True)
    labels = tensor(rng.integers(0, 128, 64), False)
    rows = tensor(rng.integers(0, 100, (64, 8)), False)
    targets = tensor((rng.random((64, 128)) > 0.5).astype(np.float32), False)
    attention = module(framework.nn.MultiheadAttention(32, 4, batch_first=True))
    cases = {
        "sigmoid": lambda: x.sigmoid(), "tanh": lambda: x.tanh(), "silu": lambda: functional.silu(x),
        "gelu": lambda: functional.gelu(x), "leaky_relu": lambda: functional.leaky_relu(x, 0.1),
        "sin": lambda: x.sin(), "rsqrt": lambda: positive.rsqrt(),
        "softmax": lambda: functional.softmax(x, 1), "log_softmax": lambda: functional.log_softmax(x, 1),
        "cross_entropy": lambda: functional.cross_entropy(x, labels),
        "mse_loss": lambda: functional.mse_loss(x, targets),
        "bce_with_logits": lambda: functional.binary_cross_entropy_with_logits(x, targets),
        "layer_norm": lambda: functional.layer_norm(x, (128,), weight, weight),
        "rms_norm": lambda: functional.rms_norm(x, (128,), weight),
        "embedding": lambda: functional.embedding(rows, table),
        "conv2d 3x3": lambda: functional.conv2d(image, kernel, padding=1),
        "max_pool2d 2x2": lambda: functional.max_pool2d(image, 2),
        "MultiheadAttention": lambda: attention(sequence, sequence, sequence)[0],
    }
    leaves = [x, positive, weight, image, kernel, table, sequence, *attention.parameters()]

    def stepper(op):
        def step():
            for leaf_tensor in leaves:
                leaf_tensor.grad = None
            op().sum().backward()
        return step
    return {label: stepper(op) for label, op in cases.items()}


def genesis_op_counts() -> list:
    cuda = genesis.device("cuda")
    cuda.xp

    steps = op_cases(genesis, genesis_F,
                     lambda array, grad: on_counted_gpu(genesis.tensor(array)).requires_grad_(grad),
                     _on_counted_gpu)
    cuda._xp = CountingNumPy()
    _install_fake_cupyx()
    try:
        return [count(step, label) for label, step in steps.items()]
    finally:
        cuda._xp = None


def torch_op_counts(torch) -> list:
    steps = op_cases(torch, torch.nn.functional,
                     lambda array, grad: torch.tensor(array, requires_grad=grad), lambda layer: layer)
    return [(label, _profiled_count(torch, step)) for label, step in steps.items()]


def _profiled_count(torch, step) -> int:
    from torch.profiler import ProfilerActivity, profile
    for _ in range(2):
        step()
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        step()
    return sum(1 for event in profiler.events() if _top_most_kernel(event))


# -- PyTorch, from its profiler -----------------------------------------------------------------
def torch_counts(torch, rng) -> list:
    steps = [(_adam_step(torch, build(torch.nn), *(torch.tensor(array) for array in data)),
              label) for label, build, data in _training_cases(rng)]
    weights = {key: torch.tensor(value, requires_grad=True) for key, value in initial_weights(rng).items()}
    block_input = torch.randn(BATCH, LENGTH, D_MODEL, requires_grad=True)
    seed = torch.randn(BATCH, LENGTH, D_MODEL)

    def block_step():
        for leaf in (block_input, *weights.values()):
            leaf.grad = None
        transformer_block(torch, torch.nn.functional, block_input, weights).backward(seed)

    norm_steps = [(norm_step(make(torch.nn), torch.tensor(
        rng.standard_normal(shape).astype(np.float32), requires_grad=True)), label)
        for label, shape, make in NORM_CASES]
    return [(label, _profiled_count(torch, step)) for step, label in
            (*steps, (block_step, "block fwd+bwd"), *norm_steps)]


def _launches(event) -> bool:
    return event.name.startswith("aten::") and event.name not in _TORCH_TRANSPARENT


def _top_most_kernel(event) -> bool:
    """A PyTorch op that launches, called by none that does (addmm's internal bias copy and a
    multi-tensor foreach op's per-tensor loop on the CPU are part of one launch on CUDA)."""
    if not _launches(event):
        return False
    parent = event.cpu_parent
    while parent is not None:
        if _launches(parent):
            return False
        parent = parent.cpu_parent
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print every counted genesis operation")
    parser.add_argument("--ops", action="store_true",
                        help="count common layers one at a time (forward + backward of a sum)")
    options = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    if options.ops:
        rows = genesis_op_counts()
        theirs = dict(torch_op_counts(torch) if torch is not None else [])
    else:
        rows = genesis_counts(np.random.default_rng(0))
        theirs = dict(torch_counts(torch, np.random.default_rng(0)) if torch is not None else [])
    print(f"{'step':<19} {'genesis launches':>17} {'host syncs':>11} {'PyTorch ops':>12} "
          f"{'genesis/PyTorch':>16}")
    for label, launches, syncs, sites in rows:
        reference = theirs.get(label)
        their_text = f"{reference:12d} {launches / reference:15.2f}x" if reference else \
            f"{'-':>12} {'-':>16}"
        print(f"{label:<19} {launches:17d} {syncs:11d} {their_text}")
        if options.list:
            for site, number in sorted(sites.items()):
                print(f"    {number:3d}  {site}")
    if torch is None:
        print("(PyTorch is not installed: its column is empty)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
