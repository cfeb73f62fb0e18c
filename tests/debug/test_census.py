"""genesis trace's census kernel (genesis/debug/_census.py): its CUDA text, compiled as C++
and run block by block (tests/ops/cuda_on_cpu.py), counts each array's finite and NaN
entries as NumPy does, over arrays of several sizes in one launch; where it cannot launch,
the per-array reductions give the same counts. (Its launches on the CuPy stand-in:
tests/cuda/test_trace_on_the_gpu_paths.py.)"""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

import genesis
from genesis.debug._census import CENSUS_NAME, census, census_source
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


def expected_counts(arrays) -> list:
    return [float(count) for array in arrays
            for count in (np.isfinite(array).sum(), np.isnan(array).sum())]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_census_text_compiled_as_cpp_counts_like_numpy(dtype, tmp_path):
    arrays = census_samples(dtype)
    ctype = "float" if dtype == np.float32 else "double"
    arguments = ", ".join(f"(const T*)arrays[{k}], sizes[{k}]" for k in range(len(arrays)))
    library = cuda_on_cpu.build(tmp_path, f"census_{ctype}", census_source(ctype, len(arrays))
                                + launcher(f"{CENSUS_NAME}({arguments}, counts)",
                                           "void** arrays, long long* sizes, double* counts"))
    sizes = np.array([array.size for array in arrays], np.int64)
    counts = np.zeros(2 * len(arrays))
    pointers = (ctypes.c_void_p * len(arrays))(*(array.ctypes.data for array in arrays))
    library.run(ctypes.c_uint(blocks_for(sizes)), ctypes.c_uint(THREADS), pointers,
                sizes.ctypes.data_as(ctypes.c_void_p), counts.ctypes.data_as(ctypes.c_void_p))
    assert counts.tolist() == expected_counts(arrays)


def test_census_on_the_cpu_and_where_it_cannot_launch_counts_the_same():
    cpu = genesis.device("cpu")
    mixed = census_samples(np.float32)[1:] + [np.array([np.inf, 1.0, np.nan], np.float16),
                                      np.array([1.0, np.nan])]
    values = [float(value) for figure in census(cpu, mixed) for value in np.ravel(figure)]
    assert values == expected_counts(mixed)
