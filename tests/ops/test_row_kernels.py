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
import types

import numpy as np
import pytest

import genesis
from genesis.ops import _row_kernels
from genesis.ops._kernels import C_TYPES, REGISTRY, parameters
from genesis.ops._row_kernels import RowKernel, row_geometry, threads_for
from tests.ops import cuda_on_cpu
from tests.ops.cuda_on_cpu import launcher
from tests.ops.kernel_samples import ACROSS_SAMPLES, SAMPLES

needs_cpp = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")

ROW_KERNELS = sorted(name for name, kernel in REGISTRY.items() if isinstance(kernel, RowKernel))
_CPU = genesis.device("cpu")


def _source(kernel: RowKernel, ctype: str) -> str:
    """The kernel's text and a launcher taking its arrays as `arrays`, its scalars (of T)
    as `numbers`, in declared order."""
    inputs, outputs = parameters(kernel.inputs), parameters(kernel.outputs)
    arguments, slot, number = [], 0, 0
    for position, item in enumerate(inputs + outputs):
        if kernel.kinds[item.name] == "scalar":
            arguments.append(f"numbers[{number}]")
            number += 1
        else:
            const = "const " if position < len(inputs) else ""
            arguments.append(f"({const}{C_TYPES[item.type]}*)arrays[{slot}]")
            slot += 1
    return kernel.source(ctype) + launcher(
        f"{kernel.name}({', '.join(arguments)}, n, inner, middle, across)",
        "void** arrays, T* numbers, long long n, long long inner, long long middle, "
        "long long across")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(kernel, C type) -> the kernel and its threaded launcher as a shared library."""
    return cuda_on_cpu.library_cache(tmp_path_factory.mktemp("row_kernels"), _source,
                                     cuda_on_cpu.build)


def _run_compiled(library, kernel, arguments, where: dict, threads=None):
    """The kernel's outputs, launched as _RowLauncher does: C-ordered arrays, a block per row
    (rows along where["axis"] or across all but where["keep"])."""
    kinds = [kernel.kinds[item.name] for item in parameters(kernel.inputs)]
    arrays = [np.ascontiguousarray(argument)
              for argument, kind in zip(arguments, kinds) if kind != "scalar"]
    dtype = arrays[0].dtype
    numbers = np.array([argument for argument, kind in zip(arguments, kinds) if kind == "scalar"]
                       or [0], dtype)
    shape = arrays[0].shape
    where = {name: dim % len(shape) for name, dim in where.items()}
    geometry = row_geometry(shape, **where)
    row_shape = geometry.row_shape(shape, *where.values())
    outputs = [np.full(row_shape if kernel.kinds[item.name] == "row" else shape, 12345,
                       dtype if item.type == "T" else item.type)
               for item in parameters(kernel.outputs)]
    pointers = (ctypes.c_void_p * (len(arrays) + len(outputs)))(
        *(array.ctypes.data for array in arrays + outputs))
    library.run(ctypes.c_uint(geometry.rows), ctypes.c_uint(threads or threads_for(geometry.n)),
                pointers, numbers.ctypes.data_as(ctypes.c_void_p),
                *(ctypes.c_longlong(number) for number in geometry[1:]))
    return outputs


def _check(kernel, library, arguments, where, dtype, threads=None):
    got = _run_compiled(library, kernel, arguments, where, threads)
    want = kernel.reference(_CPU, *[np.copy(argument) if isinstance(argument, np.ndarray)
                                    else argument for argument in arguments], **where)
    want = want if isinstance(want, tuple) else (want,)
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    assert len(got) == len(want)
    for ours, reference in zip(got, want):
        assert ours.shape == reference.shape
        np.testing.assert_allclose(ours, reference, **tolerance)


ALONG = [name for name in ROW_KERNELS if SAMPLES[name] is not ACROSS_SAMPLES.get(name)]
CASES = [(name, "along") for name in ALONG] + [(name, "across") for name in sorted(ACROSS_SAMPLES)]


@needs_cpp
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, geometry", CASES, ids=[f"{name}-{geometry}" for name, geometry in CASES])
def test_row_kernel_compiled_as_threaded_cpp_matches_its_reference(name, geometry, dtype,
                                                                    compiled):
    kernel = REGISTRY[name]
    samples = SAMPLES if geometry == "along" else ACROSS_SAMPLES
    arguments, where = samples[name](np.random.default_rng(0), dtype)
    library = compiled(kernel, "float" if dtype == np.float32 else "double")
    kinds = [kernel.kinds[item.name] for item in parameters(kernel.inputs)]
    with np.errstate(all="ignore"):  # the samples' NaN and -inf rows
        for variant, variant_where, threads in _variants(arguments, kinds, where):
            _check(kernel, library, variant, variant_where, dtype, threads)


def _variants(arguments, kinds, where: dict):
    """(arguments, where, threads) to run a sample as: as it is; with the rows' dim moved
    last (inner = 1), and for rows along it, cut to five elements with more threads than
    that; for rows across, with the kept dim first (outer = 1) and last (inner = 1)."""
    yield arguments, where, None
    (name, dim), = where.items()

    def moved(to):
        return [np.moveaxis(argument, dim, to) if kind in ("element", "row") else argument
                for argument, kind in zip(arguments, kinds)]
    if name == "axis":
        yield moved(-1), {"axis": -1}, None
        yield [_first_five(argument, kind) for argument, kind in zip(moved(-1), kinds)], \
            {"axis": -1}, 64
    else:
        yield moved(0), {"keep": 0}, None
        yield moved(-1), {"keep": -1}, None


def _first_five(argument, kind: str):
    """The argument for rows cut to their first five elements: class targets wrapped into
    them."""
    if kind == "element":
        return argument[..., :5]
    return argument % 5 if kind == "row" and argument.dtype.kind == "i" else argument


def test_threads_per_block_are_a_power_of_two_within_bounds():
    assert [threads_for(n) for n in (1, 31, 32, 33, 200, 256, 257, 100000)] == \
        [32, 32, 32, 64, 256, 256, 256, 256]
    assert _row_kernels.MAX_THREADS == 256


def test_row_geometry_starts_and_strides_each_row():
    assert row_geometry((2, 300, 3), axis=1)[:3] == (6, 300, 3)
    assert row_geometry((4, 7), axis=1)[:3] == (4, 7, 1)
    assert row_geometry((5,), axis=0)[:3] == (1, 5, 1)
    across = row_geometry((8, 4, 5, 5), keep=1)
    assert across == (4, 200, 25, 4, True) and across.row_shape((8, 4, 5, 5), 1) == (1, 4, 1, 1)


class _RecordingCuPy:
    """Stands for CuPy: records each RawKernel build and launch."""
    __name__ = "cupy"

    def __init__(self):
        self.built, self.launches, self.copied = [], [], 0

    def RawKernel(self, code, name):  # noqa: N802 (CuPy's name)
        self.built.append(code)
        return lambda grid, block, args: self.launches.append((grid, block, args))

    def ascontiguousarray(self, array):
        self.copied += not array.flags.c_contiguous
        return np.ascontiguousarray(array)

    @staticmethod
    def empty(shape, dtype):
        return np.empty(shape, dtype)


def _probe_kernel(calls):
    return RowKernel("probe", "T x, raw T weight, row int64 target, scalar T eps",
                     "T y, row T total", "", register=False,
                     reference=lambda device, *args, axis: calls.append(axis) or "reference")


def test_a_row_kernel_launches_a_block_per_row_with_arguments_of_their_widths():
    cupy, calls = _RecordingCuPy(), []
    kernel = _probe_kernel(calls)
    gpu = types.SimpleNamespace(xp=cupy)
    x = np.ones((4, 300, 3), np.float32).transpose(0, 2, 1)  # rows along axis 2, not C-ordered
    y, total = kernel(gpu, x, np.ones(300, np.float32), np.zeros((4, 3, 1), np.int64), 1e-5,
                      axis=-1)
    (grid, block, args), = cupy.launches
    assert grid == (12,) and block == (256,) and cupy.copied == 1
    assert y.shape == (4, 3, 300) and total.shape == (4, 3, 1) and total.dtype == np.float32
    assert isinstance(args[3], np.float32)  # eps as T, not a Python float (a double)
    assert args[-4:] == (300, 1, 300, 0) and all(isinstance(a, np.int64) for a in args[-4:])
    assert "typedef float T;" in cupy.built[0] and not calls
    _, total = kernel(gpu, np.ones((4, 3, 5), np.float32), np.ones(3, np.float32),
                      np.zeros((1, 3, 1), np.int64), 1e-5, keep=1)  # a row per channel
    (grid, _, args) = cupy.launches[-1]
    assert grid == (3,) and total.shape == (1, 3, 1) and args[-4:] == (20, 5, 3, 1)


def test_a_row_kernel_takes_its_reference_where_it_cannot_launch(monkeypatch):
    cupy, calls = _RecordingCuPy(), []
    kernel = _probe_kernel(calls)
    gpu = types.SimpleNamespace(xp=cupy)
    weight, target = np.ones(3, np.float32), np.zeros((2, 1), np.int64)
    kernel(gpu, np.ones((2, 3), np.float16), weight.astype(np.float16), target, 0.1, axis=1)
    kernel(gpu, np.ones((0, 3), np.float32), weight, target[:0], 0.1, axis=1)  # no rows
    kernel(gpu, np.ones((), np.float32), weight, target, 0.1, axis=0)  # 0-d
    monkeypatch.setattr(_row_kernels, "_MAX_BLOCKS", 1)
    kernel(gpu, np.ones((2, 3), np.float32), weight, target, 0.1, axis=1)  # rows past a grid
    assert not cupy.launches and calls == [1, 1, 0, 1]
