"""Every fused GPU kernel's CUDA body, compiled as C++ on the CPU and run on sample inputs,
agrees with its array-call reference (the code the CPU runs), in float32 and float64.

CuPy compiles the same text with NVRTC on a GPU; bodies use only what CUDA and <cmath>
share, so a C++ compiler checks the formulas without a GPU. The harness plays CuPy's
part: inputs broadcast to one shape, `i` the element's index in C order, outputs as
references; a reduction combines the mapped values along its axes from the identity.
"""
from __future__ import annotations

import ctypes
import shutil
import types

import numpy as np
import pytest

import genesis
from genesis.ops._kernels import C_TYPES, REGISTRY, Elementwise, Reduction, parameters
from tests.ops import cuda_on_cpu
from tests.ops.kernel_samples import SAMPLES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")

_C_TYPES = {**C_TYPES, "T": None}  # T: the C type under test
_CPU = genesis.device("cpu")


def test_every_kernel_has_samples():
    assert set(REGISTRY) - set(SAMPLES) == set(), "add sample inputs for the new kernels"


def _c_declarations(kernel, ctype: str, index: str) -> str:
    lines = []
    for slot, item in enumerate(parameters(kernel.inputs)):
        c = _C_TYPES[item.type] or ctype
        if item.raw:  # the whole array, indexed by the body
            lines.append(f"const {c}* {item.name} = (const {c}*)args[{slot}];")
        else:
            lines.append(f"const {c} {item.name} = ((const {c}*)args[{slot}])[{index}];")
    return "\n".join(lines)


def _c_outputs(kernel, ctype: str, index: str) -> str:
    start = len(parameters(kernel.inputs))
    lines = []
    for slot, item in enumerate(parameters(kernel.outputs)):
        c = _C_TYPES[item.type] or ctype
        lines.append(f"{c}& {item.name} = (({c}*)args[{start + slot}])[{index}];")
    return "\n".join(lines)


def _source(kernel, ctype: str) -> str:
    head = f"#include <cmath>\n#include <cstddef>\nusing namespace std;\ntypedef {ctype} T;\n"
    if isinstance(kernel, Elementwise):
        return head + f"""extern "C" void run(long long n, long long inner, void** args) {{
  for (long long i = 0; i < n; ++i) {{
    {_c_declarations(kernel, ctype, "i")}
    {_c_outputs(kernel, ctype, "i")}
    {kernel.body};
  }}
}}"""
    reduced = _C_TYPES[parameters(kernel.outputs)[0].type] or ctype  # CuPy's _type_reduce
    return head + f"typedef {reduced} R;\n" + f"""struct Indexer {{ long long count; long long size() const {{ return count; }} }};
extern "C" void run(long long outer, long long inner, void** args) {{
  const Indexer _in_ind{{outer * inner}}, _out_ind{{outer}};  // CuPy's element counts
  for (long long o = 0; o < outer; ++o) {{
    R a = R({kernel.identity});
    for (long long j = 0; j < inner; ++j) {{
      long long i = o * inner + j;
      {_c_declarations(kernel, ctype, "i")}
      R b = ({kernel.map_expr});
      a = ({kernel.reduce_expr});
    }}
    {_c_outputs(kernel, ctype, "o")}
    {kernel.post_map};
  }}
}}"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(kernel, C type) -> the kernel compiled as a shared library (built once per module)."""
    return cuda_on_cpu.library_cache(tmp_path_factory.mktemp("kernels"), _source)


def _declared_dtype(kind: str, dtype):
    return dtype if kind == "T" else np.dtype(kind)


