"""autocast per device type, as PyTorch's: autocast("cuda") casts only tensors on a GPU, by
CUDA's op lists, and autocast("cpu") only CPU tensors; each device type keeps its own
state, so the two nest. On the fake GPU (and the real one where there is one)."""
import pytest

import genesis
from genesis.autocast_rules import AutocastRule


def _half(*shape, device):
    return genesis.randn(*shape, device=device).to(genesis.float16)


def test_each_autocast_casts_only_its_own_devices_tensors(cuda):
    gpu, host = genesis.randn(3, 4, device=cuda), genesis.randn(3, 4)
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert (gpu @ gpu.T).dtype is genesis.float16
        assert (host @ host.T).dtype is genesis.float32
        assert _half(3, 4, device=cuda).sum().dtype is genesis.float32
        assert _half(3, 4, device="cpu").sum().dtype is genesis.float16
    with genesis.autocast("cpu", dtype=genesis.float16):
        assert (gpu @ gpu.T).dtype is genesis.float32
        assert (host @ host.T).dtype is genesis.float16
    with genesis.autocast(genesis.float16):  # genesis's dtype-first form: every device
        assert (gpu @ gpu.T).dtype is genesis.float16 and (host @ host.T).dtype is genesis.float16


def test_nested_device_types_keep_both_on_each_with_its_dtype(cuda):
    gpu, host = genesis.randn(3, 4, device=cuda), genesis.randn(3, 4)
    with genesis.autocast("cuda", dtype=genesis.float16):
        with genesis.autocast("cpu", dtype=genesis.float16):
            assert genesis.is_autocast_enabled("cuda") and genesis.is_autocast_enabled("cpu")
            assert (gpu @ gpu.T).dtype is genesis.float16
            assert (host @ host.T).dtype is genesis.float16
            with genesis.autocast("cuda", enabled=False):
                assert not genesis.is_autocast_enabled("cuda") and genesis.is_autocast_cpu_enabled()
                assert (gpu @ gpu.T).dtype is genesis.float32
                assert (host @ host.T).dtype is genesis.float16
            assert (gpu @ gpu.T).dtype is genesis.float16
        assert genesis.is_autocast_enabled("cuda") and not genesis.is_autocast_enabled("cpu")
        assert genesis.amp.get_autocast_dtype("cuda") is genesis.float16
        assert genesis.amp.get_autocast_dtype("cpu") is None
        assert (host @ host.T).dtype is genesis.float32
    assert not genesis.amp.is_autocast_enabled()


def test_cuda_rules_apply_to_gpu_tensors(cuda):
    x = _half(3, 4, device=cuda)
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert x.sum().dtype is genesis.float32
        assert x.softmax(-1).dtype is genesis.float32
        assert x.cumsum(1).dtype is genesis.float32
        assert genesis.nn.functional.layer_norm(x, (4,)).dtype is genesis.float32
        assert genesis.linalg.vector_norm(x).dtype is genesis.float32
        assert genesis.mv(genesis.randn(2, 3, device=cuda),
                          genesis.randn(3, device=cuda)).dtype is genesis.float16
        # CUDA promotes dot to the widest input
        assert genesis.dot(_half(3, device=cuda),
                           genesis.randn(3, device=cuda)).dtype is genesis.float32


def test_a_linear_of_mixed_dtypes_on_the_gpu_is_refused_under_the_cpus_autocast(cuda):
    layer = genesis.nn.Linear(4, 2).to(cuda)
    x = _half(3, 4, device=cuda)
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert layer(x).dtype is genesis.float16
    with genesis.autocast("cpu", dtype=genesis.float16), pytest.raises(RuntimeError,
                                                                       match="dtypes differ"):
        layer(x)


def test_a_rule_for_cuda_only_applies_to_gpu_tensors_and_gradients_keep_their_dtype(cuda):
    class CudaOnly(genesis.autograd.Function):
        autocast_policy = AutocastRule(cuda="lower", cpu=None)

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = genesis.randn(2, device=cuda, requires_grad=True)
    with genesis.autocast("cuda", dtype=genesis.float16):
        y = CudaOnly.apply(x)
    with genesis.autocast("cpu", dtype=genesis.float16):
        assert CudaOnly.apply(x).dtype is genesis.float32
    assert y.dtype is genesis.float16
    y.float().sum().backward()
    assert x.grad.dtype is genesis.float32 and x.grad.device.type == "cuda"
