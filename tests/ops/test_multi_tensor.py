"""Every multi-tensor kernel's CUDA text (genesis/ops/_multi_tensor.py), compiled as C++ and
run block by block (tests/ops/cuda_on_cpu.py), updates each tensor exactly as its
Elementwise kernel's reference does, in float32 and float64: the chunk each block takes,
the tensor it picks and the body's formulas."""
from __future__ import annotations

import ctypes
import shutil
import types

import numpy as np
import pytest

import genesis
from genesis.ops._kernels import REGISTRY, Elementwise
from genesis.ops._multi_tensor import CHUNK, MAX_TENSORS, MultiTensorKernel
from tests.ops import cuda_on_cpu
from tests.ops.cuda_on_cpu import launcher
from tests.ops.kernel_samples import SAMPLES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")

MULTI_TENSOR_KERNELS = sorted(name for name, kernel in REGISTRY.items()
                              if isinstance(kernel, MultiTensorKernel))
_CPU = genesis.device("cpu")


def _source(kernel: MultiTensorKernel, ctype: str, count: int) -> str:
    per_tensor = len(kernel.arrays)
    arguments = []
    for tensor in range(count):
        arguments += [f"(T*)arrays[{tensor * per_tensor + slot}]" for slot in range(per_tensor)]
        arguments.append(f"sizes[{tensor}]")
    arguments += [f"numbers[{slot}]" for slot in range(len(kernel.scalars))]
    return kernel.source(ctype, count) + launcher(
        f"{kernel.name}({', '.join(arguments)})", "void** arrays, long long* sizes, T* numbers")


def _run_compiled(folder, kernel, tensors, scalars, dtype, threads=64):
    ctype = "float" if dtype == np.float32 else "double"
    library = cuda_on_cpu.build(folder, f"{kernel.name}_{ctype}_{len(tensors)}",
                                _source(kernel, ctype, len(tensors)))
    arrays = [array for tensor in tensors for array in tensor]
    sizes = np.array([tensor[0].size for tensor in tensors], np.int64)
    numbers = np.array(scalars, dtype)
    blocks = int(sum(-(-size // CHUNK) for size in sizes))
    pointers = (ctypes.c_void_p * len(arrays))(*(array.ctypes.data for array in arrays))
    library.run(ctypes.c_uint(blocks), ctypes.c_uint(threads), pointers,
                sizes.ctypes.data_as(ctypes.c_void_p), numbers.ctypes.data_as(ctypes.c_void_p))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", MULTI_TENSOR_KERNELS)
def test_multi_tensor_text_compiled_as_cpp_updates_like_the_reference(name, dtype, tmp_path):
    kernel = REGISTRY[name]
    (tensors, *scalars), _ = SAMPLES[name](np.random.default_rng(0), dtype)
    expected = [tuple(array.copy() for array in tensor) for tensor in tensors]
    kernel(_CPU, expected, *scalars)  # the CPU: each tensor through the Elementwise reference
    _run_compiled(tmp_path, kernel, tensors, scalars, dtype)
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for ours, reference in zip(tensors, expected):
        for got, want in zip(ours, reference):
            np.testing.assert_allclose(got, want, **tolerance)


class _RecordingCuPy:
    """Stands for CuPy: records each RawKernel launch's grid, block and arguments, and
    each Elementwise launch's kernel and dtype."""
    __name__ = "cupy"

    def __init__(self):
        self.built, self.launches = [], []

    def RawKernel(self, code, name):  # noqa: N802 (CuPy's name)
        self.built.append(code)
        return lambda grid, block, args: self.launches.append((grid, block, args))

    def ElementwiseKernel(self, inputs, outputs, body, name):  # noqa: N802
        return lambda *args: self.launches.append(("elementwise", name, args[-1].dtype))

    @staticmethod
    def ascontiguousarray(array):
        return np.ascontiguousarray(array)


def _axpy():
    return Elementwise("axpy", "T x, T a", "T y", "y = y + a * x", register=False,
                       reference=lambda device, x, a, y: np.add(y, a * x, out=y))


def test_one_launch_takes_up_to_max_tensors_with_a_block_per_chunk():
    cupy = _RecordingCuPy()
    gpu = types.SimpleNamespace(xp=cupy)
    update = MultiTensorKernel(_axpy(), ("x", "y"), register=False)
    sizes = [CHUNK * 2 + 1, 3, 0] + [5] * MAX_TENSORS
    update(gpu, [(np.ones(size, np.float32), np.zeros(size, np.float32)) for size in sizes], 0.5)
    (grid, block, args), (second_grid, _, second_args) = cupy.launches
    assert grid == (3 + 1 + 0 + (MAX_TENSORS - 3),) and block == (256,)
    assert len(args) == MAX_TENSORS * 3 + 1 and args[2] == np.int64(CHUNK * 2 + 1)
    assert isinstance(args[-1], np.float32)  # a number of T's width, not a Python float
    assert second_grid == (3,) and len(second_args) == 3 * 3 + 1
    assert len(cupy.built) == 2  # one build for 32 tensors, one for 3


def test_tensors_it_cannot_launch_for_go_through_the_elementwise_kernel():
    cupy = _RecordingCuPy()
    calls = []
    kernel = _axpy()
    kernel.reference = lambda device, x, a, y: calls.append(y.dtype)
    update = MultiTensorKernel(kernel, ("x", "y"), register=False)
    gpu = types.SimpleNamespace(xp=cupy)
    mixed = [(np.ones(2, np.float32), np.zeros(2, np.float32)),
             (np.ones(2, np.float64), np.zeros(2, np.float64))]
    half = [(np.ones(2, np.float16), np.zeros(2, np.float16))]
    strided = [(np.ones(2, np.float32), np.zeros((2, 2), np.float32).T)]  # written, not C-ordered
    for tensors in (mixed, half, strided):
        update(gpu, tensors, 0.5)
    assert cupy.launches == [("elementwise", "axpy", np.float32), ("elementwise", "axpy", np.float64),
                             ("elementwise", "axpy", np.float32)]  # one per tensor
    assert calls == [np.float16]  # no compiled kernel for float16: the reference


def test_a_launch_is_built_for_each_array_namespace_it_runs_in():
    """A kernel built for the tests' fake GPU (bench/array_ops.py's stand-in RawKernel) must
    not be the one a later launch on the real CuPy finds: the build is kept per namespace."""
    from genesis.ops._kernels import Elementwise
    from genesis.ops._multi_tensor import MultiTensorKernel

    axpy = Elementwise("axpy_namespaces", "T x, T a", "T y", "y = y + a * x",
                       lambda device, x, a, y: np.add(y, a * x, out=y), register=False)
    update = MultiTensorKernel(axpy, ("x", "y"), register=False)
    built = []

    class Namespace:
        def __init__(self, name):
            self.name = name

        def RawKernel(self, source, kernel_name):
            built.append(self.name)
            return lambda grid, block, args: None

        def ascontiguousarray(self, array):
            return array

    first, second = Namespace("fake"), Namespace("cupy")
    arrays = [(np.ones(4, np.float32), np.zeros(4, np.float32))]
    for xp in (first, second, first):
        update._launch(xp, np.dtype(np.float32), arrays, (np.float32(0.5),))
    assert built == ["fake", "cupy"]
