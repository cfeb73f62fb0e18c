"""Fused kernels: several elementwise passes, or a map and a sum, in one GPU launch.

On a GPU genesis is bound by the host: every NumPy-style call on a CuPy array is a kernel
launch with its own Python and driver cost (bench/array_ops.py counts them). A `Kernel`
does the work of several calls in one. It is written twice:

* its CUDA C body, compiled by CuPy on first use (`cupy.ElementwiseKernel`, or
  `cupy.ReductionKernel` for a `Reduction`), run when the device's namespace is CuPy, the
  `T`-typed arrays share float32 or float64 and every other array has its declared type;
* a reference that computes the same thing with array calls; the CPU, the tests' fake GPU
  and any other dtype (float16 under autocast) run it.

tests/ops/test_fused_kernels.py compiles every CUDA body as C++ on the CPU and checks it
against its reference in float32 and float64, so the two cannot drift apart unseen.

Bodies use only what CUDA and C++'s <cmath> share (exp, log, erf, tanh, sqrt, ...) and
the type placeholder `T` (float or double); scalars are declared `T` or `int64`. A `raw`
array is indexed by the body by its C-order element number.

>>> import numpy as np, genesis
>>> square_sum = Elementwise("square_sum", "T x, T y", "T z", "z = x * x + y",
...                          reference=lambda device, x, y: x * x + y, register=False)
>>> square_sum(genesis.device("cpu"), np.array([1., 2.]), 1.0)
array([2., 5.])
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Elementwise", "Reduction", "REGISTRY", "Parameter", "parameters", "fusing_pays",
           "MEAN_OF_REDUCED", "C_TYPES"]

REGISTRY: dict = {}  # name -> Kernel, for the C++ check of every body
# A reduction's combined value over the count of elements reduced into its output (CuPy's
# own mean), for a post_map such as f"out = {MEAN_OF_REDUCED}".
MEAN_OF_REDUCED = "a / T(_in_ind.size() / _out_ind.size())"
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
C_TYPES = {"T": "T", "int64": "long long", "int32": "int", "bool": "bool",  # declared -> C
           "float64": "double"}


class Parameter(NamedTuple):
    """One declared kernel parameter: its type ("T", "int64"...), name, and whether it is
    `raw` (not broadcast: the body indexes it, x[k], by a C-order element number)."""
    type: str
    name: str
    raw: bool


def parameters(declaration: str) -> list[Parameter]:
    """The parameters of a CuPy parameter list such as "raw T x, int64 classes".

    >>> parameters("raw T x, int64 classes")
    [Parameter(type='T', name='x', raw=True), Parameter(type='int64', name='classes', raw=False)]
    """
    found = []
    for item in declaration.split(","):
        words = item.split()
        if words:
            raw = words[0] == "raw"
            found.append(Parameter(*words[raw:], raw=raw))
    return found


def fusing_pays(device) -> bool:
    """Whether a fused kernel beats array calls on `device`: on a GPU each call is a launch;
    on the CPU in-place array calls are as fast, and some code keeps them there."""
    return device.type != "cpu"


class Kernel:
    """A CUDA body with its array-call reference; call it with the device and the arguments."""

    def __init__(self, name: str, inputs: str, outputs: str, reference, register: bool = True):
        if register and name in REGISTRY:
            raise ValueError(f"a fused kernel named {name!r} already exists")
        self.name, self.inputs, self.outputs, self.reference = name, inputs, outputs, reference
        # parsed once: a launch reads them, and parsing costs as much as a launch's own Python
        self.input_parameters, self.output_parameters = parameters(inputs), parameters(outputs)
        self._declared = [None if item.type == "T" else np.dtype(item.type)
                          for item in self.input_parameters + self.output_parameters]
        self._output_types = [item.type for item in self.output_parameters]
        self._compiled: dict = {}
        if register:
            REGISTRY[name] = self

    # options that only the compiled launch takes (the reference does without them)
    LAUNCH_ONLY: tuple = ()

    def __call__(self, device, *args, shape: tuple | None = None, **options):
        """Run on `device`. `shape` sizes the outputs when no broadcast input does (a kernel
        of raw arrays and scalars); the reference works out its own."""
        xp = device.xp
        if xp is np:  # the CPU and the tests' fake GPU: the array code
            return self.reference(device, *args, **self._reference_options(options))
        dtype = self._fitting_dtype(args) if xp.__name__ == "cupy" else False
        if dtype is not False:
            compiled = self._compiled.get(xp)  # keyed by the namespace itself, not its id
            if compiled is None:
                compiled = self._compiled[xp] = self._compile(xp)
            if shape is not None:
                args += tuple(xp.empty(shape, dtype if kind == "T" else kind)
                              for kind in self._output_types)
            return compiled(*args, **options)
        return self.reference(device, *args, **self._reference_options(options))

    def _reference_options(self, options: dict) -> dict:
        if not self.LAUNCH_ONLY:
            return options
        return {name: value for name, value in options.items() if name not in self.LAUNCH_ONLY}

    def _fitting_dtype(self, args):
        """T's dtype when the arguments fit the compiled kernel (None for a kernel without
        T), else False: the T-typed arrays (outputs passed to update in place too) share a
        dtype the kernel is built for, and every other array has its declared dtype."""
        dtypes = set()
        for arg, declared in zip(args, self._declared):
            if not hasattr(arg, "shape") or isinstance(arg, np.generic):
                continue  # a number: CuPy casts it
            dtype = arg.dtype
            if declared is None:
                dtypes.add(dtype)
            elif dtype != declared:
                return False
        if None not in self._declared:
            return None if not dtypes else False
        if len(dtypes) != 1:
            return False
        dtype = dtypes.pop()
        return dtype if dtype in _KERNEL_DTYPES else False

    def _compile(self, xp):
        raise NotImplementedError


class Elementwise(Kernel):
    """`body` runs once per element of the broadcast inputs (C statements assigning the
    outputs; `i` is the element's index in C order). Returns the output array(s)."""

    def __init__(self, name: str, inputs: str, outputs: str, body: str, reference,
                 register: bool = True):
        super().__init__(name, inputs, outputs, reference, register)
        self.body = body

    def _compile(self, xp):
        return xp.ElementwiseKernel(self.inputs, self.outputs, self.body, self.name)


class Reduction(Kernel):
    """`map_expr` of each element of the broadcast inputs, combined by `reduce_expr` (of
    `a` and `b`, starting from `identity`, in the output's type) along `axis=`; `post_map`
    assigns the output from the combined value `a`, and may use the count of elements
    reduced into each output, `_in_ind.size() / _out_ind.size()` (array inputs are not
    defined there). Takes `axis=` and `keepdims=` like a NumPy sum."""

    def __init__(self, name: str, inputs: str, outputs: str, map_expr: str, reduce_expr: str,
                 post_map: str, identity: str, reference, register: bool = True):
        super().__init__(name, inputs, outputs, reference, register)
        self.map_expr, self.reduce_expr, self.post_map, self.identity = \
            map_expr, reduce_expr, post_map, identity

    def _compile(self, xp):
        return xp.ReductionKernel(self.inputs, self.outputs, self.map_expr, self.reduce_expr,
                                  self.post_map, self.identity, self.name)
