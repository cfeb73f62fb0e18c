"""Every row kernel's CUDA text (genesis/ops/_row_kernels.py), compiled as C++ and run with
one CPU thread per CUDA thread, agrees with its array-call reference in float32 and float64.

tests/ops/cuda_on_cpu.py plays the GPU: `threadIdx`/`blockIdx` are per-thread, `__shared__`
storage is shared by the threads of the block running, `__syncthreads()` is a barrier, and
blocks run one after another. The text is the one CuPy compiles, so a wrong index, a missing barrier
that the threads happen to need, or a formula that drifts from its reference shows here.
Each sample also runs with its row axis moved last (inner = 1) and with a block of more
threads than the row has elements (class targets wrapped into the shorter rows).
"""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

import genesis
from genesis.ops import _row_kernels
from genesis.ops._kernels import C_TYPES, REGISTRY, parameters
from genesis.ops._row_kernels import RowKernel, row_geometry, threads_for
from tests.ops import cuda_on_cpu
from tests.ops.cuda_on_cpu import launcher
from tests.ops.kernel_samples import SAMPLES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")

ROW_KERNELS = sorted(name for name, kernel in REGISTRY.items() if isinstance(kernel, RowKernel))
_CPU = genesis.device("cpu")


def _source(kernel: RowKernel, ctype: str) -> str:
    inputs, outputs = parameters(kernel.inputs), parameters(kernel.outputs)
    arguments = ", ".join(
        f"({'const ' if slot < len(inputs) else ''}{C_TYPES[item.type]}*)arrays[{slot}]"
        for slot, item in enumerate(inputs + outputs))
    return kernel.source(ctype) + launcher(f"{kernel.name}({arguments}, n, inner)",
                                           "void** arrays, long long n, long long inner")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(kernel name, C type) -> the kernel and its threaded launcher as a shared library."""
    folder = tmp_path_factory.mktemp("row_kernels")
    libraries = {}

    def build(kernel, ctype):
        key = (kernel.name, ctype)
        if key not in libraries:
            libraries[key] = cuda_on_cpu.build(folder, f"{kernel.name}_{ctype}",
                                               _source(kernel, ctype))
        return libraries[key]
    return build


def _run_compiled(library, kernel, arrays, axis, threads=None):
    """The kernel's outputs, launched as _RowLauncher does: C-ordered arrays, a block per row."""
    arrays = [np.ascontiguousarray(array) for array in arrays]
    shape, axis = arrays[0].shape, axis % arrays[0].ndim
    row_shape = shape[:axis] + (1,) + shape[axis + 1:]
    outputs = [np.full(row_shape if item.name in kernel.per_row else shape, 12345,
                       arrays[0].dtype if item.type == "T" else item.type)
               for item in parameters(kernel.outputs)]
    rows, n, inner = row_geometry(shape, axis)
    pointers = (ctypes.c_void_p * (len(arrays) + len(outputs)))(
        *(array.ctypes.data for array in arrays + outputs))
    library.run(ctypes.c_uint(rows), ctypes.c_uint(threads or threads_for(n)), pointers,
                ctypes.c_longlong(n), ctypes.c_longlong(inner))
    return outputs


def _check(kernel, library, arrays, axis, dtype, threads=None):
    got = _run_compiled(library, kernel, arrays, axis, threads)
    want = kernel.reference(_CPU, *[array.copy() for array in arrays], axis=axis)
    want = want if isinstance(want, tuple) else (want,)
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    assert len(got) == len(want)
    for ours, reference in zip(got, want):
        assert ours.shape == reference.shape
        np.testing.assert_allclose(ours, reference, **tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ROW_KERNELS)
def test_row_kernel_compiled_as_threaded_cpp_matches_its_reference(name, dtype, compiled):
    kernel = REGISTRY[name]
    arrays, options = SAMPLES[name](np.random.default_rng(0), dtype)
    library = compiled(kernel, "float" if dtype == np.float32 else "double")
    axis = options["axis"]
    with np.errstate(all="ignore"):  # the samples' NaN and -inf rows
        _check(kernel, library, arrays, axis, dtype)
        last = [np.moveaxis(array, axis, -1) for array in arrays]  # rows contiguous (inner = 1)
        _check(kernel, library, last, -1, dtype)
        short = [array if per_row else array[..., :5]  # more threads than elements
                 for array, per_row in zip(last, _per_row(kernel))]
        short = [array % 5 if array.dtype.kind == "i" else array for array in short]  # targets
        _check(kernel, library, short, -1, dtype, threads=64)


def _per_row(kernel):
    return [item.name in kernel.per_row for item in parameters(kernel.inputs)]


def test_threads_per_block_are_a_power_of_two_within_bounds():
    assert [threads_for(n) for n in (1, 31, 32, 33, 200, 256, 257, 100000)] == \
        [32, 32, 32, 64, 256, 256, 256, 256]
    assert _row_kernels.MAX_THREADS == 256


def test_row_geometry_starts_and_strides_each_row():
    assert row_geometry((2, 300, 3), 1) == (6, 300, 3)
    assert row_geometry((4, 7), 1) == (4, 7, 1)
    assert row_geometry((5,), 0) == (1, 5, 1)
