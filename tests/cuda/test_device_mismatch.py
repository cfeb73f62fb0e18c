"""Mixing devices in one op is a clear RuntimeError naming both devices (as in PyTorch),
never a silent result on the fake GPU nor a CuPy TypeError on the real one; except where
PyTorch allows it: a 0-d CPU tensor joins an op on any device, and CPU index tensors index
a tensor on any device.

CHECKED ops check in their own code; the others rely on the central check in
`Function.apply` (and the engine's checks of gradients).
"""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F

def _cpu(*shape):
    return genesis.randn(*shape)


def _gpu(*shape):
    return genesis.randn(*shape, device="cuda")


CHECKED = {
    "add": lambda: _gpu(3) + _cpu(3),
    "mul reflected": lambda: _cpu(3) * _gpu(3),
    "matmul": lambda: _gpu(2, 3) @ _cpu(3, 2),
    "cat": lambda: genesis.cat([_gpu(2), _cpu(2)]),
    "stack": lambda: genesis.stack([_cpu(2), _gpu(2)]),
    "where": lambda: genesis.where(_gpu(3) > 0, _gpu(3), _cpu(3)),
    "clamp with tensor bounds": lambda: genesis.clamp(_gpu(3), _cpu(3)),
    "einsum": lambda: genesis.einsum("ij,jk->ik", _gpu(2, 3), _cpu(3, 2)),
    "gather": lambda: genesis.gather(_gpu(2, 3), 1, genesis.tensor([[0], [1]])),
    "index_select": lambda: genesis.index_select(_gpu(3, 2), 0, genesis.tensor([0, 2])),
    "getitem with a gpu index tensor": lambda: _cpu(4)[genesis.tensor([0, 1], device="cuda")],
    "masked_fill mask": lambda: _gpu(3).masked_fill(genesis.tensor([True, False, True]), 0.0),
    "setitem value": lambda: _cpu(3).__setitem__(slice(None), _gpu(3)),
    "conv2d weight": lambda: F.conv2d(_gpu(1, 1, 4, 4), _cpu(1, 1, 3, 3)),
    "embedding": lambda: F.embedding(genesis.tensor([0, 1], device="cuda"), _cpu(3, 2)),
    "mse_loss target": lambda: F.mse_loss(_cpu(3), _gpu(3)),
    "layer_norm weight": lambda: F.layer_norm(_cpu(2, 3), (3,), _gpu(3)),
    "scaled_dot_product_attention key": lambda: F.scaled_dot_product_attention(
        _cpu(1, 2, 4), _gpu(1, 2, 4), _cpu(1, 2, 4)),
    "add_ recorded": lambda: (_cpu(3).requires_grad_() * 1).add_(_gpu(3)),
}

UNCHECKED = {
    "linear input": lambda: F.linear(_gpu(2, 3), _cpu(4, 3)),
    "linear bias": lambda: F.linear(_cpu(2, 3), _cpu(4, 3), _gpu(4)),
    "maximum": lambda: genesis.maximum(_cpu(3), _gpu(3)),
    "fmin": lambda: genesis.fmin(_gpu(3), _cpu(3)),
    "index_add source": lambda: _cpu(3, 2).index_add(0, genesis.tensor([0, 1]), _gpu(2, 2)),
    "scatter_add src": lambda: _cpu(3, 2).scatter_add(0, genesis.tensor([[0, 1]]), _gpu(1, 2)),
    "masked_fill value tensor": lambda: _cpu(3).masked_fill(genesis.tensor([True, False, True]),
                                                            genesis.tensor(1.0, device="cuda")),
    "add_ without grad": lambda: _cpu(3).add_(_gpu(3)),
    "mul_ without grad": lambda: _cpu(3).mul_(_gpu(3)),
    "cross_entropy target": lambda: F.cross_entropy(_cpu(4, 3), genesis.tensor([0, 1, 2, 1],
                                                                             device="cuda")),
    "cross_entropy weight": lambda: F.cross_entropy(_cpu(4, 3), genesis.tensor([0, 1, 2, 1]),
                                                    weight=_gpu(3)),
    "nll_loss target": lambda: F.nll_loss(_cpu(4, 3), genesis.tensor([0, 1, 2, 1], device="cuda")),
    "batch_norm running stats": lambda: F.batch_norm(_cpu(4, 3), genesis.zeros(3, device="cuda"),
                                                     genesis.ones(3, device="cuda"), training=True),
    "backward gradient": lambda: (_cpu(3).requires_grad_() * 2).backward(_gpu(3)),
}


@pytest.mark.parametrize("name", CHECKED)
def test_mixed_devices_name_both(cuda, name):
    with pytest.raises((RuntimeError, IndexError)) as raised:  # IndexError: indexing, as Python
        CHECKED[name]()
    message = str(raised.value)
    assert "cpu" in message and "cuda:0" in message, message


@pytest.mark.parametrize("name", UNCHECKED)
def test_mixed_devices_caught_centrally(fake_cuda, name):
    with pytest.raises(RuntimeError) as raised:
        UNCHECKED[name]()
    message = str(raised.value)
    assert "cpu" in message and "cuda:0" in message, message


def test_two_gpus_do_not_mix(two_fake_gpus):
    with pytest.raises(RuntimeError, match="cuda:0.*cuda:1|cuda:1.*cuda:0"):
        genesis.ones(2, device="cuda:0") + genesis.ones(2, device="cuda:1")


def test_assigning_a_gradient_from_another_device(cuda):
    leaf = genesis.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad is on cuda:0, the tensor on cpu"):
        leaf.grad = genesis.zeros(2, device="cuda")