def _run_compiled(library, kernel, args, options, dtype):
    """The kernel's outputs from the compiled body, with CuPy's calling conventions."""
    inputs = parameters(kernel.inputs)
    arrays = [np.asarray(arg, _declared_dtype(item.type, dtype)) for item, arg in zip(inputs, args)]
    shape = np.broadcast_shapes(*(array.shape for item, array in zip(inputs, arrays) if not item.raw))
    if "shape" in options:  # outputs sized by the caller: scalars broadcast to them
        shape = tuple(options["shape"])
    given_outputs = [np.array(arg, _declared_dtype(item.type, dtype))
                     for item, arg in zip(parameters(kernel.outputs), args[len(inputs):])]
    if given_outputs:
        shape = np.broadcast_shapes(shape, *(out.shape for out in given_outputs))
    flat = [np.ascontiguousarray(array if item.raw else np.broadcast_to(array, shape))
            for item, array in zip(inputs, arrays)]
    if isinstance(kernel, Elementwise):
        out_shape = shape
        outer, inner = int(np.prod(out_shape)), 1
    else:
        axis = options.get("axis")
        axes = tuple(range(len(shape))) if axis is None else tuple(np.atleast_1d(axis) % len(shape))
        kept = [d for d in range(len(shape)) if d not in axes]
        flat = [np.ascontiguousarray(np.transpose(array, kept + list(axes))) for array in flat]
        outer = int(np.prod([shape[d] for d in kept]))
        inner = int(np.prod([shape[d] for d in axes]))
        out_shape = tuple(1 if d in axes else shape[d] for d in range(len(shape))) \
            if options.get("keepdims") else tuple(shape[d] for d in kept)
    outputs = given_outputs or [np.zeros(out_shape, _declared_dtype(item.type, dtype))
                                for item in parameters(kernel.outputs)]
    pointers = (ctypes.c_void_p * (len(flat) + len(outputs)))(
        *(array.ctypes.data for array in flat + outputs))
    library.run(ctypes.c_longlong(outer), ctypes.c_longlong(inner), pointers)
    return outputs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(name for name in SAMPLES
                                        if isinstance(REGISTRY[name], Elementwise | Reduction)))
def test_cuda_body_compiled_as_cpp_matches_its_reference(name, dtype, compiled):
    kernel = REGISTRY[name]
    rng = np.random.default_rng(0)
    args, options = SAMPLES[name](rng, dtype)
    ctype = "float" if dtype == np.float32 else "double"
    from_c = _run_compiled(compiled(kernel, ctype), kernel, args, options, dtype)
    reference_args = [np.array(arg) if isinstance(arg, np.ndarray) else arg for arg in args]
    expected = kernel.reference(_CPU, *reference_args,
                                **{key: value for key, value in options.items() if key != "shape"})
    if expected is None:  # an in-place kernel: its outputs are the trailing arguments
        expected = reference_args[len(parameters(kernel.inputs)):]
    expected = expected if isinstance(expected, list | tuple) else [expected]
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    assert len(from_c) == len(expected)
    for got, want in zip(from_c, expected):
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, **tolerance)


class _CountingCuPy:
    """Stands for CuPy: "compiles" a kernel into a function that records its calls."""
    __name__ = "cupy"

    def __init__(self):
        self.compiled, self.launched = 0, 0

    def ElementwiseKernel(self, inputs, outputs, body, name):  # noqa: N802 (CuPy's name)
        self.compiled += 1

        def launch(*args):
            self.launched += 1
            return "launched"
        return launch


def test_a_kernel_runs_on_cupy_for_float32_and_float64_and_takes_its_reference_otherwise():
    references = []
    kernel = Elementwise("probe", "T x, T y, int64 n", "T z", "z = x + y", register=False,
                         reference=lambda device, *args: references.append(args) or "reference")
    cupy = _CountingCuPy()
    gpu = types.SimpleNamespace(xp=cupy)
    single, double = np.ones(2, np.float32), np.ones(2, np.float64)
    assert kernel(gpu, single, single, 3) == "launched"
    assert kernel(gpu, double, 2.0, 3) == "launched"  # a Python scalar takes T from the arrays
    assert cupy.compiled == 1 and cupy.launched == 2  # compiled once per namespace
    assert kernel(gpu, single, double, 3) == "reference"  # mixed dtypes
    assert kernel(gpu, np.ones(2, np.float16), 1.0, 3) == "reference"  # float16 (autocast)
    assert kernel(gpu, single, single, np.ones(2, np.int32)) == "reference"  # not the int64 declared
    assert kernel(gpu, single, single, np.ones(2, np.int64)) == "launched"
    assert kernel(_CPU, single, single, 3) == "reference"  # NumPy
    assert len(references) == 4 and "probe" not in REGISTRY


def test_outputs_sized_by_the_caller_get_their_declared_dtypes():
    cupy = _CountingCuPy()
    allocated = []
    cupy.empty = lambda shape, dtype: allocated.append((shape, np.dtype(dtype))) or np.empty(shape, dtype)
    kernel = Elementwise("probe", "raw T x, int64 n", "T best, int32 arg", "best = x[i]; arg = n",
                         reference=None, register=False)
    kernel(types.SimpleNamespace(xp=cupy), np.ones(4, np.float32), 2, shape=(2, 2))
    assert allocated == [((2, 2), np.dtype(np.float32)), ((2, 2), np.dtype(np.int32))]


def test_kernel_names_are_unique():
    with pytest.raises(ValueError, match="genesis_relu_grad"):
        Elementwise("genesis_relu_grad", "T x", "T y", "y = x", reference=None)
