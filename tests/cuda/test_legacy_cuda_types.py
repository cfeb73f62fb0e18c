"""torch.cuda.FloatTensor and the other legacy CUDA types (genesis.ops.cuda_tensor_types):
isinstance asks dtype and device, calling one makes a GPU tensor, and without a GPU the
call fails as in a PyTorch built without CUDA."""
import pytest

import genesis
from genesis.compat import serve_torch
from genesis.ops import cuda_tensor_types as cuda_types
from tests.helpers import torch_or_skip


def test_constructors_make_gpu_tensors_of_their_dtype(cuda):
    made = cuda_types.FloatTensor(2, 3)
    assert made.device.type == "cuda" and made.dtype is genesis.float32 and made.shape == (2, 3)
    ints = cuda_types.LongTensor([1, 2])
    assert ints.device.type == "cuda" and ints.tolist() == [1, 2] and ints.dtype is genesis.int64
    assert isinstance(made, cuda_types.FloatTensor) and not isinstance(made, genesis.FloatTensor)
    assert not isinstance(made, cuda_types.DoubleTensor)
    moved = genesis.ones(2).type(cuda_types.DoubleTensor)
    assert moved.device.type == "cuda" and moved.dtype is genesis.float64
    assert moved.type() == "genesis.cuda.DoubleTensor"


def test_cpu_tensors_are_no_instances_of_the_cuda_types():
    for name in cuda_types.__all__:
        cuda_type = getattr(cuda_types, name)
        assert not isinstance(genesis.zeros(1, dtype=cuda_type.dtype), cuda_type)
        assert isinstance(genesis.zeros(1, dtype=cuda_type.dtype), getattr(genesis, name))
        assert repr(cuda_type) == f"<class 'genesis.ops.cuda_tensor_types.{name}'>"


def test_without_a_gpu_the_constructors_raise_pytorchs_type_error():
    torch = torch_or_skip()
    if genesis.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a GPU is present")
    for args in ((2, 3), ([1.0],), ()):
        with pytest.raises(TypeError, match="type torch.cuda.FloatTensor not available"):
            torch.cuda.FloatTensor(*args)
        with pytest.raises(TypeError, match="type torch.cuda.FloatTensor not available"):
            cuda_types.FloatTensor(*args)
    assert not isinstance(torch.ones(1), torch.cuda.FloatTensor)


def test_served_as_torch_cuda_types():
    with serve_torch():
        import torch
        assert torch.cuda.FloatTensor is cuda_types.FloatTensor
        assert not isinstance(torch.ones(1), torch.cuda.FloatTensor)
        tensor_type = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
        assert tensor_type(2).dtype is torch.float32