def test_copy_between_devices_is_allowed(cuda):
    target = genesis.zeros(2)
    target.copy_(genesis.ones(2, device="cuda"))
    assert target.tolist() == [1.0, 1.0]


# -- PyTorch's exceptions: a 0-d CPU tensor is a number any device may use, and CPU index
# tensors may index a tensor on any device ---------------------------------------------------
def _scalar(value=2.0, requires_grad=False):
    return genesis.tensor(value, requires_grad=requires_grad)


CPU_SCALAR_JOINS = {
    "add": lambda g, s: g + s,
    "mul reflected": lambda g, s: s * g,
    "sub reflected": lambda g, s: s - g,
    "pow exponent": lambda g, s: g.abs() ** s,
    "maximum": lambda g, s: genesis.maximum(g, s),
    "where other": lambda g, s: genesis.where(g > 0, g, s),
    "clamp bounds": lambda g, s: genesis.clamp(g, min=-s, max=s),
    "lerp weight": lambda g, s: genesis.lerp(g, g * 3, s / 4),
    "addcmul tensor": lambda g, s: genesis.addcmul(g, s, g, value=0.5),
    "comparison": lambda g, s: (g > s).float() * g,
}


@pytest.mark.parametrize("name", CPU_SCALAR_JOINS)
def test_a_cpu_scalar_joins_a_gpu_op_and_gets_its_gradient_on_the_cpu(cuda, name):
    op = CPU_SCALAR_JOINS[name]
    values = np.random.default_rng(0).standard_normal(5)
    results = {}
    for device in ("cpu", cuda):
        g = genesis.tensor(values, device=device, requires_grad=True)
        s = genesis.tensor(1.5, dtype=genesis.float64, requires_grad=True)
        out = op(g, s)
        assert out.device == genesis.device(device)
        out.sum().backward()
        assert g.grad.device == genesis.device(device)
        assert s.grad is None or s.grad.device == genesis.device("cpu")
        results[device] = (out.detach().cpu().numpy(), g.grad.cpu().numpy(),
                           None if s.grad is None else s.grad.numpy())
    for ours, reference in zip(results[cuda], results["cpu"]):
        if reference is None:
            assert ours is None
        else:
            # float32 values: the GPU's exp and log may differ from the CPU's in the last bit
            np.testing.assert_allclose(ours, reference,
                                       rtol=1e-12 if reference.dtype == np.float64 else 1e-6)


def test_in_place_ops_take_a_cpu_scalar_but_keep_their_own_device(cuda):
    target = genesis.ones(3, device=cuda)
    target.add_(_scalar(2.0)).mul_(_scalar(2.0))
    assert target.device == genesis.device(cuda) and target.tolist() == [6.0, 6.0, 6.0]
    leaf = genesis.ones(3, device=cuda, requires_grad=True)
    scale = _scalar(3.0, requires_grad=True)
    (leaf * 1).mul_(scale).sum().backward()
    assert leaf.grad.tolist() == [3.0, 3.0, 3.0] and scale.grad.item() == 3.0
    assert scale.grad.device == genesis.device("cpu")
    with pytest.raises(RuntimeError, match="add_: .*cpu.*cuda:0"):
        _scalar(1.0).add_(genesis.tensor(1.0, device=cuda))  # a GPU scalar is no number
    with pytest.raises(RuntimeError, match="mul_: .*cpu.*cuda:0"):
        genesis.ones(3).mul_(genesis.tensor(2.0, device=cuda))


def test_a_gpu_scalar_does_not_join_a_cpu_op(cuda):
    with pytest.raises(RuntimeError, match="cpu.*cuda:0|cuda:0.*cpu"):
        genesis.ones(3) + genesis.tensor(1.0, device=cuda)


def test_cpu_index_tensors_index_a_gpu_tensor(cuda):
    data = genesis.arange(12.0, device=cuda).reshape(3, 4).requires_grad_()
    rows = genesis.tensor([2, 0, 2])
    picked = data[rows, 1:]
    assert picked.device == genesis.device(cuda)
    assert picked.tolist() == [[9.0, 10.0, 11.0], [1.0, 2.0, 3.0], [9.0, 10.0, 11.0]]
    picked.sum().backward()
    assert data.grad.tolist() == [[0.0, 1.0, 1.0, 1.0], [0.0] * 4, [0.0, 2.0, 2.0, 2.0]]
    masked = genesis.arange(4.0, device=cuda)[genesis.tensor([True, False, True, False])]
    assert masked.tolist() == [0.0, 2.0]
    target = genesis.zeros(4, device=cuda)
    target[genesis.tensor([1, 3])] = _scalar(5.0)
    assert target.device == genesis.device(cuda) and target.tolist() == [0.0, 5.0, 0.0, 5.0]


def test_gpu_index_tensors_do_not_index_a_cpu_tensor(cuda):
    with pytest.raises(IndexError, match=r"on cuda:0, the indexed one on cpu.*\.to\('cpu'\)"):
        genesis.arange(4.0)[genesis.tensor([0, 1], device=cuda)]


@pytest.mark.parametrize("op, run", [
    ("matmul", lambda: _gpu(3) @ _cpu(3)),
    ("matmul", lambda: _gpu(2, 3) @ _cpu(3, 2)),
    ("rms_norm", lambda: F.rms_norm(_cpu(2, 3), (3,), _gpu(3))),
])
def test_messages_name_the_op_as_users_call_it(fake_cuda, op, run):
    with pytest.raises(RuntimeError, match=f"^{op}: expected all tensors to be on the same device"):
        run()
