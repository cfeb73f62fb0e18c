"""autocast and GradScaler."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_matmul_runs_in_float16_sum_in_float32_and_mean_in_float16():
    w = genesis.randn(4, 3, requires_grad=True)
    x = genesis.randn(2, 4)
    with genesis.autocast():
        assert genesis.amp.is_autocast_enabled()
        y = x @ w
        total = y.sum()
        average = y.mean()
    assert y.dtype is genesis.float16
    # as PyTorch's CUDA lists (which autocast() with no device follows): sum is on the float32
    # list, mean is on none (it keeps float16, accumulated in float32)
    assert total.dtype is genesis.float32 and average.dtype is genesis.float16
    total.backward()
    assert w.grad.dtype is genesis.float32
    expected = x.numpy().T @ np.ones((2, 3), np.float32)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=2e-3, atol=2e-3)


def test_autocast_restores_state_when_nested_and_on_error():
    assert not genesis.amp.is_autocast_enabled()
    with genesis.autocast():
        with genesis.autocast(enabled=False):
            assert not genesis.amp.is_autocast_enabled()
            assert (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype is genesis.float32
        assert genesis.amp.is_autocast_enabled()
    with pytest.raises(KeyError):
        with genesis.autocast():
            raise KeyError("x")
    assert not genesis.amp.is_autocast_enabled()


def test_float64_is_not_autocast():
    a = genesis.ones(2, 2, dtype=genesis.float64)
    with genesis.autocast():
        assert (a @ a).dtype is genesis.float64


def test_spec_global_flag():
    try:
        genesis.enable_autocast = True
        assert genesis.enable_autocast
        assert (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype is genesis.float16
        with genesis.autocast(enabled=False):
            assert (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype is genesis.float32
    finally:
        genesis.enable_autocast = False
    assert not genesis.enable_autocast
    assert (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype is genesis.float32


def test_autocast_decorator_and_bad_dtype():
    @genesis.autocast()
    def product(a, b):
        return a @ b

    assert product(genesis.ones(2, 2), genesis.ones(2, 2)).dtype is genesis.float16
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        genesis.autocast(dtype=genesis.float32)


def _setup():
    w = genesis.tensor([1.0, -2.0], requires_grad=True)
    return w, genesis.optim.SGD([w], lr=0.5)


def test_grad_scaler_scales_unscales_and_steps():
    w, optimizer = _setup()
    scaler = genesis.GradScaler(init_scale=8.0)
    scaler.scale((w * w).sum()).backward()
    assert w.grad.tolist() == [16.0, -32.0]
    scaler.unscale_(optimizer)
    assert w.grad.tolist() == [2.0, -4.0]
    scaler.step(optimizer)
    scaler.update()
    assert w.tolist() == [0.0, 0.0] and scaler.get_scale() == 8.0


def test_grad_scaler_skips_inf_steps_and_backs_off():
    w, optimizer = _setup()
    scaler = genesis.GradScaler(init_scale=1024.0, growth_interval=2)
    w.grad = genesis.tensor([float("inf"), 1.0])
    scaler.step(optimizer)
    scaler.update()
    assert w.tolist() == [1.0, -2.0] and scaler.get_scale() == 512.0
    for _ in range(2):
        optimizer.zero_grad()
        scaler.scale((w * 1.0).sum()).backward()
        scaler.step(optimizer)
        scaler.update()
    assert scaler.get_scale() == 1024.0  # grew after growth_interval clean steps


def test_grad_scaler_unscale_twice_is_an_error_and_state_round_trips():
    w, optimizer = _setup()
    scaler = genesis.GradScaler()
    scaler.scale((w * 1.0).sum()).backward()
    scaler.unscale_(optimizer)
    with pytest.raises(RuntimeError, match="once per step"):
        scaler.unscale_(optimizer)
    other = genesis.GradScaler()
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == scaler.get_scale()


def test_autocast_takes_pytorchs_device_type_first_form():
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert genesis.amp.get_autocast_dtype() == genesis.float16
    with genesis.autocast("cpu"):  # PyTorch's default on the CPU
        assert genesis.amp.get_autocast_dtype() == genesis.bfloat16
    with genesis.autocast(genesis.device("cuda:0"), genesis.float16, enabled=False):
        assert not genesis.amp.is_autocast_enabled()
    with genesis.autocast(genesis.float16):  # a dtype first, genesis's older form
        assert genesis.amp.get_autocast_dtype() == genesis.float16
    with pytest.raises(TypeError, match="two dtypes"):
        genesis.autocast(genesis.float16, genesis.float16)


def test_bfloat16_matrix_products_stay_bfloat16_as_in_pytorch():
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    x = genesis.randn(3, 4).to(genesis.bfloat16)
    w = genesis.randn(5, 4).to(genesis.bfloat16)
    assert (x @ w.T).dtype is genesis.bfloat16
    assert genesis.nn.functional.linear(x, w).dtype is genesis.bfloat16
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        assert genesis.mm(genesis.randn(2, 2), genesis.randn(2, 2)).dtype is genesis.bfloat16


def test_a_checkpoint_recomputes_under_the_autocast_its_forward_ran_in():
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    from genesis.utils.checkpoint import checkpoint

    seen = []

    def block(x, y):
        out = genesis.mm(x, y)
        seen.append(out.dtype)
        return out

    x, y = genesis.randn(3, 3, requires_grad=True), genesis.randn(3, 3, requires_grad=True)
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        # early_stop=False: the recomputation runs the whole block (with early stop it ends
        # once mm has saved its inputs, before `seen.append`)
        loss = checkpoint(block, x, y, use_reentrant=False, early_stop=False).float().sum()
    loss.backward()  # outside autocast: the recomputation still runs in bfloat16
    assert seen == [genesis.bfloat16, genesis.bfloat16]
    assert x.grad.dtype is genesis.float32


def _bfloat16_layers(nn):
    """(name, layer, input shapes) run under CPU autocast in bfloat16 (PyTorch's default
    there), the same in genesis and in torch."""
    return [("linear", nn.Linear(4, 3), [(2, 5, 4)]),
            ("conv2d", nn.Conv2d(2, 3, 3), [(2, 2, 6, 6)]),
            ("conv1d", nn.Conv1d(2, 3, 3, padding=1), [(2, 2, 8)]),
            ("conv_transpose2d", nn.ConvTranspose2d(2, 3, 3), [(2, 2, 5, 5)]),
            ("bilinear", nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
            ("attention", nn.MultiheadAttention(8, 2, batch_first=True), [(2, 5, 8)] * 3),
            ("lstm", nn.LSTM(4, 6, num_layers=2, batch_first=True), [(2, 5, 4)]),
            ("gru", nn.GRU(4, 6, batch_first=True), [(2, 5, 4)]),
            ("rnn", nn.RNN(4, 6), [(5, 2, 4)])]


@pytest.mark.parametrize("index", range(9))
def test_layers_train_under_bfloat16_autocast_as_in_pytorch(index):
    """The backward of a bfloat16 product gets float32 gradients from NumPy: they are rounded
    to the input's dtype (the engine casts between floating dtypes, bfloat16 included), and
    the forward's output dtype is PyTorch's (an LSTM runs in bfloat16 throughout, a GRU in
    float32)."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    torch = torch_or_skip()
    name, layer, shapes = _bfloat16_layers(genesis.nn)[index]
    _, theirs, _ = _bfloat16_layers(torch.nn)[index]
    theirs.load_state_dict({key: torch.tensor(value.numpy()) for key, value in layer.state_dict().items()})
    rng = np.random.default_rng(index)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    inputs = [genesis.tensor(array, requires_grad=True) for array in arrays]
    torch_inputs = [torch.tensor(array, requires_grad=True) for array in arrays]
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        out = layer(*inputs)
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            expected = theirs(*torch_inputs)
    except RuntimeError as error:  # oneDNN has no bfloat16 LSTM on some processors (no AVX-512)
        if "primitive descriptor" not in str(error):
            raise
        pytest.skip(f"PyTorch can't run this {name} in bfloat16 on this processor: {error}")
    if name in ("attention", "lstm", "gru", "rnn"):  # (output, weights or final state)
        out, expected = out[0], expected[0]
    assert out.dtype.name == str(expected.dtype).replace("torch.", ""), name
    out.float().pow(2).sum().backward()
    expected.float().pow(2).sum().backward()
    mine = [tensor.grad for tensor in inputs] + [p.grad for p in layer.parameters()]
    reference = [tensor.grad for tensor in torch_inputs] + [p.grad for p in theirs.parameters()]
    for got, want in zip(mine, reference):
        assert got.dtype is genesis.float32  # the leaves' own dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0.05, atol=0.05 * float(want.abs().max()))
