"""nn.parallel.data_parallel: the module run on the GPU genesis computes on, and PyTorch's
error without one."""
import pytest

import genesis
from genesis.nn.parallel import data_parallel
from tests.helpers import torch_or_skip


def test_without_a_gpu_it_raises_as_pytorch():
    torch = torch_or_skip()
    if genesis.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a GPU is present")
    messages = []
    for lib in (genesis, torch):
        with pytest.raises(RuntimeError) as raised:
            lib.nn.parallel.data_parallel(lib.nn.Linear(2, 1), lib.ones(3, 2))
        messages.append(str(raised.value))
    assert messages[0] == messages[1] == "device type could not be determined"


def test_on_the_gpu_it_runs_the_module_there(cuda):
    layer = genesis.nn.Linear(2, 1).to("cuda")
    out = data_parallel(layer, genesis.ones(3, 2), device_ids=[0])
    assert out.device.type == "cuda" and out.shape == (3, 1)
    kwargs_out = data_parallel(genesis.nn.Identity(), (), module_kwargs={"input": genesis.ones(2)})
    assert kwargs_out.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="parameters and buffers on device cuda:0"):
        data_parallel(genesis.nn.Linear(2, 1), genesis.ones(3, 2))
