"""genesis trace's sums over many arrays (genesis/debug/_census.py: the census of finite and
NaN entries, the sums of squares): their CUDA text, compiled as C++ and run block by block
(tests/ops/cuda_on_cpu.py), sums each array as NumPy does, over arrays of several sizes in
one launch; where no launch can take them, the per-array reductions give the same sums.
(Their launches on the CuPy stand-in: tests/cuda/test_trace_on_the_gpu_paths.py.)"""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

import genesis
from genesis.debug._census import ARRAY_SUMS, CENSUS
from genesis.ops._multi_tensor import CHUNK, THREADS, blocks_for
from tests.ops import cuda_on_cpu
from tests.ops.cuda_on_cpu import launcher


def census_samples(dtype) -> list:
    """Arrays of sizes 0, 1, just over a CHUNK and several CHUNKs, with NaN and Inf spread
    through them (some in a later chunk than the first)."""
    rng = np.random.default_rng(0)
    arrays = [np.zeros(0, dtype), np.array([np.nan], dtype)]
    for size in (CHUNK + 5, 3 * CHUNK - 1):
        values = rng.standard_normal(size).astype(dtype)
        values[rng.choice(size, 40, replace=False)] = np.nan
        values[rng.choice(size, 30, replace=False)] = np.inf
        values[-1] = -np.inf
        arrays.append(values)
    return arrays


def expected_sums(kernel, arrays) -> list:
    """What NumPy gives for `kernel`'s sums of each array."""
    wide = [np.asarray(array, np.float64) for array in arrays]
    if kernel is CENSUS:
        return [float(count) for array in wide
                for count in (np.isfinite(array).sum(), np.isnan(array).sum())]
    return [float(np.sum(array * array)) for array in wide]


def _close(got: list, expected: list) -> bool:
    return np.allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ARRAY_SUMS))
def test_text_compiled_as_cpp_sums_like_numpy(name, dtype, tmp_path):
    kernel = ARRAY_SUMS[name]
    arrays = census_samples(dtype)
    if kernel is not CENSUS:  # finite squares: exact sums to compare
        arrays = [np.where(np.isfinite(array), array, 0.5).astype(dtype) for array in arrays]
    ctype = "float" if dtype == np.float32 else "double"
    arguments = ", ".join(f"(const T*)arrays[{k}], sizes[{k}]" for k in range(len(arrays)))
    library = cuda_on_cpu.build(tmp_path, f"{name}_{ctype}", kernel.source(ctype, len(arrays))
                                + launcher(f"{name}({arguments}, sums)",
                                           "void** arrays, long long* sizes, double* sums"))
    sizes = np.array([array.size for array in arrays], np.int64)
    sums = np.zeros(len(kernel.terms) * len(arrays))
    pointers = (ctypes.c_void_p * len(arrays))(*(array.ctypes.data for array in arrays))
    library.run(ctypes.c_uint(blocks_for(sizes)), ctypes.c_uint(THREADS), pointers,
                sizes.ctypes.data_as(ctypes.c_void_p), sums.ctypes.data_as(ctypes.c_void_p))
    assert _close(sums.tolist(), expected_sums(kernel, arrays))


@pytest.mark.parametrize("name", sorted(ARRAY_SUMS))
def test_on_the_cpu_and_where_no_launch_can_take_them_the_sums_are_the_same(name):
    kernel = ARRAY_SUMS[name]
    mixed = census_samples(np.float32)[1:] + [np.array([np.inf, 1.0, np.nan], np.float16),
                                              np.array([1.0, np.nan])]
    values = [float(value) for figure in kernel(genesis.device("cpu"), mixed)
              for value in np.ravel(figure)]
    assert _close(values, expected_sums(kernel, mixed))
