"""The real-GPU kernel tests (test_fused_kernels_on_device.py), run here against
bench/array_ops.py's CuPy stand-in (launches checked as CuPy takes them, computed by the
kernels' references), so that the tests themselves are known to work before a GPU runs
them: a GPU is lent to few sessions. What they check on a GPU, the compiled kernels, the
stand-in cannot; that the tests lay out their arguments right, it can."""
import types

import numpy as np
import pytest

import genesis
from genesis.ops._kernels import REGISTRY
from genesis.ops._multi_tensor import MultiTensorKernel
from genesis.ops._row_kernels import RowKernel
from tests.cuda import test_fused_kernels_on_device as on_device
from tests.ops.kernel_samples import ACROSS_SAMPLES, SAMPLES


@pytest.fixture
def stand_in(array_ops, monkeypatch):
    """on_device's `genesis.device` gives, for "cuda", a device on the counting stand-in."""
    xp = array_ops.CountingNumPy()
    xp.asnumpy = np.asarray
    array_ops._install_fake_cupyx()
    gpu = types.SimpleNamespace(xp=xp, type="cuda")
    devices = types.SimpleNamespace(
        device=lambda name: gpu if name != "cpu" else genesis.device("cpu"))
    monkeypatch.setattr(on_device, "genesis", devices)
    return "cuda"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_kernel_test(stand_in, name, dtype):
    if isinstance(REGISTRY[name], MultiTensorKernel):
        on_device.test_multi_tensor_kernel_on_the_gpu_updates_like_the_cpu(stand_in, name, dtype)
    else:
        on_device.test_kernel_on_the_gpu_matches_its_reference_on_the_cpu(stand_in, name, dtype)


@pytest.mark.parametrize("name", sorted(name for name, kernel in REGISTRY.items()
                                        if isinstance(kernel, RowKernel)
                                        and SAMPLES[name] is not ACROSS_SAMPLES.get(name)))
def test_row_layout_test(stand_in, name):
    on_device.test_row_kernel_on_the_gpu_takes_any_axis_and_layout(stand_in, name)


@pytest.mark.parametrize("name", sorted(ACROSS_SAMPLES))
def test_row_across_test(stand_in, name):
    on_device.test_row_kernel_on_the_gpu_takes_rows_across_a_kept_dim(stand_in, name,
                                                                      np.float64)
